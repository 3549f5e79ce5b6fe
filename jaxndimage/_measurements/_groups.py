"""Groups of points: one mechanism for ``labels`` and ``index``, and the
reductions over groups that the statistics' bodies are made of.

Every statistic is a segment reduction.  :func:`_plan` validates
``labels`` and ``index`` on the host and chooses how to group (a
:class:`StatisticPlan`); :func:`_groups` (traced) turns them into a group
number per point: a single group for ``labels=None``, ``index=None``
(``labels > 0``) or a scalar ``index``, and one group per element of an
``index`` array, plus the points that are not measured, spread over
`_SPREAD` more groups.  The reductions (:func:`_group_sum`,
:func:`_extreme`, :func:`_first_position`, ...) then run over those
groups on device, and :func:`_per_index` gathers the results of an
``index`` array back in its order.  Under a trace the number of groups is
``index.size``, which is static.  Points laid out flat in a bucket
(``bucket``, see :func:`._bodies._run_statistic`) are followed by padding
that joins no group.

Where `_algorithms` chooses dense per-label reductions (accelerators),
the groups of an ``index`` array are instead the points whose labels equal
each index value, reduced by `_dense_groups` without a group number per
point (:attr:`_Groups.dense`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage import _dense_groups as dense_groups
from jaxndimage._canvas import concrete_on_cpu
from jaxndimage._dispatch import as_array, as_numpy, is_jax_array
from jaxndimage._measurements._dispatch import MeasurementPlan
from jaxndimage._measurements._results import _is_traced


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
    keys: jax.Array | None = None

    @property
    def dense(self) -> bool:
        """Whether the groups are reduced by `_dense_groups`: then
        ``segments`` are the labels, each group's points are those whose
        label equals its entry of ``keys`` (the sorted index), and
        ``size == count``."""
        return self.keys is not None


#: The shortest label lookup table of :func:`_plan`: label ranges up to
#: this span, the common case, share one program.
_SHORTEST_TABLE = 1024

#: Points outside every group are spread over this many groups, so that the
#: segment reductions do not all write to one address (XLA's CPU scatter
#: serialises on it).
_SPREAD = 256


@dataclasses.dataclass(frozen=True)
class StatisticPlan(MeasurementPlan):
    """A per-label statistic (a key of ``_BODIES``) and how ``labels`` and
    ``index`` select its groups: ``mode`` "all" (no labels), "positive"
    (``labels > 0``), "scalar" (one label) or "array" (one group per
    element of an index array); ``exact_index`` for index values matched
    exactly (not truncated to integers); ``table`` the length of a lookup
    table from label to group (a power of two), or None for a binary
    search; ``dense`` where the groups of an index array are reduced by
    `_dense_groups` (see :attr:`_Groups.dense`)."""

    statistic: str
    mode: str
    exact_index: bool
    table: int | None
    dense: bool = False


#: The statistics whose bodies are made of the reductions below, each of
#: which serves dense groups.
DENSE_STATISTICS = frozenset({
    "sum", "mean", "variance", "standard_deviation", "minimum", "maximum",
    "minimum_position", "maximum_position", "extrema", "center_of_mass",
    "histogram"})


#: The statistics SciPy forms from the counts and sums per label of its
#: ``_stats``.
SUMMED_STATISTICS = frozenset({"sum", "mean", "variance",
                               "standard_deviation", "center_of_mass"})


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


def _remapped_by_scipy(labels: Any) -> bool:
    """Whether SciPy's selections (minimum, maximum, median, positions)
    number ``labels`` (concrete, not empty) by ``np.unique`` before
    selecting: labels of a type not safely cast to int, or a label below 0
    or above the number of labels."""
    return (not _safely_castable_to_int(labels.dtype)
            or int(np.min(labels)) < 0 or int(np.max(labels)) > labels.size)


def _plan(statistic: str, input: jax.Array, labels: Any, index: Any,
          exact_index: bool) -> tuple[StatisticPlan, Any, Any, Any]:
    """Validate ``labels``/``index`` and choose how to group (on the host).

    Returns the plan, labels and index (numpy for host input, JAX arrays
    as given; or None) and the lowest and highest label (where a lookup
    table serves: the table starts at the lowest) or None.
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
    if statistic in SUMMED_STATISTICS and index.ndim == 0:
        # SciPy's `_stats` writes into what a 0-d index reads: a scalar.
        raise TypeError("index: a 0-d array is not accepted by sum_labels, "
                        "mean, variance, standard_deviation and "
                        "center_of_mass (SciPy raises TypeError); give a "
                        "scalar or a 1-d array")
    if (index.ndim == 0 and not exact_index and labels.size
            and not _is_traced(labels) and _remapped_by_scipy(labels)):
        # SciPy's `_select` numbers such labels by np.unique and writes
        # into what its search of a 0-d index returns: a scalar.
        raise TypeError("index: a 0-d array is not accepted with labels "
                        "that are not integers, are negative or exceed "
                        "their number (SciPy raises TypeError); give a "
                        "scalar or a 1-d array")
    if statistic in SUMMED_STATISTICS and jnp.iscomplexobj(input):
        # SciPy sums over an index array by numpy's bincount, whose
        # weights are float64.
        raise TypeError(f"input: cannot sum {np.dtype(input.dtype)!r} "
                        "values per label of an index array (SciPy's "
                        "bincount takes float64 weights)")
    if (not exact_index and labels.size == 0 and index.size
            and _safely_castable_to_int(labels.dtype)):
        # SciPy takes labels.min() to choose how to count.
        raise ValueError("zero-size array to reduction operation minimum "
                         "which has no identity")
    dense = statistic in DENSE_STATISTICS or (
        statistic == "median" and dense_groups.ranks_keys(input.dtype)
        and index.size <= dense_groups.MOST_RANKED_GROUPS)
    if (dense and dense_groups.preferred(index.size)
            and jax.dtypes.canonicalize_dtype(np.float64) == np.float32):
        # (Only float32 sums: the dense products compute in float32.)
        return (StatisticPlan(input.ndim, statistic, "array", exact_index,
                              None, dense=True), labels, index, None)
    table, bounds = None, None
    # Integer labels on concrete arrays: one gather from a lookup table
    # instead of a binary search per point.  Table sizes are powers of two,
    # at least `_SHORTEST_TABLE` (a bounded number of programs).
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
            table = max(_SHORTEST_TABLE, 1 << (span - 1).bit_length())
            bounds = (low, high)
    return plan("array", table), labels, index, bounds


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
    if plan.dense:
        common = jnp.result_type(labels.dtype, keys.dtype)
        return _Groups(values, labels, labels.astype(common), count, count,
                       rank, index.shape, shape, valid,
                       keys=ordered.astype(common))
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
    """Sums per group (float32 or complex64 values for dense groups)."""
    if groups.dense:
        return dense_groups.group_sums(values, groups.segments, groups.keys)
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


