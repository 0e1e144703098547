"""Runs a generated program through every mode and classifies each result against finite differences.

Statuses: `right`, `wrong` (a number that disagrees with finite differences), `refused` (an
`overdub.errors.OverdubError`: the engine said clearly it cannot), `crash` (any other exception, a
time-out included), `skip` (finite differences are unreliable there: a kink or jump within a step of the
point, a value above HUGE, or the mode does not apply to the program).

Each mode imports the program's module afresh, so modes never see each other's module-level state.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from overdub.errors import OverdubError

from .gen import Program

MODES = ("primal", "gradient", "derivative", "jvp", "jacfwd", "hessian", "sparsity", "sparsity_local")
STATUSES = ("right", "wrong", "refused", "crash", "skip")

MODE_TIME_LIMIT = 60.0     # seconds per mode, then `crash` (time-out; generous: the machine may be loaded)
PRIMAL_TIME_LIMIT = 1.0    # a program whose plain call is slower is skipped
HUGE = 1e15                # a program whose value is larger has no finite-difference reference (skipped)


class Engines:
    """The functions under test; the unit tests substitute fakes to show the runner can fail."""

    def __init__(self, **overrides):
        import overdub
        from contexts.ad import gradient
        from contexts.forward import derivative, jacfwd, jvp
        from contexts.compose import hessian
        from contexts.sparsity import jacobian_sparsity
        self.gradient, self.derivative, self.jvp, self.jacfwd = gradient, derivative, jvp, jacfwd
        self.hessian, self.jacobian_sparsity = hessian, jacobian_sparsity
        self.primal = lambda f, *args: overdub.Context().run(f, *args)
        for k, v in overrides.items():
            setattr(self, k, v)


@dataclass
class Result:
    mode: str
    status: str
    expected: Any = None
    got: Any = None
    error: str = ""
    seconds: float = 0.0


class _Timeout(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Timeout("time-out")


class _limit:
    """SIGALRM-based time limit (main thread on POSIX only; a no-op elsewhere)."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.active = hasattr(signal, "setitimer") and _main_thread()

    def __enter__(self):
        if self.active:
            self.old = signal.signal(signal.SIGALRM, _on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc):
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old)
        return False


def _main_thread():
    import threading
    return threading.current_thread() is threading.main_thread()


# --- loading programs --------------------------------------------------------------------------------

_count = 0


def write(prog: Program, directory: str) -> str:
    digest = hashlib.sha1(prog.source.encode()).hexdigest()[:10]
    path = os.path.join(directory, f"fz_{prog.suite}_{prog.seed}_{prog.index}_{digest}.py")
    with open(path, "w") as fh:
        fh.write(prog.source)
    return path


def load(path: str):
    """A fresh module from the file (registered in sys.modules, as dataclasses need)."""
    global _count
    _count += 1
    name = f"_fuzz_{_count}_" + os.path.basename(path)[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def unload(mod) -> None:
    sys.modules.pop(mod.__name__, None)


# --- finite differences ------------------------------------------------------------------------------

def _flat(x) -> np.ndarray:
    return np.atleast_1d(np.asarray(x, dtype=float)).ravel()


def _pack(inputs) -> tuple[np.ndarray, Callable]:
    """All inputs as one flat vector, and the map back to the inputs' own types."""
    shapes = [np.shape(x) for x in inputs]
    sizes = [int(np.prod(s)) for s in shapes]
    flat = np.concatenate([_flat(x) for x in inputs])

    def unpack(v):
        out, k = [], 0
        for s, n in zip(shapes, sizes):
            out.append(float(v[k]) if s == () else v[k:k + n].reshape(s).copy())
            k += n
        return tuple(out)
    return flat, unpack


def fd_jacobian(F: Callable, x: np.ndarray, eps: float) -> np.ndarray:
    """Central differences of flat F at flat x: (outputs, inputs)."""
    cols = []
    for j in range(x.size):
        h = eps * max(1.0, abs(x[j]))
        xp, xm = x.copy(), x.copy()
        xp[j] += h
        xm[j] -= h
        cols.append((_flat(F(xp)) - _flat(F(xm))) / (2 * h))
    return np.stack(cols, axis=-1)


def fd_hessian(F: Callable, x: np.ndarray, eps: float) -> np.ndarray:
    n = x.size
    H = np.zeros((n, n))
    hs = [eps * max(1.0, abs(v)) for v in x]
    for i in range(n):
        for j in range(i, n):
            def at(si, sj):
                z = x.copy()
                z[i] += si * hs[i]
                z[j] += sj * hs[j]
                return float(F(z))
            H[i, j] = H[j, i] = (at(1, 1) - at(1, -1) - at(-1, 1) + at(-1, -1)) / (4 * hs[i] * hs[j])
    return H


def _agree(a, b, rtol, atol) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= atol + rtol * np.abs(b)))


