"""Rank filters: minimum, maximum, median, rank and percentile.

Every kernel works on the input dtype itself: comparisons are exact for every
integer width, and no value takes a round trip through float.

* Rectangular minimum/maximum filters are separable: one 1-D pass per axis,
  each pass stored before the next reads it.  A pass is a sliding extreme:
  up to `DIRECT_WINDOW` samples, the extreme of every sample of the window
  (one vectorised loop); beyond, built by doubling (extremes of 1, 2, 4,
  ... samples, then one overlapping pair), so a window of ``n`` samples
  costs ``ceil(log2 n)`` comparisons per sample whatever ``n``.
* Other footprints are split into runs of consecutive samples along the last
  axis; each distinct run length is one sliding extreme, and the runs are
  combined by shifted slices.
* Rank, median and percentile filters gather the footprint's taps and select
  with a comparator network (Batcher's odd-even merge sort, pruned to the
  comparators the wanted rank depends on): a fixed, branch-free sequence of
  minimum/maximum operations that XLA fuses into one loop.  Very large
  footprints sort the stacked taps instead.

As in SciPy, the result for windows holding NaN is not specified; these
kernels propagate NaN through minimum and maximum.

The public functions are planned (:mod:`jaxndimage._plans`): their shells
validate into an :class:`ExtremePlan` (separable windows) or a
:class:`FootprintPlan` (other footprints, and every rank filter).
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage._canvas import (
    ExactGrid,
    Margins,
    canvas_per_pass,
    one_pass_per_call,
    separable_margins,
    shape_generic,
    window_margins,
)
from jaxndimage._casting import (
    cast_like_c,
    cast_like_numpy,
    compute_dtype,
    store_like_c,
)
from jaxndimage._dispatch import as_array, family_member, ndimage_function
from jaxndimage._docstrings import docfiller
from jaxndimage._modes import FILTER_EXTENSION, check_mode, window_passes
from jaxndimage._plans import Plan, Planned, meets_float16, window_depth
from jaxndimage._support import (
    as_int,
    check_axes,
    check_origin,
    check_real_cval,
    expand_origins,
    expand_to_ndim,
    normalize_axis,
    normalize_sequence,
    output_dtype,
)
from jaxndimage._typing import Array, ArrayLike

__all__ = [
    "maximum_filter",
    "maximum_filter1d",
    "median_filter",
    "minimum_filter",
    "minimum_filter1d",
    "percentile_filter",
    "rank_filter",
]


#: Footprints with more taps than this are ranked by sorting, not a network.
NETWORK_MAX_TAPS = 64


# --------------------------------------------------------------------------
# Footprints as static jit arguments
# --------------------------------------------------------------------------

class Pattern(tuple):
    """A boolean footprint as a hashable ``(shape, packed bits)`` pair."""

    @classmethod
    def of(cls, footprint: np.ndarray) -> Pattern:
        footprint = np.asarray(footprint, dtype=bool)
        return cls((footprint.shape, np.packbits(footprint).tobytes()))

    @property
    def array(self) -> np.ndarray:
        shape, bits = self
        count = int(np.prod(shape))
        unpacked = np.unpackbits(np.frombuffer(bits, np.uint8), count=count)
        return unpacked.astype(bool).reshape(shape)


# --------------------------------------------------------------------------
# Kernels (pure JAX; everything here may be traced)
# --------------------------------------------------------------------------

def _combine(minimum: bool):
    return jnp.minimum if minimum else jnp.maximum


#: A window of up to this many samples is the extreme of its samples, read
#: in one fused loop.
DIRECT_WINDOW = 8


def sliding_extreme(grid: Any, x: Any, size: int, axis: int,
                    minimum: bool) -> Array:
    """Minimum or maximum of every ``size`` consecutive samples along ``axis``
    ('valid' windows: window ``i`` starts at sample ``i`` of ``x``).

    Up to `DIRECT_WINDOW` samples every sample of the window is read.
    Beyond, extremes of 1, 2, 4, ... samples are built from each other, and
    a window of ``size`` is the extreme of two overlapping power-of-two
    windows.
    """
    op = _combine(minimum)
    block = grid.shift(x, axis, 0)
    if size <= DIRECT_WINDOW:
        for k in range(1, size):
            block = grid.join(op, block, grid.shift(x, axis, k))
        return block
    span = 1
    while 2 * span <= size:
        block = grid.join(op, block, grid.shift(block, axis, span))
        span *= 2
    if span == size:
        return block
    return grid.join(op, block, grid.shift(block, axis, size - span))


def _sliding_steps(size: int) -> int:
    """How many sequential reads :func:`sliding_extreme` makes."""
    return 1 if size <= DIRECT_WINDOW else size.bit_length() + 1


def pad_for_footprint(grid: Any, x: Array, shape: Sequence[int],
                      origins: Sequence[int], modes: Sequence[str],
                      cval: Any) -> Any:
    """``x`` extended on every axis, so that window ``j`` of sample ``i``
    starts at ``i``."""
    m = window_margins(shape, origins, modes)
    return grid.pad_all(x, m.lo, m.hi, m.modes, cval)


def footprint_taps(grid: Any, padded: Any,
                   footprint: np.ndarray) -> list[Array]:
    """The shifted views of ``padded`` for each True of ``footprint``, in C
    order (the order SciPy hands window values to a callable)."""
    return [grid.shift_nd(padded, offset)
            for offset in zip(*np.nonzero(footprint))]


def _true_runs(row: np.ndarray) -> list[tuple[int, int]]:
    """(start, length) of each run of True in a 1-D boolean row."""
    edges = np.diff(np.concatenate([[0], row.astype(np.int8), [0]]))
    starts = np.flatnonzero(edges == 1)
    stops = np.flatnonzero(edges == -1)
    return [(int(a), int(b - a)) for a, b in zip(starts, stops)]


def _footprint_extreme(grid: Any, padded: Any, footprint: np.ndarray,
                       minimum: bool) -> Array:
    """Extreme over an arbitrary footprint, one sliding extreme per distinct
    run length along the last axis."""
    op = _combine(minimum)
    last = footprint.ndim - 1
    rows = footprint.reshape(-1, footprint.shape[-1])
    leading = list(np.ndindex(*footprint.shape[:-1]))
    sliding = {}
    result = None
    for lead, row in zip(leading, rows):
        for start, length in _true_runs(row):
            if length not in sliding:
                sliding[length] = sliding_extreme(grid, padded, length, last,
                                                  minimum)
            begin = tuple(int(v) for v in lead) + (start,)
            part = grid.shift_nd(sliding[length], begin)
            result = part if result is None else grid.join(op, result, part)
    return result


def footprint_extreme_margins(footprint: np.ndarray, origins: Sequence[int],
                              modes: Sequence[str]) -> Margins:
    """How far :func:`_footprint_extreme` reads: the footprint's window, in
    the steps of its longest sliding extreme and one more, and across the
    window's span (each run's sliding extreme, read ``lo`` samples back,
    is read again from its start)."""
    lengths = {n for row in footprint.reshape(-1, footprint.shape[-1])
               for _, n in _true_runs(row)}
    steps = max(_sliding_steps(n) for n in lengths) + 1
    return window_margins(footprint.shape, origins, modes, steps, spans=True)


def _extreme_separable_margins(ndim, *, axes, sizes, origins, modes,
                               **_) -> Margins:
    return separable_margins(ndim, axes, sizes, origins, modes,
                             sum(_sliding_steps(n) for n in sizes))


@shape_generic(("axes", "sizes", "origins", "modes", "minimum", "dtypes",
                "out_dtype"), _extreme_separable_margins,
               pass_axes="axes", mode_args=("modes",))
def _extreme_separable(x: Array, cval: Any, *, grid: Any,
                       axes: tuple[int, ...], sizes: tuple[int, ...],
                       origins: tuple[int, ...], modes: tuple[str, ...],
                       minimum: bool, dtypes: tuple[np.dtype, ...],
                       out_dtype: np.dtype) -> Array:
    # Each pass is stored in the output dtype, as SciPy chains its 1-D
    # passes through the output array.
    shape = x.shape
    for axis, size, origin, mode, dtype in zip(axes, sizes, origins, modes,
                                               dtypes):
        x = x.astype(dtype)
        before = size // 2 + origin
        padded = grid.pad(x, axis, before, size - 1 - before, mode,
                          jnp.asarray(cval).astype(dtype))
        x = store_like_c(grid.crop(sliding_extreme(grid, padded, size, axis,
                                                   minimum), shape),
                         out_dtype)
        # Stored, so that the next pass reads samples, not this pass's
        # window of each.
        x = lax.optimization_barrier(x)
    return x


def _extreme_footprint_margins(ndim, *, pattern, origins, mode, **_
                               ) -> Margins:
    return footprint_extreme_margins(pattern.array, origins, (mode,) * ndim)


@shape_generic(("pattern", "origins", "mode", "minimum", "out_dtype"),
               _extreme_footprint_margins, mode_args=("mode",))
def _extreme_footprint(x: Array, cval: Any, *, grid: Any, pattern: Pattern,
                       origins: tuple[int, ...], mode: str, minimum: bool,
                       out_dtype: np.dtype) -> Array:
    """Minimum or maximum over ``pattern``."""
    footprint = pattern.array
    padded = pad_for_footprint(grid, x, footprint.shape, origins,
                               (mode,) * footprint.ndim, cval)
    result = _footprint_extreme(grid, padded, footprint, minimum)
    return store_like_c(grid.crop(result, x.shape), out_dtype)


@functools.lru_cache(maxsize=None)
def selection_network(n: int, rank: int) -> tuple[tuple[int, int], ...]:
    """Comparators ``(i, j)``, ``i < j``, that leave the ``rank``-th smallest
    of ``n`` wires on wire ``rank``.

    Batcher's odd-even merge sort for the next power of two, without the
    comparators that touch the (conceptually +inf) padding wires, pruned
    backwards to those that the wanted wire depends on.
    """
    size = 1
    while size < n:
        size *= 2
    network = []
    p = 1
    while p < size:
        k = p
        while k >= 1:
            for j in range(k % p, size - k, 2 * k):
                for i in range(min(k, size - j - k)):
                    a, b = i + j, i + j + k
                    if a // (2 * p) == b // (2 * p) and b < n:
                        network.append((a, b))
            k //= 2
        p *= 2
    needed = {rank}
    kept = []
    for a, b in reversed(network):
        if a in needed or b in needed:
            kept.append((a, b))
            needed.update((a, b))
    return tuple(reversed(kept))


def select_rank(taps: list[Array], rank: int) -> Array:
    """The ``rank``-th smallest of the arrays ``taps``, elementwise."""
    n = len(taps)
    if n > NETWORK_MAX_TAPS:
        return jnp.sort(jnp.stack(taps, axis=-1), axis=-1)[..., rank]
    wires = list(taps)
    for a, b in selection_network(n, rank):
        wires[a], wires[b] = (jnp.minimum(wires[a], wires[b]),
                              jnp.maximum(wires[a], wires[b]))
    return wires[rank]


def _rank_margins(ndim, *, pattern, origins, mode, **_) -> Margins:
    return window_margins(pattern.array.shape, origins, (mode,) * ndim)


# XLA's fusion emitters: this kernel runs faster with them than with the
# loop emitters the other window kernels compile with.
@shape_generic(("pattern", "rank", "origins", "mode", "out_dtype"),
               _rank_margins, mode_args=("mode",), cpu_compiler_options={})
def _rank_footprint(x: Array, cval: Any, *, grid: Any, pattern: Pattern,
                    rank: int, origins: tuple[int, ...], mode: str,
                    out_dtype: np.dtype) -> Array:
    footprint = pattern.array
    if x.dtype == np.bool_:  # SciPy ranks bools as bytes, cval cast to one
        x = x.astype(np.uint8)
    cval = cast_like_c(jnp.asarray(cval), x.dtype)
    padded = pad_for_footprint(grid, x, footprint.shape, origins,
                               (mode,) * footprint.ndim, cval)
    taps = footprint_taps(grid, padded, footprint)
    if isinstance(grid, ExactGrid):
        taps = [grid.crop(t, x.shape) for t in taps]
    return store_like_c(select_rank(taps, rank), out_dtype)


# --------------------------------------------------------------------------
# Shell helpers
# --------------------------------------------------------------------------

def _check_real(input: Array) -> None:
    if jnp.iscomplexobj(input):
        raise TypeError("Complex type not supported")


def _extreme_dtype(dtype: np.dtype, cval: Any, modes: Iterable[str]
                   ) -> np.dtype:
    """The dtype a min/max pass over ``dtype`` data computes in: ``dtype``
    itself, unless a constant mode pads integers with a value they cannot
    hold (SciPy keeps that value in double precision)."""
    dtype = np.dtype(dtype)
    if (dtype.kind not in "biu" or isinstance(cval, jax.core.Tracer)
            or not any(FILTER_EXTENSION[m] == "constant" for m in modes)):
        return dtype
    value = np.asarray(cval)
    if value.dtype.kind in "biuf" and np.isfinite(value):
        if value.dtype.kind != "f" or float(value).is_integer():
            low, high = ((0, 1) if dtype.kind == "b" else
                         (np.iinfo(dtype).min, np.iinfo(dtype).max))
            if low <= int(value) <= high:
                return dtype
    return compute_dtype(dtype)


def _warn_size_ignored(size: Any, footprint: Any) -> None:
    if size is not None and footprint is not None:
        warnings.warn("ignoring size because footprint is set", UserWarning,
                      stacklevel=4)


def window_footprint(size: Any, footprint: Any, axes: Sequence[int],
                     ndim: int) -> np.ndarray:
    """The boolean window over all ``ndim`` axes, from ``footprint`` or
    else ``size`` (one per entry of ``axes``), as SciPy builds it."""
    if footprint is None:
        if size is None:
            raise RuntimeError("no footprint or filter size provided")
        footprint = np.ones(normalize_sequence(size, len(axes), "size"),
                            dtype=bool)
    else:
        footprint = np.asarray(footprint, dtype=bool)
    return expand_footprint(footprint, axes, ndim)


def expand_footprint(footprint: np.ndarray, axes: Sequence[int], ndim: int,
                     name: str = "footprint") -> np.ndarray:
    """Insert length-1 axes for the axes that are not filtered."""
    if len(axes) < ndim:
        if footprint.ndim != len(axes):
            raise RuntimeError(f"{name}.ndim ({footprint.ndim}) must match "
                               f"len(axes) ({len(axes)})")
        footprint = np.expand_dims(
            footprint, tuple(ax for ax in range(ndim) if ax not in axes))
    return footprint


def check_footprint_origins(footprint: np.ndarray, origin: Any,
                            axes: Sequence[int], ndim: int) -> tuple[int, ...]:
    """Validate a footprint against the input and expand the origins."""
    origins = expand_origins(origin, axes, ndim)
    shape = [n for n in footprint.shape if n > 0]
    if len(shape) != ndim:
        raise RuntimeError(f"footprint.ndim ({footprint.ndim}) must match "
                           f"len(axes) ({len(axes)})")
    return tuple(check_origin(o, n) for o, n in zip(origins, shape))


def _is_mode_sequence(mode: Any) -> bool:
    return not isinstance(mode, str) and isinstance(mode, Iterable)


def _check_one_mode(mode: Any, where: str) -> None:
    """SciPy's RuntimeError for a sequence of modes (``"A sequence of modes
    is not supported <where>"``), else its check of the one mode."""
    if _is_mode_sequence(mode):
        raise RuntimeError(f"A sequence of modes is not supported {where}")
    check_mode(mode)


