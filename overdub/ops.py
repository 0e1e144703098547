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
import types

from .errors import refused

__all__ = ["class_match", "hide_helpers", "source_text", "managed", "in_", "not_in", "build_list", "build_tuple", "build_set", "build_dict", "unpack",
           "BINOPS", "UNARYOPS", "CMPOPS", "AUGOPS", "PRIMITIVES", "SPECIAL_NAMES", "dispatch", "own_methods_route"]


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


def managed(manager):
    """The context manager of a `with` statement, as it is (a context may hand the statement a stand-in
    running the manager's own `__enter__`/`__exit__` its way: `dispatch`)."""
    return manager


class Unswallowing:
    """A `with` statement's manager m, for a context whose refusals m's Python `__exit__` must not swallow (it
    would take one for the code's own error: a `__exit__` returning True): a refusal (`stops`) goes on, m
    exited as if the block had ended; anything else is m's (`exit`)."""
    __slots__ = ("m",)

    def __init__(self, m):
        self.m = m

    def __enter__(self):
        return self.m.__enter__()

    def stops(self, ev) -> bool:
        return refused(ev)

    def __exit__(self, et, ev, tb):
        if self.stops(ev):
            self.m.__exit__(None, None, None)
            return False
        return self.exit(et, ev, tb)

    def exit(self, et, ev, tb):
        return self.m.__exit__(et, ev, tb)


class _Managed:
    """A `with` statement's manager whose `__enter__`/`__exit__` run by a dispatch's `call`."""

    __slots__ = ("manager", "call")

    def __init__(self, manager, call):
        self.manager, self.call = manager, call

    def __enter__(self):
        return self.call(type(self.manager).__enter__, self.manager)

    def __exit__(self, *exc_info):
        ev = exc_info[1] if len(exc_info) > 1 else None
        if refused(ev):
            # (a context's refusal is not the manager's to swallow: a `__exit__` returning True would take it
            # for the code's own error; the manager is exited as if the block had ended)
            self.call(type(self.manager).__exit__, self.manager, None, None, None)
            return False
        return self.call(type(self.manager).__exit__, self.manager, *exc_info)


def source_text(source):
    """What an `eval`/`exec` without namespaces (left to run in the caller's frame) runs, text or code, handed
    to the context's `operator_for(source_text)` first: the identity, unless a context looks at it."""
    return source


def hide_helpers(namespace):
    """`locals()`/`vars()`/`dir()` of a twin without the pass's own names (`__od_*__`). The dict itself, those
    names deleted: before Python 3.13 `locals()` is the frame's one dict, so what code puts into it is there at
    the next call (`locals().update({name: v})`, then `eval(text, locals())`: a copy lost the names, NameError)."""
    hidden = lambda name: name.startswith("__od_") and name.endswith("__")  # noqa: E731
    if isinstance(namespace, dict):
        for k in [k for k in namespace if type(k) is str and hidden(k)]:
            del namespace[k]
        return namespace
    return [name for name in namespace if not hidden(name)]


def source_closure(fn):
    """`fn.__closure__` as fn's source defines it. A function defined in a twin holds the pass's own cells too
    (`__od_op__`, ...): `f.__closure__[0].cell_contents` read the context's helper, not the captured list
    (gen20 C1). The compiler orders a code's free variables by name, so the user's keep their order."""
    cells = fn.__closure__
    code = getattr(fn, "__code__", None)
    if not cells or code is None or not any(n.startswith("__od_") for n in code.co_freevars):
        return cells
    own = tuple(c for n, c in zip(code.co_freevars, cells) if not (n.startswith("__od_") and n.endswith("__")))
    return own or None


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
PRIMITIVES = frozenset({hide_helpers, in_, not_in, build_list, build_tuple, build_set, build_dict, unpack, managed})


# -- Python's operator dispatch, written out ----------------------------------------------------------
# What an operator site's function calls on its operands' classes: the special methods, in the order
# CPython tries them. A context whose values stand in for others runs an object's own special methods as
# code (under itself) instead of letting CPython call them natively, where no context sees (`dispatch`).

_BINARY = {operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.matmul: "matmul",
           operator.truediv: "truediv", operator.floordiv: "floordiv", operator.mod: "mod", operator.pow: "pow",
           operator.lshift: "lshift", operator.rshift: "rshift", operator.or_: "or", operator.xor: "xor",
           operator.and_: "and"}
_INPLACE = {operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
            operator.imatmul: operator.matmul, operator.itruediv: operator.truediv,
            operator.ifloordiv: operator.floordiv, operator.imod: operator.mod, operator.ipow: operator.pow,
            operator.ilshift: operator.lshift, operator.irshift: operator.rshift, operator.ior: operator.or_,
            operator.ixor: operator.xor, operator.iand: operator.and_}
