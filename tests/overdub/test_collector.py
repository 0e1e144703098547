"""overdub.collector: the cyclic garbage collector paused while twins are built, restored after."""

import gc
import threading

import pytest

from overdub import collector


def test_restored_after_a_failed_build():
    @collector.pausing
    def build():
        assert not gc.isenabled()
        raise ValueError("no")

    assert gc.isenabled()
    with pytest.raises(ValueError):
        build()
    assert gc.isenabled()


def test_a_program_that_disabled_it_keeps_it_disabled():
    gc.disable()
    try:
        with collector.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_builds_in_threads():
    inside, release = threading.Event(), threading.Event()
    seen = []

    def long_build():
        with collector.paused():
            inside.set()
            release.wait(5)

    t = threading.Thread(target=long_build)
    t.start()
    inside.wait(5)
    with collector.paused():  # a second build, ending first: the first is still under way
        pass
    seen.append(gc.isenabled())
    release.set()
    t.join()
    assert seen == [False] and gc.isenabled()


def test_a_gradient_leaves_it_enabled():
    from contexts import derivative, gradient
    gradient(lambda x: x * x, 2.0)
    derivative(lambda x: x * x, 2.0)
    assert gc.isenabled()


def test_paused_while_the_core_builds_a_twin():
    """The core's builds (every interception context's twins: sparsity tracers, the debugger, duals) pause it
    too, and restore it after, a failed build included."""
    import overdub.cache
    import overdub.source

    seen = []

    def build(source):
        seen.append(gc.isenabled())
        return overdub.source.compile_twin(source, source.fresh_tree())

    def failing(source):
        seen.append(gc.isenabled())
        raise ValueError("no")

    def sq(x):
        return x * x

    def cube(x):
        return x * x * x

    assert overdub.cache.twin_for(sq, "test_collector", build)(3) == 9
    with pytest.raises(ValueError):
        overdub.cache.twin_for(cube, "test_collector_failing", failing)
    assert seen == [False, False] and gc.isenabled()


def test_fix_missing_locations_as_ast_does():
    # the core's iterative version gives every node the position ast.fix_missing_locations gives it
    import ast
    import copy
    import random
    from pathlib import Path

    from overdub.source import fix_missing_locations
    tree = ast.parse(Path(ast.__file__).read_text())
    rng = random.Random(3)
    for n in ast.walk(tree):
        for a in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if a in n._attributes and rng.random() < 0.3 and hasattr(n, a):
                delattr(n, a)
    ours, theirs = copy.deepcopy(tree), copy.deepcopy(tree)
    fix_missing_locations(ours)
    ast.fix_missing_locations(theirs)
    where = ("lineno", "col_offset", "end_lineno", "end_col_offset")
    assert ([tuple(getattr(n, a, None) for a in where) for n in ast.walk(ours)]
            == [tuple(getattr(n, a, None) for a in where) for n in ast.walk(theirs)])


def test_a_twin_tree_without_positions_still_compiles():
    # compile_twin compiles the tree as given first and fixes positions only where compile finds none
    import ast

    from overdub.passes import compile_twin, get_source

    def f(x):
        return x + 1

    src = get_source(f.__code__, f.__globals__)
    tree = src.as_function_def()
    tree.body = [ast.Return(value=ast.BinOp(ast.Name("x", ast.Load()), ast.Mult(), ast.Constant(3)))]
    code = compile_twin(src, tree)
    import types
    assert types.FunctionType(code, f.__globals__)(2) == 6
