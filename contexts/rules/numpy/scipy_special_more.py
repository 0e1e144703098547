"""More rules for scipy.special's ufuncs (session 37): the orthogonal polynomials `eval_*`, Airy (`airy`, `airye`,
`itairy`), Hankel (`hankel1`, `hankel2`, `hankel1e`, `hankel2e`), Kelvin (`ber`, `bei`, `ker`, `kei`, their
derivatives `berp`..., `kelvin`), `kn`, `agm`, Carlson's integrals (`elliprc`, `elliprd`, `elliprf`, `elliprg`,
`elliprj`), the integrals of Bessel and Struve functions (`itj0y0`, `it2j0y0`, `iti0k0`, `it2i0k0`, `itstruve0`,
`it2struve0`, `itmodstruve0`), `modfresnelp`/`modfresnelm`, the parabolic cylinder functions `pbdv`, `pbvv`, `pbwa`,
Mathieu's functions in x, `lpmv`, `besselpoly`, `wright_bessel`, `log_wright_bessel`, `powm1`, `radian`, `tklmbda`,
and the distribution functions and inverses with a closed-form derivative in their variable or probability (`bdtr`,
`bdtrc`, `bdtri`, `nbdtr`, `nbdtrc`, `nbdtri`, `pdtr`, `pdtrc`, `pdtri`, `fdtr`, `fdtrc`, `fdtri`, `chdtri`,
`gdtria`, `gdtrix`, `stdtrit`, `nrdtrimn`, `nrdtrisd`, `chndtr`, `chndtrix`, `chndtrinc`, `kolmogorov`, `kolmogi`,
`smirnov`, `smirnovi`). `round` is non-differentiable.

In a shape, numerically (`scipy_special_shape`'s partials, to 1e-10 or refused, no second derivative): `fdtr`,
`fdtrc` in dfn and dfd (`_f_dn_kernel`: one integral of one-signed pieces, not dI/da + g du/dn, which
cancels), `fdtri` (dfn, dfd), `chdtri` (v), `gdtrix`, `gdtria` (b), `stdtrit` (df) by the implicit function
theorem; the inverses that solve for a shape, in every argument: `chdtriv`, `gdtrib`, `stdtridf`, `fdtridfd`,
`btdtria`, `btdtrib` (1 / F_v, -F_x / F_v at scipy's solution checked and moved onto the root, `_root`: refused
where it is not one, as fdtridfd's 1e100 for 0.5, or where F moves too little with v to fix it).

Derivatives are closed forms through functions that have rules themselves (hessian, forward over reverse,
differentiates the partials again), except `agm`, `elliprd` and `elliprj`, whose partials are their iterations
(the AGM, Carlson's duplication) differentiated in numpy, exact to rounding also where arguments meet, and the
Kolmogorov-Smirnov ones (scipy's private derivative kernels `_kolmogp`, `_smirnovp`: hessian refuses there).
Orders, degrees, shapes and degrees of freedom (the degree n of `eval_*`, a Bessel order, `alpha`/`beta`,
a count k or n, the noncentral ones' df, ...; the shapes above aside) are `NoClosedForm`: refused where
differentiated, never a zero. Counts that scipy truncates (k of `bdtr`, n of `kn`) are truncated in the
derivatives too, as `scipy_special`'s `yn` and `expn` do.

Refused by the rules: `modfresnelp`/`modfresnelm` at x < 0 (scipy's values there are not the integrals), complex
`airye` (its Bi parts are not holomorphic), `elliprj` at a real p < 0 (a principal value).
Not covered (no rule: refused by name as before): the inverses in a count or a noncentral shape (`bdtrik`,
`bdtrin`, `chndtridf`, `nbdtrik`, `nbdtrin`, `pdtrik`), the noncentral F and t (`ncfdtr*`, `nctdtr*`), `zetac` (its
only argument is the zeta's s), `mathieu_a`/`mathieu_b` and the spheroidal functions (`pro_*`, `obl_*`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from ..registry import NoClosedForm, registry
from ._util import unsupported
from .scipy_special import _beta_density, _gamma_density, _inverse, _numerical, shape_rule
from .scipy_special_shape import (_CHUNK, TOLERANCE, Numerical, _de, _map, _quad, _scaled, betainc_da, betainc_db,
                                  gammainc_da, stdtr_ddf)
from ..generic import dropped_nan_zero
from .ufuncs import _fit, conj, inexact, match_primal, ufunc_rule


__all__: list[str] = []

_SQRT_PI = math.sqrt(math.pi)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


def _no(name: str, *arguments: str, at: int = 0) -> tuple:
    """The refused partials of arguments at positions at, at + 1, ..."""
    return tuple(NoClosedForm(f"scipy.special.{name}", a, at + i) for i, a in enumerate(arguments))


def _where0(x, at_zero, ratio_num):
    """ratio_num / x, with the value `at_zero` (its limit) where x == 0."""
    x = np.asarray(x)
    safe = np.where(x == 0, 1.0, x)
    return np.where(x == 0, at_zero, ratio_num / safe)


# -- functions with several outputs: their partials as one tuple (a partial per output) per argument -----------

def multi_output_rule(fn, name: str, *partials, real_only: bool = False) -> None:
    """Adjoint and frule of an elementwise fn with several differentiable outputs (airy, kelvin, pbdv, ...).

    `partials[i](y, *args)` returns a tuple with d y_k / d args[i] for every output k (None where the output does
    not depend on it); `None` for an argument without a derivative, `NoClosedForm` for one refused. Complex
    arguments are differentiated as holomorphic (the cotangent `dy * conj(partial)`); `real_only` refuses them."""
    def check(args):
        if real_only and any(np.iscomplexobj(a) for a in args):
            raise unsupported(f"scipy.special.{name}", "a complex argument (the function is not holomorphic)",
                              "differentiate its real and imaginary parts separately, or the unscaled function")

    def adjoint(dy, y, *args, **kwargs):
        if dy is None or all(d is None for d in dy):
            return (None,) * len(args)
        check(args)
        cts = []
        for p, a in zip(partials, args):
            if p is None or not inexact(a):
                cts.append(None)
            elif type(p) is NoClosedForm:
                cts.append(p.cotangent())
            else:
                g = None
                for d, pk, yk in zip(dy, p(y, *args), y):
                    if d is None or pk is None:
                        continue
                    term = dropped_nan_zero(d * conj(pk), d, yk)
                    g = term if g is None else g + term
                cts.append(None if g is None else match_primal(g, a))
        return tuple(cts) + (None,) * (len(args) - len(cts))

    def frule(tangents, *args, **kwargs):
        y = fn(*args, **kwargs)
        total = None
        for p, t, a in zip(partials, tangents, args):
            if t is None or p is None:
                continue
            if type(p) is NoClosedForm:
                if p.refuses(t, a):
                    raise p.error()
                continue
            check(args)
            terms = [None if pk is None else t * pk for pk in p(y, *args)]
            total = terms if total is None else [u if v is None else v if u is None else u + v
                                                 for u, v in zip(total, terms)]
        if total is None:
            return y, None
        return y, tuple(None if t is None else _fit(t, yk) for t, yk in zip(total, y))

    adjoint.__name__ = adjoint.__qualname__ = f"{name}_adjoint"
    frule.__name__ = frule.__qualname__ = f"{name}_frule"
    registry.adjoint(fn, kind="elementwise")(adjoint)
    registry.frule(fn, kind="elementwise")(frule)


# -- orthogonal polynomials: in x by the derivative identities (valid for a real degree n too, where scipy
# evaluates them by hypergeometric functions); the degree and the parameters refused ----------------------------

def _dlegendre(n, x):
    """P_n'(x) = C^(3/2)_{n-1}(x); P_n = P_{-n-1} for every real n (scipy's convention for negative n)."""
    n = np.asarray(n)
    m = np.where(n < -0.5, -n - 1, n)
    return sc.eval_gegenbauer(m - 1, 1.5, x)


def _dchebyt(n, x):
    """T_n'(x) = n U_{n-1}(x)."""
    return n * sc.eval_chebyu(np.asarray(n) - 1, x)


