"""numpy.fft and scipy.fft: each transform's rule (adjoint and frule) against central differences with
random complex cotangents, for n=/s= padding and cropping, axes and every norm; then real losses of
complex spectra through the engines: reverse (gradient), forward (jacfwd, derivative) and hessian."""

import numpy as np
import pytest

from contexts import derivative, gradient, hessian, jacfwd, jacobian
from tests import fd
from tests.fd import check_rule

pytestmark = pytest.mark.filterwarnings("ignore:`axes` should not be `None`:DeprecationWarning")

RNG = np.random.default_rng(11)
NORMS = [None, "backward", "ortho", "forward"]
X1 = RNG.normal(size=7)
X2 = RNG.normal(size=(4, 6))
Z1 = RNG.normal(size=7) + 1j * RNG.normal(size=7)
Z2 = RNG.normal(size=(4, 6)) + 1j * RNG.normal(size=(4, 6))


def _modules():
    mods = [np.fft]
    try:
        import scipy.fft
        mods.append(scipy.fft)
    except ImportError:  # pragma: no cover
        pass
    return mods


MODULES = _modules()


@pytest.mark.parametrize("mod", MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name, x", [("fft", X1), ("fft", Z1), ("ifft", Z1), ("rfft", X1), ("irfft", Z1),
                                     ("hfft", Z1), ("ihfft", X1)])
@pytest.mark.parametrize("n", [None, 4, 5, 10, 11])
def test_1d_rules(mod, norm, name, x, n):
    check_rule(getattr(mod, name), x, n=n, norm=norm)


@pytest.mark.parametrize("mod", MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("name, x", [("fft", Z2), ("ifft", Z2), ("rfft", X2), ("irfft", Z2), ("hfft", Z2),
                                     ("ihfft", X2)])
def test_1d_rules_along_axis_0(mod, name, x):
    check_rule(getattr(mod, name), x, 5, 0, "ortho")  # by position: n, axis, norm


@pytest.mark.parametrize("mod", MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name, x", [("fft2", Z2), ("ifft2", Z2), ("rfft2", X2), ("irfft2", Z2),
                                     ("fftn", X2), ("ifftn", Z2), ("rfftn", X2), ("irfftn", Z2)])
@pytest.mark.parametrize("s", [None, (3, 5), (6, 9)])
def test_nd_rules(mod, norm, name, x, s):
    check_rule(getattr(mod, name), x, s=s, norm=norm)


@pytest.mark.parametrize("mod", MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize("name, x", [("fftn", Z2), ("rfftn", X2), ("irfftn", Z2)])
@pytest.mark.parametrize("axes", [(0,), (1, 0), (-1,)])
def test_nd_rules_axes(mod, name, x, axes):
    check_rule(getattr(mod, name), x, axes=axes)
    check_rule(getattr(mod, name), x, s=(5,) * len(axes), axes=axes, norm="ortho")


@pytest.mark.parametrize("name, x", [("hfft2", Z2), ("ihfft2", X2), ("hfftn", Z2), ("ihfftn", X2)])
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("s", [None, (3, 5), (5, 8)])
def test_scipy_hermitian_nd_rules(name, x, norm, s):
    sf = pytest.importorskip("scipy.fft")
    check_rule(getattr(sf, name), x, s=s, norm=norm)


def test_3d_fftn():
    x = RNG.normal(size=(3, 4, 5))
    check_rule(np.fft.rfftn, x, s=(2, 6, 4), norm="ortho")
    check_rule(np.fft.irfftn, np.fft.rfftn(x), s=(3, 4, 7))


# -- through the engines: real losses of complex spectra ----------------------------------------------------

def _power(x):
    return (np.abs(np.fft.fft(x)) ** 2).sum()


def _filtered(x):
    h = np.array([1.0, 0.5, 0.25, 0.125, 0.0625])
    return np.fft.irfft(np.fft.rfft(x) * h, n=8).sum() + np.sum(np.fft.irfft(np.fft.rfft(x) * h) ** 2)


def _mixed(x):
    spec = np.fft.rfft2(np.reshape(x, (2, 4)), s=(3, 6), norm="ortho")
    return np.sum(np.real(spec) ** 3) + np.sum(np.imag(np.fft.ifft(np.sin(x), n=5)) ** 2) \
        + np.sum(np.fft.hfft(np.fft.ifft(x)[:5]) ** 2) + np.sum(np.abs(np.fft.ihfft(x)) ** 2)


def _scipy_loss(x):
    sf = pytest.importorskip("scipy.fft")
    spec = sf.rfftn(np.reshape(x, (2, 4)), s=(2, 7))
    return np.sum(sf.irfftn(spec * np.conj(spec), s=(2, 7))) + np.sum(np.abs(sf.fft(x, 6, norm="forward")) ** 2)


LOSSES = [_power, _filtered, _mixed, _scipy_loss]
X8 = RNG.normal(size=8)


@pytest.mark.parametrize("loss", LOSSES, ids=lambda f: f.__name__)
def test_reverse_against_differences(loss):
    np.testing.assert_allclose(gradient(loss, X8)[0], fd.gradient(loss, X8)[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("loss", LOSSES, ids=lambda f: f.__name__)
def test_forward_against_differences(loss):
    np.testing.assert_allclose(jacfwd(loss, X8), fd.gradient(loss, X8)[0], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("loss", LOSSES, ids=lambda f: f.__name__)
def test_hessian_against_differences(loss):
    np.testing.assert_allclose(hessian(loss, X8), fd.hessian(loss, X8), rtol=1e-4, atol=1e-5)


def test_vector_output_both_modes():
    def f(x):
        return np.real(np.fft.ifft(np.fft.fft(x, n=10) * np.arange(10.0)))
    want = fd.jacobian(f, X8)
    np.testing.assert_allclose(jacobian(f, X8), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, X8), want, rtol=1e-6, atol=1e-8)


def test_derivative_of_a_scalar_parameter():
    def f(t):
        return np.sum(np.abs(np.fft.rfft(np.cos(t * np.arange(6.0)), norm="ortho")) ** 3)
    np.testing.assert_allclose(derivative(f, 0.7), fd.derivative(f, 0.7), rtol=1e-6)
    np.testing.assert_allclose(gradient(f, 0.7)[0], fd.derivative(f, 0.7), rtol=1e-6)


def test_out_written_by_the_engines():
    """`out=`: both engines write the result into the array given (the rules never see it)."""
    def f(x):
        o = np.empty(8, complex)
        r = np.fft.fft(x, out=o)
        return np.sum(np.real(r) ** 2) + np.sum(np.imag(o) ** 3)
    want = fd.gradient(f, X8)[0]
    np.testing.assert_allclose(gradient(f, X8)[0], want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jacfwd(f, X8), want, rtol=1e-6, atol=1e-8)


def test_sparsity_is_dense_along_the_axis():
    """Every output of an FFT depends on every input it transforms (a superset is sound, a subset not)."""
    from contexts import jacobian_sparsity

    def f(x):
        return np.real(np.fft.fft(x[:3])) * x[3:]
    pattern = jacobian_sparsity(f, np.ones(6)).toarray()
    want = np.abs(fd.jacobian(f, RNG.normal(size=6))) > 1e-9
    assert pattern[want].all()
    assert pattern[:, :3].all() and (pattern[:, 3:] == np.eye(3, dtype=bool)).all()
