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
import inspect
import types
import weakref

from overdub.errors import OverdubError, SourceUnavailable
from overdub.passes import get_source, method_function

from ..rules.implicit import NAME as IMPLICIT_ROOT, ROOTS
from .lower import TEMP_PREFIX, all_nodes

__all__ = ["bisection_step", "BISECTION", "BISECTION_FIX", "STEPPING", "STEPPING_FIX", "BisectionRefused",
           "refuse_bisection", "refusal_text", "steps_on_free", "bisects", "check_entry", "held_in_callables", "stepping_step",
           "is_stepping"]

BISECTION = ("bisection: a loop narrowing a bracket by the outcome of a differentiated test (its result is a "
             "fixed mix of the bracket's starting ends, whose derivative is not the root's or minimiser's)")

BISECTION_FIX = ("give the root-finding function its derivative by the implicit function theorem "
                 "(`@contexts.custom_adjoint`, dy/dx = -(dg/dx)/(dg/dy) at the root), or find the root with "
                 "an iteration that follows the function's values (Newton's, secant)")

STEPPING = ("stepping search: a loop moving a variable by a constant step until a differentiated test changes "
            "(its result is the first point of a grid past the test's crossing, a staircase whose derivative is "
            "zero, not the crossing's)")

STEPPING_FIX = ("find the crossing with a root finder (`scipy.optimize.brentq`, which overdub differentiates as "
                "a root), or give the function its derivative by the implicit function theorem "
                "(`@contexts.custom_adjoint`); a step small against the result (at most 1e-3 of it), the loop's "
                "values computed afresh from the stepped variable each pass, is differentiated as the crossing")


def refusal_text(step) -> tuple[str, str]:
    """(what the loop is, the fix) for the statement `bisection_step` named: a bisection's `if`, or a stepping
    search's step."""
    return (STEPPING, STEPPING_FIX) if is_stepping(step) else (BISECTION, BISECTION_FIX)

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
    if branch and isinstance(branch[-1], ast.If):
        # an `elif` chain ending the branch: `elif v > t: hi = mid` / `elif v < t: lo = mid` without an
        # `else` (mibian's implied volatility: 0 in every mode where it was not seen)
        for part in (branch[-1].body, branch[-1].orelse):
            for name, value in _given(part).items():
                out.setdefault(name, value)
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


def bisection_step(fdef: ast.AST, active, skip=frozenset()) -> ast.stmt | None:
    """The first `if` of fdef (not of its nested functions) that narrows a bracket by a test reading a
    variable in `active` (None: any variable), or a stepping search's step (not those at the lines `skip`), or
    None."""
    loops = [n for n in _own_statements(fdef.body) if isinstance(n, (ast.While, ast.For))]
    if not loops:
        return None
    fixed = _fixed_tests(fdef)  # (loops `lowered.implicit` stated as the root they find: not refused)
    if fixed:
        loops = [lp for lp in loops if not _restated(lp, fixed)]
    found = selection_step(fdef, active, fixed) or stepping_step(fdef, loops, active, fixed | set(skip))
    if found is not None:
        return found
    candidates = [(loop, [n for n in _own_statements(loop.body) if isinstance(n, ast.If) and n.orelse])
                  for loop in loops]
    vectorised = [(loop, ups) for loop in loops if len(ups := _masked_updates(loop)) > 1]
    halving = [(loop, ifs) for loop in loops if _halved(loop)
               and (ifs := [n for n in _own_statements(loop.body) if isinstance(n, ast.If)])]
    if not any(ifs for _, ifs in candidates) and not vectorised and not halving:
        return None  # (no `if`/`else` in a loop: nothing more to walk — a long straight function's case)
    values = _assigned(fdef)
    local = set(values) | {a.arg for a in all_nodes(fdef.args) if isinstance(a, ast.arg)} | {_OPAQUE}
    binds = list(_bindings(fdef.body))
    _unpacked(binds)
    integers = _integer_names(binds)  # (a bracket of indices, `lo, hi = 0, len(xs) - 1`: a table's search,
    # its result an index that selects constants, as `bisect.bisect` does; interpolation after it is smooth)
    temps = {s.targets[0].id: s.value for s in _own_statements(fdef.body)
             if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
             and s.targets[0].id.startswith(TEMP_PREFIX)}
    for loop, ups in vectorised:  # (a bracket narrowed elementwise: `hi = np.where(c, mid, hi)`, masks)
        read_in_loop = set().union(*(_loads(s) for s in loop.body), _loads(getattr(loop, "test", ast.Pass())))
        for ta, value_a, test_a, stmt in ups:
            for tb, value_b, test_b, _ in ups:
                if _identity_test(test_a, temps) or _identity_test(test_b, temps):
                    continue
                if ta != tb and ta in read_in_loop and tb in read_in_loop \
                        and (active is None or (_test_reads(test_a, values) | _test_reads(test_b, values)) & active) \
                        and _made_of_bracket(value_a, {ta, tb}, values, local) \
                        and _made_of_bracket(value_b, {ta, tb}, values, local) \
                        and not _round_trip(ta, value_a, test_a, tb, value_b, test_b, values, local):
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
            if _finiteness_test(n.test, temps) or _identity_test(n.test, temps):
                continue
            if active is None and not _loads(n.test):
                continue
            if _test_reads(n.test, values) - {_OPAQUE} <= integers:  # (`if t == 0:` of a range's counter: pykalman's
                continue                                  # filter, whose first step differs; no bracket)
            a, b = _given(n.body), _given(n.orelse)
            for ta, value_a in a.items():
                for tb, value_b in b.items():
                    if ta != tb and ta in read_in_loop and tb in read_in_loop \
                            and not ({ta, tb} <= integers and _indexing_only(loop, integers)) \
                            and _made_of_bracket(value_a, {ta, tb}, values, local) \
                            and _made_of_bracket(value_b, {ta, tb}, values, local) \
                            and _between(ta, value_a, tb, value_b, values, local):
                        return n
    return None


def _fixed_tests(fdef) -> set[int]:
    """The lines of the tests whose loops `lowered.implicit` stated as roots (read from the calls it wrote,
    which a lowered tree keeps with their constants)."""
    out = set()
    for n in all_nodes(fdef):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == IMPLICIT_ROOT \
                and len(n.args) > 1 and isinstance(n.args[1], ast.Constant) \
                and (root := ROOTS.get(n.args[1].value)) is not None:
            out.add(root.line)
    return out


def _restated(loop, fixed: set[int]) -> bool:
    """The loop's test (a stepping search's step) is one `lowered.implicit` stated as a root (its line among
    `fixed`)."""
    return any(isinstance(n, (ast.If, ast.Assign, ast.AugAssign)) and n.lineno in fixed for n in loop.body)


