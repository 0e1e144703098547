"""A small 'library' module for tests/contexts/test_opaque.py: marked opaque as a whole by name."""

import math


def wave(x):
    return math.sin(x) * 2.0


def twice(x):
    return wave(x) + wave(x)
