"""Cases of session 29's sweeps (python-control, lmfit, numpy-ml, astropy through pymap3d, and the packages
and generated programs swept this session), each distilled to the idiom the library uses, checked against
finite differences or a closed form, or asserting the refusal that stands for a silent wrong."""

import functools
import itertools
import tokenize
from io import BytesIO

import numpy as np
import pytest

from contexts import ADContext, UnsupportedFunction, derivative, gradient, hessian
from contexts.lowered.runtime import TextRoundTrip
from tests import fd
from tests.contexts import sweep29_settings as settings
from tests.modes import assert_scalar_modes


class Holder:
    pass


def object_array_row_store(k):
    # python-control's `_truncatecoeff`: `data[p][i][j] = data[p][i][j][nonzero:]`, a store through a row
    # of an object array an object holds (the row a view of it): reverse mode gave 3.38 for 9.438, and a
    # crash where the stored array was shorter (k * G of a transfer function)
    o = Holder()
    o.a = np.empty((1, 1), dtype=object)
    o.a[0, 0] = np.array([0.5, k])
    o.a[0][0] = o.a[0, 0] * k
    return float(np.sum(o.a[0, 0] ** 3))


def object_array_row_truncated(k):
    data = [np.empty((1, 1), dtype=object)]
    data[0][0, 0] = np.concatenate(([0.0], [k, 2 * k]))
    data[0][0][0] = data[0][0, 0][1:]
    return float(np.sum(data[0][0, 0] ** 2))


def object_array_row_nested(k):
    o = Holder()
    o.b = Holder()
    o.b.a = np.empty((2, 1), dtype=object)
    o.b.a[1, 0] = np.array([0.5, k])
    row = o.b.a[1]
    row[0] = o.b.a[1, 0] * k
    return float(np.sum(o.b.a[1, 0] ** 3))


@pytest.mark.parametrize("f", [object_array_row_store, object_array_row_truncated, object_array_row_nested])
def test_store_through_a_row_of_an_object_array(f):
    assert_scalar_modes(f, 1.3)


class TransferFunction:
    """python-control's shape: tables of polynomial coefficients (object arrays), their leading zeros cut
    by a store through a row (`data[p][i][j] = data[p][i][j][nonzero:]`)."""

    def __init__(self, num, den):
        self.num_array = np.empty((1, 1), dtype=object)
        self.num_array[0, 0] = np.array(num, dtype=float)
        self.den_array = np.empty((1, 1), dtype=object)
        self.den_array[0, 0] = np.array(den, dtype=float)
        self._truncatecoeff()

    def _truncatecoeff(self):
        data = [self.num_array, self.den_array]
        for p in range(len(data)):
            nonzero = None
            for k in range(data[p][0, 0].size):
                if data[p][0, 0][k]:
                    nonzero = k
                    break
            if nonzero is None:
                data[p][0][0] = np.zeros(1)
            else:
                data[p][0][0] = data[p][0][0][nonzero:]
        [self.num_array, self.den_array] = data


def poles(a):
    g = TransferFunction([1.0, a], [1.0, 2 * a, 3.0])
    return float(np.sum(np.real(np.roots(g.den_array[0, 0])) ** 2))


def leading_zeros_cut(a):
    g = TransferFunction([0.0, a, 2.0], [0.0, 1.0, 2 * a, 3.0])  # (an IndexError in the reverse pass before)
    return float(np.sum(g.den_array[0, 0] ** 2) + np.sum(g.num_array[0, 0] ** 3))


@pytest.mark.parametrize("f", [poles, leading_zeros_cut])
def test_polynomial_tables_cut_through_a_row(f):
    assert_scalar_modes(f, 1.4, second=f is leading_zeros_cut)


class Layer:
    def __init__(self):
        self.n = 3

    def init(self):
        self.V = np.random.uniform(-0.5, 0.5, size=(self.n,))  # nothing differentiated here


def layer_draws_then_takes_w(w):
    # numpy-ml's layers: a random initialisation, then the object is given the differentiated value; the
    # draw's constant bounds were taken for differentiated (a store into the object made every value it
    # was computed from active), so the draw was refused
    np.random.seed(0)
    lay = Layer()
    lay.init()
    lay.w = w
    return lay.w * np.sum(lay.V) + w * w


