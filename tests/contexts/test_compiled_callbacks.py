"""Forward mode refuses a compiled function that calls Python back (scipy's LSODA) before calling it with
dual numbers: handed them, its C code raised inside and was left broken, and a later, unrelated derivative
crashed the process (a segmentation fault). Run in a subprocess, so such a crash fails the test only."""

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent('''
    import numpy as np
    from scipy.integrate import solve_ivp
    from contexts import derivative, gradient
    from contexts.rules.registry import MissingRule

    def rhs(t, y):
        return -0.3 * y * t

    def f(y0):
        r = solve_ivp(rhs, (1.0, 2.0), np.array([y0]), method="LSODA", t_eval=[2.0], atol=1e-7, rtol=1.5e-8)
        return r.y[0, -1]

    for _ in range(4):
        try:
            derivative(f, 1.3)
            raise SystemExit("LSODA was differentiated without a rule")
        except MissingRule:
            pass

    import fractions
    def g(x):
        return float(fractions.Fraction(3, 7)) * x * x
    print(gradient(g, 2.0)[0])
''')


def test_refused_compiled_callback_leaves_the_process_whole(tmp_path):
    script = tmp_path / "lsoda_refused.py"
    script.write_text(SCRIPT)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert abs(float(done.stdout.strip()) - 12 / 7) < 1e-12  # d/dx (3/7) x^2 at 2
