"""The lowered form every transformer consumes: a function as a Wengert list with Python's control flow.

How the pieces fit (each module's docstring states its invariant):

- `lower`      a function's tree -> lowered form (one operation on atoms per statement, control flow kept).
- `activity`   which variables can carry a derivative; which may share memory (views, containers, closures).
- `emit`       building code from it: generated statements at the user's line, indices as values.
- `runtime`    what code built from it calls in every mode (`unpack`, element addresses of views).
- `show`       `show_lowered(f)`: the lowered form as text, one line per statement, active stores marked.

Reverse mode (`contexts.ad`) and the forward tangent twin (`contexts.forward.tangent`) both generate their
code from this form; it knows no mode and imports neither.
"""

from .lower import TEMP_PREFIX, Unsupported, lower
from .show import show_lowered

__all__ = ["lower", "Unsupported", "TEMP_PREFIX", "show_lowered"]
