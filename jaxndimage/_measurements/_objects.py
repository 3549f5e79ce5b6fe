"""`find_objects` and `value_indices`: reductions on device whose result
structure depends on the data.

The kernels (the bounding box of each label; the stable order of the
values) run on device, but for host input on a CPU, where numpy does it
faster and compiles nothing (the boxes from the runs of each line,
:func:`_boxes_of_runs`; the stable order by numpy's sort,
:func:`stable_order`); the finish steps build the list of slices and the
dict of index arrays on the host (an accelerator's index arrays are cut
where they were computed), so neither function can be traced (a
TypeError that says so).  `find_objects` of a dask ``input`` merges the
boxes of its blocks (:func:`._over_blocks._find_objects_over_blocks`).
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage import _dense_groups as dense_groups
from jaxndimage._cache import cached_jit
from jaxndimage._canvas import (
    concrete_on_cpu,
    flat_bucket,
    flat_position,
    like_input,
)
from jaxndimage._dispatch import as_array, is_jax_array
from jaxndimage._measurements._dispatch import MeasurementPlan, _measurement
from jaxndimage._measurements._groups import _SPREAD
from jaxndimage._measurements._over_blocks import _find_objects_over_blocks
from jaxndimage._measurements._results import (
    _host,
    _hosts,
    _is_traced,
    _like,
)
from jaxndimage._plans import Planned


def _segment_boxes(flat: jax.Array, grids: list[jax.Array],
                   position: jax.Array, max_label: Any, count: int):
    """Lowest and highest of each of ``grids`` (the coordinates of the
    points of the flat labels ``flat``) over labels 1..max_label, as rows
    1..count, and which labels occur; by XLA's segment reductions."""
    spread = count + jnp.arange(flat.size, dtype=np.int32) % _SPREAD
    segments = jnp.where((flat >= 1) & (flat <= max_label),
                         flat.astype(np.int32) - 1, spread)
    size = count + _SPREAD
    low = [jax.ops.segment_min(g, segments, num_segments=size)[:count]
           for g in grids]
    high = [jax.ops.segment_max(g, segments, num_segments=size)[:count]
            for g in grids]
    # An empty segment's minimum is the identity, the largest int32.
    first = low[0] if low else jax.ops.segment_min(
        position, segments, num_segments=size)[:count]
    present = first < np.iinfo(np.int32).max
    empty = jnp.zeros((count, 0), np.int32)
    return (jnp.stack(low, axis=-1) if low else empty,
            jnp.stack(high, axis=-1) if high else empty, present)


@cached_jit(static_argnames=("count", "dense"))
def _bounding_boxes(labels: jax.Array, *, count: int, dense: bool = False):
    """Lowest and highest coordinate of labels 1..count per axis, and which
    labels occur; by `_dense_groups` where ``dense``."""
    if dense:
        return _dense_bounding_boxes(labels, count)
    position = jnp.arange(labels.size, dtype=np.int32)
    grids = jnp.unravel_index(position, labels.shape) if labels.ndim else ()
    return _segment_boxes(labels.ravel(), list(grids), position, count,
                          count)


@cached_jit(static_argnames=("count",))
def _bounding_boxes_flat(flat: jax.Array, shape: jax.Array,
                         max_label: jax.Array, *, count: int):
    """:func:`_bounding_boxes` of labels laid out flat in a buffer of a list
    length (padded with 0), their ``shape`` and ``max_label`` traced, as
    ``count`` rows: one program per list length and ``count``."""
    position = lax.iota(np.int32, flat.size)
    grids = flat_position(0, flat.size, shape)
    return _segment_boxes(flat, grids, position, max_label, count)


#: At most this many labels, :func:`_dense_bounding_boxes` compares every
#: point with each label inside one reduction per label and axis, with
#: no one-hot product and no transpose (faster on the chip up to about
#: 32 labels: benchmarks/results/accelerator-tpu-v5e.json's notes).
_FEW_BOXES = 16


