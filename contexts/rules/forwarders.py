"""Functions a library made by `exec` that only hand their parameters on (astropy's
`make_function_with_signature`: every model class's `__call__(self, *inputs, model_set_axis=None, ...)` is
`return __call__func(self, *inputs, model_set_axis=model_set_axis, ...)`, compiled with blank lines so that its
line is the original's, where the file holds another definition): no source, so reverse mode refused every
astropy model (dust_extinction's extinction curves; sweep V).

`forwarder_source(fn, owner)` writes the definition such a function must have, from its code object: its
parameters, one name it loads (the target), each parameter handed on as written (positionally, `*args`,
`name=name`, `**kwargs`). The text is compiled and its code compared with fn's: only an identical body (its
bytecode, names, variables and constants) is adopted, so a function doing anything else finds no source, as
before. The defaults in the text are placeholders: the engines bind a call by fn's own `__defaults__`.
"""

from __future__ import annotations

import ast
import inspect
import types

from .registry import registry

__all__ = ["forwarder_source"]


def _text(code: types.CodeType) -> str | None:
    """The definition's text, or None where the code's shape is not a forwarder's."""
    if len(code.co_names) != 1 or code.co_freevars or code.co_cellvars or code.co_flags & inspect.CO_GENERATOR:
        return None
    n, k = code.co_argcount, code.co_kwonlyargcount
    names = list(code.co_varnames)
    pos, kwonly = names[:n], names[n:n + k]
    rest = names[n + k:]
    star = rest.pop(0) if code.co_flags & inspect.CO_VARARGS else None
    starstar = rest.pop(0) if code.co_flags & inspect.CO_VARKEYWORDS else None
    if rest or code.co_posonlyargcount:
        return None  # (a local variable: more than a hand-on)
    params = [*pos] + ([f"*{star}"] if star else (["*"] if kwonly else [])) + [f"{p}=None" for p in kwonly] + (
        [f"**{starstar}"] if starstar else [])
    passed = [*pos] + ([f"*{star}"] if star else []) + [f"{p}={p}" for p in kwonly] + (
        [f"**{starstar}"] if starstar else [])
    blank = "\n" * (code.co_firstlineno - 1)
    return f"{blank}def {code.co_name}({', '.join(params)}):\n    return {code.co_names[0]}({', '.join(passed)})\n"


def _same_body(a: types.CodeType, b: types.CodeType) -> bool:
    return (a.co_code == b.co_code and a.co_names == b.co_names and a.co_varnames == b.co_varnames
            and a.co_consts == b.co_consts and a.co_flags == b.co_flags)


def forwarder_source(fn, owner):
    """The definition of fn, a function made by `exec` that hands its parameters to one name, or None."""
    code = fn.__code__
    if code.co_filename.startswith("<"):  # (text no file names, `exec("def f(x): ...")`: a primitive, as the core
        return None                       # takes it; astropy compiles its wrappers under the module's file name)
    text = _text(code)
    if text is None:
        return None
    try:
        made = compile(text, code.co_filename, "exec", dont_inherit=True)  # (not this module's `__future__` flags)
    except SyntaxError:
        return None
    inner = next((c for c in made.co_consts if isinstance(c, types.CodeType) and c.co_name == code.co_name), None)
    if inner is None or not _same_body(inner, code):
        return None
    tree = ast.parse(text)
    node = tree.body[0]
    return node if isinstance(node, ast.FunctionDef) else None


registry.source_finders.append(forwarder_source)
