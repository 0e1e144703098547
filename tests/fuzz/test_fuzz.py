"""The fuzzer in the test suite: a fixed, seeded slice of each suite through every mode, plus tests that
the runner itself can fail (a fake engine that lies is `wrong`, one that refuses `refused`, one that
breaks `crash`).

The slice is sized to take about a minute and a half per suite on a 2-core machine (a quarter of it where
OVERDUB_FUZZ_SLICE=small: `.ci/run` on the Python versions other than the default, which runs it whole). A failure prints,
for each wrong or crashing program, its source, the mode, expected vs got, and the command that reruns
it alone (`python -m tests.fuzz --suite ... --seed ... --index ... --modes ...`).
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from overdub.errors import OverdubError

from . import gen, runner
from .__main__ import failure_class, failure_report, main, run

SLICE = {"scalar": (0, 400), "numpy": (0, 200)}   # (seed, number of programs)
if os.environ.get("OVERDUB_FUZZ_SLICE") == "small":  # (.ci/run's other Python versions: the default one runs it all)
    SLICE = {"scalar": (0, 100), "numpy": (0, 50)}
MAX_REPORTS = 12

# Failure classes found and not yet fixed, by template and mode: left out of the slice's count (and
# reported) so that every other class is held at zero, and kept honest by test_known_open_classes_still_fail,
# which fails once a class is fixed (then remove it here). The README's limits name each one.
KNOWN_OPEN: dict = {
    # (suite, template): {modes}: a class the fuzzer still finds, listed until it is fixed. (The five the
    # `implicit` templates found on 2026-12-04, session 49, are fixed: tests/contexts/test_sweep_49_fuzz_cases.py.)
}


def _known_open(prog, mode) -> bool:
    return any(mode in KNOWN_OPEN.get((prog.suite, name), ()) for name in prog.features)


@pytest.mark.fuzz
@pytest.mark.parametrize("suite", sorted(SLICE))
def test_no_silent_wrong_derivative(suite):
    seed, n = SLICE[suite]
    failures, nbad, classes = [], 0, {}
    for _, _, out in run([suite], n, seed, runner.MODES):  # in a worker process, replaced now and then
        prog = out.prog
        for r in out.results:
            if r.status in ("wrong", "crash") and not _known_open(prog, r.mode):
                nbad += 1
                key = failure_class(r)
                c, first = classes.get(key, (0, prog.command([r.mode])))
                classes[key] = (c + 1, first)
                if len(failures) < MAX_REPORTS:
                    failures.append(failure_report(prog, r))
    if nbad:
        summary = "\n".join(f"{c:5} {key}\n        {first}" for key, (c, first)
                            in sorted(classes.items(), key=lambda kv: -kv[1][0]))
        pytest.fail(f"{nbad} wrong or crashing (program, mode) pairs in {suite} seed {seed} programs 0..{n - 1}.\n"
                    f"By cause (count, mode, status, error; a program that shows it):\n{summary}\n\n"
                    f"The first {len(failures)} in full:\n\n" + "\n\n".join(failures), pytrace=False)


@pytest.mark.fuzz
@pytest.mark.parametrize("suite, template", sorted(KNOWN_OPEN))
def test_known_open_classes_still_fail(suite, template):
    """A known-open class that no longer fails has been fixed: take it out of KNOWN_OPEN."""
    modes = sorted(KNOWN_OPEN[(suite, template)])
    bad = {r.mode for _, _, out in run([suite], 30, 0, modes, feats=[template])
           for r in out.results if r.status in ("wrong", "crash")}
    assert bad, f"{template} no longer fails in {modes}: remove it from KNOWN_OPEN"


# --- the generator -------------------------------------------------------------------------------------

@pytest.mark.parametrize("suite", gen.SUITES)
def test_generator_is_deterministic_and_programs_run(suite):
    for i in range(30):
        a, b = gen.generate(suite, 7, i), gen.generate(suite, 7, i)
        assert a.source == b.source
        assert all(np.array_equal(x, y) for x, y in zip(a.inputs, b.inputs))
        out = runner.run_program(a, modes=("primal",))
        assert not out.invalid, f"{out.invalid}\n{a.source}"
        assert math.isfinite(float(out.results and out.results[0].expected))
    assert gen.generate(suite, 7, 0).source != gen.generate(suite, 8, 0).source


def test_features_restrict_the_vocabulary():
    for i in range(10):
        prog = gen.generate("scalar", 0, i, ["dict"])
        assert {name.split(".")[0] for name in prog.features} == {"dict"}
        assert "--features dict" in prog.command()
    for i in range(5):
        assert set(gen.generate("numpy", 0, i, ["linalg.3"]).features) == {"linalg.3"}


# --- the runner can fail -------------------------------------------------------------------------------

def _prog():
    # a program where every mode has a clearly nonzero reference
    return gen.Program("scalar", 0, -1, "import math\n\n\ndef f(x0, x1):\n    return math.sin(x0) * x1 + x0 * x0\n",
                       (0.7, 1.3), (0.5, -0.25), ["math"])


def _run(**fakes):
    return {r.mode: r for r in runner.run_program(_prog(), eng=runner.Engines(**fakes)).results}


def test_real_engines_are_right_on_a_plain_program():
    res = _run()
    assert {m: r.status for m, r in res.items()} == {m: "right" for m in runner.MODES}


def test_a_lying_engine_is_wrong():
    from contexts.ad import gradient
    from contexts.forward import derivative, jacfwd, jvp
    from contexts.compose import hessian
    from contexts.sparsity import jacobian_sparsity

    def twice_gradient(f, *args):
        return tuple(2 * g for g in gradient(f, *args))

    def none_gradient(f, *args):
        return tuple(None for _ in args)

    def empty_pattern(f, x, mode="global"):
        return jacobian_sparsity(f, x, mode) * False

    res = _run(gradient=twice_gradient, derivative=lambda f, x: 2 * derivative(f, x),
               jvp=lambda f, p, t: (jvp(f, p, t)[0], jvp(f, p, t)[1] + 1e-3),
               jacfwd=lambda f, x: -jacfwd(f, x), hessian=lambda f, x: hessian(f, x) * 1.01,
               jacobian_sparsity=empty_pattern, primal=lambda f, *a: f(*a) + 1e-9)
    assert {m: r.status for m, r in res.items()} == {m: "wrong" for m in runner.MODES}
    assert _run(gradient=none_gradient)["gradient"].status == "wrong"


def test_a_refusing_engine_is_refused_and_a_broken_one_crashes():
    def refuse(*a, **k):
        raise OverdubError("cannot", where="here", fix="nothing")

    def breaks(*a, **k):
        raise TypeError("oops")

    def stops(*a, **k):
        raise StopIteration

    fakes = dict(gradient=refuse, derivative=refuse, jvp=refuse, jacfwd=refuse, hessian=refuse,
                 jacobian_sparsity=refuse, primal=refuse)
    assert {r.status for r in _run(**fakes).values()} == {"refused"}
    assert {r.status for r in _run(**{k: breaks for k in fakes}).values()} == {"crash"}
    assert {r.status for r in _run(**{k: stops for k in fakes}).values()} == {"crash"}


def test_none_gradient_is_right_where_the_derivative_is_zero():
    prog = gen.Program("scalar", 0, -1, "def f(x0, x1):\n    return x0 * 3.0\n", (0.7, 1.3), (1.0, 1.0))
    res = runner.run_program(prog, modes=("gradient",), eng=runner.Engines(gradient=lambda f, a, b: (3.0, None)))
    assert res.results[0].status == "right"


def test_a_kink_at_the_point_is_skipped():
    # the kink lies between the two finite-difference steps (1e-6 and 1e-5): they disagree
    prog = gen.Program("scalar", 0, -1, "def f(x0):\n    return abs(x0 - 0.5)\n", (0.5 + 3e-6,), (1.0,))
    res = runner.run_program(prog, modes=("gradient", "jvp", "hessian"))
    assert {r.status for r in res.results} == {"skip"}


def test_a_huge_value_has_no_reference():
    # (an oscillating term of huge arguments: finite differences miss it at every step, and agree)
    prog = gen.Program("scalar", 0, -1, "import math\n\n\ndef f(x0):\n    y = 1e21 * x0\n    return y + math.sin(y)\n",
                       (0.7,), (1.0,))
    res = runner.run_program(prog, modes=("gradient", "jvp"))
    assert {r.status for r in res.results} == {"skip"}


def test_module_state_is_fresh_for_each_mode():
    # a program that counts its calls in a module global: each mode must see a fresh module
    src = "_N = [0]\n\n\ndef f(x0):\n    _N[0] += 1\n    return x0 * 2.0 + (100.0 if _N[0] > 1000 else 0.0)\n"
    prog = gen.Program("scalar", 0, -1, src, (0.7,), (1.0,))
    res = runner.run_program(prog, modes=runner.MODES)
    assert all(r.status in ("right", "refused") for r in res.results), [(r.mode, r.status) for r in res.results]


def test_cli_runs_one_program(capsys):
    main(["--suite", "scalar", "--n", "2", "--modes", "primal,gradient", "--show-failures", "0"])
    out = capsys.readouterr().out
    assert "suite scalar: 2 programs" in out and "gradient" in out


def test_a_hanging_engine_is_a_crash(monkeypatch):
    import time
    monkeypatch.setattr(runner, "MODE_TIME_LIMIT", 0.3)

    def hangs(*a, **k):
        time.sleep(5)

    res = runner.run_program(_prog(), modes=("gradient",), eng=runner.Engines(gradient=hangs))
    assert res.results[0].status == "crash" and "time-out" in res.results[0].error
