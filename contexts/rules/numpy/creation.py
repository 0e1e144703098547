"""Array creation: constants with respect to their arguments (sizes, ranges, seeds, dtypes)."""

import numpy as np

from ..registry import registry
from ..sparsity_specs import CONSTRUCTOR, INDICES, Custom

registry.nondifferentiable(
    np.arange, np.zeros, np.ones, np.empty, np.eye, np.identity, np.tri, np.indices,
    np.random.default_rng, np.random.seed, np.random.rand, np.random.randn, np.random.random,
    np.random.uniform, np.random.normal, np.isclose, np.allclose, np.array_equal, np.argmax, np.argmin,
    np.count_nonzero, np.digitize, np.iscomplexobj, np.isrealobj,
    np.result_type, np.can_cast, np.promote_types, np.ndim, np.size, np.broadcast, np.broadcast_shapes,
    np.isscalar, np.iterable, np.shape, np.dtype,
)

# sparsity (contexts/rules/sparsity_specs.py): arrays made inside the function are tracers, so that they
# can take traced values
registry.sparsity(CONSTRUCTOR, np.zeros, np.ones, np.empty, np.full)
registry.sparsity(Custom("ops.py: a constant tracer of the argument's shape"), np.zeros_like, np.ones_like,
                  np.empty_like, np.full_like)
registry.sparsity(INDICES, np.digitize)
