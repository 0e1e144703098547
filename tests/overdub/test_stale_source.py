"""A module edited on disk after import: no context may run the file's new text in place of the code that
runs. The core runs the function as an opaque primitive (its own result); reverse mode refuses it by name;
forward mode differentiates the running code through its duals. Never the new text's derivative."""

import importlib
import linecache
import sys

import pytest

import overdub
from contexts import NoRuleError, gradient
from contexts.forward import derivative

OLD = "def cube(x):\n    return x * x * x\n\n\ndef calls(x):\n    return cube(x) + 1.0\n"
NEW = "def cube(x):\n    return x * x + x\n\n\ndef calls(x):\n    return cube(x) + 1.0\n"


@pytest.fixture
def edited(tmp_path, monkeypatch):
    """The module `stale_mod` imported from OLD, then its file rewritten to NEW (same lines)."""
    path = tmp_path / "stale_mod.py"
    path.write_text(OLD)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("stale_mod", None)
    mod = importlib.import_module("stale_mod")
    path.write_text(NEW)
    linecache.checkcache(str(path))
    yield mod
    sys.modules.pop("stale_mod", None)


def test_core_runs_the_code_that_runs(edited):
    assert edited.cube(3.0) == 27.0
    assert overdub.Context().run(edited.cube, 3.0) == 27.0
    assert overdub.Context().run(edited.calls, 3.0) == 28.0


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_reverse_mode_refuses_instead_of_differentiating_the_new_text(edited):
    with pytest.raises(NoRuleError, match="changed since it was imported"):
        gradient(edited.calls, 3.0)


def test_forward_mode_differentiates_the_running_code(edited):
    assert derivative(edited.calls, 3.0) == pytest.approx(27.0)  # 3 x^2, not the new text's 2 x + 1


def test_unchanged_source_is_used(tmp_path, monkeypatch):
    path = tmp_path / "fresh_mod.py"
    path.write_text(OLD)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("fresh_mod")
    assert overdub.is_recursable(mod.cube)
    assert gradient(mod.calls, 3.0) == pytest.approx((27.0,))


STORING_OLD = ("class Box:\n    pass\n\n\ndef put(box, v):\n    box.p = v\n\n\n"
               "def f(x):\n    b = Box()\n    put(b, x * x)\n    return b.p * 2.0\n")
STORING_NEW = STORING_OLD.replace("box.p = v", "box.q = v")


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_edited_function_that_stores_into_an_object_is_refused(tmp_path, monkeypatch):
    """The edited function returns nothing and stores a differentiated value into its argument: run as
    a primitive, the store had no record and the gradient was silently 0 (found by the fuzzer with the
    engine's own files edited under it). Reverse mode refuses; forward mode follows the running code."""
    path = tmp_path / "storing_mod.py"
    path.write_text(STORING_OLD)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("storing_mod", None)
    mod = importlib.import_module("storing_mod")
    try:
        path.write_text(STORING_NEW)
        linecache.checkcache(str(path))
        with pytest.raises(NoRuleError, match="changed since it was imported"):
            gradient(mod.f, 1.5)
        assert derivative(mod.f, 1.5) == pytest.approx(4 * 1.5)
    finally:
        sys.modules.pop("storing_mod", None)
