"""From a code object to its syntax tree, and from a rewritten tree back to a function.

Invariant: a twin made here shares the original's globals (live), closure cells, defaults, kwdefaults,
name and qualname, and keeps the original file name and line numbers; the original function object and
its `__code__` are never touched.

Why the AST and not bytecode: the AST is stable across CPython 3.11-3.14 while bytecode calling
conventions change in every release, and a rewritten tree can be shown to a person (`ast.unparse`).
"""

from __future__ import annotations

import __future__ as _future
import ast
import dis
import linecache
import os
import sys
import threading
import types
import weakref
from collections import OrderedDict
from dataclasses import dataclass

from .errors import MarkedOpaque, SourceUnavailable
from .weak import ByIdentity

__all__ = ["FunctionSource", "get_source", "compile_twin", "make_function", "unwrap_callable", "mangle_private",
           "is_opaque", "AST_LOCK", "opaque", "marked_opaque", "add_rewriter", "adopt"]

# Held while this package and the contexts turn text into trees or trees into code (`ast.parse`,
# `compile` of a tree): CPython before 3.12.1 keeps the AST converters' recursion depth in per-interpreter
# state, so two threads converting at once (a garbage collection in one lets the other run) fail with
# "SystemError: AST constructor recursion depth mismatch" (gh-106905). Reentrant: a pass may nest.
AST_LOCK = threading.RLock()

_FUTURE_FLAGS = 0
for _name in _future.all_feature_names:
    _FUTURE_FLAGS |= getattr(_future, _name).compiler_flag

_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)

# Nodes that carry no children and are never rewritten: shared by copies, not visited.
_LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)


def copy_tree(node):
    """A deep copy of a syntax tree (nodes and lists copied, leaves shared), several times faster than
    `copy.deepcopy`, which dominated patching time (and a long function's transform)."""
    cls = type(node)
    new = cls.__new__(cls)
    state = node.__dict__.copy()  # fields and positions
    for name in node._fields:
        value = state.get(name)
        if type(value) is list:
            state[name] = [copy_tree(v) if isinstance(v, ast.AST) and not isinstance(v, _LEAVES) else v
                           for v in value]
        elif isinstance(value, ast.AST) and not isinstance(value, _LEAVES):
            state[name] = copy_tree(value)
    new.__dict__.update(state)
    return new


@dataclass(frozen=True)
class FunctionSource:
    """The parsed definition of one code object: a private deep copy of its tree, decorators removed."""

    code: types.CodeType
    tree: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    filename: str
    class_name: str | None  # the class whose body defined it, for private-name mangling

    @property
    def is_lambda(self) -> bool:
        return isinstance(self.tree, ast.Lambda)

    def fresh_tree(self):
        """A deep copy of the definition, safe for a pass to rewrite in place."""
        return copy_tree(self.tree)

    def as_function_def(self) -> ast.FunctionDef | ast.AsyncFunctionDef:
        """The definition as a `def` (a lambda becomes `def <lambda>(...): return body`)."""
        tree = self.fresh_tree()
        if not isinstance(tree, ast.Lambda):
            return tree
        ret = ast.Return(value=tree.body)
        ast.copy_location(ret, tree.body)
        fdef = ast.FunctionDef(name="<lambda>", args=tree.args, body=[ret], decorator_list=[],
                               returns=None, type_comment=None)
        return ast.copy_location(fdef, tree)


# -- finding the definition ----------------------------------------------------------------------

# file name -> (its lines, definitions by first line): the most recently used files only (a module's
# tree is large; a process patching functions of many files must not keep every one)
_module_cache: OrderedDict[str, tuple[tuple[str, ...], dict[int, list]]] = OrderedDict()
_MODULES_KEPT = 32


