"""Soak (issue 17): several threads, each running many gradients (and derivatives, Hessians) inside
debugging contexts of its own, every result checked against its closed form; bounded in time."""

from __future__ import annotations

import math
import sys
import threading
import time

import numpy as np

from contexts import derivative, gradient, hessian
from contexts.debug import CountContext, TraceContext

SECONDS = 3.0
THREADS = 4


def _poly(x, n):
    """sum_{k=1..n} x^k / k, by recursion: derivative sum_{k=1..n} x^(k-1)."""
    return 0.0 if n == 0 else _poly(x, n - 1) + x ** n / n


def _arrays(v, a):
    return np.sum(np.sin(v) * a) + np.dot(v, v)


CASES = [
    ("sin*x", lambda x: math.sin(x) * x, lambda x: math.cos(x) * x + math.sin(x),
     lambda x: 2 * math.cos(x) - x * math.sin(x)),
    ("exp(x^2)", lambda x: math.exp(x * x), lambda x: 2 * x * math.exp(x * x),
     lambda x: (2 + 4 * x * x) * math.exp(x * x)),
    ("poly(40)", lambda x: _poly(x, 40), lambda x: sum(x ** (k - 1) for k in range(1, 41)),
     lambda x: sum((k - 1) * x ** (k - 2) for k in range(2, 41))),
]


def _worker(seed: int, deadline: float, errors: list, counts: list) -> None:
    rng = np.random.default_rng(seed)
    done = 0
    try:
        while time.perf_counter() < deadline:
            x = float(rng.uniform(-0.9, 0.9))
            name, f, df, d2f = CASES[done % len(CASES)]
            outer = TraceContext() if done % 2 else CountContext()
            with outer:  # nested contexts around the differentiated calls, per thread
                with CountContext():
                    g = gradient(f, x)[0]
                d = derivative(f, x)
                h = hessian(f, x) if done % 5 == 0 else d2f(x)
                a = rng.normal(size=3)
                v = rng.normal(size=3)
                gv = gradient(_arrays, v, a)
            for got, want, what in ((g, df(x), "gradient"), (d, df(x), "derivative"), (h, d2f(x), "hessian")):
                if abs(got - want) > 1e-9 * max(1.0, abs(want)):
                    errors.append((name, what, x, got, want))
            if not np.allclose(gv[0], np.cos(v) * a + 2 * v, rtol=1e-12, atol=1e-12) or \
                    not np.allclose(gv[1], np.sin(v), rtol=1e-12, atol=1e-12):
                errors.append(("arrays", x))
            done += 1
    except BaseException as e:  # reported by the main thread
        errors.append(repr(e))
    counts.append(done)


def test_threads_with_nested_contexts_agree_with_closed_forms():
    limit = sys.getrecursionlimit()
    errors: list = []
    counts: list = []
    deadline = time.perf_counter() + SECONDS
    threads = [threading.Thread(target=_worker, args=(seed, deadline, errors, counts)) for seed in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:5]
    assert len(counts) == THREADS and all(c > 0 for c in counts)
    assert sys.getrecursionlimit() == limit
    import overdub
    assert overdub.current() is None


def test_threads_building_twins_while_the_collector_runs(tmp_path):
    """Twins built in several threads at once while garbage collections run Python callbacks: CPython
    before 3.12.1 shares the AST converters' depth counter between threads ("SystemError: AST
    constructor recursion depth mismatch"), so every conversion is serialised (overdub.source.AST_LOCK)."""
    import gc
    import weakref

    class Junk:
        pass

    def callback(ref):
        sum(range(20))  # Python code run by the collector, letting another thread in

    def make(k):
        path = tmp_path / f"twin_{k}.py"
        path.write_text(f"import math\n\ndef f_{k}(x):\n    y = x * {k + 1}.0\n"
                        + "".join(f"    y = y * math.sin(x) + x * {j}.0\n" for j in range(12))
                        + "    return y\n")
        namespace = {}
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        return namespace[f"f_{k}"]

    def closed(k, x):
        y, d = x * (k + 1), float(k + 1)
        for j in range(12):
            y, d = y * math.sin(x) + x * j, d * math.sin(x) + y * math.cos(x) + j
        return d

    errors: list = []

    def worker(first):
        try:
            for k in range(first, first + 12):
                keep = []
                for _ in range(100):
                    j = Junk()
                    j.self = j
                    keep.append(weakref.ref(j, callback))
                del j
                f = make(k)
                for got in (gradient(f, 0.4)[0], derivative(f, 0.4)):
                    if abs(got - closed(k, 0.4)) > 1e-9 * max(1.0, abs(closed(k, 0.4))):
                        errors.append((k, got))
        except BaseException as e:
            errors.append(repr(e))

    thresholds, interval = gc.get_threshold(), sys.getswitchinterval()
    gc.set_threshold(50, 1, 1)
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=worker, args=(100 * i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        gc.set_threshold(*thresholds)
        sys.setswitchinterval(interval)
    assert not errors, errors[:5]
