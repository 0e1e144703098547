"""Find the first operation that turns finite numbers into NaN or Inf.

    python examples/debug_nan.py
"""

import warnings

import numpy as np

from contexts.debug import NaNContext, NaNError


def softmax(scores):
    exps = np.exp(scores)            # overflows for large scores ...
    return exps / exps.sum()         # ... and inf / inf is NaN here


def stable_softmax(scores):
    exps = np.exp(scores - np.max(scores))
    return exps / exps.sum()


scores = np.array([1000.0, 1001.0, 2.0])
with warnings.catch_warnings():
    warnings.simplefilter("ignore", RuntimeWarning)
    print("softmax(scores) =", softmax(scores), " <- the NaNs appear, but where do they come from?")
    try:
        NaNContext().run(softmax, scores)
    except NaNError as e:
        print(f"\nNaNError: {e}\n")
        print("operation:", e.site.op, "| line:", e.site.lineno, "| operands:", e.args_)

print("stable_softmax(scores) =", NaNContext().run(stable_softmax, scores))
