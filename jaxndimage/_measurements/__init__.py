"""Measurements: label, find_objects, per-label statistics, watershed_ift.

Every statistic is a segment reduction.  One helper, :func:`_groups`, turns
``labels`` and ``index`` into a group number per point: a single group for
``labels=None``, ``index=None`` (``labels > 0``) or a scalar ``index``, and
one group per element of an ``index`` array, plus one last group for the
points that are not measured.  The reductions (sums, extrema, first
positions, sorted order for medians) then run over those groups on device,
and the results of an ``index`` array are gathered back in its order.  Under
a trace the number of groups is ``index.size``, which is static.

What cannot be traced:

* functions whose result *structure* depends on the data (`find_objects`,
  `value_indices`, `labeled_comprehension`, `histogram` with an index array)
  reduce on device and build their lists, dicts and object arrays on the
  host; inside ``jit``/``vmap`` they raise a TypeError that says so;
* `watershed_ift` runs SciPy's sequential bucket-queue algorithm on the host
  (its result depends on the exact order in which equal-cost points leave
  the queue, which no parallel formulation reproduces).

`label` is traceable: union-find over *runs* (maximal stretches of
foreground along the last axis, numbered in raster order of their first
points by a prefix sum).  Two runs that touch through a structure offset
touch first at the first point of one of them, so the links kept are those
from or to a run's first point: at most two per pair of touching runs.
Each root is hooked onto the smallest root linked to it (a scatter-min) and
pointer jumping makes every run point at its root (O(log N) rounds per
pass, not one per pixel of the longest path), repeated until no two linked
roots differ.  The root of a feature is then its first run, so numbering
the roots by a prefix sum gives SciPy's labels.  For concrete input the
runs are counted first and the union-find runs on arrays of the next power
of two of that count (the first points found by a binary search in the
prefix sum, and the links read at them); under a trace, where the count is
not known, on arrays of one node per point.

On XLA's CPU backend the gathers and scatters of these kernels run at a
few ns per point, several times slower than SciPy's sequential C loops for
`label`, `find_objects` and sums over labels; the segment reductions win
where SciPy sorts (`maximum`, `minimum`, `median`, positions with an index
array).

Results come back as SciPy's types: numpy scalars and arrays, tuples and
lists for numpy input; JAX arrays (0-d for scalars) for JAX input; arrays
of the caller's library for other array-API input.  `label` labels dask
arrays block by block and merges the labels across the seams
(:func:`_label_dask`); `sum_labels` (`sum`), `mean`, `center_of_mass`
and `find_objects` combine per-block sums, moments and bounding boxes by a
tree reduction (:func:`_reduced_over_blocks`); the other
functions compute dask input whole and hand the result arrays back as dask
arrays.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import itertools
import math
import operator
from collections.abc import Callable
from typing import Any, NamedTuple

import array_api_compat
import jax
import jax.numpy as jnp
import numpy as np

from jaxndimage import _distributed
from jaxndimage._cache import cached_jit
from jaxndimage._canvas import concrete_on_cpu, flat_bucket, like_input
from jaxndimage._dispatch import (
    as_array,
    as_numpy,
    family_member,
    is_jax_array,
    ndimage_function,
    to_jax,
)
from jaxndimage._docstrings import docfiller
from jaxndimage._labelling import (
    _backward_offsets,
    _count_runs_kernel,  # noqa: F401  (tests/test_compile.py)
    _label_runs,
    label_index_dtype,
)
from jaxndimage._plans import Plan, Planned, run
from jaxndimage._structures import _check_structure
from jaxndimage._support import OutputArray, output_dtype
from jaxndimage._typing import ArrayLike

__all__ = [
    "center_of_mass",
    "extrema",
    "find_objects",
    "histogram",
    "label",
    "labeled_comprehension",
    "maximum",
    "maximum_position",
    "mean",
    "median",
    "minimum",
    "minimum_position",
    "standard_deviation",
    "sum",
    "sum_labels",
    "value_indices",
    "variance",
    "watershed_ift",
]

_builtin_sum = sum


# --------------------------------------------------------------------------
# Results in SciPy's types
# --------------------------------------------------------------------------

def _is_traced(value: Any) -> bool:
    return isinstance(value, jax.core.Tracer)


def _host(value: Any, function: str, why: str) -> np.ndarray:
    """A result array as numpy, for building a Python result on the host."""
    if _is_traced(value):
        raise TypeError(
            f"{function}: cannot be traced by jit/vmap/grad: {why}; call it "
            f"on concrete arrays (outside the transformation)")
    return as_numpy(value)


def _like(template: Any, values: np.ndarray) -> Any:
    """numpy ``values`` as an array of the same library as ``template``."""
    if isinstance(template, np.ndarray | np.generic):
        return values
    if is_jax_array(template):
        return jnp.asarray(values)
    import array_api_compat

    return array_api_compat.array_namespace(template).asarray(values)


def _scalar(value: Any) -> Any:
    """0-d numpy arrays as numpy scalars (SciPy's type); others unchanged."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    return value


def _rows(array: Any) -> list:
    """The first axis of ``array`` as a list of its elements."""
    return [_scalar(array[i, ...]) for i in range(array.shape[0])]


def _positions(positions: Any) -> Any:
    """Coordinates as SciPy returns them: a tuple for one region, a list of
    tuples for an index array (listed flat for an n-d index)."""
    if positions.ndim == 1:
        return tuple(_rows(positions))
    if positions.ndim > 2:
        xp = array_api_compat.array_namespace(positions)
        positions = xp.reshape(positions, (-1, positions.shape[-1]))
    return [tuple(_rows(row)) for row in _rows(positions)]


def _python_int(value: Any) -> Any:
    """A count as a Python int, except for JAX callers (a JAX integer)."""
    return value if is_jax_array(value) else int(as_numpy(value))


def _to_dask(result: Any) -> Any:
    """A numpy result as SciPy's array-API layer hands it to dask callers."""
    import dask.array as da

    if isinstance(result, np.ndarray | np.generic):
        if isinstance(result, np.ndarray) and result.dtype == object:
            return result
        return da.asarray(result)
    if isinstance(result, dict):
        return {key.item() if isinstance(key, np.generic) else key:
                tuple(da.asarray(v) for v in value)
                for key, value in result.items()}
    if isinstance(result, list | tuple):
        return type(result)(_to_dask(item) for item in result)
    return result


def _scalars(result: Any, bound: inspect.BoundArguments) -> Any:
    """The default finish step: each 0-d array of ``result`` a scalar."""
    return jax.tree.map(_scalar, result)


def _measurement(*array_params: str,
                 finish: Callable[[Any, inspect.BoundArguments], Any]
                 = _scalars, results_64: str = "") -> Callable:
    """``ndimage_function`` for functions that return scalars, tuples, lists.

    The implementation is a planned shell (it returns a
    :class:`~jaxndimage._plans.Planned` whose kernel returns arrays);
    ``finish(result, bound)`` turns
    the result, already in the caller's array type, into SciPy's Python
    structure.  dask arrays among the arguments (``index`` included) are
    computed first and the result's arrays are returned as dask arrays.
    ``results_64`` is :func:`ndimage_function`'s.
    """

    def decorate(impl: Callable) -> Callable:
        dispatched = ndimage_function(*array_params, reject_float16=False,
                                      planned=True,
                                      results_64=results_64)(impl)
        signature = inspect.signature(impl)
        names = tuple(array_params) + ("index",)

        @functools.wraps(impl)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            lazy = [name for name in names
                    if _distributed.is_dask_array(bound.arguments.get(name))]
            if lazy and impl.__name__ in _OVER_BLOCKS and _distributed \
                    .is_dask_array(bound.arguments.get("input")):
                return _OVER_BLOCKS[impl.__name__](**bound.arguments)
            if lazy:
                for name in lazy:
                    bound.arguments[name] = _distributed.computed(
                        bound.arguments[name])
                return _to_dask(wrapper(*bound.args, **bound.kwargs))
            result = dispatched(*bound.args, **bound.kwargs)
            return finish(result, bound)

        return wrapper

    return decorate


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


def _summed_over_blocks(name: str, input: Any, labels: Any = None,
                        index: Any = None) -> Any:
    """``sum_labels``, ``mean`` or ``center_of_mass`` of a dask ``input``:
    per-block counts, sums and moments (numpy, by jaxndimage) added up by
    a tree reduction, as a lazy dask result."""
    import dask
    import dask.array as da

    if _distributed.is_dask_array(index):
        index = _distributed.computed(index)
    scalar = labels is None or index is None or np.isscalar(index)
    shape = () if scalar else np.shape(index)
    ndim = input.ndim

    def partial(values, block_labels, offset):
        if name == "center_of_mass":
            grids = np.ogrid[tuple(slice(o, o + n) for o, n
                                   in zip(offset, np.shape(values)))]
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


def _find_objects_over_blocks(input: Any, max_label: int = 0) -> list:
    """``find_objects`` of a dask ``input``: the bounding boxes of each
    block, offset to the block's position and merged by a tree reduction."""
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


#: Functions of dask input computed from per-block partial results.
_OVER_BLOCKS = {
    "sum": functools.partial(_summed_over_blocks, "sum"),
    "sum_labels": functools.partial(_summed_over_blocks, "sum_labels"),
    "mean": functools.partial(_summed_over_blocks, "mean"),
    "center_of_mass": functools.partial(_summed_over_blocks,
                                        "center_of_mass"),
    "find_objects": _find_objects_over_blocks,
}


# --------------------------------------------------------------------------
# Groups of points: one mechanism for labels and index
# --------------------------------------------------------------------------

class _Groups(NamedTuple):
    """Points of ``input`` sorted into groups.

    ``values`` (and ``labels``) are flat, of the broadcast shape of input
    and labels.  ``segments`` is None when every point is measured (one
    group), else each point's group: ``0 .. count - 1`` are measured, the
    others (up to ``size - 1``) are not.  Per-group arrays have ``size``
    entries.  ``rank`` maps each element of an index array to its group
    (None for a single group, whose result is 0-d); ``shape`` is the shape
    of the broadcast input: a tuple, or a traced vector for points laid out
    in a flat bucket, where ``valid`` marks the points that are the
    array's (the others are in no group).
    """

    values: jax.Array
    labels: jax.Array | None
    segments: jax.Array | None
    count: int
    size: int
    rank: jax.Array | None
    index_shape: tuple[int, ...] | None
    shape: tuple[int, ...] | jax.Array
    valid: jax.Array | None = None


#: Points outside every group are spread over this many groups, so that the
#: segment reductions do not all write to one address (XLA's CPU scatter
#: serialises on it).
_SPREAD = 256


@dataclasses.dataclass(frozen=True)
class MeasurementPlan(Plan):
    """Base of the measurements' plans.  A measurement's result has another
    shape than its input (or reaches across the whole array), so there is
    no block-wise form: depth None.  (dask input takes the routes of
    :func:`_measurement` and :func:`_label_dask` instead.)"""

    @property
    def depth(self) -> None:
        return None


@dataclasses.dataclass(frozen=True)
class StatisticPlan(MeasurementPlan):
    """A per-label statistic (a key of ``_BODIES``) and how ``labels`` and
    ``index`` select its groups: ``mode`` "all" (no labels), "positive"
    (``labels > 0``), "scalar" (one label) or "array" (one group per
    element of an index array); ``exact_index`` for index values matched
    exactly (not truncated to integers); ``table`` the length of a lookup
    table from label to group (a power of two), or None for a binary
    search."""

    statistic: str
    mode: str
    exact_index: bool
    table: int | None


def _broadcast_shape(input_shape, labels_shape) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(input_shape, labels_shape))
    except ValueError:
        raise ValueError(
            f"labels: input and labels must have the same shape (excepting "
            f"dimensions with width 1), got {tuple(input_shape)} and "
            f"{tuple(labels_shape)}") from None


