"""Lowering: a function's tree -> AD normal form (a Wengert list with Python's own control flow).

Invariant of the output: every simple statement performs at most one operation on *atoms* (names and
constants), so each is one site the adjoint can mirror; compound statements keep Python's structured control
flow (if / while True ... break / for over an atom / try / with), with every condition an atom. Expressions
with control flow of their own (`and`/`or`, conditional expressions, comprehensions, walrus) become
statements. Line numbers of the user's code are kept on every generated node.

What is not lowered (the AD context reports it by name and line): `yield`, `await`, `match`, `async`.
"""

from __future__ import annotations

import ast
import itertools
import inspect
import types
import copy
from dataclasses import dataclass, field

from overdub.passes import AST_LOCK

__all__ = ["lower", "Unsupported", "TEMP_PREFIX", "is_atom", "is_generator"]

TEMP_PREFIX = "_od_t"


class Unsupported(Exception):
    """A construct the AD lowering does not handle; carries the node for its line number."""

    def __init__(self, what: str, node: ast.AST):
        super().__init__(what)
        self.node = node


@dataclass
class _Lowering:
    counter: list = field(default_factory=lambda: [0])

    def temp(self) -> str:
        self.counter[0] += 1
        return f"{TEMP_PREFIX}{self.counter[0]}"


def _name(id_: str, like: ast.AST, store: bool = False) -> ast.Name:
    return ast.copy_location(ast.Name(id=id_, ctx=ast.Store() if store else ast.Load()), like)


# classes whose single positional pattern matches the subject itself (`case float(v):`), as in Python
_SELF_MATCHING = frozenset({"bool", "bytearray", "bytes", "dict", "float", "frozenset", "int", "list", "set",
                            "str", "tuple"})


def _pattern_reads(p: ast.pattern, path: ast.expr) -> list[tuple[str, ast.expr]] | None:
    """The capture names of pattern p matched against the value at `path`, each with the read of that
    value it binds; None when a capture's read cannot be written (an `|` binding names, `**rest`)."""
    def at(node):
        return ast.copy_location(node, p)
    if isinstance(p, (ast.MatchValue, ast.MatchSingleton)):
        return []
    if isinstance(p, ast.MatchAs):
        inner = [] if p.pattern is None else _pattern_reads(p.pattern, path)
        return None if inner is None else inner + ([(p.name, path)] if p.name else [])
    if isinstance(p, ast.MatchOr):
        return [] if not any(isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name
                             for n in ast.walk(p)) else None
    if isinstance(p, ast.MatchSequence):
        star = next((i for i, q in enumerate(p.patterns) if isinstance(q, ast.MatchStar)), None)
        after = 0 if star is None else len(p.patterns) - star - 1
        out: list = []  # (`list(...)`, `type(...)` and `getattr(...)` here by their bare names: the program's own
        # operations, which each transformer differentiates as the calls they are; an engine helper's name would
        # run them untransformed: a star capture's items lost their derivative)
        for i, q in enumerate(p.patterns):
            if isinstance(q, ast.MatchStar):
                if q.name:
                    part = at(ast.Slice(lower=ast.Constant(i), upper=ast.Constant(-after) if after else None))
                    sub = at(ast.Subscript(value=path, slice=part, ctx=ast.Load()))
                    out.append((q.name, at(ast.Call(func=at(ast.Name("list", ast.Load())), args=[sub],
                                                    keywords=[]))))
                continue
            index = i if star is None or i < star else i - len(p.patterns)
            inner = _pattern_reads(q, at(ast.Subscript(value=path, slice=at(ast.Constant(index)),
                                                       ctx=ast.Load())))
            if inner is None:
                return None
            out += inner
        return out
    if isinstance(p, ast.MatchMapping):
        if p.rest is not None:
            return None
        return _joined((q, at(ast.Subscript(value=path, slice=key, ctx=ast.Load())))
                       for key, q in zip(p.keys, p.patterns))
    if isinstance(p, ast.MatchClass):
        cls = p.cls.id if isinstance(p.cls, ast.Name) else None
        parts = []
        for i, q in enumerate(p.patterns):
            if cls in _SELF_MATCHING and len(p.patterns) == 1:
                parts.append((q, path))
            else:  # getattr(subject, type(subject).__match_args__[i])
                names = at(ast.Attribute(value=at(ast.Call(func=at(ast.Name("type", ast.Load())), args=[path],
                                                           keywords=[])), attr="__match_args__", ctx=ast.Load()))
                attr = at(ast.Subscript(value=names, slice=at(ast.Constant(i)), ctx=ast.Load()))
                parts.append((q, at(ast.Call(func=at(ast.Name("getattr", ast.Load())), args=[path, attr],
                                             keywords=[]))))
        parts += [(q, at(ast.Attribute(value=path, attr=attr, ctx=ast.Load())))
                  for attr, q in zip(p.kwd_attrs, p.kwd_patterns)]
        return _joined(parts)
    return None


def _joined(parts) -> list[tuple[str, ast.expr]] | None:
    """The reads of several (sub-pattern, path) parts, or None when one has none."""
    out: list = []
    for q, path in parts:
        inner = _pattern_reads(q, path)
        if inner is None:
            return None
        out += inner
    return out