def _definitions_by_line(filename: str, module_globals=None) -> dict[int, list]:
    lines = linecache.getlines(filename, module_globals)
    if not lines and filename.startswith("<frozen ") and isinstance(module_globals, dict):
        # a frozen standard-library module (`_collections_abc`, `posixpath`, `codecs` in 3.11+): its code
        # names `<frozen name>`, its module the .py file it was frozen from
        path = module_globals.get("__file__")
        if (isinstance(path, str) and path.endswith(".py")
                and filename == f"<frozen {os.path.basename(path)[:-3]}>"):
            lines = linecache.getlines(path)
    if not lines:
        raise SourceUnavailable(f"no source for {filename!r}")
    key = tuple(lines)
    cached = _module_cache.get(filename)
    if cached is not None and cached[0] == key:
        _module_cache.move_to_end(filename)
        return cached[1]
    try:
        with AST_LOCK:
            module = ast.parse("".join(lines), filename)
    except SyntaxError as e:
        raise SourceUnavailable(f"the source of {filename!r} does not parse: {e}") from e
    index: dict[int, list] = {}
    _index_definitions(module, [], index)
    _module_cache[filename] = (key, index)
    _module_cache.move_to_end(filename)
    while len(_module_cache) > _MODULES_KEPT:
        _module_cache.popitem(last=False)
    return index


