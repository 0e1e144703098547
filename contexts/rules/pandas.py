"""pandas: its bookkeeping met by code that computes with numpy (pvlib, xarray), and, in reverse mode, a Series or
DataFrame built from differentiated arrays, differentiated through pandas' own Python.

- Bookkeeping (Cython tests of values, the references pandas keeps between arrays sharing memory, index engines
  answering positions, labels, dates and offsets): non-differentiable primitives and constants (reverse mode
  refused them as C functions without rules: `is_list_like` in every pvlib function taking a Series or a float
  alike).
- Containers of arrays: a `Block` (a Python class on libinternals' Cython `Block`) holds its array in a C field,
  `values`; a `BlockManager` its blocks; an indexer (`s.iloc`) its object. Each is made natively, its fields read
  as an object's; its maker's pullback gives each field's cotangent back to the argument that filled it. pandas'
  `cache_readonly` (a Cython descriptor) has its Python getter run as code at every read (`leaves.
  register_getter_descriptor`), `obj[k]` of a Series or DataFrame is pandas' `__getitem__` run as code
  (`register_code_indexed`), and a comparison of one is checked at a tie as an array's (`register_float_holder`).
- Refused, never answered: a write in place into a block's array after the block was made (`s[2] = v`,
  `s.iloc[1] = v`, `where(..., inplace=True)`: the write's cotangent and the field's would not meet), blocks of
  pandas' own arrays (`ExtensionBlock`: nullable floats, strings of numbers), dates made of floats, and every
  Cython kernel without a rule (`roll_max`, `roll_apply`, `rank_1d`, group-bys, `map_infer`): `NoRuleError`
  naming it. The kernels with rules are in `pandas_kernels.py`.

- pandas' Cython bases met on the way are given their Python: `NumpyExtensionArray` (made and remade around its
  `_ndarray` by `_simple_new`, `_from_backing_data`, and the base's copy, reshape, ravel, transpose, `.T`),
  `BlockManager.get_slice` and `Block.slice_block_rows` (`df.iloc[1:]`: natively its gradient was 0, silently,
  until reverse mode learned to look into Cython objects' fields), labels stored through `AxisProperty`.

Forward mode refuses a Series of duals (pandas holds ndarrays, never duals: `sanitize_array`); its entry points
then answer by reverse mode (`derivative`, `jacfwd`, `jvp`: the Jacobian by pullbacks). Loaded when pandas
is first imported (`leaves.DOMAINS`); xarray's domain builds on it. Tests: tests/contexts/test_pandas_reverse.py.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as _pd
from pandas._libs import internals as _pd_internals
from pandas._libs import lib as _pd_lib
from pandas._libs import missing as _pd_missing
from pandas._libs import properties as _pd_properties
from pandas._libs.tslibs import offsets as _pd_offsets
from pandas._libs import tslib as _pd_tslib

from .leaves import (CHANGE_STAMP, register_code_indexed, register_constant, register_float_holder,
                     register_getter_descriptor, register_labels)
from .registry import NoRuleError, registry
from .sparsity_specs import CONCRETE

__all__: list[str] = []


def _string_labels(index) -> bool:
    """An index of pandas' own strings (`StringDtype`, pandas 3's default for text labels)."""
    return isinstance(index.dtype, _pd.StringDtype)


# an index of integers, strings or dates: labels, no derivative (one of floats may hold one)
register_labels(_pd.Index, exact=_string_labels)

registry.nondifferentiable(_pd_internals.BlockValuesRefs.add_index_reference,
                           _pd_internals.BlockValuesRefs.add_reference)
register_constant(_pd_internals.BlockValuesRefs)  # (weak references to the arrays sharing memory)
# (a dtype of pandas' own, its `na_value` a NaN float: no derivative; StringDtype made every string column a value
# that may carry one, and its ExtensionBlock refused)
register_constant(_pd.api.extensions.ExtensionDtype)
# (a date offset, `MonthEnd`, `YearBegin(n)`: a calendar rule of integers, no derivative; `PeriodDtype(freq)` keys a
# dict by it: chainladder's triangles, refused as a differentiated key)
register_constant(_pd.tseries.offsets.BaseOffset)
# (a frame's flags: whether labels may repeat, and a weak reference back to the frame, which made every Series
# a value that may carry a derivative by the depth its test reached going round)
register_constant(_pd.Flags)


class TempSetattr:
    """pandas' `com.temp_setattr(obj, attr, value, condition=True)` (a `@contextmanager`, whose generator runs
    natively around the `with` body: refused on a group-by holding differentiated values) as a class of
    Python, whose `__enter__` and `__exit__` run as code: the attribute set for the body, restored after."""

    def __init__(self, obj, attr, value, condition=True):
        self.obj, self.attr, self.value, self.condition = obj, attr, value, condition

    def __enter__(self):
        if self.condition:
            self.old = getattr(self.obj, self.attr)
            setattr(self.obj, self.attr, self.value)
        return self.obj

    def __exit__(self, *exc):
        if self.condition:
            setattr(self.obj, self.attr, self.old)
        return False


def temp_setattr(obj, attr, value, condition=True):
    return TempSetattr(obj, attr, value, condition)


registry.set(_pd.core.common.temp_setattr, stand_in=temp_setattr)


def _register_date_fields() -> None:
    """pandas' kernels of dates' fields (`dt.year`, `round`, `to_period`): integers of integer nanoseconds and
    a rounding mode, no derivative (a float made a date is refused at its cast: a fine staircase)."""
    from pandas._libs.tslibs import fields

    registry.nondifferentiable(*(fn for name in ("round_nsint64", "get_date_field", "get_start_end_field",
                                                 "get_date_name_field", "get_timedelta_field", "isleapyear_arr",
                                                 "build_field_sarray", "month_position_check")
                                 if (fn := getattr(fields, name, None)) is not None))
    register_constant(fields.RoundTo)


_register_date_fields()


def _register_hashtables() -> None:
    """pandas' hash tables of integers and strings (`unique`, `factorize`, group keys): tables of keys, no
    derivative (chainladder's `df["origin"].unique()` beside a differentiated column was refused); those of
    floats, complex numbers and objects stay values that may carry one."""
    from pandas._libs import hashtable

    for name in dir(hashtable):
        if name.endswith("HashTable") and (name.startswith(("Int", "UInt", "String"))):
            register_constant(getattr(hashtable, name))


_register_hashtables()

# pandas' tests of values (in Cython): booleans, carrying no derivative
registry.nondifferentiable(*(fn for name in (
    "is_list_like", "is_scalar", "is_iterator", "is_integer", "is_float", "is_bool", "is_complex", "is_hashable",
    "is_array", "is_np_dtype", "infer_dtype", "is_bool_list", "is_range_indexer",
    "is_sequence_range", "dtypes_all_equal") if (fn := getattr(_pd_lib, name, None)) is not None))


def item_from_zerodim(val):
    """pandas' `lib.item_from_zerodim` as the Python it is: a 0-d array's item, anything else itself (it was
    registered with the tests of values, as non-differentiable: `s * 2 + s * 3` kept 2 of 5)."""
    if isinstance(val, np.ndarray) and val.ndim == 0:
        return val[()]
    return val


registry.set(_pd_lib.item_from_zerodim, stand_in=item_from_zerodim)


def _register_lookups() -> None:
    """Looking labels up in an index (`.sel`, `.loc`, `reindex`) gives positions: integers, slices and masks,
    piecewise constant in the labels (pandas' index engines, in Cython). Registered with pandas, not only with
    xarray: ppigrf's `g.reindex(g.index.union(date))` of its coefficient table was refused in reverse mode."""
    from pandas._libs import index as engines

    for name in dir(engines):  # (an engine made from an index's labels answers positions: no derivative)
        cls = getattr(engines, name)
        if isinstance(cls, type) and name.endswith("Engine"):
            registry.nondifferentiable(cls)
            register_constant(cls)

    for name in ("IndexEngine", "MaskedIndexEngine", "ExtensionEngine", "BaseMultiIndexCodesEngine"):
        cls = getattr(engines, name, None)
        for method in ("get_loc", "get_indexer", "get_indexer_non_unique", "__contains__"):
            fn = getattr(cls, method, None)
            if fn is not None and not isinstance(fn, type(object.__init__)):
                registry.nondifferentiable(fn)


_register_lookups()


# -- containers of arrays: pandas' Cython objects holding a Series' or DataFrame's values ----------------------

def _remembering(cls, names: tuple, kinds=None, array: str | None = None, fields: dict | None = None,
                 make=None):
    """Register cls's constructor as made natively from its arguments `names` (in order, by position or
    keyword), each kept in the object's field of the same name: the pullback gives each field's cotangent
    back to its argument. `kinds(args, kw)`: refuse what cannot be followed (before the object is made).
    `array`: the field holding an array, whose memory written in place after the object was made (`s[2] = v`,
    `s.iloc[1] = v`, `where(..., inplace=True)`) is refused: the write's cotangent and the field's would not
    meet (a silent wrong number). `fields`: an argument kept in a field of another name (`{"values": "_ndarray"}`).
    `make`: what makes it, where not the class itself (a Cython classmethod's function, taking the class first).
    """
    make = cls if make is None else make
    fields = fields or {}

    def made(*args, **kw):
        if kinds is not None:
            kinds(args, kw)
        y = make(*args, **kw)
        stamp = CHANGE_STAMP[0]
        held = getattr(y, array) if array is not None else None
        t0 = stamp() if stamp is not None and held is not None else None

        def made_back(S, dy, dself):
            if t0 is not None and stamp(held) > t0:
                raise NoRuleError(
                    f"reverse mode does not differentiate a write in place into the array a pandas "
                    f"{cls.__name__} holds (`s[i] = v`, `s.iloc[i] = v`, `inplace=True`): its derivative would be lost",
                    fix="build a new Series or DataFrame instead (`s = s.where(...)`, `s = s.mask(...)`), or write "
                        "into a numpy array before making the Series from it")
            box = S.box(y, dy)
            got = {n: (box.get(fields.get(n, n)) if isinstance(box, dict) else None) for n in names}
            pos = tuple(got[n] for n in names[:len(args)])
            return None, pos, {k: got.get(k) for k in kw}
        return y, made_back

    made.__name__ = made.__qualname__ = f"made_{cls.__name__}"
    registry.set(make, inplace=made)


def _numpy_values(args, kw):
    values = args[0] if args else kw.get("values")
    if not isinstance(values, np.ndarray) or type(values) is not np.ndarray:
        raise NoRuleError(f"reverse mode does not differentiate a pandas block holding a {type(values).__name__} "
                          "(only numpy arrays)", fix="compute on numpy arrays (`s.to_numpy()`) and build the "
                                                     "pandas object from the result")


def _holds_floats(obj) -> bool:
    """A Series or DataFrame holding floats or complex numbers (or objects, which may be numbers)."""
    dtypes = [obj.dtype] if obj.ndim == 1 else list(obj.dtypes)
    return any(getattr(d, "kind", "O") in "fcO" for d in dtypes)


def _register_containers() -> None:
    from pandas.core.generic import NDFrame
    from pandas.core.indexing import _AtIndexer, _iAtIndexer, _iLocIndexer, _LocIndexer
    from pandas.core.arrays.numpy_ import NumpyExtensionArray
    from pandas.core.internals.blocks import NumpyBlock
    from pandas.core.internals.managers import BlockManager

    _remembering(NumpyBlock, ("values", "placement", "ndim", "refs"), _numpy_values, array="values")
    _remembering(BlockManager, ("blocks", "axes", "verify_integrity"))
    # (a block's values seen as pandas' own array: `df.mask(cond, 0)` and `where` wrap each block's so; the
    # Cython base keeps the ndarray in its field `_ndarray`)
    _remembering(NumpyExtensionArray, ("values", "copy"), _numpy_values, array="_ndarray",
                 fields={"values": "_ndarray"})
    _remembering(NumpyExtensionArray, ("cls", "values", "dtype"), lambda args, kw: _numpy_values(args[1:], kw),
                 array="_ndarray", fields={"values": "_ndarray"}, make=NumpyExtensionArray._simple_new.__func__)
    for cls in (_iLocIndexer, _LocIndexer, _AtIndexer, _iAtIndexer):
        _remembering(cls, ("name", "obj"))

    register_code_indexed(NDFrame)  # (`df["a"]`, `s[1:]`: pandas' `__getitem__`, its code)
    register_float_holder(NDFrame, _holds_floats)  # (`s >= 0.3` at a tie: checked as an array's)
    register_constant(_pd_internals.BlockPlacement)
    # (which block and place each column is at: integers)
    registry.nondifferentiable(_pd_internals.BlockManager._rebuild_blknos_and_blklocs)


_register_containers()


# -- pandas' own arrays on an ndarray (NumpyExtensionArray, the dates' arrays): its Cython base's methods, as
# the numpy they run on the array it keeps (`_ndarray`), the result remade around it by `_simple_new` --------

from pandas._libs.arrays import NDArrayBacked as _NDArrayBacked  # noqa: E402

_SIMPLE_NEW = _NDArrayBacked._simple_new.__func__


def from_backing_data(self, values):
    """`NDArrayBacked._from_backing_data`: an array of self's class and dtype around `values`."""
    return _SIMPLE_NEW(type(self), values, self._dtype)


def backed_copy(self, order="C"):
    return from_backing_data(self, self._ndarray.copy(order=order))


def backed_delete(self, loc, axis=0):
    return from_backing_data(self, np.delete(self._ndarray, loc, axis=axis))


def backed_swapaxes(self, axis1, axis2):
    return from_backing_data(self, self._ndarray.swapaxes(axis1, axis2))


def backed_repeat(self, repeats, axis=0):
    return from_backing_data(self, self._ndarray.repeat(repeats, axis=0 if axis is None else axis))


def backed_reshape(self, *args, **kwargs):
    return from_backing_data(self, self._ndarray.reshape(*args, **kwargs))


def backed_ravel(self, order="C"):
    return from_backing_data(self, self._ndarray.ravel(order))


def backed_transpose(self, *axes):
    return from_backing_data(self, self._ndarray.transpose(*axes))


def backed_T(self):
    return from_backing_data(self, self._ndarray.T)


def slice_block_rows(blk, slicer):
    """`Block.slice_block_rows`: the block of blk's rows `slicer` (its array's last axis), the same columns."""
    return type(blk)(blk.values[..., slicer], blk._mgr_locs, ndim=blk.ndim, refs=blk.refs)


def manager_get_slice(mgr, slobj, axis=0, new_index=None):
    """`BlockManager.get_slice` (`df.iloc[1:]`, `df[:3]`): the manager of the blocks sliced along `axis` (0: the
    columns, by pandas' Python `_slice_take_blocks_ax0`; 1: the rows of each block), the axis' labels sliced
    (or `new_index`). Checked against pandas' own on frames of mixed blocks: tests/contexts/test_pandas_frame_arithmetic.py."""
    if axis == 0:
        new_blocks = mgr._slice_take_blocks_ax0(slobj)
    elif axis == 1:
        new_blocks = [slice_block_rows(blk, slobj) for blk in mgr.blocks]
    else:
        raise IndexError("Requested axis not found in manager")
    new_axes = list(mgr.axes)
    new_axes[axis] = new_axes[axis]._getitem_slice(slobj) if new_index is None else new_index
    return type(mgr)(tuple(new_blocks), new_axes, verify_integrity=False)


def _register_backed() -> None:
    from .leaves import register_c_property

    own = vars(_NDArrayBacked)
    for name, stand_in in (("_from_backing_data", from_backing_data), ("copy", backed_copy),
                           ("delete", backed_delete), ("swapaxes", backed_swapaxes), ("repeat", backed_repeat),
                           ("reshape", backed_reshape), ("ravel", backed_ravel), ("transpose", backed_transpose)):
        if name in own:
            registry.set(own[name], stand_in=stand_in)
    if "T" in own:
        register_c_property(own["T"], backed_T)
    for cls, name, stand_in in ((_pd_internals.BlockManager, "get_slice", manager_get_slice),
                                (_pd_internals.Block, "slice_block_rows", slice_block_rows)):
        if name in vars(cls):
            registry.set(vars(cls)[name], stand_in=stand_in)


_register_backed()

# pandas' `cache_readonly`: a Cython descriptor running a Python getter, its value kept in `obj._cache`
register_getter_descriptor(_pd_properties.CachedProperty, lambda d: d.fget, cache_field="_cache")


# -- labels and dates ----------------------------------------------------------------------------------------

def _text_entry(v) -> bool:
    return v is None or isinstance(v, (str, bytes)) or (isinstance(v, float) and v != v)


def _texts_only(arr) -> bool:
    """arr holds no number a derivative could be carried by: strings, None and NaN (an index's labels)."""
    if isinstance(arr, (list, tuple)):  # (a scalar broadcast into a column, `DataFrame({"a": x, "s": "M"})`: ["M"])
        return all(map(_text_entry, arr))
    if not isinstance(arr, np.ndarray):
        return False
    if arr.dtype.kind in "USbiumM":
        return True
    return arr.dtype.kind == "O" and all(map(_text_entry, arr.flat))


@registry.rrule(_pd_lib.ensure_string_array)
def ensure_string_array_rrule(arr, *args, **kw):
    """`lib.ensure_string_array` of labels (strings, None, NaN: an index's, aligning two Series): text of text,
    no derivative. Of numbers, refused: their text would carry none, and a parse of it back would be a constant."""
    if not _texts_only(arr):
        raise NoRuleError("reverse mode does not differentiate pandas' ensure_string_array of numbers (their text "
                          "carries no derivative)", fix="keep the values as numbers")
    y = _pd_lib.ensure_string_array(arr, *args, **kw)
    return y, lambda dy: (None,) * (1 + len(args)) + (({k: None for k in kw},) if kw else ())


registry.sparsity(CONCRETE, _pd_lib.ensure_string_array)  # (text: no dependency)

# dates formatted as text: integers in, strings out (a NaN `na_rep` made the call look differentiable:
# chainladder's triangles, refused)
registry.nondifferentiable(_pd_tslib.format_array_from_datetime)


def _convert_objects(objects, *args, **kwargs):
    """pandas' own conversion, natively: called only for entries that carry no derivative (see below)."""
    return _pd_lib.maybe_convert_objects(objects, *args, **kwargs)


registry.nondifferentiable(_convert_objects)


def _numbers_with_a_float(objects) -> bool:
    """objects (1-d, of dtype object) holds floats, or integers and at least one float: numbers pandas makes a
    float64 array of."""
    seen_float = False
    for v in objects:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (float, int, np.floating, np.integer)):
            return False
        seen_float = seen_float or isinstance(v, (float, np.floating))
    return seen_float


def maybe_convert_objects(objects, *, try_float=False, safe=False, convert_numeric=True, **kwargs):
    """`lib.maybe_convert_objects` (`pd.Series([x0, nan, x2])`, a frame's row of numbers): an object array of
    floats (integers among them) is the float64 array of its entries, built here so the engines follow each;
    anything else is pandas' own, natively (entries of no derivative: strings, dates, integers alone; one that
    may carry a derivative beside them is refused)."""
    if convert_numeric and isinstance(objects, np.ndarray) and objects.ndim == 1 and objects.size and (
            _numbers_with_a_float(objects)) and not (safe and any(
                isinstance(v, (int, np.integer)) for v in objects)):
        out = np.array([v for v in objects], dtype=np.float64)
        if type(out) is not np.ndarray:  # (forward mode's dual: pandas holds no duals; reverse mode may answer)
            raise NoRuleError("forward mode does not differentiate a pandas Series made of perturbed numbers",
                              fix="use reverse mode (gradient, jacobian(..., mode='reverse'))")
        return out
    if isinstance(objects, np.ndarray) and objects.dtype == object and any(
            isinstance(v, (float, complex, np.inexact)) and not isinstance(v, bool) and v == v for v in objects):
        raise NoRuleError("reverse mode does not differentiate pandas' maybe_convert_objects of numbers mixed with "
                          "other objects", fix="build the Series from a float array (`np.array(values, float)`)")
    return _convert_objects(objects, try_float=try_float, safe=safe, convert_numeric=convert_numeric, **kwargs)


registry.set(_pd_lib.maybe_convert_objects, stand_in=maybe_convert_objects)


def _register_text_arrays() -> None:
    """pandas' arrays of strings (`StringArray`, an `NDArrayBacked` of Cython) made from labels: text, no
    derivative; made from numbers, refused (an array of pandas' holding differentiated numbers is not followed)."""
    from pandas._libs.arrays import NDArrayBacked

    @registry.rrule((NDArrayBacked, "__init__"))
    def ndarray_backed_init_rrule(self, values, *args, **kw):
        if not _texts_only(values):
            raise NoRuleError(f"reverse mode does not differentiate a pandas {type(self).__name__} made of "
                              f"{getattr(values, 'dtype', type(values).__name__)} values (only of text)",
                              fix="compute on numpy arrays (`s.to_numpy()`) and build the pandas object from the "
                                  "result")
        NDArrayBacked.__init__(self, values, *args, **kw)
        return None, lambda dy: (None,) * (2 + len(args)) + (({k: None for k in kw},) if kw else ())


_register_text_arrays()


def _can_hold_rrule(dtype, element):
    """pandas' `np_can_hold_element` (Python: `casted == element` tests a cast's exactness, an equality reverse mode
    cannot check at a fill value): a float or an array of floats into floats of at least its size is itself
    (derivative 1); labels and integers carry none; anything else refused."""
    from pandas.core.dtypes.cast import np_can_hold_element as own

    dtype = np.dtype(dtype)
    floats = isinstance(element, (float, np.floating)) and not isinstance(element, np.float16) or (
        type(element) is np.ndarray and element.dtype.kind == "f" and element.dtype.itemsize <= dtype.itemsize)
    if dtype.kind == "f" and floats:
        y = own(dtype, element)  # (raises as pandas does where the value does not fit)
        return y, lambda dy: (None, dy if not isinstance(element, np.ndarray) else np.asarray(dy, element.dtype))
    if isinstance(element, (bool, int, str, np.integer, np.bool_, type(None))) or (
            type(element) is np.ndarray and element.dtype.kind in "biuUSmM"):
        return own(dtype, element), lambda dy: (None, None)
    raise NoRuleError(f"reverse mode does not differentiate pandas' np_can_hold_element of a "
                      f"{type(element).__name__} into {dtype}", fix="keep the values floats")


def _register_can_hold() -> None:
    from pandas.core.dtypes import cast

    registry.set(cast.np_can_hold_element, rrule=_can_hold_rrule)


_register_can_hold()


# a frequency's text made an offset (`pd.date_range(..., freq="D")`): calendar objects, no derivative
registry.nondifferentiable(_pd_offsets.to_offset)


def _dates_of_labels(cls) -> None:
    """`cls(...)` (a Timestamp, a Timedelta) made of text, integers or dates: no derivative; of a float, refused
    (a date made of a differentiated number would carry none, and its number read back would be a constant)."""
    def made(*args, **kw):
        for v in (*args, *kw.values()):
            if isinstance(v, (float, np.floating, complex)) or isinstance(v, np.ndarray) and v.dtype.kind in "fc":
                raise NoRuleError(f"reverse mode does not differentiate a pandas {cls.__name__} made of a float",
                                  fix="keep the number as a number (`pd.to_timedelta` of a constant times it)")
        y = cls(*args, **kw)
        return y, lambda dy: (None,) * len(args) + (({k: None for k in kw},) if kw else ())

    registry.set(cls, rrule=made)
    registry.sparsity(CONCRETE, cls)  # (a date: no dependency)
    register_constant(cls)


_dates_of_labels(_pd.Timestamp)
_dates_of_labels(_pd.Timedelta)

# pandas' test of chained assignment (`sys.getrefcount(self)` before a write in place): a count, no derivative
registry.nondifferentiable(sys.getrefcount)

# tests of values: booleans (missing values, a scalar's kind), no derivative
registry.nondifferentiable(_pd_missing.checknull, _pd_missing.isnaobj)

from . import pandas_kernels as _kernels  # noqa: E402,F401  (the Cython kernels' rules)
