import os
import subprocess
import sys
import textwrap

import pytest

from contexts.debug import breakpoint_on
from overdub.errors import OverdubError

from . import _subjects as s


@pytest.fixture
def frames(monkeypatch):
    """Install a breakpoint hook that records (function name, line, locals) of the frame that called it."""
    seen = []

    def recorder(*args, **kwargs):
        frame = sys._getframe(1)
        seen.append((frame.f_code.co_name, frame.f_lineno, dict(frame.f_locals), frame.f_code.co_filename))

    monkeypatch.setattr(sys, "breakpointhook", recorder)
    return seen


def body_line(fn):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + 1  # the functions under test have a one-line signature and no docstring


def test_breaks_at_every_call_with_the_callee_frame(frames):
    ctx = breakpoint_on(s.fib)
    assert ctx.run(s.fib, 4) == 3
    assert ctx.hits == 9 == len(frames)  # fib(4) makes 9 calls of fib
    assert [f[2] for f in frames] == [{"n": n} for n in (4, 3, 2, 1, 0, 1, 2, 1, 0)]
    for name, line, _, filename in frames:
        assert name == "fib" and line == body_line(s.fib) and filename == s.__file__


def test_condition_filters_calls(frames):
    ctx = breakpoint_on(s.fib, condition=lambda n: n == 2)
    assert ctx.run(s.fib, 5) == 5
    assert [f[2] for f in frames] == [{"n": 2}] * 3
    assert ctx.hits == 3


def test_only_the_target_breaks_and_the_caller_is_untouched(frames):
    ctx = breakpoint_on(s.square)
    assert ctx.run(s.norm2, [3.0, 4.0]) == 5.0
    assert [(f[0], f[2]) for f in frames] == [("square", {"x": 3.0}), ("square", {"x": 4.0})]
    # the caller's own locals are not visible in (or changed by) the breaking frame
    assert s.norm2([3.0, 4.0]) == 5.0


def test_methods_keywords_defaults_and_varargs(frames):
    acct = s.Account(10)
    ctx = breakpoint_on(s.Account.deposit, condition=lambda self, amount, fee=0: amount > 1)
    assert ctx.run(lambda: [acct.deposit(1), acct.deposit(5, fee=2)]) == [11, 14]
    assert len(frames) == 1
    name, _, local, _ = frames[0]
    assert name == "deposit" and local == {"self": acct, "amount": 5, "fee": 2}

    frames.clear()
    assert breakpoint_on(s.with_defaults).run(s.with_defaults, 1, 2, 3, scale=2, z=0) == 13
    assert frames[0][2] == {"a": 1, "b": 2, "rest": (3,), "scale": 2, "extra": {"z": 0}}
    frames.clear()
    assert breakpoint_on(s.with_defaults).run(s.with_defaults, 1) == 3
    assert frames[0][2] == {"a": 1, "b": 2, "rest": (), "scale": 1, "extra": {}}


def test_generator_breaks_when_its_body_starts(frames):
    ctx = breakpoint_on(s.countdown)
    gen = ctx.run(s.countdown, 3)
    assert frames == []
    with ctx:
        assert list(gen) == [3, 2, 1]
    assert [f[2] for f in frames] == [{"n": 3}]


def test_the_break_frame_sees_module_globals_and_no_helpers(monkeypatch):
    seen = {}

    def recorder():
        frame = sys._getframe(1)
        seen["locals"] = dict(frame.f_locals)
        seen["square"] = eval("square", frame.f_globals, frame.f_locals)  # as pdb evaluates `p square`

    monkeypatch.setattr(sys, "breakpointhook", recorder)
    breakpoint_on(s.norm2).run(s.norm2, [3.0])
    assert seen == {"locals": {"xs": [3.0]}, "square": s.square}


def test_no_break_outside_the_context(frames):
    breakpoint_on(s.fib)
    assert s.fib(4) == 3
    assert frames == []


def test_builtin_target_is_refused():
    with pytest.raises(OverdubError, match="not a Python function"):
        breakpoint_on(len)


