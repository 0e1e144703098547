"""Differentiating a small colour library that was never written for AD (Zygote paper, section 3.8).

Everything above the `__main__` block is ordinary colour science, written the way a library author
would write it: `Colour` (sRGB), `XYZ` and `Lab` classes, constant tables (the sRGB matrix as nested
tuples, a dict of white points, a palette of named colours), piecewise gamma companding, hue angles
folded into [0, 360) with `if h < 0: h += 360`, and the CIE 2000 colour difference (Sharma, Wu & Dalal
2005) with all of its branches. None of it imports the AD engine.

The `__main__` block then differentiates it unchanged: the gradient of ΔE00 with respect to the RGB
components of one colour (checked against central differences), the structured gradient with respect
to a `Colour` object, and a few steps of gradient descent pulling a colour towards a target.
"""

import math

# --- constants -----------------------------------------------------------------------------------

# Linear sRGB -> CIE XYZ (D65), IEC 61966-2-1, rows X, Y, Z.
SRGB_TO_XYZ = (
    (0.4124564, 0.3575761, 0.1804375),
    (0.2126729, 0.7151522, 0.0721750),
    (0.0193339, 0.1191920, 0.9503041),
)

# Reference white points (2° observer), XYZ with Y = 1.
WHITE_POINTS = {
    "A": (1.09850, 1.00000, 0.35585),
    "D50": (0.96422, 1.00000, 0.82521),
    "D55": (0.95682, 1.00000, 0.92149),
    "D65": (0.95047, 1.00000, 1.08883),
    "E": (1.00000, 1.00000, 1.00000),
}

# CIE constants for the Lab transfer function, kept exact as in CIE 15:2004.
EPSILON = 216 / 24389     # (6/29)**3
KAPPA = 24389 / 27        # (29/3)**3

PALETTE = [
    ("black", "#000000"), ("white", "#ffffff"), ("red", "#ff0000"), ("green", "#008000"),
    ("blue", "#0000ff"), ("yellow", "#ffff00"), ("cyan", "#00ffff"), ("magenta", "#ff00ff"),
    ("orange", "#ffa500"), ("purple", "#800080"), ("teal", "#008080"), ("olive", "#808000"),
    ("navy", "#000080"), ("maroon", "#800000"), ("silver", "#c0c0c0"), ("steelblue", "#4682b4"),
    ("salmon", "#fa8072"), ("gold", "#ffd700"), ("orchid", "#da70d6"), ("seagreen", "#2e8b57"),
]


# --- colour spaces -------------------------------------------------------------------------------

def srgb_to_linear(c):
    """Undo the sRGB transfer curve of one channel in [0, 1]."""
    if c <= 0.04045:
        return c / 12.92
    return ((c + 0.055) / 1.055) ** 2.4


def linear_to_srgb(c):
    """Apply the sRGB transfer curve to one linear channel."""
    if c <= 0.0031308:
        return 12.92 * c
    return 1.055 * c ** (1 / 2.4) - 0.055


def clamp(x, lo=0.0, hi=1.0):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def mat_vec(m, v):
    return tuple(sum(m_ij * v_j for m_ij, v_j in zip(row, v)) for row in m)


class Colour:
    """An sRGB colour with channels in [0, 1]."""

    def __init__(self, r, g, b, alpha=1.0):
        self.r = r
        self.g = g
        self.b = b
        self.alpha = alpha

    @classmethod
    def from_hex(cls, text):
        text = text.lstrip("#")
        if len(text) == 3:
            text = "".join(ch * 2 for ch in text)
        if len(text) != 6:
            raise ValueError(f"not a hex colour: {text!r}")
        return cls(*(int(text[i:i + 2], 16) / 255 for i in (0, 2, 4)))

    def hex(self):
        return "#" + "".join(f"{round(clamp(c) * 255):02x}" for c in (self.r, self.g, self.b))

    def channels(self):
        return (self.r, self.g, self.b)

    def to_xyz(self):
        linear = [srgb_to_linear(c) for c in self.channels()]
        return XYZ(*mat_vec(SRGB_TO_XYZ, linear))

    def to_lab(self, white="D65"):
        return self.to_xyz().to_lab(white)

    def __repr__(self):
        return f"Colour({self.r:.4f}, {self.g:.4f}, {self.b:.4f})"


