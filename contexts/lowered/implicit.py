"""A bisection's result stated as the root it finds, before any context sees the function.

    while hi - lo > tol:                         while hi - lo > tol:
        mid = (lo + hi) / 2                          ... (unchanged)
        v = g(mid, x)                  ->        lo = __overdub_implicit_root__(lo, k, lo, hi, (x, c))
        if v > c: hi = mid                       hi = __overdub_implicit_root__(hi, k, lo, hi, (x, c))
        else: lo = mid                           mid = __overdub_implicit_root__(mid, k, lo, hi, (x, c))

with `ROOTS[k].h` compiled from the loop's own statements: `def h(mid, x, c): v = g(mid, x); return v - c`.
The call is the end itself (`contexts.rules.implicit.root_of`); its rules give it the root's derivative by
the implicit function theorem, in every mode alike, where the bracket holds a root the test crosses
continuously (else they refuse). Differentiated as written, the loop's result is a fixed mix of the bracket's
starting ends (`lowered.bisection`, which every mode refused until now: psychrolib's wet-bulb temperature,
mibian's implied volatility).

Why a rewrite of the definition (`overdub.passes.add_rewriter`) and not a rule per mode: the modes transform
the tree the core hands them, so one rewrite reaches reverse mode, forward mode's twins and its duals, and
sparsity detection, and each needs only root_of's rule.

Rewritten only where every value the loop leaves behind is accounted for (else the loop stays as it was, and
refused as before):
- the `if`'s two branches (or an `elif` ending in `break`) assign one probe to the two ends (`hi = mid` /
  `lo = mid`, or `lo, hi = mid, hi`; values carried with the ends, `fhi = fmid`, besides), the probe assigned
  once in the loop, at its top level, from the ends (before the test, or after it for the next pass);
- h's value is the test's two sides as a difference, where the test is an ordering (`<`, `<=`, `>`, `>=`) of
  values computed from the probe and from what the loop does not change (its slice of the loop's statements
  before the test, simple assignments), or the one value of the probe a comparison of signs reads
  (`positive(y) == positive(ya)`, `(w > 0) != (wl > 0)`, `fm * fa > 0`, the other value at an end);
- the loop's statements are assignments to names, `if`s, `break`, `continue`, `pass`, `raise` and `return`s
  reading only the bracket and what the loop does not change (the probe or ends they read stated as the root
  before them), with no `else`, no nested loop, no call for its effect, no store into an object or container
  (a value stored there would carry the fixed mix);
- no other variable the loop changes is read after it (counters aside), nor returned from inside it;
- or the halving form (scipy's bisect as fluids ports it): `dm *= 0.5; xm = a + dm; if f(xm) * fa >= 0: a = xm`
  in that order, dm changed nowhere else, the bracket `[a, a + dm]` after the test;
- every bisection in the function is of this form.
The loop then runs on plain values (its ends and whatever it reads and does not change, through
`__overdub_bracket_value__`; every comparison in it of plain numbers): its values are discarded at its end.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import types

from overdub.passes import AST_LOCK, add_rewriter, adopt, copy_tree, fix_missing_locations

from ..rules.implicit import NAME, PLAIN, ROOTS, Root, bracket_value, root_of
from .bisection import _own, bisection_step, is_stepping, step_of

__all__ = ["rewrite"]

# (found by every twin's globals, as builtins; no module of the user's changes)
setattr(builtins, NAME, root_of)
setattr(builtins, PLAIN, bracket_value)

_keys = itertools.count(1)
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Break, ast.Continue, ast.Pass, ast.Raise, ast.If, ast.Return)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def rewrite(source, module_globals):
    """The definition with each bisection's ends stated as the root (in it and in the functions defined in it,
    which a context's twin of it makes from this tree), or None (no bisection of the form handled: the modes
    refuse it as before). A function with a bisection of another form is left whole; a stepping search of another
    form is left as it is, the function's others stated."""
    tree = source.tree
    if isinstance(tree, ast.Lambda) or not any(isinstance(n, (ast.While, ast.For)) for n in ast.walk(tree)):
        return None
    new = copy_tree(tree)
    code = source.code
    changed = False
    for fdef, outer in _scopes(new, set(code.co_freevars) | set(code.co_cellvars)):
        if not any(isinstance(n, (ast.While, ast.For)) for n in _own(fdef.body)) or bisection_step(fdef, None) is None:
            continue
        try:
            body = _stated(copy_tree(fdef), source, module_globals, outer)
        except Exception:  # noqa: BLE001 (a shape this rewrite mishandles: the loops are left as written, which
            body = None    # every mode refuses, never a crash in a function the user differentiates)
        if body is not None:
            fdef.body = body
            changed = True
    if not changed:
        return None
    fix_missing_locations(new)
    return new


