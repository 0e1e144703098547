"""Crash classes the program fuzzer found in forward mode (derivative, jvp, jacfwd, hessian), each
reduced to a few lines and checked against central finite differences."""

import numpy as np
import pytest

from contexts.forward import derivative, hessian, jacfwd, jvp

from ._fd import fd_derivative, fd_hessian, fd_jacobian

X = np.array([0.4, 0.5, 0.7])
D = np.array([1.0, -2.0, 0.5])


def check_all_modes(f, fv, x=X, d=D):
    """f (vector -> float) through jvp, derivative and hessian, fv (vector -> vector) through jacfwd."""
    expected = float(fd_derivative(lambda s: f(x + s * d), 0.0))
    y, dy = jvp(f, (x,), (d,))
    assert np.isclose(y, f(x)) and np.isclose(dy, expected, rtol=1e-6, atol=1e-8)
    assert np.isclose(derivative(lambda s: f(x + s * d), 0.0), expected, rtol=1e-6, atol=1e-8)
    assert np.allclose(jacfwd(fv, x), fd_jacobian(fv, x), rtol=1e-6, atol=1e-8)
    assert np.allclose(hessian(f, x), fd_hessian(f, x), rtol=1e-4, atol=1e-5)


# -- 1. np.concatenate of a Python list holding a plain list beside a perturbed array ---------------

def concat_f(x):
    return np.sum(np.sin(np.concatenate([[0.0], x])) * np.arange(4.0))


def concat_fv(x):
    return np.diff(np.concatenate([[0.0], x * x, (1.0, 2.0)]))


def stack_f(x):
    return np.sum(np.vstack([[0.5, 1.0, 2.0], x]) ** 2 * np.hstack([[1.0], x, [2.0]])[:3])


def test_concatenate_with_a_list_item():
    check_all_modes(concat_f, concat_fv)
    check_all_modes(stack_f, concat_fv)
