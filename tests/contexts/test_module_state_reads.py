"""Module state changed by one module's code and read back by another's.

The activity analysis takes a module global's reads for constants unless its own module's code changes it.
State changed from elsewhere — `cfg.STORE["v"] = y` in the user's module, `helper.put(x)` storing into
`cfg.STORE` from a third module, `type(self).items.append(y)` — was read back without its derivative:
reverse mode returned 0, silently. Such a read is now refused where this recording changed what it reads
(`helpers.global_read`); `gradient` then answers by forward mode for a few inputs, and refuses for many.
Forward mode's duals were right all along.
"""

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd
from overdub.errors import OverdubError
from tests.modules import imported

CFG = """
import numpy as np
BUF = np.zeros(3)
STORE = {}
ITEMS = []
class Holder:
    pass
H = Holder()
class Registry:
    cache = {}
class Slotted:
    __slots__ = ("val",)
    def __init__(self):
        self.val = 0.0
P = Slotted()
def remember(v):
    remember.last = v * 6.0
    return 0.0
"""

HELPER = """
import numpy as np
import cfg_s66
def put(v):
    cfg_s66.STORE["w"] = v * 2.0
def push(v):
    cfg_s66.ITEMS.append(v * 4.0)
def register(v):
    cfg_s66.Registry.cache["r"] = v * 5.0
def set_slot(v):
    cfg_s66.P.val = v * 3.0
def copy_in(v):
    np.copyto(cfg_s66.BUF, np.full(3, v * 4.0))
def add_in(v):
    b = cfg_s66.BUF
    b += v * 7.0
"""

USER = """
import importlib
import sys
import numpy as np
import cfg_s66, helper_s66
from cfg_s66 import STORE, ITEMS

def attr_dict(x):
    cfg_s66.STORE["v"] = np.sin(x)
    return np.sum(cfg_s66.STORE["v"] * 2.0)

def attr_list(x):
    cfg_s66.ITEMS.append(x * 3.0)
    return np.sum(cfg_s66.ITEMS[-1])

def attr_object(x):
    cfg_s66.H.val = x ** 2
    return np.sum(cfg_s66.H.val + 1.0)

def imported_name(x):
    helper_s66.put(x)
    return np.sum(STORE["w"] + 0.0)

def through_module(x):
    helper_s66.put(x)
    return np.sum(cfg_s66.STORE["w"] + 0.0)

def imported_list(x):
    helper_s66.push(x)
    return np.sum(ITEMS[-1] + 0.0)

def alias_first(x):
    s = cfg_s66.STORE
    helper_s66.put(x)
    return np.sum(s["w"] * 1.0)

def nested(x):
    cfg_s66.STORE["n"] = {"k": 0.0}
    cfg_s66.STORE["n"]["k"] = x * 7.0
    return np.sum(cfg_s66.STORE["n"]["k"])

def _get():
    return cfg_s66.STORE["w"]

def via_plain_call(x):
    helper_s66.put(x)
    return np.sum(_get() + 1.0)

def class_of_a_module(x):
    helper_s66.register(x)
    return np.sum(cfg_s66.Registry.cache["r"] + 0.0)

def copied_into_an_array(x):
    helper_s66.copy_in(x)
    return np.sum(cfg_s66.BUF[1] * 1.0)

def added_into_an_array(x):
    helper_s66.add_in(x)
    return np.sum(cfg_s66.BUF[2] * 1.0)

def by_sys_modules(x):
    helper_s66.put(x)
    return np.sum(sys.modules["cfg_s66"].STORE["w"] + 0.0)

def by_import_module(x):
    helper_s66.put(x)
    m = importlib.import_module("cfg_s66")
    return np.sum(m.STORE["w"] + 0.0)

def by_getattr(x):
    helper_s66.put(x)
    return np.sum(getattr(cfg_s66, "STORE")["w"] + 0.0)

def by_vars(x):
    helper_s66.put(x)
    return np.sum(vars(cfg_s66)["STORE"]["w"] + 0.0)

def by_namespace(x):
    helper_s66.put(x)
    store = cfg_s66.__dict__["STORE"]
    return np.sum(store["w"] + 0.0)

def slotted_object(x):
    helper_s66.set_slot(x)
    return np.sum(cfg_s66.P.val + 0.0)

def function_attribute(x):
    cfg_s66.remember(x)
    return np.sum(cfg_s66.remember.last + 0.0)

def _store():
    return cfg_s66.STORE

def alias_from_a_call(x):
    d = _store()
    helper_s66.put(x)
    return np.sum(d["w"] * 1.0)

def untouched(x):
    return np.sum(x * cfg_s66.STORE.get("c", 3.0))
"""