def _stated(trial, source, module_globals, outer):
    """trial's body with its loops stated as roots, or None (none, or a bisection of another form)."""
    stated, skipped = False, set()
    for _ in range(16):
        step = bisection_step(trial, None, skip=skipped)
        if step is None:
            return trial.body if stated else None
        if _state_as_root(trial, step, source, module_globals, outer):
            stated = True
        elif is_stepping(step):  # (left as it is, refused where it is reached: the function's others stated)
            skipped.add(step.lineno)
        else:
            return None
    return None


def _scopes(tree, outer: set[str]):
    """(each function definition in tree, the enclosing functions' variables it may read as its cells)."""
    todo = [(tree, outer)]
    while todo:
        fdef, names = todo.pop()
        yield fdef, names
        inner = names | _stores(fdef.body) | {a.arg for a in ast.walk(fdef.args) if isinstance(a, ast.arg)}
        stack = list(fdef.body)
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                todo.append((n, inner))
            elif not isinstance(n, ast.Lambda):
                stack.extend(ast.iter_child_nodes(n))


add_rewriter(rewrite)


# -- the rewrite of one loop --------------------------------------------------------------------------------

def _loads(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stores(nodes) -> set[str]:
    return {n.id for n in _own(nodes) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}


def _block_of(fdef, node):
    """(the statement list holding node, the loop whose body holds it directly or None) in fdef."""
    todo = [(fdef.body, None)]
    while todo:
        block, loop = todo.pop()
        for s in block:
            if s is node:
                return block, loop
            if isinstance(s, _DEFS):
                continue
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(s, name, None)
                if inner:
                    todo.append((inner, s if isinstance(s, (ast.While, ast.For)) and name == "body" else None))
            for h in getattr(s, "handlers", ()):
                todo.append((h.body, None))
            for c in getattr(s, "cases", ()):
                todo.append((c.body, None))
    return None, None


def _branch(stmts) -> dict[str, ast.expr] | None:
    """name -> value of a branch made of `name = value` statements only (`lo, hi = lo, mid` pairwise, a name
    given itself left out), or None."""
    out = {}
    for s in stmts:
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1):
            return None
        t, v = s.targets[0], s.value
        if isinstance(t, ast.Name):
            out[t.id] = v
        elif isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple) and len(t.elts) == len(v.elts) \
                and all(isinstance(e, ast.Name) for e in t.elts) and not _loads(v) & {e.id for e in t.elts} - {
                    e.id for e, w in zip(t.elts, v.elts) if isinstance(w, ast.Name) and w.id == e.id}:
            # (each value reads no name the tuple assigns, but the name it gives itself: `lo, hi = lo, mid`)
            out.update({e.id: w for e, w in zip(t.elts, v.elts) if not (isinstance(w, ast.Name) and w.id == e.id)})
        else:
            return None
    return out


def _other_branch(test_if: ast.If) -> dict[str, ast.expr] | None:
    """The assignments of the `else`, or of an `elif` whose own `else` stops the loop or is absent (`elif g <
    0: lo = mid` / `else: break`: the root hit exactly), or None."""
    rest = test_if.orelse
    if len(rest) == 1 and isinstance(rest[0], ast.If) and (
            not rest[0].orelse or len(rest[0].orelse) == 1 and isinstance(rest[0].orelse[0], ast.Break)):
        return _branch(rest[0].body)
    return _branch(rest)


def _counter(name: str, loop) -> bool:
    """Every change of name in the loop is a step by a constant integer (`i += 1`, `n = n - 1`)."""
    for s in _own(loop.body):
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and s.target.id == name:
            if not (isinstance(s.value, ast.Constant) and type(s.value.value) is int):
                return False
        elif isinstance(s, ast.Assign) and name in _stores(s.targets):
            v = s.value
            if not (len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and isinstance(v, ast.BinOp)
                    and isinstance(v.op, (ast.Add, ast.Sub)) and isinstance(v.left, ast.Name)
                    and v.left.id == name and isinstance(v.right, ast.Constant) and type(v.right.value) is int):
                return False
    return True


