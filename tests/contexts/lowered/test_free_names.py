"""`free_names`: the variables a nested function reads from the function around it, checked against
Python's own scoping (`symtable`) on nested functions, lambdas, comprehensions and generators — and the
closure pygeodesy's `Fsum._ps_mul` makes, whose comprehension variable `f` was taken for the enclosing
function's `f` (a needless refusal of four of the third-party suite's functions)."""
import ast
import inspect
import symtable
import textwrap

import pytest

from contexts import derivative, gradient
from contexts.lowered.activity import free_names
from tests import fd

def _ps_mul(ps, factors):
    f = None

    def _psfs(ps, fs):
        if len(ps) < len(fs):
            ps, fs = fs, ps

        def _pfs(p, fs):
            return (p * f for f in fs)
        for p in ps:
            for x in _pfs(p, fs):
                yield x

    f = sum(_psfs(ps, factors))
    return f


SNIPPETS = [
    # a comprehension's variable is its own; its first iterable is read outside
    """
    def outer(fs, f):
        def inner(p):
            return [p * f for f in fs]
        return inner
    """,
    """
    def outer(xs, x):
        def inner():
            return [x for x in x]
        return inner
    """,
    """
    def outer(a, b, c):
        def inner():
            return {k: v * c for k, v in zip(a, b) if v > c}
        return inner
    """,
    """
    def outer(rows, n, i):
        def inner():
            return [[r[i] * n for i in range(3)] for r in rows]
        return inner
    """,
    # a lambda and a def nested in the closure: their free names are the closure's
    """
    def outer(k, m, q):
        def inner(t):
            g = lambda s: s * k
            def h(u, q=q):
                return u + m
            return g(t) + h(t)
        return inner
    """,
    # the closure's own variables and parameters shadow the outer ones
    """
    def outer(x, y, z):
        def inner(y):
            x = 2
            for z in range(3):
                x = x + z
            return x + y
        return inner
    """,
    # nonlocal: read and written from outside
    """
    def outer(acc, x):
        def inner(v):
            nonlocal acc
            acc = acc + v * x
        return inner
    """,
    # a generator expression's later iterables and conditions are its own scope's
    """
    def outer(xs, ys, w, f):
        def inner():
            return sum(a * b * w for a in xs if a for b in ys if b > a)
        return inner
    """,
]


def _frees_by_python(src: str) -> set[str]:
    top = symtable.symtable(src, "<snippet>", "exec")
    outer = top.get_children()[0]
    local = set(outer.get_locals())
    inner = outer.get_children()[0]
    return set(inner.get_frees()) & local


# (the last: a generator closure with a nested closure whose comprehension rebinds names, pygeodesy's _psfs)
@pytest.mark.parametrize("src", [textwrap.dedent(s) for s in SNIPPETS] + [inspect.getsource(_ps_mul)])
def test_free_names_are_pythons(src):
    outer = ast.parse(src).body[0]
    inner = next(n for n in outer.body if isinstance(n, ast.FunctionDef))
    local = {a.arg for a in outer.args.args} | {n.id for n in ast.walk(outer) if isinstance(n, ast.Name)
                                                 and isinstance(n.ctx, ast.Store)}
    assert free_names(inner, True) & local == _frees_by_python(src)


def test_a_generator_closure_whose_comprehension_rebinds_a_later_variable():
    def loss(x):
        return _ps_mul([x, 2.0 * x, 0.5], (x, 3.0))

    assert gradient(loss, 0.7)[0] == pytest.approx(fd.derivative(loss, 0.7), rel=1e-7)
    assert derivative(loss, 0.7) == pytest.approx(fd.derivative(loss, 0.7), rel=1e-7)
