"""Introspection: questions about a callable's parameters, which carry no derivative.

`inspect.signature(fn)` runs as a primitive on the callable itself (never on a twin): reverse mode does not
recurse into `inspect`'s code, whose C containers (`mappingproxy`) would be refused when the callable is a
bound method of an object holding differentiated values. The one number a Signature can hold is a
parameter's default value (`lambda t, s=x: ...`): a cotangent that reaches the Signature back (code that
computes with `sig.parameters["s"].default`) has no route to fn's `__defaults__`, so the callable's cotangent
is then `Refused` — dropped where fn's defaults are constants, an error where they are differentiated.
Forward mode and sparsity run inspect's code as before (no forward rule).

>>> import inspect
>>> from contexts.rules import registry
>>> registry.get(inspect.signature).adjoint(None, None, len)
(None,)
"""

from __future__ import annotations

import inspect
import tokenize

import numpy as np

from .cotangents import Tangent
from .registry import NoClosedForm, registry

__all__ = ["signature_adjoint"]

_DEFAULTS = NoClosedForm("inspect.signature", "fn (the default values of its parameters)",
                         fix="pass the value as an argument rather than reading it from the signature's "
                             "`Parameter.default`")


def _carries(d, depth: int = 0) -> bool:
    """Whether a cotangent holds anything but zeros (None, 0, boxes of them)."""
    if d is None or depth > 12:
        return d is not None
    if isinstance(d, (dict, Tangent)):
        return any(_carries(v, depth + 1) for v in d.values())
    if isinstance(d, (list, tuple)):
        return any(_carries(v, depth + 1) for v in d)
    try:
        return bool(np.any(d != 0))
    except Exception:  # noqa: BLE001 - a cotangent that cannot be compared with 0 is something
        return True


def signature_adjoint(dy, y, fn, *args, **kwargs):
    """No derivative flows through a Signature; one that reached it back (through a parameter's default)
    is refused for the callable, never dropped for a differentiated default."""
    return (_DEFAULTS.cotangent() if _carries(dy) else None,) + (None,) * len(args)


registry.adjoint(inspect.signature)(signature_adjoint)


# Source text read as tokens (asteval's `valid_symbol_name`, met by lmfit's Parameters for every name): text
# in, text and positions out, no derivative. Run natively: reverse mode would run its generators eagerly,
# refused where they keep state between tokens. (A number's text made of a differentiated value is
# remembered where it is made; a parse of it back is refused there.)
registry.nondifferentiable(*(f for name in ("tokenize", "generate_tokens", "detect_encoding", "untokenize",
                                            "_tokenize", "_generate_tokens_from_c_tokenizer")
                             if callable(f := getattr(tokenize, name, None))))