def test_a_draw_in_a_method_of_an_object_given_a_differentiated_value_later():
    want = fd.derivative(layer_draws_then_takes_w, 2.0)
    with ADContext():
        assert gradient(layer_draws_then_takes_w, 2.0)[0] == pytest.approx(want, rel=1e-7)


class Model:
    factor = 2.3548200

    def __init__(self):
        self.expr = fwhm_expr(self)  # lmfit's GaussianModel: a class constant formatted into text
        self.pars = {}


def fwhm_expr(model):
    fmt = "{factor:.7f}*{prefix:s}sigma"
    return fmt.format(factor=model.factor, prefix="")


def model_formats_then_holds(s):
    m = Model()
    m.pars["sigma"] = s
    return m.pars["sigma"] * (2.0 if m.expr.endswith("*sigma") else 1.0)


def formatted_and_parsed_back(s):
    fmt = "{:.9f}"
    return float(fmt.format(s)) * 2.0  # the text of a differentiated number, parsed back: a constant


def test_format_by_a_variable_str():
    with ADContext():
        assert gradient(model_formats_then_holds, 0.8)[0] == 2.0
        with pytest.raises(TextRoundTrip):
            gradient(formatted_and_parsed_back, 0.8)


class Parameters(dict):
    """lmfit's shape: a dict subclass whose `__setitem__` hands the store on to dict's by name, and which
    keeps a table of its values elsewhere (a field holding a dict)."""

    def __init__(self):
        super().__init__()
        self._eval = Holder()
        self._eval.symtable = {}

    def __setitem__(self, key, par):
        if key not in self and not valid_symbol_name(key):
            raise KeyError(key)
        dict.__setitem__(self, key, par)
        self._eval.symtable[key] = float(par.value)


def valid_symbol_name(name):
    # asteval's: the tokens of the name (tokenize's generators keep state between tokens)
    gen = tokenize.tokenize(BytesIO(name.encode("utf-8")).readline)
    typ, _, start, end, _ = next(gen)
    if typ == tokenize.ENCODING:
        typ, _, start, end, _ = next(gen)
    return typ == tokenize.NAME and start == (1, 0) and end == (1, len(name))


class Parameter:
    def __init__(self, value):
        self.value = value
        self._expr = None

    @property
    def expr(self):
        return self._expr

    @expr.setter
    def expr(self, v):
        self._expr = v
        self.scale = 1.0 if v is None else 2.0


def parameters(s):
    pars = Parameters()
    pars["amp"] = Parameter(2.0)
    pars["sigma"] = Parameter(s)
    setattr(pars["sigma"], "expr", None)  # (a property's setter, by name)
    setattr(pars["amp"], "value", pars["sigma"].value * 3.0)
    return pars["amp"].value * pars["sigma"].value * pars["sigma"].scale + pars._eval.symtable["sigma"]


def test_a_dict_subclass_storing_by_dict_setitem_and_setattr_through_a_property():
    assert_scalar_modes(parameters, 0.8)


class Scaled:
    def __init__(self, v):
        self._v = v

    @property
    def v(self):
        return self._v

    @v.setter
    def v(self, value):
        self._v = value * 2.0


def property_store_of_a_constant_by_name(x):
    # a store by name through a property of a value carrying no derivative, over a differentiated one: the
    # reads after it see the constant (its cotangent must not reach x)
    o = Scaled(x * 3.0)
    y = o.v * x
    setattr(o, "v", 1.5)
    return y + o.v * x


def test_a_property_store_by_name_replacing_a_differentiated_value():
    assert_scalar_modes(property_store_of_a_constant_by_name, 0.7)


def zipped_with_an_endless_chain(x):
    # a sequence padded by an endless repeat (tokenize's `chain(lines, repeat(b""))`): drawn lazily
    xs = [x, 2.0 * x, x * x]
    pads = itertools.chain([x, 3.0], itertools.repeat(0.5))
    return sum(a * b for a, b in zip(xs, pads))


def chain_with_repeat_read_by_next(x):
    it = itertools.chain([x * x], itertools.repeat(x))
    first = next(it)
    return first + next(it) * next(it)


@pytest.mark.parametrize("f", [zipped_with_an_endless_chain, chain_with_repeat_read_by_next])
def test_a_chain_with_an_endless_part(f):
    assert_scalar_modes(f, 1.3)


def wrapped_angle(a):
    return (3.0 - a * a) % 360.0


def remainder_by_the_input(a):
    return 5.3 % a + a


