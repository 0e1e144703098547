"""Objects whose values live in a C base class, not in their fields: a subclass of `collections.deque` or
`array.array`, a torch Tensor. Reverse mode took such an object with constant (or no) fields for a
constant, ran what it was given natively, and returned an empty Tangent, a zero gradient, silently
(`gradient(lambda h: h.pop() * 2.0, Hist([1.0, 2.0]))` gave Tangent() for 2; `float((t * t).sum())` of a
Tensor likewise). They are differentiable values now where the rules reach their items, refused by name
where compiled code would take their derivative, never a zero; forward mode's `jvp` through them is
checked against differences."""

from __future__ import annotations

import array
from collections import deque

import pytest

from contexts import gradient, jvp
from overdub.errors import OverdubError
from tests.fd import derivative as fd_derivative


class Hist(deque):
    pass


class Samples(array.array):
    pass


def _square_sum_of_list(h):
    return sum(v * v for v in list(h))


def _popped(h):
    return h.pop() * 2.0 + h.pop()


def _square_sum_of_tolist(a):
    return sum(v * v for v in a.tolist())


def _copy_sum(h):
    return sum(v * v for v in h.copy())


@pytest.mark.parametrize("f, make", [
    (_square_sum_of_list, lambda: Hist([1.0, 2.0])),
    (_popped, lambda: Hist([1.0, 2.0])),
    (_copy_sum, lambda: Hist([1.0, 2.0])),
    (_square_sum_of_tolist, lambda: Samples("d", [2.0, 3.0])),
])
def test_reverse_mode_never_zero(f, make):
    """Refused (its derivative would go through compiled code): before, an empty Tangent came out."""
    with pytest.raises(OverdubError):
        gradient(f, make())


@pytest.mark.parametrize("f, make, first", [
    (_square_sum_of_list, lambda v: Hist([v, 2.0]), 1.0),
    (_square_sum_of_tolist, lambda v: Samples("d", [v, 3.0]), 2.0),
])
def test_forward_mode_follows_them(f, make, first):
    tangent = make(1.0)
    tangent[1] = 0.0
    _, dy = jvp(f, (make(first),), (tangent,))
    assert dy == pytest.approx(fd_derivative(lambda v: f(make(v)), first), rel=1e-6)


def test_plain_deque_made_inside_is_differentiated():
    def f(x):
        h = deque()
        h.append(x * 2.0)
        return h.pop() * x
    assert gradient(f, 1.5)[0] == pytest.approx(fd_derivative(f, 1.5), rel=1e-6)


def test_torch_tensor_differentiated_not_zero():
    """A torch Tensor was refused here (its values are its C base's); torch's domain (contexts/rules/torch.py)
    now takes tensors as values: the same functions are differentiated, never a zero."""
    torch = pytest.importorskip("torch")
    import numpy as np
    from tests.fd import gradient as fd_gradient
    t = torch.tensor([1.0, 2.0], dtype=torch.float64)
    for f in (lambda t: float((t * t).sum()), lambda t: t[0].item() * 3.0, lambda t: float(t.numpy().sum()),
              lambda t: sum(t.tolist())):
        g = gradient(f, t)[0]
        assert isinstance(g, torch.Tensor)
        np.testing.assert_allclose(g.numpy(), fd_gradient(lambda v: float(f(torch.tensor(v))), t.numpy())[0],
                                   rtol=1e-6)