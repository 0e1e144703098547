"""Templates of the `scalar` suite: each turns one or more float variables ($a, $b, $c) into a new one ($r).

A template is (feature, body, helpers): `body` is the code inside `f` (dedented), `helpers` module-level
code (classes, helper functions, globals). `$t1`..`$t4` are fresh local names, `$u` a suffix unique to
the instance (for module-level names), `$K`, `$K2`, `$K3` constants in [0.3, 0.9], `$N` an int in 2..4,
`$M` an int in 0..2. Each body keeps values of order one when its inputs are of order one.
"""

T = []


def t(feature, body, *helpers):
    T.append((feature, body, helpers))


# --- math --------------------------------------------------------------------------------------------
t("math", "$r = math.sin($a) * $K + math.cos($b)")
t("math", "$r = math.exp(math.tanh($a)) - $K * $b")
t("math", "$r = math.log(1.0 + $a * $a) + math.sqrt($K + $b * $b)")
t("math", "$r = math.hypot($a, $K) * math.tanh($b)")
t("math", "$r = math.pow($K + $a * $a, 0.7) + math.atan2($b, 2.0 + math.cos($a))")
t("math", "$r = $a ** 2 * $K - $b ** 3 * 0.1 + $a / (1.0 + $b * $b)")
t("math", "$r = abs($a) * $b + pow($a * $a + 1.0, 0.5) - +$b")
t("math", "$r = math.sin($a) ** 2 + math.cos($a) * math.exp(-$b * $b)")

# --- control flow ------------------------------------------------------------------------------------
t("control", """\
if $a > $K:
    $r = $a * $b
elif $a < -$K:
    $r = math.sin($b) + $a
else:
    $r = $a - $b * $K2""")
t("control", """\
$r = $a
$t1 = 0
while $t1 < $N:
    $r = $r * $K + math.sin($b) * 0.1
    $t1 += 1""")
t("control", """\
$r = 0.0
for $t1 in range($N + 2):
    if $t1 == $M:
        continue
    if $t1 > $N:
        break
    $r += math.sin($a + $t1) * 0.3 * $b""")
t("control", """\
$r = 1.0
for $t1 in [$a, $b, $K]:
    $r = $r * 0.5 + $t1""")
t("control", """\
$r = 0.0
$t2 = 0
while True:
    $t2 += 1
    $r += $a * $K ** $t2
    if $t2 >= $N:
        break""")
t("ternary", "$r = $a * $K if $b > $K2 else $b - $a")
t("boolop", "$r = ($a > $K and $a * $b) or ($b + $K)")
t("boolop", "$r = (False or $a * 2.0) + (None or $b) * (1.0 and $K)")
t("walrus", "$r = ($t1 := $a * $K) + $t1 * $b")
t("walrus", """\
if ($t1 := math.sin($a)) > 0.0:
    $r = $t1 * $b
else:
    $r = $t1 + $b""")

# --- tuples ------------------------------------------------------------------------------------------
t("tuple", """\
$t1 = ($a, $b, $K)
$t2, $t3, $t4 = $t1
$r = $t2 * $t3 + $t4""")
t("tuple", """\
$t1, *$t2 = ($a, $b, $K, $a * $b)
$r = $t1 + sum($t2) * 0.5""")
t("tuple", """\
$t1, $t2 = $a, $b
$t1, $t2 = $t2, $t1 * $K
$r = $t1 - $t2""")
t("tuple", """\
*$t1, $t2 = [$a, $b, $c]
$r = $t2 * len($t1) + $t1[0]""")

# --- lists -------------------------------------------------------------------------------------------
t("list", """\
$t1 = [$a]
$t1.append($b * $K)
$t1.insert(0, $a * $b)
$t1.extend([$b, 1.0])
$t2 = $t1.pop()
$r = sum($t1) + $t2 * $t1.pop(0)""")
t("list", """\
$t1 = [$a, $b * $K, $a * $b + 0.1]
$t1.sort(key=lambda $t2: -$t2)
$r = $t1[0] * 0.5 + $t1[-1]""")
t("list", """\
$t1 = [$a, $b, $a * $b, $K]
$r = sum($t1[1:3]) + $t1[::-1][0] * 0.5 + $t1[-2:][0]""")
t("list", "$r = sum([$t1 * $t1 for $t1 in ($a, $b) if $t1 > -100.0])")
t("list", "$r = max($a, $b * $K) + min([$a, $b]) + sorted([$a, $b, $K])[1]")
t("list", "$r = sum($t1 * $t2 for $t1, $t2 in zip([$a, $b], [$K, $K2]))")
t("list", """\
$r = 0.0
for $t1, $t2 in enumerate([$a, $b, $K]):
    $r += ($t1 + 1) * $t2""")
