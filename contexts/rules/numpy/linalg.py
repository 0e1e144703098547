"""Linear-algebra rules: products (matmul, dot, tensordot, einsum, outer, inner), trace/diag, and
`numpy.linalg` (inv, det, slogdet, solve, cholesky, eigh, svd, qr, and the gufunc under lstsq).

Every adjoint has the static form `adj(dy, y, *args, **kwargs) -> tuple`, one cotangent per positional
argument, brought to the primal's shape and dtype by `match_primal` (batch broadcasting undone).
Complex arguments follow Zygote's convention: the pullback of a holomorphic map multiplies by the
conjugate Jacobian, so products pair `dy` with `conj` of the other factor.
Decompositions that read one triangle (cholesky, eigh) return the gradient of exactly that function:
nonzero only on the triangle LAPACK reads, so finite differences in any direction agree.

>>> import numpy as np
>>> from contexts.rules.registry import registry
>>> a, b = np.eye(2), np.array([1.0, 2.0])
>>> registry.get(np.matmul).adjoint(np.ones(2), a @ b, a, b)[1]
array([1., 1.])
"""

from __future__ import annotations

import operator
import string

import numpy as np
from numpy.linalg import _umath_linalg  # the gufunc under np.linalg.lstsq is keyed by itself

from ..leaves import as_array  # np.asarray, but a dask array is left as it is
from ..cotangents import Refused
from ..registry import NoClosedForm, NoDerivative, registry
from ..sparsity_specs import DENSE, STRUCTURAL, Custom
from ._util import bind as _bind, is_dual, match_primal, unsupported, zeros

__all__ = ["matmul_adjoint", "tensordot_adjoint", "einsum_adjoint", "trace_place", "diag_place"]


def _conj(x):
    """conj for complex arrays, the array itself otherwise (no copy)."""
    return np.conj(x) if np.iscomplexobj(x) else x


def _mT(x):
    """Transpose of the last two axes (a view)."""
    return np.swapaxes(x, -1, -2)


def _mH(x):
    """Conjugate transpose of the last two axes."""
    return _conj(np.swapaxes(x, -1, -2))


def _add(a, b):
    """a + b with None as zero."""
    return b if a is None else a if b is None else a + b


# -- matmul ----------------------------------------------------------------------------------------

def _core_last(x, axes):
    """x with the core axes np.matmul's `axes=` names for it moved to the end (where matmul reads them)."""
    n = len(axes)
    return np.moveaxis(x, tuple(axes), tuple(range(-n, 0))) if n else x


def _core_back(dx, axes):
    """The inverse of _core_last: a cotangent's core axes put back where `axes=` said they were."""
    n = len(axes)
    return np.moveaxis(dx, tuple(range(-n, 0)), tuple(axes)) if n else dx


def matmul_adjoint(dy, y, a, b, **kwargs):
    """Pullback of a @ b for 1-D, 2-D and batched operands; vector cases use broadcast multiplies.
    `axes=` (where each operand's core axes are) is matmul's with those axes moved last: the
    cotangents are moved back (dropped, it was the gradient of a @ b: gen24 W9). (numpy refuses `axis=`.)"""
    axes = kwargs.get("axes")
    if axes is not None:
        a_, b_ = as_array(a), as_array(b)
        ia, ib = (tuple(np.atleast_1d(t)) for t in axes[:2])
        iy = tuple(np.atleast_1d(axes[2])) if len(axes) > 2 else ()
        dy = dy if type(dy) is Refused else _core_last(as_array(dy), iy)
        da, db = matmul_adjoint(dy, None, _core_last(a_, ia), _core_last(b_, ib))
        return (match_primal(_core_back(as_array(da), ia), a), match_primal(_core_back(as_array(db), ib), b))
    a_, b_, dy = as_array(a), as_array(b), as_array(dy)
    ca, cb = _conj(a_), _conj(b_)
    if a_.ndim == 1 and b_.ndim == 1:
        da, db = dy * cb, ca * dy
    elif b_.ndim == 1:
        da = dy[..., :, None] * cb
        db = np.matmul(dy[..., None, :], ca)[..., 0, :]
    elif a_.ndim == 1:
        da = np.matmul(cb, dy[..., :, None])[..., 0]
        db = ca[:, None] * dy[..., None, :]
    else:
        da = np.matmul(dy, _mT(cb))
        db = np.matmul(_mT(ca), dy)
    return match_primal(da, a), match_primal(db, b)


def _bilinear_frule(fn):
    """frule of a map bilinear in its first two arguments: d(a*b) = da*b + a*db."""
    def frule(tangents, a, b, *rest, **kwargs):
        ta, tb = (tuple(tangents) + (None, None))[:2]
        y = fn(a, b, *rest, **kwargs)
        # (the tangent's terms not into `out=`: the second overwrote the first, 12 for 11.5, gen10's W3)
        kwargs = {k: v for k, v in kwargs.items() if k != "out"} if "out" in kwargs else kwargs
        dy = None
        if ta is not None:
            dy = fn(ta, b, *rest, **kwargs)
        if tb is not None:
            dy = _add(dy, fn(a, tb, *rest, **kwargs))
        return y, dy
    frule.__name__ = frule.__qualname__ = f"{getattr(fn, '__name__', 'product')}_frule"
    return frule


for _key in (operator.matmul, np.matmul, (np.ndarray, "__matmul__")):
    registry.adjoint(_key, kind="bilinear")(matmul_adjoint)
registry.frule(operator.matmul, np.matmul)(_bilinear_frule(np.matmul))
registry.frule((np.ndarray, "__matmul__"))(_bilinear_frule(np.matmul))


# -- tensordot, dot, inner, outer ------------------------------------------------------------------

def _tensordot_axes(axes, nda, ndb):
    """tensordot's `axes` argument as two lists of non-negative axes."""
    if isinstance(axes, (int, np.integer)):
        return list(range(nda - axes, nda)), list(range(axes))
    axes_a, axes_b = axes
    axes_a = [axes_a] if isinstance(axes_a, (int, np.integer)) else list(axes_a)
    axes_b = [axes_b] if isinstance(axes_b, (int, np.integer)) else list(axes_b)
    return [ax % nda for ax in axes_a], [ax % ndb for ax in axes_b]


def _tensordot_cotangents(dy, a, b, axes_a, axes_b):
    """Cotangents of tensordot(a, b, (axes_a, axes_b)), each as another tensordot plus a transpose."""
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    nfa, nfb = len(free_a), len(free_b)
    dy = as_array(dy)
    da = np.tensordot(dy, _conj(b), axes=(list(range(nfa, nfa + nfb)), free_b))
    order_a = free_a + [axes_a[j] for j in np.argsort(axes_b)]
    da = np.transpose(da, np.argsort(order_a))
    db = np.tensordot(_conj(a), dy, axes=(free_a, list(range(nfa))))
    order_b = [axes_b[j] for j in np.argsort(axes_a)] + free_b
    db = np.transpose(db, np.argsort(order_b))
    return da, db


def tensordot_adjoint(dy, y, a, b, axes=2):
    """Pullback of np.tensordot(a, b, axes) for int and pair-of-sequences axes."""
    a_, b_ = as_array(a), as_array(b)
    axes_a, axes_b = _tensordot_axes(axes, a_.ndim, b_.ndim)
    da, db = _tensordot_cotangents(dy, a_, b_, axes_a, axes_b)
    return match_primal(da, a), match_primal(db, b), None


def _tensordot_pos_adjoint(dy, y, a, b, *rest, **kwargs):
    """tensordot's adjoint with axes given positionally or by keyword."""
    cts = tensordot_adjoint(dy, y, a, b, *rest, **kwargs)
    return cts[:2 + len(rest)]


registry.adjoint(np.tensordot, kind="bilinear")(_tensordot_pos_adjoint)
registry.frule(np.tensordot)(_bilinear_frule(np.tensordot))


def _scalar_product_cotangents(dy, a, b):
    """Cotangents of a * b when one of them is 0-d (dot and inner of a scalar)."""
    return match_primal(dy * _conj(as_array(b)), a), match_primal(_conj(as_array(a)) * dy, b)


def dot_adjoint(dy, y, a, b, *rest, **kwargs):
    """Pullback of np.dot / ndarray.dot: scalar, matrix (as matmul) and N-D (as tensordot) forms."""
    a_, b_ = as_array(a), as_array(b)
    if a_.ndim == 0 or b_.ndim == 0:
        return _scalar_product_cotangents(dy, a, b) + (None,) * len(rest)
    if a_.ndim <= 2 and b_.ndim <= 2:
        return matmul_adjoint(dy, y, a, b) + (None,) * len(rest)
    da, db = _tensordot_cotangents(dy, a_, b_, [a_.ndim - 1], [max(b_.ndim - 2, 0)])
    return (match_primal(da, a), match_primal(db, b)) + (None,) * len(rest)


