"""Memory of reverse mode: bytes recorded per scalar operation, and peak memory against hand-written gradients.

    python perf/memory.py            # writes perf/MEMORY.md and prints it
    python perf/memory.py --quick    # smaller sizes (the test suite runs this once)

Measured with tracemalloc (Python and numpy allocations both go through it): the peak of one gradient call,
minus what was allocated before it.
"""

from __future__ import annotations

import argparse
import gc
import pathlib
import sys
import tracemalloc

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from contexts import gradient  # noqa: E402
from contexts.ad.runtime import call  # noqa: E402
from perf.workloads.arrays import logistic_regression_workload, mlp_workload  # noqa: E402


def scalar_loop(x, n):
    s = 0.0
    i = 0
    while i < n:
        s = s + x * 1.0001
        i += 1
    return s


def peak_bytes(fn, *args) -> int:
    """Peak bytes allocated while fn(*args) runs (what stays allocated afterwards included)."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = fn(*args)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    del result
    return peak


def tape_bytes_per_operation(n: int) -> float:
    """Bytes the recorded forward pass of `scalar_loop` holds per scalar operation (two per iteration)."""
    def record():
        return call(-2, scalar_loop, 1.0, n)
    return peak_bytes(record) / (2 * n)


def rows(quick: bool):
    n = 10_000 if quick else 1_000_000
    yield f"| scalar loop, {2 * n:,} operations: tape per operation | {tape_bytes_per_operation(n):.1f} B | |"
    workloads = ([logistic_regression_workload(3, 10), mlp_workload(20, 8, 3, 4)] if quick else
                 [logistic_regression_workload(), mlp_workload(batch=1), mlp_workload(batch=64)])
    for w in workloads:
        f = w.make(np, **w.data)
        gradient(f, *w.params)  # build the twins first: their code is not the gradient's memory
        ours = peak_bytes(gradient, f, *w.params)
        hand = peak_bytes(w.hand_gradient, *w.params)
        yield f"| {w.name} {w.sizes}: peak, overdub / hand-written | {ours:,} B / {hand:,} B | {ours / hand:.2f}x |"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=str(HERE / "MEMORY.md"))
    args = parser.parse_args(argv)
    lines = ["# Reverse-mode memory", "",
             "Peak bytes of one gradient (tracemalloc), and what the tape holds per recorded scalar operation.",
             "", "| measurement | bytes | ratio |", "|---|---:|---:|", *rows(args.quick)]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        pathlib.Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
