"""Pure-Python stand-ins for higher-order builtins, differentiated by recursion like user code.

`map(f, xs)` calls f from C, where reverse mode cannot follow it; the stand-ins below do the same work in
Python (eagerly, returning an iterator over a list where Python returns an iterator: `next` works on it),
so the AD context differentiates through f, closures included. They are used only inside differentiated
code.
"""

from __future__ import annotations

import collections
import collections.abc
import functools
import itertools
import operator
import types

import numpy as _np

from overdub.errors import OverdubError

from ..rules.cotangents import own_dict
from ..rules.registry import registry

__all__ = ["REPLACEMENTS", "GETTERS"]


class _Mapped:
    """map over an iterator, drawn from only as far as it is read (eagerly, as for sequences, it drew all
    of it: a loop leaving early then found nothing left in the iterator, whose derivative came out 0). A
    Python iterator: reverse mode differentiates its `__next__` at each draw. So are the two below."""

    def __init__(self, f, its):
        self.f, self.its = f, its

    def __iter__(self):
        return self

    def __next__(self):
        args = []
        for it in self.its:
            args.append(next(it))
        return self.f(*args)


class _Filtered(_Mapped):
    def __next__(self):
        while True:
            x = next(self.its[0])
            if (bool(x) if self.f is None else self.f(x)):
                return x


class _Enumerated(_Mapped):
    def __init__(self, it, start):
        super().__init__(None, [it])
        self.i = start

    def __next__(self):
        x = next(self.its[0])
        i = self.i
        self.i = i + 1
        return (i, x)


def _drawn(iterables) -> bool:
    """Whether one of iterables is an iterator (drawn from, perhaps later elsewhere too) that reverse mode
    draws from one item at a time: a list's, tuple's or array's iterator, or a Python iterator (a C
    iterator without a rule for its `__next__`, np.nditer's, is drawn whole, as before)."""
    for s in iterables:
        if isinstance(s, collections.abc.Iterator) and (
                type(s) in _STEPPED or type(getattr(type(s), "__next__", None)) is types.FunctionType):
            return True
    return False


_STEPPED = frozenset({type(iter([])), type(iter(())), type(iter(_np.empty(1)))})  # (primitives.POSITIONED)


def ad_map(f, *iterables):
    if _drawn(iterables):
        its = []
        for s in iterables:
            its.append(iter(s))
        return _Mapped(f, its)
    # (over sequences, f applied to every item now: C consumers of the result, `out.extend(...)`, take a list
    # iterator's items with their cotangents, which a Python iterator's draws would not give them; a consumer
    # stopping early then sees f's effects of every item, as Python would not)
    if len(iterables) == 1:
        return _mapped_items(f, iterables[0])
    return _mapped_rows(f, iterables)


# (each loop in a function of its own: every local is bound at its `out.append`, whose record of the locals
# that may view `out` then takes no `locals()`; and `map(f, seq)`, the common case, zips no rows: seawater's
# `list(map(np.asanyarray, (s, t, p)))` cost 2 ms of its 2.2 ms gradient)
def _mapped_items(f, items):
    out = []
    for x in items:
        out.append(f(x))
    return iter(out)


def _mapped_rows(f, iterables):
    out = []
    for args in zip(*iterables):
        out.append(f(*args))
    return iter(out)


def ad_filter(f, iterable):
    if _drawn((iterable,)):
        return _Filtered(f, [iterable])
    out = []
    for x in iterable:
        keep = bool(x) if f is None else f(x)
        if keep:
            out.append(x)
    return iter(out)


class Forever:
    """`itertools.repeat(obj)`: obj without end (zip takes as many as the other iterables give)."""

    def __init__(self, obj):
        self.obj = obj

    def __iter__(self):
        raise OverdubError("itertools.repeat(x) without a count, iterated on its own: reverse mode draws "
                           "items when the iterator is made, and these never end",
                           fix="give the count: `itertools.repeat(x, n)`")


def ad_zip(*iterables, strict=False):
    return iter(_zip_rows(iterables, strict))


def _zip_rows(iterables, strict):
    """zip's rows, as a list (returned, not iterated here: `out` stays a list no other object holds while
    it grows, and reverse mode's in-place bookkeeping of `out.append` has nothing to scan)."""
    if not strict:
        for s in iterables:
            if type(s) is not Forever and isinstance(s, collections.abc.Iterator):
                return _zip_drawn(iterables)
    seqs = [None if type(s) is Forever else list(s) for s in iterables]
    n = min((len(s) for s in seqs if s is not None), default=0)
    for k in range(len(seqs)):  # (no zip here: it is this function)
        if seqs[k] is None:
            seqs[k] = [iterables[k].obj] * n
    if strict and any(len(s) != n for s in seqs):
        raise ValueError("zip() arguments have different lengths")
    out = []
    for i in range(n):
        row = []
        for s in seqs:
            row.append(s[i])
        out.append(tuple(row))
    return out


