"""numba's compiled functions (`@njit`, `@vectorize`, `@guvectorize`, `@cfunc`) differentiated as the Python
functions they were compiled from (`contexts.rules.numba`), in reverse and forward mode and in sparsity
detection, against central differences and closed forms; what is not Python (a function numba implements by
`@overload`) refused. Before: reverse mode refused them as C functions, forward mode's duals crashed numba's
type inference (pythermalcomfort's comfort models, sweep 55)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from overdub.errors import OverdubError
from tests import fd
from tests.modes import ARRAY_MODES, MODES, assert_array_gradient, gradient_in

numba = pytest.importorskip("numba")


@numba.njit
def kepler(M, e):
    E = M
    for _ in range(30):
        E = E - (E - e * math.sin(E) - M) / (1.0 - e * math.cos(E))
    return E


@numba.njit
def anomaly_squared(M, e):
    return kepler(M, e) ** 2 + np.sin(M) * e  # (an @njit calling another)


@numba.vectorize(["float64(float64, float64)"])
def kink(x, y):
    if x > y:
        return x * math.exp(-y)
    return y * x ** 2


@numba.vectorize
def lazy_square(x):  # (compiled at its first call: a DUFunc without signatures)
    return x * x + 1.0


@numba.njit
def fill(x):
    y = np.empty(3)
    y[0] = x[0] * x[1]
    y[1] = math.sin(x[2])
    y[2] = x[0] + 1.0
    return y


@pytest.mark.parametrize("mode", MODES)
def test_njit_in_both_variables(mode):
    f = anomaly_squared
    got = gradient_in(mode, f, 1.3, 0.2)
    np.testing.assert_allclose(got, fd.gradient(f, 1.3, 0.2), rtol=1e-7)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("x", [1.3, 0.3])
def test_vectorize_scalar_both_branches(mode, x):
    def f(x):
        return kink(x, 0.7) * 3.0
    got = gradient_in(mode, f, x)
    np.testing.assert_allclose(got, fd.gradient(f, x), rtol=1e-7)
    assert type(f(x)) is type(kink(1.0, 0.7) * 3.0)  # (a scalar for scalars, as the ufunc gives)


CALLS = []  # (the inner kernel's runs as Python: under the engine only; compiled, it is never called with a list)


@numba.vectorize
def _inner_kernel(x):
    CALLS.append(x)
    return math.exp(-x) * x


@numba.vectorize
def _outer_kernel(x):
    return _inner_kernel(x) + _inner_kernel(2.0 * x) ** 2


@pytest.mark.parametrize("mode", MODES)
def test_kernels_calling_kernels_run_once_per_call(mode):
    # a kernel called with numbers runs once (np.vectorize's probe of the first element's types ran each twice,
    # psychrolib's nested kernels 2 ** depth times: 4 s for one gradient)
    def f(x):
        return _outer_kernel(x) * 3.0
    want = fd.gradient(lambda v: 3.0 * (math.exp(-v) * v + (math.exp(-2.0 * v) * 2.0 * v) ** 2), 0.8)
    CALLS.clear()
    got = gradient_in(mode, f, 0.8)
    np.testing.assert_allclose(got, want, rtol=1e-7)
    assert len(CALLS) == 2  # (the outer kernel's two calls of the inner one: 8 before)


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_vectorize_broadcast_over_an_array(mode):
    def f(x):
        return np.sum(kink(x, np.array([0.1, 0.9, 2.0])) * lazy_square(x))
    assert_array_gradient(mode, f, np.array([0.5, 0.4, 3.0]))


@pytest.mark.parametrize("mode", MODES)
def test_vectorize_at_its_branch_boundary_is_refused(mode):
    def f(x):
        return kink(x, 0.7)  # (slopes 0.7 * 1.4 and exp(-0.7) meet at x = 0.7)
    with pytest.raises(OverdubError):
        gradient_in(mode, f, 0.7)


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_njit_filling_an_array(mode):
    assert_array_gradient(mode, lambda x: float(np.sum(fill(x) ** 2)), np.array([0.4, 1.2, 0.8]))


@pytest.mark.parametrize("called", ["itself", "inside"])
def test_sparsity_through_njit(called):
    from contexts.sparsity import jacobian_sparsity
    f = fill if called == "itself" else (lambda x: fill(x) * 2.0)
    pattern = jacobian_sparsity(f, np.ones(3)).toarray()
    np.testing.assert_array_equal(pattern, np.array([[1, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=bool))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_an_njit_function_differentiated_itself(mode):
    from contexts import jacfwd, jacobian
    x = np.array([0.4, 1.2, 0.8])
    got = (jacobian if mode == "reverse" else jacfwd)(fill, x)
    np.testing.assert_allclose(got, fd.jacobian(fill, x, matrix=True), rtol=1e-7, atol=1e-9)


def test_without_differentiated_inputs_the_machine_code_runs():
    from contexts import gradient
    calls = []

    def f(x):
        calls.append(kepler(0.5, 0.1))  # (constants: the compiled function, no Python run)
        return x * calls[-1]
    g = gradient(f, 2.0)
    np.testing.assert_allclose(g, kepler.py_func(0.5, 0.1), rtol=1e-12)


@numba.guvectorize(["void(float64, float64[:], float64[:], float64[:])"], "(),(n)->(n),()")
def scaled_and_sum(a, x, out, total):  # (a scalar input by value; a scalar output as a 1-element array)
    s = 0.0
    for i in range(x.shape[0]):
        out[i] = a * math.sin(x[i])
        s += out[i] * x[i]
    total[0] = s


@numba.guvectorize(["void(float64[:], float64[:], float64[:])"], "(),(n)->()")
def crps_like(obs, xs, result):  # (properscoring's shape: the scalar core input as a 1-element array)
    acc = 0.0
    for v in xs:
        acc += abs(v - obs[0]) if v > obs[0] else (obs[0] - v) ** 2
    result[0] = acc


def _guv(x):
    out, total = scaled_and_sum(np.array([0.5, 1.5]), x.reshape(1, 3) * np.ones((2, 1)))
    return float(np.sum(out ** 2) + np.sum(total) + np.sum(crps_like(x[:2], x.reshape(1, 3) * 1.3)))


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_guvectorize_over_its_loop_dimensions(mode):
    assert_array_gradient(mode, _guv, np.array([0.4, 1.2, 0.8]))


@pytest.mark.parametrize("mode", MODES)
def test_guvectorize_given_its_output_array_is_refused_by_name(mode):
    def f(x):
        out = np.empty(1)
        crps_like(np.array([x]), np.array([x, 2.0 * x]), out)
        return out[0]
    assert np.isfinite(f(0.7))
    with pytest.raises(OverdubError, match="crps_like"):
        gradient_in(mode, f, 0.7)


@numba.cfunc("float64(float64)")
def cubed(v):
    return v * v * v


@pytest.mark.parametrize("mode", MODES)
def test_cfunc_called_from_python(mode):
    np.testing.assert_allclose(gradient_in(mode, lambda x: cubed(x) + x, 1.5), (3 * 1.5 ** 2 + 1,), rtol=1e-12)


def _dependencies(f, x):
    """Which outputs move when each input moves (central differences of two sizes): the pattern's truth."""
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = 1e-4
        cols.append((np.abs(f(x + e) - f(x - e)) > 0) | (np.abs(f(x + 10 * e) - f(x - 10 * e)) > 0))
    return np.array(cols).T


