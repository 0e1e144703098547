"""Templates of the `numpy` suite: each turns arrays $a, $b (float64, shape $S: (n,) or (3, 4)) into a new
array $r of the same shape.

A body is a string (any rank) or a dict {1: ..., 2: ...} by rank. Placeholders as in gen_scalar, plus
`$S` (the shape), `$m` (its first axis), `$ax` (0 or -1), `$perm` (a permutation of range($m)),
`$dup` (a list of row indices with a duplicate), `$diag` (`np.diag(np.arange(1.0, $m + 1))`, to make a
square matrix well conditioned with distinct eigenvalues).
"""

T = []


def t(feature, body, *helpers):
    T.append((feature, body, helpers))


# a square ($m, $m) matrix from $a, $b
SQ = {1: "np.outer($a, $b) * 0.2", 2: "($a @ $b.T) * 0.1"}
# an SPD ($m, $m) matrix from $a
SPD = {1: "np.outer($a, $a) * 0.2 + $diag", 2: "($a @ $a.T) * 0.1 + $diag"}
# a ($m,) vector as a column that broadcasts against $S
COL = {1: "({})", 2: "({})[:, None]"}


def lin(feature, make):
    """A linear-algebra template from `make(sq, spd, col)` for both ranks."""
    t(feature, {nd: make(SQ[nd], SPD[nd], COL[nd].format) for nd in (1, 2)})


# --- ufuncs and broadcasting -------------------------------------------------------------------------
t("ufunc", "$r = np.sin($a) * $K + np.exp(np.tanh($b))")
t("ufunc", "$r = np.log(1.0 + $a * $a) + np.sqrt($b * $b + $K)")
t("ufunc", "$r = np.square($a) * 0.3 + np.abs($b) * $K - np.cos($a) ** 2")
t("ufunc", "$r = np.maximum($a, $K) + np.minimum($b, $K2)")
t("ufunc", "$r = $a * $b / (1.0 + $b ** 2) - np.negative($a) + np.power($b, 2)")
t("broadcast", {1: "$r = $a + $b[::-1] * $K + np.sum($b) * 0.1",
                2: "$r = $a - np.mean($a, axis=1, keepdims=True) + $b * np.max($b, axis=0)"})
t("broadcast", {1: "$r = np.sum($a[:, np.newaxis] * $b[np.newaxis, :], axis=1) * 0.2",
                2: "$r = $a * np.sum($b[:, :, np.newaxis] * 0.1, axis=2) + $b[0]"})
t("broadcast", "$r = $a * 2.0 + 1.0 - $b / 2.0 + np.float64($K) * $a")

# --- reductions --------------------------------------------------------------------------------------
t("reduce", "$r = $a * np.prod(np.tanh($b)) + $a - np.mean($a, axis=0, keepdims=True)")
t("reduce", "$r = np.cumsum($a, axis=$ax) * 0.3 + $b")
t("reduce", "$r = $a * np.std($b) + np.var($a, axis=0, keepdims=True)")
t("reduce", "$r = $a / (1.0 + np.linalg.norm($b)) + $b.sum() * 0.1")
t("reduce", "$r = $a + np.max($b, axis=-1, keepdims=True) - np.min($a) + $b.mean()")
t("reduce", {1: "$r = $a * np.linalg.norm($b, ord=3) + np.linalg.norm($a, ord=1) * 0.1",
             2: "$r = $a * np.linalg.norm($b, ord='fro') + np.linalg.norm($a, axis=1, keepdims=True)"})
t("reduce", {1: "$r = $a * np.linalg.norm($b, ord=np.inf)",
             2: "$r = $a * np.linalg.norm($b, ord=2) + np.linalg.norm($a, ord=1, axis=0) * 0.1"})

# --- views -------------------------------------------------------------------------------------------
t("view", {1: """\
$r = $a.copy()
$r[1:] = $r[1:] + $a[:-1] * $K""", 2: """\
$r = $a.copy()
$r[1:, :] += $a[:-1, :] * $K"""})
t("view", {1: "$r = $a.T * $K + $b[::-1]", 2: "$r = ($a.T * $K).T + $b + ($b.T @ np.ones(3))[None, :] * 0.1"})
t("view", "$r = np.ravel($a).reshape($S) * $b + $a.reshape(-1)[::-1].reshape($S)")
t("view", {1: "$r = $a[::-1] * $b + $a[np.newaxis, :][0]", 2: "$r = $a[::-1, ::-1] * $b + $a[:, 1:2]"})
t("view", "$r = $a.ravel() @ $b.ravel() * 0.1 + $a.flatten() .reshape($S)")

