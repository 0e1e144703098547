"""A random-program soundness probe for jacobian_sparsity / hessian_sparsity (not collected by pytest).

    python -m tests.contexts.sparsity._probe [count] [seed]

Builds random numpy programs (ufuncs, broadcasting, reductions, views, in-place updates, fancy indexing,
sort/median, linalg, scipy.special) on 1-D and 3x4 inputs, writes them to a module (the tracer needs their
source), runs both sparsity modes and compares with finite-difference Jacobians and Hessians: an entry
that finite differences see (checked at two step sizes) but the pattern lacks is a miss. Prints counts
of programs, crashes (an error other than NoSparsityRule / TracedBranchError), misses and refusals.
"""

from __future__ import annotations

import atexit
import collections
import importlib.util
import os
import shutil
import sys
import tempfile
import traceback
import warnings

import numpy as np

from contexts.sparsity import NoSparsityRule, TracedBranchError, hessian_sparsity, jacobian_sparsity
from tests import fd

UNARY = ["np.sin({a})", "np.exp({a} / 4)", "np.tanh({a})", "np.abs({a})", "np.sqrt({a} * {a} + 1)",
         "np.log1p({a} * {a})", "{a} ** 2", "{a} ** 3", "-{a}", "np.cos({a}) * 2", "np.square({a})",
         "np.arctan({a})", "1 / (1 + {a} * {a})", "np.maximum({a}, 0.3)", "np.clip({a}, -0.5, 0.5)",
         "np.sign({a}) * {a}", "np.floor({a}) + {a}", "np.round({a}, 1) * {a}", "np.cbrt({a} + 3)",
         "sc.expit({a})", "sc.erf({a})", "sc.gammaln({a} * {a} + 1)", "sc.log_ndtr({a})",
         "sc.xlogy({a} * {a} + 1, {a} * {a} + 2)", "sc.softmax({a})", "sc.logsumexp({a})",
         "sc.softmax({a}, axis=0)", "sc.logsumexp({a}, axis=-1)", "np.sinc({a})", "np.expm1({a} / 3)",
         "np.where({a} > 0, {a}, {a} ** 2)", "np.where({a} > 0.2, {a} * 3, 1.0)",
         "np.nan_to_num({a})", "np.real({a})", "{a}.astype(float)", "np.float64(2) * {a}"]
BINARY = ["{a} + {b}", "{a} * {b}", "{a} - {b}", "{a} / ({b} * {b} + 1)", "np.maximum({a}, {b})",
          "np.minimum({a}, {b})", "np.hypot({a}, {b})", "np.arctan2({a}, {b} * {b} + 1)",
          "np.where({a} > {b}, {a}, {b})", "{a} * np.exp({b} / 4)", "np.fmax({a}, {b})",
          "np.power({a} * {a} + 1, {b} / 4)", "np.logaddexp({a}, {b})", "np.copysign({a}, {b})"]
