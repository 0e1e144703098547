"""`np.interp`: piecewise-linear interpolation, differentiable in x and in the sample values fp."""

import sys

import numpy as np

from ..cotangents import Refused
from ..leaves import as_array  # np.asarray, but a dask array is left as it is
from ..registry import NoDerivative, registry
from ..sparsity_specs import DENSE
from ._util import unsupported, zeros


def _real_samples(fp, *ends):
    """The rules take real samples: a complex fp's (or left's, right's) imaginary part lost its derivative
    (0, in every mode)."""
    if any(np.iscomplexobj(as_array(v)) for v in (fp, *ends) if v is not None):
        raise unsupported("np.interp", "complex samples",
                          "interpolate the parts: np.interp(x, xp, fp.real) + 1j * np.interp(x, xp, fp.imag)")


def _segments(x, xp):
    """Left sample index and weight of the right sample for each x (clamped at the ends)."""
    x = as_array(x, dtype=float)
    xp = as_array(xp, dtype=float)
    i = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, len(xp) - 2)
    width = xp[i + 1] - xp[i]
    w = np.clip((x - xp[i]) / width, 0.0, 1.0)
    return i, w, width


class _AtJump:
    """Why np.interp's derivative in x (and in the sample positions xp) is refused: x exactly at a sample
    position where the curve jumps (a repeated position; an end whose `left`/`right` value is given). The
    reason a `cotangents.Refused` carries, or raised at once in forward mode."""

    __slots__ = ("function", "argument", "where")

    def __init__(self, argument: str) -> None:
        from ..frames import outside_engine
        self.function, self.argument = "np.interp", argument
        frame = outside_engine(sys._getframe(2))
        self.where = None if frame is None else \
            f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_qualname}"

    def error(self) -> NoDerivative:
        return NoDerivative(
            f"np.interp differentiated in {self.argument} at x exactly on a sample position where the curve "
            "jumps (a repeated position, or an end whose `left`/`right` value is given): it has no derivative "
            "there, and one side's would come out", where=self.where,
            fix="evaluate off that position, or pass no `left`/`right` (np.interp then continues the end value)")


def _knots(xa, xpa, left, right):
    """Where x sits exactly on a sample position: (on: a mask, k: the position's index, jump: a mask of those
    where the curve jumps). At such a kink the derivative in x (and in xp[k]) is the mean of the two
    segments' slopes, as central differences give it and as np.max splits a tie (the rule took the right
    segment's: 200 for np.interp(5.0, [0, 3, 5, 8], [0, 20, 200, 800]), where the sides are 90 and 200)."""
    n = len(xpa)
    k = np.clip(np.searchsorted(xpa, xa, side="left"), 0, n - 1)
    on = xpa[k] == xa
    nxt = np.minimum(k + 1, n - 1)
    jump = on & (((k + 1 < n) & (xpa[nxt] == xa)) | ((k == 0) & (left is not None))
                 | ((k == n - 1) & (right is not None)))
    return on, k, jump


def _x_slope(xa, xpa, fp_arr, left, right):
    """The derivative of np.interp in x (of x relative to the samples' positions): the segment's slope, the
    mean of the two slopes at a sample position (half the end segment's at an end, beyond which the end value
    holds), 0 outside; with `_knots`' (on, k, jump) masks and positions."""
    i, w, width = _segments(xa, xpa)
    slope = (fp_arr[i + 1] - fp_arr[i]) / width
    inside = (xa >= xpa[0]) & (xa <= xpa[-1])
    sx = np.where(inside, slope, 0.0)
    on, k, jump = _knots(xa, xpa, left, right)
    if np.any(on):
        n = len(xpa)
        with np.errstate(divide="ignore", invalid="ignore"):
            seg = (fp_arr[1:] - fp_arr[:-1]) / (xpa[1:] - xpa[:-1])
        before = np.where(k > 0, seg[np.clip(k - 1, 0, n - 2)], 0.0)
        after = np.where(k < n - 1, seg[np.clip(k, 0, n - 2)], 0.0)
        sx = np.where(on & ~jump, 0.5 * (before + after), sx)
    return sx, (on, k, jump)


@registry.adjoint(np.interp)
def interp_adjoint(dy, y, x, xp, fp, *rest, **kw):
    """Cotangents of x, xp, fp, and of `left`/`right` (the values outside the samples) however they were
    passed: by position, or by keyword (the registry's trailing dict)."""
    given = dict(zip(("left", "right", "period"), rest), **kw)
    _real_samples(fp, given.get("left"), given.get("right"))
    grads = _interp_grads(dy, x, xp, fp, given.get("left"), given.get("right"), given.get("period"))
    ends = {"left": grads[3], "right": grads[4], "period": None}
    out = grads[:3] + tuple(ends[k] for k in ("left", "right", "period")[:len(rest)])
    return out + ({k: ends.get(k) for k in kw},) if kw else out


def _periodic(x, xp, period):
    """np.interp's own reduction of a periodic call to a plain one: (x mod period, the samples' positions
    mod period, sorted and padded by one period at each end, the indices of xp and fp they are taken from).
    A gather: cotangents are scattered back through the indices, tangents gathered by them."""
    period = abs(float(period))
    xa, xpa = as_array(x, dtype=float) % period, as_array(xp, dtype=float) % period
    order = np.argsort(xpa, kind="stable")
    idx = np.concatenate([order[-1:], order, order[:1]])
    xp_ext = np.concatenate([xpa[order[-1:]] - period, xpa[order], xpa[order[:1]] + period])
    return (xa if np.ndim(x) else float(xa)), xp_ext, idx


