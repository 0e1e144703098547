"""scipy.spatial.transform's Rotation and RigidTransform, differentiated as the array-API code scipy ships
beside its compiled kernels (`Rule.stand_in`).

Rotation's methods hand numpy arrays to a Cython backend (`_rotation_cy`, `_rigid_transform_cy`); scipy's
other array libraries, and numpy arrays of more than one leading dimension, take `_rotation_xp` and
`_rigid_transform_xp`: the same functions, of the same arguments, written in Python against the array API.
Reached with a differentiated value, a Cython function runs as its Python twin, which every engine follows
(quaternion algebra, `atan2`, `at(x)[i].set(...)`, eigh for the mean): no rule of our own to keep right. A
pair is taken only where its parameters agree by name and position (checked here, for the installed scipy);
a Cython function without a twin is refused by name, as before.
"""

from __future__ import annotations

import inspect

import scipy.spatial.transform._rotation_cy as _rotation_cy
import scipy.spatial.transform._rotation_xp as _rotation_xp

from ..registry import registry

__all__: list[str] = []

# the functions of values (not `random`, `identity`: constants); `apply` names its points differently
_ROTATION = ("from_quat", "from_matrix", "_from_matrix_orthogonal", "from_rotvec", "from_mrp", "from_euler",
             "from_davenport", "as_quat", "as_matrix", "as_rotvec", "as_mrp", "as_euler", "as_davenport", "inv",
             "magnitude", "mean", "reduce", "apply", "align_vectors", "pow", "compose_quat", "setitem")
_RIGID = ("from_matrix", "from_rotation", "from_translation", "from_exp_coords", "from_dual_quat", "from_quat",
          "as_exp_coords", "as_dual_quat", "compose_quat", "compose_transforms", "inv", "apply", "mean", "pow",
          "setitem", "normalize_dual_quaternion")
_RENAMED = {("apply", "vectors"): "points"}


def _agree(name: str, cy, xp) -> bool:
    """cy and xp take the same arguments: the same parameters in the same order, by name (`apply`'s first
    array named apart), the same defaults."""
    try:
        a, b = inspect.signature(cy).parameters, inspect.signature(xp).parameters
    except (TypeError, ValueError):
        return False
    if len(a) != len(b):
        return False
    for (na, pa), (nb, pb) in zip(a.items(), b.items()):
        if _RENAMED.get((name, na), na) != nb:
            return False
        if (pa.default is inspect.Parameter.empty) != (pb.default is inspect.Parameter.empty) or (
                pa.default is not inspect.Parameter.empty and pa.default != pb.default):
            return False
    return True


def _pair(cy_module, xp_module, names) -> list[str]:
    taken = []
    for name in names:
        cy, xp = getattr(cy_module, name, None), getattr(xp_module, name, None)
        if cy is not None and xp is not None and _agree(name, cy, xp):
            registry.set(cy, stand_in=xp)
            taken.append(name)
    return taken


TAKEN = {"rotation": _pair(_rotation_cy, _rotation_xp, _ROTATION)}
try:
    import scipy.spatial.transform._rigid_transform_cy as _rigid_cy
    import scipy.spatial.transform._rigid_transform_xp as _rigid_xp
except ImportError:  # (scipy before RigidTransform)
    pass
else:
    TAKEN["rigid"] = _pair(_rigid_cy, _rigid_xp, _RIGID)
