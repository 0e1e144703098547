"""examples/colour_difference.py, a colour library written without AD in mind, differentiated unchanged.

ΔE00 itself is checked against published test data (Sharma, Wu & Dalal 2005, Table 1), the gradients
against central differences computed here, at points chosen to run different branches of the library:
both sRGB gamma segments, both Lab transfer segments, every hue-wrap case of CIEDE2000.
"""

import importlib.util
import math
import pathlib

import pytest

from contexts import Tangent, gradient
from tests import fd

_PATH = pathlib.Path(__file__).resolve().parents[3] / "examples" / "colour_difference.py"
_spec = importlib.util.spec_from_file_location("colour_difference", _PATH)
cd = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cd)

# Both engine gaps these marked (a Python `__iter__`, sqrt at 0 with a zero cotangent) are fixed: the
# marks stay as names so the tests read as they were written, and mark nothing.
ITER_BUG = ITER_AND_SQRT_BUGS = ()


def assert_matches_fd(f, *x, h, rtol=1e-5, atol=1e-6):
    got = gradient(f, *x)
    want = fd.gradient(f, *x, h=h, order=2)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g is not None and math.isclose(g, w, rel_tol=rtol, abs_tol=atol), (got, want)


# --- (a) ΔE00 against the published test pairs ---------------------------------------------------