REDUCE = ["np.sum({a})", "np.sum({a}, axis={ax})", "np.sum({a}, axis={ax}, keepdims=True)",
          "{a}.mean(axis={ax})", "np.prod({a}, axis={ax})", "np.max({a}, axis={ax})", "{a}.min()",
          "np.std({a}, axis={ax})", "np.var({a})", "{a}.max(axis={ax}, keepdims=True)", "{a}.sum()",
          "np.mean({a}, axis={ax}, keepdims=True)", "np.linalg.norm({a})", "np.linalg.norm({a}, axis={ax})",
          "np.linalg.norm({a}, ord=1)", "np.linalg.norm({a}, ord=np.inf)", "np.cumsum({a})",
          "np.cumsum({a}, axis={ax})", "np.cumprod({a}, axis={ax})", "np.diff({a})", "np.diff({a}, axis={ax})",
          "np.diff({a}, n=2)", "np.sort({a})", "np.sort({a}, axis={ax})", "np.sort({a}, axis=None)",
          "{a}[np.argsort({a})]", "np.take_along_axis({a}, np.argsort({a}, axis={ax}), axis={ax})",
          "np.median({a})", "np.median({a}, axis={ax})", "np.percentile({a}, 30)",
          "np.percentile({a}, 70, axis={ax})", "np.quantile({a}, 0.4)", "np.ptp({a})", "np.average({a})",
          "np.average({a}, axis={ax}, weights=None)", "np.amax({a})", "np.nanmax({a})", "np.nansum({a})",
          "np.argmax({a}) + {a}", "{a}[np.argmax({a})]", "np.trapezoid({a}) if hasattr(np, 'trapezoid') else np.sum({a})",
          "np.partition({a}, 1, axis=-1)", "np.sum({a} ** 2, axis={ax}) ** 0.5", "np.cumsum({a}[::-1])[::-1]",
          "np.count_nonzero({a} > 0) * {a}", "np.all({a} > -10) * {a}", "np.any({a} > 0) + {a}",
          "np.maximum.accumulate({a}, axis={ax})", "np.add.reduce({a}, axis={ax})", "np.multiply.reduce({a})",
          "np.minimum.reduce({a}, axis={ax})", "np.einsum('...->', {a})", "np.max({a}) - np.min({a})",
          "np.nanmean({a})", "np.nanstd({a})", "np.nanmedian({a})"]
VIEW = ["{a}[1:]", "{a}[::-1]", "{a}[..., 1:3]", "{a}.T", "{a}.reshape(-1)", "{a}.ravel()", "{a}[None]",
        "{a}[..., 0]", "{a}[[0, 2, 1]]", "{a}[{a} > 0]", "{a}[..., [1, 0]]", "{a}[-1]",
        "np.flip({a})", "np.roll({a}, 1)", "np.concatenate([{a}, {a} * 2])", "np.stack([{a}, {b}])",
        "np.concatenate([{a}.ravel(), {b}.ravel()])", "np.hstack([{a}.ravel(), {b}.ravel()])",
        "np.vstack([{a}, {a}])", "np.tile({a}, 2)", "np.repeat({a}, 2)", "np.atleast_2d({a})",
        "np.expand_dims({a}, 0)", "np.squeeze({a})", "{a}.flatten()", "np.outer({a}.ravel()[:3], {b}.ravel()[:2])",
        "np.pad({a}, 1)", "np.pad({a}, 1, mode='edge')", "np.triu(np.atleast_2d({a}))",
        "np.broadcast_to({a}, (2,) + {a}.shape)", "np.moveaxis(np.atleast_2d({a}), 0, -1)",
        "np.swapaxes(np.atleast_2d({a}), 0, 1)", "np.take({a}, [0, 0, 1])", "np.diag(np.atleast_2d({a}))",
        "{a}[{b}.ravel()[0] > 0:]", "np.array([{a}.ravel()[0], {b}.ravel()[-1]])",
        "np.asarray({a}) * 1", "np.copy({a})", "np.append({a}, {b})", "np.column_stack([{a}.ravel(), {a}.ravel()])",
        "np.where({a} > 0)[0] * 1.0", "np.nonzero({a} > 0)[0] + 0.0", "{a}.ravel()[1::2]",
        "np.split({a}.ravel()[:4], 2)[1]", "np.array_split({a}.ravel(), 2)[0]", "np.fliplr(np.atleast_2d({a}))"]