class Reference:
    """Finite-difference references of one program, each computed on first use (None: unreliable)."""

    def __init__(self, prog: Program, path: str):
        self.prog, self.path = prog, path
        self.mod = load(path)
        self.x, self.unpack = _pack(prog.inputs)
        self.f = self.mod.f
        self.fv = getattr(self.mod, "fv", None)
        t0 = time.perf_counter()
        self.y = self.f(*prog.inputs)
        self.primal_seconds = time.perf_counter() - t0
        self.scale = max(1.0, abs(float(self.y)))
        self._cache = {}

    def F(self, v):
        return self.f(*self.unpack(v))

    def _stable(self, key, compute, rtol, atol):
        if key not in self._cache:
            if self.scale > HUGE:  # (`np.sin(v)` of a v about 1e21: its period lies far below any step, so the
                self._cache[key] = None  # differences miss its term at every step and agree: seed 5211, numpy 199)
                return None
            a, b = compute(1e-5 if key != "hess" else 1e-3), compute(1e-6 if key != "hess" else 1e-4)
            ok = np.all(np.isfinite(b)) and _agree(a, b, rtol, atol)
            self._cache[key] = b if ok else None
        return self._cache[key]

    def grad(self):
        """FD gradient of f over all inputs, flat."""
        return self._stable("grad", lambda e: fd_jacobian(self.F, self.x, e)[0], 1e-5, 1e-7 * self.scale)

    def jac_first(self):
        """FD Jacobian of fv (numpy) / f (scalar) with respect to the first input only."""
        def compute(e):
            x0 = _flat(self.prog.inputs[0])
            rest = self.prog.inputs[1:]
            shape = np.shape(self.prog.inputs[0])
            if self.fv is None:
                G = lambda v: self.f(*self.unpack(v))  # noqa: E731  (scalar suite: all inputs)
                return fd_jacobian(G, self.x, e)
            G = lambda v: self.fv(v.reshape(shape), *rest)  # noqa: E731
            return fd_jacobian(G, x0, e)
        return self._stable("jac", compute, 1e-5, 1e-7 * self.scale)

    def hess_first(self):
        """FD Hessian of f with respect to the first input (scalar suite: all inputs)."""
        def compute(e):
            if self.fv is None:
                return fd_hessian(self.F, self.x, e)
            shape = np.shape(self.prog.inputs[0])
            rest = self.prog.inputs[1:]
            return fd_hessian(lambda v: self.f(v.reshape(shape), *rest), _flat(self.prog.inputs[0]), e)
        return self._stable("hess", compute, 1e-3, 1e-4 * self.scale)


# --- modes -------------------------------------------------------------------------------------------

def _grad_flat(g, inputs) -> tuple[np.ndarray, bool]:
    """A gradient tuple flat (None -> zeros), and whether any part was None."""
    parts, none = [], False
    for gi, x in zip(g, inputs):
        if gi is None:
            none = True
            parts.append(np.zeros(np.size(x)))
        else:
            parts.append(_flat(gi))
    return np.concatenate(parts), none


