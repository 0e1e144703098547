"""Trace the calls a stdlib function makes, without changing a line of it.

    python examples/debug_trace.py
"""

import colorsys
import os
import statistics
import tempfile

from contexts.debug import TraceContext


def spread(colors):
    """Hue of each colour and the spread of those hues."""
    hues = [colorsys.rgb_to_hsv(*rgb)[0] for rgb in colors]
    return statistics.pstdev(hues)


colors = [(0.9, 0.1, 0.1), (0.1, 0.8, 0.2), (0.2, 0.3, 0.9)]

# Every Python-level call, the stdlib's included; max_depth keeps the picture small.
trace = TraceContext(max_depth=2)
print("spread =", trace.run(spread, colors))
print(trace.tree())

# Only the calls into colorsys, wherever they happen.
only_colorsys = TraceContext(modules=["colorsys"])
only_colorsys.run(spread, colors)
print("\ncolorsys calls:", len(list(only_colorsys.nodes())))

# JSON for tools, DOT for pictures (`dot -Tsvg calls.dot > calls.svg` if Graphviz is installed).
print(f"\n{len(trace.to_json())} characters of JSON; the DOT graph begins:")
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "calls.dot")
    trace.to_dot(path)
    with open(path) as f:
        print("".join(f.readlines()[:4]), end="")