def _dchebyu(n, x):
    """U_n'(x) = 2 C^(2)_{n-1}(x); U_n = -U_{-n-2} (reflected first: the Gegenbauer of a negative degree is 0)."""
    n = np.asarray(n)
    reflect = n < -1
    m = np.where(reflect, -n - 2, n)
    return np.where(reflect, -2.0, 2.0) * sc.eval_gegenbauer(m - 1, 2.0, x)


ufunc_rule(sc.eval_legendre, *_no("eval_legendre", "n"), lambda y, n, x: _dlegendre(n, x), name="eval_legendre")
ufunc_rule(sc.eval_sh_legendre, *_no("eval_sh_legendre", "n"), lambda y, n, x: 2 * _dlegendre(n, 2 * x - 1),
           name="eval_sh_legendre")
ufunc_rule(sc.eval_chebyt, *_no("eval_chebyt", "n"), lambda y, n, x: _dchebyt(n, x), name="eval_chebyt")
ufunc_rule(sc.eval_chebyu, *_no("eval_chebyu", "n"), lambda y, n, x: _dchebyu(n, x), name="eval_chebyu")
ufunc_rule(sc.eval_chebyc, *_no("eval_chebyc", "n"), lambda y, n, x: _dchebyt(n, x / 2), name="eval_chebyc")
ufunc_rule(sc.eval_chebys, *_no("eval_chebys", "n"), lambda y, n, x: 0.5 * _dchebyu(n, x / 2), name="eval_chebys")
ufunc_rule(sc.eval_sh_chebyt, *_no("eval_sh_chebyt", "n"), lambda y, n, x: 2 * _dchebyt(n, 2 * x - 1),
           name="eval_sh_chebyt")
ufunc_rule(sc.eval_sh_chebyu, *_no("eval_sh_chebyu", "n"), lambda y, n, x: 2 * _dchebyu(n, 2 * x - 1),
           name="eval_sh_chebyu")
ufunc_rule(sc.eval_gegenbauer, *_no("eval_gegenbauer", "n", "alpha"),
           lambda y, n, alpha, x: 2 * alpha * sc.eval_gegenbauer(np.asarray(n) - 1, alpha + 1, x),
           name="eval_gegenbauer")
ufunc_rule(sc.eval_jacobi, *_no("eval_jacobi", "n", "alpha", "beta"),
           lambda y, n, a, b, x: (n + a + b + 1) / 2 * sc.eval_jacobi(np.asarray(n) - 1, a + 1, b + 1, x),
           name="eval_jacobi")


def _dsh_jacobi(y, n, p, q, x):
    """G_n^(p,q)(x) = P_n^(p-q, q-1)(2x - 1) / binom(2n + p - 1, n): (n + p) P_{n-1}^(p-q+1, q)(2x - 1) / binom."""
    return (n + p) * sc.eval_jacobi(np.asarray(n) - 1, p - q + 1, q, 2 * x - 1) / sc.binom(2 * n + p - 1, n)


ufunc_rule(sc.eval_sh_jacobi, *_no("eval_sh_jacobi", "n", "p", "q"), _dsh_jacobi, name="eval_sh_jacobi")
# Hermite (integer degrees only): H_n' = 2n H_{n-1}, He_n' = n He_{n-1} (H_{-1} is NaN in scipy: n = 0 gives 0)
ufunc_rule(sc.eval_hermite, *_no("eval_hermite", "n"),
           lambda y, n, x: 2 * n * sc.eval_hermite(np.maximum(np.asarray(n) - 1, 0), x), name="eval_hermite")
ufunc_rule(sc.eval_hermitenorm, *_no("eval_hermitenorm", "n"),
           lambda y, n, x: n * sc.eval_hermitenorm(np.maximum(np.asarray(n) - 1, 0), x), name="eval_hermitenorm")
# Laguerre: d/dx L_n^(a) = -L_{n-1}^(a+1)
ufunc_rule(sc.eval_laguerre, *_no("eval_laguerre", "n"),
           lambda y, n, x: np.where(np.asarray(n) == 0, 0.0, -sc.eval_genlaguerre(np.asarray(n) - 1, 1.0, x)),
           name="eval_laguerre")
ufunc_rule(sc.eval_genlaguerre, *_no("eval_genlaguerre", "n", "alpha"),
           lambda y, n, a, x: np.where(np.asarray(n) == 0, 0.0, -sc.eval_genlaguerre(np.asarray(n) - 1, a + 1, x)),
           name="eval_genlaguerre")


# -- Airy functions: Ai'' = z Ai, Bi'' = z Bi --------------------------------------------------------------------

multi_output_rule(sc.airy, "airy", lambda y, z: (y[1], z * y[0], y[3], z * y[2]))


def _airye_partials(y, x):
    """eAi = Ai e^(2/3 x^1.5), eBi = Bi e^(-|Re 2/3 x^1.5|), and their derivatives scaled alike: for real x
    (eAi is NaN below 0, where eBi is Bi)."""
    s = np.sqrt(np.maximum(x, 0.0))
    ea, eap, eb, ebp = y
    return eap + s * ea, x * ea + s * eap, ebp - s * eb, x * eb - s * ebp


multi_output_rule(sc.airye, "airye", _airye_partials, real_only=True)
# integrals from 0 to x of Ai(t), Bi(t), Ai(-t), Bi(-t)
multi_output_rule(sc.itairy, "itairy", lambda y, x: _itairy(x))


def _itairy(x):
    ai, _, bi, _ = sc.airy(x)
    ain, _, bin_, _ = sc.airy(-x)
    return ai, bi, ain, bin_


# -- Hankel functions: in z by the Bessel recurrence; the order refused ---------------------------------------

_H = 0.5
ufunc_rule(sc.hankel1, *_no("hankel1", "v"), lambda y, v, z: _H * (sc.hankel1(v - 1, z) - sc.hankel1(v + 1, z)),
           name="hankel1")
ufunc_rule(sc.hankel2, *_no("hankel2", "v"), lambda y, v, z: _H * (sc.hankel2(v - 1, z) - sc.hankel2(v + 1, z)),
           name="hankel2")
ufunc_rule(sc.hankel1e, *_no("hankel1e", "v"),  # H1 e^(-iz)
           lambda y, v, z: _H * (sc.hankel1e(v - 1, z) - sc.hankel1e(v + 1, z)) - 1j * y, name="hankel1e")
ufunc_rule(sc.hankel2e, *_no("hankel2e", "v"),  # H2 e^(iz)
           lambda y, v, z: _H * (sc.hankel2e(v - 1, z) - sc.hankel2e(v + 1, z)) + 1j * y, name="hankel2e")
# K_n of an integer order (truncated, as kn does)
ufunc_rule(sc.kn, *_no("kn", "n"),
           lambda y, n, x: -_H * (sc.kv(np.trunc(n) - 1, x) + sc.kv(np.trunc(n) + 1, x)), name="kn")


# -- Kelvin functions: ber + i bei = I0(x e^(i pi/4)), ker + i kei = K0(x e^(i pi/4)): w'' = i w - w' / x -----------