def _test_of(fdef, step):
    """The `if` the detector named (or the one whose branch holds the statement it named)."""
    if isinstance(step, ast.If):
        return step
    for n in _own(fdef.body):
        if isinstance(n, ast.If) and any(s is step for s in n.body + n.orelse):
            return n
    return None


def _state_as_root(fdef, step, source, module_globals, enclosing: set[str]) -> bool:
    if is_stepping(step):
        return _state_stepping(fdef, step, source, module_globals, enclosing)
    test_if = _test_of(fdef, step)
    if test_if is None:
        return False
    block, loop = _block_of(fdef, test_if)
    if loop is None or loop.orelse:
        return False
    outer, _ = _block_of(fdef, loop)
    if outer is None:
        return False
    # the loop's own statements: assignments to names, ifs, break / continue / pass / raise
    for s in _own(loop.body):
        if isinstance(s, ast.stmt) and not isinstance(s, _SIMPLE):
            return False
        if isinstance(s, (ast.Attribute, ast.Subscript, ast.Starred)) and isinstance(s.ctx, (ast.Store, ast.Del)):
            return False
        if isinstance(s, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await, *_DEFS)):
            return False
    if not isinstance(test_if.test, ast.Compare) or len(test_if.test.ops) != 1:
        return False
    a, b = _branch(test_if.body), _other_branch(test_if)
    pairs = [(ta, tb, va.id) for ta, va in (a or {}).items() for tb, vb in (b or {}).items()
             if ta != tb and isinstance(va, ast.Name) and isinstance(vb, ast.Name) and va.id == vb.id
             and va.id not in (ta, tb)]
    # (the pair whose probe is made of its ends: `hi = mid` / `lo = mid`, not the values carried with them,
    # `fhi = fmid` / `flo = fmid`)
    pairs = [(ta, tb, p) for ta, tb, p in pairs if any(
        isinstance(s, ast.Assign) and p in _stores([s]) and {ta, tb} & _loads(s.value) for s in loop.body)]
    if len(pairs) == 1:
        ta, tb, probe = pairs[0]
        lo_end, hi_end, stated = ast.Name(ta, ast.Load()), ast.Name(tb, ast.Load()), (ta, tb)
    else:
        # the halving form (scipy's bisect as fluids ports it): `dm *= 0.5; xm = a + dm; if ...: a = xm`, one end
        # moved, the bracket [a, a + dm] after the test; dm is stated with a (plain in the loop), a as the root
        halving = _halving(loop, test_if, a, b)
        if halving is None:
            return False
        ta, tb, probe = halving
        lo_end = ast.Name(ta, ast.Load())
        hi_end = ast.BinOp(left=ast.Name(ta, ast.Load()), op=ast.Add(), right=ast.Name(tb, ast.Load()))
        stated = (ta,)
    position = loop.body.index(test_if)
    before = loop.body[:position]
    # the probe: assigned once in the loop, at its top level, from the bracket (before the test, or after it
    # for the next pass: psychrolib's `TWetBulb = (TWetBulbSup + TWetBulbInf) / 2` at the loop's end)
    probe_sets = [s for s in _own(loop.body) if probe in _stores([s]) and isinstance(s, ast.stmt)]
    if len(probe_sets) != 1 or not any(s is probe_sets[0] for s in loop.body) \
            or not isinstance(probe_sets[0], ast.Assign) or not ({ta, tb} & _loads(probe_sets[0].value)):
        return False
    changed = _stores(loop.body) | (_stores([loop.target]) if isinstance(loop, ast.For) else set())
    # h's value: the test's two sides as a difference (an ordering of values computed from the probe and from
    # what the loop does not change), or the one value a comparison of signs reads of the probe (`y * ya < 0`,
    # `positive(y) == positive(ya)`, ya a value at an end of the bracket: psypy's)
    found = None
    test = test_if.test
    if isinstance(test.ops[0], _ORDER):
        value = ast.copy_location(ast.BinOp(left=copy_tree(test.left), op=ast.Sub(),
                                            right=copy_tree(test.comparators[0])), test)
        found = _slice_of(value, before, probe_sets[0], probe, changed)
    if found is None:
        for value in _signed(test):
            found = _slice_of(value, before, probe_sets[0], probe, changed)
            if found is not None:
                if any(_reads(v, before, probe_sets[0]) & {probe} for v in _signed(test) if v is not value):
                    found = None  # (both signs read the probe: not a sign at an end)
                break
    if found is None:
        return False
    value = copy_tree(value)
    # nothing else the loop changes is read after it (a counter aside; before it too, where a loop holds it),
    # nor returned from inside it (`if fm == 0: return mid`: the probe, stated as the root there too)
    again = any(_inside(loop, n) for n in _own(fdef.body) if isinstance(n, (ast.While, ast.For)) and n is not loop)
    outside = set()
    for n in _own(fdef.body):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and not _inside(n, loop) \
                and (again or (n.lineno, n.col_offset) > (loop.end_lineno, loop.end_col_offset)):
            outside.add(n.id)
    returns = [n for n in _own(loop.body) if isinstance(n, ast.Return)]
    for r in returns:
        outside |= _loads(r.value) if r.value is not None else set()
    for v in (changed - {*stated, probe}) & outside:
        if not _counter(v, loop):
            return False
    made = _root_h(fdef, source, module_globals, enclosing, probe, found, value, test_if, test_if.lineno, "bisection")
    if made is None:
        return False
    key, params, own = made

    ends = f"_odends{key}"

    def fix(name):
        call = ast.Call(func=ast.Name(NAME, ast.Load()), args=[
            ast.Name(name, ast.Load()), ast.Constant(key), copy_tree(lo_end), copy_tree(hi_end),
            ast.Tuple([ast.Name(p, ast.Load()) for p in params[1:]], ast.Load()), ast.Name(ends, ast.Load())],
            keywords=[])
        return ast.copy_location(ast.Assign(targets=[ast.Name(name, ast.Store())], value=call), loop)
    # the loop itself on plain values: its ends, the variables it reads and does not change, an ordering's sides
    renamed = _on_plain_values(loop, own - changed - {ta, tb})
    pre = [ast.Assign(targets=[ast.Name(ends, ast.Store())], value=ast.Tuple(
        [ast.Name(ta, ast.Load()), ast.Name(tb, ast.Load())], ast.Load()))]  # (with their derivatives)
    pre += [ast.Assign(targets=[ast.Name(renamed.get(v, v), ast.Store())], value=_plain_call(ast.Name(v, ast.Load())))
            for v in [*renamed, ta, tb]]
    guarded = ast.Try(body=[fix(probe)], handlers=[ast.ExceptHandler(
        type=ast.Name("NameError", ast.Load()), name=None, body=[ast.copy_location(ast.Pass(), loop)])],
        orelse=[], finalbody=[])
    fixes = [*(fix(v) for v in stated), ast.copy_location(guarded, loop)]
    placed = []
    for r in returns:  # (before a return from inside the loop: what it reads of the bracket, stated as the root)
        block, _ = _block_of(loop, r)
        reads = _loads(r.value) if r.value is not None else set()
        before_return = [fix(v) for v in (*stated, probe) if v in reads]
        block[block.index(r):block.index(r)] = before_return
        placed += before_return
    at = outer.index(loop)
    outer[at + 1:at + 1] = fixes
    outer[at:at] = pre
    _at_line(pre + fixes + placed, loop)
    return True


