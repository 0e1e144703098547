"""A library keeping settings in module-level state (a dict, an object), set by its own functions: read by
test_sweep_29_cases through the module (`settings.SCALES["scale"]`)."""

SCALES = {"scale": 1.0}


class _Options:
    scale = 1.0


OPTIONS = _Options()


def set_scale(v):
    SCALES["scale"] = v


def set_option(v):
    OPTIONS.scale = v
