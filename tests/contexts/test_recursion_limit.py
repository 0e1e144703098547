"""The recursion limit under differentiation (issue 17): raised from the user's own limit while any
transformed code runs, coordinated across threads (overdub.depth), restored when the last run ends."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from contexts import derivative, gradient, hessian, jacobian_sparsity, jvp
from contexts.debug import CountContext

ROOT = Path(__file__).resolve().parents[2]


def _sines(x, n):
    """n * sin(x), by a recursion n deep."""
    return 0.0 if n == 0 else _sines(x, n - 1) + math.sin(x)


class _UserLimit:
    """The user's recursion limit set to `limit` for the block, restored after."""

    def __init__(self, limit):
        self.limit = limit

    def __enter__(self):
        self.before = sys.getrecursionlimit()
        sys.setrecursionlimit(self.limit)

    def __exit__(self, *exc):
        sys.setrecursionlimit(self.before)


MODES = {
    "gradient": lambda f, x: gradient(f, x)[0],
    "derivative": derivative,
    "jvp": lambda f, x: jvp(f, (x,), (1.0,))[1],
    "hessian": hessian,
}
CLOSED = {"gradient": lambda x, n: n * math.cos(x), "derivative": lambda x, n: n * math.cos(x),
          "jvp": lambda x, n: n * math.cos(x), "hessian": lambda x, n: -n * math.sin(x)}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_user_recursion_up_to_the_users_own_limit(mode):
    f = lambda x: _sines(x, 2000)  # noqa: E731
    with _UserLimit(3000):
        assert f(0.5) == pytest.approx(2000 * math.sin(0.5))  # the primal fits the user's limit
        got = MODES[mode](f, 0.5)
        assert sys.getrecursionlimit() == 3000
    assert got == pytest.approx(CLOSED[mode](0.5, 2000), rel=1e-9)


# CPython 3.12 bounds the C stack apart from the recursion limit (about 1,500 C-level calls, fixed, not
# raised by sys.setrecursionlimit): an interception context calls each user frame through C, so there
# deep recursion under a context ends near 400 levels whatever the limit (3.11 and 3.13 have no such bound)
_C_BOUNDED = sys.version_info[:2] == (3, 12)


@pytest.mark.skipif(_C_BOUNDED, reason="CPython 3.12's fixed C recursion bound (see above)")
def test_user_recursion_under_a_context_and_in_sparsity():
    import numpy as np
    with _UserLimit(3000):
        assert CountContext().run(_sines, 0.5, 2000) == pytest.approx(2000 * math.sin(0.5))
        pattern = jacobian_sparsity(lambda v: np.array([_sines(v[0], 2000)]), np.ones(2))
        assert sys.getrecursionlimit() == 3000
    assert np.asarray(pattern.toarray() if hasattr(pattern, "toarray") else pattern).astype(bool).tolist() \
        == [[True, False]]


@pytest.mark.parametrize("mode", sorted(MODES))
def test_limit_restored_after_an_exception_inside_f(mode):
    def f(x):
        if _sines(x, 50) > -100:
            raise KeyError("inside f")
        return x
    before = sys.getrecursionlimit()
    with pytest.raises(KeyError, match="inside f"):
        MODES[mode](f, 0.5)
    assert sys.getrecursionlimit() == before


def test_a_limit_the_user_raises_meanwhile_is_kept():
    before = sys.getrecursionlimit()

    def f(x):
        sys.setrecursionlimit(before + 1234)
        return x * x
    try:
        assert gradient(f, 3.0) == (6.0,)
        assert sys.getrecursionlimit() == before + 1234
    finally:
        sys.setrecursionlimit(before)


_THREADS = textwrap.dedent('''
    import math, sys, threading
    sys.setswitchinterval(1e-5)
    from contexts import derivative, gradient

    def sines(x, n):
        return 0.0 if n == 0 else sines(x, n - 1) + math.sin(x)

    limit = sys.getrecursionlimit()
    errors = []

    def worker(depth, fn, rounds):
        try:
            for i in range(rounds):
                x = 0.1 + i / rounds
                got = fn(lambda t: sines(t, depth), x)
                got = got[0] if isinstance(got, tuple) else got
                if abs(got - depth * math.cos(x)) > 1e-9 * depth:
                    errors.append((depth, x, got))
        except BaseException as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=worker, args=args) for args in
               [(900, gradient, 30), (5, gradient, 3000), (900, derivative, 30), (5, derivative, 3000)]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sys.getrecursionlimit() == limit, sys.getrecursionlimit()
    print("errors", errors[:3])
    sys.exit(1 if errors else 0)
''')


def test_threads_interleaving_deep_and_shallow_gradients(tmp_path):
    """One thread's call ending must not lower the limit under another thread's deep stack (CPython
    3.11 aborted the process): run in a subprocess, so that an abort fails the test, not the suite."""
    script = tmp_path / "threads.py"  # a file, so that the functions have source
    script.write_text(_THREADS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