def _halving(loop, test_if, body, other):
    """(a, dm, xm) of the halving form: the loop's top level halves dm (`dm *= 0.5`, its only change), then sets
    the probe `xm = a + dm`, then tests; the `if` moves a to the probe (`a = xm`), its `else` nothing; else None."""
    if other or not body or len(body) != 1:
        return None
    (end, value), = body.items()
    if not isinstance(value, ast.Name):
        return None
    probe = value.id
    where = {id(s): i for i, s in enumerate(loop.body)}
    halves = [s for s in _own(loop.body) if isinstance(s, ast.stmt) and _stores([s]) - {probe, end}
              and _is_halving(s)]
    for h in halves:
        dm = next(iter(_stores([h])))
        sets = [s for s in _own(loop.body) if isinstance(s, ast.stmt) and dm in _stores([s])]
        probes = [s for s in loop.body if isinstance(s, ast.Assign) and probe in _stores([s])]
        if sets != [h] or id(h) not in where or len(probes) != 1 or not _is_sum(probes[0].value, end, dm):
            continue
        if where[id(h)] < where[id(probes[0])] < where[id(test_if)]:
            return end, dm, probe
    return None


def _is_halving(s) -> bool:
    """`dm *= 0.5`, `dm /= 2`, `dm = dm * 0.5`, `dm = dm / 2`, `dm = 0.5 * dm`."""
    half = lambda op, c: isinstance(c, ast.Constant) and (  # noqa: E731
        isinstance(op, ast.Mult) and c.value == 0.5 or isinstance(op, ast.Div) and c.value == 2)
    if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
        return half(s.op, s.value)
    if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
            and isinstance(s.value, ast.BinOp):
        v, name = s.value, s.targets[0].id
        return (isinstance(v.left, ast.Name) and v.left.id == name and half(v.op, v.right)
                or isinstance(v.right, ast.Name) and v.right.id == name and isinstance(v.op, ast.Mult)
                and half(v.op, v.left))
    return False