# --------------------------------------------------------------------------
# minimum / maximum
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ExtremePlan(Plan):
    """A separable minimum (``minimum``) or maximum filter: along
    ``axes[i]`` a window of ``sizes[i]`` samples centred at
    ``sizes[i] // 2 + origins[i]``, extended by ``modes[i]``, computed in
    ``dtypes[i]`` and stored in ``out_dtype``.  No axes: the input copied
    into ``out_dtype``, by C's cast where ``copy_like_c`` (SciPy's 1-D
    loop of a one-sample window), else by numpy's."""

    axes: tuple[int, ...]
    sizes: tuple[int, ...]
    origins: tuple[int, ...]
    modes: tuple[str, ...]
    minimum: bool
    dtypes: tuple[np.dtype, ...]
    out_dtype: np.dtype
    copy_like_c: bool = False

    @property
    def depth(self) -> tuple[int, ...]:
        return window_depth(self.ndim, self.axes, self.sizes, self.origins)

    @property
    def copies(self) -> bool:
        return not self.axes and not self.copy_like_c


def _run_extreme(plan: ExtremePlan, input: Array, cval: Any) -> Array:
    """The kernel of an :class:`ExtremePlan`."""
    if input.size == 0:
        return jnp.zeros(input.shape, plan.out_dtype)
    if not plan.axes:  # SciPy copies the input: output[...] = input
        cast = cast_like_c if plan.copy_like_c else cast_like_numpy
        return cast(input, plan.out_dtype)
    margins = _extreme_separable_margins(
        input.ndim, axes=plan.axes, sizes=plan.sizes, origins=plan.origins,
        modes=plan.modes)
    if canvas_per_pass(input, margins):
        # Every pass is stored in the output dtype: one call per pass.
        return one_pass_per_call(input, plan.axes, margins, lambda v, part, _,
                                 axis: _extreme_separable(
            v, cval, axes=(axis,), sizes=plan.sizes[part],
            origins=plan.origins[part], modes=plan.modes[part],
            minimum=plan.minimum, dtypes=plan.dtypes[part],
            out_dtype=plan.out_dtype))
    return _extreme_separable(
        input, cval, axes=plan.axes, sizes=plan.sizes, origins=plan.origins,
        modes=plan.modes, minimum=plan.minimum, dtypes=plan.dtypes,
        out_dtype=plan.out_dtype)


