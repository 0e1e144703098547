"""python -m tests.fuzz --suite scalar|numpy|all --n 1000 --seed 0 [--modes ...] [--features ...]
[--index I] [--show-failures K] [--jobs J]"""

from __future__ import annotations

import argparse
import re
import sys
import time

from . import gen, runner


def _work(job):
    suite, seed, index, feats, modes = job
    prog = gen.generate(suite, seed, index, feats)
    out = runner.run_program(prog, modes)
    return suite, index, out


def _init_worker():
    import warnings
    warnings.simplefilter("ignore")
    import numpy as np
    np.seterr(all="ignore")


# Each program leaves twins of its functions in the engines' caches (about 2 MB a program): workers are
# replaced after this many programs, so memory stays bounded however many programs run.
RECYCLE = 40


def _preload():
    """Import the engines and scipy once in the parent, so that forked workers start warm."""
    import contexts.ad  # noqa: F401
    import contexts.forward  # noqa: F401
    import contexts.sparsity  # noqa: F401
    import scipy.special  # noqa: F401
    import scipy.stats  # noqa: F401


def run(suites, n, seed, modes, feats=None, index=None, jobs=1):
    """Yields (suite, index, ProgramOutcome) for every program, in order, in `jobs` worker processes
    (one program only: in this process)."""
    jobs_list = [(s, seed, i, feats, modes) for s in suites
                 for i in ([index] if index is not None else range(n))]
    if len(jobs_list) == 1:
        _init_worker()
        yield _work(jobs_list[0])
        return
    import multiprocessing as mp
    _preload()
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    with mp.get_context(method).Pool(max(1, jobs), initializer=_init_worker, maxtasksperchild=RECYCLE) as pool:
        yield from pool.imap(_work, jobs_list, chunksize=1)


def table(counts: dict, modes, invalid: int, nprog: int, suite: str, seconds: float) -> str:
    lines = [f"suite {suite}: {nprog} programs ({invalid} invalid, not counted) in {seconds:.1f} s "
             f"({nprog / max(seconds, 1e-9):.1f} programs/s)",
             f"{'mode':16}" + "".join(f"{s:>9}" for s in runner.STATUSES)]
    for m in modes:
        c = counts.get(m, {})
        lines.append(f"{m:16}" + "".join(f"{c.get(s, 0):9d}" for s in runner.STATUSES))
    return "\n".join(lines)


def _fmt(v, width=600):
    import numpy as np
    text = np.array2string(np.asarray(v), precision=6, threshold=60) if v is not None and not isinstance(v, str) else repr(v)
    return text if len(text) < width else text[:width] + " ..."


def failure_class(r) -> str:
    """The result's mode, status and error with the program's own names and paths blanked, so that
    failures with one cause group together."""
    e = r.error
    e = re.sub(r"\[fz_\w+\.py:\d+ in ([^\]]+)\]", r"[in the program's \1]", e)
    e = re.sub(r"_fuzz_\d+_fz_\w+?\.", "", e)
    e = re.sub(r"(?<![A-Za-z0-9])(_od_f_)?_?[A-Za-z]+\d+(?![0-9])", lambda m: re.sub(r"\d+$", "N", m.group(0)), e)
    e = re.sub(r"\(primal .*?(?= to a plain| would drop|$)", "(primal ...)", e)
    e = re.sub(r"array\(.*", "array(...)", e)
    return f"{r.mode:15} {r.status:7} {e[:150]}"


def failure_report(prog, r) -> str:
    out = [f"--- {r.status.upper()} in mode {r.mode}: {prog.suite} seed {prog.seed} index {prog.index} "
           f"(features: {', '.join(prog.features)})",
           f"repro: {prog.command([r.mode])}"]
    if r.error:
        out.append(f"error: {r.error}")
    if r.status == "wrong":
        out.append(f"expected (finite differences): {_fmt(r.expected)}")
        out.append(f"got: {_fmt(r.got)}")
    out.append("inputs: " + ", ".join(_fmt(x) for x in prog.inputs))
    out.append(prog.source.rstrip())
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    ap.add_argument("--suite", default="all", choices=["scalar", "numpy", "all"])
    ap.add_argument("--n", type=int, default=100, help="programs per suite")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--index", type=int, default=None, help="run this one program only")
    ap.add_argument("--modes", default=",".join(runner.MODES), help="comma-separated; default all: "
                    + ",".join(runner.MODES))
    ap.add_argument("--features", default=None,
                    help="comma-separated template features or template names (--list-templates); scalar: " + ",".join(gen.features("scalar"))
                    + "; numpy: " + ",".join(gen.features("numpy")))
    ap.add_argument("--show-failures", type=int, default=5, help="print up to K wrong/crash programs")
    ap.add_argument("--show-refused", action="store_true", help="also print refusals (with --show-failures)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--print-source", action="store_true", help="print the program(s) and exit")
    ap.add_argument("--list-templates", action="store_true",
                    help="list the templates by name (usable in --features) and exit")
    a = ap.parse_args(argv)
    suites = list(gen.SUITES) if a.suite == "all" else [a.suite]
    modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    for m in modes:
        if m not in runner.MODES:
            ap.error(f"unknown mode {m!r}")
    feats = [x.strip() for x in a.features.split(",")] if a.features else None
    if a.list_templates:
        for s in suites:
            for name, (_, body, _) in zip(gen.template_names(s), gen.TEMPLATES[s]):
                text = body if isinstance(body, str) else next(iter(body.values()))
                print(f"{s:7} {name:14} " + " | ".join(ln.strip() for ln in text.splitlines())[:110])
        return 0
    if a.print_source:
        for s in suites:
            for i in ([a.index] if a.index is not None else range(a.n)):
                p = gen.generate(s, a.seed, i, feats)
                print(f"# {s} seed {a.seed} index {i}; inputs {p.inputs}\n{p.source}")
        return 0
    bad = 0
    for suite in suites:
        counts, invalid, nprog, shown, t0 = {}, 0, 0, 0, time.perf_counter()
        failures, classes = [], {}
        for _, _, out in run([suite], a.n, a.seed, modes, feats, a.index, a.jobs):
            nprog += 1
            if out.invalid:
                invalid += 1
                if a.index is not None:
                    print(f"invalid program: {out.invalid}\n{out.prog.source}")
                continue
            for r in out.results:
                counts.setdefault(r.mode, {}).setdefault(r.status, 0)
                counts[r.mode][r.status] += 1
                if r.status in ("wrong", "crash", "refused"):
                    key = failure_class(r)
                    n0, first = classes.get(key, (0, out.prog.command([r.mode])))
                    classes[key] = (n0 + 1, first)
                if r.status in ("wrong", "crash") or (a.show_refused and r.status == "refused"):
                    bad += r.status != "refused"
                    if shown < a.show_failures:
                        shown += 1
                        failures.append(failure_report(out.prog, r))
                elif a.index is not None:
                    print(f"{r.mode}: {r.status} {r.error}")
        for text in failures:
            print(text, end="\n\n")
        if classes and a.index is None:
            print(f"failure classes of suite {suite} (count, mode, status, error; first program):")
            for key, (c, first) in sorted(classes.items(), key=lambda kv: (kv[0].split()[1] == "refused", -kv[1][0])):
                print(f"{c:6} {key}\n         {first}")
            print()
        print(table(counts, modes, invalid, nprog, suite, time.perf_counter() - t0), end="\n\n")
        sys.stdout.flush()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