ufunc_rule(sc.ber, lambda y, x: sc.berp(x), name="ber")
ufunc_rule(sc.bei, lambda y, x: sc.beip(x), name="bei")
ufunc_rule(sc.ker, lambda y, x: sc.kerp(x), name="ker")
ufunc_rule(sc.kei, lambda y, x: sc.keip(x), name="kei")
ufunc_rule(sc.berp, lambda y, x: -sc.bei(x) - _where0(x, 0.0, y), name="berp")   # berp ~ -x^3 / 16
ufunc_rule(sc.beip, lambda y, x: sc.ber(x) - _where0(x, 0.5, y), name="beip")    # beip ~ x / 2
ufunc_rule(sc.kerp, lambda y, x: -sc.kei(x) - y / x, name="kerp")
ufunc_rule(sc.keip, lambda y, x: sc.ker(x) - y / x, name="keip")


def _kelvin_partials(y, x):
    be, ke, bep, kep = y
    bep_x = _where0(x, 0.5j, bep)  # (bep ~ i x / 2 at 0)
    return bep, kep, 1j * be - bep_x, 1j * ke - kep / x


multi_output_rule(sc.kelvin, "kelvin", _kelvin_partials)


# -- the arithmetic-geometric mean: its partials by the iteration differentiated --------------------------------

def _agm_partials(a, b):
    """(dM/da, dM/db) of M = agm(a, b) (a, b of one sign; M(-a, -b) = -M(a, b) has the same partials), by
    a_{k+1} = (a_k + b_k) / 2, b_{k+1} = sqrt(a_k b_k) and their derivatives (quadratic convergence: a fixed
    number of rounds, no test on the values)."""
    x, y = np.abs(a) + 0.0 * b, np.abs(b) + 0.0 * a
    xa, xb, ya, yb = 1.0, 0.0, 0.0, 1.0
    for _ in range(20):  # (a ratio b / a of 1e-300 converges in 14)
        rx, ry = np.sqrt(x), np.sqrt(y)
        g = rx * ry
        xa, xb, ya, yb = ((xa + ya) / 2, (xb + yb) / 2, (xa * y + x * ya) / (2 * g), (xb * y + x * yb) / (2 * g))
        x, y = (x + y) / 2, g
    return (xa + ya) / 2, (xb + yb) / 2


ufunc_rule(sc.agm, lambda y, a, b: _agm_partials(a, b)[0], lambda y, a, b: _agm_partials(a, b)[1], name="agm")


# -- Carlson's symmetric integrals (DLMF 19.18.1, and R_G's by 19.18.4-5): R_F, R_C = R_F(x, y, y), R_G ---------

_ROUNDS = 18


def _add(*terms):
    """The sum of the terms that are not None (None: a derivative known to be zero), or None."""
    terms = [t for t in terms if t is not None]
    return None if not terms else sum(terms[1:], terms[0])


def _mul(t, f):
    return None if t is None else t * f


def _elliprd_partial(k):
    """dR_D/d(x, y, z)[k] by Carlson's duplication differentiated: R_D(x, y, z) = R_D(x', y', z') / 4
    + 3 / (sqrt z (z + lam)), x' = (x + lam) / 4 (y', z' alike), lam = sqrt x sqrt y + sqrt x sqrt z + sqrt y sqrt z.
    After 18 rounds the arguments agree to 4^-18 of their size, where R_D = A^(-3/2) to 4^-36 (A their mean
    (x + y + 3z) / 5: the first-order term of its series is 0):
    the derivative is exact to rounding, also where arguments meet (where the divided differences of R_D that give
    it in closed form lose every digit). The tangent of the argument k only (0 for the others: None)."""
    def partial(r, x, y, z):
        v = [x, y, z]
        t = [None, None, None]
        t[k] = 1.0
        total = 0.0
        fac = 3.0
        for _ in range(_ROUNDS):
            s = [np.sqrt(u) for u in v]
            ds = [None if dt is None else dt / (2 * su) for dt, su in zip(t, s)]
            lam = s[0] * s[1] + s[0] * s[2] + s[1] * s[2]
            dlam = _add(_mul(ds[0], s[1] + s[2]), _mul(ds[1], s[0] + s[2]), _mul(ds[2], s[0] + s[1]))
            w = s[2] * (v[2] + lam)
            dw = _add(_mul(ds[2], v[2] + lam), _mul(_add(t[2], dlam), s[2]))
            if dw is not None:
                total = total - fac * dw / (w * w)
            fac = fac / 4
            v = [(u + lam) / 4 for u in v]
            t = [None if dt is None and dlam is None else _add(dt, dlam) / 4 for dt in t]
        a = (v[0] + v[1] + 3 * v[2]) / 5
        da = _add(t[0], t[1], _mul(t[2], 3.0)) / 5
        return total - 1.5 * fac / 3 * da / (a * np.sqrt(a) * a)  # fac / 3 is 4^-rounds now
    return partial


ufunc_rule(sc.elliprd, _elliprd_partial(0), _elliprd_partial(1), _elliprd_partial(2), name="elliprd")


def _elliprj_partial(k):
    """dR_J/d(x, y, z, p)[k] by the duplication R_J(x, y, z, p) = R_J(x', y', z', p') / 4
    + 6 / d R_C(1, 1 + delta / d^2) differentiated (d = (sqrt p + sqrt x)(sqrt p + sqrt y)(sqrt p + sqrt z),
    delta = (p - x)(p - y)(p - z), x' = (x + lam) / 4, ..., as for R_D; dR_C(1, u)/du = -R_D(1, u, u) / 3).
    A real p < 0 (a Cauchy principal value, which the duplication does not reach) refused."""
    def partial(r, x, y, z, p):
        if not np.iscomplexobj(p) and np.any(np.asarray(p) < 0):
            raise unsupported("scipy.special.elliprj", "p < 0 (a principal value)", "differentiate it at p > 0, "
                              "or through its transformation to p > 0 (DLMF 19.20.14)")
        v = [x, y, z, p]
        t = [None] * 4
        t[k] = 1.0
        total = 0.0
        fac = 6.0
        for i in range(_ROUNDS):
            s = [np.sqrt(u) for u in v]
            ds = [None if dt is None else dt / (2 * su) for dt, su in zip(t, s)]
            lam = s[0] * s[1] + s[0] * s[2] + s[1] * s[2]
            dlam = _add(_mul(ds[0], s[1] + s[2]), _mul(ds[1], s[0] + s[2]), _mul(ds[2], s[0] + s[1]))
            f = [s[3] + s[i] for i in range(3)]
            df = [_add(ds[3], ds[i]) for i in range(3)]
            d = f[0] * f[1] * f[2]
            dd = _add(_mul(df[0], f[1] * f[2]), _mul(df[1], f[0] * f[2]), _mul(df[2], f[0] * f[1]))
            e = [v[3] - v[i] for i in range(3)]
            de = [_add(t[3], None if t[i] is None else -t[i]) for i in range(3)]
            delta = e[0] * e[1] * e[2]
            ddelta = _add(_mul(de[0], e[1] * e[2]), _mul(de[1], e[0] * e[2]), _mul(de[2], e[0] * e[1]))
            eps = delta / (d * d)
            u = 1 + eps
            du = _add(None if ddelta is None else ddelta / (d * d),
                     None if dd is None else -2 * delta * dd / (d * d * d))
            if np.max(np.abs(eps)) > 1e-4:
                rc, drc = sc.elliprc(1.0, u), -sc.elliprd(1.0, u, u) / 3
            else:  # R_C(1, 1 + eps) = sum (-eps)^k / (2k + 1): to 1e-21 (eps shrinks every round)
                rc = 1 + eps * (-1 / 3 + eps * (1 / 5 + eps * (-1 / 7 + eps / 9)))  # (no **: pow is slow there)
                drc = -1 / 3 + eps * (2 / 5 + eps * (-3 / 7 + eps * (4 / 9)))
            dterm = _add(None if dd is None else -dd / (d * d) * rc, None if du is None else drc * du / d)
            if dterm is not None:
                total = total + fac * dterm
            fac = fac / 4
            v = [(w + lam) / 4 for w in v]
            t = [None if dt is None and dlam is None else _add(dt, dlam) / 4 for dt in t]
        a = (v[0] + v[1] + v[2] + 2 * v[3]) / 5
        da = _add(t[0], t[1], t[2], _mul(t[3], 2.0)) / 5
        return total - 1.5 * fac / 6 * da / (a * np.sqrt(a) * a)  # fac / 6 is 4^-rounds now
    return partial


