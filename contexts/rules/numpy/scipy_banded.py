"""Rules for scipy.linalg's banded solvers, `solve_banded` and `solveh_banded` (real types), in place of
their LAPACK kernels (`?gtsv` for (1, 1) bands, `?gbsv` otherwise; `?ptsv` for a symmetric tridiagonal
matrix, `?pbsv` otherwise), whose factor outputs scipy drops. One rule per Python function covers every
kernel, every band width, one or several right-hand sides; and ?gbsv called directly, as make_interp_spline
does (its factors refused). Importing it without scipy installed raises
ImportError, which `contexts.rules.numpy` tolerates.

Band storage: for `solve_banded((l, u), ab, b)`, A[i, j] = ab[u + i - j, j]; for `solveh_banded` the
upper form stores A[i, j] = ab[u + i - j, j] for i <= j (u = ab.shape[0] - 1), the lower form
A[i, j] = ab[i - j, j] for i >= j, each stored entry standing for A[i, j] and A[j, i]. The entries of ab
outside the matrix (the corners of the band) are never read: their cotangent and tangent are zero.

For A x = b: bbar = A^-T xbar, Abar = -bbar x^T, and the cotangent of a stored entry is Abar at the place
(or places) it stands for; forward, A xdot = bdot - Adot x. The solves use the band solvers themselves
(the transpose of a (l, u) band is a (u, l) band).

>>> import numpy as np, scipy.linalg
>>> from contexts import gradient
>>> ab = np.array([[0.0, 1.0], [4.0, 3.0], [1.0, 0.0]])
>>> gradient(lambda b: np.sum(scipy.linalg.solve_banded((1, 1), ab, b)), np.ones(2))[0]
array([0.18181818, 0.27272727])
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as _linalg
from scipy.linalg import lapack as _lapack

from ..cotangents import Refused
from ..registry import registry
from ..sparsity_specs import DENSE
from ._util import bind as _bind, match_primal, unsupported

__all__: list[str] = []


def _diagonal(ab, r, shift):
    """(i, j) of the matrix entries row r of ab stands for, with i = j + shift (those inside the matrix)."""
    n = ab.shape[-1]
    j = np.arange(max(0, -shift), min(n, n - shift))
    return j + shift, j


def _real(name, *arrays):
    if any(np.iscomplexobj(a) for a in arrays):
        raise unsupported(name, "complex matrices", "split real and imaginary parts")
    if np.ndim(arrays[0]) != 2 or np.ndim(arrays[1]) not in (1, 2):
        raise unsupported(name, "batches of band matrices (ab of more than two dimensions)",
                          "solve each system in a loop")


def _shifts(ab, l_u, symmetric_lower):
    """Per row r of ab: the shift i - j of the matrix entries it stores."""
    rows = ab.shape[0]
    if l_u is not None:
        return [r - l_u[1] for r in range(rows)]
    return [r for r in range(rows)] if symmetric_lower else [r - (rows - 1) for r in range(rows)]


def _matvec(tab, x, shifts, symmetric):
    """Adot x for the band tangent tab (rows with the given shifts; mirrored for a symmetric matrix)."""
    out = np.zeros(np.broadcast_shapes(x.shape), dtype=np.result_type(tab, x))
    for r, s in enumerate(shifts):
        i, j = _diagonal(tab, r, s)
        t = tab[r, j]
        t = t if x.ndim == 1 else t[:, None]
        np.add.at(out, i, t * x[j])
        if symmetric and s != 0:
            np.add.at(out, j, t * x[i])
    return out


def _band_cotangent(ab, bbar, x, shifts, symmetric):
    """The cotangent of each stored entry for Abar = -bbar x^T: Abar[i, j] (+ Abar[j, i] if symmetric)."""
    dab = np.zeros(ab.shape, dtype=np.result_type(ab, bbar, x))
    two_d = x.ndim == 2
    for r, s in enumerate(shifts):
        i, j = _diagonal(ab, r, s)
        g = -(np.sum(bbar[i] * x[j], axis=1) if two_d else bbar[i] * x[j])
        if symmetric and s != 0:
            g = g - (np.sum(bbar[j] * x[i], axis=1) if two_d else bbar[j] * x[i])
        dab[r, j] = g
    return dab


def _transposed(ab, l_u):
    """The band storage of A^T, a (u, l) band: A^T[i, j] = A[j, i]."""
    lower, upper = l_u
    out = np.zeros_like(ab)
    n = ab.shape[1]
    for r in range(lower + upper + 1):
        k = r - upper  # A[j + k, j] = ab[r, j]: row lower - k of the transposed storage, column j + k
        src = np.arange(max(0, -k), min(n, n - k))
        out[lower - k, src + k] = ab[r, src]
    return out


# -- solve_banded((l, u), ab, b) ---------------------------------------------------------------------------

_SB = ("overwrite_ab", "overwrite_b", "check_finite")


def _solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    """solve_banded, never overwriting its arguments (the reverse pass reads ab again)."""
    return _linalg.solve_banded(l_and_u, ab, b, check_finite=check_finite)


def solve_banded_adjoint(dy, y, l_and_u, ab, b, *rest, **kwargs):
    nones = (None,) * len(rest)
    if dy is None:
        return (None, None, None) + nones
    _real("scipy.linalg.solve_banded", ab, b)
    lower, upper = (int(v) for v in l_and_u)
    ab_ = np.asarray(ab)
    bbar = _linalg.solve_banded((upper, lower), _transposed(ab_, (lower, upper)), np.asarray(dy))
    dab = _band_cotangent(ab_, bbar, np.asarray(y), _shifts(ab_, (lower, upper), False), False)
    return (None, match_primal(dab, ab), match_primal(bbar, b)) + nones


def solve_banded_frule(tangents, l_and_u, ab, b, *rest, **kwargs):
    check_finite = _bind(rest, kwargs, _SB, (False, False, True))[2]
    y = _linalg.solve_banded(l_and_u, ab, b, check_finite=check_finite)
    tab, tb = (tuple(tangents) + (None, None, None))[1:3]
    if tab is None and tb is None:
        return y, None
    _real("scipy.linalg.solve_banded", ab, b)
    lower, upper = (int(v) for v in l_and_u)
    rhs = np.zeros_like(y) if tb is None else np.asarray(tb, dtype=y.dtype)
    if tab is not None:
        rhs = rhs - _matvec(np.asarray(tab), y, _shifts(np.asarray(ab), (lower, upper), False), False)
    return y, _linalg.solve_banded((lower, upper), ab, rhs)


# -- solveh_banded(ab, b, lower=False): symmetric positive definite -----------------------------------------

_SHB = ("overwrite_ab", "overwrite_b", "lower", "check_finite")


def _solveh_banded(ab, b, overwrite_ab=False, overwrite_b=False, lower=False, check_finite=True):
    return _linalg.solveh_banded(ab, b, lower=lower, check_finite=check_finite)


def solveh_banded_adjoint(dy, y, ab, b, *rest, **kwargs):
    nones = (None,) * len(rest)
    if dy is None:
        return (None, None) + nones
    _real("scipy.linalg.solveh_banded", ab, b)
    lower = _bind(rest, kwargs, _SHB, (False, False, False, True))[2]
    ab_ = np.asarray(ab)
    bbar = _linalg.solveh_banded(ab_, np.asarray(dy), lower=lower)  # A^T = A
    dab = _band_cotangent(ab_, bbar, np.asarray(y), _shifts(ab_, None, lower), True)
    return (match_primal(dab, ab), match_primal(bbar, b)) + nones


def solveh_banded_frule(tangents, ab, b, *rest, **kwargs):
    _, _, lower, check_finite = _bind(rest, kwargs, _SHB, (False, False, False, True))
    y = _linalg.solveh_banded(ab, b, lower=lower, check_finite=check_finite)
    tab, tb = (tuple(tangents) + (None, None))[:2]
    if tab is None and tb is None:
        return y, None
    _real("scipy.linalg.solveh_banded", ab, b)
    rhs = np.zeros_like(y) if tb is None else np.asarray(tb, dtype=y.dtype)
    if tab is not None:
        rhs = rhs - _matvec(np.asarray(tab), y, _shifts(np.asarray(ab), None, lower), True)
    return y, _linalg.solveh_banded(ab, rhs, lower=lower)


for _fn, _adjoint, _frule, _impl in ((_linalg.solve_banded, solve_banded_adjoint, solve_banded_frule, _solve_banded),
                                     (_linalg.solveh_banded, solveh_banded_adjoint, solveh_banded_frule,
                                      _solveh_banded)):
    registry.adjoint(_fn)(_adjoint)
    registry.frule(_fn)(_frule)
    registry.set(_fn, impl=_impl)
    registry.sparsity(DENSE, _fn)  # conservative, as np.linalg.solve: a band's inverse is dense


# -- LAPACK ?gbsv(kl, ku, ab, b): lub, piv, x, info (make_interp_spline calls it directly) ---------------------
# ab has 2 kl + ku + 1 rows: the first kl are LAPACK's room for the factors, the band A[i, j] =
# ab[kl + ku + i - j, j] follows (solve_banded's storage from row kl on). The factors (lub, piv) have no
# rule: a cotangent reaching them is refused.

_GB = ("overwrite_ab", "overwrite_b")


def _gbsv_impl(fn):
    def gbsv(kl, ku, ab, b, overwrite_ab=0, overwrite_b=0):
        """?gbsv never overwriting its arguments (the reverse pass reads ab and b again)."""
        return fn(kl, ku, ab, b)
    return gbsv


def _factors_refused(dy, name):
    if dy is not None and (dy[0] is not None or dy[1] is not None):
        raise unsupported(name, "its LU factors (lub, piv) as values that are differentiated",
                          "use scipy.linalg.solve_banded, or only the solution x")


class _Factors:
    """Why ?gbsv's LU factors carry no tangent (`cotangents.Refused`'s reason): refused where used."""
    function, argument = "scipy.linalg.lapack.?gbsv", "lub (its LU factors)"

    def error(self):
        return unsupported(self.function, "its LU factors (lub, piv) as values that are differentiated",
                           "use scipy.linalg.solve_banded, or only the solution x")


def gbsv_adjoint(dy, y, kl, ku, ab, b, *rest, **kwargs):
    nones = (None,) * len(rest)
    _factors_refused(dy, "scipy.linalg.lapack.?gbsv")
    dx = None if dy is None else dy[2]
    if dx is None:
        return (None, None, None, None) + nones
    _real("scipy.linalg.lapack.?gbsv", ab, b)
    lower, upper = int(kl), int(ku)
    ab_ = np.asarray(ab)
    band = ab_[lower:]
    bbar = _linalg.solve_banded((upper, lower), _transposed(band, (lower, upper)), np.asarray(dx))
    dab = np.zeros(ab_.shape, dtype=np.result_type(ab_, bbar))
    dab[lower:] = _band_cotangent(band, bbar, np.asarray(y[2]), _shifts(band, (lower, upper), False), False)
    return (None, None, match_primal(dab, ab), match_primal(bbar, b)) + nones


def _gbsv_frule(fn):
    def gbsv_frule(tangents, kl, ku, ab, b, *rest, **kwargs):
        y = fn(kl, ku, ab, b)
        tab, tb = (tuple(tangents) + (None,) * 4)[2:4]
        if tab is None and tb is None:
            return y, None
        _real("scipy.linalg.lapack.?gbsv", ab, b)
        lower, upper = int(kl), int(ku)
        x = y[2]
        rhs = np.zeros_like(x) if tb is None else np.asarray(tb, dtype=x.dtype)
        if tab is not None:
            band = np.asarray(tab)[lower:]
            rhs = rhs - _matvec(band, x, _shifts(band, (lower, upper), False), False)
        # (the factors move with ab: their tangent, unknown here, refuses any use, as reverse mode's adjoint
        # refuses their cotangent; a tangent of None gave their derivative 0, silently)
        zero = tab is None or type(tab) is np.ndarray and not tab.any()  # (a tangent of zeros: the factors' too)
        lub = None if zero else Refused(_Factors())
        return y, (lub, None, _linalg.solve_banded((lower, upper), np.asarray(ab)[lower:], rhs), None)
    return gbsv_frule


for _prefix in ("s", "d"):
    _fn = getattr(_lapack, _prefix + "gbsv")
    registry.adjoint(_fn)(gbsv_adjoint)
    registry.frule(_fn)(_gbsv_frule(_fn))
    registry.set(_fn, impl=_gbsv_impl(_fn))
    registry.sparsity(DENSE, _fn)
