"""Properties of the scalar rules (hypothesis): pullbacks are linear in the cotangent, and the frule's
tangent and the adjoint's cotangent are transposes of each other (<dy, J t> == <J^T dy, t>)."""

import cmath
import math
import operator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import contexts.rules  # noqa: F401
from contexts.rules.registry import registry

reals = st.floats(0.2, 2.0)
cplx = st.builds(complex, st.floats(0.2, 2.0), st.floats(-2.0, 2.0, allow_subnormal=False))  # (cmath.phase of
# 2 + 5e-324j raises OverflowError: an underflow, the test's own input, not the rule)

CASES = [  # (function, strategy for its arguments)
    (math.sin, st.tuples(reals)), (math.log, st.tuples(reals)), (math.atan2, st.tuples(reals, reals)),
    (math.hypot, st.tuples(reals, reals, reals)), (math.gamma, st.tuples(reals)),
    (operator.mul, st.tuples(cplx, cplx)), (operator.truediv, st.tuples(cplx, reals)),
    (operator.pow, st.tuples(reals, reals)), (operator.abs, st.tuples(cplx)),
    (cmath.sqrt, st.tuples(cplx)), (cmath.phase, st.tuples(cplx)), (cmath.rect, st.tuples(reals, reals)),
]


def _inner(a, b):
    return 0.0 if a is None or b is None else (complex(a).conjugate() * b).real


@pytest.mark.parametrize("fn, args_strategy", CASES, ids=[f.__name__ for f, _ in CASES])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_pullback_is_linear_and_transposes_the_frule(fn, args_strategy, data):
    args = data.draw(args_strategy)
    rule, y = registry.get(fn), fn(*args)
    complex_out = isinstance(y, complex)
    dy1, dy2 = (data.draw(cplx if complex_out else reals) for _ in range(2))
    a = data.draw(reals)
    g1, g2 = rule.adjoint(dy1, y, *args), rule.adjoint(dy2, y, *args)
    g12 = rule.adjoint(a * dy1 + dy2, y, *args)
    for u, v, w in zip(g1, g2, g12):
        assert w == pytest.approx(a * u + v, rel=1e-9, abs=1e-12)
    tangents = tuple(data.draw(cplx if isinstance(x, complex) else reals) for x in args)
    _, t = rule.frule(tangents, *args)
    assert _inner(dy1, t) == pytest.approx(sum(_inner(g, d) for g, d in zip(g1, tangents)), rel=1e-9, abs=1e-12)
