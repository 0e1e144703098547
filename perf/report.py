"""RESULTS.md and ratios.png from measured times: medians, noise, ratios to primal, hand and peers, aims.

>>> r = Results(quick=True)
>>> r.values["sincos/primal"] = [1e-6, 2e-6, 3e-6]
>>> r.values["sincos/hand"] = [2e-6, 4e-6, 6e-6]
>>> r.ratio("sincos/hand", "sincos/primal")
2.0
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from perf.workloads.methods import METHODS, PEERS

__all__ = ["Results", "AIMS", "format_time", "write_report", "machine_info"]

# (label, benchmark, baseline, kind, bound). "at most": benchmark/baseline <= bound; "at least":
# baseline/benchmark >= bound (how many times faster the benchmark is); "seconds": the benchmark's median
# (no baseline) <= bound. Benchmarks of other suites are named "suite:name".
AIMS = (
    ("loop gradient vs primal (n closed over)", "loop/overdub", "loop/primal", "at most", 8.0),
    ("loop_arg gradient vs primal (n an argument)", "loop_arg/overdub", "loop_arg/primal", "at most", 8.0),
    ("sincos: faster than autograd by", "sincos/overdub", "sincos/autograd", "at least", 15.0),
    ("logsumexp vs its op-by-op floor", "logsumexp/overdub", "logsumexp/floor", "at most", 1.3),
    ("logistic regression vs its op-by-op floor", "logistic/overdub", "logistic/floor", "at most", 1.3),
    ("logsumexp: faster than jax.jit by", "logsumexp/overdub", "logsumexp/jax.jit", "at least", 1.0),
    ("logistic regression: faster than jax.jit by", "logistic/overdub", "logistic/jax.jit", "at least", 1.0),
    ("MLP batch 1 vs hand-written", "mlp1/overdub", "mlp1/hand", "at most", 1.15),
    ("MLP batch 64 (tanh) vs its op-by-op floor", "mlp64/overdub", "mlp64/floor", "at most", 1.05),
    ("MLP batch 64 (ReLU) vs its op-by-op floor", "mlp64relu/overdub", "mlp64relu/floor", "at most", 1.05),
    ("core: calls-only no-op context vs plain (rgb_to_hsv)", "bench_core:hsv/calls", "bench_core:hsv/plain",
     "at most", 2.0),
    ("core: calls-only no-op context vs plain (fib 20)", "bench_core:fib20/calls", "bench_core:fib20/plain",
     "at most", 2.0),
    ("core: patching a 50-line function", "bench_core:patch/fifty_lines", None, "seconds", 0.005),
    ("forward: loop derivative vs primal", "bench_forward:loop/derivative", "bench_forward:loop/primal",
     "at most", 3.0),
    ("forward: 3x1000 Jacobian, faster than reverse by", "bench_forward:jac3x1000/forward",
     "bench_forward:jac3x1000/reverse", "at least", 10.0),
    ("sparsity: detecting a tridiagonal pattern, n = 1e5", "bench_sparsity:sparsity/detect/tridiagonal_1e5",
     None, "seconds", 1.0),
    ("transform: first gradient of a 500-line function", "bench_transform:transform/gradient_500", None,
     "seconds", 1.0),
    ("transform: first derivative of a 500-line function", "bench_transform:transform/derivative_500", None,
     "seconds", 1.0),
    ("sparsity: sparse Jacobian, faster than dense by (n = 1e4)", "bench_sparsity:sparsity/jacobian/sparse_n10000",
     "bench_sparsity:sparsity/jacobian/dense_n10000", "at least", 100.0),
)


@dataclass
class Results:
    """Everything one run measured: seconds per call for each benchmark name, and each method's status.

    Workload benchmarks are named `workload/method`; benchmarks of other suites `suite:name`.
    """

    quick: bool
    values: dict[str, list[float]] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)  # name -> "ok", "missing", "failed: ...", ...
    details: dict[str, str] = field(default_factory=dict)  # name -> why it is missing
    workloads: list = field(default_factory=list)  # perf.workloads.Workload, in report order
    suites: dict[str, str] = field(default_factory=dict)  # suite -> "ok" or why it has no numbers
    metadata: dict[str, str] = field(default_factory=dict)  # from the timing processes (BLAS, ...)
    command: str = ""

    def median(self, name: str) -> float | None:
        v = self.values.get(name)
        return statistics.median(v) if v else None

    def ratio(self, name: str, baseline: str) -> float | None:
        a, b = self.median(name), self.median(baseline)
        return a / b if a is not None and b else None


def format_time(seconds: float | None) -> str:
    """'12.3 µs' style, three significant digits."""
    if seconds is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if seconds >= scale or unit == "ns":
            return f"{seconds / scale:.3g} {unit}"
    raise AssertionError("unreachable")


def _format_ratio(r: float | None) -> str:
    if r is None:
        return "—"
    return f"{r:.3g}×" if r < 1000 else f"{r:,.0f}×"


# -- machine ---------------------------------------------------------------------------------------

def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def machine_info(metadata: dict[str, str]) -> list[tuple[str, str]]:
    """(label, value) rows describing the machine, the interpreter, numpy, BLAS and the peers."""
    import numpy

    return [
        ("CPU", f"{_cpu_model()}, {os.cpu_count()} logical cores"),
        ("OS", platform.platform()),
        ("Python", platform.python_version() + f" ({platform.python_implementation()})"),
        ("numpy", numpy.__version__),
        ("BLAS in the timing processes (threadpoolctl)", metadata.get("blas", "unknown")),
        ("OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE there", metadata.get("openblas_env", "unknown")),
        ("peers", ", ".join(f"{d} {_version(d)}" for d in ("autograd", "torch", "jax", "jaxlib"))),
        ("pyperf", _version("pyperf")),
    ]


# -- tables ----------------------------------------------------------------------------------------

_BASES = ("primal", "hand", "floor") + PEERS  # the ratio columns of the times table


def _workload_rows(results: Results, w) -> list[str]:
    rows = []
    for method in METHODS:
        name = f"{w.name}/{method}"
        status = results.status.get(name, "not run")
        values = results.values.get(name)
        if status == "n/a":  # nothing to measure here (overdub.wrt without constant arguments)
            continue
        if status != "ok" or not values:
            shown = status if status != "missing" else "missing"
            rows.append(f"| {w.name} | {method} | {shown} |" + " |" * (2 + len(_BASES)))
            continue
        ratios = [results.ratio(name, f"{w.name}/{base}") for base in _BASES]
        noise = f"{format_time(min(values))} – {format_time(max(values))}"
        rows.append(f"| {w.name} | {method} | {format_time(results.median(name))} | {noise} | "
                    + " | ".join(_format_ratio(r) for r in ratios) + " |")
    return rows


def times_table(results: Results) -> list[str]:
    """One row per workload and method: median, min–max, and the median's ratio to each baseline."""
    head = ["workload", "method", "median", "min – max"] + [f"÷ {b}" for b in _BASES]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    for w in results.workloads:
        lines += _workload_rows(results, w)
    return lines


