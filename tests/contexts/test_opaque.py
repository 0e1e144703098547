"""`contexts.opaque` (`overdub.opaque`): the user's opt-out, per function or per module. A function marked
opaque is a primitive to every context: with a rule it is differentiated by the rule, without one a
differentiated input reaching it is refused by name (never recursed into, never a silent constant)."""

import math

import pytest

import contexts
import overdub
from contexts import custom_adjoint, derivative, gradient, hessian
from contexts.rules.registry import MissingRule, registry
from tests import fd

MODES = {
    "reverse": lambda f, x: gradient(f, x)[0],
    "forward": derivative,
    "hessian": hessian,
}


def _cube(x):
    return x * x * x


def _cube_user(x):
    return _cube(x) + x


@pytest.fixture(autouse=True)
def _forget_marks():
    """Each test's marks are forgotten after it; the marks made before it (the library's own: `dask`) are
    kept."""
    from overdub import source
    codes, modules = set(source._marked_codes), set(source._marked_modules)
    yield
    source._marked_codes.clear()
    source._marked_codes.update(codes)
    source._marked_modules.clear()
    source._marked_modules.update(modules)
    overdub.cache.clear()


def test_marked_function_is_not_recursed():
    assert overdub.is_recursable(_cube)
    assert contexts.opaque(_cube) is _cube
    assert not overdub.is_recursable(_cube)


@pytest.mark.parametrize("mode", MODES)
def test_marked_function_without_rule_is_refused_by_name(mode):
    contexts.opaque(_cube)
    with pytest.raises(MissingRule, match="_cube"):
        MODES[mode](_cube_user, 0.7)


@pytest.mark.parametrize("mode", MODES)
def test_marked_function_with_rules_uses_them(mode):
    def cube(x):
        return x * x * x

    def user(x):
        return cube(x) + x
    contexts.opaque(cube)

    @custom_adjoint(cube)
    def _cube_adjoint(x):
        return cube(x), lambda dy: (dy * 3.0 * x * x,)

    @registry.frule(cube)
    def _cube_frule(tangents, x):
        return cube(x), 3.0 * x * x * tangents[0]
    want = fd.derivative(user, 0.7) if mode != "hessian" else 6.0 * 0.7
    assert MODES[mode](user, 0.7) == pytest.approx(want, rel=1e-7)


@pytest.mark.parametrize("mode", MODES)
def test_marked_module_by_name(mode):
    from tests.contexts import _opaque_lib
    contexts.opaque("tests.contexts._opaque_lib")
    with pytest.raises(MissingRule, match="twice"):
        MODES[mode](lambda x: _opaque_lib.twice(x) * x, 0.7)


def test_unmarked_differentiates_through():
    from tests.contexts import _opaque_lib
    f = lambda x: _opaque_lib.twice(x) * x  # noqa: E731
    assert gradient(f, 0.7)[0] == pytest.approx(fd.derivative(f, 0.7), rel=1e-7)


def test_not_differentiated_input_still_calls_it():
    contexts.opaque(_cube)
    assert gradient(lambda x: x * _cube(2.0), 0.5) == (8.0,)
    contexts.opaque(math)  # a C module: nothing to mark, no harm
    assert derivative(lambda x: x * _cube(2.0), 0.5) == 8.0


def test_bad_target():
    with pytest.raises(TypeError):
        contexts.opaque(3)
