"""Patterns of library code that reverse mode got silently wrong or crashed on (found through the
third-party suite), each against central differences or asserting the refusal:

- an object's `__dict__` written or read as a dict (`self.__dict__.update(kw)`, `vars(obj)`): the dict is
  the object's storage, and its cotangent is the object's (the gradient was a third short before);
- an output array passed by position (`np.clip(K, 0, 1, K)`, `a.sum(0, None, o)`): the transform sees a
  call reading its arguments, so reverse mode refuses it (sklearn's laplacian_kernel gave the gradient of
  -gamma * d, not of exp(-gamma * d)); a ufunc's one output (`np.exp(K, K)`) is differentiated as its
  `out=`; forward mode writes them all as `out=`;
- `@contextlib.contextmanager`: its generator runs natively around the `with` body (a twin's runs eagerly,
  restoring a setting before the body); one called with differentiated arguments is refused;
- a C method called through its class (`dict.get(d, k, default)`), type's own descriptors
  (`type.__dict__["__mro__"].__get__(obj)`), a mappingproxy's values: `inspect.getattr_static` and
  `inspect.signature` of a bound method of an object holding differentiated values.
"""

import contextlib
import inspect

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd
from contexts.ad import UnsupportedFunction
from tests import fd

MODES = {
    "reverse": lambda f, x: gradient(f, x)[0],
    "forward": derivative,
    "hessian": hessian,
}
X = 0.7


def _want(mode, f, x=X):
    return fd.derivative(f, x) if mode != "hessian" else fd.derivative(lambda t: fd.derivative(f, t, h=1e-4), x,
                                                                      h=1e-4)


def _tol(mode):
    return 1e-6 if mode != "hessian" else 1e-4


class _Bunch:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class _Plain:
    pass


def _dict_update(x):
    return _Bunch(a=x * 3.0).a * x


def _dict_setitem_then_attr(x):
    b = _Bunch(a=x * 3.0)
    b.a = b.a * x
    return b.__dict__["a"] + b.a


def _dict_loop(x):
    o = _Plain()
    for i, k in enumerate("abc"):
        o.__dict__[k] = x ** (i + 1)
    return o.a + o.b * o.c


def _dict_through_call(x):
    def helper(d, t):
        d["c"] = d["a"] * t
    o = _Bunch(a=x)
    helper(o.__dict__, x)
    return o.c * o.a


def _dict_values(x):
    o = _Bunch(a=x, b=2.0 * x)
    return sum(v * v for v in vars(o).values())


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [_dict_update, _dict_setitem_then_attr, _dict_loop, _dict_through_call, _dict_values])
def test_instance_dict_shares_the_objects_cotangent(mode, f):
    assert MODES[mode](f, X) == pytest.approx(_want(mode, f), rel=_tol(mode), abs=1e-8)


# -- outputs passed by position -----------------------------------------------------------------------

def _exp_into(x):
    k = -0.5 * x
    np.exp(k, k)
    return np.sum(k)


def _clip_into(x):
    k = x * 2.0
    np.clip(k, 0.0, 1.0, k)
    return np.sum(k * x)


def _add_into(x):
    k = x * 2.0
    np.add(k, x, k)
    return np.sum(k * k)


def _method_clip_into(x):
    k = x * 2.0
    k.clip(0.0, 1.0, k)
    return np.sum(k * x)


def _exp_into_plain(x):
    buf = np.empty(2)
    np.exp(x, buf)
    return np.sum(buf * x)


def _sum_into(x):
    a = np.outer(x, x)
    o = np.empty(2)
    a.sum(0, None, o)
    return np.sum(o * x)


def _dot_into(x):
    a = np.outer(x, x)
    o = np.empty(2)
    np.dot(a, x, o)
    return np.sum(o)


XV = np.array([0.3, 0.8])


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", [_clip_into, _method_clip_into, _sum_into, _dot_into])
def test_positional_out_refused_in_reverse_mode(f):
    with pytest.raises(UnsupportedFunction, match="by position"):
        gradient(f, XV)


