"""`TraceContext`: the call tree of a run, with arguments, results, exceptions and times.

Invariant: tracing only observes; every call runs exactly as it would without the context and its
result or exception reaches the caller unchanged.
"""

from __future__ import annotations

import json
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

import overdub
from overdub.passes import original_code

from ._blind import Observing
from ._show import callable_module, callable_name, is_engine, restated, short_repr, unbound_function

__all__ = ["TraceContext", "CallNode"]


@dataclass(slots=True)
class CallNode:
    """One recorded call: who was called with what, what came back (or was raised) and how long it took."""

    function: str                    # qualname of the callee
    module: str                      # the callee's module
    args: list[str]                  # short reprs of the positional arguments (`self` first for a method)
    kwargs: dict[str, str]           # short reprs of the keyword arguments
    depth: int                       # number of enclosing calls in the run (the root call has depth 0)
    site: str | None = None          # "file:line" of the call in the caller's source (None for the root)
    result: str | None = None        # short repr of the return value
    exception: str | None = None     # short repr of the exception the call raised
    duration: float = 0.0            # seconds, including the context's overhead (and the one-time
                                     # patching of functions met for the first time) in callees
    children: list["CallNode"] = field(default_factory=list)

    def call_text(self) -> str:
        """`name(arg, key=value)` as the call would read in source."""
        parts = self.args + [f"{k}={v}" for k, v in self.kwargs.items()]
        return f"{self.function}({', '.join(parts)})"

    def outcome_text(self) -> str:
        return f"!! {self.exception}" if self.exception is not None else f"-> {self.result}"

    def walk(self) -> Iterator["CallNode"]:
        """This node and all nodes under it, in call order."""
        yield self
        for child in self.children:
            yield from child.walk()

    def to_dict(self) -> dict[str, Any]:
        return {"function": self.function, "module": self.module, "args": self.args,
                "kwargs": self.kwargs, "result": self.result, "exception": self.exception,
                "duration": self.duration, "depth": self.depth, "site": self.site,
                "children": [c.to_dict() for c in self.children]}


