"""The reverse-mode API around the engine: custom rules, errors, threads, memory."""

import gc
import sys
import math
import threading
import tracemalloc

import numpy as np
import pytest

from contexts import (NoRuleError, NonScalarError, UnsupportedFunction, adjoint, checkpoint, custom_adjoint,
                      gradient, hook, jacobian, nestlevel, pullback, registry, stop_gradient,
                      value_and_gradient)

from tests.fd import assert_grad_fd


async def _coroutine(x):
    return x * 2.0


def uses_async(x):
    import asyncio
    return asyncio.run(_coroutine(x))


def uses_match(x):
    match x:  # a match on the differentiated value itself
        case 1.0:
            return 0.0
        case _:
            return x * 2.0


def test_custom_adjoint_on_third_party_function_overrides_recursion():
    def softplus(x):
        return math.log1p(math.exp(x))
    calls = []

    @custom_adjoint(softplus)
    def softplus_rrule(x):
        calls.append(x)
        y = softplus(x)
        return y, lambda dy: (dy * 100.0,)  # deliberately not the true derivative
    assert gradient(softplus, 0.3) == (100.0,) and calls == [0.3]


def test_rule_registered_after_first_use_takes_effect():
    def cube(x):
        return x * x * x
    assert gradient(cube, 2.0) == (12.0,)
    custom_adjoint(cube)(lambda x: (cube(x), lambda dy: (-1.0,)))
    assert gradient(cube, 2.0) == (-1.0,)


def test_adjoint_decorator_keeps_introspection():
    @adjoint
    def scaled(x, k=2.0):
        """Doc."""
        return x * k, lambda dy: (dy * 7.0, None)
    import inspect
    assert scaled(3.0) == 6.0 and scaled.__doc__ == "Doc." and scaled.__name__ == "scaled"
    assert list(inspect.signature(scaled).parameters) == ["x", "k"]
    assert gradient(lambda x: scaled(x) + x, 1.0) == (8.0,)


def test_hook_stop_gradient_nestlevel():
    assert gradient(lambda x: hook(lambda g: g * 3.0, x * x), 2.0) == (12.0,)
    assert gradient(lambda x: x * stop_gradient(x * x), 2.0) == (4.0,)
    levels = []
    gradient(lambda x: levels.append(nestlevel()) or x, 1.0)
    assert levels == [1] and nestlevel() == 0


def test_checkpoint_recomputes_and_holds_fewer_values():
    def body(x):
        for _ in range(200):
            x = math.sin(x) * 1.01
        return x
    assert_grad_fd(lambda x: checkpoint(body, x), 0.4)
    _, back_plain = pullback(body, 0.4)
    _, back_ck = pullback(lambda x: checkpoint(body, x), 0.4)
    plain = _tape_items(back_plain)
    ck = _tape_items(back_ck)
    assert ck < plain / 10


def _tape_items(back):
    """Values held by a pullback's recorded tapes (recursively)."""
    seen = set()

    def count(obj):
        if id(obj) in seen:
            return 0
        seen.add(id(obj))
        if isinstance(obj, (list, tuple)):
            return len(obj) + sum(count(o) for o in obj)
        return 0
    cells = [c.cell_contents for c in (back.__closure__ or ())]
    inner = [c.cell_contents for b in cells if callable(b) and getattr(b, "__closure__", None)
             for c in b.__closure__]
    return sum(count(c) for c in cells + inner if isinstance(c, (list, tuple)))


def test_no_rule_error_names_function_and_line():
    import struct

    def doubled(v):  # (C functions no rule knows, whose result carries the value where no cotangent follows)
        return struct.unpack("d", struct.pack("d", v * 2.0))[0]
    with pytest.raises(NoRuleError) as e:
        gradient(lambda x: doubled(x) * x, 1.0)
    msg = str(e.value)
    assert "doubled" in msg and "test_api_errors.py" in msg and "possible fix" in msg


def test_non_scalar_output():
    with pytest.raises(NonScalarError, match="jacobian"):
        gradient(lambda x: np.array([x, x]), 1.0)
    with pytest.raises(NonScalarError, match="complex"):
        gradient(lambda z: z * z, 1j)


def uses_match_with_alternatives(x):
    match (x, 2.0):
        case (a, 1.0) | (1.0, a):  # which alternative bound `a` is not known statically
            return a * 3.0
        case _:
            return x * 2.0


def test_match_on_a_differentiated_value():
    assert gradient(uses_match, 3.0) == (2.0,)  # value patterns only: control flow


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
def test_unsupported_construct_names_line():
    with pytest.raises(UnsupportedFunction, match="match") as e:
        gradient(uses_match_with_alternatives, 3.0)
    assert "test_api_errors.py" in str(e.value) and "possible fix" in str(e.value)


