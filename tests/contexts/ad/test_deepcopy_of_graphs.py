"""`copy.deepcopy` of objects that refer to each other, in reverse mode: the check of what the copy holds looks
at each object once. It walked the graph once per path, to its depth limit (50): for a chain linked both ways,
2**50 paths, a gradient that never ended (py_pol's `Mueller.copy`, whose object and its `parameters` hold each
other: over 420 s for a 7 ms function). Gradients against central differences."""

import copy
import threading

import pytest

from contexts import gradient
from tests import fd


class Link:
    def __init__(self, value):
        self.value = value
        self.prev = None
        self.next = None


def chain(x, n=40):
    links = [Link(x * (i + 1)) for i in range(n)]
    for a, b in zip(links, links[1:]):
        a.next, b.prev = b, a
    return links[0]


def f(x):
    head = copy.deepcopy(chain(x))
    total, link = 0.0, head
    while link is not None:
        total = total + link.value * link.value
        link = link.next
    return total


@pytest.mark.one_mode
def test_deepcopy_of_a_doubly_linked_chain():
    out = {}
    worker = threading.Thread(target=lambda: out.setdefault("g", gradient(f, 0.3)[0]), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the gradient did not end"
    assert out["g"] == pytest.approx(fd.derivative(f, 0.3), rel=1e-8)
