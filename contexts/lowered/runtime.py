"""What code built from the lowered form calls at run time, the same in every mode.

The lowering emits calls of `__od_unpack__`, `__od_iter__`, `__od_tuple__` and `__od_int_arg__` (bound by
`HELPERS`, with `__od_locals__`, the builtin `locals` under a name no parameter shadows) and of
`__od_primal__` (bound by each mode to the primal of its own values). `addresses` is the memory fact the
modes share: which elements of two arrays are one element seen through two views.
"""

from __future__ import annotations

import numpy as np

__all__ = ["HELPERS", "unpack", "addresses"]


def unpack(v, n, star):
    """`a, *b, c = v` as a tuple of n items (the starred one a list)."""
    items = tuple([*v])  # always a new object: `tuple(t)` would be t itself, and boxes go by identity
    if star < 0:
        if len(items) != n:
            raise ValueError(f"expected {n} values to unpack, got {len(items)}")
        return items
    after = n - star - 1
    if len(items) < n - 1:
        raise ValueError(f"not enough values to unpack (expected at least {n - 1}, got {len(items)})")
    return items[:star] + (list(items[star:len(items) - after]),) + items[len(items) - after:]


def addresses(a):
    """The byte address of each element of the array a (views of one buffer share addresses)."""
    addr = np.asarray(a.__array_interface__["data"][0], dtype=np.intp)
    for k, (n, stride) in enumerate(zip(a.shape, a.strides)):
        shape = [1] * a.ndim
        shape[k] = n
        addr = addr + (np.arange(n, dtype=np.intp) * stride).reshape(shape)
    return np.broadcast_to(addr, a.shape)


def int_arg(x):
    """The argument of `int(a)` for an active `a` (its primal): refused where int() jumps (a float that is
    a nonzero integer), where the integer would carry the value and drop its derivative."""
    from ..rules.builtins import _check_int
    _check_int(x)
    return x


HELPERS = {"__od_unpack__": unpack, "__od_iter__": iter, "__od_tuple__": tuple, "__od_int_arg__": int_arg,
           "__od_locals__": locals}  # (locals() by a name of its own: a parameter may be called `locals`)
