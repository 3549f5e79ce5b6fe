"""The accelerators' algorithm for affine maps of planes (`rotate`,
`affine_transform` of 2-D input) and listed points of 2-D input that lie
close together (`map_coordinates`): tiles of points interpolated by one-hot
matrix products (`_interpolation._points_tiled`), run here on the CPU
through ``as_on("accelerator")``.  It gives SciPy's values to float32
rounding, and the gathers' where it hands a call to them (a NaN in the
input, a periodic extension across an edge)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi

import jaxndimage as jn
from jaxndimage import _interpolation
from jaxndimage._algorithms import as_on

MODES = ["constant", "nearest", "mirror", "reflect", "wrap", "grid-wrap",
         "grid-constant", "grid-mirror"]


def _smooth(shape, seed=0):
    rng = np.random.default_rng(seed)
    return ndi.gaussian_filter(rng.random(shape), 2).astype(np.float32)


def _assert_close(got, want, tolerance=2e-5):
    """Within ``tolerance`` of the values' range.  With 64-bit types off,
    coordinates are float32 too: near the edges of 'grid-constant' (gathers
    or tiles, in either direction) that alone moves values by 1e-5 of the
    range of these smooth images from SciPy's float64."""
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype
    scale = max(float(np.ptp(want)), 1e-30)
    np.testing.assert_array_less(np.abs(got - want) / scale, tolerance)


def _both(function, *args, **kwargs):
    """``function`` by tiles and by gathers, on JAX input."""
    with as_on("accelerator"):
        tiles = np.asarray(function(*args, **kwargs))
    with as_on("cpu"):
        gathers = np.asarray(function(*args, **kwargs))
    return tiles, gathers


def _jitted_both(function, image):
    """``jax.jit(function)`` of ``image`` by tiles and by gathers (a
    program traced for each)."""
    results = []
    for kind in ("accelerator", "cpu"):
        with as_on(kind):
            results.append(np.asarray(
                jax.jit(lambda a: function(a))(jnp.asarray(image))))
    return results


@pytest.mark.parametrize("mode", MODES)
def test_rotate_of_every_order_and_mode_equals_scipy(mode):
    image = _smooth((70, 90))
    for order in range(6):
        want = ndi.rotate(image, 33, order=order, mode=mode, cval=0.3)
        tiles, gathers = _both(jn.rotate, jnp.asarray(image), 33,
                               order=order, mode=mode, cval=0.3)
        _assert_close(tiles, want)
        _assert_close(tiles, gathers)


@pytest.mark.parametrize("angle", [-150.0, 5.0, 90.0, 211.0])
def test_rotate_planes_of_volumes_equal_scipy(angle):
    volume = _smooth((9, 40, 30, 5), seed=1)
    for axes in [(0, 1), (1, 2), (3, 0)]:
        want = ndi.rotate(volume, angle, axes=axes, order=3, mode="nearest")
        tiles, _ = _both(jn.rotate, jnp.asarray(volume), angle, axes=axes,
                         order=3, mode="nearest")
        _assert_close(tiles, want)
    want = ndi.rotate(volume, angle, axes=(1, 2), reshape=False, order=1)
    with as_on("accelerator"):
        got = jn.rotate(volume, angle, axes=(1, 2), reshape=False, order=1)
    assert isinstance(got, np.ndarray)
    _assert_close(got, want)


def test_affine_transform_with_shear_and_output_shape_equals_scipy():
    image = _smooth((70, 90), seed=2)
    matrix = np.array([[0.7, -0.9], [1.3, 0.4]])
    for order in range(1, 6):
        want = ndi.affine_transform(image, matrix, [10, -5],
                                    output_shape=(50, 120), order=order,
                                    mode="mirror")
        tiles, gathers = _both(jn.affine_transform, jnp.asarray(image),
                               matrix, [10, -5], output_shape=(50, 120),
                               order=order, mode="mirror")
        _assert_close(tiles, want)


def test_without_prefilter_and_into_an_output_dtype():
    image = (_smooth((64, 48), seed=12) * 200).astype(np.uint8)
    for order in (2, 3, 5):
        want = ndi.rotate(image, 23, order=order, prefilter=False,
                          output=np.float32, mode="reflect")
        tiles, gathers = _both(jn.rotate, jnp.asarray(image), 23, order=order,
                               prefilter=False, output=np.float32,
                               mode="reflect")
        _assert_close(tiles, want)
        _assert_close(tiles, gathers)


def test_integer_output_rounds_as_scipy():
    image = (_smooth((64, 48), seed=3) * 800).astype(np.uint8)
    want = ndi.rotate(image, 47, order=3)
    tiles, _ = _both(jn.rotate, jnp.asarray(image), 47, order=3)
    np.testing.assert_array_equal(tiles, want)


