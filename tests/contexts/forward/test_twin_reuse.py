"""Forward mode makes a module function's tangent twin once and calls it again (`tangent_runtime._twin`):
the twin made for one function object must never serve another, or the same function after its defaults
changed, or a closure (whose cells differ per closure). Each derivative against its closed form."""
import pytest

from contexts import derivative


def scaled(x, k=2.0):
    return k * x * x


def outer(x):
    return scaled(x) + scaled(x, 3.0)


def test_defaults_changed_between_calls():
    assert derivative(outer, 1.5) == pytest.approx(2 * 2.0 * 1.5 + 2 * 3.0 * 1.5)
    saved = scaled.__defaults__
    scaled.__defaults__ = (5.0,)
    try:
        assert derivative(outer, 1.5) == pytest.approx(2 * 5.0 * 1.5 + 2 * 3.0 * 1.5)
    finally:
        scaled.__defaults__ = saved
    assert derivative(outer, 1.5) == pytest.approx(2 * 2.0 * 1.5 + 2 * 3.0 * 1.5)


def _make(k):
    def f(x):
        return k * x ** 3
    return f


def test_closures_of_one_code_keep_their_own_cells():
    for k in (1.0, 2.0, -4.0):
        f = _make(k)
        assert derivative(lambda x: f(x) + f(2 * x), 0.5) == pytest.approx(k * 3 * 0.25 + k * 3 * 4 * 0.25 * 2)


def test_functions_of_one_code_in_other_globals():
    src = "def g(x):\n    return c * x * x\n"
    first, second = {"c": 2.0}, {"c": 7.0}
    exec(src, first)
    exec(src, second)
    assert derivative(lambda x: first["g"](x), 1.0) == pytest.approx(4.0)
    assert derivative(lambda x: second["g"](x), 1.0) == pytest.approx(14.0)
    assert derivative(lambda x: first["g"](x), 1.0) == pytest.approx(4.0)


def test_redefined_function_of_a_module(tmp_path, monkeypatch):
    import importlib
    import sys
    (tmp_path / "od_twin_reuse_mod.py").write_text("def h(x):\n    return 2.0 * x * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("od_twin_reuse_mod")
    try:
        assert derivative(lambda x: mod.h(x), 1.0) == pytest.approx(4.0)
        mod.h = lambda x: 5.0 * x * x  # the module's name rebound to another function
        assert derivative(lambda x: mod.h(x), 1.0) == pytest.approx(10.0)
    finally:
        sys.modules.pop("od_twin_reuse_mod", None)


def _settable(k):
    def f(x):
        return k * x * x

    def set_k(v):
        nonlocal k
        k = v
    return f, set_k


def test_closure_over_numbers_kept_reads_its_cells_live():
    # (a closure whose cells hold numbers keeps its twin between calls, `tangent_runtime._closed`: the twin
    # shares f's cells, so a cell rebound between calls is read anew)
    f, set_k = _settable(2.0)
    assert derivative(f, 1.5) == pytest.approx(2 * 2.0 * 1.5)
    set_k(7.0)
    assert derivative(f, 1.5) == pytest.approx(2 * 7.0 * 1.5)
    f.__defaults__ = None
    for k in (1.0, -3.0, 0.5):  # (closures of one code, each its own twin)
        assert derivative(_make(k), 0.5) == pytest.approx(k * 3 * 0.25)


def test_closure_twin_kept_no_longer_than_its_function():
    import gc
    import weakref

    from contexts.forward import tangent_runtime

    def make():
        s = 2.0

        def f(x):
            return s * x * x
        return f

    f = make()
    assert derivative(f, 1.0) == pytest.approx(4.0)
    assert derivative(f, 1.0) == pytest.approx(4.0)  # (the kept twin)
    code = f.__code__
    assert any(k[0] == id(code) for k in tangent_runtime._closed_map)
    fref = weakref.ref(f)
    del f
    gc.collect()
    assert fref() is None
    assert not any(k[0] == id(code) for k in tangent_runtime._closed_map)