def inner_adjoint(dy, y, a, b):
    """Pullback of np.inner (contraction of the last axes)."""
    a_, b_ = as_array(a), as_array(b)
    if a_.ndim == 0 or b_.ndim == 0:
        return _scalar_product_cotangents(dy, a, b)
    da, db = _tensordot_cotangents(dy, a_, b_, [a_.ndim - 1], [b_.ndim - 1])
    return match_primal(da, a), match_primal(db, b)


def outer_adjoint(dy, y, a, b, *rest, **kwargs):
    """Pullback of np.outer (inputs flattened): matrix-vector products with dy."""
    a_, b_, dy = as_array(a), as_array(b), as_array(dy)
    da = (dy @ _conj(b_.ravel())).reshape(a_.shape)
    db = (_conj(a_.ravel()) @ dy).reshape(b_.shape)
    return (match_primal(da, a), match_primal(db, b)) + (None,) * len(rest)


registry.adjoint(np.dot, (np.ndarray, "dot"), kind="bilinear")(dot_adjoint)
registry.frule(np.dot)(_bilinear_frule(np.dot))
registry.frule((np.ndarray, "dot"))(_bilinear_frule(np.dot))
registry.adjoint(np.inner, kind="bilinear")(inner_adjoint)
registry.frule(np.inner)(_bilinear_frule(np.inner))
registry.adjoint(np.outer, kind="bilinear")(outer_adjoint)
registry.frule(np.outer)(_bilinear_frule(np.outer))


# -- einsum ----------------------------------------------------------------------------------------

def _parse_einsum(subscripts, shapes):
    """Explicit subscripts (ellipses replaced by unused letters, implicit output made explicit)."""
    subscripts = subscripts.replace(" ", "")
    lhs, arrow, out = subscripts.partition("->")
    ins = lhs.split(",")
    unused = [c for c in string.ascii_letters if c not in subscripts]
    n_ell = max((len(shape) - (len(s) - 3) for s, shape in zip(ins, shapes) if "..." in s), default=0)
    ell = "".join(unused[:n_ell])
    expanded = []
    for s, shape in zip(ins, shapes):
        if "..." in s:
            k = len(shape) - (len(s) - 3)
            s = s.replace("...", ell[n_ell - k:] if k else "")
        expanded.append(s)
    if not arrow:
        letters = "".join(expanded)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return expanded, out


def _einsum_operand_cotangent(dy, out, ins, operands, i, x, optimize):
    """Cotangent of operand i: einsum of dy with the other operands, broadcast over letters only
    operand i has and placed on the diagonal where operand i repeats a letter."""
    target = ins[i]
    unique = "".join(dict.fromkeys(target))
    others = [k for k in range(len(ins)) if k != i]
    known = set(out).union(*(ins[k] for k in others))
    present = "".join(c for c in unique if c in known)
    spec = ",".join([out] + [ins[k] for k in others]) + "->" + present
    g = np.einsum(spec, dy, *(_conj(operands[k]) for k in others), optimize=optimize)
    if present != unique:
        sizes = dict(zip(target, x.shape))
        g = np.expand_dims(g, [unique.index(c) for c in unique if c not in known])
        g = np.broadcast_to(g, [sizes[c] for c in unique])
    if unique == target:
        return g
    xbar = zeros(x.shape, np.result_type(g, x), g)
    np.einsum(f"{target}->{unique}", xbar)[...] = g  # a writeable view of the diagonal
    return xbar


_LABELS = string.ascii_uppercase + string.ascii_lowercase  # (numpy's letters for the sublists' 0..51, in order)


def _interleaved(args):
    """einsum's interleaved form `np.einsum(a, [0, 1], b, [1, 2], [0, 2])` as (subscripts, operands): each
    sublist's integers as numpy spells them (0-25 'A'-'Z', 26-51 'a'-'z', so that the implicit output's
    alphabetical order is the integers' order), Ellipsis as '...'."""
    args = list(args)
    out = args.pop() if len(args) % 2 else None

    def spelled(sub):
        return "".join("..." if k is Ellipsis else _LABELS[operator.index(k)] for k in sub)
    spec = ",".join(spelled(sub) for sub in args[1::2]) + ("" if out is None else "->" + spelled(out))
    return spec, args[0::2]


def einsum_adjoint(dy, y, subscripts, *operands, optimize=False, **kwargs):
    """Pullback of np.einsum(subscripts, *operands): each operand's cotangent is another einsum (the
    interleaved form's as the subscripts' it spells)."""
    if not isinstance(subscripts, str):
        spec, arrays = _interleaved((subscripts, *operands))
        cts = einsum_adjoint(dy, y, spec, *arrays, optimize=optimize)[1:]
        every = [v for ct in cts for v in (ct, None)]
        return tuple(every + [None] * (1 + len(operands) - len(every)))
    arrays = [as_array(op) for op in operands]
    ins, out = _parse_einsum(subscripts, [a.shape for a in arrays])
    dy = as_array(dy)
    cts = [match_primal(_einsum_operand_cotangent(dy, out, ins, arrays, i, arrays[i], optimize), op)
           for i, op in enumerate(operands)]
    return (None, *cts)


def einsum_frule(tangents, subscripts, *operands, **kwargs):
    """einsum is multilinear: the tangent sums one einsum per operand with a tangent."""
    if not isinstance(subscripts, str):  # (the interleaved form: its operands every other argument)
        spec, arrays = _interleaved((subscripts, *operands))
        return einsum_frule((None, *tangents[0::2][:len(arrays)]), spec, *arrays, **kwargs)
    y = np.einsum(subscripts, *operands, **kwargs)
    dy = None
    for i, t in enumerate(tangents[1:]):
        if t is not None:
            ops = list(operands)
            ops[i] = t
            dy = _add(dy, np.einsum(subscripts, *ops, **kwargs))
    return y, dy


registry.adjoint(np.einsum, kind="multilinear")(einsum_adjoint)
registry.frule(np.einsum)(einsum_frule)


# -- trace, diag, diagonal -------------------------------------------------------------------------



def trace_place(dy, shape, dtype, offset=0, axis1=0, axis2=1):
    """Zeros of `shape` with dy written on the `offset` diagonal of axes (axis1, axis2)."""
    xbar = zeros(shape, dtype, dy)
    view = np.moveaxis(xbar, (axis1, axis2), (-2, -1))
    n1, n2 = view.shape[-2:]
    k = max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))
    idx = np.arange(k)
    view[..., idx + max(-offset, 0), idx + max(offset, 0)] = dy
    return xbar


def trace_adjoint(dy, y, a, *rest, **kwargs):
    """Pullback of np.trace / ndarray.trace: dy broadcast along the traced diagonal."""
    offset, axis1, axis2 = _bind(rest, kwargs, ("offset", "axis1", "axis2"), (0, 0, 1))
    a_ = as_array(a)
    dy = as_array(dy)[..., None]
    return (match_primal(trace_place(dy, a_.shape, np.result_type(dy, a_), offset, axis1, axis2), a),
            *(None,) * len(rest))


def diagonal_adjoint(dy, y, a, *rest, **kwargs):
    """Pullback of np.diagonal / ndarray.diagonal: dy written back on the diagonal."""
    offset, axis1, axis2 = _bind(rest, kwargs, ("offset", "axis1", "axis2"), (0, 0, 1))
    a_ = as_array(a)
    dy = as_array(dy)
    return (match_primal(trace_place(dy, a_.shape, np.result_type(dy, a_), offset, axis1, axis2), a),
            *(None,) * len(rest))


def diag_place(dy, shape, k):
    """Cotangent of np.diag(v, k) for a 2-D v of `shape`: dy on the k-th diagonal of zeros."""
    return trace_place(dy, shape, as_array(dy).dtype, k, 0, 1)


def diag_adjoint(dy, y, v, *rest, **kwargs):
    """Pullback of np.diag: extraction for a 1-D v (it built a matrix), placement for a 2-D v."""
    (k,) = _bind(rest, kwargs, ("k",), (0,))
    v_ = as_array(v)
    dv = np.diagonal(as_array(dy), k).copy() if v_.ndim == 1 else diag_place(dy, v_.shape, k)
    return (match_primal(dv, v), *(None,) * len(rest))


def _linear_frule(fn):
    """frule of a map linear in its first argument: fn applied to the tangent."""
    def frule(tangents, x, *rest, **kwargs):
        t = tangents[0] if tangents else None
        return fn(x, *rest, **kwargs), (None if t is None else fn(t, *rest, **kwargs))
    frule.__name__ = frule.__qualname__ = f"{getattr(fn, '__name__', 'linear')}_frule"
    return frule


