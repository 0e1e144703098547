"""`lowered.activity.private_containers`: the lists, dicts and sets a function makes that no other object
can hold, whose in-place changes reverse mode does not scan every variable's object graph for (zip over a
mapping's keys view in colour scanned the whole colourspace registry on each `row.append`: 40x its primal).
Each shape that lets another object hold the container keeps it out; gradients through both kinds are
checked against central differences."""

import ast
import textwrap

import numpy as np
import pytest

from contexts import gradient
from contexts.lowered.activity import private_containers
from tests import fd


def private(src: str, globals_=None) -> frozenset:
    return private_containers(ast.parse(textwrap.dedent(src)).body[0], globals_ or {})


def test_made_here_and_read_by_its_own_methods_items_and_readers():
    assert private("""
        def f(xs):
            row, seen = [], {}
            out = []
            for x in xs:
                row.append(x)
                seen[x] = len(row)
                out.append(tuple(row))
            if row and 3 in seen:
                return out
            return sorted(row)
        """) >= {"out"}  # (`row, seen = ...`: a tuple target, not counted)
    assert private("""
        def f(xs):
            row = []
            for x in xs:
                row.append(x * 2)
            total = sum(row) + row[0] + len(row)
            return row
        """) == {"row"}


@pytest.mark.parametrize("leak", [
    "alias = row",
    "holder.items = row",
    "bag = {'k': row}",
    "keep(row)",
    "it = iter(row)",
    "view = d.keys() if (d := {}) else row",
    "g = lambda: row",
    "both = (row, 1)",
    "print(locals())",
])
def test_every_way_out_keeps_it_out(leak):
    assert "row" not in private(f"""
        def f(xs, holder, keep):
            row = []
            {leak}
            for x in xs:
                row.append(x)
            return 0
        """)


def test_a_generators_items_as_the_lowering_collects_them():
    assert private("""
        def f(xs):
            _od_yields = []
            for x in xs:
                _od_yields.append(x * 2)
            return __od_eager__(_od_yields)
        """) == {"_od_yields"}


def test_a_parameter_or_a_shadowed_reader_is_not_private():
    assert private("def f(row):\n    row.append(1)\n    return row\n") == frozenset()
    assert "row" not in private("def f():\n    row = []\n    tuple(row)\n    row.append(1)\n", {"tuple": print})


class Holder:
    def __init__(self):
        self.rows = []


def held_and_private(x):
    h = Holder()
    mine = []
    shared = []
    h.rows = shared  # (shared is held by h: its in-place changes merge h's cotangents)
    for v in x:
        mine.append(v * v)
        shared.append(3.0 * v)
    return sum(mine) + sum(h.rows) * x[0] + sum(zip(mine, shared).__next__())


def test_gradients_through_both_kinds():
    x = np.array([0.5, -1.2, 2.0])
    np.testing.assert_allclose(gradient(held_and_private, x)[0], fd.gradient(held_and_private, x)[0], rtol=1e-6)
