"""Reverse mode through lists and dicts changed in place while another variable, an object's field or a
caller holds the same object (`q = ps; q.append(x); sum(ps)`, `self.ps[:] = ...`, `add(ps, x)`, a closure's `acc.append(x)`, `q *= 2`), through
slice assignments that change a list's length, and through a property whose getter is not a plain function.
Each was silently wrong (a cotangent left with the alias, most often 0); every gradient is checked against
central finite differences, and forward mode too (it was right: it must stay so)."""

import operator

import numpy as np
import pytest

from contexts import gradient, jacfwd

from tests import fd

X = np.array([1.0, 2.5])


# -- aliases of one list or dict ------------------------------------------------------------------------

def alias_setitem(v):
    ps = [0.0, 0.0]
    q = ps
    q[0] = v[0] * 2
    q[1] = v[1]
    return sum(ps)


def alias_slice_assign(v):
    ps = []
    q = ps
    q[:] = [v[0] * 2, v[1]]
    return sum(ps)


def alias_append(v):
    ps = []
    q = ps
    q.append(v[0] * 2)
    q.append(v[1])
    return sum(ps)


def alias_extend(v):
    ps = []
    q = ps
    q.extend([v[0] * 2, v[1]])
    return sum(ps)


def alias_iadd(v):
    ps = [0.0]
    q = ps
    q += [v[0] * 2, v[1]]
    return sum(ps)


def alias_insert_then_set(v):
    ps = [1.0]
    q = ps
    q.insert(0, v[0] * 2)
    q[1] = v[1]
    return sum(ps)


def alias_read_between(v):
    ps = []
    q = ps
    q.append(v[0] * 2)
    r = ps[0] * v[1]
    q.append(r)
    return sum(ps) + q[0]


def alias_pop_append(v):
    ps = [v[0], v[1]]
    q = ps
    q.pop()
    q.append(v[1] * 3)
    return sum(ps)


def alias_del(v):
    ps = [v[0], v[1], 5.0]
    q = ps
    del q[0]
    return sum(ps)


def alias_del_slices(v):
    ps = [v[0], v[1], 5.0, 7.0]
    q = ps
    del q[1:3]
    del ps[::2]
    return sum(q) * 3 + v[1]


def alias_in_dict(v):
    ps = []
    d = {"p": ps}
    d["p"][:] = [v[0] * 2, v[1]]
    return sum(ps)


def alias_loop_append(v):
    ps = []
    q = ps
    for x in (v[0], v[1]):
        q.append(x * x)
    return sum(ps)


def alias_grow_while_reading(v):
    ps = [v[0], v[1]]
    out = ps
    for i in range(2):
        out.append(out[i] * out[i + 1])
    return sum(ps)


def alias_held_twice(v):
    a = [v[0]]
    b = [a, a]
    b[0].append(v[1] * 2)
    return sum(b[1]) + sum(a)


# -- a list held by an object's field ---------------------------------------------------------------------

class SliceInit:
    def __init__(self, *xs):
        self.ps = []
        self.ps[:] = list(xs)


class ItemInit:
    def __init__(self, a, b):
        self.ps = [0.0, 0.0]
        self.ps[0] = a * 2
        self.ps[1] = b


class ExtendInit:
    def __init__(self, a, b):
        self.ps = []
        self.ps.extend([a * 2, b])


class Adder:
    def __init__(self):
        self.ps = []

    def add(self, x):
        self.ps.append(x)


class Holder:
    def __init__(self, ps):
        self.ps = ps

    def total(self):
        return sum(self.ps)


def field_given_then_changed(v):
    ps = []
    h = Holder(ps)
    ps.append(v[0] * 2)
    ps.append(v[1])
    return h.total()


def field_shared_by_two(v):
    ps = []
    hs = [Holder(ps), Holder(ps)]
    hs[0].ps.append(v[0] * 2)
    hs[1].ps.append(v[1])
    return hs[0].total() + hs[1].total()


def field_slice(v):
    return sum(SliceInit(v[0] * 2, v[1]).ps)


def field_item(v):
    return sum(ItemInit(v[0], v[1]).ps)


def field_extend(v):
    return sum(ExtendInit(v[0], v[1]).ps)


def field_method_append(v):
    a = Adder()
    a.add(v[0] * 2)
    a.add(v[1])
    return sum(a.ps)