def array_remainder(a):
    return float(np.sum(np.array([a, 2.0 * a]) % 0.9))


@pytest.mark.parametrize("f", [wrapped_angle, remainder_by_the_input, array_remainder])
def test_remainder_in_forward_modes_twin(f):
    # `%` made forward mode give up its twin for dual numbers (astropy's sidereal time under pymap3d's
    # `degrees(lst - lha) % 360` then crashed on `Dual << unit`)
    assert_scalar_modes(f, 1.3)


def test_remainder_formatting_text_is_remembered():
    def f(a):
        fmt = "%.6f"
        return float(fmt % a)
    with pytest.raises(TextRoundTrip):
        derivative(f, 1.3)


# -- refusals are not the code's to catch ----------------------------------------------------------------

def bisect_root(y, steps=60):
    lo, hi = 0.0, 2.0
    for _ in range(steps):  # (6: stopped early, its bracket 1/32 wide, its result not the root)
        mid = (lo + hi) / 2
        if mid ** 3 + mid - y < 0:
            lo = mid
        else:
            hi = mid
    return mid


def root_or_default(y):
    # a library's "return a default on failure" (pynverse: `except: resultsmask[j] = False`): the refusal of
    # the bisection was caught and the default's derivative, 0, returned (with its value, 1.0)
    try:
        return bisect_root(y)
    except Exception:
        return 1.0


def root_or_default_bare(y):
    try:
        return bisect_root(y)
    except:  # noqa: E722
        return 1.0


def wide_root_or_default(y):
    try:
        return bisect_root(y, 6)
    except:  # noqa: E722
        return 1.0


@pytest.mark.parametrize("f", [root_or_default, root_or_default_bare])
def test_a_root_inside_a_try_is_differentiated(f):
    # (session 45: the bisection is stated as the root it finds; the caught refusal is below)
    y = 2.5
    u = bisect_root(y)
    with ADContext():
        assert gradient(f, y)[0] == pytest.approx(1 / (3 * u * u + 1), rel=1e-9)
    assert derivative(f, y) == pytest.approx(1 / (3 * u * u + 1), rel=1e-9)


def test_a_refusal_caught_by_the_code_is_raised_again():
    from overdub.errors import OverdubError
    with ADContext():
        with pytest.raises(OverdubError, match="bisection"):
            gradient(wide_root_or_default, 2.5)
    with pytest.raises(OverdubError, match="bisection"):
        derivative(wide_root_or_default, 2.5)


def test_a_library_error_is_still_the_codes_to_catch():
    def f(x):
        try:
            return {}["missing"]
        except KeyError:
            return x * x
    assert_scalar_modes(f, 1.5)


# -- a statement that raises inside a try or a with: its target keeps value and derivative -----------------

OVERRIDES = {"other": 1.0}


def failed_lookup(x):
    val = x * x
    try:
        val = OVERRIDES["name"]  # (raises: val keeps x * x; forward mode gave its tangent 0)
    except KeyError:
        pass
    return val


def failed_lookup_in_a_branch(x):
    r = 0.5 * x
    try:
        if x > 0:
            r = r * x
            r = {}["k"]  # (reverse mode lost `r = r * x` with the block it was in: 0.5 for 2.0)
    except KeyError:
        pass
    return r


def suppressed(x):
    import contextlib
    r = 0.5 * x
    with contextlib.suppress(KeyError):
        r = r * x
        r = {}["k"]
    return r


def failed_store(x):
    ys = [x, 2.0 * x]
    try:
        ys[5] = x * x * x  # (raises: ys keeps its values, and their derivatives)
    except IndexError:
        pass
    return ys[0] * ys[1]


@pytest.mark.parametrize("f", [failed_lookup, failed_lookup_in_a_branch, suppressed, failed_store])
def test_a_raising_statement_leaves_its_target_alone(f):
    assert_scalar_modes(f, 1.5)


# -- reverse mode cases of the generated object-heavy programs -------------------------------------------

def sorted_by_key_then_summed(a):
    xs = [a, 2.0 * a, a * a]
    xs.sort(key=lambda t: -t)  # (then read whole: 0 in reverse mode)
    return sum(xs) + max(xs) * xs[0]


def test_a_list_sorted_by_a_key_then_read_whole():
    assert_scalar_modes(sorted_by_key_then_summed, 0.9)


def make_accumulator():
    total = 0.0

    def add(v):
        nonlocal total
        total += v
        return total
    return add


