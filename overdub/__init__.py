"""overdub: run any pure-Python function under a pluggable context (Cassette's idea, in Python).

A function is patched by rewriting its syntax tree: every intercepted operation (calls, operators,
subscripts, attributes, iteration, ...) calls the innermost active context with a static `Site`.
Originals are never modified; twins are cached per code object and profile.

>>> import overdub
>>> class Count(overdub.Context):
...     intercepts = frozenset({"call", "binop"})
...     def __init__(self): self.n = 0
...     def prehook(self, site, fn, /, *args, **kwargs): self.n += 1
>>> ctx = Count()
>>> ctx.run(lambda x: abs(x) * 2 + 1, -3), ctx.n
(7, 3)
"""

from .context import Context
from .errors import ContextStackError, OverdubError, SourceUnavailable
from .patch import is_recursable, patch, without_source
from .sites import KINDS, Block, Site
from .source import opaque
from .stack import active, current
from .view import StaticView, show, view

__all__ = ["Context", "Site", "Block", "KINDS", "current", "active", "patch", "is_recursable", "without_source", "show",
           "view", "StaticView", "opaque", "OverdubError", "SourceUnavailable", "ContextStackError"]
