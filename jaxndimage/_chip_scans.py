"""Doubling scans along runs in a TPU core's on-chip memory (Pallas).

:func:`jaxndimage._propagation.along_runs` carries values along runs of
passable samples in ``log2(n)`` dense steps, each a pass over the whole
array through the chip's main memory.  Here each block of lines is read
into on-chip memory once, every step (of each direction asked for) runs
there, and the block is written back once: two passes over the array per
axis instead of several per step, and the steps become vector work on
chip (``benchmarks/results/algorithms-tpu-v5e.json``).

The array is viewed as ``(before, n)`` around a last axis, scanned along
the lanes in blocks of rows, or as ``(before, n, after)`` around the
next-to-last, scanned along the sublanes in blocks of ``n`` x up to 128
lanes.  The views merge only leading axes, which a TPU lays out without
tiles; a view that would merge tiled axes is a relayout, which compiled
for seconds on the chip, so other axes (and lines too long for a block)
are left to the dense steps (:func:`suits`).  The scanned axis is padded
to the hardware's tile (128 lanes, 8 sublanes) with samples that are not
passable and hold ``fill``, which changes nothing.  Off a TPU the kernels
run in Pallas' interpreter: how the tests check them on a CPU.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from jaxndimage._cache import current_device

__all__ = ["along_runs_on_chip", "suits"]

#: Bytes of one block of one operand: small enough that the block's
#: operands and the steps' temporaries stay within the scoped on-chip
#: memory the kernels ask for (`VMEM_BYTES`).
BLOCK_BYTES = 1 << 20
VMEM_BYTES = 32 << 20
#: The TPU's tile of 32-bit values: sublanes x lanes.
SUBLANES, LANES = 8, 128


def _padded(n: int, tile: int) -> int:
    return -(-n // tile) * tile


def suits(shape: tuple[int, ...], axis: int) -> bool:
    """Whether lines of ``shape`` along ``axis`` run on chip: the last
    axis of a 1-D or 2-D array or of one whose next-to-last length is a
    whole number of sublane tiles, or the next-to-last axis (views that
    merge only leading axes), with a block of lines within `BLOCK_BYTES`."""
    ndim, n = len(shape), shape[axis]
    if axis == ndim - 1:
        return ((ndim <= 2 or shape[-2] % SUBLANES == 0)
                and _padded(n, LANES) * SUBLANES * 4 <= BLOCK_BYTES)
    return (axis == ndim - 2
            and _padded(n, SUBLANES) * min(shape[-1], LANES) * 4
            <= BLOCK_BYTES)


def _scan(y: jax.Array, reach: jax.Array, axis: int, direction: int,
          combine: Callable, fill) -> jax.Array:
    """`along_runs` of one block in on-chip memory: ``y[i]`` combined
    with ``y[i + direction * span]`` for spans 1, 2, 4, ... where every
    sample between is passable."""
    n = y.shape[axis]
    position = lax.broadcasted_iota(jnp.int32, y.shape, axis)
    span = 1
    while span < n:
        # roll(x, shift)[i] = x[i - shift]: the sample ``span`` ahead.
        shift = n - span if direction > 0 else span
        inside = position < n - span if direction > 0 else position >= span
        ahead = jnp.where(inside, pltpu.roll(y, shift, axis), fill)
        y = jnp.where(reach != 0, combine(y, ahead), y)
        if 2 * span < n:
            reach = reach & jnp.where(inside, pltpu.roll(reach, shift, axis),
                                      0)
        span *= 2
    return y


def _kernel(y_ref, passable_ref, out_ref, *, axis, directions, combine,
            fill):
    y, passable = y_ref[...], passable_ref[...]
    for direction in directions:
        y = _scan(y, passable, axis, direction, combine, fill)
    out_ref[...] = y


@functools.partial(jax.jit, static_argnames=("axis", "directions",
                                             "combine", "fill", "interpret"))
def _on_chip(y: jax.Array, passable: jax.Array, *, axis: int,
             directions: tuple[int, ...], combine: Callable, fill,
             interpret: bool) -> jax.Array:
    shape, n = y.shape, y.shape[axis]
    before = math.prod(shape[:axis])
    if axis == y.ndim - 1:
        width = _padded(n, LANES)
        rows = max(SUBLANES, BLOCK_BYTES // (4 * width) // SUBLANES
                   * SUBLANES)
        view, block = (before, n), (min(rows, before), width)
        grid = (pl.cdiv(before, block[0]),)
        index = lambda i: (i, 0)  # noqa: E731
    else:
        after = shape[-1]
        lanes = min(after, LANES)
        view, block = (before, n, after), (1, _padded(n, SUBLANES), lanes)
        grid = (before, pl.cdiv(after, lanes))
        index = lambda i, j: (i, 0, j)  # noqa: E731
    widths = [(0, 0)] * len(view)
    widths[1] = (0, block[1] - n)
    y = jnp.pad(y.reshape(view), widths, constant_values=fill)
    passable = jnp.pad(passable.reshape(view).astype(jnp.int32), widths)
    spec = pl.BlockSpec(block, index)
    out = pl.pallas_call(
        functools.partial(_kernel, axis=1, directions=directions,
                          combine=combine, fill=fill),
        out_shape=jax.ShapeDtypeStruct(y.shape, y.dtype),
        grid=grid, in_specs=[spec, spec], out_specs=spec,
        interpret=interpret,
        compiler_params=None if interpret else pltpu.CompilerParams(
            vmem_limit_bytes=VMEM_BYTES),
    )(y, passable)
    return lax.slice_in_dim(out, 0, n, axis=1).reshape(shape)


def along_runs_on_chip(y: jax.Array, passable: jax.Array, axis: int,
                       directions: tuple[int, ...],
                       combine: Callable[[jax.Array, jax.Array], jax.Array],
                       fill) -> jax.Array:
    """:func:`jaxndimage._propagation.along_runs` along ``axis`` in each
    of ``directions``, with the same values, for 32-bit ``y``
    whose lines :func:`suits` the chip; ``combine`` and ``fill`` must be hashable
    (a NumPy ufunc's JAX counterpart and a Python number)."""
    return _on_chip(y, passable, axis=axis, directions=tuple(directions),
                    combine=combine, fill=fill,
                    interpret=current_device().platform != "tpu")
