"""JAX transformations: jit, vmap and grad through the linear filters."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as sp
from jax.test_util import check_grads

import jaxndimage as jn


@pytest.fixture(autouse=True)
def float64():
    with jax.enable_x64(True):
        yield


@pytest.fixture
def image(rng):
    return jnp.asarray(rng.random((9, 11)))


@pytest.mark.parametrize("call", [
    lambda x: jn.gaussian_filter(x, 1.5, mode="wrap"),
    lambda x: jn.gaussian_filter1d(x, 2.0, order=1),
    lambda x: jn.uniform_filter(x, (3, 4), mode="nearest"),
    lambda x: jn.correlate(x, jnp.arange(6.0).reshape(2, 3), mode="mirror"),
    lambda x: jn.convolve1d(x, [1.0, -2.0, 0.5], axis=0, mode="constant",
                            cval=2.0),
    lambda x: jn.sobel(x, 0),
    lambda x: jn.laplace(x),
    lambda x: jn.gaussian_laplace(x, 1.0),
    lambda x: jn.gaussian_gradient_magnitude(x, 1.0),
], ids=["gaussian", "gaussian1d", "uniform", "correlate", "convolve1d",
        "sobel", "laplace", "gaussian_laplace", "gradient_magnitude"])
def test_jit_equals_eager_and_numpy_path(image, call):
    eager = call(image)
    jitted = jax.jit(call)(image)
    np.testing.assert_allclose(jitted, eager, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.asarray(call(np.asarray(image))), eager,
                               rtol=1e-12, atol=1e-12)


def test_vmap_over_a_batch_equals_scipy_loop(rng):
    batch = rng.random((4, 10, 12))
    blur = jax.jit(jax.vmap(lambda x: jn.gaussian_filter(x, 1.7)))
    result = blur(jnp.asarray(batch))
    expected = np.stack([sp.gaussian_filter(b, 1.7) for b in batch])
    np.testing.assert_allclose(result, expected, rtol=1e-12)


def test_gaussian_filter_axes_on_batch_equals_vmap(rng):
    batch = jnp.asarray(rng.random((3, 8, 9)))
    direct = jn.gaussian_filter(batch, 1.2, axes=(1, 2))
    mapped = jax.vmap(lambda x: jn.gaussian_filter(x, 1.2))(batch)
    np.testing.assert_allclose(direct, mapped, rtol=1e-12)


def test_grad_gaussian_filter_wrt_input(image):
    check_grads(lambda x: jn.gaussian_filter(x, 1.3, mode="reflect"),
                (image,), order=2, modes=["fwd", "rev"])


def test_grad_gaussian_filter_wrt_sigma(image):
    def loss(sigma):
        return (jn.gaussian_filter(image, sigma, radius=4) ** 2).sum()

    check_grads(loss, (1.4,), order=1, modes=["fwd", "rev"])


def test_grad_correlate_wrt_input_and_weights(image, rng):
    weights = jnp.asarray(rng.random((3, 2)))
    check_grads(lambda x, w: jn.correlate(x, w, mode="nearest"),
                (image, weights), order=1, modes=["fwd", "rev"])


def test_grad_correlate1d_wrt_weights(image):
    check_grads(lambda w: jn.correlate1d(image, w, mode="wrap"),
                (jnp.asarray([0.2, 0.5, 0.3, 0.1]),), order=1,
                modes=["fwd", "rev"])


def test_grad_of_a_traced_cval(image):
    def loss(cval):
        return jn.uniform_filter(image, 5, mode="constant", cval=cval).sum()

    check_grads(loss, (0.5,), order=1, modes=["fwd", "rev"])


def test_traced_sigma_without_radius_is_a_clear_error(image):
    with pytest.raises(TypeError, match="radius"):
        jax.jit(lambda s: jn.gaussian_filter(image, s))(1.0)


def test_new_sigma_same_radius_gives_scipy_values_under_jit(image):
    blur = jax.jit(lambda x, s: jn.gaussian_filter(x, s, radius=3))
    for sigma in (0.8, 1.1):
        np.testing.assert_allclose(
            blur(image, sigma),
            sp.gaussian_filter(np.asarray(image), sigma, radius=3),
            rtol=1e-12)


def test_generic_laplace_with_traceable_derivative_under_jit(image):
    def derivative2(x, axis, output, mode, cval):
        return jn.correlate1d(x, [1.0, -2.0, 1.0], axis, output, mode, cval)

    result = jax.jit(lambda x: jn.generic_laplace(x, derivative2))(image)
    np.testing.assert_allclose(result, sp.laplace(np.asarray(image)),
                               rtol=1e-12, atol=1e-12)
