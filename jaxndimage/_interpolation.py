"""Interpolation: map_coordinates, affine_transform, shift, zoom, rotate and
geometric_transform, with SciPy's B-splines of order 0 to 5.

Every function reads the array from :func:`_splines.spline_coefficients`
(SciPy's prefilter, with its padding for 'nearest' and 'grid-constant'; the
input itself when there is nothing to filter), folds coordinates past the
edges with :func:`_modes.map_coordinate` and folds the indices of
neighbours past the edges with :func:`_modes.fold_indices`, as the shared
mode table :data:`_modes.INTERPOLATION` says.  Nothing is padded, so memory
stays at the size of the input (plus the coefficients when prefiltering).
An output point of a spline of order ``n`` is a weighted sum of
``(n + 1)**ndim`` coefficients, read from the flattened array as
``(n + 1)**(ndim - 1)`` contiguous windows along the last axis where it
allows it.  ``shift``, ``zoom`` and diagonal ``affine_transform`` map each
axis on its own, so they interpolate one axis after the other instead.

On accelerators, which serialise gathers, affine maps of planes with a
concrete matrix (``rotate``, 2-D ``affine_transform``), and concrete
coordinates into a plane whose tiles of points lie close together
(``map_coordinates``, ``geometric_transform``; their spread is measured
on the device first, :func:`_points_tiling`), interpolate a tile of
points at a time by matrix products instead (:func:`_points_tiled`, the
"tiles" of `_algorithms`): the same neighbours and weights, read from one
patch of the input per tile.

Integer outputs are rounded half away from zero and clipped to the dtype's
range, as SciPy's interpolation does (unlike its filters, which truncate).

Concrete CPU input (numpy, and JAX arrays outside a trace on one CPU
device) compiles nothing per shape: the coefficients come from numpy
(:func:`_splines.coefficients_on_host`), are flattened into a buffer
of a source length (:func:`_canvas.gather_source`), and the output points
run in chunks of a list length (:func:`_canvas.in_chunks`) with the sizes
traced: listed points for ``map_coordinates``, ``geometric_transform``
(whose mapping is called with numpy coordinates there) and the output grid
of ``affine_transform``, ``rotate``, ``shift`` and ``zoom``, whose
coordinates the kernel forms from each point's flat position
(:func:`_grid_flat`).  Arrays with an axis of at most ``order + 2``
samples, or longer than the last bucket, and prefiltered zooms of
`_SEPARABLE_POINTS` or more, compile for their shape.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from functools import partial, reduce, wraps
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage._algorithms import algorithm
from jaxndimage._cache import LOOP_EMITTERS, KernelCache, cached_jit
from jaxndimage._canvas import (
    BUCKETS,
    chunk_of,
    concrete_on_cpu,
    flat_position,
    gather_source,
    in_chunks,
    like_input,
)
from jaxndimage._casting import arithmetic_dtype, cast_like_c, cast_like_numpy, compute_dtype
from jaxndimage._dispatch import as_array, host_only, ndimage_function
from jaxndimage._docstrings import docfiller
from jaxndimage._modes import INTERPOLATION, PREPAD, check_mode, fold_indices, map_coordinate
from jaxndimage._plans import Plan, Planned
from jaxndimage._splines import coefficients_on_host, spline_coefficients
from jaxndimage._support import (
    OutputArray,
    check_real_cval,
    is_low_level_callable,
    normalize_sequence,
    output_dtype,
    stacked,
)
from jaxndimage._typing import Array, ArrayLike

__all__ = [
    "affine_transform",
    "geometric_transform",
    "map_coordinates",
    "rotate",
    "shift",
    "zoom",
]


# --------------------------------------------------------------------------
# Kernels (pure JAX; everything here may be traced)
# --------------------------------------------------------------------------

def _coordinate_dtype() -> np.dtype:
    return np.dtype(jax.dtypes.canonicalize_dtype(np.float64))


def _spline_weights(x: Array, order: int) -> list[Array]:
    """B-spline weights of the ``order + 1`` neighbours of ``x``, where
    ``x`` is the offset from the first neighbour's centre minus
    ``order // 2`` (``0 <= x < 1`` for odd, ``-1/2 <= x < 1/2`` for even
    orders).  The last weight makes them sum to one, as in SciPy."""
    if order == 0:
        return [jnp.ones_like(x)]
    y, z = x, 1.0 - x
    if order == 1:
        weights = [1.0 - x]
    elif order == 2:
        weights = [0.5 * (0.5 - x) ** 2, 0.75 - x * x]
    elif order == 3:
        weights = [z * z * z / 6.0,
                   (y * y * (y - 2.0) * 3.0 + 4.0) / 6.0,
                   (z * z * (z - 2.0) * 3.0 + 4.0) / 6.0]
    elif order == 4:
        def outer(u):
            return u * (u * (u * (5.0 - u) / 6.0 - 1.25) + 5.0 / 24.0) \
                + 55.0 / 96.0
        t = x * x
        w = (0.5 - x) ** 2
        weights = [w * w / 24.0, outer(1.0 + x),
                   t * (t * 0.25 - 0.625) + 115.0 / 192.0, outer(z)]
    else:
        def inner(u):
            t = u * u
            return t * (t * (0.25 - u / 12.0) - 0.5) + 0.55

        def outer(u):
            return u * (u * (u * (u * (u / 24.0 - 0.375) + 1.25) - 1.75)
                        + 0.625) + 0.425
        t = z * z
        weights = [z * t * t / 120.0, outer(1.0 + y), inner(y), inner(z),
                   outer(1.0 + z)]
    last = 1.0 - weights[0]
    for w in weights[1:]:
        last = last - w
    return weights + [last]


def _non_finite(x: Array, mode: str, order: int
                ) -> tuple[Array, Array | None]:
    """SciPy's results at NaN and infinite coordinates, which come from its
    C converting them to the most negative integer: cval in most modes;
    in 'nearest' (and at +inf in the wrapping modes) order 0 reads the
    first sample and higher orders give NaN, as does 'grid-constant'.
    Returns the coordinates with those reads moved to 0, and where cval
    applies (or None)."""
    bad = ~jnp.isfinite(x)
    if mode in ("nearest", "grid-constant"):
        first = bad if (order == 0 and mode == "nearest") else None
        to_cval = bad if (order == 0 and mode == "grid-constant") else None
    elif mode in ("wrap", "grid-wrap"):
        high = x == jnp.inf
        first = high if order == 0 else None
        to_cval = bad & ~high
    else:
        first, to_cval = None, bad
    if first is not None:
        x = jnp.where(first, jnp.zeros((), x.dtype), x)
    return x, to_cval


def _axis_plan(x: Array, size: int, order: int, mode: str, npad: int = 0
               ) -> tuple[Array, list[Array], Array | None]:
    """For coordinates ``x`` along an axis of ``size`` coefficients: the
    (unfolded) index of the first neighbour, the neighbours' weights, and
    where 'constant' gives cval (or None).

    ``npad``: the samples SciPy padded the axis with on each side before
    the prefilter ('nearest' and 'grid-constant', whose coordinates are not
    folded).  It is added to the index, not to the coordinate: a float32
    coordinate moved by it would round (by up to 3e-5 past 256), where
    SciPy adds it in float64."""
    outside = None
    if INTERPOLATION[mode].coordinate == "outside":
        outside = (x < 0) | (x > size - 1)
    x, to_cval = _non_finite(x, mode, order)
    if to_cval is not None:
        outside = to_cval if outside is None else outside | to_cval
    cc = map_coordinate(x, size, mode)
    base = jnp.floor(cc if order & 1 else cc + 0.5)
    weights = _spline_weights(cc - base, order)
    # Farther out every neighbour folds to the same edge sample (or cval).
    start = jnp.clip(base + npad - order // 2, -order - 1, size)
    start = jnp.where(jnp.isnan(start), 0, start)
    return start.astype(np.int32), weights, outside


def _neighbours(start: Array, weights: list[Array], size: int,
                extension: str) -> tuple[list[Array], list[Array],
                                         Array | None, list[Array] | None]:
    """The neighbours ``start + j`` folded into the axis, their weights,
    and for the 'constant' extension the weight that falls on cval and
    which neighbours are samples at all (one past the edges reads index 0
    with weight 0, and what it reads must not count: ``0 * nan``)."""
    indices, kept, lost, reads = [], [], None, []
    for j, w in enumerate(weights):
        # start + j lies at most order + 1 samples past the edges
        index = fold_indices(start + j, size, extension, reach=len(weights))
        if extension == "constant":
            past = index < 0
            index = jnp.maximum(index, 0)
            lost = jnp.where(past, w, 0) + (0 if lost is None else lost)
            w = jnp.where(past, 0, w)
            reads.append(~past)
        indices.append(index)
        kept.append(w)
    return indices, kept, lost, (reads if extension == "constant" else None)


def _weighted(value: Array, weight: Array, read: Array | None) -> Array:
    """``value * weight``, and 0 where ``read`` says no sample was read
    (SciPy never reads there, so a NaN or inf found there must not
    count)."""
    product = value * weight
    return product if read is None else jnp.where(read, product, 0)


def _window(start: Array, weights: list[Array], size: int, order: int,
            extension: str
            ) -> tuple[Array, list[Array], Array | None, list[Array]]:
    """Read the ``order + 1`` neighbours as one window of the axis: its
    first index, which of its samples are neighbours, and their weights
    (the weight of a
    neighbour that folds onto another sample of the window is added to
    that sample's).  Valid for ``0 < order < size`` and every extension
    but 'wrap', at points inside the axis after :func:`map_coordinate`;
    away from the edges the weights are the spline weights."""
    first = jnp.clip(start, 0, size - 1 - order)
    indices, kept, lost, reads = _neighbours(start, weights, size, extension)
    window = [None] * (order + 1)
    sampled = [None] * (order + 1)
    for j, (index, w) in enumerate(zip(indices, kept)):
        position = index - first
        for p in range(order + 1):
            here = position == p
            if reads is not None:
                here = here & reads[j]
            term = jnp.where(here, w, 0)
            window[p] = term if window[p] is None else window[p] + term
            sampled[p] = here if sampled[p] is None else sampled[p] | here
    return first, window, lost, sampled


def _round_to(values: Array, dtype: np.dtype) -> Array:
    """Store interpolated values as SciPy does: round half away from zero
    and clip for integer outputs, a C cast otherwise."""
    dtype = np.dtype(dtype)
    if dtype.kind == "u":
        values = jnp.where(values > 0, values + 0.5, 0.0)
        values = jnp.minimum(values, float(np.iinfo(dtype).max))
    elif dtype.kind == "i":
        values = jnp.where(values > 0, values + 0.5, values - 0.5)
        values = jnp.clip(values, float(np.iinfo(dtype).min),
                          float(np.iinfo(dtype).max))
    return cast_like_c(values, dtype)


def _with_cval(total: Array, weights: list[list[Array]],
               lost: list[Array | None], cval: Any) -> Array:
    """Add cval times the weight of the neighbours past the edges of the
    'constant' coefficient extension (all weights are per axis); nothing
    where no weight falls there, so that a NaN or infinite cval reaches
    only the points that read past the edges (but for a neighbour of
    weight 0 past them, where SciPy's ``0 * cval`` gives NaN)."""
    if all(x is None for x in lost):
        return total
    inside = everything = 1.0
    for w, x in zip(weights, lost):
        kept = sum(w[1:], w[0])
        everything = everything * (kept if x is None else kept + x)
        inside = inside * kept
    return total + _cval_times(everything - inside, cval, total.dtype)


def _cval_times(weight: Array, cval: Any, dtype: np.dtype) -> Array:
    """``cval * weight`` (the weight past the edges), and 0 where it is 0:
    a NaN or infinite cval reaches only the points that read past them."""
    return jnp.where(weight != 0, jnp.asarray(cval, dtype) * weight,
                     jnp.zeros((), dtype))


def _interpolate_points(c: Array, coordinates: Sequence[Array], order: int,
                        mode: str, cval: Any, dtype: np.dtype,
                        sizes: Sequence[Any] | None = None,
                        npad: int = 0) -> Array:
    """Interpolate the coefficients ``c`` at points given by one coordinate
    array per axis (all of one shape), computing in ``dtype``.

    With ``sizes`` (traced, one per axis), ``c`` is the flattened array,
    C-ordered, possibly followed by unused samples: the shape-generic form,
    valid when every axis holds more than ``order + 2`` samples.

    Nothing is padded: neighbour indices are folded into the array by the
    mode's coefficient extension.  The coefficients are read from the
    flattened array, one gather per combination of neighbours along the
    leading axes; along the last axis, when it is longer than the spline
    (every extension but 'wrap'), each gather reads the ``order + 1``
    neighbours as one contiguous window: one read per point where a gather
    with an index per axis, or of ``(order + 1)**ndim`` blocks, makes many
    (``benchmarks/bench_interpolation.py``).
    """
    extension = INTERPOLATION[mode].coefficients
    shape = coordinates[0].shape
    if sizes is None:
        sizes = c.shape
    last = len(sizes) - 1
    index_dtype = np.int32 if c.size < 2**31 else np.int64
    offsets, weights, lost, reads, outside = [], [], [], [], None
    width = 1
    for axis, x in enumerate(coordinates):
        size = sizes[axis]
        start, w, out = _axis_plan(x.reshape(-1), size, order, mode, npad)
        w = [v.astype(dtype) for v in w]
        long_axis = not isinstance(size, int) or order < size
        if axis == last and 1 < order and long_axis and extension != "wrap":
            first, w, x_lost, x_reads = _window(start, w, size, order,
                                                extension)
            indices, width = [first], order + 1
        else:
            indices, w, x_lost, x_reads = _neighbours(start, w, size,
                                                      extension)
        stride = math.prod(sizes[axis + 1:])
        offsets.append([i.astype(index_dtype) * stride for i in indices])
        weights.append(w)
        lost.append(x_lost)
        reads.append(x_reads or [None] * len(w))
        if out is not None:
            outside = out if outside is None else outside | out
    numbers = lax.GatherDimensionNumbers(
        offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,))
    flat = c.reshape(-1)
    total = None
    for choice in itertools.product(*(range(len(o)) for o in offsets)):
        position = sum(o[k] for o, k in zip(offsets, choice))
        window = lax.gather(flat, position[:, None], numbers, (width,),
                            mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)
        window = window.astype(dtype)
        if order == 0:
            value = window[:, 0]
        elif width > 1:
            value = sum(_weighted(window[:, p], weights[last][p],
                                  reads[last][p]) for p in range(width))
        else:
            value = _weighted(window[:, 0], weights[last][choice[last]],
                              reads[last][choice[last]])
        if order > 0:
            for axis, k in reversed(list(enumerate(choice[:-1]))):
                value = _weighted(value, weights[axis][k], reads[axis][k])
        total = value if total is None else total + value
    return _finish(total, weights, lost, outside, cval, order,
                   dtype).reshape(shape)


def _finish(total: Array, weights: list[list[Array]],
            lost: list[Array | None], outside: Array | None, cval: Any,
            order: int, dtype: np.dtype) -> Array:
    """The interpolated ``total`` of the neighbours read, with cval where
    neighbours fall past the edges of the 'constant' extension (their
    weight times cval; for order 0, cval) and at the points ``outside``
    (per point, flat; ``total`` may have leading batch axes)."""
    if order > 0:
        total = _with_cval(total, weights, lost, cval)
    elif any(x is not None for x in lost):
        past = sum(x for x in lost if x is not None) > 0
        total = jnp.where(past, jnp.asarray(cval, dtype), total)
    if outside is not None:
        total = jnp.where(outside, jnp.asarray(cval, dtype), total)
    return total


def _interpolate_separable(c: Array, coordinates: Sequence[Array],
                           order: int, mode: str, cval: Any,
                           dtype: np.dtype, npad: int = 0) -> Array:
    """Interpolate ``c`` on the grid of per-axis 1-D coordinate arrays
    (before SciPy's padding of ``npad``, see :func:`_axis_plan`), one
    axis after the other, computing in ``dtype``."""
    extension = INTERPOLATION[mode].coefficients
    outside = None
    for axis, x in enumerate(coordinates):
        start, weights, out = _axis_plan(x, c.shape[axis], order, mode,
                                         npad)
        indices, weights, lost, reads = _neighbours(
            start, weights, c.shape[axis], extension)
        shape = [1] * c.ndim
        shape[axis] = -1
        total = None
        for j, (index, w) in enumerate(zip(indices, weights)):
            value = c.at[(slice(None),) * axis + (index,)].get(
                mode="promise_in_bounds").astype(dtype)
            if order > 0:
                value = _weighted(value, w.astype(dtype).reshape(shape),
                                  None if reads is None
                                  else reads[j].reshape(shape))
            total = value if total is None else total + value
        if lost is not None:
            if order == 0:
                total = jnp.where(lost.reshape(shape) > 0,
                                  jnp.asarray(cval, dtype), total)
            else:
                total = total + _cval_times(
                    lost.astype(dtype).reshape(shape), cval, dtype)
        c = total
        if out is not None:
            out = out.reshape(shape)
            outside = out if outside is None else outside | out
    if outside is not None:
        c = jnp.where(outside, jnp.asarray(cval, c.dtype), c)
    return c


@cached_jit(static_argnames=("order", "mode"))
def _filtered(x: Array, cval: Any, *, order: int, mode: str) -> Array:
    return lax.optimization_barrier(
        spline_coefficients(x, order, mode, cval, True)[0])


def _traced(*values: Any) -> bool:
    """True where any of ``values`` (arrays, numbers) is a tracer."""
    return any(isinstance(leaf, jax.core.Tracer)
               for leaf in jax.tree.leaves(values))


def _coefficients(x: Array, cval: Any, order: int, mode: str,
                  prefilter: bool, dtype: np.dtype,
                  axes: Sequence[int] | None = None) -> tuple[Array, int]:
    """:func:`spline_coefficients` in ``dtype`` along ``axes`` (default
    all; other than all for concrete CPU input, and for a stack of planes
    along the first axis, whose ``axes`` are the other two).

    Concrete CPU input is prefiltered in numpy
    (:func:`_splines.coefficients_on_host`), nothing compiled.  Other
    input passes an optimization barrier: fused into the gathers, the
    prefilter would be recomputed for every neighbour read (the barrier
    holds inside a user's ``jit`` too).  Without a prefilter
    ``x`` itself is returned: the kernels cast what they read."""
    if not prefilter or order < 2:
        return x, 0
    npad = PREPAD if INTERPOLATION[mode].prepad else 0
    if concrete_on_cpu(x) and not _traced(cval):
        c = coefficients_on_host(
            x, order, mode, cval, range(x.ndim) if axes is None else axes,
            dtype)
        return like_input(c, x), npad
    if axes is None:
        c = _filtered(x.astype(dtype), cval, order=order, mode=mode)
    else:
        c = jax.vmap(partial(_filtered, cval=cval, order=order, mode=mode))(
            x.astype(dtype))
    return (np.asarray(c) if isinstance(x, np.ndarray) else c), npad


def _points(c: Array, points: Sequence[Array], cval: Any,
            sizes: Sequence[Any] | None, *, npad: int, order: int, mode: str,
            dtype: np.dtype, out_dtype: np.dtype) -> Array:
    """Interpolate ``c`` at ``points`` (one coordinate array per axis, in
    :func:`_coordinate_dtype`, before SciPy's padding of ``npad``)."""
    return _round_to(_interpolate_points(c, points, order, mode, cval,
                                         dtype, sizes, npad), out_dtype)


_POINTS_STATIC = ("npad", "order", "mode", "dtype", "out_dtype")


@cached_jit(static_argnames=_POINTS_STATIC)
def _points_exact(c: Array, coordinates: Array | _GridSums, cval: Any,
                  **static: Any) -> Array:
    if isinstance(coordinates, _GridSums):
        points = coordinates.evaluate()
    else:  # in _coordinate_dtype (_as_coordinates)
        points = [coordinates[axis] for axis in range(coordinates.shape[0])]
    return _points(c, points, cval, None, **static)


# --------------------------------------------------------------------------
# Affine maps of planes on accelerators: tiles of output points as products
# --------------------------------------------------------------------------

#: Sides of the square output tiles of :func:`_points_tiled`, largest first.
_TILE_SIDES = (64, 32, 16)
#: The longest patch :func:`_points_tiled` reads per tile and axis; a map
#: that stretches a tile's pre-image past it is interpolated by gathers.
_LONGEST_PATCH = 256
#: Output points per step of :func:`_points_tiled` (all planes together):
#: bounds the memory of its one-hot matrices.
_TILED_POINTS = 2**18


def _tiling(spans: Callable[[int], Sequence[float]], order: int,
            sizes: Sequence[int]) -> tuple[int, tuple[int, int]] | None:
    """The tile side and patch shape with which :func:`_points_tiled`
    interpolates the coefficients of plane shape ``sizes``, where
    ``spans(side)`` bounds how far the coordinates along each input axis
    vary over a tile of ``side`` points a side; None where the device's
    algorithm is the gathers or the points of every tile spread too far.

    The neighbours of a tile's points then span at most that plus
    ``order + 2`` samples (one more for the rounding of the coordinates).
    Folding coordinates or indices back into the array at its edges
    shortens spans, except for the periodic extension ('wrap',
    'grid-wrap'), whose tiles across an edge the kernel checks for.
    """
    if algorithm("affine interpolation") != "tiles" or len(sizes) != 2:
        return None
    for side in _TILE_SIDES:
        reach = spans(side)
        if not np.all(np.isfinite(reach)):
            continue
        patch = tuple(min(int(size), 8 * math.ceil((span + order + 3) / 8))
                      for span, size in zip(reach, sizes))
        if max(patch) <= _LONGEST_PATCH:
            return side, patch
    return None


def _affine_tiling(matrix: np.ndarray, order: int, sizes: Sequence[int]
                   ) -> tuple[int, tuple[int, int]] | None:
    """:func:`_tiling` of the output grid mapped by a 2-D ``matrix``: over
    a tile the coordinate along input axis ``r`` varies by at most
    ``(side - 1) * sum(|matrix[r]|)``."""
    if matrix.shape != (2, 2):
        return None
    return _tiling(lambda side: (side - 1) * np.abs(matrix).sum(axis=1),
                   order, sizes)


@cached_jit(static_argnames=("sides", "order"))
def _coordinate_spans(coordinates: Array, sizes: Array, *,
                      sides: tuple[int, ...], order: int) -> Array:
    """For each of ``sides``, the most the coordinates (``(2,) + grid``)
    vary along each axis over a tile of that side, taken where they lie
    within ``order + 2`` of an axis of ``sizes`` (farther out every point
    reads the same edge neighbours) and ignoring NaN: ``(len(sides),
    2)``."""
    spans = []
    for side in sides:
        padded, grid = _grown_to_tiles(coordinates, side)
        per_axis = []
        for axis in range(2):
            x = jnp.clip(padded[axis], -order - 2,
                         sizes[axis] + order + 1).reshape(-1)
            tiles = _as_tiles(x, grid, side)
            high = jnp.nanmax(tiles, axis=1, initial=-jnp.inf)
            low = jnp.nanmin(tiles, axis=1, initial=jnp.inf)
            per_axis.append(jnp.max(jnp.maximum(high - low, 0)))
        spans.append(jnp.stack(per_axis))
    return jnp.stack(spans)


def _points_tiling(c: Array, coordinates: Array, order: int, npad: int
                   ) -> tuple[int, tuple[int, int]] | None:
    """:func:`_tiling` of listed points (``(2,) + grid``, concrete): their
    spans measured on their device (:func:`_coordinate_spans`)."""
    if (c.ndim != 2 or coordinates.ndim != 3 or coordinates.size == 0
            or algorithm("affine interpolation") != "tiles"):
        return None
    sizes = np.array(c.shape, np.float32) - 2 * npad
    spans = np.asarray(_coordinate_spans(
        coordinates, sizes, sides=_TILE_SIDES, order=order))
    return _tiling(lambda side: spans[_TILE_SIDES.index(side)], order,
                   c.shape)


def _whole_tiles(shape: Sequence[int], side: int) -> tuple[int, ...]:
    """``shape`` grown to whole tiles of ``side``."""
    return tuple(side * -(-n // side) for n in shape)


def _grown_to_tiles(coordinates: Array, side: int
                    ) -> tuple[Array, tuple[int, ...]]:
    """``(2,) + grid`` coordinates over the grid grown to whole tiles of
    ``side`` (:func:`_whole_tiles`), the last ones repeated: their
    neighbours lie in the tiles' spans.  Returns the grown grid too."""
    grid = _whole_tiles(coordinates.shape[1:], side)
    widths = [(0, 0)] + [(0, g - n) for g, n in zip(grid,
                                                   coordinates.shape[1:])]
    return jnp.pad(coordinates, widths, mode="edge"), grid


def _as_tiles(values: Array, grid: tuple[int, int], side: int) -> Array:
    """Values per point of ``grid`` (C-ordered, flat; both sides multiples
    of ``side``) as rows of one tile each: ``(tiles, side * side)``."""
    n0, n1 = grid[0] // side, grid[1] // side
    tiles = values.reshape(n0, side, n1, side).transpose(0, 2, 1, 3)
    return tiles.reshape(n0 * n1, side * side)


def _from_tiles(values: Array, grid: tuple[int, int], side: int) -> Array:
    """The inverse of :func:`_as_tiles` for ``(tiles, planes, side *
    side)``: ``(planes, grid[0] * grid[1])``."""
    n0, n1 = grid[0] // side, grid[1] // side
    planes = values.shape[1]
    grid_values = values.reshape(n0, n1, planes, side, side)
    return grid_values.transpose(2, 0, 3, 1, 4).reshape(planes, -1)


@cached_jit(static_argnames=_POINTS_STATIC + ("side", "patch"))
def _points_tiled(c: Array, coordinates: Array | _GridSums, cval: Any, *,
                  side: int, patch: tuple[int, int], npad: int, order: int,
                  mode: str, dtype: np.dtype, out_dtype: np.dtype) -> Array:
    """Interpolate the planes ``c`` (the last two axes; any leading axes
    are a stack of planes) at ``coordinates`` (grid sums, or ``(2,) +
    grid`` coordinates), a tile of ``side`` x ``side`` points of the grid
    at a time, without gathers.

    The neighbours of a tile's points (found and weighted as the gathers
    find them: :func:`_axis_plan`, :func:`_neighbours`) lie in one patch of
    ``patch`` samples (:func:`_tiling`), cut out of ``c`` by one dynamic
    slice per tile.  The weights of a point along each axis form a row of
    a one-hot matrix over the patch's positions, so a tile's values are
    ``sum((W0 @ patch) * W1, axis=-1)``: a matrix product at full float32
    precision and an elementwise product, which a GPU or TPU runs fast
    where it serialises gathers.  Where a tile's neighbours do not fit in
    its patch (a periodic extension across an edge) or ``c`` holds a NaN
    or an infinity (which the products would spread over whole tiles,
    where SciPy reads it only at its neighbours), the whole call takes the
    gathers (:func:`_interpolate_points`) instead.
    """
    if isinstance(coordinates, _GridSums):
        # The grid grown as :func:`_grown_to_tiles` grows coordinates.
        out_shape = tuple(term.shape[0] for term in coordinates.terms[0])
        grid = _whole_tiles(out_shape, side)
        terms = tuple(tuple(jnp.pad(term, (0, g - n), mode="edge")
                            for term, g, n in zip(row, grid, out_shape))
                      for row in coordinates.terms)
        points = _GridSums(coordinates.offset, terms).evaluate()
    else:
        out_shape = coordinates.shape[1:]
        points, grid = _grown_to_tiles(coordinates, side)
    points = [points[axis].reshape(-1) for axis in range(2)]
    sizes = c.shape[-2:]
    planes = c.reshape((-1,) + sizes)
    extension = INTERPOLATION[mode].coefficients
    origins, taps, weights, lost, outside = [], [], [], [], None
    fits = jnp.all(jnp.isfinite(planes))
    for axis, x in enumerate(points):
        size = sizes[axis]
        start, w, out = _axis_plan(x, size, order, mode, npad)
        w = [v.astype(dtype) for v in w]
        indices, w, x_lost, reads = _neighbours(start, w, size, extension)
        if reads is not None:
            # A neighbour past the edge weighs 0: any index of the span
            # will do.
            indices = [jnp.where(read, index,
                                 jnp.clip(start + j, 0, size - 1))
                       for j, (index, read) in enumerate(zip(indices, reads))]
        tiled = [_as_tiles(i, grid, side) for i in indices]
        low = reduce(jnp.minimum, tiled).min(axis=1)
        high = reduce(jnp.maximum, tiled).max(axis=1)
        origin = jnp.clip(low, 0, size - patch[axis])
        fits = fits & jnp.all(high < origin + patch[axis])
        origins.append(origin)
        taps.append([(i - origin[:, None], _as_tiles(v, grid, side))
                     for i, v in zip(tiled, w)])
        weights.append(w)
        lost.append(x_lost)
        if out is not None:
            outside = out if outside is None else outside | out

    def one_hot(axis_taps: list, length: int) -> Array:
        positions = jnp.arange(length, dtype=np.int32)
        return sum(jnp.where(local[..., None] == positions, w[..., None], 0)
                   for local, w in axis_taps)

    def tile_values(step: Any) -> Array:
        origin, step_taps = step
        cut = jax.vmap(lambda o: lax.dynamic_slice(
            planes, (jnp.zeros_like(o[0]), o[0], o[1]),
            (planes.shape[0],) + patch))(origin)
        rows = jnp.einsum("tpa,tnab->tnpb", one_hot(step_taps[0], patch[0]),
                          cut.astype(dtype),
                          precision=lax.Precision.HIGHEST)
        return jnp.sum(rows * one_hot(step_taps[1], patch[1])[:, None],
                       axis=-1)

    def tiles() -> Array:
        count = origins[0].shape[0]
        chunk = max(1, min(count, _TILED_POINTS
                           // (side * side * planes.shape[0])))
        steps = -(-count // chunk)

        def in_steps(a: Array) -> Array:
            # (The last step repeats the last tile.)
            a = jnp.pad(a, [(0, steps * chunk - count)]
                        + [(0, 0)] * (a.ndim - 1), mode="edge")
            return a.reshape((steps, chunk) + a.shape[1:])

        values = lax.map(tile_values, jax.tree.map(
            in_steps, (jnp.stack(origins, axis=1), taps)))
        values = values.reshape((steps * chunk,) + values.shape[2:])[:count]
        total = _from_tiles(values, grid, side)
        return _finish(total, weights, lost, outside, cval, order, dtype)

    def gathers() -> Array:
        return jax.vmap(lambda plane: _interpolate_points(
            plane, points, order, mode, cval, dtype, npad=npad))(planes)

    values = lax.cond(fits, tiles, gathers)
    values = values.reshape((-1,) + grid)[:, :out_shape[0], :out_shape[1]]
    return _round_to(values.reshape(c.shape[:-2] + out_shape), out_dtype)


def _traced_sizes(sizes: Array) -> list[Array]:
    return [sizes[a] for a in range(sizes.shape[0])]


def _points_flat(c: Array, coordinates: Array, cval: Any, sizes: Array,
                 **static: Any) -> Array:
    """The points kernel on a flattened ``c`` of traced ``sizes`` and a
    flat list of points, both of bucket lengths."""
    return _points(c, [coordinates[a] for a in range(coordinates.shape[0])],
                   cval, _traced_sizes(sizes), **static)


def _grid_flat(c: Array, factors: Array, offset: Array, one: Array,
               cval: Any, sizes: Array, out_sizes: Array, start: Array, *,
               length: int, diagonal: bool, **static: Any) -> Array:
    """The points kernel on a flattened ``c`` of traced ``sizes`` at the
    output points ``start`` to ``start + length`` (C-ordered flat
    positions) of a grid of traced ``out_sizes``, whose coordinates are
    formed here from the output indices ``o``, rounded as SciPy's C rounds
    them:

    * affine: ``offset[r] + m[r, 0] * o_0 + m[r, 1] * o_1 + ...``
      (``factors`` the matrix ``m``), summed in that order;
    * ``diagonal`` (zoom, shift): ``(o_r + offset[r]) * factors[r] +
      offset[ndim + r]`` (``offset`` holds the shifts, then what is added
      last: -1/2 in a zoom's grid mode, else 0).

    Every product is multiplied by ``one`` (an operand, 1): XLA contracts
    a product and a sum into a fused multiply-add, which rounds once where
    SciPy rounds twice, and would move a coordinate on the edge of a
    constant mode (or on an order-0 tie) to the other side; ``p * one +
    s`` contracted rounds as ``p + s``."""
    dtype = _coordinate_dtype()
    index = [k.astype(dtype)
             for k in flat_position(start, length, out_sizes)]
    ndim = sizes.shape[0]
    points = []
    for row in range(ndim):
        if diagonal:
            product = (index[row] + offset[row]) * factors[row]
            points.append(product * one + offset[ndim + row])
            continue
        coordinate = offset[row]  # SciPy starts from the offset
        for col, k in enumerate(index):
            coordinate = coordinate + (k * factors[row, col]) * one
        points.append(coordinate)
    return _points(c, points, cval, _traced_sizes(sizes), **static)


#: From this many output points on, a prefiltered zoom (order 2 to 5)
#: interpolates one axis after the other at its own shape, compiled for
#: it: warm, that runs faster than the points kernel (a 2048 x 2400 zoom
#: of order 3 in 46 ms instead of 78), which pays the compilation back
#: within a few calls of the shape.
_SEPARABLE_POINTS = 2**22


_points_bucketed = KernelCache(
    jax.jit(_points_flat, static_argnames=_POINTS_STATIC),
    cpu_compiler_options=LOOP_EMITTERS)

_grid_bucketed = KernelCache(
    jax.jit(_grid_flat, static_argnames=_POINTS_STATIC + ("length",
                                                          "diagonal")),
    cpu_compiler_options=LOOP_EMITTERS)


def _shape_generic(input: Array, order: int) -> bool:
    """Whether the bucketed points kernels interpolate ``input`` (the
    coefficients): concrete CPU arrays whose every axis holds more than
    ``order + 2`` samples.

    Arrays longer than the last of `BUCKETS` keep their own shape: copying
    one into a canvas would take more time and memory than compiling for
    it, whatever the number of points.
    """
    return (input.ndim > 0 and min(input.shape) > order + 2
            and input.size <= BUCKETS[-1] and concrete_on_cpu(input))


def _as_coordinates(coordinates: Array | _GridSums) -> Array | _GridSums:
    """Coordinates in :func:`_coordinate_dtype`, converted before any
    kernel, so that kernels compile once for every coordinate dtype;
    concrete CPU arrays are converted by numpy, without compiling."""
    dtype = _coordinate_dtype()
    if isinstance(coordinates, _GridSums) or coordinates.dtype == dtype:
        return coordinates
    if isinstance(coordinates, np.ndarray):
        return coordinates.astype(dtype)
    if concrete_on_cpu(coordinates):
        return like_input(np.asarray(coordinates).astype(dtype), coordinates)
    return coordinates.astype(dtype)


def _points_kernel(c: Array, coordinates: Array | _GridSums, cval: Any, *,
                   npad: int, order: int, mode: str, dtype: np.dtype,
                   out_dtype: np.dtype) -> Array:
    """Interpolate ``c`` at ``coordinates`` (one row per axis).

    Concrete CPU arrays whose axes all hold more than ``order + 2`` samples
    are interpolated shape-generically: ``c`` flattened into a buffer of a
    source length (:func:`_canvas.gather_source`) and the points listed in
    lists of a list length (:func:`_canvas.in_chunks`), so a new shape
    compiles nothing.
    """
    static = dict(npad=npad, order=order, mode=mode, dtype=dtype,
                  out_dtype=out_dtype)
    coordinates = _as_coordinates(coordinates)
    if not isinstance(coordinates, _GridSums) and not _traced(coordinates):
        tiling = _points_tiling(c, coordinates, order, npad)
        if tiling is not None:
            side, patch = tiling
            return _points_tiled(c, coordinates, cval, side=side,
                                 patch=patch, **static)
    if (isinstance(coordinates, _GridSums) or not _shape_generic(c, order)
            or not concrete_on_cpu(coordinates) or _traced(cval)):
        return _points_exact(c, coordinates, cval, **static)
    out_shape = coordinates.shape[1:]
    count = math.prod(out_shape)
    flat_c = gather_source(np.asarray(c).reshape(-1))
    points = np.asarray(coordinates).reshape(c.ndim, count)
    sizes = np.array(c.shape, np.int32)
    values = in_chunks(count, lambda start, length: _points_bucketed(
        flat_c, chunk_of(points, start, length), cval, sizes, **static))
    return like_input(values.reshape(out_shape), c)


def _grid_points(c: Array, factors: np.ndarray, offset: np.ndarray,
                 cval: Any, out_shape: tuple[int, ...], *, diagonal: bool,
                 **static: Any) -> Array:
    """Interpolate ``c`` (a concrete CPU array, :func:`_shape_generic`) on
    the output grid of ``out_shape`` mapped by ``factors`` and ``offset``
    (:func:`_grid_flat`), on buckets: nothing compiles for a new shape."""
    dtype = _coordinate_dtype()
    arguments = (np.asarray(factors, dtype), np.asarray(offset, dtype),
                 np.ones((), dtype))
    flat_c = gather_source(np.asarray(c).reshape(-1))
    sizes = np.array(c.shape, np.int32)
    out_sizes = np.array(out_shape, np.int32)
    values = in_chunks(math.prod(out_shape), lambda start, length: (
        _grid_bucketed(flat_c, *arguments, cval, sizes, out_sizes,
                       np.int32(start), length=length, diagonal=diagonal,
                       **static)))
    return like_input(values.reshape(out_shape), c)


def _check_real_output(out_dtype: np.dtype) -> None:
    """Kernels interpolate real data (complex input is split into parts
    before): a complex output here means real input, which SciPy's C
    refuses."""
    if np.dtype(out_dtype).kind == "c":
        raise RuntimeError("output: data type not supported (a complex "
                           "output needs complex input)")


def _prepared(x: Array, cval: Any, *, order: int, mode: str,
              prefilter: bool, out_dtype: np.dtype,
              axes: Sequence[int] | None = None) -> tuple[Array, dict]:
    """The coefficients of ``x`` (:func:`_coefficients`) and the static
    arguments of the points kernels that interpolate them."""
    _check_real_output(out_dtype)
    dtype = arithmetic_dtype(x.dtype)
    c, npad = _coefficients(x, cval, order, mode, prefilter, dtype, axes)
    return c, dict(npad=npad, order=order, mode=mode, dtype=dtype,
                   out_dtype=out_dtype)


def _map_kernel(x: Array, coordinates: Array | _GridSums, cval: Any, *,
                order: int,
                mode: str, prefilter: bool, out_dtype: np.dtype) -> Array:
    c, static = _prepared(x, cval, order=order, mode=mode,
                          prefilter=prefilter, out_dtype=out_dtype)
    return _points_kernel(c, coordinates, cval, **static)


def _output_grid(shape: tuple[int, ...]) -> list[Array]:
    return [jnp.arange(n, dtype=_coordinate_dtype()) for n in shape]


@cached_jit(static_argnames=("out_shape",))
def _affine_coordinates(matrix: Array, offset: Array, *,
                        out_shape: tuple[int, ...]) -> Array:
    """``offset + matrix @ o`` for every output point ``o``.

    The coordinates pass an optimization barrier, so they are computed
    once, inside a user's ``jit`` too: recomputed in several fusions, the
    multiply-adds may be contracted differently in each, and a point's
    neighbour index and its weights must come from the same number.
    """
    dtype = _coordinate_dtype()
    matrix, offset = matrix.astype(dtype), offset.astype(dtype)
    grid = jnp.meshgrid(*_output_grid(out_shape), indexing="ij")
    points = []
    for row in range(matrix.shape[0]):
        coordinate = offset[row]  # SciPy starts from the offset
        for col, g in enumerate(grid):
            coordinate = coordinate + g * matrix[row, col]
        points.append(coordinate)
    return lax.optimization_barrier(jnp.stack(points))


class _GridSums(NamedTuple):
    """Coordinates on an output grid, as sums of terms that each vary along
    one output axis: the coordinate along input axis ``r`` is
    ``offset[r] + terms[r][0] + terms[r][1] + ...``, ``terms[r][k]`` a 1-D
    array along output axis ``k``.  Evaluated inside the interpolation
    kernel, so the coordinates of a whole grid are never stored."""

    offset: Array
    terms: tuple[tuple[Array, ...], ...]

    def evaluate(self) -> list[Array]:
        out_shape = tuple(term.shape[0] for term in self.terms[0])
        points = []
        for row, row_terms in enumerate(self.terms):
            coordinate = self.offset[row]
            for axis, term in enumerate(row_terms):
                shape = [1] * len(out_shape)
                shape[axis] = out_shape[axis]
                coordinate = coordinate + term.reshape(shape)
            points.append(jnp.broadcast_to(coordinate, out_shape))
        return points


def _affine_terms(matrix: np.ndarray, offset: np.ndarray,
                  out_shape: tuple[int, ...]) -> _GridSums:
    """The products ``matrix[r, k] * o_k`` of a concrete matrix over the
    output grid, as 1-D vectors formed on the host, and the offset.

    SciPy sums ``offset + m[r, 0] * o0 + m[r, 1] * o1 + ...`` in that
    order, rounding every product and sum.  Inside one XLA loop the
    products may be contracted into fused multiply-adds, which round once,
    and a coordinate on the edge of a constant mode (or on an order-0 tie)
    then lands on the other side.  So the products, which vary along one
    axis each, are formed here, and the device only adds them (additions
    alone round the same way wherever XLA places them)."""
    dtype = _coordinate_dtype()
    terms = tuple(tuple(jnp.asarray(np.arange(n) * matrix[row, col], dtype)
                        for col, n in enumerate(out_shape))
                  for row in range(matrix.shape[0]))
    return _GridSums(jnp.asarray(offset, dtype), terms)


def _affine_kernel(x: Array, matrix: Array, offset: Array, cval: Any, *,
                   out_shape: tuple[int, ...], order: int, mode: str,
                   prefilter: bool, out_dtype: np.dtype,
                   axes: Sequence[int] | None = None) -> Array:
    """``x`` interpolated at ``matrix @ o + offset``: by output tiles
    where the device's algorithm is the tiles (:func:`_affine_tiling`); else
    concrete CPU input on buckets (:func:`_grid_points`); else a traced
    matrix (``grad``) is applied in JAX, by a program of its own, and a
    concrete one through host products (:func:`_affine_terms`).  With
    ``axes``: every plane along ``axes`` is transformed, prefiltered along
    ``axes`` only, where ``x`` is concrete CPU input of more dimensions
    than ``matrix`` has rows, or a stack of planes for the tiles (``axes``
    its last two)."""
    if _traced(matrix, offset):
        coordinates = _affine_coordinates(matrix, offset,
                                          out_shape=out_shape)
        return _map_kernel(x, coordinates, cval, order=order, mode=mode,
                           prefilter=prefilter, out_dtype=out_dtype)
    matrix = np.asarray(matrix, np.float64)
    offset = np.asarray(offset, np.float64)
    c, static = _prepared(x, cval, order=order, mode=mode,
                          prefilter=prefilter, out_dtype=out_dtype, axes=axes)
    planes = axes is None or tuple(axes) == (x.ndim - 2, x.ndim - 1)
    tiling = _affine_tiling(matrix, order, c.shape[-2:]) if planes else None
    if tiling is not None:
        side, patch = tiling
        return _points_tiled(c, _affine_terms(matrix, offset, out_shape),
                             cval, side=side, patch=patch, **static)

    def transform(c: Array) -> Array:
        if _shape_generic(c, order) and not _traced(cval):
            return _grid_points(c, matrix, offset, cval, out_shape,
                                diagonal=False, **static)
        return _points_exact(c, _affine_terms(matrix, offset, out_shape),
                             cval, **static)

    if axes is None:
        return transform(c)
    planes = np.moveaxis(np.asarray(c), axes, (-2, -1))
    results = [np.asarray(transform(plane))
               for plane in planes.reshape((-1,) + planes.shape[-2:])]
    result = np.stack(results).reshape(planes.shape[:-2] + out_shape)
    return like_input(np.moveaxis(result, (-2, -1), axes), x)


@cached_jit(static_argnames=("out_shape", "npad", "order", "mode",
                             "grid_mode", "dtype", "out_dtype"))
def _grid_kernel(c: Array, zooms: Array | None, shifts: Array | None,
                 cval: Any, *, out_shape: tuple[int, ...], npad: int,
                 order: int, mode: str, grid_mode: bool, dtype: np.dtype,
                 out_dtype: np.dtype) -> Array:
    points = []
    for axis, k in enumerate(_output_grid(out_shape)):
        if shifts is not None:
            k = k + shifts[axis].astype(k.dtype)
        if zooms is not None:
            zoom = zooms[axis].astype(k.dtype)
            k = (k + 0.5) * zoom - 0.5 if grid_mode else k * zoom
        points.append(k)
    return _round_to(_interpolate_separable(c, points, order, mode, cval,
                                            dtype, npad), out_dtype)


def _zoom_shift_kernel(x: Array, zooms: Any, shifts: Any, cval: Any, *,
                       out_shape: tuple[int, ...], order: int, mode: str,
                       prefilter: bool, grid_mode: bool,
                       out_dtype: np.dtype) -> Array:
    """``x`` interpolated at ``(o + shifts) * zooms`` (either may be None;
    ``(o + 0.5) * zooms - 0.5`` in ``grid_mode``) one axis after the
    other, at its own shape (:func:`_grid_kernel`)."""
    c, static = _prepared(x, cval, order=order, mode=mode,
                          prefilter=prefilter, out_dtype=out_dtype)
    return _grid_kernel(c, zooms, shifts, cval, out_shape=out_shape,
                        grid_mode=grid_mode, **static)


def _mapped_axes(x: Array, zooms: Any, shifts: Any, cval: Any, *,
                 out_shape: tuple[int, ...], order: int, mode: str,
                 prefilter: bool, grid_mode: bool,
                 out_dtype: np.dtype) -> Array:
    """:func:`_zoom_shift_kernel`, for concrete CPU input with concrete
    factors on buckets (:func:`_grid_points`): nothing compiles for a new
    shape."""
    if not concrete_on_cpu(x) or _traced(zooms, shifts, cval):
        return _zoom_shift_kernel(x, zooms, shifts, cval, out_shape=out_shape,
                                  order=order, mode=mode, prefilter=prefilter,
                                  grid_mode=grid_mode, out_dtype=out_dtype)
    c, static = _prepared(x, cval, order=order, mode=mode,
                          prefilter=prefilter, out_dtype=out_dtype)
    if _shape_generic(c, order):
        # (o + shift) * zoom + last: a zoom adds 1/2 first in grid mode.
        ndim = len(out_shape)
        shift = (np.full(ndim, 0.5 if grid_mode else 0.0) if shifts is None
                 else np.asarray(shifts, np.float64))
        last = np.full(ndim, -0.5 if grid_mode else 0.0)
        zoom = np.ones(ndim) if zooms is None else np.asarray(zooms)
        return _grid_points(c, zoom, np.concatenate([shift, last]), cval,
                            out_shape, diagonal=True, **static)
    return _grid_kernel(c, zooms, shifts, cval, out_shape=out_shape,
                        grid_mode=grid_mode, **static)


# --------------------------------------------------------------------------
# Shell helpers
# --------------------------------------------------------------------------

def _check_order(order: Any) -> int:
    if not 0 <= order <= 5:
        raise RuntimeError("spline order not supported")
    return int(order)


def _real_dtype(dtype: np.dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    return np.finfo(dtype).dtype if dtype.kind == "c" else dtype


def _prepare(input: ArrayLike, output: Any, order: Any, mode: str,
             out_shape: Sequence[int]) -> tuple[Array, np.dtype, int]:
    input = as_array(input)
    order = _check_order(order)
    out_shape = tuple(int(n) for n in out_shape)
    if input.ndim < 1 or len(out_shape) < 1:
        raise RuntimeError("input and output rank must be > 0")
    out = output_dtype(output, input.dtype, shape=out_shape,
                       complex_output=jnp.iscomplexobj(input))
    check_mode(mode)
    return input, out, order


def _per_component(kernel: Callable[..., Array]) -> Callable[..., Array]:
    """``kernel(plan, input, *operands)`` of an :class:`InterpolationPlan`
    (one operand named ``cval``), behind what every interpolation kernel
    does first:

    * a complex input (``plan.complex_input``) is interpolated as its real
      and imaginary parts, as SciPy does: each part, with the same part of
      ``cval``, into the real dtype of ``plan.out_dtype``
      (``plan.component``), recombined in ``plan.out_dtype``;
    * with nothing to interpolate, the result is made here: zeros for an
      empty output, ``cval`` rounded into ``plan.out_dtype`` for an empty
      input.

    So ``kernel`` only ever sees a real, non-empty input and output; the
    other operands reach it unchanged.
    """
    # Where cval is among the operands (after plan and input).
    at = list(inspect.signature(kernel).parameters).index("cval") - 2

    @wraps(kernel)
    def run(plan: InterpolationPlan, input: Array, *operands: Any) -> Array:
        cval = operands[at]
        if plan.complex_input:
            out = _real_dtype(plan.out_dtype)
            part = plan.component(out)

            def interpolate(values: Array, value: Any) -> Array:
                return run(part, values, *operands[:at], value,
                           *operands[at + 1:])

            if concrete_on_cpu(input) and not _traced(cval):
                # On the host: JAX would compile the parts per shape.
                parts = np.asarray(input)
                result = np.empty(plan.out_shape, plan.out_dtype)
                result.real = np.asarray(interpolate(parts.real,
                                                     np.real(cval)))
                result.imag = np.asarray(interpolate(parts.imag,
                                                     np.imag(cval)))
                return like_input(result, input)
            real = interpolate(input.real, jnp.real(cval))
            imag = interpolate(input.imag, jnp.imag(cval))
            return lax.complex(real.astype(out),
                               imag.astype(out)).astype(plan.out_dtype)
        if math.prod(plan.out_shape) == 0:
            return jnp.zeros(plan.out_shape, plan.out_dtype)
        if input.size == 0:
            return _round_to(jnp.full(plan.out_shape, cval,
                                      compute_dtype(input.dtype)),
                             plan.out_dtype)
        return kernel(plan, input, *operands)

    return run


# --------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class InterpolationPlan(Plan):
    """Spline interpolation of ``order`` (boundary ``mode``, the input
    prefiltered where ``prefilter``) into an array of ``out_shape`` and
    ``out_dtype``; a complex input is interpolated as its real and
    imaginary parts.  The points depend on the function: the kernel's
    operands (``map_coordinates``, ``shift``) or the plan's fields
    (:class:`ZoomPlan`)."""

    out_shape: tuple[int, ...]
    order: int
    mode: str
    prefilter: bool
    out_dtype: np.dtype
    complex_input: bool

    @property
    def depth(self) -> None:
        """None: a point may read anywhere, and the result has its own
        shape, so a dask input is interpolated whole."""
        return None

    def refuses_float16(self, input: Any) -> bool:
        """SciPy's C layer meets a float16 input in the prefilter's pass
        along the first axis (orders 2-5 with ``prefilter``; it ends
        before it reads an empty axis), and a float16 output, or an input
        not prefiltered, at each output point."""
        first = input.shape[0] if input.ndim else 0
        return not self.copies and self._meets_float16(input.dtype, first)

    def _meets_float16(self, dtype: np.dtype, first: int) -> bool:
        """:meth:`refuses_float16` for input of ``dtype`` whose first
        prefiltered axis has ``first`` samples."""
        prefiltered = self.prefilter and self.order > 1
        if dtype == np.float16 and prefiltered and first > 0:
            return True
        return math.prod(self.out_shape) > 0 and (
            self.out_dtype == np.float16
            or (dtype == np.float16 and not prefiltered))

    def component(self, out_dtype: np.dtype) -> Any:
        """The plan of one real component, into ``out_dtype``."""
        return dataclasses.replace(self, out_dtype=np.dtype(out_dtype),
                                   complex_input=False)


def _interpolation_plan(kind: type, input: Array, out: np.dtype,
                        order: int, mode: str, prefilter: Any,
                        out_shape: Sequence[int], cval: Any,
                        **fields: Any) -> Any:
    """The plan of ``kind`` (its own ``fields`` given), after SciPy's
    last checks (but for a zoom's early exit, ``copy``): the padding of
    mode 'nearest' before the prefilter, and a real ``cval`` for a real
    input."""
    complex_input = bool(jnp.iscomplexobj(input))
    if prefilter and order > 1 and mode == "nearest" and not fields.get(
            "copy"):
        _check_edge_padding(input, fields.get("axes"))
    if not complex_input and not fields.get("copy"):
        check_real_cval(cval)
    return kind(ndim=input.ndim, out_shape=tuple(int(n) for n in out_shape),
                order=order, mode=mode, prefilter=bool(prefilter),
                out_dtype=out, complex_input=complex_input, **fields)


def _check_edge_padding(input: Array, axes: Sequence[int] | None) -> None:
    """numpy's ValueError where SciPy pads an empty axis by its edge values
    (mode 'nearest', before the prefilter): along ``axes`` (all if None),
    plane by plane (none along an empty other axis: nothing is padded)."""
    axes = range(input.ndim) if axes is None else axes
    planes = math.prod(n for axis, n in enumerate(input.shape)
                       if axis not in axes)
    empty = [axis for axis in axes if input.shape[axis] == 0]
    if planes and empty:
        raise ValueError(f"input: can't extend empty axis {empty[0]} using "
                         f"modes other than 'constant' or 'empty' (SciPy "
                         f"pads it for mode 'nearest' before its prefilter)")


@_per_component
def _run_map_coordinates(plan: InterpolationPlan, input: Array,
                         coordinates: Array, cval: Any) -> Array:
    """The kernel of ``map_coordinates``' plan."""
    return _map_kernel(input, coordinates, cval, order=plan.order,
                       mode=plan.mode, prefilter=plan.prefilter,
                       out_dtype=plan.out_dtype)


@docfiller
@ndimage_function("input", "coordinates", planned=True)
def map_coordinates(input: ArrayLike, coordinates: ArrayLike,
                    output: Any = None, order: int = 3,
                    mode: str = "constant", cval: Any = 0.0,
                    prefilter: bool = True) -> Array:
    """Interpolate `input` at the points given by `coordinates`.

    Parameters
    ----------
    %(input)s
    coordinates : array_like
        The coordinates at which `input` is evaluated: ``coordinates[i]``
        holds the positions along axis ``i``, so the result has the shape
        ``coordinates.shape[1:]``. Differentiable.
    %(output)s
    %(interpolation)s

    Returns
    -------
    map_coordinates : array
        The interpolated values.

    %(see_also_scipy)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import map_coordinates
    >>> a = np.arange(12.).reshape((4, 3))
    >>> map_coordinates(a, [[0.5, 2], [0.5, 1]], order=1)
    array([2., 7.])
    >>> map_coordinates(a, [[0.5, 2], [0.5, 1]], order=3).round(4)
    array([1.3625, 7.    ])
    """
    order = _check_order(order)
    coordinates = as_array(coordinates)
    if jnp.iscomplexobj(coordinates):
        raise TypeError("Complex type not supported")
    input = as_array(input)
    out_shape = coordinates.shape[1:]
    input, out, order = _prepare(input, output, order, mode, out_shape)
    if coordinates.shape[0] != input.ndim:
        raise RuntimeError("invalid shape for coordinate array")
    plan = _interpolation_plan(InterpolationPlan, input, out, order, mode,
                               prefilter, out_shape, cval)
    return Planned(plan, _run_map_coordinates, (input, coordinates, cval))


def _affine_matrix(matrix: Any, offset: Any, ndim: int, out_ndim: int
                   ) -> tuple[Array, Any]:
    """Validate and split an affine matrix as SciPy does: returns a 1-D
    (diagonal) or ``ndim x out_ndim`` matrix and the offset."""
    matrix = jnp.asarray(matrix)
    if matrix.dtype.kind == "c":
        raise TypeError("Complex type not supported")
    if matrix.ndim not in (1, 2) or matrix.shape[0] < 1:
        raise RuntimeError("no proper affine matrix provided")
    if (matrix.ndim == 2 and matrix.shape[1] == ndim + 1
            and matrix.shape[0] in (ndim, ndim + 1)):
        if matrix.shape[0] == ndim + 1:
            expected = [0] * ndim + [1]
            if (not isinstance(matrix, jax.core.Tracer)
                    and not np.all(np.asarray(matrix[ndim]) == expected)):
                raise ValueError(
                    f"Expected homogeneous transformation matrix with shape "
                    f"{matrix.shape} for image shape {(ndim,)}, but bottom "
                    f"row was not equal to {expected}")
        offset = matrix[:ndim, ndim]
        matrix = matrix[:ndim, :ndim]
    if matrix.shape[0] != ndim:
        raise RuntimeError("affine matrix has wrong number of rows")
    if matrix.ndim == 2 and matrix.shape[1] != out_ndim:
        raise RuntimeError("affine matrix has wrong number of columns")
    return matrix, offset


def _offset_vector(offset: Any, ndim: int) -> Array:
    if isinstance(offset, jax.Array) and offset.ndim == 1:
        if offset.shape[0] != ndim:
            raise RuntimeError("sequence argument must have length equal to "
                               "input rank")
        return offset
    if isinstance(offset, jax.Array) and offset.ndim == 0:
        return jnp.broadcast_to(offset, (ndim,))
    return stacked(normalize_sequence(offset, ndim, "offset"))


@dataclasses.dataclass(frozen=True)
class AffinePlan(InterpolationPlan):
    """An affine transform: output point ``o`` reads the input at
    ``matrix @ o + offset`` (the kernel's operands); a ``diagonal`` matrix
    (given as its diagonal) is applied axis by axis."""

    diagonal: bool


@_per_component
def _run_affine(plan: AffinePlan, input: Array, matrix: Array,
                offset: Array, cval: Any) -> Array:
    """The kernel of an :class:`AffinePlan`."""
    options = dict(out_shape=plan.out_shape, order=plan.order,
                   mode=plan.mode, prefilter=plan.prefilter,
                   out_dtype=plan.out_dtype)
    if plan.diagonal:
        dtype = _coordinate_dtype()
        matrix, offset = matrix.astype(dtype), offset.astype(dtype)
        return _mapped_axes(input, matrix, offset / matrix, cval,
                            grid_mode=False, **options)
    return _affine_kernel(input, matrix, offset, cval, **options)


@docfiller
@ndimage_function("input", "matrix", planned=True)
def affine_transform(input: ArrayLike, matrix: ArrayLike, offset: Any = 0.0,
                     output_shape: Sequence[int] | None = None,
                     output: Any = None, order: int = 3,
                     mode: str = "constant", cval: Any = 0.0,
                     prefilter: bool = True) -> Array:
    """Apply an affine transformation.

    The value at output point ``o`` is `input` interpolated at
    ``matrix @ o + offset``.

    Parameters
    ----------
    %(input)s
    matrix : array_like
        ``ndim x ndim`` (or ``ndim x output rank``) matrix; a 1-D array
        (the diagonal, evaluated axis by axis, faster); ``ndim x (ndim+1)``
        with the offset in the last column; or ``(ndim+1) x (ndim+1)``
        homogeneous. Differentiable.
    offset : float or sequence, optional
        Offset added to the mapped coordinates (ignored when `matrix`
        carries one). Default is 0.0. Differentiable.
    output_shape : tuple of ints, optional
        Shape of the result. Default: that of `output` if it is an array,
        else that of `input`.
    %(output)s
    %(interpolation)s

    %(returns_transformed)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import affine_transform
    >>> a = np.arange(12.).reshape((4, 3))
    >>> affine_transform(a, [[1, 0], [0, 1]], offset=[1, 0], order=1)
    array([[ 3.,  4.,  5.],
           [ 6.,  7.,  8.],
           [ 9., 10., 11.],
           [ 0.,  0.,  0.]])
    """
    order = _check_order(order)
    input = as_array(input)
    if output_shape is None:
        output_shape = (output.shape if isinstance(output, OutputArray)
                        else input.shape)
    input, out, order = _prepare(input, output, order, mode, output_shape)
    matrix, offset = _affine_matrix(matrix, offset, input.ndim,
                                    len(output_shape))
    offset = _offset_vector(offset, input.ndim)
    plan = _interpolation_plan(AffinePlan, input, out, order, mode,
                               prefilter, output_shape, cval,
                               diagonal=matrix.ndim == 1)
    return Planned(plan, _run_affine, (input, matrix, offset, cval))


@_per_component
def _run_shift(plan: InterpolationPlan, input: Array, shifts: Array,
               cval: Any) -> Array:
    """The kernel of ``shift``'s plan: the input read at ``o - shift``."""
    return _mapped_axes(
        input, None, shifts, cval, out_shape=plan.out_shape,
        order=plan.order, mode=plan.mode, prefilter=plan.prefilter,
        grid_mode=False, out_dtype=plan.out_dtype)


@docfiller
@ndimage_function("input", planned=True)
def shift(input: ArrayLike, shift: Any, output: Any = None, order: int = 3,
          mode: str = "constant", cval: Any = 0.0,
          prefilter: bool = True) -> Array:
    """Shift an array.

    The value at output point ``o`` is `input` interpolated at
    ``o - shift``.

    Parameters
    ----------
    %(input)s
    shift : float or sequence
        The shift along the axes; a float shifts every axis by the same
        amount. Differentiable.
    %(output)s
    %(interpolation)s

    Returns
    -------
    shift : array
        The shifted input.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import shift
    >>> shift(np.array([1., 2., 3., 4.]), 1.5, order=1, mode="nearest")
    array([1. , 1. , 1.5, 2.5])
    """
    order = _check_order(order)
    input, out, order = _prepare(input, output, order, mode,
                                 jnp.shape(input) or (0,))
    shifts = -_offset_vector(shift, input.ndim).astype(_coordinate_dtype())
    plan = _interpolation_plan(InterpolationPlan, input, out, order, mode,
                               prefilter, input.shape, cval)
    return Planned(plan, _run_shift, (input, shifts, cval))


@dataclasses.dataclass(frozen=True)
class ZoomPlan(InterpolationPlan):
    """A zoom: output point ``o`` reads the input at ``o * ratios`` (or
    ``(o + 0.5) * ratios - 0.5`` in ``grid_mode``).  ``copy``: a zoom by
    1, the input copied into ``out_dtype`` (SciPy's early exit)."""

    grid_mode: bool
    ratios: tuple[float, ...]
    copy: bool

    @property
    def copies(self) -> bool:
        return self.copy


def _run_zoom(plan: ZoomPlan, input: Array, cval: Any) -> Array:
    """The kernel of a :class:`ZoomPlan`."""
    if plan.copy:  # SciPy's early exit: output[...] = input
        return cast_like_numpy(input, plan.out_dtype)
    return _interpolate_zoom(plan, input, cval)


@_per_component
def _interpolate_zoom(plan: ZoomPlan, input: Array, cval: Any) -> Array:
    """:func:`_run_zoom` past SciPy's early exit (``plan.copy``)."""
    options = dict(out_shape=plan.out_shape, grid_mode=plan.grid_mode,
                   order=plan.order, mode=plan.mode, prefilter=plan.prefilter,
                   out_dtype=plan.out_dtype)
    ratios = np.array(plan.ratios)
    if plan.prefilter and plan.order > 1 and (
            math.prod(plan.out_shape) >= _SEPARABLE_POINTS):
        return _zoom_shift_kernel(
            input, jnp.asarray(ratios, _coordinate_dtype()), None, cval,
            **options)
    return _mapped_axes(input, ratios if concrete_on_cpu(input)
                        else jnp.asarray(ratios, _coordinate_dtype()), None,
                        cval, **options)


@docfiller
@ndimage_function("input", planned=True)
def zoom(input: ArrayLike, zoom: Any, output: Any = None, order: int = 3,
         mode: str = "constant", cval: Any = 0.0, prefilter: bool = True, *,
         grid_mode: bool = False) -> Array:
    """Zoom an array.

    Parameters
    ----------
    %(input)s
    zoom : float or sequence
        The zoom factor along the axes (one for all, or one per axis). The
        output shape is ``round(input.shape * zoom)``, so the factors must
        be concrete.
    %(output)s
    %(interpolation)s
    grid_mode : bool, optional
        If False (default), the centres of the first and last samples map
        onto each other ("pixel centres"); if True, the outer edges of the
        first and last pixels do, as in image resizing. Then 'grid-constant'
        and 'grid-wrap' are the modes that make sense.

    Returns
    -------
    zoom : array
        The zoomed input.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import zoom
    >>> zoom(np.array([0., 1., 2.]), 5 / 3, order=1)
    array([0. , 0.5, 1. , 1.5, 2. ])
    """
    order = _check_order(order)
    input = as_array(input)
    if input.ndim < 1:
        raise RuntimeError("input and output rank must be > 0")
    zooms = [float(z) for z in normalize_sequence(zoom, input.ndim, "zoom")]
    out_shape = tuple(int(round(n * z)) for n, z in zip(input.shape, zooms))
    input, out, order = _prepare(input, output, order, mode, out_shape)
    copy = all(z == 1 for z in zooms) and bool(prefilter)
    if grid_mode and not copy:
        suggestion = {"constant": "grid-constant", "wrap": "grid-wrap"}
        if mode in suggestion:
            warnings.warn(
                f"It is recommended to use mode = {suggestion[mode]} instead "
                f"of {mode} when grid_mode is True.", stacklevel=3)
    divisor = np.array(out_shape, dtype=np.float64)
    numerator = np.array(input.shape, dtype=np.float64)
    if not grid_mode:
        divisor -= 1
        numerator -= 1
    ratios = np.divide(numerator, divisor, out=np.ones(input.ndim),
                       where=divisor != 0)
    plan = _interpolation_plan(
        ZoomPlan, input, out, order, mode, prefilter, out_shape, cval,
        grid_mode=bool(grid_mode), ratios=tuple(float(r) for r in ratios),
        copy=copy)
    return Planned(plan, _run_zoom, (input, cval))


def _rotation(angle: float) -> np.ndarray:
    from scipy import special

    c, s = special.cosdg(angle), special.sindg(angle)
    return np.array([[c, s], [-s, c]])


@dataclasses.dataclass(frozen=True)
class RotationPlan(InterpolationPlan):
    """A rotation in the plane of ``axes`` (ascending): every plane along
    the other axes is transformed by the same 2-D affine map, the
    kernel's operands, into the plane of ``out_shape`` along ``axes``."""

    axes: tuple[int, int]

    def refuses_float16(self, input: Any) -> bool:
        """As :meth:`InterpolationPlan.refuses_float16`, plane by plane:
        with no planes SciPy's loop over them reads nothing."""
        planes = math.prod(n for axis, n in enumerate(input.shape)
                           if axis not in self.axes)
        return planes > 0 and self._meets_float16(
            input.dtype, input.shape[self.axes[0]])


@_per_component
def _run_rotation(plan: RotationPlan, input: Array, matrix: np.ndarray,
                  offset: np.ndarray, cval: Any) -> Array:
    """The kernel of a :class:`RotationPlan`."""
    kernel = partial(_affine_kernel,
                     out_shape=tuple(plan.out_shape[a] for a in plan.axes),
                     order=plan.order, mode=plan.mode,
                     prefilter=plan.prefilter, out_dtype=plan.out_dtype)
    if plan.ndim == 2:
        return kernel(input, matrix, offset, cval)
    # (A rotation's patches span at most 104 samples, so the kernel takes
    # the tiles whatever the padding of the coefficients.)
    plane = tuple(input.shape[a] for a in plan.axes)
    tiled = (not _traced(matrix, offset)
             and _affine_tiling(np.asarray(matrix), plan.order, plane)
             is not None)
    if (not tiled and concrete_on_cpu(input)
            and not _traced(matrix, offset, cval)):
        # Plane by plane on buckets, prefiltered along the plane's axes.
        return kernel(input, matrix, offset, cval, axes=plan.axes)
    planes = jnp.moveaxis(input, plan.axes, (-2, -1))
    batch = planes.shape[:-2]
    planes = planes.reshape((-1,) + planes.shape[-2:])
    if tiled:  # the planes in one call of the tiled kernel
        result = kernel(planes, matrix, offset, cval, axes=(1, 2))
    else:
        result = jax.vmap(kernel, in_axes=(0, None, None, None))(
            planes, matrix, offset, cval)
    result = result.reshape(batch + result.shape[-2:])
    return jnp.moveaxis(result, (-2, -1), plan.axes)


@docfiller
@ndimage_function("input", planned=True)
def rotate(input: ArrayLike, angle: float, axes: Sequence[int] = (1, 0),
           reshape: bool = True, output: Any = None, order: int = 3,
           mode: str = "constant", cval: Any = 0.0,
           prefilter: bool = True) -> Array:
    """Rotate an array in the plane of two axes.

    Parameters
    ----------
    input : array_like
        The input array, at least 2-D: numpy, JAX (also inside ``jit`` and
        ``vmap``) or any array-API array; the result is of the same kind.
    angle : float
        The rotation angle in degrees (concrete: it may fix the output
        shape).
    axes : tuple of 2 ints, optional
        The plane of rotation. Default is the first two axes.
    reshape : bool, optional
        If True (default), the output shape is adapted so that the whole
        rotated input fits.
    %(output)s
    %(interpolation)s

    Returns
    -------
    rotate : array
        The rotated input; every plane along the other axes is rotated and
        prefiltered on its own.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import rotate
    >>> rotate(np.arange(6.).reshape(2, 3), 90, order=0)
    array([[2., 5.],
           [1., 4.],
           [0., 3.]])
    """
    input = as_array(input)
    ndim = input.ndim
    if ndim < 2:
        raise ValueError("input array should be at least 2D")
    axes = list(axes)
    if len(axes) != 2:
        raise ValueError("axes should contain exactly two values")
    if not all(float(ax).is_integer() for ax in axes):
        raise ValueError("axes should contain only integer values")
    axes = [int(ax) + ndim if ax < 0 else int(ax) for ax in axes]
    if any(ax < 0 or ax >= ndim for ax in axes):
        raise ValueError("invalid rotation plane specified")
    axes.sort()
    matrix = _rotation(angle)
    shape = np.asarray(input.shape)
    plane = shape[axes]
    if reshape:
        rows, cols = plane
        bounds = matrix @ [[0, 0, rows, rows], [0, cols, 0, cols]]
        if not np.all(np.isfinite(bounds)):
            # SciPy's shape of NaN is negative, and np.zeros refuses it.
            raise ValueError(f"angle: a rotation by {angle} degrees has "
                             "no output shape (negative dimensions are "
                             "not allowed)")
        out_plane = (np.ptp(bounds, axis=1) + 0.5).astype(int)
    else:
        out_plane = plane
    offset = (plane - 1) / 2 - matrix @ ((out_plane - 1) / 2)
    out_shape = shape.copy()
    out_shape[axes] = out_plane
    out_shape = tuple(int(n) for n in out_shape)
    order = _check_order(order)
    input, out, order = _prepare(input, output, order, mode, out_shape)
    plan = _interpolation_plan(RotationPlan, input, out, order, mode,
                               prefilter, out_shape, cval, axes=tuple(axes))
    return Planned(plan, _run_rotation, (input, matrix, offset, cval))


def _vectorised_mapping(mapping: Callable, out_shape: tuple[int, ...],
                        ndim: int, extra_arguments: Sequence,
                        extra_keywords: dict) -> Array | None:
    """``mapping`` called once on all output coordinates (JAX arrays), or
    None when it cannot take arrays (then it is called point by point)."""
    grid = tuple(jnp.indices(out_shape))
    try:
        result = mapping(grid, *extra_arguments, **extra_keywords)
        result = [jnp.asarray(r) for r in result]
        if len(result) != ndim:
            return None
        return jnp.stack([jnp.broadcast_to(r, out_shape).astype(
            _coordinate_dtype()) for r in result])
    except Exception:  # noqa: BLE001 - any failure means "not vectorised"
        return None


def _chunked_mapping(mapping: Callable, out_shape: tuple[int, ...],
                     ndim: int, extra_arguments: Sequence,
                     extra_keywords: dict) -> np.ndarray | None:
    """``mapping`` called on the output indices as flat numpy arrays, in
    chunks of a list length (:func:`_canvas.in_chunks`), or None when it
    cannot take arrays.  What a mapping computes with numpy compiles
    nothing; a JAX operation it performs compiles per list length, not
    per output shape."""
    count = math.prod(out_shape)
    indices = np.indices(out_shape).reshape(len(out_shape), count)

    def run(start: int, length: int) -> np.ndarray:
        result = mapping(tuple(chunk_of(indices, start, length)),
                         *extra_arguments, **extra_keywords)
        result = [np.asarray(r) for r in result]
        if len(result) != ndim:
            raise ValueError("not one coordinate per axis")
        return np.stack([np.broadcast_to(r, (length,)).astype(
            _coordinate_dtype()) for r in result])

    try:
        return in_chunks(count, run).reshape((ndim,) + out_shape)
    except Exception:  # noqa: BLE001 - any failure means "not vectorised"
        return None


def _pointwise_mapping(mapping: Callable, out_shape: tuple[int, ...],
                       ndim: int, extra_arguments: Sequence,
                       extra_keywords: dict) -> np.ndarray:
    coordinates = np.empty((ndim,) + out_shape, dtype=np.float64)
    for index in np.ndindex(*out_shape):
        point = mapping(tuple(int(i) for i in index), *extra_arguments,
                        **extra_keywords)
        if len(point) != ndim:
            raise RuntimeError("function result must be a sequence of "
                               "length equal to the input rank")
        coordinates[(slice(None),) + index] = point
    return coordinates


@_per_component
def _run_geometric_transform(plan: InterpolationPlan, input: Array,
                             mapping: Callable, cval: Any,
                             extra_arguments: tuple,
                             extra_keywords: dict) -> Array:
    """The kernel of ``geometric_transform``'s plan: the input read at
    ``mapping(o)``."""
    if is_low_level_callable(mapping):
        # A C mapping can only be called from SciPy's own C loop, reached
        # through SciPy's private module: the public function may be
        # jaxndimage's under scipy_backend.patch().  tests/test_rank.py
        # fails loudly if SciPy moves it.
        from scipy.ndimage import _interpolation as scipy_interpolation

        return jnp.asarray(scipy_interpolation.geometric_transform(
            host_only(input, "geometric_transform"), mapping,
            plan.out_shape, plan.out_dtype, plan.order, plan.mode, cval,
            plan.prefilter, extra_arguments, extra_keywords))
    arguments = (mapping, plan.out_shape, input.ndim, extra_arguments,
                 extra_keywords)
    # Concrete CPU input: numpy coordinates in chunks first, interpolated
    # on buckets (JAX arrays of the output's shape would compile every
    # operation of the mapping for every new shape).
    host = concrete_on_cpu(input)
    coordinates = _chunked_mapping(*arguments) if host else None
    if coordinates is None:
        coordinates = _vectorised_mapping(*arguments)
    if coordinates is None:
        coordinates = _pointwise_mapping(*arguments).astype(
            _coordinate_dtype())
        coordinates = coordinates if host else jnp.asarray(coordinates)
    return _map_kernel(input, coordinates, cval, order=plan.order,
                       mode=plan.mode, prefilter=plan.prefilter,
                       out_dtype=plan.out_dtype)


@docfiller
@ndimage_function("input", planned=True)
def geometric_transform(input: ArrayLike, mapping: Callable,
                        output_shape: Sequence[int] | None = None,
                        output: Any = None, order: int = 3,
                        mode: str = "constant", cval: Any = 0.0,
                        prefilter: bool = True,
                        extra_arguments: Sequence = (),
                        extra_keywords: dict | None = None) -> Array:
    """Apply an arbitrary geometric transform.

    The value at output point ``o`` is `input` interpolated at
    ``mapping(o)``.

    Parameters
    ----------
    %(input)s
    mapping : callable
        Takes a tuple of output coordinates (and `extra_arguments`,
        `extra_keywords`) and returns a sequence of input coordinates, one
        per input axis. It is first called with a tuple of integer arrays
        holding the output coordinates (fast): for numpy input (and
        concrete JAX arrays on a CPU) flat numpy arrays, a chunk of the
        output points at a time, then JAX arrays of the output's shape
        (traceable); if that fails it is called once per output point with
        a tuple of ints, as SciPy does (correct but slow, and not under
        ``jit``).
    output_shape : tuple of ints, optional
        Shape of the result. Default: the shape of `input`.
    %(output)s
    %(interpolation)s
    %(extra_arguments)s
    %(extra_keywords)s

    %(returns_transformed)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import geometric_transform
    >>> a = np.arange(12.).reshape((4, 3))
    >>> geometric_transform(a, lambda xy: (xy[0] - 0.5, xy[1] - 0.5),
    ...                     order=1)
    array([[0., 0., 0.],
           [0., 2., 3.],
           [0., 5., 6.],
           [0., 8., 9.]])
    """
    order = _check_order(order)
    input = as_array(input)
    if output_shape is None:
        output_shape = input.shape
    input, out, order = _prepare(input, output, order, mode, output_shape)
    plan = _interpolation_plan(InterpolationPlan, input, out, order, mode,
                               prefilter, output_shape, cval)
    return Planned(plan, _run_geometric_transform,
                   (input, mapping, cval, tuple(extra_arguments),
                    extra_keywords or {}))
