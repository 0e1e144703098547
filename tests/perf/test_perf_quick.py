"""`python perf/run.py --quick` runs and produces numbers for the primal and hand-written gradient of
every workload. How fast anything is is not asserted here."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from perf.workloads import make_workloads

pytestmark = pytest.mark.perf  # not in the default run: python -m pytest -m perf

RUN_PY = Path(__file__).resolve().parents[2] / "perf" / "run.py"
TIME = r"[0-9.]+ (?:ns|µs|ms|s)"


def test_quick_run_produces_numbers(tmp_path):
    proc = subprocess.run([sys.executable, str(RUN_PY), "--quick", "--out-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300)  # ~15 s on an idle machine
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    text = (tmp_path / "RESULTS.md").read_text()
    assert (tmp_path / "ratios.png").stat().st_size > 0
    assert "QUICK" in text and "BLAS" in text
    for w in make_workloads(quick=True):
        for method in ("primal", "hand"):
            row = rf"^\| {re.escape(w.name)} \| {method} \| ({TIME}) \| ({TIME}) – ({TIME}) \|"
            assert re.search(row, text, re.M), f"no numbers for {w.name}/{method}"
    assert text in proc.stdout  # printed too

    (tmp_path / "RESULTS.md").unlink()
    again = subprocess.run([sys.executable, str(RUN_PY), "--report-only", "--out-dir", str(tmp_path)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr[-2000:]
    table = lambda t: t[t.index("## Times and ratios"):]  # noqa: E731  (the header has the time of day)
    assert table((tmp_path / "RESULTS.md").read_text()) == table(text)
