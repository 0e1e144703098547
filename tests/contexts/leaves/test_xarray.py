"""xarray's DataArrays and Datasets: differentiated through xarray's own Python code on numpy arrays, in
both modes, against central differences; the gradient with respect to a DataArray is a DataArray of its
dims, coords, name and attributes (a Dataset's a Dataset). What is not handled is refused clearly (an
OverdubError naming the user's line), never a crash of the engine nor a wrong number."""

import warnings

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

from contexts import NonScalarError, derivative, gradient, hessian, hvp, jacfwd, jacobian, jvp, pullback  # noqa: E402
from overdub.errors import OverdubError  # noqa: E402
from tests import fd  # noqa: E402

X = np.array([0.7, 1.2, -0.4, 2.0])
X6 = np.array([0.7, 1.2, -0.4, 2.0, 0.3, -1.1])


def grid(x):
    """x as a 2 x 3 DataArray with string labels on `i` and float labels on `j`."""
    return xr.DataArray(x.reshape(2, 3), dims=("i", "j"), coords={"i": ["a", "b"], "j": [0.5, 1.0, 2.0]})


def summed(x):
    da = xr.DataArray(x, dims=("i",))
    return (da * da).sum().item()


def broadcast_mean(x):
    da = xr.DataArray(x.reshape(2, 2), dims=("i", "j"))
    w = xr.DataArray(np.array([1.0, 2.0]), dims=("j",))
    return float((np.sin(da) * w).mean(dim="i").sum().values)


def integer_coords(x):
    da = xr.DataArray(x, dims=("t",), coords={"t": [0, 1, 2, 3]})
    return float((da ** 2).sum())


def float_coords(x):
    da = xr.DataArray(x, dims=("t",), coords={"t": np.linspace(0.0, 1.5, 4)})
    return float((da * da.t).sum() + da.sel(t=0.5) ** 2)


def ufuncs(x):
    da = xr.DataArray(x, dims=("i",))
    return float(np.exp(np.sin(da)).sum())


def sum_over_dim(x):
    da = xr.DataArray(x.reshape(2, 2), dims=("i", "j"))
    s = (da ** 2).sum(dim="i")
    return float((s * s).sum())


def mean_over_dim(x):
    da = xr.DataArray(x.reshape(2, 2), dims=("i", "j"))
    return float((da.mean(dim="j") ** 3).sum())


def sel_isel(x):
    da = xr.DataArray(x, dims=("t",), coords={"t": [10, 20, 30, 40]})
    return float(da.sel(t=20) * da.sel(t=40) + da.isel(t=0))


def slices(x):
    da = xr.DataArray(x, dims=("i",))
    return float((da[1:] * da[:-1]).sum() + da[0] ** 2)


def values(x):
    da = xr.DataArray(x, dims=("i",))
    return float(np.sum(da.values ** 2))


def reflected(x):
    """A number or an array on the left of a DataArray: its reflected operators (`__radd__`, ...); before,
    reverse mode gave zero silently, the re-run `__radd__` losing the cotangent of the object it made."""
    da = xr.DataArray(x, dims=("i",))
    return float(np.sum(da.values ** 2) + da.sum() + (x * da).sum() + (2.0 - da).prod())


def dot(x):
    a = xr.DataArray(x.reshape(2, 2), dims=("i", "j"))
    b = xr.DataArray(np.array([1.0, -2.0]), dims=("j",))
    return float((xr.dot(a, b, dim="j") ** 2).sum())


def where(x):
    da = xr.DataArray(x, dims=("i",))
    return float(xr.where(da > 0, da ** 2, -da).sum())


def where_method(x):
    da = xr.DataArray(x, dims=("i",))
    return float(da.where(da > 0, 0.0).sum())


def dataset(x):
    ds = xr.Dataset({"a": ("i", x), "b": ("i", x ** 2)})
    return float((ds["a"] * ds["b"]).sum() + ds.sum()["b"])


def dataset_arithmetic(x):
    ds = xr.Dataset({"a": grid(x), "b": grid(x) * 3})
    return float(((ds * 2 + 1)["a"] ** 2).sum() + ds.map(np.sin).to_dataarray().sum())


