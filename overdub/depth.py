"""The recursion limit while transformed code runs: the one place that changes it, shared by all threads.

A twin runs a few Python frames for each frame of the user's function (the interception twin and the
forward-mode twins about three, a reverse pass two), so recursion that fits the user's limit would not fit
it under a context. While any transformed code runs, in any thread, the limit is raised to `FACTOR`
times the user's limit (plus `MARGIN` for the machinery's own frames); it is restored when the last such
run ends, unless the program changed it meanwhile.

The process-wide limit is one number, so it is reference-counted under a lock: the first `enter` raises
it, the last `leave` restores it. Restoring per call instead lets one thread lower the limit under
another thread's deep stack, which CPython 3.11 answers with a fatal error (abort) and 3.12+ with a
RecursionError.

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
import threading

__all__ = ["FACTOR", "MARGIN", "enter", "leave", "deeper", "active"]

FACTOR = 4     # frames allowed per frame of the user's limit (the deepest twin needs about 3)
MARGIN = 250   # for the machinery's own frames around the user's outermost call

_lock = threading.Lock()
_active = 0            # runs in progress, all threads
_user: int = 0         # the program's limit, to restore when the last run ends
_ours: int | None = None  # the limit set here (None: not changed)


def enter(_acquire=_lock.acquire, _release=_lock.release, _get=sys.getrecursionlimit,
          _set=sys.setrecursionlimit) -> None:
    """A run of transformed code starts: make sure the limit has room for it."""
    global _active, _user, _ours
    _acquire()
    try:
        _active += 1
        limit = _get()
        if limit != _ours:  # the first run (or a limit left raised), or the program set one meanwhile
            _user = limit
            _ours = FACTOR * limit + MARGIN
            _set(_ours)
    finally:
        _release()


def leave(_acquire=_lock.acquire, _release=_lock.release, _get=sys.getrecursionlimit,
          _set=sys.setrecursionlimit) -> None:
    """A run ends: the last one restores the program's limit (unless the program changed it)."""
    global _active, _ours
    _acquire()
    try:
        _active -= 1
        if not _active:
            if _get() == _ours:
                try:
                    _set(_user)
                except RecursionError:  # this thread is deeper than the program's limit: keep ours
                    return
            _ours = None
    finally:
        _release()


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
    return _active
