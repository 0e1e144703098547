"""Every examples/forward_*.py runs and exits 0."""

import pathlib
import subprocess
import sys

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).parents[3] / "examples").glob("forward_*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path):
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120,
                          cwd=path.parents[1])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()


def test_examples_exist():
    assert len(EXAMPLES) >= 3
