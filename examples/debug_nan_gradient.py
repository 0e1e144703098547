"""Find the line of a NaN gradient: NaNContext over `gradient` names the adjoint that made the first NaN,
over forward mode (`jvp`, `derivative`, `jacfwd`, `hessian`) the tangent that did.

    python examples/debug_nan_gradient.py

A pair potential over particle positions: the energy is finite, but its gradient is NaN. The culprit is
the distance of each particle to itself: sqrt(0) is fine, its derivative 0.5 / sqrt(0) is not, and the
mask that drops those pairs multiplies the infinite derivative by zero in the backward pass. Forward mode
meets it too: the diagonal's tangent is 0, times sqrt's infinite slope (a zero tangent does not prove that
a value stays put: `np.cbrt(x ** 3)` at 0 has a zero tangent under cbrt's infinite slope and derivative 1,
so no engine takes such a term as 0), and so does a masked zero that moves, `np.sqrt(v) * keep`;
NaNContext over `jvp` names that tangent. CountContext shows what each pass computed.
"""

import warnings

import numpy as np

from contexts import CountContext, NaNContext, gradient, jvp
from contexts.debug import NaNError


def distances(positions):
    diff = positions[:, None, :] - positions[None, :, :]
    return np.sqrt((diff ** 2).sum(axis=-1))        # includes each particle's distance to itself: 0


def energy(positions):
    r = distances(positions)
    off_diagonal = 1.0 - np.eye(len(positions))
    return 0.5 * np.sum(off_diagonal * (r - 1.0) ** 2)   # springs of rest length 1


def masked_roots(values):
    keep = np.array([0.0, 1.0, 1.0])  # the first value is dropped: sqrt's infinite tangent there, times 0: NaN
    return np.sum(np.sqrt(values) * keep)


def safe_distances(positions):
    diff = positions[:, None, :] - positions[None, :, :]
    squared = (diff ** 2).sum(axis=-1) + np.eye(len(positions))   # 1 on the diagonal: sqrt stays smooth
    return np.sqrt(squared) * (1.0 - np.eye(len(positions)))


def safe_energy(positions):
    r = safe_distances(positions)
    off_diagonal = 1.0 - np.eye(len(positions))
    return 0.5 * np.sum(off_diagonal * (r - 1.0) ** 2)


positions = np.array([[0.0, 0.0], [1.5, 0.0], [0.0, 0.7]])
with warnings.catch_warnings():
    warnings.simplefilter("ignore", RuntimeWarning)
    print("energy =", energy(positions))
    g = gradient(energy, positions)[0]
    print("gradient =", g.tolist(), " <- NaN, but from which line?")
    assert np.isnan(g).all()
    try:
        NaNContext().run(gradient, energy, positions)
        raise SystemExit("NaNContext found nothing")
    except NaNError as e:
        print(f"\nNaNError: {e}\n")
        assert e.adjoint and e.site.function == "distances" and e.site.op == "np.sqrt"

    velocity = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5]])
    rate = jvp(energy, (positions,), (velocity,))[1]     # forward mode: d energy along the velocity
    h = 1e-6
    moved = (energy(positions + h * velocity) - energy(positions - h * velocity)) / (2 * h)
    print("energy's rate of change =", rate, "(central differences:", moved, ") <- NaN too: 0 * inf on the diagonal")
    assert np.isnan(rate)
    assert np.isclose(jvp(safe_energy, (positions,), (velocity,))[1], moved, rtol=1e-6)  # (kept away from 0)

    values, push = np.array([0.0, 0.5, 2.0]), np.array([1.0, 1.0, 1.0])
    rate = jvp(masked_roots, (values,), (push,))[1]
    print("masked roots' rate of change =", rate, " <- NaN: the zero moves")
    assert np.isnan(rate)
    try:
        NaNContext().run(jvp, masked_roots, (values,), (push,))
        raise SystemExit("NaNContext found nothing")
    except NaNError as e:
        print(f"\nNaNError: {e}\n")
        assert e.tangents is not None and e.site.function == "masked_roots"

    fixed = NaNContext().run(gradient, safe_energy, positions)[0]   # no NaN anywhere: no error
    h = 1e-6
    bump = np.zeros_like(positions)
    bump[0, 0] = h
    fd = (safe_energy(positions + bump) - safe_energy(positions - bump)) / (2 * h)
    assert np.isclose(fixed[0, 0], fd, rtol=1e-6), (fixed[0, 0], fd)
    assert np.isclose(safe_energy(positions), energy(positions))
    print("with the diagonal kept away from sqrt's singularity:", fixed.round(4).tolist())

    counts = CountContext()
    counts.run(jvp, safe_energy, (positions,), (velocity,))
    print("\noperations of the forward-mode derivative, primal and tangent, per function:")
    print(counts.table())
    assert counts.ops["safe_distances [tangent]"]["np.sqrt"] == 1