class XYZ:
    """CIE 1931 tristimulus values (Y = 1 for the white point)."""

    def __init__(self, x, y, z):
        self.x, self.y, self.z = x, y, z

    def to_lab(self, white="D65"):
        try:
            xw, yw, zw = WHITE_POINTS[white]
        except KeyError:
            raise ValueError(f"unknown white point {white!r}; known: {sorted(WHITE_POINTS)}") from None
        fx, fy, fz = (_lab_f(t) for t in (self.x / xw, self.y / yw, self.z / zw))
        return Lab(116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz))

    def __repr__(self):
        return f"XYZ({self.x:.4f}, {self.y:.4f}, {self.z:.4f})"


def _lab_f(t):
    if t > EPSILON:
        return t ** (1 / 3)
    return (KAPPA * t + 16) / 116


class Lab:
    """CIELAB coordinates: lightness L in [0, 100], opponent axes a (green-red) and b (blue-yellow)."""

    def __init__(self, l, a, b):
        self.l, self.a, self.b = l, a, b

    def to_lab(self, white="D65"):
        return self

    def chroma(self):
        return math.hypot(self.a, self.b)

    def hue(self):
        return hue_angle(self.a, self.b)

    def __iter__(self):
        return iter((self.l, self.a, self.b))

    def __repr__(self):
        return f"Lab({self.l:.4f}, {self.a:.4f}, {self.b:.4f})"


def hue_angle(a, b):
    """Hue angle in degrees in [0, 360); 0 for an achromatic colour."""
    if a == 0 and b == 0:
        return 0.0
    h = math.degrees(math.atan2(b, a))
    if h < 0:
        h += 360
    return h


def as_lab(colour):
    if isinstance(colour, Lab):
        return colour
    if isinstance(colour, (tuple, list)):
        return Lab(*colour)
    return colour.to_lab()


# --- colour differences --------------------------------------------------------------------------

def delta_e_76(c1, c2):
    """Euclidean distance in CIELAB (CIE 1976)."""
    return math.dist(tuple(as_lab(c1)), tuple(as_lab(c2)))


def delta_e_2000(c1, c2, kL=1.0, kC=1.0, kH=1.0):
    """CIE 2000 colour difference ΔE00 (Luo, Cui & Rigg 2001; notation of Sharma, Wu & Dalal 2005)."""
    L1, a1, b1 = as_lab(c1)
    L2, a2, b2 = as_lab(c2)

    # 1. a' rescaled so that near-neutral colours get their hue right
    C_bar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    C_bar7 = C_bar ** 7
    G = 0.5 * (1 - math.sqrt(C_bar7 / (C_bar7 + 25 ** 7)))
    a1p, a2p = (1 + G) * a1, (1 + G) * a2
    C1p, C2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p, h2p = hue_angle(a1p, b1), hue_angle(a2p, b2)

    # 2. differences in lightness, chroma and hue
    dLp = L2 - L1
    dCp = C2p - C1p
    if C1p * C2p == 0:
        dhp = 0.0
    else:
        dhp = h2p - h1p
        if dhp > 180:
            dhp -= 360
        elif dhp < -180:
            dhp += 360
    dHp = 2 * math.sqrt(C1p * C2p) * math.sin(math.radians(dhp / 2))

    # 3. weighting functions at the mean colour
    Lp_bar = (L1 + L2) / 2
    Cp_bar = (C1p + C2p) / 2
    if C1p * C2p == 0:
        hp_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        hp_bar = (h1p + h2p) / 2
    elif h1p + h2p < 360:
        hp_bar = (h1p + h2p + 360) / 2
    else:
        hp_bar = (h1p + h2p - 360) / 2

    T = (1 - 0.17 * math.cos(math.radians(hp_bar - 30))
         + 0.24 * math.cos(math.radians(2 * hp_bar))
         + 0.32 * math.cos(math.radians(3 * hp_bar + 6))
         - 0.20 * math.cos(math.radians(4 * hp_bar - 63)))
    d_theta = 30 * math.exp(-(((hp_bar - 275) / 25) ** 2))
    Cp_bar7 = Cp_bar ** 7
    R_C = 2 * math.sqrt(Cp_bar7 / (Cp_bar7 + 25 ** 7))
    S_L = 1 + 0.015 * (Lp_bar - 50) ** 2 / math.sqrt(20 + (Lp_bar - 50) ** 2)
    S_C = 1 + 0.045 * Cp_bar
    S_H = 1 + 0.015 * Cp_bar * T
    R_T = -math.sin(math.radians(2 * d_theta)) * R_C

    lightness = dLp / (kL * S_L)
    chroma = dCp / (kC * S_C)
    hue = dHp / (kH * S_H)
    return math.sqrt(lightness ** 2 + chroma ** 2 + hue ** 2 + R_T * chroma * hue)


