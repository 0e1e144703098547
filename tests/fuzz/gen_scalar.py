"""Templates of the `scalar` suite: each turns one or more float variables ($a, $b, $c) into a new one ($r).

A template is (feature, body, helpers): `body` is the code inside `f` (dedented), `helpers` module-level
code (classes, helper functions, globals). `$t1`..`$t4` are fresh local names, `$u` a suffix unique to
the instance (for module-level names), `$K`, `$K2`, `$K3` constants in [0.3, 0.9], `$N` an int in 2..4,
`$M` an int in 0..2. Each body keeps values of order one when its inputs are of order one.
"""

T = []


def t(feature, body, *helpers):
    T.append((feature, body, helpers))


# helper classes more than one template uses (each program gets its own copy, renamed by $u)
_SHARED_BOX = """\
class _Box$u:
    def __init__(self, p, v):
        self.p = p
        self.v = v"""
_SHARED_DA = """\
class _DA$u:
    def __init__(self, v):
        self.v = v
        self.log = []

    def __delattr__(self, name):
        self.log.append(getattr(self, name))
        object.__delattr__(self, name)"""
_SHARED_FL = """\
class _Fl$u:
    def __init__(self, v):
        self.v = v

    def __float__(self):
        return self.v * 2.0"""
_SHARED_ISB = """\
class _ISB$u:
    last = 0.0

    def __init_subclass__(cls, scale=1.0, **kw):
        super().__init_subclass__(**kw)
        cls.scale = scale
        _ISB$u.last = scale * 2.0"""
_SHARED_IT = """\
class _It$u:
    def __init__(self, *v):
        self.v = v

    def __iter__(self):
        for x in self.v:
            yield x * 0.5"""
_SHARED_KEY = """\
class _Key$u:
    def __init__(self, name, v):
        self.name, self.v = name, v

    def __eq__(self, o):
        return isinstance(o, _Key$u) and o.name == self.name

    def __hash__(self):
        return hash(self.name)"""
_SHARED_ST = """\
class _St$u:
    def __init__(self, p, q):
        self.p, self.q = p, q

    def __getstate__(self):
        return {'p': self.p * 2.0, 'q': self.q}

    def __setstate__(self, st):
        self.__dict__.update(st)
        self.q = self.q + 1.0"""
_SHARED_SUP = """\
class _Sup$u:
    def __enter__(self):
        return self

    def __exit__(self, et, ev, tb):
        self.caught = ev.args[0] if ev is not None else 0.0
        return True"""


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
$r = $t1.v[0] + $t2.v[0] * $t1.p + copy.copy($t2).p""", _SHARED_BOX)
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
$r = sum(v for k, v in vars($t1).items() if k == 'p') + $t1.__dict__['v'][0]""", _SHARED_BOX)
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

# --- implicit calls (2026-12-04, session 49): places where C or the interpreter calls Python code on its own
# (attribute hooks, descriptors, class machinery, numeric and container protocols drawn by builtins, itertools,
# heapq, statistics, copy, operator) or where values flow through C machinery (dict keys kept on assignment,
# live dict views, lazy iterators over a list changed through an alias) -------------------------------------
def ti(body, *helpers):
    """An `implicit` template: its inputs enter through math.tanh (locals `<r>a`, `<r>b`, `<r>c`), so that
    chains of these templates, many of which multiply their inputs, keep values of order one."""
    pre = []
    for v in "abc":
        if "$" + v in body:
            pre.append(f"${{r}}{v} = math.tanh(${v})")
            body = body.replace("$" + v, f"${{r}}{v}")
    t("implicit", "\n".join(pre) + "\n" + body, *helpers)


ti("""\
$t1 = _SA$u($a)
$t1.v = $t1.v * $b
$t1.w = $K
$r = $t1.v * 0.25 + $t1.w * $t1.v""", """\
class _SA$u:
    def __init__(self, v):
        self.v = v

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value * 2.0 if name == 'v' else value)""")
ti("$r = _GA$u($a).v * $b + _GA$u($b).v + _GA$u($K).k", """\
class _GA$u:
    k = 0.5

    def __init__(self, v):
        self.v = v

    def __getattribute__(self, name):
        val = object.__getattribute__(self, name)
        return val * 0.5 if name == 'v' else val""")