t("list", """\
$t1 = [$a, $b]
$r = $t1[$t1.index($t1[1])] * 2.0 + list(reversed($t1))[0]""")
t("list", """\
$t1 = [$a * $K, $b]
$t1[0] += $b
$t1[1] *= $a
$r = $t1[0] + $t1[1]""")
t("list", "$r = sum(sorted([$a, $b * $K, $c], key=abs)[:2])")
t("iter", "$r = next(iter([$a, $b])) * $K + iter([$b]).__next__()")
t("iter", """\
$t1 = iter([$a, $b, $c])
$r = next($t1) + next($t1) * $K + next($t1, 0.0)""")

# --- dicts -------------------------------------------------------------------------------------------
t("dict", """\
$t1 = {'p': $a, 'q': $b}
$t2 = {**$t1, 'q': $a * $K}
$r = $t2['p'] + $t2['q'] * $t1['q']""")
t("dict", """\
$t1 = {}
$t1['a'] = $a
$t1['b'] = $b * $K
$t1.update(c=$a * $b)
$r = $t1['a'] + $t1['c'] + $t1['b']""")
t("dict", """\
$t1 = {'a': $a}
$t1.update([('b', $b)])
$t1.update({'c': $K * $a})
$r = sum($t1.values())""")
t("dict", """\
$t1 = {'a': $a}
$t1.setdefault('b', $b)
$t1.setdefault('a', 100.0)
$t2 = $t1.pop('a')
$r = $t2 * $t1.get('b', 0.0) + $t1.get('z', $K)""")
t("dict", """\
$t1 = dict(a=$a, b=$b)
$r = 0.0
for $t2 in $t1:
    $r += $t1[$t2] * $K
for $t2, $t3 in $t1.items():
    $r += $t3 * $t3""")
t("dict", """\
$t1 = {$t2: $t3 * $K for $t2, $t3 in zip('ab', [$a, $b])}
$r = $t1['a'] - $t1['b']""")
t("dict", """\
$t1 = _D$u(a=$a, b=$b)
$t1['c'] = $a * $b
$r = $t1.total()""", """\
class _D$u(dict):
    def total(self):
        return sum(self.values())""")
t("dict", """\
$t1 = _kw$u(p=$a, q=$b)
$r = $t1['p'] * $t1['q'] + $t1['z']""", """\
def _kw$u(**kw):
    return {**kw, 'z': 1.0}""")
t("dict", """\
$t1 = {'x': $a, 'y': $b}
$t2 = {}
$t2.update($t1)
$t2['x'] *= $K
$r = $t2['x'] + $t1['x'] + $t2['y']""")
t("set", """\
$t1 = {1, 2, 3}
$r = $a * len($t1) if 2 in $t1 else $b""")

# --- classes -----------------------------------------------------------------------------------------
t("class", "$r = _P$u($a, $b).val() + _P$u($a).val()", """\
class _P$u:
    def __init__(self, a, b=0.5):
        self.a = a
        self.b = b

    def val(self):
        return self.a * self.b + math.sin(self.a)""")
t("class", "$r = _Q$u($a).sq + $b", """\
class _Q$u:
    def __init__(self, v):
        self.__v = v

    @property
    def sq(self):
        return self.__v * self.__v""")
t("class", """\
$t1 = _S$u($a, $b)
$t1.p = $t1.p * $K
$r = $t1.p + $t1.q""", """\
class _S$u:
    __slots__ = ('p', 'q')

    def __init__(self, p, q):
        self.p = p
        self.q = q""")
t("class", "$r = _Der$u($a, $b).f()", """\
class _Base$u:
    def __init__(self, a):
        self.a = a

    def f(self):
        return self.a * 2.0


class _Der$u(_Base$u):
    def __init__(self, a, b):
        super().__init__(a)
        self.b = b

    def f(self):
        return super().f() + self.b * self.a""")
t("class", """\
$t1 = _V$u($a, $b) + _V$u($b, $K) * $a
$r = $t1.x * $t1.y""", """\
class _V$u:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, o):
        return _V$u(self.x + o.x, self.y + o.y)

    def __mul__(self, k):
        return _V$u(self.x * k, self.y * k)""")
t("class", "$r = _DC$u($a, $b).s() + _DC$u($a).s()", """\
@dataclass
class _DC$u:
    p: float
    q: float = 0.5

    def s(self):
        return self.p * self.q""")
t("class", "$r = _H$u($a).f($b)", """\
class _H$u:
    def __init__(self, k):
        self.f = lambda y: k * y""")
t("class", """\
$t1 = _Acc$u()
$t1.add($a)
$t1.add($b * $K)
$r = $t1.total""", """\
class _Acc$u:
    def __init__(self):
        self.total = 0.0

    def add(self, v):
        self.total += v * v""")

