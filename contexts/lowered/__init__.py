"""The lowered form every transformer consumes: a function as a Wengert list with Python's control flow.

How the pieces fit (each module's docstring states its invariant):

- `lower`      a function's tree -> lowered form (one operation on atoms per statement, control flow kept).
- `activity`   which variables can carry a derivative; which may share memory (views, containers, closures).
- `build`      generated code as trees: the constructors every generator uses, `at` placing statements on
               the user's line (tracebacks through generated code point at the user's source).
- `inline`     a declared one-expression formula (a rule's derivative) placed into generated code.
- `runtime`    what code built from it calls in every mode (`unpack`, element addresses of views).
- `bisection`  loops narrowing a bracket by a differentiated test (refused where not stated as roots).
- `implicit`   such a loop's result stated as the root it finds, before any context sees the function.
- `show`       `show_lowered(f)`: the lowered form as text, one line per statement, active stores marked.
- `cuts`       the complex functions' branch cuts checked in every mode (their rules wrapped).

Reverse mode (`contexts.ad`) and the forward tangent twin (`contexts.forward.tangent`) both generate their
code from this form; it knows no mode and imports neither.
"""

from . import implicit  # noqa: F401  (registers its rewrite of definitions with the core)
from . import cuts as _cuts
from .lower import TEMP_PREFIX, Unsupported, lower
from .show import show_lowered

_cuts.wrap_rules()  # (the complex functions' branch cuts: their rules' adjoints and frules check them)

__all__ = ["lower", "Unsupported", "TEMP_PREFIX", "show_lowered"]
