"""The layering of the packages, so that it cannot regress: each layer imports only from those below it,
at any level (inside functions too, where a lazy import would hide a cycle).

    overdub (core) <- contexts.rules <- contexts.lowered <- contexts.forward <- contexts.ad <- compositions

`contexts.sparsity` sits beside reverse mode (it uses forward mode's `jvp`), `contexts.debug` on the core
alone; the compositions (`contexts/__init__.py`, `contexts/compose.py`) may use every layer.
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

# the subpackages of contexts each may import (besides itself and the core)
BELOW = {
    "rules": set(),
    "lowered": {"rules"},
    "forward": {"rules", "lowered"},
    "ad": {"rules", "lowered", "forward"},
    "sparsity": {"rules", "lowered", "forward"},
    "debug": set(),
}
COMPOSITIONS = {"contexts", "contexts.compose", "contexts.by_reverse"}


def imported(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in tree, at any depth; `import_module("...")` and
    `__import__("...")` of a constant name count too."""
    package = module if is_package else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1])
                names = [node.module] if node.module else [a.name for a in node.names]
                out += [(node.lineno, f"{base}.{n}") for n in names]
            else:
                out.append((node.lineno, node.module))
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str) and not node.args[0].value.startswith(".")):
            out.append((node.lineno, node.args[0].value))
    return out


def layer(module: str) -> str | None:
    """The layer of a module name: `overdub`, a subpackage of contexts, or None (outside the project)."""
    parts = module.split(".")
    if parts[0] == "overdub":
        return "overdub"
    if parts[0] != "contexts":
        return None
    return module if module in COMPOSITIONS else parts[1]


def violations(path: pathlib.Path) -> list[str]:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    is_package = parts[-1] == "__init__"
    module = ".".join(parts[:-1] if is_package else parts)
    own = layer(module)
    allowed = {own} if own == "overdub" else {own, "overdub"} | BELOW.get(own, set())
    if own in COMPOSITIONS:
        return []
    out = []
    for line, target in imported(ast.parse(path.read_text()), module, is_package):
        to = layer(target)
        if to is not None and to not in allowed:
            out.append(f"{rel}.py:{line} imports {target} ({own} may use only {sorted(allowed)})")
    return out


def _modules(package: str) -> list[pathlib.Path]:
    return sorted((ROOT / package).rglob("*.py"))


def test_every_subpackage_has_a_place():
    subpackages = {p.name for p in (ROOT / "contexts").iterdir() if (p / "__init__.py").exists()}
    assert subpackages == set(BELOW)


@pytest.mark.parametrize("path", _modules("contexts") + _modules("overdub"),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_follow_the_layers(path):
    assert violations(path) == []


def test_a_lazy_import_against_the_order_is_found():
    source = "def f():\n    from ..ad import gradient\n    return gradient\n"
    found = imported(ast.parse(source), "contexts.forward.api", is_package=False)
    assert found == [(2, "contexts.ad")]
    assert layer(found[0][1]) not in BELOW["forward"]
    found = imported(ast.parse("import importlib\nimportlib.import_module('contexts.ad.runtime')\n"),
                     "contexts.rules.containers", is_package=False)
    assert [layer(t) for _, t in found] == [None, "ad"]


# what the contexts may use of the core: its public package, the pass API for transformers that generate
# code of their own, its errors and the operations its hooks receive
CORE_API = {"overdub", "overdub.passes", "overdub.errors", "overdub.ops"}


@pytest.mark.parametrize("path", _modules("contexts"), ids=lambda p: str(p.relative_to(ROOT)))
def test_contexts_use_the_core_through_its_api(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    is_package = parts[-1] == "__init__"
    module = ".".join(parts[:-1] if is_package else parts)
    reached = [f"{rel}.py:{line} imports {target}" for line, target in imported(ast.parse(path.read_text()),
                                                                                module, is_package)
               if layer(target) == "overdub" and target not in CORE_API]
    assert reached == [], "use overdub.passes (the pass API) instead"
