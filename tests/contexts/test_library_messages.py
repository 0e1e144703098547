"""Messages about errors met inside library code: an exception a library function raises while it is
transformed carries one note naming that function, the mode, the user's lines and `contexts.opaque`; an
engine refusal met inside library code also names the user's lines that led there; a DualConversionError
names the function and line that converted the dual.

The "library" is a module written into a `site-packages` directory (what tells library code from the
user's: installed code, outside the engine)."""

import pytest

from contexts import derivative, gradient
from overdub.errors import OverdubError
from tests.modules import installed

LIBRARY = '''
import math

def check(x):
    if x > 0.2:
        raise ValueError("out of range")
    return x * 2.0

def outer(x):
    return check(x) + 1.0

def stored(x):
    return math.floor(math.fsum([x]) * 0.0) + float(x)

def formatted(x):
    return float("%.6f" % x) * x

def packed(x):
    import array
    return array.array("d", [x])[0] * x

def normalised(a):
    if a == 1.0:  # (a special case whose branch differs from the formula's limit)
        return 5.0
    return 1.0 / a
'''

MODES = {"reverse": lambda f, x: gradient(f, x)[0], "forward": derivative}


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    with installed(tmp_path_factory, {"_od_fake_lib": LIBRARY}) as (module,):
        yield module


def _user(lib):
    def user(x):
        return lib.outer(x) * x  # the user's line
    return user


def _ours(notes):
    return [n for n in notes if n.startswith("overdub was differentiating")]


@pytest.mark.parametrize("mode", MODES)
def test_library_exception_gets_one_note(lib, mode):
    with pytest.raises(ValueError, match="out of range") as e:
        MODES[mode](_user(lib), 0.5)
    notes = _ours(getattr(e.value, "__notes__", []))
    assert len(notes) == 1, notes  # once per exception, not once per library frame
    note = notes[0]
    assert "check (" in note and "_od_fake_lib.py:" in note
    assert ("reverse mode" if mode == "reverse" else "forward mode") in note
    assert "contexts.opaque(_od_fake_lib.check)" in note
    assert f"{__file__}:" in note and "in " in note.split("reached from", 1)[1]


@pytest.mark.parametrize("mode", MODES)
def test_user_exception_gets_no_note(mode):
    def user(x):
        if x > 0.2:
            raise ValueError("mine")
        return x

    with pytest.raises(ValueError, match="mine") as e:
        MODES[mode](lambda x: user(x) * x, 0.5)
    assert not _ours(getattr(e.value, "__notes__", []))


def test_text_round_trip_names_function_and_line(lib):
    # (`"%.6f" % x` is the text of x's value, remembered; its parse refused where it is read)
    from contexts.lowered.runtime import TextRoundTrip
    with pytest.raises(TextRoundTrip) as e:
        derivative(lambda x: lib.formatted(x), 0.5)
    text = str(e.value)
    assert "in formatted" in text and "_od_fake_lib.py:" in text  # where the text was parsed
    assert f"{__file__}:" in text  # and the user's line that led there


@pytest.mark.parametrize("mode", MODES)
def test_refusal_in_library_names_the_users_line(lib, mode):
    from contexts.rules.registry import MissingRule

    def user(x):
        return lib.packed(x * 2.0)
    with pytest.raises(MissingRule) as e:
        MODES[mode](user, 0.5)
    text = str(e.value)
    assert "_od_fake_lib.py:" in text  # the library's line
    assert "reached from" in text and f"{__file__}:" in text and "user" in text.split("reached from")[1]


@pytest.mark.parametrize("mode", MODES)
def test_refusal_judged_from_the_sides_names_the_users_line(lib, mode):
    """A special point judged again from its two sides is refused anew, its first refusal's traceback the one
    through the user's lines: the chain is read from there too (mosqito's filter bank, reaching scipy's
    `_validate_sos`, named no line of the user's)."""
    def user(x):
        return lib.normalised(x) * x
    with pytest.raises(OverdubError) as e:
        MODES[mode](user, 1.0)
    text = str(e.value)
    assert "_od_fake_lib.py:" in text
    assert "reached from" in text and f"{__file__}:" in text and "user" in text.split("reached from")[1]