def _truth_of_name(test) -> bool:
    """`r` or `not r`: a loop test of a variable's truth."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return isinstance(test, ast.Name)


def _assign(target: str, value: ast.expr, like: ast.AST) -> ast.Assign:
    node = ast.Assign(targets=[_name(target, like, store=True)], value=value)
    return ast.copy_location(node, like)


def _loc(node, like):
    """Give node and every descendant without a position the position of `like`."""
    for n in ast.walk(node):
        if "lineno" in n._attributes and not hasattr(n, "lineno"):
            ast.copy_location(n, like)
    return node


def _loop_shape(it: ast.expr):
    """(numbered: None, True or enumerate's start expression; kind: "seq", "zip", "reversed", "items" or
    "values"; the builtins the shape names, as the function finds them; the expressions looped over) of a
    loop `for ... in it` that `Lowerer.live_loop` can write as an index loop, or None."""
    numbered, fns = None, []
    if (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate"
            and 1 <= len(it.args) <= 2 and all(k.arg == "start" for k in it.keywords)
            and len(it.args) + len(it.keywords) <= 2 and not any(isinstance(a, ast.Starred) for a in it.args)):
        fns.append(it.func)
        numbered = it.args[1] if len(it.args) == 2 else it.keywords[0].value if it.keywords else True
        it = it.args[0]
    if isinstance(it, ast.Name) or numbered is not None and isinstance(it, ast.Attribute):
        return numbered, "seq", fns, [it]  # (`enumerate(self.items)`: the attribute read once, as Python does)
    if (isinstance(it, ast.Subscript) or isinstance(it, ast.Attribute) and it.attr == "T") and isinstance(
            _base_name(it), ast.Name):
        return numbered, "seq", fns, [it]  # (`M[::-1]`, `M[1:]`, `M.T`: held once; a view's items are M's)
    if not isinstance(it, ast.Call) or it.keywords or any(isinstance(a, ast.Starred) for a in it.args):
        return None
    f = it.func
    if isinstance(f, ast.Name) and f.id in ("iter", "reversed") and len(it.args) == 1 and isinstance(it.args[0], ast.Name):
        return numbered, "seq" if f.id == "iter" else "reversed", fns + [f], list(it.args)
    if isinstance(f, ast.Name) and f.id == "zip" and it.args:
        return numbered, "zip", fns + [f], list(it.args)
    if (isinstance(f, ast.Attribute) and f.attr in ("items", "values") and not it.args
            and isinstance(f.value, (ast.Name, ast.Attribute))):
        return numbered, f.attr, fns, [f.value]
    return None


def _base_name(e: ast.expr) -> ast.expr:
    while isinstance(e, (ast.Subscript, ast.Attribute)):
        e = e.value
    return e


def _view_aliases(fdef) -> dict[str, set[str]]:
    """Each variable's group of variables bound to certain views of one another anywhere in fdef (`R =
    z.reshape(3, 1)`, `T = M[1:]`, `F = M.ravel()`, `V = z[1:][::-1]`): a loop over z whose body changes R
    changes what it visits (its items' cotangents went to the items as they were: 73.7 for 81.5)."""
    from .activity import view_of  # (activity imports this module)
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x
    for n in ast.walk(fdef):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            for b in view_of(n.value) - {n.targets[0].id}:
                parent[root(b)] = root(n.targets[0].id)
    groups: dict[str, set[str]] = {}
    for x in list(parent):
        groups.setdefault(root(x), set()).add(x)
    return {x: members for members in groups.values() for x in members}


def _loop_again(it: ast.expr, held: dict, first, like) -> ast.expr:
    """The loop's iterable as written, its objects read from where `live_loop` holds them (`held`: id of the
    expression -> name), enumerate's start from `first`."""
    def swap(node):
        if id(node) in held:
            return _name(held[id(node)], like)
        if isinstance(node, ast.Call):
            args = [swap(a) for a in node.args]
            keywords = [ast.keyword(arg=k.arg, value=swap(k.value)) for k in node.keywords]
            if first is not None and isinstance(node.func, ast.Name) and node.func.id == "enumerate":
                args, keywords = args[:1] + [_name(first, like)], []
            return ast.Call(func=swap(node.func), args=args, keywords=keywords)
        if isinstance(node, ast.Attribute):
            return ast.Attribute(value=swap(node.value), attr=node.attr, ctx=ast.Load())
        return copy.deepcopy(node)
    return swap(it)


_LAZY = frozenset({"map", "filter"})
_LAZY_MODULES = frozenset({"itertools"})


def _lazy_over(it: ast.expr) -> set:
    """The variables a lazy iterator the loop draws from reads as its sequences (`map(f, xs)`, `filter(p,
    xs)`, `itertools.chain(xs, ys)`, `enumerate(map(f, xs))`): empty for anything else."""
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("enumerate", "iter") and it.args:
        return _lazy_over(it.args[0])
    if not isinstance(it, ast.Call):
        return set()
    f = it.func
    if not (isinstance(f, ast.Name) and f.id in _LAZY or isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name) and f.value.id in _LAZY_MODULES):
        return set()
    # (and the object of a bound method given, `map(o.scale, xs)`: its calls read o as they are drawn)
    return {a.id for a in it.args if isinstance(a, ast.Name)} | {
        a.value.id for a in it.args if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name)}


def _changed_by(body: list, names: set, changed_in_place, stored_base, viewed, methods: bool = False,
                callees: set | None = None) -> set:
    """Those of `names` the statements may change in place: directly (`changed_in_place`), through a
    variable bound to a view or an item of one (`row = xs[i]; row += v`), or by a call given one (`grow(xs)`,
    `obj.add(xs)`: a callee may change it); with `methods`, also by a call of one's method (`s.bump(t)`);
    with `callees`, only calls of those names count as changing what they are given."""
    module = ast.Module(body=body, type_ignores=[])
    changed = changed_in_place(module)
    for n in ast.walk(module):  # (`del xs[i + 1]`, a swap `xs[i], xs[j] = xs[j], xs[i]`: changes in place too)
        targets = n.targets if isinstance(n, (ast.Delete, ast.Assign)) else ()
        for t in targets:
            for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                if isinstance(e, (ast.Subscript, ast.Attribute)) and (base := stored_base(e)):
                    changed.add(base)
    out = names & changed
    for n in ast.walk(module):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            if n.targets[0].id in changed:
                out |= names & viewed(n.value, strict=True)
        elif isinstance(n, ast.Call) and not (isinstance(n.func, ast.Name) and n.func.id in _READERS):
            if methods and isinstance(n.func, ast.Attribute) and (base := stored_base(n.func.value)) in names:
                out.add(base)
            if callees is not None and not (isinstance(n.func, ast.Name) and n.func.id in callees):
                continue
            for a in (*n.args, *(k.value for k in n.keywords)):
                a = a.value if isinstance(a, ast.Starred) else a
                if isinstance(a, ast.Name) and a.id in names:
                    out.add(a.id)
    return out


# builtins that read their arguments and change none (a call of one given the looped-over list is no change)
_READERS = frozenset({"len", "sum", "min", "max", "abs", "float", "int", "complex", "round", "range", "print",
                      "isinstance", "sorted", "list", "tuple", "str", "repr", "enumerate", "zip", "reversed",
                      "any", "all", "iter", "dict", "set", "frozenset", "bool", "type", "id", "hash", "format"})


def is_atom(node: ast.AST) -> bool:
    return isinstance(node, (ast.Name, ast.Constant))


class Lowerer:
    """Turns statements into lists of normal-form statements; `self.out` collects the current list."""

    def __init__(self, state: _Lowering, first_param: str | None = None, iterators: bool = False,
                 drawn: tuple = (frozenset(), frozenset())):
        self.state = state
        self.first_param = first_param
        self.iterators = iterators
        self.generators: dict[str, ast.GeneratorExp] = {}  # variables bound to a generator expression
        self.calls: dict[str, ast.Call] = {}  # variables bound to a call's result (`eager_guard`)
        # (variables drawn from by `next(v)`, variables the function changes in place): `drawn_by_next`
        self.nexted, self.changed = drawn
        self.own: set | None = None  # (the function's own variables: not globals or cells)
        self.defs: dict = {}  # (its nested functions by name)
        self.fdef, self.aliases = None, None  # (the function lowered; its variables' view groups, `_view_aliases`)

    def drawn_by_loop(self, s: ast.For) -> None:
        """`for v in (len(acc) * x for _ in r): acc.append(v)`: a generator expression is evaluated where it
        is made, so a loop drawing from it while changing in place a variable it reads would see the items
        computed before the changes: refused (also through a variable bound to it, `g = (...)`)."""
        from .activity import changed_in_place  # (activity imports this module)
        gen = s.iter if isinstance(s.iter, ast.GeneratorExp) else (
            self.generators.get(s.iter.id) if isinstance(s.iter, ast.Name) else None)
        if gen is None:
            return
        hit = sorted(_comprehension_reads(gen) & changed_in_place(ast.Module(body=s.body + s.orelse, type_ignores=[])))
        # (numpy's random state, drawn from by the generator and by the loop: `for v in (np.random.normal() * x
        # for _ in r): np.random.seed(1)` drew every item before the loop's first seed, silently other values)
        hit += sorted(_random_states([gen]) & _random_states(s.body + s.orelse))
        if hit:
            raise Unsupported(
                f"loop over a generator expression reading `{hit[0]}`, which the loop changes in place: the "
                f"generator expression is evaluated where it is made, so it would read `{hit[0]}` before the "
                f"changes (compute each item in the loop instead)", s)

    def eager_guard(self, it: str, call, changed, s) -> list[ast.stmt]:
        """`for v in gen(out): out.append(v)`, or `g = gen(out)` then `next(g)` while the function changes
        `out` in place: a generator's twin runs eagerly when called, so it read `out` before the changes.
        Where a variable passed to the call that made `it` is in `changed`, `__od_eager_guard__` refuses
        if the call was a generator's (its eager items' iterator); anything else is Python's."""
        if not isinstance(call, ast.Call):
            return []
        from .activity import stored_base  # (activity imports this module)
        passed = {b for a in [*call.args, *(k.value for k in call.keywords)] if (b := stored_base(a))}
        if isinstance(call.func, ast.Attribute) and (b := stored_base(call.func.value)):
            passed.add(b)  # (a generator method reads its object: `for v in s.items(): s.bump(t)`)
        if isinstance(call.func, ast.Name) and call.func.id in self.defs:  # (a closure reads what it captures)
            from .activity import free_names
            passed |= free_names(self.defs[call.func.id]) & (self.own or set())
        if isinstance(changed, list):  # a loop's body: what it changes of those, also by a method or a call,
            from .activity import changed_in_place, viewed  # and the globals it changes (a generator may read
            body = ast.Module(body=changed, type_ignores=[])  # a module's dict the body stores into)
            outside = ({n for n in changed_in_place(body) - self.own if not n.startswith(TEMP_PREFIX)}
                       if self.own is not None else set())  # (the lowering's temporaries are its own)
            # (a function of its own given one, `bump(s)`: not any callee's, `from_native(obj)` reads it)
            changed = _changed_by(changed, passed, changed_in_place, stored_base, viewed, methods=True,
                                  callees=set(self.defs)) | outside
            passed |= outside
        hit = sorted(passed & changed)
        if hit and isinstance(changed_body := s.body if isinstance(s, (ast.For, ast.While)) else None, list):
            # (a module of functions that change nothing, called in the loop: `for g in gen: np.unique(g)`,
            # KDEpy's linbin_Ndim; not its random state, `np.random.seed(v)`, which a generator may draw from)
            hit = [h for h in hit if h not in _READ_ONLY_MODULES or _draws_random(changed_body, h)]
        if not hit:
            return []
        guard = ast.Call(func=_name("__od_eager_guard__", s), args=[_name(it, s), ast.Constant(hit[0]),
                                                                     _name(hit[0], s)], keywords=[])
        return [_loc(ast.Expr(value=guard), s)]

    # -- statements ------------------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        gaps = _lazy_gaps(stmts) if stmts else None
        for i, s in enumerate(stmts):
            if gaps and i in gaps[1]:
                for stamp, name in gaps[1][i]:  # (before the first use of a lazy iterator: what it held unchanged)
                    guard = ast.Call(func=_name("__od_lazy_guard__", s), args=[_name(stamp, s), ast.Constant(name)],
                                     keywords=[])
                    out.append(_loc(ast.Expr(value=guard), s))
            if gaps and i in gaps[0]:  # (what the iterator will hold, as it is made)
                stamp, held, items = gaps[0][i]
                items = [ast.keyword(arg="items", value=ast.Tuple(elts=[_name(h, s) for h in items],
                                                                  ctx=ast.Load()))] if items else []
                out.append(_loc(ast.Assign(targets=[ast.Name(id=stamp, ctx=ast.Store())], value=ast.Call(
                    func=_name("__od_lazy_stamp__", s), args=[_name(h, s) for h in held], keywords=items)), s))
            out.extend(self.stmt(s))
            if gaps and i in gaps[2]:  # (after a call handed a lazy iterator: what it held unchanged by the call)
                guards = [_loc(ast.Expr(value=ast.Call(func=_name("__od_lazy_guard__", s), args=[
                    _name(stamp, s), ast.Constant(name)], keywords=[])), s) for stamp, name in gaps[2][i]]
                at = len(out) - 1 if out and isinstance(out[-1], ast.Return) else len(out)
                out[at:at] = guards
        return out or [ast.copy_location(ast.Pass(), stmts[0]) if stmts else ast.Pass()]

    def stmt(self, s: ast.stmt) -> list[ast.stmt]:
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            raise Unsupported(f"`{type(s).__name__}` statement", s)
        return method(s)

    def stmt_Expr(self, s):
        pre: list = []
        if isinstance(s.value, ast.Constant):
            return []  # docstrings and bare constants
        v = s.value
        if (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "setattr" and len(v.args) == 3
                and not v.keywords and isinstance(v.args[1], ast.Constant) and type(v.args[1].value) is str
                and v.args[1].value.isidentifier() and not v.args[1].value.startswith("__")):
            # `setattr(o, "a", v)` is `o.a = v` (a SimpleNamespace's field: refused by name before)
            target = ast.copy_location(ast.Attribute(value=v.args[0], attr=v.args[1].value, ctx=ast.Store()), v)
            return self.stmt_Assign(ast.copy_location(ast.Assign(targets=[target], value=v.args[2]), s))
        if (isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "delattr" and len(v.args) == 2
                and not v.keywords and isinstance(v.args[1], ast.Constant) and type(v.args[1].value) is str
                and v.args[1].value.isidentifier()):
            # `delattr(self, "_tmp")` is `del self._tmp` (pyfar's constructors), which the engines follow
            obj = self.atom(v.args[0], pre)
            target = ast.copy_location(ast.Attribute(value=obj, attr=v.args[1].value, ctx=ast.Del()), v)
            return pre + self.stmt_Delete(ast.copy_location(ast.Delete(targets=[target]), s))
        value = self.expr(s.value, pre)
        if not is_atom(value):
            pre.append(_assign(self.state.temp(), value, s))
        return pre

    def stmt_Assign(self, s):
        pre: list = []
        if len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            name = s.targets[0].id
            for kind, table in ((ast.GeneratorExp, self.generators), (ast.Call, self.calls)):
                if isinstance(s.value, kind):  # (see `drawn_by_loop`, `eager_guard`)
                    table[name] = s.value
                else:
                    table.pop(name, None)
            # `x = a * b` stays one statement (no temporary in between): fewer stores, shorter adjoints
            value = self.expr(s.value, pre)
            pre.append(ast.copy_location(ast.Assign(targets=[_name(name, s, True)], value=value), s))
            return pre + (self.eager_guard(name, s.value, self.changed, s) if name in self.nexted else [])
        value = self.atom(s.value, pre)
        for target in s.targets:
            pre.extend(self.store(target, value, s))
        return pre

    def stmt_AnnAssign(self, s):
        if s.value is None:
            return []
        return self.stmt_Assign(ast.copy_location(ast.Assign(targets=[s.target], value=s.value), s))

    @staticmethod
    def _inplace(cur: ast.Name, op: ast.operator, rhs: ast.expr, s) -> ast.Assign:
        """`cur op= rhs` as an assignment marked in place."""
        node = ast.copy_location(ast.BinOp(left=_name(cur.id, s), op=op, right=rhs), s)
        node._od_inplace = True
        return ast.copy_location(ast.Assign(targets=[_name(cur.id, s, True)], value=node), s)

    def stmt_AugAssign(self, s):
        pre: list = []
        target = s.target
        if isinstance(target, ast.Name):
            rhs = self.atom(s.value, pre)
            op = ast.copy_location(ast.BinOp(left=_name(target.id, s), op=s.op, right=rhs), s)
            op._od_inplace = True  # `x += y` may mutate x in place (arrays, lists)
            pre.append(ast.copy_location(ast.Assign(targets=[_name(target.id, s, True)], value=op), s))
            return pre
        # `obj.f op= v` and `obj[i] op= v` are Python's `t = obj.f; t op= v; obj.f = t`: the item is changed
        # in place when it can be (an array, a list), then stored back
        if isinstance(target, ast.Attribute):
            obj = self.atom(target.value, pre)
            cur = self.atom(ast.copy_location(ast.Attribute(value=obj, attr=target.attr, ctx=ast.Load()), s), pre)
            rhs = self.atom(s.value, pre)
            pre.append(self._inplace(cur, s.op, rhs, s))
            pre.append(ast.copy_location(ast.Assign(
                targets=[ast.copy_location(ast.Attribute(value=obj, attr=target.attr, ctx=ast.Store()), s)],
                value=_name(cur.id, s)), s))
            return pre
        if isinstance(target, ast.Subscript):
            def update(obj, idx):
                out: list = []
                cur = self.atom(ast.copy_location(ast.Subscript(value=obj, slice=idx, ctx=ast.Load()), s), out)
                rhs = self.atom(copy.deepcopy(s.value), out)
                out.append(self._inplace(cur, s.op, rhs, s))
                out.append(ast.copy_location(ast.Assign(
                    targets=[ast.copy_location(ast.Subscript(value=copy.deepcopy(obj), slice=copy.deepcopy(idx),
                                                             ctx=ast.Store()), s)],
                    value=_name(cur.id, s)), s))
                return out
            flat = self.flat_store(target, update)
            if flat is not None:
                return pre + flat
            obj, idx = self.atom(target.value, pre), self.index(target.slice, pre)
            return pre + update(obj, idx)
        raise Unsupported("augmented assignment to this target", s)

    def flat_store(self, target: ast.Subscript, store) -> list[ast.stmt] | None:
        """`x.flat[k] = ...` (and `x.flat[k] op= ...`) as a store into x at k's positions in x's shape where x.flat
        is an array's flat iterator (`x[__od_flat_index__(x, k)] = ...`: an array's items in C order, which every
        transformer follows as a store into x; roboticstoolbox's `p.flat[k] = pk`), as written otherwise (an
        object's own `flat`). `store(obj, idx)` gives the statements storing into obj[idx]; None where the
        target is no `.flat` subscript."""
        if not (isinstance(target.value, ast.Attribute) and target.value.attr == "flat"):
            return None
        pre: list = []
        obj = self.atom(target.value.value, pre)
        flat = self.index(target.slice, pre)
        at = self.state.temp()
        array: list = [_loc(_assign(at, ast.Call(func=_name("__od_flat_index__", target), args=[
            copy.deepcopy(obj), copy.deepcopy(flat)], keywords=[]), target), target)]
        array += store(copy.deepcopy(obj), _name(at, target))
        own: list = []
        it = self.atom(ast.copy_location(ast.Attribute(value=copy.deepcopy(obj), attr="flat", ctx=ast.Load()), target),
                       own)
        own += store(_name(it.id, target), copy.deepcopy(flat))
        test = ast.Call(func=_name("__od_flat_index__", target), args=[copy.deepcopy(obj)], keywords=[])
        pre.append(_loc(ast.If(test=test, body=array, orelse=own), target))
        return pre

    def store(self, target, value, like) -> list[ast.stmt]:
        """Statements storing atom `value` into an assignment target."""
        if isinstance(target, ast.Name):
            return [ast.copy_location(ast.Assign(targets=[_name(target.id, like, True)], value=value), like)]
        pre: list = []
        if isinstance(target, ast.Attribute):
            obj = self.atom(target.value, pre)
            tgt = ast.copy_location(ast.Attribute(value=obj, attr=target.attr, ctx=ast.Store()), target)
            pre.append(ast.copy_location(ast.Assign(targets=[tgt], value=value), like))
            return pre
        if isinstance(target, ast.Subscript):
            def store(obj, idx):
                tgt = ast.copy_location(ast.Subscript(value=obj, slice=idx, ctx=ast.Store()), target)
                return [ast.copy_location(ast.Assign(targets=[tgt], value=copy.deepcopy(value)), like)]
            flat = self.flat_store(target, store)
            if flat is not None:
                return flat
            obj, idx = self.atom(target.value, pre), self.index(target.slice, pre)
            return pre + store(obj, idx)
        if isinstance(target, (ast.Tuple, ast.List)):
            return self.unpack(target.elts, value, like)
        if isinstance(target, ast.Starred):
            raise Unsupported("starred assignment target outside a tuple", target)
        raise Unsupported(f"assignment to {type(target).__name__}", target)

    def unpack(self, elts, value, like) -> list[ast.stmt]:
        """`a, *b, c = value` -> `_u = __od_unpack__(value, n, star)` then a = _u[0] ..."""
        star = next((i for i, e in enumerate(elts) if isinstance(e, ast.Starred)), -1)
        u = self.state.temp()
        call = ast.Call(func=_name("__od_unpack__", like), args=[value, ast.Constant(len(elts)), ast.Constant(star)],
                        keywords=[])
        pre: list = [_assign(u, _loc(call, like), like)]
        for i, e in enumerate(elts):
            sub = _loc(ast.Subscript(value=_name(u, like), slice=ast.Constant(i), ctx=ast.Load()), like)
            item = self.state.temp()
            pre.append(_assign(item, sub, like))
            pre.extend(self.store(e.value if isinstance(e, ast.Starred) else e, _name(item, like), like))
        return pre

    def stmt_Return(self, s):
        pre: list = []
        value = ast.Constant(None) if s.value is None else self.atom(s.value, pre)
        pre.append(ast.copy_location(ast.Return(value=value), s))
        return pre

    def stmt_If(self, s):
        pre: list = []
        test = self.atom(s.test, pre)
        node = ast.If(test=test, body=self.block(s.body), orelse=self.block(s.orelse) if s.orelse else [])
        pre.append(ast.copy_location(node, s))
        return pre

    def stmt_While(self, s):
        head: list = []
        test = self.expr(s.test, head)
        if not head and not _truth_of_name(test):  # `while i < n:` needs no statements: a native loop test
            # (`while r:` of a name is a test of r's being zero, which the modes check before an `if`)
            loop = ast.While(test=test, body=self.block(s.body), orelse=self.block(s.orelse) if s.orelse else [])
            return [ast.copy_location(loop, s)]
        if not is_atom(test):
            t = self.state.temp()
            head.append(_assign(t, test, s))
            test = _name(t, s)
        neg = ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=test), s)
        exit_body = (self.block(s.orelse) if s.orelse else []) + [ast.copy_location(ast.Break(), s)]
        head.append(ast.copy_location(ast.If(test=neg, body=exit_body, orelse=[]), s))
        loop = ast.While(test=ast.Constant(True), body=head + self.block(s.body), orelse=[])
        return [ast.copy_location(loop, s)]

    def stmt_For(self, s):
        guard = []
        if isinstance(s.iter, ast.Name):
            from .activity import changed_in_place, stored_base, viewed  # (activity imports this module)
            if _changed_by(s.body, {s.iter.id}, changed_in_place, stored_base, viewed, methods=True,
                           callees=set(self.defs)):
                # `for v in s: s.k = ...` over an object whose `__iter__` is a generator (reverse mode runs it
                # eagerly) or whose `__next__` reads what the body changes: checked where it runs
                check = ast.Call(func=_name("__od_iter_guard__", s), args=[_name(s.iter.id, s), ast.Constant(s.iter.id)],
                                 keywords=[])
                guard = [_loc(ast.Expr(value=check), s)]
        pre: list = guard
        if isinstance(s.iter, ast.Call) and _lazy_call(s.iter, frozenset()) and any(
                isinstance(a, ast.Call) and not _lazy_call(a, frozenset()) for a in s.iter.args):
            # `for i, v in enumerate(gen(vals))`, `zip(obj.stream(), ws)`, `islice(gen(vals), 3)`: each call inside
            # the wrapper guarded as a loop's own iterable is (gen21 W4: the wrapper hid the generator's eager
            # iterator from the guard, 1.0 for 3.8)
            args = []
            for a in s.iter.args:
                if isinstance(a, ast.Call) and not _lazy_call(a, frozenset()):  # (`enumerate(zip(L, W))` as it is)
                    t = self.atom(a, pre)
                    if isinstance(t, ast.Name):
                        pre += self.eager_guard(t.id, a, s.body, s)
                    a = t
                args.append(a)
            s = copy.copy(s)
            s.iter = ast.copy_location(ast.Call(func=s.iter.func, args=args, keywords=s.iter.keywords), s.iter)
        live = self.live_loop(s)
        if live is not None:
            return pre + live
        self.drawn_by_loop(s)
        it = self.atom(s.iter, pre)
        from .activity import changed_in_place  # (activity imports this module)
        made = s.iter if isinstance(s.iter, ast.Call) else self.calls.get(s.iter.id) if isinstance(s.iter, ast.Name) else None
        if made is not None and isinstance(it, ast.Name):
            pre += self.eager_guard(it.id, made, s.body, s)
        body: list = []
        if isinstance(s.target, ast.Name):
            target = _name(s.target.id, s.target, True)
        else:
            tmp = self.state.temp()
            target = _name(tmp, s.target, True)
            body.extend(self.store(s.target, _name(tmp, s.target), s))
        body.extend(self.block(s.body))
        loop = ast.For(target=target, iter=it, body=body, orelse=self.block(s.orelse) if s.orelse else [],
                       type_comment=None)
        pre.append(ast.copy_location(loop, s))
        return pre

    def live_loop(self, s: ast.For) -> list[ast.stmt] | None:
        """`for v in xs` (`iter(xs)`, `reversed(xs)`), `for a, b in zip(xs, ys)`, `for k, v in d.items()`
        (`.values()`), each perhaps in `enumerate(..., start)`, whose body may change xs (or d) in place (a
        store into it, a method changing it, a call given it, a view of it changed): Python draws each item
        when the loop reaches it, so the loop sees what the body changed ahead (a prefix sum in place, items
        appended then visited, a sort), and the modes' iteration (an eager copy, an item's cotangent parked in
        the iterator) did not: the value or the derivative came out wrong, silently. Such a loop is written as
        the index loop Python runs (`while k < len(xs): v = xs[k]; k += 1; ...`; a dict's keys listed first,
        its size checked as Python checks it), which every transformer differentiates item by item; where the
        objects are not lists, tuples, arrays or plain dicts when it runs (`__od_live__` tells, and refuses in
        reverse mode for other containers), the loop is left as it is. A lazy iterator of such a list (`map`,
        `filter`, `itertools`) is refused: it would be drawn eagerly."""
        if getattr(s, "_od_as_written", False):
            return None
        from .activity import changed_in_place, stored_base, viewed  # (activity imports this module)
        shape = _loop_shape(s.iter)
        if shape is None:
            lazy = _lazy_over(s.iter)
            if lazy and lazy & _changed_by(s.body, lazy, changed_in_place, stored_base, viewed, methods=True):
                name = sorted(lazy)[0]
                raise Unsupported(f"loop over a lazy iterator of `{name}` (map, filter, itertools), which the loop "
                                  f"changes: it would be drawn before the changes (loop over `{name}` itself, or "
                                  "by index)", s)
            return None
        numbered, kind, fns, seqs = shape
        # (the variables whose objects the sequences are, or are views of: `zip(M, M[1:])`, `M[::-1]`, and
        # the variables bound to views of those: `R = z.reshape(3, 1)` before `for v in z: R[2, 0] += v`)
        names = set().union(*(viewed(a, strict=True) for a in seqs))
        if self.aliases is None:
            self.aliases = _view_aliases(self.fdef) if self.fdef is not None else {}
        names = names.union(*(self.aliases.get(n, ()) for n in names))
        targets = {n.id for n in ast.walk(s.target) if isinstance(n, ast.Name)}
        # (a sequence's name the loop's target rebinds, `for w, bw in zip(ws, bw)`, names an item in the body:
        # KDEpy's `self.kernel(x, bw=bw)` changes no sequence)
        changed = _changed_by(s.body, names - targets, changed_in_place, stored_base, viewed)
        through_items = False
        if targets & changed_in_place(ast.Module(body=s.body, type_ignores=[])):
            # (an item changed in place, a row of an array: `for r, s in zip(M, M[1:]): s += r`; only so, "!": an
            # item of a 1-d array is a number, which no change reaches, `live_loop` tells when the loop runs)
            through_items = not names & changed
            changed = names
        seen = bool(names & changed)  # (a change seen here: reverse mode refuses the loop as written)
        if kind != "seq" or numbered is not None:
            # enumerate, zip, reversed, a dict's items: the modes draw them eagerly, so a change the body makes
            # another way (an alias `M = L`, a closure, a method of an object holding the list, `self.items`)
            # was missed too: any call or store in the body may be one
            if any(isinstance(n, (ast.Call, ast.Delete)) or isinstance(n, (ast.Assign, ast.AugAssign)) and any(
                    not isinstance(t, ast.Name) for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))
                   for n in ast.walk(ast.Module(body=s.body, type_ignores=[]))):
                changed = names
        if not names or not names & changed:
            return None
        pre: list = []

        def new(value):
            name = self.state.temp()
            pre.append(_loc(_assign(name, value, s), s))
            return name

        def load(name):
            return _name(name, s)

        def sub(value, index):
            return ast.Subscript(value=value, slice=index, ctx=ast.Load())

        # the objects looped over: a variable's by its name (the checks of the loop as written look for it:
        # `next(it)` inside `for v in it`), an expression's held (evaluated once, as Python does)
        held = [a.id if isinstance(a, ast.Name) else new(copy.deepcopy(a)) for a in seqs]
        first = new(copy.deepcopy(numbered)) if numbered not in (None, True) else None
        # (the index loop's own reference, as Python's loop keeps the object it started with: the body may bind
        # the name again, `xs = xs + [v]`, delete it, or a closure rebind it, `nonlocal xs`)
        kept = [new(_name(h, s)) if not h.startswith(TEMP_PREFIX) else h for h in held]
        k = self.state.temp()
        checked = ast.Tuple(elts=[copy.deepcopy(f) for f in fns], ctx=ast.Load())
        label = ("!" + kind if through_items else kind) if seen else "?" + kind
        ok = new(ast.Call(func=_name("__od_live__", s), args=[ast.Constant(label), checked,
                                                              *map(load, kept)], keywords=[]))
        setup: list = []
        if kind in ("items", "values"):  # by the keys listed before the loop
            keys, size = self.state.temp(), self.state.temp()
            setup = [_assign(keys, ast.Call(func=_name("__od_keys__", s), args=[load(kept[0])], keywords=[]), s),
                     _assign(size, ast.Call(func=_name("__od_size__", s), args=[load(kept[0])], keywords=[]), s)]
            more = ast.Call(func=_name("__od_more_keys__", s), args=[load(k), load(keys), load(kept[0]), load(size)],
                            keywords=[])
            key = sub(load(keys), load(k))
            value = sub(load(kept[0]), copy.deepcopy(key))
            item = ast.Tuple(elts=[key, value], ctx=ast.Load()) if kind == "items" else value
        elif kind == "reversed":  # from the last position when made, down, while inside the list
            last = self.state.temp()
            setup = [_assign(last, ast.BinOp(left=ast.Call(func=_name("__od_size__", s), args=[load(kept[0])],
                                                           keywords=[]), op=ast.Sub(), right=ast.Constant(1)), s)]
            at = ast.BinOp(left=load(last), op=ast.Sub(), right=load(k))
            more = ast.Call(func=_name("__od_more_back__", s), args=[copy.deepcopy(at), load(kept[0])], keywords=[])
            item = sub(load(kept[0]), at)
        else:
            more = ast.Call(func=_name("__od_more__", s), args=[load(k), *map(load, kept)], keywords=[])
            reads = [sub(load(h), load(k)) for h in kept]
            item = reads[0] if kind == "seq" else ast.Tuple(elts=reads, ctx=ast.Load())
        if numbered is not None:
            number = load(k) if first is None else ast.BinOp(left=load(k), op=ast.Add(), right=load(first))
            item = ast.Tuple(elts=[number, item], ctx=ast.Load())
        step = [ast.Assign(targets=[copy.deepcopy(s.target)], value=item),
                _assign(k, ast.BinOp(left=load(k), op=ast.Add(), right=ast.Constant(1)), s)]
        loop = ast.While(test=more, body=step + copy.deepcopy(s.body), orelse=copy.deepcopy(s.orelse))
        again = _loop_again(s.iter, dict(zip(map(id, seqs), held)), first, s)
        as_written = ast.For(target=copy.deepcopy(s.target), iter=again, body=s.body, orelse=s.orelse,
                             type_comment=None)
        as_written._od_as_written = True
        branch = ast.If(test=load(ok), body=setup + [_assign(k, ast.Constant(0), s), loop], orelse=[as_written])
        _loc(branch, s)
        return self.block(pre) + self.block([branch])

    def stmt_Try(self, s):
        handlers = []
        for h in s.handlers:
            handlers.append(ast.copy_location(
                ast.ExceptHandler(type=h.type, name=h.name, body=self.block(h.body)), h))
        node = ast.Try(body=self.block(s.body), handlers=handlers,
                       orelse=self.block(s.orelse) if s.orelse else [],
                       finalbody=self.block(s.finalbody) if s.finalbody else [])
        node._od_try = True
        return [ast.copy_location(node, s)]

    def stmt_With(self, s):
        pre: list = []
        items = []
        for item in s.items:
            ctx = self.atom(item.context_expr, pre)
            var = item.optional_vars
            if var is not None and not isinstance(var, ast.Name):
                raise Unsupported("`with ... as` a non-name target", s)
            items.append(ast.withitem(context_expr=ctx, optional_vars=var))
        pre.append(ast.copy_location(ast.With(items=items, body=self.block(s.body), type_comment=None), s))
        return pre

    def stmt_Match(self, s):
        """`match subject:` keeps its cases (patterns and guards run natively, so control flow is Python's);
        each case body starts by binding its capture names again from the subject by the reads they stand
        for (`case (a, *r):` binds `a = subject[0]`, `r = list(subject[1:])`; `case P(x=v):` binds
        `v = subject.x`), which every transformer follows as any read. The node is marked `_od_rebound`
        when every case could be; an `|` pattern binding names cannot (which alternative matched is not
        known here), and transformers then refuse an active subject."""
        pre: list = []
        subject = self.atom(s.subject, pre)
        cases, rebound = [], True
        for c in s.cases:
            if c.guard is not None and any(isinstance(n, ast.NamedExpr) for n in ast.walk(c.guard)):
                # (a guard runs natively: the name bound there would hold a constant, its derivative 0)
                raise Unsupported("`match` case guard binding a name (`case p if (y := ...)`): bind it in the "
                                  "case's body", c.guard)
            binds = _pattern_reads(c.pattern, subject)
            rebound = rebound and binds is not None
            again = [ast.copy_location(ast.Assign(targets=[_name(n, c.pattern, True)], value=e), c.pattern)
                     for n, e in binds or ()]
            cases.append(ast.copy_location(
                ast.match_case(pattern=c.pattern, guard=c.guard, body=self.block(again + c.body)), c))
        node = ast.copy_location(ast.Match(subject=subject, cases=cases), s)
        node._od_rebound = rebound
        # a class pattern asks isinstance natively: of a forward-mode dual (a derivative of a derivative)
        # it answers for the dual, not its value, so a transformer running on duals refuses such a match
        node._od_class_patterns = any(isinstance(n, ast.MatchClass) for c in s.cases for n in ast.walk(c.pattern))
        pre.append(node)
        return pre

    def _keep(self, s):
        return [s]

    stmt_Pass = stmt_Break = stmt_Continue = stmt_Global = stmt_Nonlocal = _keep
    stmt_Import = stmt_ImportFrom = stmt_ClassDef = _keep

    def stmt_Assert(self, s):
        """`assert test, msg`: the test lowered before (what it computes and stores, a walrus's name, a method
        storing into its object: `assert b.store(x)`, is followed as any code's; run natively, it counted as
        a constant), then `assert t, msg` on its value. Its tests are marked `_od_assert`: they choose no
        value (the other way raises), so no transformer checks them for a branch point."""
        pre: list = []
        test = self.atom(s.test, pre)
        for n in pre:
            for m in ast.walk(n):
                if isinstance(m, (ast.Assign, ast.If)):
                    m._od_assert = True
        if s.msg is None or not __debug__:
            return pre + [ast.copy_location(ast.Assert(test=test, msg=s.msg), s)]
        # (a message is a value the handler may read, `except AssertionError as e: e.args[0]`: raised as any
        # exception's arguments are, so the transformers see it; kept in an assert, forward mode's tangent twin
        # computed it on values alone: a derivative of 0 for 5, gen21 W3)
        error = ast.Call(func=ast.Name(id="AssertionError", ctx=ast.Load()), args=[s.msg], keywords=[])
        check = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=test), body=[ast.Raise(exc=error, cause=None)], orelse=[])
        check._od_assert = True
        return pre + [ast.fix_missing_locations(ast.copy_location(check, s))]

    def stmt_Raise(self, s):
        return [s]

    def stmt_FunctionDef(self, s):
        pre: list = []
        decorators = [self.atom(x, pre) for x in s.decorator_list]
        self._defaults(s.args, pre)
        if s.decorator_list:  # its code object's first line stays the first decorator's (finds its source)
            s.lineno = min(s.lineno, *(x.lineno for x in s.decorator_list))
        s.decorator_list = []
        pre.append(s)  # a closure creation; its body is lowered when it is called
        for x in reversed(decorators):  # `@deco def g` is `g = deco(g)`: the decorated value is differentiated
            call = ast.copy_location(ast.Call(func=x, args=[_name(s.name, s)], keywords=[]), s)
            pre.append(_assign(s.name, call, s))
        return pre

    def _defaults(self, args: ast.arguments, pre: list) -> None:
        """A definition's default values, evaluated where it is made, as atoms: their cotangents (the
        made function's `__defaults__`/`__kwdefaults__`) flow back to them."""
        args.defaults = [self.atom(x, pre) for x in args.defaults]
        args.kw_defaults = [None if x is None else self.atom(x, pre) for x in args.kw_defaults]

    def stmt_Delete(self, s):
        out: list = []
        for t in s.targets:
            if isinstance(t, ast.Subscript):
                pre: list = []
                obj = self.atom(t.value, pre)
                idx = self.index(t.slice, pre)
                pre.append(ast.copy_location(ast.Delete(targets=[ast.copy_location(
                    ast.Subscript(value=obj, slice=idx, ctx=ast.Del()), t)]), s))
                out.extend(pre)
            else:
                out.append(ast.copy_location(ast.Delete(targets=[t]), s))
        return out

    # -- expressions -----------------------------------------------------------------------------
    def atom(self, e: ast.expr, pre: list) -> ast.expr:
        """Lower e; return an atom holding its value."""
        v = self.expr(e, pre)
        if is_atom(v):
            return v
        t = self.state.temp()
        pre.append(_assign(t, v, e))
        return _name(t, e)

    def expr(self, e: ast.expr, pre: list) -> ast.expr:
        """Lower e to one operation on atoms (or an atom), emitting what it needs into pre."""
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            raise Unsupported(f"`{type(e).__name__}` expression", e)
        return method(e, pre)

    def expr_Name(self, e, pre):
        return ast.copy_location(ast.Name(id=e.id, ctx=ast.Load()), e)

    def expr_Constant(self, e, pre):
        return e

    def expr_BinOp(self, e, pre):
        return ast.copy_location(ast.BinOp(left=self.atom(e.left, pre), op=e.op, right=self.atom(e.right, pre)), e)

    def expr_UnaryOp(self, e, pre):
        return ast.copy_location(ast.UnaryOp(op=e.op, operand=self.atom(e.operand, pre)), e)

    def expr_Compare(self, e, pre):
        left = self.atom(e.left, pre)
        if len(e.ops) == 1:
            return ast.copy_location(ast.Compare(left=left, ops=e.ops, comparators=[self.atom(e.comparators[0], pre)]), e)
        # a < b < c  ->  t = a < b; if t: t = b < c   (each operand evaluated once, short-circuit kept)
        result = self.state.temp()
        cur_left = left
        body = pre
        for i, (op, comp) in enumerate(zip(e.ops, e.comparators)):
            right = self.atom(comp, body)
            body.append(_assign(result, ast.copy_location(
                ast.Compare(left=cur_left, ops=[op], comparators=[right]), e), e))
            if i < len(e.ops) - 1:
                nxt: list = []
                body.append(ast.copy_location(ast.If(test=_name(result, e), body=nxt, orelse=[]), e))
                body, cur_left = nxt, right
        return _name(result, e)

    def expr_BoolOp(self, e, pre):
        result = self.state.temp()
        pre.append(_assign(result, self.atom(e.values[0], pre), e))
        body = pre
        for v in e.values[1:]:
            nxt: list = []
            test = _name(result, e)
            if isinstance(e.op, ast.Or):
                test = ast.copy_location(ast.UnaryOp(op=ast.Not(), operand=test), e)
            body.append(ast.copy_location(ast.If(test=test, body=nxt, orelse=[]), e))
            nxt.append(_assign(result, self.atom(v, nxt), e))
            body = nxt
        return _name(result, e)

    def expr_IfExp(self, e, pre):
        result = self.state.temp()
        test = self.atom(e.test, pre)
        body: list = []
        body.append(_assign(result, self.atom(e.body, body), e))
        orelse: list = []
        orelse.append(_assign(result, self.atom(e.orelse, orelse), e))
        pre.append(ast.copy_location(ast.If(test=test, body=body, orelse=orelse), e))
        return _name(result, e)

    def expr_NamedExpr(self, e, pre):
        value = self.atom(e.value, pre)
        pre.append(ast.copy_location(ast.Assign(targets=[_name(e.target.id, e, True)], value=value), e))
        return _name(e.target.id, e)

    def expr_Call(self, e, pre):
        if (isinstance(e.func, ast.Name) and e.func.id in ("any", "all") and len(e.args) == 1 and not e.keywords
                and isinstance(e.args[0], ast.GeneratorExp) and len(e.args[0].generators) == 1):
            return self._short_circuit(e.func.id == "any", e.args[0], pre)
        if (isinstance(e.func, ast.Name) and e.func.id == "super" and not e.args and not e.keywords
                and self.first_param):
            # zero-argument super() reads its caller's frame: made explicit, as the core does
            e = _loc(ast.Call(func=e.func, args=[ast.Name(id="__class__", ctx=ast.Load()),
                                                 ast.Name(id=self.first_param, ctx=ast.Load())],
                              keywords=[]), e)
        if isinstance(e.func, ast.Attribute):  # a method call stays one operation: obj.m(args)
            obj = self.atom(e.func.value, pre)
            func = ast.copy_location(ast.Attribute(value=obj, attr=e.func.attr, ctx=ast.Load()), e.func)
        else:
            func = self.atom(e.func, pre)
        shared = self.passed_with_a_generator(e)
        args = []
        for a in e.args:
            if isinstance(a, ast.Starred):
                args.append(ast.copy_location(ast.Starred(value=self._sized(a.value, pre), ctx=ast.Load()), a))
            else:
                args.append(self.atom(a, pre))
                if shared and a in shared and isinstance(args[-1], ast.Name):
                    pre.extend(self.eager_guard(args[-1].id, *shared[a], a))
        kws = [ast.copy_location(ast.keyword(arg=k.arg, value=self.atom(k.value, pre)), k) for k in e.keywords]
        return ast.copy_location(ast.Call(func=func, args=args, keywords=kws), e)

    def passed_with_a_generator(self, e: ast.Call) -> dict:
        """`consume((x * len(acc) for x in xs), acc)`, `acc.extend(v * len(acc) for v in r)`: a generator
        expression is evaluated where it is made, so a callee changing in place, between draws, a variable
        it reads (passed beside it, or the method's object) would have it read before the changes: refused.
        `consume(gen(acc), acc)`: a generator function's call passed beside a variable passed to it, too,
        where the call was a generator's (`__od_eager_guard__` on its result: {positional argument: call},
        returned: {argument: (the call, the names)}). Callees known to change none of their arguments (`sum`, `sorted`, numpy's, math's)
        pass; a callee changing a global or an attribute the generator reads is not seen."""
        items = [*e.args, *(k.value for k in e.keywords)]
        if len(items) + isinstance(e.func, ast.Attribute) < 2 or _reads_only(e.func):
            return {}
        from .activity import stored_base  # (activity imports this module)
        bases = [stored_base(a.value if isinstance(a, ast.Starred) else a) for a in items]
        if isinstance(e.func, ast.Attribute):
            bases.append(stored_base(e.func.value))
        guards = {}
        # (a function of its own passed too changes what it captures: `consume(gen(vals), cb)` of a `cb`
        # storing into vals, called between draws, gen21 W4)
        from .activity import captured_stores  # (activity imports this module)
        changes = {b: captured_stores(self.defs[b]) for b in bases if b in self.defs}
        for i, a in enumerate(items):
            gen = a if isinstance(a, ast.GeneratorExp) else (
                self.generators.get(a.id) if isinstance(a, ast.Name) else None)
            # (not a module's name: `reduce(np.logical_or, (np.ma.getmask(a) for a in args))`, gsw's decorator,
            # passes a function of numpy's, which changes no module the generator reads)
            others = {b for j, b in enumerate(bases) if j != i and b and b not in _READ_ONLY_MODULES}
            others |= {c for j, b in enumerate(bases) if j != i and b in changes for c in changes[b]}
            if gen is not None:
                hit = sorted(_comprehension_reads(gen) & others)
                if hit:
                    raise Unsupported(
                        f"call passing a generator expression that reads `{hit[0]}` beside `{hit[0]}` itself: "
                        f"the generator expression is evaluated where it is made, so if the callee changes "
                        f"`{hit[0]}` while drawing from it, it would have read `{hit[0]}` before the changes "
                        f"(pass a list, `[...]`, or compute the items in the callee)", a)
                continue
            made = a if isinstance(a, ast.Call) else self.calls.get(a.id) if isinstance(a, ast.Name) else None
            if made is None or i >= len(e.args) or _reads_only(made.func):
                continue
            passed = {b for m in [*made.args, *(k.value for k in made.keywords)] if (b := stored_base(m))}
            if passed & others:
                guards[a] = (made, passed & others)
        return guards

    def expr_Attribute(self, e, pre):
        return ast.copy_location(ast.Attribute(value=self.atom(e.value, pre), attr=e.attr, ctx=ast.Load()), e)

    def index(self, sl, pre):
        if isinstance(sl, ast.Slice):
            parts = [None if p is None else self.atom(p, pre) for p in (sl.lower, sl.upper, sl.step)]
            return ast.copy_location(ast.Slice(lower=parts[0], upper=parts[1], step=parts[2]), sl)
        if isinstance(sl, ast.Tuple) and any(isinstance(x, ast.Slice) for x in sl.elts):
            elts = [self.index(x, pre) for x in sl.elts]
            return ast.copy_location(ast.Tuple(elts=elts, ctx=ast.Load()), sl)
        return self.atom(sl, pre)

    def expr_Subscript(self, e, pre):
        obj = self.atom(e.value, pre)
        return ast.copy_location(ast.Subscript(value=obj, slice=self.index(e.slice, pre), ctx=ast.Load()), e)

    def _sized(self, e, pre):
        """`*e` spread: e as a tuple (so its pieces can be counted in the reverse pass)."""
        if isinstance(e, (ast.List, ast.Tuple)):
            return self.atom(e, pre)
        call = _loc(ast.Call(func=ast.Name(id="__od_tuple__", ctx=ast.Load()), args=[e], keywords=[]), e)
        return self.atom(call, pre)

    def _elts(self, elts, pre):
        out = []
        for x in elts:
            if isinstance(x, ast.Starred):
                out.append(ast.copy_location(ast.Starred(value=self._sized(x.value, pre), ctx=ast.Load()), x))
            else:
                out.append(self.atom(x, pre))
        return out

    def expr_Tuple(self, e, pre):
        return ast.copy_location(ast.Tuple(elts=self._elts(e.elts, pre), ctx=ast.Load()), e)

    def expr_List(self, e, pre):
        return ast.copy_location(ast.List(elts=self._elts(e.elts, pre), ctx=ast.Load()), e)

    def expr_Set(self, e, pre):
        return ast.copy_location(ast.Set(elts=self._elts(e.elts, pre)), e)

    def expr_Dict(self, e, pre):
        keys, values = [], []
        for k, v in zip(e.keys, e.values):
            if k is None:  # {**other}
                keys.append(None)
                values.append(self.atom(v, pre))
            else:
                keys.append(self.atom(k, pre))
                values.append(self.atom(v, pre))
        return ast.copy_location(ast.Dict(keys=keys, values=values), e)

    def expr_JoinedStr(self, e, pre):
        """An f-string, kept, with each field's expression lowered before it (what a field computes or stores,
        `f"{d.append(x * 2.0)}"`, a walrus, is followed as any code's: run natively, it counted as a constant)."""
        values = []
        for v in e.values:
            if isinstance(v, ast.FormattedValue) and not isinstance(v.value, (ast.Name, ast.Constant)):
                spec = v.format_spec
                if spec is not None:
                    spec = self.expr_JoinedStr(spec, pre)
                v = ast.copy_location(ast.FormattedValue(value=self.atom(v.value, pre), conversion=v.conversion,
                                                         format_spec=spec), v)
            values.append(v)
        return ast.copy_location(ast.JoinedStr(values=values), e)

    def expr_Lambda(self, e, pre):
        self._defaults(e.args, pre)
        return e  # a closure creation; its body is lowered when it is called

    def expr_Slice(self, e, pre):
        return self.index(e, pre)

    # comprehensions become loops over fresh names (their own scope is emulated by renaming)
    def _comprehension(self, e, pre, make, add):
        result = self.state.temp()
        pre.append(_assign(result, make(), e))
        renames: dict[str, str] = {}
        gens = []
        inner = _closure_reads(e)
        for g in e.generators:
            names = [n.id for n in ast.walk(g.target) if isinstance(n, ast.Name)]
            if inner & set(names):  # the renamed variable would not be a fresh cell per run of the comprehension
                raise Unsupported(f"lambda inside a comprehension reading its variable `{sorted(inner & set(names))[0]}` "
                                  "in its body (write it as a for loop, or pass it as a default: `lambda v=v: ...`)", e)
            for n in names:
                renames[n] = self.state.temp() + "_" + n
            gens.append(g)
        elt_nodes = add(result)  # (list of exprs to evaluate in the innermost body)
        body_stmts = self._comp_body(e, gens, renames, result, elt_nodes)
        pre.extend(body_stmts)
        return _name(result, e)

    def _comp_body(self, e, gens, renames, result, finish):
        def rename(node):
            node = copy.deepcopy(node)
            for n in _comprehension_scope(node):
                if isinstance(n, ast.Name) and n.id in renames:
                    n.id = renames[n.id]
            return node

        def build(i):
            if i == len(gens):
                return finish(rename)
            g = gens[i]
            inner = build(i + 1)
            for cond in reversed(g.ifs):
                inner = [ast.copy_location(ast.If(test=rename(cond), body=inner, orelse=[]), cond)]
            loop = ast.For(target=rename(g.target), iter=rename(g.iter) if i else g.iter, body=inner,
                           orelse=[], type_comment=None)
            return [ast.copy_location(loop, e)]

        if any(g.is_async for g in gens):
            raise Unsupported("async comprehension", e)
        return self.block(build(0))

    def _short_circuit(self, is_any: bool, gen: ast.GeneratorExp, pre):
        """`any(p(v) for v in it)`, `all(...)` as the loop stopping at the first decisive item that they are
        (a generator expression is evaluated eagerly: every item was drawn, a walrus witness came out the last
        item, an iterator shared with the code after was spent, a predicate recording its calls recorded all)."""
        if gen.generators[0].is_async:
            raise Unsupported("async comprehension", gen)

        def add(r):
            def finish(rename):
                test = rename(gen.elt)
                if not is_any:
                    test = _loc(ast.UnaryOp(op=ast.Not(), operand=test), gen)
                decided = [_assign(r, _loc(ast.Constant(value=is_any), gen), gen), _loc(ast.Break(), gen)]
                return [_loc(ast.If(test=test, body=decided, orelse=[]), gen)]
            return finish
        return self._comprehension(gen, pre, lambda: _loc(ast.Constant(value=not is_any), gen), add)

    def expr_ListComp(self, e, pre):
        empty = lambda: ast.copy_location(ast.List(elts=[], ctx=ast.Load()), e)
        return self._comprehension(e, pre, empty, lambda r: (lambda rn: [self._append_stmt(r, rn(e.elt), e)]))

    def expr_GeneratorExp(self, e, pre):
        """Evaluated eagerly (documented in the README); for reverse mode an iterator over the list (so
        `next` works), for the others the list itself; either checked (`runtime.eager_items`: one changeable
        object yielded twice is refused)."""
        if not self.iterators:
            items = self.expr_ListComp(e, pre)
            return _loc(ast.Call(func=_name("__od_eager_items__", e), args=[items], keywords=[]), e)

        def add(r):  # (each item counted first: `(x * k for k in itertools.count())` refused, not run forever)
            def finish(rn):
                count = ast.Call(func=_name("__od_size__", e), args=[_name(r, e)], keywords=[])
                guard = _loc(ast.Expr(value=ast.Call(func=_name("__od_endless__", e), args=[count], keywords=[])), e)
                return [guard, self._append_stmt(r, rn(e.elt), e)]
            return finish
        empty = lambda: ast.copy_location(ast.List(elts=[], ctx=ast.Load()), e)
        items = self._comprehension(e, pre, empty, add)
        return _loc(ast.Call(func=_name("__od_eager__", e), args=[items], keywords=[]), e)

    def expr_SetComp(self, e, pre):
        empty = lambda: ast.copy_location(ast.Call(func=_name("set", e), args=[], keywords=[]), e)

        def add(r):
            def finish(rn):
                call = ast.Call(func=ast.Attribute(value=_name(r, e), attr="add", ctx=ast.Load()),
                                args=[rn(e.elt)], keywords=[])
                return [_loc(ast.Expr(value=call), e)]
            return finish
        return self._comprehension(e, pre, empty, add)

    def expr_DictComp(self, e, pre):
        empty = lambda: ast.copy_location(ast.Dict(keys=[], values=[]), e)

        def add(r):
            def finish(rn):
                tgt = ast.Subscript(value=_name(r, e), slice=rn(e.key), ctx=ast.Store())
                return [_loc(ast.Assign(targets=[tgt], value=rn(e.value)), e)]
            return finish
        return self._comprehension(e, pre, empty, add)

    def _append_stmt(self, r, elt, like):
        call = ast.Call(func=ast.Attribute(value=_name(r, like), attr="append", ctx=ast.Load()), args=[elt], keywords=[])
        return _loc(ast.Expr(value=call), like)


