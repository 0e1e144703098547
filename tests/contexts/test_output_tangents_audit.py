"""Outputs of functions with several outputs (a tuple's entries) whose tangent or cotangent was None (a zero)
or NaN while the output moves with a differentiated input: the class of ?gbsv's LU factors (commit 1f76b44).
Each test compares forward and reverse mode with central differences, or asserts the refusal, and failed
before its fix (said per test)."""

import numpy as np
import pytest
from scipy.linalg import lapack

from contexts import derivative, gradient, jacfwd
from contexts.rules.registry import NoDerivative
from tests import fd


# -- float.__divmod__, float.__rdivmod__: the remainder ---------------------------------------------------------

@pytest.mark.parametrize("f", [
    lambda x: x.__divmod__(1.1)[1],
    lambda x: float.__divmod__(x, 1.1)[1],
    lambda x: x.__rdivmod__(2.5)[1],
    lambda x: (3.0).__divmod__(x)[1],
    lambda x: x.__divmod__(0.7)[1] * x.__divmod__(0.7)[0],
], ids=["divmod", "unbound", "rdivmod", "divisor", "both"])
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_float_divmod_slot_remainder(f, mode):
    # (failed before: the slots were registered as steps, their remainder's derivative 0 in both modes)
    x = 2.0
    got = derivative(f, x) if mode == "forward" else gradient(f, x)[0]
    assert got == pytest.approx(fd.derivative(f, x), rel=1e-6)


# -- LAPACK's placeholder outputs: ?syev* with compute_v=0 (its workspace), ?gesdd/?gesvd with compute_uv=0 ----

_rng = np.random.default_rng(7)
_B = _rng.standard_normal((4, 4))
_SPD = _B @ _B.T + 4.0 * np.eye(4)
_GENERAL = _rng.standard_normal((4, 3))
_SPECTRAL = [(lapack.dsyevd, {"compute_v": 0}, 1), (lapack.dsyev, {"compute_v": 0}, 1)]  # (?syevr's is empty)
_SINGULAR = [(lapack.dgesdd, {"compute_uv": 0}, 0), (lapack.dgesdd, {"compute_uv": 0}, 2),
             (lapack.dgesvd, {"compute_uv": 0}, 0)]


@pytest.mark.parametrize("fn, options, k", _SPECTRAL + _SINGULAR,
                         ids=["syevd-v", "syev-v", "gesdd-u", "gesdd-vt", "gesvd-u"])
def test_lapack_placeholder_tangent_refused_in_forward_mode(fn, options, k):
    # (failed before: forward mode gave the placeholder a NaN tangent, a number where reverse mode refuses)
    a = _SPD if "compute_v" in options else _GENERAL
    with pytest.raises(NoDerivative, match="compute_"):
        jacfwd(lambda m: np.sum(fn(m, **options)[k]), a)


@pytest.mark.parametrize("fn, options, k", [(lapack.dsyevd, {"compute_v": 0}, 0), (lapack.dsyevr, {"compute_v": 0}, 0),
                                            (lapack.dgesdd, {"compute_uv": 0}, 1), (lapack.dgesvd, {"compute_uv": 0}, 1)],
                         ids=["syevd-w", "syevr-w", "gesdd-s", "gesvd-s"])
def test_lapack_values_of_a_values_only_call_against_central_differences(fn, options, k):
    # (the common use, reading the values only, beside a placeholder whose tangent is refused: passed before too)
    a = _SPD if "compute_v" in options else _GENERAL
    weights = np.arange(1.0, 4.0 + (k == 0))[:np.size(fn(a, **options)[k])]

    def f(m):
        return np.sum(fn(m, **options)[k] * weights)
    np.testing.assert_allclose(jacfwd(f, a), fd.gradient(f, a)[0], rtol=1e-6, atol=1e-8)
