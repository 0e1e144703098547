"""`CountContext`: how many operations of each kind every function performs.

Invariant: each intercepted operation is counted exactly once, under the function whose source contains
it (`site.function`), and counting never changes what runs.
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import Iterable

import overdub

from ._blind import Observing
from ._show import callable_module, callable_name, is_engine, restated

__all__ = ["CountContext", "CATEGORIES"]

# The columns of the table, in order. Every operation falls in exactly one.
CATEGORIES = ("python calls", "numpy calls", "other calls", "arithmetic", "compare", "subscript",
              "attribute", "other")
_CATEGORY_OF_KIND = {"binop": "arithmetic", "unaryop": "arithmetic", "augop": "arithmetic",
                     "compare": "compare", "getitem": "subscript", "setitem": "subscript",
                     "delitem": "subscript", "getattr": "attribute", "setattr": "attribute",
                     "delattr": "attribute", "iter": "other", "unpack": "other", "build": "other"}


class CountContext(Observing, overdub.Context):
    """Count the operations each function performs: calls (of pure Python, of numpy, of anything else),
    arithmetic, comparisons, subscripts, attribute accesses and the rest.

    `ctx.counts[function][category]` holds the numbers (`function` is the qualname of the function whose
    code performed the operation), `ctx.ops[function][op]` the same per operator or callee (`'+'`,
    `'fib'`, `'numpy.sum'`), and `ctx.calls[callee]` how often each function was called, the root call
    included. `ctx.table()` prints them.

    >>> def fib(n):
    ...     return n if n < 2 else fib(n - 1) + fib(n - 2)
    >>> ctx = CountContext()
    >>> ctx.run(fib, 5)
    5
    >>> ctx.calls["fib"], ctx.counts["fib"]["python calls"], ctx.ops["fib"]["+"]
    (15, 14, 7)
    """

    intercepts = overdub.KINDS

    def __init__(self, kinds: Iterable[str] | None = None):
        super().__init__()
        if kinds is not None:  # count fewer kinds of operation, at less cost
            self.intercepts = frozenset(kinds)
        self.counts: dict[str, Counter] = {}
        self.ops: dict[str, Counter] = {}
        self.calls: Counter = Counter()

    def overdub(self, site, fn, /, *args, **kwargs):
        if restated(fn):
            return self.primitive(fn, *args, **kwargs)
        self.seen += 1
        # Sites of other kinds stand for operator functions, never recursed into.
        recursable = (site is None or site.kind == "call") and overdub.is_recursable(fn) and not is_engine(fn)
        category, op = _classify(site, fn, recursable)
        where = site.function if site is not None else "<run>"
        counts = self.counts.get(where)
        if counts is None:
            counts = self.counts[where] = Counter()
            self.ops[where] = Counter()
        counts[category] += 1
        self.ops[where][op] += 1
        if recursable:
            self.calls[callable_name(fn)] += 1
            return self.recurse(fn, *args, **kwargs)
        return self.primitive(fn, *args, **kwargs)

    def observe_derivative(self, op, run):
        """Count an operation of a derivative (`contexts.ad.observe`) under its user function; those of the
        backward pass under `function [adjoint]`; in forward mode, an operation on perturbed operands
        also under `function [tangent]` (its tangent is computed next to it)."""
        self.seen += 1
        where = op.site.function + (" [adjoint]" if op.adjoint else "")
        self._count_derivative(op, where)
        if op.tangents is not None and not op.recursed and any(t is not None for t in op.tangents):
            self._count_derivative(op, op.site.function + " [tangent]")  # forward mode: its tangent too
        return run()

    def _count_derivative(self, op, where: str) -> None:
        counts = self.counts.get(where)
        if counts is None:
            counts = self.counts[where] = Counter()
            self.ops[where] = Counter()
        if op.recursed:
            category = "python calls"
            if not op.adjoint:
                self.calls[op.site.op] += 1
        elif op.site.kind == "binop":
            category = "arithmetic"
        else:
            category = "numpy calls" if _is_numpy(op.fn, callable_module(op.fn)) else "other calls"
        counts[category] += 1
        self.ops[where][op.site.op] += 1

    def run(self, fn, /, *args, **kwargs):
        """Run `fn(*args, **kwargs)` under this context, counting the root call in `calls` only."""
        with self:
            self.seen += 1
            if overdub.is_recursable(fn) and not is_engine(fn):
                self.calls[callable_name(fn)] += 1
                return self.recurse(fn, *args, **kwargs)
            return self.primitive(fn, *args, **kwargs)

    def total(self, category: str | None = None) -> int:
        """All operations counted, or those of one category, over every function."""
        return sum(sum(c.values()) if category is None else c[category] for c in self.counts.values())

    def clear(self) -> None:
        """Forget every count."""
        self.counts.clear()
        self.ops.clear()
        self.calls.clear()

    def table(self) -> str:
        """A text table: one row per function (most operations first), one column per category."""
        used = [c for c in CATEGORIES if any(cnt[c] for cnt in self.counts.values())]
        header = ["function"] + used + ["total"]
        rows = sorted(((name, [cnt[c] for c in used]) for name, cnt in self.counts.items()),
                      key=lambda r: (-sum(r[1]), r[0]))
        body = [[name] + [str(v) for v in values] + [str(sum(values))] for name, values in rows]
        totals = [sum(r[1][i] for r in rows) for i in range(len(used))]
        body.append(["(all)"] + [str(v) for v in totals] + [str(sum(totals))])
        widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]

        def line(cells):
            numbers = [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]
            return "  ".join([cells[0].ljust(widths[0])] + numbers)

        text = [line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in body]
        if self.calls:
            text += ["", "calls of Python functions: " + ", ".join(f"{name} x{n}" for name, n in
                                                                  self.calls.most_common())]
        return "\n".join(text)

    __str__ = table


def _classify(site, fn, recursable: bool) -> tuple[str, str]:
    """(category, op label) of one operation."""
    kind = site.kind if site is not None else "call"
    if kind != "call":
        op = site.op if kind in ("binop", "unaryop", "augop", "compare") else kind
        return _CATEGORY_OF_KIND.get(kind, "other"), op
    name = callable_name(fn)
    module = callable_module(fn)
    if _is_numpy(fn, module):
        return "numpy calls", f"numpy.{name}" if not name.startswith("numpy") else name
    return ("python calls" if recursable else "other calls"), name


def _is_numpy(fn, module: str) -> bool:
    if module == "numpy" or module.startswith("numpy."):
        return True
    if isinstance(fn, functools.partial):
        return _is_numpy(fn.func, callable_module(fn.func))
    return type(fn).__module__ == "numpy"  # ufuncs and numpy's dispatchers