class TraceContext(Observing, overdub.Context):
    """Record the tree of calls a function makes, including calls inside third-party code.

    Filters choose what is recorded (not what runs): `modules` keeps calls of functions whose module is
    one of the given names or inside one of them, `functions` keeps calls of the given functions (objects,
    names or qualnames), `max_depth` drops calls nested deeper than that (the root call has depth 0), and
    `primitives=True` also records calls of builtins and C functions. A recorded call whose caller was
    filtered out hangs under its nearest recorded ancestor.

    One instance records one thread's calls. Calls of a generator function are recorded when the
    generator is made; the calls its body makes while iterated under the context hang under whatever
    call is running then.

    >>> def fib(n):
    ...     return n if n < 2 else fib(n - 1) + fib(n - 2)
    >>> ctx = TraceContext()
    >>> ctx.run(fib, 3)
    2
    >>> print(ctx.tree(times=False))
    fib(3) -> 2
      fib(2) -> 1
        fib(1) -> 1
        fib(0) -> 0
      fib(1) -> 1
    >>> len(ctx.find("fib"))
    5
    """

    intercepts = frozenset({"call"})

    def __init__(self, *, modules: Iterable[str] | None = None,
                 functions: Iterable[Callable | str] | None = None,
                 max_depth: int | None = None, primitives: bool = False):
        super().__init__()
        self.modules = tuple(modules) if modules is not None else None
        self.functions = _function_filter(functions)
        self.max_depth = max_depth
        self.primitives = primitives
        self.roots: list[CallNode] = []
        self._open: list[CallNode] = []
        self._depth = 0
        self._names: dict = {}

    # -- interception ------------------------------------------------------------------------------
    def overdub(self, site, fn, /, *args, **kwargs):
        return self._call(site, fn, args, kwargs)

    def run(self, fn, /, *args, **kwargs):
        """Run `fn(*args, **kwargs)` under this context and record it as a root of the tree."""
        with self:
            return self._call(None, fn, args, kwargs)

    def _call(self, site, fn, args, kwargs):
        """Run one call (recursing into pure Python), recording it when the filters keep it."""
        if restated(fn):
            return self.primitive(fn, *args, **kwargs)
        self.seen += 1
        recursable = (site is None or site.kind == "call") and overdub.is_recursable(fn)
        engine = recursable and is_engine(fn)  # recorded, run as a primitive: it reports the user's calls
        if not recursable and not self.primitives:
            return self.primitive(fn, *args, **kwargs)
        run = self.recurse if recursable and not engine else self.primitive
        depth = self._depth
        if not self._keeps(fn, depth):
            self._depth = depth + 1
            try:
                return run(fn, *args, **kwargs)
            finally:
                self._depth = depth
        name, module = self._names_of(fn)
        shown = args
        owner = getattr(fn, "__self__", None)
        if owner is not None and type(owner) is not types.ModuleType:  # x.method(a) reads as method(x, a)
            shown = (owner, *args)
        node = CallNode(name, module, [short_repr(a) for a in shown],
                        {k: short_repr(v) for k, v in kwargs.items()} if kwargs else {},
                        depth, None if site is None else f"{site.filename}:{site.lineno}")
        return self._timed(node, depth, run, fn, *args, **kwargs)

    def _timed(self, node, depth, run, *args, **kwargs):
        """run(*args, **kwargs) as node's call: opened under the current node, timed, its result or
        exception recorded."""
        (self._open[-1].children if self._open else self.roots).append(node)
        self._open.append(node)
        self._depth = depth + 1
        start = time.perf_counter()
        try:
            result = run(*args, **kwargs)
        except BaseException as e:
            node.exception = short_repr(e)
            raise
        finally:
            node.duration = time.perf_counter() - start
            self._open.pop()
            self._depth = depth
        node.result = short_repr(result)
        return result

    def observe_derivative(self, op, run):
        """A call of a user function in a derivative (`contexts.ad.observe`), recorded like any call; the
        backward pass records `adjoint of f(cotangent)`. Primitives only with `primitives=True`."""
        self.seen += 1
        if not op.recursed and not self.primitives:
            return run()
        depth = self._depth
        shown = ([short_repr(op.cotangent)] if op.adjoint else [short_repr(a) for a in op.args])
        kwargs = {} if op.adjoint else {k: short_repr(v) for k, v in op.kwargs.items()}
        name = f"adjoint of {op.site.op}" if op.adjoint else op.site.op
        node = CallNode(name, op.site.filename, shown, kwargs, depth, f"{op.site.filename}:{op.site.lineno}")
        result = self._timed(node, depth, run)
        if op.split is not None:  # forward mode: the primal result (its tangent rides along)
            node.result = short_repr(op.split(result)[0])
        return result

    def _names_of(self, fn) -> tuple[str, str]:
        """(qualname, module) of a callable, cached per code object for Python functions and methods."""
        plain = fn.__func__ if type(fn) is types.MethodType else fn
        code = getattr(plain, "__code__", None) if type(plain) is types.FunctionType else None
        found = self._names.get(code) if code is not None else None
        if found is None:
            found = (callable_name(fn), callable_module(fn))
            if code is not None:
                self._names[code] = found
        return found

    def _keeps(self, fn, depth: int) -> bool:
        if self.max_depth is not None and depth > self.max_depth:
            return False
        if self.modules is not None:
            module = callable_module(fn)
            if not any(module == m or module.startswith(m + ".") for m in self.modules):
                return False
        if self.functions is not None:
            return self.functions(fn)
        return True

    # -- views -------------------------------------------------------------------------------------
    def nodes(self) -> Iterator[CallNode]:
        """Every recorded call, in call order."""
        for root in self.roots:
            yield from root.walk()

    def find(self, name: str) -> list[CallNode]:
        """The recorded calls of the function with this name or qualname."""
        return [n for n in self.nodes() if n.function == name or n.function.rsplit(".", 1)[-1] == name]

    def clear(self) -> None:
        """Forget everything recorded so far."""
        self.roots.clear()

    def tree(self, times: bool = True) -> str:
        """The call tree as indented text, one call per line: `f(args) -> result  [time]`."""
        lines = []

        def add(node: CallNode, indent: int) -> None:
            line = "  " * indent + f"{node.call_text()} {node.outcome_text()}"
            lines.append(line + (f"  [{_ms(node.duration)}]" if times else ""))
            for child in node.children:
                add(child, indent + 1)

        for root in self.roots:
            add(root, 0)
        return "\n".join(lines)

    __str__ = tree

    def to_json(self, indent: int | None = 2) -> str:
        """The call tree as JSON: a list of root calls, each with its `children`."""
        return json.dumps([r.to_dict() for r in self.roots], indent=indent)

    def to_dot(self, path: str | None = None) -> str:
        """The call tree as Graphviz DOT text (render with `dot -Tsvg`); written to `path` if given."""
        lines = ["digraph calls {", '  node [shape=box, fontname="monospace"];']
        numbers = {id(n): i for i, n in enumerate(self.nodes())}
        for node in self.nodes():
            label = f"{node.call_text()}\n{node.outcome_text()}\n{_ms(node.duration)}"
            style = ', color="red"' if node.exception is not None else ""
            lines.append(f'  n{numbers[id(node)]} [label="{_dot_escape(label)}"{style}];')
            for child in node.children:
                lines.append(f"  n{numbers[id(node)]} -> n{numbers[id(child)]};")
        lines.append("}")
        text = "\n".join(lines) + "\n"
        if path is not None:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return text


def _function_filter(functions) -> Callable[[Any], bool] | None:
    """A predicate on callables from a list of function objects, names and qualnames."""
    if functions is None:
        return None
    names, codes, objects = set(), set(), []
    for f in functions:
        if isinstance(f, str):
            names.add(f)
        elif unbound_function(f) is not None:
            codes.add(original_code(unbound_function(f).__code__))
        else:
            objects.append(f)

    def keeps(fn) -> bool:
        plain = unbound_function(fn)
        if plain is not None and original_code(plain.__code__) in codes:  # closures made in patched code too
            return True
        name = callable_name(fn)
        if name in names or name.rsplit(".", 1)[-1] in names:
            return True
        return any(fn is o or fn == o for o in objects)

    return keeps


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds < 1 else f"{seconds:.3f} s"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
