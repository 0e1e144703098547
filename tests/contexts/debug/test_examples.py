import glob
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
EXAMPLES = sorted(glob.glob(os.path.join(REPO, "examples", "debug_*.py")))


def test_there_is_an_example_per_context():
    names = {os.path.basename(p) for p in EXAMPLES}
    assert {"debug_trace.py", "debug_breakpoint.py", "debug_nan.py", "debug_count.py"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_example_runs(path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
    env.pop("PYTHONBREAKPOINT", None)
    done = subprocess.run([sys.executable, path], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    assert "Traceback" not in done.stderr