def _dense_bounding_boxes(labels: jax.Array, count: int):
    """:func:`_bounding_boxes` from which labels occur in each slice along
    each axis (`_dense_groups.group_presence`, or one comparison per label
    for at most `_FEW_BOXES` labels): a box runs from the first slice a
    label occurs in to the last."""
    low, high = [], []
    for axis, extent in enumerate(labels.shape):
        if 0 < count <= _FEW_BOXES:
            others = tuple(a for a in range(labels.ndim) if a != axis)
            present = jnp.stack([jnp.any(labels == label, axis=others)
                                 for label in range(1, count + 1)], axis=1)
        else:
            rows = jnp.moveaxis(labels, axis, 0).reshape(extent, -1)
            present = dense_groups.group_presence(
                rows, count, dense_groups.presence_width(count))
        if axis == 0:
            occurs = jnp.any(present, axis=0)
        low.append(jnp.argmax(present, axis=0))
        high.append(extent - 1 - jnp.argmax(present[::-1], axis=0))
    return (jnp.stack(low, axis=-1).astype(np.int32),
            jnp.stack(high, axis=-1).astype(np.int32), occurs)


def _boxes_as_slices(result, bound):
    why = "the length of its list depends on the labels"
    low, high, present = _hosts(result, "find_objects", why)
    return [tuple(map(slice, starts, stops)) if here else None
            for starts, stops, here in zip(low.tolist(), (high + 1).tolist(),
                                           present.tolist())]


@dataclasses.dataclass(frozen=True)
class FindObjectsPlan(MeasurementPlan):
    """`find_objects`: the boxes of labels ``1 .. max_label``, reduced by
    `_dense_groups` where ``dense`` (the choice of `_algorithms`)."""

    max_label: int
    dense: bool = False


def _run_find_objects(plan: FindObjectsPlan, input: Any) -> tuple:
    """The kernel of a :class:`FindObjectsPlan`: each label's lowest and
    highest coordinates, and which labels occur (float labels truncated)."""
    if input.dtype.kind == "f":
        xp = np if isinstance(input, np.ndarray) else jnp
        input = xp.trunc(input).astype(jnp.result_type(int))
    if plan.dense or not (input.ndim and input.size
                          and concrete_on_cpu(input)):
        return _bounding_boxes(input, count=plan.max_label, dense=plan.dense)
    if plan.max_label < 1:
        return (np.zeros((0, input.ndim), np.int32),) * 2 + (
            np.zeros(0, bool),)
    labels = np.asarray(input)
    boxes = _boxes_of_runs(labels, plan.max_label)
    if boxes is not None:
        return boxes
    # One program per list length and power of `_COUNT_STEP` of max_label
    # (rows are cheap next to points); the rows past max_label are cut on
    # the host.
    count = _COUNT_STEP
    while count < plan.max_label:
        count *= _COUNT_STEP
    largest = np.iinfo(labels.dtype).max if labels.dtype.kind in "iu" else 1
    result = _bounding_boxes_flat(
        flat_bucket(labels.reshape(-1)), np.array(labels.shape, np.int32),
        labels.dtype.type(min(plan.max_label, largest)), count=count)
    return tuple(np.asarray(part)[:plan.max_label] for part in result)


#: :func:`_bounding_boxes_flat` is compiled for a power of this many rows.
_COUNT_STEP = 64

#: :func:`_boxes_of_runs` takes labels with at most one run in this many
#: points (blobs have far fewer; noise has about one per point, where the
#: runs would cost more than the points).
_POINTS_PER_RUN = 8


def _boxes_of_runs(labels: np.ndarray, max_label: int) -> tuple | None:
    """:func:`_bounding_boxes` of host labels by numpy, from their runs
    along the last axis: a run of one label spans one line, so a box is the
    least and greatest line coordinates of its runs and their least start
    and greatest end.  A pass over the points finds the runs; the
    reductions run over the runs only, which compiles nothing and beats
    segment reductions over every point on a CPU.  None where there are
    more than one run in `_POINTS_PER_RUN` points."""
    lines = labels.reshape(-1, labels.shape[-1])
    length = lines.shape[1]
    change = np.empty(lines.shape, bool)
    change[:, 0] = True
    np.not_equal(lines[:, 1:], lines[:, :-1], out=change[:, 1:])
    starts = np.flatnonzero(change)
    if starts.size * _POINTS_PER_RUN > labels.size:
        return None
    values = lines.reshape(-1)[starts]
    ends = np.append(starts[1:], labels.size) - 1
    kept = (values >= 1) & (values <= max_label)
    starts, ends = starts[kept], ends[kept]
    rows = values[kept].astype(np.intp) - 1
    line, first = np.divmod(starts, length)
    leading = (np.unravel_index(line, labels.shape[:-1])
               if labels.ndim > 1 else ())
    coordinates = (*leading, first)
    last = ends - line * length
    ndim = labels.ndim
    low = np.full((max_label, ndim), np.iinfo(np.int32).max, np.int64)
    high = np.full((max_label, ndim), -1, np.int64)
    for axis in range(ndim):
        np.minimum.at(low[:, axis], rows, coordinates[axis])
        np.maximum.at(high[:, axis], rows,
                      last if axis == ndim - 1 else coordinates[axis])
    present = high[:, 0] >= 0
    return low.astype(np.int32), high.astype(np.int32), present


