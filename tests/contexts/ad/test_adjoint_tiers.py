"""Two tiers of adjoints (contexts.ad.runtime, COMPACT_LINES): a long function first gets a compact adjoint
(the general rules only, half the build and compile time), and after TIER_UP_AFTER reverse passes the full
one with inlined fast paths. Both must give the same, right, gradients (central differences), the swap
must happen only between twins recording the same tapes, and threads must see one adjoint or the other,
never a mix."""

import atexit
import math
import os
import shutil
import tempfile
import threading

import numpy as np
import pytest

import contexts.ad.runtime as runtime
from contexts import gradient, hessian
from tests import fd

_DIR = tempfile.mkdtemp(prefix="overdub_tiers_")
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)  # the files live until the tests end, then go
_count = iter(range(10**6))


def _from_file(lines: list[str], name: str):
    """A function defined in a file of its own (its source exists), new each time (no cache has it)."""
    k = next(_count)
    path = os.path.join(_DIR, f"{name}_{k}.py")
    text = "\n".join(["import math", "import numpy as np", "", *lines]) + "\n"
    with open(path, "w") as fh:
        fh.write(text)
    namespace: dict = {}
    exec(compile(text, path, "exec"), namespace)
    return namespace[name]


def long_scalar(n: int = 200):
    """n lines of float arithmetic: sums, differences, products, quotients, negation, a call."""
    body = ["def long_scalar(x, y):", "    v = x"]
    ops = ["    v = v * math.sin(y) + x", "    v = -v / (1.5 + y * y) - x * 0.25", "    v = v - y * v * 0.01",
           "    v = (v + 2.0) * 0.5 - math.cos(v) * 0.1"]
    body += [ops[i % len(ops)] for i in range(n)]
    body += ["    return v"]
    return _from_file(body, "long_scalar")


def long_arrays(n: int = 200):
    """n lines on float64 arrays and float64 scalars (`a[0]`), broadcasting against scalars and rows."""
    body = ["def long_arrays(a, b):", "    v = a", "    s = b[0]"]
    ops = ["    v = v * b + a", "    v = -v * 0.5 + np.tanh(v)", "    s = s * v[1] + b[2] * 0.1",
           "    v = v - v.mean() * s * 0.01", "    v = v / (2.0 + b * b)"]
    body += [ops[i % len(ops)] for i in range(n)]
    body += ["    return (v * v).sum() + s"]
    return _from_file(body, "long_arrays")


X, Y = 0.3, 0.7
A = np.array([0.3, -0.2, 0.5, 0.1])
B = np.array([0.4, 0.9, -0.3, 0.2])


def _swaps(monkeypatch) -> list:
    """Record each tier-up: whether it took the full adjoint."""
    seen = []
    tier_up = runtime._tier_up

    def recording(info, fn, numbers, requested):
        before = info.rev_code
        tier_up(info, fn, numbers, requested)
        seen.append(info.rev_code is not before)
    monkeypatch.setattr(runtime, "_tier_up", recording)
    return seen


@pytest.mark.parametrize("make, args", [(long_scalar, (X, Y)), (long_arrays, (A, B))], ids=["scalar", "arrays"])
def test_compact_then_full_adjoint_right(make, args, monkeypatch):
    swaps = _swaps(monkeypatch)
    f = make()
    expected = fd.gradient(f, *args)
    for call in range(runtime.TIER_UP_AFTER + 3):  # compact, then (from the TIER_UP_AFTER-th) full
        got = gradient(f, *args)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-9, err_msg=f"call {call}")
    assert swaps == [True]  # one tier-up, which took the full adjoint


def test_short_functions_get_the_full_adjoint_at_once(monkeypatch):
    swaps = _swaps(monkeypatch)
    f = long_scalar(20)
    for _ in range(runtime.TIER_UP_AFTER + 2):
        np.testing.assert_allclose(gradient(f, X, Y), fd.gradient(f, X, Y), rtol=1e-6)
    assert swaps == []