def aim_value(results: Results, name: str, baseline: str | None, kind: str) -> float | None:
    """The measured quantity an aim bounds: a ratio (or inverse ratio) of medians, or a median."""
    if kind == "seconds":
        return results.median(name)
    r = results.ratio(name, baseline)
    return None if r is None else (r if kind == "at most" else 1 / r)


def aims_table(results: Results) -> list[str]:
    """Each aim's bound, the measured value and whether it is met; for an aim against the hand-written
    gradient, also what the operation-by-operation floor itself reaches (an aim below it cannot be met
    by reverse mode that does not fuse operations)."""
    lines = ["| aim | bound | measured | met | op-by-op floor |", "|---|---:|---:|---|---:|"]
    for label, name, baseline, kind, bound in AIMS:
        value = aim_value(results, name, baseline, kind)
        if kind == "seconds":
            shown_bound, shown = f"at most {format_time(bound)}", format_time(value)
        else:
            shown_bound, shown = f"{kind} {bound:g}×", "—" if value is None else f"{value:.3g}×"
        met = "not measured" if value is None else \
            "yes" if (value >= bound if kind == "at least" else value <= bound) else "no"
        floor = None
        if baseline and baseline.endswith("/hand") and name.endswith("/overdub"):
            floor = aim_value(results, name[: -len("overdub")] + "floor", baseline, kind)
        lines.append(f"| {label} | {shown_bound} | {shown} | {met} | "
                     f"{'—' if floor is None else f'{floor:.3g}×'} |")
    return lines


def _suite_baseline(results: Results, name: str) -> str | None:
    """The `plain`, `primal` or `hand` benchmark of the same group (`suite:group/...`), if measured."""
    group = name.rsplit("/", 1)[0]
    for base in ("plain", "primal", "hand"):
        if results.values.get(f"{group}/{base}"):
            return f"{group}/{base}"
    return None


def suites_tables(results: Results) -> list[str]:
    """One table per other suite: median, min–max, ratio to its group's plain/primal/hand run."""
    lines = []
    for suite, state in results.suites.items():
        lines += ["", f"### {suite}", ""]
        names = [n for n in results.values if n.startswith(suite + ":")]
        if state != "ok":
            lines += [f"{'Incomplete' if names else 'No numbers'}: {state}.", ""]
        if not names:
            continue
        lines += ["| benchmark | median | min – max | ratio |", "|---|---:|---:|---|"]
        for n in names:
            v, base = results.values[n], _suite_baseline(results, n)
            ratio = f"{_format_ratio(results.ratio(n, base))} {base.split('/')[-1]}" if base and base != n else ""
            lines.append(f"| {n.split(':', 1)[1]} | {format_time(statistics.median(v))} | "
                         f"{format_time(min(v))} – {format_time(max(v))} | {ratio} |")
    return lines