def _find_objects_of_dask(input, max_label=0):
    """`find_objects` of a dask ``input``: :func:`_find_objects_over_blocks`
    with this function on each block."""
    return _find_objects_over_blocks(find_objects, input, max_label)


@_measurement("input", finish=_boxes_as_slices,
              over_blocks=_find_objects_of_dask)
def find_objects(input, max_label=0):
    """The bounding box of each label, as a tuple of slices.

    Parameters
    ----------
    input : array_like of int
        Labels; 0 (and negative values) are background.
    max_label : int, optional
        The highest label to look for. Default: ``input.max()``.

    Returns
    -------
    object_slices : list of tuples
        For label ``l`` at position ``l - 1``: one slice per axis (the
        smallest box holding the label), or None where the label does not
        occur. Computed on device and built on the host: not traceable.

    Examples
    --------
    >>> import numpy as np
    >>> import jaxndimage
    >>> a = np.zeros((6, 6), dtype=int)
    >>> a[2:4, 2:4] = 1
    >>> a[4, 4] = 1
    >>> a[:2, :3] = 2
    >>> a[0, 5] = 3
    >>> jaxndimage.find_objects(a)  # doctest: +NORMALIZE_WHITESPACE
    [(slice(2, 5, None), slice(2, 5, None)),
     (slice(0, 2, None), slice(0, 3, None)),
     (slice(0, 1, None), slice(5, 6, None))]
    >>> jaxndimage.find_objects(a == 1, max_label=2)
    [(slice(2, 5, None), slice(2, 5, None)), None]
    """
    input = as_array(input)
    if input.dtype.kind == "c":
        raise TypeError("Complex type not supported")
    if max_label < 1:
        max_label = _host(input.max(), "find_objects", "its default "
                          "max_label, input.max(), decides the length of "
                          "its list")[()]
    max_label = operator.index(max_label)
    plan = FindObjectsPlan(input.ndim, max_label, dense=input.ndim > 0
                           and dense_groups.preferred(max_label))
    return Planned(plan, _run_find_objects, (input,))


@cached_jit()
def _value_order(arr: jax.Array):
    """The coordinates of ``arr``'s elements in the stable order of their
    values (a tuple, one int32 array per axis), the sorted values, and
    where each run of equal values starts: one sort carrying the raster
    indices, no gather."""
    values = arr.reshape(-1)
    ordered, order = lax.sort(
        (values, lax.iota(np.int32, values.size)), num_keys=1,
        is_stable=True)
    starts = jnp.concatenate([jnp.ones((min(values.size, 1),), bool),
                              ordered[1:] != ordered[:-1]])
    coordinates, rest = [], order.astype(
        jax.dtypes.canonicalize_dtype(np.intp))
    for extent in reversed(arr.shape[1:]):
        coordinates.append(rest % extent)
        rest = rest // extent
    coordinates = (rest, *reversed(coordinates)) if arr.ndim else ()
    return coordinates, ordered, starts


