"""Calls known to return new objects join no view group (issue 17: the groups, and the code following each
call's group, grew with the function's length). Only callees resolved now through the module's globals to
math/cmath functions, float/int/complex/bool/len, or numpy ufuncs given no output are fresh."""

from __future__ import annotations

import ast
import math
import textwrap

import numpy as np
import pytest

from contexts import derivative, gradient
from contexts.lowered.activity import fresh_calls, view_groups


def _calls(src: str, globals_: dict, freevars=()):
    fdef = ast.parse(textwrap.dedent(src)).body[0]
    fresh = fresh_calls(fdef, globals_, freevars)
    return {ast.unparse(n): id(n) in fresh for n in ast.walk(fdef) if isinstance(n, ast.Call)}, fdef, fresh


def test_which_calls_are_fresh():
    g = {"math": math, "np": np, "helper": lambda v: v, "sin": math.sin}
    got, _, _ = _calls("""
        def f(x, y):
            a = math.sin(x)
            b = np.sin(x)
            c = np.sin(x, y)
            d = np.sin(x, out=y)
            e = np.reshape(x, (2,))
            h = helper(x)
            k = sin(x)
            m = len(x)
            n = float(x)
            o = np.add(x, y)
            p = np.sin(*x)
            return a
        """, g)
    assert got == {"math.sin(x)": True, "np.sin(x)": True, "np.sin(x, y)": False, "np.sin(x, out=y)": False,
                   "np.reshape(x, (2,))": False, "helper(x)": False, "sin(x)": True, "len(x)": True,
                   "float(x)": True, "np.add(x, y)": True, "np.sin(*x)": False}


@pytest.mark.parametrize("src", [
    "def f(x):\n    math = np\n    return math.reshape(x, (2,))\n",          # a local of that name
    "def f(x, math):\n    return math.sin(x)\n",                               # a parameter
    "def f(x):\n    import numpy as math\n    return math.sin(x)\n",           # an import
    "def f(x):\n    global math\n    math = np\n    return math.sin(x)\n",     # rebound by the function
])
def test_names_bound_in_the_function_are_never_resolved(src):
    got, _, _ = _calls(src, {"math": math, "np": np})
    assert not any(got.values())


def test_captured_names_and_shadowed_builtins_are_not_resolved():
    got, _, _ = _calls("def f(x):\n    return math.sin(x) + len(x)\n", {"math": math, "len": lambda v: v},
                       freevars=("math",))
    assert got == {"math.sin(x)": False, "len(x)": False}


def test_fresh_results_leave_the_argument_group():
    _, fdef, fresh = _calls("def f(x):\n    v = x\n    a = math.sin(x)\n    b = helper(x)\n    return a\n",
                            {"math": math, "helper": lambda v: v})
    groups = view_groups(fdef, fresh)
    assert groups["x"] == {"x", "v", "b"}
    assert "a" not in groups


def _fill(out, v):
    out[0] = v * v  # changes the caller's array in place
    return out


def test_in_place_changes_through_views_still_follow(tmp_path):
    """A ufunc writing into its output argument, and a helper changing a view in place, next to fresh
    calls: the views still get their derivatives (closed forms)."""
    def f(x):
        z = np.zeros(2) * x
        w = z[:1]                          # a view of z
        s = math.sin(x)                    # fresh
        np.multiply(z, x, out=z)           # into z (not fresh: has out=)
        _fill(w, s)                        # through the view: z[0] = sin(x)^2
        return z[0] * x + np.sin(x) * z[1]
    x = 0.7
    expected = 2 * math.sin(x) * math.cos(x) * x + math.sin(x) ** 2
    assert gradient(f, x)[0] == pytest.approx(expected, rel=1e-12)
    assert derivative(f, x) == pytest.approx(expected, rel=1e-12)


def _long_function(tmp_path, n):
    lines = ["import math", "", "def f(x):", "    v0 = x"]
    lines += [f"    v{i} = v{i - 1} * math.sin(x) + x" for i in range(1, n)]
    lines += [f"    return v{n - 1}"]
    path = tmp_path / f"long_{n}.py"
    path.write_text("\n".join(lines) + "\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["f"]


def test_a_300_line_function(tmp_path):
    """v_i = v_{i-1} sin x + x, v_0 = x: its derivative by the recurrence d_i = d_{i-1} s + v_{i-1} c + 1."""
    f = _long_function(tmp_path, 300)
    x = 0.3
    s, c = math.sin(x), math.cos(x)
    v, d = x, 1.0
    for _ in range(1, 300):
        v, d = v * s + x, d * s + v * c + 1
    assert f(x) == pytest.approx(v, rel=1e-12)
    assert gradient(f, x)[0] == pytest.approx(d, rel=1e-12)
    assert derivative(f, x) == pytest.approx(d, rel=1e-12)