ti("""\
$t1 = _GT$u($a)
$r = $t1.sq * $b + getattr($t1, 'sq2') + getattr($t1, 'nope', $K) + hasattr($t1, 'other') * $b""", """\
class _GT$u:
    def __init__(self, v):
        self.v = v

    def __getattr__(self, name):
        if name.startswith('sq'):
            return self.v * self.v
        raise AttributeError(name)""")
ti("""\
$t1 = _DS$u($a, $b)
$t1.p = $t1.p + $t1.q
$r = $t1.p * $t1.q + vars($t1)['_q'] * $K""", """\
class _Half$u:
    def __set_name__(self, owner, name):
        self.key = '_' + name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return getattr(obj, self.key)

    def __set__(self, obj, value):
        setattr(obj, self.key, value * 0.5)""", """\
class _DS$u:
    p = _Half$u()
    q = _Half$u()

    def __init__(self, p, q):
        self.p = p
        self.q = q""")
ti("""\
$t1 = _LC$u($a)
$t2 = $t1.sq
$t1.v = $b
$r = $t2 + $t1.sq * $K + _LC$u($b).sq""", """\
class _Lazy$u:
    def __init__(self, fn):
        self.fn, self.name = fn, fn.__name__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        val = self.fn(obj)
        obj.__dict__[self.name] = val
        return val""", """\
class _LC$u:
    def __init__(self, v):
        self.v = v

    @_Lazy$u
    def sq(self):
        return self.v * self.v""")
ti("""\
class $t1(_ISB$u, scale=$a):
    def val(self, v):
        return self.scale * v
$r = $t1().val($b) + $t1.scale * $K + _ISB$u.last * $b""", _SHARED_ISB)
ti("$r = _Fn$u($a, $b) * $K + _Fn$u($b, $K)", """\
class _MC$u(type):
    def __call__(cls, *args):
        obj = cls.__new__(cls)
        obj.__init__(*args)
        return obj.result()""", """\
class _Fn$u(metaclass=_MC$u):
    def __init__(self, p, q):
        self.p, self.q = p, q

    def result(self):
        return self.p * self.q + self.p""")
ti("""\
$t1 = _F$u($a, $K) + $b
$t2 = $t1 * $b
$r = float($t2) + float($t2 * 0.5) + float(-_F$u($b)) * $K""", """\
class _F$u(float):
    def __new__(cls, v, k=1.0):
        return super().__new__(cls, v * k)

    def __add__(self, o):
        return _F$u(float(self) + float(o))

    def __mul__(self, o):
        return _F$u(float(self) * float(o), 1.0)

    def __neg__(self):
        return _F$u(float(self), -0.5)""")
ti("""\
$t1 = _Pair$u($a, $b) + _Pair$u($K, $a)
$r = $t1.p * $t1.q + sum($t1) + len($t1) * $b""", """\
class _Pair$u(tuple):
    def __new__(cls, p, q):
        return super().__new__(cls, (p, q * 0.5))

    @property
    def p(self):
        return self[0]

    @property
    def q(self):
        return self[1]

    def __add__(self, o):
        return _Pair$u(self.p + o.p, (self.q + o.q) * 2.0)""")
ti("""\
$t1 = [$a, $b, $K, $a * $b]
$r = $t1[_Ix$u($M)] * $b + $t1[_Ix$u(1):_Ix$u(3)][-1] + operator.index(_Ix$u(2)) * $a + [$b, $a][_Ix$u(1)]""", """\
class _Ix$u:
    def __init__(self, i):
        self.i = i

    def __index__(self):
        return self.i""")
ti("$r = float(_Fl$u($a)) * $b + math.sin(_Fl$u($b)) + math.exp(_Fl$u($a) ) * $K", _SHARED_FL)
ti("""\
$t1 = _Bag$u([$a, $b])
$t2 = _Bag$u([])
$r = ($t1 and $t1.items[0] * $b) + (len($t1) * $K if not $t2 else 0.0) + ($t2 or _Bag$u([$K, $a])).items[1]
$t3 = _Cd$u($a, $N)
while $t3:
    $t3.step($K)
$r = $r + $t3.v * $b + (0.5 if _Cd$u($b, 0) else $b)""", """\
class _Bag$u:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)""", """\
class _Cd$u:
    def __init__(self, v, n):
        self.v, self.n = v, n

    def __bool__(self):
        return self.n > 0

    def step(self, k):
        self.v = self.v * k + 0.1
        self.n -= 1""")