def _is_sum(value, a: str, dm: str) -> bool:
    """value is `a + dm` (either way round)."""
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and {
        getattr(value.left, "id", None), getattr(value.right, "id", None)} == {a, dm}


def _slice_of(value, before, probe_set, probe, changed, branches=False):
    """(the statements before the test that value reads, through one another; the variables they and value
    read), where those are simple assignments (or, with `branches`, `if`s of them assigning the same names either
    way: `_two_way`) and value reads the probe and otherwise only what the loop does not change; else None."""
    needed = _loads(value)
    sliced: list[ast.stmt] = []
    for s in reversed(before):
        if s is probe_set:
            continue
        assigned = _stores([s])
        if not assigned & needed:
            continue
        if branches and isinstance(s, ast.If) and _two_way(s):
            sliced.insert(0, s)
            needed = (needed - assigned) | _outer_reads([s])
            continue
        if not isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)) or any(
                not isinstance(t, ast.Name) for t in ast.walk(s) if isinstance(t, (ast.Attribute, ast.Subscript))
                and isinstance(t.ctx, ast.Store)):
            return None
        if isinstance(s, ast.AnnAssign) and s.value is None:
            return None
        sliced.insert(0, s)
        needed = (needed - assigned) | _loads(s) | (assigned if isinstance(s, ast.AugAssign) else set())
    if probe not in needed or (needed - {probe}) & changed:
        return None
    if {"super", "__class__"} & (needed | _loads(ast.Module(body=sliced, type_ignores=[]))):
        return None
    return sliced, needed


def _simple_store(s) -> bool:
    """s assigns names only (`a = ...`, `a, b = ...`, `a += ...`), with nothing made or awaited in it."""
    if not isinstance(s, (ast.Assign, ast.AugAssign)) or any(
            isinstance(t, (ast.Attribute, ast.Subscript, ast.Starred)) for t in ast.walk(s)
            if isinstance(getattr(t, "ctx", None), (ast.Store, ast.Del))):
        return False
    return not any(isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await, *_DEFS)) for n in ast.walk(s))


def _two_way(s) -> bool:
    """s is an `if` (an `elif` chain) of simple assignments whose branches assign the same names (each pass's value
    made afresh whichever way it goes: channelflowlib's circular section, `theta = ...` above or below half full)."""
    if not isinstance(s, ast.If) or not s.orelse:
        return False
    for branch in (s.body, s.orelse):
        if not all(_simple_store(t) or _two_way(t) for t in branch):
            return False
    return _stores(s.body) == _stores(s.orelse)


def _outer_reads(stmts) -> set[str]:
    """The names stmts read before they assign them (an `if`'s branches each on its own)."""
    made, reads = set(), set()
    for s in stmts:
        if isinstance(s, ast.If):
            reads |= _loads(s.test) - made
            for branch in (s.body, s.orelse):
                reads |= _outer_reads(branch) - made
        else:
            reads |= (_loads(s) | ({s.target.id} if isinstance(s, ast.AugAssign) else set())) - made
        made |= _stores([s])
    return reads


def _afresh(stmts, fresh: set[str], changed: set[str]) -> set[str] | None:
    """The names made by stmts, in order, where each reads of what the loop changes only what this pass made
    before it (`fresh`: the stepped variable, then each assignment's names, each branch on its own); else None (a
    value carried from one pass to the next)."""
    fresh = set(fresh)
    for s in stmts:
        if isinstance(s, ast.If):
            if _loads(s.test) & changed - fresh:
                return None
            made = [_afresh(branch, fresh, changed) for branch in (s.body, s.orelse)]
            if None in made:
                return None
            fresh |= made[0] & made[1]
            continue
        reads = _loads(s) | ({s.target.id} if isinstance(s, ast.AugAssign) else set())
        if reads & changed - fresh:
            return None
        fresh |= _stores([s])
    return fresh


