"""Christoph Gohlke's `transformations` (homogeneous transforms, quaternions, Euler angles: kinpy and other
robotics code compute through it), whose C extension replaces its Python functions at import: each C
function is given as the package's own Python one it replaced (`quaternion_matrix` as `quaternion_matrix_py`,
kept by the package beside it), which every engine differentiates as the code it is (`Rule.stand_in`).
Without this a gradient through any of them was refused as a C function.

The pairs were checked to compute the same values (tests/contexts/test_transformations.py). Left to C:
`scale_matrix` (the C function takes its direction as given, the Python one normalises it: another value for
a direction not of unit length), `is_same_transform` (a test: no derivative) and the `random_*` functions,
whose draws are the C extension's own. Loaded when `transformations` is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

import transformations.transformations as _tr

from .registry import registry

__all__: list[str] = []

_SAME = ("arcball_constrain_to_axis", "arcball_map_to_sphere", "clip_matrix", "euler_from_matrix", "euler_matrix",
         "identity_matrix", "inverse_matrix", "orthogonalization_matrix", "projection_matrix",
         "quaternion_about_axis", "quaternion_conjugate", "quaternion_from_euler", "quaternion_from_matrix",
         "quaternion_inverse", "quaternion_matrix", "quaternion_multiply", "quaternion_slerp", "reflection_matrix",
         "rotation_matrix", "shear_matrix", "superimposition_matrix", "translation_matrix", "unit_vector",
         "vector_norm")

for _name in _SAME:
    _c, _py = getattr(_tr, _name, None), getattr(_tr, _name + "_py", None)
    if _c is not None and _py is not None and _c is not _py:  # (without the C extension: the Python ones already)
        registry.set(_c, stand_in=_py)

if getattr(_tr, "is_same_transform_py", None) is not _tr.is_same_transform:
    registry.nondifferentiable(_tr.is_same_transform)
