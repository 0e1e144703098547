"""Views that reinterpret a differentiated array's bytes, and structured arrays (session 69). Reverse mode gave 0
silently for `np.stack([x, x ** 2], -1).view([('a', float), ('b', float)])['a']` and for `x.view(np.int64)`:
the view's adjoint refused them, but ran only where a cotangent reached the view, and the reads of an integer or
structured array give none (a structured array's field read was taken for an integer array's). Refused now
where the view is made, and at a field read of a structured array; a view in the same dtype or as another class
is still followed. Against central differences; both modes refuse, never answer."""

import numpy as np
import pytest

from contexts import gradient, jacfwd
from overdub.errors import OverdubError
from tests import fd

pytestmark = pytest.mark.one_mode

_FIELDS = [("a", float), ("b", float)]

REFUSED = {
    "structured view, a field read": lambda x: np.sum(np.stack([x, x ** 2], axis=-1).view(_FIELDS)["a"]),
    "structured view, both fields": lambda x: np.sum(np.stack([x, x ** 2], axis=-1).view(_FIELDS).ravel()["a"]
                                                     * np.stack([x, x ** 2], axis=-1).view(_FIELDS).ravel()["b"]),
    "an integer view": lambda x: np.sum((x * 1.0).view(np.int64) % 7) * 1.0,
    "a complex view": lambda x: np.sum(np.stack([x, x], axis=-1).view(np.complex128).imag),
    "a float32 view": lambda x: np.sum(x.view(np.float32)),
    "fields built by np.rec.fromarrays": lambda x: np.sum(np.rec.fromarrays([x, 2 * x], names="a,b").a),
}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("case", REFUSED)
def test_refused_never_zero(case, mode):
    f = REFUSED[case]
    x = np.array([1.3, 0.4, 2.0])
    with pytest.raises(OverdubError):
        (gradient if mode == "reverse" else jacfwd)(lambda v: float(f(v)), x)


FOLLOWED = {
    "a view in the same dtype": lambda x: np.sum(x.view(np.float64) ** 2) + np.sum(x.view("<f8")),
    "a view as ndarray": lambda x: np.sum(np.sin(x).view(np.ndarray) * x),
}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("case", FOLLOWED)
def test_views_of_the_same_values(case, mode):
    def f(v):
        return float(FOLLOWED[case](v))
    x = np.array([1.3, 0.4, 2.0])
    got = gradient(f, x.copy())[0] if mode == "reverse" else jacfwd(f, x.copy())
    np.testing.assert_allclose(got, fd.gradient(f, x)[0], rtol=1e-6)
