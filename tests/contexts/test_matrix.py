"""numpy.matrix (`*` a matrix product, `**` a matrix power, reductions and indexing keeping two axes) under
reverse mode (and jacfwd/derivative, which fall back to it), against central finite differences or closed
forms; jvp, hessian and sparsity refuse it by name."""

import numpy as np
import pytest

from contexts import ADContext, derivative, gradient, hessian, jacfwd, jacobian_sparsity, jvp
from overdub.errors import OverdubError
from tests.fd import gradient as fd_gradient

pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")

X = np.array([1.0, 2.0, 3.0, 4.5])
C = np.array([[0.5, -1.0], [2.0, 0.3]])


def M(x):
    return np.matrix(x.reshape(2, 2))


CASES = {
    "matrix_times_matrix": lambda x: float(np.sum(np.asarray(M(x) * M(x)) * C)),
    "matrix_times_array": lambda x: float(np.sum(np.asarray(M(x) * C) * C)),
    "array_times_matrix": lambda x: float(np.sum(np.asarray(C * M(x)) * C)),
    "matrix_times_vector": lambda x: float(np.sum(np.asarray(M(x) * x[:2].reshape(2, 1)) * C[:, :1])),
    "scalar_times_matrix": lambda x: float(np.sum(np.asarray(x[0] * M(x)) * C)),
    "power_3": lambda x: float(np.sum(np.asarray(M(x) ** 3) * C)),
    "power_minus_2": lambda x: float(np.sum(np.asarray(M(x) ** -2) * C)),
    "inverse_I": lambda x: float(np.sum(np.asarray(M(x).I) * C)),
    "transpose_T": lambda x: float(np.sum(np.asarray(M(x).T * C) * C)),
    "conjugate_transpose_H": lambda x: float(np.sum(np.asarray(M(x).H) * C)),
    "A": lambda x: float(np.sum(M(x).A * C)),
    "A1": lambda x: float(np.sum(M(x).A1 * C.ravel())),
    "asarray": lambda x: float(np.sum(np.asarray(M(x) * M(x)) * C)),
    "array": lambda x: float(np.sum(np.array(M(x) * C) * C)),
    "sum": lambda x: float((M(x) * C).sum()),
    "sum_axis0": lambda x: float(np.sum((M(x) * C).sum(axis=0).A * C[0])),
    "sum_axis1": lambda x: float(np.sum((M(x) * C).sum(axis=1).A * C[:, :1])),
    "mean_axis1": lambda x: float(np.sum(M(x).mean(axis=1).A * C[:, :1])),
    "np_sum_axis0": lambda x: float(np.sum(np.asarray(np.sum(M(x) * C, axis=0)) * C[0])),
    "row": lambda x: float(np.sum(M(x)[0].A * C[0])),
    "column": lambda x: float(np.sum(M(x)[:, 1].A * C[:, :1])),
    "entry": lambda x: float(M(x)[0, 1] * 3.0),
    "linalg_inv": lambda x: float(np.sum(np.asarray(np.linalg.inv(M(x))) * C)),
    "linalg_solve": lambda x: float(np.sum(np.asarray(np.linalg.solve(M(x), C)) * C)),
    "asmatrix": lambda x: float(np.sum(np.asarray(np.asmatrix(x.reshape(2, 2)) ** 2) * C)),
    "view_as_matrix": lambda x: float(np.sum(np.asarray(x.reshape(2, 2).view(np.matrix) * C) * C)),
    "matmul_vector": lambda x: float(np.sum(np.asarray(M(x) @ x[:2]) * C[0])),
    "add_divide": lambda x: float(np.sum(np.asarray((M(x) + C) / x[1]) ** 2)),
    "ufunc": lambda x: float(np.sum(np.asarray(np.exp(M(x))) * C)),
    "issue_example": lambda x: float(np.sum((M(x) * M(x).T + M(x).I).A)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name):
    f = CASES[name]
    with ADContext():
        (g,) = gradient(f, X)
    np.testing.assert_allclose(g, fd_gradient(f, X)[0], rtol=1e-6, atol=1e-7)


def test_star_of_matrices_is_the_matrix_product():
    """`m * m` looks elementwise; on matrices it is m @ m, whose gradient of sum(m @ m * C) is C m^T + m^T C,
    not the elementwise 2 m * C."""
    def f(x):
        m = M(x)
        return float(np.sum(np.asarray(m * m) * C))
    with ADContext():
        (g,) = gradient(f, X)
    m = X.reshape(2, 2)
    np.testing.assert_allclose(g.reshape(2, 2), C @ m.T + m.T @ C, rtol=1e-12)
    assert not np.allclose(g.reshape(2, 2), 2 * m * C)


def test_matrix_results_keep_two_axes_and_the_class():
    def f(x):
        m = M(x)
        s0, s1, r, c = m.sum(axis=0), m.sum(axis=1), m[0], m[:, 1]
        assert type(m * m) is np.matrix and s0.shape == (1, 2) and s1.shape == (2, 1)
        assert r.shape == (1, 2) and c.shape == (2, 1)
        return float((s0 * s1 + r * c)[0, 0])  # (1x2 times 2x1: a 1x1 matrix)
    with ADContext():
        (g,) = gradient(f, X)
    np.testing.assert_allclose(g, fd_gradient(f, X)[0], rtol=1e-6)


def test_a_numpy_function_computing_with_star_on_a_matrix_is_refused():
    """np.polyval's `y * x` is a matrix product on a matrix: the elementwise rule would be wrong."""
    f = lambda x: float(np.sum(np.asarray(np.polyval([1.0, 0.0, 0.0], M(x))) * C))  # noqa: E731
    with ADContext(), pytest.raises(OverdubError):
        gradient(f, X)


def test_forward_mode_apis_fall_back_to_reverse_mode():
    """Forward mode's duals refuse a matrix; `jacfwd` and `derivative` then take reverse mode, which is right."""
    f = CASES["matrix_times_matrix"]
    with ADContext():
        jac = jacfwd(f, X)
        d = derivative(lambda t: f(X * t), 1.0)
    fd = fd_gradient(f, X)[0]
    np.testing.assert_allclose(jac, fd, rtol=1e-6)
    np.testing.assert_allclose(d, fd @ X, rtol=1e-6)


def test_jvp_by_reverse_mode_and_hessian_refused():
    """jvp takes reverse mode's Jacobian after forward mode's refusal (session 73); hessian stays refused."""
    f = CASES["matrix_times_matrix"]
    with ADContext():
        dy = jvp(f, (X,), (np.eye(4)[0],))[1]
    np.testing.assert_allclose(dy, fd_gradient(f, X)[0][0], rtol=1e-6)
    with ADContext(), pytest.raises(OverdubError):
        hessian(f, X)


def test_sparsity_refuses():
    with ADContext(), pytest.raises(OverdubError):
        jacobian_sparsity(lambda x: np.asarray(M(x) * M(x)).ravel(), X)


R = np.array([0.01, 0.015, 0.02, 0.025])
T = np.array([1.0, 2.0, 5.0, 10.0])


def test_smithwilson_fit_parameters():
    sw = pytest.importorskip("smithwilson")
    f = lambda r: float(np.sum(sw.fit_parameters(r.reshape(-1, 1), T.reshape(-1, 1), 0.12, 0.042)))  # noqa: E731
    with ADContext():
        (g,) = gradient(f, R)
    np.testing.assert_allclose(g, fd_gradient(f, R)[0], rtol=1e-5)


def test_smithwilson_rates():
    sw = pytest.importorskip("smithwilson")
    f = lambda r: float(np.sum(sw.fit_smithwilson_rates(r, T, np.array([3.0, 15.0, 30.0]), 0.042, alpha=0.12)))  # noqa: E731
    with ADContext():
        (g,) = gradient(f, R)
    np.testing.assert_allclose(g, fd_gradient(f, R)[0], rtol=1e-5)


def test_smithwilson_forward_mode_refuses():
    sw = pytest.importorskip("smithwilson")
    f = lambda r: float(np.sum(sw.fit_parameters(r.reshape(-1, 1), T.reshape(-1, 1), 0.12, 0.042)))  # noqa: E731
    with ADContext(), pytest.raises(OverdubError):
        jvp(f, (R,), (np.ones(4),))
