"""Bisection loops: a bracket narrowed by the outcome of a differentiated test.

    while hi - lo > tol:
        mid = (lo + hi) / 2
        if g(mid, x) > target:   # the test depends on the input x
            hi = mid
        else:
            lo = mid

Its result is a fixed mix of the bracket's starting ends (the tests only choose which), so the derivative
every mode would compute is that mix's (or zero, for constant ends), not the root's (psychrolib's
`GetTWetBulbFromHumRatio`: 0.958 for 0.660); a golden-section search the same (zero for the minimiser's 1).
Found statically: an `if` in a loop whose test reads a differentiated variable and whose two branches
give two different variables of the bracket, both read in the loop, values computed from those two alone
(`mid = (lo + hi) / 2`, `d = a + (b - a) * invphi`). A Newton step kept in a bracket (`rho = rho + drho`,
bisecting only when it leaves it: chemicals' iapws95_rho) is not one: its iterate follows the function.
Every mode refuses it; the fix is a derivative of the root by the implicit function theorem
(`contexts.custom_adjoint`) or a method whose iterate follows the function's values (Newton's, secant).
So is an end moved by a half-width the loop halves (`dm *= 0.5; xm = a + dm; if f(xm) * fa >= 0: a = xm`:
scipy's bisect as fluids ports it). Not recognised: brackets moved by tuple assignments (`lo, hi = mid, hi`)
or conditional expressions, and a secant or Newton iteration that bisects its bracket when a step leaves
it where every step leaves it (fluids' secant with `bisection=True` on a decreasing function).
"""
from __future__ import annotations

import ast
import functools
import types
import weakref

from overdub.errors import OverdubError, SourceUnavailable
from overdub.passes import get_source, method_function

from .lower import TEMP_PREFIX, all_nodes

__all__ = ["bisection_step", "BISECTION", "BISECTION_FIX", "BisectionRefused", "refuse_bisection", "bisects",
           "check_entry", "held_in_callables"]

BISECTION = ("bisection: a loop narrowing a bracket by the outcome of a differentiated test (its result is a "
             "fixed mix of the bracket's starting ends, whose derivative is not the root's or minimiser's)")