# -- stepping searches ----------------------------------------------------------------------------------
#     while q_trial < q:          # (or `while True:` / `for _ in range(n):` ending `if q_trial >= q: break`)
#         d += 0.00001
#         q_trial = flow(d, n, s)
# channelflowlib's normal depth: d is the first point of a grid past the crossing of flow(d) = q, a staircase in
# q, n and s whose derivative every mode gave as zero (and the loop's other values their partials at fixed d).

def step_of(s, constants=frozenset()) -> tuple[str, ast.expr, bool] | None:
    """(name, step, up) of `d += c`, `d -= c`, `d = d + c`, `d = d - c` (up: `+`), c a float literal that is not
    a whole number, or a name among `constants` (loop-invariant, not differentiated); else None."""
    if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and isinstance(s.op, (ast.Add, ast.Sub)):
        name, op, c = s.target.id, s.op, s.value
    elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
            and isinstance(s.value, ast.BinOp) and isinstance(s.value.op, (ast.Add, ast.Sub)) \
            and isinstance(s.value.left, ast.Name) and s.value.left.id == s.targets[0].id:
        name, op, c = s.targets[0].id, s.value.op, s.value.right
    else:
        return None
    if isinstance(c, ast.Name) and c.id in constants and c.id != name:
        return name, c, isinstance(op, ast.Add)
    if not (isinstance(c, ast.Constant) and type(c.value) is float and c.value != 0 and not c.value.is_integer()):
        return None  # (a whole step counts passes, `counter += 1.`: pvlib's Newton loops, like `k += 1`)
    return name, c, isinstance(op, ast.Add)


def _step_names(fdef, active) -> set[str]:
    """Names a step may be: bound in fdef only to float literals that are not whole numbers (`h = 1e-5`), or
    read from outside it and not differentiated (a module's `STEP`)."""
    bound: dict[str, bool] = {}
    params = {a.arg for a in all_nodes(fdef.args) if isinstance(a, ast.arg)}
    for n in _own(fdef.body):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            bound.setdefault(n.id, False)
    for n in _own_statements(fdef.body):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and isinstance(n.value, ast.Constant) and type(n.value.value) is float \
                and not n.value.value.is_integer() and bound.get(n.targets[0].id) is not None:
            bound[n.targets[0].id] = True
    literal = {k for k, ok in bound.items() if ok and sum(
        1 for m in _own(fdef.body) if isinstance(m, ast.Name) and m.id == k and isinstance(m.ctx, ast.Store)) == 1}
    outside = {n.id for n in _own(fdef.body) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} \
        - set(bound) - params
    return literal | (outside - set(active or ()))


def temps_of(fdef) -> dict:
    """The lowered form's temporaries of fdef bound once: name -> value (`_od_t3 = d < q`)."""
    out, twice = {}, set()
    for n in _own_statements(fdef.body):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                and n.targets[0].id.startswith(TEMP_PREFIX):
            k = n.targets[0].id
            if k in out:
                twice.add(k)
            else:
                out[k] = n.value
    return {k: v for k, v in out.items() if k not in twice}


def _seen(node, temps, depth: int = 0):
    """node with the temporaries it reads replaced by their values (a copy where one was)."""
    if depth > 12:
        return node
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in temps:
        return _seen(temps[node.id], temps, depth + 1)
    if isinstance(node, ast.AST):
        fields = {}
        changed = False
        for f, v in ast.iter_fields(node):
            if isinstance(v, list):
                new = [_seen(e, temps, depth + 1) for e in v]
                changed |= any(a is not b for a, b in zip(new, v))
                fields[f] = new
            elif isinstance(v, ast.AST):
                fields[f] = _seen(v, temps, depth + 1)
                changed |= fields[f] is not v
            else:
                fields[f] = v
        if changed:
            return type(node)(**fields)
    return node


def _is_step(node, name: str, constants) -> bool:
    """node is `name + c` / `name - c` (c a float literal not whole, or a constant name)."""
    return step_of(ast.Assign(targets=[ast.Name(name, ast.Store())], value=node), constants) is not None


def _masked_step(s, name: str, temps, constants):
    """The test choosing where s steps `name` by a constant, elementwise (`d[m] += c`, `d = np.where(m, d + c,
    d)`, `d += c * m`), True for a plain step, or None."""
    if step_of(s, constants) is not None:
        return True
    if isinstance(s, ast.AugAssign):
        target, value = s.target, ast.BinOp(left=_load_of(s.target), op=s.op, right=s.value)
    elif isinstance(s, ast.Assign) and len(s.targets) == 1:
        target, value = s.targets[0], s.value
    else:
        return None
    value = _seen(value, temps)
    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name:
        # `d[m] = d[m] + c`
        if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub)) \
                and isinstance(value.left, ast.Subscript) and isinstance(value.left.value, ast.Name) \
                and value.left.value.id == name and _is_step(
                    ast.BinOp(left=ast.Name(name, ast.Load()), op=value.op, right=value.right), name, constants):
            return _seen(target.slice, temps)
        return None
    if not (isinstance(target, ast.Name) and target.id == name):
        return None
    if isinstance(value, ast.Call) and _call_name(value) == "where" and len(value.args) == 3:
        test, a, b = value.args
        same = lambda n: isinstance(n, ast.Name) and n.id == name  # noqa: E731
        if same(b) and _is_step(a, name, constants) or same(a) and _is_step(b, name, constants):
            return test
        return None
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub)) \
            and isinstance(value.left, ast.Name) and value.left.id == name and isinstance(value.right, ast.BinOp) \
            and isinstance(value.right.op, ast.Mult):
        for c, m in ((value.right.left, value.right.right), (value.right.right, value.right.left)):
            if _is_step(ast.BinOp(left=ast.Name(name, ast.Load()), op=value.op, right=c), name, constants) \
                    and _outcome(m, lambda n: _seen(n, temps)):
                return m
    return None


_GRIDS = frozenset({"arange", "linspace", "geomspace", "logspace"})


