"""Classes of failure met in real libraries (the third-party suite, `tests/thirdparty/`), reduced to small
examples of our own and checked in every mode against central differences — or, where a construct is
refused, that the refusal is the engine's clear error and not a crash inside the library.
"""

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jacobian
from tests import fd

X3 = np.array([0.2, 0.3, 0.25])

JACOBIANS = {
    "reverse": jacobian,
    "forward": jacfwd,
}
GRADIENTS = {
    "reverse": lambda f, x: gradient(f, x)[0],
    "forward": lambda f, x: jacfwd(f, x),
    "hessian-vector": lambda f, x: hessian(f, x) @ np.ones_like(x),
}


# -- a numpy scalar indexed: `y[np.newaxis]`, `y[()]`, `y[...]` (colour's `tstack` iterates a 0-d stack) --

def _tstack(x):
    """colour.utilities.tstack of three 0-d values: an array of them, iterated, each item given an axis."""
    arr = np.asarray([x[0] * 2.0, x[1] ** 2, np.sin(x[2])], dtype=float)
    return np.concatenate([y[..., np.newaxis] for y in arr], axis=-1)


def _scalar_index(x):
    y = x[0] * x[1]           # a numpy float64, not a 0-d array
    return y[np.newaxis] * 3.0 + y[()] + y[...] * x[2] + y[None, None][0]


