"""Memory of the twin caches (issue 17): an entry dies with its function's code object, and
`overdub.cache.clear()` empties every cache of every mode."""

from __future__ import annotations

import gc
import linecache
import math
import tracemalloc

import pytest

import overdub.cache
from contexts import CountContext, derivative, gradient, hessian, jvp

N = 120
MODES = {
    "gradient": lambda f: gradient(f, 1.5)[0],
    "derivative": lambda f: derivative(f, 1.5),
    "jvp": lambda f: jvp(f, (1.5,), (1.0,))[1],
    "hessian": lambda f: hessian(f, 1.5),
    # an interception context's twins run with fn's globals, the namespace holding fn: kept per function,
    # they kept every exec'd function alive (41 KB each)
    "intercepted": lambda f: CountContext().run(f, 1.5),
}


def _generated(tmp_path, n, tag):
    """n functions f_i(x) = (i+1) x^2 + sin(x) x (with a loop), each exec'd from its own file so that its
    source exists, in its own namespace (as code generators such as sympy's lambdify make them)."""
    fns = []
    for i in range(n):
        path = tmp_path / f"gen_{tag}_{i}.py"
        path.write_text(f"import math\n\ndef f_{i}(x):\n    y = x * {i + 1}.0\n    for k in range(2):\n"
                        f"        y = y + math.sin(x) * k\n    return y * x\n")
        namespace = {}
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        fns.append((i, namespace[f"f_{i}"]))
    return fns


def _closed_form(mode, i, x=1.5):
    if mode == "intercepted":
        return (i + 1) * x * x + math.sin(x) * x
    if mode == "hessian":
        return 2 * (i + 1) + 2 * math.cos(x) - x * math.sin(x)
    return 2 * (i + 1) * x + math.sin(x) + x * math.cos(x)


def _traced():
    gc.collect()
    linecache.clearcache()
    return tracemalloc.get_traced_memory()[0]


@pytest.mark.parametrize("mode", [
    "derivative", "gradient", "jvp", "intercepted", "hessian"])
def test_memory_returns_when_the_functions_go(tmp_path, mode):
    for i, f in _generated(tmp_path, 3, "warm"):  # the modules and rules loaded, the source caches full
        MODES[mode](f)
    # Two batches, the smaller retention judged: a leak retains in both, while a cache of the engine or the
    # interpreter that happens to grow its table during one batch (a dict resize, order-dependent) does not.
    retained = []
    tracemalloc.start()
    try:
        for batch in ("n", "m"):
            base = _traced()
            fns = _generated(tmp_path, N, batch)
            for i, f in fns:
                assert MODES[mode](f) == pytest.approx(_closed_form(mode, i), rel=1e-12)
            del fns, i, f
            retained.append(_traced() - base)
    finally:
        tracemalloc.stop()
    assert min(retained) < 10_000 * N, f"{[r // N for r in retained]} bytes retained per function"


def test_clear_empties_every_cache_and_gradients_still_work(tmp_path):
    from contexts.ad import runtime
    from contexts.forward import tangent
    from contexts.lowered import activity
    # Two batches, the smaller share judged (as above): a cache that clear() misses keeps its entries in
    # both, while a long-lived table of the engine or the interpreter resizing during one batch (after a
    # whole suite in one worker: 390 KB once, CI) does not.
    shares = []
    for batch in ("c", "d"):
        fns = _generated(tmp_path, 20, batch)
        tracemalloc.start()
        try:
            base = _traced()
            for i, f in fns:
                gradient(f, 1.5), derivative(f, 1.5)
            assert len(runtime._twins) and len(tangent._cache)
            grown = _traced() - base
            overdub.cache.clear()
            after = _traced() - base
        finally:
            tracemalloc.stop()
        assert not len(runtime._twins) and not len(tangent._cache) and not len(activity._state_readers)
        shares.append((after, grown))
        for i, f in fns:
            assert gradient(f, 1.5)[0] == pytest.approx(_closed_form("gradient", i), rel=1e-12)
            assert derivative(f, 1.5) == pytest.approx(_closed_form("derivative", i), rel=1e-12)
        overdub.cache.clear()
    assert min(after / grown for after, grown in shares) < 1 / 4, shares  # the functions are still alive


@pytest.mark.parametrize("run", [
    lambda f: CountContext().run(f, 3),
    lambda f: gradient(f, 3.0)[0],
    lambda f: derivative(f, 3.0),
], ids=["intercepted", "gradient", "derivative"])
def test_a_recursive_closure_dies_after_it_was_run(run):
    """A closure whose cell holds the closure itself: a twin cached with those cells kept it alive."""
    import weakref

    def make():
        def fact(x, n=3):
            return x if n <= 1 else x * fact(x, n - 1)
        return fact
    fact = make()
    assert run(fact) == pytest.approx(27.0)  # x**3 at 3 and its derivative 3 x**2 at 3
    ref = weakref.ref(fact)
    del fact
    gc.collect()
    assert ref() is None