def _comprehension_scope(node):
    """The nodes of node evaluated in the comprehension's own scope: a lambda's defaults are, its body is
    not (its parameters shadow; a free read of a comprehension variable is refused by _closure_reads)."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, ast.Lambda):
            todo.extend(d for d in n.args.defaults + n.args.kw_defaults if d is not None)
        else:
            todo.extend(ast.iter_child_nodes(n))


def _closure_reads(e) -> set[str]:
    """Names a lambda inside comprehension e may read from an enclosing scope (its body's names but its
    own parameters; an over-approximation: names bound inside the body count too)."""
    reads = set()
    for lam in _comprehension_scope(e):
        if isinstance(lam, ast.Lambda):
            a = lam.args
            params = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs + [a.vararg, a.kwarg] if p is not None}
            reads |= {n.id for n in ast.walk(lam.body) if isinstance(n, ast.Name)} - params
    return reads


def lower(fdef: ast.FunctionDef, iterators: bool = False, globals_: dict | None = None) -> ast.FunctionDef:
    """Return a copy of fdef in AD normal form (nested definitions are left for their own lowering);
    `iterators`: generator expressions give an iterator over their items (else the list). `globals_`: the
    function's module namespace, where given (reverse mode, which runs generators eagerly): a call of one of
    its generator functions is a lazy iterator of its arguments (`_late_generator`)."""
    if isinstance(fdef, ast.AsyncFunctionDef):
        raise Unsupported("async function", fdef)
    generator = is_generator(fdef)
    if generator:
        fdef = _eager_generator(fdef)
    _check_supported_shallow(fdef, globals_)
    fdef = _finally_before_returns(fdef)
    a = fdef.args
    positional = a.posonlyargs + a.args
    lw = Lowerer(_Lowering(), positional[0].arg if positional else None, iterators, _drawn_by_next(fdef))
    from .activity import local_names  # (activity imports this module)
    lw.own = local_names(fdef)
    lw.defs = {n.name: n for n in ast.walk(fdef) if isinstance(n, ast.FunctionDef) and n is not fdef}
    lw.fdef, lw.aliases = fdef, None
    out = copy.copy(fdef)
    out.body = lw.block(fdef.body)
    out._od_generator = generator  # (run eagerly: see `contexts.ad.codegen._check_shared_changes`)
    return out


def _finally_before_returns(fdef):
    """fdef with each `return` inside a `try` that has a `finally` made `r = value; done = True; <finally>; return
    r`, and the `finally` block run only where not done (`if not done: <finally>`): Python runs the block after the
    returned value is computed and before the caller has it, so a change it makes to the object returned is one
    the caller sees (`try: return out` / `finally: out.append(v)`), which the transformers' records, closed at the
    return, missed (gen22 W2: reverse mode 1.0 for 1.6, forward mode 1.0 for 3). Innermost `try` first, so that
    nested blocks run in Python's order; a `finally` with its own `return`, `break` or `continue` is refused
    (`_check_supported_shallow`)."""
    if not any(isinstance(n, ast.Try) and n.finalbody and _returns_in(n) for n in own_nodes(fdef)):
        return fdef
    fdef = copy.deepcopy(fdef)
    count = [0]

    def block(stmts: list) -> list:
        out = []
        for st in stmts:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.append(st)
                continue
            _inner_blocks(st, block, ("body", "orelse", "finalbody"))
            if isinstance(st, ast.Try) and st.finalbody and _returns_in(st):
                count[0] += 1
                done, value = f"_od_fin{count[0]}", f"_od_finr{count[0]}"
                fin = st.finalbody

                def at_returns(stmts: list) -> list:
                    new = []
                    for t in stmts:
                        if isinstance(t, ast.Return):
                            new += [_loc(_assign(value, t.value or ast.Constant(None), t), t),
                                    _loc(_assign(done, ast.Constant(True), t), t), *copy.deepcopy(fin),
                                    _loc(ast.Return(value=_name(value, t)), t)]
                            continue
                        if not isinstance(t, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                            _inner_blocks(t, at_returns, ("body", "orelse"))
                        new.append(t)
                    return new
                st.body, st.orelse = at_returns(st.body), at_returns(st.orelse)
                for h in st.handlers:
                    h.body = at_returns(h.body)
                st.finalbody = [_loc(ast.If(test=ast.UnaryOp(op=ast.Not(), operand=_name(done, st)), body=fin,
                                            orelse=[]), fin[0])]
                out.append(_loc(_assign(done, ast.Constant(False), st), st))
            out.append(st)
        return out
    fdef.body = block(fdef.body)
    ast.fix_missing_locations(fdef)
    return fdef


def _inner_blocks(st, fn, fields) -> None:
    """st's statement lists (`fields`, its handlers' and match cases' bodies) replaced by fn of each."""
    for field in fields:
        if isinstance(getattr(st, field, None), list):
            setattr(st, field, fn(getattr(st, field)))
    for h in getattr(st, "handlers", ()):
        h.body = fn(h.body)
    for c in getattr(st, "cases", ()):
        c.body = fn(c.body)


