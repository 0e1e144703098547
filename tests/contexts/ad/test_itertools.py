"""itertools in differentiated code: reverse mode runs Python stand-ins (contexts/ad/replacements.py) in
place of the C iterators, which call their functions and draw their items out of its sight (it refused
them by name). Every case against central differences, in reverse mode, under hessian and forward."""

import itertools
import operator

import pytest

from tests import fd


def grouped(x):
    plain = sum(k * len(list(g)) for k, g in itertools.groupby([1.0, 1.0, 2.0]))
    return plain + sum(sum(g) for _, g in itertools.groupby([x, x * 2.0, 0.3], key=lambda v: v > 1.0))


CASES = {
    "accumulate": lambda x: sum(itertools.accumulate([x, 2.0 * x, 0.5], lambda p, q: p * 0.5 + q)),
    "accumulate sum": lambda x: sum(itertools.accumulate([x, x * x], initial=0.5)),
    "starmap": lambda x: sum(itertools.starmap(operator.mul, zip([x, 2.0], itertools.repeat(x, 2)))),
    "product": lambda x: sum(a * b for a, b in itertools.product([x, 0.5], [x, 1.0])),
    "product repeat": lambda x: sum(a * b for a, b in itertools.product([x, 2.0], repeat=2)),
    "chain": lambda x: max(itertools.chain([x], [x * x]), key=abs) + sum(itertools.chain.from_iterable([[x], [x]])),
    "zip_longest": lambda x: sum(a * b for a, b in itertools.zip_longest([x, x], [2.0], fillvalue=x)),
    "compress": lambda x: sum(itertools.compress([x, x * x, 3.0], [1, 0, 1])),
    "takewhile dropwhile": lambda x: sum(itertools.takewhile(lambda v: v < 2.0, [x, x * x, 5.0, x]))
    + sum(itertools.dropwhile(lambda v: v < 1.0, [x, 2.0, x])),
    "islice": lambda x: sum(itertools.islice([x, x * x, x ** 3, 4.0], 1, None, 2)),
    "groupby": grouped,
    "repeat forever in zip": lambda x: sum(a * b for a, b in zip([x, 2.0], itertools.repeat(x))),
    "repeat forever in map": lambda x: sum(map(operator.mul, [x, 3.0], itertools.repeat(x))),
}
if hasattr(itertools, "pairwise"):
    CASES["pairwise"] = lambda x: sum(a * b for a, b in itertools.pairwise([x, 2.0 * x, 3.0]))


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("mode", ["gradient", "hessian", "derivative"])
def test_itertools_are_differentiated(name, mode):
    got, want = fd.in_mode(CASES[name], 0.7, mode)
    assert float(got) == pytest.approx(want, rel=1e-5, abs=1e-6)
