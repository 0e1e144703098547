"""show_lowered prints the lowered form: one line per statement, in order, active stores marked, the
control structure as indentation."""

import doctest
import math

import contexts.lowered.show
from contexts.lowered import show_lowered


def loop(x):
    y = 1.0
    for i in range(3):
        y = y * math.sin(x) + x
    return y


def nested(x, n, flag):
    s = 0.0
    k = 0
    while k < n:
        if flag:
            try:
                s = s + x / k
            except ZeroDivisionError:
                s = s - 1.0
        else:
            s = s * 2.0
        k += 1
    return s


def _statements(text):
    """(marked, indentation, statement) of each printed statement line."""
    out = []
    for line in text.splitlines()[2:]:
        body = line[8:]
        out.append((line[0] == "*", len(body) - len(body.lstrip()), body.strip()))
    return out


def test_temporaries_in_order_with_active_marks():
    lines = _statements(show_lowered(loop))
    assert [s for _, _, s in lines] == ["y = 1.0", "_od_t1 = range(3)", "for i in _od_t1:",
                                       "_od_t2 = math.sin(x)", "_od_t3 = y * _od_t2", "y = _od_t3 + x",
                                       "return y"]
    assert [m for m, _, _ in lines] == [True, False, False, True, True, True, False]


def test_no_active_parameter_marks_nothing():
    assert not any(m for m, _, _ in _statements(show_lowered(loop, active=[])))


def test_active_marks_follow_the_parameters_given():
    text = show_lowered(nested, active=["n"])
    assert "active arguments: n" in text
    assert not any(m for m, _, _ in _statements(text))  # n only steers the loop: nothing is differentiable
    marked = {s for m, _, s in _statements(show_lowered(nested, active=["x"])) if m}
    assert "s = 0.0" in marked and "s = s * 2.0" in marked
    assert not any(s.startswith("k =") for s in marked)


def test_nested_control_structure_prints_indented():
    lines = _statements(show_lowered(nested, active=["x"]))
    depth = {s: d for _, d, s in lines}
    assert depth["while k < n:"] == 4
    assert depth["if flag:"] == 8
    assert depth["try:"] == 12
    assert depth["except ZeroDivisionError:"] == 12
    assert depth["s = s - 1.0"] == 16
    assert depth["else:"] == 8
    assert depth["s = s * 2.0"] == 12
    order = [s for _, _, s in lines]
    assert order.index("try:") < order.index("except ZeroDivisionError:") < order.index("else:")


def test_docstring_example_runs():
    failed, attempted = doctest.testmod(contexts.lowered.show, optionflags=doctest.ELLIPSIS)
    assert failed == 0 and attempted > 0