def _safely_castable_to_int(dtype: np.dtype) -> bool:
    """SciPy's test for labels it counts with ``bincount``."""
    dtype = np.dtype(dtype)
    size = np.dtype(np.int_).itemsize
    return ((dtype.kind == "i" and dtype.itemsize <= size)
            or (dtype.kind == "u" and dtype.itemsize < size))


def _plan(statistic: str, input: jax.Array, labels: Any, index: Any,
          exact_index: bool) -> tuple[StatisticPlan, Any, Any, Any]:
    """Validate ``labels``/``index`` and choose how to group (on the host).

    Returns the plan, labels and index (numpy for host input, JAX arrays
    as given; or None) and the lowest label (for a lookup table) or None.
    A host index stays numpy: ``jnp.asarray`` would stage a program per
    call.
    """
    def plan(mode: str, table: int | None = None) -> StatisticPlan:
        return StatisticPlan(input.ndim, statistic, mode, exact_index, table)

    if labels is None:
        return plan("all"), None, None, None
    labels = as_array(labels)
    _broadcast_shape(input.shape, labels.shape)
    if index is None:
        return plan("positive"), labels, None, None
    if np.isscalar(index):
        return plan("scalar"), labels, np.asarray(index), None
    index = index if is_jax_array(index) else as_numpy(index)
    if (not exact_index and labels.size == 0 and index.size
            and _safely_castable_to_int(labels.dtype)):
        # SciPy takes labels.min() to choose how to count.
        raise ValueError("zero-size array to reduction operation minimum "
                         "which has no identity")
    table, low = None, None
    # Integer labels on concrete arrays: one gather from a lookup table
    # instead of a binary search per point.  Table sizes are powers of two
    # (a bounded number of programs).
    if (labels.dtype.kind in "iub" and labels.size and index.size
            and not _is_traced(labels)):
        if concrete_on_cpu(labels):  # a JAX reduction compiles per shape
            host = np.asarray(labels)
            low, high = int(host.min()), int(host.max())
        else:
            low, high = (int(v) for v in jax.device_get(
                (labels.min(), labels.max())))
        span = high - low + 1
        if span <= max(4 * labels.size, 2 ** 16) and span < 2 ** 31:
            table = 1 << (span - 1).bit_length()
        else:
            low = None
    return plan("array", table), labels, index, low


def _groups(plan: StatisticPlan, input: jax.Array, labels: jax.Array | None,
            index: jax.Array | None, low: jax.Array | None,
            bucket: tuple[jax.Array, jax.Array] | None = None) -> _Groups:
    """Group the points of ``input`` by ``labels`` and ``index`` (traced).

    With integer labels SciPy counts by ``bincount`` and truncates a float
    index to an integer first (``1.5`` measures label 1); with other labels,
    or when ``exact_index`` (labeled_comprehension), index values match
    labels exactly.  With ``bucket`` (the number of points and the shape of
    the array, traced), ``input`` and ``labels`` are the array's points in
    raster order followed by padding (labels 0), which joins no group.
    """
    if bucket is None:
        valid, size = None, labels.size if labels is not None else None
        shape = (input.shape if labels is None
                 else _broadcast_shape(input.shape, labels.shape))
    else:
        size, shape = bucket
        valid = jnp.arange(input.size) < size
    if plan.mode == "all":
        if valid is None:
            return _Groups(input.ravel(), None, None, 1, 1, None, None, shape)
        return _Groups(input, None, jnp.where(valid, 0, 1), 1, 2, None, None,
                       shape, valid)
    if valid is None:
        values = jnp.broadcast_to(input, shape).ravel()
        labels = jnp.broadcast_to(labels, shape).ravel()
    else:
        values = input
    if plan.mode != "array":
        selected = labels > 0 if plan.mode == "positive" else labels == index
        if valid is not None:
            selected &= valid
        return _Groups(values, labels, jnp.where(selected, 0, 1), 1, 2, None,
                       None, shape, valid)
    keys = index.ravel()
    count = keys.size
    if (not plan.exact_index and keys.dtype.kind == "f" and labels.size
            and _safely_castable_to_int(labels.dtype)):
        # The padding's label 0 changes neither test.
        counted = (labels.min() >= 0) & (labels.max() <= size)
        keys = jnp.where(counted, jnp.trunc(keys), keys)
    spread = (jnp.arange(labels.size, dtype=np.int32) % _SPREAD) + count
    if count == 0:
        return _Groups(values, labels, spread, 0, _SPREAD,
                       jnp.zeros((0,), np.int32), index.shape, shape, valid)
    ordered = jnp.sort(keys)
    rank = jnp.searchsorted(ordered, keys).astype(np.int32)
    if plan.table is not None:
        slot = keys - low
        usable = (slot == jnp.trunc(slot)) & (slot >= 0) & (
            slot < plan.table)
        slot = jnp.where(usable, slot, plan.table).astype(np.int32)
        lookup = jnp.full((plan.table,), count, np.int32).at[slot].min(
            rank, mode="drop")
        group = lookup[(labels.astype(jnp.result_type(int)) - low).astype(
            np.int32)]
    else:
        common = jnp.result_type(labels.dtype, keys.dtype)
        ordered = ordered.astype(common)
        position = jnp.minimum(jnp.searchsorted(ordered, labels.astype(
            common)), count - 1).astype(np.int32)
        group = jnp.where(ordered[position] == labels.astype(common),
                          position, count)
    measured = group < count
    if valid is not None:
        measured &= valid
    segments = jnp.where(measured, group, spread)
    return _Groups(values, labels, segments, count, count + _SPREAD, rank,
                   index.shape, shape, valid)


def _per_index(groups: _Groups, per_group: jax.Array) -> jax.Array:
    """Results per group as SciPy returns them: 0-d for one group, else in
    the order and shape of the index array."""
    if groups.rank is None:
        return per_group[0]
    result = per_group[groups.rank]
    return result.reshape(groups.index_shape + per_group.shape[1:])


# Reductions over groups.  One group is a masked reduction (vectorised, the
# other group's entry left 0); more use XLA's segment reductions.

def _pad(first: jax.Array, groups: _Groups) -> jax.Array:
    """A masked result as ``groups.size`` entries."""
    if groups.size == 1:
        return first
    return jnp.concatenate([first, jnp.zeros((groups.size - 1,)
                                             + first.shape[1:], first.dtype)])


#: The most partial sums (blocks times groups) a two-level sum keeps.
_PARTIAL_SUMS = 1 << 22


