"""Python's cyclic garbage collector paused while a twin is built: the one place that pauses it.

Building a twin allocates hundreds of thousands of syntax-tree nodes, each a container the collector
tracks; its full collections, triggered by the allocations, walk every tracked object again and again —
40% of the time `gradient` takes to transform a 500-line function (issue 17). The trees are freed by
reference counting when the build ends, so pausing the cyclic collector while building changes what is
freed when, never what is freed.

Builds are counted across threads, as `depth` counts runs: the first `pause` disables the collector if
it was enabled, the last `resume` enables it again. A program that had disabled it keeps it disabled;
one that disables it while a build is under way finds it enabled again when the last build ends.

>>> import gc, overdub.collector
>>> with overdub.collector.paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import contextlib
import gc

__all__ = ["paused", "pause", "resume", "pausing"]

_builds: list[None] = []  # one entry per build under way, all threads (append/pop are atomic)
_disabled_here = [False]  # whether the collector was enabled when the first build paused it


def pause() -> None:
    _builds.append(None)
    if gc.isenabled():
        gc.disable()
        _disabled_here[0] = True


def resume() -> None:
    _builds.pop()
    if not _builds and _disabled_here[0]:
        _disabled_here[0] = False
        gc.enable()


@contextlib.contextmanager
def paused():
    """`pause()` ... `resume()` as a with-block."""
    pause()
    try:
        yield
    finally:
        resume()


def pausing(fn):
    """fn (a builder) run with the collector paused."""
    import functools

    @functools.wraps(fn)
    def build(*args, **kwargs):
        pause()
        try:
            return fn(*args, **kwargs)
        finally:
            resume()
    return build