def _check(expected, got, rtol, atol) -> bool:
    got = np.asarray(got, dtype=float)
    return bool(np.all(np.isfinite(got))) and _agree(got, expected, rtol, atol)


def _packed(f, k):
    """f of k float arguments as a function of one vector (scalar suite: jacfwd, hessian, sparsity)."""
    if k == 1:
        return lambda v: f(v[0])
    if k == 2:
        return lambda v: f(v[0], v[1])
    return lambda v: f(v[0], v[1], v[2])


def run_mode(mode: str, prog: Program, ref: Reference, eng: Engines) -> Result:
    """Runs one mode on a fresh import of the program and classifies the outcome."""
    R1, A1 = 1e-4, 1e-6 * ref.scale           # first derivatives
    R2, A2 = 2e-3, 2e-4 * ref.scale           # second derivatives
    scalar = prog.suite == "scalar"
    inputs = prog.inputs
    # the reference first: a mode with no reliable reference is skipped without running the engine
    if mode == "primal":
        expected = ref.y
    elif mode in ("gradient", "jvp", "derivative"):
        g = ref.grad()
        if g is None:
            return Result(mode, "skip", error="finite differences disagree (kink or jump near the point)")
        if mode == "gradient":
            expected = g
        elif mode == "jvp":
            expected = float(g @ _flat(np.concatenate([_flat(d) for d in prog.direction])))
        else:  # along the first input's direction only
            d0 = _flat(prog.direction[0])
            expected = float(g[: d0.size] @ d0)
    elif mode in ("jacfwd", "sparsity", "sparsity_local"):
        expected = ref.jac_first()
        if expected is None:
            return Result(mode, "skip", error="finite differences disagree (kink or jump near the point)")
    elif mode == "hessian":
        expected = ref.hess_first()
        if expected is None:
            return Result(mode, "skip", error="finite differences disagree (kink or jump near the point)")
    else:
        raise ValueError(f"unknown mode {mode!r}")

    mod = load(ref.path)
    f, fv = mod.f, getattr(mod, "fv", None)
    rest = inputs[1:]
    t0 = time.perf_counter()
    try:
        with _limit(MODE_TIME_LIMIT):
            if mode == "primal":
                got = eng.primal(f, *inputs)
                ok = (got == expected) or _check(expected, got, 1e-12, 1e-12 * ref.scale)
            elif mode == "gradient":
                got = eng.gradient(f, *inputs)
                flat, none = _grad_flat(got, inputs)
                ok = _check(expected, flat, R1, A1)
            elif mode == "jvp":
                y, got = eng.jvp(f, tuple(inputs), tuple(prog.direction))
                ok = _check(expected, got, R1, A1) and _check(ref.y, y, 1e-9, 1e-9 * ref.scale)
            elif mode == "derivative":
                x0, d0 = inputs[0], prog.direction[0]
                got = eng.derivative(lambda s: f(x0 + s * d0, *rest), 0.0)
                ok = _check(expected, got, R1, A1)
            elif mode == "jacfwd":
                if scalar:
                    got = eng.jacfwd(_packed(f, len(inputs)), np.array(inputs, dtype=float))
                    ok = _check(expected.reshape(-1), _flat(got), R1, A1)
                else:
                    got = eng.jacfwd(lambda a: fv(a, *rest), inputs[0])
                    got = np.asarray(got, dtype=float)
                    ok = got.size == expected.size and _check(expected, got.reshape(expected.shape), R1, A1)
            elif mode == "hessian":
                if scalar:
                    got = eng.hessian(_packed(f, len(inputs)), np.array(inputs, dtype=float))
                else:
                    got = eng.hessian(lambda a: f(a, *rest), inputs[0])
                got = np.asarray(got, dtype=float)
                ok = got.size == expected.size and _check(expected, got.reshape(expected.shape), R2, A2)
            else:  # sparsity: the pattern must cover every clearly nonzero FD entry
                how = "local" if mode == "sparsity_local" else "global"
                if scalar:
                    P = eng.jacobian_sparsity(_packed(f, len(inputs)), np.array(inputs, dtype=float), mode=how)
                else:
                    P = eng.jacobian_sparsity(lambda a: fv(a, *rest), inputs[0], mode=how)
                pattern = np.asarray(P.toarray() if hasattr(P, "toarray") else P, dtype=bool)
                got = pattern.astype(int)
                needed = np.abs(expected) > 1e-4 * ref.scale
                ok = pattern.shape == needed.shape and not np.any(needed & ~pattern)
    except OverdubError as e:
        return Result(mode, "refused", expected, None, _one_line(e), time.perf_counter() - t0)
    except (Exception, _Timeout) as e:
        return Result(mode, "crash", expected, None, _one_line(e, tb=True), time.perf_counter() - t0)
    finally:
        unload(mod)
    note = ""
    if not ok:
        gshape, eshape = np.shape(got if mode != "gradient" else flat), np.shape(expected)
        if mode in ("jacfwd", "hessian") and np.size(got) != np.size(expected):
            note = f"shape {gshape} where {eshape} was expected"
        elif mode.startswith("sparsity"):
            note = (f"pattern of shape {np.shape(got)} where {np.shape(expected)} was expected"
                    if np.shape(got) != np.shape(expected) else
                    "the pattern misses entries where the finite-difference Jacobian is nonzero")
        elif mode == "gradient" and none:
            note = "a gradient is None where finite differences are nonzero"
    return Result(mode, "right" if ok else "wrong", expected, got, note, time.perf_counter() - t0)