# --- in-place updates --------------------------------------------------------------------------------
t("inplace", """\
$t1 = np.zeros($S)
$t1[:] = $a * $K
$t1[...] += $b
$r = $t1""")
t("inplace", """\
$t1 = $a.copy()
$t1[0] += $b[0] * $K
$t1 *= $K2
$r = $t1""")
t("inplace", """\
$t1 = $a.copy()
$t2 = $t1[1:]
$t2 *= $K
$t2 += $b[1:]
$r = $t1""")
t("inplace", """\
$t1 = $a * 1.0
$t2 = $t1
$t2 += $b
$r = $t1 * $K""")
t("inplace", """\
$t1 = np.empty_like($a)
np.copyto($t1, $a * $b)
$r = $t1""")
t("inplace", """\
$t1 = $a.copy()
_scale$u($t1, $K)
$r = $t1 * $b""", """\
def _scale$u(t, k):
    t *= k
    t += 1.0""")
t("inplace", """\
$t1 = np.zeros($S)
$t1[1] = $a[1]
$t1[0] = $b[0] * $a[0]
$r = $t1 + $a""")
t("out", """\
$t1 = np.empty_like($a)
np.multiply($a, $b, out=$t1)
$r = $t1 + $K""")
t("out", """\
$t1 = np.zeros($S)
np.sin($a[1:], out=$t1[1:])
$r = $t1 + $b""")
t("out", """\
$t1 = np.ones($S)
np.add($a, $b, out=$t1)
np.tanh($t1, out=$t1)
$r = $t1""")

# --- fancy indexing, masks, where, concatenation -------------------------------------------------------
t("fancy", "$r = $a[$perm] * $K + $b")
t("fancy", "$r = $a + np.sum($b[$dup]) * 0.3")
t("fancy", """\
$t1 = np.zeros($S)
$t1[[0, 1]] += $b[[1, 0]]
$t1[[0, 0]] = $a[[0, 0]]
$r = $t1 + $a * $K""")
t("mask", "$r = np.where($a > $K, $a * $b, $b - $a)")
t("mask", """\
$t1 = $a.copy()
$t1[$t1 > $K] = $K
$r = $t1 + $b""")
t("mask", "$r = $a + np.sum($b[$b > $K]) * 0.2 + np.sum($a * ($b > $K2))")
t("concat", {1: "$r = np.concatenate([$a[:2], $b[2:]]) * $K",
             2: "$r = np.concatenate([$a[:1], $b[1:]], axis=0) * $K"})
t("concat", "$r = np.stack([$a, $b]).sum(axis=0) + np.stack([$a, $b], axis=-1).prod(axis=-1)")
t("concat", {1: "$r = np.hstack([$a, $b])[1:$m + 1] + np.vstack([$a, $b])[1]",
             2: "$r = np.hstack([$a, $b])[:, 2:6] + np.vstack([$a, $b])[3:]"})

# --- products ----------------------------------------------------------------------------------------
t("dot", {1: "$r = $a * np.dot($a, $b) * 0.1 + $b * ($a @ $b) * 0.1",
          2: "$r = $a @ $b.T @ $a * 0.1"})
t("dot", {1: "$r = $a * np.einsum('i,i->', $a, $b) * 0.1 + np.einsum('i,j->i', $a, $b) * 0.1",
          2: "$r = $a * np.einsum('ij,ij->i', $a, $b)[:, None] * 0.1 + np.einsum('ij->ji', $b).T"})

# --- linear algebra ----------------------------------------------------------------------------------
lin("linalg", lambda sq, spd, col: f"$r = $a + np.linalg.inv({spd}) @ $b")
lin("linalg", lambda sq, spd, col: f"$r = np.linalg.solve({spd}, $b) + $a * 0.1")
lin("linalg", lambda sq, spd, col: f"$r = $a * np.linalg.det({spd}) * 0.1 + $b")
lin("linalg", lambda sq, spd, col: f"""\
$t1, $t2 = np.linalg.slogdet({spd})
$r = $a * $t2 * $t1""")
lin("linalg", lambda sq, spd, col: f"$r = $a * {col('np.linalg.eigh(' + spd + ' + ' + sq + ' + (' + sq + ').T)[0]')}")
lin("linalg", lambda sq, spd, col: f"$r = $a * {col('np.linalg.eigvalsh(' + spd + ')')} + $b")
lin("linalg", lambda sq, spd, col: f"""\
$t1, $t2 = np.linalg.qr({spd} + {sq})
$r = $a * {col('np.diag($t2) ** 2')} * 0.1 + $t1 @ $b * 0.1""")
lin("linalg", lambda sq, spd, col: f"$r = $a + np.linalg.pinv({spd}) @ $b")
lin("linalg", lambda sq, spd, col: f"$r = $a + np.linalg.cholesky({spd}) @ $b * 0.1")
t("linalg", {1: "$r = $a * np.linalg.svd(np.outer($a, $b) * 0.2 + $diag, compute_uv=False)",
             2: "$r = $a * np.linalg.svd($a, compute_uv=False)[:, None] + $b"})