def _reads(value, before, probe_set) -> set[str]:
    """The variables value reads, through the statements before the test (the probe's own assignment aside)."""
    needed = _loads(value)
    for s in reversed(before):
        if s is not probe_set and _stores([s]) & needed:
            needed |= _loads(s)
    return needed


def _signed(test: ast.Compare) -> list:
    """The two values a comparison of signs compares: `s(a) == s(b)`, `s(a) != s(b)` (s any function of one
    value, or an ordering against 0: `(a > 0) != (b > 0)`), `a * b < 0` (any ordering against 0, either side);
    else none."""
    op, left, right = test.ops[0], test.left, test.comparators[0]

    def sign_of(c):  # (`s(v)`, `v > 0`, `0 <= v`: the v a sign is taken of)
        if isinstance(c, ast.Call) and len(c.args) == 1 and not c.keywords and not isinstance(c.args[0], ast.Starred):
            return c.args[0]
        if isinstance(c, ast.Compare) and len(c.ops) == 1 and isinstance(c.ops[0], _ORDER):
            for v, zero in ((c.left, c.comparators[0]), (c.comparators[0], c.left)):
                if isinstance(zero, ast.Constant) and zero.value == 0:
                    return v
        return None
    if isinstance(op, (ast.Eq, ast.NotEq)) and sign_of(left) is not None and sign_of(right) is not None:
        return [sign_of(left), sign_of(right)]
    if isinstance(op, _ORDER):
        for product, zero in ((left, right), (right, left)):
            if isinstance(zero, ast.Constant) and zero.value == 0 and isinstance(product, ast.BinOp) \
                    and isinstance(product.op, ast.Mult):
                return [product.left, product.right]
    return []


def _inside(node, loop) -> bool:
    """node lies within loop's text (by position: the trees share no parent links)."""
    return (loop.lineno, loop.col_offset) <= (node.lineno, node.col_offset) \
        and (node.end_lineno, node.end_col_offset) <= (loop.end_lineno, loop.end_col_offset)


def _compile_h(source, module_globals, params, sliced, value, test_if, key):
    """h(probe, *params): the slice, then the value whose root the loop finds; its definition adopted as its
    source (no file holds it), its globals the function's."""
    ret = ast.copy_location(ast.Return(value=value), test_if)
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])
    name = f"{source.code.co_name}_root{key}" if source.code.co_name.isidentifier() else f"root{key}"
    fdef = ast.FunctionDef(name=name, args=args, body=[copy_tree(s) for s in sliced] + [ret], decorator_list=[],
                           returns=None, type_comment=None)
    ast.copy_location(fdef, test_if)
    fix_missing_locations(fdef)
    top = fdef
    if source.class_name:  # (private names mangled as in the function's class)
        top = ast.ClassDef(name=source.class_name, bases=[], keywords=[], body=[fdef], decorator_list=[])
        ast.copy_location(top, test_if)
    module = ast.Module(body=[top], type_ignores=[])
    fix_missing_locations(module)
    with AST_LOCK:
        try:
            module_code = compile(module, source.filename, "exec", dont_inherit=True)
        except (SyntaxError, TypeError, ValueError):
            return None
    code = next(c for c in module_code.co_consts if isinstance(c, types.CodeType))
    if source.class_name:
        code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    code = code.replace(co_qualname=f"{source.code.co_qualname}.<root at line {test_if.lineno}>")
    globals_ = module_globals if module_globals is not None else {"__builtins__": builtins}
    h = types.FunctionType(code, globals_, name)
    adopt(code, fdef, source.class_name)
    return h


def _root_h(fdef, source, module_globals, enclosing, probe, found, value, test, line, loop):
    """(key, h's parameters, fdef's own variables) of the loop's h registered in `ROOTS` (the probe first, then
    the function's own variables the slice reads: the rest are its globals), or None where it does not compile."""
    sliced, needed = found
    own = _stores(fdef.body) | {a.arg for a in ast.walk(fdef.args) if isinstance(a, ast.arg)} | enclosing
    params = [probe] + sorted((needed - {probe}) & own)
    key = next(_keys)
    h = _compile_h(source, module_globals, params, sliced, value, test, key)
    if h is None:
        return None
    ROOTS[key] = Root(h, source.filename, line, _qualname(source.code, fdef), loop)
    return key, params, own


