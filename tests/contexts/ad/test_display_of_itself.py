"""A display holding the variable it is assigned to (`key = (key,)`, as numpy's `np.r_[...]` wraps its
index; `acc = [acc, x]`; `d = {"prev": d}`): reverse mode read the new object's cotangent box from the old
value's snapshot and crashed merging them ('float' object is not iterable; scikit-fuzzy's `trimf` through
`np.r_[abc]`). Every mode, against central differences."""

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd
from tests import fd


def _wrapped(x):
    key = [0.0, x, 10.0]
    key = (key,)
    v = np.array(key[0])
    return float(v[1] * v[2] + v[1] ** 2)


def _nested(x):
    acc = [x]
    for k in range(3):
        acc = [acc, x * k]
    total = 0.0
    while isinstance(acc, list) and len(acc) == 2:
        total = total + acc[1] * total + acc[1]
        acc = acc[0]
    return total + acc[0] ** 2


def _dict(x):
    d = {"v": x}
    d = {"prev": d, "v": 2.0 * x}
    d = {"prev": d, "v": d["v"] * x}
    return d["v"] * d["prev"]["v"] + d["prev"]["prev"]["v"] ** 3


def _starred(x):
    t = (x,)
    t = (*t, x * x, *t)
    return t[0] * t[1] + t[2]


def _r_(x):
    a, b, c = np.r_[[0.0, x, 10.0]]
    return float(b * c + a)


MODES = {"reverse": lambda f, x: gradient(f, x)[0], "forward": derivative,
         "jacfwd": lambda f, x: jacfwd(lambda v: np.array([f(v[0])]), np.array([x]))[0, 0]}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [_wrapped, _nested, _dict, _starred, _r_])
def test_display_of_itself(mode, f):
    assert MODES[mode](f, 0.7) == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)
