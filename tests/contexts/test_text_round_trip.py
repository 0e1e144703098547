"""A differentiated number formatted into text and parsed back: text is a constant to every engine, so the
result was a constant and the derivative silently 0 (`float(repr(x))`, `float(f"{x:.17g}")`: the true
derivative is 1). Now refused in every mode; text made for messages (not parsed back) is fine, and
parsing other text is not refused."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from overdub.errors import OverdubError

from contexts import derivative, gradient, hessian, jacfwd, jacobian_sparsity
from tests import fd


def by_repr(x):
    return float(repr(x)) * x


def by_fstring(x):
    s = f"{x:.17g}"
    return float(s) + x


def by_str_stripped(x):
    return float(str(x).strip()) * 2.0


def by_format(x):
    return float(format(x, ".17g")) + x * x


def by_field_in_text(x):
    line = f"value = {x!r}"
    return float(line.split("=")[1]) + x


def by_decimal(x):
    return float(Decimal(str(x))) * x


def by_fraction(x):
    return float(Fraction(repr(x))) + x


ROUND_TRIPS = [by_repr, by_fstring, by_str_stripped, by_format, by_field_in_text, by_decimal, by_fraction]

MODES = {
    "gradient": lambda f, x: gradient(f, x)[0],
    "derivative": derivative,
    "jacfwd": lambda f, x: jacfwd(lambda v: np.array([f(v[0])]), np.array([x])),
    "hessian": hessian,
    "sparsity": lambda f, x: jacobian_sparsity(lambda v: np.array([f(v[0])]), np.array([x])),
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("f", ROUND_TRIPS, ids=lambda f: f.__name__)
def test_a_number_parsed_back_from_its_text_is_refused(f, mode):
    with pytest.raises(OverdubError, match="formatted into text"):
        MODES[mode](f, 0.7)


def messages(x):
    """Text made for a message, never parsed: the derivative is the plain one."""
    note = f"x = {x:.3f}, x**2 = {x * x:.2e} ({x!r})"
    other = float("2.5") + float(str(3))  # unrelated text parsed: constants
    if len(note) > 1000:
        raise ValueError(note)
    return x * x * other + len(str(x)) * 0.0


@pytest.mark.parametrize("mode", ["gradient", "derivative", "jacfwd", "hessian"])
def test_text_for_messages_is_fine(mode):
    got = np.ravel(MODES[mode](messages, 0.7))[0]
    want = (fd.derivative(lambda s: fd.derivative(messages, s, h=1e-4), 0.7, h=1e-4) if mode == "hessian"
            else fd.derivative(messages, 0.7))
    assert got == pytest.approx(want, rel=1e-5)


def by_json(x):
    import json
    return json.loads(json.dumps({"a": x}))["a"] * x


def by_bytes(x):
    import struct
    return struct.unpack("d", struct.pack("d", x))[0] + x


def by_hex(x):
    return float.fromhex(x.hex()) + x


def by_statistics(x):
    import statistics
    return statistics.mean([x, 2.0 * x]) + statistics.pstdev([x, 0.1])


MODES["sparsity local"] = lambda f, x: jacobian_sparsity(lambda v: np.array([f(v[0])]), np.array([x]), mode="local")


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("f", [by_json, by_bytes, by_hex], ids=lambda f: f.__name__)
def test_a_number_taken_apart_is_refused(f, mode):
    """JSON, bytes, a float's hex: refused by the engine (an OverdubError naming the function), never the
    library's own TypeError about a dual or tracer (json's "Object of type Dual is not JSON serializable",
    struct.error)."""
    with pytest.raises(OverdubError):
        MODES[mode](f, 0.7)


@pytest.mark.parametrize("mode", list(MODES))
def test_statistics_exact_ratios(mode):
    """statistics' exact ratios of a differentiated float: its float forms in the derivative modes
    (`contexts.rules.statistics_forms`), d/dx (mean([x, 2x]) + pstdev([x, 0.1])) = 1.5 + 0.5; sparsity follows
    the float forms too (local mode: the one dependency) or refuses, never statistics' "can't convert type
    'Tracer'"."""
    if mode.startswith("sparsity"):
        try:
            pattern = MODES[mode](by_statistics, 0.7)
        except OverdubError:
            return
        assert np.asarray(pattern.toarray() if hasattr(pattern, "toarray") else pattern).all()
    elif mode == "hessian":
        assert float(np.ravel(MODES[mode](by_statistics, 0.7))[0]) == pytest.approx(0.0, abs=1e-9)
    else:
        assert float(np.ravel(MODES[mode](by_statistics, 0.7))[0]) == pytest.approx(2.0, rel=1e-12)



class _Sized:
    def __init__(self, x):
        self.x = x

    def size(self):
        return len(self.x)


def _counted(x):
    n = _Sized(x).size()  # an integer, from an object holding a differentiated array
    label = f"with size={n!r}"  # (xarray's alignment: `f"with size={index_size!r}"`)
    return float(np.sum(x ** 2)) + len(label) * 0.0


def _parses_its_own(x):
    return float(str(4)) * x


def test_an_integer_formatted_is_not_remembered():
    """The text of an integer carries no derivative whatever it was computed from: remembered, its digits
    made an unrelated parse (`float(str(4))`) be refused later."""
    gradient(_counted, np.array([0.5, 1.0, 1.5, 2.0]))
    assert gradient(_parses_its_own, 0.7)[0] == 4.0