def _one_line(e: BaseException, tb: bool = False) -> str:
    msg = str(e).strip().splitlines()
    text = f"{type(e).__name__}: {msg[0] if msg else ''}"
    if tb:  # where it was raised (innermost frame), to group crashes by cause
        frames = traceback.extract_tb(e.__traceback__)
        if frames:
            fr = frames[-1]
            text += f"  [{_short(fr.filename)}:{fr.lineno} in {fr.name}]"
    return text


def _short(path: str) -> str:
    """A frame's file for messages: relative to the repository, from site-packages on, or its name."""
    if path.startswith("<"):
        return path
    if "site-packages" + os.sep in path:
        return path.split("site-packages" + os.sep, 1)[1]
    rel = os.path.relpath(path)
    return os.path.basename(path) if rel.startswith("..") else rel


@dataclass
class ProgramOutcome:
    prog: Program
    results: list            # [Result]
    invalid: str = ""        # the program itself fails or is too slow: not counted


def run_program(prog: Program, modes=MODES, eng: Engines | None = None) -> ProgramOutcome:
    eng = eng or Engines()
    directory = tempfile.mkdtemp(prefix="overdub_fuzz_")
    try:
        return _run_program(prog, modes, eng, write(prog, directory))
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _run_program(prog, modes, eng, path) -> ProgramOutcome:
    try:
        with _limit(MODE_TIME_LIMIT):
            ref = Reference(prog, path)
    except (Exception, _Timeout) as e:
        return ProgramOutcome(prog, [], invalid=_one_line(e, tb=True))
    try:
        if not math.isfinite(float(ref.y)):
            return ProgramOutcome(prog, [], invalid=f"non-finite value {ref.y!r}")
        if ref.primal_seconds > PRIMAL_TIME_LIMIT:
            return ProgramOutcome(prog, [], invalid=f"slow primal ({ref.primal_seconds:.2f} s)")
        results = []
        for mode in modes:
            try:
                with _limit(MODE_TIME_LIMIT * 3):  # the FD reference (Hessian: O(n^2) calls) included
                    results.append(run_mode(mode, prog, ref, eng))
            except (Exception, _Timeout) as e:  # the reference itself failed: the program is at fault
                results.append(Result(mode, "skip", error="reference failed: " + _one_line(e)))
        return ProgramOutcome(prog, results)
    finally:
        unload(ref.mod)