_UNARY = {operator.neg: "__neg__", operator.pos: "__pos__", operator.invert: "__invert__"}
_COMPARE = {operator.eq: ("__eq__", "__eq__"), operator.ne: ("__ne__", "__ne__"), operator.lt: ("__lt__", "__gt__"),
            operator.le: ("__le__", "__ge__"), operator.gt: ("__gt__", "__lt__"), operator.ge: ("__ge__", "__le__")}

# fn -> the special methods its dispatch may call, first operand's first
SPECIAL_NAMES: dict = {}
SPECIAL_NAMES.update((fn, (f"__{n}__", f"__r{n}__")) for fn, n in _BINARY.items())
SPECIAL_NAMES.update((fn, (f"__i{_BINARY[b]}__", f"__{_BINARY[b]}__", f"__r{_BINARY[b]}__"))
                     for fn, b in _INPLACE.items())
SPECIAL_NAMES.update((fn, (name,)) for fn, name in _UNARY.items())
SPECIAL_NAMES.update((fn, names) for fn, names in _COMPARE.items())
SPECIAL_NAMES.update({operator.not_: ("__bool__", "__len__"), in_: ("__contains__", "__iter__", "__getitem__"),
                      not_in: ("__contains__", "__iter__", "__getitem__"), iter: ("__iter__", "__getitem__"),
                      bool: ("__bool__", "__len__"), managed: ("__enter__", "__exit__")})


def dispatch(fn, args: tuple, call):
    """`fn(*args)` for an operator site's fn (`operator.mul`, `operator.iadd`, `operator.neg`, `operator.lt`,
    `in_`, `operator.not_`, `iter`, `bool`, `managed`) as CPython dispatches it, each special method found
    on an operand's class run by `call(method, *operands)`: a reflected method of a subclass first,
    NotImplemented passed on to the other operand's, `==` falling back to identity. Where no method takes
    the operands, fn itself runs them (CPython's own error, or a sequence's concatenation or repetition,
    which a C class's method refuses by TypeError before the other operand's reflected method is tried)."""
    if fn in _BINARY:
        return _binary(fn, fn, *args, call)
    if fn in _INPLACE:
        a, b = args
        method = getattr(type(a), SPECIAL_NAMES[fn][0], None)
        if method is not None:
            y = call(method, a, b)
            if y is not NotImplemented:
                return y
        return _binary(_INPLACE[fn], fn, a, b, call)
    if fn in _COMPARE:
        return _compare(fn, *args, call)
    if fn in _UNARY:
        (a,) = args
        method = getattr(type(a), _UNARY[fn], None)
        return fn(a) if method is None else call(method, a)
    if fn is operator.not_:
        return not _truth(args[0], call)
    if fn is bool:
        return _truth(args[0], call)
    if fn is managed:
        return _Managed(args[0], call)
    if fn is in_ or fn is not_in:
        item, container = args
        found = _contains(container, item, call)
        return found if fn is in_ else not found
    if fn is iter:
        (a,) = args
        method = getattr(type(a), "__iter__", None)
        if method is None:
            getitem = getattr(type(a), "__getitem__", None)
            if type(getitem) is types.FunctionType:  # the sequence protocol over a class's own `__getitem__`,
                return _sequence_items(a, getitem, call)  # run as a call of it (from C, out of sight)
            return iter(a)  # (a C class's sequence protocol, or CPython's TypeError)
        it = call(method, a)
        if not hasattr(type(it), "__next__"):
            raise TypeError(f"iter() returned non-iterator of type '{type(it).__name__}'")
        return it
    return fn(*args)


def _sequence_items(a, getitem, call):
    """`iter(a)` of a class with `__getitem__` and no `__iter__`, as CPython's sequence iterator: a[0], a[1],
    ... until IndexError (or StopIteration), each item by `call(getitem, a, i)`."""
    i = 0
    while True:
        try:
            v = call(getitem, a, i)
        except (IndexError, StopIteration):
            return
        yield v
        i += 1


def _binary(fn, site_fn, a, b, call):
    name, rname = SPECIAL_NAMES[fn]
    ta, tb = type(a), type(b)
    left = getattr(ta, name, None)
    right = getattr(tb, rname, None) if tb is not ta else None
    order = ((left, a, b), (right, b, a))
    if right is not None and issubclass(tb, ta) and right is not getattr(ta, rname, None):
        order = order[::-1]  # a subclass's reflected method first, as CPython does
    for method, x, y in order:
        if method is None:
            continue
        if type(method) is property:
            result = _by_property(method, x, y, call)
        elif type(method) is not types.FunctionType:  # a C class's: a sequence's may refuse by TypeError
            try:
                result = method(x, y)
            except TypeError:
                continue
        else:
            result = call(method, x, y)
        if result is not NotImplemented:
            return result
    return site_fn(a, b)