HOOK_MODULE = """
import sys
def hook(*args, **kwargs):
    frame = sys._getframe(1)
    print("BREAK", frame.f_code.co_name, frame.f_lineno, sorted(frame.f_locals.items()))
"""

SCRIPT = """
from contexts.debug import breakpoint_on
from tests.contexts.debug import _subjects as s
print("RESULT", breakpoint_on(s.fib, condition=lambda n: n >= 2).run(s.fib, 3))
"""


def _run_script(tmp_path, breakpoint_env, script=SCRIPT, stdin=None):
    (tmp_path / "myhook.py").write_text(textwrap.dedent(HOOK_MODULE))
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    env = dict(os.environ, PYTHONBREAKPOINT=breakpoint_env,
               PYTHONPATH=os.pathsep.join([str(tmp_path), repo, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=repo, capture_output=True,
                          text=True, timeout=60, input=stdin)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_pythonbreakpoint_is_honoured(tmp_path):
    line = body_line(s.fib)
    assert _run_script(tmp_path, "myhook.hook") == [
        f"BREAK fib {line} [('n', 3)]",
        f"BREAK fib {line} [('n', 2)]",
        "RESULT 2",
    ]


def test_pythonbreakpoint_zero_disables_breaks(tmp_path):
    assert _run_script(tmp_path, "0") == ["RESULT 2"]


PDB_SCRIPT = """
from contexts.debug import breakpoint_on
from tests.contexts.debug import _subjects as s
print("RESULT", breakpoint_on(s.square, condition=lambda x: x > 3).run(s.norm2, [3.0, 4.0]))
"""


def test_real_pdb_stops_in_the_callee_and_steps_through_its_body(tmp_path):
    commands = "args\nstep\np x * 10\ncontinue\n"
    out = "\n".join(_run_script(tmp_path, "pdb.set_trace", PDB_SCRIPT, commands))
    assert "square()" in out and "x = 4.0" in out, out  # stopped in square(4.0), its argument visible
    assert "x = 3.0" not in out, out                     # the condition skipped square(3.0)
    assert "-> return x * x" in out and "40.0" in out, out  # `step` reached square's body
    assert out.rstrip().endswith("RESULT 5.0"), out


def test_closures_lambdas_static_and_class_methods(frames):
    add3 = s.make_adder(3)
    assert breakpoint_on(add3).run(lambda: add3(1) + s.make_adder(5)(1)) == 10
    # both closures share add's code, so both break; each frame sees only its own argument
    assert [(f[0], f[2]) for f in frames] == [("add", {"x": 1}), ("add", {"x": 1})]

    frames.clear()
    assert breakpoint_on(s.halve).run(lambda: s.halve(8) + 1) == 5.0
    assert [(f[0], f[2]) for f in frames] == [("<lambda>", {"x": 8})]

    frames.clear()
    assert breakpoint_on(s.Shapes.area, condition=lambda side: side == 2).run(s.Shapes.make, 3) == [0, 1, 4]
    assert [(f[0], f[2]) for f in frames] == [("area", {"side": 2})]

    frames.clear()
    assert breakpoint_on(s.Shapes.make).run(lambda: s.Shapes.make(2)) == [0, 1]
    assert [(f[0], f[2]) for f in frames] == [("make", {"cls": s.Shapes, "n": 2})]


def test_calling_a_class_breaks_in_its_init(frames):
    ctx = breakpoint_on(s.Account.__init__)
    acct = ctx.run(lambda: s.Account(7))
    assert isinstance(acct, s.Account) and acct.balance == 7
    (name, _, local, _), = frames
    assert name == "__init__" and set(local) == {"self", "balance"} and local["balance"] == 7


def test_coroutines_break_when_they_start(frames):
    import asyncio

    ctx = breakpoint_on(s.async_double)
    assert ctx.run(lambda: asyncio.run(s.async_double(21))) == 42
    assert [(f[0], f[2]) for f in frames] == [("async_double", {"x": 21})]
