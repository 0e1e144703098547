"""networkx's decorated functions: `@argmap` (under `@nx._dispatchable`, `@not_implemented_for`, `@py_random_state`,
... nearly every algorithm) compiles each wrapper on its first call from text it assembles, by `exec`, so no
file holds its source, and reverse mode refused every such call ("no source": `nx.shortest_path_length` of a
graph with differentiated weights). networkx keeps the text on the function (`func._code`): it is the
definition (`registry.source_finders`), and the engines transform the wrapper as any code. Loaded when
networkx is first imported (`leaves.DOMAINS`).
"""

from __future__ import annotations

from networkx.utils import decorators as _decorators

from .registry import registry

__all__: list[str] = []

_COMPILED = "<class 'networkx.utils.decorators.argmap'> compilation "


def argmap_source(fn, owner):
    """The definition of an argmap wrapper, from the text networkx compiled it from, or None."""
    code = fn.__code__
    if not code.co_filename.startswith(_COMPILED):
        return None
    return registry.definition_in(getattr(fn, "_code", None), code)


registry.source_finders.append(argmap_source)

# A wrapper's first call compiles it (`argmap._lazy_compile(__wrapper)(*args, **kwargs)`): assembling the text and
# replacing the wrapper's code, no arithmetic on the arguments, run as it is. Transformed, its closures writing
# cells were refused (reverse mode), and a first call of `nx.pagerank` failed where a second was right.
registry.nondifferentiable(_decorators.argmap._lazy_compile)
