"""Transform time: the first call of `gradient`, `derivative` and `jacobian_sparsity` on a generated
straight-line function of 100, 250, 500 and 1,000 lines (`v{i} = v{i-1} * math.sin(x) + x`), each call on
a function just written to its own file (its source parsed, its twin built, nothing cached). Issue 17:
quadratic in length before (500 lines: gradient 5.4 s, derivative 4.3 s); aim: at most 1 s at 500 lines
for `gradient` and `derivative`, time linear in length (reached: perf/README.md, "Transform time").

    python perf/bench_transform.py --quick            # a table for 250, 500, 1000 lines (--long: and 100)
    python perf/bench_transform.py -o transform.json  # pyperf
    python perf/run.py --only bench_transform         # with the other suites (perf/run.py calls run())
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `contexts` importable from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from contexts import derivative, gradient, jacobian_sparsity  # noqa: E402

LENGTHS = (100, 250, 500, 1000)
QUICK_LENGTHS = (100, 250)
_DIR = tempfile.mkdtemp(prefix="overdub_bench_transform_")
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)
_serial = itertools.count()


def straight_line(n: int):
    """A new function of n assignments, from a file of its own (so its source exists)."""
    k = next(_serial)  # in the name too: no cache may take it for an earlier one
    lines = ["import math", "", f"def f_{k}(x):", "    v0 = x"]
    lines += [f"    v{i} = v{i - 1} * math.sin(x) + x" for i in range(1, n)]
    lines += [f"    return v{n - 1}"]
    path = os.path.join(_DIR, f"straight_{n}_{k}.py")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    namespace: dict = {}
    exec(compile("\n".join(lines) + "\n", path, "exec"), namespace)
    return namespace[f"f_{k}"]


MODES = {
    "gradient": lambda f: gradient(f, 0.3),
    "derivative": lambda f: derivative(f, 0.3),
    "jacobian_sparsity": lambda f: jacobian_sparsity(lambda v: np.array([f(v[0])]), np.ones(1)),
}


def first_call_time(loops: int, mode: str, n: int) -> float:
    """Seconds for `loops` first calls, each on a new function."""
    elapsed = 0.0
    for _ in range(loops):
        f = straight_line(n)
        start = time.perf_counter()
        MODES[mode](f)
        elapsed += time.perf_counter() - start
    return elapsed


def run(runner) -> None:
    """Register every benchmark with a pyperf-like runner (`bench_time_func`)."""
    quick = bool(getattr(getattr(runner, "args", None), "quick", False))
    MODES["gradient"](straight_line(5))  # imports and rules loaded outside the timings
    for n in QUICK_LENGTHS if quick else LENGTHS:
        for mode in MODES:
            runner.bench_time_func(f"transform/{mode}_{n}", first_call_time, mode, n)


TABLE_LENGTHS = (250, 500, 1000)


def _first_call(mode: str, n: int) -> tuple[float, float]:
    """(wall, CPU) seconds of one first call on a new function: the CPU time of this process is the
    measure that holds on a machine shared with other work."""
    f = straight_line(n)
    wall, cpu = time.perf_counter(), time.process_time()
    MODES[mode](f)
    return time.perf_counter() - wall, time.process_time() - cpu


def _quick() -> None:
    """A table of first-call times (the best of two, each on a new function) by length, wall and CPU, and
    the growth from 500 to 1,000 lines (2.0x: linear in length)."""
    MODES["gradient"](straight_line(5))
    lengths = (100,) + TABLE_LENGTHS if "--long" in sys.argv else TABLE_LENGTHS
    print(f"{'lines':>6s}" + "".join(f"{m + ' wall/CPU':>28s}" for m in MODES))
    rows = {}
    for n in lengths:
        rows[n] = [min(_first_call(m, n) for _ in range(2)) for m in MODES]
        print(f"{n:6d}" + "".join(f"{w:17.3f}s /{c:6.3f}s" for w, c in rows[n]), flush=True)
    print(f"{'x2':>6s}" + "".join(f"{b[0] / a[0]:17.2f}x /{b[1] / a[1]:6.2f}x" for a, b in zip(rows[500], rows[1000])))


if __name__ == "__main__":
    if "--quick" in sys.argv:
        _quick()
    else:
        import pyperf
        run(pyperf.Runner())