def _qualname(code, fdef) -> str:
    return code.co_qualname if fdef.name == code.co_name else f"{code.co_qualname}.<locals>.{fdef.name}"


def _plain_call(node):
    return ast.Call(func=ast.Name(PLAIN, ast.Load()), args=[node], keywords=[])


def _on_plain_values(loop, inputs: set[str]) -> dict[str, str]:
    """The loop made to run on plain values: its reads of `inputs` (what it reads and does not change) renamed to
    plain copies (`_odplain_x`, made before it: the map returned), and every comparison of numbers in it made of
    plain ones (they only steer the loop, whose values are discarded; an equality guard there, `if fm == 0: return
    mid` on an object's dual field, refused a root)."""
    parts = loop.body + ([loop.test] if isinstance(loop, ast.While) else [])
    read = set().union(*(_loads(s) for s in parts))
    renamed = {p: f"_odplain_{p}" for p in sorted(read & inputs)}
    for s in parts:
        for n in ast.walk(s):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in renamed:
                n.id = renamed[n.id]
    for n in _own(parts):
        if isinstance(n, ast.Compare) and all(isinstance(o, (*_ORDER, ast.Eq, ast.NotEq)) for o in n.ops):
            n.left, n.comparators = _plain_call(n.left), [_plain_call(c) for c in n.comparators]
    return renamed


def _at_line(stmts, like) -> None:
    """The statements written for a loop placed at its first line (an error there names the loop)."""
    for s in stmts:
        for n in ast.walk(s):
            if "lineno" in n._attributes:
                n.lineno = n.end_lineno = like.lineno
                n.col_offset, n.end_col_offset = like.col_offset, like.col_offset + 1


