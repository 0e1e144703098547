"""Classes the program fuzzer found after the first round of fixes (tests/fuzz), each reduced to a few
lines: a list changed through the container holding it, and the two constructs reverse mode refuses rather
than differentiate wrongly (a differentiated value stored into a module global; `with ... as` on a
differentiated context manager). Values against central finite differences."""

import pytest

from contexts import UnsupportedFunction, gradient
from contexts.forward import derivative

from tests.fd import assert_grad_fd


def held_list_appended(x):
    t = {"a": [x], "b": [x]}
    t["a"].append(x * 0.5)
    return sum(t["a"]) + t["b"][0]


def held_list_through_alias(x):
    t = {"a": [x]}
    lst = t["a"]
    lst.append(x * x)
    return sum(t["a"])


def nested_lists(x):
    rows = [[x], [2.0]]
    rows[0].append(x * 3.0)
    rows[1].extend([x, x * x])
    return sum(rows[0]) * sum(rows[1])


@pytest.mark.parametrize("f", [held_list_appended, held_list_through_alias, nested_lists])
def test_list_changed_through_its_container(f):
    assert_grad_fd(f, 0.7)
    assert derivative(f, 0.7) == pytest.approx(gradient(f, 0.7)[0])


_W = 1.0


def _read_w():
    return _W + 1.0


def writes_global(x):
    global _W
    _W = x * x
    return _read_w() * x


class _Scaled:
    def __init__(self, s):
        self.s = s

    def __enter__(self):
        return self.s * 2.0

    def __exit__(self, *exc):
        return False


def with_differentiated_manager(x):
    with _Scaled(x) as t:
        r = t * x
    return r


def with_constant_manager(x):
    with _Scaled(2.0) as t:
        r = t * x
    return r


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f, what", [(writes_global, "module global")])
def test_refused_by_name_and_line(f, what):
    with pytest.raises(UnsupportedFunction, match=what) as e:
        gradient(f, 0.7)
    assert f.__name__ in str(e.value) and "test_soundness_fuzz_classes.py:" in str(e.value)


@pytest.mark.parametrize("f", [with_constant_manager, with_differentiated_manager])
def test_with_on_a_manager_is_differentiated(f):
    # (a differentiated manager was refused before session 35; its `__enter__`/`__exit__` are recorded calls now)
    assert_grad_fd(f, 0.7)