def _zip_drawn(iterables):
    """zip over iterators too, drawing from each exactly as zip does, row by row, stopping at the first
    that ends (items drawn before it in that row are lost, as in zip): an iterator is left where zip leaves
    it (`heapq.nsmallest` zips `range(n)` with an iterator, then goes on with the rest of it; drawing all
    of it, as for sequences, silently left nothing for the rest). The rows, as a list."""
    parts = []  # an iterator as it is (drawn from), any other iterable as a list (read by position)
    for s in iterables:
        parts.append(s if type(s) is Forever or isinstance(s, collections.abc.Iterator) else list(s))
    out = []
    i = 0
    while True:
        row = []
        for p in parts:
            if type(p) is Forever:
                row.append(p.obj)
            elif type(p) is list:
                if i >= len(p):
                    return out
                row.append(p[i])
            else:
                try:
                    x = next(p)
                except StopIteration:
                    return out
                row.append(x)
        out.append(tuple(row))
        i += 1


def ad_enumerate(iterable, start=0):
    if _drawn((iterable,)):
        return _Enumerated(iterable, start)
    out = []
    i = start
    for x in iterable:
        out.append((i, x))
        i += 1
    return iter(out)


def _order(keys, reverse):
    """The permutation sorting keys (registered as non-differentiable)."""
    return sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)


def ad_sorted(iterable, *, key=None, reverse=False):
    items = list(iterable)
    keys = [x if key is None else key(x) for x in items]
    order = _order(keys, reverse)
    out = []
    for i in order:
        out.append(items[i])
    return out


def ad_min(*args, key=None, default=None):
    """`min(..., key=f)` with f Python code: f's calls recorded (what it stores into an object reaches the
    gradient; `rules.builtins` calls a key plainly). `default` given by keyword only: `runtime.KEYED`."""
    return _keyed_extremum(args, key, default, False)


def ad_max(*args, key=None, default=None):
    return _keyed_extremum(args, key, default, True)


def ad_list_sort(items, *, key=None, reverse=False):
    """`items.sort(key=f)` with f Python code: `items[:] = sorted(items, key=f)`, the key's calls recorded."""
    items[:] = ad_sorted(items, key=key, reverse=reverse)


def _keyed_extremum(args, key, default, is_max):
    items = list(args[0]) if len(args) == 1 else list(args)
    if not items:
        if default is None:
            raise ValueError(f"{'max' if is_max else 'min'}() iterable argument is empty")
        return default
    best = 0
    kb = items[0] if key is None else key(items[0])
    j = 1
    while j < len(items):
        kj = items[j] if key is None else key(items[j])
        if (kj > kb) if is_max else (kj < kb):
            best, kb = j, kj
        j += 1
    return items[best]


def ad_reversed(seq):
    own = getattr(type(seq), "__reversed__", None)
    if type(own) is _FUNCTION:  # a class's own `__reversed__` (Python code, which may store into seq)
        return own(seq)
    items = list(seq)
    out = []
    i = len(items) - 1
    while i >= 0:
        out.append(items[i])
        i -= 1
    return iter(out)


_NO_INITIAL = object()
_FUNCTION = type(ad_reversed)


def ad_reduce(f, iterable, initial=_NO_INITIAL):
    items = list(iterable)
    if initial is _NO_INITIAL:
        if not items:
            raise TypeError("reduce() of empty iterable with no initial value")
        acc = items[0]
        rest = items[1:]
    else:
        acc = initial
        rest = items
    for x in rest:
        acc = f(acc, x)
    return acc


def ad_islice(iterable, *args):
    """`itertools.islice(iterable, [start,] stop[, step])`: the items taken in Python (geopy's Point reads
    its coordinates so), consuming the iterable as far as islice does and no further."""
    bounds = slice(*args)
    start = 0 if bounds.start is None else operator.index(bounds.start)
    stop = None if bounds.stop is None else operator.index(bounds.stop)
    step = 1 if bounds.step is None else operator.index(bounds.step)
    if start < 0 or (stop is not None and stop < 0) or step < 1:
        raise ValueError("Indices for islice() must be None or an integer: 0 <= x <= sys.maxsize.")
    it = iter(iterable)
    out = []
    i = 0
    while stop is None or i < stop:
        try:
            x = next(it)
        except StopIteration:
            break
        if i >= start and (i - start) % step == 0:
            out.append(x)
        i += 1
    return iter(out)