SHARMA_PAIRS = [  # (pair number, Lab 1, Lab 2, ΔE00)
    (1, (50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),      # hue near 270°, Δθ term active
    (7, (50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),                  # achromatic: C1'·C2' == 0
    (10, (50.0, 2.49, -0.001), (50.0, -2.49, 0.001), 7.1792),          # Δh' = 180 exactly
    (11, (50.0, 2.49, -0.001), (50.0, -2.49, 0.0011), 7.2195),         # Δh' < -180, mean h' + 360
    (13, (50.0, -0.001, 2.49), (50.0, 0.0009, -2.49), 4.8045),         # Δh' > 180, mean h' - 360
    (15, (50.0, -0.001, 2.49), (50.0, 0.0011, -2.49), 4.7461),         # |h1' - h2'| <= 180 side
    (17, (50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),              # h' = 0 against h' > 180
    (25, (60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    (34, (2.0776, 0.0795, -1.135), (0.9033, -0.0636, -0.5514), 0.9082),  # very dark, S_L large
]


@pytest.mark.parametrize("number, lab1, lab2, expected", SHARMA_PAIRS, ids=[f"pair{p[0]}" for p in SHARMA_PAIRS])
def test_delta_e_2000_published_pairs(number, lab1, lab2, expected):
    forward = cd.delta_e_2000(cd.Lab(*lab1), cd.Lab(*lab2))
    backward = cd.delta_e_2000(cd.Lab(*lab2), cd.Lab(*lab1))
    assert round(forward, 4) == expected
    assert math.isclose(forward, backward, rel_tol=1e-12)


def test_srgb_to_lab_known_values():
    """sRGB white is L=100, a=b=0 under D65; pure red is Lab (53.24, 80.09, 67.20) (Lindbloom)."""
    white = cd.Colour(1.0, 1.0, 1.0).to_lab()
    assert abs(white.l - 100) < 1e-3 and abs(white.a) < 1e-2 and abs(white.b) < 1e-2
    red = cd.Colour.from_hex("#f00").to_lab()
    assert [round(v, 2) for v in red] == [53.24, 80.09, 67.2]


def test_nearest_named_colour():
    assert cd.nearest_named(cd.Colour.from_hex("#fb7e70"))[0] == "salmon"
    assert cd.nearest_named(cd.Colour(0.2, 0.6, 0.3))[0] == "seagreen"


# --- (b) gradients against central differences --------------------------------------------------

# Every pair: (Lab 1, Lab 2); hues h1', h2' in degrees noted for the branch each runs.
LAB_POINTS = {
    "plain": ((50.0, 20.0, 30.0), (55.0, 22.0, 33.0)),                 # h' ≈ 56°, 56°
    "hue_wrap_up": ((50.0, 20.0, 8.0), (52.0, 10.0, -18.0)),            # 22° vs 299°: Δh' > 180, sum < 360
    "hue_wrap_down": ((50.0, 10.0, -18.0), (52.0, 20.0, 8.0)),          # 299° vs 22°: Δh' < -180
    "hue_wrap_sum_over_360": ((40.0, -5.0, 30.0), (45.0, 25.0, -3.0)),  # 100° vs 353°: sum >= 360
    "blue_rotation_term": ((30.0, 10.0, -60.0), (32.0, 4.0, -55.0)),    # ≈ 275°, R_T large
    "dark": ((3.0, 0.5, -1.0), (2.0, -0.3, -0.6)),
}


@pytest.mark.parametrize("name", LAB_POINTS)
def test_delta_e_2000_gradient_wrt_lab(name):
    lab1, lab2 = LAB_POINTS[name]
    ref = cd.Lab(*lab2)
    assert_matches_fd(lambda L, a, b: cd.delta_e_2000(cd.Lab(L, a, b), ref), *lab1, h=1e-5)


def test_delta_e_2000_gradient_wrt_both_colours_and_weights():
    (lab1, lab2) = LAB_POINTS["hue_wrap_up"]
    assert_matches_fd(lambda L1, a1, b1, L2, a2, b2, kL: cd.delta_e_2000(cd.Lab(L1, a1, b1), cd.Lab(L2, a2, b2),
                                                                         kL=kL),
                      *lab1, *lab2, 2.0, h=1e-5)


def test_delta_e_2000_gradient_next_to_an_achromatic_colour():
    """C1' == 0: the lightness and the chromatic colour's coordinates still have a derivative."""
    grey = cd.Lab(50.0, 0.0, 0.0)
    assert_matches_fd(lambda L, a, b: cd.delta_e_2000(grey, cd.Lab(L, a, b)), 52.0, -1.0, 2.0, h=1e-5)


RGB_POINTS = {
    "mid": ((0.3, 0.5, 0.7), "#4682b4"),
    "dark_linear_segments": ((0.02, 0.03, 0.01), "#000000"),   # gamma c <= 0.04045 and Lab t <= ε branches
    "saturated": ((0.9, 0.1, 0.2), "#ff00ff"),
    "mixed_segments": ((0.03, 0.6, 0.9), "#008080"),
}


@pytest.mark.parametrize("name", [pytest.param(name, marks=())
                                  for name, (_, ref) in RGB_POINTS.items()])
def test_delta_e_2000_gradient_wrt_rgb(name):
    rgb, ref_hex = RGB_POINTS[name]
    ref = cd.Colour.from_hex(ref_hex)
    assert_matches_fd(lambda r, g, b: cd.delta_e_2000(cd.Colour(r, g, b), ref), *rgb, h=1e-7, atol=1e-5)


LAB_COMPONENTS = {"l": lambda lab: lab.l, "a": lambda lab: lab.a, "b": lambda lab: lab.b}


@pytest.mark.parametrize("name", RGB_POINTS)
@pytest.mark.parametrize("component", LAB_COMPONENTS)
def test_srgb_to_lab_gradient(name, component):
    rgb, _ = RGB_POINTS[name]
    pick = LAB_COMPONENTS[component]
    assert_matches_fd(lambda r, g, b: pick(cd.Colour(r, g, b).to_lab()), *rgb, h=1e-7, atol=1e-5)


def test_delta_e_76_gradient():
    ref = cd.Lab(55.0, 22.0, 33.0)
    assert_matches_fd(lambda L, a, b: cd.delta_e_76(cd.Lab(L, a, b), ref), 50.0, 20.0, 30.0, h=1e-5)


# --- (c) structured gradients ---------------------------------------------------------------------

def test_gradient_wrt_colour_object_is_a_tangent_of_its_fields():
    ref = cd.Colour.from_hex("#4682b4")
    (d,) = gradient(lambda c: cd.delta_e_2000(c, ref), cd.Colour(0.3, 0.5, 0.7))
    assert isinstance(d, Tangent)
    assert {"r", "g", "b"} <= set(d)
    assert d.get("alpha") in (None, 0, 0.0)   # alpha is stored but never read
    want = fd.gradient(lambda r, g, b: cd.delta_e_2000(cd.Colour(r, g, b), ref), 0.3, 0.5, 0.7, h=1e-7, order=2)
    for got, fd_value in zip((d.r, d.g, d.b), want):
        assert math.isclose(got, fd_value, rel_tol=1e-5, abs_tol=1e-5)


def test_gradient_wrt_lab_object_is_a_tangent_of_its_fields():
    ref = cd.Lab(55.0, 22.0, 33.0)
    (d,) = gradient(lambda lab: cd.delta_e_2000(lab, ref), cd.Lab(50.0, 20.0, 30.0))
    assert isinstance(d, Tangent) and set(d) >= {"l", "a", "b"}
    want = fd.gradient(lambda L, a, b: cd.delta_e_2000(cd.Lab(L, a, b), ref), 50.0, 20.0, 30.0, h=1e-5, order=2)
    for got, fd_value in zip((d.l, d.a, d.b), want):
        assert math.isclose(got, fd_value, rel_tol=1e-5, abs_tol=1e-6)


def test_gradient_wrt_colour_object_through_conversion_only():
    """Lab lightness of a Colour object: the Tangent holds r, g, b (no unpacking involved)."""
    (d,) = gradient(lambda c: c.to_lab().l, cd.Colour(0.3, 0.5, 0.7))
    assert isinstance(d, Tangent)
    want = fd.gradient(lambda r, g, b: cd.Colour(r, g, b).to_lab().l, 0.3, 0.5, 0.7, h=1e-7, order=2)
    for got, fd_value in zip((d.r, d.g, d.b), want):
        assert math.isclose(got, fd_value, rel_tol=1e-5, abs_tol=1e-5)


# --- the engine gap, reduced ----------------------------------------------------------------------

class _Pair:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __iter__(self):
        return iter((self.x, self.y))


class _GenPair(_Pair):
    def __iter__(self):
        yield self.x
        yield self.y


@pytest.mark.parametrize("cls", [_Pair, _GenPair])
def test_unpacking_an_object_with_python_iter(cls):
    def f(x):
        a, b = cls(x, 2.0)
        return a * b
    assert gradient(f, 3.0) == (2.0,)


def test_builtin_getattr_on_an_object():
    def f(x):
        return getattr(_Pair(x, 2.0), "x") * 2.0
    assert gradient(f, 3.0) == (2.0,)


def test_sqrt_at_zero_with_a_zero_cotangent():
    def f(x):
        return 2 * math.sqrt(0.0 * x) * math.sin(0.0) + x     # the shape of ΔH' when one chroma is 0
    assert gradient(f, 2.0) == (1.0,)
