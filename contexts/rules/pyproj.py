"""pyproj's geodesics (`pyproj.Geod`: `fwd`, `inv`, `line_length`) as Python code: every engine differentiates
geographiclib's Python implementation of the same algorithm in place of PROJ's C.

`Geod.fwd`/`inv` hand their work to Cython methods (`_fwd_point`, `_inv_point`, and `_fwd`, `_inv`,
`_line_length`, which overwrite the buffers they are given) calling PROJ's `geod_direct`/`geod_inverse`: C,
with no derivative. PROJ's geodesic code is Karney's, ported from geographiclib's C; geographiclib's Python
(`geographiclib.geodesic.Geodesic`, for the Geod's own `a` and `f`) computes the same problems by the same
series, to rounding, and is differentiated like any Python. Each stand-in below does what its method does
(the same back-azimuth flip, degrees and radians, the same buffers written), without the C.

The buffers `Geod.fwd`/`inv` make of their arguments (`utils._copytobuffer`) are `array.array`s for lists,
tuples and numbers, which hold no derivative: in their place float64 arrays, turned back into lists, tuples
and floats as pyproj does (`utils._convertback`).

Not covered, so still refused by name: `npts`, `fwd_intermediate`/`inv_intermediate` and the polygon
areas. Without geographiclib installed nothing is registered.
"""

from __future__ import annotations

import numpy as np

from .registry import registry

__all__ = ["fwd_point", "inv_point", "fwd", "inv", "line_length", "copy_to_buffer", "convert_back", "make_geod"]

try:
    from geographiclib.geodesic import Geodesic
    from pyproj import _geod, geod, utils
except ImportError:  # pragma: no cover - registered only where both are installed
    Geodesic = None

_POINT_GIVES_NONE = Geodesic is not None and tuple(
    int(p) for p in __import__("pyproj").__version__.split(".")[:2] if p.isdigit()) >= (3, 8)
_RAD2DG = 180.0 / np.pi  # (pyproj's own constants: `_geod.pyx`)
_DG2RAD = np.pi / 180.0
_SOLVERS: dict = {}  # id(Geod) -> (the Geod, geographiclib's Geodesic of its a and f)


def make_geod(*args, **kwargs):
    """`pyproj.Geod(...)`: the Geod made natively (a Cython class, whose C fields take plain numbers), its
    ellipsoid's `a` and `f` as pyproj's Python computes them from numbers given (`Geod(a=..., b=...)`: pygc's
    `rmajor`, `rminor`) kept beside it, for the geodesics to be differentiated in them too (`_solver`)."""
    g = native_geod(*args, **kwargs)
    if "a" in kwargs and "ellps" not in kwargs and not args:
        a, _, f, _ = geod._params_from_kwargs(kwargs)
        g.__dict__["_od_ellipsoid"] = (a, f)
    return g


def native_geod(*args, **kwargs):
    """pyproj's Geod, made as it is (no derivative: `make_geod` keeps the numbers that may carry one)."""
    return geod.Geod(*args, **kwargs)


def _solver(g):
    """geographiclib's Geodesic of g's ellipsoid: of the numbers `make_geod` kept, made anew each time (they may
    carry a derivative), else of its own a and f, made once per Geod (keyed by identity: they are floats, which a
    key may not be under a derivative)."""
    own = g.__dict__.get("_od_ellipsoid") if hasattr(g, "__dict__") else None
    if own is not None:
        return Geodesic(own[0], own[1])
    entry = _SOLVERS.get(id(g))
    if entry is None or entry[0] is not g:
        if len(_SOLVERS) > 64:
            _SOLVERS.clear()
        entry = _SOLVERS[id(g)] = (g, Geodesic(g.a, g.f))
    return entry[1]


def _flipped(azi):
    """`_geod._reverse_azimuth(azi, 180)`: the back azimuth."""
    return azi - 180.0 if azi > 0 else azi + 180.0


def _scalars(*values) -> bool:
    """`_fwd_point`'s and `_inv_point`'s check: Python numbers only (a 0-d array takes `fwd`'s array path)."""
    return not any(isinstance(v, (np.ndarray, str, bytes)) or np.ndim(v) != 0 for v in values)


def _not_scalars():
    """What `_fwd_point` and `_inv_point` do with other input: pyproj 3.8 returns None (`fwd` then takes its
    array path), earlier versions raise TypeError (which `fwd` catches)."""
    if _POINT_GIVES_NONE:
        return None
    raise TypeError("Scalar input is required for point based functions")


def _direct(g, lon1, lat1, az1, s12, radians, back):
    if radians:
        lon1, lat1, az1 = _RAD2DG * lon1, _RAD2DG * lat1, _RAD2DG * az1
    r = _solver(g).Direct(lat1, lon1, az1, s12, Geodesic.LATITUDE | Geodesic.LONGITUDE | Geodesic.AZIMUTH)
    lon2, lat2, azi2 = r["lon2"], r["lat2"], r["azi2"]
    if back:
        azi2 = _flipped(azi2)
    if radians:
        return _DG2RAD * lon2, _DG2RAD * lat2, _DG2RAD * azi2
    return lon2, lat2, azi2


def _inverse(g, lon1, lat1, lon2, lat2, radians, back):
    if radians:
        lon1, lat1, lon2, lat2 = _RAD2DG * lon1, _RAD2DG * lat1, _RAD2DG * lon2, _RAD2DG * lat2
    r = _solver(g).Inverse(lat1, lon1, lat2, lon2, Geodesic.DISTANCE | Geodesic.AZIMUTH)
    azi1, azi2, s12 = r["azi1"], r["azi2"], r["s12"]
    if back:
        azi2 = _flipped(azi2)
    if radians:
        return _DG2RAD * azi1, _DG2RAD * azi2, s12
    return azi1, azi2, s12