ufunc_rule(sc.elliprj, *(_elliprj_partial(k) for k in range(4)), name="elliprj")
ufunc_rule(sc.elliprf, lambda y, a, b, c: -sc.elliprd(b, c, a) / 6, lambda y, a, b, c: -sc.elliprd(c, a, b) / 6,
           lambda y, a, b, c: -sc.elliprd(a, b, c) / 6, name="elliprf")
ufunc_rule(sc.elliprg, lambda y, a, b, c: (3 * sc.elliprf(a, b, c) - a * sc.elliprd(b, c, a)) / 12,
           lambda y, a, b, c: (3 * sc.elliprf(a, b, c) - b * sc.elliprd(c, a, b)) / 12,
           lambda y, a, b, c: (3 * sc.elliprf(a, b, c) - c * sc.elliprd(a, b, c)) / 12, name="elliprg")


def _pv(y):
    """Where R_C(x, y) is a Cauchy principal value: a real y < 0."""
    return (not np.iscomplexobj(y)) & (np.asarray(y) < 0)


def _elliprc_dy(r, x, y):
    """dR_C/dy: -R_D(x, y, y) / 3; for the principal value (y < 0) (R_C - sqrt(x) / y) / (2 (x - y)), by parts."""
    pv = _pv(y)
    if not np.any(pv):
        return -sc.elliprd(x, y, y) / 3
    ys = np.where(pv, y, -1.0)
    closed = (r - np.sqrt(np.where(pv, x, 0.0)) / ys) / (2 * (np.where(pv, x, 0.0) - ys))
    return np.where(pv, closed, -sc.elliprd(x, np.where(pv, 1.0, y), np.where(pv, 1.0, y)) / 3)


def _elliprc_dx(r, x, y):
    """dR_C/dx: -R_D(y, y, x) / 6; for the principal value by homogeneity, x R_x + y R_y = -R_C / 2."""
    pv = _pv(y)
    if not np.any(pv):
        return -sc.elliprd(y, y, x) / 6
    return np.where(pv, (-r / 2 - y * _elliprc_dy(r, x, y)) / np.where(pv, x, 1.0),
                    -sc.elliprd(np.where(pv, 1.0, y), np.where(pv, 1.0, y), np.where(pv, 1.0, x)) / 6)


ufunc_rule(sc.elliprc, lambda r, x, y: _elliprc_dx(r, x, y), lambda r, x, y: _elliprc_dy(r, x, y), name="elliprc")


# -- integrals of Bessel and Struve functions ----------------------------------------------------------------

multi_output_rule(sc.itj0y0, "itj0y0", lambda y, x: (sc.j0(x), sc.y0(x)))
multi_output_rule(sc.it2j0y0, "it2j0y0", lambda y, x: (_where0(x, 0.0, 1 - sc.j0(x)), -sc.y0(x) / x))
multi_output_rule(sc.iti0k0, "iti0k0", lambda y, x: (sc.i0(x), sc.k0(x)))
multi_output_rule(sc.it2i0k0, "it2i0k0", lambda y, x: (_where0(x, 0.0, sc.i0(x) - 1), -sc.k0(x) / x))
ufunc_rule(sc.itstruve0, lambda y, x: sc.struve(0.0, x), name="itstruve0")
ufunc_rule(sc.it2struve0, lambda y, x: -sc.struve(0.0, x) / x, name="it2struve0")   # from x to infinity
ufunc_rule(sc.itmodstruve0, lambda y, x: sc.modstruve(0.0, x), name="itmodstruve0")


# -- modified Fresnel integrals: F+(x) = int_x^inf e^(i t^2) dt, K+ = F+ e^(-i (x^2 + pi/4)) / sqrt(pi) ---------

_E_PI4 = complex(math.cos(math.pi / 4), math.sin(math.pi / 4))


def _modfresnel(sign):
    """F(x) = int_x^inf e^(sign i t^2) dt: F' = -e^(sign i x^2); K = F e^(-sign i (x^2 + pi/4)) / sqrt(pi):
    K' = -e^(-sign i pi/4) / sqrt(pi) - sign 2i x K. x >= 0 only: scipy's values below 0 are not these integrals
    (scipy 1.17: modfresnelp(-0.4)[0] is 1.0256+0.2277j, the integral 1.0256+0.6480j), their derivative refused."""
    name = "modfresnelp" if sign > 0 else "modfresnelm"
    phase = _E_PI4 if sign > 0 else _E_PI4.conjugate()

    def partials(y, x):
        if np.any(np.asarray(x) < 0):
            raise unsupported(f"scipy.special.{name}", "x < 0 (scipy's values there are not the integral: their "
                              "imaginary part is wrong)", f"use x >= 0 and the reflection F(-x) = sqrt(pi) "
                              f"e^(±i pi/4) - F(x)")
        return -np.exp(sign * 1j * x * x), -1 / (phase * _SQRT_PI) - sign * 2j * x * y[1]
    multi_output_rule(getattr(sc, name), name, partials)


_modfresnel(1)
_modfresnel(-1)


# -- parabolic cylinder functions: (value, derivative) pairs; their equations give the second derivative ------

_pbdv_v, _pbvv_v, _pbwa_a = _no("pbdv", "v")[0], _no("pbvv", "v")[0], _no("pbwa", "a")[0]
multi_output_rule(sc.pbdv, "pbdv", _pbdv_v, lambda y, v, x: (y[1], (x * x / 4 - v - 0.5) * y[0]))  # D_v
multi_output_rule(sc.pbvv, "pbvv", _pbvv_v, lambda y, v, x: (y[1], (x * x / 4 - v - 0.5) * y[0]))  # V_v
multi_output_rule(sc.pbwa, "pbwa", _pbwa_a, lambda y, a, x: (y[1], (a - x * x / 4) * y[0]))  # W(a, x)


# -- Mathieu functions in x (the order m and q refused): ce'' = -(a - 2q cos 2x) ce, x in degrees ------------------

_DEG = math.pi / 180


def _mathieu(fn, char, name, modified):
    m_, q_ = _no(name, "m", "q")

    if modified:  # (x in radians) Mc'' = (a - 2q cosh 2x) Mc
        def dx(y, m, q, x):
            return y[1], (char(m, q) - 2 * q * np.cosh(2 * x)) * y[0]
    else:  # x in degrees, the derivative y' scipy returns per radian (theta = x pi / 180)
        def dx(y, m, q, x):
            return y[1] * _DEG, -(char(m, q) - 2 * q * np.cos(2 * _DEG * x)) * y[0] * _DEG
    multi_output_rule(fn, name, m_, q_, dx)