def _method(name):
    """fn(x, *args) = as_array(x).<name>(*args): apply an ndarray method to a tangent."""
    def call(x, *args, **kwargs):
        return getattr(as_array(x), name)(*args, **kwargs)
    call.__name__ = call.__qualname__ = name
    return call


registry.adjoint(np.trace, (np.ndarray, "trace"), kind="linear")(trace_adjoint)
registry.frule(np.trace)(_linear_frule(np.trace))
registry.frule((np.ndarray, "trace"))(_linear_frule(_method("trace")))
registry.adjoint(np.diagonal, (np.ndarray, "diagonal"), kind="linear")(diagonal_adjoint)
registry.frule(np.diagonal)(_linear_frule(np.diagonal))
registry.frule((np.ndarray, "diagonal"))(_linear_frule(_method("diagonal")))
registry.adjoint(np.diag, kind="linear")(diag_adjoint)
registry.frule(np.diag)(_linear_frule(np.diag))


# -- numpy.linalg ----------------------------------------------------------------------------------

def inv_adjoint(dy, y, a):
    """Pullback of inv: -Y^H dY Y^H."""
    yh = _mH(y)
    return (match_primal(-(yh @ as_array(dy) @ yh), a),)


def inv_frule(tangents, a):
    y = np.linalg.inv(a)
    t = tangents[0]
    return y, (None if t is None else -(y @ t @ y))


def _adjugate(a):
    """adj(A) = det(A) inv(A), also where A is singular (its cofactors, from the SVD A = U S Vh: adj(A) =
    det(U) det(Vh) Vh^H diag(prod of the other singular values) U^H)."""
    u, sv, vh = np.linalg.svd(a)
    n = sv.shape[-1]
    others = np.stack([np.prod(np.delete(sv, i, axis=-1), axis=-1) for i in range(n)], axis=-1)
    scale = (np.linalg.det(u) * np.linalg.det(vh))[..., None, None]
    return scale * (_mH(vh) @ (others[..., :, None] * _mH(u)))


def _adjugate_poly(a):
    """adj(A) by Faddeev-LeVerrier: (-1)^(n+1) M_n, M_1 = I, M_k+1 = A M_k - tr(A M_k) / k I; products, sums and
    traces only, so a dual A (forward over reverse) differentiates the cofactors, a polynomial, also where A
    is singular (the inverse or the SVD there gave a hessian of det with arbitrary numbers, gen24 W6)."""
    n = a.shape[-1]
    eye = np.eye(n)
    m = eye
    for k in range(1, n):
        am = a @ m
        m = am - (np.trace(am, axis1=-2, axis2=-1) / k)[..., None, None] * eye
    return m if n % 2 else -m


_POLY_ADJUGATE_N = 4  # up to this order on duals always (exact, cheap); beyond it, where inv fails or is ill-conditioned


def det_adjoint(dy, y, a):
    """Pullback of det: dy * adj(A)^H (dy * conj(det) * inv(A)^H where A is invertible; the cofactors where it
    is singular, `det(J @ J.T)` at a singular configuration: the gradient is not zero there)."""
    if _poly_cofactors(a):
        return (match_primal(as_array(dy)[..., None, None] * _mH(_adjugate_poly(a)), a),)
    try:
        scale = (as_array(dy) * _conj(as_array(y)))[..., None, None]
        return (match_primal(scale * _mH(np.linalg.inv(a)), a),)
    except np.linalg.LinAlgError:
        return (match_primal(as_array(dy)[..., None, None] * _mH(_adjugate(as_array(a))), a),)


def _poly_cofactors(a):
    """det's rules take adj(A) by _adjugate_poly: a dual A (a derivative inside a derivative), small or
    singular or nearly (y inv(A) and y solve(A, t) then differentiate y ~ 0 times an inverse ~ inf)."""
    return is_dual(a) and (a.shape[-1] <= _POLY_ADJUGATE_N or _ill_conditioned(a))


def _ill_conditioned(a):
    """A (a dual's primal) is singular or nearly: inv(A)'s derivative there is no cofactors' derivative."""
    a = as_array(_plain(a))
    try:
        return bool(np.any(np.linalg.cond(a) > 1e8))
    except np.linalg.LinAlgError:
        return True


def det_frule(tangents, a):
    y = np.linalg.det(a)
    t = tangents[0]
    if t is None:
        return y, None
    if _poly_cofactors(a):  # (forward over forward: trace(adj(A) t), polynomial in A, gen24 W6)
        return y, np.trace(_adjugate_poly(a) @ t, axis1=-2, axis2=-1)
    try:
        return y, y * np.trace(np.linalg.solve(a, t), axis1=-2, axis2=-1)
    except np.linalg.LinAlgError:  # (singular: trace(adj(A) t))
        return y, np.trace(_adjugate(a) @ t, axis1=-2, axis2=-1)


def slogdet_adjoint(dy, y, a):
    """Pullback of slogdet: through logabsdet, and for complex A through the sign, s = exp(i theta) with
    dtheta = Im tr(A^-1 dA): Abar = (dlog + i Im(conj(s) sbar)) inv(A)^H (the sign of a real A is piecewise
    constant; a complex A's moves: gen17 W3, 0)."""
    parts = tuple(dy) if isinstance(dy, (tuple, list)) else (None, dy)
    dsign, dlog = parts[0], parts[1]
    complex_a = np.iscomplexobj(a)
    if dlog is None and (dsign is None or not complex_a):
        return (None,)
    scale = 0.0 if dlog is None else np.real(as_array(dlog))
    if complex_a and dsign is not None:
        scale = scale + 1j * np.imag(np.conj(as_array(y[0])) * as_array(dsign))
    return (match_primal(np.asarray(scale)[..., None, None] * _mH(np.linalg.inv(a)), a),)


def slogdet_frule(tangents, a):
    y = np.linalg.slogdet(a)
    t = tangents[0]
    if t is None:
        return y, None
    rate = np.trace(np.linalg.solve(a, t), axis1=-2, axis2=-1)
    dsign = y[0] * 1j * np.imag(rate) if np.iscomplexobj(y[0]) else np.zeros_like(y[0])
    return y, (dsign, np.real(rate))


def _solve_adjoint(dy, y, a, b, vector):
    """db = solve(A^H, dy), dA = -db x^H; `vector`: b (and x) a vector per matrix of the batch."""
    dy = as_array(dy)
    x = as_array(y)
    if vector:
        db = np.linalg.solve(_mH(as_array(a)), dy[..., None])[..., 0]
        da = -db[..., :, None] * _conj(x)[..., None, :]
    else:
        db = np.linalg.solve(_mH(as_array(a)), dy)
        da = -(db @ _mH(x))
    return match_primal(da, a), match_primal(db, b)


def _solve_tangent(x, a, ta, tb, vector):
    rhs = None if tb is None else tb
    if ta is not None:
        ax = (ta @ x[..., None])[..., 0] if vector else ta @ x
        rhs = -ax if rhs is None else rhs - ax
    if rhs is None:
        return None
    return np.linalg.solve(a, rhs[..., None])[..., 0] if vector else np.linalg.solve(a, rhs)


def solve_adjoint(dy, y, a, b):
    """Pullback of solve(A, b) (b a vector only when 1-D)."""
    return _solve_adjoint(dy, y, a, b, np.ndim(b) == 1)


def solve_frule(tangents, a, b):
    x = np.linalg.solve(a, b)
    return x, _solve_tangent(x, a, *tangents, np.ndim(b) == 1)


def _gufunc_solve_rules(gufunc, vector):
    """The gufuncs under np.linalg.solve, which array-api-compat's `solve` calls itself (scipy.signal's
    filtfilt, through `xp.linalg.solve`): `solve1(a, b)` for a vector per matrix, `solve(a, b)` for
    matrices, each with numpy's `signature=`."""
    def adjoint(dy, y, a, b, **kw):
        return _solve_adjoint(dy, y, a, b, vector)

    def frule(tangents, a, b, **kw):
        x = gufunc(a, b, **kw)
        ta, tb = (tuple(tangents) + (None, None))[:2]
        return x, _solve_tangent(x, a, ta, tb, vector)
    registry.adjoint(gufunc)(adjoint)
    registry.frule(gufunc)(frule)


_gufunc_solve_rules(_umath_linalg.solve1, True)
_gufunc_solve_rules(_umath_linalg.solve, False)


registry.adjoint(np.linalg.inv)(inv_adjoint)
registry.frule(np.linalg.inv)(inv_frule)


def _gufunc_inv_adjoint(dy, y, a, **kw):
    return inv_adjoint(dy, y, a)


def _gufunc_inv_frule(tangents, a, **kw):
    y = _umath_linalg.inv(a, **kw)
    t = tangents[0]
    return y, (None if t is None else -(y @ t @ y))


