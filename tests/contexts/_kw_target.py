"""A function taking any keywords, called with sixteen from `_kwcall_lib` (an imported module's method call)."""


def g(**kw):
    names = kw.pop("names", ())
    return (sum(kw.values()) + len(names)) * kw["q"]