def _plan_extreme(input: Array, passes: Sequence[tuple[int, int, int, str]],
                  cval: Any, out: np.dtype, minimum: bool,
                  copy_like_c: bool = False) -> Planned:
    """The plan of a separable min/max filter of ``passes``, validated
    ``(axis, size, origin, mode)`` tuples."""
    axes, sizes, origins, modes = ((tuple(v) for v in zip(*passes))
                                   if passes else ((),) * 4)
    dtypes = tuple(_extreme_dtype(input.dtype if k == 0 else out, cval,
                                  modes[k:k + 1])
                   for k in range(len(axes)))
    plan = ExtremePlan(ndim=input.ndim, axes=axes, sizes=sizes,
                       origins=origins, modes=modes, minimum=minimum,
                       dtypes=dtypes, out_dtype=out, copy_like_c=copy_like_c)
    return Planned(plan, _run_extreme, (input, cval))


def _extreme_filter1d(input: ArrayLike, size: Any, axis: int, output: Any,
                      mode: str, cval: Any, origin: int,
                      minimum: bool) -> Planned:
    input = as_array(input)
    _check_real(input)
    axis = normalize_axis(axis, input.ndim)
    if size < 1:
        raise RuntimeError(f"size: incorrect filter size {size}")
    out = output_dtype(output, input.dtype, shape=input.shape,
                       real_output=True)
    origin = check_origin(origin, int(size))
    check_mode(mode)
    check_real_cval(cval)
    if int(size) == 1:  # SciPy's C loop still casts
        return _plan_extreme(input, [], cval, out, minimum, copy_like_c=True)
    return _plan_extreme(input, [(axis, int(size), origin, mode)], cval, out,
                         minimum)