def factory_closure(a):
    acc = make_accumulator()
    acc(a)
    return acc(3.0 * a)  # (4a: reverse mode kept the last call's share only, 3.0)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_a_closure_a_factory_made_writing_its_cells_is_refused():
    from overdub.errors import OverdubError
    with ADContext():
        with pytest.raises(OverdubError, match="closure"):
            gradient(factory_closure, 0.9)
    assert derivative(factory_closure, 0.9) == pytest.approx(4.0, rel=1e-12)


def model(t, q=1.0):
    return t * q * q


def partial_overridden(x):
    import functools
    g = functools.partial(model, q=x)
    return g(1.0, q=0.27) + g(2.0)  # (the first call's q is not x: 4x, where reverse mode gave 4x + 1)


def test_a_partials_keyword_overridden_by_the_call():
    assert_scalar_modes(partial_overridden, 1.5)


class Settings:
    factor = 1.0


class ScaledSetting:
    def __init__(self, k):
        self.k = k

    def __enter__(self):
        self.old = Settings.factor
        Settings.factor = self.k
        return self

    def __exit__(self, *exc):
        Settings.factor = self.old
        return False


def scaled_setting(x):
    with ScaledSetting(x * x):
        r = x * Settings.factor  # (x ** 3; reverse mode ran `__enter__` natively: 2.25 for 6.75)
    return r


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_with_on_a_manager_holding_a_derivative():
    # (session 35: `__enter__`/`__exit__` of a differentiated manager run recorded; the store into the class
    # attribute reads back unrecorded, refused)
    with ADContext():
        with pytest.raises(UnsupportedFunction):
            gradient(scaled_setting, 1.5)
    assert derivative(scaled_setting, 1.5) == pytest.approx(6.75, rel=1e-12)


def module_dict_setting(x):
    settings.set_scale(x * x)
    return x * settings.SCALES["scale"]  # (state of another module, set by its code: 2.25 for 6.75)


def module_object_setting(x):
    settings.set_option(x * x)
    return x * settings.OPTIONS.scale


@pytest.mark.parametrize("f", [module_dict_setting, module_object_setting])
def test_state_of_another_module_set_by_its_code(f):
    want = 6.75
    with ADContext():
        assert gradient(f, 1.5)[0] == pytest.approx(want, rel=1e-12)
    assert derivative(f, 1.5) == pytest.approx(want, rel=1e-12)


def elif_bisection(p, target=5.0, high=4.0, low=0.0):
    # mibian's implied volatility: `elif v > t: high = mid` / `elif v < t: low = mid`, no `else`, a loose exit
    for _ in range(100):
        mid = (high + low) / 2
        v = Model2(p, mid).val
        if abs(v - target) < 0.05:
            break
        elif v > target:
            high = mid
        elif v < target:
            low = mid
    return mid


class Model2:
    def __init__(self, p, x):
        self.val = x ** 3 + p * x


def test_a_bisection_by_an_elif_chain_is_refused():
    from overdub.errors import OverdubError
    with ADContext():
        with pytest.raises(OverdubError, match="bisection"):
            gradient(lambda p: elif_bisection(p), 2.0)
    with pytest.raises(OverdubError, match="bisection"):
        derivative(lambda p: elif_bisection(p), 2.0)


# -- crashes and false refusals of the sweeps, each now right ---------------------------------------------

def ordered_popitem_first(x):
    import collections
    od = collections.OrderedDict()
    od["a"] = x
    od["b"] = 2.0 * x
    _, v = od.popitem(last=False)  # (the reverse pass's adjoint took no `last`: a TypeError)
    return v * od["b"] + sum(od.values())


@functools.singledispatch
def size(o):
    raise TypeError(f"no size for {type(o)}")  # (forward mode dispatched on the dual's class: here)


@size.register
def _(o: float):
    return o * o


def dispatched(x):
    return size(x) * x


class Triple(tuple):
    def __new__(cls, a, b, c):  # (pygeodesy's named tuples: the items one by one)
        return tuple.__new__(cls, (a, b, c))


def unpacked_tuple_subclass(x):
    a, b, c = Triple(x, 2.0 * x, 3.0)
    return a * b + c * a


class Degrees(float):
    def __new__(cls, arg):
        return float.__new__(cls, arg)


def float_subclass_made(x):
    import math
    return math.sin(Degrees(x)) * x + [1.0, 2.0, 3.0][int(x)] * x * x  # (int() under a second derivative)