# --- closures, recursion, lambdas, functools, operator -------------------------------------------------
t("closure", """\
def $t1($t2):
    return $t2 * $a + $b
$r = $t1($K) + $t1($a)""")
t("closure", """\
def $t1($t2):
    return $t2 * $t2 + 1.0
$r = $t1($a)""")
t("closure", """\
$t1 = 0.0
def $t2($t3):
    nonlocal $t1
    $t1 += $t3 * $t3
$t2($a)
$t2($b)
$r = $t1""")
t("closure", """\
$t1 = lambda $t2, $t3=$a: $t2 * $t3 + $b
$r = $t1($b) + $t1($b, $K)""")
t("closure", """\
def $t1($t2):
    return $a if $t2 == 0 else $a * 0.5 + $t1($t2 - 1) * $K
$r = $t1($N)""")
t("closure", """\
def $t1($t2):
    def $t3($t4):
        return $t4 * $t2 + $a
    return $t3
$r = $t1($b)($K)""")
t("recursion", "$r = _pw$u(math.tanh($a), $N) + $b", """\
def _pw$u(t, n):
    return 1.0 if n == 0 else t * _pw$u(t, n - 1)""")
t("lambda", """\
$t1 = lambda $t2: $t2 * $t2
$r = $t1($a) + (lambda $t3, $t4: $t3 - $t4)($b, $a)""")
t("functools", "$r = functools.partial(_lin$u, $a, w=$K)($b)", """\
def _lin$u(p, q, w=1.0):
    return p * w + q""")
t("functools", "$r = functools.reduce(lambda $t1, $t2: $t1 * 0.5 + $t2, [$a, $b, $K], 0.0)")
t("functools", """\
@functools.lru_cache(maxsize=None)
def $t1($t2):
    return $a * $t2 + $b
$r = $t1(2) + $t1(2) + $t1(1)""")
t("operator", "$r = operator.add(operator.mul($a, $K), operator.neg($b)) + operator.truediv($a, 2.0)")
t("operator", "$r = operator.itemgetter(1)([$a, $b]) * operator.attrgetter('real')($a)")

# --- generators --------------------------------------------------------------------------------------
t("generator", "$r = sum(_gen$u($a, $N)) * 0.2 + $b", """\
def _gen$u(p, n):
    for i in range(n):
        yield p * (i + 1)""")
t("generator", "$r = sum(_gen2$u($a, $b))", """\
def _gen1$u(p):
    yield p
    yield p * p


def _gen2$u(p, q):
    yield from _gen1$u(p)
    yield q""")
t("generator", """\
$t1 = _acc$u()
next($t1)
$t1.send($a)
$r = $t1.send($b * $K)""", """\
def _acc$u():
    total = 0.0
    while True:
        t = yield total
        total += t""")
t("generator", "$r = sum($t1 * $K for $t1 in ($a, $b)) + max($t2 for $t2 in [$a, $c])")
# generators whose lazy run interleaves with their consumer (reverse mode runs them eagerly: refused)
t("generator", """\
$t1 = _Box$u()
$r = 0.0
for $t2 in (_reset$u($t1, $t3) for $t3 in ($a, $b)):
    $r = $r * $K + $t2.v""", """\
class _Box$u:
    v = 0.0


def _reset$u(box, v):
    box.v = v * 2.0
    return box""")
t("generator", """\
$t1 = [$a]
for $t2 in _grow$u($t1):
    $t1.append($t2 * $K)
$r = $t1[-1] + $b""", """\
def _grow$u(xs):
    for _ in range(2):
        yield xs[-1] + 1.0""")
t("generator", """\
$t1 = []
for $t2 in (len($t1) * $a for _ in range(3)):
    $t1.append($t2 + $b)
$r = sum($t1)""")
t("generator", """\
$t1 = _Box$u()
$r = 0.0
for $t2 in _steps$u($t1, $a):
    $r = $r + $t1.v * ($t2 + 1) * $b""", """\
class _Box$u:
    v = 0.0


def _steps$u(box, x):
    for i in range(3):
        box.v = x * i
        yield i""")

# --- exceptions, with, match -------------------------------------------------------------------------
t("exception", """\
try:
    $t1 = [$a, $b][5]
except IndexError:
    $t1 = $a * $K
finally:
    $t2 = $b
$r = $t1 + $t2""")
t("exception", """\
$t1 = {'a': $a}
try:
    $r = $t1['zz']
except KeyError:
    $r = $b * $t1['a']""")
t("exception", """\
try:
    $r = $a * $b
    if $N > 100:
        raise ValueError('never')
except ValueError:
    $r = 0.0
else:
    $r += $K""")
t("with", """\
with _Ctx$u($a) as $t1:
    $r = $t1 * $b""", """\
class _Ctx$u:
    def __init__(self, s):
        self.s = s

    def __enter__(self):
        return self.s * 2.0

    def __exit__(self, *exc):
        return False""")
