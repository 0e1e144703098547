"""Functions without source (made by `exec`, or whose file changed since import) run as primitives in
reverse mode only when they merely pass their inputs on (scipy.stats' generated `_parse_args`); one that
stores into an object or changes an array in place would move a differentiated value where no record
follows it. Checked against closed forms; forward mode follows the running code through its duals."""

import numpy as np
import pytest
import scipy.stats

from contexts import NoRuleError, derivative, gradient

NS: dict = {}
exec("def put(o, v):\n    o.p = v\n"
     "def put_item(d, v):\n    d['p'] = v\n"
     "def scale_in_place(a):\n    a *= 3.0\n"
     "def append(xs, v):\n    xs.append(v)\n"
     "def double(v):\n    return v + v\n"
     "def passthrough(a, b, loc=0, scale=1):\n    return (a, b), loc, scale\n"
     "def pick(a, b, which=None):\n    if which is None:\n        return a\n    return b\n", NS)


class Box:
    pass


def stores_attribute(x):
    b = Box()
    b.p = 0.0
    NS["put"](b, x * x)
    return b.p * 2.0


def stores_item(x):
    d = {"p": 0.0}
    NS["put_item"](d, x * x)
    return d["p"] * 2.0


def scales_in_place(x):
    a = np.array([1.0, 2.0]) * x
    NS["scale_in_place"](a)
    return a.sum()


def appends(x):
    xs = []
    NS["append"](xs, x * x)
    return xs[0] * 2.0


def computes(x):
    return NS["double"](x * x)


@pytest.mark.parametrize("f, x, df", [
    (stores_attribute, 1.5, 4 * 1.5),
    (stores_item, 1.5, 4 * 1.5),
    (scales_in_place, 1.5, 9.0),
    (appends, 1.5, 4 * 1.5),
    (computes, 1.5, 4 * 1.5),
], ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_sourceless_function_with_effects_is_refused_in_reverse_and_right_forward(f, x, df):
    with pytest.raises(NoRuleError, match="source is not available"):
        gradient(f, x)
    assert derivative(f, x) == pytest.approx(df)


def passes_through(x):
    (a, b), loc, scale = NS["passthrough"](x, 2 * x)
    return a * b + loc


def picks(x):
    return NS["pick"](x * x, x) * 3.0


@pytest.mark.parametrize("f, x, df", [(passes_through, 1.5, 4 * 1.5), (picks, 1.5, 6 * 1.5)],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_sourceless_function_passing_inputs_on_is_differentiated(f, x, df):
    assert gradient(f, x)[0] == pytest.approx(df)
    assert derivative(f, x) == pytest.approx(df)


def test_scipy_stats_generated_argument_parser_still_passes_through():
    def logpdf(loc, scale):
        return scipy.stats.norm.logpdf(0.3, loc, scale)
    loc, scale = 0.1, 1.7
    z = (0.3 - loc) / scale
    g = gradient(logpdf, loc, scale)
    assert g == pytest.approx((z / scale, (z * z - 1) / scale))
