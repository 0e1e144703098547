"""A library function that keeps its last inputs and result in a module dict and hands the result back for
inputs equal within a tolerance (pygfunction's `thermal_resistances`): for tests of values kept past a
derivative call (tests/contexts/test_sweep_36_cases.py)."""

import numpy as np

CACHE = {"k": None, "R": None}


def resistances(k):
    kk = np.ones(2) * k
    if CACHE["k"] is not None and np.allclose(kk, CACHE["k"]):
        return CACHE["R"]
    r = np.zeros((2, 2))
    r[0, 0] = k * k
    r[1, 1] = 2.0 * k
    CACHE["k"] = kk
    CACHE["R"] = r
    return r
