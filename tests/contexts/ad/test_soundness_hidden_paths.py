"""Derivatives that travel by paths the reverse pass did not follow, found by trying Python's standard
library on small programs (each returned a wrong number silently before, or crashed):

- a keyword argument of a rule (`min([], default=x)`, `sum(xs, start=x)`): rules gave no keyword
  cotangent and the engine dropped it (0.7 for 1.4); now min/max/sum give theirs, and a rule that gives
  none for a differentiated keyword argument is refused by name;
- a container read out of another by a method and then changed in place (`d.setdefault(k, []).append(x)`,
  `d.get(k).append(x)`, a loop over `d.values()` or a list of lists appending to each): the container
  holding it was not seen to change (activity followed only certain views);
- a class's own operator returning a new container (`Counter(a=x) + Counter(...)`, a dict subclass's
  `__add__`), re-run in the reverse pass in a session of its own: its operands' cotangents were lost;
- the items of an iterator class whose `__next__` is Python code (`for v in Scaled(xs)`), drawn by Python
  natively: what `__next__` computed was not recorded (2.7 for 3.4); each `__next__` now runs as its twin;
- a store into (or deletion from) an object whose class has its own `__setitem__`/`__delitem__`
  (`collections.UserDict`, `UserList`, a mapping keeping its values elsewhere): the engine read the old
  value by `obj[key]` first (KeyError on a new key: the primal crashed); the class's code now runs as its
  twin, so what it stores is recorded and undone in the reverse pass;
- a number plus an object whose class's `__radd__` returns a float (`1.0 + obj`, `sum(objs)`): the sum's
  inline adjoint took the float result for numeric addition (2.0 for 5.0);
- `obj += v` of a class with its own `__iadd__` (Counter's: in place, seen by its aliases): run as
  `obj + v` (a TypeError, or a new object its aliases did not see); now its code runs as its twin;
- a metaclass's own `__call__` (ran natively, what it computed was a constant);
- `complex(obj)` by the class's `__complex__` (a constant before); numpy turning such an object into a
  number (`np.float64(obj)`, `np.asarray(obj, dtype=float)`): refused;
- a dual pickled and unpickled (forward mode): it came back under another tag, a constant (0, silently):
  refused;
- a differentiated value stored as a class's attribute and read back through the class or an instance:
  refused (reads of class attributes are constants to reverse mode), forward mode follows it.

Every number is checked against central differences, in reverse mode, forward mode and the hessian."""

import collections

import numpy as np
import pytest

from contexts import UnsupportedFunction, gradient
from overdub.errors import OverdubError
from tests import fd

X = 0.7


def min_default(x):
    return min([], default=x) * x


def max_default_unused(x):
    return max([x * 2, 1.0], default=x) * x


def sum_start(x):
    return sum([x, x * x], start=x)


def setdefault_append(x):
    d = {}
    d.setdefault("a", []).append(x)
    return d["a"][0] * x


def get_append(x):
    d = {"a": []}
    d.get("a").append(x)
    return d["a"][0] * x


def helper_fills_got(x):
    def fill(items, v):
        items.append(v)
    d = {"a": []}
    fill(d.get("a"), x)
    return d["a"][0] * x


def getattr_append(x):
    class Holder:
        pass
    h = Holder()
    h.items = []
    getattr(h, "items").append(x)
    vars(h)["items"].append(x * x)
    return h.items[0] * h.items[1]


def loop_var_append(x):
    lists = [[], []]
    for items in lists:
        items.append(x)
    return lists[1][0] * x


def values_append(x):
    d = {"a": []}
    for v in d.values():
        v.append(x)
    return d["a"][0] * x


def counter_add(x):
    c = collections.Counter(a=x) + collections.Counter(a=1.0)
    return c["a"] * x


class _Pairwise(dict):
    def __add__(self, other):
        return _Pairwise(a=self["a"] * other["a"])

    def __neg__(self):
        return _Pairwise(a=self["a"] ** 3)


def dict_subclass_operator(x):
    return (_Pairwise(a=x) + _Pairwise(a=x))["a"]


def dict_subclass_unary(x):
    return (-_Pairwise(a=x))["a"]


class _Scaled:
    """An iterator over its own state: `__iter__` returns self, `__next__` computes each item."""

    def __init__(self, items, k):
        self.items, self.k, self.i = items, k, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= len(self.items):
            raise StopIteration
        self.i += 1
        return self.items[self.i - 1] * self.k


class _Bag:
    """An iterable whose `__iter__` makes a separate Python iterator."""

    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return _Scaled(self.items, 2.0)


def iterator_class_loop(x):
    s = 0.0
    for v in _Scaled([x, 2.0, x * x], x):
        s = s + v * x
    return s


def iterator_class_sum(x):
    return sum(_Bag([x, x * x])) * x


def iterator_class_unpack(x):
    a, b = _Scaled([x, 3.0], x)
    return a * b