ti("""\
$t1 = _It$u($a, $b, $K)
$r = sum($t1) + max($t1) * min($t1) + sorted($t1)[1] + tuple($t1)[0] * list($t1)[-1] + sum(sorted($t1, reverse=True)[:2])""", _SHARED_IT)
ti("$r = sum(p * q for p, q in zip(_Sq$u($a, 3), [$b, $K, 1.0])) + sum(map(math.sin, _Sq$u($b, $N))) + "
              "sum(filter(lambda z: z > 0.0, _Sq$u($a, 2))) + sum(i * z for i, z in enumerate(_Sq$u($b, 3)))", """\
class _Sq$u:
    def __init__(self, v, n):
        self.v, self.n = v, n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError(i)
        return self.v * (i + 1) * 0.3""")
ti("""\
$t1 = _It$u($a, $b, $K)
$r = statistics.fmean($t1) + sum(itertools.islice(iter($t1), 2)) * 0.2 + heapq.nlargest(1, $t1)[0] + sum(itertools.accumulate($t1)) * 0.1 + statistics.median($t1)""", _SHARED_IT)
ti("""\
$t1 = _It$u($a, $b, $K)
$t2, $t3 = itertools.tee($t1)
$r = sum(p * q for p, q in itertools.pairwise($t2)) + sum(p + q for p, q in itertools.zip_longest($t3, [1.0], fillvalue=$b))
$r = $r + sum(itertools.compress(_It$u($a, $b), [1, 0])) + sum(itertools.takewhile(lambda z: z < 100.0, _It$u($b, $a)))
$r = $r + sum(filter(lambda z: z < 100.0, $t1)) + sum(itertools.chain.from_iterable([$t1, [$K]]))""", _SHARED_IT)
ti("""\
$t1 = dict(_KV$u(p=$a, q=$b))
$t2 = collections.OrderedDict(_KV$u(s=$K, z=$a))
$r = $t1['p'] * $t1['q'] + $t2['s'] + $t2['z']""", """\
class _KV$u:
    def __init__(self, **kw):
        self.kw = kw

    def __iter__(self):
        for k in sorted(self.kw):
            yield k, self.kw[k] * 2.0""")
ti("$r = ($a * $b if $a in _Rng$u(-10.0, 10.0) else $b) + ($K if 100.0 in _Rng$u($a, $b + 2.0) else $a * $K) + "
              "($b in _Bx$u([$a, $b])) * $a", """\
class _Rng$u:
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __contains__(self, v):
        return self.lo <= v <= self.hi""", """\
class _Bx$u:
    def __init__(self, items):
        self.items = items

    def __contains__(self, v):
        return any(v == w for w in self.items)""")
ti("""\
$t1 = {_Key$u('p', 0.5): $b, _Key$u('q', $K): $a}
$t1[_Key$u('p', 0.0)] = $t1[_Key$u('p', 1.0)] * $K + $t1[_Key$u('q', 1.0)]
$t2 = {_Key$u('s', 1.0), _Key$u('s', 2.0)}
$r = sum($t1.values()) + sum(k.v for k in $t1) * $b + $t1.get(_Key$u('z', 0.0), $K2) + next(iter($t2)).v * $b""", _SHARED_KEY)
ti("""\
$t1 = [_Ord$u($a, $b), _Ord$u($b * $K, $a), _Ord$u($K, 1.0)]
$r = sorted($t1)[0].v * max($t1).v + min($t1).k + heapq.nsmallest(2, $t1)[1].v + ($t1[0] >= $t1[1]) * $a
$t2 = []
for $t3 in $t1:
    heapq.heappush($t2, $t3)
$t4 = heapq.heappop($t2)
$r = $r + $t4.v * $t4.k + heapq.heappop($t2).k * $b""", """\
@functools.total_ordering
class _Ord$u:
    def __init__(self, k, v):
        self.k, self.v = k, v

    def __lt__(self, o):
        return self.k < o.k

    def __eq__(self, o):
        return self.k == o.k""")
ti("""\
$t1 = list(reversed(_Rv$u($a, $b, $K)))
$r = $t1[0] * $t1[1] + sum(reversed(_Rv$u($b))) + sum(reversed(_Sq2$u($a, $b, $K))) + list(reversed(_Sq2$u($b, $a)))[0] * $K""", """\
class _Rv$u:
    def __init__(self, *v):
        self.v = list(v)

    def __reversed__(self):
        for x in self.v[::-1]:
            yield x * 2.0""", """\
class _Sq2$u:
    def __init__(self, *v):
        self.v = v

    def __len__(self):
        return len(self.v)

    def __getitem__(self, i):
        return self.v[i] * 0.5""")
