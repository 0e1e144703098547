"""Sparsity detection (SparseConnectivityTracer.jl's idea on overdub) and sparse Jacobians.

Tracers carry, per element, the set of inputs (and for Hessians the input pairs) it depends on, as a
vectorised pattern; operators and numpy work by overloading, other calls through `SparsityContext` and
the shared registry: each primitive's sparsity spec is declared beside its derivatives in the domain files
of `contexts/rules` (data: `contexts/rules/sparsity_specs.py`, carried out by `interpret.py`), or, where
it is code on tracers, is an `srule` in `rules.py`.

Limits (each raises a clear error or is conservative, never silently wrong):
- global mode has no values: a branch, an integer index or `np.isfinite(x).all()` check on an
  input-dependent value raises `TracedBranchError` (use mode="local");
- a C function with no rule raises `NoSparsityRule` naming the line; `registry.sparsity(DENSE, fn)` is
  a conservative rule for it; gufuncs (linalg kernels), einsum, interp, convolve are dense by default;
- arrays made inside the function with np.zeros/ones/empty/full become tracers so they can receive
  traced values; where numpy returns a view (slicing, reshape, transpose, np.split, np.flip, .real, ...)
  so does a tracer, and a write through it reaches the base; a `.real`/`.imag` view keeps the parts'
  dependencies together (a write through it adds to them);
- `isinstance(x, np.ndarray)` is False for a traced value (a constant answers as its value does);
  `np.r_`/`np.c_` are not supported;
- scalar code works (Python loops over elements) at about 0.5 ms per operation: vectorise for speed.

>>> import numpy as np
>>> from contexts.sparsity import jacobian_sparsity, sparse_jacobian
>>> f = lambda x: x[2:] - 2 * x[1:-1] + x[:-2]
>>> jacobian_sparsity(f, np.zeros(5)).nnz
9
"""

from .api import color_columns, hessian_sparsity, jacobian_sparsity, plot_sparsity, sparse_jacobian
from .ops import dense
from .pattern import Pattern
from .tracer import NoSparsityRule, TracedBranchError, Tracer

__all__ = ["jacobian_sparsity", "hessian_sparsity", "sparse_jacobian", "color_columns", "plot_sparsity",
           "SparsityContext", "Tracer", "Pattern", "TracedBranchError", "NoSparsityRule", "dense"]


def __getattr__(name):
    if name == "SparsityContext":  # needs the core; imported on first use
        from .context import SparsityContext
        return SparsityContext
    raise AttributeError(name)