def _returns_in(t: ast.Try) -> bool:
    """A `return` in t's body, handlers or else block (not in a function defined there)."""
    stack = [*t.body, *t.orelse, *(st for h in t.handlers for st in h.body)]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def own_nodes(fn):
    """Nodes of fn's own body, not descending into nested functions, lambdas and classes (scopes of their
    own, not yielded either)."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    stack = [n for n in fn.body if not isinstance(n, nested)]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:  # (ast.iter_child_nodes' order, without its generators: twice as fast)
        n = pop()
        yield n
        for name in n._fields:
            v = getattr(n, name, None)
            if type(v) is list:
                extend([c for c in v if isinstance(c, ast.AST) and not isinstance(c, nested)])
            elif isinstance(v, ast.AST) and not isinstance(v, nested):
                push(v)


def all_nodes(node):
    """Every node of the tree at node, node first: `ast.walk`, in its order, without its generators (the
    analyses walk a long function some thirty times: this is nearly twice as fast)."""
    todo = [node]
    push, extend = todo.append, todo.extend
    for n in todo:  # (a list growing while it is read: breadth first, as ast.walk's queue)
        for name in n._fields:
            v = getattr(n, name, None)
            if type(v) is list:
                extend([x for x in v if isinstance(x, ast.AST)])
            elif isinstance(v, ast.AST):
                push(v)
        yield n


def param_names(args: ast.arguments) -> list[str]:
    """A signature's parameter names in the order Python binds them (`co_varnames`' first): positional,
    keyword-only, `*args`, `**kwargs`."""
    return [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]
            if a is not None]


def is_generator(fdef) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(fdef))


class _Eager(ast.NodeTransformer):
    """yield e -> _od_yields.append(e); yield from it -> a loop of appends; return -> the list's iterator."""

    def visit_FunctionDef(self, node):
        return node  # nested definitions keep their own semantics

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_Expr(self, node):
        v = node.value
        if isinstance(v, ast.Yield):
            arg = v.value or ast.Constant(None)
            return [_loc(_bounded(), node),
                    _loc(ast.Expr(value=ast.Call(func=ast.Attribute(value=ast.Name(id="_od_yields", ctx=ast.Load()),
                                                                    attr="append", ctx=ast.Load()),
                                                 args=[arg], keywords=[])), node)]
        if isinstance(v, ast.YieldFrom):
            body = ast.Expr(value=ast.Call(func=ast.Attribute(value=ast.Name(id="_od_yields", ctx=ast.Load()),
                                                              attr="append", ctx=ast.Load()),
                                           args=[ast.Name(id="_od_yielded", ctx=ast.Load())], keywords=[]))
            loop = ast.For(target=ast.Name(id="_od_yielded", ctx=ast.Store()), iter=v.value,
                           body=[_loc(_bounded(), node), body], orelse=[], type_comment=None)
            return _loc(loop, node)
        return self.generic_visit(node)

    def visit_Return(self, node):
        if node.value is not None and not (isinstance(node.value, ast.Constant) and node.value.value is None):
            # its value is StopIteration.value, which the eager iterator cannot raise where Python would
            raise Unsupported("a generator returning a value (`return v` after `yield`: the "
                              "StopIteration's value)", node)
        return _loc(ast.Return(value=_yields_iterator()), node)

    def visit_Yield(self, node):
        raise Unsupported("`yield` used as a value (generator.send)", node)

    visit_YieldFrom = visit_Yield


