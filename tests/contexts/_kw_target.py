"""A function taking any keywords, called with sixteen from `_kwcall_lib` (an imported module's method call)."""


def g(**kw):
    return sum(kw.values()) * kw["q"]