def _literal(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) or isinstance(
        node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _literal(node.operand)


def _literal_grid(node, temps, names) -> bool:
    """node is `np.arange(...)`/`np.linspace(...)` of literals (through a temporary or a name bound once to one)."""
    for _ in range(3):
        if isinstance(node, ast.Name):
            node = temps.get(node.id, names.get(node.id))
    return isinstance(node, ast.Call) and _call_name(node) in _GRIDS and bool(node.args) \
        and all(_literal(a) for a in node.args) and all(_literal(k.value) for k in node.keywords)


def _counted(s, name: str) -> bool:
    """s is `name += k` / `name = name + k` with k an integer literal."""
    if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and s.target.id == name:
        return isinstance(s.op, (ast.Add, ast.Sub)) and isinstance(s.value, ast.Constant) and type(s.value.value) is int
    return isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
        and s.targets[0].id == name and isinstance(s.value, ast.BinOp) and isinstance(s.value.op, (ast.Add, ast.Sub)) \
        and isinstance(s.value.left, ast.Name) and s.value.left.id == name and isinstance(s.value.right, ast.Constant) \
        and type(s.value.right.value) is int


def _scales(node, name: str) -> bool:
    """node scales name by a float that is not a whole number (`i * 1e-4`, `h * i`, `i / 1e4`)."""
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Div)):
            for a, b in ((n.left, n.right), (n.right, n.left)):
                if isinstance(a, ast.Name) and a.id == name and isinstance(b, ast.Constant) \
                        and type(b.value) is float and not b.value.is_integer():
                    return True
    return False


def is_stepping(step) -> bool:
    """The statement `bisection_step` named is a stepping search's step (not a bisection's `if`)."""
    return getattr(step, "_od_stepping", False)


def _exit_tests(loop) -> list:
    """The tests that end the loop: a `while`'s own (unless `True`), and each `if ...: break` (or `return`) of its
    own body."""
    tests = []
    if isinstance(loop, ast.While) and not (isinstance(loop.test, ast.Constant) and loop.test.value):
        tests.append(loop.test)
    for n in _own_statements(loop.body):
        if isinstance(n, (ast.While, ast.For)):
            continue
        if isinstance(n, ast.If) and any(isinstance(b, (ast.Break, ast.Return)) for b in n.body):
            tests.append(n.test)
    return tests