def _bounded() -> ast.Expr:
    """`__od_endless__(len(_od_yields))` before each item: an endless generator refused, not run until memory
    runs out (`lowered.runtime.endless`; `len` keeps the list the generator's own)."""
    count = ast.Call(func=ast.Name(id="__od_size__", ctx=ast.Load()), args=[ast.Name(id="_od_yields", ctx=ast.Load())],
                     keywords=[])
    return ast.Expr(value=ast.Call(func=ast.Name(id="__od_endless__", ctx=ast.Load()), args=[count], keywords=[]))


def _yields_iterator():
    return ast.Call(func=ast.Name(id="__od_eager__", ctx=ast.Load()),
                    args=[ast.Name(id="_od_yields", ctx=ast.Load())], keywords=[])


def _drawn_by_next(fdef) -> tuple:
    """(the variables fdef draws from by `next(v)`, those it changes in place), for `drawn_by_next`."""
    nexted = frozenset(n.args[0].id for n in ast.walk(fdef) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                       and n.func.id == "next" and n.args and isinstance(n.args[0], ast.Name))
    if not nexted:
        return frozenset(), frozenset()
    from .activity import changed_in_place  # (activity imports this module)
    return nexted, frozenset(changed_in_place(fdef))


# callees that change none of their arguments (builtins of iteration and reduction; functions of these
# modules): a generator passed to them beside what it reads is consumed as Python would
_READS_ONLY = frozenset({"sum", "min", "max", "any", "all", "sorted", "list", "tuple", "set", "frozenset", "dict",
                         "zip", "enumerate", "map", "filter", "len", "iter", "next", "print", "str", "repr",
                         "reversed", "isinstance", "getattr", "hasattr", "join", "format"})
