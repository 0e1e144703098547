"""A module whose conversions read a mode string it rebinds by `global` (colour's domain-range scale)."""

import numpy as np

_SCALE = "reference"


def set_scale(scale):
    global _SCALE
    _SCALE = scale


def to_domain(v):
    return v * 100.0 if _SCALE == "100" else v


def encode(L):
    L = to_domain(L)
    return np.where(L <= 0.0031308, L * 12.92, 1.055 * np.abs(L) ** (1 / 2.4) - 0.055)


def decode(V):
    return np.where(encode(0.0031308) >= V, V / 12.92, ((V + 0.055) / 1.055) ** 2.4)
