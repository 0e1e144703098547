"""A differentiated number's text, edited before it is parsed back (`lowered.runtime.DerivedText`), each mode's
own answer: refused, never a constant. Remembering the texts made caught only a text parsed as it was made;
geodepy's `dec2hp`/`hp2dec` (sweep S, session 70), which strip, replace, slice and concatenate the digits
first, gave 0 in both modes, silently. Texts that are no number's keep working."""

import numpy as np
import pytest

from contexts import derivative, gradient
from contexts.lowered.runtime import TextRoundTrip

from tests import fd


def stripped(x):
    return float(f"{x:012.9f}".rstrip("0"))


def point_removed(x):
    return float(f"{x:.6f}".replace(".", "")) / 1e6


def prefixed(x):
    return float("9" + f"{x:012.9f}")


def prefixed_in_the_format(x):
    return float(f"9{x:012.9f}")


def sliced(x):
    t = f"{x:012.9f}"
    return float(t[:3]) + float(t[3:])


def joined_backwards(x):
    return float("".join(reversed(f"{x:.6f}"))[::-1])


def digits_drawn(x):
    t = f"{x:.6f}"
    return float("".join(c for c in t if c != ".")) / 1e6


def split_and_joined(x):
    return float(".".join(f"{x:.6f}".split(".")))


def percent_formatted(x):
    return float(("%.6f" % x).replace(".", "")) / 1e6


def format_method_reversed_twice(x):
    return float("{:.6f}".format(x)[::-1][::-1])


def str_pieces(x):
    return float("".join([str(x)[:3], str(x)[3:]]))


def dec2hp(dec):  # geodepy.angles.dec2hp's steps
    minute, second = divmod(abs(dec) * 3600, 60)
    degree, minute = divmod(minute, 60)
    return float(f"{int(degree)}.{int(minute):02}" + f"{second:012.9f}".rstrip("0").replace(".", ""))


def hp2dec(hp):  # geodepy.angles.hp2dec's steps
    deg, mmss = f"{hp:.13f}".split(".")
    return abs(int(deg)) + int(mmss[:2]) / 60 + float(mmss[2:4] + "." + mmss[4:]) / 3600


EDITED = [stripped, point_removed, prefixed, prefixed_in_the_format, sliced, joined_backwards, digits_drawn,
          split_and_joined, percent_formatted, format_method_reversed_twice, str_pieces]


@pytest.mark.one_mode
@pytest.mark.parametrize("f", EDITED + [dec2hp, hp2dec])
@pytest.mark.parametrize("api", [gradient, derivative])
def test_an_edited_text_parsed_back_is_refused(f, api):
    x = 37.4567891 if f is dec2hp else 37.273444 if f is hp2dec else 1.2345
    assert abs(fd.derivative(f, x)) > 0.1  # (the function moves with x: a constant would be wrong)
    with pytest.raises(TextRoundTrip):
        api(f, x)


def labelled(x):
    # texts that are no number's: labels, keys, messages, built and edited around the computation
    name = "w" + str(3) + "_".join(["a", "b"])
    parts = "1.5,2.5".split(",")
    table = {name.upper(): float(parts[0]), "K": float(parts[1])}
    label = f"value {x:.3f}".rstrip("0")  # (a number's text, kept as text)
    return table["W3A_B"] * x * x + table["K"] * np.sin(x) + len(label) * 0.0


@pytest.mark.one_mode
@pytest.mark.parametrize("api", [gradient, derivative])
def test_texts_of_no_number_still_parse(api):
    got = api(labelled, 0.7)
    np.testing.assert_allclose(got[0] if isinstance(got, tuple) else got, fd.derivative(labelled, 0.7), rtol=1e-8)


def test_a_derived_text_is_a_str():
    from contexts.lowered.runtime import DerivedText, text
    t = text("01.234500000")
    assert type(t) is DerivedText and isinstance(t, str) and t == "01.234500000"
    for edited in (t.rstrip("0"), "9" + t, t + "9", t[1:], f"{t:>14}", t.split(".")[1], t.replace(".", ""),
                   t * 2, t.join("ab"), t.zfill(14)):
        assert type(edited) is DerivedText, edited
    assert {t: 1}["01.234500000"] == 1 and hash(t) == hash("01.234500000")
    import copy
    import pickle
    assert type(pickle.loads(pickle.dumps(t))) is str and copy.deepcopy(t) == t


def test_digits_alone_inside_a_text_are_no_number_text():
    """A number's text found inside a longer one (`f"{lat} 11.575"`) is one with a point, an exponent, inf or
    nan; digits alone are in every other text (`"1"` of `"%d" % x` made `scheme == "1-sided"` in scipy's
    `_numdiff` a differentiated text's comparison, refused: sweep T's enzyme-fit)."""
    from contexts.lowered import runtime
    saved = dict(runtime._TEXTS)
    try:
        runtime._TEXTS.clear()
        for t in ("1", "48.1", "2e-05"):
            runtime._remember(t)
        assert not runtime._remembered("1-sided", False)
        assert runtime._remembered("1", False)  # (the text itself, compared whole)
        assert runtime._remembered("lat 48.1 lon 11.5", False) and runtime._remembered("step 2e-05", False)
    finally:
        runtime._TEXTS.clear()
        runtime._TEXTS.update(saved)
