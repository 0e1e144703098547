"""np.nditer of one array as Python code (`rules.numpy.indexing.NdIter`), in both modes, against central
differences: items drawn by `next(it)` and written through (`Ec = next(Eit); Ec[...] = v`, pyorb's Kepler
solver: refused in reverse mode, and every nditer in forward mode, before session 70), numpy's drawing order
(memory order for 'K', 'F', reversed and transposed views), the indices it tracks, the `while not it.finished`
form, and numpy's own errors (a read-only item written)."""

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jacobian
from overdub.errors import OverdubError

from tests import fd

X = np.array([0.3, 1.2, -0.4, 0.5, 0.9, 1.7])


def written_by_next(x):
    out = np.empty(x.shape)
    read = np.nditer(x)
    write = np.nditer(out, op_flags=["readwrite"])
    for _ in range(x.size):
        a = next(read)
        b = next(write)
        b[...] = a * a + np.sin(a)
    return out


def written_in_a_loop(x):
    out = np.zeros((2, 3))
    with np.nditer(out, op_flags=["writeonly"]) as it:
        for k, v in enumerate(it):
            v[...] = x[k] ** 3 - x[(k + 1) % 6]
    return out.ravel()


def weighted_by_order(order, view):
    def f(x):
        a = view((x * np.arange(1.0, 7.0)).reshape(2, 3))
        s = 0.0
        for k, v in enumerate(np.nditer(a, order=order)):
            s = s + (k + 1) * v * v
        return s
    f.__name__ = f"weighted_{order}"
    return f


def tracked_indices(x):
    a = x.reshape(2, 3).T
    it = np.nditer(a, flags=["multi_index", "c_index"])
    s = 0.0
    for v in it:
        i, j = it.multi_index
        s = s + (i + 3 * j + 1) * v * v + it.index * v
    return s


def while_not_finished(x):
    it = np.nditer(x.reshape(3, 2), flags=["f_index"])
    s = 0.0
    while not it.finished:
        s = s + np.cos(it[0]) * (it.index + 1)
        it.iternext()
    return s


def one_number(x):
    a = np.asarray(x * x)  # (a 0-d array: one item, itself)
    s = 0.0
    for v in np.nditer(a):
        s = s + v * 3.0
    return s


@pytest.mark.parametrize("f", [written_by_next, written_in_a_loop])
def test_items_written_through(f):
    want = fd.jacobian(f, X)
    np.testing.assert_allclose(jacobian(f, X), want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, X), want, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("order", ["K", "C", "F", "A"])
@pytest.mark.parametrize("view", [lambda a: a, lambda a: a.T, lambda a: a[:, ::-1], lambda a: np.asfortranarray(a)],
                         ids=["plain", "transposed", "reversed", "fortran"])
def test_drawing_order(order, view):
    # (each item weighted by its place in the draw: a wrong order gives a wrong gradient)
    f = weighted_by_order(order, view)
    want = fd.gradient(f, X)[0]
    np.testing.assert_allclose(gradient(f, X)[0], want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, X), want, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("f", [tracked_indices, while_not_finished])
def test_tracked_indices(f):
    want = fd.gradient(f, X)[0]
    np.testing.assert_allclose(gradient(f, X)[0], want, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, X), want, rtol=1e-7, atol=1e-9)


def test_a_zero_dimensional_array():
    np.testing.assert_allclose(gradient(one_number, 0.7)[0], fd.derivative(one_number, 0.7), rtol=1e-8)
    np.testing.assert_allclose(derivative(one_number, 0.7), fd.derivative(one_number, 0.7), rtol=1e-8)


def read_only_written(x):
    for v in np.nditer(x):
        v[...] = 0.0
    return x.sum()


@pytest.mark.parametrize("api", [gradient, jacfwd])
def test_a_read_only_item_written_is_numpys_error(api):
    with pytest.raises(ValueError, match="read-only"):
        read_only_written(X.copy())
    with pytest.raises(ValueError, match="read-only"):
        api(read_only_written, X.copy())


def several_operands(x):
    s = 0.0
    for a, b in np.nditer([x, x[::-1]]):
        s = s + a * b
    return s


@pytest.mark.parametrize("api", [gradient, jacfwd])
def test_several_operands_refused(api):
    # (numpy's own iterator, broadcasting: reverse mode's rule refuses it where a cotangent reaches it, forward
    # mode has none)
    with pytest.raises(OverdubError):
        api(several_operands, X)


def test_pyorb_kepler_solver():
    kepler = pytest.importorskip("pyorb.kepler")

    def f(x):
        return kepler.mean_to_eccentric(x[:3], x[3:] * 0.5)

    x = np.array([0.3, 1.2, 2.5, 0.2, 0.9, 1.1])
    want = fd.jacobian(f, x)
    np.testing.assert_allclose(jacobian(f, x), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(jacfwd(f, x), want, rtol=1e-6, atol=1e-9)


def test_hessian_through_the_items():
    # (reverse mode under forward mode's duals: the draws are planned on the values)
    want = fd.hessian(tracked_indices, X)
    np.testing.assert_allclose(hessian(tracked_indices, X), want, rtol=1e-5, atol=1e-6)
