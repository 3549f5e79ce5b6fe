"""Binary and grey morphology, and `iterate_structure`.

Binary erosion and dilation are one kernel.  SciPy's C routine erodes, and
dilates by eroding the complement; here both are a *dilation* (a maximum of
booleans over the structure, `jaxndimage._rank`'s footprint machinery), and an
erosion dilates the complement:

    erosion(x) = ~dilation(~x)   with the border value complemented.

Concrete input on a CPU (numpy, and JAX arrays outside a trace on a CPU
device) compiles per canvas bucket of `jaxndimage._canvas`, not per shape:
a new image size compiles nothing once its bucket has been seen.  Traced
input (a user's ``jit``/``vmap``/``grad``), arrays on other devices and
structures reaching further than `jaxndimage._canvas.WIDEST_MARGIN` run a
kernel compiled for the array's shape (`_binary`), as does the accelerators'
propagation (`jaxndimage._algorithms`) that the tests run on a CPU.

* One step without a mask (``iterations=1``, what opening, closing and
  hit-or-miss also take) is a shape-generic kernel (`_binary_once`; in
  bands of rows for large arrays).
* Other fixed iteration counts, masks and convergence run on one canvas
  (`_binary_on_canvas`): each sample holds its state and whether it may
  change (inside the array and the mask); the margins, which may not, hold
  the border value throughout, so every step reads them as they are.  A
  step reads one buffer and writes the other (a step that wrote the buffer
  it reads would have XLA copy every shifted view), the count of
  iterations is traced.  ``k`` iterations of a box without a mask are one
  step by the ``k``-fold box (the intermediate samples of any path can be
  kept inside the array), each window read sample by sample.
* ``iterations < 1`` repeats the step until nothing changes (on device,
  ``lax.while_loop``, no host synchronisation per iteration).  When the
  structure reads its own centre the step only grows the set, and each
  round first propagates as far as it can: two raster sweeps over the
  canvas's lines along the last axis (`_line_sweep`, down then up; each
  line takes what the structure reaches of the line swept before it and
  fills its runs).  A round then ends with one plain step, and the loop
  stops when the step changes nothing: the result is exactly the iterated
  one, in a few rounds instead of one per pixel of distance.  Under a
  trace the same rounds run on the array's own shape: raster passes of
  ``lax.scan`` over the rows in 2-D, runs filled along every axis
  neighbour of the structure (doubling scans) in N-D.
* When the structure moreover connects samples both ways (its offsets are
  symmetric, within one sample: the default, every
  `generate_binary_structure`), what converges is whole features: concrete
  CPU input labels the samples that may change (`jaxndimage._labelling`'s
  union-find over runs) and sets every feature that holds a sample one
  step reaches (`_binary_by_labels`); without a mask, the array is one
  feature.  `binary_propagation` is this convergence, and so is
  `binary_fill_holes` for a structure that is not symmetric, lacks its
  centre, or comes with an origin or a subset of the axes.
* `binary_fill_holes` with a symmetric ``3 ** ndim`` structure holding its
  centre labels the background with that connectivity and keeps the
  features that touch a point whose neighbour lies outside: exactly what
  the propagation from the border reaches, in one labelling instead of
  rounds over the whole image.
* ``mask`` keeps the samples outside it at their input value in every
  iteration, as in SciPy.
* What combines the steps' results for concrete CPU input (hit-or-miss,
  hole filling, the labels' lookup) is numpy on the host: an eager JAX
  operation would compile for every shape.

Grey morphology is `jaxndimage._rank`'s minimum/maximum filter: separable
passes for boxes, runs along the last axis for other footprints.  A
non-flat ``structure`` is added (dilation) or subtracted (erosion) in
SciPy's C arithmetic by a shape-generic kernel (`_structured`).
Gradients, Laplace and the top-hats then combine the results in the
input's dtype, as SciPy does (``uint8`` wraps around, booleans use XOR).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage._algorithms import algorithm
from jaxndimage._cache import (
    LOOP_EMITTERS,
    KernelCache,
    cached_jit,
    current_device,
)
from jaxndimage._canvas import (
    WIDEST_MARGIN,
    ExactGrid,
    FlatGrid,
    Geometry,
    Margins,
    canvas_layout,
    canvas_values,
    concrete_on_cpu,
    filled_canvas,
    like_input,
    nonzero_mask,
    pointwise,
    shape_generic,
    window_margins,
)
from jaxndimage._casting import cast_like_c
from jaxndimage._dispatch import as_array, family_member, ndimage_function, to_jax
from jaxndimage._docstrings import docfiller
from jaxndimage._labelling import _backward_offsets, _label_runs, label_index_dtype
from jaxndimage._modes import check_mode
from jaxndimage._plans import (
    Plan,
    Planned,
    chained_depth,
    widest_depth,
    window_depth,
)
from jaxndimage._propagation import along_runs, shifted
from jaxndimage._rank import (
    ExtremePlan,
    FootprintPlan,
    Pattern,
    _footprint_extreme,
    _min_or_max_filter,
    _run_extreme,
    _run_footprint,
    _sliding_steps,
    check_footprint_origins,
    expand_footprint,
    footprint_extreme_margins,
    footprint_taps,
    pad_for_footprint,
    sliding_extreme,
)
from jaxndimage._structures import generate_binary_structure
from jaxndimage._support import (
    OutputArray,
    as_int,
    check_axes,
    check_origin,
    convolution_origin,
    expand_origins,
    normalize_sequence,
    output_dtype,
)
from jaxndimage._typing import Array, ArrayLike

__all__ = [
    "binary_closing",
    "binary_dilation",
    "binary_erosion",
    "binary_fill_holes",
    "binary_hit_or_miss",
    "binary_opening",
    "binary_propagation",
    "black_tophat",
    "grey_closing",
    "grey_dilation",
    "grey_erosion",
    "grey_opening",
    "iterate_structure",
    "morphological_gradient",
    "morphological_laplace",
    "white_tophat",
]


#: Morphology's kernels run on arrays of their own static shape.
_GRID = ExactGrid()


# --------------------------------------------------------------------------
# Structuring elements
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class IteratedStructurePlan(Plan):
    """A structuring element of ``ndim`` dimensions dilated with itself
    ``iterations - 1`` times: the True samples of ``pattern`` (a
    :class:`Pattern`) placed at the centre of the larger structure and
    dilated by it.  Below 2 iterations (``pattern`` None) the structure
    operand copied."""

    pattern: Pattern | None
    iterations: int

    @property
    def depth(self) -> None:
        """None: the result has another shape than the structure."""
        return None


def _run_iterated_structure(plan: IteratedStructurePlan, structure: Any
                            ) -> Array:
    """The kernel of an :class:`IteratedStructurePlan`."""
    if plan.pattern is None:
        return jnp.array(structure, copy=True)
    footprint = plan.pattern.array
    ni = plan.iterations - 1
    shape = tuple(n + ni * (n - 1) for n in footprint.shape)
    start = tuple(ni * (n // 2) for n in footprint.shape)
    seed = lax.dynamic_update_slice(jnp.zeros(shape, bool),
                                    jnp.asarray(footprint), start)
    pattern, origins = _dilation_plan(footprint, [0] * footprint.ndim)
    return _binary(seed, None, pattern=pattern, origins=origins,
                   iterations=ni, invert=True, border=False,
                   out_dtype=np.dtype(bool))


@ndimage_function("structure", reject_float16=False, planned=True)
def _iterated_structure(structure: Any, iterations: int) -> Planned:
    """The shell of `iterate_structure`, without the origin."""
    structure = as_array(structure)
    pattern = None
    if iterations >= 2:
        pattern = Pattern.of(_concrete_bool(structure, "structure"))
    plan = IteratedStructurePlan(ndim=structure.ndim, pattern=pattern,
                                 iterations=int(iterations))
    return Planned(plan, _run_iterated_structure, (structure,))


def iterate_structure(structure: ArrayLike, iterations: int,
                      origin: Any = None) -> Any:
    """Dilate a structuring element with itself.

    Parameters
    ----------
    structure : array_like
        The structuring element (non-zero elements are True).
    iterations : int
        The result is `structure` dilated ``iterations - 1`` times with
        itself; below 2 a copy of `structure` is returned.
    origin : int or sequence of int, optional
        If given and `iterations` is at least 2, the origin for the larger
        structure is returned as well, ``iterations * origin`` per axis.

    Returns
    -------
    iterate_structure : array of bool
        The larger structure, or ``(structure, origin)`` when `origin` is
        given and `iterations` is at least 2. Below 2 iterations the copy
        alone is returned, whatever `origin` is, as in SciPy.

    Examples
    --------
    >>> from jaxndimage import generate_binary_structure, iterate_structure
    >>> struct = generate_binary_structure(2, 1)
    >>> iterate_structure(struct, 2).astype(int)
    array([[0, 0, 1, 0, 0],
           [0, 1, 1, 1, 0],
           [1, 1, 1, 1, 1],
           [0, 1, 1, 1, 0],
           [0, 0, 1, 0, 0]])
    >>> iterate_structure(struct, 2, origin=1)[1]
    [2, 2]
    """
    if iterations < 2:  # SciPy copies, checking neither argument further
        return _iterated_structure(structure, 1)
    iterations = as_int(iterations, "iterations")
    out = _iterated_structure(structure, iterations)
    if origin is None:
        return out
    origin = normalize_sequence(origin, np.ndim(structure), "origin")
    return out, [iterations * o for o in origin]


# --------------------------------------------------------------------------
# Binary kernels (pure JAX)
# --------------------------------------------------------------------------

def _dilate(grid: Any, y: Array, footprint: np.ndarray,
            origins: tuple[int, ...], border: Any, repeat: int = 1,
            mode: str = "constant") -> Array:
    """OR of ``y`` over the structure on ``grid``; ``border`` past the edges.

    A box is separable (a sliding maximum per axis), and ``repeat``
    dilations by a box are one dilation by the larger box, since the
    intermediate samples of any path can be kept inside the array.
    ``mode`` ``"reflect"`` on a canvas reads the margins as they are: a
    kernel that keeps ``border`` there itself (`_binary_on_canvas`).
    """
    if not footprint.any():
        return jnp.zeros(y.shape, bool)
    fill = jnp.asarray(border)
    shape = y.shape
    if footprint.all():
        for axis, (n, origin) in enumerate(zip(footprint.shape, origins)):
            size = repeat * (n - 1) + 1
            if size == 1:
                continue
            before = repeat * (n // 2 + origin)
            padded = grid.pad(y, axis, before, size - 1 - before, mode,
                              fill)
            y = grid.crop(_sliding_or(grid, padded, size, axis), shape)
            # Stored, so that the next pass reads samples, not this pass's
            # window of each.
            y = lax.optimization_barrier(y)
        return y
    assert repeat == 1
    padded = pad_for_footprint(grid, y, footprint.shape, origins,
                               (mode,) * footprint.ndim, fill)
    return grid.crop(_footprint_extreme(grid, padded, footprint,
                                        minimum=False), shape)


#: On a canvas, the widest box (along any axis) whose OR reads every
#: sample of its window in one fused loop.  Doubling windows
#: (`jaxndimage._rank.sliding_extreme`) read windows computed by offset
#: reads, which XLA's CPU backend runs several times slower there.
_DIRECT_OR = 32


def _sliding_or(grid: Any, x: Any, size: int, axis: int) -> Array:
    """The OR of every ``size`` consecutive booleans along ``axis``, as
    `jaxndimage._rank.sliding_extreme`; on a canvas, of every sample of
    each window up to `_DIRECT_OR` samples."""
    if not isinstance(grid, FlatGrid) or size > _DIRECT_OR:
        return sliding_extreme(grid, x, size, axis, minimum=False)
    block = grid.shift(x, axis, 0)
    for k in range(1, size):
        block = grid.join(jnp.logical_or, block, grid.shift(x, axis, k))
    return block


def _sliding_or_steps(size: int) -> int:
    """How many sequential reads `_sliding_or` makes on a canvas."""
    return 1 if size <= _DIRECT_OR else _sliding_steps(size)


def _binary_once_margins(ndim: int, *, pattern: Pattern,
                         origins: tuple[int, ...], repeat: int = 1,
                         **_) -> Margins:
    """How far `_dilate` reads: a box (``repeat`` times as wide) in one
    sliding maximum per axis, any other footprint as `_footprint_extreme`
    does."""
    footprint = pattern.array
    modes = ("constant",) * ndim
    if footprint.all():
        margins = window_margins(footprint.shape, origins, modes)
        sizes = [repeat * (n - 1) + 1 for n in footprint.shape]
        return Margins(tuple(repeat * n for n in margins.lo),
                       tuple(repeat * n for n in margins.hi), modes,
                       sum(_sliding_or_steps(n) for n in sizes))
    return footprint_extreme_margins(footprint, origins, modes)


@shape_generic(("pattern", "origins", "invert", "out_dtype"),
               _binary_once_margins)
def _binary_once(x: Array, border: Array, *, grid: Any, pattern: Pattern,
                 origins: tuple[int, ...], invert: bool,
                 out_dtype: np.dtype) -> Array:
    """One binary erosion (``invert=False``) or dilation (``invert=True``)
    of ``x != 0``, ``border`` past the edges, on any grid: the erosion is
    the complement of the dilation of the complement."""
    y = (x != 0) if invert else (x == 0)
    grown = _dilate(grid, y, pattern.array, origins,
                    border if invert else ~border)
    return (grown if invert else ~grown).astype(out_dtype)


def _offsets(footprint: np.ndarray, origins: Sequence[int]) -> set:
    """Where each True of the structure reads, relative to the sample."""
    centre = np.array([n // 2 + o for n, o in zip(footprint.shape, origins)])
    return {tuple(int(v) for v in np.array(index) - centre)
            for index in zip(*np.nonzero(footprint))}


def _fill_row(seed: Array, passable: Array, border: bool) -> Array:
    """Fill every run of passable samples of a 1-D row that touches a set
    sample (both row neighbours are in the structure)."""
    near = shifted(seed, 0, 1, border) | shifted(seed, 0, -1, border)
    touched = passable & (seed | near)
    runs = jnp.cumsum(~passable, dtype=jnp.int32)
    hit = jax.ops.segment_max(touched.astype(jnp.int8), runs,
                              num_segments=seed.shape[0] + 1)
    return seed | (passable & (hit[runs] > 0))


def _raster_pass(y: Array, passable: Array, above: tuple[int, ...],
                 row_fill: bool, border: bool) -> Array:
    """One top-to-bottom pass over a 2-D image: each row takes what the
    structure reaches of the finished row above (column shifts ``above``),
    then fills its runs."""

    def row(previous, rows):
        current, open_ = rows
        source = jnp.zeros(current.shape, bool)
        for dx in above:
            source = source | shifted(previous, 0, dx, border)
        current = current | (open_ & source)
        if row_fill:
            current = _fill_row(current, open_, border)
        return current, current

    first = jnp.full(y.shape[1:], border)
    return lax.scan(row, first, (y, passable))[1]


@cached_jit(static_argnames=("pattern", "origins", "iterations",
                             "invert", "border", "out_dtype", "raster",
                             "steps"))
def _binary(x: Array, mask: Array | None, *, pattern: Pattern,
            origins: tuple[int, ...], iterations: int, invert: bool,
            border: bool, out_dtype: np.dtype, raster: bool = True,
            steps: str = "materialised steps") -> Array:
    """Binary erosion (``invert=False``) or dilation (``invert=True``) of
    ``x != 0``, ``iterations`` times (below 1: until nothing changes, for
    2-D input by raster passes where ``raster``, else by scans along the
    runs of every axis, their ``steps`` the device's "run scans": see
    `_algorithms`)."""
    footprint = pattern.array
    y = (x != 0) if invert else (x == 0)
    fill = bool(border) if invert else not border
    if mask is not None:
        mask = mask != 0

    def step(y):
        grown = _dilate(_GRID, y, footprint, origins, fill)
        return grown if mask is None else jnp.where(mask, grown, y)

    if iterations == 1:
        y = step(y)
    elif iterations > 1 and mask is None and footprint.all():
        y = _dilate(_GRID, y, footprint, origins, fill,
                    repeat=iterations)
    elif iterations > 1:
        y = lax.fori_loop(0, iterations, lambda _, v: step(v), y)
    else:
        offsets = _offsets(footprint, origins)
        growing = (0,) * y.ndim in offsets  # the step only grows the set
        passable = jnp.ones(y.shape, bool) if mask is None else mask
        if growing and y.ndim == 2 and raster:
            # Raster passes down and up, each row filling its runs.
            row_fill = {(0, 1), (0, -1)} <= offsets
            down = tuple(sorted(dx for dy, dx in offsets if dy == -1))
            up = tuple(sorted(dx for dy, dx in offsets if dy == 1))

            def accelerate(y):
                y = _raster_pass(y, passable, down, row_fill, fill)
                return _raster_pass(y[::-1], passable[::-1], up, row_fill,
                                    fill)[::-1]
        else:
            runs = []
            for axis in range(y.ndim):
                directions = []
                for direction in (1, -1):
                    unit = [0] * y.ndim
                    unit[axis] = direction
                    if (growing and tuple(unit) in offsets
                            and y.shape[axis] > 1):
                        directions.append(direction)
                if directions:
                    runs.append((axis, tuple(directions)))

            def accelerate(y):
                for axis, directions in runs:
                    y = along_runs(y, passable, axis, directions,
                                        jnp.logical_or, False, steps)
                return y

        def round_(state):
            y, _ = state
            old = y
            y = step(accelerate(y))
            return y, jnp.any(y != old)

        y, _ = lax.while_loop(lambda state: state[1], round_,
                              (y, jnp.asarray(True)))
    result = y if invert else ~y
    return result.astype(out_dtype)


def _line_sweep(y: Array, passable: Array, geometry: Any, start: int,
                offsets: Sequence[tuple[int, ...]], width: int,
                forward: bool, row_fill: bool) -> Array:
    """One raster sweep over the *lines* of a canvas (its rows along the
    last axis, margins included), in flat order or, unless ``forward``,
    backwards: each line takes what the structure reaches (``offsets``,
    each in the line swept before it) of the lines already swept,
    then, with ``row_fill``, fills its runs of passable samples
    (`_fill_row`).  In 2-D, the raster passes of `_binary`.

    ``y`` and ``passable`` are stored canvases whose array starts at
    ``start``, with ``width`` spare positions at least after it; a line is
    read as ``width`` positions (at least ``extents[-1]``), of which those
    past the line are left as they are."""
    strides, extents = geometry.strides, geometry.extents
    line = extents[-1]
    lines = jnp.prod(extents[:-1]) if extents.shape[0] > 1 else 1
    valid = lax.iota(jnp.int32, width) < line
    distances = [sum((int(k) * strides[axis]
                      for axis, k in enumerate(offset) if k),
                     start=jnp.zeros((), jnp.int32)) for offset in offsets]

    def sweep_line(index, y):
        if not forward:
            index = lines - 1 - index
        first = start + index * line
        current = lax.dynamic_slice(y, (first,), (width,))
        open_ = lax.dynamic_slice(passable, (first,), (width,)) & valid
        source = jnp.zeros(width, bool)
        for distance in distances:
            source = source | lax.dynamic_slice(y, (first + distance,),
                                                (width,))
        current = current | (open_ & source)
        if row_fill:
            # Each run ends at a margin sample (not passable) on both
            # sides, so the row's own edges are never read.
            current = _fill_row(current, open_, False)
        return lax.dynamic_update_slice(y, current, (first,))

    return lax.fori_loop(0, lines, sweep_line, y)


def _sweeps(offsets: set, ndim: int
            ) -> tuple[tuple[tuple[int, ...], ...],
                       tuple[tuple[int, ...], ...], bool]:
    """The offsets a forward and a backward `_line_sweep` read (those in
    the line before, and in the line after, along the last axis but one),
    and whether lines fill their runs."""
    along = (0,) * (ndim - 1)
    before = (0,) * (ndim - 2) + (-1,)
    after = (0,) * (ndim - 2) + (1,)
    earlier = tuple(sorted(q for q in offsets if q[:-1] == before))
    later = tuple(sorted(q for q in offsets if q[:-1] == after))
    row_fill = {along + (1,), along + (-1,)} <= offsets
    return earlier, later, row_fill


def _binary_on_canvas(stored: Array, dims: Array, *,
                      length: int, pattern: Pattern,
                      origins: tuple[int, ...], invert: bool, once: bool,
                      odd: bool, converge: bool, width: int,
                      repeat: int = 1,
                      then: tuple[Pattern, tuple[int, ...]] | None = None
                      ) -> Array:
    """`_binary` on a canvas of `jaxndimage._canvas` (`filled_canvas`),
    compiled per canvas length, not per shape; ``dims`` holds the canvas's
    strides, its extents and the number of iterations (traced).

    ``stored`` holds each sample's state in bit 0 (``x != 0`` for a
    dilation, ``x == 0`` for an erosion, the border value past the edges)
    and in bit 1 whether it is kept as it is (outside the array or the
    mask).  A kept sample keeps its value in every step, so the margins
    hold the border value throughout and each step (`_dilate`) reads them
    as they are.  One step (``once``; of a box ``repeat`` times as wide
    for ``repeat`` steps of a box), ``iterations`` (traced, of the parity
    ``odd``) steps, or with ``converge`` steps until nothing changes, each
    round first sweeping the lines down and up (`_line_sweep`) where
    ``width`` is not 0; with ``then`` (a pattern and its origins), the
    same number of steps by that structure follow, of the complement (the
    dilation of an erosion, or the erosion of a dilation: ``invert`` is
    the second's).  Returns the canvas of the result, one sample per
    position.

    Each step reads one buffer and writes its samples into the other: a
    step that wrote into the buffer it reads could not read it in the
    same fused loop, and XLA would copy every shifted view first.
    """
    ndim = dims.shape[0] // 2
    geometry = Geometry(strides=dims[:ndim], extents=dims[ndim:-1],
                        lo=None, shape=None)
    iterations = dims[-1]
    grid = FlatGrid(geometry, length)
    footprint = pattern.array
    start = (stored.shape[0] - length) // 2

    def core(y):
        return lax.slice_in_dim(y, start, start + length)

    passable = core(stored) < 2
    y = (stored & 1) != 0

    def step(source, target, footprint=footprint, origins=origins):
        grown = grid.output(_dilate(grid, source, footprint, origins, False,
                                    mode="reflect"))
        return lax.dynamic_update_slice_in_dim(
            target, jnp.where(passable, grown, core(source)), start, 0)

    def fixed(y, footprint, origins):
        """``iterations`` steps from ``y``: the stored canvas, and a
        buffer of the same margins for another step."""
        def two_steps(_, state):
            a, b = state
            b = step(a, b, footprint, origins)
            return step(b, a, footprint, origins), b

        a, b = lax.fori_loop(0, iterations // 2, two_steps, (y, y))
        return (step(a, b, footprint, origins), a) if odd else (a, b)

    if once:
        result = jnp.where(passable, grid.output(_dilate(
            grid, y, footprint, origins, False, repeat=repeat,
            mode="reflect")), core(y))
    elif then is not None:
        # The steps of an opening or a closing: the second's state is the
        # complement of the first's, margins included.
        a, b = fixed(y, footprint, origins)
        a, _ = fixed(~a, then[0].array, then[1])
        result = core(a)
    elif not converge:
        result = core(fixed(y, footprint, origins)[0])
    else:
        earlier, later, row_fill = _sweeps(_offsets(footprint, origins),
                                           footprint.ndim)

        def round_(source, target):
            """A round from ``source`` into ``target``, and whether the
            step changed anything (if not, the round's start was a fixed
            point of the step, and the result)."""
            if width:
                source = _line_sweep(source, stored < 2, geometry, start,
                                     earlier, width, True, row_fill)
                source = _line_sweep(source, stored < 2, geometry, start,
                                     later, width, False, row_fill)
            target = step(source, target)
            return source, target, jnp.any(core(target) != core(source))

        def two_rounds(state):
            # (A second round after one that changed nothing changes
            # nothing: cheaper than a branch between them.)
            a, b, _ = state
            a, b, _ = round_(a, b)
            b, a, changed = round_(b, a)
            return a, b, changed

        a, b, _ = lax.while_loop(lambda state: state[2], two_rounds,
                                 (y, y, jnp.asarray(True)))
        result = core(a)
    return result if invert else ~result


_CANVAS_STATIC = ("length", "pattern", "origins", "invert", "once", "odd",
                  "converge", "width", "repeat", "then")

#: The compiled `_binary_on_canvas` programs: with XLA's loop emitters,
#: which run its steps several times faster; those that sweep lines with
#: its default fusion emitters, which run the sweeps' scans and scatters
#: faster (``benchmarks/bench_morphology.py``).
_STEPS_ON_CANVAS = KernelCache(jax.jit(_binary_on_canvas,
                                       static_argnames=_CANVAS_STATIC),
                               cpu_compiler_options=LOOP_EMITTERS)
_SWEEPS_ON_CANVAS = KernelCache(jax.jit(_binary_on_canvas,
                                        static_argnames=_CANVAS_STATIC))


def _line_width(extent: int, length: int, ndim: int) -> int:
    """The static length `_line_sweep` reads a line of ``extent`` samples
    as, on a canvas of ``length``: the next power of two, at least 16; for
    images, at least the power of two next to the canvas's square root,
    so that the images of one canvas length share it (a line is about as
    long as that root, or the image has few lines)."""
    width = max(16, 1 << (extent - 1).bit_length())
    if ndim == 2:
        width = max(width, 1 << (math.isqrt(length) - 1).bit_length())
    return width


class _Routes(NamedTuple):
    """How `_run_binary` computes a configuration (`_routes`) for concrete
    CPU input."""

    #: The canvas of `_binary_on_canvas` (None: the structure reads too
    #: far for a canvas, or holds no True), and whether its rounds to
    #: convergence sweep the lines.
    margins: Margins | None
    sweeps: bool
    #: Iterations of a box without a mask: the canvas of one step by the
    #: larger box (every window read sample by sample), or None.
    larger_box: Margins | None
    #: For convergence by labels (`_binary_by_labels`): the structure's
    #: offsets earlier in raster order; None where it is not
    #: `_symmetric_offsets`.
    labels: tuple[tuple[int, ...], ...] | None
    #: The structure holds no True sample (`_binary_by_nothing`).
    empty: bool = False


@functools.lru_cache(maxsize=256)
def _routes(ndim: int, pattern: Pattern, origins: tuple[int, ...],
            iterations: int) -> _Routes:
    """The `_Routes` of ``iterations`` steps by ``pattern`` placed at
    ``origins`` in ``ndim`` dimensions (computed once per
    configuration)."""
    footprint = pattern.array
    if not footprint.any():
        return _Routes(None, False, None, None, empty=True)
    margins = _binary_once_margins(ndim, pattern=pattern, origins=origins)
    if max(margins.lo + margins.hi) > WIDEST_MARGIN:
        return _Routes(None, False, None, None)
    larger_box = None
    if iterations > 1 and footprint.all() and all(
            iterations * (n - 1) + 1 <= _DIRECT_OR for n in footprint.shape):
        larger_box = _binary_once_margins(ndim, pattern=pattern,
                                          origins=origins,
                                          repeat=iterations)
    offsets = _offsets(footprint, origins)
    labels = None
    if iterations < 1 and _symmetric_offsets(offsets, ndim):
        labels = tuple(sorted(q for q in offsets if q < (0,) * ndim))
    earlier, later, row_fill = _sweeps(offsets, ndim)
    sweeps = iterations < 1 and (0,) * ndim in offsets and bool(
        earlier or later or row_fill)
    return _Routes(margins, sweeps, larger_box, labels)


@functools.lru_cache(maxsize=256)
def _canvas_of(shape: tuple[int, ...], margins: Margins, sweeps: bool,
               iterations: int, device: Any) -> tuple[Any, Array, int]:
    """The layout of `_binary_on_canvas`'s canvas for ``shape``; its
    strides, its extents and ``iterations`` in one vector on ``device``
    (the kernel's ``dims``: one argument, put there once per shape); and
    the width of a line's sweep (0 without ``sweeps``)."""
    layout = canvas_layout(shape, margins)
    geometry = layout.geometry
    dims = np.concatenate([geometry.strides, geometry.extents,
                           np.array([max(iterations, 0)], np.int32)])
    width = _line_width(layout.extents[-1], layout.length,
                        len(shape)) if sweeps else 0
    return layout, jax.device_put(dims, device), width


def _binary_by_canvas(input: Any, mask: Any, plan: BinaryPlan,
                      routes: _Routes) -> Any:
    """`_binary` of concrete CPU input on a canvas (`_binary_on_canvas`),
    as the input's kind of array."""
    margins, repeat = routes.margins, 1
    if routes.larger_box is not None and mask is None:
        margins, repeat = routes.larger_box, plan.iterations
    layout, dims, width = _canvas_of(input.shape, margins, routes.sweeps,
                                     plan.iterations, current_device())
    fill = plan.border if plan.invert else not plan.border
    stored, core = filled_canvas(layout, np.uint8, 2 + int(fill),
                                 spare=width)
    # Bit 0: the state (written as booleans, numpy's fast loops); bit 1:
    # kept, outside the mask.
    _write_bool(core.view(bool), input, plan.invert)
    if mask is not None:
        kept = _write_bool(None, mask, False).view(np.uint8)
        np.bitwise_or(core, np.add(kept, kept, out=kept), out=core)
    program = _SWEEPS_ON_CANVAS if width else _STEPS_ON_CANVAS
    result = program(
        stored, dims, length=layout.length, pattern=plan.pattern,
        origins=plan.origins, invert=plan.invert,
        once=repeat > 1 or plan.iterations == 1,
        odd=plan.iterations > 0 and plan.iterations % 2 == 1,
        converge=plan.iterations < 1,
        width=width, repeat=repeat)
    values = canvas_values(result, layout)
    if plan.out_dtype != np.bool_:
        values = values.astype(plan.out_dtype)
    return like_input(values, input)


def _binary_chain_by_canvas(input: Any, mask: Any, first: BinaryPlan,
                            second: BinaryPlan) -> Any:
    """An opening or a closing (``first``'s steps, then ``second``'s) of
    concrete CPU input in one call of `_binary_on_canvas`, as the input's
    kind of array; None where they do not run on one canvas (steps to
    convergence, a larger box, a structure no canvas serves)."""
    ndim = input.ndim
    routes = [_routes(ndim, plan.pattern, plan.origins, plan.iterations)
              for plan in (first, second)]
    if (first.iterations < 1 or second.iterations != first.iterations
            or second.invert == first.invert
            or any(r.margins is None or r.empty or (
                r.larger_box is not None and mask is None) for r in routes)):
        return None
    one, two = (r.margins for r in routes)
    margins = Margins(tuple(map(max, one.lo, two.lo)),
                      tuple(map(max, one.hi, two.hi)), one.modes,
                      max(one.steps, two.steps), one.spans or two.spans)
    layout, dims, _ = _canvas_of(input.shape, margins, False,
                                 first.iterations, current_device())
    fill = first.border if first.invert else not first.border
    stored, core = filled_canvas(layout, np.uint8, 2 + int(fill))
    _write_bool(core.view(bool), input, first.invert)
    if mask is not None:
        kept = _write_bool(None, mask, False).view(np.uint8)
        np.bitwise_or(core, np.add(kept, kept, out=kept), out=core)
    result = _STEPS_ON_CANVAS(
        stored, dims, length=layout.length, pattern=first.pattern,
        origins=first.origins, invert=second.invert, once=False,
        odd=first.iterations % 2 == 1, converge=False, width=0,
        then=(second.pattern, second.origins))
    values = canvas_values(result, layout)
    if second.out_dtype != np.bool_:
        values = values.astype(second.out_dtype)
    return like_input(values, input)


def _write_bool(out: np.ndarray | None, x: Any, nonzero: bool
                ) -> np.ndarray:
    """``x != 0`` (``nonzero``) or ``x == 0`` of concrete input, by numpy,
    into ``out`` (a new array for None)."""
    x = np.asarray(x)
    if out is None:
        out = np.empty(x.shape, bool)
    if x.dtype == np.bool_:
        if nonzero:
            np.copyto(out, x)
        else:
            np.logical_not(x, out=out)
    else:
        (np.not_equal if nonzero else np.equal)(x, 0, out=out)
    return out


def _binary_by_nothing(input: Any, mask: Any, plan: BinaryPlan) -> Any:
    """`_binary` by a structure without a True sample, by numpy: a step
    reaches nothing, so every sample the mask lets change is False (before
    the erosion's complement), whatever the number of steps."""
    state = (np.zeros(input.shape, bool) if mask is None
             else _write_bool(None, input, plan.invert)
             & _write_bool(None, mask, False))
    values = state if plan.invert else ~state
    return like_input(values.astype(plan.out_dtype, copy=False), input)


def _symmetric_offsets(offsets: set, ndim: int) -> bool:
    """Whether the step only grows (the structure reads its centre) and
    connects samples both ways, within one sample along each axis: then
    the samples it reaches to convergence are whole features of the
    passable samples, labelled by `jaxndimage._labelling`."""
    return ((0,) * ndim in offsets
            and all(tuple(-k for k in q) in offsets for q in offsets)
            and all(abs(k) <= 1 for q in offsets for k in q))


def _connects_all(backward: tuple[tuple[int, ...], ...],
                  shape: tuple[int, ...]) -> bool:
    """Whether the offsets ``backward`` (and their opposites) connect every
    sample of an array of ``shape`` to every other: they hold a step along
    every axis longer than one sample."""
    return all(n == 1 or tuple(-(a == axis) for a in range(len(shape)))
               in backward for axis, n in enumerate(shape))


def _binary_by_labels(input: Any, mask: Any, plan: BinaryPlan,
                      backward: tuple[tuple[int, ...], ...]) -> Any:
    """`_binary` to convergence of concrete CPU input, for a structure of
    `_symmetric_offsets`: the passable samples (all, or the mask) labelled
    by the structure's connectivity, and the features that hold a sample
    one step reaches (a plain step, `_binary_once`, with the border past
    the edges) set whole; numpy on the host for the rest.  As the input's
    kind of array."""
    seeds = _write_bool(None, input, plan.invert)
    fill = plan.border if plan.invert else not plan.border
    if mask is None and _connects_all(backward, input.shape):
        # One feature, the whole array: reached where anything is, or
        # from outside the array.
        values = np.full(input.shape,
                         bool(seeds.any() or (fill and backward)))
        if not plan.invert:
            values = ~values
        return like_input(values.astype(plan.out_dtype, copy=False), input)
    reached = _binary_once(seeds, np.asarray(fill), pattern=plan.pattern,
                           origins=plan.origins, invert=True,
                           out_dtype=np.dtype(bool))
    passable = (np.ones(input.shape, bool) if mask is None
                else nonzero_mask(mask))
    labels, count = _label_runs(passable, backward,
                                label_index_dtype(input.size))
    labels = np.asarray(labels)
    touched = np.zeros(int(count) + 1, bool)
    touched[labels[np.asarray(reached) & passable]] = True
    touched[0] = False
    values = seeds | touched[labels]
    if not plan.invert:
        values = ~values
    return like_input(values.astype(plan.out_dtype, copy=False), input)


# --------------------------------------------------------------------------
# Binary shells
# --------------------------------------------------------------------------

def _concrete_bool(value: Any, name: str) -> np.ndarray:
    if isinstance(value, jax.core.Tracer):
        raise TypeError(
            f"{name}: the structuring element decides the shape of the "
            f"computation, so it must be concrete (a numpy array or a JAX "
            f"array outside jit/vmap), not traced")
    return np.asarray(value, dtype=bool)


def _check_iterations(iterations: Any) -> int:
    try:
        return operator.index(iterations)
    except TypeError as error:
        raise TypeError("iterations parameter should be an integer") from \
            error


def _reflected(structure: np.ndarray, origin: Sequence[int]
               ) -> tuple[np.ndarray, list[int]]:
    """SciPy's dilation structure: reflected, with the origin negated and
    shifted by one more along axes of even length."""
    structure = structure[(slice(None, None, -1),) * structure.ndim]
    origin = [convolution_origin(o, n)
              for o, n in zip(origin, structure.shape)]
    return structure, origin


def _default_structure(structure: Any, rank: int) -> Any:
    return generate_binary_structure(rank, 1) if structure is None \
        else structure


def _dilation_plan(structure: np.ndarray, origin: Sequence[int]
                   ) -> tuple[Pattern, tuple[int, ...]]:
    structure, origin = _reflected(structure, origin)
    return Pattern.of(structure), tuple(origin)


def _binary_output(output: Any, shape: tuple[int, ...]) -> np.dtype:
    """SciPy's rule: bool, unless an output array is given."""
    if isinstance(output, OutputArray):
        if output.dtype.kind == "c":
            raise TypeError("Complex output type not supported")
        return output_dtype(output, np.dtype(bool), shape=shape)
    return np.dtype(bool)


@dataclasses.dataclass(frozen=True)
class BinaryPlan(Plan):
    """``iterations`` binary erosions by ``pattern`` (a :class:`Pattern`
    over every axis, centred at ``shape[i] // 2 + origins[i]``) with
    ``border`` past the edges; of the complement, complemented, for
    ``invert`` (a dilation, whose pattern and origins are then already
    reflected).  ``iterations < 1``: until nothing changes.  ``masked``:
    only samples where the mask operand is nonzero change; with
    ``int8_mask_after_first``, after the first iteration only those where
    the mask cast to int8 is (SciPy's iterations after the first read it
    so: a mask of 0.5 or 256 stops them)."""

    pattern: Pattern
    origins: tuple[int, ...]
    iterations: int
    invert: bool
    border: bool
    masked: bool
    out_dtype: np.dtype
    int8_mask_after_first: bool = False

    empty_input_exits = True

    @property
    def depth(self) -> tuple[int, ...] | None:
        """None (no bounded reach) when iterated to convergence or
        masked (the mask must be seen whole)."""
        if self.iterations < 1 or self.masked:
            return None
        shape, _ = self.pattern
        return tuple(reach * self.iterations for reach in window_depth(
            self.ndim, range(self.ndim), shape, self.origins))


def _run_binary(plan: BinaryPlan, input: Array, mask: Array | None) -> Array:
    """The kernel of a :class:`BinaryPlan`."""
    if plan.int8_mask_after_first:
        once = dataclasses.replace(plan, iterations=1,
                                   int8_mask_after_first=False)
        rest = dataclasses.replace(
            plan, int8_mask_after_first=False,
            iterations=plan.iterations - 1 if plan.iterations > 1
            else plan.iterations)
        narrowed = (np.asarray(mask, np.int8) if isinstance(mask, np.ndarray)
                    else mask.astype(jnp.int8))
        return _run_binary(rest, _run_binary(once, input, mask), narrowed)
    options = dict(iterations=plan.iterations, invert=plan.invert,
                   border=plan.border, out_dtype=plan.out_dtype,
                   raster=algorithm("binary propagation") == "raster",
                   steps=algorithm("run scans"))
    if input.size == 0:
        if concrete_on_cpu(input):
            return like_input(np.zeros(input.shape, plan.out_dtype), input)
        return jnp.zeros(input.shape, plan.out_dtype)
    if input.ndim == 0:
        result = _binary(input[None], None if mask is None else mask[None],
                         pattern=Pattern.of(plan.pattern.array[None]),
                         origins=(0,), **options)
        return result[0]
    routes = _routes(input.ndim, plan.pattern, plan.origins, plan.iterations)
    if mask is None and routes.margins is not None and plan.iterations == 1:
        # One step: on a canvas (in bands for large arrays).
        return _binary_once(as_array(input), np.asarray(plan.border),
                            pattern=plan.pattern, origins=plan.origins,
                            invert=plan.invert, out_dtype=plan.out_dtype)
    if concrete_on_cpu(input) and (mask is None or concrete_on_cpu(mask)) \
            and (plan.iterations >= 1 or options["raster"]):
        # Concrete CPU input, and the CPU's algorithms (`_algorithms`).
        if routes.empty:
            return _binary_by_nothing(input, mask, plan)
        if plan.iterations < 1 and routes.labels is not None:
            return _binary_by_labels(input, mask, plan, routes.labels)
        if routes.margins is not None:
            return _binary_by_canvas(input, mask, plan, routes)
    return _binary(input, mask, pattern=plan.pattern, origins=plan.origins,
                   **options)


def _binary_erosion(input: Array, structure: Any, iterations: Any,
                    mask: Any, output: Any, border_value: Any, origin: Any,
                    invert: bool, axes: Any, reflect: bool = False,
                    brute_force: bool = False) -> Planned:
    """SciPy's ``_binary_erosion``, validated in its order; ``reflect``
    first turns ``structure``/``origin`` into the dilation's.  Without
    ``brute_force`` SciPy's iterations after the first read the mask cast
    to int8 (:func:`_narrowing_changes`)."""
    iterations = _check_iterations(iterations)
    if jnp.iscomplexobj(input):
        raise TypeError("Complex type not supported")
    ndim = input.ndim
    axes = check_axes(axes, ndim)
    structure = _concrete_bool(_default_structure(structure, len(axes)),
                               "structure")
    origin = normalize_sequence(origin, len(axes), "origin")
    if reflect:
        structure, origin = _reflected(structure, origin)
    if ndim > len(axes):
        structure = expand_footprint(structure, axes, ndim, name="structure")
    if structure.ndim != ndim:
        raise RuntimeError("structure and input must have same "
                           "dimensionality")
    if structure.size < 1:
        raise RuntimeError("structure must not be empty")
    if mask is not None:
        mask = as_array(mask)
        if mask.shape != input.shape:
            raise RuntimeError("mask and input must have equal sizes")
    origins = expand_origins(origin, axes, ndim)
    for o, n in zip(origins, structure.shape):
        if n // 2 + int(o) >= n:
            # SciPy's IndexError, reading the structure's centre.
            raise IndexError(f"origin: {o} places the centre past the "
                             f"structure's {n} elements along an axis")
    origins = tuple(check_origin(o, n) for o, n in zip(origins,
                                                        structure.shape))
    out = _binary_output(output, input.shape)
    plan = BinaryPlan(ndim=ndim, pattern=Pattern.of(structure),
                      origins=origins, iterations=iterations, invert=invert,
                      border=bool(border_value), masked=mask is not None,
                      out_dtype=out, int8_mask_after_first=(
                          mask is not None and iterations != 1
                          and not brute_force and _narrowing_changes(mask)))
    return Planned(plan, _run_binary, (input, mask))


def _narrowing_changes(mask: Any) -> bool:
    """Whether ``mask`` cast to int8 is zero where the mask is not (a
    fraction, a multiple of 256): read for concrete host masks, assumed
    for other masks of types wider than a byte."""
    dtype = np.dtype(mask.dtype)
    if dtype.kind == "b" or dtype.itemsize == 1 and dtype.kind in "iu":
        return False
    if not concrete_on_cpu(mask):
        return True
    host = np.asarray(mask)
    with np.errstate(invalid="ignore"):
        return bool(np.any((host != 0) & (host.astype(np.int8) == 0)))


@docfiller(operations="erosions", result="eroded")
@ndimage_function("input", "structure", "mask", planned=True)
def binary_erosion(input: ArrayLike, structure: Any = None,
                   iterations: int = 1, mask: Any = None, output: Any = None,
                   border_value: int = 0, origin: Any = 0,
                   brute_force: bool = False, *, axes: Any = None) -> Array:
    """Multidimensional binary erosion.

    A sample stays True where the structure, placed on it, covers only
    True samples of `input` (`border_value` past the edges).

    %(parameters_binary_erosion)s

    %(returns_binary_erosion)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import binary_erosion
    >>> a = np.zeros((5, 6), dtype=int)
    >>> a[1:4, 1:5] = 1
    >>> binary_erosion(a).astype(int)
    array([[0, 0, 0, 0, 0, 0],
           [0, 0, 0, 0, 0, 0],
           [0, 0, 1, 1, 0, 0],
           [0, 0, 0, 0, 0, 0],
           [0, 0, 0, 0, 0, 0]])
    """
    input = as_array(input)
    return _binary_erosion(input, structure, iterations, mask, output,
                           border_value, origin, False, axes,
                           brute_force=brute_force)


@docfiller(operations="dilations", result="dilated")
@ndimage_function("input", "structure", "mask", planned=True)
def binary_dilation(input: ArrayLike, structure: Any = None,
                    iterations: int = 1, mask: Any = None,
                    output: Any = None, border_value: int = 0,
                    origin: Any = 0, brute_force: bool = False, *,
                    axes: Any = None) -> Array:
    """Multidimensional binary dilation.

    A sample becomes True where the reflected structure, placed on it,
    meets a True sample of `input` (`border_value` past the edges).  As
    in SciPy, the origin of an even-sized structure is shifted by one so
    that dilation and erosion are adjoint.

    %(parameters_binary_erosion)s

    %(returns_binary_erosion)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import binary_dilation
    >>> a = np.zeros((5, 5))
    >>> a[2, 2] = 1
    >>> binary_dilation(a).astype(int)
    array([[0, 0, 0, 0, 0],
           [0, 0, 1, 0, 0],
           [0, 1, 1, 1, 0],
           [0, 0, 1, 0, 0],
           [0, 0, 0, 0, 0]])
    >>> binary_dilation(a, iterations=2).sum()
    np.int64(13)
    """
    input = as_array(input)
    return _binary_erosion(input, structure, iterations, mask, output,
                           border_value, origin, True, axes, reflect=True,
                           brute_force=brute_force)


def _stand_in(dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
    """A zero-strided array of ``shape`` and ``dtype``: what a shell plans
    the second step of a composition on (the first step's result, which
    the shell does not compute)."""
    return np.broadcast_to(np.zeros((), dtype), shape)


@dataclasses.dataclass(frozen=True)
class ChainPlan(Plan):
    """The plan ``second`` applied to the result of the plan ``first``
    (binary or grey opening and closing); the result is ``second``'s."""

    first: Plan
    second: Plan

    @property
    def depth(self) -> tuple[int | None, ...] | None:
        return chained_depth((self.first, self.second))

    @property
    def copies(self) -> bool:
        return self.first.copies and self.second.copies

    @property
    def out_dtype(self) -> np.dtype:
        """The dtype of the result: ``second``'s."""
        return self.second.out_dtype

    def refuses_float16(self, input: Any) -> bool:
        """Where either step refuses: a binary step's float16 input is
        the first's only, a grey step's result keeps the input's dtype
        and shape."""
        return (self.first.refuses_float16(input)
                or self.second.refuses_float16(input))

    @property
    def extends_edges(self) -> bool:
        """False: ``second`` extends ``first``'s result at the edges, not
        the input."""
        return False


def _run_binary_chain(plan: ChainPlan, input: Array, mask: Array | None
                      ) -> Array:
    """The kernel of a :class:`ChainPlan` of two binary plans: for
    concrete CPU input with a few iterations, on one canvas."""
    first, second = plan.first, plan.second
    if (first.iterations > 1 or mask is not None) and input.size \
            and input.ndim and first.border == second.border \
            and not first.int8_mask_after_first \
            and concrete_on_cpu(input) \
            and (mask is None or concrete_on_cpu(mask)):
        result = _binary_chain_by_canvas(input, mask, first, second)
        if result is not None:
            return result
    return _run_binary(second, _run_binary(first, input, mask), mask)


def _open_or_close(input: Array, structure: Any, iterations: Any,
                   output: Any, origin: Any, mask: Any, border_value: Any,
                   axes: Any, opening: bool, brute_force: bool) -> Planned:
    structure = _default_structure(structure,
                                   len(check_axes(axes, input.ndim)))
    first = _binary_erosion(input, structure, iterations, mask, None,
                            border_value, origin, not opening, axes,
                            reflect=not opening, brute_force=brute_force)
    second = _binary_erosion(_stand_in(first.plan.out_dtype, input.shape),
                             structure, iterations, mask, output,
                             border_value, origin, opening, axes,
                             reflect=opening, brute_force=brute_force)
    plan = ChainPlan(ndim=input.ndim, first=first.plan, second=second.plan)
    return Planned(plan, _run_binary_chain, first.operands)


def _binary_opening_or_closing(name: str, opening: bool,
                               **fields: str) -> Callable[..., Array]:
    """binary_opening or binary_closing, with SciPy's signature."""

    def operation(input: ArrayLike, structure: Any = None,
                  iterations: int = 1, output: Any = None, origin: Any = 0,
                  mask: Any = None, border_value: int = 0,
                  brute_force: bool = False, *, axes: Any = None) -> Array:
        return _open_or_close(as_array(input), structure, iterations, output,
                              origin, mask, border_value, axes, opening,
                              brute_force)

    return family_member(operation, name, "%(binary_opening_doc)s", "input",
                         "structure", "mask", planned=True, fields=fields)


binary_opening = _binary_opening_or_closing(
    "binary_opening", True, operation="opening", first="erosion",
    second="dilation",
    result="opened", effect="Removes objects smaller than the structure.",
    examples="%(examples_binary_opening)s")

binary_closing = _binary_opening_or_closing(
    "binary_closing", False, operation="closing", first="dilation",
    second="erosion",
    result="closed", effect="Fills holes smaller than the structure.",
    examples="%(examples_square_with_hole)s")


@dataclasses.dataclass(frozen=True)
class HitOrMissPlan(Plan):
    """True where the erosion ``hit`` of the input is, and the erosion
    ``miss`` of its complement is not; stored in ``out_dtype``."""

    hit: BinaryPlan
    miss: BinaryPlan
    out_dtype: np.dtype

    empty_input_exits = True

    @property
    def depth(self) -> tuple[int, ...]:
        return tuple(map(max, self.hit.depth, self.miss.depth))


def _run_hit_or_miss(plan: HitOrMissPlan, input: Array) -> Array:
    """The kernel of a :class:`HitOrMissPlan`."""
    hit = _run_binary(plan.hit, input, None)
    miss = _run_binary(plan.miss, input, None)
    if concrete_on_cpu(input):  # by numpy: nothing compiles per shape
        values = np.asarray(hit) & ~np.asarray(miss)
        return like_input(values.astype(plan.out_dtype, copy=False), input)
    return (hit & ~miss).astype(plan.out_dtype)


@docfiller
@ndimage_function("input", "structure1", "structure2", planned=True,
                  none_for_output_array=True)
def binary_hit_or_miss(input: ArrayLike, structure1: Any = None,
                       structure2: Any = None, output: Any = None,
                       origin1: Any = 0, origin2: Any = None, *,
                       axes: Any = None) -> Array:
    """Multidimensional binary hit-or-miss transform.

    True where `structure1` fits the True samples of `input` and
    `structure2` fits its False samples.

    Parameters
    ----------
    %(binary_input)s
    structure1 : array_like, optional
        The part that must hit the foreground; default: connectivity one.
    structure2 : array_like, optional
        The part that must miss the foreground; default: the complement
        of `structure1`.
    %(binary_output)s
    origin1 : int or sequence of int, optional
        Placement of `structure1`. Default is 0.
    origin2 : int or sequence of int, optional
        Placement of `structure2`; default: `origin1`.
    %(axes)s

    Returns
    -------
    binary_hit_or_miss : array of bool
        The hit-or-miss transform.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import binary_hit_or_miss
    >>> a = np.eye(5, dtype=int)
    >>> a[0, 4] = 1
    >>> corners = [[0, 0, 1], [0, 0, 0], [1, 0, 0]]
    >>> binary_hit_or_miss(a, structure1=np.eye(3),
    ...                    structure2=corners).astype(int)
    array([[0, 0, 0, 0, 0],
           [0, 1, 0, 0, 0],
           [0, 0, 1, 0, 0],
           [0, 0, 0, 1, 0],
           [0, 0, 0, 0, 0]])
    """
    input = as_array(input)
    num_axes = len(check_axes(axes, input.ndim))
    if structure1 is None:
        structure1 = generate_binary_structure(num_axes, 1)
    structure1 = _concrete_bool(structure1, "structure1")
    if structure2 is None:
        structure2 = np.logical_not(structure1)
    origin1 = normalize_sequence(origin1, num_axes, "origin1")
    origin2 = origin1 if origin2 is None else normalize_sequence(
        origin2, num_axes, "origin2")
    hit = _binary_erosion(input, structure1, 1, None, None, 0, origin1,
                          False, axes)
    miss = _binary_erosion(input, structure2, 1, None, None, 0, origin2,
                           True, axes)
    plan = HitOrMissPlan(ndim=input.ndim, hit=hit.plan, miss=miss.plan,
                         out_dtype=_binary_output(output, input.shape))
    return Planned(plan, _run_hit_or_miss, (input,))


@docfiller
@ndimage_function("input", "structure", "mask", planned=True)
def binary_propagation(input: ArrayLike, structure: Any = None,
                       mask: Any = None, output: Any = None,
                       border_value: int = 0, origin: Any = 0, *,
                       axes: Any = None) -> Array:
    """Multidimensional binary propagation of `input` inside `mask`.

    Repeated dilation until nothing changes (``binary_dilation`` with
    ``iterations=-1``), computed on device in a few rounds: every axis
    neighbour of the structure fills whole runs of the mask per round.

    Parameters
    ----------
    input : array_like
        Binary image of the seeds (non-zero is True).
    structure : array_like, optional
        Structuring element of the successive dilations; default:
        connectivity one.
    mask : array_like, optional
        Where `input` may propagate; default: everywhere.
    %(binary_output)s
    %(border_value)s
    %(binary_origin)s
    %(axes)s

    Returns
    -------
    binary_propagation : array of bool
        The samples of `mask` connected to `input`, and `input`.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import binary_propagation
    >>> mask = np.array([[1, 1, 0, 1], [0, 1, 0, 1], [0, 1, 0, 0]])
    >>> seed = np.zeros_like(mask)
    >>> seed[0, 0] = 1
    >>> binary_propagation(seed, mask=mask).astype(int)
    array([[1, 1, 0, 0],
           [0, 1, 0, 0],
           [0, 1, 0, 0]])
    """
    input = as_array(input)
    return _binary_erosion(input, structure, -1, mask, output, border_value,
                           origin, True, axes, reflect=True)


@dataclasses.dataclass(frozen=True)
class FillHolesPlan(Plan):
    """The complement of the background reached from outside the array,
    stored in ``out_dtype``: the background features (labelled through the
    symmetric ``3 ** ndim`` structure ``labels``, a :class:`Pattern`) that
    touch a point whose neighbour lies outside; or, where ``labels`` is
    None, what ``propagation`` (a :class:`BinaryPlan` to convergence
    inside the background, with True past the edges) reaches from an
    empty seed."""

    labels: Pattern | None
    propagation: BinaryPlan | None
    out_dtype: np.dtype

    @property
    def depth(self) -> None:
        """None: the reach is unbounded, a dask input is computed whole."""
        return None

    def refuses_float16(self, input: Any) -> bool:
        """SciPy fills the holes of any input's truth values, but its C
        dilation refuses a float16 output array (not an empty one)."""
        return self.out_dtype == np.float16 and input.size > 0


def _run_fill_holes(plan: FillHolesPlan, input: Array) -> Array:
    """The kernel of a :class:`FillHolesPlan`.  Concrete CPU input is
    combined by numpy on the host around the labelling or the propagation
    (an eager JAX operation would compile for every shape)."""
    if not concrete_on_cpu(input):
        input = to_jax(input)
    if plan.labels is not None:
        filled = _unreached_background(input, plan.labels.array)
    else:
        background = ~nonzero_mask(input)
        empty = (np.zeros if isinstance(background, np.ndarray)
                 else jnp.zeros)(input.shape, bool)
        filled = ~_run_binary(plan.propagation, empty, background)
    if concrete_on_cpu(input):
        return like_input(np.asarray(filled).astype(plan.out_dtype,
                                                    copy=False), input)
    return filled.astype(plan.out_dtype)


@docfiller
@ndimage_function("input", "structure", planned=True,
                  none_for_output_array=True)
def binary_fill_holes(input: ArrayLike, structure: Any = None,
                      output: Any = None, origin: Any = 0, *,
                      axes: Any = None) -> Array:
    """Fill the holes of binary objects.

    The background connected to the edges (through `structure`) is
    propagated from the border; what it does not reach is filled.

    Parameters
    ----------
    %(binary_input)s
    structure : array_like, optional
        Connectivity of the background; default: connectivity one.
    %(binary_output)s
    %(binary_origin)s
    %(axes)s

    Returns
    -------
    out : array of bool
        `input` with its holes filled.

    %(examples_square_with_hole)s
    """
    input = as_array(input)
    out = _binary_output(output, input.shape)
    labelled = None
    if algorithm("hole filling") == "labels":
        labelled = _connected_structure(input, structure, origin, axes)
    propagation = None
    if labelled is None:
        # The propagation of the border's background (where input is 0)
        # from no seeds, validated as SciPy does.
        background = _stand_in(np.dtype(bool), input.shape)
        propagation = _binary_erosion(background, structure, -1, background,
                                      None, 1, origin, True, axes,
                                      reflect=True).plan
    plan = FillHolesPlan(ndim=input.ndim, labels=None if labelled is None
                         else Pattern.of(labelled), propagation=propagation,
                         out_dtype=out)
    return Planned(plan, _run_fill_holes, (input,))


def _connected_structure(input: Array, structure: Any, origin: Any,
                         axes: Any) -> np.ndarray | None:
    """The structure, where propagating the border's background through it
    reaches exactly the background features (by that connectivity) that
    touch the border: a symmetric ``3 ** ndim`` structure with its centre
    set, no origin shift, every axis.  None otherwise (and for anything
    SciPy would refuse: the propagation validates it)."""
    ndim = input.ndim
    if ndim == 0 or input.size == 0 or isinstance(structure, jax.core.Tracer):
        return None
    if axes is not None and sorted(
            a % ndim if isinstance(a, int) else a
            for a in np.atleast_1d(axes).tolist()) != list(range(ndim)):
        return None
    if not all(isinstance(o, int | np.integer) and o == 0
               for o in np.atleast_1d(np.asarray(origin, dtype=object))):
        return None
    structure = (generate_binary_structure(ndim, 1) if structure is None
                 else np.asarray(structure))
    if structure.shape != (3,) * ndim or structure.dtype.kind == "c":
        return None
    structure = structure != 0
    if not structure[(1,) * ndim] or not np.array_equal(
            structure, structure[(slice(None, None, -1),) * ndim]):
        return None
    return structure


def _unreached_background(input: Array, structure: np.ndarray) -> Array:
    """Everything but the background connected through ``structure`` to a
    point whose neighbour lies outside the array: the background features,
    labelled, that touch those points.  For concrete CPU input the labels
    are looked up by numpy on the host."""
    background = ~nonzero_mask(input)
    index_dtype = label_index_dtype(input.size)
    labels, count = _label_runs(background, _backward_offsets(structure),
                                index_dtype)
    # The points whose neighbour through the structure is outside: the
    # first and last planes along every axis the structure reaches along.
    reaching = [axis for axis in range(input.ndim)
                if np.take(structure, [0, 2], axis=axis).any()]
    if concrete_on_cpu(input):
        labels = np.asarray(labels)
        touching = np.zeros(int(count) + 1, bool)
        for axis in reaching:
            touching[np.take(labels, [0, -1], axis=axis)] = True
        touching[0] = False
        return ~touching[labels]
    edge = np.zeros(input.shape, bool)
    for axis in reaching:
        index = [slice(None)] * input.ndim
        index[axis] = [0, -1]
        edge[tuple(index)] = True
    return _not_reached_from(labels, np.flatnonzero(edge).astype(index_dtype))


@cached_jit()
def _not_reached_from(labels: Array, border: Array) -> Array:
    """The points whose label is 0 or not that of a ``border`` point."""
    size = labels.size
    touching = jnp.zeros(size + 1, bool).at[labels.ravel()[border]].set(True)
    return ~touching.at[0].set(False)[labels]


# --------------------------------------------------------------------------
# Grey morphology
# --------------------------------------------------------------------------

def _reversed(value: Any) -> Any:
    if value is None:
        return None
    value = np.asarray(value)
    return value[(slice(None, None, -1),) * value.ndim]


@dataclasses.dataclass(frozen=True)
class StructuredPlan(Plan):
    """A grey erosion (``minimum``: the minimum of the input minus the
    structure) or dilation (the maximum of the input plus the reflected
    structure) by a non-flat structure over ``axes``, the structure
    operand's values (as ``weights_dtype``) taken at the True samples of
    ``pattern`` (a :class:`Pattern` over every axis, centred at
    ``shape[i] // 2 + origins[i]``), every axis extended by ``mode``.  In
    SciPy's C arithmetic, stored in ``out_dtype`` (bytes for a boolean
    output); ``boolean``: returned as ``result != 0``."""

    pattern: Pattern
    origins: tuple[int, ...]
    mode: str
    minimum: bool
    axes: tuple[int, ...]
    weights_dtype: np.dtype
    out_dtype: np.dtype
    boolean: bool

    @property
    def depth(self) -> tuple[int, ...]:
        shape, _ = self.pattern
        return window_depth(self.ndim, range(self.ndim), shape, self.origins)


#: What one grey erosion or dilation is planned as: a min/max plan of
#: `jaxndimage._rank` for a flat window, else a StructuredPlan.
GreyPlan = ExtremePlan | FootprintPlan | StructuredPlan


def _result_dtype(plan: GreyPlan) -> np.dtype:
    """The dtype of what `_run_grey` returns for ``plan``."""
    if isinstance(plan, StructuredPlan) and plan.boolean:
        return np.dtype(bool)
    return plan.out_dtype


def _run_structured(plan: StructuredPlan, input: Array, structure: Any,
                    cval: Any) -> Array:
    """The kernel of a :class:`StructuredPlan`.  A structure that is not a
    JAX array becomes the weights by numpy (an eager JAX operation would
    compile)."""
    if input.size == 0:
        zeros = np.zeros if concrete_on_cpu(input) else jnp.zeros
        return zeros(input.shape, _result_dtype(plan))
    xp = jnp if isinstance(structure, jax.Array) else np
    structure = xp.asarray(structure, dtype=plan.weights_dtype)
    if not plan.minimum:  # a dilation adds the reflected structure
        structure = structure[(slice(None, None, -1),) * structure.ndim]
    if len(plan.axes) != plan.ndim:
        structure = xp.expand_dims(structure, tuple(
            ax for ax in range(plan.ndim) if ax not in plan.axes))
    weights = structure[plan.pattern.array]
    result = _structured(as_array(input),
                         -weights if plan.minimum else weights, cval,
                         pattern=plan.pattern, origins=plan.origins,
                         mode=plan.mode, minimum=plan.minimum,
                         out_dtype=plan.out_dtype)
    if not plan.boolean:
        return result
    return like_input(np.asarray(result) != 0, input) if concrete_on_cpu(
        input) else result != 0


def _run_grey(plan: GreyPlan, input: Array, structure: Any, cval: Any
              ) -> Array:
    """The kernel of one grey erosion or dilation: `jaxndimage._rank`'s
    minimum/maximum filter for a flat window, else `_run_structured`."""
    if isinstance(plan, StructuredPlan):
        return _run_structured(plan, input, structure, cval)
    if isinstance(plan, ExtremePlan):
        return _run_extreme(plan, input, cval)
    return _run_footprint(plan, input, cval)


def _grey(input: Array, size: Any, footprint: Any, structure: Any,
          output: Any, mode: Any, cval: Any, origin: Any, axes: Any,
          minimum: bool, raw: bool = False, as_bool: bool = False
          ) -> tuple[GreyPlan, Any]:
    """The plan of a grey erosion or dilation, and the structure operand
    of `_run_grey` (None for a flat window).  With a structure, boolean
    results are the bytes SciPy's C code stores (``raw``: uint8, not 0/1),
    which the second pass of an opening or a top-hat reads back
    (``as_bool``)."""
    if size is None and footprint is None and structure is None:
        raise ValueError("size, footprint, or structure must be specified")
    if not minimum:
        footprint = _reversed(footprint)
        rank = len(check_axes(axes, input.ndim))
        origin = normalize_sequence(origin, rank, "origin")
        for ii in range(len(origin)):
            if footprint is not None:
                n = footprint.shape[ii]
            elif structure is not None:
                n = np.shape(structure)[ii]
            elif np.isscalar(size):
                n = size
            else:
                n = size[ii]
            origin[ii] = convolution_origin(origin[ii], n)
    if structure is None:
        return _min_or_max_filter(input, size, footprint, output, mode, cval,
                                  origin, minimum, axes).plan, None
    return _structured_plan(input, footprint, structure, output, mode,
                            origin, axes, minimum, raw, as_bool)


def _structured_plan(input: Array, footprint: Any, structure: Any,
                     output: Any, mode: Any, origin: Any, axes: Any,
                     minimum: bool, raw: bool, as_bool: bool
                     ) -> tuple[StructuredPlan, Any]:
    """SciPy's ``_min_or_max_filter`` with a non-flat structure: the plan,
    and the structure as a numpy array of the weights' dtype (a JAX
    structure as it is)."""
    weights_dtype = _structure_dtype()
    if not isinstance(structure, jax.Array):
        structure = np.asarray(structure, dtype=weights_dtype)
    if footprint is None:
        footprint = np.ones(structure.shape, bool)
    else:
        footprint = np.asarray(footprint, dtype=bool)
    if jnp.iscomplexobj(input):
        raise TypeError("Complex type not supported")
    out = output_dtype(output, np.dtype(bool) if as_bool else input.dtype,
                       shape=input.shape)
    axes = check_axes(axes, input.ndim)
    footprint = expand_footprint(footprint, axes, input.ndim)
    origins = check_footprint_origins(footprint, origin, axes, input.ndim)
    if structure.ndim != len(axes):
        raise RuntimeError("structure array has incorrect shape")
    if not isinstance(mode, str) and isinstance(mode, Iterable):
        raise RuntimeError("A sequence of modes is not supported for "
                           "non-separable footprints")
    check_mode(mode)
    plan = StructuredPlan(
        ndim=input.ndim, pattern=Pattern.of(footprint), origins=origins,
        mode=mode, minimum=minimum, axes=tuple(axes),
        weights_dtype=weights_dtype,
        out_dtype=np.dtype(np.uint8) if out == np.bool_ else out,
        boolean=out == np.bool_ and not raw)
    return plan, structure


def _structured_margins(ndim: int, *, pattern: Pattern,
                        origins: tuple[int, ...], mode: str,
                        **_) -> Margins:
    """How far `_structured` reads: the structure's window, in one step."""
    return window_margins(pattern.array.shape, origins, (mode,) * ndim)


@shape_generic(("pattern", "origins", "mode", "minimum", "out_dtype"),
               _structured_margins, mode_args=("mode",))
def _structured(x: Array, weights: Array, cval: Any, *, grid: Any,
                pattern: Pattern, origins: tuple[int, ...], mode: str,
                minimum: bool, out_dtype: np.dtype) -> Array:
    """Extreme of ``x + weights`` over the footprint, in SciPy's C
    arithmetic: the first tap in double precision, the others in the input
    type (integers wrap around, booleans are bytes, float32 rounds).  On
    any grid: compiled per canvas bucket for concrete CPU input."""
    footprint = pattern.array
    work = np.dtype(np.uint8) if x.dtype == np.bool_ else x.dtype
    compute = weights.dtype
    shape = x.shape
    x = x.astype(work)
    padded = pad_for_footprint(grid, x, footprint.shape, origins,
                               (mode,) * footprint.ndim,
                               cast_like_c(jnp.asarray(cval), work))
    taps = [grid.crop(tap, shape)
            for tap in footprint_taps(grid, padded, footprint)]
    op = jnp.minimum if minimum else jnp.maximum
    result = taps[0].astype(compute) + weights[0]
    for k in range(1, len(taps)):
        if work == compute:
            value = taps[k] + weights[k]
        else:
            value = (taps[k] + cast_like_c(weights[k], work)).astype(work)
        result = op(result, value.astype(compute))
    return cast_like_c(result, out_dtype)


def _structure_dtype() -> np.dtype:
    return np.dtype(jax.dtypes.canonicalize_dtype(np.float64))


def _grey_operation(name: str, shell: Callable[..., Planned], *,
                    doc: str = "%(grey_combination_doc)s",
                    **fields: str) -> Callable[..., Array]:
    """The public greyscale function ``name``, with the signature SciPy
    gives all eight: ``shell(input, size, footprint, structure, output,
    mode, cval, origin, axes)`` plans it; documented by ``doc`` with the
    `docfiller` ``fields`` (by default, the docstring of the operations
    that combine an erosion and a dilation)."""

    def operation(input: ArrayLike, size: Any = None, footprint: Any = None,
                  structure: Any = None, output: Any = None,
                  mode: str = "reflect", cval: Any = 0.0, origin: Any = 0, *,
                  axes: Any = None) -> Array:
        return shell(as_array(input), size, footprint, structure, output,
                     mode, cval, origin, axes)

    return family_member(operation, name, doc, "input", "footprint",
                         "structure", planned=True, fields=fields)


def _erosion_or_dilation(input: Array, size: Any, footprint: Any,
                         structure: Any, output: Any, mode: Any, cval: Any,
                         origin: Any, axes: Any, minimum: bool) -> Planned:
    plan, structure = _grey(input, size, footprint, structure, output, mode,
                            cval, origin, axes, minimum)
    return Planned(plan, _run_grey, (input, structure, cval))


grey_erosion = _grey_operation(
    "grey_erosion", functools.partial(_erosion_or_dilation, minimum=True),
    doc="%(grey_erosion_doc)s",
    use="subtracted", result="eroded image", summary="""\
Greyscale erosion: the minimum over a structuring element.

``min(input[x + y] - structure[y])`` over the footprint; a flat one is
`minimum_filter`.""", example="""\
array([[5, 3, 3],
       [1, 1, 3],
       [1, 1, 2]])""")

grey_dilation = _grey_operation(
    "grey_dilation", functools.partial(_erosion_or_dilation, minimum=False),
    doc="%(grey_erosion_doc)s",
    use="added", result="dilated image", summary="""\
Greyscale dilation: the maximum over the reflected structuring element.

``max(input[x - y] + structure[y])`` over the footprint; as in SciPy the
origin of an even-sized element is shifted by one, so that dilation and
erosion are adjoint.""", example="""\
array([[9, 9, 8],
       [9, 9, 6],
       [7, 6, 6]])""")


def _warn_size_ignored(size: Any, footprint: Any) -> None:
    if size is not None and footprint is not None:
        warnings.warn("ignoring size because footprint is set", UserWarning,
                      stacklevel=4)


def _check_subtract(a: np.dtype, b: np.dtype) -> None:
    """numpy's TypeError for ``numpy.subtract`` of two boolean arrays (the
    gradient and Laplace of boolean input reach it in SciPy)."""
    if a == np.bool_ and b == np.bool_:
        raise TypeError(
            "numpy boolean subtract, the `-` operator, is not supported, "
            "use the bitwise_xor, the `^` operator, or the logical_xor "
            "function instead.")


def _check_stored(op: str, a: np.dtype, b: np.dtype, out: np.dtype) -> None:
    """numpy's own error (a TypeError) where ``numpy.<op>(a, b, out=<out
    array>)`` would store its result under the same-kind rule it refuses
    (SciPy's gradient, Laplace and top-hats write into the output this
    way): the operation on empty arrays raises it."""
    try:
        getattr(np, op)(np.zeros(0, a), np.zeros(0, b),
                        out=np.zeros(0, out))
    except TypeError as error:
        error.add_note("output: its dtype cannot hold the result")
        raise


def _numpy_op(op: str, a: Array, b: Array, dtype: np.dtype) -> Array:
    """``numpy.<op>(a, b, out=<array of dtype>)``: computed in the promoted
    dtype, stored in ``dtype`` (integers wrap around); by numpy itself for
    concrete CPU arrays (:func:`pointwise`)."""
    return pointwise(_combine, a, b, op=op, dtype=np.dtype(dtype))


def _combine(a: Array, b: Array, *, op: str, dtype: np.dtype) -> Array:
    common = np.result_type(a.dtype, b.dtype)
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
        common = jax.dtypes.canonicalize_dtype(common)
    a, b = a.astype(common), b.astype(common)
    if op == "add":
        value = (a | b) if common == np.bool_ else a + b
    elif op == "xor":
        value = a ^ b
    else:
        value = a - b
    return cast_like_c(value, dtype)


def _array_only(output: Any) -> Any:
    """SciPy's gradient and Laplace write into an output array, but ignore
    an output dtype (the result has the input's)."""
    return output if isinstance(output, OutputArray) else None


def _bytes_of_bool(input: Array, structure: Any) -> bool:
    """Whether a first pass over ``input`` returned boolean bytes."""
    return structure is not None and input.dtype == np.bool_


def _run_grey_chain(plan: ChainPlan, input: Array, structure: Any,
                    cval: Any) -> Array:
    """The kernel of a :class:`ChainPlan` of two grey plans."""
    first = _run_grey(plan.first, input, structure, cval)
    return _run_grey(plan.second, first, structure, cval)


def _two_sided(input: Array, size: Any, footprint: Any, structure: Any,
               output: Any, mode: Any, cval: Any, origin: Any, axes: Any,
               first_minimum: bool) -> Planned:
    """Opening (erosion first) or closing (dilation first)."""
    _warn_size_ignored(size, footprint)
    first, weights = _grey(input, size, footprint, structure, None, mode,
                           cval, origin, axes, first_minimum, raw=True)
    second, _ = _grey(_stand_in(_result_dtype(first), input.shape), size,
                      footprint, structure, output, mode, cval, origin, axes,
                      not first_minimum,
                      as_bool=_bytes_of_bool(input, structure))
    plan = ChainPlan(ndim=input.ndim, first=first, second=second)
    return Planned(plan, _run_grey_chain, (input, weights, cval))


grey_opening = _grey_operation(
    "grey_opening", functools.partial(_two_sided, first_minimum=True),
    summary="Greyscale opening: the dilation of the erosion.",
    result="opened image", call="np.array([1, 5, 1, 1, 6, 7, 6]), size=3",
    example="array([1, 1, 1, 1, 6, 6, 6])")

grey_closing = _grey_operation(
    "grey_closing", functools.partial(_two_sided, first_minimum=False),
    summary="Greyscale closing: the erosion of the dilation.",
    result="closed image", call="np.array([6, 1, 6, 6, 1, 0, 1]), size=3",
    example="array([6, 6, 6, 6, 1, 1, 1])")


@dataclasses.dataclass(frozen=True)
class GradientPlan(Plan):
    """The grey ``dilation`` of the input minus its ``erosion`` (both
    plans of the same input); for ``laplace``, their sum minus twice the
    input.  Each step as numpy computes it, stored in the erosion's
    dtype."""

    dilation: GreyPlan
    erosion: GreyPlan
    laplace: bool

    @property
    def depth(self) -> tuple[int | None, ...] | None:
        return widest_depth((self.dilation, self.erosion))

    @property
    def copies(self) -> bool:
        """Both a copy (SciPy then combines them in numpy)."""
        return self.dilation.copies and self.erosion.copies

    @property
    def out_dtype(self) -> np.dtype:
        """The dtype SciPy's C layer writes: the erosion's (an output
        array's; without one SciPy ignores a requested dtype)."""
        return self.erosion.out_dtype


def _run_gradient(plan: GradientPlan, input: Array, structure: Any,
                  cval: Any) -> Array:
    """The kernel of a :class:`GradientPlan`."""
    dilated = _run_grey(plan.dilation, input, structure, cval)
    eroded = _run_grey(plan.erosion, input, structure, cval)
    dtype = eroded.dtype
    if not plan.laplace:
        return _numpy_op("subtract", dilated, eroded, dtype)
    result = _numpy_op("add", dilated, eroded, dtype)
    result = _numpy_op("subtract", result, input, dtype)
    return _numpy_op("subtract", result, input, dtype)


def _gradient_plan(input: Array, size: Any, footprint: Any, structure: Any,
                   output: Any, mode: Any, cval: Any, origin: Any,
                   axes: Any, laplace: bool) -> Planned:
    """The dilation, and the erosion in the dtype of an `output` array,
    combined as a gradient or a Laplace."""
    dilation, weights = _grey(input, size, footprint, structure, None, mode,
                              cval, origin, axes, False)
    erosion, _ = _grey(input, size, footprint, structure,
                       _array_only(output), mode, cval, origin, axes, True)
    dtype = _result_dtype(erosion)
    if laplace:
        _check_subtract(dtype, input.dtype)
    else:
        _check_subtract(_result_dtype(dilation), dtype)
    if isinstance(output, OutputArray):  # numpy's ufuncs store into it
        if laplace:
            _check_stored("add", _result_dtype(dilation), dtype, dtype)
            _check_stored("subtract", dtype, input.dtype, dtype)
        else:
            _check_stored("subtract", _result_dtype(dilation), dtype, dtype)
    plan = GradientPlan(ndim=input.ndim, dilation=dilation, erosion=erosion,
                        laplace=laplace)
    return Planned(plan, _run_gradient, (input, weights, cval))


morphological_gradient = _grey_operation(
    "morphological_gradient",
    functools.partial(_gradient_plan, laplace=False), result="gradient",
    call="np.array([0, 0, 3, 3, 3, 0]), size=3",
    example="array([0, 3, 3, 0, 3, 3])", summary="""\
Morphological gradient: dilation minus erosion.

%(combination_dtype)s""")

morphological_laplace = _grey_operation(
    "morphological_laplace",
    functools.partial(_gradient_plan, laplace=True), result="Laplace",
    call="np.array([0, 0, 3, 3, 3, 0]), size=3",
    example="array([ 0,  3, -3,  0, -3,  3])", summary="""\
Morphological Laplace: dilation plus erosion minus twice the input.

%(combination_dtype)s""")


@dataclasses.dataclass(frozen=True)
class TophatPlan(Plan):
    """The input minus its opening (``white``), or its closing minus the
    input: ``chain``, a :class:`ChainPlan` of grey plans, combined with
    the input in ``chain``'s result dtype, by XOR for ``xor`` (boolean
    input and result)."""

    chain: ChainPlan
    white: bool
    xor: bool

    @property
    def depth(self) -> tuple[int | None, ...] | None:
        return self.chain.depth

    @property
    def copies(self) -> bool:
        return self.chain.copies

    @property
    def out_dtype(self) -> np.dtype:
        """The dtype of the result: ``chain``'s."""
        return self.chain.out_dtype

    def refuses_float16(self, input: Any) -> bool:
        return self.chain.refuses_float16(input)

    @property
    def extends_edges(self) -> bool:
        return self.chain.extends_edges


def _run_tophat(plan: TophatPlan, input: Array, structure: Any, cval: Any
                ) -> Array:
    """The kernel of a :class:`TophatPlan`."""
    second = _run_grey_chain(plan.chain, input, structure, cval)
    if plan.xor:
        return _numpy_op("xor", input, second, np.dtype(bool))
    if plan.white:
        return _numpy_op("subtract", input, second, second.dtype)
    return _numpy_op("subtract", second, input, second.dtype)


def _tophat(input: Array, size: Any, footprint: Any, structure: Any,
            output: Any, mode: Any, cval: Any, origin: Any, axes: Any,
            white: bool) -> Planned:
    """The input minus its opening (white) or the closing minus the input."""
    chain = _two_sided(input, size, footprint, structure, output, mode,
                       cval, origin, axes, first_minimum=white)
    second = _result_dtype(chain.plan.second)
    xor = input.dtype == np.bool_ and second == np.bool_
    if not xor:  # numpy's ufunc stores into the closing's (opening's) array
        _check_stored("subtract", input.dtype, second, second)
    plan = TophatPlan(ndim=input.ndim, chain=chain.plan, white=white,
                      xor=xor)
    return Planned(plan, _run_tophat, chain.operands)


white_tophat = _grey_operation(
    "white_tophat", functools.partial(_tophat, white=True),
    result="white top-hat", call="np.array([2, 2, 7, 2, 2, 3]), size=2",
    example="array([0, 0, 5, 0, 0, 1])", summary="""\
White top-hat: the input minus its grey opening.

%(tophat_dtype)s""")

black_tophat = _grey_operation(
    "black_tophat", functools.partial(_tophat, white=False),
    result="black top-hat", call="np.array([7, 7, 2, 7, 7, 6]), size=2",
    example="array([0, 0, 5, 0, 0, 0])", summary="""\
Black top-hat: the grey closing of the input, minus the input.

%(tophat_dtype)s""")