def labelled(x):
    da = grid(x)
    return float(da.loc["a", 0.5:1.0].sum() * da.loc["b", 2.0] + da.sel(i="a").std())


def along_coords(x):
    da = grid(x)
    return float(da.integrate("j").sum() + (da.differentiate("j") ** 2).sum() + da.cumsum("j").max())


def weighted(x):
    w = xr.DataArray([1.0, 2.0, 3.0], dims="j")
    return float(grid(x).weighted(w).mean("j").sum() + (grid(x).T * np.arange(6.0).reshape(3, 2)).sum())


def as_array(x):
    da = grid(x)
    return float((np.asarray(da) ** 2).sum() + xr.apply_ufunc(np.tanh, da).sum())


def polyfit(x):
    return float(grid(x).polyfit("j", 1).polyfit_coefficients.sum())


BOTH = [summed, broadcast_mean, integer_coords, float_coords, ufuncs, sum_over_dim, mean_over_dim, sel_isel,
        slices, values, reflected, dot, where, where_method, dataset]
ON_GRID = [dataset_arithmetic, labelled, along_coords, weighted, polyfit]


def _check(f, x, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = mode(f, x)
        g = g[0] if type(g) is tuple else g
        expected = fd.gradient(f, x)[0]
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("mode", [gradient, jacfwd], ids=["reverse", "forward"])
@pytest.mark.parametrize("f", BOTH, ids=lambda f: f.__name__)
def test_right(f, mode):
    _check(f, X, mode)


@pytest.mark.parametrize("mode", [gradient, jacfwd], ids=["reverse", "forward"])
@pytest.mark.parametrize("f", ON_GRID, ids=lambda f: f.__name__)
def test_right_on_labelled_grid(f, mode):
    _check(f, X6, mode)


def test_reverse_through_numpy_conversion():
    """`np.asarray(da)`: numpy converts a DataArray by its `__array__` (it has no `__array_function__`):
    before, the engine handed the call back to numpy's dispatch endlessly (RecursionError)."""
    _check(as_array, X6, gradient)


def coords_from_x(x):
    da = xr.DataArray(np.sin(x), dims=("t",), coords={"t": np.cumsum(x ** 2)})
    return float(da.integrate("t") + (da * da.t).sum())


def test_reverse_through_coordinates_computed_from_x():
    """Float labels computed from x: the derivative flows through pandas' index (traced as code), and
    through xarray's integration along them."""
    _check(coords_from_x, X, gradient)


DA = xr.DataArray(np.array([[0.7, 1.2], [-0.4, 2.0]]), dims=("i", "j"), coords={"j": [1.5, 2.5]}, name="v",
                  attrs={"units": "m"})


def loss(da):
    w = xr.DataArray(np.array([1.0, -2.0]), dims=("j",))
    return float((np.sin(da) * w).sum() + (da ** 2).mean(dim="i").sum() + da[0, 1] * da.sel(j=2.5)[1])


def _loss_of_values(a):
    return loss(DA.copy(data=a))


@pytest.mark.parametrize("mode", [gradient, jacfwd, jacobian], ids=["reverse", "forward", "jacobian"])
def test_gradient_of_a_dataarray_is_a_dataarray(mode):
    g = mode(loss, DA)
    g = g[0] if type(g) is tuple else g
    assert isinstance(g, xr.DataArray)
    assert g.dims == DA.dims and g.name == "v" and g.attrs == {"units": "m"}
    np.testing.assert_array_equal(g.coords["j"].values, [1.5, 2.5])
    np.testing.assert_allclose(g.values, fd.gradient(_loss_of_values, DA.values)[0], rtol=1e-6, atol=1e-8)
    assert DA.values[0, 0] == 0.7  # the input is left as it was


DS = xr.Dataset({"a": DA, "b": DA * 2})


def dataset_loss(ds):
    return float((ds["a"] * ds["b"] ** 2).sum() + np.cos(ds.a).sum())


def test_gradient_of_a_dataset_is_a_dataset():
    """Each data variable's gradient, in a Dataset of the input's coordinates (before: `ds['a']` gave
    zero silently, the re-run of `__getitem__` in the adjoint losing the cotangent of the new object)."""
    (g,) = gradient(dataset_loss, DS)
    assert isinstance(g, xr.Dataset) and set(g.data_vars) == {"a", "b"}
    a, b = DS["a"].values, DS["b"].values
    np.testing.assert_allclose(g["a"].values, b ** 2 - np.sin(a), rtol=1e-12)
    np.testing.assert_allclose(g["b"].values, 2 * a * b, rtol=1e-12)
    np.testing.assert_array_equal(g["j"].values, [1.5, 2.5])


def test_jacfwd_of_a_dataset_refused():
    with pytest.raises(OverdubError, match="Dataset"):
        jacfwd(dataset_loss, DS)


def _iadd(x):
    da = grid(x) * 1.0
    da += da ** 2
    return float(da.sum())


def _setitem(x):
    da = grid(x).copy()
    da[0, 1] = da[1, 2] ** 2
    return float((da * 2).sum())


REST = {
    "rolling": lambda x: float(grid(x).rolling(j=2).mean().sum(skipna=True)),
    "shift": lambda x: float(grid(x).shift(j=1).fillna(0.0).sum() * 2 + (grid(x) ** 2).sum()),
    "concat": lambda x: float((xr.concat([grid(x), grid(x) ** 2], dim="k") ** 2).sum()),
    "assign_coords": lambda x: float((grid(x).assign_coords(k=("j", [1.0, 2.0, 3.0])) * 3).sum()),
    "groupby": lambda x: float((grid(x).groupby("i").mean() ** 2).sum()),
    "stack": lambda x: float((grid(x).stack(z=("i", "j")) * np.arange(6.0)).sum()),
    "interp": lambda x: float(grid(x).interp(j=[0.75, 1.5]).sum()),
    "to_pandas": lambda x: float(grid(x).to_pandas().values.sum()),
    "coords_from_x": coords_from_x,
    "iadd": _iadd,
    "setitem": _setitem,
}


@pytest.mark.parametrize("mode", [gradient, jacfwd], ids=["reverse", "forward"])
@pytest.mark.parametrize("name", sorted(REST))
def test_right_or_refused(name, mode):
    f = REST[name]
    x = X if name == "coords_from_x" else X6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            g = mode(f, x)
        except OverdubError as e:
            assert "test_xarray.py" in str(e)  # names the user's line
            return
    g = g[0] if type(g) is tuple else g
    np.testing.assert_allclose(g, fd.gradient(f, x)[0], rtol=1e-6, atol=1e-8)


# -- DataArrays returned: before, `gradient` seeded the returned DataArray with the number 1, which its
# fields' cotangent dropped: the gradient was silently zero (`(np.sin(da) * da).sum()` without `float`)

def returns_dataarray(x):
    da = grid(x)
    return (np.sin(da) * da).sum() + (da ** 2).mean(dim="i").sum()


def returns_dataarray_of_a_dataarray(da):
    return (np.sin(da) * da).sum()


@pytest.mark.parametrize("mode", [gradient, jacfwd], ids=["reverse", "forward"])
def test_returned_dataarray_is_its_number(mode):
    _check(returns_dataarray, X6, mode)


@pytest.mark.parametrize("mode", [gradient, jacfwd], ids=["reverse", "forward"])
def test_returned_dataarray_with_respect_to_a_dataarray(mode):
    g = mode(returns_dataarray_of_a_dataarray, DA)
    g = g[0] if type(g) is tuple else g
    assert isinstance(g, xr.DataArray) and g.dims == DA.dims
    a = DA.values
    np.testing.assert_allclose(g.values, np.sin(a) + a * np.cos(a), rtol=1e-12)


def test_derivative_of_a_returned_dataarray_is_a_dataarray():
    def f(t):
        return xr.DataArray(np.array([1.0, 2.0, 3.0]), dims=("k",), coords={"k": [5, 6, 7]}) * np.sin(t)

    d = derivative(f, 0.4)
    assert isinstance(d, xr.DataArray) and d.dims == ("k",)
    np.testing.assert_array_equal(d.coords["k"].values, [5, 6, 7])
    np.testing.assert_allclose(d.values, np.array([1.0, 2.0, 3.0]) * np.cos(0.4), rtol=1e-12)
    _, dy = jvp(f, (0.4,), (2.0,))
    np.testing.assert_allclose(dy.values, 2 * np.array([1.0, 2.0, 3.0]) * np.cos(0.4), rtol=1e-12)


@pytest.mark.parametrize("cotangent", ["array", "dataarray", "transposed", "number"])
def test_pullback_of_a_dataarray_output(cotangent):
    """The cotangent handed to `back` is its values': an array, a DataArray (in any order of its dims),
    or a number (broadcast)."""
    def f(x):
        return np.exp(grid(x)) * 2.0

    y, back = pullback(f, X6)
    w = np.arange(6.0).reshape(2, 3) if cotangent != "number" else np.full((2, 3), 1.5)
    dy = {"array": w, "dataarray": y.copy(data=w), "transposed": y.copy(data=w).transpose("j", "i"),
          "number": 1.5}[cotangent]
    (g,) = back(dy)
    np.testing.assert_allclose(g, 2.0 * np.exp(X6) * w.ravel(), rtol=1e-12)


def test_jacobian_of_a_dataarray_output():
    def f(x):
        return np.sin(grid(x)).sum(dim="i")

    expected = fd.jacobian(lambda x: f(x).values, X6, matrix=True)
    np.testing.assert_allclose(jacobian(f, X6), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacobian(f, X6, mode="forward"), expected, rtol=1e-6, atol=1e-8)


def test_gradient_of_a_dataarray_of_many_values_refused():
    with pytest.raises(NonScalarError, match="DataArray"):
        gradient(lambda x: grid(x) * 2.0, X6)


def _sum_and_prod(a):
    return np.sum(a / (a * a + 1)) + np.prod(a)


def test_forward_modes_and_hessian_of_a_dataarray_with_numpys_reductions():
    # (np.prod(da) in forward mode took the DataArray apart as a Python iterable: refused; jvp handed the
    # DataArray to prod's rule: ValueError; hessian refused the DataArray of duals)
    x = xr.DataArray(np.array([1.37, 0.6, 2.1]), dims=("a",), coords={"a": [10, 20, 30]})
    t = np.array([1.0, 2.0, -1.0])
    expected = fd.gradient(lambda v: float(_sum_and_prod(v)), x.values)[0]
    j = jacfwd(_sum_and_prod, x)
    assert isinstance(j, xr.DataArray) and j.dims == ("a",)
    np.testing.assert_allclose(j.values, expected, rtol=1e-6)
    y, dy = jvp(_sum_and_prod, (x,), (x.copy(data=t),))
    assert float(dy) == pytest.approx(expected @ t, rel=1e-6)
    h = hessian(_sum_and_prod, x)
    np.testing.assert_allclose(h, fd.hessian(lambda v: float(_sum_and_prod(v)), x.values, matrix=True),
                               rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(hvp(_sum_and_prod, x, x.copy(data=t)), h @ t, rtol=1e-10)


def test_sparsity_of_a_function_of_a_dataarray():
    """The tracer in the DataArray's values (handed a tracer in its place, xarray's methods were missing)."""
    from contexts import jacobian_sparsity

    da = xr.DataArray(np.arange(1.0, 5.0), dims=("t",))
    lower = np.tril(np.ones((4, 4), bool))
    np.testing.assert_array_equal(
        jacobian_sparsity(lambda d: (d.shift(t=1) * d).fillna(0.0) + d.cumsum("t"), da).toarray(), lower)
    np.testing.assert_array_equal(jacobian_sparsity(lambda d: d.diff("t") * 2.0, da).toarray(),
                                  np.eye(3, 4, dtype=bool) | np.eye(3, 4, k=1, dtype=bool))
