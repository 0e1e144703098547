"""The program generator: `generate(suite, seed, index, features)` is a pure function of its arguments.

A program is a module's source text: imports, module-level helpers (classes, functions, globals) and

- suite `scalar`: `def f(x0[, x1[, x2]])` of floats returning a float;
- suite `numpy`: `def f(x0[, x1])` of float64 arrays returning a float, and `def fv(...)` with the same
  body returning a 1-D array (for Jacobians and sparsity).

The body chains 1-5 templates (gen_scalar.T / gen_numpy.T), each making a new variable from earlier ones.
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass, field

import numpy as np

from . import gen_numpy, gen_scalar

SUITES = ("scalar", "numpy")
TEMPLATES = {"scalar": gen_scalar.T, "numpy": gen_numpy.T}

HEADER = {
    "scalar": "import functools\nimport math\nimport operator\nfrom dataclasses import dataclass\n"
              "import abc, array, bisect, collections, contextlib, copy, dataclasses, enum, fractions, heapq, "
              "inspect, itertools, json, statistics, struct, types\n",
    "numpy": "import copy\nimport numpy as np\nimport scipy.integrate\nimport scipy.interpolate\nimport scipy.special\n"
             "import scipy.stats\n",
}


def features(suite: str) -> list[str]:
    """The feature names of a suite's templates (for --features)."""
    return sorted({feat for feat, _, _ in TEMPLATES[suite]})


def template_names(suite: str) -> list[str]:
    """One name per template, `feature.k` (the k-th template of that feature), in template order; a
    name works in --features like a feature, selecting that one template."""
    seen, names = {}, []
    for feat, _, _ in TEMPLATES[suite]:
        seen[feat] = seen.get(feat, 0) + 1
        names.append(f"{feat}.{seen[feat]}")
    return names


def _wanted(name: str, feats) -> bool:
    return feats is None or name in feats or name.split(".")[0] in feats


@dataclass
class Program:
    suite: str
    seed: int
    index: int
    source: str
    inputs: tuple            # floats (scalar) or float64 arrays (numpy)
    direction: tuple         # a tangent per input, for jvp and derivative
    features: list = field(default_factory=list)   # the templates used, by name (gen.template_names)
    features_filter: tuple | None = None

    @property
    def nin(self) -> int:
        return len(self.inputs)

    def command(self, modes=None) -> str:
        """The CLI command that reruns exactly this program."""
        cmd = f"python -m tests.fuzz --suite {self.suite} --seed {self.seed} --index {self.index}"
        if self.features_filter:
            cmd += " --features " + ",".join(self.features_filter)
        if modes:
            cmd += " --modes " + ",".join(modes)
        return cmd


class _Body:
    def __init__(self, rng: random.Random, names: list[str]):
        self.rng, self.vars, self.lines, self.helpers = rng, list(names), [], {}
        self.ntmp = 0

    def pick(self) -> str:
        """An existing variable, biased towards recent ones so that templates chain."""
        k = len(self.vars)
        i = min(k - 1, int(k * (1 - self.rng.random() ** 2)))
        return self.vars[i]

    def add(self, body: str, helpers: tuple, extra: dict) -> None:
        rng = self.rng
        r = f"v{len(self.vars)}"
        u = str(len(self.vars))
        subst = {"a": self.pick(), "b": self.pick(), "c": self.pick(), "r": r, "u": u,
                 "K": repr(round(rng.uniform(0.3, 0.9), 3)), "K2": repr(round(rng.uniform(0.3, 0.9), 3)),
                 "K3": repr(round(rng.uniform(0.3, 0.9), 3)), "N": str(rng.randint(2, 4)),
                 "M": str(rng.randint(0, 2)), **extra}
        for i in range(1, 5):
            self.ntmp += 1
            subst[f"t{i}"] = f"t{self.ntmp}"
        self.lines.extend(string.Template(body).substitute(subst).splitlines())
        for h in helpers:
            text = string.Template(h).substitute(subst)
            self.helpers[text] = None
        self.vars.append(r)


def _choose(rng: random.Random, suite: str, nd: int, feats) -> tuple:
    pool = [(name, *tpl) for tpl, name in zip(TEMPLATES[suite], template_names(suite))
            if _wanted(name, feats) and (not isinstance(tpl[1], dict) or nd in tpl[1])]
    if not pool:
        raise ValueError(f"no {suite} template has features {feats}")
    return rng.choice(pool)


def generate(suite: str, seed: int, index: int, feats=None) -> Program:
    """Program number `index` of `suite` under `seed` (restricted to templates of `feats` if given)."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}")
    feats = tuple(sorted(feats)) if feats else None
    key = f"{suite}:{seed}:{index}:{','.join(feats) if feats else ''}"
    rng = random.Random(key)
    if suite == "scalar":
        nin, nd, shape = rng.randint(1, 3), 0, ()
    else:
        nin = rng.randint(1, 2)
        shape = (3, 4) if rng.random() < 0.35 else (rng.randint(3, 5),)
        nd = len(shape)
    names = [f"x{i}" for i in range(nin)]
    body = _Body(rng, names)
    used = []
    nt = rng.choice([1, 2, 2, 3, 3, 4, 5])
    m = shape[0] if shape else 0
    for _ in range(nt):
        name, _, text, helpers = _choose(rng, suite, nd, feats)
        used.append(name)
        if isinstance(text, dict):
            text = text[nd]
        extra = {}
        if suite == "numpy":
            perm = list(range(m))
            rng.shuffle(perm)
            extra = {"S": repr(shape), "m": str(m), "ax": rng.choice(["0", "-1"]), "perm": repr(perm),
                     "dup": repr(sorted(rng.choices(range(m), k=2)) + [0, 0][: 1]),
                     "diag": f"np.diag(np.arange(1.0, {m + 1}))"}
        body.add(text, helpers, extra)
    new = body.vars[nin:]
    last, other = new[-1], rng.choice(body.vars)
    w = round(rng.uniform(0.2, 0.8), 3)
    ind = "    "
    lines = "\n".join(ind + ln for ln in body.lines)
    args = ", ".join(names)
    src = [HEADER[suite], ""]
    for h in body.helpers:
        src += ["", h, ""]
    if suite == "scalar":
        src += ["", f"def f({args}):", lines, f"{ind}return {last} + {w} * {other}", ""]
        inputs = tuple(rng.uniform(0.3, 1.5) for _ in range(nin))
        direction = tuple(rng.uniform(-1.0, 1.0) for _ in range(nin))
    else:
        src += ["", f"def f({args}):", lines,
                f"{ind}return np.sum({last} * {w}) + 0.3 * np.sum(np.sin({other}))", ""]
        src += ["", f"def fv({args}):", lines,
                f"{ind}return np.ravel({last}) + 0.3 * np.ravel({other})", ""]
        nprng = np.random.default_rng(rng.getrandbits(32))
        inputs = tuple(nprng.uniform(0.3, 1.5, size=shape) for _ in range(nin))
        direction = tuple(nprng.uniform(-1.0, 1.0, size=shape) for _ in range(nin))
    return Program(suite, seed, index, "\n".join(src), inputs, direction, used, feats)
