"""The patch tools against scikit-image, and the inverses against the forward ops."""

import doctest
import importlib
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import skimage.util
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxndimage import (
    montage,
    unmontage,
    unview_as_blocks,
    unview_as_windows,
    view_as_blocks,
    view_as_windows,
)

SIX = [
    "montage",
    "unmontage",
    "unview_as_blocks",
    "unview_as_windows",
    "view_as_blocks",
    "view_as_windows",
]
DTYPES = [bool, np.uint8, np.float32, np.float64]


def sample(shape, dtype, seed=0):
    values = np.random.default_rng(seed).normal(size=shape) * 60
    return (values > 0) if dtype is bool else values.astype(dtype)


def layouts(arr):
    """The same values as C-contiguous, Fortran, strided and reversed arrays."""
    strided = np.repeat(arr, 2, axis=-1)[..., ::2]
    return {
        "C": np.ascontiguousarray(arr),
        "F": np.asfortranarray(arr),
        "strided": strided,
        "reversed": np.flip(np.flip(arr).copy()),
    }


def raised(func, *args, **kwargs):
    try:
        func(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return type(error)
    return None


def naive_overlap_add(windows, step, shape):
    """Per-window loop: the textbook reconstruction, for reference."""
    ndim = windows.ndim // 2
    total = np.zeros(shape, np.result_type(windows.dtype, np.float64))
    count = np.zeros(shape)
    for index in np.ndindex(*windows.shape[:ndim]):
        region = tuple(
            slice(i * s, i * s + w) for i, s, w in zip(index, step, windows.shape[ndim:])
        )
        total[region] += windows[index]
        count[region] += 1
    return total, count


# ------------------------------------------------------------- view_as_blocks

BLOCK_CASES = [
    ((12,), (3,)),
    ((6, 8), (2, 4)),
    ((6, 8), (6, 1)),
    ((4, 6, 4), (1, 2, 2)),
    ((4, 2, 6, 4), (2, 1, 3, 2)),
]


@pytest.mark.parametrize("shape, block", BLOCK_CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_view_as_blocks_matches_skimage(shape, block, dtype):
    for name, arr in layouts(sample(shape, dtype)).items():
        before = arr.copy()
        expected = skimage.util.view_as_blocks(arr, block)
        got = view_as_blocks(arr, block)
        assert type(got) is np.ndarray, name
        assert got.dtype == expected.dtype and got.strides == expected.strides, name
        np.testing.assert_array_equal(got, expected)
        assert np.shares_memory(got, arr), "numpy input must give a zero-copy view"
        np.testing.assert_array_equal(arr, before)
    on_device = jnp.asarray(arr)
    got = view_as_blocks(on_device, block)
    assert isinstance(got, jax.Array)
    np.testing.assert_array_equal(got, skimage.util.view_as_blocks(np.asarray(on_device), block))


@pytest.mark.parametrize(
    "args",
    [
        ([2, 2],),  # not a tuple
        ((0, 2),),
        ((-2, 2),),
        ((2,),),
        ((2, 2, 2),),
        ((3, 2),),  # does not divide
        ((2.0, 2),),
    ],
)
def test_view_as_blocks_errors_match_skimage(args):
    arr = np.arange(16.0).reshape(4, 4)
    expected = raised(skimage.util.view_as_blocks, arr, *args)
    assert expected is not None
    for a in (arr, jnp.asarray(arr)):
        with pytest.raises(expected, match="block_shape"):
            view_as_blocks(a, *args)


# ------------------------------------------------------------ view_as_windows

WINDOW_CASES = [
    ((10,), 3, 1),
    ((10,), (4,), 3),
    ((7, 9), (3, 2), 1),
    ((7, 9), 3, 2),
    ((7, 9), (2, 5), (3, 1)),
    ((8, 8), 4, 4),
    ((9, 9), 2, 5),  # step larger than the window
    ((5, 6, 7), (2, 3, 4), (1, 2, 3)),
    ((4, 5, 3, 6), (2, 2, 1, 3), (2, 1, 1, 2)),
    ((6, 5), 2.0, 1),  # skimage accepts a float window
]


@pytest.mark.parametrize("shape, window, step", WINDOW_CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_view_as_windows_matches_skimage(shape, window, step, dtype):
    for name, arr in layouts(sample(shape, dtype)).items():
        expected = skimage.util.view_as_windows(arr, window, step)
        got = view_as_windows(arr, window, step)
        assert type(got) is np.ndarray, name
        assert got.dtype == expected.dtype and got.strides == expected.strides, name
        np.testing.assert_array_equal(got, expected)
        assert np.shares_memory(got, arr), "numpy input must give a zero-copy view"
    on_device = jnp.asarray(arr)
    got = view_as_windows(on_device, window, step)
    assert isinstance(got, jax.Array) and got.shape == expected.shape
    np.testing.assert_array_equal(
        got, skimage.util.view_as_windows(np.asarray(on_device), window, step)
    )


@pytest.mark.parametrize(
    "args",
    [
        ((2, 2, 2),),  # wrong length
        ((5, 2),),  # too large
        ((0, 2),),  # too small
        ((-1, 2),),
        ((2, 2), 0),  # step below 1
        ((2, 2), -1),
        ((2, 2), (1, 0)),
        ((2, 2), (1,)),
        ((2, 2), 2.0),
        ((2, 2), (1, 1.5)),
    ],
)
def test_view_as_windows_errors_match_skimage(args):
    arr = np.arange(16.0).reshape(4, 4)
    expected = raised(skimage.util.view_as_windows, arr, *args)
    assert expected is not None
    for a in (arr, jnp.asarray(arr)):
        with pytest.raises(expected, match="window_shape|step"):
            view_as_windows(a, *args)


def test_view_functions_reject_non_arrays():
    assert raised(skimage.util.view_as_windows, [[1, 2], [3, 4]], 1) is TypeError
    with pytest.raises(TypeError, match="arr_in"):
        view_as_windows([[1, 2], [3, 4]], 1)
    with pytest.raises(TypeError, match="arr_in"):
        view_as_blocks([[1, 2], [3, 4]], (1, 1))


# -------------------------------------------------------------------- montage

MONTAGE_OPTIONS = [
    {},
    {"fill": 3},
    {"fill": 0.25},
    {"rescale_intensity": True},
    {"rescale_intensity": True, "fill": 7},
    {"grid_shape": (1, 5)},
    {"grid_shape": (4, 2), "padding_width": 2},
    {"grid_shape": [2, 3]},
    {"padding_width": 1},
    {"padding_width": 3, "rescale_intensity": True},
]


@pytest.mark.parametrize("options", MONTAGE_OPTIONS)
@pytest.mark.parametrize("dtype", [bool, np.uint8, np.int8, np.float16, np.float32, np.float64])
def test_montage_grayscale_matches_skimage(options, dtype):
    for name, arr in layouts(sample((5, 4, 3), dtype)).items():
        before = arr.copy()
        got = montage(arr, **options)
        np.testing.assert_array_equal(arr, before)  # we never modify the input ...
        expected = skimage.util.montage(arr, **options)  # ... skimage may: call it last
        assert type(got) is np.ndarray and got.dtype == expected.dtype, name
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("channel_axis", [0, 1, 2, 3, -1, -2, -3, -4, (1,), (-1,), [2]])
@pytest.mark.parametrize(
    "options",
    [{}, {"rescale_intensity": True, "padding_width": 1}, {"fill": [1, 2, 3, 4, 5, 6]}],
)
@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64])
def test_montage_every_channel_axis_matches_skimage(channel_axis, options, dtype):
    arr = sample((5, 4, 3, 2), dtype)
    expected = skimage.util.montage(arr.copy(), channel_axis=channel_axis, **options)
    got = montage(arr, channel_axis=channel_axis, **options)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_montage_per_channel_fill_and_lists():
    stack = sample((3, 2, 2, 3), np.float64)
    expected = skimage.util.montage(stack, fill=[0.1, 0.2, 0.3], channel_axis=-1)
    np.testing.assert_array_equal(montage(stack, fill=[0.1, 0.2, 0.3], channel_axis=-1), expected)
    # skimage's `fill == 'mean'` chokes on an ndarray fill; we take any array-like
    assert raised(skimage.util.montage, stack, fill=np.array([0.1, 0.2, 0.3]), channel_axis=-1)
    expected = skimage.util.montage(stack, fill=[[0.1], [0.2], [0.3]], channel_axis=-1)
    for fill in ([[0.1], [0.2], [0.3]], np.array([0.1, 0.2, 0.3])):
        np.testing.assert_array_equal(montage(stack, fill=fill, channel_axis=-1), expected)
    as_list = stack[..., 0].tolist()
    np.testing.assert_array_equal(montage(as_list), skimage.util.montage(as_list))


def test_montage_constant_and_nan_images_rescale_like_skimage():
    stack = np.stack([np.full((2, 2), 5.0), np.arange(4.0).reshape(2, 2), np.full((2, 2), -3.0)])
    expected = skimage.util.montage(stack.copy(), rescale_intensity=True)
    np.testing.assert_array_equal(montage(stack, rescale_intensity=True), expected)
    stack[1, 0, 0] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = skimage.util.montage(stack.copy(), rescale_intensity=True)
        got = montage(stack, rescale_intensity=True)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    "arr_shape, kwargs, name",
    [
        ((4, 3), {}, "channel_axis"),  # 2-D grayscale: wrong ndim
        ((2, 4, 3, 3), {}, "channel_axis"),  # 4-D without channel_axis
        ((2, 4, 3), {"channel_axis": -1}, "channel_axis"),
        ((2, 4, 3, 3), {"channel_axis": 4}, "channel_axis"),
        ((2, 4, 3, 3), {"channel_axis": -5}, "channel_axis"),
        ((2, 4, 3, 3), {"channel_axis": (0, 1)}, "channel_axis"),
        ((2, 4, 3, 3), {"channel_axis": ()}, "channel_axis"),
        ((2, 4, 3, 3), {"channel_axis": 1.5}, "channel_axis"),
        ((5, 2, 2), {"grid_shape": (2, 2)}, "grid_shape"),  # too few tiles
        ((5, 2, 2), {"grid_shape": (0, 5)}, "grid_shape"),
        ((3, 2, 2), {"grid_shape": (-2, -2)}, "grid_shape"),
        ((3, 2, 2), {"grid_shape": (1, 2, 3)}, "grid_shape"),
        ((3, 2, 2), {"grid_shape": 3}, "grid_shape"),
        ((3, 2, 2), {"grid_shape": ("a", 2)}, "grid_shape"),
        ((3, 2, 2), {"padding_width": 1.5}, "padding_width"),
        ((3, 2, 2, 3), {"channel_axis": -1, "fill": 0.5}, "fill"),
        ((3, 2, 2, 3), {"channel_axis": -1, "fill": [0.5, 0.5]}, "fill"),
        ((3, 2, 2), {"fill": "median"}, "fill"),
    ],
)
def test_montage_errors_match_skimage(arr_shape, kwargs, name):
    arr = sample(arr_shape, np.float32)
    expected = raised(skimage.util.montage, arr.copy(), **kwargs)
    assert expected is not None
    for a in (arr, jnp.asarray(arr)):
        with pytest.raises(expected, match=name):
            montage(a, **kwargs)