@dataclasses.dataclass(frozen=True)
class FootprintPlan(Plan):
    """A filter over the window ``pattern`` (a :class:`Pattern` over every
    axis) centred at ``shape[i] // 2 + origins[i]``, all axes extended by
    ``mode``: the ``rank``-th smallest value of the window, or for
    ``rank=None`` its minimum (``minimum``) or maximum; stored in
    ``out_dtype``."""

    pattern: Pattern
    origins: tuple[int, ...]
    mode: str
    rank: int | None
    minimum: bool
    out_dtype: np.dtype
    #: The dtype SciPy's 1-D route ranks in (:func:`_ranked_in_python`),
    #: its result then copied into ``out_dtype`` as numpy copies; None
    #: for SciPy's C route.
    python_dtype: np.dtype | None = None

    @property
    def depth(self) -> tuple[int, ...]:
        shape, _ = self.pattern
        return window_depth(self.ndim, range(self.ndim), shape, self.origins)

    def refuses_float16(self, input: Any) -> bool:
        """SciPy's C filters refuse non-empty float16 input and output;
        its 1-D rank route (``python_dtype``) ranks in float32."""
        return (meets_float16(self, input) and input.size > 0
                and (self.rank is None or self.python_dtype is None))


def _run_footprint(plan: FootprintPlan, input: Array, cval: Any) -> Array:
    """The kernel of a :class:`FootprintPlan`."""
    if input.size == 0:
        return jnp.zeros(input.shape, plan.out_dtype)
    if plan.rank is not None and plan.python_dtype is not None:
        ranked = _rank_footprint(input.astype(plan.python_dtype), cval,
                                 pattern=plan.pattern, rank=plan.rank,
                                 origins=plan.origins, mode=plan.mode,
                                 out_dtype=plan.python_dtype)
        return cast_like_numpy(ranked, plan.out_dtype)
    if plan.rank is not None:
        return _rank_footprint(input, cval, pattern=plan.pattern,
                               rank=plan.rank, origins=plan.origins,
                               mode=plan.mode, out_dtype=plan.out_dtype)
    # SciPy casts cval to the input type for non-separable footprints (a
    # byte for bools).
    if input.dtype == np.bool_:
        input = input.astype(np.uint8)
    cval = cast_like_c(jnp.asarray(cval) if isinstance(cval, jax.core.Tracer)
                       else np.asarray(cval), input.dtype)
    return _extreme_footprint(input, cval, pattern=plan.pattern,
                              origins=plan.origins, mode=plan.mode,
                              minimum=plan.minimum, out_dtype=plan.out_dtype)