def wrapped_and_scaled(x):
    import math
    return math.sin(x % 2.0) * x  # (forward over reverse: no adjoint of % on duals)


def powers(x, n):
    p = 1.0
    for _ in range(n):
        p *= x
        yield p


def dot(n, cs, ps):
    return sum(c * p for c, p in zip(cs, ps)) if n > 0 else 0.0


def polynomial_by_a_generator(x):
    cs = [0.5, 1.0, 2.0, 3.0]
    n = len(cs) - 1  # (an int given to the generator and to its consumer: refused as changeable)
    return cs[0] + dot(n, cs[1:], powers(x, n))


@pytest.mark.parametrize("f", [ordered_popitem_first, dispatched, unpacked_tuple_subclass, float_subclass_made,
                               wrapped_and_scaled, polynomial_by_a_generator])
def test_sweep_crashes_and_false_refusals(f):
    assert_scalar_modes(f, 1.3)
    assert hessian(f, 1.3, inner="forward") == pytest.approx(
        fd.derivative(lambda u: derivative(f, u), 1.3), rel=1e-5, abs=1e-6)


_GRID = np.linspace(0.0, 1.0, 11)


def number_against_an_array(p):
    a, b = p  # (skfuzzy's membership functions: `a < x` of an element of the input and a grid)
    idx = np.nonzero(a < _GRID)[0]
    return float(np.sum((_GRID[idx] - a) * b))


def test_a_number_of_the_input_compared_with_an_array():
    from contexts import jacfwd
    p = np.array([0.33, 2.0])
    want = fd.gradient(number_against_an_array, p)[0]
    np.testing.assert_allclose(jacfwd(number_against_an_array, p), want, rtol=1e-7)
    with ADContext():
        np.testing.assert_allclose(gradient(number_against_an_array, p)[0], want, rtol=1e-7)


class Dist:
    def __init__(self, mu):
        self.mu = mu
        self.cache = {}

    def pdf(self, t):
        self.cache[0, self] = t  # (a key by identity: chaospy's per-call cache)
        ids = set(np.arange(3))  # (numpy integers in a set)
        return np.exp(-(t - self.mu) ** 2) * len(ids)


def test_identity_keys_and_numpy_integers_in_a_set():
    f = lambda mu: float(Dist(mu).pdf(0.4))  # noqa: E731
    with ADContext():
        assert gradient(f, 0.7)[0] == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)


def diagonal_by_keyword(q=0.1):
    return np.sum(np.diag([q, q * 0.1]))  # (a list of duals given to numpy: refused when q came by keyword)


def test_a_list_of_duals_given_to_numpy_by_a_function_called_with_keywords():
    assert derivative(lambda q: float(diagonal_by_keyword(q=q)), 0.3) == pytest.approx(1.1, rel=1e-12)


def polynomial_squared(x):
    p = np.polynomial.Polynomial(x)
    return float((p * p)(0.6))  # (forward mode ran numpy.polynomial's operators natively: a TypeError)


def test_numpy_polynomial_series_arithmetic():
    from contexts import jacfwd
    x = np.array([0.5, 1.1, 0.8])
    want = fd.gradient(polynomial_squared, x)[0]
    np.testing.assert_allclose(jacfwd(polynomial_squared, x), want, rtol=1e-7)
    with ADContext():
        np.testing.assert_allclose(gradient(polynomial_squared, x)[0], want, rtol=1e-7)


def day_of_year_date(doy, epoch_year=2014):
    import datetime
    epoch = datetime.datetime.strptime("{}-12-31".format(epoch_year - 1), "%Y-%m-%d")  # (a default's int)
    return (epoch + datetime.timedelta(days=doy)).timetuple().tm_yday * 1.0


def test_a_duration_of_a_differentiated_number_by_keyword_is_refused():
    # pvlib's `dt.timedelta(days=adoy)`: a bare TypeError in forward mode; the date's text made of an int
    # default was taken for a differentiated number's (its year parsed back refused)
    from overdub.errors import OverdubError
    with pytest.raises(OverdubError, match="timedelta"):
        derivative(day_of_year_date, 40.0)
    with ADContext():
        with pytest.raises(OverdubError, match="timedelta"):
            gradient(day_of_year_date, 40.0)


# -- an iteration that starts at its answer stops at once: the derivative of its steps is not the answer's --

