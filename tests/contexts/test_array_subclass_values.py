"""ndarray subclasses whose `__array_finalize__` or `__array_wrap__` change the values numpy computes (numpy runs
them on every view, slice and ufunc result): the rules differentiate the plain operation, so both modes returned
silently wrong derivatives (3.0 for 0.0 through a clipping `__array_finalize__`). Refused now; the common kind,
which only carries attributes along, is still differentiated."""

import numpy as np
import pytest

from contexts import gradient
from contexts.forward import jvp
from overdub.errors import OverdubError
from tests import fd


class Clipped(np.ndarray):
    def __array_finalize__(self, obj):
        if obj is not None and self.dtype.kind == "f":
            np.clip(self, -1.0, 1.0, out=self.view(np.ndarray))


class Doubling(np.ndarray):
    def __array_wrap__(self, arr, context=None, return_scalar=False):
        out = (np.asarray(arr).view(np.ndarray) * 2.0).view(type(self))
        return out[()] if return_scalar else out


class Scaled(np.ndarray):
    def __array_finalize__(self, obj):
        self.unit = getattr(obj, "unit", "m")
        if obj is not None:
            self *= 1.0  # (an in-place operator: taken as changing)


class Info(np.ndarray):  # (the common kind: attributes carried along, values untouched)
    def __new__(cls, a, info=None):
        obj = np.asarray(a).view(cls)
        obj.info = info
        return obj

    def __array_finalize__(self, obj):
        self.info = getattr(obj, "info", None)


def _clipped(x):
    return float(np.sum((x * 3).view(Clipped) + 0.0))


def _doubling(x):
    return float(np.sum(np.sin(x.view(Doubling))))


def _scaled(x):
    return float(np.sum(x.view(Scaled) * x))


def _info(x):
    return float(np.sum(Info(x, "a") * x)) + float(Info(x ** 2, "b").sum())


X = np.array([0.7, 1.1, 0.4])


@pytest.mark.parametrize("f", [_clipped, _doubling, _scaled], ids=lambda f: f.__name__)
def test_a_subclass_changing_values_is_refused_in_both_modes(f):
    with pytest.raises(OverdubError, match="__array_finalize__"):
        gradient(f, X)
    with pytest.raises(OverdubError):
        jvp(f, (X,), (np.ones(3),))


def test_a_subclass_carrying_attributes_is_differentiated():
    want = fd.gradient(_info, X)[0]
    assert np.allclose(gradient(_info, X)[0], want, rtol=1e-6, atol=1e-8)


class Mapped(np.lib.mixins.NDArrayOperatorsMixin, np.ndarray):
    """pysindy's AxesArray's kind (session 73): its `__array_finalize__` tests its cases with `all((...))` of
    reads of self, which hands self to no function that could change it; its ufuncs run by its own
    `__array_ufunc__` on plain views."""

    def __new__(cls, a, axes):
        obj = np.asarray(a).view(cls)
        obj._axes = dict(axes)
        return obj

    def __array_finalize__(self, obj):
        if obj is None:
            return
        if all((not isinstance(obj, Mapped), self.shape == (), not hasattr(self, "_axes"))):
            self._axes = {}
        elif any((isinstance(obj, Mapped) and hasattr(obj, "_axes"),)) and not hasattr(self, "_axes"):
            self._axes = dict(obj._axes)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        args = [i.view(np.ndarray) if isinstance(i, Mapped) else i for i in inputs]
        out = getattr(ufunc, method)(*args, **kwargs)
        return Mapped(out, self._axes) if isinstance(out, np.ndarray) else out


def _mapped(x):
    a = Mapped(x, {"ax_time": 0})
    return float(np.sum(np.asarray(a * a + np.sin(a)))) + float(np.asarray(a[1:] ** 3).sum())


def test_a_subclass_testing_itself_by_all_is_differentiated():
    want = fd.gradient(_mapped, X)[0]
    assert np.allclose(gradient(_mapped, X)[0], want, rtol=1e-6, atol=1e-8)
    y, dy = jvp(_mapped, (X,), (np.array([1.0, -2.0, 0.5]),))  # (forward mode refuses; reverse mode answers)
    assert dy == pytest.approx(float(want @ np.array([1.0, -2.0, 0.5])), rel=1e-6)
