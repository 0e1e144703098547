"""A function whose local, parameter or closed-over variable is named like a builtin (`type`, `slice`,
`reversed`, `len`, ...): the engines' generated code calls the builtins it needs by names of its own, never by
the bare name the user's variable holds.

Found by sweep Q (session 68): heartpy's `interpolate_peaks` (`slice = data[i[0]:i[1]]`) crashed both modes
(the lowered `a[1:3]` became `slice(1, 3, None)`, calling the user's array); a local `type` crashed reverse
mode's adjoint (`type(_od_g) is float`), and one named `reversed` closed over by a lambda crashed it too (its
walk of the tape). Each case is checked against central differences, in both modes, with every such name.
"""

import importlib.util
import textwrap

import pytest

from contexts import derivative, gradient
from tests import fd

NAMES = ("type", "slice", "reversed", "len", "float", "int", "list", "tuple", "getattr", "iter", "next",
         "isinstance", "range", "zip", "enumerate", "dict", "locals", "sum", "min", "max", "abs", "id")

TEMPLATE = '''  # (the user's code calls none of these builtins itself: its variable holds the name)
import numpy as np


def as_local(x):
    {name} = 0.5
    data = [x, 2.0 * x, 3.0 * x, x * x]
    part = data[1:3]
    arr = x * np.arange(6.0)
    acc = 0.0
    for v in part + data[::2]:
        acc = acc + v * v * {name}
    return acc + np.sum(arr[2:5] ** 2).item() * {name}


def as_parameter(x, {name}=2.0):
    data = [x, 2.0 * x, 3.0 * x]
    acc = 0.0
    for v in data[1:]:
        acc = acc + v * {name}
    return acc + x ** 2 * {name}


def as_cell(x):
    {name} = 0.5
    scale = lambda y: y * {name}
    def twice(y):
        return 2.0 * y * {name}
    return scale(x) + twice(x * x) + [x, x * x][0:1][0]
'''


def _module(tmp_path, name):
    path = tmp_path / f"shadowing_{name}.py"
    path.write_text(textwrap.dedent(TEMPLATE.format(name=name)))
    spec = importlib.util.spec_from_file_location(f"shadowing_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.one_mode
def test_a_variable_named_like_a_builtin(tmp_path, name, mode):
    module = _module(tmp_path, name)
    for f in (module.as_local, module.as_parameter, module.as_cell):
        want = fd.derivative(f, 1.3)
        got = gradient(f, 1.3)[0] if mode == "reverse" else derivative(f, 1.3)
        assert abs(got - want) <= 1e-6 * max(1.0, abs(want)), (f.__name__, got, want)
