"""Every sparsity example runs to completion (small sizes) and its numbers are right."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
SMALL_ARGS = {"brusselator.py": ["--N", "12", "--t-end", "1.2"], "sparsity_least_squares.py": ["60"]}
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("sparsity_*.py")) + ["brusselator.py"]


@pytest.mark.parametrize("name", SCRIPTS)
def test_example_runs(name, monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", [name, *SMALL_ARGS.get(name, [])])
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    assert capsys.readouterr().out.strip()


def test_brusselator_pattern_colouring_and_solution():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import brusselator
    finally:
        sys.path.remove(str(EXAMPLES))
    N = 8
    out = brusselator.main(N=N, t_end=0.2)
    P = out["pattern"].toarray()
    # each equation couples its own species at 5 stencil points and the other species at its point
    assert (P.sum(axis=1) == 6).all()
    from tests import fd
    from tests.contexts.sparsity._pattern import nonzero
    rhs = lambda s: brusselator.rhs(0.0, s, N)
    x = np.random.default_rng(0).uniform(0.5, 2.0, 2 * N * N)  # the initial state has exact zeros
    np.testing.assert_array_equal(P, nonzero(fd.jacobian(rhs, x, matrix=True), 1e-9))
    J = fd.jacobian(rhs, brusselator.initial_state(N), matrix=True)
    np.testing.assert_allclose(out["jacobian"].toarray(), J, atol=1e-6 * np.abs(J).max())
    assert out["ncolors"] <= 10
    assert out["solution"].status == 0
    np.testing.assert_allclose(out["solution"].y[:, -1], out["solution_jac"].y[:, -1], rtol=1e-4, atol=1e-5)
