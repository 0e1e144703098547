"""Views of an array kept by compiled code, then the array written with a differentiated value: the views
must see the derivative, or the mode refuses (session 67; sweep O, dcor's AVL path).

Forward mode handed a C function without a rule the plain values of a fresh array (`np.zeros`, a zero
tangent), so `enumerate(a)`, `zip(c, a)` drew rows without their tangents, and a later `a[i] = x * ...` read
back through those rows gave 0 (dcor's `for i, (c_elem, c_reord_elem) in enumerate(zip(c, c_reord)):
c_reord[i] = ...; np.cumsum(c_reord_elem)`). The lazy builtins now get the dual itself; any other C function
whose result may keep the plain values (a deque of rows, a memoryview) marks the array lent, and a
differentiated write into it is refused. The twins refuse an in-place change an object of a C class may hold
views of, and the duals answer.
"""

import collections

import numpy as np
import pytest

from contexts import derivative, gradient, jacfwd
from overdub.errors import OverdubError
from tests import fd


def rows_by_enumerate(x):
    a = np.zeros((2, 3))
    t = 0.0
    for i, row in enumerate(a):
        a[i] = x * (i + 1.0)
        t = t + row.sum()
    return float(t)


def rows_by_zip(x):
    c = np.stack((x, x ** 2))
    c_reord = np.zeros_like(c)
    out = np.zeros_like(c)
    for i, (ce, cre) in enumerate(zip(c, c_reord)):
        c_reord[i] = ce[::-1]
        out[i] = np.cumsum(cre) - cre
    return float(np.sum(out * np.sqrt(np.arange(1.0, 9.0)).reshape(2, 4)))


def rows_by_iter(x):
    a = np.zeros((3, 2))
    it = iter(a)
    first = next(it)
    a[0] = x
    a[1] = 2.0 * x
    return float(first.sum() + next(it).sum())


@pytest.mark.parametrize("f, x", [(rows_by_enumerate, 0.7), (rows_by_iter, 0.7),
                                  (rows_by_zip, np.array([0.3, -1.2, 2.0, 0.7]))])
def test_rows_drawn_before_a_write_see_its_derivative(f, x):
    want = fd.gradient(f, x)[0] if np.ndim(x) else fd.derivative(f, x)
    assert np.abs(want).max() > 1.0
    if np.ndim(x):
        np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(gradient(f, x)[0], want, rtol=1e-6, atol=1e-9)
    else:
        assert derivative(f, x) == pytest.approx(want, rel=1e-6)
        assert gradient(f, x)[0] == pytest.approx(want, rel=1e-6)


def deque_of_rows(x):
    a = np.zeros((2, 3))
    q = collections.deque(a)
    a[0] = x
    return float(q[0].sum())


def memoryview_of_values(x):
    a = np.zeros(3)
    m = memoryview(a)
    a[0] = x
    return float(np.frombuffer(m)[0]) + x


@pytest.mark.parametrize("f", [deque_of_rows, memoryview_of_values])
@pytest.mark.one_mode
def test_values_kept_by_compiled_code_then_written_refused_forward(f):
    assert abs(fd.derivative(f, 0.7) - (0.0 if f is deque_of_rows else 1.0)) > 0.5  # (a derivative to lose)
    with pytest.raises(OverdubError):
        derivative(f, 0.7)


def kept_but_never_written(x):
    a = np.zeros((2, 3))
    q = collections.deque(a)
    return float(q[0].sum()) + x * x


def test_values_kept_and_not_written_after_pass():
    assert derivative(kept_but_never_written, 0.7) == pytest.approx(1.4, rel=1e-12)