def _min_or_max_filter(input: ArrayLike, size: Any, footprint: Any,
                       output: Any, mode: Any, cval: Any, origin: Any,
                       minimum: bool, axes: Any) -> Planned:
    _warn_size_ignored(size, footprint)
    separable = True
    if footprint is None:
        if size is None:
            raise RuntimeError("no footprint provided")
    else:
        footprint = np.asarray(footprint, dtype=bool)
        if not footprint.any():
            raise ValueError("All-zero footprint is not supported.")
        if footprint.all():
            size, footprint = footprint.shape, None
        else:
            separable = False
    input = as_array(input)
    _check_real(input)
    out = output_dtype(output, input.dtype, shape=input.shape)
    axes = check_axes(axes, input.ndim)
    if separable:
        rank = len(axes)
        passes = window_passes(axes, normalize_sequence(size, rank, "size"),
                               normalize_sequence(origin, rank, "origin"),
                               normalize_sequence(mode, rank, "mode"))
        if passes:  # else SciPy copies, into any output
            _check_c_filter(cval, output, input)
        return _plan_extreme(input, passes, cval, out, minimum)

    footprint = expand_footprint(footprint, axes, input.ndim)
    origins = check_footprint_origins(footprint, origin, axes, input.ndim)
    _check_one_mode(mode, "for non-separable footprints")
    _check_c_filter(cval, output, input)
    plan = FootprintPlan(ndim=input.ndim, pattern=Pattern.of(footprint),
                         origins=origins, mode=mode, rank=None,
                         minimum=minimum, out_dtype=out)
    return Planned(plan, _run_footprint, (input, cval))