t("linalg", {2: "$r = $a * np.sum(np.linalg.pinv($a)) * 0.1 + $b"})

# --- polynomials, sorting, statistics, scipy ----------------------------------------------------------
t("poly", "$r = np.polyval([$K, -$K2, 0.5], $a) + $b")
t("sort", "$r = np.sort($a, axis=-1) * $b")
t("sort", {1: """\
$t1 = np.argsort($b)
$r = $a[$t1] + $b[$t1] * $K""", 2: "$r = np.take_along_axis($a, np.argsort($b, axis=1), axis=1) + $b"})
t("sort", {1: "$r = $a - np.median($b)", 2: "$r = $a - np.median($b, axis=0)"})
t("scipy", "$r = scipy.special.expit($a) + scipy.special.gammaln($b + 1.0) + scipy.special.erf($a * $K)")
t("scipy", "$r = scipy.stats.norm.logpdf($a, loc=$K, scale=1.5) + $b")

# --- Python around arrays -----------------------------------------------------------------------------
t("python", """\
$r = np.zeros($S)
for $t1 in range($m):
    $r[$t1] = $a[$t1] * $b[$m - 1 - $t1] + $K""")
t("python", """\
$t1 = [$a * $K, $b]
$t1.append($a * $b)
$r = sum($t1)""")
t("python", "$r = _Sc$u($a).apply($b)", """\
class _Sc$u:
    def __init__(self, w):
        self.w = w

    def apply(self, v):
        return self.w * v + np.sin(v)""")
t("python", """\
$t1 = {'w': $a, 'v': $b}
$t1['w'] = $t1['w'] * $K
$r = $t1['w'] + $t1['v']""")

# --- more numpy --------------------------------------------------------------------------------------
t("ufunc", "$r = np.clip($a, 0.2, $K + 0.8) * $b + np.hypot($a, $b) + np.arctan2($a, 1.0 + $b * $b)")
t("reduce", {1: "$r = $a * np.trace(np.outer($a, $b)) * 0.1 + np.diff(np.concatenate([[0.0], $b]))",
             2: "$r = $a * np.trace($a @ $b.T) * 0.1 + np.diff($b, axis=1, prepend=0.0)"})
t("view", "$r = np.roll($a, 1) * $b + np.flip($a)")
t("view", {1: "$r = np.tile($a[:1], $m) + np.repeat($b[::$m], $m)[:$m]",
           2: "$r = np.tile($a[:1], (3, 1)) + np.repeat($b[:, :1], 4, axis=1)"})
t("linalg", {1: "$r = $a * np.sum(np.triu(np.outer($a, $b))) * 0.1 + np.diag(np.outer($a, $b))",
             2: "$r = $a * np.sum(np.triu($a @ $b.T)) * 0.1 + $b"})
t("inplace", """\
$t1 = np.zeros($S)
np.add.at($t1, [0, 0, 1], $a[[0, 1, 2]])
$r = $t1 + $b""")
t("inplace", """\
$t1 = $a.copy()
$t1[$t1 > 100.0] = 0.0
$t1[0] = $t1[0] * $K + $b[-1]
$r = $t1""")
t("python", """\
$t1 = [np.sin($a), np.cos($b)]
$r = np.array($t1).sum(axis=0) + np.asarray($a) * $K""")
t("python", """\
def $t1($t2):
    return $t2 * $K + np.tanh($t2)
$r = $t1($a) + sum($t1($t3) for $t3 in [$b])""")
t("reduce", "$r = $a * np.sum($b ** 2, axis=0, keepdims=True) * 0.1 + $a.max(axis=0) * 0.1")

# --- idioms of library code (2026-11-28, session 14): numpy and scipy functions and array methods the
# other templates do not reach ---------------------------------------------------------------------------
t("idiom", "$r = np.interp($a, np.linspace(-2.0, 2.0, 7), np.sin(np.linspace(-2.0, 2.0, 7))) * $b")
t("idiom", {1: "$r = np.gradient($a * $b) + np.cumprod(1.0 + 0.1 * np.tanh($a))",
            2: "$r = np.gradient($a * $b, axis=1) + np.cumprod(1.0 + 0.1 * np.tanh($a), axis=0)"})