# the gufunc under np.linalg.inv, which np.linalg.cond calls itself for a norm other than 2 (quantecon's
# Riccati solver picks its shift by the condition number: refused as a C function, "numpy.inv")
registry.adjoint(_umath_linalg.inv)(_gufunc_inv_adjoint)
registry.frule(_umath_linalg.inv)(_gufunc_inv_frule)
registry.adjoint(np.linalg.det)(det_adjoint)
registry.frule(np.linalg.det)(det_frule)
registry.adjoint(np.linalg.slogdet)(slogdet_adjoint)
registry.frule(np.linalg.slogdet)(slogdet_frule)
registry.adjoint(np.linalg.solve)(solve_adjoint)
registry.frule(np.linalg.solve)(solve_frule)


def _lower_gradient(g):
    """Gradient of a function that reads only the lower triangle of A, from the gradient g of the
    same function of the Hermitian matrix: off-diagonal entries count twice, the upper triangle never."""
    n = g.shape[-1]
    full = g + _mH(g)
    out = np.tril(full, -1)
    idx = np.arange(n)
    out[..., idx, idx] = np.real(g[..., idx, idx]) if not np.iscomplexobj(out) else \
        np.real(g[..., idx, idx]) + 0j
    return out


def _hermitian_from_lower(t):
    """The Hermitian matrix a lower-triangle-reading routine sees for input t."""
    low = np.tril(t, -1)
    n = t.shape[-1]
    out = low + _mH(low)
    idx = np.arange(n)
    out[..., idx, idx] = np.real(t[..., idx, idx]) if not np.iscomplexobj(t) else t[..., idx, idx].real + 0j
    return out


def _phi(x):
    """Lower triangle with the diagonal halved."""
    out = np.tril(x)
    idx = np.arange(x.shape[-1])
    out[..., idx, idx] *= 0.5
    return out


def cholesky_adjoint(dy, y, a, **kwargs):
    """Pullback of cholesky (lower, reads A's lower triangle): S = L^-H phi(L^H dL) L^-1. With upper=True
    numpy factors A's upper triangle (U = cholesky(A^H)^H): the lower factor's pullback for A^H, conjugate
    transposed."""
    upper = kwargs.get("upper", False)
    L = _mH(as_array(y)) if upper else as_array(y)
    inner = _phi(_mH(L) @ (_mH(as_array(dy)) if upper else as_array(dy)))
    s = np.linalg.solve(_mH(L), _mH(np.linalg.solve(_mH(L), _mH(inner))))
    g = _lower_gradient(s)
    return (match_primal(_mH(g) if upper else g, a),)


def cholesky_frule(tangents, a, **kwargs):
    # (numpy's upper factor reads A's UPPER triangle, U = cholesky(A^H)^H: the lower formula for A^H's
    # tangent, conjugate transposed; read as the lower one, gen10's W6 gave 0.304 for 0)
    upper = kwargs.pop("upper", False)
    L = np.linalg.cholesky(_mH(as_array(a)) if upper else a, **kwargs)
    t = tangents[0]
    if t is None:
        return (_mH(L), None) if upper else (L, None)
    sym = _hermitian_from_lower(_mH(as_array(t)) if upper else as_array(t))
    x = np.linalg.solve(L, _mH(np.linalg.solve(L, _mH(sym))))  # L^-1 dA L^-H
    dL = L @ _phi(x)
    return (_mH(L), _mH(dL)) if upper else (L, dL)


def _eig_gaps(w):
    """F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it."""
    diff = w[..., None, :] - w[..., :, None]
    n = w.shape[-1]
    eye = np.eye(n, dtype=bool)
    with np.errstate(divide="ignore"):
        return np.where(eye, 0.0, 1.0 / np.where(eye, 1.0, diff))


# -- repeated eigenvalues ---------------------------------------------------------------------------------
# Eigenvalues closer than sqrt(eps) |A| form a cluster: there the computed eigenvectors are any rotation of
# each other (their error is eps |A| / gap), and the sorted eigenvalues are not differentiable unless they
# move together. The rules take what is still a derivative (a cotangent equal across a cluster's
# eigenvalues, eigenvector cotangents outside clusters) and refuse the rest with NoDerivative, never a
# number computed through 1 / gap.

_SAME_RTOL = 1e-6  # relative spread within a cluster below which its eigenvalues' (co)tangents are one


def _clustered(w):
    """Boolean (..., n, n): i != j and w_i, w_j in one cluster (w ascending, as eigh returns it; consecutive
    gaps within sqrt(eps) times the largest |w| chain a cluster)."""
    w = np.real(as_array(w))
    dtype = w.dtype if np.issubdtype(w.dtype, np.floating) else np.float64
    tol = np.sqrt(np.finfo(dtype).eps) * np.max(np.abs(w), axis=-1, keepdims=True)
    breaks = np.diff(w, axis=-1) > tol
    labels = np.concatenate([np.zeros(w.shape[:-1] + (1,), int), np.cumsum(breaks, axis=-1)], axis=-1)
    same = labels[..., :, None] == labels[..., None, :]
    return same & ~np.eye(w.shape[-1], dtype=bool)


class RepeatedEigenvalues:
    """Why a cotangent or tangent of eigh is refused (`cotangents.Refused`'s reason): eigenvalues repeat."""

    __slots__ = ("function", "argument", "what")

    def __init__(self, function: str, what: str) -> None:
        self.function, self.argument, self.what = function, "a", what

    def error(self) -> NoDerivative:
        return NoDerivative(
            f"{self.function} of a matrix with repeated eigenvalues: {self.what} has no derivative there "
            "(within a cluster of equal eigenvalues any rotation of the eigenvectors is as right, and the "
            "sorted eigenvalues are not differentiable unless they move together)",
            fix="differentiate a function of the matrix that does not depend on the choice of eigenvectors "
                "within a repeated eigenvalue (a symmetric function of the eigenvalues, e.g. logdet via "
                "np.linalg.slogdet), or move the point so that the eigenvalues are distinct")


def _cluster_mean(x, same):
    """x (..., n) averaged over each cluster, or None where its entries differ by more than _SAME_RTOL."""
    member = same | np.eye(same.shape[-1], dtype=bool)
    spread = np.max(np.where(member, np.abs(x[..., :, None] - x[..., None, :]), 0.0))
    scale = np.max(np.where(member, np.maximum(np.abs(x[..., :, None]), np.abs(x[..., None, :])), 0.0))
    if spread > _SAME_RTOL * scale:
        return None
    return np.sum(np.where(member, x[..., None, :], 0.0), axis=-1) / np.sum(member, axis=-1)


def _parts(x):
    """The plain arrays a value holds: itself, or a dual's primal and tangent (in turn, for nested duals).
    Forward over reverse tests each as the plain rule tests the value (a chunk's axis leads: the tests
    read the last two axes)."""
    return _parts(x.primal) + _parts(x.tangent) if is_dual(x) else [as_array(x)]


def _plain(x):
    """A dual's primal value (the innermost), or x."""
    while is_dual(x):
        x = x.primal
    return x


def _unequal_in_cluster(x, same):
    """Some part of x (..., n) differs within a cluster: no cluster mean is its derivative."""
    return any(_cluster_mean(part, same) is None for part in _parts(x))


def _on_cluster(x, same, axis):
    """Some part of x is nonzero in a row (axis=-1) or column (axis=-2) of a repeated eigenvalue."""
    return any(np.any(np.any(part != 0, axis=axis) & np.any(same, axis=-1)) for part in _parts(x))


def eigh_middle(w, v, dw, dv, name):
    """diag(dw) + F * (V^H dV): the gradient of a function of (w, V) = eigh(A) in A is V middle V^H.
    Refused (a `cotangents.Refused`) where it has none: an eigenvector of a repeated eigenvalue with a
    cotangent, or eigenvalue cotangents that differ within a cluster."""
    vh = _mH(v)
    middle = zeros(v.shape, np.result_type(v, w), w, v, dw, dv)
    idx = np.arange(w.shape[-1])
    same = _clustered(_plain(w))
    # (on duals, forward over reverse, the same tests on the values and their tangents: skipping them put
    # 1/(w_j - w_i) = inf into the middle, a NaN hessian where reverse mode refuses, gen24 W2)
    repeated = bool(np.any(same))
    if dw is not None:
        dw = as_array(dw)
        if repeated:
            if _unequal_in_cluster(dw, same):
                return Refused(RepeatedEigenvalues(name, "an eigenvalue cotangent unequal within the cluster"))
            member = same | np.eye(same.shape[-1], dtype=bool)
            dw = np.sum(np.where(member, dw[..., None, :], 0.0), axis=-1) / np.sum(member, axis=-1)
        middle[..., idx, idx] = dw
    if dv is not None:
        dv = as_array(dv)
        gaps = _eig_gaps(w)
        if repeated:
            if _on_cluster(dv, same, -2):
                return Refused(RepeatedEigenvalues(name, "an eigenvector of the repeated eigenvalue"))
            gaps = np.where(same, 0.0, gaps)
        middle = middle + gaps * (vh @ dv)
    return middle