BISECTION_FIX = ("give the root-finding function its derivative by the implicit function theorem "
                 "(`@contexts.custom_adjoint`, dy/dx = -(dg/dx)/(dg/dy) at the root), or find the root with "
                 "an iteration that follows the function's values (Newton's, secant)")

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _own(nodes):
    """The nodes under `nodes` outside nested functions and classes."""
    todo = list(nodes)
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, _DEFS):
            todo.extend(ast.iter_child_nodes(n))


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _own_statements(stmts):
    """The statements under `stmts` (in bodies, branches, handlers and cases) outside nested functions
    and classes: their expressions are not walked (a long function's loops are found at once)."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        yield n
        if isinstance(n, _DEFS):
            continue
        for name in _BLOCKS:
            block = getattr(n, name, None)
            if block:
                todo.extend(block)


def _loads(node) -> set[str]:
    return {n.id for n in all_nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _given(branch: list[ast.stmt]) -> dict[str, ast.expr]:
    """name -> value of each `name = value` among a branch's own statements, where the name is the user's
    variable (not a temporary of the lowered form) and the value reads one."""
    out = {}
    for s in branch:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and not s.targets[0].id.startswith(TEMP_PREFIX) and _loads(s.value):
            out[s.targets[0].id] = s.value
    return out


_OPAQUE = "<opaque>"  # what a variable bound otherwise than by `name = value` reads (unknown: not the bracket)


def _assigned(fdef) -> dict[str, set[str]]:
    """name -> the variables its assignments in fdef read (`a, b = x, y` pairwise; a binding of any other
    form, or a tuple unpacked from one value, reads `_OPAQUE`)."""
    values: dict[str, set[str]] = {}

    def bind(target, reads):
        if isinstance(target, ast.Name):
            values.setdefault(target.id, set()).update(reads)
        else:
            for t in all_nodes(target):
                if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store):
                    values.setdefault(t.id, set()).add(_OPAQUE)

    for n in _own(fdef.body):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                if isinstance(t, (ast.Tuple, ast.List)) and isinstance(n.value, (ast.Tuple, ast.List)) \
                        and len(t.elts) == len(n.value.elts) and not any(isinstance(e, ast.Starred) for e in t.elts):
                    for te, ve in zip(t.elts, n.value.elts):
                        bind(te, _loads(ve))
                else:
                    bind(t, _loads(n.value))
        elif isinstance(n, ast.AugAssign):
            bind(n.target, _loads(n.value) | _loads(n.target) | {getattr(n.target, "id", _OPAQUE)})
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.NamedExpr, ast.AnnAssign)):
            targets = [n.target] if isinstance(n, (ast.For, ast.AsyncFor, ast.NamedExpr, ast.AnnAssign)) else \
                [i.optional_vars for i in n.items if i.optional_vars is not None]
            for t in targets:
                for m in all_nodes(t):
                    if isinstance(m, ast.Name):
                        values.setdefault(m.id, set()).add(_OPAQUE)
    return values


def _test_reads(test, values: dict[str, set[str]]) -> set[str]:
    """The variables a test reads, through the names it reads back to what was assigned to them (the
    lowered form's `_od_t5 = Wstar > bound; if _od_t5:`: a comparison's result is not itself active)."""
    out, todo = set(), list(_loads(test))
    while todo:
        name = todo.pop()
        if name not in out:
            out.add(name)
            todo.extend(values.get(name, ()))
    return out


def bisection_step(fdef: ast.AST, active) -> ast.If | None:
    """The first `if` of fdef (not of its nested functions) that narrows a bracket by a test reading a
    variable in `active` (None: any variable), or None."""
    loops = [n for n in _own_statements(fdef.body) if isinstance(n, (ast.While, ast.For))]
    candidates = [(loop, [n for n in _own_statements(loop.body) if isinstance(n, ast.If) and n.orelse])
                  for loop in loops]
    vectorised = [(loop, ups) for loop in loops if len(ups := _masked_updates(loop)) > 1]
    halving = [(loop, ifs) for loop in loops if _halved(loop)
               and (ifs := [n for n in _own_statements(loop.body) if isinstance(n, ast.If)])]
    if not any(ifs for _, ifs in candidates) and not vectorised and not halving:
        return None  # (no `if`/`else` in a loop: nothing more to walk — a long straight function's case)
    values = _assigned(fdef)
    local = set(values) | {a.arg for a in all_nodes(fdef.args) if isinstance(a, ast.arg)} | {_OPAQUE}
    for loop, ups in vectorised:  # (a bracket narrowed elementwise: `hi = np.where(c, mid, hi)`, masks)
        read_in_loop = set().union(*(_loads(s) for s in loop.body), _loads(getattr(loop, "test", ast.Pass())))
        for ta, value_a, test_a, stmt in ups:
            for tb, value_b, test_b, _ in ups:
                if ta != tb and ta in read_in_loop and tb in read_in_loop \
                        and (active is None or (_test_reads(test_a, values) | _test_reads(test_b, values)) & active) \
                        and _made_of_bracket(value_a, {ta, tb}, values, local) \
                        and _made_of_bracket(value_b, {ta, tb}, values, local):
                    return stmt
    for loop, ifs in halving:
        read_in_loop = set().union(*(_loads(s) for s in loop.body), _loads(getattr(loop, "test", ast.Pass())))
        for n in ifs:
            if active is not None and not _test_reads(n.test, values) & active or active is None and not _loads(n.test):
                continue
            if _steps_by_halves(n, loop, read_in_loop):
                return n
    for loop, ifs in candidates:
        if not ifs:
            continue
        read_in_loop = set().union(*(_loads(s) for s in loop.body), _loads(getattr(loop, "test", ast.Pass())))
        for n in ifs:
            if active is not None and not _test_reads(n.test, values) & active:
                continue
            if active is None and not _loads(n.test):
                continue
            a, b = _given(n.body), _given(n.orelse)
            for ta, value_a in a.items():
                for tb, value_b in b.items():
                    if ta != tb and ta in read_in_loop and tb in read_in_loop \
                            and _made_of_bracket(value_a, {ta, tb}, values, local) \
                            and _made_of_bracket(value_b, {ta, tb}, values, local):
                        return n
    return None


def _loop_stores(loop) -> dict[str, list]:
    """name -> the values `name = value` stores in the loop's own statements (a name bound otherwise: None)."""
    stores: dict[str, list] = {}
    for s in _own_statements(loop.body):
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            stores.setdefault(s.targets[0].id, []).append(s.value)
        elif isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):  # (`dm *= 0.5`, unlowered)
            value = ast.BinOp(left=ast.Name(id=s.target.id, ctx=ast.Load()), op=s.op, right=s.value)
            stores.setdefault(s.target.id, []).append(value)
        elif isinstance(s, (ast.Assign, ast.AugAssign, ast.For, ast.AnnAssign)):
            for t in (s.targets if isinstance(s, ast.Assign) else [s.target]):
                for m in all_nodes(t):
                    if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Store):
                        stores.setdefault(m.id, []).append(None)
    return stores