LINALG = ["np.dot({a}.ravel()[:3], {b}.ravel()[:3])", "{A} @ {a}.ravel()[:3]", "np.matmul({A}, {A})",
          "np.einsum('ij,j->i', {A}, {a}.ravel()[:3])", "np.einsum('ij,ij->', {A}, {A})",
          "np.linalg.inv({A})", "np.linalg.solve({A}, {a}.ravel()[:3])", "np.linalg.det({A})",
          "np.linalg.svd({A})[1]", "np.linalg.svd({A}, compute_uv=False)", "np.linalg.eigh({A} + {A}.T)[0]",
          "np.linalg.eigvalsh({A} + {A}.T)", "np.linalg.qr({A})[1]", "np.linalg.qr({A})[0]",
          "np.linalg.norm({A}, ord=2)", "np.linalg.norm({A}, axis=0)", "np.linalg.cholesky({A} @ {A}.T)",
          "np.linalg.slogdet({A})[1]", "np.trace({A})", "np.linalg.pinv({A})", "np.kron({A}[0], {a}.ravel()[:2])",
          "np.tensordot({A}, {A}, axes=1)", "np.inner({a}.ravel()[:3], {A})", "np.vdot({A}, {A})",
          "{A}.T @ {A}", "np.linalg.matrix_power({A}, 2)", "np.linalg.eigvals({A} + {A}.T)",
          "np.linalg.lstsq({A}, {a}.ravel()[:3], rcond=None)[0]", "np.cross({a}.ravel()[:3], {b}.ravel()[:3])",
          "np.convolve({a}.ravel(), [1.0, -1.0])", "np.interp(0.3, [0.0, 1.0], {a}.ravel()[:2])",
          "np.polyval({a}.ravel()[:3], 0.5)", "np.linalg.multi_dot([{A}, {A}, {A}])"]
INPLACE = ["t = {a}.copy()\n    t[:] = {b}\n    {v} = t",
           "t = {a}.copy()\n    t[0] += {s}\n    {v} = t",
           "t = {a}.copy()\n    t *= {b}\n    {v} = t",
           "t = {a}.copy()\n    t[..., 1:] -= t[..., :-1]\n    {v} = t",
           "t = {a}.copy()\n    w = t[..., 1:]\n    w *= 3\n    {v} = t",
           "t = {a}.copy()\n    w = t.T\n    w += 1\n    w[0] = {s}\n    {v} = t",
           "t = {a}.copy()\n    t.sort()\n    {v} = t",
           "t = {a}.copy()\n    t.sort(axis=0)\n    {v} = t",
           "t = np.zeros_like({a})\n    np.exp({a}, out=t)\n    {v} = t",
           "t = np.empty({a}.shape)\n    np.multiply({a}, {b}, out=t)\n    {v} = t",
           "t = np.zeros({a}.shape)\n    t[{a} > 0] = {a}[{a} > 0]\n    {v} = t",
           "t = {a}.copy()\n    t[t > 0] *= 2\n    {v} = t",
           "t = np.zeros({a}.size)\n    for k in range({a}.size):\n        t[k] = {a}.ravel()[k] * {a}.ravel()[-1 - k]\n    {v} = t",
           "t = {a}.copy()\n    np.add.at(t.reshape(-1), [0, 0, 1], {s})\n    {v} = t",
           "t = {a}.copy().ravel()\n    t[[0, 2]] = t[[2, 0]]\n    {v} = t",
           "t = np.ones(3)\n    t[1] = {s}\n    t /= {s} * {s} + 1\n    {v} = t",
           "t = {a}.copy()\n    np.copyto(t, {b})\n    {v} = t",
           "t = {a}.copy()\n    t.fill(0.0)\n    t += {s}\n    {v} = t",
           "t = {a}.copy()\n    r = t.reshape(-1)\n    r[1] = {s} ** 2\n    {v} = t",
           "t = {a}.copy()\n    np.cumsum({a}, axis=-1, out=t)\n    {v} = t",
           "t = {a}.copy()\n    np.sin(t, out=t)\n    {v} = t",
           "t = {a}.copy()\n    t[..., ::2] = {s}\n    {v} = t",
           "t = {a}.copy()\n    t[np.argmax({a})] = 0.0\n    {v} = t" if False else "t = {a}.copy()\n    t.ravel()[np.argmax({a})] = 0.0\n    {v} = t",
           "t = [e * {s} for e in {a}.ravel()]\n    {v} = np.array(t)",
           "t = {a}.copy()\n    t.shape = (-1,)\n    t[0] = {s}\n    {v} = t",
           "t = sorted({a}.ravel())\n    {v} = np.array(t)",
           "t = {a}.ravel().tolist()\n    {v} = np.array(t[::-1]) * {s}",
           "t = {a}.copy()\n    np.clip(t, -0.5, 0.5, out=t)\n    {v} = t",
           "t = {a}.copy()\n    np.maximum({a}, {b}, out=t)\n    {v} = t",
           "t = {a}.copy()\n    t[...] = np.where(t > 0, t, {s})\n    {v} = t",
           "t = {a}.copy()\n    np.put(t, [0, 1], {s})\n    {v} = t",
           "t = {a}.copy()\n    np.place(t, {a} > 0, {s})\n    {v} = t",
           "t = {a}.copy()\n    np.putmask(t, {a} > 0, {b})\n    {v} = t",
           "t = {a}.copy()\n    t.partition(1)\n    {v} = t",
           "t = {a}.copy()\n    t[...] = np.sort(t, axis=-1)[..., ::-1]\n    {v} = t"]
