"""Arrays a Python callee changes in place, passed by keyword (`output=out`, `dest=d`, a keyword-only
parameter): the cotangent the caller holds for the array after the call must flow into the callee's
reverse pass, as for one passed by position. It did not: scipy.ndimage's `gaussian_filter1d(a, s,
output=out)` and `gaussian_laplace` (which fills its output through a call spreading `*extra_arguments`)
came out silently wrong in reverse mode (2.0 off on a 4-vector). What a forwarding wrapper passes through
`*args` or `**kwargs` cannot be handed: a callee changing it in place is refused. Checked against central
differences."""

import numpy as np
import pytest

from contexts import gradient
from overdub.errors import OverdubError
from tests import fd
from tests.modes import MODES, gradient_in

W = np.cos(np.arange(4) * 0.7)
X = np.linspace(0.1, 2.0, 4)


def fill(x, dest=None):
    dest[:] = x * 2


def scale(x, *, dest):
    dest *= x


def wrap(x, *extra, dest):
    fill(x, dest)  # (positionally, inside)


def by_keyword(a):
    d = np.zeros_like(a)
    fill(a, dest=d)
    return np.sum(d * W)


def keyword_only(a):
    d = np.ones_like(a)
    scale(a, dest=d)
    return np.sum(d * W * a)


def keyword_past_a_spread(a):
    d = np.zeros_like(a)
    extra = (1.0, 2.0)
    wrap(a, *extra, dest=d)
    return np.sum(d * d * W)


def positional_before_a_spread(a):
    d = np.zeros_like(a)
    rest = ()
    fill(a, d, *rest)
    return np.sum(d * W) * a[0]


@pytest.mark.parametrize("f", [by_keyword, keyword_only, keyword_past_a_spread, positional_before_a_spread])
def test_against_central_differences(f):
    np.testing.assert_allclose(gradient(f, X)[0], fd.gradient(f, X)[0], rtol=1e-6, atol=1e-9)


def forward_kwargs(x, **kw):
    return fill(x, **kw)


def through_kwargs(a):
    d = np.zeros_like(a)
    forward_kwargs(a, dest=d)
    return np.sum(d * W)


def forward_args(*args):
    return fill(*args)


def copy_doubled(dst, src):
    np.copyto(dst, src * 2.0)  # (a C function declared to write its first argument)


def forward_copy(*args):
    copy_doubled(*args)


def through_args_by_copyto(a):
    d = np.zeros_like(a)
    forward_copy(d, a)
    return np.sum(d * W)


def through_args(a):
    d = np.zeros_like(a)
    forward_args(a, d)
    return np.sum(d * W)


@pytest.mark.one_mode  # (that mode's own refusal: tests/conftest.py)
@pytest.mark.parametrize("f", [through_kwargs, through_args, through_args_by_copyto])
def test_through_a_forwarding_wrapper_refused(f):
    """What `*args` / `**kwargs` forward cannot be handed its cotangent: a callee changing it is refused,
    naming the way out, never a number (it gave 0 for the writes: 2.0 off)."""
    with pytest.raises(OverdubError) as e:
        gradient(f, X)
    assert "by position or by name" in str(e.value)


def reads_through_a_wrapper(a):
    d = np.zeros_like(a)
    return np.sum(forward_sum(a, d) * W)


def forward_sum(*args):
    return _summed(*args)


def _summed(x, scratch):
    work = np.zeros_like(x)
    work += x * 2.0  # (an array of its own changed in place: no refusal)
    return work + scratch


def test_a_wrapper_whose_callee_changes_only_its_own_arrays_passes():
    np.testing.assert_allclose(gradient(reads_through_a_wrapper, X)[0], fd.gradient(reads_through_a_wrapper, X)[0],
                               rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_forward_mode_too(mode):
    got = np.array(gradient_in(mode, lambda *t: by_keyword(np.array(t)), *X))
    np.testing.assert_allclose(got.ravel(), fd.gradient(by_keyword, X)[0], rtol=1e-6)
