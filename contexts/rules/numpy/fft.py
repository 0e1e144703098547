"""Rules for the discrete Fourier transforms of `numpy.fft` and `scipy.fft`: fft, ifft, rfft, irfft, hfft,
ihfft and their 2-D and N-D forms (scipy's hfft2/hfftn/ihfft2/ihfftn too), with `n=`/`s=` (zero-padding
or cropping), `axis=`/`axes=` and every `norm=` ("backward", "ortho", "forward").

Where the rule sits: on the public functions, not on the C kernels. numpy 2.x ends in the gufuncs of
`numpy.fft._pocketfft_umath` (`fft`, `ifft`, `rfft_n_even`, `rfft_n_odd`, `irfft`), called with an `out=`
array numpy made with `empty_like` and a normalisation factor worked out in Python; scipy.fft is a uarray
multimethod over a C++ binding, which no Python code can be traced into. One rule per public function
reads n, axes and norm as the user wrote them, covers both libraries alike, and its tangents and
cotangents are themselves FFTs, so the rules apply again to a derivative of a derivative (a dual array
reaches numpy's functions through `__array_function__`, hence these same frules).

Every transform is a linear map over the reals (the C-linear fft/ifft; rfft of a real array; irfft,
which reads only the real part of the DC and Nyquist bins), so the tangent is the transform of the
tangent, and the cotangent is the adjoint map under the real inner product Re<u, v> (Zygote's convention
for complex numbers, `contexts.rules.registry`): for a real loss l of y = f(x), x_bar = f^H(y_bar) with
y_bar = dl/dRe(y) + i dl/dIm(y). With the unnormalised DFT matrix F (fft with norm="backward"):

- fft(norm) is s F with s = 1, 1/sqrt(n), 1/n for backward/ortho/forward; its adjoint s F^H is
  ifft with the swapped norm (backward <-> forward). Likewise ifft's adjoint is fft, swapped norm.
- n= pads with zeros or crops: the adjoint crops or pads back to the input's length.
- rfft keeps the first n//2 + 1 bins: the adjoint pads y_bar with zeros to n, applies ifft (swapped
  norm) and keeps the real part (x is real).
- irfft(Y, n) = s Re(F^H (W Y)) with W = 1 for bin 0, 2 for bins 1..(n-1)//2, 1 for bin n/2 (n even): the
  Hermitian weighting of the bins that stand for two. Its adjoint is W * rfft(x_bar) (swapped norm),
  cropped or padded to Y's length.
- hfft(a) = irfft(conj(a)) and ihfft(a) = conj(rfft(a)), numpy's and scipy's definitions, swapped norm.
- The N-D forms are compositions of the 1-D maps along each axis (r2c on the last axis first, c2r on it
  last), so the same formulas hold with fftn/ifftn/rfftn along all the axes at once.

Sparsity: DENSE (every output depends on every input along the transformed axes; along the other axes
this is an over-approximation, never an under-one).

>>> import numpy as np
>>> from contexts import gradient
>>> gradient(lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2), np.array([1.0, 2.0]))[0]  # = 2 n x
array([4., 8.])
"""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from ..registry import registry
from ..sparsity_specs import DENSE
from ._util import bind, is_dual, match_primal, unsupported, zeros

__all__ = ["Transform", "transform", "transform_adjoint"]

_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _swap(norm):
    """The norm of the adjoint transform: backward <-> forward, ortho stays (numpy's `_swap_direction`)."""
    if norm not in _SWAP:
        raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')
    return _SWAP[norm]


@dataclass(frozen=True)
class Transform:
    """One call's transform in canonical form: `kind` is one of fwd (fft), inv (ifft), r2c (rfft), c2r
    (irfft), hfft, ihfft; `axes` the transformed axes (non-negative, the last one the real axis of r2c/c2r)
    and `sizes` the transform length along each (the output's length, for c2r and hfft the real output's);
    `norm` as given."""

    kind: str
    axes: tuple
    sizes: tuple
    norm: object


def transform(t: Transform, x):
    """Apply the transform t to x (a plain or dual array) with numpy's N-D functions."""
    s, axes, norm = list(t.sizes), list(t.axes), t.norm
    if t.kind == "fwd":
        return np.fft.fftn(x, s, axes, norm)
    if t.kind == "inv":
        return np.fft.ifftn(x, s, axes, norm)
    if t.kind == "r2c":
        return np.fft.rfftn(x, s, axes, norm)
    if t.kind == "c2r":
        return np.fft.irfftn(x, s, axes, norm)
    if t.kind == "hfft":
        return np.fft.irfftn(np.conj(x), s, axes, _swap(norm))
    return np.conj(np.fft.rfftn(x, s, axes, _swap(norm)))  # ihfft


