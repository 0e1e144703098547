"""One right-hand side written for a stiff ODE solver, differentiated by all three engines.

Solver code fills output arrays in place: `rhs(t, u, dudt)` writes `dudt`, often through helpers that
write slices of it. Such code is written once for speed, never for AD; autograd and JAX refuse it
(`dudt[1:-1] = ...`). overdub differentiates it as written, in reverse mode, in forward mode, and for
sparsity detection, and the three agree with the closed form.

The system is a 1-D reaction-diffusion equation, du/dt = u_xx + u - u^3 on n points (Dirichlet ends),
whose Jacobian is tridiagonal: 1/h^2 off the diagonal, -2/h^2 + 1 - 3u^2 on it.
"""

import numpy as np

from contexts import jacfwd, jacobian, jvp
from contexts.sparsity import jacobian_sparsity, sparse_jacobian

N = 8
H = 1.0 / (N + 1)


def laplacian_into(u, out):
    """out = the second difference of u (zero beyond both ends), written slice by slice."""
    out[1:-1] = (u[:-2] - 2.0 * u[1:-1] + u[2:]) / H ** 2
    out[0] = (u[1] - 2.0 * u[0]) / H ** 2
    out[-1] = (u[-2] - 2.0 * u[-1]) / H ** 2


def add_reaction(u, out):
    out += u - u ** 3          # in place, into the caller's array


def rhs(t, u, dudt):
    """The solver's signature: fills dudt, returns nothing."""
    laplacian_into(u, dudt)
    add_reaction(u, dudt)


def f(u):
    """What an implicit solver evaluates: the right-hand side as a function of the state."""
    dudt = np.empty_like(u)
    rhs(0.0, u, dudt)
    return dudt


def closed_form(u):
    J = np.diag(-2.0 / H ** 2 + 1.0 - 3.0 * u ** 2)
    J += np.diag(np.full(N - 1, 1.0 / H ** 2), 1) + np.diag(np.full(N - 1, 1.0 / H ** 2), -1)
    return J


def main():
    u = np.sin(np.linspace(0.3, 2.8, N))
    want = closed_form(u)
    J_reverse = jacobian(f, u)                     # one reverse pass per output
    J_forward = jacfwd(f, u)                       # forward mode
    pattern = jacobian_sparsity(f, u)              # which entries can be nonzero
    J_sparse = sparse_jacobian(f, u, pattern=pattern).toarray()   # three colours for a tridiagonal
    for name, J in (("reverse", J_reverse), ("forward", J_forward), ("sparse", J_sparse)):
        err = np.max(np.abs(J - want))
        print(f"{name:8s} Jacobian: max error vs closed form {err:.1e}")
        assert err < 1e-9 * np.max(np.abs(want)), name
    v = np.linspace(-1.0, 1.0, N)
    _, Jv = jvp(f, (u,), (v,))                     # one directional derivative, no Jacobian
    print(f"jvp: max error vs closed form {np.max(np.abs(Jv - want @ v)):.1e}")
    assert np.allclose(Jv, want @ v, rtol=1e-12, atol=1e-9)
    assert (pattern.toarray() == (want != 0)).all()
    print(f"sparsity pattern: {pattern.nnz} nonzeros, tridiagonal as expected")


if __name__ == "__main__":
    main()
