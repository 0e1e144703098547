#!/usr/bin/env python
"""Benchmark overdub against hand-written gradients and its peers; write perf/RESULTS.md and perf/ratios.png.

    python perf/run.py              # full run: pyperf worker processes, methods interleaved, ~9 min
    python perf/run.py --quick      # smoke run in one process: small sizes, few loops, ~15 s
    python perf/run.py --only loop,mlp64 --rounds 3

Each method is checked against the hand-written gradient before it is timed; a peer that is not
installed is reported "missing", one that raises "failed: <reason>". The full run starts one pyperf
master per round, which runs one worker process per benchmark; the order of the methods of each
workload rotates from round to round, so that drift on the machine hits all of them alike.
Suites written by others (`perf/bench_core.py`, ...), each exposing `run(runner)`, are run after.
See perf/README.md.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# One thread for every method, set before numpy is imported: here, and in every pyperf worker (which
# re-runs this file with pyperf's minimal environment).
ONE_THREAD = {
    "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "BLIS_NUM_THREADS": "1", "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
    "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "2",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}
os.environ.update(ONE_THREAD)
RUN_PY = Path(__file__).resolve()
sys.path.insert(0, str(RUN_PY.parent.parent))

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402

from perf.report import Results, update_readme, write_report  # noqa: E402
from perf.workloads import make_workloads  # noqa: E402
from perf.workloads.methods import METHODS, check, prepare  # noqa: E402

SUITES = ("bench_core", "bench_forward", "bench_sparsity", "bench_transform")  # perf/<suite>.py, each with run(runner)
PERF_DIR = RUN_PY.parent


def limit_threads() -> None:
    """Pin BLAS/OpenMP pools already loaded (numpy's OpenBLAS) to one thread, for this process's life."""
    import threadpoolctl

    threadpoolctl.threadpool_limits(limits=1)


def timing_metadata() -> dict[str, str]:
    """What the timing process actually runs on: the BLAS library, kernel and threads (threadpoolctl)."""
    import numpy  # noqa: F401  (loads the BLAS library threadpoolctl reports)
    import threadpoolctl

    pools = [f"{p.get('internal_api')} {p.get('version')} {p.get('architecture', '')} kernel, "
             f"{p.get('num_threads')} thread(s)" for p in threadpoolctl.threadpool_info()
             if p.get("user_api") == "blas"]
    env = ", ".join(f"{k}={os.environ.get(k, 'unset')}" for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"))
    return {"blas": "; ".join(pools) or "none found", "openblas_env": env}


# -- the checks, and how many calls make one timed value ---------------------------------------------

def calibrate(call, target: float) -> int:
    """Number of calls that take about `target` seconds (at least 1)."""
    count, start = 0, time.perf_counter()
    while count < 3 or time.perf_counter() - start < min(target, 0.02):
        call()
        count += 1
    per_call = (time.perf_counter() - start) / count
    return max(1, round(target / per_call))


def check_all(workloads, results: Results, target: float) -> list[dict]:
    """Check every method of every workload; return the plan: the ones to time, with their inner loops."""
    plan = []
    for w in workloads:
        for method in METHODS:
            name = f"{w.name}/{method}"
            checked = check(method, w)
            results.status[name], results.details[name] = checked.status, checked.detail
            print(f"  {name:20s} {checked.status}", flush=True)
            if checked.status == "ok":
                plan.append({"workload": w.name, "method": method, "prepared": checked.prepared,
                             "inner": calibrate(checked.prepared.call, target)})
    return plan


def rotated(plan: list[dict], shift: int) -> list[dict]:
    """The plan with the methods of each workload rotated by `shift` (workloads keep their order)."""
    out = []
    for w in dict.fromkeys(e["workload"] for e in plan):
        group = [e for e in plan if e["workload"] == w]
        k = shift % len(group)
        out += group[k:] + group[:k]
    return out


# -- quick: one process -------------------------------------------------------------------------------

def measure_in_process(plan: list[dict], results: Results, values: int) -> None:
    """Time the plan here: one warm-up round, then `values` rounds, methods of a workload alternating."""
    for round_ in range(values + 1):
        for entry in rotated(plan, round_):
            call, inner = entry["prepared"].call, entry["inner"]
            start = time.perf_counter()
            for _ in range(inner):
                call()
            if round_:
                name = f"{entry['workload']}/{entry['method']}"
                results.values.setdefault(name, []).append((time.perf_counter() - start) / inner)
    results.metadata.update(timing_metadata())


class QuickRunner:
    """The part of `pyperf.Runner` a suite's `run(runner)` uses, timed in this process (quick mode)."""

    def __init__(self, suite: str, results: Results, target: float = 0.002, values: int = 3):
        self.suite, self.results, self.target, self.nvalues = suite, results, target, values
        self.metadata: dict = {}
        self.args = types.SimpleNamespace(quick=True, fast=True, rigorous=False, worker=False)

    def bench_time_func(self, name, time_func, *args, inner_loops=None, metadata=None):
        loops = 1
        while time_func(loops, *args) < self.target and loops < 1 << 20:
            loops *= 2
        per = loops * (inner_loops or 1)
        self.results.values[f"{self.suite}:{name}"] = [time_func(loops, *args) / per
                                                       for _ in range(self.nvalues)]

    def bench_func(self, name, func, *args, inner_loops=None, metadata=None):
        def time_func(loops):
            start = time.perf_counter()
            for _ in range(loops):
                func(*args)
            return time.perf_counter() - start

        self.bench_time_func(name, time_func, inner_loops=inner_loops)


# -- full: pyperf processes ---------------------------------------------------------------------------

def _pyperf_cmd(suite: str, out: Path, *extra: str) -> list[str]:
    return [sys.executable, str(RUN_PY), "--suite", suite, "--quiet", "--append", str(out), *extra]


def _run_child(cmd: list[str], timeout: float) -> str:
    """Run a pyperf master; '' if it succeeded, else the end of its output."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timed out after {timeout:.0f} s"
    if proc.returncode == 0:
        return ""
    tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
    return f"exit code {proc.returncode}: " + " / ".join(tail)


def _load(path: Path, results: Results, prefix: str = "") -> None:
    """Add the values (seconds per call) of every benchmark in pyperf file `path` to `results`."""
    import pyperf

    if not path.exists():
        return
    for bench in pyperf.BenchmarkSuite.load(str(path)):
        results.values[prefix + bench.get_name()] = list(bench.get_values())
        meta = bench.get_metadata()
        for key in ("blas", "openblas_env"):
            if key in meta:
                results.metadata[key] = str(meta[key])


def measure_with_pyperf(plan: list[dict], results: Results, args, raw_dir: Path) -> None:
    """`args.rounds` pyperf masters, one worker per benchmark each, methods rotating between rounds."""
    out = raw_dir / "results.json"
    with tempfile.TemporaryDirectory(prefix="overdub-perf-") as tmp:
        for r in range(args.rounds):
            plan_file = Path(tmp) / f"plan{r}.json"
            entries = [{k: e[k] for k in ("workload", "method", "inner")} for e in rotated(plan, r)]
            plan_file.write_text(json.dumps({"quick": args.quick, "benchmarks": entries}))
            start = time.perf_counter()
            error = _run_child(_pyperf_cmd("workloads", out, "--plan", str(plan_file), "--processes", "1",
                                           "--values", str(args.values), "--warmups", "1", "--loops", "1"),
                               timeout=1800)
            print(f"  round {r + 1}/{args.rounds}: {time.perf_counter() - start:.0f} s"
                  + (f", FAILED: {error}" if error else ""), flush=True)
    _load(out, results)
    for e in plan:
        name = f"{e['workload']}/{e['method']}"
        if not results.values.get(name):
            results.status[name] = "failed: no values from the pyperf workers (see pyperf's output)"


# -- suites written by others -------------------------------------------------------------------------

def run_suites(names, results: Results, args, raw_dir: Path) -> None:
    """Run each suite `perf/<name>.py` (its `run(runner)`): in this process (quick) or with pyperf."""
    for suite in names:
        if not (PERF_DIR / f"{suite}.py").exists():
            results.suites[suite] = f"missing (perf/{suite}.py does not exist yet)"
            continue
        print(f"  suite {suite}", flush=True)
        if args.quick:
            try:
                importlib.import_module(f"perf.{suite}").run(QuickRunner(suite, results))
                results.suites[suite] = "ok"
            except Exception as e:  # another helper's suite failing is reported, not fatal
                results.suites[suite] = f"failed: {type(e).__name__}: {e}"
            continue
        out = raw_dir / f"results-{suite}.json"
        error = _run_child(_pyperf_cmd(suite, out, "--processes", str(min(args.rounds, 3)),
                                       "--values", str(args.values)), timeout=1800)
        _load(out, results, prefix=f"{suite}:")
        results.suites[suite] = f"failed: {error}" if error else "ok"


# -- inside a pyperf master or worker -----------------------------------------------------------------

class _Timer:
    """pyperf time function for one method: builds it on first use (in the worker only), then times it."""

    def __init__(self, workload, method: str, inner: int):
        self.workload, self.method, self.inner, self.call = workload, method, inner, None

    def __call__(self, loops: int) -> float:
        if self.call is None:
            self.call = prepare(self.method, self.workload).call
            self.call()
        call, n = self.call, loops * self.inner
        start = time.perf_counter()
        for _ in range(n):
            call()
        return time.perf_counter() - start


def _forward_args(cmd: list[str], args) -> None:
    cmd += ["--suite", args.suite] + (["--plan", args.plan] if args.plan else [])


def pyperf_main(argv: list[str]) -> None:
    """Entry point of the pyperf masters and workers started by `measure_with_pyperf` / `run_suites`."""
    import pyperf

    runner = pyperf.Runner(add_cmdline_args=_forward_args)
    runner.argparser.add_argument("--suite", required=True)
    runner.argparser.add_argument("--plan")
    args = runner.parse_args(argv)
    limit_threads()
    runner.metadata.update(timing_metadata())
    if args.suite != "workloads":
        importlib.import_module(f"perf.{args.suite}").run(runner)
        return
    plan = json.loads(Path(args.plan).read_text())
    workloads = {w.name: w for w in make_workloads(plan["quick"])}
    for e in plan["benchmarks"]:
        runner.bench_time_func(f"{e['workload']}/{e['method']}",
                               _Timer(workloads[e["workload"]], e["method"], e["inner"]),
                               inner_loops=e["inner"])


# -- the command ------------------------------------------------------------------------------------

def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="smoke run: small sizes, few loops, one process")
    p.add_argument("--rounds", type=int, default=5, help="pyperf worker processes per benchmark (full run)")
    p.add_argument("--values", type=int, default=None, help="timed values per process (default 3; quick 5)")
    p.add_argument("--only", default="", help="comma-separated workloads and suites to run (default: all)")
    p.add_argument("--out-dir", type=Path, default=None,
                   help="where RESULTS.md, ratios.png and the raw JSON go (default: perf/ for a complete "
                        "full run; for --quick and --only runs, overdub-perf in the temporary directory, "
                        "so that they never overwrite the committed results)")
    p.add_argument("--report-only", action="store_true",
                   help="measure nothing: write the report again from OUT_DIR/results-run.json")
    args = p.parse_args(argv)
    args.values = args.values or (5 if args.quick else 3)
    if args.out_dir is None:
        partial = args.quick or args.only
        args.out_dir = Path(tempfile.gettempdir()) / "overdub-perf" if partial else PERF_DIR
    return args


def save(results: Results, path: Path) -> None:
    """Everything measured, as JSON, so that `--report-only` can write the report again."""
    state = {k: v for k, v in vars(results).items() if k != "workloads"}
    state["workloads"] = [w.name for w in results.workloads]
    path.write_text(json.dumps(state, indent=1))


def load(path: Path) -> Results:
    """The inverse of `save`."""
    state = json.loads(path.read_text())
    names = state.pop("workloads")
    results = Results(**state)
    results.workloads = [w for w in make_workloads(results.quick) if w.name in names]
    return results


def finish(results: Results, args) -> None:
    """Write RESULTS.md and ratios.png (and the README's latest numbers, for a full run into perf/)."""
    print(write_report(results, args.out_dir))
    complete = not results.quick and {w.name for w in results.workloads} == {w.name for w in make_workloads()}
    if complete and args.out_dir.resolve() == PERF_DIR:
        update_readme(results, PERF_DIR / "README.md")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--suite" in argv or "--worker" in argv:
        pyperf_main(argv)
        return 0
    args = parse_args(argv)
    if args.report_only:
        finish(load(args.out_dir / "results-run.json"), args)
        return 0
    only = {s for s in args.only.split(",") if s}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    limit_threads()
    workloads = [w for w in make_workloads(args.quick) if not only or w.name in only]
    results = Results(quick=args.quick, workloads=workloads,
                      command=shlex.join(["python", "perf/run.py", *argv]))
    print("checking every method against the hand-written gradient:", flush=True)
    plan = check_all(workloads, results, target=0.001 if args.quick else 0.05)
    print("timing:", flush=True)
    with tempfile.TemporaryDirectory(prefix="overdub-perf-raw-") as raw:
        if args.quick:
            measure_in_process(plan, results, args.values)
        else:
            measure_with_pyperf(plan, results, args, Path(raw))
        run_suites([s for s in SUITES if not only or s in only], results, args, Path(raw))
        for f in Path(raw).glob("*.json"):  # pyperf's own files, for `python -m pyperf stats`
            shutil.copy(f, args.out_dir / f.name)
    save(results, args.out_dir / "results-run.json")
    finish(results, args)
    print(f"written: {args.out_dir / 'RESULTS.md'}, {args.out_dir / 'ratios.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
