"""What session 56's look at real packages found, each checked in reverse and forward mode against central
differences (each failed before, refused: "its source is not available", "no forward rule for ...").

- A dataclass subclass with an `__init__` of its own calling the base's generated one by
  `super().__init__(tdb=tdb, rh=rh)`, the subclass a dataclass of its own (its own fields dict, maybe more
  fields): pythermalcomfort's input classes, in front of every one of its models. The generated code runs as
  the base's fields set (`lowered.runtime.dataclass_init_as`), its `__post_init__` under the transform.
- A fixed-point iteration's exit `if E_new == E: break` (orbit-predictor's Kepler solver): its two values
  equal, their tangents converged with them to rounding (1e-15 apart). Forward mode refused it at every point
  as a special case where two moving values meet; reverse mode answered. Such tangents are no rates apart
  (`lowered.runtime._rounding_apart`); two values that meet and part are judged from the two sides as before.
- An array read at an empty list, `x[idx[:0]]` (quantecon's `LinearStateSpace.stationary_distributions`
  with no constant states): reverse mode scattered the cotangent back by `np.add.at` at a float index array
  (numpy's `[]` is one), IndexError.
- `np.linalg.cond(a, 1)` (any norm but 2) calls the gufunc under np.linalg.inv itself: refused as a C function
  in both modes ("numpy.inv"; quantecon's Riccati solver picks its shift by the condition number).
- A median (a sort, a partition) at two entries equal up to rounding (0.95 and 0.9500000000000002, two of
  pymannkendall's pairwise slopes computed by different formulas): the exact-equality tie check missed it and
  one side's derivative came out in both modes, [0, -0.5, 0] where central differences give [-0.25, -0.25,
  0.25]. Values within 2**-40 relative are a tie now (`rules.ties._tied`): refused where they part.
- A function made by `exec` (networkx's `argmap_*` wrappers) given only values carrying no derivative, where
  the activity analysis could not prove them constant (an object's attribute, the object holding a
  differentiated value): reverse mode refused it, "its source is not available" (colormath's conversion path
  through networkx). It runs as a constant's computation where nothing it is given or reads carries one.
- CPython 3.11's `code.co_positions()` iterator (inspect's `getframeinfo`, reached by pythermalcomfort's
  argument checks) has no `__class__`: asking whether it is a number crashed forward mode.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import InitVar, dataclass

import numpy as np
import pytest

from tests import fd
from tests.modes import MODES, gradient_in


@dataclass
class _Base:
    tdb: float = None
    rh: float = None
    scale: float = 1.0

    def __post_init__(self):
        if self.tdb is not None and not isinstance(self.tdb, (float, int, np.ndarray)):
            raise TypeError("tdb must be a number")  # (a check natively given a dual failed)


@dataclass
class _Same(_Base):
    def __init__(self, tdb, rh):
        super().__init__(tdb=tdb, rh=rh)


@dataclass
class _More(_Base):
    extra: float = 2.0

    def __init__(self, tdb, rh):
        super().__init__(tdb, rh=rh, scale=3.0)  # (positional and keyword; `extra` keeps its class default)
        self.extra = self.tdb * self.scale


@dataclass(frozen=True)
class _Derived:
    a: float
    b: InitVar[float] = 1.0

    def __post_init__(self, b):
        object.__setattr__(self, "c", math.sin(self.a) * b)  # (computed from the fields: differentiated)


@dataclass(frozen=True)
class _Frozen(_Derived):
    def __init__(self, a, b):
        super().__init__(a * 2.0, b)


def _same(t):
    i = _Same(tdb=t, rh=60.0)
    return i.tdb * math.sin(i.rh / 100.0 * t)


def _more(t):
    i = _More(t, 50.0)
    return i.extra * i.tdb + math.cos(i.rh * t / 40.0) + i.scale


def _derived(t):
    d = _Frozen(t, t * t)
    return d.c + d.a


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [_same, _more, _derived], ids=["same fields", "more fields", "InitVar, frozen"])
def test_super_init_reaching_a_dataclass_generated_init(mode, f):
    np.testing.assert_allclose(gradient_in(mode, f, 1.3), fd.gradient(f, 1.3), rtol=1e-7)


def _positions(t):
    frame = inspect.currentframe()
    info = inspect.getframeinfo(frame)  # (islices `code.co_positions()`)
    return t * t * (info.lineno > 0)


@pytest.mark.parametrize("mode", MODES)
def test_inspect_getframeinfo_inside_differentiated_code(mode):
    np.testing.assert_allclose(gradient_in(mode, _positions, 1.5), (3.0,), rtol=1e-12)


def _kepler(M, e=0.3):
    E = M
    while True:
        E_new = M + e * math.sin(E)
        if E_new == E:
            break
        E = E_new
    return E


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("M", [1.0, 0.3, 2.5])
def test_fixed_point_exit_by_equality(mode, M):
    E = _kepler(M)
    np.testing.assert_allclose(gradient_in(mode, _kepler, M), (1.0 / (1.0 - 0.3 * math.cos(E)),), rtol=1e-12)


def test_fixed_point_exit_in_jacfwd_and_hessian():
    from contexts import hessian, jacfwd
    x = np.array([1.0, 0.4])
    f = lambda x: np.array([_kepler(x[0]), _kepler(x[1]) * x[0]])  # noqa: E731
    np.testing.assert_allclose(jacfwd(f, x), fd.jacobian(f, x, matrix=True), rtol=1e-7, atol=1e-9)
    E = _kepler(1.0)
    d1 = 1.0 / (1.0 - 0.3 * math.cos(E))
    np.testing.assert_allclose(hessian(_kepler, 1.0), -0.3 * math.sin(E) * d1 ** 3, rtol=1e-9)



def _empty_pick(x):
    mu = np.empty((3, 1))
    order, k = [2, 0, 1], 0
    mu[:k] = x[order[:k]]  # (nothing: an empty list index)
    mu[k:] = 2.0 * x
    return float(np.sum(mu * x)) + float(np.sum(x[[], 0]))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_array_read_at_an_empty_list(mode):
    from contexts import gradient, jacfwd
    x = np.array([[0.3], [1.2], [-0.5]])
    got = gradient(_empty_pick, x)[0] if mode == "reverse" else jacfwd(_empty_pick, x)
    np.testing.assert_allclose(np.reshape(got, x.shape), 4.0 * x, rtol=1e-12)


def _conditioned(x):
    a = np.array([[2.0, x[0]], [x[1], 1.0 + x[0] * x[1]]])
    return float(np.linalg.cond(a, 1) + np.linalg.cond(a, "fro") * x[0])


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_condition_number_by_a_norm_other_than_2(mode):
    from contexts import gradient, jacfwd
    x = np.array([0.3, 0.7])
    got = gradient(_conditioned, x)[0] if mode == "reverse" else jacfwd(_conditioned, x)
    np.testing.assert_allclose(got, fd.gradient(_conditioned, x)[0], rtol=1e-7)


def _sen_slope(x):
    n = len(x)
    d = [(x[j] - x[i]) / (j - i) for i in range(n) for j in range(i + 1, n)]
    return float(np.median(np.array(d)))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_median_at_a_tie_up_to_rounding_is_refused(mode):
    from contexts import gradient, jacfwd
    from overdub.errors import OverdubError
    x = np.array([1.0, 2.3, 2.9, 4.2, 5.1, 5.8])  # (two of its slopes are 0.95 up to rounding, at the median)
    with pytest.raises(OverdubError):
        gradient(_sen_slope, x) if mode == "reverse" else jacfwd(_sen_slope, x)
    y = np.array([1.0, 2.31, 2.93, 4.17, 5.12, 5.84])  # (no tie: right)
    got = gradient(_sen_slope, y)[0] if mode == "reverse" else jacfwd(_sen_slope, y)
    np.testing.assert_allclose(got, fd.gradient(_sen_slope, y)[0], rtol=1e-7, atol=1e-9)


_NS: dict = {}
exec("def _made_lookup(table, key):\n    return [table[key], len(table)]", _NS)  # (no source: made by exec)


class _Holder:
    def __init__(self, x):
        self.x = x
        self.table = {"a": 3, "b": 4}


def _through_exec(x):
    h = _Holder(x)
    k, n = _NS["_made_lookup"](h.table, "b")
    return h.x * k + n


@pytest.mark.parametrize("mode", MODES)
def test_exec_made_function_given_constants(mode):
    np.testing.assert_allclose(gradient_in(mode, _through_exec, 1.5), (4.0,), rtol=1e-12)


_NS2: dict = {}
exec("def _made_scale(h):\n    return h.x * 2.0", _NS2)


def _through_exec_differentiated(x):
    return _NS2["_made_scale"](_Holder(x)) + x


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_exec_made_function_given_a_differentiated_value_stays_refused():
    from contexts import gradient
    from overdub.errors import OverdubError
    with pytest.raises(OverdubError):
        gradient(_through_exec_differentiated, 1.5)
