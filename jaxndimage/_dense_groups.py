"""Per-group reductions as dense work on chunks of points, for accelerators.

A group is the points whose *segment* equals the group's *key*: group
numbers (:func:`numbered`), or the labels of an ``index`` array matched
directly, so that no point's group number is ever looked up.

Sums and counts
---------------

A segment sum (``jax.ops.segment_sum``) is a scatter: on a TPU each point
is a serialised read-modify-write, and millions of points take tens of
milliseconds.  The same sums are a matrix product: the values, as a
``points x columns`` matrix, contracted over the points with the one-hot
matrix ``points x groups`` of their groups.  Products run on the matrix
unit, a chunk of points at a time, so the one-hot matrix never exists
whole.

Exactness: float32 values are split into three bfloat16 parts whose sum is
the value (8 significant bits each, 24 in all), and the one-hot matrix is
exact in bfloat16, so every product is exact at the matrix unit's default
(bfloat16) precision; the products are accumulated in float32.  A sum is
therefore as accurate as a float32 sum of its points in some order (the
order differs from SciPy's float64 sums: the difference is float32
rounding).  Non-finite values would reach every group through ``0 * inf``,
so they are summed as zeros and counted per group instead; the sum of a
group holding them is then what IEEE arithmetic gives in any order (NaN
for a NaN or for both infinities, else the infinity).

Lookups
-------
``table[segments]`` for a small per-group table is a gather: on a TPU as
slow per point as a scatter.  Here it is the one-hot matrix times the
table, split into bfloat16 parts as above, so the result is the table's
value exactly.

Extremes
--------
A segment minimum or maximum is a scatter too.  Here every point is
compared with every group (a ``groups x points`` mask, on the vector unit,
the groups padded to a multiple of 8 rows only) inside one reduction over
the points per column, with no loop.  A TPU's XLA fuses the comparisons
into the reductions, so the mask is never stored; a CPU's XLA would store
it (the CPU runs scatters instead).  The work grows with points times
groups, as the products' does.  Floats are reduced as integer keys of
the same order (NaN above every number, as in SciPy's sorted selection),
so minima and maxima select a point's value exactly in one reduction.

Ranked values
-------------
The value of a given rank in each group (medians) without a sort, whose
program compiles for many seconds on a TPU at millions of points: each
value as an unsigned 32-bit key of the same order, and the key of rank
``k`` found bit by bit from the top, 32 rounds, each counting per group
the points below a candidate key (the comparisons fused into one
reduction per round, as for the extremes).  The work grows with points
times groups times 32, so it serves at most `MOST_RANKED_GROUPS` groups.

Presence
--------
Whether each label occurs in each row of points (the slices of an array
along an axis, for bounding boxes) is a count per row and label: with the
label split into two parts, the product of each row's two one-hot
matrices, of about the square root of the labels' number each
(:func:`group_presence`), so the comparisons grow with points times that
root.

Used where `_algorithms` chooses "dense" per-label reductions (not on a
CPU, where XLA's scatter is faster and keeps SciPy's summation order for
float64), for at most `MOST_GROUPS` groups.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage._algorithms import algorithm

__all__ = ["MOST_GROUPS", "MOST_RANKED_GROUPS", "preferred", "numbered",
           "group_sums", "group_counts", "group_histograms",
           "group_extremes", "group_ranked", "group_presence",
           "presence_width", "lookup", "ordered_keys", "ranks_keys",
           "same_values"]

#: The most groups a one-hot product serves; more go to a segment sum
#: (the products' work grows with points times groups).
MOST_GROUPS = 4096

#: The most groups :func:`group_ranked` serves (its comparisons number
#: points times groups times 32); more go to a sort.
MOST_RANKED_GROUPS = 32

#: The most entries of one chunk's one-hot matrix (points times groups).
_CHUNK_ENTRIES = 1 << 23

#: Groups are padded to a multiple of the matrix unit's width.
_LANES = 128

#: Comparisons put the groups along the rows of a vector register, whose
#: number they are padded to a multiple of.
_SUBLANES = 8


def preferred(groups: int) -> bool:
    """Whether per-group reductions into ``groups`` groups take the dense
    forms of this module: where `_algorithms` chooses them for the
    device, for at most `MOST_GROUPS` groups."""
    return (algorithm("per-label reductions") == "dense"
            and 0 < groups <= MOST_GROUPS)


def numbered(groups: int) -> jax.Array:
    """The keys of groups named ``0 .. groups - 1``."""
    return jnp.arange(groups, dtype=np.int32)


class _Chunks(NamedTuple):
    """Points in chunks of equal length, padded with points of no group.
    The points lie along the last axis of every array (the lanes of a
    TPU's vector registers: a short last axis would be padded to them)."""

    segments: jax.Array  # (chunks, length): each point's key
    inside: jax.Array  # (chunks, length): False for the padding
    keys: jax.Array  # (width,): the groups' keys, padded to whole lanes
    columns: tuple[jax.Array, ...]  # each (chunks, ..., length)

    def onehot(self, segment: jax.Array, inside: jax.Array,
               dtype: np.dtype) -> jax.Array:
        """The ``length x width`` one-hot matrix of a chunk's groups."""
        return ((segment[:, None] == self.keys[None, :])
                & inside[:, None]).astype(dtype)


def _chunks(segments: jax.Array, keys: jax.Array, *columns: jax.Array
            ) -> _Chunks:
    """``segments`` (each point's key) and ``columns`` (each ``(..., n)``)
    in chunks whose one-hot matrices have at most `_CHUNK_ENTRIES`
    entries, the groups padded to whole lanes."""
    groups = keys.shape[0]
    width = -(-groups // _LANES) * _LANES
    points = segments.shape[0]
    length = max(_LANES, min(_CHUNK_ENTRIES // width,
                             1 << max(points - 1, 0).bit_length()))
    padding = -points % length

    def chunked(x):
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, padding)])
        x = x.reshape(x.shape[:-1] + (-1, length))
        return jnp.moveaxis(x, -2, 0)

    return _Chunks(chunked(segments), chunked(jnp.ones(points, bool)),
                   jnp.pad(keys, (0, width - groups), mode="edge"),
                   tuple(chunked(c) for c in columns))


