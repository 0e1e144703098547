"""numpy.ma's masked arrays made of differentiated values, differentiated as numpy.ma's own Python code
(`contexts.rules.numpy.masked`): construction, operators (re-run as code in the reverse pass), methods,
numpy's functions handing a masked array to its method (`np.sum(a)` is `a.sum()`), ufuncs on the data
(`np.log(a)`'s fill outside the domain a constant), `var`/`std` without numpy.ma's in-place square. Each case
against central differences, in both modes (forward mode's duals hold no mask: `jacfwd` answers by reverse
mode where forward mode refused). Every case was refused before (`UnsupportedCase` at the constructor or the
view). What is still refused: a C function of numpy given a masked array with masked entries (np.sort's
`take_along_axis`), in-place operators, and an operator whose operand's mask changed after it (its re-run
would mask anew: 1 for 2.02 when it was not checked)."""

import warnings

import numpy as np
import pytest

from contexts import gradient, jacfwd
from overdub.errors import OverdubError
from tests.fd import gradient as fd_gradient

X = np.array([1.6, 0.7, 2.1, 1.3, 0.55, 0.9])
MASK = np.array([0, 1, 0, 0, 1, 0], bool)


def M(x):
    return np.ma.array(x * 1.0, mask=MASK.copy())


def M2(x):
    return np.ma.array(x.reshape(2, 3) * 1.0, mask=MASK.reshape(2, 3).copy())


def _set_fill(x):
    a = M(x)
    a.fill_value = x[2]
    return a.filled().sum()


def _index_by_mask(x):
    a = M(x)
    return a[a > 1.0].sum()


def _argmax_take(x):
    a = M(x)
    return a[a.argmax()]


RIGHT = {
    "sum": lambda x: M(x).sum(),
    "operators": lambda x: (M(x) * 2.0 + 1.0).sum() + (1.0 / M(x)).sum() + ((M(x) - 0.5) ** 2).sum(),
    "masked_where_mean": lambda x: np.ma.masked_where(x > 1.0, x).mean(),
    "np_ma_exp": lambda x: np.ma.exp(M(x)).sum(),
    "np_exp": lambda x: np.exp(M(x)).sum(),
    "filled": lambda x: M(x ** 2).filled(0.0).sum(),
    "data_every_entry": lambda x: M(x ** 2).data.sum(),
    "ma_dot": lambda x: np.ma.dot(M(x), x),
    "var": lambda x: M(x).var(),
    "std_axis": lambda x: M2(x).std(axis=1).sum(),
    "np_var_ddof": lambda x: np.var(M(x), ddof=1),
    "var_complex": lambda x: (M(x) * (1 + 1j)).var(),
    "constant_masked_minus": lambda x: np.sum((x - np.ma.array(X[::-1], mask=MASK)) ** 2),
    "ma_log_outside_domain": lambda x: np.ma.log(M(x) - 1.0).sum(),
    "np_log_outside_domain_data": lambda x: np.log(M(x) - 1.0).data.sum(),
    "np_sqrt_outside_domain": lambda x: np.sqrt(M(x) - 1.0).sum(),
    "np_arcsin_filled": lambda x: np.arcsin(M(x) - 1.0).filled(7.0).sum(),
    "divide_by_zero_data": lambda x: np.asarray(M(x) / (x - x[0])).sum(),
    "masked_product_data": lambda x: np.asarray(M(x) * x).sum(),
    "compressed": lambda x: (M(x).compressed() ** 2).sum(),
    "mean_axis": lambda x: M2(x).mean(axis=0).sum(),
    "fix_invalid": lambda x: np.ma.fix_invalid(np.log(x - 1.0)).sum(),
    "max": lambda x: M(x).max(),
    "cumsum_cumprod": lambda x: M(x).cumsum().sum() + M(x).cumprod().sum(),
    "average_weights": lambda x: np.ma.average(M(x), weights=x),
    "average_axis": lambda x: np.ma.average(M2(x), axis=0, weights=[1.0, 2.0]).sum(),
    "ma_where": lambda x: np.ma.where(MASK, x, 2 * x).sum() + np.ma.where(M(x) > 1.0, M(x), 0.0).sum(),
    "fill_value": lambda x: np.ma.array(x * 1.0, mask=MASK, fill_value=x[0]).filled().sum(),
    "set_fill": _set_fill,
    "masked_invalid": lambda x: np.ma.masked_invalid(np.log(x - 1.0)).sum(),
    "masked_less_prod": lambda x: np.ma.masked_less(x, 1.0).prod(),
    "transpose_reshape": lambda x: (M(x).reshape(2, 3).T * np.arange(6.0).reshape(3, 2)).sum(),
    "slice": lambda x: (M(x)[1:5] ** 3).sum(),
    "index_by_mask": _index_by_mask,
    "argmax_take": _argmax_take,
    "concatenate_stack": lambda x: np.ma.concatenate([M(x), M(x) * 2]).mean() + np.ma.stack([M(x), M(x) ** 2]).sum(),
    "anom": lambda x: (M(x).anom() ** 2).sum(),
    "maximum": lambda x: np.ma.maximum(M(x), 1.0).sum(),
    "harden_mask": lambda x: M(x).harden_mask().sum(),
    "np_mean": lambda x: np.mean(M(x) ** 2),
    "hypot": lambda x: np.hypot(M(x), x[::-1]).sum(),
    "outer": lambda x: np.ma.outer(M(x), x).sum(),
    "compress_rows": lambda x: np.ma.compress_rows(np.ma.array(x.reshape(3, 2) * 1.0, mask=MASK.reshape(3, 2))).sum(),
    "filled_nan_nansum": lambda x: np.nansum(M(x).filled(np.nan) ** 2),
    "iterate": lambda x: sum(float(v) for v in M(x) if v is not np.ma.masked),
    "item_times_mean": lambda x: M(x)[2] * 3.0 + M(x).mean() * x[1],
    "polyfit": lambda x: np.ma.polyfit(np.arange(6.0), M(x), 1).sum(),
    "shape_read": lambda x: M(x).sum() * M(x).shape[0] + M2(x).ndim,  # (numpy.ma's `shape` is `super().shape`)
    "astype_copy": lambda x: M(x).astype(np.float64).copy().sum(),
    "layout": lambda x: (np.atleast_2d(M(x)) ** 2).sum() + np.expand_dims(M(x), 0).sum()
    + (np.moveaxis(M2(x), 0, 1) * np.arange(6.0).reshape(3, 2)).sum(),
}