_READ_ONLY_MODULES = frozenset({"np", "numpy", "math", "cmath", "itertools", "functools", "operator", "statistics",
                                "builtins"})


def _draws_random(body: list, module: str) -> bool:
    """The statements name `module.random` (numpy's random state, changed by every draw and seed)."""
    return any(isinstance(n, ast.Attribute) and n.attr == "random" and isinstance(n.value, ast.Name)
               and n.value.id == module for st in body for n in ast.walk(st))


def _random_states(nodes: list) -> set:
    """The random states the nodes draw from or seed: numpy's (`np.random.normal()`), Python's (`random.random()`)
    and a generator object's, by the name it has (`rng.normal()`)."""
    out = set()
    for st in nodes:
        for n in ast.walk(st):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name):
                if n.attr == "random" and n.value.id in ("np", "numpy"):
                    out.add(f"{n.value.id}.random")
                elif n.value.id == "random":
                    out.add("random")
                elif n.attr in _DRAWS:  # (a generator object's: `rng.normal()`)
                    out.add(n.value.id)
    return out


_DRAWS = frozenset({"normal", "standard_normal", "random", "uniform", "integers", "choice", "shuffle", "permutation",
                    "permuted", "exponential", "standard_exponential", "poisson", "binomial", "gamma", "beta",
                    "lognormal", "multivariate_normal", "triangular", "rand", "randn", "randint", "random_sample",
                    "gauss", "sample", "seed", "laplace", "logistic", "chisquare", "weibull", "dirichlet",
                    "multinomial", "bytes", "vonmises", "standard_t", "standard_cauchy", "standard_gamma", "rvs"})