def ad_next(it, *default):
    """next(it[, default]) as the iterator's own `__next__`, which reverse mode follows (a Python class's
    is differentiated, a list iterator's has a rule; other C iterators are refused by name)."""
    if type(it) is Forever:  # (`next(repeat(L))`: L itself, an AttributeError; no `__next__` of its own, which
        return it.obj        # would make it an Iterator to the checks above)
    try:
        return it.__next__()
    except StopIteration:
        if default:
            return default[0]
        raise


def ad_itemgetter(items, obj):
    """`operator.itemgetter(*items)(obj)` as the subscripts it stands for."""
    if len(items) == 1:
        return obj[items[0]]
    out = []
    for i in items:
        out.append(obj[i])
    return tuple(out)


def ad_attrgetter(names, obj):
    """`operator.attrgetter(*names)(obj)` as the attribute reads it stands for (dotted names followed)."""
    out = []
    for name in names:
        v = obj
        for part in name.split("."):
            v = getattr(v, part)
        out.append(v)
    return out[0] if len(names) == 1 else tuple(out)


# -- itertools (eager, as the stand-ins above: the items are drawn when the iterator is made) -------------

def ad_accumulate(iterable, func=None, *, initial=None):
    out = []
    acc = initial
    started = initial is not None
    if started:
        out.append(acc)
    for x in iterable:
        if not started:
            acc, started = x, True
        else:
            acc = acc + x if func is None else func(acc, x)
        out.append(acc)
    return iter(out)


def ad_starmap(f, iterable):
    out = []
    for args in iterable:
        out.append(f(*args))
    return iter(out)


def ad_product(*iterables, repeat=1):
    pools = [tuple(p) for p in iterables] * repeat
    rows = [()]
    for pool in pools:
        grown = []
        for row in rows:
            for x in pool:
                grown.append(row + (x,))
        rows = grown
    return iter(rows)


def ad_chain(*iterables):
    return ad_chain_from_iterable(iterables)


def ad_chain_from_iterable(iterables):
    parts = list(iterables)
    for it in parts:
        if type(it) is Forever or _endless(it):
            # (drawn eagerly, an endless one never ended: skimage's label2rgb hung; tokenize's
            # `chain(lines, iter(readline, b""), repeat(b""))`, lmfit's parameter names, was refused)
            return _Chained(parts)
    out = []
    for it in parts:
        for x in it:
            out.append(x)
    return iter(out)


class _Chained(_Mapped):
    """itertools.chain with an endless part, drawn from only as far as it is read."""

    def __init__(self, parts):
        super().__init__(None, parts)
        self.k = 0
        self.current = None

    def __next__(self):
        while self.k < len(self.its):
            if self.current is None:
                part = self.its[self.k]
                if type(part) is Forever:
                    return part.obj
                self.current = iter(part)
            for x in self.current:
                return x
            self.k = self.k + 1
            self.current = None
        raise StopIteration


def _endless(it) -> bool:
    """it is an iterator of itertools that never ends: cycle, count, repeat without a number of times."""
    if isinstance(it, (itertools.cycle, itertools.count)):
        return True
    if isinstance(it, itertools.repeat):
        try:
            operator.length_hint(it)
        except TypeError:  # (`repeat(x)` has no length)
            return True
    return False


def ad_pairwise(iterable):
    items = list(iterable)
    out = []
    for i in range(len(items) - 1):
        out.append((items[i], items[i + 1]))
    return iter(out)


def _positions(kind, n: int, r):
    """itertools' rows of positions in n items (constants: run as they are, `registry.nondifferentiable`)."""
    return list(kind(range(n), r))


registry.nondifferentiable(_positions)


def _picked(pool, kind, r):
    """The tuples of pool's items at each of itertools' rows of positions (`kind`: combinations, ...)."""
    out = []
    for row in _positions(kind, len(pool), r):
        picked = []
        for i in row:
            picked.append(pool[i])
        out.append(tuple(picked))
    return iter(out)


def ad_combinations(iterable, r):
    pool = tuple(iterable)
    return _picked(pool, itertools.combinations, r)