def markdown(results: Results) -> str:
    """The whole RESULTS.md."""
    kind = "QUICK smoke run (small sizes, few loops: not for comparison)" if results.quick else "full run"
    out = ["# overdub benchmark results", "",
           f"{kind}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: `{results.command}`.",
           "Times are per gradient (per call for `primal`); ratios are of medians; BLAS, OpenMP, torch "
           "and XLA are pinned to one thread for every method. See perf/README.md.", "",
           "## Machine", "", "| | |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in machine_info(results.metadata)]
    out += ["", "## Workloads", ""]
    out += [f"- **{w.name}**: {w.description}" for w in results.workloads]
    out += ["", "## Times and ratios", ""] + times_table(results)
    missing = {n: d for n, d in results.details.items() if results.status.get(n) == "missing"}
    if missing:
        out += ["", "Missing: " + "; ".join(sorted({f"{n.split('/')[1]} ({d})" for n, d in missing.items()}))]
    out += ["", "## Aims", ""] + aims_table(results)
    if results.suites:
        out += ["", "## Other suites"] + suites_tables(results)
    return "\n".join(out) + "\n"


# -- chart -----------------------------------------------------------------------------------------

def bar_chart(results: Results, path: Path) -> None:
    """Grouped bars, log scale: each gradient method's median over the primal's, and over the hand's."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [w.name for w in results.workloads]
    fig, axes = plt.subplots(2, 1, figsize=(10, 8), sharex=True)
    for ax, base in zip(axes, ("primal", "hand")):
        methods = [m for m in METHODS if m not in ("primal", base)]
        width = 0.8 / len(methods)
        for i, m in enumerate(methods):
            ratios = [results.ratio(f"{n}/{m}", f"{n}/{base}") for n in names]
            xs = [k + (i - (len(methods) - 1) / 2) * width for k in range(len(names))]
            ax.bar(xs, [r or float("nan") for r in ratios], width, label=m, color=f"C{METHODS.index(m)}")
        if any(results.ratio(f"{n}/{m}", f"{n}/{base}") for n in names for m in methods):
            ax.set_yscale("log")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_ylabel(f"time ÷ {base} (log)")
        ax.legend(fontsize="small", ncol=len(methods))
    axes[-1].set_xticks(range(len(names)), names)
    axes[0].set_title("gradient time relative to the primal (top) and to the hand-written gradient (bottom)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def summary_table(results: Results) -> list[str]:
    """Medians only, one row per workload, one column per method (for the README)."""
    lines = ["| workload | " + " | ".join(METHODS) + " |", "|---|" + "---:|" * len(METHODS)]
    for w in results.workloads:
        cells = []
        for m in METHODS:
            name = f"{w.name}/{m}"
            ok = results.status.get(name) == "ok" and results.values.get(name)
            status = results.status.get(name, "—").split(":")[0]
            cells.append(format_time(results.median(name)) if ok else "—" if status == "n/a" else status)
        lines.append(f"| {w.name} | " + " | ".join(cells) + " |")
    return lines


LATEST_BEGIN, LATEST_END = "<!-- latest numbers: written by perf/run.py -->", "<!-- end of latest numbers -->"


def update_readme(results: Results, readme: Path) -> None:
    """Replace the README's block between the LATEST markers with this run's medians and aims."""
    text = readme.read_text()
    if LATEST_BEGIN not in text or LATEST_END not in text:
        return
    head, rest = text.split(LATEST_BEGIN, 1)
    tail = rest.split(LATEST_END, 1)[1]
    block = [LATEST_BEGIN, "", f"{time.strftime('%Y-%m-%d', time.gmtime())}, `{results.command}`; "
             f"{_cpu_model()}; BLAS: {results.metadata.get('blas', 'unknown')}. Medians per call:", ""]
    block += summary_table(results) + [""] + aims_table(results) + ["", LATEST_END]
    readme.write_text(head + "\n".join(block) + tail)


def write_report(results: Results, out_dir: Path) -> str:
    """Write RESULTS.md and ratios.png into `out_dir`; return the markdown."""
    out_dir.mkdir(parents=True, exist_ok=True)
    text = markdown(results)
    (out_dir / "RESULTS.md").write_text(text)
    bar_chart(results, out_dir / "ratios.png")
    return text