def _reads_only(func) -> bool:
    """func is named as a callee that changes none of its arguments (see `_READS_ONLY`)."""
    if isinstance(func, ast.Name):
        return func.id in _READS_ONLY
    if isinstance(func, ast.Attribute):
        if func.attr in ("join", "format"):
            return True
        base = func.value
        while isinstance(base, ast.Attribute):
            base = base.value
        return isinstance(base, ast.Name) and base.id in _READ_ONLY_MODULES
    return False


def _late_reads(g: ast.GeneratorExp) -> set[str]:
    """The names generator expression g reads when it runs: not its outermost iterable, which Python
    evaluates where g is made (PEP 289: `gens.append(max(m, v) for v in w)` in a loop rebinding w keeps each
    iteration's w; trueskill's `rate`, refused before)."""
    first = copy.copy(g.generators[0])
    first.iter = ast.Constant(value=())
    return _comprehension_reads(ast.GeneratorExp(elt=g.elt, generators=[first, *g.generators[1:]]))


def _comprehension_reads(e) -> set[str]:
    """The names a comprehension reads from the function around it (its own variables excepted)."""
    from .activity import free_names  # (activity imports this module)
    lam = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                                        kwarg=None, defaults=[]), body=e)
    return free_names(lam, False)


def _eager_generator(fdef):
    """A generator function as an eager one returning an iterator over what it yields: what reverse mode
    differentiates (documented: the body runs to completion when the generator is created)."""
    out = copy.deepcopy(fdef)
    eager = _Eager()
    body = [t for s in out.body for t in (lambda v: v if isinstance(v, list) else [v])(eager.visit(s))]
    start = _loc(ast.Assign(targets=[ast.Name(id="_od_yields", ctx=ast.Store())], value=ast.List(elts=[], ctx=ast.Load())),
                 fdef.body[0])
    end = _loc(ast.Return(value=_yields_iterator()), fdef.body[-1])
    # PEP 479: a StopIteration escaping a generator's body is a RuntimeError (else it would end a loop
    # around the generator's consumer silently)
    with AST_LOCK:
        # and an error raised past where the consumer may stop (`v / 0` of a fourth item nobody draws: a
        # ZeroDivisionError where the program raises none, gen21 C4) is told for what it is
        guard = ast.parse("try:\n    pass\nexcept StopIteration as _od_stop:\n"
                          "    raise RuntimeError('generator raised StopIteration') from _od_stop\n"
                          "except Exception as _od_raised:\n"
                          "    __od_eager_raised__(_od_raised)\n    raise\n").body[0]
    for n in ast.walk(guard):
        if "lineno" in n._attributes:
            ast.copy_location(n, fdef.body[0])
    guard.body = body + [end]
    out.body = [start, guard]
    return out


def _check_supported_shallow(fdef, globals_: dict | None = None) -> None:
    """Reject yield/await and reads of the frame by name (`locals()`) in fdef itself (not in nested
    definitions)."""
    stored = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    # (the generator functions defined here: a call of one is a lazy iterator of its arguments)
    # (each with the names it reads from outside: a global or a captured variable changed between draws, `SCALE
    # = 5.0` between two `next(g)`, was read before the change: 2.1 for 7.7, gen21 W12)
    from .activity import free_names  # (activity imports this module)
    generators = {n.name: free_names(n) for n in ast.walk(fdef) if isinstance(n, ast.FunctionDef) and n is not fdef
                  and is_generator(n)}
    if globals_:  # (and the module's, called by name: `g = gen(p)` of a `def gen(seq): ... yield`)
        called = {n.func.id for n in ast.walk(fdef) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        generators.update((c, set(g.__code__.co_names)) for c in called - stored
                          if type(g := globals_.get(c)) is types.FunctionType and g.__code__.co_flags & inspect.CO_GENERATOR)
    stack = [fdef] + list(ast.iter_child_nodes(fdef))
    while stack:
        node = stack.pop()
        if node is fdef:  # (its own body's blocks, checked below; its children are on the stack)
            late = _late_generator(fdef.body, generators) or _kept_generator(fdef)
            if late is not None:
                raise _late_refused(late)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            raise Unsupported("generator function (`yield`)", node)
        if isinstance(node, ast.Await):
            raise Unsupported("`await`", node)
        if isinstance(node, ast.Call) and _reads_frame(node) and ast.unparse(node.func) not in stored:
            raise Unsupported(f"call `{ast.unparse(node.func)}(...)` that reads the function's variables by name (a "
                              "transformed function's frame holds other variables: the derivative would not "
                              "follow them; use the variables themselves)", node)
        for block in (getattr(node, "body", None), getattr(node, "orelse", None), getattr(node, "finalbody", None)):
            if type(block) is list and (late := _late_generator(block, generators)) is not None:
                raise _late_refused(late)
        if isinstance(node, ast.Try) and (jump := _jump_out_of(node.finalbody)) is not None:
            # (it discards the `return` of the try: reverse mode still added that value's derivative, 4.4
            # for 3; Python 3.14 warns of it, PEP 765)
            raise Unsupported(f"`{jump}` in a `finally` block (it discards the try's return or exception)", node)
        stack.extend(ast.iter_child_nodes(node))


_LAZY_BUILTINS = frozenset({"zip", "enumerate", "reversed", "map", "filter", "iter"})
# itertools' iterators, lazy as the builtins: `itertools.chain(p, q)` or `chain(p, q)` imported (a function of
# the user's by one of these names is taken for one: a refusal at most, never a wrong value)
_LAZY_ITERTOOLS = frozenset({"chain", "islice", "accumulate", "tee", "starmap", "pairwise", "zip_longest",
                             "compress", "takewhile", "dropwhile", "groupby", "cycle", "filterfalse", "batched",
                             "from_iterable"})
# calls that copy what they are given when they run (`iter(sorted(p))` holds no p)
_COPYING = frozenset({"sorted", "list", "tuple", "set", "frozenset", "dict", "deepcopy", "copy", "array"})


def _lazy_call(value, generators: frozenset) -> bool:
    """value makes a lazy iterator: a builtin's (`zip`, `iter`, ...), itertools', or a call of a generator
    function defined in the function (`generators`: their names)."""
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    if isinstance(f, ast.Name):
        return f.id in _LAZY_BUILTINS or f.id in _LAZY_ITERTOOLS or f.id in generators
    return isinstance(f, ast.Attribute) and f.attr in _LAZY_ITERTOOLS and (
        isinstance(f.value, ast.Name) and f.value.id == "itertools"
        or isinstance(f.value, ast.Attribute) and f.value.attr == "chain")  # (`itertools.chain.from_iterable`)


def _held_reads(e, items: set | None = None) -> set[str]:
    """The variables whose objects a lazy iterator made of expression e (an argument) reads when it runs:
    `p` of `p`, `d.values()`, `p[1:]`; what a generator expression or lambda reads; not the arguments of a
    call that copies them when it runs (`sorted(p)`), nor of arithmetic. Given `items`, the variables read only
    through a subscript (`d["k"]`, `p[1:]`) go there instead: what is held is an item, a copy or, of an array, a
    view, never the list or dict itself (`lazy_stamp`'s `items`)."""
    if isinstance(e, ast.Name):
        return {e.id}
    if isinstance(e, ast.Subscript) and items is not None:
        items |= _held_reads(e.value)
        return set()
    if isinstance(e, (ast.Attribute, ast.Subscript, ast.Starred)):
        return _held_reads(e.value, items)
    if isinstance(e, ast.Call):
        f = e.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if name in _COPYING:
            return set()
        out = _held_reads(f.value, items) if isinstance(f, ast.Attribute) else set()
        for a in (*e.args, *(k.value for k in e.keywords)):
            out |= _held_reads(a, items)
        return out
    if isinstance(e, (ast.Tuple, ast.List)):
        return set().union(*(_held_reads(x, items) for x in e.elts))
    if isinstance(e, ast.GeneratorExp):
        return _comprehension_reads(e) | {n.id for n in ast.walk(e.generators[0].iter) if isinstance(n, ast.Name)}
    if isinstance(e, ast.Lambda):
        from .activity import free_names  # (activity imports this module)
        return free_names(e, False)
    return set()


def _holder_reads(value) -> set[str] | None:
    """The variables a callable made by value holds and reads when called, like a lazy iterator: a
    `functools.partial` of them, a lambda's defaults (`lambda L=L: sum(L)`). Changed in place before the call,
    reverse mode followed them as they were bound (`partial(sum, L); L[0] = x * x`: 1.0 for 1.4; forward mode
    too where L was made of constants: 0, verify41 W1-W5). None for anything else. (Not a bound method,
    `get = d.get`: the stdlib's `self_get = self.get` in Counter.update is followed right, and refusing it
    refused Counter, statistics and xarray; verify41's W4 forms of it are left open.)"""
    if isinstance(value, ast.Call):
        f = value.func
        if isinstance(f, ast.Name) and f.id == "partial" or isinstance(f, ast.Attribute) and f.attr == "partial":
            return set().union(*(_held_reads(a) for a in (*value.args[1:], *(k.value for k in value.keywords))))
        return None
    if isinstance(value, ast.Lambda):
        defaults = [d for d in (*value.args.defaults, *value.args.kw_defaults) if d is not None]
        return {n.id for d in defaults for n in ast.walk(d) if isinstance(n, ast.Name)} or None
    return None


def _own_stores(st) -> set[str]:
    """The names statement st binds in its own scope (not a comprehension's, lambda's or nested function's)."""
    out, todo = set(), [st]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        if n is not st and isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                                          ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        todo.extend(ast.iter_child_nodes(n))
    return out


_LAZY_GAP_COUNT = itertools.count(1)


def _lazy_gaps(stmts: list):
    """Where a lazy iterator bound to a name in this block (`it = zip(p, q)`, `g = (2 * v for v in p)`, `it =
    map(f, p)`, itertools') is first used after statements that may change what it holds by ways the static
    check (`_late_generator`) cannot see — through an alias, a callee, an object holding it (`grow(p)`, `q = p;
    q.append(v)`): ({index of the binding: stamp variable}, {index of the first use: [(stamp variable, name,
    held variables)]}), or None. The engines draw such an iterator where it is made; Python when it is used, so
    it sees the changes: reverse mode's guard (`__od_lazy_guard__`) refuses where one of the held lists, dicts
    or arrays changed in between (it lost the items added: 3.0 for 10.8, silently; `iter(p)` too, whose
    items' cotangents are mapped onto p where it was made, 1 for 3.6)."""
    after: dict = {}
    before: dict = {}
    handed: dict = {}
    for i, st in enumerate(stmts):
        simple = isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return))
        for call in (n for n in (_outer_nodes(st) if simple else ()) if isinstance(n, ast.Call)
                     and not _draws_at_once(n)):
            for a in (*call.args, *(k.value for k in call.keywords)):  # (`consume(zip(p, q), p)`: made here,
                held = _lazy_held(a, items := set())                     # drawn in the callee)
                if held or items:
                    stamp = f"_od_lz{next(_LAZY_GAP_COUNT)}"
                    after.setdefault(i, (stamp, sorted(held), sorted(items)))
                    handed.setdefault(i, []).append((after[i][0], ast.unparse(a)[:40]))
                    break
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)):
            continue
        held = _lazy_held(st.value, items := set())
        name = st.targets[0].id
        if not (held or items) or name in held | items or i in after:
            continue
        gap = False
        for j in range(i + 1, len(stmts)):  # (each use after a statement that may change something: `first =
            later = stmts[j]                # next(it)`, then `grow(p)`, then `sum(it)`)
            if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(later)):
                if gap:
                    if i not in after:
                        after[i] = (f"_od_lz{next(_LAZY_GAP_COUNT)}", sorted(held), sorted(items))
                    before.setdefault(j, []).append((after[i][0], name))
                if isinstance(later, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)) and any(
                        isinstance(n, ast.Call) and not _draws_at_once(n) and any(
                        isinstance(a, ast.Name) and a.id == name for a in (*n.args, *(k.value for k in n.keywords)))
                       for n in ast.walk(later)):  # (handed to a callee, which may change them, then draw)
                    if i not in after:
                        after[i] = (f"_od_lz{next(_LAZY_GAP_COUNT)}", sorted(held), sorted(items))
                    handed.setdefault(j, []).append((after[i][0], name))
                gap = False
            if any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                   for n in ast.walk(later)):
                break  # (rebound: another iterator)
            gap = gap or any(isinstance(n, (ast.Call, ast.AugAssign, ast.Delete)) or isinstance(
                n, (ast.Attribute, ast.Subscript)) and isinstance(n.ctx, ast.Store) for n in ast.walk(later))
    return (after, before, handed) if after else None