t("match", """\
match $N:
    case 2:
        $r = $a * $b
    case 3:
        $r = $a + $b
    case _:
        $r = $b * $K""")
t("match", """\
match ($a, $b):
    case ($t1, $t2) if $t1 > 100.0:
        $r = $t1
    case ($t1, $t2):
        $r = $t1 * $t2 + $K""")
t("match", """\
match [$a, $b, 1.0]:
    case [$t1, *$t2]:
        $r = $t1 + sum($t2)""")
t("match", """\
match {'k': $a, 'j': $b}:
    case {'k': $t1}:
        $r = $t1 * $K""")

# --- globals, *args, **kwargs ------------------------------------------------------------------------
t("global", """\
_GL$u[0] = $a
_GL$u[1] = $b * $K
$r = _gsum$u()""", """\
_GL$u = [0.0, 0.0]


def _gsum$u():
    return _GL$u[0] + _GL$u[1] * _GL$u[0]""")
t("global", """\
_gset$u($a)
$r = _GV$u + $b""", """\
_GV$u = 0.0


def _gset$u(t):
    global _GV$u
    _GV$u = t * 0.5""")
t("global", """\
global _GW$u
_GW$u = $a * $b
$r = _gread$u()""", """\
_GW$u = 1.0


def _gread$u():
    return _GW$u + 1.0""")
t("global", """\
_GD$u['w'] = $a
$r = _GD$u['w'] * _GD$u['c']""", """\
_GD$u = {'c': 0.75}""")
t("args", "$r = _sa$u($a, $b, $K) + _sa$u(*[$a, $b])", """\
def _sa$u(*args):
    return sum(t * t for t in args)""")
t("kwargs", "$r = _kwf$u(p=$a, q=$b) + _kwf$u(**{'p': $b})", """\
def _kwf$u(**kw):
    return kw['p'] * kw.get('q', 1.0)""")

# --- more of the language ------------------------------------------------------------------------------
t("control", """\
$r = $a
$t1 = 0
while $t1 < $N:
    $t1 += 1
    if $t1 == $M:
        continue
    $r = $r * 0.5 + $b * $K
else:
    $r += 0.1""")
t("control", "$r = $a * $K if 0.0 < $b < 100.0 else $b")
t("control", """\
$r = 0.0
for $t1 in range($N):
    try:
        if $t1 == $M:
            raise KeyError($t1)
        $r += $a * ($t1 + 1) * 0.2
    except KeyError:
        continue""")
t("class", "$r = _Call$u($K)($a) + _Call$u.twice($b) + _Call$u.make($a).k", """\
class _Call$u:
    def __init__(self, k):
        self.k = k

    def __call__(self, v):
        return self.k * v * v

    @staticmethod
    def twice(v):
        return 2.0 * v

    @classmethod
    def make(cls, v):
        return cls(v * 0.5)""")
t("class", """\
$t1 = _Pt$u($a)
$t1.x += $b
$t1.x *= $K
$r = $t1.x + getattr($t1, 'x') * 0.1""", """\
class _Pt$u:
    def __init__(self, x):
        self.x = x""")
t("list", "$r = min([($a, 1.0), ($b, 2.0)], key=lambda $t1: $t1[1])[0] + sum([$a, $b], 0.5)")
t("list", """\
$t1 = [($K, $a), (0.1, $b)]
$t1.sort(key=lambda $t2: $t2[0])
$r = $t1[0][1] * $t1[1][1]""")
t("list", """\
$r = 0.0
for $t1, $t2 in enumerate(reversed([$a, $b]), start=1):
    $r += $t1 * $t2""")
t("dict", "$r = sum($t2 * $K for $t1, $t2 in {'a': $a, 'b': $b}.items() if $t1 != 'z')")
t("dict", """\
$t1 = {'a': [$a], 'b': [$b]}
$t1['a'].append($b * $K)
$r = sum($t1['a']) + $t1['b'][0]""")
t("closure", """\
def $t1(*$t2, **$t3):
    return sum($t2) * $t3.get('w', 1.0)
def $t4(*$t2, **$t3):
    return $t1(*$t2, **$t3)
$r = $t4($a, $b, w=$K)""")
t("closure", """\
def $t1($t2):
    return $t2 * $a, $t2 + $b
$t3, $t4 = $t1($K)
$r = $t3 * $t4""")
t("tuple", "$r = isinstance($a, float) * $a + (len(($a, $b)) - 1) * $b")
t("math", "$r = math.fsum([$a, $b * $K]) + math.copysign($a, 1.0) * math.erf($b * 0.5)")
t("global", """\
_CNT$u[0] += 1
$r = $a * $K + $b""", """\
_CNT$u = [0]""")