KINDS = [(UNARY, 4), (BINARY, 3), (REDUCE, 4), (VIEW, 3), (LINALG, 2), (INPLACE, 4)]


def _broadcasts(s1, s2):
    try:
        np.broadcast_shapes(s1, s2)
        return True
    except ValueError:
        return False


def _fill(template, names, shapes, rng, v):
    a = str(rng.choice(names))
    b = str(rng.choice([n for n in names if _broadcasts(shapes[n], shapes[a])] or names))
    s = f"{str(rng.choice(names))}.ravel()[{int(rng.integers(0, 2))}]"
    return template.format(a=a, b=b, s=s, ax=int(rng.integers(-1, 1)), A="A", v=v)


def make_program(rng, index):
    """Source of one random function f(x), and the input shape."""
    shape = (int(rng.integers(4, 7)),) if rng.random() < 0.5 else (3, 4)
    lines = ["    A = x.ravel()[:3][:, None] * np.array([1.0, 0.5, 0.0]) + np.eye(3) * 3 + x.ravel()[-1]"]
    names, shapes = ["x"], {"x": shape}
    x0 = rng.standard_normal(shape)
    env = {"np": np, "sc": _sc}
    nstmt = int(rng.integers(2, 6))
    weights = np.array([w for _, w in KINDS], float)
    for k in range(nstmt * 4):
        if len(names) > nstmt:
            break
        pool = KINDS[rng.choice(len(KINDS), p=weights / weights.sum())][0]
        v = f"v{len(names)}"
        stmt = _fill(pool[int(rng.integers(len(pool)))], names, shapes, rng, v)
        code = stmt if stmt.lstrip().startswith("t =") else f"{v} = {stmt}"
        code = "    " + code if not code.startswith("    ") else code
        body = "\n".join(lines + [code])
        src = f"def f(x):\n{body}\n    return {v}\n"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                ns = dict(env)
                exec(src, ns)
                y = np.asarray(ns["f"](x0.copy()), dtype=float)
        except Exception:
            continue
        if not np.all(np.isfinite(y)) or y.size == 0 or y.ndim > 3:
            continue
        lines.append(code)
        names.append(v)
        shapes[v] = y.shape
    outs = [n for n in names[1:]][-2:] or ["x"]
    ret = "np.concatenate([" + ", ".join(f"np.ravel({o})" for o in outs) + "])"
    src = f"def f_{index}(x):\n" + "\n".join(lines) + f"\n    return {ret}\n"
    return src, shape


import scipy.special as _sc  # noqa: E402


def _flat(y):
    return np.ravel(np.asarray(y, dtype=float))


def fd_jac(f, x, h):
    return fd.jacobian(f, x, h=h, matrix=True)


def fd_hess(f, x, w, h):
    return fd.hessian(lambda z: float(w @ _flat(f(z))), x, h=h, matrix=True)


def _nz(M, tol):
    scale = max(1.0, float(np.abs(M).max()) if M.size else 1.0)
    return np.abs(M) > tol * scale