# -- a list changed by a Python function it is passed to ------------------------------------------------

def _add(lst, x):
    lst.append(x)


def _set_first(lst, x):
    lst[0] = x


def callee_append(v):
    ps = []
    _add(ps, v[0] * 2)
    _add(ps, v[1])
    return sum(ps)


def callee_append_alias(v):
    ps = []
    q = ps
    _add(q, v[0] * 2)
    _add(q, v[1])
    return sum(ps)


def callee_setitem_alias(v):
    ps = [0.0, v[1]]
    q = ps
    _set_first(q, v[0] * 2)
    return sum(ps)


def callee_field(v):
    a = Adder()
    _add(a.ps, v[0] * 2)
    _add(a.ps, v[1])
    return sum(a.ps)


def closure_append(v):
    acc = []

    def inner(val):
        acc.append(val)
    inner(v[0] * 2)
    inner(v[1])
    return sum(acc)


def alias_repeat(v):
    ps = [v[0], v[1]]
    q = ps
    q *= 2  # in place: ps is repeated too
    return ps[0] + ps[1] * 2 + ps[2] * 3 + ps[3] * 4 + len(ps)


# -- slice assignments changing the length ------------------------------------------------------------------

def slice_shrink(v):
    ps = [1.0, v[0], 3.0]
    i = 1
    ps[i:] = ()
    return sum(ps) + v[1]


def slice_insert(v):
    ps = [1.0, 2.0]
    ps[1:1] = [v[0], v[1] * 2]
    return ps[1] * 3 + ps[2] + ps[3]


def slice_grow_middle(v):
    ps = [v[0], 2.0, v[1]]
    ps[1:2] = [v[1] * v[0], v[0], 4.0]
    return ps[0] + ps[1] * 2 + ps[2] * 3 + ps[4] * 5


def slice_replace_shorter(v):
    ps = [1.0, 2.0, 4.0]
    ps[0:2] = [v[0]]
    return ps[0] * 3 + ps[1] + v[1]


# -- a property whose getter is not a plain function ----------------------------------------------------

class CachingProperty(property):
    """pygeodesy's `Property`: the getter is a method bound to the property, caching in the instance."""

    def __init__(self, method):
        self.method = method
        self.name = method.__name__
        property.__init__(self, self._fget)

    def _fget(self, inst):
        try:
            return inst.__dict__[self.name]
        except KeyError:
            inst.__dict__[self.name] = val = self.method(inst)
            return val


class Cached:
    def __init__(self, a, b):
        self.ps = [a, b]

    @CachingProperty
    def total(self):
        return self.ps[0] * 2 + self.ps[1]

    first = property(operator.attrgetter("ps"))


def property_bound_getter(v):
    c = Cached(v[0], v[1])
    return c.total + c.total * 0.5


def property_c_getter(v):
    c = Cached(v[0], v[1])
    return c.first[0] * 3 + c.first[1]


CASES = [alias_setitem, alias_slice_assign, alias_append, alias_extend, alias_iadd, alias_insert_then_set,
         alias_read_between, alias_pop_append, alias_del, alias_del_slices, alias_in_dict, alias_loop_append,
         alias_grow_while_reading, alias_held_twice,
         field_given_then_changed, field_shared_by_two, field_slice, field_item, field_extend, field_method_append,
         callee_append, callee_append_alias, callee_setitem_alias, callee_field, closure_append, alias_repeat,
         slice_shrink, slice_insert, slice_grow_middle, slice_replace_shorter,
         property_bound_getter, property_c_getter]


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_reverse_matches_finite_differences(f):
    (g,) = gradient(f, X.copy())
    np.testing.assert_allclose(g, fd.gradient(f, X.copy())[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_forward_matches_finite_differences(f):
    np.testing.assert_allclose(jacfwd(f, X.copy()), fd.gradient(f, X.copy())[0], rtol=1e-6, atol=1e-8)


def test_the_list_after_the_pass_is_as_the_function_left_it():
    # the reverse pass undoes each change and redoes it after: the caller's list ends as f left it
    ps = [1.0]

    def f(v):
        q = ps
        q[0:1] = [v[0], v[1] * 2, 3.0]
        del q[2]
        return sum(ps) * v[0]

    gradient(f, X.copy())
    assert ps == [1.0, 5.0]
