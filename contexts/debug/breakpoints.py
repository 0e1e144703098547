"""`breakpoint_on(fn)`: enter the debugger at the first line of every call of `fn` under the context.

How: a call of `fn` does not recurse into fn's patched twin directly but into a *breaking twin*, a function
compiled from fn's own definition (same name, file, argument names and defaults, line numbers) whose body
is two statements placed on the line of fn's first statement: `sys.breakpointhook()`, then a call of
fn's patched twin (`overdub.patch`) with the same arguments. So the hook runs with a frame of fn
current whose locals are exactly the call's arguments, `PYTHONBREAKPOINT` is honoured (the hook is
looked up on `sys` at each break), the caller is untouched, and everything fn does still runs under the
context (recursive calls break too). In pdb, `step` goes straight into the body of fn (the patched twin
keeps fn's lines).

The two helpers the breaking twin needs are globals, not closure cells, so they do not show among the
frame's locals: the twin's globals are a copy of fn's module globals taken at the break, plus the helpers
(a dict subclass falling back to the live module would not do: the debugger's `eval` ignores
`__missing__`). The twin's only statements read the helpers, so the copy changes nothing fn does.

Invariant: the breaking twin forwards exactly the arguments it received; without a break it is never
used, and neither the original function nor its module is modified.
"""

from __future__ import annotations

import ast
import functools
import sys
import types
from typing import Callable

import overdub
from overdub.passes import compile_twin, get_source, original_code
from overdub.errors import OverdubError, describe

from ._blind import Observing
from ._show import is_engine

__all__ = ["BreakpointContext", "breakpoint_on"]


def breakpoint_on(fn: Callable, condition: Callable[..., bool] | None = None) -> "BreakpointContext":
    """A context that enters the debugger (`sys.breakpointhook()`, so `PYTHONBREAKPOINT` applies) at the
    first line of every call of `fn` it runs, with fn's frame current; `condition(*args, **kwargs)`, given
    the call's arguments (`self` first for methods), chooses which calls break.

    >>> import sys
    >>> def fib(n):
    ...     return n if n < 2 else fib(n - 1) + fib(n - 2)
    >>> seen = []
    >>> sys.breakpointhook = lambda: seen.append(sys._getframe(1).f_locals["n"])
    >>> breakpoint_on(fib, condition=lambda n: n >= 2).run(fib, 4)
    3
    >>> seen
    [4, 3, 2, 2]
    >>> sys.breakpointhook = sys.__breakpointhook__
    """
    return BreakpointContext(fn, condition)


class BreakpointContext(Observing, overdub.Context):
    """Break at entry of `target` (see `breakpoint_on`). `hits` counts the breaks taken so far."""

    intercepts = frozenset({"call"})

    def __init__(self, target: Callable, condition: Callable[..., bool] | None = None):
        super().__init__()
        plain, _, _ = _unwrap(target)
        if plain is None or not overdub.is_recursable(plain):
            raise OverdubError(
                f"cannot break inside {describe(target)}: it is not a Python function with source",
                where=describe(target),
                fix="break on the Python function that calls it, or pass the function itself, not a "
                    "builtin or C extension function")
        self.target, self.condition = plain, condition
        self.hits = 0
        self._twin_codes: dict[types.CodeType, types.CodeType] = {}  # fn's code -> breaking twin's

    def overdub(self, site, fn, /, *args, **kwargs):
        self.seen += 1
        if is_engine(fn):  # a derivative engine: it reports the user's calls (observe_derivative)
            return self.primitive(fn, *args, **kwargs)
        plain, pre, pre_kw = _unwrap(fn)
        if plain is not None and self._is_target(plain):
            return self._call_target(plain, (*pre, *args), {**pre_kw, **kwargs})
        init = _plain_init(fn)
        if init is not None and self._is_target(init):  # `Cls(...)` with a breakpoint on Cls.__init__
            obj = object.__new__(fn)
            result = self._call_target(init, (obj, *args), kwargs)
            if result is not None:
                raise TypeError(f"__init__() should return None, not '{type(result).__name__}'")
            return obj
        return super().overdub(site, fn, *args, **kwargs)

    def observe_derivative(self, op, run):
        """A call of the target in a derivative (`contexts.ad.observe`; forward pass only): the debugger
        at its first line, with its arguments (forward mode: their primal values) as the frame's locals,
        before the engine runs the call; stepping on leaves that frame (the engine runs the body)."""
        self.seen += 1
        if op.recursed and not op.adjoint:
            plain, pre, pre_kw = _unwrap(op.fn)
            if plain is not None and self._is_target(plain) and not plain.__code__.co_flags & _LAZY:
                args, kwargs = (*pre, *op.args), {**pre_kw, **op.kwargs}
                if self.condition is None or self.condition(*args, **kwargs):
                    self.hits += 1
                    self._breaking_twin(plain, then=_nothing)(*args, **kwargs)
        return run()

    def _is_target(self, plain: types.FunctionType) -> bool:
        # Closures made inside patched code run a copy of the original's code: compare originals.
        return original_code(plain.__code__) is original_code(self.target.__code__)

    def _call_target(self, plain: types.FunctionType, args: tuple, kwargs: dict):
        if self.condition is None or self.condition(*args, **kwargs):
            self.hits += 1
            return self._breaking_twin(plain)(*args, **kwargs)
        return self.recurse(plain, *args, **kwargs)

    def run(self, fn, /, *args, **kwargs):
        """Run `fn(*args, **kwargs)` under this context; the root call breaks too if it is the target."""
        with self:
            return self.overdub(None, fn, *args, **kwargs)

    def _breaking_twin(self, plain: types.FunctionType, then=None) -> types.FunctionType:
        """A function like `plain` that calls the breakpoint hook, then plain's patched twin (or `then`)."""
        original = original_code(plain.__code__)
        code = self._twin_codes.get(original)
        if code is None:
            code = self._twin_codes[original] = _breaking_code(original)
        namespace = dict(plain.__globals__, __od_sys__=sys,
                         __od_twin__=overdub.patch(plain, self.intercepts) if then is None else then)
        twin = types.FunctionType(code, namespace, plain.__name__, plain.__defaults__)
        twin.__kwdefaults__, twin.__qualname__ = plain.__kwdefaults__, plain.__qualname__
        return twin