t("idiom", {1: "$r = np.convolve($a, [$K, 0.5, -0.25], mode='same') + np.trapezoid($b * $b) * 0.1",
            2: "$r = $a * np.trapezoid($b, axis=1)[:, None] * 0.1 + np.fliplr($b)"})
t("idiom", "$r = np.nansum($a) * $b + np.nanmean($b * $a) + np.percentile($a, 30.0) * $K")
t("idiom", {1: "$r = np.apply_along_axis(lambda v: v * v.sum(), 0, $a) * 0.2 + $b",
            2: "$r = np.apply_along_axis(lambda v: v * v.sum(), 1, $a) * 0.2 + $b"})
t("idiom", """\
$t1 = $a.copy()
$t1[$t1 > 0.2] = $t1[$t1 > 0.2] * $K
$r = $t1 + $b.astype(float).T.T * 0.5""")
t("idiom", "$r = np.array($a.tolist()) * $b + np.reshape($b.ravel(), $S) * $K")
t("idiom", {1: "$r = np.pad($a, 1, mode='edge')[1:-1] * np.pad($b, (1, 0))[:-1] + np.kron($a[:1], $b)",
            2: "$r = np.pad($a, 1, mode='edge')[1:-1, 1:-1] * $K + np.tril(np.ones(($m, $m))) @ $b * 0.1"})
t("idiom", "$r = np.maximum.accumulate($a, axis=-1) + np.logaddexp($a, $b) - np.sinc($b * 0.3)")
t("idiom", "$r = np.fmax($a, $b * $K) + np.linalg.norm($a, ord=1) * $b * 0.1 + np.linalg.norm($b, np.inf) * 0.1")
t("idiom", "$r = scipy.special.logsumexp($a) + scipy.special.softmax($b, axis=-1) + scipy.special.xlogy($a * $a, 1.5 + $b * $b)")
t("idiom", {1: "$r = scipy.integrate.cumulative_trapezoid($a * $b, initial=0.0) + np.fft.irfft(np.fft.rfft($a), n=$m) * $K",
            2: "$r = scipy.integrate.cumulative_trapezoid($a * $b, axis=1, initial=0.0) + np.fft.ifft2(np.fft.fft2($a)).real * $K"})
t("idiom", {1: "$r = scipy.interpolate.CubicSpline(np.arange($m, dtype=float), $a)(np.arange($m) + 0.25) + $b",
            2: "$r = scipy.interpolate.CubicSpline(np.arange(4.0), $a, axis=1)(np.arange(4) + 0.25) + $b"})
t("idiom", {1: "$r = np.linalg.lstsq(np.vander(np.arange($m, dtype=float) * 0.3, 3), $a, rcond=None)[0].sum() * $b + np.linalg.matrix_power(np.outer($a, $b) * 0.1 + np.eye($m), 2) @ $b",
            2: "$r = np.linalg.lstsq($diag + $a @ $a.T * 0.1, $b, rcond=None)[0] + np.linalg.matrix_power($diag * 0.5 + $a @ $b.T * 0.05, 2) @ $a * 0.1"})
t("idiom", """\
$t1 = np.vectorize(lambda p, q: p * q if p > 0.0 else q - p)
$r = $t1($a, $b) * $K""")
t("idiom", """\
$t1 = copy.deepcopy({'w': $a, 'v': [$b]})
$t1['w'] *= $K
$r = $t1['w'] + $t1['v'][0] * $a""")
t("idiom", {1: "$r = np.einsum('i,i->', $a, $b) * $a + np.einsum('i->i', $b) * $K",
            2: "$r = np.einsum('ij,kj->ik', $a, $b)[:, :1] * $a + np.einsum('ij->j', $b) * $K"})
t("idiom", """\
$t1 = np.empty($S)
np.multiply($a, $b, out=$t1)
$t1 += np.where($a > $K, $a, 0.0)
$r = np.clip($t1, -0.8, None) + $b.sum(axis=$ax, keepdims=True)""")
t("idiom", {1: "$r = np.cross(np.resize($a, 3), np.resize($b, 3)).sum() * $a + np.roll($b, 2) * np.take($a, $perm)",
            2: "$r = np.cross($a[:, :3], $b[:, :3]).sum() * $a + np.flipud($b) * np.take($a, $perm, axis=0)"})
t("idiom", """\
$t1, $t2 = np.meshgrid($a.ravel()[:2], $b.ravel()[:2])
$r = $a * ($t1 * $t2).sum() + np.stack([$b, $a]).min(axis=0) * $K""")