def _halved(loop) -> set[str]:
    """The variables the loop only scales by constants (`dm *= 0.5`, `h = h / 2`): a bisection's half-width."""
    out = set()
    for name, vals in _loop_stores(loop).items():
        if name.startswith(TEMP_PREFIX):
            continue
        if all(isinstance(v, ast.BinOp) and isinstance(v.op, (ast.Mult, ast.Div))
               and isinstance(v.left, ast.Name) and v.left.id == name and isinstance(v.right, ast.Constant)
               or isinstance(v, ast.BinOp) and isinstance(v.op, ast.Mult) and isinstance(v.right, ast.Name)
               and v.right.id == name and isinstance(v.left, ast.Constant) for v in vals):
            out.add(name)
    return out


def _steps_by_halves(n: ast.If, loop, read_in_loop: set[str]) -> bool:
    """The `if` moves an end of a bracket by a half-width the loop halves: `dm *= 0.5; xm = a + dm;
    if f(xm) * fa >= 0: a = xm` (scipy's bisect, ported to Python by fluids and others), the value stored
    made of that end and the half-widths alone. (A step size halved where an error test fails, `if err >
    tol: h = h * 0.5`, stores the half-width itself: not an end moved by one.)"""
    stores, steps = _loop_stores(loop), _halved(loop)
    for branch in (n.body, n.orelse):
        for end, value in _given(branch).items():
            if end not in read_in_loop or end in steps:
                continue
            made, todo, seen = set(), list(_loads(value)), set()
            while todo:
                name = todo.pop()
                if name in seen:
                    continue
                seen.add(name)
                vals = stores.get(name)
                if name != end and name not in steps and vals and all(v is not None for v in vals):
                    for v in vals:  # (a temporary, or `xm = a + dm` stored in the loop: what it is made of)
                        todo.extend(_loads(v))
                else:
                    made.add(name)
            if made & steps and made <= {end} | steps:
                return True
    return False


def _masked_updates(loop) -> list:
    """(name, value, test, statement) of each elementwise choice in the loop's own statements between a
    variable's value and another by a test: `v = np.where(c, m, v)` (or `np.where(c, v, m)`), `v[c] = m[c]`,
    `np.copyto(v, m, where=c)` — a vectorised bisection's bracket updates."""
    out = []
    temps = {s.targets[0].id: s.value for s in _own_statements(loop.body)
             if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
             and s.targets[0].id.startswith(TEMP_PREFIX)}
    for s in _own_statements(loop.body):
        if isinstance(s, ast.Assign) and len(s.targets) == 1:
            t, v = s.targets[0], s.value
            if isinstance(v, ast.Name) and v.id in temps and isinstance(temps[v.id], ast.Subscript):
                v = temps[v.id]  # (the lowered form's `_od_t3 = x[high]; upper[high] = _od_t3`)
            if isinstance(t, ast.Name) and isinstance(v, ast.Call) and _called(v, "where") and len(v.args) == 3:
                c, p, q = v.args
                if isinstance(q, ast.Name) and q.id == t.id:
                    out.append((t.id, p, c, s))
                elif isinstance(p, ast.Name) and p.id == t.id:
                    out.append((t.id, q, c, s))
            elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                m = v.value if isinstance(v, ast.Subscript) else v
                if isinstance(m, ast.Name) and m.id != t.value.id:
                    out.append((t.value.id, m, t.slice, s))
        if isinstance(s, (ast.Expr, ast.Assign)) and isinstance(s.value, ast.Call) and _called(s.value, "copyto"):
            v = s.value
            where = next((k.value for k in v.keywords if k.arg == "where"), None)
            if where is not None and len(v.args) >= 2 and isinstance(v.args[0], ast.Name):
                out.append((v.args[0].id, v.args[1], where, s))
    return out