def _group_sum(groups: _Groups, values: jax.Array) -> jax.Array:
    if groups.segments is None:
        return jnp.sum(values, axis=0, keepdims=True)
    if groups.rank is None:
        mask = (groups.segments == 0).reshape((-1,) + (1,) * (values.ndim - 1))
        return _pad(jnp.sum(jnp.where(mask, values, 0), axis=0,
                            keepdims=True), groups)
    if (jnp.issubdtype(values.dtype, jnp.inexact)
            and jnp.finfo(values.dtype).bits <= 32):
        return _two_level_segment_sum(values, groups.segments, groups.size)
    return jax.ops.segment_sum(values, groups.segments,
                               num_segments=groups.size)


def _two_level_segment_sum(values: jax.Array, segments: jax.Array,
                           size: int) -> jax.Array:
    """``segment_sum`` of 32-bit floats with its rounding error bounded by
    about ``2 * sqrt(n)`` roundings instead of ``n``: the points are summed
    in blocks of about ``sqrt(n)``, then the blocks' sums are added.  (A
    scatter adds a group's points one after the other: for millions of
    float32 points that is off by 1e-3.)  Float64 sums keep the plain
    order, which is SciPy's."""
    n = values.shape[0]
    blocks = max(1, min(math.isqrt(n), _PARTIAL_SUMS // max(size, 1)))
    if blocks == 1:
        return jax.ops.segment_sum(values, segments, num_segments=size)
    length = -(-n // blocks)
    padding = blocks * length - n
    values = jnp.pad(values, [(0, padding)] + [(0, 0)] * (values.ndim - 1))
    segments = jnp.pad(segments, (0, padding))  # zeros, added to group 0
    partial = jax.vmap(lambda v, s: jax.ops.segment_sum(
        v, s, num_segments=size))(
        values.reshape((blocks, length) + values.shape[1:]),
        segments.reshape(blocks, length))
    return jnp.sum(partial, axis=0)


def _group_count(groups: _Groups) -> jax.Array:
    ones = jnp.ones(groups.values.shape, jnp.result_type(int))
    return _group_sum(groups, ones)


def _extreme(groups: _Groups, values: jax.Array, find_max: bool
             ) -> jax.Array:
    """Minimum or maximum per group; the reduction's identity where empty."""
    if values.dtype == np.bool_:
        values = values.astype(np.uint8)
    reduce = jnp.max if find_max else jnp.min
    if groups.segments is None:
        return reduce(values, keepdims=True)
    if groups.rank is None:
        info = (jnp.finfo if values.dtype.kind in "fc" else jnp.iinfo)(
            values.dtype)
        fill = np.array(info.min if find_max else info.max, values.dtype)
        if values.dtype.kind == "f":
            fill = np.array(-np.inf if find_max else np.inf, values.dtype)
        masked = jnp.where(groups.segments == 0, values, fill)
        return _pad(reduce(masked, keepdims=True), groups)
    segment = jax.ops.segment_max if find_max else jax.ops.segment_min
    return segment(values, groups.segments, num_segments=groups.size)


def _first_position(groups: _Groups, values: jax.Array, extreme: jax.Array
                    ) -> jax.Array:
    """Flat position of the first point (in raster order) of each group
    whose value is the group's extreme; 0 where there is none."""
    size = values.size
    flat = jnp.arange(size, dtype=jnp.result_type(int))
    if values.dtype == np.bool_:
        values = values.astype(np.uint8)
    if groups.segments is None:
        first = jnp.min(jnp.where(values == extreme[0], flat, size),
                        keepdims=True)
        return jnp.where(first >= size, 0, first)
    candidate = jnp.where(values == extreme[groups.segments], flat, size)
    if groups.rank is None:
        first = _pad(jnp.min(jnp.where(groups.segments == 0, candidate,
                                       size), keepdims=True), groups)
    else:
        first = jax.ops.segment_min(candidate, groups.segments,
                                    num_segments=groups.size)
    return jnp.where(first >= size, 0, first)


def _unravel(flat: jax.Array, shape: tuple[int, ...] | jax.Array
             ) -> list[jax.Array]:
    """The coordinates of C-ordered flat positions in ``shape`` (a tuple, or
    a traced vector of static length), one array per axis."""
    if isinstance(shape, tuple):
        return list(jnp.unravel_index(flat, shape)) if shape else []
    coordinates = []
    for axis in reversed(range(shape.shape[0])):
        extent = shape[axis].astype(flat.dtype)
        coordinates.append(flat % extent)
        flat = flat // extent
    return coordinates[::-1]


def _coordinates(flat: jax.Array, shape: tuple[int, ...] | jax.Array
                 ) -> jax.Array:
    """Flat positions as coordinates along a last axis."""
    grids = _unravel(flat, shape)
    if not grids:
        return jnp.zeros(flat.shape + (0,), flat.dtype)
    return jnp.stack(grids, axis=-1).astype(flat.dtype)


def _float_dtype(dtype: np.dtype) -> np.dtype:
    """float64 (complex128 for complex input), as JAX's x64 mode allows."""
    kind = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    return jnp.dtype(jax.dtypes.canonicalize_dtype(kind))


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of ``input.sum()``: int64/uint64 for integers and bool."""
    return jax.eval_shape(jnp.sum, jax.ShapeDtypeStruct((1,), dtype)).dtype


def _sums(groups: _Groups) -> tuple[jax.Array, jax.Array]:
    """Counts and sums per group, the sums accumulated in float64."""
    values = groups.values
    if values.dtype.kind in "fc" or groups.rank is not None:
        values = values.astype(_float_dtype(values.dtype))
    elif values.dtype == np.bool_:
        values = values.astype(_sum_dtype(values.dtype))
    return _group_count(groups), _group_sum(groups, values)


# --------------------------------------------------------------------------
# label
# --------------------------------------------------------------------------

def _max_exact(dtype: np.dtype) -> int:
    """The largest label ``dtype`` stores exactly."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return 1
    if dtype.kind == "f":
        return 2 ** (np.finfo(dtype).nmant + 1)
    return int(np.iinfo(dtype).max)


@dataclasses.dataclass(frozen=True)
class LabelPlan(MeasurementPlan):
    """`label`: features connected through the structure's ``offsets``
    (its first half, :func:`_backward_offsets`), counted in
    ``index_dtype`` and labelled in ``dtype``."""

    offsets: tuple[tuple[int, ...], ...]
    index_dtype: np.dtype
    dtype: np.dtype


def _labels_fit(dtype: np.dtype) -> bool:
    """Whether SciPy's `label` writes labels of ``dtype``: bool, integers,
    float32 and float64."""
    return dtype.kind in "biu" or dtype.newbyteorder("=") in (np.float32,
                                                             np.float64)


@ndimage_function("input", reject_float16=False, planned=True)
def _label(input, structure=None, output=None):
    """The shell of `label`: the labels and their count (a JAX integer)."""
    input = as_array(input)
    if input.dtype.kind == "c":
        raise TypeError("Complex type not supported")
    structure = _check_structure(structure, input.ndim, ValueError)
    if not np.array_equal(structure, structure[(slice(None, None, -1),)
                                                * structure.ndim]):
        raise AssertionError("structure: Structuring element is not "
                             "symmetric")
    index_dtype = label_index_dtype(input.size)
    if output is not None and not _labels_fit(np.dtype(output)):
        # SciPy's labelling loop has no signature for it.
        raise TypeError(f"output: labels of {np.dtype(output)} are not "
                        "supported (as in SciPy)")
    if output is not None and not np.dtype(output).isnative:
        raise ValueError("output: labels of non-native byte order are not "
                         "supported (as in SciPy)")
    dtype = output_dtype(output, index_dtype)
    if input.ndim and input.size and input.dtype == np.float16:
        # SciPy's labelling loop has no float16.
        raise TypeError("input: float16 is not supported (No matching "
                        "signature found)")
    plan = LabelPlan(input.ndim, _backward_offsets(structure), index_dtype,
                     dtype)
    return Planned(plan, _run_label, (input,))


def _run_label(plan: LabelPlan, input: Any) -> tuple[jax.Array, jax.Array]:
    """The kernel of a :class:`LabelPlan`; RuntimeError (outside a trace)
    where ``plan.dtype`` cannot hold the largest label."""
    input = to_jax(input)
    if input.ndim == 0:
        count = (input != 0).astype(plan.index_dtype)
        return count.astype(plan.dtype), count
    if input.size == 0:
        return (jnp.zeros(input.shape, plan.dtype),
                jnp.zeros((), plan.index_dtype))
    labels, count = _label_runs(input, plan.offsets, plan.index_dtype)
    if not _is_traced(count) and int(count) > _max_exact(plan.dtype):
        raise RuntimeError("insufficient bit-depth in requested output type")
    if plan.dtype == np.bool_:
        return labels != 0, count
    return labels.astype(plan.dtype), count


def _is_output_array(output: Any) -> bool:
    return (output is not None and hasattr(output, "shape")
            and hasattr(output, "dtype") and not isinstance(output, type))


@docfiller
def label(input, structure=None, output=None):
    """Label the connected features of an array.

    Every connected set of non-zero points is a feature; features are
    numbered 1, 2, ... in the order of their first point in raster order, as
    SciPy numbers them.

    Parameters
    ----------
    input : array_like
        Array to label: numpy, JAX (also inside ``jit``/``vmap``) or any
        array-API array. Non-zero points are features.
    structure : array_like, optional
        Which neighbours are connected: a symmetric boolean array of shape
        ``(3,) * input.ndim``. Default: the face neighbours
        (``generate_binary_structure(input.ndim, 1)``).
    output : dtype or array, optional
        dtype of the labels (default int32, int64 for arrays of 2**31 points
        or more), or (for non-JAX input) an array of `input`'s shape to
        write them into; then only the number of features is returned.

    Returns
    -------
    label : ndarray
        The labels, 0 for the background (only when `output` is not an
        array).
    num_features : int
        The number of features: a Python int, or a JAX integer for JAX
        input.

    Raises
    ------
    RuntimeError
        If `output`'s dtype cannot hold the largest label (checked outside a
        trace), or `structure` has another rank.
    ValueError
        If a dimension of `structure` is not 3, or an `output` array has
        another shape.

    Examples
    --------
    >>> import numpy as np
    >>> import jaxndimage
    >>> a = np.array([[0, 0, 1, 1, 0, 0],
    ...               [0, 0, 0, 1, 0, 0],
    ...               [1, 1, 0, 0, 1, 0],
    ...               [0, 0, 0, 1, 0, 0]])
    >>> labels, n = jaxndimage.label(a)
    >>> n
    4
    >>> labels
    array([[0, 0, 1, 1, 0, 0],
           [0, 0, 0, 1, 0, 0],
           [2, 2, 0, 0, 3, 0],
           [0, 0, 0, 4, 0, 0]], dtype=int32)
    >>> jaxndimage.label(a, structure=np.ones((3, 3)))[1]
    2
    """
    if _distributed.is_dask_array(input):
        if _is_output_array(output):
            raise TypeError("output: pass a dtype for dask input")
        return _label_dask(input, structure, output)
    if _is_output_array(output):
        if is_jax_array(output):
            raise TypeError(
                "output: JAX arrays are immutable, so an output array cannot "
                "be written in place; pass a dtype instead (output=jnp.int32)"
                " and use the returned array")
        if tuple(output.shape) != tuple(np.shape(input)):
            raise ValueError("output shape not correct")
        labels, count = _label(input, structure, as_numpy(output).dtype)
        output[...] = labels
        return _python_int(count)
    labels, count = _label(input, structure, output)
    return labels, _python_int(count)


def _label_dask(input, structure, output):
    """`label` of a dask array, block by block, equal to SciPy's labels.

    Each block is labelled on its own; the labels of features that cross a
    seam are merged from the planes on both sides of every seam (with the
    structure's diagonal neighbours), and the features renumbered in the
    raster order of their first point in the whole array.  Returns a lazy
    dask array and the number of features (computing the per-block counts,
    seams and first points, all small).  The blocks' labels are persisted
    (in the workers' memory on a cluster), so each block is labelled once.
    """
    import dask
    import dask.array as da
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    if input.dtype.kind == "c":
        raise TypeError("Complex type not supported")
    ndim = input.ndim
    structure = _check_structure(structure, ndim, ValueError)
    # Validates everything else (symmetry, output dtype) on a tiny array.
    dtype = label(np.zeros((1,) * ndim, input.dtype), structure,
                  output)[0].dtype
    if output is None and input.size >= 2 ** 31 - 2:
        dtype = np.dtype(np.intp)
    if input.size == 0 or ndim == 0:
        labels, count = label(_distributed.computed(input), structure, output)
        return da.from_array(labels), count

    def local(block):
        return label(block, structure, np.int64)[0]

    # Each block is labelled once: the steps below read the stored blocks.
    blocks = input.map_blocks(local, dtype=np.int64).persist()
    starts = [np.concatenate([[0], np.cumsum(c)[:-1]]) for c in input.chunks]

    def firsts(block_labels, corner):
        """The flat index in the whole array of each local label's first
        point.  Local labels are numbered in raster order of their first
        points, so label k first occurs where the running maximum first
        reaches k."""
        flat = block_labels.ravel()
        if not flat.size:
            return np.zeros(0, np.int64)
        before = np.maximum.accumulate(np.concatenate([[0], flat[:-1]]))
        where = np.unravel_index(np.flatnonzero(flat > before),
                                 block_labels.shape)
        return np.ravel_multi_index(
            tuple(w + c for w, c in zip(where, corner)), input.shape)

    labels_blocks = blocks.to_delayed()
    positions = list(np.ndindex(*[len(c) for c in input.chunks]))
    first_points = dask.compute(*[dask.delayed(firsts)(
        labels_blocks[p], [int(starts[k][i]) for k, i in enumerate(p)])
        for p in positions])
    counts = np.array([len(f) for f in first_points])
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    total = int(counts.sum())
    offset_array = np.zeros([len(c) for c in input.chunks], np.int64)
    count_array = np.zeros_like(offset_array)
    for p, o, n in zip(positions, offsets, counts):
        offset_array[p], count_array[p] = o, n

    # Equivalences across the seams: the two planes either side of each,
    # in the numbering of the whole array (each block's labels shifted by
    # the count of the blocks before it).
    pairs = []
    for axis in range(ndim):
        bounds = np.cumsum(input.chunks[axis])
        for edge in bounds[:-1]:
            slab = blocks[(slice(None),) * axis
                          + (slice(edge - 1, edge + 1),)]

            def numbered(block, block_info=None, axis=axis, edge=edge,
                         bounds=bounds):
                info = block_info[0]
                where = list(info["chunk-location"])
                row = edge - 1 + info["array-location"][axis][0]
                where[axis] = int(np.searchsorted(bounds, row, side="right"))
                return np.where(block > 0,
                                block + offset_array[tuple(where)], 0)

            pairs.append(dask.delayed(_seam_pairs)(
                slab.map_blocks(numbered, dtype=np.int64), axis, structure))
    found = [p for p in dask.compute(*pairs) if len(p)]
    found = np.concatenate(found) if found else np.zeros((0, 2), np.int64)
    graph = coo_matrix((np.ones(len(found)), (found[:, 0] - 1,
                                              found[:, 1] - 1)),
                       shape=(total, total))
    _, component = connected_components(graph, directed=False)
    first = np.concatenate(first_points) if total else np.zeros(0, np.int64)
    component_first = np.full(component.max() + 1 if total else 0,
                              np.iinfo(np.int64).max)
    np.minimum.at(component_first, component, first)
    rank = np.empty_like(component_first)
    rank[np.argsort(component_first, kind="stable")] = np.arange(
        1, len(component_first) + 1)
    table = rank[component].astype(dtype)
    count = len(component_first)
    if count > _max_exact(dtype):
        raise RuntimeError("insufficient bit-depth in requested output type")

    def relabelled(block, block_info=None):
        where = tuple(block_info[0]["chunk-location"])
        start = offset_array[where]
        return np.concatenate([np.zeros(1, dtype), table[
            start:start + count_array[where]]])[block]

    return blocks.map_blocks(relabelled, dtype=dtype), count


def _seam_pairs(slab: np.ndarray, axis: int, structure: np.ndarray
                ) -> np.ndarray:
    """Pairs of labels connected across the seam in the middle of a slab
    two planes thick along ``axis``."""
    slab = np.asarray(slab)
    before = np.take(slab, 0, axis=axis)
    after = np.take(slab, 1, axis=axis)
    pairs = []
    for position in zip(*np.nonzero(structure)):
        offset = [int(q) - 1 for q in position]
        if offset[axis] != 1:
            continue
        rest = offset[:axis] + offset[axis + 1:]
        source = [slice(max(-o, 0), n - max(o, 0)) for o, n in
                  zip(rest, before.shape)]
        target = [slice(max(o, 0), n - max(-o, 0)) for o, n in
                  zip(rest, before.shape)]
        a, b = before[tuple(source)], after[tuple(target)]
        both = (a > 0) & (b > 0)
        pairs.append(np.stack([a[both], b[both]], axis=-1))
    return np.concatenate(pairs) if pairs else np.zeros((0, 2), np.int64)


# --------------------------------------------------------------------------
# find_objects and value_indices
# --------------------------------------------------------------------------

@cached_jit(static_argnames=("count",))
def _bounding_boxes(labels: jax.Array, *, count: int):
    """Lowest and highest coordinate of labels 1..count per axis, and which
    labels occur."""
    flat = labels.ravel()
    spread = count + jnp.arange(flat.size, dtype=np.int32) % _SPREAD
    segments = jnp.where((flat >= 1) & (flat <= count),
                         flat.astype(np.int32) - 1, spread)
    size = count + _SPREAD
    position = jnp.arange(flat.size, dtype=np.int32)
    grids = jnp.unravel_index(position, labels.shape) if labels.ndim else ()
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


def _boxes_as_slices(result, bound):
    why = "the length of its list depends on the labels"
    low, high, present = (_host(x, "find_objects", why) for x in result)
    return [tuple(map(slice, starts, stops)) if here else None
            for starts, stops, here in zip(low.tolist(), (high + 1).tolist(),
                                           present.tolist())]


@dataclasses.dataclass(frozen=True)
class FindObjectsPlan(MeasurementPlan):
    """`find_objects`: the boxes of labels ``1 .. max_label``."""

    max_label: int


def _run_find_objects(plan: FindObjectsPlan, input: Any) -> tuple:
    """The kernel of a :class:`FindObjectsPlan`: each label's lowest and
    highest coordinates, and which labels occur (float labels truncated)."""
    if input.dtype.kind == "f":
        xp = np if isinstance(input, np.ndarray) else jnp
        input = xp.trunc(input).astype(jnp.result_type(int))
    return _bounding_boxes(input, count=plan.max_label)


@_measurement("input", finish=_boxes_as_slices)
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
    plan = FindObjectsPlan(input.ndim, operator.index(max_label))
    return Planned(plan, _run_find_objects, (input,))


@cached_jit()
def _value_order(values: jax.Array):
    """Stable order of the flat values, the sorted values, and where each
    run of equal values starts."""
    order = jnp.argsort(values, stable=True)
    ordered = values[order]
    starts = jnp.concatenate([jnp.ones((1,), bool),
                              ordered[1:] != ordered[:-1]])
    return order, ordered, starts


@dataclasses.dataclass(frozen=True)
class ValueIndicesPlan(MeasurementPlan):
    """`value_indices`: the stable order of the values (``ignore_value``
    is left out of the dict built on the host, not of the kernel)."""


def _run_value_indices(plan: ValueIndicesPlan, arr: Any) -> tuple:
    """The kernel of a :class:`ValueIndicesPlan`: the stable order of the
    flat values, the sorted values, and where each run of equal values
    starts."""
    arr = jnp.asarray(arr)
    if arr.size == 0:
        return (jnp.zeros((0,), np.int32), arr.ravel(),
                jnp.zeros((0,), bool))
    return _value_order(arr.ravel())


def _indices_dict(result, bound):
    order, ordered, starts = result
    template = order
    shape = np.shape(bound.arguments["arr"])
    order = _host(order, "value_indices", "")
    ordered = _host(ordered, "value_indices", "")
    starts = np.flatnonzero(_host(starts, "value_indices", ""))
    ends = np.append(starts[1:], ordered.size)
    numpy_caller = isinstance(template, np.ndarray)
    ignore = bound.arguments.get("ignore_value")
    if ignore is not None:
        ignore = ordered.dtype.type(ignore)
    indices = {}
    for start, end in zip(starts, ends):
        value = ordered[start]
        if ignore is not None and value == ignore:
            continue
        where = np.unravel_index(order[start:end].astype(np.intp), shape)
        key = value if numpy_caller else value.item()
        indices[key] = tuple(_like(template, w) for w in where)
    return indices


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


# --------------------------------------------------------------------------
# Per-label statistics
# --------------------------------------------------------------------------

_STATISTIC_PARAMETERS = ("input", "labels")


def _measure(statistic: str, input: Any, labels: Any, index: Any, *,
             exact_index: bool = False, operands: tuple = ()) -> Planned:
    """The shell of a per-label statistic: the grouping planned on the
    host, with the kernel :func:`_run_statistic` and its operands (the
    arrays, and ``operands`` for the statistic's body)."""
    input = as_array(input)
    plan, labels, index, low = _plan(statistic, input, labels, index,
                                     exact_index)
    low = None if low is None else np.asarray(low, jnp.result_type(int))
    return Planned(plan, _run_statistic, (input, labels, index, low,
                                          operands))


def _run_statistic(plan: StatisticPlan, input: Any, labels: Any, index: Any,
                   low: Any, operands: tuple) -> Any:
    """The kernel of a :class:`StatisticPlan`: one compiled program, for
    concrete CPU arrays on the points laid out flat in a buffer of a bucket
    length (:func:`_canvas.flat_bucket`), so that a new shape compiles
    nothing."""
    if not (input.size and input.ndim and concrete_on_cpu(input)
            and (labels is None or concrete_on_cpu(labels))
            and not _is_traced(index)
            and not any(_is_traced(x) for x in jax.tree.leaves(operands))):
        return _measure_kernel(input, labels, index, low, operands, None,
                               plan=plan)
    shape = input.shape
    values = np.asarray(input)
    if labels is not None:
        shape = _broadcast_shape(input.shape, labels.shape)
        labels = flat_bucket(np.broadcast_to(np.asarray(labels),
                                             shape).reshape(-1))
    values = flat_bucket(np.broadcast_to(values, shape).reshape(-1))
    bucket = (label_index_dtype(math.prod(shape)).type(math.prod(shape)),
              np.array(shape, np.int32))
    if plan.mode != "array" or not index.size:
        return _measure_kernel(values, labels, index, low, operands, bucket,
                               plan=plan)
    # The index, flat, to a power-of-two length: repeats of its last value
    # join that value's group, and their results are dropped.
    keys = np.asarray(index).reshape(-1)
    length = max(_SHORTEST_INDEX, 1 << (keys.size - 1).bit_length())
    keys = np.concatenate([keys, np.repeat(keys[-1:], length - keys.size)])
    result = _measure_kernel(values, labels, keys, low, operands, bucket,
                             plan=plan)
    # Cut on the host: an eager JAX slice would compile per index length.
    result = jax.tree.map(lambda part: np.asarray(part)[:index.size].reshape(
        index.shape + part.shape[1:]), result)
    return jax.tree.map(lambda part: like_input(part, input), result)


#: The shortest index array :func:`_run_statistic` passes to a bucketed kernel.
_SHORTEST_INDEX = 8


@cached_jit(static_argnames=("plan",))
def _measure_kernel(input, labels, index, low, operands, bucket, *, plan):
    """The plan's statistic of the groups :func:`_groups` forms (``bucket``
    None for arrays of their own shape)."""
    groups = _groups(plan, input, labels, index, low, bucket)
    return _BODIES[plan.statistic](groups, *operands)


def _statistic(name: str, *, summary: str, returns: str, examples: str,
               input_doc: str = "Values.",
               statistic: str | None = None,
               finish: Callable[[Any, inspect.BoundArguments], Any]
               = _scalars, results_64: str = "",
               **fields: str) -> Callable[..., Any]:
    """The public per-label statistic ``name``, with SciPy's signature
    ``(input, labels=None, index=None)``: the body ``_BODIES[statistic]``
    (default ``name``) run by :func:`_measure`, its result turned into
    SciPy's structure by ``finish``.

    Its docstring is ``statistic_doc`` of :mod:`._docstrings`, filled with
    ``summary``, ``input_doc`` (what `input` holds), the section
    ``returns`` (without its heading), the section ``examples``, and
    ``fields``.  ``results_64``: the kinds of result SciPy gives in 64
    bits whatever the input (see :func:`ndimage_function`).
    """
    key = statistic or name

    def per_label(input: ArrayLike, labels: ArrayLike | None = None,
                  index: ArrayLike | None = None) -> Any:
        return _measure(key, input, labels, index)

    sections = dict(summary=summary, input_doc=input_doc, returns=returns,
                    examples=examples)
    return family_member(per_label, name, "%(statistic_doc)s",
                         *_STATISTIC_PARAMETERS, dispatch=_measurement,
                         finish=finish, results_64=results_64,
                         fields={**sections, **fields})


def _nonempty(reduction: str) -> Callable:
    """A finish step that raises numpy's ValueError for the minimum or
    maximum of an empty region (outside a trace)."""

    def finish(result, bound):
        value, count = result
        if (np.ndim(count) == 0 and not _is_traced(count)
                and int(as_numpy(count)) == 0):
            raise ValueError(f"zero-size array to reduction operation "
                             f"{reduction} which has no identity")
        return _scalar(value)

    return finish


sum_labels = _statistic(
    "sum_labels", results_64="f",
    summary="The sum of the values of an array, over labelled regions.",
    input_doc="Values to sum.",
    returns="""\
sum : scalar or ndarray
    One sum (of ``input.sum()``'s dtype) when `index` is None or a
    scalar; else a float64 array of `index`'s shape, 0 for labels that
    do not occur.""",
    examples="""\
Examples
--------
>>> import jaxndimage
>>> input = [0, 1, 2, 3]
>>> labels = [1, 1, 2, 2]
>>> jaxndimage.sum_labels(input, labels, index=[1, 2])
array([1., 5.])
>>> jaxndimage.sum_labels(input, labels, index=1)
np.int64(1)
>>> jaxndimage.sum_labels(input, labels)
np.int64(6)""",
    statistic="sum")


def _sum_body(groups: _Groups) -> jax.Array:
    _, sums = _sums(groups)
    result = _per_index(groups, sums)
    if groups.rank is None:
        result = result.astype(_sum_dtype(groups.values.dtype))
    return result


sum = _statistic(
    "sum", results_64="f",
    summary="""\
The sum of the values of an array, over labelled regions.

An alias of `sum_labels`, kept as SciPy keeps it.""",
    input_doc="Values to sum.",
    returns="""\
sum : scalar or ndarray
    As `sum_labels`.""",
    examples="""\
Examples
--------
>>> import jaxndimage
>>> jaxndimage.sum([1, 2, 3], [1, 0, 1], index=[1])
array([4.])""")


def _mean(groups: _Groups) -> jax.Array:
    counts, sums = _sums(groups)
    dtype = _float_dtype(groups.values.dtype)
    return sums.astype(dtype) / counts.astype(dtype)


mean = _statistic(
    "mean", results_64="f",
    summary="The mean of the values of an array, over labelled regions.",
    input_doc="Values to average.",
    returns="""\
mean : float or ndarray
    float64: one mean, or one per element of `index` (NaN for labels
    that do not occur).""",
    examples="""\
%(examples_measurements)s
>>> float(jaxndimage.mean(a))
2.125
>>> labels, n = jaxndimage.label(a)
>>> jaxndimage.mean(a, labels=labels, index=np.arange(1, n + 1))
array([2.75, 5.5 , 6.  ])""")


def _variance(groups: _Groups) -> jax.Array:
    means = _mean(groups)
    values = groups.values.astype(means.dtype)
    if groups.segments is None:
        deviation = values - means[0]
    else:
        deviation = values - means[groups.segments]
    squares = (deviation * jnp.conj(deviation)).real
    counts = _group_count(groups).astype(squares.dtype)
    return (_group_sum(groups, squares) / counts).astype(means.dtype)


variance = _statistic(
    "variance", results_64="f",
    summary="The variance of the values of an array, over labelled regions.",
    returns="""\
variance : float or ndarray
    float64 (population variance, as SciPy): one value, or one per
    element of `index` (NaN for labels that do not occur).""",
    examples="""\
%(examples_measurements)s
>>> float(jaxndimage.variance(a))
7.609375
>>> labels, n = jaxndimage.label(a)
>>> jaxndimage.variance(a, labels, index=np.arange(1, n + 1))
array([2.1875, 2.25  , 9.    ])""")


standard_deviation = _statistic(
    "standard_deviation", results_64="f",
    summary="""\
The standard deviation of the values of an array, over labelled
regions.""",
    returns="""\
standard_deviation : float or ndarray
    float64: the square root of `variance`.""",
    examples="""\
%(examples_measurements)s
>>> float(jaxndimage.standard_deviation(a))
2.7585095613392387""")


def _extreme_values(groups: _Groups, find_max: bool) -> jax.Array:
    """Minima or maxima per group, 0 for empty groups (as SciPy's index
    arrays give)."""
    values = _extreme(groups, groups.values, find_max)
    if groups.rank is not None:
        present = _group_count(groups) > 0
        values = jnp.where(present, values, 0)
    return values.astype(groups.values.dtype)


def _extremum_body(groups: _Groups, find_max: bool):
    values = _per_index(groups, _extreme_values(groups, find_max))
    return values, _per_index(groups, _group_count(groups))


def _extremum(kind: str, numpy: str, per_label: str,
              whole: str) -> Callable[..., Any]:
    """`minimum` or `maximum` (``kind``): numpy's ``numpy`` per label;
    ``per_label`` and ``whole`` are its example results."""
    return _statistic(kind, summary="%(summary_extremum)s",
                      returns="%(returns_extremum)s",
                      examples="%(examples_extremum)s",
                      finish=_nonempty(kind), numpy=numpy,
                      per_label=per_label, whole=whole)


minimum = _extremum("minimum", "min", per_label="array([1, 4, 3])",
                    whole="np.int64(0)")
maximum = _extremum("maximum", "max", per_label="array([5, 7, 9])",
                    whole="np.int64(9)")


def _medians(values: jax.Array, segments: jax.Array, size: int):
    """Median per group by one sort on (group, value); NaN where empty."""
    dtype = values.dtype
    keys = values.astype(np.uint8) if dtype == np.bool_ else values
    segments, keys = jax.lax.sort((segments, keys), num_keys=2)
    counts = jax.ops.segment_sum(jnp.ones(segments.shape, np.int32),
                                 segments, num_segments=size)
    starts = jnp.cumsum(counts) - counts
    low = jnp.clip(starts + (counts - 1) // 2, 0, max(keys.size - 1, 0))
    high = jnp.clip(starts + counts // 2, 0, max(keys.size - 1, 0))
    out = _float_dtype(dtype) if dtype.kind in "biu" else dtype
    if keys.size == 0:
        return jnp.full((size,), jnp.nan, out), counts
    median = (keys[low].astype(out) + keys[high].astype(out)) / 2
    return median, counts


median = _statistic(
    "median", summary="The median of the values of an array, over labelled regions.",
    returns="""\
median : float or ndarray
    One median, or one per element of `index`: float64 for integer
    and boolean input (the two middle values averaged in float64),
    `input`'s dtype for floats. An empty region gives NaN; a label of
    `index` that does not occur gives what SciPy gives (the smallest
    value among the points of the lowest label).""",
    examples="""\
%(examples_measurements)s
>>> labels, n = jaxndimage.label(a)
>>> jaxndimage.median(a, labels=labels, index=np.arange(1, n + 1))
array([2.5, 5.5, 6. ])
>>> float(jaxndimage.median(a))
0.5""")


def _median_body(groups: _Groups) -> jax.Array:
    segments = groups.segments
    if segments is None:
        segments = jnp.zeros(groups.values.shape, np.int32)
    medians, counts = _medians(groups.values, segments.astype(np.int32),
                               groups.size)
    if groups.rank is None:
        medians = jnp.where(counts > 0, medians, jnp.nan)
    else:
        # SciPy reads an absent label's median at the start of its sorted
        # order: the smallest value among the points of the lowest label.
        labels = groups.labels
        if groups.valid is None:
            lowest = labels == labels.min()
        else:  # the padding is not the array's
            labels = jnp.where(groups.valid, labels, labels[0])
            lowest = (labels == labels.min()) & groups.valid
        values = groups.values
        if values.dtype == np.bool_:
            values = values.astype(np.uint8)
        first = jnp.min(jnp.where(lowest, values, jnp.max(values)))
        medians = jnp.where(counts > 0, medians,
                            first.astype(medians.dtype))
    return _per_index(groups, medians)


def _positions_of(groups: _Groups, find_max: bool) -> jax.Array:
    """Coordinates of each group's first extreme in raster order (SciPy's
    for one region; with an index array SciPy takes any tied position)."""
    extreme = _extreme(groups, groups.values, find_max)
    flat = _first_position(groups, groups.values, extreme)
    return _per_index(groups, _coordinates(flat, groups.shape))


def _position_result(reduction: str) -> Callable:
    """A finish step for positions: tuples, a list of tuples for an index
    array, numpy's ValueError for an empty region."""
    check = _nonempty(reduction)

    def finish(result, bound):
        positions, count = result
        check((positions, count), bound)
        return _positions(positions)

    return finish


def _position_body(groups: _Groups, find_max: bool):
    return (_positions_of(groups, find_max),
            _per_index(groups, _group_count(groups)))


def _position(kind: str, whole: str, per_label: str) -> Callable[..., Any]:
    """`minimum_position` or `maximum_position` (``kind``, "minimum" or
    "maximum"); ``whole`` and ``per_label`` are its example results."""
    return _statistic(f"{kind}_position", summary="%(summary_position)s",
                      returns="%(returns_position)s",
                      examples="%(examples_position)s",
                      finish=_position_result(kind), results_64="iu",
                      kind=kind,
                      whole=whole, per_label=per_label)


minimum_position = _position(
    "minimum", whole="(np.int64(0), np.int64(2))",
    per_label="[(np.int64(2), np.int64(1)), (np.int64(0), np.int64(3))]")
maximum_position = _position(
    "maximum", whole="(np.int64(3), np.int64(0))",
    per_label="[(np.int64(1), np.int64(1)), (np.int64(2), np.int64(3))]")


def _extrema_result(result, bound):
    low, high, low_at, high_at, count = result
    positions = _position_result("minimum")
    return (_nonempty("minimum")((low, count), bound), _scalar(high),
            positions((low_at, count), bound),
            positions((high_at, count), bound))


extrema = _statistic(
    "extrema", results_64="iu",
    summary="Minimum, maximum and their positions, over labelled regions.",
    returns="""\
minimums, maximums : scalar or ndarray
    As `minimum` and `maximum`.
min_positions, max_positions : tuple or list of tuples
    As `minimum_position` and `maximum_position`.""",
    examples="""\
%(examples_measurements)s
>>> low, high, low_at, high_at = jaxndimage.extrema(a)
>>> int(low), int(high), low_at, high_at
(0, 9, (np.int64(0), np.int64(2)), (np.int64(3), np.int64(0)))""",
    finish=_extrema_result)


def _extrema_body(groups: _Groups):
    count = _per_index(groups, _group_count(groups))
    return (_per_index(groups, _extreme_values(groups, False)),
            _per_index(groups, _extreme_values(groups, True)),
            _positions_of(groups, False), _positions_of(groups, True), count)


def _centres_result(result, bound):
    if result.ndim <= 2:
        return _positions(result)
    # An n-d index: SciPy's [tuple(v) for v in np.array(per_axis).T].
    xp = jnp if is_jax_array(result) else np
    per_axis = xp.moveaxis(as_numpy(result) if xp is np else result, -1, 0)
    return [tuple(_rows(v)) for v in _rows(xp.transpose(per_axis))]


center_of_mass = _statistic(
    "center_of_mass", results_64="f",
    summary="The centre of mass of an array, over labelled regions.",
    input_doc="Masses (positive or negative).",
    returns="""\
center_of_mass : tuple or list of tuples
    float64 coordinates: one tuple, or a list with one per element of
    `index` (NaN for labels that do not occur).""",
    examples="""\
%(examples_measurements)s
>>> [round(float(c), 3) for c in jaxndimage.center_of_mass(a)]
[1.824, 1.206]""",
    finish=_centres_result)


def _center_of_mass_body(groups: _Groups) -> jax.Array:
    dtype = _float_dtype(groups.values.dtype)
    values = groups.values.astype(dtype)
    grids = _unravel(jnp.arange(values.size), groups.shape)
    if not grids:
        return _per_index(groups, jnp.zeros((groups.size, 0), dtype))
    mass = _group_sum(groups, values)
    moments = [_group_sum(groups, values * grid.astype(dtype))
               for grid in grids]
    return _per_index(groups, jnp.stack(moments, axis=-1) / mass[:, None])


_BODIES = {
    "sum": _sum_body,
    "mean": lambda groups: _per_index(groups, _mean(groups)),
    "variance": lambda groups: _per_index(groups, _variance(groups)),
    "standard_deviation": lambda groups: _per_index(
        groups, jnp.sqrt(_variance(groups))),
    "minimum": functools.partial(_extremum_body, find_max=False),
    "maximum": functools.partial(_extremum_body, find_max=True),
    "median": _median_body,
    "minimum_position": functools.partial(_position_body, find_max=False),
    "maximum_position": functools.partial(_position_body, find_max=True),
    "extrema": _extrema_body,
    "center_of_mass": _center_of_mass_body,
}


# --------------------------------------------------------------------------
# histogram and labeled_comprehension
# --------------------------------------------------------------------------

def _histogram_result(result, bound):
    counts, present = result
    index = bound.arguments.get("index")
    if bound.arguments.get("labels") is None or index is None:
        return counts
    if np.isscalar(index):
        if _is_traced(present):
            return counts
        return counts if bool(_host(present, "histogram", "")) else None
    why = "with an index array it returns an object array of histograms"
    counts_np = _host(counts, "histogram", why)
    present_np = _host(present, "histogram", why)
    output = np.zeros(present_np.shape, object)
    for position in np.ndindex(present_np.shape):
        if present_np[position]:
            output[position] = _like(counts, counts_np[position])
        else:
            output[position] = None
    return output


def _bin_counts(values, segments, edges, count, size):
    """Counts per group and bin (``size`` groups, the first ``count``
    counted)."""
    bins = edges.size - 1
    values = values.astype(edges.dtype) if values.dtype.kind != "c" else (
        values.real.astype(edges.dtype))
    inside = (values >= edges[0]) & (values <= edges[-1])
    bin_of = jnp.searchsorted(edges, values, side="right") - 1
    bin_of = jnp.minimum(bin_of, bins - 1)
    spread = count * bins + jnp.arange(values.size) % _SPREAD
    cell = jnp.where(inside & (segments < count), segments * bins + bin_of,
                     spread)
    counts = jax.ops.segment_sum(jnp.ones(values.shape, jnp.result_type(int)),
                                 cell, num_segments=count * bins + _SPREAD)
    counts = counts[:count * bins].reshape(count, bins)
    return jnp.concatenate([counts, jnp.zeros((size - count, bins),
                                              counts.dtype)])


@docfiller
@_measurement(*_STATISTIC_PARAMETERS, finish=_histogram_result,
              results_64="iu")
def histogram(input, min, max, bins, labels=None, index=None):
    """The histogram of the values of an array, over labelled regions.

    Parameters
    ----------
    input : array_like
        Values to count.
    min, max : scalar
        The range of the bins, ``numpy.linspace(min, max, bins + 1)``;
        values outside it are not counted, `max` counts in the last bin.
    bins : int
        Number of bins.
    %(labels_index)s

    Returns
    -------
    hist : ndarray
        The counts (int64): one histogram, or for an index array an object
        array of histograms (None for labels that do not occur), built on
        the host (not traceable). A scalar `index` that does not occur gives
        None, as in SciPy (under a trace: zeros).

    Examples
    --------
    >>> import numpy as np
    >>> import jaxndimage
    >>> a = np.array([[0., 0.2146, 0.5962, 0.],
    ...               [0., 0.7778, 0., 0.],
    ...               [0., 0., 0., 0.],
    ...               [0., 0., 0.7181, 0.2787],
    ...               [0., 0., 0.6573, 0.3094]])
    >>> jaxndimage.histogram(a, 0, 1, 10)
    array([13,  0,  2,  1,  0,  1,  1,  2,  0,  0])
    """
    if labels is None and index is not None:
        raise ValueError("index without defined labels")
    if labels is not None and index is not None and not _is_traced(index):
        _check_index_cast(index, labels)
    edges = jnp.asarray(np.linspace(min, max, operator.index(bins) + 1),
                        _float_dtype(np.float64))
    return _measure("histogram", input, labels, index, exact_index=True,
                    operands=(edges,))


def _histogram_body(groups: _Groups, edges: jax.Array):
    segments = groups.segments
    if segments is None:
        segments = jnp.zeros(groups.values.shape, np.int32)
    counts = _bin_counts(groups.values, segments.astype(np.int32), edges,
                         groups.count, groups.size)
    return (_per_index(groups, counts),
            _per_index(groups, _group_count(groups) > 0))


_BODIES["histogram"] = _histogram_body


def _check_index_cast(index: Any, labels: Any) -> None:
    """labeled_comprehension's refusal of index values that change when cast
    to the labels' type."""
    index = np.atleast_1d(as_numpy(index))
    dtype = np.dtype(labels.dtype)
    if np.any(index.astype(dtype).astype(index.dtype) != index):
        raise ValueError(
            f"Cannot convert index values from <{index.dtype}> to <{dtype}> "
            f"(labels' type) without loss of precision")


@docfiller
def labeled_comprehension(input, labels, index, func, out_dtype, default,
                          pass_positions=False):
    """Apply a function to each labelled region of an array.

    Roughly ``[func(input[labels == i]) for i in index]``. The points of
    each region are passed to `func` in raster order.

    Parameters
    ----------
    %(input_values)s
    labels : array_like or None
        Labels, of `input`'s shape (or broadcastable to it). None: `func` is
        applied to all of `input`.
    index : int, sequence of ints or None
        Labels of the regions; a scalar gives one result. None: `func` is
        applied to all points where `labels` > 0.
    func : callable
        ``func(values)``, or ``func(values, positions)`` with
        `pass_positions`; values (and flat positions) are numpy arrays.
    out_dtype : dtype
        dtype of the result.
    default : scalar or None
        The result for labels of `index` that do not occur.
    pass_positions : bool, optional
        Also pass the flat positions of the points to `func`. Default False.

    Returns
    -------
    result : ndarray or scalar
        `func`'s results, one per element of `index`. `func` runs on the
        host, so this is not traceable.

    %(examples_measurements)s
    >>> labels, n = jaxndimage.label(a)
    >>> jaxndimage.labeled_comprehension(a, labels, np.arange(1, n + 2),
    ...                                  np.mean, float, -1)
    array([ 2.75,  5.5 ,  6.  , -1.  ])
    """
    if _distributed.is_dask_array(input) or _distributed.is_dask_array(
            labels) or _distributed.is_dask_array(index):
        result = labeled_comprehension(
            *(_distributed.computed(a) if _distributed.is_dask_array(a) else a
              for a in (input, labels, index)),
            func, out_dtype, default, pass_positions)
        return _to_dask(result)
    return run(_plan_labeled_comprehension(input, labels, index, func,
                                           out_dtype, default,
                                           pass_positions))


@dataclasses.dataclass(frozen=True)
class ComprehensionPlan(MeasurementPlan):
    """`labeled_comprehension`: ``func`` applied on the host to all points
    (``mode`` "all"), to those with ``labels > 0`` ("positive"), or to each
    label of an index array ("array"; ``scalar`` for an index given as a
    scalar), the points' flat positions passed too if ``pass_positions``;
    results of ``out_dtype``."""

    mode: str
    scalar: bool
    pass_positions: bool
    out_dtype: np.dtype | None


def _plan_labeled_comprehension(input, labels, index, func, out_dtype,
                                default, pass_positions) -> Planned:
    """The shell of `labeled_comprehension` (for concrete, non-dask
    arrays): the checks, in SciPy's order, and the host arrays."""
    why = "it calls a Python function on each region"
    template = next((a for a in (input, labels) if hasattr(a, "shape")
                     and not isinstance(a, np.ndarray)), None)
    values = np.asarray(_host(input, "labeled_comprehension", why))
    pass_positions = bool(pass_positions)

    def planned(mode: str, arrays: tuple = (), scalar: bool = False,
                dtype: np.dtype | None = None) -> Planned:
        plan = ComprehensionPlan(values.ndim, mode, scalar, pass_positions,
                                 dtype)
        return Planned(plan, _run_comprehension,
                       (func, default, template, values, *arrays))

    if labels is None:
        if index is not None:
            raise ValueError("index without defined labels")
        return planned("all")
    label_values = np.asarray(_host(labels, "labeled_comprehension", why))
    if index is not None and _is_traced(index):
        _host(index, "labeled_comprehension", why)
    try:
        values, label_values = np.broadcast_arrays(values, label_values)
    except ValueError:
        raise ValueError("labels: input and labels must have the same shape "
                         "(excepting dimensions with width 1)") from None
    if index is None:
        return planned("positive", (label_values,))
    scalar = bool(np.isscalar(index))
    index = np.atleast_1d(as_numpy(index))
    _check_index_cast(index, label_values)
    return planned("array", (label_values, index.astype(label_values.dtype)),
                   scalar, np.dtype(out_dtype))


def _run_comprehension(plan: ComprehensionPlan, func: Callable,
                       default: Any, template: Any, values: np.ndarray,
                       labels: np.ndarray | None = None,
                       index: np.ndarray | None = None) -> Any:
    """The kernel of a :class:`ComprehensionPlan` (host arrays; an index
    array's results in the array type of ``template``, unless None)."""
    positions = (np.arange(values.size).reshape(values.shape)
                 if plan.pass_positions else None)

    def call(mask=None):
        if mask is None:
            args = (values.ravel(),) + (
                (positions.ravel(),) if plan.pass_positions else ())
        else:
            args = (values[mask],) + (
                (positions[mask],) if plan.pass_positions else ())
        return func(*args)

    if plan.mode == "all":
        return call()
    if plan.mode == "positive":
        return call(labels > 0)
    order, lows, highs, flat_values, flat_positions = _comprehension_groups(
        values, labels, index, plan.pass_positions)
    result = np.empty(index.shape, plan.out_dtype)
    result[...] = default
    for i, (low, high) in enumerate(zip(lows, highs)):
        if low == high:
            continue
        args = (flat_values[low:high],) + (
            (flat_positions[low:high],) if plan.pass_positions else ())
        result.flat[order[i]] = func(*args)
    if plan.scalar:
        return result.flat[0]
    if template is not None and result.dtype != object:
        return _like(template, result)
    return result


def _comprehension_groups(values, labels, index, pass_positions):
    """Points sorted by label (stably, on device) and each index element's
    run in that order."""
    with jax.enable_x64(True):
        flat_labels = jnp.asarray(labels.ravel())
        order = np.asarray(jnp.argsort(flat_labels, stable=True))
    sorted_labels = labels.ravel()[order]
    flat_values = values.ravel()[order]
    flat_positions = (np.arange(values.size)[order] if pass_positions
                      else None)
    index_order = np.argsort(index.ravel(), kind="stable")
    ordered_index = index.ravel()[index_order]
    lows = np.searchsorted(sorted_labels, ordered_index, side="left")
    highs = np.searchsorted(sorted_labels, ordered_index, side="right")
    return index_order, lows, highs, flat_values, flat_positions


# --------------------------------------------------------------------------
# watershed_ift
# --------------------------------------------------------------------------

_MARKER_TYPES = (np.int8, np.int16, np.int32, np.int64, np.intc, np.intp)


def _watershed_host(image: np.ndarray, markers: np.ndarray,
                    offsets: tuple[tuple[int, ...], ...],
                    out: np.ndarray) -> None:
    """SciPy's ``NI_WatershedIFT``, step for step, into ``out``.

    A bucket queue per cost in doubly linked lists; object markers enter the
    front of bucket 0, background markers its back; a point relabelled from
    an object label enters the front of its new bucket, from a background
    label the back.  Neighbours are taken on flat indices (so they wrap
    across rows, as in SciPy), and the list pointers are kept exactly as
    SciPy's C code leaves them, stale ones included, because the order in
    which equal-cost points leave the queue decides the result.
    """
    size = image.size
    costs_in = image.ravel().astype(np.int64)
    labels = out.reshape(-1)
    labels[...] = markers.ravel()
    maxval = int(costs_in.max()) if size else 0
    first = [-1] * (maxval + 1)
    last = [-1] * (maxval + 1)
    nxt = [-1] * size
    prv = [-1] * size
    done = [False] * size
    cost = [maxval + 1] * size

    def enqueue(point: int, bucket: int, at_front: bool) -> None:
        # Link `point` in at the front (or back) of the list of `bucket`.
        end, other_end, outward, inward = ((first, last, nxt, prv) if at_front
                                           else (last, first, prv, nxt))
        outward[point], inward[point] = end[bucket], -1
        if end[bucket] >= 0:
            inward[end[bucket]] = point
        end[bucket] = point
        if other_end[bucket] < 0:
            other_end[bucket] = point

    marker_list = markers.ravel().tolist()
    for j, mark in enumerate(marker_list):
        if mark == 0:
            continue
        cost[j] = 0
        enqueue(j, 0, at_front=mark > 0)
    shape = image.shape
    strides = [int(np.prod(shape[k + 1:], dtype=np.int64))
               for k in range(len(shape))]
    steps = []
    for offset in offsets:
        step = _builtin_sum(o * s for o, s in zip(offset, strides))
        if step != 0:
            steps.append(step)
    values = costs_in.tolist()
    label_list = labels.tolist()
    for level in range(maxval + 1):
        while first[level] >= 0:
            v = first[level]
            first[level] = nxt[v]
            if first[level] >= 0:
                prv[first[level]] = -1
            prv[v] = nxt[v] = -1
            done[v] = True
            for step in steps:
                p = v + step
                if p < 0 or p >= size or done[p]:
                    continue
                pcost = cost[p]
                wvp = abs(values[p] - values[v])
                high = cost[v] if cost[v] > wvp else wvp
                if high >= pcost:
                    continue
                cost[p] = high
                mark = label_list[v]
                label_list[p] = mark
                if nxt[p] >= 0 or prv[p] >= 0:
                    before, after = prv[p], nxt[p]
                    if first[pcost] == p:
                        first[pcost] = after
                    if last[pcost] == p:
                        last[pcost] = before
                    if before >= 0:
                        nxt[before] = after
                    if after >= 0:
                        prv[after] = before
                enqueue(p, high, at_front=mark >= 0)
    labels[...] = np.asarray(label_list, dtype=np.int64).astype(
        labels.dtype, casting="unsafe")


@dataclasses.dataclass(frozen=True)
class WatershedPlan(MeasurementPlan):
    """`watershed_ift`: the queue over the neighbours at the structure's
    ``offsets`` (in its raster order), labels of ``dtype``."""

    offsets: tuple[tuple[int, ...], ...]
    dtype: np.dtype


def _run_watershed(plan: WatershedPlan, image: np.ndarray,
                   markers: np.ndarray) -> jax.Array:
    """The kernel of a :class:`WatershedPlan` (host arrays)."""
    result = np.empty(image.shape, plan.dtype)
    _watershed_host(np.asarray(image), np.asarray(markers), plan.offsets,
                    result)
    return jnp.asarray(result)


@ndimage_function("input", "markers", reject_float16=False, planned=True)
def watershed_ift(input, markers, structure=None, output=None):
    """Watershed from markers by the image foresting transform.

    SciPy's algorithm, run on the host: every point takes the label of the
    marker it is reached from along the path whose largest step
    ``|input[p] - input[q]|`` is smallest, with SciPy's order among equal
    costs, so the result equals SciPy's exactly. Not traceable.

    Parameters
    ----------
    input : array_like
        uint8 or uint16 costs.
    markers : array_like
        Signed integer markers of `input`'s shape: positive values are
        objects, negative values background (processed after the objects),
        0 unlabelled.
    structure : array_like, optional
        Connectivity, of shape ``(3,) * input.ndim``. Default: the face
        neighbours. As in SciPy, neighbours are taken on flat indices.
    output : array, optional
        An integer array to write the labels into. Anything else (a dtype
        included) is ignored, as in SciPy: the labels have the dtype of
        `markers`.

    Returns
    -------
    watershed_ift : ndarray
        The labels, of `input`'s shape.

    Examples
    --------
    >>> import numpy as np
    >>> import jaxndimage
    >>> image = np.array([[0, 0, 0, 0, 0],
    ...                   [0, 1, 1, 1, 0],
    ...                   [0, 1, 0, 1, 0],
    ...                   [0, 1, 1, 1, 0],
    ...                   [0, 0, 0, 0, 0]], dtype=np.uint8)
    >>> markers = np.zeros((5, 5), dtype=np.int8)
    >>> markers[2, 2], markers[0, 0] = 1, -1
    >>> jaxndimage.watershed_ift(image, markers, structure=np.ones((3, 3)))
    array([[-1, -1, -1, -1, -1],
           [-1,  1,  1,  1, -1],
           [-1,  1,  1,  1, -1],
           [-1,  1,  1,  1, -1],
           [-1, -1, -1, -1, -1]], dtype=int8)
    """
    input = as_array(input)
    if input.dtype not in (np.uint8, np.uint16):
        raise TypeError("only 8 and 16 unsigned inputs are supported")
    structure = _check_structure(structure, input.ndim, RuntimeError)
    markers = as_array(markers)
    if input.shape != markers.shape:
        raise RuntimeError("input and markers must have equal shape")
    if markers.dtype not in _MARKER_TYPES:
        raise RuntimeError("marker should be of integer type")
    if isinstance(output, OutputArray):
        if output.dtype.type not in _MARKER_TYPES:
            raise RuntimeError("output should be of integer type")
    else:
        output = markers.dtype
    dtype = output_dtype(output, markers.dtype, shape=input.shape)
    why = "SciPy's sequential queue order decides its result"
    image = _host(input, "watershed_ift", why)
    marks = _host(markers, "watershed_ift", why)
    if dtype.kind not in "iu":
        raise RuntimeError("data type not supported")
    offsets = tuple(tuple(int(p) - 1 for p in position)
                    for position in zip(*np.nonzero(structure)))
    plan = WatershedPlan(input.ndim, offsets, dtype)
    return Planned(plan, _run_watershed, (image, marks))