# --- library idioms: what code written without AD in mind does (scipy, sklearn, attrs-like libraries) ------
t("libpat", """\
$t1 = _Res$u(x=$a * $K, fun=$b)
$t1.nit = $N
$r = $t1.x * $t1.fun + $t1['x'] * $t1.nit""", """\
class _Res$u(dict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(name) from e

    __setattr__ = dict.__setitem__
    __delattr__ = dict.__delitem__""")
t("libpat", """\
$t1 = _Box$u($a, [$b, $K])
$t2 = copy.deepcopy($t1)
$t2.v[0] = $t2.v[0] * $K2
$r = $t1.v[0] + $t2.v[0] * $t1.p + copy.copy($t2).p""", """\
class _Box$u:
    def __init__(self, p, v):
        self.p = p
        self.v = v""")
t("libpat", "$r = _val$u(lambda $t1, $t2=$K: $t1 * $t2 + $b, $a)", """\
def _val$u(fn, *args):
    sig = inspect.signature(fn)
    bound = sig.bind(*args)
    bound.apply_defaults()
    return fn(*bound.args, **bound.kwargs)""")
t("libpat", "$r = _h$u($a, $b) + _h$u.__wrapped__($b, $K)", """\
def _deco$u(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs) * 2.0
    return wrapper


@_deco$u
def _h$u(p, q):
    return p * q + 0.5""")
t("libpat", """\
$t1 = _P$u($a, $b)._replace(y=$b * $K)
$r = $t1.x * $t1.y + sum($t1) + $t1[0]""", """\
_P$u = collections.namedtuple('_P$u', 'x y')""")
t("libpat", """\
$t1 = _C$u($a)
$r = $t1.sq + $t1.sq * $b""", """\
class _C$u:
    def __init__(self, a):
        self.a = a

    @functools.cached_property
    def sq(self):
        return self.a * self.a""")
t("libpat", """\
$t1 = _W$u(_Box$u($a, [$b]))
$r = $t1.p * $t1.v[0] + $t1.scale()""", """\
class _Box$u:
    def __init__(self, p, v):
        self.p = p
        self.v = v

    def scale(self):
        return self.p * 0.5""", """\
class _W$u:
    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)""")
t("libpat", "$r = sum(itertools.accumulate([$a, $b, $K], lambda $t1, $t2: $t1 * 0.5 + $t2)) + "
            "sum(itertools.starmap(operator.mul, zip([$a, $b], itertools.repeat($K))))")
t("libpat", """\
$r = 0.0
for $t1, $t2 in itertools.product([$a, $K], [$b, 1.0]):
    $r += $t1 * $t2 * 0.25
$r += max(itertools.chain([$a], [$b]), key=abs)""")
t("libpat", """\
$t1 = [$a]
with _scaled$u($t1) as $t2:
    $t3 = $t2[0] * $b
$r = $t3 + $t1[0]""", """\
@contextlib.contextmanager
def _scaled$u(box):
    old = box[0]
    box[0] = old * 2.0
    try:
        yield box
    finally:
        box[0] = old""")
t("libpat", "$r = _apply$u(_Op$u.ADD, $a, $b) * _apply$u(_Op$u.MUL, $b, $K)", """\
class _Op$u(enum.Enum):
    ADD = 1
    MUL = 2""", """\
def _apply$u(op, p, q):
    if op is _Op$u.ADD:
        return p + q
    if op == _Op$u.MUL:
        return p * q
    raise ValueError(op)""")
t("libpat", """\
$t1 = dataclasses.replace(_D$u($a, $b), q=$b * $K)
$r = sum(dataclasses.asdict($t1).values()) + dataclasses.astuple($t1)[0]""", """\
@dataclasses.dataclass(frozen=True)
class _D$u:
    p: float
    q: float""")
t("libpat", """\
$t1, $t2 = _Vec$u($a, $b)
$r = sum(_Vec$u($t2, $K)) * $t1 + len(_Vec$u($a, $b))""", """\
class _Vec$u:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __iter__(self):
        yield self.x
        yield self.y

    def __len__(self):
        return 2""")
t("libpat", """\
$r = 0.0
for $t1 in _Seq$u($a, $N):
    $r += $t1 * $b""", """\
class _Seq$u:
    def __init__(self, base, n):
        self.base, self.n = base, n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return self.base * (i + 1) * 0.5""")
t("libpat", """\
$t1 = _Pos$u($a)
$t1.v = $t1.v * $b
$r = $t1.v + $t1.v ** 2 * $K""", """\
class _Pos$u:
    def __init__(self, v):
        self.v = v

    @property
    def v(self):
        return self._v

    @v.setter
    def v(self, value):
        if value != value:
            raise ValueError("not a number")
        self._v = value""")
