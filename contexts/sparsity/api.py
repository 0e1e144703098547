"""Sparsity detection and sparse Jacobians: the public entry points."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from overdub.errors import OverdubError

from ..lowered.bisection import check_entry
from ..rules import leaves as _leaf_types
from ..rules.leaves import container_of
from .pattern import Pattern
from .tracer import NoSparsityRule, Tracer

__all__ = ["jacobian_sparsity", "hessian_sparsity", "color_columns", "sparse_jacobian", "plot_sparsity"]

_MODES = ("global", "local")


def _trace(f: Callable, x: Any, mode: str, order: int) -> tuple[Any, int]:
    """Run f on a tracer for x under a fresh SparsityContext; (output, number of inputs)."""
    from .context import sparsity_context

    if mode not in _MODES:
        raise OverdubError(f"unknown sparsity mode {mode!r}", fix='use mode="global" or mode="local"')
    if _leaf_types.HOSTED and _leaf_types.holds_hosted((x,)):  # (a torch tensor: its tracer would answer with
        raise _leaf_types.hosted_refused("an input", "sparsity detection")  # numpy's methods)
    given, container = x, container_of(x)
    if container is not None and (container.values is None or container.rebuild is None):
        container = None
    x = _real_input(container.values(x) if container is not None else x)
    n = x.size
    H = Pattern.empty(n, n * n) if order == 2 else None
    primal = x.copy() if mode == "local" else None
    if primal is not None and primal.ndim == 0:
        primal = primal[()]
    t = Tracer(x.shape, Pattern.identity(n), H, primal, order)
    check_entry(f, "sparsity detection")
    if container is not None:  # (an xarray DataArray, an array_api_strict Array: the tracer in its values' place)
        t = container.rebuild(given, t)
    try:
        return sparsity_context().run(f, t), n
    except ValueError as e:
        if "setting an array element with a sequence" not in str(e):
            _unfollowed(e, f, x)
            raise
        # numpy's words for a tracer stored into a plain float array the function made (`np.zeros(n)`)
        raise NoSparsityRule(
            f"{getattr(f, '__qualname__', f)!s} stored a traced value into a plain numpy array it made, "
            "which cannot hold the value's dependencies",
            where=_user_line(e, f),
            fix="make that array from the input (`np.zeros_like(x)`, `x * 0.0`, `x.copy()`), not `np.zeros(n)`"
        ) from e
    except (TypeError, IndexError, AttributeError, KeyError, RecursionError) as e:
        _unfollowed(e, f, x)
        raise


def _unfollowed(e: BaseException, f: Callable, x: np.ndarray) -> None:
    """An error of the tracing that the plain call does not raise (a library's code asking of a tracer what
    only a value can answer: `sp.diags(u)`'s, `np.resize`'s, `np.bincount`'s): refused as such, naming the
    user's line, rather than left as the library's own error (sp43 C2, C6)."""
    if isinstance(e, OverdubError):
        return
    try:
        f(x.copy())
    except Exception:  # noqa: BLE001 - the plain call fails too: the function's own error, as it is
        return
    raise NoSparsityRule(
        f"sparsity detection cannot follow {getattr(f, '__qualname__', f)!s}: on traced values it raised "
        f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}, which the plain call does not",
        where=_user_line(e, f),
        fix="use mode='local' where the code asks values of the inputs, or give the library function a sparsity "
            "rule (`contexts.rules.registry.srule`)") from e


def _user_line(e: BaseException, f: Callable) -> str | None:
    """file:line of the innermost frame of e in f's own file (where the store happened)."""
    filename = getattr(getattr(f, "__code__", None), "co_filename", None)
    tb, found = e.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            found = f"{filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found


def _flatten(y: Any) -> list:
    container = container_of(y) if not isinstance(y, (Tracer, np.ndarray)) else None
    if container is not None and container.held is not None:  # (a container output is its values)
        return _flatten(container.held(y))
    if isinstance(y, (list, tuple)):
        return [v for item in y for v in _flatten(item)]
    if isinstance(y, dict):
        return [v for item in y.values() for v in _flatten(item)]
    return [y]


def _output_patterns(y: Any, n: int, order: int) -> tuple[Pattern, Pattern | None]:
    """First- (and second-) order patterns of every output element, in order."""
    Ps, Hs = [], []
    for item in _flatten(y):
        size = item.size if isinstance(item, Tracer) else int(np.size(item))
        P = item.P if isinstance(item, Tracer) and item.P is not None else None
        Ps.append(P if P is not None else Pattern.empty(size, n))
        if order == 2:
            H = item.H if isinstance(item, Tracer) and item.H is not None else None
            Hs.append(H if H is not None else Pattern.empty(size, n * n))
    if not Ps:
        return Pattern.empty(0, n), (Pattern.empty(0, n * n) if order == 2 else None)
    return Pattern.vstack(Ps), (Pattern.vstack(Hs) if order == 2 else None)


def jacobian_sparsity(f: Callable, x: Any, mode: str = "global") -> sp.csr_array:
    """The Jacobian sparsity pattern of f at x: a boolean CSR array of shape (outputs, inputs).

    mode="global": valid for every x (no primal values; branching on an input-dependent value raises
    `TracedBranchError`); mode="local": valid at this x, following the branches taken there.
    Outputs are f's result flattened (arrays in C order; lists/tuples of them concatenated).

    >>> import numpy as np
    >>> P = jacobian_sparsity(lambda x: x[1:] - x[:-1] ** 2, np.ones(4))
    >>> P.toarray().astype(int)
    array([[1, 1, 0, 0],
           [0, 1, 1, 0],
           [0, 0, 1, 1]])
    """
    y, n = _trace(f, x, mode, 1)
    return _output_patterns(y, n, 1)[0].to_csr()


def hessian_sparsity(f: Callable, x: Any, mode: str = "global") -> sp.csr_array:
    """The Hessian sparsity pattern of scalar f at x: a symmetric boolean CSR array (inputs, inputs).

    For a vector-valued f, the union of its outputs' Hessian patterns.

    >>> import numpy as np
    >>> hessian_sparsity(lambda x: x[0] * x[1] + x[2] ** 3, np.ones(3)).toarray().astype(int)
    array([[0, 1, 0],
           [1, 0, 0],
           [0, 0, 1]])
    """
    y, n = _trace(f, x, mode, 2)
    _, H = _output_patterns(y, n, 2)
    keys = H.any_rows().indices
    i, j = np.divmod(keys, n)
    rows, cols = np.concatenate([i, j]), np.concatenate([j, i])
    return sp.csr_array((np.ones(len(rows), bool), (rows, cols)), shape=(n, n))


def color_columns(pattern) -> np.ndarray:
    """Greedy distance-1 colouring of the column intersection graph: columns sharing a row get
    different colours, so one Jacobian-vector product per colour recovers every entry.

    Returns the colour (0, 1, ...) of each column; `colors.max() + 1` colours in all.

    >>> import scipy.sparse as sp
    >>> color_columns(sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(5, 5))).tolist()
    [0, 1, 2, 0, 1]
    """
    P = sp.csr_array(pattern, dtype=bool)
    conflicts = (P.T @ P).tocsr()
    indptr, neighbours = conflicts.indptr.tolist(), conflicts.indices.tolist()
    n = P.shape[1]
    colors = [-1] * n
    forbidden = [-1] * (n + 1)  # forbidden[c] == j: colour c is taken by a neighbour of column j
    for j in range(n):
        for k in neighbours[indptr[j]:indptr[j + 1]]:
            if colors[k] >= 0:
                forbidden[colors[k]] = j
        c = 0
        while forbidden[c] == j:
            c += 1
        colors[j] = c
    colors = np.asarray(colors, dtype=np.int64)
    return colors


def _real_input(x) -> np.ndarray:
    """x as a float array; a complex x is refused (cast to float, its imaginary part was dropped with only a
    ComplexWarning: f traced at another point, sp43 W3)."""
    if np.iscomplexobj(x):
        raise OverdubError("sparsity detection takes a real input; x is complex",
                           fix="pass the real and imaginary parts as one real vector (np.concatenate([x.real, "
                               "x.imag])) and rebuild the complex values inside f")
    return np.asarray(x, dtype=float)


def sparse_jacobian(f: Callable, x: Any, pattern=None, *, colors: np.ndarray | None = None,
                    full_output: bool = False):
    """The Jacobian of f at x as a CSR array, from its sparsity pattern (detected when not given), a
    column colouring and one forward-mode Jacobian-vector product per colour.

    With full_output=True returns (J, info) where info has 'colors', 'ncolors' and 'pattern'.

    >>> import numpy as np
    >>> J = sparse_jacobian(lambda x: x[1:] * x[:-1], np.arange(1.0, 5.0))
    >>> J.toarray()
    array([[2., 1., 0., 0.],
           [0., 3., 2., 0.],
           [0., 0., 4., 3.]])
    """
    from contexts.forward import jvp

    x = _real_input(x)
    P = jacobian_sparsity(f, x) if pattern is None else sp.csr_array(pattern, dtype=bool)
    if P.shape[1] != x.size:
        raise OverdubError(f"pattern has {P.shape[1]} columns but x has {x.size} elements",
                           fix="pass the pattern of this f at an x of the same size")
    colors = color_columns(P) if colors is None else np.asarray(colors)
    ncolors = int(colors.max()) + 1 if len(colors) else 0
    rows = []
    for c in range(ncolors):
        seed = (colors == c).astype(float).reshape(x.shape)
        _, dy = jvp(f, (x.copy(),), (seed,))  # (a copy each time: f may write into its argument)
        rows.append(np.concatenate([np.ravel(np.asarray(d)) for d in _flatten(dy)]))
    # (a complex f's Jacobian is complex: cast to float, its imaginary parts were dropped, sp43 W2)
    complex_ = any(np.iscomplexobj(r) for r in rows)
    products = np.zeros((ncolors, P.shape[0]), dtype=complex if complex_ else float)
    for c, r in enumerate(rows):
        products[c] = r
    coo = P.tocoo()
    data = products[colors[coo.col], coo.row]
    J = sp.csr_array((data, (coo.row, coo.col)), shape=P.shape)
    if full_output:
        return J, {"colors": colors, "ncolors": ncolors, "pattern": P}
    return J


def plot_sparsity(pattern, path, title: str | None = None, markersize: float | None = None):
    """Save a `spy` plot of a sparsity pattern to a PNG file (matplotlib, Agg backend); returns path.

    >>> import os, tempfile, scipy.sparse as sp
    >>> out = plot_sparsity(sp.eye_array(10), os.path.join(tempfile.mkdtemp(), "eye.png"))
    >>> os.path.exists(out)
    True
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    P = sp.csr_array(pattern)
    fig, ax = plt.subplots(figsize=(6, 6 * min(3.0, max(0.3, P.shape[0] / max(P.shape[1], 1)))))
    ax.spy(P, markersize=markersize or max(0.2, min(6.0, 150 / max(P.shape))))
    ax.set_title(title or f"{P.shape[0]} x {P.shape[1]}, {P.nnz} nonzeros")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path