# --- idioms of optimisation benchmark suites (2026-11-29, session 19: each gave a silently wrong
# derivative before): iterating an array (hessian dropped the rows' cotangents), builtins over an array
# (a cotangent with NaN), a name rebound to a callee's result ---------------------------------------------
t("iterate", """\
$t1 = 0.0
for $t2 in $a:
    $t1 = $t1 + np.sum($t2 * $t2) * 0.1
$r = $b * $t1 + $a""")
t("iterate", {1: "$r = $a * max($b) + min($a * $b) * $b + sum($a) * 0.1 + sorted($b)[0] * $a",
              2: "$r = $a * max($b.ravel()) + min(np.ravel($a * $b)) * $b + sum($a)[None, :] * 0.1"})
t("rebind", """\
$t1 = [$a, $b]
$t1 = _pair$u($t1, $K)
$r = $t1[0] + $t1[1] * $b""", """\
def _pair$u(y, k):
    t = []
    for v in y:
        t.append(np.tanh(v) * k + v)
    return t""")
t("kwargs", {1: "$r = $a * np.percentile(a=$b, q=40) + np.cumsum(a=$a) * 0.1 + np.clip(a=$b, a_min=-0.5, a_max=0.5)",
             2: "$r = $a * np.mean(a=$b, axis=0) + np.diff(a=$a, axis=1, prepend=0.0) * $K"})

# --- implicit calls (2026-12-04, session 49): numpy calling Python code on its own (`__array__`, a class
# deferring binary operators with `__array_ufunc__ = None`, `__index__`), and Python protocols around arrays
# (`__iter__` drawn by np.stack, `__iadd__` changing a shared array in place, `__setattr__` storing copies) ---
t("implicit", "$r = np.asarray(_Arr$u($a)) * $b + np.sin(_Arr$u($b)) * $K + np.array(_Arr$u($a)) * 0.1", """\
class _Arr$u:
    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        return self.a * 0.5""")
t("implicit", "$r = (($a + _Def$u($b)) + ($b * _Def$u($a)) * $K - (_Def$u($b) - $a) * 0.5) * 0.3", """\
class _Def$u:
    __array_ufunc__ = None

    def __init__(self, a):
        self.a = a

    def __radd__(self, o):
        return o + self.a * 2.0

    def __rmul__(self, o):
        return o * np.tanh(self.a)

    def __sub__(self, o):
        return self.a - o * 0.5""")
t("implicit", "$r = $a * $a[_Ix$u($M)] * 0.3 + $b[_Ix$u(0):_Ix$u(2)].sum() * 0.1 + np.take($b, _Ix$u(1)) * $K", """\
class _Ix$u:
    def __init__(self, i):
        self.i = i

    def __index__(self):
        return self.i""")
t("implicit", """\
$t1 = np.stack(list(_Rows$u($a, $b)))
$r = np.sum($t1, axis=0) * 0.5 + sum(_Rows$u($b, $a)) * $K + np.mean([r for r in _Rows$u($a, $a)], axis=0)""", """\
class _Rows$u:
    def __init__(self, p, q):
        self.p, self.q = p, q

    def __iter__(self):
        yield self.p * 0.5
        yield np.tanh(self.q)""")
t("implicit", """\
$t1 = $a.copy()
$t2 = _AccA$u($t1)
$t2 += $b * $K
$t3 = _AccA$u($b * 1.0)
$t3 += $a
$r = $t1 * np.tanh($b) + $t2.a * 0.3 + $t3.a * 0.2""", """\
class _AccA$u:
    def __init__(self, a):
        self.a = a

    def __iadd__(self, o):
        self.a += o
        return self""")
t("implicit", """\
$t1 = _Keep$u($a)
$t1.v = $b
$t1.v *= $K
$t1.w = $a
$t1.w[...] = $b * 0.5
$r = $t1.v + $t1.w * np.tanh($a) + $t1.first * 0.3""", """\
class _Keep$u:
    def __init__(self, v):
        self.first = v

    def __setattr__(self, name, value):
        object.__setattr__(self, name, np.array(value, dtype=float) * 1.0)""")
t("implicit", """\
$t1 = _PostA$u($a, $b)
$t1.hist.append($a * $K)
$r = $t1.s + sum($t1.hist) * 0.5 + copy.copy($t1).s * $K""", """\
import dataclasses


@dataclasses.dataclass
class _PostA$u:
    p: np.ndarray
    q: np.ndarray
    hist: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        self.s = self.p * np.tanh(self.q)
        self.hist.append(self.q)""")
