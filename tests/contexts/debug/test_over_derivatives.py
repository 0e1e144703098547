"""The observing contexts run over every transformation (issue "Contexts compose"): a derivative computed
under TraceContext, CountContext or NaNContext is the derivative computed without it, checked against the
closed form. A pass's own twins (reverse mode's recording twin and adjoint, forward mode's tangent twin)
compute something other than their source, so the core runs them as they are (`overdub.source.is_opaque`)
instead of recursing into the user's text in their place."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import CountContext, NaNContext, TraceContext, gradient, hessian, jacfwd, jvp, pullback
from contexts.debug import NaNError
from contexts.sparsity import jacobian_sparsity

X = np.array([0.3, 0.7])


def f(x):
    return np.sum(np.sin(x) * x) + x[0] * x[1]


GRAD = np.cos(X) * X + np.sin(X) + X[::-1]
HESS = np.diag(2 * np.cos(X) - np.sin(X) * X) + np.array([[0.0, 1.0], [1.0, 0.0]])

RUNS = {
    "gradient": (lambda: gradient(f, X)[0], GRAD),
    "pullback": (lambda: pullback(f, X)[1](1.0)[0], GRAD),
    "jvp": (lambda: jvp(f, (X,), (np.array([1.0, -2.0]),))[1], GRAD @ [1.0, -2.0]),
    "jacfwd": (lambda: jacfwd(f, X), GRAD),
    "hessian": (lambda: hessian(f, X), HESS),
    "sparsity": (lambda: jacobian_sparsity(lambda v: np.array([f(v), v[1] * 2.0]), X).toarray(),
                 np.array([[True, True], [False, True]])),
}


@pytest.mark.parametrize("context", [TraceContext, CountContext, NaNContext], ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_derivative_under_an_observing_context(context, name):
    run, want = RUNS[name]
    got = context().run(run)
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=1e-10)


def test_nan_in_the_backward_pass_is_stopped_not_crashed():
    g = lambda x: (np.sqrt(x) * 0.0).sum()  # noqa: E731  (inf * 0 in the backward pass at x = 0)
    with pytest.raises(NaNError, match="NaN"):
        NaNContext().run(gradient, g, np.array([0.0, 1.0]))