def nearest_named(colour, palette=PALETTE, metric=delta_e_2000):
    """(name, distance) of the palette entry closest to `colour`."""
    best_name, best = None, math.inf
    for name, code in palette:
        d = metric(colour, Colour.from_hex(code))
        if d < best:
            best_name, best = name, d
    return best_name, best


if __name__ == "__main__":
    from contexts import gradient

    ref = Colour.from_hex("#4682b4")             # steelblue
    point = (0.3, 0.5, 0.7)
    print(f"ΔE00({Colour(*point)}, {ref}) = {delta_e_2000(Colour(*point), ref):.4f}")

    # 1. gradient with respect to the RGB components, beside central differences
    grad = gradient(lambda r, g, b: delta_e_2000(Colour(r, g, b), ref), *point)
    h = 1e-6
    for i, name in enumerate("rgb"):
        up, down = list(point), list(point)
        up[i] += h
        down[i] -= h
        fd = (delta_e_2000(Colour(*up), ref) - delta_e_2000(Colour(*down), ref)) / (2 * h)
        print(f"dΔE/d{name}: reverse mode {grad[i]: .6f}   central difference {fd: .6f}")
        assert abs(grad[i] - fd) <= 1e-5 * max(1.0, abs(fd)), (name, grad[i], fd)

    # 2. the gradient with respect to a Colour object mirrors its fields
    (dcolour,) = gradient(lambda c: delta_e_2000(c, ref), Colour(*point))
    print("gradient of the Colour object:", dcolour)
    assert abs(dcolour.r - grad[0]) < 1e-12 and abs(dcolour.g - grad[1]) < 1e-12

    # 3. gradient descent moves a colour towards a target (clamped to the sRGB gamut)
    target = Colour.from_hex("#fa8072")          # salmon
    colour = Colour(0.2, 0.6, 0.3)
    print(f"start {colour} ({colour.hex()}), nearest named: {nearest_named(colour)[0]}")
    history = []
    for step in range(12):
        distance = delta_e_2000(colour, target)
        history.append(distance)
        (d,) = gradient(lambda c: delta_e_2000(c, target), colour)
        norm = math.sqrt(d.r ** 2 + d.g ** 2 + d.b ** 2)
        lr = min(0.1, 0.5 * distance / norm ** 2)       # a damped Newton step on the distance
        colour = Colour(*(clamp(c - lr * dc) for c, dc in zip(colour.channels(), (d.r, d.g, d.b))))
        print(f"step {step:2d}  ΔE00 {distance:8.4f}  -> {colour.hex()}")
    print(f"end   {colour} ({colour.hex()}), nearest named: {nearest_named(colour)[0]}")
    assert all(b < a for a, b in zip(history, history[1:])), "ΔE00 did not decrease at every step"
    assert history[-1] < 0.25 * history[0]