ti("""\
$t1 = [$a]
with _Scale$u($t1, $b) as $t2:
    $t3 = $t1[0] * $K + $t2.old
$r = $t1[0] * $t3 + $t2.old * $b""", """\
class _Scale$u:
    def __init__(self, box, k):
        self.box, self.k = box, k

    def __enter__(self):
        self.old = self.box[0]
        self.box[0] = self.old * self.k
        return self

    def __exit__(self, *exc):
        self.box[0] = self.box[0] + self.old
        return False""", _SHARED_SUP)
ti("""\
$t1 = _Aff$u($a, $K)
$r = sum(map($t1, [$b, $a, 1.0])) + sum(map(_Aff$u($b, 0.1), itertools.repeat($a, 2))) + max(map($t1, (-5.0, $b)))
$r = $r + sorted([$a, $b, $K], key=_Aff$u(-1.0, 0.0))[0] + sum(itertools.starmap(_Aff$u($K, $a), [($b,)]))""", """\
class _Aff$u:
    def __init__(self, w, c):
        self.w, self.c = w, c

    def __call__(self, v):
        return self.w * v + self.c""")
ti("$r = _sd$u($a) + _sd$u([$a, $b]) * $K + _sd$u(($b, $K, $a)) + _sd$u(_Box$u($b))", """\
class _Box$u:
    def __init__(self, v):
        self.v = v""", """\
@functools.singledispatch
def _sd$u(v):
    return v * 2.0


@_sd$u.register
def _sdl$u(v: list):
    return sum(_sd$u(z) for z in v)


@_sd$u.register(tuple)
def _sdt$u(v):
    return v[0] * v[-1]


@_sd$u.register(_Box$u)
def _sdb$u(v):
    return v.v * v.v""")
ti("""\
$t1 = operator.add(_Vec$u($a, $b), operator.mul(_Vec$u($K, $a), $b))
$r = operator.matmul($t1, _Vec$u($b, 0.5)) + abs(operator.neg($t1)) * 0.1 + operator.getitem($t1, 1)
$r = $r + functools.reduce(operator.add, [_Vec$u($a, 0.0), $t1]).x + operator.iadd(_Vec$u($a, $b), $t1).y""", """\
class _Vec$u:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __add__(self, o):
        return _Vec$u(self.x + o.x, self.y + o.y)

    def __mul__(self, k):
        return _Vec$u(self.x * k, self.y * k)

    def __neg__(self):
        return _Vec$u(-self.x, -self.y)

    def __abs__(self):
        return math.hypot(self.x, self.y)

    def __matmul__(self, o):
        return self.x * o.x + self.y * o.y

    def __getitem__(self, i):
        return (self.x, self.y)[i]""")
ti("""\
$t1 = _Cp$u($a, [$b])
$t2 = copy.copy($t1)
$t3 = copy.deepcopy($t1)
$t2.hist.append($K * $a)
$r = $t2.v * $t3.v + sum($t1.hist) + $t3.hist[0] + len($t3.hist)""", """\
class _Cp$u:
    def __init__(self, v, hist):
        self.v, self.hist = v, hist

    def __copy__(self):
        return _Cp$u(self.v * 2.0, self.hist)

    def __deepcopy__(self, memo):
        return _Cp$u(self.v + 1.0, [h * 0.5 for h in self.hist])""")
ti("""\
$t1 = copy.copy(_Rd$u($a, $b))
$t2 = copy.deepcopy(_Rd$u($t1.p, $K))
$r = $t1.p * $b + $t2.p * $t2.q""", """\
class _Rd$u:
    def __init__(self, p, q):
        self.p, self.q = p, q

    def __reduce__(self):
        return (_Rd$u, (self.q, self.p))""", _SHARED_ST)
ti("""\
$t1 = _PI$u($a, $b)
$t1.hist.append($K)
$t2 = _PI$u($b)
$t3 = _Fz$u($a, $b)
$t4 = dataclasses.replace($t3, p=$K)
$r = $t1.s + sum($t1.hist) * $t2.s + len($t2.hist) + $t3.s * $t4.s + ($t3 == _Fz$u($a, $b)) * $b""", """\
@dataclasses.dataclass
class _PI$u:
    p: float
    q: float = 0.5
    hist: list = dataclasses.field(default_factory=list)

    def __post_init__(self):
        self.s = self.p * self.q
        self.hist.append(self.p)""", """\
@dataclasses.dataclass(frozen=True)
class _Fz$u:
    p: float
    q: float

    def __post_init__(self):
        object.__setattr__(self, 's', self.p + self.q * 2.0)""")
