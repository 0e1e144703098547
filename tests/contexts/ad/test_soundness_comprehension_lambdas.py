"""Lambdas made inside comprehensions (scipy's solve_ivp wraps its events as
`[lambda t, x, event=event: event(t, x, *args) for event in events]`), and names that only ever hold a
constant or a builtin type (`dtype = float`). Every derivative against central finite differences, in
both modes; a lambda reading the comprehension's variable in its body is refused by reverse mode."""

import numpy as np
import pytest

from contexts import derivative, gradient
from contexts.ad import UnsupportedFunction

from tests import fd

X = 0.7
MODES = {"reverse": lambda f, x: gradient(f, x)[0], "forward": derivative}


def default_bound(x):
    fs = [lambda t, c=c: t * c for c in (x, x * x, 3.0)]
    return sum(f(2.0) for f in fs)


def default_bound_calls(x):
    def g(t, a):
        return np.sin(a * t)
    gs = [g, lambda t, a: a * t * t]
    wrapped = [lambda t, h=h: h(t, x) for h in gs]  # (scipy's events)
    return wrapped[0](1.5) + wrapped[1](0.5)


def parameter_shadows_the_variable(x):
    return sum([(lambda c: c * x)(c) for c in (1.0, 2.0, x)])


def default_bound_in_a_loop(x):
    fs = []
    for k in range(2):
        fs += [lambda t, c=c: t * c + k for c in (x * k, x)]
    return fs[0](1.0) * fs[1](2.0) + fs[2](3.0) * fs[3](x)


def default_bound_dict(x):
    fs = {i: (lambda t, c=c: t ** c) for i, c in enumerate((x, 2 * x))}
    return fs[0](1.5) + fs[1](2.0)


def default_bound_nested(x):
    fs = [[lambda t, a=a, b=b: a * t + b for b in (x, 1.0)] for a in (x, 2.0)]
    return fs[0][0](1.0) + fs[0][1](2.0) * fs[1][0](x)


CASES = [default_bound, default_bound_calls, parameter_shadows_the_variable, default_bound_in_a_loop,
         default_bound_dict, default_bound_nested]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_lambda_in_a_comprehension_binding_its_variable_as_a_default(f, mode):
    assert MODES[mode](f, X) == pytest.approx(fd.derivative(f, X), rel=1e-6, abs=1e-8)


def reads_the_variable(x):
    fs = [lambda t: t * c for c in (x, 2.0)]  # each lambda sees the last c (Python's late binding)
    return fs[0](1.0) + fs[1](x)


def reads_the_variable_in_a_loop(x):
    fs = []
    for k in (x, 2.0):
        fs += [lambda t: t * c for c in (k, 1.0 + k)]  # a fresh cell per run of the comprehension
    return fs[0](1.0) * fs[2](x)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", [reads_the_variable, reads_the_variable_in_a_loop], ids=lambda f: f.__name__)
def test_lambda_reading_the_variable_in_its_body(f):
    with pytest.raises(UnsupportedFunction, match="comprehension reading its variable `c` in its body"):
        gradient(f, X)
    assert derivative(f, X) == pytest.approx(fd.derivative(f, X), rel=1e-6, abs=1e-8)


def type_flag(x, complex_input=False):
    if complex_input:
        dtype = complex
    else:
        dtype = float
    y = np.asarray(x).astype(dtype)  # a call with active inputs taking the flag: the flag stays inactive

    def g(t):
        return np.asarray(t * y, dtype=dtype)
    return sum(map(g, [1.0, 2.0]))  # g escapes: it may read only variables bound once, or inactive ones


@pytest.mark.parametrize("mode", MODES)
def test_a_builtin_type_held_in_a_variable_is_not_differentiated(mode):
    assert MODES[mode](type_flag, X) == pytest.approx(fd.derivative(type_flag, X), rel=1e-6, abs=1e-8)