def _check_c_filter(cval: Any, output: Any, input: Array) -> None:
    """SciPy's C min/max and rank filters read ``cval`` as a double, then
    refuse a complex output."""
    check_real_cval(cval)
    output_dtype(output, input.dtype, shape=input.shape, real_output=True)


def _extreme_filter1d_function(name: str, minimum: bool,
                               **fields: str) -> Callable[..., Array]:
    """minimum_filter1d or maximum_filter1d, with SciPy's signature."""

    def extreme_filter1d(input: ArrayLike, size: int, axis: int = -1,
                         output: Any = None, mode: str = "reflect",
                         cval: Any = 0.0, origin: int = 0) -> Array:
        return _extreme_filter1d(input, size, axis, output, mode, cval,
                                 origin, minimum)

    return family_member(extreme_filter1d, name, "%(extreme_filter1d_doc)s",
                         "input", planned=True, fields=fields)


minimum_filter1d = _extreme_filter1d_function(
    "minimum_filter1d", True, title="Minimum",
    example="2, 0, 0, 0, 1, 1, 0, 0")
maximum_filter1d = _extreme_filter1d_function(
    "maximum_filter1d", False, title="Maximum",
    example="8, 8, 8, 4, 9, 9, 9, 9")


def _extreme_filter_function(name: str, minimum: bool, doc: str,
                             **fields: str) -> Callable[..., Array]:
    """minimum_filter or maximum_filter, with SciPy's signature."""

    def extreme_filter(input: ArrayLike, size: Any = None,
                       footprint: Any = None, output: Any = None,
                       mode: Any = "reflect", cval: Any = 0.0,
                       origin: Any = 0, *, axes: Any = None) -> Array:
        return _min_or_max_filter(input, size, footprint, output, mode,
                                  cval, origin, minimum, axes)

    return family_member(extreme_filter, name, doc, "input", "footprint",
                         planned=True, fields=fields)