def ad_combinations_with_replacement(iterable, r):
    pool = tuple(iterable)
    return _picked(pool, itertools.combinations_with_replacement, r)


def ad_permutations(iterable, r=None):
    pool = tuple(iterable)
    return _picked(pool, itertools.permutations, r)


def ad_tee(iterable, n=2):
    """`itertools.tee`: n iterators over the items, drawn now (compas' `pairwise`: `a, b = tee(it)`)."""
    if type(iterable) is Forever or _endless(iterable):
        raise OverdubError("itertools.tee of an iterator without end: reverse mode draws its items when the "
                           "copies are made", fix="tee a finite iterator (`itertools.islice(it, n)`)")
    items = list(iterable)
    out = []
    for _ in range(n):
        out.append(iter(items))
    return tuple(out)


def ad_zip_longest(*iterables, fillvalue=None):
    seqs = [list(s) for s in iterables]
    n = max((len(s) for s in seqs), default=0)
    out = []
    for i in range(n):
        row = []
        for s in seqs:
            row.append(s[i] if i < len(s) else fillvalue)
        out.append(tuple(row))
    return iter(out)


def ad_compress(data, selectors):
    out = []
    for x, keep in zip(data, selectors):
        if keep:
            out.append(x)
    return iter(out)


def ad_takewhile(predicate, iterable):
    out = []
    for x in iterable:
        if not predicate(x):
            break
        out.append(x)
    return iter(out)


def ad_dropwhile(predicate, iterable):
    out = []
    dropping = True
    for x in iterable:
        if dropping and predicate(x):
            continue
        dropping = False
        out.append(x)
    return iter(out)


def ad_groupby(iterable, key=None):
    out = []
    current, group, started = None, None, False
    for x in iterable:
        k = x if key is None else key(x)
        if not started or k != current:
            if started:
                out.append((current, iter(group)))
            current, group, started = k, [], True
        group.append(x)
    if started:
        out.append((current, iter(group)))
    return iter(out)


def ad_repeat(obj, times=None):
    if times is None:
        return Forever(obj)
    out = []
    for _ in range(times):
        out.append(obj)
    return iter(out)


def ad_ndenumerate(arr):
    """np.ndenumerate(a): its (index, item) pairs, each item read by indexing in Python (numpy's reads them
    through a flat iterator in C, which no recording follows)."""
    a = _np.asarray(arr)
    out = []
    for idx in _np.ndindex(a.shape):
        out.append((idx, a[idx]))
    return iter(out)


def ad_fromiter(iterable, dtype, count=-1, *, like=None):
    """np.fromiter: the items drawn in Python (each draw differentiated), then numpy's array of them."""
    items = []
    if count != 0:
        for v in iterable:
            items.append(v)
            if len(items) == count:
                break
    if count > 0 and len(items) < count:
        raise ValueError(f"iterator too short: Expected {count} but iterator had only {len(items)} items.")
    return _np.array(items, dtype=dtype)


# -- attribute stores by name -----------------------------------------------------------------------------

# `__setattr__`s that store into the instance's `__dict__` as object's does (a SimpleNamespace's is its own C
# slot: `setattr(CFG, k, v)` of a module's namespace was refused, gen20 R13)
_GENERIC_SETATTR = (object.__setattr__, types.SimpleNamespace.__setattr__)


def plain_attribute(obj, name) -> bool:
    """`obj.name = v` is a store into obj's own `__dict__`: its class has no `__setattr__` of its own and
    no descriptor (property, slot) of that name. Not differentiated (registered nondifferentiable)."""
    cls = type(obj)
    if type(name) is not str or cls.__setattr__ not in _GENERIC_SETATTR or type(own_dict(obj)) is not dict:
        return False
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return not hasattr(type(klass.__dict__[name]), "__set__")
    return True


def attribute_setter(obj, name):
    """The Python function `obj.name = v` runs, as (function, whether it takes the name): the class's own
    `__setattr__`, or a property's setter; None for the rest (slots, C descriptors). Not differentiated."""
    cls = type(obj)
    if type(name) is not str:
        return None
    own = cls.__setattr__
    if own not in _GENERIC_SETATTR:
        return (own, True) if type(own) is types.FunctionType else None
    for klass in cls.__mro__:
        if name in klass.__dict__:
            held = klass.__dict__[name]
            if isinstance(held, property) and type(held.fset) is types.FunctionType:
                return held.fset, False
            if type(getattr(type(held), "__set__", None)) is types.FunctionType:
                # a data descriptor of Python code (stonesoup's `Property`): its `__set__`, differentiated
                return functools.partial(type(held).__set__, held), False
            return None
    return None


