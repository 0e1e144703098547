"""Which entries of a dense derivative matrix count as nonzero, for comparing with sparsity patterns."""

from __future__ import annotations

import numpy as np


def nonzero(M, tol=1e-6):
    """Entries that are numerically nonzero relative to the matrix scale."""
    M = np.asarray(M)
    scale = max(1.0, float(np.abs(M).max()) if M.size else 1.0)
    return np.abs(M) > tol * scale