def cubic(x):
    return x ** 3 + x


def newton_from(guess):
    def solve(s, tol=1e-12):
        x = guess(s)
        while abs(cubic(x) - s) > tol:  # (the residual tested before a step: none taken at the root)
            x = x - (cubic(x) - s) / (3 * x * x + 1)
        return x
    return solve


def chord(s):
    x = s / 2.0
    while True:
        x = x - (cubic(x) - s) / 3.5  # (one step from the root, then the test)
        if abs(cubic(x) - s) <= 1e-12:
            break
    return x


def fixed_point(s):
    x = 0.0
    for _ in range(500):
        new = 0.5 * (x + s / (1.0 + x * x))  # (x (1 + x^2) = s, converging linearly)
        if abs(new - x) < 1e-13:
            break
        x = new
    return new


def perron(w):
    # a power iteration (networkx's eigenvector centrality) on a weighted 5-cycle, from the uniform vector:
    # at equal weights that is the fixed point, and the loop stops after one step
    n = 5
    nbrs = {i: [((i + 1) % n, w[i]), ((i - 1) % n, w[(i - 1) % n])] for i in range(n)}
    x = {v: 1.0 / n for v in nbrs}
    for _ in range(1000):
        last = x
        x = dict(last)
        for v in x:
            for u, wt in nbrs[v]:
                x[u] += last[v] * wt
        norm = sum(t * t for t in x.values()) ** 0.5
        x = {k: t / norm for k, t in x.items()}
        if sum(abs(x[v] - last[v]) for v in x) < n * 1e-13:
            break
    return x[0] + 2.0 * x[1] - 0.5 * x[2] + 0.3 * x[3]


@pytest.mark.parametrize("f", [newton_from(lambda s: s / 2.0), chord], ids=["newton_at_the_root", "chord"])
def test_an_iteration_started_at_its_answer_is_refused(f):
    # at s = 2 the guess s / 2 is the root of x^3 + x = s: the unrolled steps' derivative, 0.5 (or one
    # chord step's, 0.214), for the root's 0.25
    from overdub.errors import OverdubError
    with ADContext():
        with pytest.raises(OverdubError, match="converged"):
            gradient(f, 2.0)
    with pytest.raises(OverdubError, match="converged"):
        derivative(f, 2.0)
    with pytest.raises(OverdubError, match="converged"):
        hessian(f, 2.0)


def test_a_power_iteration_from_its_fixed_point_is_refused_and_right_elsewhere():
    from overdub.errors import OverdubError
    from contexts import jacfwd
    with pytest.raises(OverdubError, match="converged"):
        jacfwd(perron, np.ones(5))
    w = np.array([1.0, 1.3, 0.8, 1.1, 0.9])
    want = fd.gradient(perron, w)[0]
    np.testing.assert_allclose(jacfwd(perron, w), want, rtol=1e-6, atol=1e-9)
    with ADContext():
        np.testing.assert_allclose(gradient(perron, w)[0], want, rtol=1e-6, atol=1e-9)


def newton_in_pascals(s):
    # a residual in large units (1e5 per unit of x) ended at a small tolerance: its rate at the end is large
    # in those units, small beside its first visit's
    x = 3.0
    while abs(1e5 * (cubic(x) - s)) > 1e-6:
        x = x - (cubic(x) - s) / (3 * x * x + 1)
    return x


def start_at_3(s):
    return 3.0


def newton_loose(s):
    return newton_from(start_at_3)(s, 1e-6)


@pytest.mark.parametrize("f", [newton_from(start_at_3), fixed_point, newton_loose, newton_in_pascals],
                         ids=["newton", "fixed_point", "newton_loose", "newton_in_pascals"])
def test_an_iteration_that_iterated_is_right(f):
    # the root's derivatives by the implicit function theorem: x' = 1 / (3x^2 + 1), x'' = -6 x x'^3
    s = 2.5
    x = float(np.real(np.roots([1.0, 0.0, 1.0, -s])[np.abs(np.imag(np.roots([1.0, 0.0, 1.0, -s]))) < 1e-12][0]))
    d1 = 1.0 / (3 * x * x + 1)
    with ADContext():
        assert gradient(f, s)[0] == pytest.approx(d1, rel=1e-5)
    assert derivative(f, s) == pytest.approx(d1, rel=1e-5)
    assert hessian(f, s) == pytest.approx(-6 * x * d1 ** 3, rel=1e-3)
