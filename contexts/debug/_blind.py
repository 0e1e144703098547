"""What the debugging contexts share: a warning when a `with` block saw nothing, and the `wrap` decorator.

The core patches the functions a context runs (`ctx.run(f, ...)`) and the functions they call, never the
code written inside a `with ctx:` block itself (no `sys.settrace`/`sys.monitoring`): `with TraceContext()
as t: statistics.median(xs)` runs median unobserved. So a context whose outermost `with` block ends
without having intercepted a single operation warns (`SawNothingWarning`), saying what to do instead.

Invariant: `seen` counts every operation the context intercepted or was reported (it only grows); the
warning is given only on leaving the outermost activation without an exception.
"""

from __future__ import annotations

import functools
import warnings

__all__ = ["SawNothingWarning", "Observing"]


class SawNothingWarning(UserWarning):
    """A debugging context's `with` block ended having seen no operation at all."""


class Observing:
    """Mixin of the debugging contexts (before `overdub.Context` in the bases)."""

    seen = 0
    _marks: list | None = None

    def __enter__(self):
        if self._marks is None:
            self._marks = []
        self._marks.append(self.seen)
        return super().__enter__()

    def __exit__(self, exc_type, exc, tb):
        result = super().__exit__(exc_type, exc, tb)
        mark = self._marks.pop()
        if not self._marks and exc_type is None and self.seen == mark:
            name = type(self).__name__
            warnings.warn(
                f"{name} saw nothing in its `with` block: the code written in the block itself is not "
                f"intercepted, only functions run through the context. Use `ctx.run(f, *args)` (e.g. "
                f"`{name}().run(statistics.median, xs)`), or decorate the function with `@ctx.wrap` and "
                f"call it inside the block", SawNothingWarning, stacklevel=2)
        return result

    def wrap(self, fn):
        """A decorator: each call of the decorated function runs under this context (`self.run`).

        >>> from contexts.debug import CountContext
        >>> ctx = CountContext()
        >>> @ctx.wrap
        ... def double(x):
        ...     return x + x
        >>> double(2), ctx.ops["double"]["+"]
        (4, 1)
        """
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            return self.run(fn, *args, **kwargs)
        return wrapped
