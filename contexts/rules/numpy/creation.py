"""Array creation: constants with respect to their arguments (sizes, ranges, seeds, dtypes)."""

import numpy as np

from ..registry import registry

registry.nondifferentiable(
    np.arange, np.zeros, np.ones, np.empty, np.eye, np.identity, np.tri, np.indices,
    np.random.default_rng, np.random.seed, np.random.rand, np.random.randn, np.random.random,
    np.random.uniform, np.random.normal, np.isclose, np.allclose, np.array_equal, np.argmax, np.argmin,
    np.count_nonzero, np.unique, np.histogram, np.digitize, np.bincount, np.iscomplexobj, np.isrealobj,
    np.result_type, np.can_cast, np.promote_types, np.ndim, np.size, np.broadcast, np.broadcast_shapes,
    np.isscalar, np.iterable, np.shape,
)