@pytest.mark.parametrize("name", ["vectorize (local)", "guvectorize", "np.vectorize"])
def test_sparsity_through_vectorized_kernels(name):
    from contexts.sparsity import jacobian_sparsity
    x = np.array([0.1, 0.7, 0.3])
    plain = np.vectorize(lambda a, b: a * b)
    f, mode = {"vectorize (local)": (lambda x: kink(x, x[::-1] * 2.0) + 1.0, "local"),
               "guvectorize": (lambda x: crps_like(x[:2], np.stack([x[1:], x[:2]])), "local"),
               "np.vectorize": (lambda x: plain(x[:2], x[1:]), "global")}[name]
    pattern = jacobian_sparsity(f, x, mode=mode).toarray()
    np.testing.assert_array_equal(pattern, _dependencies(f, x))


@pytest.mark.parametrize("mode", MODES)
def test_parameters_by_keyword_into_an_njit_function(mode):
    # (forward mode's tangent twin took its tangents by position only: `args=(c,)` dropped, 0 for -2.4)
    from contexts import derivative, gradient
    from tests.contexts._numba_lib import scaled_objective
    want = 3.0 * 2.0 * (0.3 - 0.7)
    got = gradient(scaled_objective, 0.7)[0] if mode == "reverse" else derivative(scaled_objective, 0.7)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_an_overloaded_stub_is_refused(mode):
    # (interpolation.py's `interp(*args)` calls `_interp(*args): pass`, which numba implements by @overload: run
    # as Python, the value came out None)
    from tests.contexts._numba_lib import through_a_stub
    assert through_a_stub(1.5) == 4.5
    with pytest.raises(OverdubError, match="@overload"):
        gradient_in(mode, through_a_stub, 1.5)


@numba.njit
def _accumulate_squares(out, x):
    for i in range(x.shape[0]):
        out[i] = x[i] ** 2 + out[i]


def _rows_filled(x):
    out = np.ones((2, 3))
    for r in range(2):
        _accumulate_squares(out[r], x * (r + 1))  # (an @njit filling a view of the caller's array in place)
    return float(np.sum(out ** 2 * x))


@pytest.mark.parametrize("mode", ARRAY_MODES)
def test_njit_changing_the_callers_array_in_place(mode):
    assert_array_gradient(mode, _rows_filled, np.array([0.3, 1.1, -0.4]))