def _by_property(prop, x, y, call):
    """A special method given by a property (ase's `arraylike`: `__mul__ = property(lambda self:
    np.asarray(self).__mul__)`), as CPython's slot calls it: the getter on x, then what it gave on y, each by
    `call` where it is Python code (natively the getter ran out of the context's sight)."""
    getter = prop.fget
    if getter is None:
        return NotImplemented
    bound = call(getter, x) if type(getter) is types.FunctionType else getter(x)
    if type(bound) is types.MethodType and type(bound.__func__) is types.FunctionType:
        return call(bound.__func__, bound.__self__, y)
    return call(bound, y)


def _compare(fn, a, b, call):
    name, rname = _COMPARE[fn]
    ta, tb = type(a), type(b)
    left, right = getattr(ta, name, None), getattr(tb, rname, None)
    order = ((left, a, b), (right, b, a))
    if tb is not ta and issubclass(tb, ta) and right is not getattr(ta, rname, None):
        order = order[::-1]
    for method, x, y in order:
        if method is not None:
            result = call(method, x, y)
            if result is not NotImplemented:
                return result
    if fn is operator.eq:
        return a is b
    if fn is operator.ne:
        return a is not b
    return fn(a, b)


def _truth(a, call) -> bool:
    kind = type(a)
    method = getattr(kind, "__bool__", None)
    if method is not None:
        y = call(method, a)
        if type(y) is not bool:
            raise TypeError(f"__bool__ should return bool, returned {type(y).__name__}")
        return y
    method = getattr(kind, "__len__", None)
    return True if method is None else call(method, a) != 0


def _contains(container, item, call) -> bool:
    method = getattr(type(container), "__contains__", None)
    if method is not None:
        return _truth(call(method, container, item), call)
    for value in dispatch(iter, (container,), call):
        if value is item or dispatch(operator.eq, (value, item), call):
            return True
    return False


HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement (`cls.__flags__ & HEAPTYPE`)
_HEAPTYPE = HEAPTYPE
_PLAIN_OPERANDS = frozenset({float, int, bool, complex, str, bytes, list, tuple, dict, set, type(None)})
_PYTHON_METHODS = (types.FunctionType, property)  # (a property: its getter gives the method, `_by_property`)
_ONE_OPERAND = frozenset({operator.neg, operator.pos, operator.invert, operator.not_, iter, bool, managed})


def own_methods_route(fn, recurse, native, check=None):
    """What a context's operator site may call for fn (see `Context.operate`): a function of the operands
    running fn natively, unless an operand's class has a special method written in Python that fn's
    dispatch may call and `native(cls)` does not claim (the context's own stand-in values, value types
    whose operators know them); then Python's dispatch (`dispatch`), each such method run by
    `recurse(method, *operands)` under the context, the others called. `check(fn, a, b)`, if given, is
    called before a binary dispatch: a context refusing operand kinds it cannot follow, or giving the
    operands as the methods are to see them (a pair; None: as they are).

    >>> class U:
    ...     def __neg__(self): return "U's own"
    >>> ran = []
    >>> neg = own_methods_route(operator.neg, lambda m, *a: ran.append(m.__qualname__) or m(*a), lambda c: False)
    >>> neg(2.0), neg(U()), ran
    (-2.0, "U's own", ['U.__neg__'])
    """
    names = SPECIAL_NAMES.get(fn)
    if names is None:  # (`is`, `is not`)
        return fn
    plain = set(_PLAIN_OPERANDS)  # classes seen to have none of those methods of their own

    def owns(kind) -> bool:
        if kind.__flags__ & _HEAPTYPE and not native(kind) and any(
                type(getattr(kind, name, None)) in _PYTHON_METHODS for name in names):
            return True
        if len(plain) > 1000:
            plain.intersection_update(_PLAIN_OPERANDS)
        plain.add(kind)
        return False

    def call(method, *operands):
        if type(method) is types.FunctionType and not native(type(operands[0])):
            return recurse(method, *operands)
        return method(*operands)

    if fn in _ONE_OPERAND:
        def unary(a):
            if type(a) in plain or not owns(type(a)):
                return fn(a)
            return dispatch(fn, (a,), call)
        return unary

    def binary(a, b):
        if (type(a) in plain or not owns(type(a))) and (type(b) in plain or not owns(type(b))):
            return fn(a, b)
        if check is not None:
            given = check(fn, a, b)
            if given is not None:
                a, b = given
        return dispatch(fn, (a, b), call)
    return binary