# builtins that draw what they are given at once, or wrap it lazily, changing nothing (a user's function of one of
# these names is taken for the builtin: a guard left out, as before this check)
_AT_ONCE = frozenset({"sum", "list", "tuple", "sorted", "min", "max", "any", "all", "dict", "set", "frozenset", "len",
                      "next", "iter", "enumerate", "zip", "map", "filter", "reversed", "print", "isinstance"})


def _outer_nodes(st):
    """The nodes of statement st outside its comprehensions and lambdas (whose variables are their own: a stamp
    of what a lazy iterator inside one draws from cannot be taken before the statement)."""
    todo = [st]
    while todo:
        n = todo.pop()
        yield n
        for c in ast.iter_child_nodes(n):
            if not isinstance(c, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)):
                todo.append(c)
            elif isinstance(c, ast.GeneratorExp) and isinstance(n, ast.Call):
                yield c  # (a generator expression given to a call: its first iterable is read here)


def _draws_at_once(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id in _AT_ONCE


def _lazy_held(v, items: set | None = None) -> set[str]:
    """The variables whose objects a lazy iterator made by expression v draws from (`zip(p, q)`: p, q; a
    generator expression's first iterable's), or an empty set where v makes none; not the variables of a
    comprehension or lambda inside (bound there, not where v is). Given `items`, those read only through a
    subscript go there (`_held_reads`)."""
    found = set() if items is not None else None
    if isinstance(v, ast.GeneratorExp):
        held = {n.id for n in ast.walk(v.generators[0].iter) if isinstance(n, ast.Name)}
    elif _lazy_call(v, frozenset()):
        held = set().union(*(_held_reads(a, found) for a in (*v.args, *(k.value for k in v.keywords))
                             if not isinstance(a, (ast.Lambda, ast.GeneratorExp))))
        if isinstance(v.func, ast.Attribute):
            held |= _held_reads(v.func.value, found) - {"itertools"}
    else:
        return set()
    inner = {n.id for c in ast.walk(v) if isinstance(c, ast.comprehension) for n in ast.walk(c.target)
             if isinstance(n, ast.Name)}
    inner |= {a.arg for c in ast.walk(v) if isinstance(c, ast.Lambda) for a in ast.walk(c.args) if isinstance(a, ast.arg)}
    inner |= {n.id for n in ast.walk(v) if isinstance(n, ast.NamedExpr) for n in [n.target]}
    if found:
        items |= found - held - inner
    return held - inner


def _late_generator(stmts: list, generators=frozenset()) -> tuple[str, str, ast.AST] | None:
    """(iterator variable, variable, node) for a generator expression or a lazy iterator bound to a name
    (`g = (c * w for w in ws)`, `it = iter(p)`, `c = itertools.chain(p, q)`, `g = gen(p)` of a generator
    function defined here: `generators`) whose reads are rebound or changed in place (`c = 3 * t`,
    `ws.append(x)`, `p[1] = v`) before a later statement of the same block uses it: Python's iterator reads
    them when it runs, the engines' (reverse mode's, drawn where it is made) read them before (another value:
    3 for 9). Also after a first use (`first = next(it)`, then `p[1] = v`, then `sum(it)`: the gradient lost
    the change), and in a compound statement that uses it and changes them (a loop over it). None if none."""
    from .activity import changed_in_place  # (activity imports this module)
    for i, st in enumerate(stmts):
        held = _holder_reads(st.value) if isinstance(st, ast.Assign) and len(st.targets) == 1 else None
        if not (isinstance(st, ast.Assign) and len(st.targets) == 1
                and (isinstance(st.value, ast.GeneratorExp) or _lazy_call(st.value, generators) or held)):
            continue
        target = st.targets[0]
        if isinstance(target, ast.Name):
            names = {target.id}
        elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts) and (
                _lazy_call(st.value, generators)):  # (`a, b = itertools.tee(p)`)
            names = {e.id for e in target.elts}
        else:
            continue
        name = min(names)
        # `late`: the variables read by name when the iterator runs (a generator expression's body, a lambda's,
        # a generator function's globals and cells), whose rebinding it sees; the others' objects are taken
        # where it is made (`iter(value)`, a generator expression's first iterable), so only their changes
        # in place count, and a name rebound afterwards no longer names what it holds (skyfield's
        # `components = iter(value); value = next(components)`: refused, though the iterator reads the tuple)
        if held:
            reads = set(held)
            late = reads
        elif isinstance(st.value, ast.GeneratorExp):
            late = _comprehension_reads(st.value)
            reads = late | {n.id for n in ast.walk(st.value.generators[0].iter) if isinstance(n, ast.Name)}
        else:  # (`it = zip(ws, vs)`, `enumerate`, `reversed`, `map`, `filter`, `iter`: drawn where made, too)
            given = (*st.value.args, *(k.value for k in st.value.keywords))
            reads = set().union(*(_held_reads(a) for a in given))
            late = set().union(*(_held_reads(a) for a in given if isinstance(a, (ast.Lambda, ast.GeneratorExp))))
            if isinstance(st.value.func, ast.Attribute):
                reads |= _held_reads(st.value.func.value) - {"itertools"}
            elif isinstance(generators, dict) and st.value.func.id in generators:
                reads |= generators[st.value.func.id]  # (what the generator reads from outside: globals, cells)
                late = late | generators[st.value.func.id]
        reads -= names
        hit = None
        for later in stmts[i + 1:]:
            uses = any(isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) for n in ast.walk(later))
            if uses and hit is not None:
                return hit
            stored = _own_stores(later)
            if names <= stored and not uses:
                break  # (rebound: the iterator is no longer read)
            changed = sorted(((stored & late) | changed_in_place(ast.Module(body=[later], type_ignores=[]))) & reads)
            if changed and hit is None:
                hit = (name, changed[0], later)
                if uses and isinstance(later, (ast.For, ast.While, ast.With, ast.If, ast.Try)):
                    return hit
            if isinstance(later, ast.Assign) and all(isinstance(t, ast.Name) for t in later.targets):
                reads -= {t.id for t in later.targets} - late  # (rebound here, whatever runs: its old object held)
    return None


_KEEPERS = frozenset({"append", "insert", "add", "appendleft", "setdefault", "put"})  # (`extend` drains it)


def _kept_generator(fdef) -> tuple[str, str, ast.AST] | None:
    """(description, variable, node) for a generator expression made in a loop or comprehension, kept past
    the iteration (appended, put in a display or a container's item, a comprehension's element) and reading
    a variable the iteration rebinds: every one of Python's generators reads the variable's last value
    when it runs (late binding); the engines', drawn where it is made, read the value of its own iteration
    (`gens.append(c * w for w in ws)` in `for c in cs`, `[(c * w for w in ws) for c in cs]`: 9 for 12,
    the value too); None if there is none."""
    parents: dict = {}
    loops = []
    stack = [fdef]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            parents[child] = node
            stack.append(child)
        if isinstance(node, (ast.For, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            loops.append(node)
    for loop in loops:
        if isinstance(loop, (ast.For, ast.While)):
            rebound = {n.id for n in ast.walk(loop) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            inner = [g for s in loop.body for g in ast.walk(s) if isinstance(g, ast.GeneratorExp) and g in parents]
        else:
            rebound = {n.id for c in loop.generators for n in ast.walk(c.target) if isinstance(n, ast.Name)}
            elts = [loop.key, loop.value] if isinstance(loop, ast.DictComp) else [loop.elt]
            inner = [g for e in elts for g in ast.walk(e) if isinstance(g, ast.GeneratorExp) and g in parents]
        for g in inner:
            hit = sorted(_late_reads(g) & rebound)
            if hit and _kept_past(g, parents, loop):
                return "made in a loop", hit[0], g
    return None


def _kept_past(g, parents: dict, loop) -> bool:
    """The generator expression g outlives its iteration of `loop` (see `_kept_generator`)."""
    p = parents.get(g)
    if p is loop:  # (a comprehension's element: the list holds every iteration's generator)
        return True
    if isinstance(p, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        return True
    if isinstance(p, ast.Call) and g in p.args:
        return isinstance(p.func, ast.Attribute) and p.func.attr in _KEEPERS
    if isinstance(p, ast.Assign) and g is p.value:
        if any(isinstance(t, (ast.Tuple, ast.List, ast.Starred)) for t in p.targets):
            return False  # (`a, b = (float(v) for v in vals)`: drained by the unpacking, pygeomag's reader)
        if any(not isinstance(t, ast.Name) for t in p.targets):
            return True  # (`d[k] = (... for ...)`, `self.g = ...`)
        names = {t.id for t in p.targets}
        body = loop.body if isinstance(loop, (ast.For, ast.While)) else []
        for n in (n for s in body for n in ast.walk(s)):
            if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load):
                q = parents.get(n)
                if (isinstance(q, (ast.List, ast.Tuple, ast.Set, ast.Dict))
                        or isinstance(q, ast.Call) and n in q.args and isinstance(q.func, ast.Attribute)
                        and q.func.attr in _KEEPERS
                        or isinstance(q, ast.Assign) and any(not isinstance(t, ast.Name) for t in q.targets)):
                    return True
    return False


def _late_refused(late) -> Unsupported:
    if late[0] == "made in a loop":
        return Unsupported(f"generator expression made in a loop and kept past its iteration, reading `{late[1]}`, "
                           f"which the loop rebinds: Python's generators all read `{late[1]}`'s last value when "
                           f"they run, the engines' draw each where it is made (build a list, or bind the value "
                           f"by a default argument of a function)", late[2])
    return Unsupported(f"lazy iterator `{late[0]}` reading `{late[1]}`, which is assigned or changed before "
                       f"`{late[0]}` is used: it is drawn where it is made, so it would read `{late[1]}` before the "
                       f"change (make it where it is used, or build a list)", late[2])


def _jump_out_of(stmts: list) -> str | None:
    """'return', 'break' or 'continue' leaving a `finally` block's statements (not a loop or function inside
    it), or None."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            return "return"
        if isinstance(node, (ast.Break, ast.Continue)):
            return "break" if isinstance(node, ast.Break) else "continue"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):  # (its own break and continue stay inside)
            stack.extend(n for n in ast.walk(node) if isinstance(n, ast.Return))
            continue
        stack.extend(ast.iter_child_nodes(node))
    return None


def _reads_frame(call: ast.Call) -> bool:
    """`locals()`, `vars()`, `eval(s)`, `exec(s)`, `numexpr.evaluate(s)`: the call reads the caller's local
    variables by name."""
    f = call.func
    if (isinstance(f, ast.Attribute) and f.attr == "evaluate" and isinstance(f.value, ast.Name)
            and f.value.id in ("numexpr", "ne") and len(call.args) < 2
            and not any(k.arg in ("local_dict", "global_dict") for k in call.keywords)):
        return True  # (its variables from the frame: a transformed function's are other ones, plain, 0 silently)
    if not isinstance(f, ast.Name):
        return False
    if f.id == "locals" or (f.id == "vars" and not call.args):
        return True
    return f.id in ("eval", "exec") and len(call.args) < 2 and not any(k.arg in ("globals", "locals")
                                                                        for k in call.keywords)