def _products(rows: jax.Array, segments: jax.Array, keys: jax.Array,
              accumulate: np.dtype = np.float32,
              counted: np.dtype | None = None):
    """``sum over points p of rows[:, p] * (segments[p] == keys[g])`` for
    every group ``g``, as a ``(groups, k)`` array of ``accumulate``;
    ``rows`` (``k x n``) are bfloat16, so each chunk's products are exact
    and summed in float32 (integers are exact up to a chunk's length),
    then added to the chunks before in ``accumulate``.  With ``counted``
    (an integer dtype), also the number of points of each group, counted
    in that dtype by the same products (a row of ones): ``(products,
    counts)``, for the cost of one one-hot matrix per chunk, which is
    what the products' time goes to."""
    if counted is not None:
        rows = jnp.concatenate([rows, jnp.ones((1, rows.shape[1]),
                                               rows.dtype)])
    chunks = _chunks(segments, keys, rows)
    width = chunks.keys.shape[0]
    sums = rows.shape[0] - (counted is not None)

    def add(totals, chunk):
        segment, inside, values = chunk
        product = jnp.dot(values, chunks.onehot(segment, inside,
                                                values.dtype),
                          preferred_element_type=np.float32)
        return tuple(total + part.astype(total.dtype) for total, part in
                     zip(totals, (product[:sums], product[sums:]))), None

    totals = (jnp.zeros((sums, width), accumulate),
              jnp.zeros((rows.shape[0] - sums, width), counted or np.int32))
    totals = lax.scan(add, totals, (chunks.segments, chunks.inside,
                                    chunks.columns[0]))[0]
    products, counts = (total[:, :keys.shape[0]].T for total in totals)
    return products if counted is None else (products, counts[:, 0])


def _truncated(x: jax.Array) -> jax.Array:
    """Float32 ``x`` with its significand cut to bfloat16's 8 bits: exact
    in bfloat16, by bit masking (a conversion's rounding could be elided:
    XLA may keep excess precision)."""
    bits = lax.bitcast_convert_type(x, np.uint32) & np.uint32(0xFFFF0000)
    return lax.bitcast_convert_type(bits, np.float32)


