"""The workloads' hand-written gradients against central finite differences, and the method checks."""

import numpy as np
import pytest

from perf.workloads import make_workloads
from perf.workloads import methods
from perf.workloads.methods import Checked, Prepared, Unavailable, check
from tests import fd

QUICK = {w.name: w for w in make_workloads(quick=True)}
FULL = {w.name: w for w in make_workloads(quick=False)}


@pytest.mark.parametrize("name", list(QUICK))
def test_hand_gradient_matches_finite_differences(name):
    w = QUICK[name]
    want = fd.gradient(w.primal(), *w.params, h=1e-6, order=2)
    got = w.hand_gradient(*w.params)
    assert len(got) == len(want)
    for g, fd_value in zip(got, want):
        np.testing.assert_allclose(g, fd_value, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", list(FULL))
def test_hand_gradient_matches_closed_form_at_full_size(name):
    w = FULL[name]
    for g, c in zip(w.hand_gradient(*w.params), w.closed_form(*w.params)):
        np.testing.assert_allclose(g, c, rtol=1e-10, atol=1e-12)


FLOORS = [name for name, w in FULL.items() if w.floor_gradient is not None]


def test_every_array_workload_has_its_floor():
    assert FLOORS == ["logsumexp", "logistic", "mlp1", "mlp64"]


@pytest.mark.parametrize("name", [name for name, w in QUICK.items() if w.floor_gradient is not None])
def test_floor_gradient_matches_finite_differences(name):
    w = QUICK[name]
    want = fd.gradient(w.primal(), *w.params, h=1e-6, order=2)
    for g, fd_value in zip(w.floor_gradient(*w.params), want, strict=True):
        np.testing.assert_allclose(g, fd_value, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", FLOORS)
def test_floor_gradient_matches_closed_form_at_full_size(name):
    w = FULL[name]
    for g, c in zip(w.floor_gradient(*w.params), w.closed_form(*w.params), strict=True):
        np.testing.assert_allclose(g, c, rtol=1e-10, atol=1e-12)


def test_floor_gradient_shares_the_cotangent_among_tied_maxima():
    w = FULL["logsumexp"]
    x = np.array([1.0, 3.0, 3.0, 0.5])  # two maxima: the max's cotangent splits, the total is exact
    want = np.exp(x) / np.exp(x).sum()
    np.testing.assert_allclose(w.floor_gradient(x)[0], want, rtol=1e-12)


def test_hand_gradient_leaves_its_inputs_alone():
    w = FULL["mlp64"]
    before = [p.copy() for p in w.params]
    w.hand_gradient(*w.params)
    for p, b in zip(w.params, before):
        np.testing.assert_array_equal(p, b)


def test_full_sizes_are_the_papers():
    assert FULL["loop"].sizes == {"n": 100}
    assert FULL["logsumexp"].params[0].shape == (100,)
    W, b = FULL["logistic"].params
    assert W.shape == (10, 100) and b.shape == (10,)
    assert [p.shape for p in FULL["mlp1"].params] == [(300, 784), (300, 1), (10, 300), (10, 1)]
    assert FULL["mlp64"].data["X"].shape == (784, 64)


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