@pytest.mark.parametrize("f", [_exp_into, _add_into, _exp_into_plain])
def test_ufunc_positional_out_in_reverse_mode(f):
    """A ufunc's one output by position is its `out=` (tests/contexts/ad/test_positional_out.py)."""
    np.testing.assert_allclose(gradient(f, XV)[0], fd.gradient(f, XV)[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [_exp_into, _clip_into, _add_into, _method_clip_into])
def test_positional_out_in_forward_mode(f):
    np.testing.assert_allclose(jacfwd(f, XV), fd.gradient(f, XV)[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [_sum_into, _dot_into, _exp_into_plain])
def test_positional_out_into_a_fresh_array_in_forward_mode(f):
    # o = np.empty(2) made in the function is a dual of zero tangent in forward mode: it holds the tangent
    from contexts import jvp
    want = fd.gradient(f, XV)[0]
    np.testing.assert_allclose(jacfwd(f, XV), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jvp(f, (XV,), (np.ones(2),))[1], want.sum(), rtol=1e-6, atol=1e-8)


_PLAIN = np.arange(2.0)


def _exp_into_a_global(x):
    buf = _PLAIN.copy()
    np.exp(x, buf)
    return np.sum(buf * x)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_positional_out_into_a_plain_array_refused_in_forward_mode():
    from contexts import jvp
    from overdub.errors import OverdubError
    with pytest.raises(OverdubError):  # a plain buf cannot hold the tangent: refused, never the primal's
        jacfwd(_exp_into_a_global, XV)
    with pytest.raises(OverdubError):
        jvp(_exp_into_a_global, (XV,), (np.ones(2),))


def _none_out(x, out=None):  # scipy's `zeta(x, q, out)` passes its own `out` on, None by default
    return np.sin(x, out) * np.exp(x, None)


@pytest.mark.parametrize("mode", ["reverse", "forward", "hessian"])
def test_none_passed_as_the_output_by_position(mode):
    assert MODES[mode](_none_out, X) == pytest.approx(_want(mode, _none_out), rel=_tol(mode), abs=1e-8)


def test_keyword_out_still_differentiated():
    def f(x):
        k = -0.5 * x
        np.exp(k, out=k)
        return np.sum(k)
    np.testing.assert_allclose(gradient(f, XV)[0], fd.gradient(f, XV)[0], rtol=1e-6)


# -- contextlib.contextmanager ---------------------------------------------------------------------

CONFIG = {"scale": 1.0}


@contextlib.contextmanager
def _scaled(s):
    old = CONFIG["scale"]
    CONFIG["scale"] = s
    try:
        yield
    finally:
        CONFIG["scale"] = old


def _with_constant(x):
    with _scaled(3.0):
        y = x * CONFIG["scale"]
    return y * x


def _with_active(x):
    with _scaled(x):
        y = x * CONFIG["scale"]
    return y


@pytest.mark.parametrize("mode", MODES)
def test_context_manager_body_sees_its_setting(mode):
    assert MODES[mode](_with_constant, X) == pytest.approx(_want(mode, _with_constant), rel=_tol(mode))
    assert CONFIG["scale"] == 1.0


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_context_manager_with_differentiated_argument():
    assert derivative(_with_active, X) == pytest.approx(2 * X)
    with pytest.raises(UnsupportedFunction, match="context manager"):
        gradient(_with_active, X)
    assert CONFIG["scale"] == 1.0


def test_context_manager_exception_in_body():
    def f(x):
        with _scaled(3.0):
            raise ValueError("inside")
    with pytest.raises(ValueError, match="inside"):
        gradient(f, X)
    assert CONFIG["scale"] == 1.0


# -- introspection: C methods through their class, type's descriptors, signatures --------------------

def _unbound_methods(x):
    d = {"a": x * 2.0, "b": x}
    lst = [x]
    list.append(lst, x * 3.0)
    return dict.get(d, "a", 0.0) * x + dict.get(d, "zz", 1.0) + lst[0] * lst[1]


class _Model:
    def __init__(self, w):
        self.w = w

    def predict(self, t, *, bias=None):
        return self.w * t + (0.0 if bias is None else bias)

    def predict_float_default(self, t, *, bias=0.0):
        return self.w * t + bias


def _introspected(x):
    m = _Model(x * 2.0)
    sig = inspect.signature(m.predict)
    bound = sig.bind(1.5, bias=0.25)
    inspect.getattr_static(m, "w")
    return m.predict(*bound.args, **bound.kwargs) * x


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f", [_unbound_methods, _introspected])
def test_introspection_and_unbound_methods(mode, f):
    assert MODES[mode](f, X) == pytest.approx(_want(mode, f), rel=_tol(mode), abs=1e-8)


def test_signature_with_a_float_default():
    """(a Parameter's float default may be a differentiated value to the engine: `inspect.signature` runs
    as a primitive on the callable — it was refused on the read-only view inspect keeps the parameters in,
    `types.MappingProxyType`; tests/contexts/ad/test_introspection.py has the rest)"""
    def f(x):
        m = _Model(x * 2.0)
        inspect.signature(m.predict_float_default)
        return m.w * x
    assert gradient(f, X)[0] == pytest.approx(fd.derivative(f, X), rel=1e-6)


# -- a dataclass's __post_init__ (run natively with its generated __init__) -------------------------------

import dataclasses  # noqa: E402


@dataclasses.dataclass(frozen=True)
class _Derived:
    a: float

    def __post_init__(self):
        object.__setattr__(self, "b", self.a * 2.0)  # a field computed from a differentiated one


@dataclasses.dataclass
class _Rescaled:
    a: float

    def __post_init__(self):
        self.a = self.a * 3.0


@dataclasses.dataclass
class _Validated:
    a: float
    n: int = 3

    def __post_init__(self):
        if self.a < -10:
            raise ValueError("out of range")


@pytest.mark.parametrize("f", [lambda x: _Derived(x).b * x, lambda x: _Rescaled(x).a * x])
def test_post_init_computing_fields_is_differentiated(f):
    # (refused once, run natively; the generated __init__ is now run as code, `lowered.runtime.dataclass_init`)
    assert gradient(f, X)[0] == pytest.approx(fd.derivative(f, X), rel=1e-7)
    assert derivative(f, X) == pytest.approx(fd.derivative(f, X), rel=1e-7)


@pytest.mark.parametrize("mode", MODES)
def test_post_init_validating_only(mode):
    def f(x):
        return _Validated(x * 2.0).a * x
    assert MODES[mode](f, X) == pytest.approx(_want(mode, f), rel=_tol(mode))
