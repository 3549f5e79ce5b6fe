"""Shape buckets: one compiled program per configuration, not per shape.

XLA compiles a program for every distinct input shape.  A script that works
through a folder of images of many sizes would compile every filter again
for every image.  This module makes the window filters shape-generic for
concrete calls (numpy input, and JAX arrays outside a trace): the array is
laid out in a flat *canvas* whose length is one of a few bucket lengths, and
the kernel reads the true extents and strides as traced values.  So a
kernel compiles once per (configuration, bucket), whatever the shapes.

The canvas
----------
A window filter reads at most ``lo[a]`` samples before and ``hi[a]``
samples after each output point along axis ``a``.  The host extends the
array by those widths with SciPy's boundary mode, in place in a C-ordered
block of extents ``Q = shape + lo + hi``, and leaves the block at the start
of a flat buffer of :func:`bucket_length` samples.  Along one axis, a
sample ``k`` positions further is ``k * stride[a]`` positions further in
the flat buffer, whatever the shape; a kernel reads its taps as such
shifts (:class:`FlatGrid`).  Positions past the block hold garbage and are
never read by a point of the array: every read of an output point stays
within the extended block.

Extending all axes up front equals SciPy's extension of each 1-D pass's
own input, because extension along one axis is an index map that commutes
with filtering along another.  The constant modes are the exception: SciPy
pads every pass's input with ``cval``, not with the previous pass applied
to ``cval``; so before a pass along a constant-mode axis, the kernel
rewrites that axis's margin to ``cval`` (:meth:`FlatGrid.pad`), where the
host has marked the margins of each axis (`Geometry.outside`).

Lines
-----
A canvas computes a value at every position of its block, margins
included.  A single pass whose margins are at least half as long as its
axis runs instead on the array's lines along that axis, each extended by
the mode, as the rows of blocks of one width (:func:`runs_on_lines`,
:class:`LineGrid`): a program per width of lines, computing each line's
values alone.

Kernels are written once against a *grid*, which is either
:class:`ExactGrid` (an n-D array of static shape: inside a user's
``jit``/``vmap``/``grad``, and for 0-d input) or :class:`FlatGrid` (the
canvas).  Both offer the few operations the window kernels need: pad an
axis, shift along an axis, shift by an n-D offset, combine shifted views,
crop to the output.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import checkify

from jaxndimage._cache import (
    LOOP_EMITTERS,
    KernelCache,
    argument_types,
    current_device,
    kernel_entry,
)
from jaxndimage._modes import FILTER_EXTENSION, extend_indices, pad_axis
from jaxndimage._support import aligned_empty
from jaxndimage._typing import Array

__all__ = ["BUCKETS", "LINE_BLOCK", "LIST_CHUNK", "SHORT_LISTS",
           "SOURCE_LENGTHS", "TILE_LENGTH", "ExactGrid", "FlatGrid",
           "LineGrid", "Margins", "bands", "bucket_length", "canvas_mode",
           "canvas_per_pass", "checking_reads", "chunk_of",
           "concrete_on_cpu", "flat_bucket", "flat_position",
           "gather_source", "in_chunks", "like_input", "line_rows",
           "line_width", "list_chunks", "list_length", "nonzero_mask",
           "one_pass_per_call", "pointwise", "relabel_axes",
           "runs_on_lines", "separable_margins", "shape_generic",
           "window_margins"]


#: Canvas lengths, in samples: eight levels, so that 2-D images from 16² to
#: 2048² compile at most eight programs per configuration.  The levels are
#: closer together where the work is large (a 2048² image with a margin of
#: 60 samples a side fits the last within 12%); below 152² the work is small
#: whatever the waste.  Longer canvases grow from the last level by
#: `_GROWTH`, so that a canvas never exceeds its image by more than a
#: quarter.
BUCKETS: tuple[int, ...] = (23104, 81920, 184320, 368640, 737280, 1474560,
                            2949120, 4718592)

#: Lengths below `BUCKETS` for lists of points, whose work is per point
#: (interpolation at listed coordinates): a short list is not padded to
#: the length of a canvas.
SHORT_LISTS: tuple[int, ...] = (1024, 4096)

#: The longest list of points one program call interpolates: a longer list
#: runs in chunks of this length through one program, so lists of any
#: length compile at most one program beyond the shorter lengths.
LIST_CHUNK: int = BUCKETS[1]

#: Lengths of the arrays a kernel only gathers from (an image interpolated
#: at listed points).  A gather costs the same whatever the length of its
#: source, so these are few and far apart, and end at the last of
#: `BUCKETS`: longer sources keep their own shape.
SOURCE_LENGTHS: tuple[int, ...] = (2**16, 2**20, BUCKETS[-1])

#: The canvas length of a band: an array that would need a longer canvas
#: runs in bands of rows on canvases of this length (:func:`bands`), so
#: that larger arrays compile no program of their own.
TILE_LENGTH = BUCKETS[4]

#: The ratio between consecutive canvas lengths beyond `BUCKETS`.
_GROWTH = 1.25

#: The widest margin, in samples, a kernel reads on a canvas.  A canvas
#: must reach ``margin * stride`` positions from any point, so it grows
#: with the margin: past this width it holds many times the array, and a
#: kernel runs faster on the array's own shape than on it, compiled for
#: that shape (``benchmarks/bench_wide.py``, ``results/wide.json``).
WIDEST_MARGIN = 48

def bucket_length(size: int, reach: int = 0) -> int:
    """The canvas length for ``size`` samples read up to ``reach`` positions
    from any point: the first bucket that holds them."""
    length = next((n for n in BUCKETS if n >= size and reach_of(n) >= reach),
                  None)
    if length is None:
        length = BUCKETS[-1]
        while length < size or reach_of(length) < reach:
            length = -(-int(length * _GROWTH) // 4096) * 4096
    return length


def list_length(count: int) -> int:
    """The padded length of a list of ``count`` points: the first of
    `SHORT_LISTS` that holds them, else :func:`bucket_length`."""
    return next((n for n in SHORT_LISTS if n >= count), None) or bucket_length(
        count)


def list_chunks(count: int) -> tuple[int, int]:
    """The length and the number of the chunks a list of ``count`` points
    is interpolated in: one list of :func:`list_length` up to
    `LIST_CHUNK` points, else chunks of `LIST_CHUNK`."""
    if count <= LIST_CHUNK:
        return list_length(count), 1
    return LIST_CHUNK, -(-count // LIST_CHUNK)


def chunk_of(values: np.ndarray, start: int, length: int) -> np.ndarray:
    """The ``length`` entries of ``values`` from ``start`` along its last
    axis: a view where ``values`` holds them all, else a copy padded with
    zeros."""
    if start + length <= values.shape[-1]:
        return values[..., start:start + length]
    piece = np.zeros(values.shape[:-1] + (length,), values.dtype)
    part = values[..., start:]
    piece[..., :part.shape[-1]] = part
    return piece


def in_chunks(count: int, run: Callable[[int, int], Any]) -> np.ndarray:
    """The ``count`` values of a list computed in chunks: ``run(start,
    length)`` gives the values of positions ``start`` to ``start + length``
    along its last axis (chunks of :func:`list_chunks`, all of one length,
    so one program serves every chunk).  Every chunk is dispatched before
    the first is read back; the result is a fresh numpy array."""
    length, chunks = list_chunks(count)
    parts = [run(start, length) for start in range(0, length * chunks,
                                                    length)]
    return np.concatenate([np.asarray(p) for p in parts],
                          axis=-1)[..., :count]


def flat_position(start: Array, length: int, shape: Array) -> list[Array]:
    """Inside a kernel: the indices along each axis of the C-ordered flat
    positions ``start`` to ``start + length`` of an array of the traced
    ``shape`` (an int32 vector; positions past its end are clamped to its
    last point).

    With JAX's 64-bit types the quotients are taken in float64, which XLA's
    CPU backend divides several times faster than integers and exactly for
    these positions (below 2**31); otherwise in int32."""
    ndim = shape.shape[0]
    position = start + lax.iota(np.int32, length)
    position = jnp.minimum(position, math.prod(
        [shape[a] for a in range(ndim)]) - 1)
    wide = jax.dtypes.canonicalize_dtype(np.float64) == np.float64
    indices = []
    for axis in range(ndim - 1, 0, -1):
        n = shape[axis]
        if wide:
            quotient = jnp.floor((position.astype(np.float64) + 0.5)
                                 / n.astype(np.float64)).astype(np.int32)
        else:
            quotient = position // n
        indices.append(position - quotient * n)
        position = quotient
    indices.append(position)
    return indices[::-1]


# --------------------------------------------------------------------------
# Grids: the operations window kernels are written with
# --------------------------------------------------------------------------

class ExactGrid:
    """An n-D array of static shape; shifts are slices, pads are copies."""

    def pad(self, x: Array, axis: int, before: int, after: int, mode: str,
            cval: Any) -> Array:
        """``x`` extended along ``axis`` by the boundary ``mode``."""
        return pad_axis(x, axis, before, after, mode, cval)

    def pad_all(self, x: Array, before: Sequence[int], after: Sequence[int],
                modes: Sequence[str], cval: Any) -> Array:
        """``x`` extended along every axis."""
        for axis, (b, a, mode) in enumerate(zip(before, after, modes)):
            x = pad_axis(x, axis, b, a, mode, cval)
        return x

    def shift(self, x: Array, axis: int, k: Any,
              span: int | None = None) -> Array:
        """``x`` read ``k`` samples further along ``axis`` (``k >= 0``).

        With ``span``, the largest shift of the pass, every shift has the
        same length, that of the pass's output, and ``k`` may be traced.
        """
        if span is None:
            return lax.slice_in_dim(x, k, x.shape[axis], axis=axis)
        return lax.dynamic_slice_in_dim(x, k, x.shape[axis] - span,
                                        axis=axis)

    def shift_nd(self, x: Array, offset: Any,
                 span: Sequence[int] | None = None) -> Array:
        """``x`` read ``offset`` samples further along each axis.

        With ``span``, the largest offset along each axis, every read has
        the same shape, and ``offset`` may be traced (an array)."""
        if span is None:
            return lax.slice(x, tuple(offset), x.shape)
        size = tuple(n - s for n, s in zip(x.shape, span))
        if isinstance(offset, tuple):
            return lax.slice(x, offset, tuple(map(sum, zip(offset, size))))
        return lax.dynamic_slice(x, tuple(offset[a] for a in range(x.ndim)),
                                 size)

    def join(self, op: Callable[[Array, Array], Array], a: Array,
             b: Array) -> Array:
        """``op`` of two shifted views, over the samples both hold."""
        shape = tuple(min(m, n) for m, n in zip(a.shape, b.shape))
        return op(self.crop(a, shape), self.crop(b, shape))

    def crop(self, x: Array, shape: Sequence[int]) -> Array:
        """The first ``shape`` samples of ``x``."""
        if tuple(x.shape) == tuple(shape):
            return x
        return lax.slice(x, (0,) * x.ndim, tuple(shape))


class LineGrid(ExactGrid):
    """Lines along axis 1 of a block, each extended by the host beyond its
    ``length`` samples (see :func:`runs_on_lines`).

    Shifts are slices, as on :class:`ExactGrid`; a pass's output keeps the
    width its reads leave, which the host crops.  The host has extended
    the margins of every mode but the constant ones; a constant mode's
    margins, outside the ``before`` columns and the ``length`` samples
    after them, are set to ``cval`` here, in the kernel's dtype.
    """

    def __init__(self, length: Array):
        self.length = length  # traced: the samples of each line

    def pad(self, x: Array, axis: int, before: int, after: int, mode: str,
            cval: Any) -> Array:
        if FILTER_EXTENSION[mode] != "constant" or not (before or after):
            return x
        column = lax.broadcasted_iota(jnp.int32, x.shape, axis)
        inside = (column >= before) & (column < before + self.length)
        return jnp.where(inside, x, jnp.asarray(cval, x.dtype))

    def pad_all(self, x: Array, before: Sequence[int], after: Sequence[int],
                modes: Sequence[str], cval: Any) -> Array:
        for axis, (b, a, mode) in enumerate(zip(before, after, modes)):
            x = self.pad(x, axis, b, a, mode, cval)
        return x

    def crop(self, x: Array, shape: Sequence[int]) -> Array:
        """The first ``shape`` samples of ``x``, as far as it holds them:
        the block's shape (a pass's input) keeps its output whole."""
        return super().crop(x, tuple(map(min, x.shape, shape)))


class Geometry(NamedTuple):
    """Where an n-D array lies in a canvas (traced int32 vectors)."""

    strides: Array   # flat distance between neighbours along each axis
    extents: Array   # extents of the extended block, ``shape + lo + hi``
    lo: Array        # margin before the array along each axis
    shape: Array     # the array's true shape
    #: Per stored canvas position, bit ``a`` set where the position lies in
    #: the margin of axis ``a``; only for kernels with a constant-mode axis.
    outside: Array | None = None


def reach_of(length: int) -> int:
    """How far (in flat positions) a kernel on a canvas of ``length`` may
    read from a point in one step: the host picks a canvas long enough."""
    return length // 16


class _Offset(NamedTuple):
    """An array to be read from ``offset`` flat positions further on."""

    data: Array
    offset: Array    # traced flat distance

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    def astype(self, dtype: Any) -> _Offset:
        return _Offset(self.data.astype(dtype), self.offset)


class FlatGrid:
    """A canvas: a flat buffer with traced strides (see module docstring).

    An array of a kernel holds the canvas's ``length`` positions plus a
    spare *margin* on both sides; its margin is its static length less
    ``length``, halved.  A shifted view reads the array at a traced offset
    of at most :func:`reach_of` positions and keeps the margin less that
    reach: a plain offset read (``dynamic_slice``) that XLA fuses into its
    consumer, with no pad or concatenation, which it compiles badly.  The
    host stores the canvas with a margin of one reach per step a kernel
    reads in (:attr:`Margins.steps`).
    """

    def __init__(self, geometry: Geometry, length: int):
        self.geometry, self.length = geometry, length
        self.reach = reach_of(length)

    def margin(self, x: Array) -> int:
        return (x.shape[0] - self.length) // 2

    def _read(self, x: Any, distance: Any) -> Array:
        """``y[p] = x[p + distance]``, with one reach less of margin."""
        if isinstance(x, _Offset):
            x, distance = x.data, x.offset + distance
        elif isinstance(distance, int) and distance == 0:
            return x
        margin = self.margin(x) - self.reach
        if margin < 0:
            raise ValueError("canvas margin exhausted: the kernel reads in "
                             "more steps than its Margins declare")
        start = jnp.asarray(self.reach + distance, jnp.int32)
        return lax.dynamic_slice(x, (start,), (self.length + 2 * margin,))

    def _with_cval(self, x: Array, axes: Sequence[int], cval: Any) -> Array:
        """``x`` with the margins of ``axes`` of the extended block set to
        ``cval``."""
        if not axes:
            return x
        code = self.geometry.outside
        cut = (code.shape[0] - x.shape[0]) // 2
        code = lax.slice(code, (cut,), (cut + x.shape[0],))
        bits = sum(1 << axis for axis in axes)
        outside = (code & code.dtype.type(bits)) != 0
        return jnp.where(outside, jnp.asarray(cval, x.dtype), x)

    def _distance(self, offset: Sequence[int]) -> Any:
        strides = self.geometry.strides
        return sum((int(k) * strides[a] for a, k in enumerate(offset) if k),
                   start=jnp.zeros((), jnp.int32))

    def pad(self, x: Array, axis: int, before: int, after: int, mode: str,
            cval: Any) -> _Offset:
        """``x`` to be read from ``before`` samples back along ``axis``; a
        constant mode first sets the margin of that axis to ``cval``."""
        constant = FILTER_EXTENSION[mode] == "constant" and (before or after)
        x = self._with_cval(x, [axis] if constant else [], cval)
        return _Offset(x, -before * self.geometry.strides[axis])

    def pad_all(self, x: Array, before: Sequence[int], after: Sequence[int],
                modes: Sequence[str], cval: Any) -> _Offset:
        axes = [a for a, mode in enumerate(modes)
                if FILTER_EXTENSION[mode] == "constant"
                and (before[a] or after[a])]
        return _Offset(self._with_cval(x, axes, cval),
                       -self._distance(before))

    def shift(self, x: Any, axis: int, k: Any,
              span: int | None = None) -> Array:
        # Every shifted read keeps the same margin: ``span`` is not needed.
        if isinstance(k, int) and k == 0:
            return self._read(x, 0)
        return self._read(x, k * self.geometry.strides[axis])

    def shift_nd(self, x: Any, offset: Any,
                 span: Sequence[int] | None = None) -> Array:
        # Every shifted read keeps the same margin: ``span`` is not needed.
        if isinstance(offset, jax.Array):
            return self._read(x, sum(offset[a] * self.geometry.strides[a]
                                     for a in range(len(offset))))
        return self._read(x, self._distance(offset) if any(offset) else 0)

    def join(self, op: Callable[[Array, Array], Array], a: Array,
             b: Array) -> Array:
        margin = min(self.margin(a), self.margin(b))
        return op(self._trim(a, margin), self._trim(b, margin))

    def _trim(self, x: Array, margin: int) -> Array:
        cut = self.margin(x) - margin
        return x if cut == 0 else lax.slice(x, (cut,), (x.shape[0] - cut,))

    def crop(self, x: Array, shape: Sequence[int]) -> Array:
        return x

    def output(self, x: Array) -> Array:
        """``x`` without margin: one sample per canvas position."""
        return self._trim(x, 0)


# --------------------------------------------------------------------------
# The host side: building a canvas, calling a kernel on it
# --------------------------------------------------------------------------

class Margins(NamedTuple):
    """How a kernel reads around each output point: how far before (``lo``)
    and after (``hi``) along each axis, by which boundary mode, and in how
    many sequential steps (a separable filter reads once per pass).

    One step reads at most ``max(lo, hi)`` samples from a point along each
    axis, unless ``spans``: then up to the window's whole span, ``lo +
    hi``, as a kernel does that reads ``0 .. lo + hi`` samples further in
    an array already read ``lo`` samples back (the footprint extremes:
    sliding extremes of the extended array, then shifted by each run's
    start).  The host sizes the canvas for it (:func:`_reach`): a read
    further than a canvas reaches would be clamped, not refused.
    """

    lo: tuple[int, ...]
    hi: tuple[int, ...]
    modes: tuple[str, ...]
    steps: int = 1
    spans: bool = False


def window_margins(shape: Sequence[int], origins: Sequence[int],
                   modes: Sequence[str], steps: int = 1,
                   spans: bool = False) -> Margins:
    """How far an n-D window of ``shape`` placed at ``origins`` reads."""
    lo = tuple(n // 2 + o for n, o in zip(shape, origins))
    hi = tuple(n - 1 - b for n, b in zip(shape, lo))
    return Margins(lo, hi, tuple(modes), steps, spans)


def separable_margins(ndim: int, axes: Sequence[int], sizes: Sequence[int],
                      origins: Sequence[int], modes: Sequence[str],
                      steps: int) -> Margins:
    """How far 1-D passes of window ``sizes`` along ``axes`` read."""
    lo, hi, axis_modes = [0] * ndim, [0] * ndim, ["constant"] * ndim
    for axis, size, origin, mode in zip(axes, sizes, origins, modes):
        before = size // 2 + origin
        lo[axis] = max(lo[axis], before)
        hi[axis] = max(hi[axis], size - 1 - before)
        axis_modes[axis] = mode
    return Margins(tuple(lo), tuple(hi), tuple(axis_modes), steps)


class _Layout(NamedTuple):
    """Where an array of one shape, or a band of its rows, lies in its
    canvas (see :func:`build_canvas`).

    ``rows`` are the (block rows, array rows) pairs that copy the band and
    its margins along axis 0 from the array; ``fills`` the (destination,
    source) index pairs that then extend the block along the other axes.
    ``core`` is where the band lies in the block, ``inside`` where the
    array does (the margins outside it are the modes' to fill).
    ``geometry`` is what the kernel reads: the axes in ``order``."""

    length: int
    margin: int
    size: int
    extents: tuple[int, ...]
    core: tuple[slice, ...]
    inside: tuple[slice, ...]
    rows: tuple[tuple[slice, Any], ...]
    fills: tuple[tuple[tuple, tuple], ...]
    order: tuple[int, ...]
    geometry: Geometry


def _reach(extents: Sequence[int], margins: Margins) -> int:
    """How far, in flat positions, a kernel reads from a point of a block
    of ``extents`` in one step (see :class:`Margins`)."""
    return sum((a + b if margins.spans else max(a, b))
               * math.prod(extents[axis + 1:])
               for axis, (a, b) in enumerate(zip(margins.lo, margins.hi)))


@functools.lru_cache(maxsize=256)
def _layout(shape: tuple[int, ...], margins: Margins, order: tuple[int, ...],
            band: tuple[int, int] | None = None) -> _Layout:
    lo, hi = margins.lo, margins.hi
    ndim = len(shape)
    first, last = band or (0, shape[0])
    extents = (last - first + lo[0] + hi[0],) + tuple(
        n + a + b for n, a, b in zip(shape[1:], lo[1:], hi[1:]))
    strides = [math.prod(extents[a + 1:]) for a in range(ndim)]
    size = math.prod(extents)
    reach = _reach(extents, margins)
    length = (band_length(reach) if band else bucket_length(size, reach))
    core = (slice(lo[0], lo[0] + last - first),) + tuple(
        slice(a, a + n) for a, n in zip(lo[1:], shape[1:]))
    # Block row k holds array row `top + k`: the band's rows, and along
    # axis 0 its margins, are copied from the array (they are rows of the
    # array but at its edges, where the mode maps them).
    top, height = first - lo[0], shape[0]
    inside = (slice(max(0, -top), min(height, last + hi[0]) - top),) + core[1:]
    rows = [(inside[0], slice(top + inside[0].start, top + inside[0].stop))]
    if FILTER_EXTENSION[margins.modes[0]] != "constant":
        for part in (slice(0, inside[0].start),
                     slice(inside[0].stop, extents[0])):
            if part.stop > part.start:
                positions = np.arange(top + part.start, top + part.stop)
                rows.append((part, _as_slice(extend_indices(
                    positions, height, margins.modes[0]))))
    fills = []
    for axis in range(1, ndim):
        mode = margins.modes[axis]
        if not (lo[axis] or hi[axis]):
            continue
        if FILTER_EXTENSION[mode] == "constant":
            continue  # the kernel writes cval there, in its own dtype
        # Along this axis, every position of the extended block; along
        # earlier axes, the extended block (margins filled already); along
        # later axes, the array only.
        n = shape[axis]
        index = [slice(None)] * axis + list(core[axis:])
        for part, positions in ((slice(0, lo[axis]), np.arange(-lo[axis], 0)),
                                (slice(lo[axis] + n, None),
                                 np.arange(n, n + hi[axis]))):
            index[axis] = part
            select = list(index)
            select[axis] = _as_slice(lo[axis] + extend_indices(positions, n,
                                                               mode))
            fills.append((tuple(index), tuple(select)))
    band_shape = (last - first,) + shape[1:]
    vectors = [np.array([v[a] for a in order], np.int32)
               for v in (strides, extents, lo, band_shape)]
    for vector in vectors:
        vector.flags.writeable = False  # shared by every call of the shape
    return _Layout(length, reach_of(length) * margins.steps, size, extents,
                   core, inside, tuple(rows), tuple(fills), order,
                   Geometry(*vectors))


def band_length(reach: int) -> int:
    """The canvas length of a band whose kernel reads up to ``reach`` flat
    positions: `TILE_LENGTH`, or the first longer bucket that reaches as
    far."""
    return bucket_length(TILE_LENGTH, reach)


def bands(shape: tuple[int, ...], margins: Margins
          ) -> tuple[tuple[int, int], ...] | None:
    """The bands of rows (along axis 0) in which an array of ``shape``
    runs, each on a canvas of :func:`band_length`; None for an array that
    runs whole, on a canvas of its own bucket length: one that fits a
    band's canvas, or whose rows, with their margins, do not."""
    extents = tuple(n + a + b for n, a, b in zip(shape, margins.lo,
                                                 margins.hi))
    reach = _reach(extents, margins)
    tile = band_length(reach)
    if bucket_length(math.prod(extents), reach) <= tile:
        return None
    rows = (tile // math.prod(extents[1:]) - margins.lo[0]
            - margins.hi[0])
    if rows < 1:
        return None
    step = -(-shape[0] // -(-shape[0] // rows))  # equal bands of <= rows
    return tuple((r, min(r + step, shape[0]))
                 for r in range(0, shape[0], step))


def _as_slice(indices: np.ndarray) -> slice | np.ndarray:
    """``indices`` as the slice that selects them, where they step by +1
    or -1 (numpy copies a slice faster than it gathers); else as they
    are."""
    steps = np.diff(indices)
    if indices.size == 1 or (steps.size and np.all(steps == steps[0])
                             and abs(int(steps[0])) == 1):
        step = int(steps[0]) if steps.size else 1
        stop = int(indices[-1]) + step
        return slice(int(indices[0]), None if stop < 0 else stop, step)
    return indices


def build_canvas(x: np.ndarray, margins: Margins,
                 order: tuple[int, ...] | None = None,
                 band: tuple[int, int] | None = None
                 ) -> tuple[np.ndarray, Geometry, _Layout]:
    """``x``, or the ``band`` of its rows along axis 0 (see :func:`bands`),
    extended by ``margins`` in a canvas of a bucket length, stored with a
    margin of one reach per step on both sides (see :class:`FlatGrid`).

    Returns the stored canvas, the geometry a kernel reads, in which axis
    ``i`` is axis ``order[i]`` of ``x`` (``order`` defaults to the axes in
    turn), and the layout (:func:`_crop` takes the values of the band
    back from a result).
    """
    if order is None:
        order = tuple(range(x.ndim))
    layout = _layout(x.shape, margins, order, band)
    stored = aligned_empty(layout.length + 2 * layout.margin, x.dtype)
    block = stored[layout.margin:layout.margin + layout.size].reshape(
        layout.extents)
    for destination, source in layout.rows:
        block[(destination,) + layout.core[1:]] = x[source]
    for index, select in layout.fills:
        block[index] = block[select]
    geometry = layout.geometry
    if any(FILTER_EXTENSION[mode] == "constant" and (a or b)
           for mode, a, b in zip(margins.modes, margins.lo, margins.hi)):
        geometry = geometry._replace(outside=_outside(layout, stored.size))
    return stored, geometry, layout


def _outside(layout: _Layout, size: int) -> np.ndarray:
    """`Geometry.outside` for a canvas of ``size`` stored positions.

    Kernels read it instead of deriving coordinates from flat positions:
    XLA's CPU backend divides integers one element at a time, and it
    recomputes a test fused into every tap that reads it.
    """
    ndim = len(layout.extents)
    code = aligned_empty(size, np.min_scalar_type(2 ** ndim - 1))
    code.fill(0)
    block = code[layout.margin:layout.margin + layout.size].reshape(
        layout.extents)
    for label, axis in enumerate(layout.order):
        inner = layout.inside[axis]
        bit = code.dtype.type(1 << label)
        before = (slice(None),) * axis + (slice(0, inner.start),)
        after = (slice(None),) * axis + (slice(inner.stop, None),)
        block[before] |= bit
        block[after] |= bit
    return code


def canvas_layout(shape: tuple[int, ...], margins: Margins) -> _Layout:
    """Where an array of ``shape`` lies in a canvas extended by
    ``margins`` (see :func:`build_canvas`): the layout of
    :func:`filled_canvas`, the same object for every call of a shape."""
    return _layout(tuple(shape), margins, tuple(range(len(shape))))


def filled_canvas(layout: _Layout, dtype: Any, fill: Any, spare: int = 0
                  ) -> tuple[np.ndarray, np.ndarray]:
    """A canvas of ``layout`` (:func:`canvas_layout`), every stored
    position holding ``fill``, and a view of where the array lies in it,
    for the caller to write the array's values into.

    Unlike :func:`build_canvas`, no margin is extended by a mode: the
    margins of every axis, the rest of the bucket and the stored margins
    all hold ``fill``, for kernels that keep a constant border there
    themselves (the binary steps of `jaxndimage._morphology`).  The stored
    margin is that of :func:`build_canvas` and ``spare`` more positions
    on both sides.  A kernel reads the layout's geometry (axes in turn);
    :func:`canvas_values` takes a result's values back.
    """
    margin = layout.margin + spare
    stored = aligned_empty(layout.length + 2 * margin, dtype)
    stored.fill(fill)
    block = stored[margin:margin + layout.size].reshape(layout.extents)
    return stored, block[layout.core]


def canvas_values(result: Any, layout: _Layout) -> np.ndarray:
    """The array's values in a kernel's canvas ``result`` (one sample per
    canvas position, no stored margin), as a C array."""
    return np.ascontiguousarray(_crop(result, layout))


def canvas_mode(mode: str) -> str:
    """The mode a kernel on a canvas is given for ``mode``: the constant
    modes, whose margins the kernel writes, as ``"constant"``; the others,
    whose margins the host fills, as ``"reflect"``."""
    return "constant" if FILTER_EXTENSION[mode] == "constant" else "reflect"


def relabel_axes(axes: tuple[int, ...], ndim: int
                 ) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``axes`` (one per pass of a kernel) relabelled in order of first
    use, and that order: ``order[label]`` is the axis a label stands for,
    the axes no pass reads following in turn.

    Passes along ``(1, 0)`` and along ``(0, 1)`` both become ``(0, 1)``:
    on a canvas only the strides tell axes apart, so they share a program.
    """
    order = tuple(dict.fromkeys(axes)) + tuple(
        a for a in range(ndim) if a not in axes)
    label = {axis: i for i, axis in enumerate(order)}
    return tuple(label[a] for a in axes), order


def concrete_on_cpu(x: Any) -> bool:
    """True for a numpy array or a concrete JAX array on one CPU device."""
    if isinstance(x, jax.core.Tracer):
        return False
    if isinstance(x, np.ndarray):
        return True
    try:
        devices = x.devices()
    except AttributeError:
        return False
    return len(devices) == 1 and next(iter(devices)).platform == "cpu"


def like_input(values: np.ndarray, x: Any) -> Any:
    """A host result ``values`` as the kind of array ``x`` is: numpy for
    numpy input, else a JAX array on ``x``'s device."""
    if not isinstance(x, jax.Array):
        return values
    return jax.device_put(values, next(iter(x.devices())))


#: The fewest and most taps of a first pass that XLA's CPU fusion
#: recomputes inside every tap of the next pass of the same program.
_FUSED_FIRST_PASS = (5, 15)

#: Images of fewer elements keep one program whatever their first pass:
#: a second call costs about what the recomputation does.
_PER_PASS_FROM = 2**15


def canvas_per_pass(x: Any, margins: Margins, axes: Sequence[int] = ()
                    ) -> bool:
    """True where a separable kernel of concrete CPU input should run one
    pass per call, each on a canvas extended along its own axis only: a
    3-D volume, and a volume of more axes whose canvas extended along every
    axis up front would hold more than half as much again as the largest
    canvas extended along one axis.  A canvas's margins along the slow axes
    of a volume are whole planes per sample of reach, so a wide kernel
    would read and pad many times the array; and XLA's CPU code for a pass
    that reads a fused earlier pass at traced offsets runs several times
    slower than the passes run one after the other
    (`benchmarks/bench_volumes.py`).  An image of at least
    `_PER_PASS_FROM` elements (its passes along ``axes``, in order) runs
    one pass per call where its first pass has 5 to 15 taps: XLA's CPU
    fusion then computes the first pass again inside every tap of the
    second (an optimization barrier does not stop it), 2-5 times the time
    of two calls (`benchmarks/bench_passes.py`); other images keep one
    call."""
    if not concrete_on_cpu(x):
        return False
    if x.ndim == 2 and len(axes) > 1:
        first = axes[0]
        taps = margins.lo[first] + margins.hi[first] + 1
        return (x.size >= _PER_PASS_FROM and
                _FUSED_FIRST_PASS[0] <= taps <= _FUSED_FIRST_PASS[1])
    if x.ndim < 3:
        return False
    if x.ndim == 3:
        return True
    extents = [n + a + b for n, a, b in zip(x.shape, margins.lo, margins.hi)]
    size = math.prod(x.shape)
    widest = max(size // max(n, 1) * e for n, e in zip(x.shape, extents))
    return math.prod(extents) > 1.5 * widest


def _moved_last(shape: tuple[int, ...], axis: int, margins: Margins) -> bool:
    """Whether a pass along ``axis`` reads so far, in flat positions, that
    its canvas would take a longer bucket than its samples need: a wide
    kernel along a slow axis of a volume (its reach is whole planes per
    sample).  Along the last axis it reads ``reach`` samples."""
    if axis == len(shape) - 1:
        return False
    lo, hi = margins.lo[axis], margins.hi[axis]
    reach = (lo + hi if margins.spans else max(lo, hi)) * math.prod(
        shape[axis + 1:])
    size = math.prod(shape) // max(shape[axis], 1) * (shape[axis] + lo + hi)
    return bucket_length(size, reach) > bucket_length(size)


def one_pass_per_call(x: Array, axes: Sequence[int], margins: Margins,
                      call: Callable[[Array, slice, bool, int], Array]
                      ) -> Array:
    """``x`` through a separable kernel's passes along ``axes`` one call
    at a time: ``call(x, part, last, axis)`` runs the passes ``part`` of
    the kernel's per-pass arguments along ``axis`` of the array it is
    given (see :func:`canvas_per_pass`); ``last`` tells the last call,
    which stores the output dtype.  A pass that would read across a
    canvas many times the array's (:func:`_moved_last`, ``margins`` those
    of the whole kernel) runs on the array with its axis moved last, by
    numpy: each line is filtered as before, so the values are the same."""
    for index, axis in enumerate(axes):
        part, last = slice(index, index + 1), index == len(axes) - 1
        if not _moved_last(tuple(x.shape), axis, margins):
            x = call(x, part, last, axis)
            continue
        moved = np.ascontiguousarray(np.moveaxis(np.asarray(x), axis, -1))
        result = np.asarray(call(moved, part, last, x.ndim - 1))
        x = like_input(np.ascontiguousarray(np.moveaxis(result, -1, axis)),
                       x)
    return x


#: The samples of one block of lines (:func:`runs_on_lines`): the lines
#: of an array run through one program, this many samples at a time.
LINE_BLOCK = 2**18


def line_width(samples: int, span: int) -> int:
    """The width of a block of lines of ``samples`` samples each, read
    ``span`` samples further by a pass: ``span`` and the first of 16, 24,
    32, 40, 56, ... (each at most a quarter more than the last, rounded up
    to a multiple of 8) that holds ``samples``, the values a pass computes
    of each line."""
    values = 16
    while values < samples:
        values = -(-values * 5 // 32) * 8
    return values + span


def line_rows(width: int) -> int:
    """The lines of one block of ``width`` (:data:`LINE_BLOCK` samples)."""
    return max(1, LINE_BLOCK // width)


def runs_on_lines(shape: tuple[int, ...], axis: int, margins: Margins
                  ) -> bool:
    """Whether a single pass along ``axis`` of concrete CPU input runs on
    lines: the array's lines along that axis, each extended by the pass's
    margins, as the rows of blocks of one width (:func:`line_width`;
    :class:`LineGrid`), each block computing its lines' samples alone.

    A canvas computes a value at every position of the extended array,
    margins included; lines compute each line's values and their block's
    slack.  Lines take the passes whose margins are at least half as long
    as the axis (a wide kernel along a short axis of a volume) where they
    compute fewer values than the canvas would.  One program serves every
    array whose lines share a width.
    """
    samples = shape[axis] if shape else 0
    span = margins.lo[axis] + margins.hi[axis]
    if len(shape) < 2 or samples == 0 or 2 * span < samples:
        return False
    size = math.prod(shape)
    lines = size // samples
    width = line_width(samples, span)
    rows = line_rows(width)
    on_lines = -(-lines // rows) * rows * (width - span)
    return on_lines <= bucket_length(lines * (samples + span))


def _on_lines(run: Callable[[np.ndarray, np.ndarray], Any], x: Any,
              axis: int, margins: Margins) -> Any:
    """``run(block, length)`` on the blocks of the lines of ``x`` along
    ``axis`` (see :func:`runs_on_lines`), each dispatched before the
    previous one is read back; the values as a C array of ``x``'s kind.

    Each row of a block is a line, ``margins.lo[axis]`` columns in and
    extended by the axis's mode (by the kernel for a constant mode); the
    rest of a block is zero.  ``length`` is the samples of each line."""
    host = np.asarray(x)
    before, after = margins.lo[axis], margins.hi[axis]
    mode = margins.modes[axis]
    moved = np.moveaxis(host, axis, -1)
    samples = moved.shape[-1]
    lines = np.ascontiguousarray(moved).reshape(-1, samples)
    width = line_width(samples, before + after)
    rows = line_rows(width)
    extended = before + samples + after
    fills, taken = [], None
    if FILTER_EXTENSION[mode] != "constant":
        fills = [(slice(0, before), np.arange(-before, 0)),
                 (slice(before + samples, extended),
                  np.arange(samples, samples + after))]
        fills = [(part, _as_slice(before + extend_indices(positions,
                                                          samples, mode)))
                 for part, positions in fills if positions.size]
        if any(isinstance(source, np.ndarray) for _, source in fills):
            # Margins past a reflection: one gather of each whole line is
            # faster than numpy's column gathers.
            taken = extend_indices(np.arange(-before, samples + after),
                                   samples, mode)
    length = np.int32(samples)

    def blocks():
        for start in range(0, lines.shape[0], rows):
            part = lines[start:start + rows]
            count = part.shape[0]
            block = aligned_empty(rows * width, host.dtype).reshape(rows,
                                                                    width)
            if taken is None:
                block[:count, before:before + samples] = part
                for columns, source in fills:
                    block[:count, columns] = block[:count, source]
            else:
                np.take(part, taken, axis=1, out=block[:count, :extended],
                        mode="clip")
            block[:count, extended:] = 0
            block[count:] = 0
            yield (run(block, length),
                   lambda result, count=count: np.asarray(
                       result)[:count, :samples],
                   slice(start, start + count))

    values = _in_turn(blocks(), lines.shape).reshape(moved.shape)
    values = np.ascontiguousarray(np.moveaxis(values, -1, axis))
    return jax.device_put(values) if isinstance(x, jax.Array) else values


def nonzero_mask(x: Any) -> Any:
    """``x != 0``: computed by numpy, as a numpy array, for concrete CPU
    input (where an eager JAX comparison would compile per shape); by JAX
    otherwise."""
    if concrete_on_cpu(x):
        return np.asarray(x) != 0
    return x != 0


class _CanvasProgram(NamedTuple):
    """What the calls of a canvas kernel on one shape, dtype and
    configuration share: the kernel's margins, the order of the axes it
    reads (:func:`relabel_axes`), the bands of rows it runs in
    (:func:`bands`) and its compiled program; or, for a pass that runs on
    lines (:func:`runs_on_lines`), the pass's axis in ``lines``."""

    margins: Margins
    order: tuple[int, ...] | None
    bands: tuple[tuple[int, int], ...] | None
    executable: Any
    lines: int | None = None


_MAX_PROGRAMS = 1024  # per kernel; the table is emptied when it is full


def _crop(result: Any, layout: _Layout) -> np.ndarray:
    """The values of the band of a canvas ``result`` (a view)."""
    block = np.asarray(result)[:layout.size]
    return block.reshape(layout.extents)[layout.core]


def _in_turn(parts: Iterable[tuple[Any, Callable[[Any], np.ndarray], slice]],
             shape: tuple[int, ...]) -> np.ndarray:
    """An array of ``shape`` from its parts, each ``(result, read, rows)``
    as ``parts`` yields them: ``read(result)`` holds its ``rows``.  A part
    is yielded once its program is dispatched, and read back only after
    the next one is: the host prepares each part while the previous one
    computes."""
    values = pending = None
    for part in parts:
        if pending is not None:
            values = _place(values, shape, *pending)
        pending = part
    return _place(values, shape, *pending)


def _place(values: np.ndarray | None, shape: tuple[int, ...], result: Any,
           read: Callable[[Any], np.ndarray], rows: slice) -> np.ndarray:
    """``values`` (allocated on the first part) with ``rows`` read from
    their part's ``result``."""
    part = read(result)
    if values is None:
        values = np.empty(shape, part.dtype)
    values[rows] = part
    return values


def _on_canvases(run: Callable[[np.ndarray, Geometry, _Layout], Any],
                 x: Any, margins: Margins, order: tuple[int, ...] | None,
                 row_bands: tuple[tuple[int, int], ...] | None) -> Any:
    """``run(stored, geometry, layout)`` on the canvas of ``x``, or on
    those of its bands of rows, each dispatched before the previous one is
    read back; the result as a C array of ``x``'s kind (numpy, or a JAX
    array for JAX input)."""
    host = np.asarray(x)
    if row_bands is None:
        stored, geometry, layout = build_canvas(host, margins, order)
        values = np.ascontiguousarray(_crop(run(stored, geometry, layout),
                                            layout))
    else:
        def in_bands():
            for band in row_bands:
                stored, geometry, layout = build_canvas(host, margins, order,
                                                        band)
                yield (run(stored, geometry, layout),
                       functools.partial(_crop, layout=layout), slice(*band))

        values = _in_turn(in_bands(), host.shape)
    # Uncommitted, on the default device (the dispatcher's: the array's
    # own), so that it combines with sharded input too.
    return jax.device_put(values) if isinstance(x, jax.Array) else values


_CHECKING_READS = contextvars.ContextVar("checking_reads", default=False)


@contextlib.contextmanager
def checking_reads():
    """Run every canvas kernel with its reads checked.

    A read of a canvas array past its end is clamped by XLA, not refused:
    a kernel that reads further than its `Margins` declare gives wrong
    values silently.  Inside this context a canvas kernel runs under
    ``jax.experimental.checkify``'s index checks, uncached, and such a read
    raises ``checkify.JaxRuntimeError``.  For tests: every call compiles.
    """
    token = _CHECKING_READS.set(True)
    try:
        yield
    finally:
        _CHECKING_READS.reset(token)


def shape_generic(static_argnames: tuple[str, ...],
                  margins: Callable[..., Margins], *,
                  pass_axes: str | None = None,
                  mode_args: tuple[str, ...] = (),
                  lines: bool = False,
                  cpu_compiler_options: Mapping[str, Any] = LOOP_EMITTERS
                  ) -> Callable[[Callable], Callable]:
    """``jax.jit`` for a window kernel, compiled per bucket, not per shape.

    The decorated kernel is ``kernel(x, *arrays, grid, **static)``: ``x``
    is the array to filter, laid out as ``grid`` says; the other arrays
    (weights, cval) are traced.  ``margins(ndim, **static)`` gives how far
    the kernel reads around each point.  Concrete single-device CPU input
    runs on a canvas (:class:`FlatGrid`); traced input or arguments (a
    traced sigma), 0-d input, arrays on other devices and kernels that read
    further than `WIDEST_MARGIN` run on :class:`ExactGrid`.  Static arguments
    must be passed by keyword.  The result is the output array, of
    ``x``'s shape.

    Two declarations let calls that differ only on the host share a
    canvas program:

    * ``pass_axes`` names the static argument that holds the axis of each
      of the kernel's passes, for kernels that tell axes apart only
      through the grid.  On a canvas these axes are relabelled in order of
      first use (:func:`relabel_axes`), so that, say, a Sobel filter along
      either axis of an image runs one program.
    * ``mode_args`` name the static arguments that hold boundary modes (a
      mode, or a tuple of them), for kernels that read modes only through
      the grid.  On a canvas the host extends the margins by every mode
      but the constant ones, so the kernel is given those modes as
      ``"reflect"`` (:func:`canvas_mode`).

    * ``lines`` declares a kernel of 1-D passes (``pass_axes`` holds their
      axes) whose single pass reads only through the grid's ``pad`` and
      ``shift``: such a pass runs on lines where :func:`runs_on_lines`
      says so, each program serving one width of lines
      (:class:`LineGrid`).

    ``cpu_compiler_options`` are the XLA options the canvas programs
    compile with on a CPU (:class:`~jaxndimage._cache.KernelCache`); by
    default XLA's loop emitters.
    """

    def decorate(kernel: Callable) -> Callable:
        @functools.partial(jax.jit, static_argnames=static_argnames)
        def exact(x, *arrays, **static):
            return kernel(x, *arrays, grid=ExactGrid(), **static)

        def on_canvas(canvas, geometry, *arrays, length, **static):
            grid = FlatGrid(geometry, length)
            return grid.output(kernel(canvas, *arrays, grid=grid, **static))

        # Named after the kernel: the disk cache keys entries by that name,
        # and JAX's compile logs show it.
        on_canvas.__module__ = kernel.__module__
        on_canvas.__name__ = f"{kernel.__name__}_on_canvas"
        on_canvas.__qualname__ = f"{kernel.__qualname__}.on_canvas"
        canvas_static_names = static_argnames + ("length",)
        flat = KernelCache(jax.jit(on_canvas,
                                   static_argnames=canvas_static_names),
                           cpu_compiler_options=cpu_compiler_options)

        def on_lines(block, length, *arrays, **static):
            return kernel(block, *arrays, grid=LineGrid(length), **static)

        on_lines.__module__ = kernel.__module__
        on_lines.__name__ = f"{kernel.__name__}_on_lines"
        on_lines.__qualname__ = f"{kernel.__qualname__}.on_lines"
        lined = KernelCache(jax.jit(on_lines, static_argnames=static_argnames),
                            cpu_compiler_options=cpu_compiler_options)

        def lines_axis(static: dict, x: Any, reads: Margins) -> int | None:
            """The axis of a single pass that runs on lines, else None."""
            if not lines or len(static[pass_axes]) != 1:
                return None
            axis = static[pass_axes][0]
            return axis if runs_on_lines(x.shape, axis, reads) else None

        def lines_static(static: dict) -> dict:
            """The static arguments of a program on lines: its pass along
            axis 1 of a block, every mode but the constant ones extended
            by the host."""
            static, _ = canvas_static(static, 2)
            static[pass_axes] = (1,)
            return static

        def checked(*args, **static):
            run = checkify.checkify(
                jax.jit(on_canvas, static_argnames=canvas_static_names),
                errors=checkify.index_checks)
            error, result = run(*args, **static)
            error.throw()
            return result

        def canvas_static(static: dict, ndim: int
                          ) -> tuple[dict, tuple[int, ...] | None]:
            """The static arguments of the canvas program, and the order of
            the axes it reads."""
            static = dict(static)
            for name in mode_args:
                modes = static[name]
                static[name] = (canvas_mode(modes) if isinstance(modes, str)
                                else tuple(map(canvas_mode, modes)))
            if pass_axes is None:
                return static, None
            static[pass_axes], order = relabel_axes(static[pass_axes], ndim)
            return static, order

        # Per input shape, dtype and configuration: the margins and the
        # compiled program, so a repeated call only builds its canvas.
        programs: dict[tuple, _CanvasProgram] = {}

        @functools.wraps(kernel)
        def call(x, *arrays, **static):
            kernel_entry()
            if (x.ndim == 0 or not concrete_on_cpu(x) or any(
                    isinstance(leaf, jax.core.Tracer)
                    for leaf in jax.tree.leaves(arrays))):
                return exact(x, *arrays, **static)
            key = (x.shape, np.dtype(x.dtype), tuple(static.items()),
                   argument_types(arrays),
                   jax.dtypes.canonicalize_dtype(np.float64),
                   current_device())

            def remember(program: _CanvasProgram) -> None:
                if len(programs) >= _MAX_PROGRAMS:
                    programs.clear()
                programs[key] = program

            program = programs.get(key)
            if (program is not None and not jax.config.jax_disable_jit
                    and not _CHECKING_READS.get()):
                if program.lines is not None:
                    return _on_lines(
                        lambda block, length: program.executable(
                            block, length, *arrays),
                        x, program.lines, program.margins)
                return _on_canvases(
                    lambda stored, geometry, _: program.executable(
                        stored, geometry, *arrays),
                    x, program.margins, program.order, program.bands)
            reads = margins(x.ndim, **static)
            axis = lines_axis(static, x, reads)
            if axis is not None and jax.config.jax_disable_jit:
                return _on_lines(lambda block, length: lined(
                    block, length, *arrays, **lines_static(static)),
                    x, axis, reads)
            if axis is not None:
                compiled = []

                def run_lines(block, length):
                    if not compiled:  # the same program for every block
                        compiled.append(lined.executable(
                            block, length, *arrays, **lines_static(static)))
                    return compiled[0](block, length, *arrays)

                result = _on_lines(run_lines, x, axis, reads)
                remember(_CanvasProgram(reads, None, None, compiled[0], axis))
                return result
            if max(reads.lo + reads.hi) > WIDEST_MARGIN:
                return exact(x, *arrays, **static)
            static, order = canvas_static(static, x.ndim)
            row_bands = bands(x.shape, reads)
            if jax.config.jax_disable_jit or _CHECKING_READS.get():
                run_once = (checked if _CHECKING_READS.get() else flat)
                return _on_canvases(
                    lambda stored, geometry, layout: run_once(
                        stored, geometry, *arrays, length=layout.length,
                        **static),
                    x, reads, order, row_bands)
            compiled = []

            def run(stored, geometry, layout):
                if not compiled:  # the same program for every band
                    compiled.append(flat.executable(
                        stored, geometry, *arrays, length=layout.length,
                        **static))
                return compiled[0](stored, geometry, *arrays)

            result = _on_canvases(run, x, reads, order, row_bands)
            remember(_CanvasProgram(reads, order, row_bands, compiled[0]))
            return result

        # The compiled canvas programs, by input shape, dtype and
        # configuration (for tests: their memory analysis).
        call.programs = programs
        return call

    return decorate


def flat_bucket(values: np.ndarray) -> np.ndarray:
    """A 1-D array copied into a zero-padded buffer of a list length
    (:func:`list_length`), for kernels whose work is per element."""
    buffer = aligned_empty(list_length(values.size), values.dtype)
    buffer[:values.size] = values
    buffer[values.size:] = 0
    return buffer


def gather_source(values: np.ndarray) -> np.ndarray:
    """A 1-D array at the start of a buffer of one of `SOURCE_LENGTHS`
    (``values.size`` at most the last), for kernels that read it only at
    positions below ``values.size``: the rest of the buffer is not
    written."""
    length = next(n for n in SOURCE_LENGTHS if n >= values.size)
    buffer = aligned_empty(length, values.dtype)
    buffer[:values.size] = values
    return buffer


def pointwise(function: Callable, *arrays: Array, **static: Any) -> Array:
    """``function(*arrays, **static)`` for an elementwise ``function`` of
    arrays of one shape, written for numpy and JAX alike (operators,
    ``astype``, :func:`~jaxndimage._casting.cast_like_c`, and the
    namespace of its arrays where it needs a function).

    Concrete CPU arrays are computed by numpy, whose elementwise arithmetic
    is SciPy's own: nothing is compiled, and no product is contracted into
    a multiply-add.  Other arrays are traced as they are.
    """
    if not all(concrete_on_cpu(a) for a in arrays):
        return function(*arrays, **static)
    result = np.asarray(function(*(np.asarray(a) for a in arrays), **static))
    return like_input(result, next((a for a in arrays
                                    if isinstance(a, jax.Array)), result))