_mathieu(sc.mathieu_cem, sc.mathieu_a, "mathieu_cem", False)
_mathieu(sc.mathieu_sem, sc.mathieu_b, "mathieu_sem", False)
_mathieu(sc.mathieu_modcem1, sc.mathieu_a, "mathieu_modcem1", True)
_mathieu(sc.mathieu_modcem2, sc.mathieu_a, "mathieu_modcem2", True)
_mathieu(sc.mathieu_modsem1, sc.mathieu_b, "mathieu_modsem1", True)
_mathieu(sc.mathieu_modsem2, sc.mathieu_b, "mathieu_modsem2", True)


# -- associated Legendre, Bessel polynomial integral, Wright's generalized Bessel ---------------------------

ufunc_rule(sc.lpmv, *_no("lpmv", "m", "v"),  # (1 - x^2) P' = (v + 1) x P - (v - m + 1) P_{v+1}  (|x| < 1)
           lambda y, m, v, x: ((v + 1) * x * y - (v - m + 1) * sc.lpmv(m, v + 1, x)) / (1 - x * x), name="lpmv")
ufunc_rule(sc.besselpoly,  # int_0^1 x^lmb J_nu(2 a x) dx: in a by J' = (J_{nu-1} - J_{nu+1}) / 2
           lambda y, a, lmb, nu: sc.besselpoly(a, lmb + 1, nu - 1) - sc.besselpoly(a, lmb + 1, nu + 1),
           *_no("besselpoly", "lmb", "nu", at=1), name="besselpoly")
ufunc_rule(sc.wright_bessel, *_no("wright_bessel", "a", "b"), lambda y, a, b, x: sc.wright_bessel(a, a + b, x),
           name="wright_bessel")
ufunc_rule(sc.log_wright_bessel, *_no("log_wright_bessel", "a", "b"),
           lambda y, a, b, x: np.exp(sc.log_wright_bessel(a, a + b, x) - y), name="log_wright_bessel")


# -- elementary ones ----------------------------------------------------------------------------------------

ufunc_rule(sc.powm1, lambda r, x, y: y * np.power(x, y - 1), lambda r, x, y: sc.xlogy(r + 1, x), name="powm1")
ufunc_rule(sc.radian, lambda r, d, m, s: _DEG + 0 * r, lambda r, d, m, s: _DEG / 60 + 0 * r,
           lambda r, d, m, s: _DEG / 3600 + 0 * r, name="radian")
registry.nondifferentiable(sc.round)


def _tukey_q(p, lam):
    """(Q'(p), dQ/dlambda) of the Tukey-lambda quantile Q(p) = (p^l - (1 - p)^l) / l (log(p / (1 - p)) at l = 0)."""
    lam = np.asarray(lam)
    a, b = np.log(p), np.log1p(-p)
    small = np.abs(lam) < 1e-3
    ls = np.where(small, 1.0, lam)
    pa, pb = np.exp(ls * a), np.exp(ls * b)
    general = (ls * (a * pa - b * pb) - (pa - pb)) / (ls * ls)
    series = (a * a - b * b) / 2 + lam * (a ** 3 - b ** 3) / 3 + lam * lam * (a ** 4 - b ** 4) / 8 \
        + lam ** 3 * (a ** 5 - b ** 5) / 30
    return np.exp((lam - 1) * a) + np.exp((lam - 1) * b), np.where(small, series, general)


def _tklmbda_partials():
    def inside(F):
        return (F > 0) & (F < 1)

    def dx(F, x, lam):
        ok = inside(F)
        dq, _ = _tukey_q(np.where(ok, F, 0.5), lam)
        return np.where(ok, 1 / dq, 0.0)

    def dlam(F, x, lam):
        ok = inside(F)
        dq, dl = _tukey_q(np.where(ok, F, 0.5), lam)
        return np.where(ok, -dl / dq, 0.0)
    return dx, dlam


ufunc_rule(sc.tklmbda, *_tklmbda_partials(), name="tklmbda")


# -- distributions: in the variable or the probability (densities, and 1 / density for inverses) ----------------
# (k and n are truncated by scipy, floor(2.5) successes being 2: the derivatives take them truncated too)

def _bdtr_density(k, n, p):
    """d/dp of bdtrc(k, n, p) = I_p(k + 1, n - k): the Beta(k + 1, n - k) density at p."""
    k, n = np.floor(k), np.trunc(n)
    return _beta_density(k + 1, n - k, p)


ufunc_rule(sc.bdtr, *_no("bdtr", "k", "n"), lambda y, k, n, p: -_bdtr_density(k, n, p), name="bdtr")
ufunc_rule(sc.bdtrc, *_no("bdtrc", "k", "n"), lambda y, k, n, p: _bdtr_density(k, n, p), name="bdtrc")
ufunc_rule(sc.bdtri, *_no("bdtri", "k", "n"), lambda p, k, n, y: -1 / _bdtr_density(k, n, p), name="bdtri")


def _nbdtr_density(k, n, p):
    """d/dp of nbdtr(k, n, p) = I_p(n, k + 1)."""
    return _beta_density(np.trunc(n), np.trunc(k) + 1, p)


ufunc_rule(sc.nbdtr, *_no("nbdtr", "k", "n"), lambda y, k, n, p: _nbdtr_density(k, n, p), name="nbdtr")
ufunc_rule(sc.nbdtrc, *_no("nbdtrc", "k", "n"), lambda y, k, n, p: -_nbdtr_density(k, n, p), name="nbdtrc")
ufunc_rule(sc.nbdtri, *_no("nbdtri", "k", "n"), lambda p, k, n, y: 1 / _nbdtr_density(k, n, p), name="nbdtri")
# Poisson: pdtr(k, m) = Q(floor(k) + 1, m)
ufunc_rule(sc.pdtr, *_no("pdtr", "k"), lambda y, k, m: -_gamma_density(np.floor(k) + 1, m), name="pdtr")
ufunc_rule(sc.pdtrc, *_no("pdtrc", "k"), lambda y, k, m: _gamma_density(np.floor(k) + 1, m), name="pdtrc")
ufunc_rule(sc.pdtri, *_no("pdtri", "k"), lambda m, k, y: -1 / _gamma_density(np.floor(k) + 1, m), name="pdtri")


def _f_density(dfn, dfd, x):
    """The F(dfn, dfd) density at x: fdtr = I_u(dfn/2, dfd/2), u = dfn x / (dfd + dfn x)."""
    d = dfd + dfn * x
    return _beta_density(dfn / 2, dfd / 2, dfn * x / d) * dfn * dfd / (d * d)


def _t_density(df, t):
    return np.exp(sc.gammaln((df + 1) / 2) - sc.gammaln(df / 2) - 0.5 * np.log(df * math.pi)
                  - (df + 1) / 2 * np.log1p(t * t / df))


# -- the F, chi-square, gamma, t and beta distributions in their shapes, numerically (`scipy_special_shape`):
# to 1e-10 or refused; a derivative of these partials (hessian) refused ----------------------------------------

def _sharp_integrals(f, lo: np.ndarray, hi: np.ndarray) -> tuple:
    """(integrals, error estimates) of f(w, rows) over [lo, hi] (hi may be inf): `_de`, whose error once settled
    is its last gap squared over the value (a halved step squares a double-exponential rule's error; mpmath's
    estimate), times 10; quad's own estimate where `_de` does not settle. Pieces that cancel are summed with
    these, not with `_de`'s gap (1e-10 of each piece, more than the 1e-10 of their sum asked for)."""
    n = len(lo)
    total, err = np.zeros(n), np.full(n, np.inf)
    for start in range(0, n, _CHUNK):
        rows = np.arange(start, min(start + _CHUNK, n))
        v, gap, settled = _de(f, lo[rows], hi[rows], np.ones(len(rows)), rows)
        total[rows] = v
        with np.errstate(all="ignore"):
            err[rows] = np.where(v == 0, gap, 10 * gap * gap / np.abs(v))
        for i in rows[~settled]:
            one = np.array([i])
            total[i], err[i] = _quad(lambda w: float(f(np.array([[w]]), one)[0, 0]), float(lo[i]), float(hi[i]))
    return total, err