class _Doubling:
    def __init__(self):
        self._d = {}

    def __setitem__(self, k, v):
        self._d[k] = v * 2

    def __getitem__(self, k):
        return self._d[k]

    def __delitem__(self, k):
        del self._d[k]


def user_dict(x):
    d = collections.UserDict()
    d["a"] = x * 2
    d["b"] = x
    del d["b"]
    return d["a"] * x + d.pop("a")


def user_list(x):
    items = collections.UserList([1.0, 2.0])
    items[0] = x * 2
    return items[0] * x + sum(items)


def own_setitem(x):
    t = _Doubling()
    t["a"] = 1.0
    t["a"] = x
    t["b"] = x * x
    del t["b"]
    return t["a"] * x


class _Thrice:
    def __init__(self, v):
        self.v = v

    def __radd__(self, other):
        return other + self.v * 3

    def __complex__(self):
        return complex(self.v * self.v, 1.0)

    def __float__(self):
        return self.v * 2


class _Total:
    def __init__(self):
        self.t = 0.0

    def __iadd__(self, v):
        self.t = self.t + v * 2
        return self


class _Doubled(type):
    def __call__(cls, *args):
        obj = super().__call__(*args)
        obj.v = obj.v * 2
        return obj


class _Made(metaclass=_Doubled):
    def __init__(self, v):
        self.v = v * v


def radd_float(x):
    return 1.0 + _Thrice(x) + 2.0 * x


def sum_of_objects(x):
    return sum([_Thrice(x), _Thrice(x * x)])


def own_iadd(x):
    t = _Total()
    alias = t
    t += x
    t += x * x
    return alias.t


def counter_iadd(x):
    c = collections.Counter(a=1.0)
    alias = c
    c += collections.Counter(a=x)
    return alias["a"] * x


def metaclass_call(x):
    return _Made(x).v * x


def complex_of_object(x):
    return complex(_Thrice(x)).real * x


RIGHT = [radd_float, sum_of_objects, own_iadd, counter_iadd, metaclass_call, complex_of_object, user_dict,
         user_list, own_setitem, iterator_class_loop, iterator_class_sum, iterator_class_unpack, min_default,
         max_default_unused, sum_start, setdefault_append, get_append, helper_fills_got, getattr_append,
         loop_var_append, values_append, counter_add, dict_subclass_operator, dict_subclass_unary]


@pytest.mark.parametrize("f", RIGHT, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["gradient", "derivative", "hessian"])
def test_against_central_differences(f, mode):
    got, want = fd.in_mode(f, X, mode)
    assert float(got) == pytest.approx(want, rel=1e-5, abs=1e-6)


class _Shared:
    scale = 1.0


def class_attribute(x):
    _Shared.scale = x * 2
    try:
        return _Shared().scale * x
    finally:
        _Shared.scale = 1.0


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_class_attribute_store_refused_in_reverse_followed_forward():
    with pytest.raises(UnsupportedFunction, match="class attribute _Shared.scale"):
        gradient(class_attribute, X)
    assert _Shared.scale == 1.0  # (the function's own finally ran)
    got, want = fd.in_mode(class_attribute, X, "derivative")
    assert float(got) == pytest.approx(want, rel=1e-6)


def ndenumerate(x):
    s = 0.0
    for _, v in np.ndenumerate(np.array([x, 2.0])):
        s = s + v * x
    return s


def test_numpys_ndenumerate_is_differentiated_never_wrong():
    """numpy's ndenumerate iterates by a flatiter's C `__next__` (it gave 2.7 for 3.4, then was refused):
    its items are now read by indexing in Python (`replacements.ad_ndenumerate`)."""
    assert gradient(ndenumerate, X)[0] == pytest.approx(fd.derivative(ndenumerate, X), rel=1e-6)


def pickled(x):
    import pickle
    return pickle.loads(pickle.dumps([x, 2.0]))[0] * x


def test_pickled_value_is_refused_in_both_modes():
    from contexts import derivative
    for mode in (gradient, derivative):
        with pytest.raises(OverdubError):
            mode(pickled, X)


@pytest.mark.parametrize("convert", [np.float64, lambda o: np.asarray(o, dtype=float)], ids=["float64", "asarray"])
def test_numpy_converting_an_object_by_its_python_method_is_refused(convert):
    with pytest.raises(UnsupportedFunction, match="__float__"):
        gradient(lambda x: float(convert(_Thrice(x))) * x, X)


def keys_by_pairs(x):
    d = dict(zip([x, 2.0], [1.0, 3.0]))
    return list(d)[0] * x


def keys_by_fromkeys(x):
    return sorted(dict.fromkeys([x * x, 5.0]))[0] * x


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", [keys_by_pairs, keys_by_fromkeys], ids=lambda f: f.__name__)
def test_keys_read_back_as_numbers_are_refused(f):
    """A dict built from pairs keyed by differentiated floats, its keys read back (0.7 for 1.4 before)."""
    with pytest.raises(OverdubError, match="keys of a dict"):
        gradient(f, X)
