"""An operator's result keeping a closure over its operands (micrograd's `Value`, autograd engines written in
Python): reverse mode refuses it, and `gradient` answers by forward mode (session 67; sweep O).

Reverse mode runs a class's own operator method natively and re-runs it in the reverse pass. micrograd's
`__mul__` stores `out._backward`, a closure doing `self.grad += other.data * out.grad; other.grad += ...`, and
`backward()` calls those later. The operand taken for a constant (`c = Value(3.0)`) was changed through the
closure unseen (its `.grad` read after: 0 for 1), and the closure's captured values took cotangents twice,
from its call and from the operator's re-run (9 for 6). Against central differences.
"""

import pytest

from contexts import derivative, gradient
from overdub.errors import OverdubError
from tests import fd


class V:
    def __init__(self, data, children=()):
        self.data = data
        self.grad = 0.0
        self._prev = set(children)
        self._backward = lambda: None

    def __add__(self, other):
        other = other if isinstance(other, V) else V(other)
        out = V(self.data + other.data, (self, other))

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, V) else V(other)
        out = V(self.data * other.data, (self, other))

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def backward(self):
        order, seen = [], set()

        def build(v):
            if v not in seen:
                seen.add(v)
                for child in v._prev:
                    build(child)
                order.append(v)
        build(self)
        self.grad = 1.0
        for v in reversed(order):
            v._backward()


def constant_operand_grad(a):  # c.grad = x.data: derivative 1
    x = V(a)
    c = V(3.0)
    u = x * c
    u.grad = 1.0
    u._backward()
    return float(c.grad)


def two_nodes(a):  # y = (x * c) * x = 3 a**2, x.grad = 6 a: derivative 6
    x = V(a)
    c = V(3.0)
    u = x * c
    y = u * x
    y.grad = 1.0
    y._backward()
    u._backward()
    return float(x.grad)


def engine_gradient(a):  # z = x * x * y + x + y with y = 2: dz/dx = 2 x y + 1, its derivative 2 y = 4
    x, y = V(a), V(2.0)
    z = x * x * y + x + y
    z.backward()
    return float(x.grad)


CASES = [constant_operand_grad, two_nodes, engine_gradient]


@pytest.mark.parametrize("f", CASES)
@pytest.mark.one_mode
def test_reverse_mode_refuses_an_operator_result_keeping_a_closure(f):
    assert abs(fd.derivative(f, 0.7)) > 0.5
    with pytest.raises(OverdubError, match="capturing an operand"):
        gradient(f, 0.7)


@pytest.mark.parametrize("f", CASES)
def test_answered_right_by_forward_mode(f):
    want = fd.derivative(f, 0.7)
    assert derivative(f, 0.7) == pytest.approx(want, rel=1e-6)
    assert gradient(f, 0.7)[0] == pytest.approx(want, rel=1e-6)  # (forward mode's, after the refusal)


class W:  # an operator keeping no closure: followed by reverse mode as before
    def __init__(self, data):
        self.data = data

    def __mul__(self, other):
        return W(self.data * other.data)


def plain_operator(a):
    return (W(a) * W(3.0) * W(a)).data


@pytest.mark.one_mode
def test_an_operator_without_closures_still_differentiated():
    assert gradient(plain_operator, 0.7)[0] == pytest.approx(fd.derivative(plain_operator, 0.7), rel=1e-6)