def _group_count(groups: _Groups, counter: Any = None) -> jax.Array:
    """The number of points per group, in the default integer type,
    counted in ``counter`` (default that type)."""
    if groups.dense:
        return dense_groups.group_counts(groups.segments, groups.keys,
                                         jnp.result_type(int))
    ones = jnp.ones(groups.values.shape, counter or jnp.result_type(int))
    return _group_sum(groups, ones).astype(jnp.result_type(int))


def _per_point(groups: _Groups, per_group: jax.Array) -> jax.Array:
    """Each point's entry of a per-group array of an index array's groups
    (the entry of no group, or 0 for dense groups, at other points)."""
    if not groups.dense:
        return per_group[groups.segments]
    if per_group.dtype.kind == "c":
        return lax.complex(*(dense_groups.lookup(
            part, groups.segments, groups.keys) for part in (
                per_group.real, per_group.imag)))
    return dense_groups.lookup(per_group, groups.segments, groups.keys)


def _extreme(groups: _Groups, values: jax.Array, find_max: bool
             ) -> jax.Array:
    """Minimum or maximum per group; the reduction's identity where empty.
    NaN is SciPy's: over an index array the largest value (a maximum is NaN
    where the group holds one, a minimum only where it holds nothing
    else), for one region numpy's (NaN wherever a value is)."""
    if values.dtype == np.bool_:
        values = values.astype(np.uint8)
    if groups.dense:
        return dense_groups.group_extremes(values[:, None], groups.segments,
                                           groups.keys, find_max)[:, 0]
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
    if values.dtype.kind == "f" and not find_max:
        # SciPy's sorted selection over an index array puts NaN last: a
        # group's minimum is NaN only where it holds nothing else.  The
        # minimum of order-preserving integer keys (NaN above +inf).
        found = jax.ops.segment_min(dense_groups.ordered_keys(values),
                                    groups.segments,
                                    num_segments=groups.size)
        empty = found == np.iinfo(found.dtype).max
        return jnp.where(empty, np.array(np.inf, values.dtype),
                         dense_groups.ordered_keys(found, values.dtype))
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
        first = jnp.min(jnp.where(dense_groups.same_values(
            values, extreme[0]), flat, size), keepdims=True)
        return jnp.where(first >= size, 0, first)
    if groups.dense:
        first = dense_groups.group_extremes(
            flat[:, None], groups.segments, groups.keys, False,
            where_equal=(values, extreme))[:, 0]
        return jnp.where(first >= size, 0, first)
    candidate = jnp.where(dense_groups.same_values(
        values, extreme[groups.segments]), flat, size)
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
    if groups.dense:  # both from one product (one one-hot matrix)
        sums, counts = dense_groups.group_sums(
            values, groups.segments, groups.keys,
            counted=jnp.result_type(int))
        return counts, sums
    # Counted in int32 where every count fits: a CPU scatters 32-bit values
    # several times faster than 64-bit ones.  (The extremes' counts stay
    # in 64 bits, which XLA computes together with their other scatters.)
    counter = np.int32 if values.size < 2**31 else None
    return _group_count(groups, counter), _group_sum(groups, values)


def _check_comprehension_index(name: str, index: Any, labels: Any) -> None:
    """labeled_comprehension's and histogram's checks of an index array
    (SciPy's loop over its labels): at most one dimension, at least one
    label, and values that do not change when cast to the labels' type
    (a traced index's values are not read)."""
    if np.ndim(index) > 1:
        # SciPy fails on it in its loop, with ValueError, TypeError or
        # IndexError by the index's shape.
        raise ValueError(f"index: {name} takes a label or a 1-d sequence "
                         f"of labels, not a {np.ndim(index)}-d array")
    if np.size(index) == 0:
        # SciPy reads the labels' range from index.min().
        raise ValueError(f"index: {name} needs at least one label (numpy: "
                         f"zero-size array to reduction operation minimum "
                         f"which has no identity)")
    if _is_traced(index):
        return
    index = np.atleast_1d(as_numpy(index))
    dtype = np.dtype(labels.dtype)
    if np.any(index.astype(dtype).astype(index.dtype) != index):
        raise ValueError(
            f"Cannot convert index values from <{index.dtype}> to <{dtype}> "
            f"(labels' type) without loss of precision")