def carries_derivative(value) -> bool:
    """value may carry a derivative (the engine's own test; not differentiated)."""
    from .runtime import _any_differentiable
    return _any_differentiable((value,), {})


def store_attribute(obj, name, value) -> None:
    """The builtin setattr, of a value carrying no derivative (not differentiated)."""
    setattr(obj, name, value)


_METADATA = frozenset({"__annotations__", "__type_params__", "__doc__", "__name__", "__qualname__", "__module__"})


def ad_setattr(obj, name, value):
    """`setattr(obj, name, value)` as the store into the instance's dict it stands for (differentiated as
    `obj.__dict__[name] = value`); a class with its own `__setattr__` or a descriptor is refused."""
    if not plain_attribute(obj, name):
        if type(name) is str and name.startswith("__") and name.endswith("__") and (
                not carries_derivative(value) or name in _METADATA and callable(obj)):
            # metadata (functools.wraps's `__module__`, `__doc__`), as before; and a function's annotations, copied
            # by functools.wraps as a dict (pylops' solvers' callbacks: refused), which its code never reads
            store_attribute(obj, name, value)
            return
        setter = attribute_setter(obj, name)
        if setter is not None:  # (its code, differentiated: lmfit's `setattr(par, "expr", ...)`, a property)
            if setter[1]:
                setter[0](obj, name, value)
            else:
                setter[0](obj, value)
            return
        if not carries_derivative(value):  # (a count, a flag: C code storing it loses no derivative)
            store_attribute(obj, name, value)
            return
        raise OverdubError(f"setattr(obj, {name!r}, value) of a differentiated value on a {type(obj).__name__} "
                           "whose attribute is a slot or a descriptor of C code",
                           fix="assign the attribute by name (`obj.attr = value`)")
    obj.__dict__[name] = value


def delete_attribute(obj, name) -> None:
    """The builtin delattr, of an attribute holding no derivative (not differentiated)."""
    delattr(obj, name)


def ad_delattr(obj, name):
    """`delattr(obj, name)` of a name known only when it runs (`delattr(o, "k")` is lowered to `del o.k`): on
    an object that may hold a derivative it is refused (the cotangents the name's later reads gave would go
    to the deleted value); else run as it is."""
    if carries_derivative(obj):
        raise OverdubError(f"delattr(obj, {name!r}) with a name computed at run time, on a {type(obj).__name__} "
                           "that may hold a differentiated value",
                           fix="delete it by name (`del obj.attr`), or set it to a new value")
    delete_attribute(obj, name)


def ad_methodcaller(items, obj):
    """`operator.methodcaller(name, *args)(obj)` as the method call it stands for."""
    if not items:
        raise OverdubError("operator.methodcaller with keyword arguments, called on a differentiated value",
                           fix="call the method (`obj.name(...)`)")
    return getattr(obj, items[0])(*items[1:])


