"""np.matrix built from lists and joined with np.concatenate (pydlm's Kalman filter code, sweep N of session 66).

`np.matrix([[x, 1.0]])` makes the array and then a matrix over its memory (`ndarray.__new__(matrix, shape,
dtype, buffer=arr)`): refused in reverse mode ("no reverse rule for ndarray.__new__"); now a reshape of the
buffer, as code. `np.concatenate` of matrices computes the entries of their plain views: refused before as
"arithmetic on a np.matrix". Checked against central differences and closed forms.
"""

import numpy as np
import pytest

from contexts import derivative, gradient, jacobian

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # (np.matrix)

A = np.matrix([[1.0, 2.0], [3.0, 4.0]])
F = np.matrix([[1.0, 1.0], [0.0, 1.0]])
H = np.matrix([[1.0, 0.0]])


def _row(x):
    return float((np.matrix([[x, 1.0]]) * A).sum())


def _column(x):
    return float((A * np.matrix([[x], [x * x]])).sum())


def _kalman(y):
    state = np.matrix([[0.0], [0.0]])
    P = np.matrix(np.eye(2))
    for obs in (y, 2.0 * y, 0.5):
        state = F * state
        P = F * P * F.T + np.matrix(np.eye(2)) * 0.1
        S = H * P * H.T + 1.0
        K = P * H.T / S[0, 0]
        state = state + K * (obs - (H * state)[0, 0])
        P = P - K * H * P
    return float(state[0, 0] + state[1, 0])


def _joined(x):
    M = np.matrix([[x, 2.0 * x]])
    J = np.concatenate((M, np.matrix([[1.0, x ** 2]])), 0)
    K = np.concatenate((J, np.matrix(np.zeros((2, 1)))), 1)
    return float((K * np.matrix([[1.0], [2.0], [3.0]])).sum() + K[1, 1])


def _central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("f, closed", [(_row, lambda x: 3.0), (_column, lambda x: 4.0 + 12.0 * x),
                                       (_kalman, None), (_joined, lambda x: 5.0 + 6.0 * x)],
                         ids=["row", "column", "kalman", "concatenate"])
@pytest.mark.parametrize("x", [0.7, -1.3])
def test_matrices_from_lists(f, closed, x):
    want = closed(x) if closed is not None else _central(f, x)
    assert _central(f, x) == pytest.approx(want, rel=1e-6)
    assert gradient(f, x)[0] == pytest.approx(want, rel=1e-9)
    assert derivative(f, x) == pytest.approx(want, rel=1e-9)  # (forward mode's duals refuse matrices: by reverse)


def test_a_matrix_over_a_vector_of_inputs():
    """Reverse mode alone (many inputs, no fallback): a matrix made from a list of differentiated entries."""
    def f(v):
        return float((np.matrix([list(v[:2]), list(v[2:4])]) * A).sum() + np.sum(v[4:]) * 0.0)
    x = np.linspace(0.1, 1.0, 100)
    want = np.zeros(100)
    want[:4] = [3.0, 7.0, 3.0, 7.0]
    assert np.allclose(jacobian(f, x, mode="reverse"), want, rtol=1e-12, atol=0)