def _exact_parts(rows: jax.Array) -> jax.Array:
    """Float32 ``rows`` (k, n) as (6k, n) bfloat16 rows: three parts that
    sum to each finite value exactly (0 for the others), then indicators
    of NaN, inf and -inf.  Contracted with a one-hot matrix they give
    exact products, and :func:`_recombined` makes values of the products
    again."""
    parts = []
    rest = jnp.where(jnp.isfinite(rows), rows, 0)
    for _ in range(3):
        part = _truncated(rest)
        parts.append(part)
        rest = rest - part  # exact: the bits below the part's
    parts += [jnp.isnan(rows), rows == np.inf, rows == -np.inf]
    return jnp.concatenate([p.astype(jnp.bfloat16) for p in parts], axis=0)


def _recombined(products: jax.Array) -> jax.Array:
    """Products of :func:`_exact_parts` (.., 6k) as float32 values (.., k):
    the parts added, then NaN where a NaN (or both infinities) took part,
    else the infinity that did."""
    k = products.shape[-1] // 6
    part = [products[..., i * k:(i + 1) * k] for i in range(6)]
    total = part[0] + part[1] + part[2]
    nan, up, down = (p > 0 for p in part[3:])
    total = jnp.where(up, np.float32(np.inf), total)
    total = jnp.where(down, np.float32(-np.inf), total)
    return jnp.where(nan | (up & down), np.float32(np.nan), total)


def group_sums(values: jax.Array, segments: jax.Array, keys: jax.Array,
               counted: np.dtype | None = None):
    """Sums of float32 or complex64 ``values`` (flat along axis 0, any
    trailing axes) per group: the points whose segment equals the group's
    key (each of ``keys``; points matching none join none).  An array of
    shape ``keys.shape + values.shape[1:]``; with ``counted`` (an integer
    dtype), also the groups' counts in it (as :func:`group_counts`, from
    the same products)."""
    trailing = values.shape[1:]
    rows = values.reshape(values.shape[0], -1).T
    if values.dtype == np.complex64:
        rows = jnp.concatenate([rows.real, rows.imag], axis=0)
    products = _products(_exact_parts(rows), segments, keys,
                         counted=counted)
    counts = None
    if counted is not None:
        products, counts = products
    total = _recombined(products)
    if values.dtype == np.complex64:
        half = total.shape[1] // 2
        total = lax.complex(total[:, :half], total[:, half:])
    total = total.reshape(keys.shape + trailing)
    return total if counted is None else (total, counts)


def group_counts(segments: jax.Array, keys: jax.Array, dtype: np.dtype
                 ) -> jax.Array:
    """The number of points in each group (as :func:`group_sums`), in the
    integer ``dtype``, exactly."""
    ones = jnp.ones((1, segments.shape[0]), jnp.bfloat16)
    return _products(ones, segments, keys, dtype)[:, 0]


def group_histograms(bins: jax.Array, segments: jax.Array, keys: jax.Array,
                     count: int, dtype: np.dtype) -> jax.Array:
    """The number of points of each group (as :func:`group_sums`) in each
    bin ``0 .. count - 1`` of ``bins`` (points in other bins count
    nowhere), a ``(groups, count)`` array of the integer ``dtype``: the
    one-hot matrix of the groups contracted with that of the bins."""
    onehot = (jnp.arange(count)[:, None] == bins[None, :]).astype(
        jnp.bfloat16)
    return _products(onehot, segments, keys, dtype)


def lookup(table: jax.Array, segments: jax.Array, keys: jax.Array
           ) -> jax.Array:
    """Each point's entry of the float32 ``table`` (one per group, as
    :func:`group_sums`), exactly; 0 for points of no group."""
    chunks = _chunks(segments, keys)
    width = chunks.keys.shape[0]
    rows = _exact_parts(jnp.pad(table, (0, width - table.shape[0]))[None])

    def read(_, chunk):
        segment, inside = chunk
        products = lax.dot_general(
            rows, chunks.onehot(segment, inside, jnp.bfloat16),
            (((1,), (1,)), ((), ())), preferred_element_type=np.float32)
        return None, _recombined(products.T)[:, 0]

    values = lax.scan(read, None, (chunks.segments, chunks.inside))[1]
    return values.reshape(-1)[:segments.shape[0]]