def _digamma_step(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """psi(a + b) - psi(a) - log1p(b / a) (> 0), without the digammas' cancellation: for a >= 20 by the
    difference of their asymptotic series (to x^-10), below by psi(z + 1) = psi(z) + 1/z, terms of one sign."""
    shift = np.maximum(np.ceil(20 - a), 0.0)
    x, y = a + shift, a + b + shift
    series = (b / (2 * x * y) + b * (x + y) / (12 * (x * y) ** 2) + (1 / y ** 4 - 1 / x ** 4) / 120
              - (1 / y ** 6 - 1 / x ** 6) / 252 + (1 / y ** 8 - 1 / x ** 8) / 240 - (1 / y ** 10 - 1 / x ** 10) / 132)
    total = series + np.log1p(b / x)  # (psi(x + b) - psi(x))
    for j in range(int(np.max(shift, initial=0))):
        add = j < shift
        total = total + np.where(add, b / ((a + j) * (a + b + j)), 0.0)
    return total - np.log1p(b / a)


def _phi_minus(s: np.ndarray, log_kt: np.ndarray) -> np.ndarray:
    """log1p(s) - s, s = k t - 1, by its series below |s| = 0.05 (no cancellation); log(k t) given, for s near -1."""
    small = np.abs(s) < 0.05
    q = np.where(small, s, 0.0)
    series = q * q * (-1 / 2 + q * (1 / 3 + q * (-1 / 4 + q * (1 / 5 + q * (-1 / 6 + q * (1 / 7 + q * (
        -1 / 8 + q * (1 / 9 + q * (-1 / 10 + q * (1 / 11 + q * (-1 / 12)))))))))))
    with np.errstate(all="ignore"):
        return np.where(small, series, np.where(s < -0.5, log_kt, np.log1p(s)) - s)


def _f_dn_kernel(n: np.ndarray, d: np.ndarray, x: np.ndarray) -> tuple:
    """d/ddfn of fdtr(n, d, x) = I(a, b, u), a = n/2, b = d/2, u = n x / (d + n x): (1/2) int_0^u g h dt, g the
    Beta(a, b) density, h = ln t + psi(a + b) - psi(a) + 1 - k t, k = (a + b) / a (d log g / da, and the move of u
    by d/dt [t^a (1 - t)^b] = a B g (1 - k t)); or -(1/2) int_u^1 of it (int_0^1 g h = 0), the side of the smaller
    probability. h is concave, positive at t = 1/k: it changes sign once or twice (-W(-k e^-c) / k, c = h + k t -
    ln t): the pieces between its zeros and the mode of g are each of one sign, mapped as `_beta_kernel`'s (w =
    a ln(m / t) below the mode m, b ln((1 - m) / (1 - t)) above), and summed with their sharp errors and the
    rounding of h's terms (the composition dI/da + g du/dn cancelled to 1e-3 of its terms at 4% of a grid)."""
    out = np.full(n.shape, np.nan)
    accurate = np.ones(n.shape, bool)
    valid = (n > 0) & (d > 0) & np.isfinite(n) & np.isfinite(d) & (x >= 0)
    out[valid & ((x == 0) | np.isinf(x))] = 0.0
    rows = np.flatnonzero(valid & (x > 0) & np.isfinite(x))
    if not rows.size:
        return out, accurate
    a, b, x = n[rows] / 2, d[rows] / 2, x[rows]
    lu, l1u = np.log(n[rows] * x) - np.log(d[rows] + n[rows] * x), np.log(d[rows]) - np.log(d[rows] + n[rows] * x)
    prob = sc.betainc(a, b, np.exp(lu))
    lower = prob <= 0.5
    k, top_h = (a + b) / a, _digamma_step(a, b)  # (h = top_h + log1p(s) - s, s = k t - 1: h's maximum at t = 1/k)
    c = top_h + 1 + np.log(k)
    lb = sc.betaln(a, b)
    m = np.where((a >= 1) & (b >= 1) & (a + b > 2), (a - 1) / np.maximum(a + b - 2, 1e-300), a / (a + b))
    m = np.clip(m, 1e-300, 1 - 1e-16)
    lm, l1m = np.log(m), np.log1p(-m)
    z = -k * np.exp(-c)  # (in (-1/e, 0): h(1/k) > 0)
    with np.errstate(all="ignore"):
        t1 = np.clip(-sc.lambertw(z, 0).real / k, 0.0, 1.0)
        t2 = np.clip(-sc.lambertw(z, -1).real / k, 0.0, 1.0)
    # the side [lo, hi] and the breaks inside it (the mode, h's zeros) as (log t, log(1 - t)), ordered by the
    # logit (exact at both ends)
    lo = np.where(lower, -np.inf, lu), np.where(lower, 0.0, l1u)
    hi = np.where(lower, lu, 0.0), np.where(lower, l1u, -np.inf)
    logit_lo, logit_hi, logit_m = lo[0] - lo[1], hi[0] - hi[1], lm - l1m
    columns = [lo, hi]
    for q in (m, t1, t2):
        lq, l1q = np.log(q), np.log1p(-q)
        logit = lq - l1q
        columns.append((np.where(logit < logit_lo, lo[0], np.where(logit > logit_hi, hi[0], lq)),
                        np.where(logit < logit_lo, lo[1], np.where(logit > logit_hi, hi[1], l1q))))
    lts, l1s = np.stack([q[0] for q in columns]), np.stack([q[1] for q in columns])
    order = np.argsort(lts - l1s, axis=0, kind="stable")
    lts, l1s = np.take_along_axis(lts, order, axis=0), np.take_along_axis(l1s, order, axis=0)
    front_below, front_above = a * lm - np.log(a) - lb, b * l1m - np.log(b) - lb

    def w_of(lt, l1t, below):  # the map's variable at a point
        return np.where(below, a * (lm - lt), b * (l1m - l1t))

    def piece_log(w, i, below):
        if below:
            lt = lm[i] - w / a[i]
            t, log_t = np.exp(lt), lt
            log = front_below[i] - w + (b[i] - 1) * np.log(-np.expm1(lt))
        else:
            l1t = l1m[i] - w / b[i]
            t = -np.expm1(l1t)
            log_t = np.log(t)
            log = front_above[i] - w + (a[i] - 1) * log_t
        s = k[i] * t - 1
        h = top_h[i] + _phi_minus(s, np.log(k[i]) + log_t)
        return log, (h, np.abs(top_h[i]) + np.abs(h - top_h[i]) + np.abs(s))
    total_parts, count = [], len(rows)
    for j in range(lts.shape[0] - 1):
        logit0, logit1 = lts[j] - l1s[j], lts[j + 1] - l1s[j + 1]
        nonempty = logit1 > logit0
        below = logit1 <= logit_m  # (the mode is a break: each piece on one side of it)
        w0 = np.where(below, w_of(lts[j + 1], l1s[j + 1], True), w_of(lts[j], l1s[j], False))
        w1 = np.where(below, w_of(lts[j], l1s[j], True), w_of(lts[j + 1], l1s[j + 1], False))
        for side in (True, False):
            index = np.flatnonzero(nonempty & (below == side))
            if not index.size:
                continue
            start, end = np.maximum(w0[index], 0.0), w1[index]
            top = piece_log(start, index, side)[0]

            def integrand(w, i, side=side, index=index, top=top, part=0):
                log, h = piece_log(w, index[i, None], side)
                return np.exp(log - top[i, None]) * h[part]
            v, e = _sharp_integrals(integrand, start, end)
            # (h's rounding: a few ulps of its terms h(1/k), log1p(s) - s and s, integrated: one digit is enough)
            size, _ = _sharp_integrals(lambda w, i, f=integrand: f(w, i, part=1), start, end)
            total_parts.append((index, v, e + 1e-15 * np.abs(size), top))
    largest = np.full(count, -np.inf)
    for index, v, e, top in total_parts:
        largest[index] = np.maximum(largest[index], top)
    total, err, size = np.zeros(count), np.zeros(count), np.zeros(count)
    for index, v, e, top in total_parts:
        scale = np.exp(top - largest[index])
        np.add.at(total, index, v * scale)
        np.add.at(err, index, e * scale)
        np.add.at(size, index, np.abs(v) * scale)
    err = err + 1e-15 * size  # (the sum's rounding)
    out[rows] = _scaled(np.where(lower, 0.5 * total, -0.5 * total), largest)
    accurate[rows] = np.isinf(out[rows]) | (err <= TOLERANCE * np.abs(total))
    return out, accurate


def fdtr_ddfn(p: Numerical, n: np.ndarray, d: np.ndarray, x: np.ndarray) -> np.ndarray:
    """d fdtr(n, d, x) / dn (`_f_dn_kernel`); in d by fdtr(n, d, x) = 1 - fdtr(d, n, 1/x)."""
    return _map(p, _f_dn_kernel, n, d, x)


def fdtr_ddfd(p: Numerical, n: np.ndarray, d: np.ndarray, x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return -fdtr_ddfn(p, d, n, 1 / x)


def _root(p: Numerical, v: np.ndarray, prob: np.ndarray, cdf, sf, *args: np.ndarray) -> np.ndarray:
    """scipy's solution v > 0 of cdf(v, *args) = prob (sf = 1 - cdf; args the inverse's own, broadcast), checked
    and moved onto the root by Newton steps on central differences (the residual by sf where prob > 1/2): its
    derivatives are taken there. Refused where it is not a root to 1e-6 of v (scipy 1.17's fdtridfd(10, 0.5, 0.1)
    is 1e100 for 0.5), or not fixed to 1e-12 of v by cdf's rounding (1e-15 of the smaller tail: cdf moves too
    little with v there). NaN stays NaN (scipy's answer outside its range)."""
    v, prob, *args = np.broadcast_arrays(v, prob, *args)
    out = np.array(v, dtype=float)
    live = np.isfinite(out) & (out > 0) & (prob > 0) & (prob < 1)
    if not live.any():
        return out
    w, q, args = out[live], prob[live], [a[live] for a in args]
    upper = q > 0.5
    tail = np.where(upper, 1 - q, q)

    def residual(s):
        return np.where(upper, tail - sf(s, *args), cdf(s, *args) - q)
    for _ in range(3):
        h = 1e-5 * w
        slope = (residual(w + h) - residual(w - h)) / (2 * h)
        step = residual(w) / slope
        if not np.all(np.isfinite(step)) or np.any(np.abs(step) > 1e-6 * w):
            p.refuse("is taken at scipy's solution, which is not a root of the function it inverts here (or the "
                     "function does not move with the solved-for argument)")
        w = w - step
        if np.all(np.abs(step) <= 1e-15 * w):
            break
    if np.any(np.abs(step) > 1e-12 * w) or np.any(1e-15 * tail > 1e-12 * w * np.abs(slope)):
        p.refuse("is taken at scipy's solution, which the function it inverts does not fix to 1e-12 here (it "
                 "moves too little with the solved-for argument)")
    out[live] = w
    return out


def _shape_solver(fn, names: tuple, at: int, cdf, sf, f_v, others: dict) -> None:
    """Rules of an inverse v = fn(*args) with F(v, ...) = args[at] (cdf, sf: F and 1 - F of (v, *args)): in
    args[at], 1 / F_v; in another argument i, -F_i / F_v (`others[i](p, v, *args)`); f_v(p, v, *args) = F_v,
    numerical: every partial is, refused where F_v is 0 or not reached, at v on the root (`_root`)."""
    name = fn.__name__

    def partial(i):
        def compute(p, y, *args):
            v = _root(p, y, args[at], cdf, sf, *args)
            slope = f_v(p, v, *args)
            if np.any(slope == 0):
                p.refuse(f"divides by the derivative of the function it inverts in {name}'s result, 0 here")
            return (1.0 if i == at else -others[i](p, v, *args)) / slope
        return _numerical(name, names[i], i, compute)
    shape_rule(fn, *(partial(i) for i in range(len(names))), name=name)


# fdtr, fdtrc in dfn and dfd; fdtri(dfn, dfd, p) = x and fdtridfd(dfn, p, x) = dfd by the implicit function theorem
shape_rule(sc.fdtr, _numerical("fdtr", "dfn", 0, lambda p, y, n, d, x: fdtr_ddfn(p, n, d, x)),
           _numerical("fdtr", "dfd", 1, lambda p, y, n, d, x: fdtr_ddfd(p, n, d, x)),
           lambda y, dfn, dfd, x: _f_density(dfn, dfd, x), name="fdtr")
shape_rule(sc.fdtrc, _numerical("fdtrc", "dfn", 0, lambda p, y, n, d, x: -fdtr_ddfn(p, n, d, x)),
           _numerical("fdtrc", "dfd", 1, lambda p, y, n, d, x: -fdtr_ddfd(p, n, d, x)),
           lambda y, dfn, dfd, x: -_f_density(dfn, dfd, x), name="fdtrc")
shape_rule(sc.fdtri, _inverse("fdtri", "dfn", 0, lambda p, x, n, d, q: fdtr_ddfn(p, n, d, x),
                              lambda x, n, d, q: _f_density(n, d, x), np.inf),
           _inverse("fdtri", "dfd", 1, lambda p, x, n, d, q: fdtr_ddfd(p, n, d, x),
                    lambda x, n, d, q: _f_density(n, d, x), np.inf),
           lambda x, dfn, dfd, p: 1 / _f_density(dfn, dfd, x), name="fdtri")
_shape_solver(sc.fdtridfd, ("dfn", "p", "x"), 1, lambda d, n, q, x: sc.fdtr(n, d, x),
              lambda d, n, q, x: sc.fdtrc(n, d, x), lambda p, d, n, q, x: fdtr_ddfd(p, n, d, x),
              {0: lambda p, d, n, q, x: fdtr_ddfn(p, n, d, x), 2: lambda p, d, n, q, x: _f_density(n, d, x)})

# chi-square: chdtri(v, p) = x with chdtrc(v, x) = p; chdtriv(p, x) = v with chdtr(v, x) = p (chdtr = P(v/2, x/2))
shape_rule(sc.chdtri, _inverse("chdtri", "v", 0, lambda p, x, v, q: -0.5 * gammainc_da(p, v / 2, x / 2),
                               lambda x, v, q: -0.5 * _gamma_density(v / 2, x / 2), np.inf),
           lambda x, v, p: -2 / _gamma_density(v / 2, x / 2), name="chdtri")
_shape_solver(sc.chdtriv, ("p", "x"), 0, lambda v, q, x: sc.chdtr(v, x), lambda v, q, x: sc.chdtrc(v, x),
              lambda p, v, q, x: 0.5 * gammainc_da(p, v / 2, x / 2),
              {1: lambda p, v, q, x: 0.5 * _gamma_density(v / 2, x / 2)})

# gamma: gdtr(a, b, x) = P(b, a x); gdtria(p, b, x) = a, gdtrix(a, b, p) = x, gdtrib(a, p, x) = b (scipy's CDFLIB
# solvers: gdtria's b partial at its value moved onto the root, as gdtrib's)
def _gdtria_db(p, a, q, b, x):
    a = _root(p, a, q, lambda s, q, b, x: sc.gdtr(s, b, x), lambda s, q, b, x: sc.gdtrc(s, b, x), q, b, x)
    return -gammainc_da(p, b, a * x) / (x * _gamma_density(b, a * x))


shape_rule(sc.gdtria, lambda a, p, b, x: 1 / (x * _gamma_density(b, a * x)), _numerical("gdtria", "b", 1, _gdtria_db),
           lambda a, p, b, x: -a / x, name="gdtria")
shape_rule(sc.gdtrix, lambda x, a, b, p: -x / a,
           _inverse("gdtrix", "b", 1, lambda p, x, a, b, q: gammainc_da(p, b, a * x),
                    lambda x, a, b, q: a * _gamma_density(b, a * x), np.inf),
           lambda x, a, b, p: 1 / (a * _gamma_density(b, a * x)), name="gdtrix")
_shape_solver(sc.gdtrib, ("a", "p", "x"), 1, lambda b, a, q, x: sc.gdtr(a, b, x), lambda b, a, q, x: sc.gdtrc(a, b, x),
              lambda p, b, a, q, x: gammainc_da(p, b, a * x),
              {0: lambda p, b, a, q, x: x * _gamma_density(b, a * x),
               2: lambda p, b, a, q, x: a * _gamma_density(b, a * x)})

# Student's t: stdtrit(df, p) = t, stdtridf(p, t) = df
shape_rule(sc.stdtrit, _inverse("stdtrit", "df", 0, lambda p, t, df, q: stdtr_ddf(p, df, t),
                                lambda t, df, q: _t_density(df, t), np.inf),
           lambda t, df, p: 1 / _t_density(df, t), name="stdtrit")
_shape_solver(sc.stdtridf, ("p", "t"), 0, lambda df, q, t: sc.stdtr(df, t), lambda df, q, t: sc.stdtr(df, -t),
              lambda p, df, q, t: stdtr_ddf(p, df, t), {1: lambda p, df, q, t: _t_density(df, t)})

# beta: btdtria(p, b, x) = a, btdtrib(a, p, x) = b with betainc(a, b, x) = p
_shape_solver(sc.btdtria, ("p", "b", "x"), 0, lambda a, q, b, x: sc.betainc(a, b, x),
              lambda a, q, b, x: sc.betaincc(a, b, x), lambda p, a, q, b, x: betainc_da(p, a, b, x),
              {1: lambda p, a, q, b, x: betainc_db(p, a, b, x), 2: lambda p, a, q, b, x: _beta_density(a, b, x)})
_shape_solver(sc.btdtrib, ("a", "p", "x"), 1, lambda b, a, q, x: sc.betainc(a, b, x),
              lambda b, a, q, x: sc.betaincc(a, b, x), lambda p, b, a, q, x: betainc_db(p, a, b, x),
              {0: lambda p, b, a, q, x: betainc_da(p, a, b, x), 2: lambda p, b, a, q, x: _beta_density(a, b, x)})


# normal: nrdtrimn(p, std, x) = x - std z, nrdtrisd(mn, p, x) = (x - mn) / z, z = ndtri(p)
def _phi(z):
    return _INV_SQRT_2PI * np.exp(-0.5 * z * z)


ufunc_rule(sc.nrdtrimn, lambda mn, p, sd, x: -sd / _phi(sc.ndtri(p)), lambda mn, p, sd, x: -sc.ndtri(p),
           lambda mn, p, sd, x: 1.0 + 0 * mn, name="nrdtrimn")
ufunc_rule(sc.nrdtrisd, lambda sd, mn, p, x: -1 / sc.ndtri(p),
           lambda sd, mn, p, x: -sd / (sc.ndtri(p) * _phi(sc.ndtri(p))), lambda sd, mn, p, x: 1 / sc.ndtri(p),
           name="nrdtrisd")


# noncentral chi-square: the density by I_{df/2 - 1} (scaled), dF/dnc = (F(x; df + 2, nc) - F(x; df, nc)) / 2
def _ncx2_density(x, df, nc):
    nc = np.asarray(nc)
    central = nc == 0
    ncs = np.where(central, 1.0, nc)
    r = np.sqrt(ncs * x)
    general = 0.5 * np.exp(-(x + ncs) / 2 + r + (df / 4 - 0.5) * (np.log(x) - np.log(ncs))) * sc.ive(df / 2 - 1, r)
    return np.where(central, 0.5 * _gamma_density(df / 2, x / 2), general)


def _ncx2_dnc(x, df, nc):
    return 0.5 * (sc.chndtr(x, df + 2, nc) - sc.chndtr(x, df, nc))


ufunc_rule(sc.chndtr, lambda y, x, df, nc: _ncx2_density(x, df, nc), *_no("chndtr", "df", at=1),
           lambda y, x, df, nc: _ncx2_dnc(x, df, nc), name="chndtr")
ufunc_rule(sc.chndtrix, lambda x, p, df, nc: 1 / _ncx2_density(x, df, nc), *_no("chndtrix", "df", at=1),
           lambda x, p, df, nc: -_ncx2_dnc(x, df, nc) / _ncx2_density(x, df, nc), name="chndtrix")
def _chndtrinc_partials():
    """nc with chndtr(x, df, nc) = p: 1 / (dF/dnc) in p, -density / (dF/dnc) in x; 0 where there is none and
    scipy returns its lower bound (p above the central chi-square's CDF: the result does not move)."""
    def clamped(x, df, p):
        return sc.chndtr(x, df, 0.0) <= p

    def dx(nc, x, df, p):
        return np.where(clamped(x, df, p), 0.0, -_ncx2_density(x, df, nc) / _ncx2_dnc(x, df, nc))

    def dp(nc, x, df, p):
        return np.where(clamped(x, df, p), 0.0, 1 / _ncx2_dnc(x, df, nc))
    return dx, dp


_chndtrinc_dx, _chndtrinc_dp = _chndtrinc_partials()
ufunc_rule(sc.chndtrinc, _chndtrinc_dx, *_no("chndtrinc", "df", at=1), _chndtrinc_dp, name="chndtrinc")


# Kolmogorov-Smirnov: scipy's own derivative kernels (_kolmogp(y) is d/dy kolmogorov(y), _smirnovp(n, d)
# d/dd smirnov(n, d)); no rules of their own: hessian refuses there
_kolmogp, _smirnovp = sc._ufuncs._kolmogp, sc._ufuncs._smirnovp
ufunc_rule(sc.kolmogorov, lambda p, y: _kolmogp(y), name="kolmogorov")
ufunc_rule(sc.kolmogi, lambda y, p: 1 / (_kolmogp(y)), name="kolmogi")
ufunc_rule(sc.smirnov, *_no("smirnov", "n"), lambda p, n, d: _smirnovp(n, d), name="smirnov")
ufunc_rule(sc.smirnovi, *_no("smirnovi", "n"), lambda d, n, p: 1 / (_smirnovp(n, d)), name="smirnovi")