class Deque(collections.deque):
    """`collections.deque` made in differentiated code, as Python over a list (its items): reverse mode follows a
    list's changes, not those of the C deque, whose methods have no rules (`d.appendleft(x)`, a moving window
    `deque(maxlen=k)`: refused, gen21's 153 programs). A subclass, so that `isinstance(d, deque)` holds; the C
    part stays empty and keeps `maxlen`. C code that reads a deque's storage itself (a rare few: `deque.__init__`
    by name) sees it empty."""

    def __init__(self, iterable=(), maxlen=None):
        collections.deque.__init__(self, (), maxlen)
        self._items = []
        for v in iterable:
            self.append(v)

    def _trim_left(self):
        m = self.maxlen
        while m is not None and len(self._items) > m:
            self._items.pop(0)

    def _trim_right(self):
        m = self.maxlen
        while m is not None and len(self._items) > m:
            self._items.pop()

    def append(self, v):
        self._items.append(v)
        self._trim_left()

    def appendleft(self, v):
        self._items.insert(0, v)
        self._trim_right()

    def extend(self, iterable):
        for v in list(iterable):  # (`d.extend(d)`: its items as they were)
            self.append(v)

    def extendleft(self, iterable):
        for v in list(iterable):
            self.appendleft(v)

    def pop(self):
        if not self._items:
            raise IndexError("pop from an empty deque")
        return self._items.pop()

    def popleft(self):
        if not self._items:
            raise IndexError("pop from an empty deque")
        return self._items.pop(0)

    def rotate(self, n=1):
        k = len(self._items)
        if k:
            n %= k
            if n:
                self._items[:] = self._items[k - n:] + self._items[:k - n]

    def clear(self):
        self._items.clear()

    def count(self, v):
        return self._items.count(v)

    def index(self, v, *bounds):
        return self._items.index(v, *bounds)

    def insert(self, i, v):
        if self.maxlen is not None and len(self._items) >= self.maxlen:
            raise IndexError("deque already at its maximum size")
        self._items.insert(i, v)

    def remove(self, v):
        self._items.remove(v)

    def reverse(self):
        self._items.reverse()

    def copy(self):
        return ad_deque(self._items, self.maxlen)

    __copy__ = copy

    def __deepcopy__(self, memo):
        import copy
        return ad_deque(copy.deepcopy(self._items, memo), self.maxlen)

    def __len__(self):
        return len(self._items)

    def __bool__(self):
        return bool(self._items)

    def __iter__(self):
        return iter(self._items)

    def __reversed__(self):
        return reversed(self._items)

    def __contains__(self, v):
        return v in self._items

    def __getitem__(self, i):
        if isinstance(i, slice):
            raise TypeError("sequence index must be integer, not 'slice'")
        return self._items[i]

    def __setitem__(self, i, v):
        if isinstance(i, slice):
            raise TypeError("sequence index must be integer, not 'slice'")
        self._items[i] = v

    def __delitem__(self, i):
        del self._items[i]

    def __iadd__(self, other):
        self.extend(other)
        return self

    def __add__(self, other):
        if not isinstance(other, collections.deque):
            raise TypeError(f'can only concatenate deque (not "{type(other).__name__}") to deque')
        return ad_deque(self._items + list(other), self.maxlen)

    def __eq__(self, other):
        return isinstance(other, collections.deque) and list(self) == list(other)

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def __repr__(self):
        inside = repr(self._items)
        return f"deque({inside})" if self.maxlen is None else f"deque({inside}, maxlen={self.maxlen})"

    def __reduce__(self):
        return collections.deque, (list(self._items), self.maxlen)


def ad_getitem(a, b):
    """`operator.getitem(a, b)`, `list.__getitem__(a, b)`: the subscript, which reverse mode follows (a C function
    without a rule: refused, gen22's 272 programs)."""
    return a[b]


def ad_setitem(a, b, c):
    a[b] = c


def ad_delitem(a, b):
    del a[b]


def ad_deque(iterable=(), maxlen=None):
    d = Deque((), maxlen)  # (made of constants alone: deque's C `__new__` sees no differentiated value)
    d.extend(iterable)
    return d


# a callable of these types stands for the function beside it, given its items (`__reduce__`'s)
GETTERS = {operator.itemgetter: ad_itemgetter, operator.attrgetter: ad_attrgetter,
           operator.methodcaller: ad_methodcaller}

REPLACEMENTS = {next: ad_next, map: ad_map, filter: ad_filter, zip: ad_zip, enumerate: ad_enumerate,
                sorted: ad_sorted,
                reversed: ad_reversed, functools.reduce: ad_reduce,
                itertools.accumulate: ad_accumulate, itertools.starmap: ad_starmap, itertools.product: ad_product,
                itertools.chain: ad_chain, itertools.chain.from_iterable: ad_chain_from_iterable,
                itertools.zip_longest: ad_zip_longest, itertools.compress: ad_compress,
                itertools.takewhile: ad_takewhile, itertools.dropwhile: ad_dropwhile, itertools.islice: ad_islice,
                itertools.groupby: ad_groupby, itertools.combinations: ad_combinations,
                itertools.combinations_with_replacement: ad_combinations_with_replacement,
                itertools.permutations: ad_permutations, itertools.tee: ad_tee}
if hasattr(itertools, "pairwise"):
    REPLACEMENTS[itertools.pairwise] = ad_pairwise
REPLACEMENTS[itertools.repeat] = ad_repeat
REPLACEMENTS[_np.fromiter] = ad_fromiter
REPLACEMENTS[_np.ndenumerate] = ad_ndenumerate
REPLACEMENTS[setattr] = ad_setattr
REPLACEMENTS[delattr] = ad_delattr
REPLACEMENTS[collections.deque] = ad_deque
REPLACEMENTS.update({operator.getitem: ad_getitem, operator.setitem: ad_setitem, operator.delitem: ad_delitem,
                     list.__getitem__: ad_getitem, tuple.__getitem__: ad_getitem, dict.__getitem__: ad_getitem})
