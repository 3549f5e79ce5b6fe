"""Dispatch: what goes in comes out, output=, layouts, and no side effects."""

import platform

import array_api_strict
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as sp

import jaxndimage as jn


def test_numpy_in_numpy_out_writeable_and_independent(rng):
    image = rng.random((16, 12))
    before = image.copy()
    result = jn.gaussian_filter(image, 1.5)
    assert type(result) is np.ndarray
    assert result.flags.writeable
    np.testing.assert_array_equal(image, before)
    result[...] = -1.0
    np.testing.assert_array_equal(image, before)


def test_identity_result_does_not_alias_input(rng):
    # sigma 0 filters nothing: the result must still be a separate array.
    image = rng.random((8, 8))
    result = jn.gaussian_filter(image, 0)
    np.testing.assert_array_equal(result, image)
    result[0, 0] = 99.0
    assert image[0, 0] != 99.0


def test_lists_are_accepted_like_scipy():
    result = jn.correlate1d([2, 8, 0, 4, 1, 9, 9, 0], [1, 3])
    expected = sp.correlate1d([2, 8, 0, 4, 1, 9, 9, 0], [1, 3])
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def test_jax_in_jax_out_stays_on_device(rng):
    image = jnp.asarray(rng.random((16, 16)), dtype=jnp.float32)
    result = jn.gaussian_filter(image, 2.0)
    assert isinstance(result, jax.Array)
    assert result.dtype == jnp.float32
    assert result.devices() == image.devices()


def test_array_api_strict_in_and_out(rng):
    data = rng.random((10, 9))
    image = array_api_strict.asarray(data)
    result = jn.uniform_filter(image, 3)
    assert isinstance(result, type(image))
    np.testing.assert_allclose(np.asarray(result), sp.uniform_filter(data, 3))


def test_global_x64_flag_is_untouched(rng):
    assert not jax.config.jax_enable_x64
    result = jn.gaussian_filter(rng.random((8, 8)), 1.0)
    assert result.dtype == np.float64
    assert not jax.config.jax_enable_x64
    assert jnp.asarray(1.0).dtype == jnp.float32


