"""scipy.linalg.matrix_balance in reverse and forward mode (contexts/rules/numpy/scipy_linalg.py's stand-in):
B = T⁻¹AT with T piecewise constant, so dB = T⁻¹ dA T; against central differences of scipy's own function,
its values bit for bit scipy's. Where T's choice relied on a zero of A (an isolated eigenvalue, a row of zero
norm), B jumps as that zero moves: what is invariant under the similarity (T f(B) T⁻¹, as harold's discretize
computes) is differentiated in every direction, B itself refused along such a direction in forward mode."""

import numpy as np
import pytest

sl = pytest.importorskip("scipy.linalg")

from contexts import jacfwd, jacobian, jvp  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402
from tests import fd  # noqa: E402

ONE_MODE = pytest.mark.one_mode  # (every test but the last: each mode alone)

RNG = np.random.default_rng(3)
DENSE = RNG.standard_normal((4, 4)) * 10.0 ** RNG.integers(-3, 4, size=(4, 4))  # (scaled by 2**-1 ... 2**9)
COMPANION = np.array([[0.0, 0.0, -6.0], [1.0, 0.0, -11.0], [0.0, 1.0, -6.0]])  # (s + 1)(s + 2)(s + 3)
TRIANGULAR = np.array([[1.0, 2.0, 300.0], [0.0, 3.0, 4.0], [0.0, 0.0, 5.0]])  # (every eigenvalue isolated)

JACOBIANS = {"reverse": lambda f, a: jacobian(f, a, mode="reverse"), "forward": jacfwd}
FLAGS = [dict(), dict(permute=False), dict(scale=False), dict(separate=True)]


def assert_close(got, want, rtol=1e-7):
    got, want = np.asarray(got), np.asarray(want)
    assert np.max(np.abs(got.reshape(want.shape) - want)) <= rtol * np.max(np.abs(want))


@ONE_MODE
@pytest.mark.parametrize("kw", FLAGS, ids=lambda kw: ",".join(kw) or "default")
@pytest.mark.parametrize("a", [DENSE, COMPANION, TRIANGULAR], ids=["dense", "companion", "triangular"])
def test_values_are_scipys(a, kw):
    want = sl.matrix_balance(a, **kw)
    got, _ = jvp(lambda m: sl.matrix_balance(m, **kw), (a,), (np.zeros_like(a),))
    np.testing.assert_array_equal(got[0], want[0])
    if kw.get("separate"):
        np.testing.assert_array_equal(got[1][0], want[1][0])
        np.testing.assert_array_equal(got[1][1], want[1][1])
    else:
        np.testing.assert_array_equal(got[1], want[1])


@ONE_MODE
def test_cases_are_balanced_nontrivially():
    """DENSE is scaled, TRIANGULAR permuted (or at least isolated), so T is no identity the rule could lean on."""
    assert len(set(sl.matrix_balance(DENSE, separate=True)[1][0])) > 2
    assert not np.array_equal(sl.matrix_balance(TRIANGULAR)[0], TRIANGULAR) or \
        not np.array_equal(sl.matrix_balance(TRIANGULAR, permute=False)[0], sl.matrix_balance(TRIANGULAR)[0])


@ONE_MODE
@pytest.mark.parametrize("mode", JACOBIANS)
@pytest.mark.parametrize("kw", FLAGS, ids=lambda kw: ",".join(kw) or "default")
def test_balanced_matrix(mode, kw):
    def f(a):
        return sl.matrix_balance(a, **kw)[0]
    assert_close(JACOBIANS[mode](f, DENSE), fd.jacobian(f, DENSE), rtol=1e-6)  # (entries up to 1e3, h = 1e-6)


@ONE_MODE
@pytest.mark.parametrize("mode", JACOBIANS)
def test_balanced_matrix_of_a_companion(mode):
    """Its zeros are no isolated eigenvalue and no empty row: B moves smoothly in every direction."""
    def f(a):
        return sl.matrix_balance(a)[0]
    assert_close(JACOBIANS[mode](f, COMPANION), fd.jacobian(f, COMPANION))


def back_transformed_expm(a):
    """T expm(B) T⁻¹ = expm(A): what a balancing's user computes."""
    b, t = sl.matrix_balance(a)
    return t @ sl.expm(b) @ np.linalg.inv(t)


@ONE_MODE
@pytest.mark.parametrize("a", [DENSE / 100, COMPANION, TRIANGULAR / 100], ids=["dense", "companion", "triangular"])
def test_similarity_invariant_result_in_every_direction(a):
    """Reverse mode's gradient in all of A, the triangular matrix's zeros (where T jumps) included."""
    assert_close(jacobian(back_transformed_expm, a, mode="reverse"), fd.jacobian(sl.expm, a), rtol=1e-6)


