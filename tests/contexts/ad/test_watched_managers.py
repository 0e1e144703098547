"""`@contextmanager` generators given objects that hold differentiated values, in reverse mode
(`contexts.ad.managers`): run natively where their code computes, stores and compares nothing and they call
nothing but quiet builtins (scikit-learn's `callback_management_context` around every `fit`); refused where
they compute, store, compare a value, yield one, call a Python function, or cannot be watched. Gradients
against central differences."""

import sys
from contextlib import contextmanager

import pytest

from contexts import UnsupportedFunction, gradient
from tests import fd


class Model:
    def __init__(self, scale):
        self.scale = scale
        self.callbacks = []


@contextmanager
def tidy(obj):
    """What scikit-learn's fit runs around its body: tear callbacks down, delete the fit's scratch."""
    try:
        yield
    finally:
        errors = []
        for cb in obj.callbacks:
            try:
                cb(obj)
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        if hasattr(obj, "scratch"):
            del obj.scratch
        if len(errors) == 1:
            raise errors[0]


def fit(obj, x):
    with tidy(obj):
        obj.scratch = []  # stored in the body (carrying no derivative), deleted natively by the manager
        obj.coef = obj.scale * x * x + obj.scale + len(obj.scratch)
    return obj.coef


def fit_keeping(obj, x):
    with tidy(obj):
        obj.scratch = obj.scale * x  # a differentiated value stored, read, then deleted natively
        obj.coef = obj.scratch * x + obj.scale
    return obj.coef


@pytest.mark.one_mode  # (reverse mode's own answer)
def test_harmless_manager_around_a_fit():
    f = lambda s: fit(Model(s), 1.7) + fit(Model(2.0), s)  # noqa: E731
    assert gradient(f, 0.8)[0] == pytest.approx(fd.derivative(f, 0.8), rel=1e-7)


@pytest.mark.one_mode
def test_a_differentiated_value_deleted_natively_is_refused():
    """Its cotangent would have to be found without the attribute (a function's attribute so gave 0 for 2)."""
    with pytest.raises(UnsupportedFunction, match="deleted afterwards"):
        gradient(lambda s: fit_keeping(Model(s), 1.7), 0.8)


@pytest.mark.one_mode
def test_harmless_manager_after_a_store_deleted_natively():
    def f(x):
        m = Model(0.5)
        y = fit(m, x)
        return y * m.scale + (0.0 if hasattr(m, "scratch") else x)
    assert gradient(f, 1.3)[0] == pytest.approx(fd.derivative(f, 1.3), rel=1e-7)


@contextmanager
def doubled(obj):
    obj.twice = obj.scale * 2  # (natively: the body's read of obj.twice would carry no derivative)
    yield


@contextmanager
def branching(obj):
    if obj.scale == 1.0:  # (a tie of a differentiated value, tested natively)
        obj.callbacks = None
    yield


@contextmanager
def giving(obj):
    yield obj.scale


def _with(manager, as_value=False):
    def f(s):
        m = Model(s)
        if as_value:
            with manager(m) as v:
                return v * s
        with manager(m):
            return getattr(m, "twice", 1.0) * s
    return f


@pytest.mark.one_mode  # (reverse mode's own refusal, not forward mode's answer after it)
@pytest.mark.parametrize("manager, as_value", [(doubled, False), (branching, False), (giving, True)],
                         ids=["computes-and-stores", "compares", "yields"])
def test_managers_that_compute_are_refused(manager, as_value):
    with pytest.raises(UnsupportedFunction, match="context manager"):
        gradient(_with(manager, as_value), 1.0)


@pytest.mark.one_mode
def test_a_callback_called_natively_is_refused():
    def f(s):
        m = Model(s)
        m.callbacks.append(lambda obj: setattr(obj, "seen", obj.scale * 3))
        return fit(m, 2.0) + getattr(m, "seen", 0.0)
    with pytest.raises(UnsupportedFunction, match="it called"):
        gradient(f, 0.9)


@pytest.mark.one_mode
def test_under_a_profiler_it_is_refused():
    sys.setprofile(lambda *a: None)
    try:
        with pytest.raises(UnsupportedFunction, match="profiler"):
            gradient(lambda s: fit(Model(s), 1.5), 0.9)
    finally:
        sys.setprofile(None)
