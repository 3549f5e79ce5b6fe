"""Propagation along runs, and connected components by it, for accelerators.

:func:`along_runs` carries values along every run of passable samples of
one axis in a logarithmic number of dense steps (a doubling scan): the
primitive of binary propagation (a set sample fills the runs it touches)
and of :func:`propagated_labels`.  On a TPU the steps of a block of lines
run in on-chip memory (:mod:`jaxndimage._chip_scans`).

:func:`propagated_labels` is `label` without scatters or gathers: every
foreground point starts with its flat index, and the minimum is carried
along runs of each axis the structure connects, and across its diagonal
neighbours, until nothing changes.  Each point then holds the flat index
of its feature's first point in raster order (the root), so the roots
are numbered in raster order by a prefix sum (along the last axis, then
over the lines before, with no reshape of the whole array), as SciPy
numbers features.
The numbers reach the other points of their features by the same
propagation: a point's prefix count is never below its root's, so the
minimum over a feature is its root's number.  A feature that winds back
and forth across an axis takes one round per turn, so the number of rounds
is bounded by the number of points but is a few for blob-like features.

On a CPU the union-find of :mod:`jaxndimage._labelling` is faster and is
used; on an accelerator, where each scattered or gathered point is a
serialised memory access, this is (see ``benchmarks/results/``).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage._cache import cached_jit
from jaxndimage._chip_scans import along_runs_on_chip, suits

__all__ = ["along_runs", "propagated_labels", "shifted", "shifted_by"]


def shifted(x: jax.Array, axis: int, step: int, fill) -> jax.Array:
    """``x[i + step]`` along ``axis``, ``fill`` past the edges."""
    n = x.shape[axis]
    step = max(-n, min(n, step))
    widths = [(0, 0)] * x.ndim
    if step >= 0:
        part = lax.slice_in_dim(x, step, n, axis=axis)
        widths[axis] = (0, step)
    else:
        part = lax.slice_in_dim(x, 0, n + step, axis=axis)
        widths[axis] = (-step, 0)
    return jnp.pad(part, widths, constant_values=fill)


def shifted_by(x: jax.Array, offset: tuple[int, ...], fill) -> jax.Array:
    """``x[p + offset]`` at every ``p``, ``fill`` outside the array."""
    for axis, step in enumerate(offset):
        if step:
            x = shifted(x, axis, step, fill)
    return x


#: Boolean combinations as the integer ones of zeros and ones.
_AS_INTEGERS = {jnp.logical_or: jnp.maximum, jnp.logical_and: jnp.minimum}


def along_runs(y: jax.Array, passable: jax.Array, axis: int,
               directions: tuple[int, ...],
               combine: Callable[[jax.Array, jax.Array], jax.Array],
               fill, steps: str = "materialised steps") -> jax.Array:
    """For each of ``directions`` in turn: ``y`` at each passable sample
    combined with ``y`` at every sample that direction further along
    ``axis`` that a run of passable samples reaches (the run's last
    sample need not be passable; ``fill`` past the edges must not change
    a value when combined).  A doubling scan of ``log2(n)`` steps per
    direction, ``steps`` being the device's "run scans" (`_algorithms`):
    each step materialised behind an optimisation barrier, all of them
    left to XLA to fuse, or run in on-chip memory
    (:mod:`jaxndimage._chip_scans`, for 32-bit or boolean ``y`` whose
    lines suit it, else fused): the same values every way."""
    if (steps == "on-chip steps" and y.shape[axis] > 1
            and suits(y.shape, axis)):
        if y.dtype == np.bool_ and combine in _AS_INTEGERS:
            # On chip as 32-bit zeros and ones.
            return along_runs_on_chip(
                y.astype(jnp.int32), passable, axis, directions,
                _AS_INTEGERS[combine], int(fill)) != 0
        if y.dtype.itemsize == 4:
            return along_runs_on_chip(y, passable, axis, directions,
                                      combine,
                                      np.asarray(fill, y.dtype).item())
    n = y.shape[axis]
    for direction in directions:
        reach, span = passable, 1
        while span < n:
            y = jnp.where(reach, combine(y, shifted(y, axis,
                                                    direction * span, fill)),
                          y)
            span *= 2
            if span < n:
                reach = reach & shifted(reach, axis,
                                        direction * (span // 2), False)
            if steps == "materialised steps":
                y, reach = lax.optimization_barrier((y, reach))
    return y


@cached_jit(static_argnames=("offsets", "steps"))
def _minimum_over_features(values: jax.Array, foreground: jax.Array, *,
                           offsets: tuple[tuple[int, ...], ...],
                           steps: str) -> jax.Array:
    """The minimum of ``values`` over each feature (connected through
    ``offsets`` and their opposites) at each of its points; ``values`` is
    the largest integer of its dtype on the background.  ``steps``: see
    :func:`along_runs`."""
    fill = np.iinfo(values.dtype).max
    runs, diagonals = [], []
    for offset in offsets:
        moved = [axis for axis, step in enumerate(offset) if step]
        if len(moved) == 1 and values.shape[moved[0]] > 1:
            runs.append(moved[0])
        elif moved:
            diagonals.append(offset)

    def round_(state):
        values, _ = state
        old = values
        for axis in runs:
            values = along_runs(values, foreground, axis, (1, -1),
                                     jnp.minimum, fill, steps)
        for offset in diagonals:
            least = jnp.minimum(
                shifted_by(values, offset, fill),
                shifted_by(values, tuple(-step for step in offset), fill))
            values = jnp.where(foreground, jnp.minimum(values, least),
                               values)
        return values, jnp.any(values != old)

    return lax.while_loop(lambda state: state[1], round_,
                          (values, jnp.asarray(True)))[0]


def _raster_index(shape: tuple[int, ...], dtype: np.dtype) -> jax.Array:
    """Each point's flat index in raster order, from one iota per axis: a
    1-D ``arange`` reshaped to ``shape`` is a relayout on a TPU, which
    compiled for seconds (probes in the notes of
    ``benchmarks/results/algorithms-tpu-v5e.json``)."""
    index = jnp.zeros(shape, dtype)
    stride = 1
    for axis in reversed(range(len(shape))):
        index = index + lax.broadcasted_iota(dtype, shape, axis) * stride
        stride *= shape[axis]
    return index


def _raster_counts(values: jax.Array) -> jax.Array:
    """The inclusive cumulative sums of ``values`` in raster order, in
    their own shape: sums along the last axis, and before each line the
    sums of the lines before it (the same, one dimension down), with no
    reshape of the whole array (see :func:`_raster_index`)."""
    within = jnp.cumsum(values, axis=-1)
    if values.ndim == 1:
        return within
    totals = within[..., -1]
    return within + (_raster_counts(totals) - totals)[..., None]


@cached_jit(static_argnames=("index_dtype",))
def _flat_indices(input: jax.Array, *, index_dtype: np.dtype
                  ) -> tuple[jax.Array, jax.Array]:
    """The foreground, and each of its points' flat index (the largest
    integer of ``index_dtype`` on the background)."""
    foreground = input != 0
    return foreground, jnp.where(foreground,
                                 _raster_index(input.shape, index_dtype),
                                 np.iinfo(index_dtype).max)


@cached_jit()
def _root_numbers(root: jax.Array, foreground: jax.Array
                  ) -> tuple[jax.Array, jax.Array]:
    """Each foreground point's count of roots (points that are their
    feature's ``root``) up to it in raster order, and the count of all."""
    is_root = foreground & (root == _raster_index(root.shape, root.dtype))
    counted = _raster_counts(is_root.astype(root.dtype))
    fill = np.iinfo(root.dtype).max
    return (jnp.where(foreground, counted, fill),
            counted[(-1,) * root.ndim])


@cached_jit()
def _background_zero(number: jax.Array, foreground: jax.Array
                     ) -> jax.Array:
    return jnp.where(foreground, number, 0)


def propagated_labels(input: jax.Array, *,
                      offsets: tuple[tuple[int, ...], ...],
                      index_dtype: np.dtype,
                      steps: str = "materialised steps"
                      ) -> tuple[jax.Array, jax.Array]:
    """SciPy's labels of the nonzero points of ``input`` connected through
    ``offsets`` (one of each pair of opposite offsets), in
    ``index_dtype``, and their number.  Four programs, the propagation
    run twice (compiled once).  ``steps``: see :func:`along_runs`."""
    foreground, flat = _flat_indices(input, index_dtype=index_dtype)
    root = _minimum_over_features(flat, foreground, offsets=offsets,
                                  steps=steps)
    counted, count = _root_numbers(root, foreground)
    number = _minimum_over_features(counted, foreground, offsets=offsets,
                                    steps=steps)
    return _background_zero(number, foreground), count