def test_float64_numpy_keeps_float64_precision(rng):
    image = rng.random((32, 32)) * 1e3
    np.testing.assert_allclose(jn.gaussian_filter(image, 2.0),
                               sp.gaussian_filter(image, 2.0),
                               rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("output", [np.float32, "float32", np.dtype("int16")])
def test_output_dtype(rng, output):
    image = rng.random((9, 9)) * 100
    result = jn.uniform_filter(image, 3, output=output)
    expected = sp.uniform_filter(image, 3, output=output)
    assert result.dtype == expected.dtype
    np.testing.assert_allclose(result, expected, rtol=1e-6)


def test_output_array_is_written_and_returned(rng):
    image = rng.random((9, 7))
    out = np.zeros((9, 7), np.float32)
    returned = jn.gaussian_filter(image, 1.0, output=out)
    assert returned is out
    np.testing.assert_allclose(out, sp.gaussian_filter(image, 1.0),
                               rtol=1e-6)


def test_output_array_of_wrong_shape_is_runtime_error(rng):
    with pytest.raises(RuntimeError, match="output shape"):
        jn.gaussian_filter(rng.random((9, 7)), 1.0, output=np.zeros((7, 9)))


def test_output_array_for_jax_input_is_type_error():
    with pytest.raises(TypeError, match="immutable"):
        jn.gaussian_filter(jnp.ones((4, 4)), 1.0, output=jnp.zeros((4, 4)))


def test_output_dtype_for_jax_input():
    result = jn.sobel(jnp.arange(16.0).reshape(4, 4), output=jnp.int32)
    assert result.dtype == jnp.int32


def test_output_array_array_api_strict(rng):
    data = rng.random((6, 5))
    out = array_api_strict.zeros((6, 5), dtype=array_api_strict.float64)
    returned = jn.laplace(array_api_strict.asarray(data), output=out)
    assert returned is out
    np.testing.assert_allclose(np.asarray(out), sp.laplace(data))


def _layouts(rng):
    base = rng.random((12, 10)) * 50
    yield "C", base
    yield "F", np.asfortranarray(base)
    yield "negative strides", base[::-1, ::-2]
    yield "non-contiguous", base[1::2, 2:]
    yield "big-endian", base.astype(">f8")
    yield "big-endian int", (base * 3).astype(">i4")
    yield "transposed", base.T


@pytest.mark.parametrize("name", ["C", "F", "negative strides",
                                  "non-contiguous", "big-endian",
                                  "big-endian int", "transposed"])
def test_memory_layouts_match_scipy(rng, name):
    image = dict(_layouts(rng))[name]
    before = image.copy()
    for ours, theirs, args in [(jn.gaussian_filter, sp.gaussian_filter, (1.3,)),
                               (jn.correlate, sp.correlate,
                                (np.arange(6.0).reshape(2, 3),)),
                               (jn.uniform_filter1d, sp.uniform_filter1d, (4,))]:
        result, expected = ours(image, *args), theirs(image, *args)
        assert result.dtype == expected.dtype
        np.testing.assert_allclose(result, expected, rtol=1e-12)
    np.testing.assert_array_equal(image, before)


@pytest.mark.parametrize("shape", [(), (0,), (0, 5), (1,), (1, 1), (5, 1)])
def test_edge_shapes(shape):
    image = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    for ours, theirs in [(jn.gaussian_filter, sp.gaussian_filter),
                         (jn.uniform_filter, sp.uniform_filter)]:
        result = ours(image, 1.0 if ours is jn.gaussian_filter else 3)
        expected = theirs(image, 1.0 if ours is jn.gaussian_filter else 3)
        assert result.shape == expected.shape
        assert result.dtype == expected.dtype
        np.testing.assert_allclose(result, expected)


def test_kernel_wider_than_array():
    image = np.array([1.0, 5.0, 2.0])
    weights = np.arange(1.0, 12.0)
    for mode in ["reflect", "mirror", "wrap", "nearest", "constant"]:
        np.testing.assert_allclose(
            jn.correlate1d(image, weights, mode=mode, cval=1.5),
            sp.correlate1d(image, weights, mode=mode, cval=1.5))


def test_numpy_float16_is_rejected_like_scipy():
    with pytest.raises(RuntimeError, match="float16"):
        jn.gaussian_filter(np.ones(4, np.float16), 1.0)


def test_jax_float16_is_computed_in_float32():
    image = jnp.linspace(0, 1, 16, dtype=jnp.float16)
    result = jn.gaussian_filter(image, 1.0)
    assert result.dtype == jnp.float16
    expected = sp.gaussian_filter(np.asarray(image, np.float64), 1.0)
    np.testing.assert_allclose(np.asarray(result, np.float64), expected,
                               atol=2e-3)


@pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"),
    reason="cast_like_c matches SciPy's x86-64 builds; arm64 builds saturate "
           "out-of-range casts")
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16,
                                   np.int32, np.uint32, np.int64, np.uint64,
                                   np.bool_])
def test_integer_outputs_follow_scipy_casting(dtype):
    # Negative and out-of-range intermediate values wrap exactly as the C
    # casts of SciPy's x86-64 builds.
    image = np.array([[3, 250, 7, 0], [100, 1, 255, 9]], dtype=np.uint8)
    for func, args in [("sobel", (0,)), ("laplace", ()),
                       ("gaussian_filter", (1.0,)),
                       ("correlate1d", ([-1.5, 4.0, -2.0],))]:
        result = getattr(jn, func)(image, *args, output=dtype)
        expected = getattr(sp, func)(image, *args, output=dtype)
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result, expected, err_msg=func)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16,
                                   np.int32, np.uint32, np.int64, np.uint64,
                                   np.bool_, np.float32])