@pytest.mark.parametrize(
    "options", [{}, {"rescale_intensity": True, "padding_width": 2, "grid_shape": (2, 4)}]
)
@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64])
def test_montage_jax_matches_skimage_with_x64(options, dtype):
    arr = sample((5, 4, 3, 2), dtype)
    expected = skimage.util.montage(arr.copy(), channel_axis=1, **options)
    with jax.enable_x64(True):
        got = montage(jnp.asarray(arr), channel_axis=1, **options)
    assert isinstance(got, jax.Array) and got.dtype == expected.dtype
    # XLA may reorder the mean and the rescaling arithmetic: last-place differences only,
    # which an integer dtype's truncation can turn into 1
    atol = 1 if np.issubdtype(dtype, np.integer) else 1e-6
    np.testing.assert_allclose(np.asarray(got, float), expected.astype(float), rtol=1e-6, atol=atol)


# -------------------------------------------------------------- unview_as_blocks


@pytest.mark.parametrize("shape, block", BLOCK_CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unview_as_blocks_round_trip(shape, block, dtype):
    for name, arr in layouts(sample(shape, dtype)).items():
        blocks = view_as_blocks(arr, block)
        got = unview_as_blocks(blocks)
        assert type(got) is np.ndarray and got.dtype == arr.dtype, name
        np.testing.assert_array_equal(got, arr)
        assert not np.shares_memory(got, arr)
    got = unview_as_blocks(view_as_blocks(jnp.asarray(arr), block))
    assert isinstance(got, jax.Array)
    np.testing.assert_array_equal(got, jnp.asarray(arr))


def test_unview_as_blocks_vit_patches():
    channels, rows, cols, ph, pw = 3, 4, 5, 2, 3
    image = np.arange(channels * rows * ph * cols * pw).reshape(channels, rows * ph, cols * pw)
    # The patches a ViT sees: (V, H, C, PH, PW), V*H tokens of C*PH*PW values
    patches = image.reshape(channels, rows, ph, cols, pw).transpose(1, 3, 0, 2, 4)
    np.testing.assert_array_equal(view_as_blocks(image, (channels, ph, pw))[0], patches)
    np.testing.assert_array_equal(unview_as_blocks(patches[None]), image)
    np.testing.assert_array_equal(unview_as_blocks(jnp.asarray(patches)[None]), image)
    # A straight reshape to channels-last image dimensions scrambles it
    scrambled = patches.reshape(rows * ph, cols * pw, channels)
    assert not np.array_equal(scrambled, image.transpose(1, 2, 0))


def test_unview_as_blocks_is_a_copy_even_when_it_could_be_a_view():
    blocks = np.arange(16.0).reshape(1, 1, 4, 4)
    got = unview_as_blocks(blocks)
    assert not np.shares_memory(got, blocks)
    np.testing.assert_array_equal(got, blocks[0, 0])


def test_unview_as_blocks_errors():
    with pytest.raises(ValueError, match="blocks"):
        unview_as_blocks(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError, match="blocks"):
        unview_as_blocks(jnp.zeros((2, 3, 4)))


def test_unview_as_blocks_jit_vmap_grad():
    blocks = jnp.asarray(sample((3, 2, 4, 5), np.float32))
    image = jax.jit(unview_as_blocks)(blocks)
    np.testing.assert_array_equal(image, unview_as_blocks(np.asarray(blocks)))
    batched = jax.vmap(unview_as_blocks)(jnp.stack([blocks, 2 * blocks]))
    np.testing.assert_array_equal(batched[1], 2 * image)
    weights = jnp.asarray(sample((12, 10), np.float32, seed=1))
    grad = jax.grad(lambda b: jnp.sum(unview_as_blocks(b) * weights))(blocks)
    np.testing.assert_array_equal(grad, view_as_blocks(weights, (4, 5)))


# ------------------------------------------------------------- unview_as_windows


@pytest.mark.parametrize("shape, window, step", WINDOW_CASES)
def test_unview_as_windows_against_naive_overlap_add(shape, window, step):
    arr = sample(shape, np.float64)
    windows = skimage.util.view_as_windows(arr, window, step)
    ndim = arr.ndim
    steps = (step,) * ndim if np.isscalar(step) else step
    total, count = naive_overlap_add(windows, steps, shape)
    covered = count > 0

    summed = unview_as_windows(windows, step, reduce="sum", shape=shape)
    assert type(summed) is np.ndarray and summed.dtype == np.float64
    np.testing.assert_allclose(summed, total, rtol=1e-13, atol=1e-12)

    mean = unview_as_windows(windows, step, shape=shape)
    np.testing.assert_allclose(mean[covered], arr[covered], rtol=1e-13, atol=1e-12)
    assert (mean[~covered] == 0).all()

    default = unview_as_windows(windows, step)
    extent = default.shape
    np.testing.assert_array_equal(default, mean[tuple(slice(0, e) for e in extent)])
    assert extent == tuple(
        (n - 1) * s + w for n, s, w in zip(windows.shape[:ndim], steps, windows.shape[ndim:])
    )

    with jax.enable_x64(True):
        jax_mean = unview_as_windows(jnp.asarray(windows), step, shape=shape)
    assert isinstance(jax_mean, jax.Array)
    np.testing.assert_allclose(jax_mean, mean, rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize(
    "dtype, sum_dtype, mean_dtype",
    [
        (bool, np.int64, np.float64),
        (np.uint8, np.uint64, np.float64),
        (np.int16, np.int64, np.float64),
        (np.float32, np.float32, np.float32),
        (np.float64, np.float64, np.float64),
        (np.complex64, np.complex64, np.complex64),
    ],
)
def test_unview_as_windows_dtypes_follow_numpy_reductions(dtype, sum_dtype, mean_dtype):
    arr = sample((6, 7), dtype)
    windows = view_as_windows(arr, (3, 2), (2, 1))
    summed = unview_as_windows(windows, (2, 1), reduce="sum")
    mean = unview_as_windows(windows, (2, 1))
    assert summed.dtype == sum_dtype and mean.dtype == mean_dtype
    np.testing.assert_array_equal(mean, arr[:5].astype(mean_dtype))
    total, _ = naive_overlap_add(windows, (2, 1), (5, 7))
    np.testing.assert_allclose(summed, total.astype(sum_dtype), rtol=1e-6)


def test_unview_as_windows_exact_round_trip_on_integers():
    arr = np.arange(40 * 30).reshape(40, 30)
    for step in [1, 2, 3, (4, 5)]:
        windows = view_as_windows(arr, (6, 5), step)
        shape = arr.shape
        got = unview_as_windows(windows, step, shape=shape)
        covered = unview_as_windows(np.ones_like(windows), step, reduce="sum", shape=shape) > 0
        np.testing.assert_array_equal(got[covered], arr[covered])


def test_unview_as_windows_sum_is_the_adjoint_of_view_as_windows():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(11, 13))
    for window, step in [((4, 3), 1), ((4, 3), (3, 2)), ((2, 2), 5)]:
        vx = view_as_windows(x, window, step)
        y = rng.normal(size=vx.shape)
        adjoint = unview_as_windows(y, step, reduce="sum", shape=x.shape)
        np.testing.assert_allclose(np.vdot(vx, y), np.vdot(x, adjoint), rtol=1e-12)


def test_unview_as_windows_jit_vmap_grad():
    image = jnp.asarray(sample((9, 10), np.float32))
    windows = view_as_windows(image, (4, 3), 2)
    mean = jax.jit(lambda w: unview_as_windows(w, 2))(windows)
    np.testing.assert_allclose(mean, image[:8, :9], rtol=1e-6)
    batched = jax.vmap(lambda w: unview_as_windows(w, 2, reduce="sum"))(
        jnp.stack([windows, -windows])
    )
    np.testing.assert_allclose(batched[0], -batched[1])
    # The gradient of <unview_sum(W), g> is view_as_windows(g)
    g = jnp.asarray(sample((8, 9), np.float32, seed=2))
    grad = jax.grad(lambda w: jnp.vdot(unview_as_windows(w, 2, reduce="sum"), g))(windows)
    np.testing.assert_allclose(grad, view_as_windows(g, (4, 3), 2), rtol=1e-6)
    # ... and through the mean, divided by the coverage
    grad = jax.grad(lambda w: jnp.sum(unview_as_windows(w, 2)))(windows)
    coverage = unview_as_windows(jnp.ones_like(windows), 2, reduce="sum")
    np.testing.assert_allclose(grad, view_as_windows(1 / coverage, (4, 3), 2), rtol=1e-6)
    # view_as_windows itself differentiates to the overlap-add
    grad = jax.grad(lambda x: jnp.sum(view_as_windows(x, (4, 3), 2) ** 2))(image[:8, :9])
    np.testing.assert_allclose(grad, 2 * image[:8, :9] * coverage, rtol=1e-6)


def test_unview_as_windows_errors():
    windows = np.zeros((3, 4, 2, 2))
    with pytest.raises(ValueError, match="windows"):
        unview_as_windows(np.zeros((3, 4, 2)))
    with pytest.raises(ValueError, match="step"):
        unview_as_windows(windows, 0)
    with pytest.raises(ValueError, match="step"):
        unview_as_windows(windows, (1, 0))
    with pytest.raises(ValueError, match="step"):
        unview_as_windows(windows, (1, 1, 1))
    with pytest.raises(TypeError, match="step"):
        unview_as_windows(windows, (1, 1.5))
    with pytest.raises(ValueError, match="reduce"):
        unview_as_windows(windows, reduce="max")
    with pytest.raises(ValueError, match="shape"):
        unview_as_windows(windows, 2, shape=(6, 10))  # covers (6, 8): 9 at most
    with pytest.raises(ValueError, match="shape"):
        unview_as_windows(windows, 2, shape=(5, 8))
    with pytest.raises(ValueError, match="shape"):
        unview_as_windows(windows, 2, shape=(6,))
    with pytest.raises(TypeError, match="shape"):
        unview_as_windows(windows, 2, shape=(6.0, 8))
    with pytest.raises(ValueError, match="windows"):
        unview_as_windows(np.zeros((0, 4, 2, 2)))


# ------------------------------------------------------------------ unmontage


@pytest.mark.parametrize(
    "n_images, grid_shape, grid, padding_width",
    [(5, None, (3, 3), 0), (6, (2, 3), (2, 3), 2), (3, (3, 1), (3, 1), 1)],
)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unmontage_inverts_montage(n_images, grid_shape, grid, padding_width, dtype):
    gray = sample((n_images, 4, 3), dtype)
    tiled = montage(gray, grid_shape=grid_shape, padding_width=padding_width)
    got = unmontage(tiled, grid, padding_width=padding_width, n_images=n_images)
    assert type(got) is np.ndarray and got.dtype == gray.dtype
    np.testing.assert_array_equal(got, gray)
    got = unmontage(jnp.asarray(tiled), grid, padding_width=padding_width, n_images=n_images)
    assert isinstance(got, jax.Array)
    np.testing.assert_array_equal(got, jnp.asarray(gray))


@pytest.mark.parametrize("channel_axis", [0, 1, 2, 3, -1])
def test_unmontage_color_every_channel_axis(channel_axis):
    stack = sample((5, 4, 3, 2), np.float32)
    tiled = skimage.util.montage(stack, channel_axis=channel_axis, padding_width=1)
    channels_last = np.moveaxis(stack, channel_axis, -1)
    n_images = channels_last.shape[0]
    side = math.ceil(math.sqrt(n_images))
    got = unmontage(tiled, (side, side), padding_width=1, n_images=n_images, channel_axis=-1)
    np.testing.assert_array_equal(got, channels_last)
    got = unmontage(np.moveaxis(tiled, -1, 0), (side, side), padding_width=1, channel_axis=0)
    np.testing.assert_array_equal(got[:n_images], channels_last)
    assert got.shape[0] == side * side


def test_unmontage_jit_and_grad():
    stack = jnp.asarray(sample((4, 3, 2), np.float32))
    tiled = montage(stack, padding_width=1, fill=0.0)
    got = jax.jit(lambda m: unmontage(m, (2, 2), padding_width=1))(tiled)
    np.testing.assert_array_equal(got, stack)
    grad = jax.grad(lambda m: jnp.sum(unmontage(m, (2, 2), padding_width=1) ** 2))(tiled)
    np.testing.assert_allclose(grad, 2 * tiled)  # padding has fill 0, so zero gradient too
    grad = jax.grad(lambda s: jnp.sum(montage(s, padding_width=1, fill=0.0) * tiled))(stack)
    np.testing.assert_allclose(grad, stack)


def test_unmontage_errors():
    tiled = np.zeros((7, 7))
    with pytest.raises(ValueError, match="arr_in"):
        unmontage(np.zeros((7, 7, 3)), (2, 2))
    with pytest.raises(ValueError, match="arr_in"):
        unmontage(tiled, (2, 2), channel_axis=0)
    with pytest.raises(np.exceptions.AxisError, match="channel_axis"):
        unmontage(np.zeros((7, 7, 3)), (2, 2), channel_axis=3)
    with pytest.raises(ValueError, match="grid_shape"):
        unmontage(tiled, (2, 2, 1))
    with pytest.raises(ValueError, match="grid_shape"):
        unmontage(tiled, (0, 2))
    with pytest.raises(TypeError, match="grid_shape"):
        unmontage(tiled, 2)
    with pytest.raises(ValueError, match="grid_shape"):
        unmontage(tiled, (2, 4), padding_width=1)  # 6 columns do not split in 4
    with pytest.raises(ValueError, match="padding_width"):
        unmontage(tiled, (2, 2), padding_width=-1)
    with pytest.raises(TypeError, match="padding_width"):
        unmontage(tiled, (2, 2), padding_width=1.0)
    with pytest.raises(ValueError, match="n_images"):
        unmontage(tiled, (2, 2), padding_width=1, n_images=5)


# ----------------------------------------------------------- properties, docs


@settings(max_examples=20, deadline=None)
@given(
    shape=st.lists(st.integers(1, 7), min_size=1, max_size=3),
    data=st.data(),
)
def test_windows_round_trip_property(shape, data):
    window = tuple(data.draw(st.integers(1, size)) for size in shape)
    step = tuple(data.draw(st.integers(1, 4)) for _ in shape)
    arr = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    windows = skimage.util.view_as_windows(arr, window, step)
    got = unview_as_windows(windows, step, shape=tuple(shape))
    _, count = naive_overlap_add(windows, step, tuple(shape))
    np.testing.assert_array_equal(got[count > 0], arr[count > 0])
    assert (got[count == 0] == 0).all()


def test_inputs_are_never_modified():
    arr = sample((4, 6), np.float64)
    before = arr.copy()
    windows = view_as_windows(arr, 2)
    unview_as_windows(windows)
    unview_as_blocks(view_as_blocks(arr, (2, 3)))
    montage(arr[None], rescale_intensity=True, fill=0)
    unmontage(arr, (2, 2))
    np.testing.assert_array_equal(arr, before)


def test_docstring_examples():
    module = importlib.import_module("jaxndimage._blocks")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_public_names():
    import jaxndimage

    for name in SIX:
        blocks = importlib.import_module("jaxndimage._blocks")
        assert getattr(jaxndimage, name) is getattr(blocks, name)
        assert name in jaxndimage.__all__