def _called(call: ast.Call, name: str) -> bool:
    f = call.func
    return (isinstance(f, ast.Attribute) and f.attr == name) or (isinstance(f, ast.Name) and f.id == name)


def _made_of_bracket(value, ends: set[str], values: dict[str, set[str]], local: set[str]) -> bool:
    """Whether the value given to the bracket's ends is computed from the ends alone (`mid = (lo + hi) / 2`,
    in every assignment of it): a Newton step kept inside a bracket (`rho = rho + drho`, bisecting only
    when it leaves: chemicals' iapws95_rho) is not a bisection, its iterate follows the function."""
    start = _loads(value)
    if isinstance(value, ast.Name) and value.id not in ends:
        start = set(values.get(value.id, {_OPAQUE}))
    seen, todo = set(), list(start)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name.startswith(TEMP_PREFIX):
            todo.extend(values.get(name, ()))
    made_of = {m for m in seen if not m.startswith(TEMP_PREFIX)} & local
    return bool(made_of) and made_of <= ends  # (constants alone are not a bracket's update)


class BisectionRefused(OverdubError):
    """Forward mode or sparsity detection met a bisection on perturbed or traced values (reverse mode
    refuses it as a function it cannot transform, `UnsupportedFunction`)."""


def refuse_bisection(fn, step: ast.If, mode: str = "forward mode") -> BisectionRefused:
    code = fn.__code__
    what = "find the sparsity of" if mode == "sparsity detection" else "differentiate"
    return BisectionRefused(f"{mode} cannot {what} {code.co_qualname}: it uses a {BISECTION}",
                            where=f"{code.co_filename}:{step.lineno}", fix=BISECTION_FIX)


def check_entry(f, mode: str = "forward mode") -> None:
    """Refuse the function an engine is given when it bisects (functions it calls are checked as they are
    called on perturbed values)."""
    fn = method_function(f)
    step = bisects(fn)
    if step is not None:
        raise refuse_bisection(fn, step, mode)


# code object -> the `if` narrowing a bracket in its source (whatever it reads), or None; weakly (code made
# by exec, lambdas of a module reloaded: their entries go with them)
_BISECTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def bisects(fn) -> ast.If | None:
    """The bracket-narrowing `if` of a Python function's own source (any test), or None (no source: None);
    once per code object. For forward mode's duals, which know no variable's activity: the caller asks
    only when the function is called with perturbed values."""
    if type(fn) is not types.FunctionType:
        return None
    code = fn.__code__
    try:
        return _BISECTS[code]
    except KeyError:
        pass
    try:
        fdef = get_source(code, fn.__globals__).as_function_def()
        found = bisection_step(fdef, None)
    except (SourceUnavailable, SyntaxError, OSError, TypeError):
        found = None
    _BISECTS[code] = found
    return found


def held_in_callables(values, test) -> bool:
    """test(v) for a value captured by a function among `values` (its cells and defaults, a partial's
    function and arguments, a bound method's object), or held by one of them (`holds`): a callback's closure
    carrying the input into a bisection of a library (scipy's golden-section search on `lambda t: (t - x)**2`)."""
    from ..rules.containers import holds
    todo, seen = list(values), set()
    while todo:
        v = todo.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if holds(v, test):
            return True
        if isinstance(v, types.FunctionType):
            cells = []
            for c in v.__closure__ or ():
                try:
                    cells.append(c.cell_contents)
                except ValueError:
                    pass
            todo += [*cells, *(v.__defaults__ or ()), *(v.__kwdefaults__ or {}).values()]
        elif isinstance(v, types.MethodType):
            todo += [v.__func__, v.__self__]
        elif isinstance(v, functools.partial):
            todo += [v.func, *v.args, *v.keywords.values()]
        elif isinstance(v, (list, tuple)):
            todo += list(v)
        elif isinstance(v, dict):
            todo += list(v.values())
    return False
