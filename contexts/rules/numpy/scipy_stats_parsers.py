"""scipy.stats' argument parsers: each distribution makes `_parse_args`, `_parse_args_rvs` and
`_parse_args_stats` by `exec` from a template it keeps (`_parse_arg_template`), so no file holds their
source. Reverse mode runs `_parse_args` and `_parse_args_stats` as the rearrangements they are; `_parse_args_rvs`
calls `self._argcheck_rvs(...)` and was refused ("no source") wherever the distribution was taken for
differentiated (a process object holding one beside its parameters: pyesg's `self.dW.rvs(...)`). The text
the distribution kept is their definition (`registry.source_finders`); the engines then transform them as
any code.
"""

from __future__ import annotations

from ..registry import registry

__all__: list[str] = []

_PARSERS = frozenset({"_parse_args", "_parse_args_rvs", "_parse_args_stats"})


def parser_source(fn, owner):
    """The definition of one of a distribution's parsers, from the template it was made of, or None."""
    code = fn.__code__
    if code.co_filename != "<string>" or code.co_name not in _PARSERS:
        return None
    return registry.definition_in(getattr(owner, "_parse_arg_template", None), code)


registry.source_finders.append(parser_source)