def test_stretching_maps_take_the_gathers():
    matrix = 20 * np.array([[0.8, 0.6], [-0.6, 0.8]])
    with as_on("accelerator"):
        assert _interpolation._affine_tiling(matrix, 1, (300, 320)) is None
        # (A patch is at most the whole plane.)
        assert _interpolation._affine_tiling(matrix, 1, (70, 90)) == (64, (70, 90))
        assert _interpolation._affine_tiling(matrix / 20, 1, (300, 320)) is not None
    with as_on("cpu"):
        assert _interpolation._affine_tiling(matrix / 20, 1, (300, 320)) is None
    image = _smooth((300, 320), seed=4)
    tiles, _ = _both(jn.affine_transform, jnp.asarray(image), matrix,
                     order=1)
    _assert_close(tiles, ndi.affine_transform(image, matrix, order=1))


@pytest.mark.parametrize("case", ["nan", "wrap"])
def test_calls_the_tiles_cannot_take_run_the_gathers(case):
    # A NaN would spread over whole tiles; a periodic extension folds the
    # tiles across an edge into two distant patches.  Under jit both
    # algorithms form the coordinates alike, so the gathers' values are
    # the same bits whichever algorithm was asked for.
    image = _smooth((150, 170), seed=5)
    mode = "constant"
    if case == "nan":
        image[20, 30] = np.nan
    else:
        mode = "grid-wrap"
    tiles, gathers = _jitted_both(
        lambda a: jn.rotate(a, 20, order=3, mode=mode), image)
    np.testing.assert_array_equal(tiles, gathers)
    # Elsewhere the tiles run, rounding otherwise than the gathers.
    tiles, gathers = _jitted_both(lambda a: jn.rotate(a, 20, order=3),
                                  _smooth((150, 170), seed=5))
    assert not np.array_equal(tiles, gathers)
    _assert_close(tiles, gathers)


def test_many_steps_of_tiles(monkeypatch):
    # Steps of one tile each, the last one not full: the values of every
    # tile land in place.
    monkeypatch.setattr(_interpolation, "_TILED_POINTS", 1)
    image = _smooth((50, 70), seed=6)
    want = ndi.rotate(image, 71, order=2)
    tiles, _ = _both(jn.rotate, jnp.asarray(image), 71, order=2)
    _assert_close(tiles, want)


def test_tiles_under_jit_vmap_and_grad():
    stack = np.stack([_smooth((40, 44), seed) for seed in range(3)])
    want = np.stack([ndi.rotate(plane, 25, order=3, mode="nearest")
                     for plane in stack])
    with as_on("accelerator"):
        rotated = jax.jit(jax.vmap(
            lambda a: jn.rotate(a, 25, order=3, mode="nearest")))(
                jnp.asarray(stack))
        gradient = jax.grad(lambda a: jn.rotate(a, 25, order=3).sum())(
            jnp.asarray(stack[0]))
    _assert_close(rotated, want)
    with as_on("cpu"):
        want_gradient = jax.grad(lambda a: jn.rotate(a, 25, order=3).sum())(
            jnp.asarray(stack[0]))
    np.testing.assert_allclose(gradient, want_gradient, rtol=1e-5,
                               atol=1e-5)


def _warp(shape, seed, strength):
    """Coordinates of a smooth random warp of ``shape``."""
    rng = np.random.default_rng(seed)
    grid = np.indices(shape, dtype=np.float32)
    field = ndi.gaussian_filter(rng.standard_normal((2,) + shape), (0, 6, 6))
    return grid + strength * field / np.abs(field).max()


@pytest.mark.parametrize("mode", ["constant", "nearest", "mirror", "wrap"])
def test_map_coordinates_of_a_smooth_warp_equals_scipy(mode):
    image = _smooth((80, 100), seed=7)
    coordinates = _warp((90, 70), 8, 6.0) * 1.1 - 3
    with as_on("accelerator"):
        spans = _interpolation._coordinate_spans(
            jnp.asarray(coordinates), np.array([80.0, 100.0], np.float32),
            sides=_interpolation._TILE_SIDES, order=3)
        assert _interpolation._points_tiling(
            image, jnp.asarray(coordinates), 3, 0) is not None
    assert np.all(np.asarray(spans) < 100)
    for order in (0, 1, 3, 5):
        want = ndi.map_coordinates(image, coordinates, order=order,
                                   mode=mode)
        tiles, gathers = _both(jn.map_coordinates, jnp.asarray(image),
                               jnp.asarray(coordinates), order=order,
                               mode=mode)
        _assert_close(tiles, want)


def test_map_coordinates_of_scattered_or_nan_points():
    image = _smooth((300, 310), seed=9)
    rng = np.random.default_rng(10)
    scattered = rng.uniform(-5, 315, (2, 64, 64)).astype(np.float32)
    with as_on("accelerator"):
        # Points spread over the whole image: the gathers.
        assert _interpolation._points_tiling(
            image, jnp.asarray(scattered), 3, 0) is None
    warped = _warp((64, 64), 11, 3.0) + 20
    warped[:, 5, 7] = np.nan
    for coordinates in (scattered, warped):
        want = ndi.map_coordinates(image, coordinates, order=3)
        tiles, _ = _both(jn.map_coordinates, jnp.asarray(image),
                         jnp.asarray(coordinates), order=3)
        np.testing.assert_array_equal(np.isnan(tiles), np.isnan(want))
        _assert_close(np.nan_to_num(tiles), np.nan_to_num(want))