t("libpat", "$r = _Rect$u.from_pair($a, $b).area() + _Sq$u.from_pair($b, $K).area()", """\
class _Shape$u(abc.ABC):
    def __init__(self, w, h):
        self.w, self.h = w, h

    @classmethod
    def from_pair(cls, w, h):
        return cls(w, h)

    @abc.abstractmethod
    def area(self):
        ...""", """\
class _Rect$u(_Shape$u):
    def area(self):
        return self.w * self.h""", """\
class _Sq$u(_Rect$u):
    def area(self):
        return super().area() * 0.5 + self.w""")
t("libpat", """\
$t1 = _Box$u($a, [$b])
for $t2 in ('p',):
    setattr($t1, $t2, getattr($t1, $t2) * $K + getattr($t1, 'missing', 0.5))
$r = sum(v for k, v in vars($t1).items() if k == 'p') + $t1.__dict__['v'][0]""", """\
class _Box$u:
    def __init__(self, p, v):
        self.p = p
        self.v = v""")
t("libpat", """\
$t1 = [_Box$u($a, [1.0]), _Box$u($b, [2.0]), _Box$u($K, [3.0])]
$t1.sort(key=operator.attrgetter('p'))
$r = operator.attrgetter('p')($t1[0]) * operator.itemgetter(1)([$a, $b]) + operator.methodcaller('twice')($t1[-1])""", """\
class _Box$u:
    def __init__(self, p, v):
        self.p = p
        self.v = v

    def twice(self):
        return 2.0 * self.p""")
t("libpat", "$r = float(f'{$a:.17g}') * $b + float(repr($b))")
t("libpat", "$r = json.loads(json.dumps({'a': $a, 'b': [$b]}))['a'] * $K + $b")
t("libpat", "$r = float(fractions.Fraction($a)) * $b + float(fractions.Fraction($b).limit_denominator(1 << 60))")
t("libpat", "$r = statistics.fmean([$a, $b, $K]) + statistics.mean([$a, $b]) * $K + statistics.pstdev([$a, $b, 0.1])")
t("libpat", "$r = heapq.nsmallest(2, [$a, $b, $K])[-1] + bisect.bisect([0.5, 1.0], $a) * $b")
t("libpat", "$r = struct.unpack('d', struct.pack('d', $a))[0] * $b + float.fromhex($b.hex())")
t("libpat", "$r = sum(array.array('d', [$a, $b * $K])) + math.prod([$a, $b])")
t("libpat", """\
$t1 = _Reg$u.make('lin', $a)
$r = $t1.run($b) + _Reg$u.make('sq', $b).run($K)""", """\
class _Reg$u:
    kinds = {}

    def __init_subclass__(cls, name=None, **kw):
        super().__init_subclass__(**kw)
        _Reg$u.kinds[name] = cls

    def __init__(self, k):
        self.k = k

    @classmethod
    def make(cls, name, k):
        return cls.kinds[name](k)""", """\
class _Lin$u(_Reg$u, name='lin'):
    def run(self, v):
        return self.k * v""", """\
class _Sq$u(_Reg$u, name='sq'):
    def run(self, v):
        return self.k * v * v""")
t("libpat", """\
$t1 = types.SimpleNamespace(p=$a, q=$b)
$t1.p *= $K
$r = $t1.p + $t1.q * $t1.p + sum(vars($t1).values())""")
t("libpat", """\
$t1 = collections.defaultdict(float)
for $t2, $t3 in (('u', $a), ('v', $b), ('u', $K)):
    $t1[$t2] += $t3 * $t3
$r = $t1['u'] * $t1['v'] + collections.Counter(a=2)['a'] * $a""")
t("libpat", """\
$t1 = collections.OrderedDict(p=$a)
$t1['q'] = $b
$t1.move_to_end('p')
$r = list($t1.values())[-1] * $t1['q'] + collections.ChainMap({'p': $K}, $t1)['p']""")

# --- paths found by hand on 2026-11-28 (each was silently wrong or crashed in reverse mode) -------------------
t("libpat", """\
try:
    raise ValueError('bad', $a * $K)
except ValueError as $t1:
    $t2 = $t1.args[1]
$r = $t2 * $b""")
t("libpat", "$r = min([], default=$a) * $b + sum([$a, $b], start=$K)")
t("libpat", """\
$t1 = {}
$t1.setdefault('u', []).append($a)
$t1.get('u').append($b * $K)
for $t2 in $t1.values():
    $t2.append($K)
$r = $t1['u'][0] * $t1['u'][1] + $t1['u'][2]""")
t("libpat", "$r = (collections.Counter(a=$a) + collections.Counter(a=$b))['a'] * $K + 1.0 + _Rd$u($a)", """\
class _Rd$u:
    def __init__(self, v):
        self.v = v

    def __radd__(self, other):
        return other + self.v * 3.0""")