def _jac_seen(f, x):
    """Entries finite differences see at both step sizes (a kink between would show at one only)."""
    return _nz(fd_jac(f, x, 1e-6), 1e-6) & _nz(fd_jac(f, x, 1e-5), 1e-6)


def _hess_seen(f, x, w):
    return _nz(fd_hess(f, x, w, 1e-3), 1e-5) & _nz(fd_hess(f, x, w, 3e-4), 1e-5) & \
        _nz(fd_hess(f, x, w, 1e-4), 1e-5)


def check(f, shape, rng):
    """{check name: 'ok' | 'refused' | 'crash: ...' | 'miss: ...'}."""
    points = []
    for _ in range(50):  # points where the program itself runs (nonzero() sizes, shapes)
        p = rng.standard_normal(shape)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                f(p.copy())
            points.append(p)
        except Exception:
            pass
        if len(points) == 2:
            break
    results = {}
    for what in ("jac-global", "jac-local", "hess-global", "hess-local"):
        mode = what.split("-")[1]
        fn = jacobian_sparsity if what.startswith("jac") else hessian_sparsity
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if mode == "global":
                    P = fn(f, points[0], mode=mode).toarray()
                    pts = points
                else:
                    P = fn(f, points[0], mode=mode).toarray()
                    pts = points[:1]
        except (NoSparsityRule, TracedBranchError) as e:
            results[what] = "refused: " + type(e).__name__ + ": " + str(e).splitlines()[0][:150]
            continue
        except Exception as e:  # noqa: BLE001
            tb = traceback.extract_tb(e.__traceback__)[-1]
            results[what] = f"crash: {type(e).__name__}: {str(e)[:150]} @ {os.path.basename(tb.filename)}:{tb.lineno}"
            continue
        missed = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for p in pts:
                try:
                    if what.startswith("jac"):
                        seen = _jac_seen(f, p)
                    else:
                        w = rng.uniform(0.5, 1.5, _flat(f(p)).size)
                        seen = _hess_seen(f, p, w)
                except Exception:
                    continue
                if seen.shape != P.shape:
                    missed = f"shape {P.shape} vs fd {seen.shape}"
                    break
                miss = seen & ~P.astype(bool)
                if miss.any():
                    missed = f"{int(miss.sum())} entries, e.g. {np.argwhere(miss)[0].tolist()}"
                    break
        results[what] = "ok" if missed is None else "miss: " + missed
    return results


def main(count=200, seed=0, show=True):
    rng = np.random.default_rng(seed)
    tmp = tempfile.mkdtemp(prefix="sparsity_probe_")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)  # the module's source lives until the process ends
    programs = [make_program(rng, i) for i in range(count)]
    path = os.path.join(tmp, f"progs_{seed}.py")
    with open(path, "w") as fh:
        fh.write("import numpy as np\nimport scipy.special as sc\n\n\n")
        fh.write("\n\n".join(src for src, _ in programs))
    spec = importlib.util.spec_from_file_location(f"progs_{seed}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    tally = collections.Counter()
    classes = collections.Counter()
    bad_programs = set()
    for i, (src, shape) in enumerate(programs):
        res = check(getattr(mod, f"f_{i}"), shape, rng)
        for what, r in res.items():
            kind = r.split(":")[0]
            tally[kind] += 1
            if kind in ("crash", "miss"):
                bad_programs.add(i)
                classes[(what, r[:110])] += 1
                if show:
                    print(f"--- f_{i} {what}: {r}\n{src}")
            elif kind == "refused":
                classes[("refused", r[:110])] += 1
                if show == "all":
                    print(f"--- f_{i} {what}: {r}\n{src}")
    print(f"programs {count}, checks {sum(tally.values())}: {dict(tally)}; programs with crash/miss: "
          f"{len(bad_programs)}")
    for (what, r), c in classes.most_common(60):
        print(f"{c:4d}  {what}: {r}")
    return tally


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200, int(sys.argv[2]) if len(sys.argv) > 2 else 0,
         show="all" if "-r" in sys.argv else "-q" not in sys.argv)
