"""Texts of differentiated values made where reverse mode's code does not see them being made (session 69), and
casts given their dtype as a string. Each gave 0 silently in reverse mode (some in forward mode too):

- `" ".join(map(str, x))` parsed back by `np.fromstring`: the texts made by map, in C (`__od_text_map__`);
- `print(*x, file=buffer)` read back (`__od_printed__`; forward mode printed the duals themselves);
- `x.astype(str)`, `np.array(x, dtype=str)` then `.astype(float)`: both modes;
- `x.view("i8")`, `np.asarray(x, "int64")`: a dtype given by a string took the fast path past the checks;
- `map("{:.12f}".format, x)`: reverse mode crashed on a literal's attribute.

Refused now (a text parsed back carries no derivative); against central differences where followed."""

import contextlib
import io

import numpy as np
import pytest

from contexts import gradient, jacfwd
from overdub.errors import OverdubError
from tests import fd

pytestmark = pytest.mark.one_mode


def _parse(s):
    return np.fromstring(s, sep=" ")


def _printed_back(x):
    buffer = io.StringIO()
    print(*(x * 2), file=buffer)
    return np.sum(_parse(buffer.getvalue()) ** 2)


REFUSED = {
    "map(str, x)": lambda x: np.sum(_parse(" ".join(map(str, x * 2))) ** 2),
    "map(repr, list)": lambda x: np.sum(_parse(" ".join(map(repr, (x * 2).tolist()))) ** 2),
    "map(format.format, x)": lambda x: np.sum(_parse(" ".join(map("{:.12f}".format, x * 2))) ** 2),
    "print to a buffer": _printed_back,
    "astype(str)": lambda x: np.sum((x * 2).astype(str).astype(float) ** 2),
    "astype('U20')": lambda x: np.sum((x * 2).astype("U20").astype(float) ** 2),
    "np.array(dtype=str)": lambda x: np.sum(np.array(x * 2, dtype=str).astype(float) ** 2),
    "np.asarray(dtype='U20')": lambda x: np.sum(np.asarray(x * 2, dtype="U20").astype(float) ** 2),
    "view('i8')": lambda x: np.sum((x * 1.0).view("i8") % 7) * 1.0,
}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("case", REFUSED)
def test_refused(case, mode):
    def f(v):
        return float(REFUSED[case](v))
    x = np.array([1.3, 0.4, 2.0])
    with pytest.raises(OverdubError):
        (gradient if mode == "reverse" else jacfwd)(f, x)


def test_a_cast_to_integers_by_a_string_dtype_is_checked_at_its_jumps():
    def f(v):
        return float(np.sum(np.asarray(v * 2, "int64") * v))
    with pytest.raises(OverdubError):
        gradient(f, np.array([1.5, 0.5]))  # (3 and 1: exactly on its jumps)
    x = np.array([1.3, 0.4])
    np.testing.assert_allclose(gradient(f, x)[0], fd.gradient(f, x)[0], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_printing_shows_the_values(mode):
    def f(v):
        print("at", v, *v)
        return float(np.sum(v ** 2))
    x = np.array([1.0, 2.0])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        got = gradient(f, x)[0] if mode == "reverse" else jacfwd(f, x)
    np.testing.assert_allclose(got, 2 * x)
    assert out.getvalue() == "at [1. 2.] 1.0 2.0\n"