@pytest.mark.parametrize("mode", JACOBIANS)
@pytest.mark.parametrize("f", [_tstack, _scalar_index])
def test_numpy_scalar_indexed(mode, f):
    np.testing.assert_allclose(JACOBIANS[mode](f, X3), fd.jacobian(f, X3, matrix=True), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("mode", GRADIENTS)
def test_numpy_scalar_indexed_scalar_out(mode):
    def f(x):
        return np.sum(_scalar_index(x) ** 2)
    np.testing.assert_allclose(GRADIENTS[mode](f, X3), fd.gradient(f, X3)[0] if mode != "hessian-vector"
                               else fd.hessian(f, X3, matrix=True) @ np.ones(3), rtol=1e-5, atol=1e-7)


# -- an unhashable callable object (a class defining __eq__ only: scikit-learn's kernels) ----------------

class _Kernel:
    def __init__(self, s):
        self.s = s

    def __eq__(self, other):  # no __hash__: instances are unhashable
        return type(other) is _Kernel and other.s == self.s

    def __call__(self, x):
        return np.exp(-self.s * x ** 2)


class _KernelSum:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def __eq__(self, other):
        return self is other

    def __call__(self, x):
        return self.a(x) + self.b(x)


_KERNEL = _KernelSum(_Kernel(1.3), _Kernel(0.4))


def _kernel_sum(x):
    return np.sum(_KERNEL(x) * x)


@pytest.mark.parametrize("mode", GRADIENTS)
def test_unhashable_callable_object(mode):
    x = np.array([0.3, 0.7])
    want = fd.gradient(_kernel_sum, x)[0] if mode != "hessian-vector" else \
        fd.hessian(_kernel_sum, x, matrix=True) @ np.ones(2)
    np.testing.assert_allclose(GRADIENTS[mode](_kernel_sum, x), want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(derivative(lambda t: float(_KERNEL(t)), 0.3),
                               fd.derivative(lambda t: float(_KERNEL(t)), 0.3), rtol=1e-6)


def test_unhashable_callable_object_sparsity():
    from contexts import hessian_sparsity, jacobian_sparsity
    x = np.array([0.3, 0.7])
    assert (jacobian_sparsity(_KERNEL, x).toarray() == np.eye(2, dtype=bool)).all()
    assert (hessian_sparsity(_kernel_sum, x).toarray() == np.eye(2, dtype=bool)).all()


# -- a refusal that library code catches and turns into an error of its own (pandas' `except TypeError:
#    raise DataError("No numeric types to aggregate") from err`) reaches the user as the refusal ----------

def _as_doubles(v):
    """A library's validation: a C constructor without a rule, its TypeError turned into a ValueError."""
    import array
    try:
        return array.array("d", [v])
    except TypeError as e:
        raise ValueError("No numeric types to aggregate") from e


def _through_validation(x):
    return _as_doubles(x * 2.0)[0] * x


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_refusal_caught_by_library_code_surfaces(mode):
    from contexts.rules.registry import MissingRule
    with pytest.raises(MissingRule) as e:
        (gradient if mode == "reverse" else derivative)(_through_validation, 0.7)
    assert "array" in str(e.value)
    if mode == "forward":  # (NoForwardRule is a TypeError, which the library's handler caught: raised again there)
        assert any("caught this error" in note and "_as_doubles" in note for note in e.value.__notes__)


# -- `hasattr(dual, "_mpf_")` answers False for the inside of a number (mpmath's operators rely on it to
#    return NotImplemented); a failure of the same library frame right after is reported as that read ----

def _exact(x):
    """mpmath's `exp` in small: the inside of the number when it has one, else 'not implemented'."""
    from fractions import Fraction
    if hasattr(x, "numerator"):
        return Fraction(x.numerator, x.denominator)
    raise NotImplementedError(f"exact value of a {type(x).__name__}")


def test_swallowed_inside_read_is_refused_in_forward_mode():
    from fractions import Fraction

    from contexts.forward import DualInsideError
    with pytest.raises(DualInsideError) as e:
        derivative(lambda t: _exact(t) * t, Fraction(1, 3))
    assert ".numerator" in str(e.value) and "_exact" in str(e.value)
    assert f"{__file__}:" in str(e.value)


def _foreign_or_exact(t):
    """mpmath's binary operators in small: a value without the inside is a foreign operand, computed by
    its own arithmetic (mpmath returns NotImplemented, and the dual's reflected operator computes)."""
    return t * t if not hasattr(t, "numerator") else t.numerator / t.denominator * t


def test_foreign_operand_protocol_still_works():
    """hasattr keeps answering False for the inside of a perturbed number in forward mode."""
    from fractions import Fraction
    assert derivative(_foreign_or_exact, Fraction(1, 3)) == Fraction(2, 3)


# -- the standard library's frozen modules (`_collections_abc`, `posixpath`: their code names
#    `<frozen name>`): their source is the .py file they were frozen from. A Mapping's `values()`, `keys()`,
#    `items()` and `get` run collections.abc's Python code -------------------------------------------------

import collections.abc  # noqa: E402


class _Record(collections.abc.Mapping):
    def __init__(self, d):
        self.d = d

    def __getitem__(self, k):
        return self.d[k]

    def __iter__(self):
        return iter(self.d)

    def __len__(self):
        return len(self.d)


def _mapping_views(x):
    m = _Record({"a": x, "b": x * x})
    return (sum(v for v in m.values()) + sum(m[k] for k in m.keys()) + m.get("b", 0.0) * x
            + sum(v * len(k) for k, v in m.items()))


SCALAR_MODES = {
    "reverse": lambda f, x: gradient(f, x)[0],
    "forward": derivative,
}


@pytest.mark.parametrize("mode", SCALAR_MODES)
def test_mapping_views_of_a_user_mapping(mode):
    assert SCALAR_MODES[mode](_mapping_views, 0.7) == pytest.approx(fd.derivative(_mapping_views, 0.7), rel=1e-7)


def test_frozen_module_source():
    import overdub
    assert overdub.is_recursable(collections.abc.Mapping.keys)


# -- a subclass declaring `__slots__ = ()` of a slotted class (collections.abc's ValuesView of MappingView):
#    its object has fields (the base's slots), and its cotangent is a struct of them ------------------------

class _SlotBase:
    __slots__ = ("_mapping",)

    def __init__(self, m):
        self._mapping = m


class _SlotView(_SlotBase):
    __slots__ = ()

    def __iter__(self):
        for key in self._mapping:
            yield self._mapping[key]


def _slot_view_sum(x):
    return sum(v * v for v in _SlotView(_Record({"a": x, "b": x * x})))


@pytest.mark.parametrize("mode", SCALAR_MODES)
def test_empty_slots_subclass_of_slotted_class(mode):
    assert SCALAR_MODES[mode](_slot_view_sum, 0.7) == pytest.approx(fd.derivative(_slot_view_sum, 0.7), rel=1e-7)
