"""Cases of session 41: silent wrong derivatives and crashes left open at the end of session 40 and met on code
nobody here wrote (generated programs, package sweeps), each checked against finite differences in every mode,
or refused where reverse mode cannot route the cotangent."""

import numpy as np
import pytest

from contexts import gradient, jvp
from tests import fd
from tests.modes import assert_refused_in_reverse, assert_scalar_modes

# -- a captured list returned by a closure held in a container (gen20 W9's last form) ------------------------------
# `d = {'g': lambda: c}; b = d['g'](); b[0] = v`: b is c, but the call of a callable read out of a dict or list was
# taken for a fresh object, so c's later reads were constants (0 for 2.6, reverse and hessian). A nested function,
# lambda or class now holds what it captures, and a call of a callable read out of a container may return it.


def _lambda_in_a_dict(x):
    c = [0.0, 1.0]
    d = {'g': lambda: c}
    b = d['g']()
    b[0] = x * x
    return c[0] + 2.0 * x


def _lambda_in_a_list(x):
    c = [0.0, 1.0]
    gs = [lambda: c]
    b = gs[0]()
    b[0] = x * x
    return c[0] * c[1] + 2.0 * x


def _lambda_stored_into_a_dict(x):
    c = np.zeros(2)
    fs = {}
    fs['g'] = lambda: c
    b = fs['g']()
    b += x * x
    return c[0] + 2.0 * x


def _nested_function_in_a_dict(x):
    c = [0.0]

    def get():
        return c
    table = {'get': get}
    table['get']()[0] = np.sin(x)
    return c[0] * x


def _factory_returning_a_getter(x):
    c = np.zeros(2)

    def mk():
        return lambda: c
    b = mk()()
    b[0] = x * x
    return c[0] + 2.0 * x


@pytest.mark.parametrize("f", [_lambda_in_a_dict, _lambda_in_a_list, _lambda_stored_into_a_dict,
                               _nested_function_in_a_dict, _factory_returning_a_getter])
def test_captured_containers_returned_through_callables_held_in_containers(f):
    assert_scalar_modes(f, 1.3)


def _local_class_method_returning_a_capture(x):
    c = [0.0, 1.0]

    class H:
        def get(self):
            return c
    b = H().get()
    b[0] = x * x
    return c[0] + 2.0 * x


def _local_class_bound_getter(x):
    c = np.zeros(2)

    class H:
        def get(self):
            return c
    g = H().get
    b = g()
    b[0] = x * x
    return c[0] + 2.0 * x


@pytest.mark.parametrize("f", [_local_class_method_returning_a_capture, _local_class_bound_getter])
def test_local_class_returning_a_capture_refused_in_reverse(f):
    # (reverse mode took b for a fresh object: 2.0 for 4.6; a class made here reading a variable it changes is refused)
    assert_refused_in_reverse(f, 1.3, match="class `H` defined here")


# -- a closure's cells read by introspection (gen20 C1) ------------------------------------------------------------
# Forward mode runs a function made inside transformed code from the twin's code, whose closure also holds the
# pass's own cells: `inc.__closure__[0].cell_contents[0]` read a helper (TypeError). `__closure__` now gives the
# cells the source defines.


def _make_setter():
    box = [0.0]
    k = 3.0

    def put(v):
        box[0] = v * k
    return put


def _closure_cells(x):
    put = _make_setter()
    put(x)
    box, k = (c.cell_contents for c in put.__closure__)
    return box[0] * k + len(put.__closure__)


def test_closure_cells_read_by_introspection_in_forward_mode():
    x = 0.7
    want = fd.derivative(_closure_cells, x)
    y, t = jvp(_closure_cells, (x,), (1.0,))
    assert y == pytest.approx(_closure_cells(x), rel=1e-12)
    assert t == pytest.approx(want, rel=1e-6)


def test_closure_cells_of_plain_functions_are_unchanged():
    from overdub import Context
    put = _make_setter()
    with Context():
        cells = Context().run(lambda: put.__closure__)
    assert cells == put.__closure__
    assert Context().run(lambda: _closure_cells.__closure__) is None
