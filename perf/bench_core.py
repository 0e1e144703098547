"""The interception core's overhead (`run(runner)`): plain run vs a no-op context, and patching time.

Benchmarks (names as reported, seconds per call):
- `hsv/plain`, `hsv/calls`, `hsv/all`, `hsv/hooks`: `colorsys.rgb_to_hsv` over 10,000 pixels, plainly,
  under a no-op context intercepting calls only, every kind, and calls with a no-op `prehook`
  (which takes the general `ctx.overdub` path). Aim: `calls` at most 3x `plain`.
- `fib20/plain`, `fib20/calls`, `fib20/all`, `fib20/hooks`: recursive fib(20), the same four ways.
- `patch/rgb_to_hsv`, `patch/fifty_lines`: first-call patching of one function (rewrite, compile, make the
  function; its module already parsed), calls only; `patch/fifty_lines-cold` also finds and parses the
  source. Aim: at most 5 ms for a 50-line function.

Run alone: `python perf/bench_core.py` (pyperf), or `python perf/bench_core.py --quick` (medians measured
in this process, with ratios to the plain runs).
"""

from __future__ import annotations

import colorsys
import math
import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `overdub` importable from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import overdub  # noqa: E402
from overdub import cache, source  # noqa: E402

_rng = random.Random(0)
PIXELS = [(_rng.random(), _rng.random(), _rng.random()) for _ in range(10_000)]


def hsv_all(pixels):
    return [colorsys.rgb_to_hsv(r, g, b) for r, g, b in pixels]


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class CallsOnly(overdub.Context):
    """A no-op context intercepting calls: recursion into every pure-Python callee, nothing else."""


class AllKinds(overdub.Context):
    """A no-op context intercepting every kind of operation."""

    intercepts = overdub.KINDS


class Hooked(overdub.Context):
    """A context with a no-op prehook: every call goes through `ctx.overdub`."""

    def prehook(self, site, fn, /, *args, **kwargs):
        pass


def fifty_lines(data, scale=1.0, *, clip=None):
    """A 50-line function of the usual mix: loops, branches, calls, arithmetic, subscripts, attributes."""
    total, count, lo, hi = 0.0, 0, math.inf, -math.inf
    buckets = {}
    for i, value in enumerate(data):
        if value is None:
            continue
        v = float(value) * scale
        if clip is not None and abs(v) > clip:
            v = math.copysign(clip, v)
        total += v
        count += 1
        lo, hi = min(lo, v), max(hi, v)
        key = int(v // 10)
        buckets[key] = buckets.get(key, 0) + 1
    mean = total / count if count else 0.0
    var = 0.0
    for value in data:
        if value is not None:
            d = float(value) * scale - mean
            var += d * d
    var = var / (count - 1) if count > 1 else 0.0
    std = math.sqrt(var)
    ordered = sorted(v for v in data if v is not None)
    if ordered:
        mid = len(ordered) // 2
        median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    else:
        median = 0.0
    skew = 0.0
    if std > 0:
        for value in ordered:
            z = (value * scale - mean) / std
            skew += z ** 3
        skew /= max(count, 1)
    modes = [k for k, n in buckets.items() if n == max(buckets.values())]
    summary = {
        "count": count,
        "mean": round(mean, 6),
        "std": round(std, 6),
        "min": lo,
        "max": hi,
        "median": median,
        "skew": round(skew, 6),
        "modes": sorted(modes),
    }
    if count and hi - lo > 0:
        summary["range"] = hi - lo
        summary["cv"] = std / abs(mean) if mean else math.inf
    else:
        summary["range"] = summary["cv"] = 0.0
    return summary


def _check() -> None:
    """Every way of running gives the plain result (run before timing)."""
    for ctx in (CallsOnly(), AllKinds(), Hooked()):
        assert ctx.run(hsv_all, PIXELS[:50]) == hsv_all(PIXELS[:50])
        assert ctx.run(fib, 15) == fib(15)
        assert ctx.run(fifty_lines, [1, 2, None, 30, -4]) == fifty_lines([1, 2, None, 30, -4])


def patch_time(loops: int, fn, cold: bool = False) -> float:
    """Seconds for `loops` first-call patches of fn (calls only), caches emptied before each."""
    elapsed = 0.0
    for _ in range(loops):
        cache.clear()
        if cold:
            source._source_cache.clear()
            source._module_cache.clear()
        start = time.perf_counter()
        overdub.patch(fn, {"call"})
        elapsed += time.perf_counter() - start
    return elapsed


def cases():
    """(name, function, *args) for every run-time benchmark."""
    out = []
    for label, fn, args in (("hsv", hsv_all, (PIXELS,)), ("fib20", fib, (20,))):
        out.append((f"{label}/plain", fn, *args))
        for mode, ctx in (("calls", CallsOnly()), ("all", AllKinds()), ("hooks", Hooked())):
            out.append((f"{label}/{mode}", ctx.run, fn, *args))
    return out


PATCHES = (("patch/rgb_to_hsv", colorsys.rgb_to_hsv, False), ("patch/fifty_lines", fifty_lines, False),
           ("patch/fifty_lines-cold", fifty_lines, True))


def run(runner) -> None:
    """Register every benchmark with a pyperf-like runner (`bench_func`, `bench_time_func`)."""
    _check()
    for name, fn, *args in cases():
        runner.bench_func(name, fn, *args)
    for name, fn, cold in PATCHES:
        runner.bench_time_func(name, patch_time, fn, cold)


def _median_time(fn, *args, budget: float = 0.2) -> float:
    fn(*args)
    times = []
    for _ in range(5):
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < budget:
            fn(*args)
            n += 1
        times.append((time.perf_counter() - t0) / n)
    return sorted(times)[2]


def _quick() -> None:
    _check()
    plain = {}
    for name, fn, *args in cases():
        t = _median_time(fn, *args)
        label, mode = name.split("/")
        plain.setdefault(label, t)
        print(f"{name:24s} {t * 1e3:10.3f} ms  {t / plain[label]:6.2f}x plain")
    for name, fn, cold in PATCHES:
        t = min(patch_time(20, fn, cold) / 20 for _ in range(3))
        print(f"{name:24s} {t * 1e3:10.3f} ms")


if __name__ == "__main__":
    if "--quick" in sys.argv:
        _quick()
    else:
        import pyperf
        run(pyperf.Runner())
