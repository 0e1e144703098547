#!/usr/bin/env python
"""Run every function of the third-party suite (tests/thirdparty/cases.py) and print a markdown table:
package, function, reverse and forward outcome (right / refused: the class / WRONG), and the time of
reverse mode's gradient (or Jacobian) over the plain call's (timeit, best of 5), with the median ratio.

    python perf/thirdparty.py              # the table README's "Real libraries" shows
    python perf/thirdparty.py --only scipy # cases whose package or name contains the text
    python perf/thirdparty.py --isolated   # each package in a process of its own (the README's times)

Not a test: the suite (`python -m pytest tests/thirdparty`) checks the same outcomes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import argparse  # noqa: E402
import importlib  # noqa: E402
import statistics  # noqa: E402
import timeit  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from tests.thirdparty.cases import CASES, CHECKS, expected  # noqa: E402


def outcome(case, mode, f, x) -> str:
    try:
        CHECKS[mode](case, f, x)
    except AssertionError as e:
        return "**WRONG**: " + str(e).splitlines()[0][:60]
    except Exception as e:  # noqa: BLE001 - every refusal is reported by its class
        want = expected(case, mode)
        if want is not None and isinstance(e, want.error):
            return f"refused: {want.reason}"
        return f"refused: {type(e).__name__} (unexpected)"
    return "right"


def best(fn, number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def ratio(f, x) -> float:
    from contexts import gradient, jacobian
    from contexts.ad.runtime import TIER_UP_AFTER
    rev = gradient if np.ndim(f(x)) == 0 else jacobian
    # warmed up past the adjoints' second tier (a long function's full adjoint is built at its TIER_UP_AFTER-th
    # reverse pass: timed inside the loop, that build made small functions' ratios 10x what they are)
    start = timeit.default_timer()
    for _ in range(TIER_UP_AFTER + 2):
        rev(f, x)
        if timeit.default_timer() - start > 5.0:
            break
    plain = best(lambda: f(x), 20)
    number = max(1, min(20, int(0.05 / max(plain * 30, 1e-6))))
    return best(lambda: rev(f, x), number) / plain


def _isolated(only: str) -> None:
    """Each package's cases in a process of their own (`--package`), the rows and counts gathered here: the
    cases before a package's in one process changed its small functions' times (chemicals' iapws97_rho: 24x
    alone, 453x after the 200 cases before it)."""
    import json
    import subprocess
    rows, ratios, packages = [], [], set()
    counts = {m: {"right": 0, "refused": 0, "wrong": 0} for m in CHECKS}
    for package in dict.fromkeys(c.package for c in CASES if only in c.id):
        out = subprocess.run([sys.executable, __file__, "--package", package, "--only", only, "--json"],
                             capture_output=True, text=True, check=True).stdout
        part = json.loads(out.strip().splitlines()[-1])
        rows += part["rows"]
        ratios += part["ratios"]
        packages.update(part["packages"])
        for mode in counts:
            for k in counts[mode]:
                counts[mode][k] += part["counts"][mode][k]
    _print(rows, ratios, packages, counts)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="cases whose package or name contains this text")
    ap.add_argument("--isolated", action="store_true", help="each package's cases in a process of their own")
    ap.add_argument("--package", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.isolated:
        return _isolated(args.only)
    rows, ratios, packages = [], [], set()
    counts = {m: {"right": 0, "refused": 0, "wrong": 0} for m in CHECKS}
    for case in CASES:
        if args.only not in case.id or args.package is not None and case.package != args.package:
            continue
        try:
            importlib.import_module(case.package)
        except ImportError:
            rows.append(f"| {case.package} | {case.name} | not installed | | |")
            continue
        packages.add(case.package)
        f, x = case.build()
        cells = []
        for mode in CHECKS:
            out = outcome(case, mode, f, x)
            counts[mode]["right" if out == "right" else "wrong" if "WRONG" in out else "refused"] += 1
            cells.append(out)
        r = ""
        if cells[0] == "right":
            value = ratio(f, x)
            ratios.append(value)
            r = f"{value:.0f}x" if value >= 10 else f"{value:.1f}x"
        rows.append(f"| {case.package} | {case.name} | {cells[0]} | {cells[1]} | {r} |")
    if args.json:
        import json
        print(json.dumps({"rows": rows, "ratios": ratios, "packages": sorted(packages), "counts": counts}))
        return
    _print(rows, ratios, packages, counts)


def _print(rows, ratios, packages, counts) -> None:
    print("| package | function | reverse | forward | gradient / primal time |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    print()
    n = sum(counts["reverse"].values())
    for mode, c in counts.items():
        print(f"- {mode}: {c['right']} right, {c['refused']} refused, {c['wrong']} wrong of {n}")
    print(f"- {len(packages)} packages; median gradient / primal time where reverse mode is right: "
          f"{statistics.median(ratios):.1f}x ({len(ratios)} functions)" if ratios else "- no ratio")


if __name__ == "__main__":
    main()