def test_host_values_cast_as_jax_casts_them(dtype):
    # Host values (a cval) are cast by numpy, with nothing to compile; the
    # result is the JAX cast's, out-of-range and non-finite values included.
    from jaxndimage._casting import cast_like_c

    values = np.array([0.0, 1.5, -1.5, 255.9, 256.0, -129.0, 3e9, -3e9,
                       1e19, -1e19, 2.0 ** 63, np.nan, np.inf, -np.inf])
    with jax.enable_x64(True):
        on_host = cast_like_c(values, dtype)
        assert isinstance(on_host, np.ndarray)
        on_device = np.asarray(cast_like_c(jnp.asarray(values), dtype))
    assert on_host.dtype == on_device.dtype
    np.testing.assert_array_equal(on_host, on_device)


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_precision_jax_input_computes_in_float32(dtype, x64):
    from jaxndimage._casting import compute_dtype

    with jax.enable_x64(x64):
        assert compute_dtype(jnp.dtype(dtype)) == np.float32
        x = jnp.linspace(0, 1, 24, dtype=dtype).reshape(4, 6)
        result = jn.gaussian_filter(x, 1.0)
        assert result.dtype == jnp.dtype(dtype)
        expected = jn.gaussian_filter(x.astype(jnp.float32), 1.0)
        np.testing.assert_allclose(np.asarray(result, np.float32),
                                   np.asarray(expected), atol=1e-2)


def test_any_stride_of_a_length_one_axis_is_accepted():
    # numpy leaves the stride of a length-1 axis free; XLA must not read it
    # as a permuted layout (compiled programs refuse those).
    base = np.arange(49.0).reshape(7, 1, 7)
    odd = np.lib.stride_tricks.as_strided(base, strides=(56, 8, 8))
    assert odd.flags.c_contiguous
    for x in (base, odd, base):
        np.testing.assert_array_equal(
            jn.grey_closing(x, size=(3, 1, 3)),
            sp.grey_closing(base, size=(3, 1, 3)))


EMPTY = np.zeros((0, 3))
EMPTY_BOOL = np.zeros((0, 3), bool)


@pytest.mark.parametrize("name, args, kwargs, dtype", [
    ("correlate", (EMPTY, np.ones((3, 3))), {}, np.float64),
    ("gaussian_filter", (EMPTY, 1.0), {}, np.float32),
    ("gaussian_gradient_magnitude", (EMPTY, 1.0), {}, np.float64),
    ("uniform_filter1d", (EMPTY, 3), {}, np.float64),
    ("sobel", (EMPTY,), {}, np.int16),
    ("median_filter", (EMPTY, 3), {}, np.float64),
    ("rank_filter", (EMPTY, 1, 3), {}, np.float64),
    ("generic_filter", (EMPTY, np.mean, 3), {}, np.float64),
    ("vectorized_filter", (EMPTY, np.mean), {"size": 3}, np.float64),
    ("vectorized_filter", (EMPTY, jnp.max), {"size": (1, 2), "axes": (1, 0)},
     np.int32),
    ("fourier_gaussian", (EMPTY, 1.0), {}, np.float64),
    ("fourier_ellipsoid", (EMPTY, 1.0), {}, np.float32),
    ("fourier_shift", (EMPTY, 1.0), {}, np.complex128),
    ("spline_filter", (EMPTY,), {}, np.float64),
    ("zoom", (EMPTY, 1.0), {}, np.float64),
    ("shift", (EMPTY, 1.0), {}, np.float64),
    ("map_coordinates", (EMPTY, np.zeros((2, 0, 3))), {}, np.float64),
    ("binary_erosion", (EMPTY_BOOL,), {}, bool),
    ("binary_fill_holes", (EMPTY_BOOL,), {}, bool),
    ("binary_propagation", (EMPTY_BOOL,), {}, bool),
    ("grey_closing", (EMPTY,), {"size": 3}, np.float64),
    ("white_tophat", (EMPTY,), {"size": 3}, np.float64),
    ("label", (EMPTY_BOOL,), {}, np.int32),
    ("watershed_ift", (np.zeros((0, 3), np.uint8), np.zeros((0, 3), np.int32)),
     {}, np.int32),
])
def test_empty_input_with_an_output_array_returns_what_scipy_returns(
        name, args, kwargs, dtype):
    # SciPy returns the output array, None, a count (label) or, for
    # vectorized_filter, the input as it is and the array untouched.
    expected_output = np.full(EMPTY.shape, 7, dtype)
    got_output = expected_output.copy()
    expected = getattr(sp, name)(*args, **kwargs, output=expected_output)
    got = getattr(jn, name)(*args, **kwargs, output=got_output)
    assert (got is got_output) == (expected is expected_output)
    assert type(got) is type(expected)
    if isinstance(expected, np.ndarray) and expected is not expected_output:
        assert got.dtype == expected.dtype
        assert got.shape == expected.shape