def eigh_tangents(w, v, sym, name, vectors=True):
    """(dw, dV) of eigh along the Hermitian tangent `sym`: dw = diag(P), dV = V (F * P), P = V^H sym V.
    Refused with NoDerivative where repeated eigenvalues make them undefined: dw unless P is a multiple of
    the identity on each cluster, dV unless P is zero on the clusters' rows."""
    p = _mH(v) @ sym @ v
    dw = np.real(np.diagonal(p, axis1=-2, axis2=-1)).copy()
    same = _clustered(_plain(w))
    repeated = bool(np.any(same))  # (on duals too, each part tested: gen24 W2, as eigh_middle)
    gaps = _eig_gaps(w)
    if repeated:
        off = [np.max(np.where(same, np.abs(part), 0.0)) > _SAME_RTOL * max(np.max(np.abs(part)), np.finfo(float).tiny)
               for part in _parts(p)]
        if _unequal_in_cluster(dw, same) or any(off):
            raise RepeatedEigenvalues(name, "the eigenvalues along this tangent").error()
        if vectors and _on_cluster(p, same, -1):
            raise RepeatedEigenvalues(name, "the eigenvectors along this tangent").error()
        member = same | np.eye(same.shape[-1], dtype=bool)
        dw = np.sum(np.where(member, dw[..., None, :], 0.0), axis=-1) / np.sum(member, axis=-1)
        gaps = np.where(same, 0.0, gaps)
    return dw, (v @ (gaps * p) if vectors else None)


def eigh_adjoint(dy, y, a, *rest, **kwargs):
    """Pullback of eigh(A) = (w, V): V (diag(dw) + F * (V^H dV)) V^H, restricted to the triangle read."""
    lower = str(_bind(rest, kwargs, ("UPLO",), ("L",))[0]).upper() == "L"
    w, v = y
    dw, dv = (tuple(dy) + (None, None))[:2]
    middle = eigh_middle(w, v, dw, dv, "np.linalg.eigh")
    if type(middle) is Refused:
        return (middle, *(None,) * len(rest))
    g = v @ middle @ _mH(v)
    # (UPLO='U' reads the upper triangle: the lower one of a^H, whose gradient is the lower one's, mirrored)
    return (match_primal(_lower_gradient(g) if lower else _mH(_lower_gradient(g)), a), *(None,) * len(rest))


def hermitian_seen(t, lower=True):
    """The Hermitian tangent a routine reading one triangle (lower or upper) sees for the tangent t."""
    t = as_array(t)
    return _hermitian_from_lower(t if lower else _mH(t))


def eigh_frule(tangents, a, UPLO="L", vectors=True):
    w, v = np.linalg.eigh(a, UPLO)
    t = tangents[0]
    if t is None:
        return (w, v), None
    return (w, v), eigh_tangents(w, v, hermitian_seen(t, UPLO.upper() == "L"), "np.linalg.eigh", vectors)


registry.adjoint(np.linalg.cholesky)(cholesky_adjoint)
registry.frule(np.linalg.cholesky)(cholesky_frule)
registry.adjoint(np.linalg.eigh)(eigh_adjoint)
registry.frule(np.linalg.eigh)(eigh_frule)


def _svd_flags(rest, kwargs):
    """(full_matrices, compute_uv) of an svd call."""
    full, compute_uv, hermitian = _bind(rest, kwargs, ("full_matrices", "compute_uv", "hermitian"),
                                        (True, True, False))
    if hermitian and compute_uv:  # (numpy's is eigh of the lower triangle, its vectors signed by the eigenvalues')
        raise unsupported("np.linalg.svd", "singular vectors with hermitian=True (numpy reads only the lower triangle)",
                          "pass hermitian=False: the same values for a symmetric matrix, differentiated in both "
                          "triangles; or use np.linalg.eigh, differentiated in the triangle it reads")
    return full, compute_uv, bool(hermitian)


def _lower_symmetric(m):
    """The symmetric matrix of m's lower triangle: what numpy's hermitian svd (eigh, UPLO='L') reads."""
    return np.tril(m) + _mT(np.tril(m, -1))


def _folded(d):
    """A cotangent of `_lower_symmetric(m)` as m's: an entry below the diagonal stands at two places."""
    return np.tril(d) + _mT(np.triu(d, 1))


def svd_adjoint(dy, y, a, *rest, **kwargs):
    """Pullback of svd (real A; vectors with full_matrices=False or square A), after Townsend (2016):
    U (F*(U^T dU - dU^T U) S + diag(dS) + S F*(V^T dV - dV^T V)) V^T plus the projections onto the
    complements of U and V for rectangular A."""
    a_ = as_array(a)
    if np.iscomplexobj(a_):
        raise unsupported("np.linalg.svd", "complex matrices", "split real and imaginary parts")
    full, compute_uv, hermitian = _svd_flags(rest, kwargs)
    nones = (None,) * len(rest)
    if not compute_uv:  # (hermitian: the values of the lower triangle's symmetric matrix, gen24 W14)
        u, _, vh = np.linalg.svd(_lower_symmetric(a_) if hermitian else a_, full_matrices=False)
        da = (u * as_array(dy)[..., None, :]) @ vh
        return (match_primal(_folded(da) if hermitian else da, a), *nones)
    u, s, vh = y
    du, ds, dvh = (tuple(dy) + (None, None, None))[:3]
    m, n = a_.shape[-2:]
    k = min(m, n)
    if full and m != n and _completion_read(du, dvh, m, n, k):
        raise unsupported("np.linalg.svd", "the completing singular vectors of full_matrices=True for a "
                          "non-square matrix (a basis of a complement: not unique, no derivative)",
                          "call np.linalg.svd(a, full_matrices=False), or read the first min(m, n) vectors only")
    u, vh = u[..., :, :k], vh[..., :k, :]
    du = None if du is None else as_array(du)[..., :, :k]
    dvh = None if dvh is None else as_array(dvh)[..., :k, :]
    v = _mT(vh)
    utgu = None if du is None else _mT(u) @ du
    dv = None if dvh is None else _mT(dvh)
    vtgv = None if dv is None else _mT(v) @ dv
    f = _eig_gaps(s ** 2)
    if du is not None or dvh is not None:
        _full_rank_under_duals(s, (m, n))
        # (only the pairs and columns the cotangents reach: the top singular pair of a centred, rank-deficient
        # matrix has a derivative; pymort's Lee-Carter fit was refused for its zero singular value)
        unused = _vectors_differentiable(
            s, m, n, vectors=[x for x in (du, dv) if x is not None],
            columns=[c for c, on in ((None if du is None else du - u @ utgu, m > n),
                                     (None if dv is None else dv - v @ vtgv, m < n)) if on and c is not None])
        if unused is not None:
            f = np.where(unused, 0.0, f)
    middle = zeros(s.shape + (k,), a_.dtype if a_.dtype.kind == "f" else float, s, ds, du, dvh)
    idx = np.arange(k)
    if ds is not None:
        middle[..., idx, idx] = ds
    extra = 0.0
    if du is not None:
        middle = middle + (f * (utgu - _mT(utgu))) * s[..., None, :]
        if m > n:
            extra = extra + _divided_by_s(du - u @ utgu, s) @ vh
    if dvh is not None:
        middle = middle + s[..., :, None] * (f * (vtgv - _mT(vtgv)))
        if m < n:
            extra = extra + u @ _mT(_divided_by_s(dv - v @ vtgv, s))
    return (match_primal(u @ middle @ vh + extra, a), *nones)


def _completion_read(du, dvh, m: int, n: int, k: int) -> bool:
    """Whether a cotangent reaches full_matrices=True's completing vectors (U's columns past k for m > n, V^H's
    rows past k for m < n): a basis of the complement of the range, chosen by LAPACK, with no derivative. The
    first k are the thin decomposition's (scikit-spatial's plane fit reads U of a 3 x N matrix: complete)."""
    if m > n and du is not None:
        return bool(np.any(_plain_nonzero(as_array(du)[..., :, k:]) if not is_dual(du) else True))
    if m < n and dvh is not None:
        return bool(np.any(_plain_nonzero(as_array(dvh)[..., k:, :]) if not is_dual(dvh) else True))
    return False


def _full_rank_under_duals(s, shape) -> None:
    """Forward over reverse through singular vectors: refused at a zero singular value (a rank-deficient matrix),
    whose vectors' second derivatives the formulas build from rounding noise (finite wrong hessians, gen24 W13)."""
    if not is_dual(s):
        return
    values = as_array(_plain(s))
    tiny = np.max(values, axis=-1, keepdims=True, initial=0.0) * max(shape) * np.finfo(float).eps
    if np.any(values <= tiny):
        raise unsupported("np.linalg.svd", "second derivatives of singular vectors at a zero singular value (a "
                          "rank-deficient matrix)", "use np.linalg.pinv, or the singular values alone")


