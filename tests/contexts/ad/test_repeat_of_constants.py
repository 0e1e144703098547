"""`itertools.repeat` of a constant, made by library code and zipped beside differentiated values (neurodsp's
`check_n_cycles` gives `repeat(n_cycles)`, zipped with the frequencies in its wavelet transform): reverse mode
sees what it repeats (`runtime._may_differ`, through the garbage collector's referents, as `__reduce__` is
deprecated) and draws it natively. Jacobians against central differences. The "library" is a module written
into a `site-packages` directory."""

import numpy as np
import pytest

from contexts import jacobian
from tests import fd
from tests.modules import installed

LIBRARY = '''
from itertools import repeat

import numpy as np


def check_n_cycles(n_cycles, len_cycles=None):
    if isinstance(n_cycles, (int, float, np.number)):
        if n_cycles <= 0:
            raise ValueError('Number of cycles must be a positive number.')
        n_cycles = repeat(n_cycles)
    elif isinstance(n_cycles, (tuple, list, np.ndarray)):
        for cycle in n_cycles:
            if cycle <= 0:
                raise ValueError('Each number of cycles must be a positive number.')
        if len_cycles and len(n_cycles) != len_cycles:
            raise ValueError('The length of number of cycles does not match other inputs.')
        n_cycles = iter(n_cycles)
    return n_cycles


def transform(sig, freqs, n_cycles=7):
    n_cycles = check_n_cycles(n_cycles, len(freqs))
    out = np.zeros([len(freqs), len(sig)], dtype=complex)
    for ind, (freq, n_cycle) in enumerate(zip(freqs, n_cycles)):
        out[ind, :] = np.sin(sig * freq) * n_cycle
    return out
'''


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    with installed(tmp_path_factory, {"_od_repeat_lib": LIBRARY}) as (module,):
        yield module


@pytest.mark.one_mode
@pytest.mark.parametrize("cycles", [3, [3.0, 4.0]], ids=["repeated", "listed"])
def test_cycles_beside_differentiated_values(lib, cycles):
    f = lambda s: np.abs(lib.transform(s, np.array([8.0, 12.0]), n_cycles=cycles)).ravel()  # noqa: E731
    x = np.array([0.3, -0.5, 0.8])
    np.testing.assert_allclose(jacobian(f, x), fd.jacobian(f, x), rtol=1e-6, atol=1e-8)


def test_what_a_repeat_holds_decides():
    import itertools

    from contexts.ad.runtime import _may_differ
    assert not _may_differ(itertools.repeat(3), 0)
    assert not _may_differ(itertools.repeat("a", 4), 0)
    assert _may_differ(itertools.repeat(2.5), 0)
    assert _may_differ(itertools.repeat(np.array([1.0, 2.0]), 2), 0)