def _nothing(*args, **kwargs) -> None:
    """What a breaking twin runs after the break when the engine runs the call itself."""


def _unwrap(fn) -> tuple[types.FunctionType | None, tuple, dict]:
    """(plain function, leading arguments, keyword arguments) that a call of `fn` amounts to."""
    pre, kw = (), {}
    for _ in range(8):
        if isinstance(fn, types.FunctionType):
            return fn, pre, kw
        if isinstance(fn, types.MethodType):
            fn, pre = fn.__func__, (fn.__self__,) + pre
        elif isinstance(fn, functools.partial):
            fn, pre, kw = fn.func, fn.args + pre, {**fn.keywords, **kw}
        else:
            break
    return None, (), {}


def _plain_init(cls) -> types.FunctionType | None:
    """The Python `__init__` that calling cls amounts to after `object.__new__`, or None."""
    if not isinstance(cls, type) or type(cls).__call__ is not type.__call__:
        return None
    if cls.__new__ is not object.__new__:
        return None
    init = cls.__init__
    return init if type(init) is types.FunctionType else None


def _breaking_code(code: types.CodeType) -> types.CodeType:
    """The code of a breaking twin (see the module docstring) for the function whose code this is."""
    source = get_source(code)
    tree = source.as_function_def()
    line = tree.body[0].lineno if tree.body else tree.lineno
    col = tree.body[0].col_offset if tree.body else tree.col_offset
    at = dict(lineno=line, col_offset=col, end_lineno=line, end_col_offset=col)

    hook = ast.Attribute(value=ast.Name("__od_sys__", ast.Load(), **at), attr="breakpointhook",
                         ctx=ast.Load(), **at)
    call_hook = ast.Expr(ast.Call(func=hook, args=[], keywords=[], **at), **at)
    forward = ast.Call(func=ast.Name("__od_twin__", ast.Load(), **at), args=_forwarded_args(tree.args, at),
                       keywords=_forwarded_keywords(tree.args, at), **at)
    tree.body = [call_hook] + _return_of(forward, code, at)
    code = compile_twin(source, tree)
    assert not code.co_freevars, code.co_freevars  # the body names only the two helper globals
    return code


def _forwarded_args(args: ast.arguments, at: dict) -> list[ast.expr]:
    names = [ast.Name(a.arg, ast.Load(), **at) for a in args.posonlyargs + args.args]
    if args.vararg:
        names.append(ast.Starred(ast.Name(args.vararg.arg, ast.Load(), **at), ast.Load(), **at))
    return names


def _forwarded_keywords(args: ast.arguments, at: dict) -> list[ast.keyword]:
    keywords = [ast.keyword(arg=a.arg, value=ast.Name(a.arg, ast.Load(), **at), **at)
                for a in args.kwonlyargs]
    if args.kwarg:
        keywords.append(ast.keyword(arg=None, value=ast.Name(args.kwarg.arg, ast.Load(), **at), **at))
    return keywords


_GENERATOR, _COROUTINE, _ASYNC_GENERATOR = 0x20, 0x80, 0x200
_LAZY = _GENERATOR | _COROUTINE | _ASYNC_GENERATOR


def _return_of(call: ast.Call, code: types.CodeType, at: dict) -> list[ast.stmt]:
    """The statements that hand the twin's result back; generators and coroutines stay lazy, so the
    break happens when the body would start running."""
    if code.co_flags & _ASYNC_GENERATOR:
        item = ast.Name("__od_item__", ast.Store(), **at)
        body = [ast.Expr(ast.Yield(ast.Name("__od_item__", ast.Load(), **at), **at), **at)]
        return [ast.AsyncFor(target=item, iter=call, body=body, orelse=[], **at)]
    if code.co_flags & _COROUTINE:
        return [ast.Return(ast.Await(call, **at), **at)]
    if code.co_flags & _GENERATOR:
        return [ast.Return(ast.YieldFrom(call, **at), **at)]
    return [ast.Return(call, **at)]
