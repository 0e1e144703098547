"""Contexts that only observe: call trees, breakpoints, the first NaN/Inf, operation counts.

Each runs any pure-Python function, the user's or a third-party library's, unchanged:

>>> import colorsys
>>> ctx = TraceContext()
>>> ctx.run(colorsys.rgb_to_hsv, 0.2, 0.4, 0.4)[0]
0.5
>>> ctx.roots[0].call_text()
'rgb_to_hsv(0.2, 0.4, 0.4)'
"""

from ._blind import SawNothingWarning
from .breakpoints import BreakpointContext, breakpoint_on
from .count import CountContext
from .nan import NaNContext, NaNError
from .trace import CallNode, TraceContext

__all__ = ["TraceContext", "CallNode", "breakpoint_on", "BreakpointContext", "NaNContext", "NaNError",
           "CountContext", "SawNothingWarning"]