def presence_width(count: int) -> int:
    """The width of :func:`group_presence`'s second part for ``count``
    labels: about the square root of ``count`` (the fewest comparisons),
    a power of two from 8 to 64 (a TPU's products of width 128 run
    several times slower: ``benchmarks/results/accelerator-tpu-v5e.json``,
    its notes)."""
    return min(64, max(8, 1 << math.isqrt(max(count - 1, 1)).bit_length()))


def group_presence(labels: jax.Array, count: int, width: int
                   ) -> jax.Array:
    """Whether each of the labels ``1 .. count`` occurs in each row of the
    integer ``(rows, points)`` array ``labels``: a ``(rows, count)``
    boolean array.

    Label ``g + 1`` is the pair ``(g // width, g % width)``: each row's
    count of every pair is the product of the row's one-hot matrices of
    the two parts, ``points x ceil(count / width)`` and ``points x
    width``, on the matrix unit (exact: bfloat16 zeros and ones, float32
    sums of at most 2**24 points).  The comparisons number points times
    ``count / width + width``, not points times ``count``.
    """
    high_parts = -(-count // width)
    member = (labels >= 1) & (labels <= count)
    group = jnp.where(member, labels, 1).astype(np.int32) - 1
    high = jnp.where(member, group // width, high_parts)
    low = group % width
    onehot_high = (high[..., None] == jnp.arange(high_parts)).astype(
        jnp.bfloat16)
    onehot_low = (low[..., None] == jnp.arange(width)).astype(jnp.bfloat16)
    counts = jnp.einsum("rph,rpl->rhl", onehot_high, onehot_low,
                        preferred_element_type=np.float32)
    return counts.reshape(labels.shape[0], -1)[:, :count] > 0


def group_extremes(columns: jax.Array, segments: jax.Array, keys: jax.Array,
                   find_max: bool,
                   where_equal: tuple[jax.Array, jax.Array] | None = None
                   ) -> jax.Array:
    """The minimum or maximum of each of the ``k`` columns of ``columns``
    (``n x k``, any real dtype but bool) per group (as :func:`group_sums`):
    a ``(groups, k)`` array, the reduction's identity (the dtype's lowest
    or highest value, -inf or inf for floats) where a group is empty.  NaN
    counts as the largest value, as in SciPy's sorted selection: a maximum
    is NaN where the group holds one, a minimum only where it holds
    nothing else.  With ``where_equal = (values, targets)`` only the
    points whose value equals their group's target take part.  Floats
    reduce as integer keys of the same order (one reduction, where NaN
    would need three)."""
    dtype = columns.dtype
    if dtype.kind == "f":
        # One integer reduction per column: the values' order-preserving
        # keys, whose identities no value maps to.
        found = group_extremes(ordered_keys(columns), segments, keys,
                               find_max, where_equal)
        empty = np.iinfo(found.dtype).min if find_max else np.iinfo(
            found.dtype).max
        fill = np.array(-np.inf if find_max else np.inf, dtype)
        return jnp.where(found == empty, fill, ordered_keys(found, dtype))
    info = np.iinfo(dtype)
    fill = np.array(info.min if find_max else info.max, dtype)
    reduce = jnp.max if find_max else jnp.min
    # The groups along the first axis of the comparisons and the points
    # along the last: a few groups are padded to a few rows, not to a
    # whole width of lanes.  No loop: each column is one reduction, into
    # which a TPU's XLA fuses the comparisons.
    width = -(-keys.shape[0] // _SUBLANES) * _SUBLANES
    member = segments[None, :] == jnp.pad(keys, (0, width - keys.shape[0]),
                                          mode="edge")[:, None]
    if where_equal is not None:
        values, targets = where_equal
        targets = jnp.pad(targets, (0, width - keys.shape[0]))
        member = member & same_values(values[None, :], targets[:, None])
    found = [reduce(jnp.where(member, row[None, :], fill), axis=1)
             for row in columns.T]
    return jnp.stack(found, axis=1)[:keys.shape[0]]


def same_values(x: jax.Array, y: jax.Array) -> jax.Array:
    """``x == y``, NaN equal to NaN: a point holds its group's extreme
    where that extreme is NaN, as in SciPy's sorted selection."""
    if x.dtype.kind != "f":
        return x == y
    # Equal order-preserving keys, with -0.0 as 0.0: one comparison.
    return _zero_folded_keys(x) == _zero_folded_keys(y)


def _zero_folded_keys(x: jax.Array) -> jax.Array:
    """:func:`ordered_keys` of floats, -0.0 taken as 0.0 (which it
    equals)."""
    return ordered_keys(jnp.where(x == 0, jnp.zeros_like(x), x))


def ranks_keys(dtype: np.dtype) -> bool:
    """Whether :func:`group_ranked` takes values of ``dtype``: booleans,
    integers and floats of at most 32 bits."""
    dtype = np.dtype(dtype)
    return dtype.kind in "biuf" and dtype.itemsize <= 4


def _unsigned_keys(x: jax.Array) -> jax.Array:
    """Values (of a dtype :func:`ranks_keys` takes) as uint32 keys of the
    same order: floats by :func:`ordered_keys` (NaN above every number),
    with -0.0 as 0.0, which it equals; signed integers offset by 2**31."""
    if x.dtype.kind == "f":
        x = _zero_folded_keys(x)
    if x.dtype.kind == "i":
        return lax.bitcast_convert_type(x.astype(np.int32),
                                        np.uint32) ^ np.uint32(1 << 31)
    return x.astype(np.uint32)


def _from_unsigned_keys(keys: jax.Array, dtype: np.dtype) -> jax.Array:
    """The values of ``dtype`` whose :func:`_unsigned_keys` are ``keys``."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return keys != 0
    if dtype.kind == "u":
        return keys.astype(dtype)
    signed = lax.bitcast_convert_type(keys ^ np.uint32(1 << 31), np.int32)
    if dtype.kind == "i":
        return signed.astype(dtype)
    return ordered_keys(signed.astype(f"int{8 * dtype.itemsize}"), dtype)


def group_ranked(values: jax.Array, segments: jax.Array, keys: jax.Array,
                 ranks: jax.Array) -> jax.Array:
    """For each group ``g`` (the points whose segment equals ``keys[g]``)
    its value of rank ``ranks[g]`` (0 the least; NaN above every number,
    -0.0 as 0.0), for values of a dtype :func:`ranks_keys` takes; where a
    group has ``ranks[g]`` points or fewer, the result is unspecified.
    The key of that rank is the largest ``m`` with at most ``ranks[g]``
    of the group's keys below it, found bit by bit from the top."""
    width = -(-keys.shape[0] // _SUBLANES) * _SUBLANES
    member = segments[None, :] == jnp.pad(keys, (0, width - keys.shape[0]),
                                          mode="edge")[:, None]
    ranks = jnp.pad(ranks, (0, width - keys.shape[0]))
    ordered = _unsigned_keys(values)

    def bit(k, found):
        trial = found | lax.shift_left(np.uint32(1),
                                       (31 - k).astype(np.uint32))
        below = jnp.sum(member & (ordered[None, :] < trial[:, None]),
                        axis=1, dtype=np.int32)
        return jnp.where(below <= ranks, trial, found)

    found = lax.fori_loop(0, 32, bit, jnp.zeros((width,), np.uint32))
    return _from_unsigned_keys(found[:keys.shape[0]], values.dtype)


def ordered_keys(x: jax.Array, to: np.dtype | None = None) -> jax.Array:
    """Floats as signed integers of their width that order as the floats
    do, every NaN above +inf (-0.0 just below 0.0); with ``to``,
    such keys back as floats of ``to``.  The largest and smallest integers
    are no float's key (NaNs' payloads are made one)."""
    if to is None:
        bits = jnp.iinfo(jnp.dtype(f"int{8 * x.dtype.itemsize}"))
        x = lax.bitcast_convert_type(jnp.where(jnp.isnan(x), np.nan, x),
                                     bits.dtype)
    else:
        bits = jnp.iinfo(x.dtype)
    # Negative floats (the sign bit set) have their magnitude bits turned
    # over, so that a larger magnitude is a smaller integer; the mapping
    # is its own inverse.
    x = x ^ ((x >> (bits.bits - 1)) & bits.max)
    return x if to is None else lax.bitcast_convert_type(x, to)
