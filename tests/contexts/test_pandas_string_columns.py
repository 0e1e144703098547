"""pandas' string dtypes beside differentiated columns in reverse mode: finding the common dtype of string
columns gathers their `na_value` (np.nan for pandas 3's "str") into a set, a float that was taken for one that
may carry a derivative (skelo's Elo ratings, fitted on a frame of player names, were refused). NaN itself, by
identity, is a constant member; a NaN computed from the inputs is another object, still refused. Gradients
against central differences."""

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from contexts import gradient  # noqa: E402
from contexts.rules.containers import constant_member  # noqa: E402
from tests import fd  # noqa: E402


def f(k):
    a = pd.DataFrame({"name": pd.array(["a", "b"], dtype="string"), "v": [1.0 * k, 2.0 * k]})
    b = pd.DataFrame({"name": pd.array(["c"], dtype="string"), "v": [k * k]})
    both = pd.concat([a, b], ignore_index=True)
    return float((both["v"] * np.arange(1.0, 4.0)).sum())


@pytest.mark.one_mode
def test_concat_of_string_columns():
    assert gradient(f, 1.5)[0] == pytest.approx(fd.derivative(f, 1.5), rel=1e-8)


def test_nan_by_identity_only():
    assert constant_member(np.nan) and constant_member(float("nan")) is False