ti("$r = _Gen$u[$a]().f($b) + _Gen$u[$K].scale * $b + _Gen$u.scale", """\
class _Gen$u:
    scale = 1.0

    def __class_getitem__(cls, k):
        return type('_GenK', (cls,), {'scale': k})

    def f(self, v):
        return self.scale * v""")
ti("""\
_CACHE$u.clear()
$r = _cached$u('p', $a) + _cached$u('p', $b) * $K + _cached$u('q', $b) + len(_CACHE$u)""", """\
_CACHE$u = {}


def _cached$u(key, v):
    if key not in _CACHE$u:
        _CACHE$u[key] = v * v
    return _CACHE$u[key]""")
ti("""\
$t1 = _Obj$u($a, $K)
$t1.m = types.MethodType(_meth$u, $t1)
$t2 = types.MethodType(lambda self, v: self.k * v * v, _Obj$u($b, 0.0))
$r = $t1.m($b) + $t2($a) + _Obj$u.twice($t1)""", """\
def _meth$u(self, v):
    return self.k * v + self.c""", """\
class _Obj$u:
    def __init__(self, k, c):
        self.k, self.c = k, c

    def twice(self):
        return self.k * 2.0""")
ti("""\
$t1 = [$a, $b, $K]
$t2 = $t1
$t3 = reversed($t1)
$t4 = itertools.islice($t1, 1, None)
$t2[0] = $t2[0] * $b
$t2[2] = $a * $K
$r = next($t3) * $K2 + sum($t4) + $t1[0]""")
ti("""\
$t1 = {'p': $a, 'q': $b}
$t2 = $t1.values()
$t3 = $t1.items()
_bump$u($t1, $K)
$r = sum($t2) + sum(v * v for k, v in $t3 if k == 'q') + sum($t1.keys() & {'p'} and [$b])""", """\
def _bump$u(d, k):
    d['p'] = d['p'] * k + d['q']
    d['r'] = k""")
ti("""\
$t1 = _Store$u()
$t1['p'] = $a
$t1['q'] = $b * $K
del $t1['p']
$t2 = [$a, $b, $K, 1.0]
del $t2[1:3]
$t3 = types.SimpleNamespace(u=$a, w=$b)
del $t3.u
$r = $t1.last * $t1['q'] + sum($t2) + getattr($t3, 'u', $K) * $t3.w""", """\
class _Store$u:
    def __init__(self):
        self.d = {}

    def __setitem__(self, k, v):
        self.d[k] = v * 2.0

    def __getitem__(self, k):
        return self.d[k]

    def __delitem__(self, k):
        self.last = self.d.pop(k)""", _SHARED_DA)
ti("""\
$t1 = _Acc$u($a)
$t2 = $t1
$t1 += $b
$t3 = _Imm$u($a)
$t4 = $t3
$t3 += $b
$r = $t2.v * $K + $t4.v + $t3.v * $t1.v
$t1 = [_Acc$u($K)]
$t1[0] += $a
$t2 = types.SimpleNamespace(acc=_Imm$u($b))
$t2.acc += $K
$r = $r + $t1[0].v * $b + $t2.acc.v""", """\
class _Acc$u:
    def __init__(self, v):
        self.v = v

    def __iadd__(self, o):
        self.v = self.v + o
        return self""", """\
class _Imm$u:
    def __init__(self, v):
        self.v = v

    def __iadd__(self, o):
        return _Imm$u(self.v + o * 2.0)""")
ti("$r = sum([_M$u($a), _M$u($b)], _M$u($K)).v + sum([_M$u($a), _M$u($b)]).v * $b + ($a * _L$u($b)).v + _L$u($a) * _L$u($K)", """\
class _M$u:
    def __init__(self, v):
        self.v = v

    def __add__(self, o):
        return _M$u(self.v + (o.v if isinstance(o, _M$u) else o))

    def __radd__(self, o):
        return _M$u(o + self.v * 2.0)""", """\
class _L$u:
    def __init__(self, v):
        self.v = v

    def __mul__(self, o):
        if isinstance(o, _L$u):
            return self.v * o.v
        return NotImplemented

    def __rmul__(self, o):
        return _L$u(o * self.v * 0.5)""")