minimum_filter = _extreme_filter_function("minimum_filter", True, """\
%(extreme_filter_doc)s
>>> minimum_filter(a, footprint=[[0, 1], [1, 0]], mode='nearest')
array([[5, 3, 3],
       [1, 1, 8],
       [1, 7, 2]])""", kind="minimum", example="""\
array([[5, 3, 3],
       [1, 1, 3],
       [1, 1, 2]])""")
maximum_filter = _extreme_filter_function(
    "maximum_filter", False, "%(extreme_filter_doc)s", kind="maximum",
    example="""\
array([[5, 5, 8],
       [5, 9, 9],
       [7, 9, 9]])""")


# --------------------------------------------------------------------------
# rank / median / percentile
# --------------------------------------------------------------------------

def _rank_filter(input: ArrayLike, rank: Any, size: Any, footprint: Any,
                 output: Any, mode: Any, cval: Any, origin: Any,
                 operation: str, axes: Any) -> Planned:
    _warn_size_ignored(size, footprint)
    input = as_array(input)
    _check_real(input)
    axes = check_axes(axes, input.ndim)
    footprint = window_footprint(size, footprint, axes, input.ndim)
    origins = check_footprint_origins(footprint, origin, axes, input.ndim)
    if _is_mode_sequence(mode):
        modes = expand_to_ndim(normalize_sequence(mode, len(axes), "mode"),
                               axes, input.ndim, "constant")
    else:
        modes = mode
    filter_size = int(footprint.sum())
    if operation == "median":
        rank = filter_size // 2
    elif operation == "percentile":
        percentile = rank
        if percentile < 0.0:
            percentile += 100.0
        if percentile < 0 or percentile > 100:
            raise RuntimeError("percentile: invalid percentile "
                               f"{rank!r}; must be in [-100, 100]")
        if percentile == 100.0:
            rank = filter_size - 1
        else:
            rank = int(float(filter_size) * percentile / 100.0)
    if rank < 0:
        rank += filter_size
    if rank < 0 or rank >= filter_size:
        raise RuntimeError("rank not within filter footprint size")
    if rank == 0 or rank == filter_size - 1:
        return _min_or_max_filter(input, None, footprint, output,
                                  modes, cval, origins, rank == 0, None)
    out = output_dtype(output, input.dtype, shape=input.shape,
                       real_output=True)
    _check_one_mode(modes, "by non-separable rank filters")
    python_dtype = _ranked_in_python(input, footprint, origins)
    if python_dtype is None:
        check_real_cval(cval)
    elif not isinstance(cval, jax.core.Tracer):
        # SciPy's conversion: NaN, infinities, values out of range and
        # complex values raise as numpy's scalar types raise.
        cval = python_dtype.type(cval)
    if python_dtype == input.dtype:
        python_dtype = None  # nothing to convert
    plan = FootprintPlan(ndim=input.ndim, pattern=Pattern.of(footprint),
                         origins=origins, mode=modes, rank=int(rank),
                         minimum=False, out_dtype=out,
                         python_dtype=python_dtype)
    return Planned(plan, _run_footprint, (input, cval))


