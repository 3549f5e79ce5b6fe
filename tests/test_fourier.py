"""Fourier filters: dtypes, real transforms, errors, JAX transforms."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi

import jaxndimage as jnd

RNG = np.random.default_rng(7)
FILTERS = ["fourier_gaussian", "fourier_uniform", "fourier_ellipsoid",
           "fourier_shift"]


@pytest.mark.parametrize("name", FILTERS)
@pytest.mark.parametrize("dtype", [np.int16, np.float32, np.float64,
                                   np.complex64, np.complex128])
def test_dtype_and_values_match_scipy(name, dtype):
    image = (RNG.standard_normal((6, 9)) * 10).astype(dtype)
    for n, axis in [(-1, -1), (11, 0), (17, 1)]:
        ours = getattr(jnd, name)(image, (1.5, 2.5), n=n, axis=axis)
        theirs = getattr(ndi, name)(image, (1.5, 2.5), n=n, axis=axis)
        assert ours.dtype == theirs.dtype
        tol = 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)


def _with_non_finite(dtype, shape):
    image = (RNG.standard_normal(shape) * 10).astype(dtype)
    values = [np.inf, complex(1.0, np.inf), np.nan, -np.inf,
              complex(np.nan, 2.0)]
    for k, value in enumerate(values[:image.size]):
        if image.dtype.kind == "c" or not np.iscomplexobj(value):
            image.flat[k] = value
    return image


@pytest.mark.parametrize("name", FILTERS)
@pytest.mark.parametrize("dtype, output", [
    (np.float64, None), (np.float32, np.float64), (np.float64, np.complex64),
    (np.float64, np.complex128), (np.complex64, None),
    (np.complex128, None), (np.complex128, np.complex64)])
def test_non_finite_input_gives_scipy_nan_and_inf(name, dtype, output):
    # SciPy multiplies each part by a real factor (a shift: the complex
    # product of the parts), so NaN appears only where its products form
    # it; a complex product by a real factor would add 0 * inf = NaN.
    if name == "fourier_shift" and output is np.float64:
        output = np.complex128
    for shape, n, axis in [((5, 6), -1, -1), ((5, 6), 11, 1), ((5, 1), -1, 0),
                           ((1, 6), 11, 0), ((1, 1), -1, 1)]:
        image = _with_non_finite(dtype, shape)
        ours = getattr(jnd, name)(image, 1.5, n=n, axis=axis, output=output)
        theirs = getattr(ndi, name)(image, 1.5, n=n, axis=axis, output=output)
        assert ours.dtype == theirs.dtype
        tol = 1e-5 if ours.dtype in (np.float32, np.complex64) else 1e-12
        for part in (np.real, np.imag):  # NaN and inf where SciPy has them
            np.testing.assert_array_equal(np.isnan(part(ours)),
                                          np.isnan(part(theirs)))
            np.testing.assert_allclose(part(ours), part(theirs), rtol=tol,
                                       atol=tol)


def test_ellipsoid_large_sizes_use_accurate_bessel():
    image = np.ones((32, 40), complex)
    np.testing.assert_allclose(jnd.fourier_ellipsoid(image, 25.0),
                               ndi.fourier_ellipsoid(image, 25.0),
                               atol=1e-13)


@pytest.mark.parametrize("shape, size, n, axis", [
    ((1,), 2.0, 0, 0), ((1, 6), (0.5, 1.5), 0, 0), ((5, 6), (0.5, 1.5), 0, 1),
    ((2, 3, 4), (np.inf, 1.0, 1.0), -1, -1),
    ((1, 3, 4), (np.inf, 1.0, 1.0), -1, -1), ((4, 1), (1.0, np.nan), -1, -1)])
def test_ellipsoid_of_an_infinite_scale_is_scipys(shape, size, n, axis):
    # n=0 along the real axis, or an infinite or NaN size, makes an axis's
    # scale non-finite: SciPy's radius then sums 0 times it (NaN) for an
    # axis of one sample too, and leaves the points whose radius is NaN
    # as they are (in 1-D the factor is NaN).
    x = np.random.default_rng(0).standard_normal(shape) + 1j
    expected = ndi.fourier_ellipsoid(x, size, n=n, axis=axis)
    for given in (x, jnp.asarray(x)):
        np.testing.assert_allclose(
            jnd.fourier_ellipsoid(given, size, n=n, axis=axis), expected,
            rtol=1e-6)


def test_output_rules():
    image = np.ones((4, 4), np.float32)
    assert jnd.fourier_gaussian(image, 1, output=np.complex64).dtype == \
        np.complex64
    with pytest.raises(RuntimeError, match="output type not supported"):
        jnd.fourier_gaussian(image, 1, output=np.int32)
    with pytest.raises(RuntimeError, match="output type not supported"):
        jnd.fourier_shift(image, 1, output=np.float64)
    with pytest.raises(RuntimeError, match="output shape"):
        jnd.fourier_uniform(image, 1, output=np.zeros((3, 4)))
    out = np.zeros((4, 4), np.complex128)
    assert jnd.fourier_shift(image, 1, output=out) is out
    with pytest.raises(NotImplementedError):
        jnd.fourier_ellipsoid(np.ones((2, 2, 2, 2)), 1)


@pytest.mark.parametrize("name, output", [
    ("fourier_gaussian", np.dtype(np.float32)), ("fourier_uniform", "float32"),
    ("fourier_ellipsoid", float), ("fourier_gaussian", "complex64"),
    ("fourier_shift", complex), ("fourier_shift", np.dtype(np.complex64))])
def test_output_dtype_in_any_form(name, output):
    # A deliberate difference (README): SciPy 1.17 takes only numpy's scalar
    # types (np.float32) and raises for the other forms of a dtype.
    image = RNG.standard_normal((4, 6))
    with pytest.raises((RuntimeError, AttributeError)):
        getattr(ndi, name)(image, 1.5, output=output)
    ours = getattr(jnd, name)(image, 1.5, output=output)
    theirs = getattr(ndi, name)(image, 1.5, output=np.dtype(output).type)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    with pytest.raises(RuntimeError, match="output type not supported"):
        getattr(jnd, name)(image, 1.5, output="int32")
    assert "deliberate difference" in getattr(jnd, name).__doc__


def test_shift_round_trip_under_jit():
    signal = jnp.asarray(RNG.standard_normal(16))
    shifted = jax.jit(lambda x: jnp.fft.ifft(jnd.fourier_shift(
        jnp.fft.fft(x), 3)).real)(signal)
    np.testing.assert_allclose(shifted, np.roll(np.asarray(signal), 3),
                               atol=1e-5)


def test_grad_with_respect_to_sigma_and_vmap():
    spectrum = jnp.fft.fft2(jnp.asarray(RNG.random((8, 8)), jnp.float32))

    def energy(sigma):
        return jnp.abs(jnd.fourier_gaussian(spectrum, sigma)).sum()

    step = 1e-3
    numeric = (energy(1.0 + step) - energy(1.0 - step)) / (2 * step)
    np.testing.assert_allclose(jax.grad(energy)(1.0), numeric, rtol=1e-2)
    batched = jax.vmap(lambda s: jnd.fourier_uniform(spectrum, s))(
        jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(batched[1],
                               ndi.fourier_uniform(np.asarray(spectrum), 2.0),
                               rtol=1e-5, atol=1e-5)