def _resize(g, axis, n):
    """g cropped or zero-padded to length n along axis (the adjoint of the other direction)."""
    m = g.shape[axis]
    if m == n:
        return g
    index = [slice(None)] * g.ndim
    if m > n:
        index[axis] = slice(0, n)
        return g[tuple(index)]
    shape = list(g.shape)
    shape[axis] = n
    out = zeros(tuple(shape), g.dtype, g)
    index[axis] = slice(0, m)
    out[tuple(index)] = g
    return out


def _resize_to(g, axes, shape):
    for ax in axes:
        g = _resize(g, ax, shape[ax])
    return g


def _hermitian_weights(n, axis, ndim):
    """W of the docstring, shaped to broadcast along `axis`: 1, 2, ..., 2, (1 for n even)."""
    w = np.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    shape = [1] * ndim
    shape[axis] = w.size
    return w.reshape(shape)


def _r2c_adjoint(g, t: Transform, norm, shape):
    """Adjoint of rfftn (norm given): pad the half spectrum to n, inverse transform, real part, resize."""
    last = t.axes[-1]
    g = _resize(g, last, t.sizes[-1])
    return np.real(_resize_to(np.fft.ifftn(g, None, list(t.axes), _swap(norm)), t.axes, shape))


def _c2r_adjoint(g, t: Transform, norm, shape):
    """Adjoint of irfftn (norm given): weighted half spectrum of the cotangent, resized to the input."""
    last = t.axes[-1]
    half = np.fft.rfftn(g, None, list(t.axes), _swap(norm)) * _hermitian_weights(t.sizes[-1], last, g.ndim)
    return _resize_to(half, t.axes, shape)


def transform_adjoint(t: Transform, g, shape):
    """The cotangent of the input (of `shape`) for the cotangent g of the output of transform t."""
    axes = list(t.axes)
    if t.kind == "fwd":
        return _resize_to(np.fft.ifftn(g, None, axes, _swap(t.norm)), t.axes, shape)
    if t.kind == "inv":
        return _resize_to(np.fft.fftn(g, None, axes, _swap(t.norm)), t.axes, shape)
    if t.kind == "r2c":
        return _r2c_adjoint(g, t, t.norm, shape)
    if t.kind == "c2r":
        return _c2r_adjoint(g, t, t.norm, shape)
    if t.kind == "hfft":
        return np.conj(_c2r_adjoint(g, t, _swap(t.norm), shape))
    return _r2c_adjoint(np.conj(g), t, _swap(t.norm), shape)  # ihfft


# -- reading a call's arguments ------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Function:
    """A public FFT function: its canonical kind, whether it is N-D (`s`, `axes`) and its default axes."""

    name: str
    kind: str
    nd: bool
    default_axes: object = None
    scipy: bool = False

    @property
    def options(self):
        first = ("s", "axes") if self.nd else ("n", "axis")
        rest = ("norm", "overwrite_x", "workers") if self.scipy else ("norm", "out")
        return first + rest


def _as_int(v, what):
    try:
        return operator.index(v)
    except TypeError:
        raise unsupported("np.fft", f"a {what} that is not an integer ({v!r})", "pass integers") from None


def _canonical(spec: _Function, x, rest, kwargs) -> Transform:
    """The Transform of a call `spec(x, *rest, **kwargs)`."""
    values = bind(rest, kwargs, spec.options, (None, -1 if not spec.nd else spec.default_axes, None, None, None))
    if not spec.scipy and values[3] is not None:
        raise unsupported(f"np.fft.{spec.name}", "out=", "assign the result instead of writing into out=")
    if spec.scipy and kwargs.get("plan") is not None:
        raise unsupported(f"scipy.fft.{spec.name}", "plan=", "leave plan=None")
    first, axes, norm = values[0], values[1], values[2]
    _swap(norm)  # (an invalid norm: the library's own error)
    ndim = np.ndim(x)
    if spec.nd:
        if spec.scipy and first is not None and np.ndim(first) == 0:
            first = (first,)  # (scipy.fft takes one length for one axis: `fftn(x, s=6, axes=(1,))`)
        if axes is None:
            axes = range(ndim) if first is None else range(ndim - len(first), ndim)
        axes = tuple(_as_int(a, "axis") % ndim for a in axes)
        sizes = None if first is None else tuple(_as_int(n, "length") for n in first)
    else:
        axes = (_as_int(axes, "axis") % ndim,)
        sizes = None if first is None else (_as_int(first, "length"),)
    if sizes is None or any(n is None or n < 0 for n in sizes):
        shape = np.shape(x)
        given = sizes or (None,) * len(axes)
        sizes = tuple(shape[a] if n is None or n < 0 else n for a, n in zip(axes, given))
        if spec.kind in ("c2r", "hfft") and (given[-1] is None or given[-1] < 0):
            sizes = sizes[:-1] + (2 * (shape[axes[-1]] - 1),)
    return Transform(spec.kind, axes, sizes, norm)


