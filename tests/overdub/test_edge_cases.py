"""Rewriting corners: classes and decorators inside patched functions, temporaries where walrus is not
allowed, attribute augmented assignment, escaping closures, doctests of the package."""

import doctest
import functools
import importlib

import pytest

import overdub

from ._helpers import Recorder, calls


def defines_things(x):
    @functools.lru_cache(maxsize=None)
    def cached(v):
        return abs(v)

    class Local:
        limit = [i for i in range(3) if 0 < i < 2]  # chained comparison in a class-body comprehension
        __secret = 5

        def __init__(self, v):
            self.v = v

        def total(self):
            self.v += self.__secret
            return self.v + sum(self.limit)

    class Child(Local):
        def total(self):
            return super().total() * 2

    return cached(x), Child(x).total(), Local.__dict__["_Local__secret"]


def test_classes_and_decorators_inside_a_patched_function():
    for intercepts in (["call"], overdub.KINDS):
        rec = Recorder(intercepts)
        assert rec.run(defines_things, -3) == defines_things(-3) == (3, 6, 5)
    assert "super().total" in calls(rec.ops) and "self.total" not in calls(rec.ops)


def attribute_aug(obj, xs):
    obj.count += len(xs)
    obj.items[len(xs) - 1] -= 1
    return [y for y in xs if 0 <= y < 3 < 4], obj.count


class Box:
    def __init__(self):
        self.count, self.items = 1, [10, 20]


def test_attribute_augmented_assignment_and_comprehension_chains():
    a, b = Box(), Box()
    rec = Recorder()
    assert attribute_aug(a, [0, 5]) == rec.run(attribute_aug, b, [0, 5]) == ([0], 3)
    assert a.items == b.items == [10, 19]
    assert ("getattr", "getattr .count") in rec.ops and ("setattr", "setattr .count") in rec.ops


def make_closure(k):
    return lambda v: abs(v) * k


def test_closures_escaping_a_run_work_without_a_context():
    rec = Recorder(["call", "binop"])
    fn = rec.run(make_closure, 3)
    assert rec.ops == []
    assert fn(-2) == 6 and rec.ops == []  # no context: runs plainly, nothing recorded
    with rec:
        assert fn(-2) == 6
    assert rec.ops == [("call", "abs"), ("binop", "*")]


def keywords(a, /, b, *, c=1, **rest):
    return a, b, c, rest


def test_lambda_defaults_and_keyword_only():
    f = lambda x, y=2, *, z=3: keywords(x, b=y, c=z, extra=x + y + z)  # noqa: E731
    rec = Recorder(["call"])
    assert rec.run(f, 1) == f(1) == (1, 2, 3, {"extra": 6})
    assert rec.run(f, 1, z=0, y=5) == f(1, z=0, y=5)
    assert calls(rec.ops) == ["keywords", "keywords"]


@pytest.mark.parametrize("module", ["overdub", "overdub.context", "overdub.patch", "overdub.cache",
                                    "overdub.view", "overdub.stack"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0


def _array_methods(x):
    y = x.copy()
    return (y * x.sum()).sum() + x.reshape(2, 2).T.sum()


def _falsy_owner_methods(x):
    acc = []
    acc.append(x)          # a method of an empty (falsy) list
    zero = 0.0
    return acc[0] + zero.__add__(x) + (0).__add__(1)


def test_methods_of_falsy_or_array_owners_run_under_a_context():
    """A bound method is a module's builtin only when its owner is a module: an array owner (whose truth
    value raises) or a falsy one (an empty list, 0.0) is an instance."""
    import numpy as np
    x = np.arange(4.0)
    assert overdub.Context().run(_array_methods, x) == _array_methods(x)
    assert overdub.Context().run(_falsy_owner_methods, 2.0) == _falsy_owner_methods(2.0)
