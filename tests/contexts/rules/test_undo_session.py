"""In-place rules talk to the reverse pass only through `UndoSession` (box, redo, held, held_out)."""

import ast
import pathlib

import numpy as np

import contexts
from contexts.ad.structs import Session
from contexts.rules.cotangents import UndoSession
from tests.fd import gradient as fd_gradient

RULES = pathlib.Path(contexts.__file__).parent / "rules"
PUBLIC = {"box", "redo", "held", "held_out"}


def test_the_engine_session_is_an_undo_session():
    assert isinstance(Session(), UndoSession)


def _session_uses(tree):
    """(attribute, line) of every `S.<attribute>` in functions taking a parameter named S."""
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.Lambda)) and "S" in {a.arg for a in fn.args.args}:
            for n in ast.walk(fn):
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "S":
                    yield n.attr, n.lineno


def test_rules_use_only_the_public_session():
    reached = [(str(p.relative_to(RULES)), line, attr) for p in sorted(RULES.rglob("*.py"))
               for attr, line in _session_uses(ast.parse(p.read_text())) if attr not in PUBLIC]
    assert not reached, f"rules reaching into the reverse pass's session: {reached}"


def test_in_place_rules_through_the_public_session():
    """list.append / np.copyto / np.add.at rules (box, redo, held) against finite differences, and the
    primal state after the pass is the one the function left."""
    kept = []

    def f(x):
        out = [x[0]]
        out.append(x[1] * x[0])
        a = np.zeros(3)
        np.copyto(a, x * 2.0)
        np.add.at(a, [0, 0, 2], x[:3] ** 2)
        kept.append(a)
        return out[1] + np.sum(a * a)

    x = np.array([0.3, -1.2, 0.7])
    (g,) = contexts.gradient(f, x)
    np.testing.assert_allclose(kept[-1], [0.6 + 0.09 + 1.44, -2.4, 1.4 + 0.49])  # redone after the pass
    np.testing.assert_allclose(g, fd_gradient(f, x)[0], rtol=1e-6, atol=1e-8)