def test_exception_propagates_unchanged_and_leaves_no_state():
    class Boom(Exception):
        pass

    def f(x):
        if x > 0:
            raise Boom("inside f")
        return x
    limit = sys.getrecursionlimit()
    with pytest.raises(Boom, match="inside f") as e:
        gradient(f, 1.0)
    assert e.traceback[-1].path.name == "test_api_errors.py"  # raised at the user's own line
    assert nestlevel() == 0 and sys.getrecursionlimit() == limit
    assert gradient(f, -1.0) == (1.0,)


def test_not_callable():
    with pytest.raises(Exception, match="pass the function itself"):
        gradient(3.0, 1.0)


def test_value_and_gradient_and_jacobian():
    assert value_and_gradient(lambda x: x ** 3, 2.0) == (8.0, (12.0,))
    J = jacobian(lambda x: [x[0] * x[1], math.sin(x[0])], np.array([2.0, 3.0]))
    np.testing.assert_allclose(J, [[3.0, 2.0], [math.cos(2.0), 0.0]])


def test_higher_order():
    assert gradient(lambda x: gradient(math.sin, x)[0], math.pi / 2) == pytest.approx((-1.0,))
    poly = lambda x: x ** 4 + 2 * x ** 3
    d3 = gradient(lambda x: gradient(lambda y: gradient(poly, y)[0], x)[0], 1.5)
    assert d3 == pytest.approx((24 * 1.5 + 12,))


def test_gradient_inside_differentiated_function_with_closure():
    def outer(a):
        inner = gradient(lambda y: a * y * y, 3.0)[0]  # = 6a
        return inner * a                                # 6a^2
    assert gradient(outer, 2.0) == pytest.approx((24.0,))


def test_threads_compute_independent_gradients():
    results, errors = {}, []

    def work(k):
        try:
            for _ in range(50):
                g = gradient(lambda x: math.sin(k * x) * x ** k, 0.7)[0]
            results[k] = g
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k, g in results.items():
        want = k * math.cos(k * 0.7) * 0.7 ** k + math.sin(k * 0.7) * k * 0.7 ** (k - 1)
        assert g == pytest.approx(want)


def test_repeated_gradients_do_not_grow_memory():
    def f(x):
        s = 0.0
        for i in range(20):
            s = s + math.sin(x * i)
        return s
    for _ in range(200):
        gradient(f, 0.3)
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(10_000):
            gradient(f, 0.3)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert grown < 200_000, f"memory grew by {grown} bytes over 10,000 gradients"


def test_million_operation_loop_completes():
    def f(x):
        s = 0.0
        i = 0
        while i < 1_000_000:
            s = s + x
            i += 1
        return s
    assert gradient(f, 1.0) == (1_000_000.0,)


def test_rule_on_a_method_applies_to_bound_calls():
    class Scaler:
        def __init__(self, k):
            self.k = k

        def apply(self, x):
            return self.k * x

    custom_adjoint(Scaler.apply)(lambda self, x: (self.apply(x), lambda dy: (None, dy * 100.0)))
    assert gradient(lambda x: Scaler(2.0).apply(x), 1.0) == (100.0,)
    assert gradient(lambda x: (1.5).__mul__(x) + x.__rmul__(2.0), 1.0) == (3.5,)


def test_show_adjoint_prints_blocks_with_user_lines():
    from contexts import show_adjoint

    def f(x, n):
        r = 1.0
        for _ in range(n):
            r = r * x
        return r
    text = show_adjoint(f, active=["x"], raw=True)
    first_line = f.__code__.co_firstlineno
    assert "active arguments: x" in text and "forward twin:" in text
    assert f"(line {first_line + 3})" in text          # the block of `r = r * x`
    assert "_od_tape.append((" in text and "_od_d_x" in text    # records and cotangent variables
    assert "i = i + 1" not in text                     # nothing recorded for the loop counter
    readable = show_adjoint(f, active=["x"])
    assert f"(line {first_line + 3})" in readable and "d_x += " in readable and "_od_" not in readable


def test_forward_derivative_inside_reverse_mode():
    from contexts.forward import derivative
    # d/da of f'(1) where f(y) = a * y**3 (f'(1) = 3a) and of f'(a) (= 3a**3): closed forms
    assert gradient(lambda a: derivative(lambda y: a * y ** 3, 1.0), 2.0) == pytest.approx((3.0,))
    assert gradient(lambda a: derivative(lambda y: a * y ** 3, a), 2.0) == pytest.approx((9 * 4.0,))


def test_integer_arrays_are_differentiated_as_floats():
    (g,) = gradient(lambda x: (x * x).sum(), np.array([1, 2, 3]))
    np.testing.assert_array_equal(g, [2.0, 4.0, 6.0])
    assert gradient(lambda x: x * x, 3) == (6,)  # Python ints stay exact


def test_show_adjoint_wants_parameter_names():
    import numpy as np
    from contexts import show_adjoint

    def f(x):
        return x * 2.0
    with pytest.raises(TypeError, match="names of the differentiated parameters"):
        show_adjoint(f, np.ones(3))
    with pytest.raises(TypeError, match="names"):
        show_adjoint(f, "x")
