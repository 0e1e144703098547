"""The functions a patched twin passes to the context for non-call operations.

Every non-call site reaches `Context.overdub(site, fn, *args)` as a call of the function it stands for:
`a + b` as `operator.add(a, b)`, `a[i]` as `operator.getitem(a, i)`, `a.x` as `getattr(a, 'x')`, `x in y`
as `in_(x, y)` (operands in source order, unlike `operator.contains`), `[a, b]` as `build_list(a, b)`,
`a, b = t` as `unpack(t, 2)`. The few that are defined here are primitives: contexts never recurse
into them (`PRIMITIVES`).
"""

from __future__ import annotations

import ast
import operator

__all__ = ["class_match", "hide_helpers", "in_", "not_in", "build_list", "build_tuple", "build_set", "build_dict", "unpack",
           "BINOPS", "UNARYOPS", "CMPOPS", "AUGOPS", "PRIMITIVES"]


def class_match(subject):
    """The subject of a `match` with class patterns (`case float(v):`), as it is. Python asks isinstance
    of it natively, where no context sees: a context whose values stand in for others (a forward-mode
    dual, a sparsity tracer) refuses here, since the answer would be the stand-in's, not the value's."""
    return subject


def in_(item, container):
    """`item in container`, operands in source order."""
    return item in container


def not_in(item, container):
    """`item not in container`, operands in source order."""
    return item not in container


def build_list(*items):
    """`[a, b, *c]`."""
    return list(items)


def build_tuple(*items):
    """`(a, b, *c)`."""
    return items


def build_set(*items):
    """`{a, b, *c}`."""
    return set(items)


def build_dict(*keys_and_values):
    """`{k1: v1, k2: v2}` as `build_dict(k1, v1, k2, v2)` (keys and values in evaluation order)."""
    it = iter(keys_and_values)
    return dict(zip(it, it))


def unpack(value, before: int, after: int | None = None):
    """What `a, b = value` (after=None: exactly `before` items) or `a, *b, c = value` (before=1, after=1)
    assigns, as a tuple the target can take apart; raises the errors CPython raises."""
    it = iter(value)
    head = []
    for _ in range(before):
        try:
            head.append(next(it))
        except StopIteration:
            expected = before if after is None else f"at least {before + after}"
            raise ValueError(f"not enough values to unpack (expected {expected}, got {len(head)})") from None
    if after is None:
        try:
            next(it)
        except StopIteration:
            return tuple(head)
        raise ValueError(f"too many values to unpack (expected {before})")
    rest = list(it)
    if len(rest) < after:
        raise ValueError(f"not enough values to unpack (expected at least {before + after}, "
                         f"got {before + len(rest)})")
    tail = rest[len(rest) - after:] if after else []
    del rest[len(rest) - after:]
    return (*head, rest, *tail)


def hide_helpers(namespace):
    """`locals()`/`vars()`/`dir()` of a twin without the pass's own names (`__od_*__`)."""
    hidden = lambda name: name.startswith("__od_") and name.endswith("__")  # noqa: E731
    if isinstance(namespace, dict):
        return {k: v for k, v in namespace.items() if not hidden(k)}
    return [name for name in namespace if not hidden(name)]


BINOPS = {
    ast.Add: ("+", operator.add), ast.Sub: ("-", operator.sub), ast.Mult: ("*", operator.mul),
    ast.MatMult: ("@", operator.matmul), ast.Div: ("/", operator.truediv),
    ast.FloorDiv: ("//", operator.floordiv), ast.Mod: ("%", operator.mod), ast.Pow: ("**", operator.pow),
    ast.LShift: ("<<", operator.lshift), ast.RShift: (">>", operator.rshift),
    ast.BitOr: ("|", operator.or_), ast.BitXor: ("^", operator.xor), ast.BitAnd: ("&", operator.and_),
}

AUGOPS = {
    ast.Add: ("+=", operator.iadd), ast.Sub: ("-=", operator.isub), ast.Mult: ("*=", operator.imul),
    ast.MatMult: ("@=", operator.imatmul), ast.Div: ("/=", operator.itruediv),
    ast.FloorDiv: ("//=", operator.ifloordiv), ast.Mod: ("%=", operator.imod),
    ast.Pow: ("**=", operator.ipow), ast.LShift: ("<<=", operator.ilshift),
    ast.RShift: (">>=", operator.irshift), ast.BitOr: ("|=", operator.ior),
    ast.BitXor: ("^=", operator.ixor), ast.BitAnd: ("&=", operator.iand),
}

UNARYOPS = {
    ast.USub: ("-", operator.neg), ast.UAdd: ("+", operator.pos), ast.Invert: ("~", operator.invert),
    ast.Not: ("not", operator.not_),
}

CMPOPS = {
    ast.Eq: ("==", operator.eq), ast.NotEq: ("!=", operator.ne), ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le), ast.Gt: (">", operator.gt), ast.GtE: (">=", operator.ge),
    ast.Is: ("is", operator.is_), ast.IsNot: ("is not", operator.is_not),
    ast.In: ("in", in_), ast.NotIn: ("not in", not_in),
}

BUILDERS = {ast.List: ("list", build_list), ast.Tuple: ("tuple", build_tuple),
            ast.Set: ("set", build_set), ast.Dict: ("dict", build_dict)}

# Pure-Python functions of this module that contexts treat as primitives (never recursed into).
PRIMITIVES = frozenset({hide_helpers, in_, not_in, build_list, build_tuple, build_set, build_dict, unpack})