ti("""\
$t1 = _Box$u($a)
vars($t1).update(q=$b * $K, p=$t1.p * $b)
$t1.__dict__['s'] = $t1.p + $t1.q
$t1.__dict__.setdefault('p', 100.0)
$r = $t1.s * $t1.p + $t1.total()""", """\
class _Box$u:
    def __init__(self, p):
        self.p = p

    def total(self):
        return sum(self.__dict__.values())""")
ti("""\
$t1 = _NT$u._make(iter([$a, $b]))
$t2 = $t1._replace(p=$K)
$r = $t1.s + $t2.s + sum(_NT$u(*map(lambda z: z * 2.0, ($a, $b)))) + _NT$u.unit($b).q""", """\
class _NT$u(collections.namedtuple('_NT0$u', 'p q')):
    __slots__ = ()

    @property
    def s(self):
        return self.p * self.q

    @classmethod
    def unit(cls, v):
        return cls(1.0, v * 0.5)""")
ti("""\
$t1 = _Num$u($a)
$r = abs($t1) + abs(-$t1) * $b + (2.0 ** $t1) * $K + pow($t1, 2).v + (+$t1).v""", """\
class _Num$u:
    def __init__(self, v):
        self.v = v

    def __abs__(self):
        return self.v * self.v + 0.5

    def __neg__(self):
        return _Num$u(-self.v * 0.5)

    def __pos__(self):
        return _Num$u(self.v + 1.0)

    def __pow__(self, e):
        return _Num$u(self.v ** e)

    def __rpow__(self, base):
        return base ** math.tanh(self.v)

    def __round__(self, n=None):
        return self.v * 2.0""")
ti("""\
$t1 = [_E$u(1, $a), _E$u(2, $b), _E$u(3, $K)]
$t1.remove(2)
$r = $t1[$t1.index(3)].v * $t1[0].v + $t1.count(1) * $b + (2 in $t1) * $a + (_E$u(3, 0.0) in $t1) * $b""", """\
class _E$u:
    def __init__(self, k, v):
        self.k, self.v = k, v

    def __eq__(self, o):
        return self.k == getattr(o, 'k', o)

    __hash__ = None""")

# the parts of the templates above that reverse mode refuses, alone (so that the rest of each is checked there)
ti("$r = math.hypot(_Fl$u($a), $K) + math.fsum([_Fl$u($b), $K]) + math.sqrt(_Fl$u($b * $b + 0.1))", _SHARED_FL)
ti("$r = sum(itertools.islice(itertools.cycle(_It$u($a, $b, $K)), 4)) * 0.2 + sum(itertools.filterfalse(lambda z: z > 100.0, _It$u($b, $a)))", _SHARED_IT)
ti("""\
$t1 = dict(_Map$u($a, $b))
$t2 = {**_Map$u($b, $K)}
$r = $t1['p'] * $t2['q'] + $t1['q'] + _kw$u(**_Map$u($a, $K))""", """\
class _Map$u:
    def __init__(self, p, q):
        self.p, self.q = p, q

    def keys(self):
        return ['p', 'q']

    def __getitem__(self, k):
        return getattr(self, k) * 1.5""", """\
def _kw$u(p, q):
    return p * q""")
ti("""\
$t1 = {_Key$u('p', $a): $b, _Key$u('q', $K): $a}
$t1[_Key$u('p', 0.0)] = $t1[_Key$u('p', 1.0)] * $K
$t2 = {_Key$u('s', $a), _Key$u('s', $b)}
$r = sum(k.v for k in $t1) * $b + sum($t1.values()) + next(iter($t2)).v * $b""", _SHARED_KEY)
ti("""\
with _Sup$u() as $t1:
    raise ValueError($a * $b)
$r = $t1.caught + $b""", _SHARED_SUP)
ti("""\
$t1 = copy.copy(_St$u($b, $a))
$t2 = copy.deepcopy([_St$u($K, $a)])
$r = $t1.p * $t1.q + $t2[0].p * $b""", _SHARED_ST)
ti("""\
$t1 = _DA$u($a)
$t1.w = $b * $K
del $t1.v
del $t1.w
$r = sum($t1.log) * $b + len($t1.log)""", _SHARED_DA)
ti("$r = round(_Num$u($a)) + round(_Num$u($b), 1) * $K", """\
class _Num$u:
    def __init__(self, v):
        self.v = v

    def __round__(self, n=None):
        return self.v * 2.0""")
