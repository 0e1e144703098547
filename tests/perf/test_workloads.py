"""The workloads' hand-written gradients against central finite differences, and the method checks."""

import numpy as np
import pytest

from perf.workloads import make_workloads
from perf.workloads import methods
from perf.workloads.methods import Checked, Prepared, Unavailable, check
from tests import fd

QUICK = {w.name: w for w in make_workloads(quick=True)}
FULL = {w.name: w for w in make_workloads(quick=False)}


def fd_gradient(w):
    """Central differences in the params only (the constants, ints, get None and are dropped)."""
    return fd.gradient(w.primal(), *w.args, h=1e-6, order=2)[: len(w.params)]


@pytest.mark.parametrize("name", list(QUICK))
def test_hand_gradient_matches_finite_differences(name):
    w = QUICK[name]
    want = fd_gradient(w)
    got = w.hand_gradient(*w.args)
    assert len(got) == len(want)
    for g, fd_value in zip(got, want):
        np.testing.assert_allclose(g, fd_value, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", list(FULL))
def test_hand_gradient_matches_closed_form_at_full_size(name):
    w = FULL[name]
    for g, c in zip(w.hand_gradient(*w.args), w.closed_form(*w.args), strict=True):
        np.testing.assert_allclose(g, c, rtol=1e-10, atol=1e-12)


FLOORS = [name for name, w in FULL.items() if w.floor_gradient is not None]


def test_every_array_workload_has_its_floor():
    assert FLOORS == ["logsumexp", "logistic", "mlp1", "mlp64", "mlp1relu", "mlp64relu"]


@pytest.mark.parametrize("name", [name for name, w in QUICK.items() if w.floor_gradient is not None])
def test_floor_gradient_matches_finite_differences(name):
    w = QUICK[name]
    want = fd_gradient(w)
    for g, fd_value in zip(w.floor_gradient(*w.args), want, strict=True):
        np.testing.assert_allclose(g, fd_value, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", FLOORS)
def test_floor_gradient_matches_closed_form_at_full_size(name):
    w = FULL[name]
    for g, c in zip(w.floor_gradient(*w.args), w.closed_form(*w.args), strict=True):
        np.testing.assert_allclose(g, c, rtol=1e-10, atol=1e-12)


def test_floor_gradient_shares_the_cotangent_among_tied_maxima():
    w = FULL["logsumexp"]
    x = np.array([1.0, 3.0, 3.0, 0.5])  # two maxima: the max's cotangent splits, the total is exact
    want = np.exp(x) / np.exp(x).sum()
    np.testing.assert_allclose(w.floor_gradient(x)[0], want, rtol=1e-12)


@pytest.mark.parametrize("name", ["mlp64", "mlp64relu"])
def test_hand_gradient_leaves_its_inputs_alone(name):
    w = FULL[name]
    before = [p.copy() for p in w.params]
    w.hand_gradient(*w.params)
    for p, b in zip(w.params, before):
        np.testing.assert_array_equal(p, b)


def test_full_sizes_are_the_papers():
    assert FULL["loop"].sizes == {"n": 100}
    assert FULL["loop_arg"].constants == (100,) and FULL["loop_arg"].params == FULL["loop"].params
    assert FULL["logsumexp"].params[0].shape == (100,)
    W, b = FULL["logistic"].params
    assert W.shape == (10, 100) and b.shape == (10,)
    assert [p.shape for p in FULL["mlp1"].params] == [(300, 784), (300, 1), (10, 300), (10, 1)]
    assert FULL["mlp64"].data["X"].shape == (784, 64)
    assert [p.shape for p in FULL["mlp64relu"].params] == [p.shape for p in FULL["mlp64"].params]
    assert FULL["mlp64relu"].data["X"].shape == (784, 64)


def test_relu_workloads_have_units_on_both_sides_of_the_kink():
    for name in ("mlp1relu", "mlp64relu", "mlp4relu"):
        w = FULL.get(name) or QUICK[name]
        W1, b1 = w.params[:2]
        a = W1 @ w.data["X"] + b1
        assert (a > 0).any() and (a < 0).any() and not (a == 0).any()  # the tie rule never decides


# -- every method against the closed form, at the quick sizes -------------------------------------

NEW = ["loop_arg", "mlp1relu", "mlp4relu"]  # the workloads with trailing constants or maximum()
GRADIENT_METHODS = [m for m in methods.METHODS if m != "primal"]


@pytest.mark.parametrize("method", GRADIENT_METHODS)
@pytest.mark.parametrize("name", NEW)
def test_every_method_agrees_with_the_closed_form(name, method):
    """Each method's gradient (checked by the harness against the hand-written one) against the closed
    form; a peer that is not installed is skipped, a method with nothing to do here must say so."""
    w = QUICK[name]
    checked = check(method, w)
    if checked.status == "missing" and method in methods.PEERS:
        pytest.skip(f"{method} is not installed")
    if method == "floor" and w.floor_gradient is None or method == "overdub.wrt" and not w.constants:
        assert checked.status in ("missing", "n/a")
        return
    assert checked.status == "ok", checked.status
    got = checked.prepared.gradient()
    for g, c in zip(got, w.closed_form(*w.args), strict=True):
        np.testing.assert_allclose(np.asarray(g, dtype=float), c, rtol=1e-9, atol=1e-12)


def test_overdub_is_called_with_the_constants_as_a_user_would():
    """`gradient(loop_pow, x, n)`: every argument given, the gradient of x in front; the count steers the
    loop (a count of 3 gives 3 x**2, not the workload's n x**(n-1))."""
    from contexts.ad import gradient

    w = QUICK["loop_arg"]
    f, (x,) = w.primal(), w.params
    assert gradient(f, x, 3)[0] == pytest.approx(3 * x ** 2, rel=1e-12)
    assert gradient(f, x, 3, wrt=0) == pytest.approx((3 * x ** 2,), rel=1e-12)
    assert w.hand_gradient(x, 3)[0] == pytest.approx(3 * x ** 2, rel=1e-12)


def test_overdub_wrt_is_not_applicable_without_constants():
    assert check("overdub.wrt", QUICK["loop"]).status == "n/a"


def test_a_wrong_gradient_is_reported_as_mismatch(monkeypatch):
    w = QUICK["logsumexp"]
    doubled = (2 * w.hand_gradient(*w.params)[0],)
    monkeypatch.setitem(methods._BUILDERS, "hand", lambda wl: Prepared(lambda: doubled, lambda: doubled))
    assert check("hand", w).status.startswith("mismatch: gradient 0")


def test_missing_and_failing_methods_are_reported_not_raised(monkeypatch):
    def unavailable(workload):
        raise Unavailable("no such package")

    def broken(workload):
        return Prepared(lambda: 1 / 0, lambda: 1 / 0)

    monkeypatch.setitem(methods._BUILDERS, "autograd", unavailable)
    monkeypatch.setitem(methods._BUILDERS, "torch", broken)
    w = QUICK["sincos"]
    assert check("autograd", w) == Checked("missing", detail="no such package")
    assert check("torch", w).status == "failed: ZeroDivisionError: division by zero"


def test_wrong_number_of_gradients_is_a_mismatch(monkeypatch):
    monkeypatch.setitem(methods._BUILDERS, "hand", lambda wl: Prepared(lambda: (1.0, 2.0), lambda: (1.0, 2.0)))
    assert check("hand", QUICK["sincos"]).status == "mismatch: expected 1 gradients, got tuple"