t("libpat", """\
$r = 0.0
for $t1 in _It$u([$a, $b], $K):
    $r += $t1 * $a""", """\
class _It$u:
    def __init__(self, items, k):
        self.items, self.k, self.i = items, k, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= len(self.items):
            raise StopIteration
        self.i += 1
        return self.items[self.i - 1] * self.k""")
t("libpat", """\
$t1 = collections.UserDict()
$t1['p'] = $a * $K
$t1['q'] = $b
del $t1['q']
$t2 = _Acc$u()
$t2 += $a
$t2 += $b * $t1['p']
$r = $t1.pop('p') + $t2.t""", """\
class _Acc$u:
    def __init__(self):
        self.t = 0.0

    def __iadd__(self, v):
        self.t = self.t + v * 2.0
        return self""")
t("libpat", "$r = _Mk$u($a).v * $b + complex($a, $b * $K).imag * abs(complex($b, $a))", """\
class _Meta$u(type):
    def __call__(cls, *args):
        obj = super().__call__(*args)
        obj.v = obj.v * 2.0
        return obj""", """\
class _Mk$u(metaclass=_Meta$u):
    def __init__(self, v):
        self.v = v * v""")

# --- idioms of library code (2026-11-28, session 14): the standard library's containers, copies, iteration
# tools and class machinery holding differentiated values ---------------------------------------------------
t("idiom", """\
$t1 = dict.fromkeys(('p', 'q'), $a)
$t1['q'] = $t1['q'] * $b
$r = sum($t1.values()) + types.MappingProxyType($t1)['p'] * $K""")
t("idiom", """\
$t1 = _Pt$u($a, $b)
$t2 = copy.copy($t1)
$t2.x = $t2.x * $K
$t3 = copy.deepcopy([$t1, {'k': $b}])
$r = $t1.x + $t2.x * $t3[0].y + $t3[1]['k']""", """\
class _Pt$u:
    def __init__(self, x, y):
        self.x, self.y = x, y""")
t("idiom", """\
$t1 = list(itertools.accumulate([$a, $b, $K], lambda p, q: p * 0.5 + q))
$r = sum(itertools.starmap(operator.mul, zip($t1, itertools.chain([$b], itertools.repeat($K, 2)))))""")
t("idiom", """\
$t1 = sorted([($b, 1), ($a, 2), ($K, 3)], key=lambda p: p[1])
$r = max($t1, key=lambda p: p[1])[0] * min([$a, $b, $K], key=abs) + sum(x for x, _ in itertools.islice($t1, 2))""")
t("idiom", """\
$t1 = _Nt$u($a, $b)._replace(q=$K * $b)
$r = sum($t1._asdict().values()) * $t1.p + $t1[1]""", """\
_Nt$u = collections.namedtuple('_Nt$u', 'p q')""")
t("idiom", """\
$t1 = _Sl$u($a)
$t1.v = $t1.v * $b
$t1.v = $t1.v + $K
$r = $t1.v * $t1.w""", """\
class _Sl0$u:
    __slots__ = ('v',)

    def __init__(self, v):
        self.v = v""", """\
class _Sl$u(_Sl0$u):
    __slots__ = ('w',)

    def __init__(self, v):
        super().__init__(v)
        self.w = v * 0.5""")
t("idiom", """\
$t1 = _Lazy$u($a)
$r = $t1.sq * $b + $t1.sq + _Lazy$u($b).sq""", """\
class _Lazy$u:
    def __init__(self, v):
        self.v = v

    @functools.cached_property
    def sq(self):
        return self.v * self.v + 0.25""")
t("idiom", """\
$t1 = _Wrap$u(_Inner$u($a))
$r = $t1.val * $b + $t1.scaled($K)""", """\
class _Inner$u:
    def __init__(self, v):
        self.val = v

    def scaled(self, k):
        return self.val * k""", """\
class _Wrap$u:
    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)""")
t("idiom", """\
$t1 = {k: v * $K for k, v in zip('pqr', [$a, $b, $a * $b]) if k != 'q'}
$r = sum(sorted($t1.values(), reverse=True)[:1]) + len({round($K, 2), 0.5}) * $b""")
t("idiom", "$r = divmod($a + 3.0, 0.7)[1] * $b + ($b + 4.0) % 1.3 - ($a + 5.0) // 0.9 * $K")
t("idiom", "$r = math.fsum([$a, $b * $K, 0.1]) + math.copysign($a, $b) * math.fabs($b) + math.ldexp($a, 2)")
t("idiom", """\
$t1 = collections.deque([$a, $b], maxlen=3)
$t1.appendleft($K * $b)
$t1.rotate(1)
$r = $t1[0] * $t1[-1] + $t1.popleft()""")
t("idiom", """\
$t1 = [$a, $b, $K]
$t1[1:2] = [$b * 2.0, $a]
$t1.reverse()
$t1.insert(1, $b)
$r = $t1.pop(0) * $t1[1] + $t1[-1] * len($t1)""")
t("idiom", """\
$t1 = _Temp$u($a)
$t1.celsius = $t1.celsius * $K + $b
$r = $t1.kelvin * 0.01 + $t1.celsius""", """\
class _Temp$u:
    def __init__(self, c):
        self._c = c

    @property
    def celsius(self):
        return self._c

    @celsius.setter
    def celsius(self, v):
        self._c = v

    kelvin = property(lambda self: self._c + 273.15)""")
