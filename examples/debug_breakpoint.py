"""Break at the first line of a function every time the code under the context calls it.

In real use the hook is pdb (the default, or whatever PYTHONBREAKPOINT names); this example installs a
non-interactive hook that prints where it stopped and the callee's arguments, then carries on.

    python examples/debug_breakpoint.py
"""

import sys

from contexts.debug import breakpoint_on


def collatz_steps(n):
    steps = 0
    while n != 1:
        n = next_collatz(n)
        steps += 1
    return steps


def next_collatz(n):
    return n // 2 if n % 2 == 0 else 3 * n + 1


def show_frame(*args, **kwargs):
    frame = sys._getframe(1)  # the callee's frame, at its first line
    print(f"  break in {frame.f_code.co_name} at line {frame.f_lineno}: locals {frame.f_locals}")


sys.breakpointhook = show_frame

print("breaking on next_collatz(n) when n is odd:")
ctx = breakpoint_on(next_collatz, condition=lambda n: n % 2 == 1)
print("collatz_steps(6) =", ctx.run(collatz_steps, 6), f"({ctx.hits} breaks)")
print("outside the context nothing breaks:", collatz_steps(6))
