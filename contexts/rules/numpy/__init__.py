"""numpy (and scipy.special) rules, one module per domain; importing this package registers them all.

- `ufuncs`: elementwise ufuncs, `clip`, `where`, `real`/`imag`/`angle`, `sinc`, non-differentiable ones.
- `reductions`: `sum`, `mean`, `prod`, `max`/`min`, `var`/`std`, `cumsum`/`cumprod`, `nansum`/`nanmean`,
  `np.linalg.norm`, and the matching ndarray methods.
- `scipy_special`: `logsumexp`, `expit`, `logit`, `erf`, `gammaln`, `xlogy`, ... (only if scipy imports).
- `scipy_linalg`: the LAPACK routines under `solve_triangular`, `cholesky`, `cho_factor`, `cho_solve`.
- `linalg`, `shapes`, `indexing`: matmul and linear algebra, reshaping/joining, indexing.
- `convolution`: the C kernels under `np.correlate` and `np.convolve`.
- `fft`: `numpy.fft` and `scipy.fft` (fft, ifft, rfft, irfft, hfft, ihfft, their 2-D and N-D forms); `scipy.fftpack`'s
  complex ones (fft, ifft, fft2, ifft2, fftn, ifftn) as scipy.fft's.
- `random`: a seeded Generator's permutation, shuffle and choice of differentiated items (as indexing).
- `roots`: `np.roots` and `np.linalg.eigvals` (simple roots and eigenvalues).
- `scipy_banded`: `scipy.linalg.solve_banded`, `solveh_banded` (over ?gtsv, ?gbsv, ?ptsv, ?pbsv), and
  LAPACK's ?gbsv called directly (make_interp_spline).
- `scipy_splines`: the kernels under B-splines: `_dierckx.evaluate_spline` (BSpline), `_dierckx._coloc`
  (make_interp_spline), FITPACK `splev`/`splder` (splev, PPoly.from_spline).
- `scipy_fitpack`: FITPACK's curve fits (`curfit`: splrep; `fpcurf0`/`fpcurf1`/`fpcurfm1`: UnivariateSpline and its
  subclasses; `regrid_smth`: RectBivariateSpline; `splint`, `spalde`) in the data values, knots held fixed.
- `scipy_ppoly`: the kernels under PPoly, CubicSpline, PCHIP, Akima, BPoly (`_ppoly.evaluate`,
  `evaluate_bernstein`, `integrate`, `fix_continuity`).
- `scipy_spatial`: `scipy.spatial.distance.cdist`/`pdist` (euclidean, sqeuclidean) and `squareform`.
- `scipy_stats_parsers`: the source of scipy.stats' argument parsers (made by `exec` from a template each
  distribution keeps), for reverse mode to transform them.
- `scipy_kdtree`: scipy.spatial's k-d trees built from differentiated points: the search on values, `query`'s
  distances computed again as numpy code.
- `scipy_signal`: `scipy.signal.lfilter`'s IIR kernel `_sigtools._linear_filter` (in b, a, x and zi).
- `scipy_integrate`: `scipy.integrate.quad` by the Leibniz rule (and so `dblquad`, `tplquad`, `nquad`).
- `scipy_ivp`: `solve_ivp`'s Runge-Kutta step-size control, held constant (the steps chosen on the values).
- `scipy_ndimage`: scipy.ndimage's line filters `_nd_image.correlate1d` and `uniform_filter1d` (gaussian,
  uniform, sobel, prewitt, convolve1d filters), written into their output arrays.
- `scipy_sparse`: scipy.sparse's matrix-vector kernels under `A @ x` (`csr_matvec` and kin), as numpy code;
  `scipy.sparse.linalg.spsolve`.
- `scipy_matrices`: `scipy.linalg.toeplitz`, `circulant`, `hankel` as numpy gathers.
- `scipy_rotation`: scipy.spatial.transform's Rotation and RigidTransform, their Cython kernels run as scipy's
  own array-API twins (`_rotation_xp`, `_rigid_transform_xp`).
- `scipy_special_dist`: scipy.special's private distribution kernels under scipy.stats (`_binom_cdf`, `_beta_pdf`,
  `_skewnorm_cdf`, `_ncx2_pdf`, `_log1mexp`, ...) in their continuous parameters; counts and shapes refused.
- `scipy_kde`: gaussian_kde's kernels (`_stats.gaussian_kernel_estimate` and `_log`) as numpy code.
- `scipy_rank`: scipy.ndimage's 1-D rank filter kernel (median_filter, medfilt) as numpy code.
- `scipy_minmax`: scipy.ndimage's 1-D minimum/maximum filter kernel (maximum_filter, minimum_filter with a
  size) as numpy code.
- `scipy_grid`: the compiled helpers under `RegularGridInterpolator`/`interpn` (`find_indices`,
  `evaluate_linear_2d`, `_ndim_coords_from_arrays`) as numpy code.
- `scipy_peaks`: scipy.signal's peak kernels (under `find_peaks`, `peak_prominences`, `peak_widths`): the
  prominences and widths as the Python code they compute, the peaks' indices without a derivative.

Attributes are not calls: `x.T` reaches the rules as `(np.ndarray, 'transpose')` only when called.
"""

from __future__ import annotations

import importlib

from . import conversion, convolution, counting, creation, fft, inplace, interpolation, random, reductions, roots, stand_ins, ufuncs

__all__ = ["ufuncs", "reductions", "creation", "conversion", "convolution", "counting", "fft", "inplace",
           "interpolation", "random", "roots"]

for _name in ("linalg", "shapes", "indexing", "scipy_special", "scipy_special_more", "scipy_linalg", "scipy_banded", "scipy_splines",
              "scipy_ppoly", "scipy_spatial", "scipy_kdtree", "scipy_integrate", "scipy_ivp", "scipy_signal", "scipy_ndimage", "scipy_sparse",
              "scipy_matrices", "scipy_grid", "scipy_fitpack", "scipy_rotation", "scipy_kde", "scipy_rank", "scipy_minmax",
              "scipy_peaks", "scipy_special_dist", "scipy_stats_parsers", "matrix", "masked", "scipy_dct"):
    try:  # written in parallel; scipy is optional
        globals()[_name] = importlib.import_module(f"{__name__}.{_name}")
        __all__.append(_name)
    except ImportError as e:
        if e.name not in (f"{__name__}.{_name}", "scipy", "scipy.special", "scipy.linalg", "scipy.spatial", "scipy.interpolate",
                          "scipy.integrate", "scipy.integrate._ivp", "scipy.signal", "scipy.ndimage",
                          "scipy.spatial.transform", "scipy.spatial.transform._rotation_cy",
                          "scipy.spatial.transform._rotation_xp", "scipy.stats", "scipy.stats._stats"):
            raise
