"""The memory report runs (its numbers are reported in perf/MEMORY.md, never asserted here)."""

import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.perf  # not in the default run: python -m pytest -m perf

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_memory_report_runs_and_measures():
    done = subprocess.run([sys.executable, str(ROOT / "perf" / "memory.py"), "--quick"], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "tape per operation" in done.stdout and "hand-written" in done.stdout