ti("""\
class $t1(_ISB$u, scale=$K):
    def val(self, v):
        return self.scale * v * v
$r = $t1().val($b) + $t1.scale * $a + _ISB$u.last * $b""", _SHARED_ISB)

# found by hand while writing these (each silently wrong in reverse mode on 2026-12-04): a data descriptor keeping
# its value in the instance __dict__ under its own name; C constructors drawing a class that iterates in Python
ti("""\
$t1 = _TD$u($a, $b)
$t1.p = $t1.p + $K
$r = $t1.p * $t1.q + vars($t1)['q']""", """\
class _Twice$u:
    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return obj.__dict__[self.name] * 2.0

    def __set__(self, obj, v):
        obj.__dict__[self.name] = v""", """\
class _TD$u:
    p = _Twice$u()
    q = _Twice$u()

    def __init__(self, p, q):
        self.p = p
        self.q = q""")
ti("""\
$t1 = _NT$u._make(_It$u($a, $b))
$t2 = _LS$u(_It$u($b, $K))
$t3 = _DS$u(zip('pq', _It$u($a, $b)))
$r = $t1.p * $t1.q + $t2[0] + $t2[1] * $a + $t3['p'] * $K + $t3['q']""", """\
_NT$u = collections.namedtuple('_NT$u', 'p q')""", _SHARED_IT, """\
class _LS$u(list):
    def __init__(self, it):
        super().__init__(it)""", """\
class _DS$u(dict):
    def __init__(self, pairs):
        super().__init__(pairs)""")


# -- objects made by their class's own operators (run natively, re-run in the adjoint) and read afterwards
# through the dicts and lists they hold (session 53: 0 or a part of the derivative where the result's name was
# rebound in the block, `v += v; v += v`, or read through `self._d.items()`)

_SHARED_OV = """\
class _OV$u:
    def __init__(self, d=None):
        self._d = dict(d) if d is not None else {}

    def items(self):
        return self._d.items()

    def __add__(self, o):
        n = _OV$u(self._d)
        for k, v in o.items():
            n._d[k] = n._d.get(k, 0.0) + v
        return n

    def __mul__(self, s):
        n = _OV$u()
        for k, v in self._d.items():
            n._d[k] = v * s
        return n

    __rmul__ = __mul__

    def __neg__(self):
        return _OV$u({k: -v for k, v in self._d.items()})

    def total(self):
        return sum(self._d.values())

    def weighted(self):
        return sum((k + 1) * v for k, v in self.items())"""
_SHARED_OW = """\
class _OL$u:
    def __init__(self, xs):
        self.xs = list(xs)

    def __add__(self, o):
        return _OL$u([a + b for a, b in zip(self.xs, o.xs)])

    def __mul__(self, s):
        n = _OL$u([])
        n.xs.extend(v * s for v in self.xs)
        return n

    def total(self):
        return sum(self.xs)


class _OW$u:
    def __init__(self, v, w):
        self.v = v
        self.w = w

    def __add__(self, o):
        return _OW$u(self.v + o.v, self.w)

    def __mul__(self, s):
        return _OW$u(self.v * s, self.w)

    def total(self):
        return self.w * self.v.total()"""
t("operator_objects", """\
$t1 = _OV$u({0: $a, 1: $b * $K})
$t2 = $t1 * $K2
$r = $t2.weighted() * 0.5""", _SHARED_OV)
t("operator_objects", """\
$t1 = _OV$u({0: $a, 1: $b})
$t1 += $t1
$t1 += _OV$u({0: $c, 1: $K})
$r = $t1.total() * 0.25""", _SHARED_OV)
t("operator_objects", """\
$t1 = _OV$u({0: $a, 1: $b * $K})
$t2 = -$t1
$t3 = $t2
$t2 += $t2
$r = ($t2.total() + $t3.weighted()) * 0.5""", _SHARED_OV)
t("operator_objects", """\
$t1 = _OW$u(_OL$u([$a, $b]), $c)
$t2 = ($t1 * $K) + $t1
$t1 = $t2 * $K2
$r = ($t1.total() + $t2.total()) * 0.25""", _SHARED_OW)