def stepping_step(fdef, loops, active=None, fixed=frozenset()):
    """The step of fdef's first stepping search (a loop moving one variable by a float constant, `d += 1e-5`,
    whose exit test orders a value computed from it against one from a variable in `active`; None: a parameter or
    what fdef reads from outside), or None. Whole steps are counts (`n += 1`, `k += 1.`: an integer result, whose
    derivative is zero)."""
    stepped = []
    constants = temps = None
    for loop in loops:
        if constants is None:
            constants, temps = _step_names(fdef, active), temps_of(fdef)
            grids = {n.targets[0].id: n.value for n in _own_statements(fdef.body) if isinstance(n, ast.Assign)
                     and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)}
        # (the lowered form of `d[m] += c`: `t = d[m]; t = t + c; d[m] = t`, its store -> m)
        lowered_steps = {}
        for block in [loop.body] + [getattr(n, f) for n in _own_statements(loop.body)
                                    for f in ("body", "orelse") if isinstance(getattr(n, f, None), list)]:
            for a, b, c in zip(block, block[1:], block[2:]):
                if isinstance(c, ast.Assign) and len(c.targets) == 1 and isinstance(c.targets[0], ast.Subscript) \
                        and isinstance(c.value, ast.Name) and isinstance(a, ast.Assign) and isinstance(b, ast.Assign) \
                        and [getattr(t, "id", None) for t in a.targets + b.targets] == [c.value.id] * 2 \
                        and ast.dump(a.value) == ast.dump(ast.Subscript(
                            value=c.targets[0].value, slice=c.targets[0].slice, ctx=ast.Load())) \
                        and isinstance(c.targets[0].value, ast.Name) \
                        and _is_step(ast.BinOp(left=ast.Name(c.targets[0].value.id, ast.Load()), op=b.value.op,
                                               right=b.value.right) if isinstance(b.value, ast.BinOp) and isinstance(
                                               b.value.left, ast.Name) and b.value.left.id == c.value.id
                                     and isinstance(b.value.op, (ast.Add, ast.Sub)) else ast.Constant(None),
                                     c.targets[0].value.id, constants):
                    lowered_steps[id(c)] = _seen(c.targets[0].slice, temps)
        stores: dict[str, list] = {}
        for n in _own_statements(loop.body):
            if isinstance(n, (ast.Assign, ast.AugAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    for m in all_nodes(t):
                        if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Store):
                            stores.setdefault(m.id, []).append(n)
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):  # (`d[m] += 1e-4`)
                        stores.setdefault(t.value.id, []).append(n)
        if isinstance(loop, ast.For) and isinstance(loop.target, ast.Name) and loop.lineno not in fixed \
                and _literal_grid(loop.iter, temps, grids):
            # `for d in np.arange(0.0, 10.0, 1e-4): if d ** 3 + d >= q: break`: a grid the function makes of
            # literals, searched for the first point past a crossing (refused: its point is not the crossing)
            stepped.append((loop, loop.target.id, loop, ()))
        for name, sets in stores.items():
            if sets[0].lineno in fixed:  # (one `lowered.implicit` stated as its crossing)
                continue
            if all(_counted(s, name) for s in sets):  # (`i += 1` with `i * 1e-4` tested: a grid's index)
                # (and scaled into a value after the loop, `return i * 1e-4`: not a count of terms a series needs,
                # mpmath's `while 3*c*gamma(L*0.5)*... >= eps2: L = L + 1`, used as a count)
                if any(_scales(_seen(n, temps), name) for n in _own_statements(fdef.body)
                       if isinstance(n, ast.stmt) and not isinstance(n, (ast.For, ast.While, ast.If))
                       and (n.lineno, n.col_offset) > (loop.end_lineno, loop.end_col_offset)):
                    stepped.append((loop, name, sets[0], "scaled"))
                continue
            if all((st := step_of(s, constants)) is not None and st[0] == name for s in sets):
                stepped.append((loop, name, sets[0], ()))
            elif name not in temps and all(id(s) in lowered_steps or _masked_step(s, name, temps, constants)
                                           is not None for s in sets):
                # elementwise: `d[m] += 1e-4`, `d = np.where(m, d + 1e-4, d)`, `d += 1e-4 * m` (refused: a
                # vector of crossings is not stated yet)
                masks = [lowered_steps[id(s)] if id(s) in lowered_steps else _masked_step(s, name, temps, constants)
                         for s in sets]
                stepped.append((loop, name, sets[0], tuple(m for m in masks if m is not True)))
    if not stepped:
        return None
    values = _assigned(fdef)

    def comparisons(test):
        """The orderings a test is made of (through the lowered form's temporaries: `_od_t3 = d < q`)."""
        todo, seen = [test], set()
        while todo:
            node = todo.pop()
            for n in all_nodes(node):
                if isinstance(n, ast.Compare) and any(isinstance(o, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for o in n.ops):
                    yield n
                elif isinstance(n, ast.Name) and n.id in temps and n.id not in seen:
                    seen.add(n.id)
                    todo.append(temps[n.id])
    if active is None:  # (the parameters, and what it reads from outside: cells, globals)
        active = {a.arg for a in all_nodes(fdef.args) if isinstance(a, ast.arg)}
        active |= {n.id for n in _own(fdef.body) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - set(values)
    for loop, name, step, masked in stepped:
        # (what the test reads besides the stepped variable, not through that variable's start: an Euler loop's
        # `t, y = 0.0, 1.0` unpacks one tuple, whose parts the activity takes as one)
        others = {k: v for k, v in values.items() if k != name}
        # an ordering reading both the stepped variable and a differentiated one (`q_trial < q`, q_trial computed
        # from d; not `maxerr > eps and k < niter`, pvlib's Newton loop counting passes in a float)
        scaled = masked == "scaled"
        for test in [*_exit_tests(loop), *(() if scaled else masked)]:
            for c in comparisons(test):
                reads = _test_reads(c, others)
                if scaled and not _scales(_seen(c, temps), name):
                    continue
                if name in reads and reads & set(active) - {name}:
                    step._od_stepping = True
                    step._od_inputs = frozenset(reads & set(active) - {name})
                    return step
    return None


def _indexing_only(loop, integers: set[str]) -> bool:
    """The loop uses its integers only as indices and in integer arithmetic and tests (`xs[mid] > x`,
    `mid = (lo + hi) // 2`, `hi - lo > 1`): a search of a table's entries. An index scaled into a value
    (`g(mid * h, x) < 0`: a bisection on a grid) is not."""
    parents = {id(c): p for p in all_nodes(loop) for c in ast.iter_child_nodes(p)}

    def integer(node) -> bool:
        return (isinstance(node, ast.Name) and node.id in integers
                or isinstance(node, ast.Constant) and type(node.value) in (int, bool)
                or isinstance(node, ast.BinOp) and integer(node.left) and integer(node.right))

    for n in all_nodes(loop):
        if not (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in integers):
            continue
        child, p = n, parents.get(id(n))
        while isinstance(p, ast.BinOp) and integer(p):
            child, p = p, parents.get(id(p))
        if isinstance(p, ast.Subscript) and child is p.slice or isinstance(p, (ast.Assign, ast.Tuple)) \
                or isinstance(p, ast.Compare) and all(integer(o) for o in [p.left, *p.comparators]) \
                or isinstance(p, ast.Call) and _call_name(p) in ("range", "int", "len") \
                or isinstance(p, (ast.If, ast.While, ast.IfExp)) and child is p.test or isinstance(p, ast.BoolOp) \
                or isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not):  # (a test's outcome, tested)
            continue
        return False
    return True


_FINITENESS = frozenset({"isnan", "isinf", "isfinite", "isneginf", "isposinf", "any", "all"})


def _finiteness_test(test, temps: dict) -> bool:
    """The test asks only whether values are NaN or infinite (`np.any(np.isnan(dx))`: a safeguarded Newton
    iteration's fallback, karney's geodesic solver's), no ordering of them: no bracket is narrowed by it."""
    todo, seen, calls = [test], 0, 0
    while todo and seen < 50:
        node = todo.pop()
        seen += 1
        for n in all_nodes(node):
            if isinstance(n, ast.Name) and n.id in temps:
                todo.append(temps[n.id])
            elif isinstance(n, ast.Compare):
                return False
            elif isinstance(n, ast.Call):
                if _call_name(n) not in _FINITENESS:
                    return False
                calls += 1
    return calls > 0 and not todo


def _identity_test(test, temps: dict) -> bool:
    """The test asks only what object a value is (`old[c] is None`, `prev is not None`): no ordering of numbers,
    so no bracket is narrowed by it (pvmismatch's dedup of cells; a fixed-point loop's `prev is None or ...`)."""
    seen = 0
    while isinstance(test, ast.Name) and test.id in temps and seen < 20:
        test, seen = temps[test.id], seen + 1
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _identity_test(test.operand, temps)
    return isinstance(test, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops)


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
                    out.append((t.id, q, ast.UnaryOp(ast.Invert(), c), s))  # (chosen where c is false)
            elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                m = v.value if isinstance(v, ast.Subscript) else v
                mask = t.slice
                if isinstance(mask, ast.Name) and mask.id in temps:
                    mask = temps[mask.id]  # (`_od_t13 = (mx, 0); gen[_od_t13] = ...`)
                if isinstance(v, ast.Subscript) and ast.dump(v.slice) != ast.dump(t.slice):
                    continue  # (`new[i] = old[c]`: no mask choosing between two values, pvmismatch's dedup)
                if isinstance(m, ast.Name) and m.id != t.value.id:
                    out.append((t.value.id, m, mask, s))
        if isinstance(s, (ast.Expr, ast.Assign)) and isinstance(s.value, ast.Call) and _called(s.value, "copyto"):
            v = s.value
            where = next((k.value for k in v.keywords if k.arg == "where"), None)
            if where is not None and len(v.args) >= 2 and isinstance(v.args[0], ast.Name):
                out.append((v.args[0].id, v.args[1], where, s))
    return out


def _mask(test) -> str:
    """An elementwise choice's mask, the row mask of a tuple index (`gen[mx, 0]`: `mx`), as text."""
    return ast.dump(test.elts[0] if isinstance(test, ast.Tuple) and test.elts else test)


def _round_trip(ta, value_a, test_a, tb, value_b, test_b, values, local) -> bool:
    """Two choices by one mask, each taking the other variable's values alone (`fixed[mx] = gen[mx, 1]` then
    `gen[mx, 0] = fixed[mx]`: pypower's Q limits, a value clamped to its limit through a copy): no point
    between two ends, nothing narrowed. A golden-section search's interior points moving over choose by
    opposite masks (`x2[c] = x1[c]`, `x1[~c] = x2[~c]`)."""
    return (_made_of(value_a, {ta, tb}, values, local) == {tb} and _made_of(value_b, {ta, tb}, values, local) == {ta}
            and _mask(test_a) == _mask(test_b))


def _called(call: ast.Call, name: str) -> bool:
    f = call.func
    return (isinstance(f, ast.Attribute) and f.attr == name) or (isinstance(f, ast.Name) and f.id == name)


def _made_of_bracket(value, ends: set[str], values: dict[str, set[str]], local: set[str]) -> bool:
    """Whether the value given to the bracket's ends is computed from the ends alone (`mid = (lo + hi) / 2`,
    in every assignment of it): a Newton step kept inside a bracket (`rho = rho + drho`, bisecting only
    when it leaves: chemicals' iapws95_rho) is not a bisection, its iterate follows the function."""
    made_of = _made_of(value, ends, values, local)
    return bool(made_of) and made_of <= ends  # (constants alone are not a bracket's update)


def _between(ta: str, value_a, tb: str, value_b, values: dict[str, set[str]], local: set[str]) -> bool:
    """One of the two values is made of both ends (`mid = (lo + hi) / 2`, `d = a + (b - a) * invphi`: a point
    between them), or each is the other end's (a golden-section search's `x1 = x2` / `x2 = x1`, the interior
    points moving over). Two variables each stepped from itself alone (`i += 1` in one branch,
    `a = np.asarray(a)` in the other: a loop unpacking a vector, pkY's) bracket nothing."""
    ends = {ta, tb}
    made_a, made_b = _made_of(value_a, ends, values, local), _made_of(value_b, ends, values, local)
    return made_a >= ends or made_b >= ends or (tb in made_a and ta in made_b)


def _made_of(value, ends: set[str], values: dict[str, set[str]], local: set[str]) -> set[str]:
    """The local variables value is computed from (through the lowering's temporaries; a variable other than
    the ends, through its assignments)."""
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
    return {m for m in seen if not m.startswith(TEMP_PREFIX)} & local


class BisectionRefused(OverdubError):
    """Forward mode or sparsity detection met a bisection on perturbed or traced values (reverse mode
    refuses it as a function it cannot transform, `UnsupportedFunction`)."""


def refuse_bisection(fn, step: ast.stmt, mode: str = "forward mode") -> BisectionRefused:
    code = fn.__code__
    what = "find the sparsity of" if mode == "sparsity detection" else "differentiate"
    loop, fix = refusal_text(step)
    return BisectionRefused(f"{mode} cannot {what} {code.co_qualname}: it uses a {loop}",
                            where=f"{code.co_filename}:{step.lineno}", fix=fix)


def steps_on_free(fn, step, args, kwargs, free) -> bool:
    """`step` is a stepping search's (found without knowing activity: `bisects`) whose exit test reads only
    parameters given values `free` accepts (unperturbed, untraced): a time loop `while t < T: t += 0.01` with T
    given as a number, nothing to refuse. A bisection's `if`: False (refused whatever its test reads, as before)."""
    if not is_stepping(step):
        return False
    if isinstance(fn, types.MethodType):
        fn, args = fn.__func__, (fn.__self__, *args)
    if type(fn) is not types.FunctionType:
        return False
    try:
        bound = inspect.signature(fn).bind(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return False
    code = fn.__code__
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    for p in getattr(step, "_od_inputs", ()):
        if p in bound:
            v = bound[p]
        elif p in cells:
            try:
                v = cells[p].cell_contents
            except ValueError:
                continue
        else:
            v = fn.__globals__.get(p)
        if not isinstance(v, (types.ModuleType, type)) and not free(v):
            return False
    return True


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


# -- brackets narrowed by selection, in general -----------------------------------------------------
# The shapes above, and any other: a loop whose variables are computed from each other and constants alone
# (no data from the inputs: `mid = (lo + hi) / 2`, `lo, hi = mid, hi`, `hi = mid if c else hi`,
# `hi = np.select([c], [mid], hi)`, `hi = min(hi, mid)`, a blend `c * mid + (1 - c) * hi`, the bracket kept
# in a list, a width `w = (hi - lo) / 2`), some of them chosen by a test on the inputs' data (an `if`, a
# mask, a comparison's value used as a number), and two of them combined by arithmetic (the chosen values
# are mixes of the bracket: a bisection, golden-section search, a bracket started at `x - 3`). A comparison's
# value carries no data (its outcome is what steers), nor does an index found by argmin/argmax/searchsorted.
# Not one: a counter (`k += 1` under a test: no two combined), an argmax's index (`best = i`: chosen, not
# combined), a step halved when a test fails (`h *= 0.5`: one variable), a Newton iterate (computed from
# the inputs' data), an integer bisection of a table (`(lo + hi) // 2`: indices, whose derivative is 0).

# calls whose value is an index, a count or a test's outcome (no data); those on the inputs' data steer
_STEER_CALLS = frozenset({"argmin", "argmax", "argsort", "searchsorted", "digitize", "nonzero", "flatnonzero",
                          "argwhere", "isnan", "isfinite", "isinf", "sign", "bool", "count_nonzero"})
_CUT_CALLS = _STEER_CALLS | {"len", "int", "round", "floor", "ceil", "trunc",
                              "shape", "ndim", "size", "device", "broadcast_shapes", "result_type", "array_namespace",
                              "get_namespace"}
# (`xp = array_namespace(c); xp.full(np.shape(c), 1.0, device=xp.device(c))`: c's namespace, shape and device, no
# data: earthkit-meteo's wet-bulb bisection of arrays starts so, silently 0 in both modes while it counted as data)
_INT_CALLS = frozenset({"len", "int", "round", "count_nonzero", "argmin", "argmax", "argsort", "searchsorted",
                        "digitize", "ceil", "floor", "trunc", "nonzero", "flatnonzero", "argwhere"})
_MASK_FIRST = frozenset({"where", "select", "putmask", "place", "piecewise"})  # (their first argument steers)
_INTEGER_OPS = (ast.FloorDiv, ast.RShift, ast.LShift, ast.Mod)
_SHAPE_ATTRS = frozenset({"shape", "size", "ndim", "dtype"})
_SHAPED_LIKE = frozenset({"zeros_like", "ones_like", "empty_like", "full_like"})  # (their first argument: a shape)


def _outcome(node, resolve=lambda n: n, depth: int = 0) -> bool:
    """node is a test's outcome as it is: a comparison, `&`/`|`/`^`/`~`/`not` of outcomes, or `.astype(...)` of one
    (`resolve` sees through the lowered form's temporaries)."""
    if depth > 20:
        return False
    if isinstance(node, ast.Name):
        seen = resolve(node)
        return seen is not node and _outcome(seen, resolve, depth + 1)
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _outcome(node.left, resolve, depth + 1) and _outcome(node.right, resolve, depth + 1)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        return _outcome(node.operand, resolve, depth + 1)
    if isinstance(node, ast.BoolOp):
        return all(_outcome(v, resolve, depth + 1) for v in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "astype":
        return _outcome(node.func.value, resolve, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.startswith("__od_") \
            and len(node.args) == 1 and not node.keywords:  # (an engine's marker of its value: `__od_parsed__(t)`)
        return _outcome(node.args[0], resolve, depth + 1)
    return False


def _free_reads(fn) -> set[str]:
    """The names a nested function or lambda reads that it does not bind itself (its cells)."""
    own = {a.arg for a in all_nodes(fn.args) if isinstance(a, ast.arg)}
    body = fn.body if isinstance(fn.body, list) else [fn.body]
    for n in (m for b in body for m in all_nodes(b)):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            own.add(n.id)
    return {n.id for b in body for n in all_nodes(b) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - own
# calls combining numbers as arithmetic does (`min(hi, mid)`, `np.linspace(lo, hi, 11)`), not `zip(a, b)`
_MIXING_CALLS = frozenset({"min", "max", "minimum", "maximum", "fmin", "fmax", "linspace", "mean", "average", "interp",
                           "clip", "hypot", "fsum", "sum", "add", "subtract", "multiply", "divide"})


def _unpacked(binds) -> None:
    """The lowered form's tuple assignment (`t = (mid, fm); u = __od_unpack__(t, 2, -1); lo = u[0]`): each
    name's binding given its own item (`lo = mid`), as the source's `lo, flo = mid, fm` binds it."""
    single: dict = {}
    for b in binds:
        single[b.name] = b.value if b.name not in single else None
    for b in binds:
        v = b.value
        if (isinstance(v, ast.Subscript) and isinstance(v.value, ast.Name) and isinstance(v.slice, ast.Constant)
                and type(v.slice.value) is int):
            u = single.get(v.value.id)
            if isinstance(u, ast.Call) and _call_name(u) == "__od_unpack__" and u.args and isinstance(u.args[0], ast.Name):
                t = single.get(u.args[0].id)
                if isinstance(t, (ast.Tuple, ast.List)) and 0 <= v.slice.value < len(t.elts):
                    b.value = t.elts[v.slice.value]


def _parts_of_one(a, b) -> bool:
    """a and b are two different items or fields of one variable (`br[0]`, `br[1]`; `b.lo`, `b.hi`)."""
    if not (isinstance(a, (ast.Subscript, ast.Attribute)) and isinstance(b, (ast.Subscript, ast.Attribute))):
        return False
    return ast.dump(a) != ast.dump(b)


def _call_name(node: ast.Call) -> str | None:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _data_reads(node) -> set[str]:
    """The names whose values node's value is computed from: a comparison's operands, a conditional
    expression's test, a mask argument, an index found by a search, do not count (they steer)."""
    out: set[str] = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if n is None or isinstance(n, (ast.Compare, ast.ClassDef)):
            continue
        if isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):  # (a closure: what it reads of
            out |= _free_reads(n)                                                # the enclosing function's)
            continue
        if isinstance(n, ast.Attribute) and n.attr in _SHAPE_ATTRS:
            continue  # (`q.shape`: a shape, no data)
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                out.add(n.id)
            continue
        if isinstance(n, ast.IfExp):
            todo += [n.body, n.orelse]
            continue
        if isinstance(n, ast.Call):
            name = _call_name(n)
            if name in _CUT_CALLS or name in _SHAPED_LIKE and len(n.args) <= 1:
                continue  # (`np.zeros_like(q)`: q's shape, no data)
            args = n.args[1:] if name in _MASK_FIRST or name in _SHAPED_LIKE else n.args
            todo += list(args) + [k.value for k in n.keywords if k.arg != "where"]
            todo.append(n.func.value if isinstance(n.func, ast.Attribute) else n.func)  # (`getattr(p, s)()`)
            continue
        if isinstance(n, ast.Subscript):
            todo.append(n.value)  # (an index chooses: `grid[best]`)
            continue
        todo.extend(ast.iter_child_nodes(n))
    return out


def _numeric_test(n: ast.Compare) -> bool:
    """An ordering (`g > 0`, `abs(fc) < abs(fd)`): what chooses a bracket's half. An equality singles out a
    point (`elif g == 0: break`), `is` and `in` ask of identity and membership (`name == _ellipsis`, einops'
    pattern parser), none of them a half."""
    return all(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) for op in n.ops) and not any(
        isinstance(c, ast.Constant) and (c.value is None or isinstance(c.value, (str, bytes)))
        for c in [n.left, *n.comparators])


def _integer_names(binds) -> set[str]:
    """The names every binding of which is an integer: a literal, a loop over `range`/`enumerate`, `len(...)`,
    `int(...)`, a count, and integer arithmetic of those (counters and indices carry no derivative)."""
    names = {b.name for b in binds}
    by_name: dict = {}
    for b in binds:
        by_name.setdefault(b.name, []).append(b)
    out = set(names)

    def integer(v) -> bool:  # (or a test's outcome: a mask, `lb == -np.inf`, and counts of them)
        if isinstance(v, ast.Constant):
            return type(v.value) in (int, bool)
        if isinstance(v, ast.Name):
            return v.id in out
        if isinstance(v, (ast.Compare, ast.BoolOp)):
            return True
        if isinstance(v, ast.BinOp):
            if isinstance(v.op, (ast.BitOr, ast.BitAnd, ast.BitXor)):
                return True
            return not isinstance(v.op, (ast.Div, ast.MatMult)) and integer(v.left) and integer(v.right)
        if isinstance(v, ast.UnaryOp):
            return isinstance(v.op, (ast.Not, ast.Invert)) or integer(v.operand)
        if isinstance(v, ast.Subscript):
            return integer(v.value)  # (`np.argsort(h)[::-1]`)
        if isinstance(v, ast.Call):
            name = _call_name(v)
            if any(k.arg == "dtype" and isinstance(k.value, ast.Name) and k.value.id in ("bool", "int")
                   for k in v.keywords):  # (`np.ones(n, dtype=bool)`: a mask)
                return True
            if name in ("copy", "ravel", "flatten", "reshape", "tolist") and isinstance(v.func, ast.Attribute):
                return integer(v.func.value)
            return name in _INT_CALLS or name in ("sum", "any", "all") and bool(v.args) and integer(v.args[0])
        return False

    changed = True
    while changed:
        changed = False
        for name in list(out):
            for b in by_name[name]:
                v = b.value
                loop_target = isinstance(b.stmt, (ast.For, ast.AsyncFor)) and v is b.stmt.iter
                if loop_target:
                    if isinstance(v, ast.Name) and len(by_name.get(v.id, ())) == 1 and v.id.startswith(TEMP_PREFIX):
                        v = by_name[v.id][0].value  # (the lowered form's `_od_t6 = range(...)`, `for t in _od_t6`)
                    ok = isinstance(v, ast.Call) and _call_name(v) in ("range",) or (
                        isinstance(v, ast.Call) and _call_name(v) == "enumerate" and _only_index(b))
                elif isinstance(b.stmt, ast.AugAssign) and v is not None:
                    ok = integer(v)
                else:
                    ok = v is not None and integer(v)
                if not ok:
                    out.discard(name)
                    changed = True
                    break
    return out


def _only_index(b) -> bool:
    """The binding is the index of `for i, v in enumerate(...)`."""
    t = b.stmt.target
    return isinstance(t, ast.Tuple) and len(t.elts) == 2 and isinstance(t.elts[0], ast.Name) and t.elts[0].id == b.name


def _steer_reads(node) -> set[str]:
    """The names node's value is computed from or chosen by (its data, masks, tests, `int(c)`), not the
    indices it reads at (a counter's)."""
    out, todo = set(), [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                out.add(n.id)
        elif isinstance(n, ast.Subscript):
            todo.append(n.value)
        elif not isinstance(n, _DEFS):
            todo.extend(ast.iter_child_nodes(n))
    return out


class _Binding:
    __slots__ = ("name", "value", "stmt", "ifs", "loops", "outside")

    def __init__(self, name, value, stmt, ifs, loops):
        self.name, self.value, self.stmt, self.ifs, self.loops = name, value, stmt, ifs, loops
        self.outside = False


def _bound_first(loop) -> set[str]:
    """The names the loop's body binds by a plain `name = value` at its top level before any read of them
    there (and the value not reading them): a fresh value each pass, whatever they held before the loop."""
    out, read = set(), set()
    for st in loop.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            name = st.targets[0].id
            value_reads = _loads(st.value)
            read |= value_reads
            if name not in read:
                out.add(name)
            read.add(name)
            continue
        read |= {n.id for n in all_nodes(st) if isinstance(n, ast.Name)}
    return out


def _bindings(body, ifs=(), loops=()):
    """Each binding of a name in body's own statements: (name, value or None for an opaque one, statement,
    the `if` tests around it, the loops around it). A store into an item or attribute binds its base
    (`br[1] = mid`, `b.hi = mid`: the container changes); a call changing its first argument in place
    (`np.copyto(lo, mid, where=c)`, `np.putmask(hi, c, mid)`) binds it to the call."""
    for s in body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):  # (a closure: bound to what it reads)
            yield _Binding(s.name, s, s, ifs, loops)
            continue
        if isinstance(s, _DEFS):
            continue
        if isinstance(s, ast.Assign):
            for t in s.targets:
                parts = _parts(s.value, len(t.elts)) if isinstance(t, (ast.Tuple, ast.List)) else None
                if parts is not None:
                    for te, ve in zip(t.elts, parts):
                        yield from _bind_target(te, ve, s, ifs, loops)
                else:
                    yield from _bind_target(t, s.value, s, ifs, loops)
        elif isinstance(s, ast.AugAssign):
            yield from _bind_target(s.target, ast.BinOp(left=_load_of(s.target), op=s.op, right=s.value), s, ifs, loops)
        elif isinstance(s, ast.AnnAssign) and s.value is not None:
            yield from _bind_target(s.target, s.value, s, ifs, loops)
        if isinstance(s, (ast.Expr, ast.Assign)) and isinstance(s.value, ast.Call) and s.value.args \
                and _call_name(s.value) in ("copyto", "putmask", "place") and isinstance(s.value.args[0], ast.Name):
            yield _Binding(s.value.args[0].id, s.value, s, ifs, loops)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            for m in all_nodes(s.target):
                if isinstance(m, ast.Name):
                    yield _Binding(m.id, s.iter, s, ifs, loops)
            yield from _bindings(s.body, (), loops + (s,))  # (the tests that choose inside a loop: its own)
            yield from _bindings(s.orelse, ifs, loops)
            continue
        elif isinstance(s, ast.While):
            yield from _bindings(s.body, (), loops + (s,))
            yield from _bindings(s.orelse, ifs, loops)
            continue
        elif isinstance(s, ast.If):
            yield from _bindings(s.body, ifs + (s.test,), loops)
            yield from _bindings(s.orelse, ifs + (s.test,), loops)
            continue
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for i in s.items:
                if i.optional_vars is not None:
                    for m in all_nodes(i.optional_vars):
                        if isinstance(m, ast.Name):
                            yield _Binding(m.id, None, s, ifs, loops)
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            if not isinstance(s, (ast.If, ast.For, ast.AsyncFor, ast.While)):
                for sub in getattr(s, name, None) or ():
                    if isinstance(sub, ast.ExceptHandler):
                        yield from _bindings(sub.body, ifs, loops)
                    elif isinstance(sub, ast.match_case):
                        yield from _bindings(sub.body, ifs, loops)
                    elif isinstance(sub, ast.stmt):
                        yield from _bindings([sub], ifs, loops)
        for n in _walrus(s):
            yield _Binding(n.target.id, n.value, s, ifs, loops)


def _parts(value, n: int):
    """The n values a tuple target takes from value (`a, b = x, y`; `a, b = (x, y) if c else (u, v)`, each
    a conditional expression of its own), or None."""
    if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == n \
            and not any(isinstance(e, ast.Starred) for e in value.elts):
        return value.elts
    if isinstance(value, ast.IfExp):
        body, orelse = _parts(value.body, n), _parts(value.orelse, n)
        if body is not None and orelse is not None:
            return [ast.IfExp(test=value.test, body=b, orelse=o) for b, o in zip(body, orelse)]
    return None


def _walrus(s):
    for attr in ("value", "test", "iter"):
        v = getattr(s, attr, None)
        if isinstance(v, ast.AST):
            yield from (n for n in all_nodes(v) if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name))


def _load_of(target):
    if isinstance(target, ast.Name):
        return ast.Name(id=target.id, ctx=ast.Load())
    return target


def _bind_target(t, value, s, ifs, loops):
    if isinstance(t, ast.Name):
        yield _Binding(t.id, value, s, ifs, loops)
    elif isinstance(t, (ast.Subscript, ast.Attribute)):
        base = t.value
        while isinstance(base, (ast.Subscript, ast.Attribute)):
            base = base.value
        if isinstance(base, ast.Name):
            extra = [t.slice] if isinstance(t, ast.Subscript) else []
            # (the container after the store: its old content and the stored value; the index steers)
            yield _Binding(base.id, ast.Tuple(elts=[ast.Name(id=base.id, ctx=ast.Load()), value], ctx=ast.Load()),
                           s, ifs + tuple(extra), loops)
    else:
        for m in all_nodes(t):
            if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Store):
                yield _Binding(m.id, None, s, ifs, loops)


def selection_step(fdef: ast.AST, active=None, fixed=frozenset()):
    """The first statement of fdef narrowing a bracket by selection (see above), or None. `active`: the
    variables that may carry derivatives (their names not bound in fdef are its inputs: parameters,
    cells); None: the parameters."""
    binds = list(_bindings(fdef.body))
    _unpacked(binds)
    loops = {id(lp): lp for b in binds for lp in b.loops}
    if not loops:
        return None
    bound = {b.name for b in binds}
    params = {a.arg for a in all_nodes(fdef.args) if isinstance(a, ast.arg)}
    # (the parameters that may carry derivatives, where the caller knows: a text pattern steers no number)
    inputs = params if active is None else (params & set(active)) | {n for n in active if n not in bound}
    reads = {id(b): (None if b.value is None else _data_reads(b.value)) for b in binds}


    def dependent(killed: set) -> set:
        """The names computed from the inputs' data; `killed`'s bindings outside the loop do not count (the loop
        binds them afresh before reading them: `mid = x` before a bisection's loop is dead inside it)."""
        out = set(inputs)
        changed = True
        while changed:
            changed = False
            for b in binds:
                if b.name not in out and (reads[id(b)] is None or reads[id(b)] & out) and not (
                        b.name in killed and b.outside):
                    out.add(b.name)
                    changed = True
        return out

    integers = _integer_names(binds)
    temps: dict = {}  # (the lowered form's temporaries: their values, to see the user's variables through)
    for b in binds:
        if b.name.startswith(TEMP_PREFIX) and b.value is not None:
            temps.setdefault(b.name, []).append(b.value)

    def resolve(node):
        seen = 0
        while isinstance(node, ast.Name) and len(temps.get(node.id, ())) == 1 and seen < 20:
            node, seen = temps[node.id][0], seen + 1
        return node

    def users(names: set) -> set:
        """The user's variables behind names (temporaries expanded)."""
        out, todo, seen = set(), list(names), set()
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            if n in temps:
                for v in temps[n]:
                    todo.extend(_data_reads(v))
            else:
                out.add(n)
        return out
    for loop in loops.values():
        if fixed and _restated(loop, fixed):
            continue  # (stated as the root it finds: `lowered.implicit`)
        inner = [b for b in binds if loop in b.loops]
        killed = _bound_first(loop)
        for b in binds:
            b.outside = loop not in b.loops
        dep = dependent(killed)
        closed = {b.name for b in inner} - dep - integers
        if not closed:
            continue
        if any(isinstance(n, ast.BinOp) and isinstance(n.op, _INTEGER_OPS) and _data_reads(n) & closed
               or isinstance(n, ast.Call) and _call_name(n) == "int" and _data_reads(n) & closed
               for b in inner if b.value is not None for n in all_nodes(b.value)):
            continue  # (an integer bisection of indices: `mid = (lo + hi) // 2`)
        # the tests on the inputs' data, and the names holding their outcomes (masks, `c = float(g > 0)`)
        steer: set[str] = set()
        chosen: dict = {}  # (a temporary's number of bindings)
        for b in binds:
            if b.name.startswith(TEMP_PREFIX):
                chosen[b.name] = chosen.get(b.name, 0) + 1

        def steers(node) -> bool:
            for n in all_nodes(node):
                if isinstance(n, ast.Compare) and _numeric_test(n) and any(
                        _data_reads(o) & dep for o in [n.left, *n.comparators]):
                    return True
                if isinstance(n, ast.Call) and _call_name(n) in _STEER_CALLS and any(
                        _data_reads(a) & dep for a in n.args):
                    return True
            return bool(steer) and bool(_steer_reads(node) & steer)

        changed = True
        while changed:
            changed = False
            for b in binds:
                # (a temporary bound under a steering test on each of its sides: the lowered form's conditional
                # expression or boolean operator, a value the test chooses. Not one bound once in the branch,
                # computed only where the test holds: `if m.real > 0: for n in range(1, N + 1): ...` steers no
                # pass of the loop by `range`'s temporary -- miepython's recurrence was refused as a bisection)
                if b.name not in steer and (b.value is not None and steers(b.value) or b.name.startswith(
                        TEMP_PREFIX) and chosen.get(b.name, 0) > 1 and any(steers(t) for t in b.ifs)):
                    steer.add(b.name)
                    changed = True
        steered = [b for b in inner if b.name in closed and (any(steers(t) for t in b.ifs)
                                                              or b.value is not None and steers(b.value))]
        if not steered:
            continue
        # names holding only a test's outcome (`m = (H >= a) & (H < b)`, `.astype(int)` of one)
        outcomes: dict = {}
        for b in binds:
            outcomes[b.name] = outcomes.get(b.name, True) and b.value is not None and _outcome(b.value, resolve)
        masks = {k for k, v in outcomes.items() if v}
        mixed: set[str] = set()
        for b in inner:
            if b.value is None:
                continue
            for n in all_nodes(b.value):
                if isinstance(n, ast.BinOp) and not isinstance(n.op, (ast.BitOr, ast.BitAnd, ast.BitXor)):
                    # (a test's outcome is no end of a bracket: `layer += in_layer.astype(int) * i`, ambiance's
                    # layer numbers, counts by masks; a blend `c * mid + (1 - c) * hi` mixes mid and hi still)
                    left = users(_data_reads(n.left)) & closed - masks
                    right = users(_data_reads(n.right)) & closed - masks
                    # (two of them, or two parts of one: `br[0] + br[1]`, `b.lo + b.hi`)
                    if left and right and (len(left | right) > 1 or _parts_of_one(resolve(n.left), resolve(n.right))):
                        mixed |= left | right | {b.name}
                elif isinstance(n, ast.Call) and _call_name(n) in _MIXING_CALLS:
                    parts = [users(_data_reads(a)) & closed for a in n.args]
                    if sum(1 for p in parts if p) > 1 and len(set().union(*parts)) > 1:
                        mixed |= set().union(*parts) | {b.name}
        mixed = users(mixed) | mixed
        # carried from one pass to the next: a variable whose bindings in the loop read it back (`mid` from
        # `lo` and `hi`, `lo` from `mid`), not a table's row read afresh each pass (fluids' Miller bends)
        within: dict = {}
        for b in inner:
            within.setdefault(b.name, set()).update(() if b.value is None else users(_data_reads(b.value)))
        carried = set()
        for name in mixed & closed:
            todo, seen = list(within.get(name, ())), set()
            while todo:
                m = todo.pop()
                if m == name:
                    carried.add(name)
                    break
                if m not in seen:
                    seen.add(m)
                    todo.extend(within.get(m, ()))
        if not carried:
            continue
        for b in steered:
            if b.name in mixed:
                return b.stmt
    return None
