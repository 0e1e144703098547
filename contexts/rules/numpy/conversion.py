"""Leaving numpy: `x.item()`, `x.tolist()`; methods of numpy scalars use the ndarray rules."""

import numpy as np

from ..registry import registry


@registry.adjoint((np.ndarray, "item"), (np.generic, "item"))
def item_adjoint(dy, y, self, *index):
    out = np.zeros(np.shape(self), dtype=np.result_type(getattr(self, "dtype", float), type(dy)))
    if index:
        out[np.unravel_index(index[0], out.shape) if len(index) == 1 else index] = dy
    else:
        out[...] = dy
    return (out if isinstance(self, np.ndarray) else out[()],) + (None,) * len(index)


@registry.adjoint((np.ndarray, "tolist"))
def tolist_adjoint(dy, y, self):
    def fill(g, like):
        if isinstance(like, list):
            return [fill(gi, li) for gi, li in zip(g if g is not None else [None] * len(like), like)]
        return 0.0 if g is None else g
    return (np.asarray(fill(dy, y), dtype=self.dtype if self.dtype.kind in "fc" else float),)


def scalar_method_rule(scalar_type, name):
    """The rule for a method of a numpy scalar: the ndarray method's rule (scalars act as 0-d arrays)."""
    return registry.rules.get((np.ndarray, name))
