"""The per-label statistics on device: their shell, their kernel, and each
statistic's body.

:func:`_measure` is the shell of every statistic and of `histogram` (a
:class:`._groups.StatisticPlan` and the operands); :func:`_run_statistic`
its kernel: concrete CPU arrays are laid out flat in a buffer of a bucket
length (:func:`jaxndimage._canvas.flat_bucket`), so that a new shape
compiles nothing, and :func:`_measure_kernel`, one compiled program per
plan, groups the points (:func:`._groups._groups`) and runs the body
``_BODIES[plan.statistic]``: a function of the groups (and the statistic's
operands) that returns arrays.  `median` of host arrays over an integer
index is sorted on the host by numpy instead (:func:`_medians_on_host`),
and the sums of one region of host arrays are numpy's, as SciPy's
(:func:`_one_region_on_host`).
The public functions and their finish steps are in :mod:`._statistics`
and :mod:`._histogram`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxndimage import _dense_groups as dense_groups
from jaxndimage._cache import cached_jit
from jaxndimage._canvas import concrete_on_cpu, flat_bucket, like_input
from jaxndimage._dispatch import as_array
from jaxndimage._labelling import label_index_dtype
from jaxndimage._measurements._groups import (
    _SPREAD,
    SUMMED_STATISTICS,
    StatisticPlan,
    _broadcast_shape,
    _coordinates,
    _extreme,
    _first_position,
    _float_dtype,
    _group_count,
    _group_sum,
    _Groups,
    _groups,
    _per_index,
    _per_point,
    _plan,
    _safely_castable_to_int,
    _sum_dtype,
    _sums,
    _unravel,
)
from jaxndimage._measurements._results import _is_traced
from jaxndimage._plans import Planned

#: The array parameters of the statistics (and `histogram`).
_STATISTIC_PARAMETERS = ("input", "labels")


def _measure(statistic: str, input: Any, labels: Any, index: Any, *,
             exact_index: bool = False, operands: tuple = ()) -> Planned:
    """The shell of a per-label statistic: the grouping planned on the
    host, with the kernel :func:`_run_statistic` and its operands (the
    arrays, and ``operands`` for the statistic's body)."""
    input = as_array(input)
    plan, labels, index, bounds = _plan(statistic, input, labels, index,
                                        exact_index)
    if statistic == "center_of_mass":
        # SciPy's coordinates are the input's own: 0 along an axis of
        # length 1 that the labels broadcast it along.
        operands = (np.array([extent != 1 for extent in input.shape]),)
    bounds = None if bounds is None else np.asarray(bounds,
                                                    jnp.result_type(int))
    return Planned(plan, _run_statistic, (input, labels, index, bounds,
                                          operands))


def _run_statistic(plan: StatisticPlan, input: Any, labels: Any, index: Any,
                   bounds: Any, operands: tuple) -> Any:
    """The kernel of a :class:`StatisticPlan`: one compiled program, for
    concrete CPU arrays on the points laid out flat in a buffer of a bucket
    length (:func:`_canvas.flat_bucket`), so that a new shape compiles
    nothing (not for dense groups, which are an accelerator's).
    ``bounds``: the labels' lowest and highest (where a lookup table
    serves) or None."""
    low = None if bounds is None else bounds[0]
    if plan.dense or not (
            input.size and input.ndim and concrete_on_cpu(input)
            and (labels is None or concrete_on_cpu(labels))
            and not _is_traced(index)
            and not any(_is_traced(x) for x in jax.tree.leaves(operands))):
        return _measure_kernel(input, labels, index, low, operands, None,
                               plan=plan)
    if plan.mode != "array" and plan.statistic in SUMMED_STATISTICS:
        return like_input(_one_region_on_host(plan, input, labels, index),
                          input)
    if plan.statistic in _COUNTED_BY_BINCOUNT:
        sums = _labelled_sums_on_host(plan, input, labels, index, bounds)
        if sums is not None:
            return like_input(sums, input)
    if plan.statistic == "median":
        medians = _medians_on_host(plan, input, labels, index, low)
        if medians is not None:
            return like_input(medians, input)
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


def _one_region_on_host(plan: StatisticPlan, input: Any, labels: Any,
                        index: Any) -> np.ndarray:
    """A statistic of `SUMMED_STATISTICS` over one region (every point, the
    points of positive labels, or those of one label) of host arrays, as
    SciPy forms it: numpy's sum of the region's values in their own dtype
    (pairwise, in float32 for float32 input), the centred squares from
    numpy's mean, and for `center_of_mass` the sums of the values times
    each coordinate in float64 over the sum of the values.  SciPy's bits,
    which a reduction in float64 or in XLA's order does not give."""
    values = np.asarray(input)

    def region(array: np.ndarray) -> np.ndarray:
        # SciPy's `_stats` single group: the array itself without labels.
        if plan.mode == "all":
            return array
        array, marks = np.broadcast_arrays(array, np.asarray(labels))
        return array[marks > 0 if plan.mode == "positive"
                     else marks == index]

    points = region(values)
    if plan.statistic == "sum":
        return np.asarray(points.sum())
    if plan.statistic == "mean":
        return np.asarray(points.sum() / np.asanyarray(
            points.size).astype(np.float64))
    if plan.statistic == "center_of_mass":
        mass = points.sum()
        grids = np.ogrid[tuple(slice(0, n) for n in values.shape)]
        return np.array([region(values * grid.astype(float)).sum() / mass
                         for grid in grids])
    centred = points - points.mean()
    squares = (centred * centred.conjugate()).sum()
    variance = squares / np.asanyarray(points.size).astype(float)
    if plan.statistic == "variance":
        return np.asarray(variance)
    return np.asarray(np.sqrt(variance))


#: The statistics whose values per label SciPy forms from numpy's
#: ``bincount`` of the labels (:func:`_labelled_sums_on_host`).
_COUNTED_BY_BINCOUNT = frozenset({"sum", "mean", "center_of_mass"})


def _labelled_sums_on_host(plan: StatisticPlan, input: Any, labels: Any,
                           index: Any, bounds: Any) -> np.ndarray | None:
    """A statistic of `_COUNTED_BY_BINCOUNT` per label of an index array,
    of host arrays, as SciPy's ``_stats`` forms it where numpy counts the
    labels directly (integers, none negative, none above the number of
    points; ``bounds`` are their extremes where the plan read them, else
    None): the values (for `center_of_mass`, the values times each
    coordinate) added up per label in float64 in raster order, as
    ``bincount`` adds them, read at the index truncated to integers, 0 for
    labels that do not occur.  SciPy's bits and SciPy's warnings (a mean
    or a centre over no mass divides by zero), nothing compiled.  The sums
    run over blocks of rows by ``np.add.at``, which continues each
    label's sum where the block before left it (the same additions in the
    same order), so no product over the whole array is stored.  None
    where this does not apply (other labels or complex values); the
    kernel serves those."""
    values = np.asarray(input)
    if values.dtype.kind not in "biuf" or not _safely_castable_to_int(
            labels.dtype):
        return None
    shape = _broadcast_shape(values.shape, labels.shape)
    marks = np.broadcast_to(np.asarray(labels), shape)
    low, high = (int(bound) for bound in (
        (marks.min(), marks.max()) if bounds is None else bounds))
    if low < 0 or high > marks.size:
        return None
    keys = np.asanyarray(index, np.int_).copy()
    found = (keys >= 0) & (keys <= high)
    keys[~found] = 0
    rows = max(1, _SUMMED_BLOCK // max(1, math.prod(shape[1:])))
    blocks = [slice(start, start + rows) for start in range(0, shape[0], rows)]
    spread = np.broadcast_to(values, shape)

    def summed(weights: Callable[[slice], np.ndarray]) -> np.ndarray:
        """The sums of ``weights(rows)`` over each block of rows."""
        sums = np.zeros(high + 1)
        for block in blocks:
            np.add.at(sums, marks[block].ravel(),
                      weights(block).astype(np.float64, copy=False).ravel())
        sums = sums[keys]
        sums[~found] = 0
        return sums

    if plan.statistic == "sum":
        return summed(spread.__getitem__)
    if plan.statistic == "mean":
        counts = np.bincount(marks.ravel(), minlength=high + 1)[keys]
        counts[~found] = 0
        return summed(spread.__getitem__) / counts.astype(np.float64)
    mass = summed(spread.__getitem__)
    # SciPy's products, the values times the input's coordinates in
    # float64 (a block at a time here).
    grids = np.ogrid[tuple(slice(0, n) for n in values.shape)]
    coordinates = [np.broadcast_to(grid.astype(float), shape)
                   for grid in grids]
    return np.stack([summed(lambda block, c=c: spread[block] * c[block])
                     / mass for c in coordinates], axis=-1)


#: Points per block of :func:`_labelled_sums_on_host`.
_SUMMED_BLOCK = 2 ** 16


#: The shortest index array :func:`_run_statistic` passes to a bucketed kernel.
_SHORTEST_INDEX = 64

#: :func:`_medians_on_host` serves index arrays shorter than this (the
#: group numbers are sorted as uint16, by numpy's radix sort).
_HOST_MEDIAN_GROUPS = 2**16


def _medians_on_host(plan: StatisticPlan, input: np.ndarray,
                     labels: np.ndarray | None, index: np.ndarray | None,
                     low: int | None) -> np.ndarray | None:
    """`median` over the integer labels of an integer index array, by
    numpy on the host: SciPy's bits (its order of the points: by group,
    then by value, ties in raster order), from one sort of the measured
    points' values and a stable radix sort of their group numbers, where
    XLA's sort of (group, value) pairs is several times slower on a CPU.
    None where it does not apply (other labels or index, or as many groups
    as `_HOST_MEDIAN_GROUPS`); the kernel serves those."""
    if (plan.mode != "array" or plan.table is None or low is None
            or labels.dtype == np.uint64 or index.dtype.kind not in "iu"
            or not 0 < index.size < _HOST_MEDIAN_GROUPS):
        return None
    shape = _broadcast_shape(input.shape, labels.shape)
    values = np.broadcast_to(np.asarray(input), shape).reshape(-1)
    labels = np.broadcast_to(np.asarray(labels), shape).reshape(-1)
    keys = np.asarray(index).reshape(-1)
    ordered = np.sort(keys)
    rank = np.searchsorted(ordered, keys)  # duplicates share a group
    slot = keys.astype(np.int64) - low
    usable = (slot >= 0) & (slot < plan.table)
    table = np.full(plan.table, keys.size, np.int64)
    table[slot[usable]] = rank[usable]
    group = table[labels.astype(np.int64) - low]
    measured = group < keys.size
    group, kept = group[measured].astype(np.uint16), values[measured]
    if kept.dtype == np.bool_:
        kept = kept.astype(np.uint8)
    ties = "quicksort"
    if kept.dtype.kind == "f" and np.any((kept == 0) & np.signbit(kept)):
        ties = "stable"  # -0.0 and 0.0 are equal: keep their raster order
    by_value = np.argsort(kept, kind=ties)
    by_group = np.argsort(group[by_value], kind="stable")
    kept = kept[by_value][by_group]
    counts = np.bincount(group, minlength=keys.size)
    starts = np.cumsum(counts) - counts
    last = max(kept.size - 1, 0)
    lower = np.minimum(starts + (counts - 1) // 2, last)
    upper = np.minimum(starts + counts // 2, last)
    # Integers are averaged in float64, as SciPy does.
    pair = kept.astype("d") if kept.dtype.kind in "iu" else kept
    medians = ((pair[lower] + pair[upper]) / 2.0 if kept.size
               else np.zeros(keys.size, pair.dtype))
    if np.any(counts == 0):
        # SciPy reads an absent label's median at the start of its sorted
        # order: the least value (NaN last, ties in raster order) among the
        # points of the lowest label.
        lowest = values[labels == labels.min()]
        if lowest.dtype == np.bool_:
            lowest = lowest.astype(np.uint8)
        first = np.sort(lowest, kind="stable")[0]
        first = first.astype("d") if lowest.dtype.kind in "iu" else first
        medians = np.where(counts > 0, medians, first)
    return medians[rank].reshape(np.shape(index))


@cached_jit(static_argnames=("plan",))
def _measure_kernel(input, labels, index, low, operands, bucket, *, plan):
    """The plan's statistic of the groups :func:`_groups` forms (``bucket``
    None for arrays of their own shape)."""
    groups = _groups(plan, input, labels, index, low, bucket)
    return _BODIES[plan.statistic](groups, *operands)


def _sum_body(groups: _Groups) -> jax.Array:
    _, sums = _sums(groups)
    result = _per_index(groups, sums)
    if groups.rank is None:
        result = result.astype(_sum_dtype(groups.values.dtype))
    return result


def _mean(groups: _Groups) -> jax.Array:
    counts, sums = _sums(groups)
    dtype = _float_dtype(groups.values.dtype)
    return sums.astype(dtype) / counts.astype(dtype)


def _variance(groups: _Groups) -> jax.Array:
    means = _mean(groups)
    values = groups.values.astype(means.dtype)
    if groups.segments is None:
        deviation = values - means[0]
    else:
        deviation = values - _per_point(groups, means)
    squares = (deviation * jnp.conj(deviation)).real
    counts = _sums(groups)[0].astype(squares.dtype)  # _mean's counts
    return (_group_sum(groups, squares) / counts).astype(means.dtype)


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


def _medians(values: jax.Array, segments: jax.Array, size: int):
    """Median per group by one sort on (group, value); NaN where empty."""
    dtype = values.dtype
    keys = values.astype(np.uint8) if dtype == np.bool_ else values
    # Stable: equal values (-0.0 and 0.0) keep their raster order, SciPy's.
    segments, keys = jax.lax.sort((segments, keys), num_keys=2,
                                  is_stable=True)
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


def _dense_medians(groups: _Groups):
    """Median per dense group from its two middle values, selected by
    rank without a sort (:func:`_dense_groups.group_ranked`; a zero median
    is +0.0 where SciPy's stable sort may give -0.0); NaN where empty."""
    values = groups.values
    counts = dense_groups.group_counts(groups.segments, groups.keys,
                                       np.int32)
    ranks = jnp.concatenate([(counts - 1) // 2, counts // 2])
    middle = dense_groups.group_ranked(
        values, groups.segments, jnp.concatenate([groups.keys] * 2), ranks)
    out = _float_dtype(values.dtype) if values.dtype.kind in "biu" else (
        values.dtype)
    low, high = middle[:groups.size], middle[groups.size:]
    return (low.astype(out) + high.astype(out)) / 2, counts


def _median_body(groups: _Groups) -> jax.Array:
    segments = groups.segments
    if segments is None:
        segments = jnp.zeros(groups.values.shape, np.int32)
    if groups.dense:
        medians, counts = _dense_medians(groups)
    else:
        medians, counts = _medians(groups.values, segments.astype(np.int32),
                                   groups.size)
    if groups.rank is None:
        # One region: SciPy takes numpy.median of its values, NaN where
        # any is NaN (its sorted selection over an index array puts NaN
        # last instead, as above).
        medians = jnp.where(counts > 0, medians, jnp.nan)
        if groups.values.dtype.kind in "fc":
            medians = jnp.where(jnp.any(jnp.isnan(groups.values)
                                        & (segments == 0)),
                                jnp.nan, medians)
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
        # The least value (NaN last), the first of its ties in raster
        # order (-0.0 and 0.0 tie); NaN if there are only NaNs.
        number = lowest & ~jnp.isnan(values)
        ceiling = (np.inf if values.dtype.kind == "f"
                   else np.iinfo(values.dtype).max)
        least = jnp.min(jnp.where(number, values, ceiling))
        first = values[jnp.argmax(jnp.where(jnp.any(number),
                                            number & (values == least),
                                            lowest))]
        medians = jnp.where(counts > 0, medians,
                            first.astype(medians.dtype))
    return _per_index(groups, medians)


def _positions_of(groups: _Groups, find_max: bool) -> jax.Array:
    """Coordinates of each group's first extreme in raster order (SciPy's
    for one region; with an index array SciPy takes any tied position)."""
    extreme = _extreme(groups, groups.values, find_max)
    flat = _first_position(groups, groups.values, extreme)
    return _per_index(groups, _coordinates(flat, groups.shape))


def _position_body(groups: _Groups, find_max: bool):
    return (_positions_of(groups, find_max),
            _per_index(groups, _group_count(groups)))


def _extrema_body(groups: _Groups):
    count = _per_index(groups, _group_count(groups))
    return (_per_index(groups, _extreme_values(groups, False)),
            _per_index(groups, _extreme_values(groups, True)),
            _positions_of(groups, False), _positions_of(groups, True), count)


def _center_of_mass_body(groups: _Groups, moving: jax.Array) -> jax.Array:
    """The centres of mass over the coordinates of the input's axes (the
    last ``moving.size`` axes of the broadcast shape), each 0 where
    ``moving`` is False (an axis of length 1 in the input)."""
    dtype = _float_dtype(groups.values.dtype)
    values = groups.values.astype(dtype)
    grids = _unravel(jnp.arange(values.size), groups.shape)
    grids = grids[len(grids) - moving.shape[0]:]
    if not grids:
        return _per_index(groups, jnp.zeros((groups.size, 0), dtype))
    weighted = [values * (grid.astype(dtype) * moving[axis].astype(dtype))
                for axis, grid in enumerate(grids)]
    if groups.dense:  # one pass over the points for every sum
        sums = _group_sum(groups, jnp.stack([values] + weighted, axis=-1))
        mass, moments = sums[:, 0], [sums[:, 1 + k] for k in range(len(grids))]
    else:
        mass = _group_sum(groups, values)
        moments = [_group_sum(groups, w) for w in weighted]
    # One division per axis, as SciPy's: XLA turns a division by a
    # broadcast array into a product with its reciprocal, which rounds
    # twice.
    return _per_index(groups, jnp.stack([m / mass for m in moments], axis=-1))


def _bin_counts(values, segments, edges, count, size, keys=None):
    """Counts per group and bin (``size`` groups, the first ``count``
    counted; or the dense groups of ``keys``)."""
    bins = edges.size - 1
    values = values.astype(edges.dtype) if values.dtype.kind != "c" else (
        values.real.astype(edges.dtype))
    inside = (values >= edges[0]) & (values <= edges[-1])
    bin_of = jnp.searchsorted(edges, values, side="right") - 1
    bin_of = jnp.minimum(bin_of, bins - 1)
    if keys is not None:  # dense groups
        return dense_groups.group_histograms(
            jnp.where(inside, bin_of, bins), segments, keys, bins,
            jnp.result_type(int))
    spread = count * bins + jnp.arange(values.size) % _SPREAD
    cell = jnp.where(inside & (segments < count), segments * bins + bin_of,
                     spread)
    counts = jax.ops.segment_sum(jnp.ones(values.shape, jnp.result_type(int)),
                                 cell, num_segments=count * bins + _SPREAD)
    counts = counts[:count * bins].reshape(count, bins)
    return jnp.concatenate([counts, jnp.zeros((size - count, bins),
                                              counts.dtype)])


def _histogram_body(groups: _Groups, edges: jax.Array):
    segments = groups.segments
    if segments is None:
        segments = jnp.zeros(groups.values.shape, np.int32)
    if not groups.dense:
        segments = segments.astype(np.int32)
    counts = _bin_counts(groups.values, segments, edges, groups.count,
                         groups.size, groups.keys)
    return (_per_index(groups, counts),
            _per_index(groups, _group_count(groups) > 0))


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
    "histogram": _histogram_body,
}