def _divided_by_s(c, s):
    """c / s by columns; 0 in a column that is 0 (where s is 0 too: `_vectors_differentiable` refused the rest)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = c / s[..., None, :]
    if is_dual(q) or is_dual(c):
        # (forward over reverse: a column's value 0 at a zero s has a derivative of its own, divided by that 0; the
        # quotient built from rounding noise gave finite wrong hessians, gen24 W13)
        _full_rank_under_duals(s, np.shape(c)[-2:])
        return q
    return np.where(c == 0, 0.0, q)


def _vectors_differentiable(s, m, n, vectors=None, columns=None):
    """Singular vectors have a derivative only where the singular values are nonzero (for a rectangular
    matrix) and distinct: the formulas divide by s and by s_i^2 - s_j^2. Refused there, never a number
    built from a division by rounding noise (a rank-deficient matrix: use np.linalg.pinv or svdvals). Given
    the vectors' cotangents (`vectors`) and the rectangular parts divided by s (`columns`), only where the
    result reads a vector of such a pair (a nonzero cotangent column) or divides a nonzero column by a zero
    s: returns the mask of the close pairs whose vectors it does not read (their gap factor taken as 0), or
    None."""
    while is_dual(s):
        s = s.primal
    s = as_array(s)
    if s.size == 0:
        return None
    top = np.max(s, axis=-1, keepdims=True)
    tol = max(m, n) * np.finfo(float).eps * np.where(top > 0, top, 1.0)
    gaps = np.abs(s[..., :, None] ** 2 - s[..., None, :] ** 2)
    k = s.shape[-1]
    near = (gaps <= (tol * np.maximum(top, 1.0))[..., None]) & ~np.eye(k, dtype=bool)
    zero = np.broadcast_to(s <= tol, s.shape) if m != n else np.zeros(s.shape, dtype=bool)
    if vectors is None:
        reached, used = near, zero
    else:
        read = np.zeros(s.shape, dtype=bool)  # (the vectors the result reads: their cotangent columns)
        for x in vectors:
            read |= np.any(_plain_nonzero(x), axis=-2)
        reached = near & (read[..., :, None] | read[..., None, :])
        used = np.zeros(s.shape, dtype=bool)
        for c in columns or ():
            used |= np.any(_plain_nonzero(c), axis=-2)
        used &= zero
    if np.any(reached) or np.any(used):
        raise unsupported("np.linalg.svd", "singular vectors at a zero or repeated singular value (they have no "
                          "derivative there)", "for a rank-deficient matrix use np.linalg.pinv or the singular "
                          "values alone (np.linalg.svd(a, compute_uv=False) to first order)")
    return near if np.any(near) else None


def _plain_nonzero(x):
    if is_dual(x):  # (forward over reverse: its tangent may be nonzero where its value is not; all, as before)
        return np.ones(np.shape(x.primal), dtype=bool)
    return as_array(x) != 0


def svd_frule(tangents, a, *rest, **kwargs):
    full, compute_uv, hermitian = _svd_flags(rest, kwargs)
    y = np.linalg.svd(a, *rest, **kwargs)
    t = tangents[0]
    if t is None:
        return y, None
    if hermitian:  # (the values of the lower triangle's symmetric matrix, in its tangent: gen24 W14)
        a, t = _lower_symmetric(a), _lower_symmetric(t)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    if np.iscomplexobj(a) or np.iscomplexobj(t):
        # ds = Re diag(U^H dA V) (the transpose where the conjugate transpose belongs gave the imaginary
        # directions' rates with the wrong sign: gen17 W4); the vectors' phases are a gauge: refused
        if compute_uv:
            raise unsupported("np.linalg.svd", "the singular vectors of a complex matrix in forward mode (their "
                              "phases are not unique; reverse mode's rules of norm(A, 2) and cond read them, so "
                              "their second derivatives too)", "take the singular values alone (compute_uv=False, "
                              "svdvals) in forward mode, or split the matrix into real and imaginary parts")
        return y, np.real(np.diagonal(_mH(u) @ t @ _mH(vh), axis1=-2, axis2=-1))
    v = _mT(vh)
    p = _mT(u) @ t @ v
    ds = np.diagonal(p, axis1=-2, axis2=-1).copy()
    if not compute_uv:
        return y, ds
    m, n = np.shape(a)[-2:]
    if full and m != n:  # (the completing vectors, a basis of a complement LAPACK chose, have no derivative, and
        # forward mode cannot know whether the caller reads them: reverse mode's rule refuses only where read)
        raise unsupported("np.linalg.svd", "the singular vectors of full_matrices=True for a non-square matrix "
                          "in forward mode (the completing ones, a basis of a complement, have no derivative)",
                          "call np.linalg.svd(a, full_matrices=False), or use reverse mode (`gradient`)")
    _vectors_differentiable(s, m, n)
    f = _eig_gaps(s ** 2)
    ps, sp = p * s[..., None, :], s[..., :, None] * p
    du = u @ (f * (ps + _mT(ps)))
    dv = v @ (f * (sp + _mT(sp)))
    if m != n:  # (the parts outside U's and V's span: zero for a square A, whose U and V are complete; computed,
        # rounding noise divided by a zero singular value, gen24 W16: 9.9 for 0)
        du = du + (t @ v - u @ p) / s[..., None, :]
        dv = dv + (_mT(t) @ u - v @ _mT(p)) / s[..., None, :]
    return y, (du, ds, _mT(dv))


registry.adjoint(np.linalg.svd)(svd_adjoint)
registry.frule(np.linalg.svd)(svd_frule)


def _gufunc_svd_adjoint(dy, y, a, **kw):
    return (svd_adjoint(dy, y, a, compute_uv=False)[0],)


def _gufunc_svd_frule(tangents, a, **kw):
    # (numpy's own values: the gufunc gives nan where np.linalg.svd raises for a non-finite matrix)
    y = _umath_linalg.svd(a, **kw)
    return y, (svd_frule(tangents, a, compute_uv=False)[1] if tangents[0] is not None else None)


# the gufunc under np.linalg.svd's singular values, which numpy 2.5's np.linalg.cond calls itself for the 2-norm
# (`_cond_svdvals`: quantecon's Riccati solver, refused as a C function on numpy 2.5)
registry.adjoint(_umath_linalg.svd)(_gufunc_svd_adjoint)
registry.frule(_umath_linalg.svd)(_gufunc_svd_frule)


def _eye_minus(x, y):
    """I - x @ y, batched."""
    xy = x @ y
    return np.eye(xy.shape[-1], dtype=np.result_type(xy.dtype, float)) - xy


def pinv_adjoint(dy, y, a, *rest, **kwargs):
    """Pullback of the pseudo-inverse P = pinv(A) at a constant rank (Golub and Pereyra): from
    dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P,
    Abar = -P^H Pbar P^H + (I - A P) Pbar^H P P^H + P^H P Pbar^H (I - P A). Written without singular values,
    so it holds at a rank-deficient A (numpy's own pinv divides by them) and under forward over reverse."""
    hermitian = _pinv_hermitian(rest, kwargs)
    if (cut := _value_cut("np.linalg.pinv", a, _pinv_cutoff(rest, kwargs))) is not None:
        return (cut.cotangent(), *(None,) * len(rest))
    a_, p, g = as_array(a), y, as_array(dy)
    if hermitian:
        a_ = _hermitian_from_lower(a_)
    ph, gh = _mH(p), _mH(g)
    rows, cols = _full_rank(a_, rest, kwargs)
    da = -(ph @ g @ ph)
    if not rows:
        da = da + _eye_minus(a_, p) @ gh @ p @ ph
    if not cols:
        da = da + ph @ p @ gh @ _eye_minus(p, a_)
    return (match_primal(_lower_gradient(da) if hermitian else da, a), *(None,) * len(rest))


def pinv_frule(tangents, a, *rest, **kwargs):
    p = np.linalg.pinv(a, *rest, **kwargs)
    t = tangents[0]
    if t is None:
        return p, None
    if (cut := _value_cut("np.linalg.pinv", a, _pinv_cutoff(rest, kwargs))) is not None:
        raise cut.error()
    a_, t = as_array(a), as_array(t)
    if _pinv_hermitian(rest, kwargs):  # numpy reads the lower triangle (eigh)
        a_, t = _hermitian_from_lower(a_), _hermitian_from_lower(t)
    ph, th = _mH(p), _mH(t)
    rows, cols = _full_rank(a_, rest, kwargs)
    dp = -(p @ t @ p)
    if not rows:
        dp = dp + p @ ph @ th @ _eye_minus(a_, p)
    if not cols:
        dp = dp + _eye_minus(p, a_) @ th @ ph @ p
    return p, dp


def _full_rank(a, rest, kwargs) -> tuple[bool, bool]:
    """(A has full row rank, full column rank), every matrix of a batch, by pinv's own cutoff or a larger
    one. There A P = I, or P A = I, and the term of dP holding I - A P (I - P A) is zero: computed, it is
    rounding noise times |P|² (cond(A) = 5e5: the derivative 300% off, where inv's was exact)."""
    while is_dual(a):
        a = a.primal
    a = np.asarray(a)
    if a.ndim < 2 or a.size == 0 or not np.all(np.isfinite(a)):
        return False, False
    m, n = a.shape[-2:]
    s = np.linalg.svd(a, compute_uv=False)
    given = [v for v in (*rest[:1], kwargs.get("rcond"), kwargs.get("rtol")) if v is not None]
    relative = max([1e-15, max(m, n) * np.finfo(float).eps] + [float(np.max(v)) for v in given])
    rank = np.sum(s > relative * s[..., :1], axis=-1)
    return bool(np.all(rank == m)), bool(np.all(rank == n))


def _value_cut(name, a, cutoff):
    """Where the cutoff (rcond, rtol: relative to the largest singular value) drops a singular value that is not
    zero, the result is the pseudo-inverse of A's truncation, which moves with A in ways the constant-rank formula
    does not see (gen24 W15: 0.33 for 0.46): the derivative in A refused there (`NoClosedForm`: its cotangent is
    dropped where A is a constant, refused where A is differentiated), else None. A zero one (a rank-deficient A)
    is fine."""
    a = np.asarray(_plain(a))
    if cutoff is None or a.ndim < 2 or a.size == 0 or not np.all(np.isfinite(a)):
        return None
    s = np.linalg.svd(a, compute_uv=False)
    top = s[..., :1]
    zero = s <= top * max(a.shape[-2:]) * np.finfo(float).eps
    if not np.any(~zero & (s <= np.max(cutoff) * top)):
        return None
    return NoClosedForm(name, "A where its cutoff (rcond/rtol) drops a nonzero singular value (the truncation "
                        "moves with A)", fix="pass a smaller rcond, or truncate explicitly with np.linalg.svd")


def _pinv_cutoff(rest, kwargs):
    given = [v for v in (*rest[:1], kwargs.get("rcond"), kwargs.get("rtol")) if v is not None]
    return None if not given else max(float(np.max(v)) for v in given)


def _pinv_hermitian(rest, kwargs) -> bool:
    return bool(_bind(rest, kwargs, ("rcond", "hermitian"), (None, False))[1])


registry.adjoint(np.linalg.pinv)(pinv_adjoint)
registry.frule(np.linalg.pinv)(pinv_frule)


# -- the gufuncs vecdot, matvec, vecmat (numpy >= 2) -------------------------------------------------

def _check_default_axes(name, kwargs):
    if "axes" in kwargs or kwargs.get("axis", -1) != -1:
        raise unsupported(f"np.{name}", "the axes=/axis= keywords", "move the axis last with np.moveaxis")


def vecdot_adjoint(dy, y, a, b, **kwargs):
    """Pullback of vecdot(a, b) = sum(conj(a) * b, axis=-1): da = b conj(dy), db = a dy."""
    _check_default_axes("vecdot", kwargs)
    dy = as_array(dy)[..., None]
    return match_primal(as_array(b) * _conj(dy), a), match_primal(as_array(a) * dy, b)


def matvec_adjoint(dy, y, a, v, **kwargs):
    """Pullback of matvec(A, v) = A @ v per batch: dA = dy conj(v)^T (broadcast), dv = A^H dy."""
    _check_default_axes("matvec", kwargs)
    dy = as_array(dy)
    da = dy[..., :, None] * _conj(as_array(v))[..., None, :]
    dv = np.matmul(dy[..., None, :], _conj(as_array(a)))[..., 0, :]
    return match_primal(da, a), match_primal(dv, v)


def vecmat_adjoint(dy, y, v, a, **kwargs):
    """Pullback of vecmat(v, A) = conj(v) @ A per batch: dv = A conj(dy), dA = v dy^T (broadcast)."""
    _check_default_axes("vecmat", kwargs)
    dy = as_array(dy)
    dv = np.matmul(as_array(a), _conj(dy)[..., :, None])[..., 0]
    da = as_array(v)[..., :, None] * dy[..., None, :]
    return match_primal(dv, v), match_primal(da, a)


for _fn, _adj in [(np.vecdot, vecdot_adjoint), (np.linalg.vecdot, vecdot_adjoint),
                  (np.matvec, matvec_adjoint), (np.vecmat, vecmat_adjoint)]:
    registry.adjoint(_fn, kind="bilinear")(_adj)
    registry.frule(_fn)(_bilinear_frule(_fn))


# -- numpy.linalg's array-API spellings (Python wrappers: a rule is faster than recursing) -----------

def _last_two_axes_adjoint(dy, y, x, **kwargs):
    """Pullback of np.linalg.trace/diagonal, which act on the last two axes."""
    x_ = as_array(x)
    dy = as_array(dy)
    if np.ndim(y) == x_.ndim - 2:  # trace: one value per matrix
        dy = dy[..., None]
    placed = trace_place(dy, x_.shape, np.result_type(dy, x_), kwargs.get("offset", 0), -2, -1)
    return (match_primal(placed, x),)


def eigvalsh_adjoint(dy, y, a, *rest, **kwargs):
    """Pullback of eigvalsh: eigh's with no eigenvector cotangent."""
    return eigh_adjoint((dy, None), np.linalg.eigh(a, *rest, **kwargs), a, *rest, **kwargs)


def eigvalsh_frule(tangents, a, *rest, **kwargs):
    (w, _), tangent = eigh_frule(tangents, a, *rest, **kwargs, vectors=False)
    return w, (None if tangent is None else tangent[0])


def svdvals_adjoint(dy, y, x):
    return svd_adjoint(dy, y, x, compute_uv=False)


def svdvals_frule(tangents, x):
    return svd_frule(tangents, x, compute_uv=False)


registry.adjoint(np.linalg.matmul, kind="bilinear")(matmul_adjoint)
registry.frule(np.linalg.matmul)(_bilinear_frule(np.matmul))
registry.adjoint(np.linalg.tensordot, kind="bilinear")(_tensordot_pos_adjoint)
registry.frule(np.linalg.tensordot)(_bilinear_frule(np.linalg.tensordot))
registry.adjoint(np.linalg.outer, kind="bilinear")(outer_adjoint)
registry.frule(np.linalg.outer)(_bilinear_frule(np.linalg.outer))
for _fn in (np.linalg.trace, np.linalg.diagonal):
    registry.adjoint(_fn, kind="linear")(_last_two_axes_adjoint)
    registry.frule(_fn)(_linear_frule(_fn))
registry.adjoint(np.linalg.eigvalsh)(eigvalsh_adjoint)
registry.frule(np.linalg.eigvalsh)(eigvalsh_frule)
registry.adjoint(np.linalg.svdvals)(svdvals_adjoint)
registry.frule(np.linalg.svdvals)(svdvals_frule)


# -- least squares: the gufunc under np.linalg.lstsq (and np.polyfit) -------------------------------------

def _real_only(name, *arrays):
    if any(np.iscomplexobj(a) for a in arrays):
        raise unsupported(name, "complex matrices", "split real and imaginary parts")


def lstsq_adjoint(dy, y, a, b, rcond, **kwargs):
    """Pullback of `_umath_linalg.lstsq(a, b, rcond) = (x, resids, rank, s)`, x = pinv(A) b at a constant
    rank (Golub and Pereyra's derivative of the pseudo-inverse): with Bbar = pinv(A)^H Xbar,
    Abar = -Bbar X^H + (B - A X)(pinv(A) Bbar)^H + pinv(A)^H X (Xbar - pinv(A) A Xbar)^H; the residuals
    |B - A X|^2 (full column rank, m > n) and the singular values add their own terms. Complex matrices by
    the conjugate transposes (the cotangents dL/dRe + i dL/dIm: pydmd's, scikit-rf's fits; refused before);
    a real matrix's cotangent is the real part."""
    cut = _value_cut("np.linalg.lstsq", a, rcond)
    dx, dres, _, ds = (tuple(dy) + (None,) * 4)[:4]
    a_, b_ = as_array(a), as_array(b)
    x, _, rank, _ = y
    da = db = None
    if dx is not None or dres is not None:
        p = np.linalg.pinv(a_, rcond=rcond)  # gelsd's cutoff: singular values <= rcond * s_max are zero
        r = b_ - a_ @ x
    if dx is not None:
        dx = as_array(dx)
        db = _mH(p) @ dx
        da = -(db @ _mH(x)) + r @ _mH(p @ db) + (_mH(p) @ x) @ _mH(dx - p @ (a_ @ dx))
    m, n = a_.shape[-2:]
    if dres is not None and m > n and np.all(rank == n):
        g = 2 * r * np.real(as_array(dres))[..., None, :]  # d|r_j|^2 = 2 Re r_j^H (db_j - dA x_j), A^H r = 0
        db, da = _add(db, g), _add(da, -(g @ _mH(x)))
    if ds is not None:
        u, _, vh = np.linalg.svd(a_, full_matrices=False)
        da = _add(da, (u * np.real(as_array(ds))[..., None, :]) @ vh)
    da = _real_part_for(da, a_)
    db = _real_part_for(db, b_)
    if cut is not None:  # (b's is right: x = P b with P fixed by A)
        return cut.cotangent(), match_primal(db, b), None
    return match_primal(da, a), match_primal(db, b), None


def _real_part_for(g, v):
    """A cotangent for a real array v: the real part (of a complex matrix's solve: b real, A complex)."""
    if g is not None and not np.iscomplexobj(v) and np.iscomplexobj(g):
        return np.real(g)
    return g


def lstsq_frule(tangents, a, b, rcond, **kwargs):
    y = x, resids, rank, s = _umath_linalg.lstsq(a, b, rcond, **kwargs)
    ta, tb = (tuple(tangents) + (None, None))[:2]
    if ta is None and tb is None:
        return y, None
    if ta is not None and (cut := _value_cut("np.linalg.lstsq", a, rcond)) is not None:
        raise cut.error()
    a_, b_ = as_array(a), as_array(b)
    p = np.linalg.pinv(a_, rcond=rcond)
    r = b_ - a_ @ x
    dx = 0.0 if tb is None else p @ tb
    dr = 0.0 if tb is None else tb
    ds = np.zeros_like(s)
    if ta is not None:
        ta = as_array(ta)
        eye_m, eye_n = np.eye(a_.shape[-2]), np.eye(a_.shape[-1])
        dp = (-(p @ ta @ p) + p @ _mH(p) @ _mH(ta) @ (eye_m - a_ @ p)
              + (eye_n - p @ a_) @ _mH(ta) @ _mH(p) @ p)
        dx = dx + dp @ b_
        dr = dr - ta @ x
        u, _, vh = np.linalg.svd(a_, full_matrices=False)
        ds = np.real(np.diagonal(_mH(u) @ ta @ _mH(vh), axis1=-2, axis2=-1)).copy()
    m, n = a_.shape[-2:]
    dres = (2 * np.real(np.sum(np.conj(r) * dr, axis=-2)) if m > n and np.all(rank == n)
            else np.zeros_like(resids))
    return y, (dx, dres, None, ds)


registry.adjoint(_umath_linalg.lstsq)(lstsq_adjoint)
registry.frule(_umath_linalg.lstsq)(lstsq_frule)


# -- QR: a rule for np.linalg.qr itself (its C kernels return LAPACK's Householder form, updated in place) ---

def _right_solve_upper_t(x, r):
    """x R^-T for upper-triangular R (a solve, not an inverse)."""
    return _mT(np.linalg.solve(r, _mT(x)))


def _qr_tall_cotangent(q, r, dq, dr):
    """Cotangent of A = QR (m >= n, reduced) after TensorFlow's QrGrad:
    Q (dR + tril(Q^T dQ - dQ^T Q + R dR^T - dR R^T) R^-T) + (dQ - Q Q^T dQ) R^-T."""
    dq = np.zeros_like(q) if dq is None else as_array(dq)
    dr = np.zeros_like(r) if dr is None else as_array(dr)
    qdq = _mT(q) @ dq
    rdr = r @ _mT(dr)
    low = np.tril(qdq - _mT(qdq) + rdr - _mT(rdr))
    return q @ (dr + _right_solve_upper_t(low, r)) + _right_solve_upper_t(dq - q @ qdq, r)


def _qr_parts(y, mode, a):
    """(Q, R) of a qr call's result, R cut to the reduced shape."""
    if mode == "r":
        return np.linalg.qr(a)
    q, r = y
    k = min(np.shape(a)[-2:])
    return q[..., :, :k], r[..., :k, :]


def qr_adjoint(dy, y, a, *rest, **kwargs):
    """Pullback of np.linalg.qr(a, mode) for real matrices, modes 'reduced', 'r', and 'complete' where Q
    is determined (m <= n, or no cotangent of Q). A wide matrix A = Q [U V] splits as in TensorFlow:
    the square part's cotangent with dQ + V dV^T, and Q dV for the rest."""
    (mode,) = _bind(rest, kwargs, ("mode",), ("reduced",))
    _real_only("np.linalg.qr", a)
    if mode not in ("reduced", "complete", "r"):
        raise unsupported("np.linalg.qr", f"mode={mode!r}", "use mode='reduced' or mode='r'")
    dq, dr = (None, dy) if mode == "r" else (tuple(dy) + (None, None))[:2]
    a_ = as_array(a)
    m, n = a_.shape[-2:]
    if mode == "complete" and m > n and dq is not None:
        raise unsupported("np.linalg.qr", "Q of mode='complete' for a tall matrix (its extra columns are "
                          "not unique)", "use mode='reduced'")
    q, r = _qr_parts(y, mode, a_)
    k = min(m, n)
    if dr is not None:
        dr = as_array(dr)[..., :k, :]
    if dq is not None:
        dq = as_array(dq)[..., :, :k]
    if m >= n:
        g = _qr_tall_cotangent(q, r, dq, dr)
    else:
        u, v = r[..., :, :m], r[..., :, m:]
        du = None if dr is None else dr[..., :, :m]
        dv = np.zeros_like(v) if dr is None else dr[..., :, m:]
        dq_total = a_[..., :, m:] @ _mT(dv) + (0.0 if dq is None else dq)
        g = np.concatenate([_qr_tall_cotangent(q, u, dq_total, du), q @ dv], axis=-1)
    return (match_primal(g, a), *(None,) * len(rest))


def _qr_tall_tangent(q, r, t):
    """(dQ, dR) of A = QR (m >= n) along dA = t, as in JAX's qr_jvp_rule."""
    t_rinv = _right_solve_upper_t(t, _mT(r))  # t R^-1
    qt_t_rinv = _mT(q) @ t_rinv
    low = np.tril(qt_t_rinv, -1)
    omega = low - _mT(low)
    return q @ (omega - qt_t_rinv) + t_rinv, (qt_t_rinv - omega) @ r


def qr_frule(tangents, a, *rest, **kwargs):
    (mode,) = _bind(rest, kwargs, ("mode",), ("reduced",))
    y = np.linalg.qr(a, *rest, **kwargs)
    t = tangents[0] if tangents else None
    if t is None:
        return y, None
    _real_only("np.linalg.qr", a)
    a_, t = as_array(a), as_array(t)
    m, n = a_.shape[-2:]
    q, r = _qr_parts(y, mode, a_)
    if m >= n:
        dq, dr = _qr_tall_tangent(q, r, t)
    else:
        dq, du = _qr_tall_tangent(q, r[..., :, :m], t[..., :, :m])
        dv = _mT(q) @ (t[..., :, m:] - dq @ r[..., :, m:])
        dr = np.concatenate([du, dv], axis=-1)
    if mode == "r":
        return y, dr
    if mode == "complete" and m > n:
        raise unsupported("np.linalg.qr", "mode='complete' for a tall matrix", "use mode='reduced'")
    return y, (dq, dr)


registry.adjoint(np.linalg.qr)(qr_adjoint)
registry.frule(np.linalg.qr)(qr_frule)


# -- sparsity (contexts/rules/sparsity_specs.py) ------------------------------------------------------

registry.sparsity(Custom("rules.py: a broadcast product summed over the contracted axis"), np.matmul,
                  np.dot, np.inner, np.outer, np.vdot)
registry.sparsity(Custom("rules.py: the sum of the diagonal"), np.trace)
registry.sparsity(STRUCTURAL, np.diagonal, np.diag)
registry.sparsity(DENSE, np.einsum, np.tensordot, np.kron)
# the factorisations and solvers: every output (each of a tuple) from every input element
registry.sparsity(DENSE, np.linalg.solve, np.linalg.inv, np.linalg.det, np.linalg.pinv, np.linalg.eigvalsh,
                  np.linalg.cholesky, np.linalg.svd, np.linalg.eigh, np.linalg.eig, np.linalg.eigvals,
                  np.linalg.qr, np.linalg.slogdet, np.linalg.lstsq, _umath_linalg.solve1, _umath_linalg.solve,
                  _umath_linalg.inv, _umath_linalg.svd)
