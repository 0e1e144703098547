"""The pass API: what a transformer built on the core uses besides `Context`.

The core's own contexts need nothing of this: `Context.run` patches, caches and recurses for them. A
context that generates code of its own (reverse mode's recording twin and adjoint, forward mode's
tangent twin, the debugger's breakpoint twins) uses the same services the core's patching does, and
only these, so that sources, caches, the recursion limit and thread safety work alike in every mode:

- Source: `get_source(code, globals)` finds the definition behind a code object (checked against the
  compiled code: a file edited since import is refused, never run), as a `FunctionSource`;
  `mangle_private` renames `self.__x` as the compiler did; `AST_LOCK` must be held around every
  text-to-tree and tree-to-code conversion (CPython 3.11 shares the converters' depth counter between
  threads).
- Rewriting: `add_rewriter(rewrite)` registers `rewrite(source, globals) -> tree | None`, run on every
  definition found before any context sees it (the same function restated so every context treats it alike:
  `contexts.lowered.implicit` states a bisection's ends as the root it finds); `adopt(code, tree)` makes a
  tree the definition of code a rewriter compiled itself (no file holds it); `add_source_finder(find)` registers
  `find(fn, owner) -> tree | None` for functions a library made by `exec` from text it keeps, asked (and the
  answer adopted) wherever the core meets one without source, or by `found_elsewhere(fn, owner)`.
- Compiling: `compile_twin(source, tree, extra_freevars, ...)` compiles a rewritten definition as a
  closure over the original's globals and cells (`make_function` binds it to a function's);
  `copy_tree(node)` is a deep copy of a tree, several times faster than `copy.deepcopy`;
  `fix_missing_locations(tree)` is `ast.fix_missing_locations` without recursion (twice as fast).
- Caches: `OwnedEntries` and `ByIdentity` are tables keyed by a code object's identity whose entries die
  with it (twins never keep a user's function alive); `on_clear(fn)` joins a table to `clear()`, which
  empties every twin cache of every context; `original_code(code)` maps a patched twin's code back to its
  original.
- `depth.enter()` / `depth.leave()` (or `with depth.deeper():`) raise the recursion limit while
  transformed code runs, counted across threads; `collector.paused()` pauses the cyclic garbage
  collector while a twin is built (its trees' allocations trigger full collections), counted alike.
- `context_stack` is the context variable holding the active contexts (`overdub.active()` copies it;
  a hot path may test `context_stack.get()` for emptiness instead).
- `marked_opaque(fn)`: whether the user opted fn out of every transform (`overdub.opaque`).
- `bound_self(fn)` / `method_function(fn)`: a bound method's object and function, asked without running a
  callable object's `__getattr__` (which Python never runs to call it).
"""

from . import collector, depth
from .cache import clear, on_clear, original_code
from .patch import bound_by_descriptor, bound_self, method_function, property_getter, stored_attribute
from .source import (AST_LOCK, FunctionSource, add_rewriter, add_source_finder, adopt, adopted, compile_twin, copy_tree,
                     fix_missing_locations, found_elsewhere, get_source, make_function, mangle_private, marked_opaque)
from .stack import _stack as context_stack
from .weak import ByIdentity, OwnedEntries, of_a_module

__all__ = ["get_source", "FunctionSource", "mangle_private", "AST_LOCK", "compile_twin", "make_function", "copy_tree",
           "OwnedEntries", "ByIdentity", "of_a_module", "on_clear", "clear", "original_code", "depth", "collector", "context_stack",
           "marked_opaque", "property_getter", "fix_missing_locations", "stored_attribute", "bound_by_descriptor",
           "bound_self", "method_function", "add_rewriter", "adopt", "adopted", "add_source_finder", "found_elsewhere"]