# (function, d/dx of its value per entry of x)
CASES = [("attr_dict", lambda x: 2.0 * np.cos(x)), ("attr_list", lambda x: 3.0 + 0 * x),
         ("attr_object", lambda x: 2.0 * x), ("imported_name", lambda x: 2.0 + 0 * x),
         ("through_module", lambda x: 2.0 + 0 * x), ("imported_list", lambda x: 4.0 + 0 * x),
         ("alias_first", lambda x: 2.0 + 0 * x), ("nested", lambda x: 7.0 + 0 * x),
         ("via_plain_call", lambda x: 2.0 + 0 * x), ("class_of_a_module", lambda x: 5.0 + 0 * x),
         ("by_sys_modules", lambda x: 2.0 + 0 * x), ("by_import_module", lambda x: 2.0 + 0 * x),
         ("by_getattr", lambda x: 2.0 + 0 * x), ("by_vars", lambda x: 2.0 + 0 * x),
         ("by_namespace", lambda x: 2.0 + 0 * x), ("slotted_object", lambda x: 3.0 + 0 * x),
         ("function_attribute", lambda x: 6.0 + 0 * x), ("alias_from_a_call", lambda x: 2.0 + 0 * x),
         ("untouched", lambda x: 3.0 + 0 * x)]


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    with imported(tmp_path_factory.mktemp("modules"), {"cfg_s66": CFG, "helper_s66": HELPER, "user_s66": USER}) as (
            cfg, _, user):
        yield user, cfg


def _fresh(cfg):
    cfg.STORE.clear()
    cfg.ITEMS.clear()
    cfg.H.__dict__.clear()
    cfg.Registry.cache.clear()
    cfg.BUF[:] = 0.0
    cfg.P.val = 0.0


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("name, want", CASES, ids=[c[0] for c in CASES])
def test_right_for_a_number(user, name, want):
    mod, cfg = user
    f = getattr(mod, name)
    _fresh(cfg)
    assert _fd(f, 0.7) == pytest.approx(float(want(0.7)), rel=1e-6)
    _fresh(cfg)
    assert gradient(f, 0.7)[0] == pytest.approx(float(want(0.7)), rel=1e-9)
    _fresh(cfg)
    assert derivative(f, 0.7) == pytest.approx(float(want(0.7)), rel=1e-9)


@pytest.mark.parametrize("name, want", CASES, ids=[c[0] for c in CASES])
def test_many_inputs_right_or_refused(user, name, want):
    """100 inputs (past the few forward mode answers for reverse mode): reverse mode's own answer."""
    mod, cfg = user
    f = getattr(mod, name)
    x = np.linspace(0.1, 1.3, 100)
    _fresh(cfg)
    try:
        g = gradient(f, x)[0]
    except OverdubError as e:
        assert name != "untouched", e  # (state no one changed: no refusal)
        assert "changed in place while differentiating" in str(e)
        return
    assert np.allclose(g, want(x), rtol=1e-9, atol=0), (name, g[:3])


def _pair():
    store = []

    def add(v):
        store.append(v * 2.0)

    def last():
        return store[-1]
    return add, last


_ADD, _LAST = _pair()
_SHARED = {"k": 0.0}


def _set_k(v, d=_SHARED):
    d["k"] = v * 4.0


def _get_k(d=_SHARED):
    return d["k"]


def _by_closures(x):
    _ADD(x)
    return np.sum(_LAST() + 0.0)


def _by_defaults(x):
    _set_k(x)
    return np.sum(_get_k() + 0.0)


@pytest.mark.parametrize("f, want", [(_by_closures, 2.0), (_by_defaults, 4.0)], ids=["cells", "defaults"])
@pytest.mark.parametrize("x", [0.7, np.linspace(0.1, 1.3, 100)], ids=["number", "100 inputs"])
def test_state_a_function_holds_read_by_a_plain_call(f, want, x):
    """A sibling closure's list (`add, last = make_pair()`) or a default's dict, changed by one function and
    read by another called with no differentiated argument: reverse mode returned 0."""
    try:
        g = gradient(f, x)[0]
    except OverdubError as e:
        assert np.ndim(x) == 1 and "changed in place while differentiating" in str(e)
    else:
        assert np.allclose(g, want, rtol=1e-9, atol=0)
    assert derivative(f, 0.7) == pytest.approx(want)


class _Shared:
    cache = {}
    items = []

    def by_type(self, x):
        type(self).items.append(np.sin(x))
        return np.sum(type(self).items[-1])

    def by_class_attribute(self, x):
        self.__class__.cache["v"] = x * 2.0
        return np.sum(self.__class__.cache["v"] + 0.0)


