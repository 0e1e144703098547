"""Every examples/*.py script runs in a fresh interpreter, prints something and exits 0.

Examples added by anyone are picked up automatically; each asserts its own claims (losses decrease,
gradients match finite differences), so a non-zero exit code is a failure of the library or the example.
"""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env=env)
    assert done.returncode == 0, f"{path.name} exited {done.returncode}:\n{done.stderr[-4000:]}"
    assert done.stdout.strip(), f"{path.name} printed nothing"


def test_reverse_mode_examples_exist():
    names = {p.name for p in EXAMPLES}
    assert {"mlp_numpy.py", "logistic_regression.py", "ode_fit.py"} <= names