def _state_stepping(fdef, step, source, module_globals, enclosing: set[str]) -> bool:
    """A stepping search stated as the crossing it stops past:

        while q_trial < q:                     _odrank = False
            d += 1e-5                          while q_trial < q:        (on plain values)
            a = d * b               ->             d += 1e-5; _odrank = True; a = d * b; q_trial = a * v(a)
            q_trial = a * v(a)                 if _odrank:
                                                   d = __overdub_implicit_root__(d, k, d - 1e-5, d, (b, q), ends)
                                                   a = d * b; q_trial = a * v(a)       (again, from the root)
                                               else: d = <d as the loop found it>

    Where: the step is the pass's first or last statement, the rest simple assignments to names (or `if`s of
    them assigning the same names either way) computed afresh each pass from the stepped variable and what the
    loop does not change (no value carried from one pass to the next: re-run after the loop from the root, they
    give the values the loop left, now with derivatives), and the loop ends by its `while` test or by an `if
    test: break` ending the rest (not both), an ordering of values computed from the stepped variable; a `for`
    loop's counter not read after it. h is the test's two sides as a difference; the bracket the last step
    crossed: [d - step, d], or one step back where the step ends the pass and the `while` tests (its values were
    made before the step: the probe is d - step, the pass re-run from it, the step too)."""
    block, loop = _block_of(fdef, step)
    if loop is None:  # (`while q_trial < q: if q > 0: b += 1e-4; ...`, a guard the loop does not change: its body)
        loops = [n for n in _own(fdef.body) if isinstance(n, ast.While) and len(n.body) == 1
                 and isinstance(n.body[0], ast.If) and n.body[0].body is block and not n.body[0].orelse]
        if len(loops) != 1 or _loads(loops[0].body[0].test) & _stores(block):
            return False
        loop = loops[0]
    if loop.orelse or step not in (block[0], block[-1]):
        return False
    outer, _ = _block_of(fdef, loop)
    if outer is None:
        return False
    stated = step_of(step, _stores(fdef.body) | set(_loads(step)))  # (the detector vetted the step's constant)
    if stated is None:  # (an elementwise step, `d[m] += 1e-4`: refused where it is reached)
        return False
    own = _stores(fdef.body) | {a.arg for a in ast.walk(fdef.args) if isinstance(a, ast.arg)} | enclosing
    inputs = getattr(step, "_od_inputs", frozenset())
    if module_globals is not None and inputs and all(
            n not in own and type(module_globals.get(n)) in (int, float) for n in inputs):
        # (its test reads only the module's numbers, `while lon > _180_0: lon -= _360_0`, pygeodesy's wrap of a
        # longitude: no search for an input's crossing, its derivative the code's; the modes, knowing activity,
        # do not take it for one)
        return False
    probe, size, up = stated
    first = block[0] is step
    rest = block[1:] if first else block[:-1]
    last = rest[-1] if rest else None
    breaks = isinstance(last, ast.If) and len(last.body) == 1 and isinstance(last.body[0], ast.Break) \
        and not last.orelse
    tested = isinstance(loop, ast.While) and not (isinstance(loop.test, ast.Constant) and loop.test.value is True)
    if tested == breaks:
        return False
    test = loop.test if tested else last.test
    if breaks:
        rest = rest[:-1]
    back = tested and not first  # (the test read values made before the step: at d - step)
    if not isinstance(test, ast.Compare) or len(test.ops) != 1 or not isinstance(test.ops[0], _ORDER):
        return False
    changed = _stores(loop.body)
    if isinstance(loop, ast.For):
        if not isinstance(loop.target, ast.Name):
            return False
        counter = loop.target.id
        after = [n for n in _own(fdef.body) if isinstance(n, ast.Name) and n.id == counter and not _inside(n, loop)]
        if any(isinstance(n.ctx, ast.Load) for n in after) or counter in changed:
            return False
        changed.add(counter)
    if not all(_simple_store(s) or _two_way(s) for s in rest) or _afresh(rest, {probe}, changed) is None:
        return False
    value = ast.copy_location(ast.BinOp(left=copy_tree(test.left), op=ast.Sub(),
                                        right=copy_tree(test.comparators[0])), test)
    found = _slice_of(value, rest, step, probe, changed, branches=True)
    if found is None:
        return False
    made = _root_h(fdef, source, module_globals, enclosing, probe, found, value, test, step.lineno, "stepping search")
    if made is None:
        return False
    key, params, own = made
    ran, ends = f"_odran{key}", f"_odends{key}"
    # (the pass again after the loop, from the root: as the user wrote it; the step too where it ends the pass)
    again = [copy_tree(s) for s in rest] + ([copy_tree(step)] if back else [])
    renamed = _on_plain_values(loop, own - changed)  # (the loop on plain values)
    block.insert(block.index(step) + 1, ast.copy_location(
        ast.Assign(targets=[ast.Name(ran, ast.Store())], value=ast.Constant(True)), step))
    pre = [ast.Assign(targets=[ast.Name(ends, ast.Store())], value=ast.Tuple([ast.Name(probe, ast.Load())],
                                                                            ast.Load())),
           ast.Assign(targets=[ast.Name(ran, ast.Store())], value=ast.Constant(False))]
    pre += [ast.Assign(targets=[ast.Name(renamed.get(v, v), ast.Store())], value=_plain_call(ast.Name(v, ast.Load())))
            for v in [*renamed, probe]]

    def back_by(steps: int):  # d - steps * step (for a step up; + for a step down)
        node = ast.Name(probe, ast.Load())
        for _ in range(steps):
            node = ast.BinOp(left=node, op=ast.Sub() if up else ast.Add(), right=copy_tree(size))
        return node
    at_probe = back_by(1 if back else 0)
    call = ast.Call(func=ast.Name(NAME, ast.Load()), args=[
        at_probe, ast.Constant(key), back_by(2 if back else 1), copy_tree(at_probe),
        ast.Tuple([ast.Name(p, ast.Load()) for p in params[1:]], ast.Load()), ast.Name(ends, ast.Load())],
        keywords=[])
    again = [ast.Assign(targets=[ast.Name(probe, ast.Store())], value=call)] + again
    restore = [ast.Assign(targets=[ast.Name(probe, ast.Store())], value=ast.Subscript(
        value=ast.Name(ends, ast.Load()), slice=ast.Constant(0), ctx=ast.Load()))]
    after = [ast.If(test=ast.Name(ran, ast.Load()), body=again, orelse=restore)]
    _at_line(pre + after, loop)
    at = outer.index(loop)
    outer[at + 1:at + 1] = after
    outer[at:at] = pre
    return True
