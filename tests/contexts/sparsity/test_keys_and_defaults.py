"""Sparsity detection on values used as dict keys or set members (refused by name: a traced value has no
hash, and what a lookup finds would depend on the value), and `min`/`max` of an empty iterable with a
traced `default=` (it crashed in the rule: reduce() of an empty sequence)."""

import numpy as np
import pytest

from contexts import jacobian_sparsity
from contexts.sparsity.tracer import TracedHashError


def test_min_of_nothing_is_its_default():
    pattern = jacobian_sparsity(lambda v: np.array([min([], default=v[1]) * 2.0, max([v[0]], default=v[1])]),
                                np.array([0.3, 0.7])).toarray()
    assert pattern.tolist() == [[False, True], [True, False]]


@pytest.mark.parametrize("f", [lambda v: list({v[0]: 1.0})[0], lambda v: sum({v[0], 2.0})],
                         ids=["dict key", "set member"])
def test_a_traced_key_is_refused_by_name(f):
    with pytest.raises(TracedHashError, match="dict key or set member") as e:
        jacobian_sparsity(f, np.array([0.7]))
    assert "test_keys_and_defaults.py" in str(e.value)
    assert isinstance(e.value, TypeError)