def fwd_point(g, lon1, lat1, az1, s12, radians=False, return_back_azimuth=True):
    """`Geod._fwd_point`: (lon2, lat2, back or forward azimuth at the end)."""
    if not _scalars(lon1, lat1, az1, s12):
        return _not_scalars()
    return _direct(g, lon1, lat1, az1, s12, radians, return_back_azimuth)


def inv_point(g, lon1, lat1, lon2, lat2, radians=False, return_back_azimuth=True):
    """`Geod._inv_point`: (forward azimuth, back or forward azimuth at the end, distance)."""
    if not _scalars(lon1, lat1, lon2, lat2):
        return _not_scalars()
    return _inverse(g, lon1, lat1, lon2, lat2, radians, return_back_azimuth)


def _flat(*buffers):
    """The buffers as PROJ reads them, flat (an ndarray's C-ordered view; `array.array` is flat already), of
    one length."""
    flat = [b.reshape(-1) if isinstance(b, np.ndarray) else b for b in buffers]
    if len({len(b) for b in flat}) != 1:
        raise geod.GeodError("Array lengths are not the same.")
    return flat


def fwd(g, lons, lats, az, dist, radians=False, return_back_azimuth=True):
    """`Geod._fwd`: lons, lats and az overwritten with each direct problem's end point and azimuth."""
    lons_, lats_, az_, dist_ = _flat(lons, lats, az, dist)
    for i in range(len(lons_)):
        lons_[i], lats_[i], az_[i] = _direct(g, lons_[i], lats_[i], az_[i], dist_[i], radians, return_back_azimuth)


def inv(g, lons1, lats1, lons2, lats2, radians=False, return_back_azimuth=True):
    """`Geod._inv`: lons1, lats1 and lons2 overwritten with each inverse problem's azimuths and distance."""
    lons1_, lats1_, lons2_, lats2_ = _flat(lons1, lats1, lons2, lats2)
    for i in range(len(lons1_)):
        lons1_[i], lats1_[i], lons2_[i] = _inverse(g, lons1_[i], lats1_[i], lons2_[i], lats2_[i], radians,
                                                   return_back_azimuth)


def line_length(g, lons, lats, radians=False):
    """`Geod._line_length`: the total of the segments' lengths, each written into lons in its first point's
    place."""
    lons_, lats_ = _flat(lons, lats)
    if len(lons_) == 1:
        lons_[0] = 0
        return 0.0
    total = 0.0
    for i in range(len(lons_) - 1):
        s12 = _inverse(g, lons_[i], lats_[i], lons_[i + 1], lats_[i + 1], radians, False)[2]
        lons_[i] = s12
        total += s12
    return total


def copy_to_buffer(xxx, inplace=False):
    """`pyproj.utils._copytobuffer`: (a float64 buffer of xxx's values, the kind to give back), a float64
    array where pyproj makes an `array.array` (of a list, tuple or number)."""
    DataType = utils.DataType
    if not hasattr(xxx, "hardmask") and hasattr(xxx, "__array__") and callable(xxx.__array__):
        xxx = np.asarray(xxx)  # (pyproj's `xxx.__array__()`: a Series', a DataArray's values)
    if hasattr(xxx, "shape"):
        if xxx.shape == ():
            return _fresh_copy([xxx]), DataType.FLOAT
        if inplace:
            return xxx.astype("d", order="C", copy=False), DataType.ARRAY
        return _fresh_copy(xxx), DataType.ARRAY
    if isinstance(xxx, list):
        return _fresh_copy(xxx), DataType.LIST
    if isinstance(xxx, tuple):
        return _fresh_copy(xxx), DataType.TUPLE
    if isinstance(xxx, utils.array):
        return _fresh_copy(xxx), DataType.ARRAY
    try:
        return _fresh_copy([xxx]), DataType.FLOAT
    except (TypeError, ValueError):
        raise TypeError("input must be a scalar") from None


def _fresh_copy(values):
    """A new C-ordered float64 array of values, made by `np.empty` here (a fresh array: forward mode's duals are
    written into it, `registry.code_files`)."""
    out = np.empty(np.shape(values), dtype="d")
    out[...] = values
    return out


def convert_back(data_type, inx):
    """`pyproj.utils._convertback` of `copy_to_buffer`'s arrays: lists, tuples and numbers of Python floats."""
    DataType = utils.DataType
    if data_type == DataType.FLOAT:
        return inx.tolist()[0]
    if data_type == DataType.LIST:
        return inx.tolist()
    if data_type == DataType.TUPLE:
        return tuple(inx.tolist())
    return inx


if Geodesic is not None:  # (Cython functions, bound as methods of the Geod: each takes the Geod first)
    _own = vars(_geod.Geod)
    for _name, _stand_in in (("_fwd_point", fwd_point), ("_inv_point", inv_point), ("_fwd", fwd), ("_inv", inv),
                             ("_line_length", line_length)):
        if _name in _own:
            registry.set(_own[_name], stand_in=_stand_in)
    registry.set(geod.Geod, stand_in=make_geod)
    registry.nondifferentiable(native_geod)
    registry.set(utils._copytobuffer, stand_in=copy_to_buffer)
    registry.code_files.add(__file__)  # (the buffers made here are fresh arrays, as in the user's code: forward
    # mode's duals are written into them)
    registry.set(utils._convertback, stand_in=convert_back)
