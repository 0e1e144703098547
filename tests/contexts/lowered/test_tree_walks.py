"""The tree walks and copies the transformers run over a whole function (issue 17: a long function's
transform time) against their definitions: `all_nodes` is `ast.walk` (same nodes, same order), `own_nodes`
is the recursive walk that stops at nested scopes, `copy_tree` is a deep copy, `at` places every node that
has a position."""

import ast
import copy
from pathlib import Path

import pytest

from contexts.lowered.build import at, call, const, if_, assign, binop, compare
from contexts.lowered.lower import all_nodes, own_nodes
from overdub.passes import copy_tree

SOURCE = '''
def f(x, *args, k=1, **kw):
    global G
    y = [v * 2 for v in args if v > 0]
    z = lambda a, b=x: a + b
    def inner(q):
        nonlocal y
        y = q
        return [w for w in q]
    class C:
        attr = x
        def m(self):
            return self
    try:
        y = x[1:2, ...] ** -k
    except (KeyError, ValueError) as e:
        raise RuntimeError("no") from e
    else:
        pass
    finally:
        del y
    with open("p") as fh, open("q"):
        for i, (a, b) in enumerate(kw.items()):
            if a and not b or i is None:
                continue
            elif a < b <= 3:
                break
        else:
            while x:
                x -= 1
    match x:
        case [1, *rest] if rest:
            pass
        case {"k": v, **others}:
            pass
        case C(attr=q) | q:
            pass
    return f"{x!r:>{k}}", {**kw}, {1, 2}, (yield x)
'''

# a few of the library's own modules: every kind of statement and expression it uses
MODULES = [Path(__file__).resolve().parents[3] / p for p in
           ("contexts/ad/codegen.py", "contexts/lowered/lower.py", "overdub/source.py")]


def _trees():
    yield ast.parse(SOURCE)
    for path in MODULES:
        yield ast.parse(path.read_text())


def _functions():
    for tree in _trees():
        yield from (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))


def test_all_nodes_is_ast_walk_in_its_order():
    for tree in _trees():
        assert [id(n) for n in all_nodes(tree)] == [id(n) for n in ast.walk(tree)]


def _own_nodes_by_definition(fn):
    """Depth first from the end of each list of children, nested scopes neither yielded nor entered."""
    nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
    out = []

    def visit(nodes):
        for n in reversed(nodes):
            out.append(n)
            visit([c for c in ast.iter_child_nodes(n) if not isinstance(c, nested)])
    visit([n for n in fn.body if not isinstance(n, nested)])
    return out


def test_own_nodes_walks_the_own_scope_only():
    for fn in _functions():
        assert [id(n) for n in own_nodes(fn)] == [id(n) for n in _own_nodes_by_definition(fn)]


def test_own_nodes_follows_children_changed_while_walking():
    """A consumer that rewrites a node's children as it is yielded (`ask_primals`) sees the new ones."""
    fn = ast.parse("def f(x):\n    y = len(x)\n").body[0]
    seen = []
    for n in own_nodes(fn):
        seen.append(n)
        if isinstance(n, ast.Call) and n.func.id == "len":
            n.args = [ast.Call(ast.Name("wrap", ast.Load()), [n.args[0]], [])]
    assert any(isinstance(n, ast.Name) and n.id == "wrap" for n in seen)


@pytest.mark.parametrize("make", [lambda: ast.parse(SOURCE), lambda: ast.parse(MODULES[0].read_text())])
def test_copy_tree_is_a_deep_copy(make):
    tree = make()
    tree.body[0]._od_inplace = True  # (marks the passes set stay on the copy)
    copied = copy_tree(tree)
    assert ast.dump(copied, include_attributes=True) == ast.dump(tree, include_attributes=True)
    assert copied.body[0]._od_inplace is True
    originals = {id(n) for n in ast.walk(tree)}
    for n in ast.walk(copied):  # only contexts and operators (no fields, no position) are shared
        assert id(n) not in originals or (not n._fields and not n._attributes)
    for n in ast.walk(copied):  # changing the copy leaves the original as it was
        if isinstance(n, ast.Name):
            n.id = "renamed"
        if isinstance(n, ast.stmt):
            n.lineno = 10_000
    assert ast.dump(copy.deepcopy(tree)) == ast.dump(tree) != ast.dump(copied)
    assert all(n.lineno != 10_000 for n in ast.walk(tree) if isinstance(n, ast.stmt))


def test_at_places_every_node_with_a_position():
    user = ast.parse("x[i:j] + f(*a, k=-b)").body[0].value
    stmts = [assign(("y", "pb"), call("g", copy_tree(user), const(1))),
             if_(compare("y", ast.Is(), const(None)), [assign("z", binop("y", ast.Add(), copy_tree(user)))])]
    like = ast.parse("\n\nq = 1").body[0]  # line 3
    at(stmts, like)
    placed = [n for s in stmts for n in ast.walk(s) if n._attributes]
    assert placed and all((n.lineno, n.end_lineno, n.col_offset, n.end_col_offset) == (3, 3, 0, 0) for n in placed)
    module = ast.Module(body=[ast.FunctionDef(name="h", args=ast.arguments([], [], None, [], [], None, []),
                                              body=stmts, decorator_list=[], lineno=3, col_offset=0)],
                        type_ignores=[])
    compile(module, "<at>", "exec")  # (no position missing: the compiler takes it without fixing)
