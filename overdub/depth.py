"""The recursion limit while transformed code runs: the one place that changes it, shared by all threads.

A twin runs a few Python frames for each frame of the user's function (the interception twin and the
forward-mode twins about three, a reverse pass two), so recursion that fits the user's limit would not fit
it under a context. While any transformed code runs, in any thread, the limit is raised to `FACTOR`
times the user's limit (plus `MARGIN` for the machinery's own frames); it is restored when the last such
run ends, unless the program changed it meanwhile.

The process-wide limit is one number, so runs are counted across threads: the first `enter` raises it,
the last `leave` restores it. Restoring per call instead lets one thread lower the limit under another
thread's deep stack, which CPython 3.11 answers with a fatal error (abort) and 3.12+ with a
RecursionError. The count is a list (`append` and `pop` are atomic under the GIL), not a lock: the
pair of calls surrounds every `gradient`, and two lock round trips cost more than the rest of a small
function's gradient grew by in a whole release (issue 12's 5% budget). The one interleaving a lock would
exclude — a run starting in another thread while the last one restores — is closed by looking again
after restoring: the limit goes back up if a run started meanwhile. Until it does, that new run is no
deeper than where it started, below the program's own limit.

- The user's limit is read when the first run starts; if the program sets a new limit while runs are
  active (in another thread or inside the function), an `enter` seeing it takes it as the user's new
  limit (raising from it), and the last `leave` leaves the program's value alone when it is not the one
  set here.
- Use it as `enter(); try: ... finally: leave()`, or `with deeper(): ...`.

>>> import sys, overdub.depth
>>> before = sys.getrecursionlimit()
>>> with overdub.depth.deeper():
...     sys.getrecursionlimit() == overdub.depth.FACTOR * before + overdub.depth.MARGIN
True
>>> sys.getrecursionlimit() == before
True
"""

from __future__ import annotations

import contextlib
import sys

__all__ = ["FACTOR", "MARGIN", "enter", "leave", "deeper", "active", "on_start"]

FACTOR = 4     # frames allowed per frame of the user's limit (the deepest twin needs about 3)
MARGIN = 250   # for the machinery's own frames around the user's outermost call

_runs: list[None] = []  # one entry per run in progress, all threads
_starts: list = []      # callables run when a run starts while none is in progress (`on_start`)
_user: int = 0          # the program's limit, to restore when the last run ends
_ours: int | None = None  # the limit set here (None: never set)


def enter(_append=_runs.append, _get=sys.getrecursionlimit, _set=sys.setrecursionlimit) -> None:
    """A run of transformed code starts: make sure the limit has room for it."""
    global _user, _ours
    _append(None)
    limit = _get()
    if limit != _ours:  # the first run (or the last one restored it), or the program set one meanwhile
        if len(_runs) == 1:
            for fn in _starts:
                fn()
        if limit != _user:
            _user = limit
            _ours = FACTOR * limit + MARGIN
        _set(_ours)


def on_start(fn) -> None:
    """Call fn() when a run starts while no other is in progress in any thread: a context's memory of
    one outermost run (the texts made from its values) starts empty. (Free for nested runs: it rides on
    the limit's first raise.)"""
    _starts.append(fn)


def leave(_pop=_runs.pop, _get=sys.getrecursionlimit, _set=sys.setrecursionlimit) -> None:
    """A run ends: the last one restores the program's limit (unless the program changed it)."""
    _pop()
    if _runs:
        return
    ours = _ours
    if _get() != ours:  # the program set its own limit meanwhile: leave it alone
        return
    try:
        _set(_user)
    except RecursionError:  # this thread is deeper than the program's limit: keep ours
        return
    if _runs:  # another thread started a run since the test above: give it its room back
        _set(ours)


@contextlib.contextmanager
def deeper():
    """`enter()` ... `leave()` as a with-block."""
    enter()
    try:
        yield
    finally:
        leave()


def active() -> int:
    """How many runs are in progress (all threads)."""
    return len(_runs)