@ONE_MODE
def test_forward_along_a_direction_keeping_the_zeros():
    d = np.triu(np.arange(1.0, 10.0).reshape(3, 3))
    _, t = jvp(back_transformed_expm, (TRIANGULAR / 100,), (d,))
    assert_close(t, fd.directional(sl.expm, (TRIANGULAR / 100,), (d,)), rtol=1e-6)


@ONE_MODE
def test_balanced_matrix_jumps_where_a_relied_on_zero_moves():
    """The reason for the refusal below: B(A + hE) - B(A) does not vanish with h (T changes at once)."""
    e = np.zeros((3, 3))
    e[2, 0] = 1.0
    for h in (1e-6, 1e-9, 1e-12):
        jump = np.max(np.abs(sl.matrix_balance(TRIANGULAR + h * e)[0] - sl.matrix_balance(TRIANGULAR)[0]))
        assert jump > 1.0


@ONE_MODE
def test_forward_refuses_a_direction_filling_a_relied_on_zero():
    e = np.zeros((3, 3))
    e[2, 0] = 1.0
    with pytest.raises(OverdubError, match="matrix_balance"):
        jvp(lambda a: sl.matrix_balance(a)[0], (TRIANGULAR,), (e,))


@ONE_MODE
@pytest.mark.parametrize("mode", JACOBIANS)
def test_scaling_and_permutation_carry_no_derivative(mode):
    got = JACOBIANS[mode](lambda a: sl.matrix_balance(a)[1].astype(float), DENSE)
    assert np.all(np.asarray(got) == 0)


def zoh_block(k):
    """[[A, B], [0, 0]] of a state-space model whose entries span six decades (the balancing scales it)."""
    a = np.array([[0.0, 1e3, 0.0], [0.0, 0.0, 1e3], [-k[0], -k[1], -0.5]])
    return np.block([[a, np.array([[0.0], [0.0], [1e-3]])], [np.zeros((1, 4))]])


def harold_zoh(k, dt=1e-3):
    """harold's `discretize(G, dt, method='zoh')` as it computes it (harold's `_discrete_funcs`): expm of the
    block matrix balanced without permuting (its zero row left unscaled), scaled back."""
    ms, (sca, _) = sl.matrix_balance(zoh_block(k), permute=0, separate=1)
    em = sl.expm(ms * dt) * (sca[:, None] * np.reciprocal(sca))
    return em[:3, :].ravel()


@ONE_MODE
@pytest.mark.parametrize("mode", JACOBIANS)
def test_harold_zoh_discretization(mode):
    k = np.array([2.0, 3.0])
    assert len(set(sl.matrix_balance(zoh_block(k), permute=0, separate=1)[1][0])) > 2  # (it scales)
    np.testing.assert_allclose(harold_zoh(k), sl.expm(zoh_block(k) * 1e-3)[:3, :].ravel(), rtol=1e-12, atol=1e-15)
    assert_close(JACOBIANS[mode](harold_zoh, k), fd.jacobian(harold_zoh, k), rtol=1e-6)


@ONE_MODE
def test_harold_discretize():
    """harold's discretize reaches ?gebal through matrix_balance (skipped where harold cannot be imported)."""
    harold = pytest.importorskip("harold")

    def zoh(k):
        G = harold.State(np.array([[0.0, 1.0], [-k, -0.5]]), np.array([[0.0], [1.0]]), np.eye(2), np.zeros((2, 1)))
        return harold.discretize(G, 0.1, method="zoh").a[1, 0]
    from contexts import derivative, gradient
    want = fd.derivative(zoh, 2.0)
    assert gradient(zoh, 2.0)[0] == pytest.approx(want, rel=1e-6)
    assert derivative(zoh, 2.0) == pytest.approx(want, rel=1e-6)


@ONE_MODE
@pytest.mark.parametrize("entry", [(2, 0), (0, 2), (0, 1)])
def test_reverse_refuses_the_balanced_matrix_where_T_relied_on_a_zero(entry):
    """B's entries of a triangular A: along its zeros B jumps ([0, 2]) or moves at another rate than the fixed
    T's ([2, 0]: 256 for 1), and a gradient holds those directions: refused, not the fixed-T number."""
    e = np.zeros((3, 3))
    e[2, 0] = 1.0
    assert abs((sl.matrix_balance(TRIANGULAR + 1e-9 * e)[0] - sl.matrix_balance(TRIANGULAR)[0])[2, 0] / 1e-9 - 1) > 1
    with pytest.raises(OverdubError, match="matrix_balance"):
        jacobian(lambda a: sl.matrix_balance(a)[0][entry], TRIANGULAR, mode="reverse")


def test_no_mode_gives_the_fixed_T_number_where_T_relied_on_a_zero():
    """Forward mode's refusal is not answered by reverse mode's fixed-T gradient (the modes' fallback)."""
    with pytest.raises(OverdubError):
        jacfwd(lambda a: sl.matrix_balance(a)[0], TRIANGULAR)
    with pytest.raises(OverdubError):
        jacobian(lambda a: sl.matrix_balance(a)[0], TRIANGULAR)