def stable_order(values: np.ndarray) -> tuple[np.ndarray, ...]:
    """The stable order of flat host ``values``, the sorted values and
    where each run of equal values starts, by numpy: its stable sort (a
    timsort, which runs of equal labels make fast, or a radix sort for
    types of 16 bits or fewer) beats XLA's sort on a CPU at every size,
    and compiles nothing.  Integers within a range of 2**16 are sorted as
    their offsets from the least in uint16 (the same order), by the radix
    sort."""
    keys = values
    if values.dtype.kind in "iu" and values.dtype.itemsize > 2 and values.size:
        low, high = int(values.min()), int(values.max())
        if high - low < 2**16:
            keys = (values - values.dtype.type(low)).astype(np.uint16)
    order = np.argsort(keys, kind="stable")
    ordered = values[order]
    starts = np.empty(values.size, bool)
    starts[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    return order, ordered, starts


@dataclasses.dataclass(frozen=True)
class ValueIndicesPlan(MeasurementPlan):
    """`value_indices`: the stable order of the values (``ignore_value``
    is left out of the dict built on the host, not of the kernel)."""


def _run_value_indices(plan: ValueIndicesPlan, arr: Any) -> tuple:
    """The kernel of a :class:`ValueIndicesPlan`: the coordinates of the
    elements in the stable order of their values (one array per axis),
    the sorted values, and where each run of equal values starts; on
    device, or by numpy for host input on a CPU."""
    if not concrete_on_cpu(arr):
        return _value_order(jnp.asarray(arr))
    order, ordered, starts = stable_order(np.asarray(arr).reshape(-1))
    coordinates = _unravelled(order.astype(np.intp, copy=False), arr.shape)
    return (tuple(like_input(part, arr) for part in coordinates),
            like_input(ordered, arr), like_input(starts, arr))


def _unravelled(flat: np.ndarray, shape: tuple[int, ...]
                ) -> tuple[np.ndarray, ...]:
    """``np.unravel_index(flat, shape)`` (``flat`` not negative) by a
    division per axis after the first (numpy divides by a scalar without
    a division instruction per element: faster than unravel_index's
    loop), or by a shift and a mask where the extent is a power of two
    (faster again)."""
    coordinates, rest = [], flat
    for extent in reversed(shape[1:]):
        if extent > 0 and extent & (extent - 1) == 0:
            coordinate = rest & (extent - 1)
            rest = rest >> (extent.bit_length() - 1)
        else:
            rest, coordinate = np.divmod(rest, extent)
        coordinates.append(coordinate)
    return (rest, *reversed(coordinates)) if shape else ()


def _indices_dict(result, bound):
    """The dict of :func:`value_indices` from its kernel's ``result``:
    each value's coordinates are slices of the sorted ones, cut on the
    device that holds them (an accelerator's are not copied to the host
    and back)."""
    coordinates, ordered, starts = result
    template = ordered
    ordered, starts = _hosts((ordered, starts), "value_indices", "")
    on_device = (is_jax_array(template)
                 and next(iter(template.devices())).platform != "cpu")
    if not on_device:  # numpy's index type, SciPy's
        coordinates = tuple(c.astype(np.intp, copy=False) for c in
                            _hosts(coordinates, "value_indices", ""))
    starts = np.flatnonzero(starts)
    ends = np.append(starts[1:], ordered.size)
    numpy_caller = isinstance(template, np.ndarray)
    ignore = bound.arguments.get("ignore_value")
    if ignore is not None:
        ignore = ordered.dtype.type(ignore)
    indices = {}
    for start, end in zip(starts.tolist(), ends.tolist()):
        value = ordered[start]
        if ignore is not None and value == ignore:
            continue
        key = value if numpy_caller else value.item()
        indices[key] = tuple(axis[start:end] for axis in coordinates)
    return indices if on_device else _like(template, indices)


@_measurement("arr", finish=_indices_dict)
def value_indices(arr, *, ignore_value=None):
    """The positions of each distinct value of an integer array.

    Parameters
    ----------
    arr : array_like of int
        Integer array.
    ignore_value : int, optional
        A value to leave out. Default None: every value is kept.

    Returns
    -------
    indices : dict
        For each distinct value, in increasing order, a tuple of index
        arrays (one per axis, as ``numpy.nonzero`` gives) of its positions
        in raster order. Keys are numpy scalars of `arr`'s dtype for numpy
        input, Python ints otherwise. Sorted on device, built on the host:
        not traceable.

    Examples
    --------
    >>> import numpy as np
    >>> import jaxndimage
    >>> a = np.array([[2, 0, 1],
    ...               [1, 0, 2]])
    >>> found = jaxndimage.value_indices(a, ignore_value=0)
    >>> list(found)
    [np.int64(1), np.int64(2)]
    >>> found[1]
    (array([0, 1]), array([2, 0]))
    """
    arr = as_array(arr)
    if arr.dtype.kind not in "iu":
        raise ValueError("Parameter 'arr' must be an integer array")
    if _is_traced(arr):
        _host(arr, "value_indices", "its dict has one entry per value found")
    return Planned(ValueIndicesPlan(arr.ndim), _run_value_indices, (arr,))
