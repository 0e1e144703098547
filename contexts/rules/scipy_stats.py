"""scipy.stats: building a distribution object, as primitives without derivatives.

`norm(loc, scale)` (a frozen distribution) makes a new distribution object each time, and its `__init__`
builds the object's docstring (`doccer.docformat`: string substitutions, line by line), its argument
parser (source text compiled with `exec`) and its vectorised methods (`np.vectorize` of its bound
methods). None of it computes with a number: text, functions and the ints counting the shape parameters.
Recorded as code, that text processing was most of the gradient's time (18.6 ms of a frozen normal's
cdf, 4.5 ms without); run natively here, the rest of the object (its support, its shape parameters, loc,
scale) is differentiated as before. The functions are scipy's own (`rv_generic._construct_doc`...): a
subclass overriding one is code as any.

Loaded when scipy.stats is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

from scipy._lib import doccer
from scipy.stats import _distn_infrastructure as _infra

from .registry import registry

__all__: list[str] = []

_TEXT = ("docformat", "indentcount_lines", "filldoc", "unindent_dict", "unindent_string", "doc_replace",
         "extend_notes_in_docstring", "replace_notes_in_docstring", "inherit_docstring_from")
_BUILDERS = ("_construct_doc", "_construct_default_doc", "_construct_docstrings", "_construct_argparser",
             "_attach_methods", "_attach_argparser_methods")


def _register() -> None:
    found = [getattr(doccer, name) for name in _TEXT if callable(getattr(doccer, name, None))]
    for cls in (getattr(_infra, name, None) for name in ("rv_generic", "rv_continuous", "rv_discrete", "rv_sample")):
        if cls is not None:
            found += [vars(cls)[name] for name in _BUILDERS if callable(vars(cls).get(name))]
    registry.nondifferentiable(*found)


_register()
