"""A refusal at a compiled library's function says what the library does and what to do (sweep H: a pandas
Series built from differentiated values was refused as "no rule for the C function
pandas.core.internals.blocks.NumpyBlock", numba's ufuncs as "builtins._DUFunc.__call__")."""

from __future__ import annotations

import numpy as np
import pytest

from contexts import ADContext, gradient, jacfwd
from overdub.errors import OverdubError

pd = pytest.importorskip("pandas")


def _series(x):
    s = pd.Series(x, index=pd.date_range("2020-06-01", periods=3, freq="D"))
    return float((s * 2.0 + 1.0).sum())


def _rolling_median(x):
    return float(pd.Series(x).rolling(2).median().sum())


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_series_of_differentiated_values_names_pandas_and_the_way_out(mode):
    """(Forward mode under newer pandas meets the duals earlier, in pandas' `sanitize_array`: refused there, by
    a conversion error naming pandas' line; under pandas 2.x at its blocks, with the hint. Reverse mode follows a
    Series through pandas' own code since session 70: refused, with the hint, at a kernel without a rule.)"""
    x = np.array([1.0, 2.0, 3.0])
    expected = r"roll_median.*pandas computes this in a compiled kernel .*to_numpy" if mode == "reverse" else \
        r"pandas keeps .* compiled blocks .*to_numpy|pandas[/\\]core"
    with pytest.raises(OverdubError, match=expected):
        if mode == "reverse":
            with ADContext():
                gradient(_rolling_median, x)
        else:
            jacfwd(_rolling_median, x)  # (of `_series`, refused in forward mode, reverse mode answers: `after_refusal`)


def test_a_series_of_differentiated_values_with_dates_in_reverse_mode():
    from tests.fd import gradient as fd_gradient

    x = np.array([1.0, 2.0, 3.0])
    with ADContext():
        got = gradient(_series, x)[0]
    assert np.allclose(got, fd_gradient(_series, x)[0], rtol=1e-8)


def test_a_numba_function_names_numba():
    numba = pytest.importorskip("numba")

    @numba.guvectorize("(n)->(n)")  # (one with signatures, @njit, @vectorize, @cfunc: differentiated as Python)
    def twice(v, out):
        out[:] = 2.0 * v

    with pytest.raises(OverdubError, match="numba generalized ufunc twice made without type signatures"):
        gradient(lambda x: float(np.sum(twice(x))), np.array([1.0, 2.0]))