def _ranked_in_python(input: Array, footprint: np.ndarray,
                      origins: Sequence[int]) -> np.dtype | None:
    """The dtype SciPy's 1-D route ranks ``input`` in, where it takes
    that route (1-D input and a footprint not much longer than it), None
    where SciPy ranks in C.  float32, float64 and int64 rank in their own
    dtype (SciPy writes them into the output directly: undefined for
    another output dtype); other integers and bools in int64, float16 in
    float32, copied into the output as numpy copies."""
    reach = input.size - ((footprint.size - 1) // 2 - origins[-1])
    if input.ndim != 1 or not (reach >= 0 or input.size == 1):
        return None
    dtype = np.dtype(input.dtype)
    if dtype in (np.int64, np.float64, np.float32):
        return dtype
    wanted = np.float32 if dtype == np.float16 else np.int64
    return np.dtype(jax.dtypes.canonicalize_dtype(wanted))


@docfiller(parameter="rank")
@ndimage_function("input", "footprint",
                  planned=True)
def rank_filter(input: ArrayLike, rank: int, size: Any = None,
                footprint: Any = None, output: Any = None,
                mode: Any = "reflect", cval: Any = 0.0, origin: Any = 0, *,
                axes: Any = None) -> Array:
    """Multidimensional rank filter: the `rank`-th smallest value of every
    window.

    Parameters
    ----------
    %(input)s
    rank : int
        Rank of the value to keep: 0 is the minimum, -1 the maximum.
    %(rank_window)s

    %(returns_filtered)s

    %(notes_rank_filter)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import rank_filter
    >>> rank_filter(np.array([2, 8, 0, 4, 1, 9, 9, 0]), rank=1, size=3)
    array([2, 2, 4, 1, 4, 9, 9, 0])
    """
    rank = as_int(rank, "rank")
    return _rank_filter(input, rank, size, footprint, output, mode, cval,
                        origin, "rank", axes)


@docfiller
@ndimage_function("input", "footprint",
                  planned=True)
def median_filter(input: ArrayLike, size: Any = None, footprint: Any = None,
                  output: Any = None, mode: Any = "reflect", cval: Any = 0.0,
                  origin: Any = 0, *, axes: Any = None) -> Array:
    """Multidimensional median filter.

    For a window of an even number of samples, the upper of the two middle
    values is kept, as in SciPy.

    Parameters
    ----------
    %(input)s
    %(size_footprint)s
    %(output)s
    %(mode_multiple)s
        A sequence of modes is only accepted for a window of one sample.
    %(cval_origin_axes)s

    %(returns_filtered)s

    %(notes_rank_filter)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import median_filter
    >>> a = np.array([[5, 3, 8], [1, 9, 4], [7, 2, 6]])
    >>> median_filter(a, size=3)
    array([[5, 5, 8],
           [5, 5, 6],
           [7, 6, 6]])
    """
    return _rank_filter(input, 0, size, footprint, output, mode, cval, origin,
                        "median", axes)


@docfiller(parameter="percentile")
@ndimage_function("input", "footprint",
                  planned=True)
def percentile_filter(input: ArrayLike, percentile: float, size: Any = None,
                      footprint: Any = None, output: Any = None,
                      mode: Any = "reflect", cval: Any = 0.0, origin: Any = 0,
                      *, axes: Any = None) -> Array:
    """Multidimensional percentile filter.

    The value kept has rank ``int(n * percentile / 100)`` among the ``n``
    samples of the window (``n - 1`` for 100).

    Parameters
    ----------
    %(input)s
    percentile : scalar
        Between -100 and 100; negative values count from 100 down
        (``-20`` is ``80``).
    %(rank_window)s

    %(returns_filtered)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import percentile_filter
    >>> percentile_filter(np.array([2, 8, 0, 4, 1, 9, 9, 0]), 50, size=3)
    array([2, 2, 4, 1, 4, 9, 9, 0])
    """
    return _rank_filter(input, percentile, size, footprint, output, mode,
                        cval, origin, "percentile", axes)
