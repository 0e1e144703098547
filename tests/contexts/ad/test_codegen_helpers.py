"""Reverse mode's build helpers that were rewritten for a long function's transform time (issue 17), against
their definitions: `_bound_before` (the variables that may be bound when a statement runs) against sets
built statement by statement, `_global_names` against `dis`."""

import ast
import dis
import types

from contexts.ad.codegen import _bound_before
from contexts.ad.runtime import _global_names

SOURCES = [
    """
def f(x, n):
    a = x
    b = a + c
    for i in range(n):
        d = b * i
        if d:
            e = d
        else:
            g = 1
        h = e
    w = h
    while n:
        k = m
        m = k
    try:
        t = 1
    except ValueError as err:
        u = t
    else:
        v = u
    finally:
        z = v
    with open("p") as fh:
        q = fh
    match x:
        case [p0, *rest]:
            r = p0
        case _:
            r = 0
    def inner():
        return s
    class K:
        pass
    s = r
    return s
""",
    """
def g(x):
    if x:
        if x > 1:
            a = 1
        b = a
    else:
        for j in x:
            while j:
                c = j
                j = c - 1
        d = c
    return a + d
""",
]


def _bound_by_definition(fdef, params):
    """Per statement, the set of names that may be bound when it runs, copied statement by statement."""
    out = {}

    def stores(node):
        return ({n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
                | {n.name for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.ClassDef))})

    def walk(stmts, bound):
        for st in stmts:
            out[id(st)] = set(bound)
            if isinstance(st, (ast.For, ast.While)):
                inner = bound | stores(st)
                walk(st.body, inner)
                walk(st.orelse, inner)
            elif isinstance(st, ast.Try):  # (its else, handlers and finally may follow what its body bound)
                walk(st.body, set(bound))
                tried = bound | set().union(*(stores(b) for b in st.body))
                for part in [st.orelse, st.finalbody] + [h.body for h in st.handlers]:
                    walk(part, set(tried))
            elif isinstance(st, (ast.If, ast.With, ast.Try, ast.Match)):
                for part in ([getattr(st, f, ()) for f in ("body", "orelse", "finalbody")]
                             + [b.body for b in getattr(st, "handlers", []) + getattr(st, "cases", [])]):
                    walk(part, set(bound))
            bound |= stores(st)
    free = {n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)}
    walk(fdef.body, set(params) | (free - set().union(*(stores(st) for st in fdef.body))))
    return out


def test_bound_before_answers_as_the_sets_would():
    for source in SOURCES:
        fdef = ast.parse(source).body[0]
        params = [a.arg for a in fdef.args.args]
        names = ({n.id for n in ast.walk(fdef) if isinstance(n, ast.Name)}
                 | {n.name for n in ast.walk(fdef) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
                 | set(params) | {"never_seen"})
        expected, got = _bound_by_definition(fdef, params), _bound_before(fdef, params)
        assert got.keys() == expected.keys()
        for key, bound in expected.items():
            assert {n for n in names if n in got[key]} == bound


def _global_names_by_dis(code):
    out = {ins.argval for ins in dis.get_instructions(code)
           if ins.opname in ("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME")}
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _global_names_by_dis(c)
    return out


def test_global_names_are_those_dis_reads():
    sources = [
        "def f(x):\n    global G\n    G = len(x)\n    del H\n    return [type(v) for v in x], float(x)\n",
        # more than 256 names: the global operations take EXTENDED_ARG prefixes
        "def g():\n" + "".join(f"    a{i} = b{i}.c{i}\n" for i in range(300)) + "    return a1, b299\n",
        "x = y\nclass K:\n    z = w\n",
    ]
    for source in sources:
        code = compile(source, "<globals>", "exec")
        assert _global_names(code) == _global_names_by_dis(code)