def _scattered(g, idx, like):
    """The cotangent of `like` gathered at idx, from g, that of the gathered values."""
    if g is None:
        return None
    n = len(as_array(like, dtype=float))
    out = zeros((n,), float, g)
    np.add.at(out, idx, g)
    return out if isinstance(like, np.ndarray) else list(out)


def _interp_grads(dy, x, xp, fp, left, right, period):
    if period is not None:  # (left and right are not used with a period, as in numpy)
        xn, xp_ext, idx = _periodic(x, xp, period)
        dx, dxp, dfp, _, _ = _interp_grads(dy, xn, xp_ext, as_array(fp)[idx], None, None, None)
        dx = dx if isinstance(x, np.ndarray) or np.ndim(x) else float(np.sum(dx))  # (a list x: an array, gen24 C2)
        return dx, _scattered(dxp, idx, xp), _scattered(dfp, idx, fp), None, None
    fp_arr = as_array(fp, dtype=float)
    if len(fp_arr) < 2:
        return None, None, np.sum(dy) if dy is not None else None, None, None
    i, w, width = _segments(x, xp)
    g = as_array(dy, dtype=float) * np.ones_like(w)
    xa = as_array(x, dtype=float)
    xpa = as_array(xp, dtype=float)
    inside = (xa >= xpa[0]) & (xa <= xpa[-1])
    slope = (fp_arr[i + 1] - fp_arr[i]) / width
    sx, (on, k, jump) = _x_slope(xa, xpa, fp_arr, left, right)
    dx = g * sx
    dfp = zeros(fp_arr.shape, fp_arr.dtype, g)  # (dual zeros when g is a dual: forward over reverse)
    below, above = xa < xpa[0], xa > xpa[-1]
    if left is None:
        np.add.at(dfp, 0, np.sum(np.where(below, g, 0.0)))
    if right is None:
        np.add.at(dfp, len(fp_arr) - 1, np.sum(np.where(above, g, 0.0)))
    np.add.at(dfp, i, np.where(inside, g * (1 - w), 0.0))
    np.add.at(dfp, i + 1, np.where(inside, g * w, 0.0))
    dxp = zeros(xpa.shape, xpa.dtype, g)  # moving a sample moves the line through it
    off = inside & ~on  # (at a sample position: x relative to it, the mean slope -sx; its neighbours none)
    np.add.at(dxp, i, np.where(off, g * slope * (w - 1), 0.0))
    np.add.at(dxp, i + 1, np.where(off, -g * slope * w, 0.0))
    np.add.at(dxp, k, np.where(on, -g * sx, 0.0))
    dx = dx if isinstance(x, np.ndarray) or np.ndim(x) else float(dx)  # (a list x: an array, as numpy's y)
    if np.any(jump):
        dx, dxp = Refused(_AtJump("x")), Refused(_AtJump("xp"))
    dleft = None if left is None else np.sum(np.where(below, g, 0.0))
    dright = None if right is None else np.sum(np.where(above, g, 0.0))
    return (dx, (dxp if isinstance(xp, np.ndarray) else list(dxp)), (dfp if isinstance(fp, np.ndarray) else list(dfp)),
            dleft, dright)


@registry.frule(np.interp)
def interp_frule(tangents, x, xp, fp, left=None, right=None, period=None):
    tx, txp, tfp, tleft, tright = (list(tangents) + [None] * 5)[:5]  # (left, right given by position)
    _real_samples(fp, left, right)
    if period is not None:  # (the periodic call's plain form: its samples gathered, their tangents too)
        if len(tangents) > 5 and tangents[5] is not None:
            from ..registry import NoRuleError
            raise NoRuleError("np.interp differentiated in its period has no forward rule",
                              fix="pass the period as a constant")
        y = np.interp(x, xp, fp, period=period)
        xn, xp_ext, idx = _periodic(x, xp, period)
        gather = (lambda t: None if t is None else as_array(t, dtype=float)[idx])
        _, dy = interp_frule((tx, gather(txp), gather(tfp)), xn, xp_ext, as_array(fp)[idx])
        return y, dy
    y = np.interp(x, xp, fp, left=left, right=right, period=period)
    i, w, width = _segments(x, xp)
    xa, xpa = as_array(x, dtype=float), as_array(xp, dtype=float)
    inside = (xa >= xpa[0]) & (xa <= xpa[-1])
    fp_arr = as_array(fp, dtype=float)
    dy = np.zeros_like(w)
    if tx is not None or txp is not None:
        sx, (on, k, jump) = _x_slope(xa, xpa, fp_arr, left, right)
    if tx is not None:
        dy = dy + as_array(tx) * sx
    if tfp is not None:
        t = as_array(tfp, dtype=float)
        dy = dy + np.where(inside, t[i] * (1 - w) + t[i + 1] * w,
                           np.where(xa < xpa[0], t[0] if left is None else 0.0, t[-1] if right is None else 0.0))
    if txp is not None:
        t = as_array(txp, dtype=float)
        slope = (fp_arr[i + 1] - fp_arr[i]) / width
        dy = dy + np.where(inside & ~on, slope * ((w - 1) * t[i] - w * t[i + 1]), np.where(on, -sx * t[k], 0.0))
    if (tx is not None or txp is not None) and np.any(jump):
        moving = (np.broadcast_to(as_array(tx), jump.shape) if tx is not None else 0.0) - (
            t[k] if txp is not None else 0.0)
        if np.any(jump & (moving != 0)):
            raise _AtJump("x" if tx is not None else "xp").error()
    if tleft is not None:
        dy = dy + np.where(xa < xpa[0], tleft, 0.0)
    if tright is not None:
        dy = dy + np.where(xa > xpa[-1], tright, 0.0)
    return y, (dy if np.ndim(y) else float(dy))


registry.sparsity(DENSE, np.interp)  # conservative: which segment each x falls in is not worked out