def small(x, k):
    y = -x * k + x / (1.0 + x * x)
    return y * y - (y - 0.5) * x


def small_arrays(a, b):
    v = a * b - a / (1.0 + b * b) + a[0] * b
    return (-v * v).sum() + v[1] * a[2]


def small_complex(x):
    z = complex(x, 0.5) * (1.0 - 2.0j)
    return abs(z * z - z)


@pytest.mark.parametrize("f, args", [(small, (0.4, 3)), (small, (0.4, 2.5)), (small_arrays, (A, B)),
                                     (small_arrays, (A.astype(np.float32), B)), (small_complex, (0.3,))],
                         ids=["floats_int", "floats", "arrays", "float32", "complex"])
def test_compact_adjoint_of_any_function(f, args, monkeypatch):
    """The compact adjoint (the general rules only) on values of every kind the fast paths are for, and
    some they are not for (ints, float32, complex): the gradient is the one central differences give."""
    monkeypatch.setattr(runtime, "COMPACT_LINES", -1)
    monkeypatch.setattr(runtime, "TIER_UP_AFTER", 10**9)
    got = gradient(f, *args)
    expected = fd.gradient(f, *args)
    for g, e in zip(got, expected):
        if e is not None:
            np.testing.assert_allclose(g, e, rtol=2e-3 if np.asarray(g).dtype == np.float32 else 1e-6, atol=1e-7)


def test_hessian_through_a_compact_adjoint(monkeypatch):
    monkeypatch.setattr(runtime, "COMPACT_LINES", -1)

    def f(v):
        return (v[0] * v[1] - v[1] / (2.0 + v[0] * v[0])) * math.exp(-v[0])
    v = np.array([0.3, 0.8])
    np.testing.assert_allclose(hessian(f, v), fd.hessian(f, v), rtol=1e-4, atol=1e-6)


def test_a_rebuilt_twin_recording_other_tapes_keeps_the_compact_adjoint(monkeypatch):
    """If the twin built again for the full adjoint did not compile to the same forward code (its tapes
    would not be the ones the compact forward recorded), the compact adjoint stays."""
    swaps = _swaps(monkeypatch)
    build = runtime._build

    def other_forward(fn, active, **kw):
        info = build(fn, active, **kw)
        if kw.get("compact") is False:  # (the tier-up's build)
            info.fwd_code = info.fwd_code.replace(co_name="other")
        return info
    monkeypatch.setattr(runtime, "_build", other_forward)
    f = long_scalar()
    expected = fd.gradient(f, X, Y)
    for _ in range(runtime.TIER_UP_AFTER + 2):
        np.testing.assert_allclose(gradient(f, X, Y), expected, rtol=1e-6)
    assert swaps == [False]


def test_threads_through_the_tier_up():
    f = long_arrays()
    expected = fd.gradient(f, A, B)
    errors = []

    def work():
        try:
            for _ in range(runtime.TIER_UP_AFTER):
                for g, e in zip(gradient(f, A, B), expected):
                    np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-9)
        except Exception as e:  # (reported below: an assertion in a thread would be lost)
            errors.append(e)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


def test_a_closure_tiers_up_too():
    """`gradient(f, x)` of a closure builds its twin without its cells' gradients: built again so."""
    swaps = []
    scale = 0.9
    body = ["def make(scale):", "    def closure(x):", "        v = x"]
    body += ["        v = v * scale + math.sin(v) * 0.1" for _ in range(160)]
    body += ["        return v", "    return closure"]
    f = _from_file(body, "make")(scale)
    tier_up = runtime._tier_up

    def recording(info, fn, numbers, requested):
        before = info.rev_code
        tier_up(info, fn, numbers, requested)
        swaps.append(info.rev_code is not before)
    runtime._tier_up, saved = recording, runtime._tier_up
    try:
        expected = fd.gradient(f, X)
        for _ in range(runtime.TIER_UP_AFTER + 2):
            np.testing.assert_allclose(gradient(f, X), expected, rtol=1e-6)
    finally:
        runtime._tier_up = saved
    assert swaps == [True]