t("idiom", """\
$t1 = _Cnt$u()
$t1.add($a)
$t1.add($b * $K)
$r = _Cnt$u.total * 0.0 + $t1.s * $b""", """\
class _Cnt$u:
    total = 0

    def __init__(self):
        self.s = 0.0

    def add(self, v):
        type(self).total += 1
        self.s += v""")
t("idiom", """\
$t1 = functools.partial(_lin$u, q=$b)
$r = $t1($a) + functools.reduce(lambda p, q: p * q, [$a, $b, $K], 1.0)""", """\
def _lin$u(p, q, w=0.5):
    return p * w + q""")
t("idiom", """\
$t1 = _Col$u.RED
$r = $t1.value * $a + _Col$u(2).value * $b + len(_Col$u) * $K""", """\
class _Col$u(enum.Enum):
    RED = 1
    BLUE = 2""")
t("idiom", """\
$t1 = [($a, 'p'), ($b, 'q')]
$t2 = dict((k, v) for v, k in $t1)
$t2.update(r=$K, p=$t2['p'] * $b)
$r = $t2['p'] + $t2.get('s', $a) + next(iter($t2.values()))""")
t("idiom", """\
$t1 = _Stack$u()
for $t2 in ($a, $b, $K):
    $t1.push($t2 * $t2)
$r = $t1.pop() + $t1.peek() * $a + len($t1)""", """\
class _Stack$u(list):
    def push(self, v):
        self.append(v)

    def peek(self):
        return self[-1]""")
t("idiom", """\
$t1 = _Cfg$u(p=$a)
$t1.update(q=$b)
$r = $t1.p * $t1['q'] + $K""", """\
class _Cfg$u(dict):
    __getattr__ = dict.__getitem__""")

# --- idioms of optimisation benchmark suites (2026-11-29, session 19: each gave a silently wrong
# derivative before): a name rebound to a callee's result, `list.extend` of an iterator, a callee
# changing in place what a `*spread` passed it ----------------------------------------------------------
t("rebind", """\
$t1 = [$a, $b * $K]
$t1 = _sq$u($t1)
$t1 = _sq$u($t1)
$r = $t1[0] + $t1[1] * $K2""", """\
def _sq$u(y):
    t = []
    for v in y:
        t.append(v * v * 0.5 + 0.1)
    return t""")
t("rebind", """\
$t1 = [$a, $b]
$t2 = $t1
$t1 = _fill$u($t1, $K)
$r = $t1[0] * $t2[1] + $t2[0]""", """\
def _fill$u(y, k):
    y[0] = y[0] * k + y[1]
    return y""")
t("list", """\
$t1 = [$a]
$t1.extend($b * $t2 for $t2 in ($K, $K2))
$t1.append($a * $b)
$r = $t1[1] + $t1[2] * $t1[0] + $t1[3]""")
t("list", """\
$t1 = []
$t1.extend(map(math.sin, [$a, $b]))
$t1.extend(iter([$a * $K]))
$r = $t1[0] * $t1[1] + $t1[2]""")
t("spread", """\
$t1 = [$a, $b]
$t2 = ($t1, $K)
_spread$u(*$t2)
$r = $t1[0] * $t1[1] + $b""", """\
def _spread$u(y, k):
    y[0] = y[0] * k + y[1] * 0.5""")
t("spread", """\
$t1 = _Dec$u($a)
$r = _twice$u($t1, $b) + $t1.m($K)""", """\
def _fwd$u(method):
    def wrapper(*args, **kwargs):
        return method(*args, **kwargs)
    return wrapper


class _Dec$u:
    def __init__(self, w):
        self.w = w

    @_fwd$u
    def m(self, r):
        return self.w * r * r + r


def _twice$u(obj, r):
    return obj.m(r) + obj.m(r) * obj.w""")
t("kwargs", "$r = _kwf$u(0.5, **dict(a=$a, b=$b * $K)) + _kwf$u(**dict(zip(('x', 'a'), ($b, $a))))", """\
def _kwf$u(x, a=1.0, b=0.0):
    return a * x + b * b + math.sin(a) * 0.1""")
