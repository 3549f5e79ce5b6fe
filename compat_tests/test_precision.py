"""float32 arithmetic: numpy input computes as SciPy does, JAX input in float32.

SciPy computes in float64 and rounds to the output dtype after each pass.
For numpy float32 input jaxndimage does the same (``_casting``), with each
product rounded before it is added as in SciPy (``_filters._runtime_one``
keeps XLA from contracting them into fused multiply-adds), so its results
equal SciPy's bit for bit; the spline prefilter's, up to a rare element
rounded the other way (its case says why).
"""

import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as sp

import jaxndimage as jn

RNG = np.random.default_rng(20261201)
IMAGES = [RNG.random(shape).astype(np.float32) for shape in ((61, 77), (9, 14, 11))]
WEIGHTS = {2: RNG.random((3, 4)), 3: RNG.random((2, 3, 3))}
LONG = RNG.random(97) - 0.5

#: name -> (call, least fraction of bit-equal elements)
CASES = {
    "gaussian_filter": (lambda m, x: m.gaussian_filter(x, 1.3, mode="constant"), 1.0),
    "gaussian_filter order 1": (lambda m, x: m.gaussian_filter(x, 2.1, order=1), 1.0),
    "gaussian_laplace": (lambda m, x: m.gaussian_laplace(x, 1.5), 1.0),
    "gaussian_gradient_magnitude": (lambda m, x: m.gaussian_gradient_magnitude(x, 1.5), 1.0),
    "uniform_filter": (lambda m, x: m.uniform_filter(x, 5, mode="wrap"), 1.0),
    "uniform_filter1d long": (lambda m, x: m.uniform_filter1d(x, 21, axis=0), 1.0),
    "correlate1d": (lambda m, x: m.correlate1d(x, [0.3, -1.7, 2.9, 0.1], axis=-1), 1.0),
    # more terms than one fusion unrolls: looped blocks, same order; the
    # Gaussian also reads further than a canvas does
    "correlate1d long": (lambda m, x: m.correlate1d(x, LONG, axis=0), 1.0),
    "gaussian_filter wide": (lambda m, x: m.gaussian_filter(x, 20.0, mode="wrap"), 1.0),
    "sobel": (lambda m, x: m.sobel(x, axis=0), 1.0),
    "prewitt": (lambda m, x: m.prewitt(x), 1.0),
    "laplace": (lambda m, x: m.laplace(x, mode="mirror"), 1.0),
    "correlate": (lambda m, x: m.correlate(x, WEIGHTS[x.ndim]), 1.0),
    # SciPy's recursions in numpy, whose segments and initial sums round
    # in another order (agreeing to about 1e-15 of the result's range):
    # each pass stored in float32 can round one element in a thousand the
    # other way
    "spline_filter": (lambda m, x: m.spline_filter(x, 3, output=np.float32), 0.999),
    "zoom order 3": (lambda m, x: m.zoom(x, 1.3, order=3), 1.0),
    "zoom order 1": (lambda m, x: m.zoom(x, 0.7, order=1), 1.0),
    "shift": (lambda m, x: m.shift(x, 1.3, order=3, mode="nearest"), 1.0),
    "fourier_gaussian": (lambda m, x: m.fourier_gaussian(x, 2.0), 1.0),
}


@pytest.mark.parametrize("x", IMAGES, ids=lambda x: "x".join(map(str, x.shape)))
@pytest.mark.parametrize("name", CASES)
def test_numpy_float32_equals_scipy_bit_for_bit(name, x):
    call, least = CASES[name]
    expected = call(sp, x)
    got = call(jn, x)
    assert got.dtype == expected.dtype
    equal = np.mean(got == expected)
    assert equal >= least, f"{name}: {equal:.4%} of the elements bit-equal"
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)


#: float64 input gives SciPy's bits too: the Gaussian derivatives' weights
#: (SciPy's polynomial products) and passes wider than a canvas reads, in
#: images and volumes.
FLOAT64_CASES = {
    "gaussian order 2": lambda m, x: m.gaussian_filter(x, 3.0, order=2),
    "gaussian_filter1d order 3": lambda m, x: m.gaussian_filter1d(
        x, 2.5, axis=1, order=3),
    "gaussian_laplace wide": lambda m, x: m.gaussian_laplace(
        x, [13.0] + [2.0] * (x.ndim - 1), mode="nearest"),
    "gaussian_filter wide": lambda m, x: m.gaussian_filter(
        x, 14.0, mode="constant", cval=0.5),
    "correlate1d wide": lambda m, x: m.correlate1d(
        x, np.arange(120.0) - 40, axis=0, mode="wrap", origin=3),
}
WIDE_VOLUMES = [RNG.random(shape) for shape in ((64, 70), (20, 17, 23),
                                                 (9, 8, 10, 7))]


@pytest.mark.parametrize("x", WIDE_VOLUMES,
                         ids=lambda x: "x".join(map(str, x.shape)))
@pytest.mark.parametrize("name", FLOAT64_CASES)
def test_numpy_float64_equals_scipy_bit_for_bit(name, x):
    expected = FLOAT64_CASES[name](sp, x)
    got = FLOAT64_CASES[name](jn, x)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("mode", ["wrap", "constant", "mirror"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_signed_zeros_of_derivative_kernels_are_scipys(mode, dtype):
    # An antisymmetric kernel starts from the centre's product and adds
    # (left - right) * weight: data of zeros and signed zeros can end at
    # -0, as SciPy's sums do.
    x = np.random.default_rng(5).choice(
        [-3.0, -0.0, 0.0, 0.0, 2.0], size=(7, 9)).astype(dtype)
    for call in (lambda m: m.gaussian_filter1d(x, 1.0, order=1, mode=mode),
                 lambda m: m.gaussian_filter(x, 1.0, order=(1, 2), mode=mode),
                 lambda m: m.sobel(x, mode=mode),
                 lambda m: m.prewitt(x, axis=0, mode=mode),
                 lambda m: m.correlate1d(x, [-1.0, 0.0, 1.0], mode=mode)):
        expected, got = call(sp), call(jn)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


def test_jax_float32_computes_in_float32():
    # The same call on a JAX array computes in float32: no longer SciPy's
    # bits, but within float32 rounding of them.
    x = IMAGES[0]
    expected = sp.gaussian_filter(x, 1.3, mode="constant")
    got = jn.gaussian_filter(jnp.asarray(x), 1.3, mode="constant")
    assert got.dtype == jnp.float32
    assert np.mean(np.asarray(got) == expected) < 1.0
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_scikit_image_gives_the_same_bits_with_the_patch():
    # scikit-image functions built on scipy.ndimage (ridge filters, corner
    # and blob detectors) on a float64 image, with SciPy and with
    # jaxndimage patched in.
    skimage = pytest.importorskip("skimage")
    from skimage import feature, filters

    from jaxndimage import scipy_backend

    image = skimage.img_as_float(skimage.data.camera()[100:164, 150:230])
    calls = {
        "frangi": lambda: filters.frangi(image),
        "sato": lambda: filters.sato(image, sigmas=[1, 2]),
        "corner_harris": lambda: feature.corner_harris(image),
        "corner_shi_tomasi": lambda: feature.corner_shi_tomasi(image),
        "blob_log": lambda: feature.blob_log(image, max_sigma=6, num_sigma=4,
                                             threshold=0.05),
        "gaussian float32": lambda: filters.gaussian(image.astype(np.float32), 2),
    }
    expected = {name: call() for name, call in calls.items()}
    with scipy_backend.patched():
        got = {name: call() for name, call in calls.items()}
    for name in calls:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)