mstats = pytest.importorskip("scipy.stats.mstats")
RIGHT.update({
    "mstats_gmean": lambda x: mstats.gmean(M(x)),
    "mstats_hmean": lambda x: mstats.hmean(M(x)),
    "mstats_mquantiles": lambda x: mstats.mquantiles(M(x), [0.5]).sum(),
    "mstats_trimmed_mean": lambda x: mstats.trimmed_mean(M(x), limits=(0.1, 0.1)),
    "mstats_linregress": lambda x: float(mstats.linregress(np.arange(6.0), M(x))[0]),
})


def _mask_set_after(x):
    a = M(x)
    b = a * x
    a.mask = [1, 0, 0, 0, 0, 0]
    return b.sum() + a.sum()


def _in_place(x):
    a = M(x * 3.0)
    a += x
    return a.sum()


REFUSED = {
    "mask_set_after_an_operator": _mask_set_after,
    "in_place_operator": _in_place,
    "sort": lambda x: (np.ma.sort(M(x)) * np.arange(6.0)).sum(),
    "median": lambda x: np.ma.median(M(x)),
}


def _run(mode, f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if mode == "reverse":
            return np.asarray(gradient(f, X)[0], float)
        return np.asarray(jacfwd(f, X), float).ravel()


def _fd(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(fd_gradient(f, X), float).ravel()


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("name", sorted(RIGHT))
def test_masked_code_matches_finite_differences(name, mode):
    f = RIGHT[name]
    np.testing.assert_allclose(_run(mode, f), _fd(f), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_masked_code_cannot_follow_is_refused_naming_the_mask(name, mode):
    with pytest.raises(OverdubError) as e:
        _run(mode, REFUSED[name])
    if name == "in_place_operator" and mode == "reverse":  # (numpy.ma's in-place change of its data's view)
        assert "MaskedArray.__iadd__" in str(e.value) and "test_masked_code.py" in str(e.value)
        return
    assert "mask" in str(e.value)
    assert "filled" in str(e.value) or "np.where" in str(e.value) or "compressed" in str(e.value)


def test_a_ufunc_fill_outside_its_domain_has_no_derivative():
    """np.log of a masked array puts a constant where the data is outside the domain (and masks it): its
    `.data` there moves with nothing, while the entries inside the domain are log's (1/(x-1))."""
    g = _run("reverse", lambda x: np.log(M(x) - 1.0).data.sum())
    want = np.where((X > 1.0) & ~MASK, 1.0 / (X - 1.0), 0.0)
    np.testing.assert_allclose(g, want, rtol=1e-12)


def test_a_masked_product_keeps_the_first_operands_data_at_masked_entries():
    """numpy.ma's `a * x` keeps a's data where a is masked: the derivative of the data there is 1, not x."""
    g = _run("reverse", lambda x: np.asarray(M(x) * x).sum())
    np.testing.assert_allclose(g, np.where(MASK, 1.0, 2 * X), rtol=1e-12)
