"""Measurements of dask input reduced block by block.

`sum_labels` (`sum`), `mean`, `center_of_mass` and `find_objects` of a
dask ``input`` run the public function on each block (numpy) and combine
the per-block counts, sums, moments or bounding boxes by a tree reduction
(:func:`_reduced_over_blocks`): a lazy dask result, or for `find_objects`
the list of slices.  The public function is passed in: the modules that
define them name these routes (``over_blocks`` of
:func:`._dispatch._measurement`).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from jaxndimage import _distributed
from jaxndimage._measurements._groups import _broadcast_shape
from jaxndimage._measurements._results import _positions


def _block_offsets(array: Any) -> list[tuple[int, ...]]:
    """The first coordinate of each block of a dask array, in the order of
    ``array.to_delayed().ravel()``."""
    starts = [np.cumsum((0, *chunks[:-1])) for chunks in array.chunks]
    return [tuple(int(s) for s in start)
            for start in itertools.product(*starts)]


def _reduced_over_blocks(input: Any, labels: Any, partial: Callable,
                         add: Callable) -> Any:
    """``partial(values, labels, offset)`` of each block of a dask
    ``input`` (with the matching block of ``labels``, or None), combined by
    ``add`` in a binary tree: a dask ``Delayed`` of the total."""
    import dask
    import dask.array as da

    if labels is not None:
        labels = da.asarray(labels)
        shape = _broadcast_shape(input.shape, labels.shape)
        input = da.broadcast_to(input, shape)
        labels = da.broadcast_to(labels, shape).rechunk(input.chunks)
    blocks = input.to_delayed().ravel()
    label_blocks = (labels.to_delayed().ravel() if labels is not None
                    else [None] * len(blocks))
    parts = [dask.delayed(partial)(v, b, offset) for v, b, offset
             in zip(blocks, label_blocks, _block_offsets(input))]
    while len(parts) > 1:
        parts = [dask.delayed(add)(*parts[i:i + 2]) if i + 1 < len(parts)
                 else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]


def _add_parts(a: tuple, b: tuple) -> tuple:
    return tuple(x + y for x, y in zip(a, b))


def _summed_over_blocks(name: str, sum_labels: Callable, input: Any,
                        labels: Any = None, index: Any = None) -> Any:
    """``sum_labels``, ``mean`` or ``center_of_mass`` of a dask ``input``:
    per-block counts, sums and moments (numpy, by jaxndimage's
    ``sum_labels``) added up by a tree reduction, as a lazy dask result."""
    import dask
    import dask.array as da

    if _distributed.is_dask_array(index):
        index = _distributed.computed(index)
    scalar = labels is None or index is None or np.isscalar(index)
    shape = () if scalar else np.shape(index)
    ndim = input.ndim
    extents = input.shape

    def partial(values, block_labels, offset):
        if name == "center_of_mass":
            grids = np.ogrid[tuple(slice(o, o + n) for o, n
                                   in zip(offset, np.shape(values)))]
            # SciPy's coordinates are the input's own (the blocks are of
            # its shape broadcast against the labels): its axes, the last
            # ones, and 0 along an axis of length 1.
            grids = [grid * (extent != 1) for grid, extent
                     in zip(grids[len(grids) - ndim:], extents)]
            return (sum_labels(values, block_labels, index),
                    *(sum_labels(values * grid.astype(float), block_labels,
                                 index) for grid in grids))
        ones = np.ones(np.shape(values), np.int64)
        return (sum_labels(ones, block_labels, index),
                sum_labels(values, block_labels, index))

    parts = _reduced_over_blocks(input, labels, partial, _add_parts)
    if name == "center_of_mass":
        centres = dask.delayed(lambda cs: np.stack(
            [np.asarray(m) / cs[0] for m in cs[1:]], axis=-1))(parts)
        return _positions(da.from_delayed(centres, shape=(*shape, ndim),
                                          dtype=np.float64))
    if name == "mean":
        total = dask.delayed(lambda cs: cs[1] / np.asarray(cs[0], float))(
            parts)
        dtype = np.result_type(input.dtype, np.float64)
    else:
        total = dask.delayed(lambda cs: cs[1])(parts)
        dtype = (np.sum(np.zeros(1, input.dtype)).dtype if scalar
                 else np.dtype(np.float64))
    return da.from_delayed(total, shape=shape, dtype=dtype)


def _find_objects_over_blocks(find_objects: Callable, input: Any,
                              max_label: int = 0) -> list:
    """``find_objects`` of a dask ``input``: the bounding boxes of each
    block (numpy, by jaxndimage's ``find_objects``), offset to the block's
    position and merged by a tree reduction."""
    if max_label < 1:
        max_label = np.asarray(input.max().compute())[()]
    count = operator.index(max_label)
    if input.ndim == 0 or count < 1:
        return find_objects(_distributed.computed(input), count)
    absent = np.iinfo(np.int64).max

    def partial(block, _, offset):
        low = np.full((count, block.ndim), absent, np.int64)
        high = np.full((count, block.ndim), -1, np.int64)
        for i, box in enumerate(find_objects(block, count)):
            if box is not None:
                low[i] = [o + s.start for o, s in zip(offset, box)]
                high[i] = [o + s.stop for o, s in zip(offset, box)]
        return low, high

    def add(a, b):
        return np.minimum(a[0], b[0]), np.maximum(a[1], b[1])

    low, high = _reduced_over_blocks(input, None, partial, add).compute()
    return [tuple(slice(int(a), int(b)) for a, b in zip(lo, hi))
            if hi[0] >= 0 else None for lo, hi in zip(low, high)]
