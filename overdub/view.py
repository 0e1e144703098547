"""The static view of a patched function (placeholder; being written)."""
from __future__ import annotations

import ast

from .patch import instrumented

__all__ = ["StaticView", "view", "show"]


class StaticView:
    def __init__(self, inst):
        self.inst = inst

    def __str__(self):
        return "\n".join(f"%{s.id} = {s.kind} {s.op}" for s in self.inst.sites)


def view(fn, intercepts=None):
    return StaticView(instrumented(fn, intercepts or frozenset({"call"})))


def show(fn, intercepts=None) -> str:
    v = view(fn, intercepts)
    return ast.unparse(v.inst.tree) + "\n\n" + str(v)