def _real_or_complex(g, x):
    """The cotangent in x's field: its real part for a real x (plain or dual)."""
    if np.iscomplexobj(x) or not np.iscomplexobj(g):
        return g
    return np.real(g)


def _adjoint(spec: _Function):
    def adjoint(dy, y, x, *rest, **kwargs):
        nones = (None,) * len(rest)
        if dy is None:
            return (None,) + nones
        t = _canonical(spec, x, rest, kwargs)
        g = dy if is_dual(dy) else np.asarray(dy)
        dx = _real_or_complex(transform_adjoint(t, g, np.shape(x)), x)
        return (match_primal(dx, x),) + nones
    adjoint.__name__ = adjoint.__qualname__ = f"{spec.name}_adjoint"
    return adjoint


def _frule(spec: _Function, fn):
    def frule(tangents, x, *rest, **kwargs):
        t = _canonical(spec, x, rest, kwargs)
        y = fn(x, *rest, **kwargs)
        dx = tangents[0] if tangents else None
        if dx is None:
            return y, None
        dy = transform(t, dx if is_dual(dx) else np.asarray(dx))
        if not is_dual(dy) and dy.dtype != y.dtype:
            dy = dy.astype(y.dtype)
        return y, dy
    frule.__name__ = frule.__qualname__ = f"{spec.name}_frule"
    return frule


_FUNCTIONS = [
    _Function("fft", "fwd", False), _Function("ifft", "inv", False),
    _Function("rfft", "r2c", False), _Function("irfft", "c2r", False),
    _Function("hfft", "hfft", False), _Function("ihfft", "ihfft", False),
    _Function("fft2", "fwd", True, (-2, -1)), _Function("ifft2", "inv", True, (-2, -1)),
    _Function("rfft2", "r2c", True, (-2, -1)), _Function("irfft2", "c2r", True, (-2, -1)),
    _Function("fftn", "fwd", True), _Function("ifftn", "inv", True),
    _Function("rfftn", "r2c", True), _Function("irfftn", "c2r", True),
]
_SCIPY_ONLY = [
    _Function("hfft2", "hfft", True, (-2, -1)), _Function("ihfft2", "ihfft", True, (-2, -1)),
    _Function("hfftn", "hfft", True), _Function("ihfftn", "ihfft", True),
]


def _register(module, specs):
    for spec in specs:
        fn = getattr(module, spec.name)
        registry.adjoint(fn, kind="linear")(_adjoint(spec))
        registry.frule(fn, kind="linear")(_frule(spec, fn))
        registry.sparsity(DENSE, fn)


_register(np.fft, _FUNCTIONS)

try:  # scipy is optional
    import scipy.fft as _scipy_fft
except ImportError:  # pragma: no cover
    _scipy_fft = None
if _scipy_fft is not None:
    _register(_scipy_fft, [_Function(s.name, s.kind, s.nd, s.default_axes, scipy=True)
                           for s in _FUNCTIONS + _SCIPY_ONLY])


# -- scipy.fftpack's complex transforms (the legacy interface: pycwt's wavelets, astroML) ---------------------
# They call scipy's compiled pocketfft directly, where no rule sits: stood in for by scipy.fft's functions, the
# same transforms with norm=None (`overwrite_x` only allows the input's memory to be reused). fftpack's `rfft`
# and `irfft` pack their real output otherwise and stay compiled functions without rules (refused).

def _fftpack_1d(name):
    transform = getattr(_scipy_fft, name)

    def one_axis(x, n=None, axis=-1, overwrite_x=False):
        return transform(x, n, axis)
    one_axis.__name__ = one_axis.__qualname__ = f"fftpack_{name}"
    return one_axis


def _fftpack_nd(name, default_axes):
    transform = getattr(_scipy_fft, name)

    def several_axes(x, shape=None, axes=default_axes, overwrite_x=False):
        return transform(x, _good_shape(x, shape, axes), axes)  # (fftpack's check of shape against axes)
    several_axes.__name__ = several_axes.__qualname__ = f"fftpack_{name}"
    return several_axes


if _scipy_fft is not None:
    import scipy.fftpack as _fftpack
    from scipy.fftpack._helper import _good_shape

    for _name in ("fft", "ifft"):
        registry.set(getattr(_fftpack, _name), stand_in=_fftpack_1d(_name))
    for _name, _axes in (("fft2", (-2, -1)), ("ifft2", (-2, -1)), ("fftn", None), ("ifftn", None)):
        registry.set(getattr(_fftpack, _name), stand_in=_fftpack_nd(_name, _axes))