def _index_definitions(node, classes: list[str | None], index: dict[int, list]) -> None:
    """Index every function/lambda node by the line its code object reports as first, with its class."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.ClassDef):
            _index_definitions(child, classes + [child.name], index)
            continue
        if isinstance(child, _FUNCTION_NODES):
            first = child.lineno
            if not isinstance(child, ast.Lambda) and child.decorator_list:
                first = min(first, min(d.lineno for d in child.decorator_list))
            cls = classes[-1] if classes else None
            index.setdefault(first, []).append((child, cls))
            # Mangling follows the nearest enclosing class, through any functions in between.
            _index_definitions(child, classes, index)
            continue
        _index_definitions(child, classes, index)


def _arg_names(args: ast.arguments) -> tuple[str, ...]:
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    if args.vararg:
        names.append(args.vararg.arg)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return tuple(names)


def _code_arg_names(code: types.CodeType) -> tuple[str, ...]:
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
    return code.co_varnames[:n]


def _mangle(name: str, cls: str | None) -> str:
    if cls is None or not name.startswith("__") or name.endswith("__") or "." in name:
        return name
    stripped = cls.lstrip("_")
    return f"_{stripped}{name}" if stripped else name


def mangle_private(tree, cls: str | None):
    """Mangle the private names (`self.__x`, `__x`, `f(__k=...)`) of a definition from the body of class
    `cls` as the compiler does there, in place: a pass that turns names into strings (`setattr(obj, "__x",
    v)`) compiles outside the class and must see `_Cls__x`. Nested classes are left to the compiler."""
    if cls is None:
        return tree
    stack = [tree]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Attribute):
            n.attr = _mangle(n.attr, cls)
        elif isinstance(n, ast.Name):
            n.id = _mangle(n.id, cls)
        elif isinstance(n, ast.arg):
            n.arg = _mangle(n.arg, cls)
        elif isinstance(n, ast.keyword) and n.arg is not None:
            n.arg = _mangle(n.arg, cls)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            n.names = [_mangle(x, cls) for x in n.names]
        elif isinstance(n, ast.FunctionDef) and n is not tree:
            n.name = _mangle(n.name, cls)
        if not (isinstance(n, ast.ClassDef) and n is not tree):
            stack.extend(ast.iter_child_nodes(n))
    return tree


def _positions_span(code: types.CodeType):
    pts = [((l, c), (el, ec)) for l, el, c, ec in code.co_positions()
           if l is not None and c is not None and (c, ec) != (0, 0)]  # (0, 0): RESUME and friends
    return (min(p[0] for p in pts), max(p[1] for p in pts)) if pts else None


def _node_contains(node, span) -> bool:
    lo, hi = span
    return (node.lineno, node.col_offset) <= lo and hi <= (node.end_lineno, node.end_col_offset)


def _match(code: types.CodeType, candidates: list):
    arg_names = _code_arg_names(code)
    want_lambda = code.co_name == "<lambda>"
    fits = []
    for node, cls in candidates:
        if isinstance(node, ast.Lambda) != want_lambda:
            continue
        if not want_lambda and node.name != code.co_name:
            continue
        if tuple(_mangle(a, cls) for a in _arg_names(node.args)) != arg_names:
            continue
        fits.append((node, cls))
    if len(fits) > 1 and want_lambda:
        span = _positions_span(code)
        inside = [(n, c) for n, c in fits if span and _node_contains(n, span)]
        # The innermost lambda holding every position of the code is the one (an outer lambda's
        # code also covers the inner lambda, but the inner one is smaller).
        inside.sort(key=lambda nc: (nc[0].end_lineno - nc[0].lineno, nc[0].end_col_offset - nc[0].col_offset))
        fits = inside[:1] or fits
    return fits[0] if len(fits) == 1 else None


# code object (by identity: equal code objects of two files are two entries) -> (tree, class name) or the
# SourceUnavailable; an entry dies with its code object (the value holds no reference to it)
_source_cache = ByIdentity()


def get_source(code: types.CodeType, module_globals=None) -> FunctionSource:
    """The definition behind `code`, or `SourceUnavailable` naming why it cannot be had."""
    if _marked_codes or _marked_modules:
        _check_marked(code, module_globals)
    found = _source_cache.get(code)
    if found is None and (found := _adopted.get(code)) is None:
        try:
            src = _find_source(code, module_globals)
            found = (_rewritten(src, module_globals), src.class_name)
        except SourceUnavailable as e:
            found = e.with_traceback(None)
        _source_cache[code] = found
    if isinstance(found, SourceUnavailable):
        raise found.with_traceback(None)  # (the cached error: its traceback grew by two frames a raise, keeping them alive)
    return FunctionSource(code=code, tree=found[0], filename=code.co_filename, class_name=found[1])


# -- rewriters: a layer above may restate a definition before any context sees it ----------------------

# Each takes (FunctionSource, module globals) and returns a tree to use instead (the same function, written so
# that every context treats it alike: `contexts.lowered.implicit` states a bisection's result as the root it
# finds), or None. The text in the file is checked against the code first (`_find_source`); what a rewriter
# returns is what every context then transforms, once per code object (cached with the definition).
_rewriters: list = []


def add_rewriter(rewrite) -> None:
    """Register `rewrite(source, module_globals) -> tree | None`, applied to every definition found."""
    if rewrite not in _rewriters:
        _rewriters.append(rewrite)
        _source_cache.clear()


def _rewritten(src: FunctionSource, module_globals):
    tree = src.tree
    for rewrite in _rewriters:
        new = rewrite(FunctionSource(code=src.code, tree=tree, filename=src.filename, class_name=src.class_name),
                      module_globals)
        if new is not None:
            tree = new
    return tree


def adopt(code: types.CodeType, tree, class_name: str | None = None) -> None:
    """Make `tree` the definition of `code` (compiled by a rewriter from a tree it made, which no file holds):
    every context then finds it, as for code compiled from a file."""
    _adopted[code] = (tree, class_name)
    _source_cache.pop(code, None)  # (a search made before, which found no file holding it, is forgotten)
    _remember_twin(code)


_adopted = ByIdentity()  # (kept apart from the cache: `clear()` must not forget what no file holds)


# -- finders: the text a library made a function of by `exec` -------------------------------------------

# Each takes (function, the object a method of it is bound to or None) and returns its definition as a tree, or
# None: a library that compiles functions from text it keeps (networkx's argmap wrappers keep it on the
# function). Asked where no file holds a function's source (`found_elsewhere`); what one returns is adopted.
_finders: list = []


def add_source_finder(find) -> None:
    """Register `find(fn, owner) -> tree | None`, asked for a function made by `exec` whose source no file holds."""
    if find not in _finders:
        _finders.append(find)


def found_elsewhere(fn, owner=None) -> bool:
    """A finder gave the definition of fn (a function, or a method bound to owner), now adopted: every context
    transforms it as code from a file. False where none did, or one was adopted before (the file's answer
    stands: no source)."""
    if type(fn) is types.MethodType:
        fn, owner = fn.__func__, fn.__self__
    if not _finders or type(fn) is not types.FunctionType or adopted(fn.__code__):
        return False
    for find in _finders:
        tree = find(fn, owner)
        if tree is not None:
            adopt(fn.__code__, tree)
            return True
    return False


def adopted(code: types.CodeType) -> bool:
    """A definition was adopted for code (`adopt`)."""
    return _adopted.get(code) is not None


# -- the user's opt-out: functions and modules every context runs as opaque primitives -----------------

_marked_codes: "weakref.WeakSet[types.CodeType]" = weakref.WeakSet()
_marked_modules: set = set()


def opaque(*targets):
    """Run each target as an opaque primitive in every context: no context recurses into its source (a
    transformation then needs a rule for it, or refuses it by name). A target is a function (or a method,
    `functools.partial`, a callable object's `__call__`), a module, or a module's name (its submodules
    too). Returns the first target, so it can decorate a function. `overdub.cache.clear()` is called:
    twins made before see the change.

    >>> import overdub
    >>> @overdub.opaque
    ... def scale(x): return 2 * x
    >>> overdub.is_recursable(scale)
    False
    """
    for target in targets:
        if isinstance(target, str):
            _marked_modules.add(target)
        elif isinstance(target, types.ModuleType):
            _marked_modules.add(target.__name__)
        else:
            fn = target
            while not isinstance(fn, types.FunctionType):
                inner = (getattr(fn, "__func__", None) or getattr(fn, "func", None)
                         or getattr(type(fn), "__call__", None))
                if inner is None or inner is fn or not callable(inner):
                    raise TypeError(f"overdub.opaque needs a function, a module or a module name, got "
                                    f"{type(target).__name__}")
                fn = inner
            _marked_codes.add(fn.__code__)
    from . import cache
    cache.clear()
    return targets[0] if targets else None


def marked_opaque(fn) -> bool:
    """fn (a function, method, partial or callable object) was marked `opaque`, or its module was."""
    if not (_marked_codes or _marked_modules):
        return False
    for _ in range(4):
        if isinstance(fn, types.FunctionType):
            try:
                _check_marked(fn.__code__, fn.__globals__)
            except MarkedOpaque:
                return True
            return False
        fn = getattr(fn, "__func__", None) or getattr(fn, "func", None) or getattr(type(fn), "__call__", None)
    return False


def _check_marked(code: types.CodeType, module_globals) -> None:
    module = (module_globals or {}).get("__name__") if isinstance(module_globals, dict) else None
    marked = code in _marked_codes
    if not marked and module is not None and _marked_modules:
        marked = any(module == m or module.startswith(m + ".") for m in _marked_modules)
    if marked:
        raise MarkedOpaque(f"{code.co_qualname} ({code.co_filename}:{code.co_firstlineno}) is marked opaque "
                           f"(`overdub.opaque`)")


def clear() -> None:
    """Forget the parsed files and definitions (`overdub.cache.clear()` calls this)."""
    _source_cache.clear()
    _module_cache.clear()


def _find_source(code: types.CodeType, module_globals) -> FunctionSource:
    where = f"{code.co_qualname} ({code.co_filename}:{code.co_firstlineno})"
    if code.co_name.startswith("<") and code.co_name != "<lambda>":
        raise SourceUnavailable(f"{where} is a {code.co_name} code object, not a function")
    index = _definitions_by_line(code.co_filename, module_globals)
    hit = _match(code, index.get(code.co_firstlineno, []))
    if hit is None:
        raise SourceUnavailable(
            f"the source of {where} does not match its code object (edited since import, or ambiguous)")
    node, cls = hit
    tree = copy_tree(node)
    if not isinstance(tree, ast.Lambda):
        tree.decorator_list = []
    _strip_annotations(tree)
    found = FunctionSource(code=code, tree=tree, filename=code.co_filename, class_name=cls)
    # pytest compiles test modules with their asserts rewritten: their code cannot match the text, which
    # is what pytest compiled (the marker is the rewriter's global)
    rewritten = module_globals is not None and "@pytest_ar" in module_globals
    if not rewritten and _twin_codes.get(code) is None and not _compiles_to(found, code):
        raise SourceUnavailable(
            f"the source of {where} in the file today does not compile to the code that runs (the file "
            "changed since it was imported): re-import the module (importlib.reload) so both agree")
    return found


def _compiles_to(source: FunctionSource, code: types.CodeType) -> bool:
    """The definition found, compiled as its twin will be (same free variables, class, future flags),
    gives the bytecode, names and constants of `code` itself: the file may have been edited since import
    without moving the definition, and a twin must never run text other than the code it stands for."""
    try:  # (the tree itself: compiling reads it, and fills a missing position at most)
        compiled = compile_twin(source, source.tree)
    except SyntaxError:
        return False
    return _same_code(compiled, code)


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """The same program: names, constants (nested code objects compared the same way) and the operations
    that decide what it computes. Not compared: how calls and attribute loads are encoded, which differs
    between patch releases of one CPython (the stdlib's .pyc files may come from another), line numbers,
    qualnames and the nesting flag (the twin is compiled inside a factory)."""
    if (a.co_names, a.co_varnames, a.co_freevars, a.co_cellvars, a.co_argcount, a.co_kwonlyargcount,
            a.co_posonlyargcount) != (b.co_names, b.co_varnames, b.co_freevars, b.co_cellvars,
                                      b.co_argcount, b.co_kwonlyargcount, b.co_posonlyargcount):
        return False
    if len(a.co_consts) != len(b.co_consts):
        return _same_but_keywords(a, b)
    # (the same bytecode: the same operations, without decoding them — `dis` takes a tenth of a long
    # function's first gradient; decoded only where the encodings differ)
    if a.co_code != b.co_code and _operations(a) != _operations(b):
        return _same_but_keywords(a, b)
    for x, y in zip(a.co_consts, b.co_consts):
        if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
            if not _same_code(x, y):
                return False
        elif type(x) is not type(y) or _constant_key(x) != _constant_key(y):
            if type(x) is str and "__qualname__" in a.co_names and _names_class(x, a.co_name) and _names_class(
                    y, a.co_name):
                continue  # (a class body's qualname: a method compiled alone, as its twin is, lacks its class's)
            return False
    return True


def _names_class(text: str, name: str) -> bool:
    """text is the qualname of a class called name (`A.f.<locals>.RetObj`, `f.<locals>.RetObj`)."""
    return text == name or text.endswith("." + name)


def _same_but_keywords(a: types.CodeType, b: types.CodeType) -> bool:
    """The same program but for how calls pass keyword arguments: a method call on an imported module
    (`mod.f(k1=..., ..., k16=...)`) is compiled in its module with the keywords' names as constants one by one
    (a dict built), and alone, as a twin is, with them as one tuple of names (CPython tells an imported name
    by the module's symbol table). Compared with keyword names taken out of both."""
    def key(code):
        consts = []
        for c in code.co_consts:
            if type(c) is tuple and all(type(v) is str for v in c):
                consts.extend(c)
            elif isinstance(c, types.CodeType):
                consts.append(("code", c.co_name))
            else:
                consts.append(c)
        ops = [op for op in _operations(code) if not (op[0] == "LOAD_CONST" and (
            op[1].startswith(("'", '"')) or op[1].startswith("(") and "'" in op[1] or op[1] == "(,)"))]
        # (as a set: a keyword's name that is also a text constant of the function, `g(a2=v, ..., names=["a2"])`,
        # is one constant of the module's code, shared with the dict's key, and two of the twin's, the tuple's
        # and its own: canyonbpy's `pyco2.sys(par2=..., grads_wrt=["par2"])` was taken for a changed file)
        return sorted(set(map(_constant_key, (c for c in consts if c != ())))), ops
    if key(a) != key(b):
        return False
    nested = [(x, y) for x, y in zip([c for c in a.co_consts if isinstance(c, types.CodeType)],
                                     [c for c in b.co_consts if isinstance(c, types.CodeType)])]
    return all(_same_code(x, y) for x, y in nested)


_DECISIVE = frozenset({"BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP", "UNARY_NEGATIVE", "UNARY_NOT",
                       "UNARY_INVERT", "BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR", "STORE_ATTR",
                       "STORE_GLOBAL", "STORE_DEREF", "LOAD_DEREF", "LOAD_CONST", "RETURN_VALUE",
                       "RETURN_CONST", "YIELD_VALUE", "LOAD_GLOBAL", "STORE_NAME"})


def _operations(code: types.CodeType) -> list:
    """The operations of `code` that decide its result, with their operands' names and constants."""
    out = []
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op.startswith(("LOAD_FAST", "STORE_FAST")):  # super-instructions (3.13) hold two names
            names = ins.argval if isinstance(ins.argval, tuple) else (ins.argval,)
            out.extend((op[:4], n) for n in names)
        elif op in _DECISIVE:
            arg = ins.argval
            if op in ("BINARY_OP", "COMPARE_OP", "IS_OP", "CONTAINS_OP"):
                arg = ins.argrepr
            elif isinstance(arg, types.CodeType):  # compared by _same_code itself
                arg = arg.co_name
            elif op != "LOAD_GLOBAL":
                arg = _constant_key(arg)
            out.append((op, arg))
    return out


def _constant_key(value) -> str:
    """A constant as compared: its repr (which tells 0.0 from -0.0), a frozenset's members in a fixed order
    (`x in {"a", "b"}` compiles to a frozenset whose iteration order may differ between compilations)."""
    if type(value) is frozenset:
        return "frozenset(" + repr(sorted(map(_constant_key, value))) + ")"
    if type(value) is tuple:
        return "(" + ", ".join(map(_constant_key, value)) + ",)"
    return repr(value)


def _strip_annotations(tree) -> None:
    """Annotations, type parameters and default expressions are evaluated at `def` time; the twin takes
    them from the original function object, so they are dropped from the tree (defaults become `None`)."""
    args = tree.args
    for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if a is not None:
            a.annotation = None
    args.defaults = [ast.copy_location(ast.Constant(None), d) for d in args.defaults]
    args.kw_defaults = [None if d is None else ast.copy_location(ast.Constant(None), d)
                        for d in args.kw_defaults]
    if not isinstance(tree, ast.Lambda):
        tree.returns = None
        # PEP 695 type parameters (3.12+) would wrap the definition in an annotation scope of its own; the
        # body reaches them as free variables of the original code object, which the twin keeps
        if getattr(tree, "type_params", None):
            tree.type_params = []


# -- compiling a rewritten definition --------------------------------------------------------------

def compile_twin(source: FunctionSource, tree, extra_freevars: tuple[str, ...] = (),
                 prelude: list[ast.stmt] | None = None, opaque: bool = False) -> types.CodeType:
    """Compile a rewritten definition to a code object whose free variables are the original's plus
    `extra_freevars` (cells a pass fills with its helpers; name them `__x__` so they are never mangled).

    The definition is compiled inside a factory function that declares those free variables, inside a
    class of the original's class name when there is one, so private names are mangled as the compiler
    would have mangled them. `prelude` statements are placed in the factory before the definition.

    `opaque`: the twin computes something other than its source (a derivative pass's recording twin
    returning `(y, tape)`): no context may recurse into it by its source (`is_opaque`); it runs as a
    primitive under an observing context.
    """
    code = source.code
    line, end = tree.lineno, tree.end_lineno
    freevars = tuple(dict.fromkeys(code.co_freevars + tuple(extra_freevars)))
    decls = [ast.Assign(targets=[ast.Name(id=v, ctx=ast.Store())], value=ast.Constant(None),
                        **_at(line)) for v in freevars]
    if isinstance(tree, ast.Lambda):
        inner = [ast.Return(value=tree, lineno=line, col_offset=0, end_lineno=end, end_col_offset=0)]
    else:
        inner = [tree]
    if not isinstance(tree, ast.Lambda) and tree.name not in freevars:
        # Without this the `def` would bind its name in the factory, and a recursive reference to it
        # inside would become a free variable instead of the global the original reads.
        decls.insert(0, ast.Global(names=[tree.name], **_at(line)))
    factory = ast.FunctionDef(name="__overdub_factory__", args=_no_args(), body=decls + list(prelude or []),
                              decorator_list=[],
                              returns=None, type_comment=None, lineno=line, col_offset=0,
                              end_lineno=end, end_col_offset=0)
    top: ast.stmt = factory
    if source.class_name:
        top = ast.ClassDef(name=source.class_name, bases=[], keywords=[], body=[factory],
                           decorator_list=[], lineno=line, col_offset=0, end_lineno=end, end_col_offset=0)
    module = ast.Module(body=[top], type_ignores=[])
    # positions: the wrapper's here; the twin's own tree is compiled as given first (a generated tree has
    # them: walking it again took a fifth of a long function's transform), and fixed only if compile
    # finds a node without one
    fix_missing_locations(module)
    factory.body += inner
    flags = code.co_flags & _FUTURE_FLAGS
    with AST_LOCK:
        try:
            module_code = compile(module, source.filename, "exec", flags=flags, dont_inherit=True)
        except (TypeError, ValueError):  # `required field "lineno" missing from expr`, a range out of order
            fix_missing_locations(module)
            module_code = compile(module, source.filename, "exec", flags=flags, dont_inherit=True)
    factory_code = _only_code(module_code)
    if source.class_name:
        factory_code = _only_code(factory_code)
    twin = _only_code(factory_code, name=code.co_name).replace(co_qualname=code.co_qualname)
    _remember_twin(twin)
    if opaque:
        _opaque_codes[twin] = True
    return twin


def fix_missing_locations(root: ast.AST) -> None:
    """`ast.fix_missing_locations`, without its recursion and generators: twice as fast on the trees of
    long functions' twins, where it took a fifth of the transform (issue 17). A node without a position
    (or part of one) takes its parent's, as there."""
    todo = [(root, (1, 0, 1, 0))]
    pop, push = todo.pop, todo.append
    while todo:
        node, where = pop()
        if node._attributes:  # (every node with a position has all four parts)
            d = node.__dict__
            own = (d.get("lineno"), d.get("col_offset"), d.get("end_lineno"), d.get("end_col_offset"))
            if None in own:
                where = tuple(w if o is None else o for o, w in zip(own, where))
                node.lineno, node.col_offset, node.end_lineno, node.end_col_offset = where
            else:
                where = own
        for name in node._fields:
            v = getattr(node, name, None)
            if type(v) is list:
                for x in v:
                    if isinstance(x, ast.AST):
                        push((x, where))
            elif isinstance(v, ast.AST):
                push((v, where))


# (by identity: code objects compare by value, so a set of them held one entry for a twin and an equal
# code adopted under another qualname, and lost it when the first died: a nested def made by a context's
# twin was then taken for an edited file)
_opaque_codes = ByIdentity()


def is_opaque(code: types.CodeType) -> bool:
    """code is a twin compiled `opaque` by a pass: its source is not what it runs."""
    return _opaque_codes.get(code) is not None


_twin_codes = ByIdentity()


def _remember_twin(code: types.CodeType) -> None:
    """Code compiled here, nested code objects included: a pass asking for the source of a function made
    by a twin (a nested def or lambda) gets the original's definition, not a check against its own text."""
    _twin_codes[code] = True
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _remember_twin(c)


def _at(line: int) -> dict:
    return dict(lineno=line, col_offset=0, end_lineno=line, end_col_offset=0)


def _no_args() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                         kwarg=None, defaults=[])


def _only_code(code: types.CodeType, name: str | None = None) -> types.CodeType:
    subs = [c for c in code.co_consts if isinstance(c, types.CodeType)]
    if name is not None and len(subs) > 1:
        subs = [c for c in subs if c.co_name == name] or subs
    return subs[-1]


def make_function(twin_code: types.CodeType, fn: types.FunctionType,
                  helper_cells: dict[str, types.CellType]) -> types.FunctionType:
    """A function object running `twin_code` with fn's globals, cells, defaults, name and qualname. The
    pass's helper cells take precedence over fn's cells of the same name: fn may be a nested def another
    pass's twin made, closing over that pass's helper (`__od_call__`)."""
    own = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(helper_cells[v] if v in helper_cells else own[v] for v in twin_code.co_freevars)
    twin = types.FunctionType(twin_code, fn.__globals__, fn.__name__, fn.__defaults__, closure or None)
    twin.__kwdefaults__ = fn.__kwdefaults__
    twin.__qualname__ = fn.__qualname__
    twin.__module__ = fn.__module__
    twin.__dict__.update(fn.__dict__)
    twin.__wrapped_original__ = fn
    return twin


def unwrap_callable(obj) -> tuple[types.FunctionType | None, tuple, dict]:
    """(plain function, leading bound args, bound kwargs) that calling `obj` amounts to, or
    (None, (), {}) when obj is not a pure-Python callable this layer can patch."""
    if isinstance(obj, types.FunctionType):
        return obj, (), {}
    if isinstance(obj, types.MethodType):
        fn, pre, kw = unwrap_callable(obj.__func__)
        return fn, pre + (obj.__self__,), kw
    return None, (), {}


def source_lines(code: types.CodeType) -> list[str]:
    """The original source lines of a code object (empty when not available)."""
    return linecache.getlines(code.co_filename)


if sys.version_info < (3, 11):  # pragma: no cover
    raise ImportError("overdub needs Python 3.11 or newer")