@pytest.mark.parametrize("name, want", [("by_type", np.cos), ("by_class_attribute", lambda x: 2.0 + 0 * x)])
@pytest.mark.parametrize("x", [0.7, np.linspace(0.1, 1.3, 100)], ids=["number", "100 inputs"])
def test_a_class_reached_from_its_object(name, want, x):
    f = getattr(_Shared(), name)
    try:
        g = gradient(f, x)[0]
    except OverdubError as e:
        assert np.ndim(x) == 1 and "changed in place while differentiating" in str(e)
    else:
        assert np.allclose(g, want(x), rtol=1e-9, atol=0)
    assert np.allclose(derivative(f, 0.7), want(0.7))


def _no_dual(values) -> bool:
    from contexts.forward.dual import Dual
    return all(type(v) is not Dual for v in values)


@pytest.mark.parametrize("name", ["attr_dict", "attr_list", "attr_object", "through_module", "imported_list",
                                  "class_of_a_module"])
@pytest.mark.parametrize("api", ["derivative", "jacfwd", "hessian"])
def test_forward_mode_leaves_no_dual_in_another_modules_state(user, name, api):
    """Forward mode's duals stored into another module's state (`cfg.STORE["v"] = y`, through a helper of a
    third module too) are replaced by their values after the call, as those stored into the function's own
    module's: left there, a plain computation read a dual afterwards."""
    mod, cfg = user
    f = getattr(mod, name)
    _fresh(cfg)
    run = {"derivative": lambda: derivative(f, 0.7), "hessian": lambda: hessian(f, 0.7),
           "jacfwd": lambda: jacfwd(f, np.array([0.7, 0.9]))}[api]
    run()
    left = [*cfg.STORE.values(), *cfg.ITEMS, *vars(cfg.H).values(), *cfg.Registry.cache.values()]
    assert left and _no_dual(left), [type(v).__name__ for v in left]


class _Counted:
    items = []
    scale = 1.0

    def run(self, x):
        type(self).items.append(np.sin(x))
        type(self).scale = x * 1.0  # (forward mode only: reverse mode refuses a class attribute's store)
        return type(self).items[-1] * type(self).scale


@pytest.mark.parametrize("api", ["derivative", "jacfwd", "hessian"])
def test_forward_mode_leaves_no_dual_in_a_class(api):
    _Counted.items.clear()
    f = _Counted().run
    {"derivative": lambda: derivative(f, 0.7), "hessian": lambda: hessian(f, 0.7),
     "jacfwd": lambda: jacfwd(f, np.array([0.7, 0.9]))}[api]()
    assert _Counted.items and _no_dual([*_Counted.items, _Counted.scale])


@pytest.mark.parametrize("name, want", [("copied_into_an_array", 4.0), ("added_into_an_array", 7.0)])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_another_modules_array_changed_in_place_right_or_refused(user, name, want, mode):
    """`np.copyto(cfg.BUF, y)` or `b = cfg.BUF; b += y` in a helper, `cfg.BUF[i]` read after: 0 in both modes
    before (forward mode's tangent twin changed its own copy of the array's tangent). Refused now."""
    mod, cfg = user
    f = getattr(mod, name)
    _fresh(cfg)
    try:
        got = gradient(f, 0.7)[0] if mode == "reverse" else derivative(f, 0.7)
    except OverdubError:
        return
    assert got == pytest.approx(want, rel=1e-12)


def _array_pair():
    buf = np.zeros(3)

    def put(v):
        b = buf
        b += v * 2.0

    def first():
        return buf[0]
    return put, first


_PUT, _FIRST = _array_pair()


def _through_a_captured_array(x):
    _PUT(x)
    return np.sum(_FIRST() * 1.0)


def _stepper():
    buf = np.zeros(3)

    def step(v):
        buf[...] = 0.0
        b = buf
        b += v * 3.0
        return np.sum(buf[1] * 1.0)
    return step


@pytest.mark.parametrize("f, want", [(_through_a_captured_array, 2.0), (_stepper(), 3.0)], ids=["siblings", "one"])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_captured_array_changed_in_place_right_or_refused(f, want, mode):
    """`b = buf; b += y` on a captured array: forward mode's twin kept the new tangent in b alone (0 for both),
    reverse mode's read of it by a sibling closure was a constant (0)."""
    try:
        got = gradient(f, 0.7)[0] if mode == "reverse" else derivative(f, 0.7)
    except OverdubError:
        return
    assert got == pytest.approx(want, rel=1e-12)
