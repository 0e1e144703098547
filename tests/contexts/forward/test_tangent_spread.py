"""The tangent twin follows a global's object through a chain of assignments, in any order (`_spread`,
rewritten as a worklist for a long function's transform time, issue 17): a store of a perturbed value
into it is refused, and forward mode takes the duals' way, right as finite differences."""

import ast

import pytest

from contexts.forward import derivative
from contexts.forward.tangent import NotTransformable, _spread, tangent_twin
from contexts.lowered.activity import name_stores, viewed

from tests import fd

STATE = [0.0]


def chain(x):
    a = STATE
    b = a
    c = b
    c[0] = x * 3.0
    return STATE[0] * x


def chain_backwards(x, n):
    for _ in range(n):  # (the stores read names bound on the previous pass)
        c[0] = x * 3.0  # noqa: F821
        c = b  # noqa: F821
        b = a  # noqa: F821
        a = STATE
    return STATE[0] * x


def test_a_store_through_a_chain_of_aliases_of_a_global_is_refused_by_the_twin():
    with pytest.raises(NotTransformable, match="storing into c|a changeable module global"):
        tangent_twin(chain, frozenset({"x"}))


def test_and_forward_mode_is_right_through_duals():
    assert derivative(chain, 0.7) == pytest.approx(fd.derivative(chain, 0.7), rel=1e-6)


def _spread_by_rounds(fdef, seeds, names_of):
    out = set(seeds)
    changed = True
    while changed:
        changed = False
        for name, value in name_stores(fdef):
            if name not in out and names_of(value) & out:
                out.add(name)
                changed = True
    return out


@pytest.mark.parametrize("fn", [chain, chain_backwards])
def test_spread_reaches_what_rounds_over_the_stores_reach(fn):
    import inspect
    import textwrap
    fdef = ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    names_of = lambda v: viewed(v, strict=True)  # noqa: E731
    assert set(_spread(fdef, {"STATE"}, names_of)) == _spread_by_rounds(fdef, {"STATE"}, names_of)
    assert {"a", "b", "c"} <= set(_spread(fdef, {"STATE"}, names_of))
