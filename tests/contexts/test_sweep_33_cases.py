"""Cases of session 33: silent wrong derivatives found by the generated programs (gen8's aliasing classes)
and package sweeps, each distilled to the idiom the code uses and checked against finite differences in
every mode, or asserting the refusal that stands for a silent wrong."""

import types

import numpy as np
import pytest

from tests.modes import assert_scalar_modes


# -- an array or list a holder keeps, changed by a plain function given the holder (gen8's W9, W13) -----
# Reverse mode moved the caller's cotangent of the array into the holder's box for a method's own object
# only: a function `step(s, dt)` doing `s.x += dt * s.x` lost the change (0 for 2). Forward mode's tangent
# of a dict or list handed back by the callee reached the variables holding the dict, never the ones it
# holds (`d['x'] *= v`: 0 for 2; `r[0][1] = v`: 1 for 3.8).

class State:
    def __init__(self, x):
        self.x = x


def step(s, dt):
    s.x += dt * s.x


def function_updates_held_array(t):
    x = np.ones(2)
    s = State(x)
    step(s, t)
    return float(x.sum())


def function_updates_active_held_array(t):
    x = np.ones(2) * t
    s = State(x)
    step(s, t)
    return float(x.sum())


def nested_def_stores_into_namespace_array(t):
    x = np.ones(2)
    s = types.SimpleNamespace(x=x)

    def kick(s, v):
        s.x[0] = v
    kick(s, t * t)
    return float(x.sum())


def nested_def_scales_dict_array(t):
    x = np.ones(2)
    d = {'x': x}

    def scale(d, v):
        d['x'] *= v
    scale(d, t)
    return float(x.sum())


def nested_def_scales_list_array(t):
    x = np.ones(2) + t
    L = [x]

    def scale(L, v):
        L[0] *= v
    scale(L, t)
    return float(x @ x)


def put(r, v):
    r[0][1] = v


def store_through_list_of_lists(t):
    h = [t, 0.0]
    rows = [h]
    put(rows, t * t)
    return sum(h) + h[-1]


def store_through_dict_of_lists(t):
    h = [2.0, 0.0]
    reg = {'k': h}

    def put2(r, v):
        r['k'][1] = v
    put2(reg, 3.0 * t)
    return sum(h) * t


@pytest.mark.parametrize("f", [function_updates_held_array, function_updates_active_held_array,
                               nested_def_stores_into_namespace_array, nested_def_scales_dict_array,
                               nested_def_scales_list_array, store_through_list_of_lists,
                               store_through_dict_of_lists])
def test_change_through_a_holder_a_function_is_given(f):
    assert_scalar_modes(f, 0.7)


# -- forward mode: a list named twice, its tangent list once (gen8's W6) -------------------------------
# `m, n = h, 1` gave m a tangent list of its own: `m.append(3t)` grew it, h's stayed (0 for 6). And
# `d.get('h')` through the duals returned a copy of h: the caller's `m += [x]` changed the copy, h's VALUE
# was wrong too (4.0 for 6.2).

def unpacked_alias_appended(t):
    h = [2.0]
    m, n = h, 1
    m.append(3.0 * t)
    return h[-1] * t + sum(h)


def unpacked_alias_appended_square(t):
    h = [t]
    m, n = h, 1
    m.append(t * t)
    return sum(h) + h[-1]


def dict_get_alias_extended(t):
    h = [2.0]
    d = {'h': h}
    m = d.get('h')
    m += [3.0 * t]
    return h[-1] * t + sum(h)


def swapped_buffers_extended(t):
    state = [2.0]
    cur, nxt = state, [0.0]
    cur.extend([t * t, 3.0 * t])
    return sum(state) * t


@pytest.mark.parametrize("f", [unpacked_alias_appended, unpacked_alias_appended_square, dict_get_alias_extended,
                               swapped_buffers_extended])
def test_list_named_twice_grows_once(f):
    assert_scalar_modes(f, 0.7)


def test_dict_get_value_under_forward_mode():
    from contexts import jvp
    y, t = jvp(dict_get_alias_extended, (0.7,), (1.0,))
    assert y == pytest.approx(dict_get_alias_extended(0.7), rel=1e-12)
