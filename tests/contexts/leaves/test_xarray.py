"""xarray's DataArrays built from a differentiated numpy array: every mode gives the right gradient or
refuses clearly (an OverdubError naming the user's line), never a crash of the engine (a RecursionError,
a raw TypeError) nor a wrong number."""

import warnings

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

from contexts import gradient, jacfwd  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402
from tests import fd  # noqa: E402

X = np.array([0.7, 1.2, -0.4, 2.0])


def summed(x):
    da = xr.DataArray(x, dims=("i",))
    return (da * da).sum().item()


def broadcast_mean(x):
    da = xr.DataArray(x.reshape(2, 2), dims=("i", "j"))
    w = xr.DataArray(np.array([1.0, 2.0]), dims=("j",))
    return float((np.sin(da) * w).mean(dim="i").sum().values)


@pytest.mark.parametrize("mode", [gradient, jacfwd], ids=["reverse", "forward"])
@pytest.mark.parametrize("f", [summed, broadcast_mean], ids=lambda f: f.__name__)
def test_right_or_refused(f, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            g = mode(f, X)
        except OverdubError as e:
            assert "test_xarray.py" in str(e)  # names the user's line
            return
    g = g[0] if type(g) is tuple else g
    np.testing.assert_allclose(g, fd.gradient(f, X)[0], rtol=1e-6, atol=1e-8)
