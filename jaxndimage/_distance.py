"""Distance transforms: brute force, chamfer and exact Euclidean.

The results, feature indices included, are SciPy's: for the same input the
same distances and, where several background elements are equally near, the
same one of them.

Euclidean (`distance_transform_edt`)
    SciPy's C code computes the feature transform one axis at a time (axis 0
    first): along each line it keeps the sites whose Voronoi cell meets the
    line (Maurer's stack algorithm) and then walks the line.  In exact
    arithmetic that picks, for every element, the nearest background element
    and among equally near ones the one with the smallest coordinate along
    the last axis, then along the one before it, and so on.  The kernel here
    does the same passes:

    * axis 0: the nearest background element of each column, by one forward
      and one backward scan;
    * every further axis: Maurer's stack, built by one ``lax.scan`` over the
      positions of the line with all lines of the array in the vector lanes
      (each site is pushed once and popped at most once, by a small
      ``while_loop``).  A site that stays on the stack is one no later site
      popped, which a reverse running minimum of the "site below" pointers
      tells; the positions where the walk moves from one stacked site to the
      next follow from the two sites' parabolas (checked with SciPy's own
      floating-point comparison).  A reverse scan tabulates, per site, where
      the walk reaches the next kept site and the last site reached at that
      same position, and a final scan walks all lines at once, one position
      (and one table lookup) per step.

    Products are kept out of XLA's fused multiply-adds (see `_rounded`), so
    with any sampling the comparisons, and so the ties, round as SciPy's C
    code rounds.

    That scan is many small sequential steps, which a GPU or TPU runs
    slowly; there (the "shifts" of `_algorithms`) the passes along axes 1,
    2, ... instead compare every element with the elements ``s`` away
    along the axis, ``s = 1, 2, ...``: the one at ``-s`` wins when as near
    as the best so far, the one at ``+s`` when nearer, and the loop stops
    once ``(s * sampling) ** 2`` exceeds the largest best distance in the
    array, as no farther element can then be as near.  In exact arithmetic
    (any input without sampling, where the sums are computed in int32 when
    they fit, or a sampling of values like 0.5, 1.5 or 2) that is the
    stack's choice, ties included.  With a sampling whose products round,
    the two can pick different ones of two elements equally near to within
    rounding (the stack drops sites by a test that rounds otherwise): the
    indices differ there, the distances agree to rounding.

    Distances are then computed from the features as SciPy computes them
    (``sqrt(sum(((feature - index) * sampling) ** 2))``, summed in axis
    order).

Chamfer (`distance_transform_cdt`)
    SciPy runs two raster passes over the array (the second on the reversed
    array), each replacing an element by one more than the smallest value
    among its neighbours that come earlier in raster order (the first half
    of the structure), the first such neighbour in structure order winning
    ties, the element's own value winning over all.  For the 'chessboard' and
    'taxicab' structures the result is the exact chessboard (L-infinity) or
    taxicab (L1) distance, computed separably here: taxicab by a forward and
    a backward scan along each axis; chessboard as the minimum over the axes
    of the distance within the double cone around that axis (scans along the
    axis, each step a 3-wide minimum over the other axes).  With
    ``return_indices`` or any other structure, the raster passes themselves
    run, as nested scans over the axes with the last axis vectorised: along
    a line the pass is a running minimum of ``value - position``.

Brute force (`distance_transform_bf`)
    As SciPy: every element against every background element next to the
    foreground; of equally near ones the last in raster order wins.  The
    list of border elements is found on the host for concrete input (padded
    to a power of two); traced input compares with every element.  A CPU
    compares with one candidate per step of a scan, other devices with a
    block of them (the ``"brute-force distance"`` row of `_algorithms`).

Concrete input on a CPU: the host's shifts
    The Euclidean transform without sampling (or a sampling of ones) of
    concrete input on a CPU runs the accelerators' shifts in numpy
    (:func:`_edt_host_shifts`): integer squared distances, so SciPy's
    distances and features exactly, and nothing compiled.  A shift costs
    a few passes over the array, so they serve arrays whose features lie
    within `_MOST_HOST_SHIFTS` elements (noise, small blobs, thin shapes);
    a probe of one line in `_PROBE_STRIDE` gives other arrays, for a few
    percent of the transform's time, to the routes below.

Concrete input on a CPU: flat canvases
    XLA compiles a program per input shape, and each transform runs
    several (the Euclidean one a program per stage and per transpose), so
    a script that goes through a folder of images of many sizes would
    compile them again for every image.  A call of concrete input on a CPU
    (numpy, or a JAX array on one CPU device) whose plan, shape and dtype
    this process has not met runs instead on *flat canvases*: the array
    laid out flat in a buffer of one of a few bucket lengths
    (:func:`_canvas.bucket_length`), its shape a traced value, every loop
    running a traced number of steps.  Programs compile per bucket, lane
    width (four, by the number of lines; see `_LANES`) and configuration,
    not per shape.  They compute what the exact-shape kernels compute, in
    the same arithmetic, so the results are SciPy's, ties included:

    * Euclidean: a program per axis.  The pass along axis ``a`` works in
      *layout a* (axis ``a`` moved to the front, the other axes flattened
      into lines), on blocks of lines, with the stack, crossings and walk
      of :func:`_stack_pass` and :func:`_walk_pass`; it reads the previous
      pass's results from layout ``a - 1`` by index, so no array is
      transposed.  Features are kept as offsets (an element's feature
      less its coordinates), which need no coordinates to give the
      squared distance across a line; the last pass writes the distances
      and features in the array's own layout.  An array without
      background gets SciPy's result from the host.
    * Chamfer: SciPy's two raster passes themselves, row by row in chunks
      of lanes, each chunk reading its neighbours in earlier rows from
      what is written, the pass along the row carried from chunk to chunk.
    * Brute force: every element against the border elements, found on
      the host, in lists of a few lengths.

    The flat kernels run slower than the exact-shape ones (a step of fixed
    lanes, loops over blocks), so a plan on a shape whose flat runs have
    cost about what compiling its own exact-shape kernels would
    (`EXACT_AFTER_S`) compiles them and runs them from then on: a shape met
    once compiles nothing, a shape met often compiles what it always did,
    once it pays.  Traced input (inside a user's ``jit``, ``vmap``
    or ``grad``, a traced sampling included), arrays on accelerators and
    calls under ``jax.disable_jit()`` run the exact-shape kernels.

Common to the three
    ``distances=``/``indices=`` are written in place when they are numpy
    arrays and ignored otherwise, as SciPy does.  A dask input is computed
    whole (a distance reaches across the whole array) and the results come
    back as dask arrays.  A chamfer structure whose rank differs from the
    input's raises RuntimeError (SciPy reads past it and returns undefined
    values).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage import _distributed
from jaxndimage._algorithms import algorithm
from jaxndimage._cache import SecondsSpent, cached_jit
from jaxndimage._canvas import (
    bucket_length,
    concrete_on_cpu,
    flat_position,
    like_input,
    nonzero_mask,
)
from jaxndimage._dispatch import as_array, ndimage_function, to_jax
from jaxndimage._docstrings import docfiller
from jaxndimage._plans import Plan, Planned
from jaxndimage._structures import generate_binary_structure
from jaxndimage._support import aligned_empty, normalize_sequence, stacked
from jaxndimage._typing import Array, ArrayLike

__all__ = [
    "distance_transform_bf",
    "distance_transform_cdt",
    "distance_transform_edt",
]


#: "Not reached" in the chamfer kernels; far above any distance, and far
#: enough below 2**31 that adding a line length cannot overflow.
_FAR = 2 ** 30


# --------------------------------------------------------------------------
# Argument checks shared by the three functions (SciPy's messages)
# --------------------------------------------------------------------------

def _check_returns(distances: Any, indices: Any, return_distances: bool,
                   return_indices: bool) -> tuple[bool, bool]:
    """SciPy's ``_distance_tranform_arg_check``; returns which output
    arrays are written in place (numpy arrays only, as in SciPy)."""
    dt_inplace = isinstance(distances, np.ndarray)
    ft_inplace = isinstance(indices, np.ndarray)
    messages = []
    if not return_distances and not return_indices:
        messages.append(
            "at least one of return_distances/return_indices must be True")
    if dt_inplace and not return_distances:
        messages.append(
            "return_distances must be True if distances is supplied")
    if ft_inplace and not return_indices:
        messages.append("return_indices must be True if indices is supplied")
    if messages:
        raise RuntimeError(", ".join(messages))
    return dt_inplace, ft_inplace


def _check_concrete(input: Array, dt_inplace: bool, ft_inplace: bool) -> None:
    if (dt_inplace or ft_inplace) and isinstance(input, jax.core.Tracer):
        raise TypeError(
            "distances/indices: numpy output arrays cannot be written inside "
            "jit/vmap/grad; omit them and use the returned arrays")


def _check_indices(indices: np.ndarray, shape: tuple[int, ...],
                   error: type[Exception], shape_first: bool = False) -> None:
    """SciPy's checks of an ``indices=`` array: int32, of shape
    ``(ndim,) + shape``; in SciPy's order for each function (the Euclidean
    transform checks the shape first) and with its exception type."""
    checks = [(indices.dtype.type != np.int32, "indices array must be int32"),
              (indices.shape != (len(shape),) + shape,
               "indices array has wrong shape")]
    for failed, message in checks[::-1] if shape_first else checks:
        if failed:
            raise error(message)


def _sampling(sampling: Any, ndim: int) -> tuple | None:
    """Per-axis sampling, checked: one value per axis (None stays None)."""
    if sampling is None:
        return None
    return tuple(normalize_sequence(sampling, ndim, "sampling"))


def _sampling_array(values: tuple | None, dtype: np.dtype) -> Array | None:
    """The values of :func:`_sampling` as a float array (None stays
    None)."""
    if values is None:
        return None
    return stacked(values, dtype)


def _results(dt: Array | None, ft: Array | None, distances: Any,
             indices: Any, return_distances: bool, return_indices: bool
             ) -> Any:
    """Write the requested results into the numpy arrays given for them
    and return the other requested ones, as SciPy does."""
    returned = []
    for value, out, wanted in ((dt, distances, return_distances),
                               (ft, indices, return_indices)):
        if not wanted:
            continue
        if isinstance(out, np.ndarray):
            np.copyto(out, np.asarray(value), casting="unsafe")
        else:
            returned.append(value)
    if len(returned) == 2:
        return tuple(returned)
    return returned[0] if returned else None


@dataclasses.dataclass(frozen=True)
class DistancePlan(Plan):
    """Base of the distance transforms' plans: which results are wanted
    (written into the ``distances``/``indices`` operands where those are
    numpy arrays, else returned).  A distance reaches across the whole
    array, so there is no block-wise form (depth None: a dask input is
    computed whole)."""

    return_distances: bool
    return_indices: bool

    @property
    def depth(self) -> None:
        return None


@dataclasses.dataclass(frozen=True)
class BruteForcePlan(DistancePlan):
    """`distance_transform_bf`: the ``metric`` (1 Euclidean, 2 taxicab,
    3 chessboard) distance to the nearest background element, Euclidean
    distances in ``dtype`` and scaled by a sampling operand if
    ``sampled``."""

    metric: int
    dtype: np.dtype
    sampled: bool


@dataclasses.dataclass(frozen=True)
class ChamferPlan(DistancePlan):
    """`distance_transform_cdt`: the chamfer distance over the steps
    ``offsets`` (the first half of the structure, in its order)."""

    offsets: tuple[tuple[int, ...], ...]


@dataclasses.dataclass(frozen=True)
class EuclideanPlan(DistancePlan):
    """`distance_transform_edt`: the exact Euclidean distance in ``dtype``,
    scaled by a sampling operand if ``sampled``."""

    dtype: np.dtype
    sampled: bool


def _whole_dask(func):
    """Compute a dask input whole (a distance reaches across the array)
    and hand the results back as dask arrays."""

    def wrapper(input, *args, **kwargs):
        if not _distributed.is_dask_array(input):
            return func(input, *args, **kwargs)
        import dask.array as da

        result = func(_distributed.computed(input), *args, **kwargs)
        return jax.tree.map(lambda a: da.from_array(np.asarray(a)), result)

    return functools.wraps(func)(wrapper)


def _float_dtype() -> np.dtype:
    return np.dtype(jax.dtypes.canonicalize_dtype(np.float64))


def _coordinates(shape: tuple[int, ...], axis: int) -> Array:
    return lax.broadcasted_iota(jnp.int32, shape, axis)


def _unravel(flat: Array, shape: tuple[int, ...]) -> Array:
    """Flat indices as an ``(ndim,) + shape`` int32 coordinate array."""
    coords = []
    for axis in range(len(shape) - 1, -1, -1):
        coords.append(flat % shape[axis])
        flat = flat // shape[axis]
    return jnp.stack(coords[::-1]).astype(jnp.int32)


def _squared_sum(features: list[Array], sampling: Array | None,
                 dtype: np.dtype) -> Array:
    """``sum(((feature - index) * sampling) ** 2)``, in axis order."""
    shape = features[0].shape
    squares = []
    for axis, feature in enumerate(features):
        t = (feature - _coordinates(shape, axis)).astype(dtype)
        if sampling is not None:
            t = t * sampling[axis]
        squares.append(t * t)
    return _sum_in_order(squares, sampling)


def _sum_in_order(terms: list[Array], sampling: Array | None) -> Array:
    """``terms[0] + terms[1] + ...`` of squares, rounded as SciPy rounds."""
    terms = _rounded(terms, _traced_zero(sampling))
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


# --------------------------------------------------------------------------
# Line scans (one lax.scan over axis 0, all other elements in the lanes)
# --------------------------------------------------------------------------

def _running(values: Array, op, reverse: bool = False) -> Array:
    """Running ``carry = op(carry, row)`` along axis 0, by one scan."""
    def step(carry, row):
        carry = op(carry, row)
        return carry, carry

    _, out = lax.scan(step, values[-1] if reverse else values[0], values,
                      reverse=reverse)
    return out


def _to_front(arrays: list[Array], axis: int) -> list[Array]:
    """The arrays with ``axis`` moved to the front (:func:`_moved`)."""
    if axis == 0:
        return list(arrays)
    return _moved(arrays, source=axis, destination=0)


def _from_front(arrays: list[Array], axis: int) -> list[Array]:
    """Inverse of :func:`_to_front`."""
    if axis == 0:
        return list(arrays)
    return _moved(arrays, source=0, destination=axis)


@cached_jit(static_argnames=("source", "destination"))
def _moved(arrays: list[Array], *, source: int, destination: int
           ) -> list[Array]:
    """``jnp.moveaxis`` of each array, materialised.

    The transposes are a program of their own for concrete input, and kept
    apart by optimisation barriers under a trace: fused into a scan or into
    the element-wise work around it, XLA's CPU backend compiles a transpose
    to a strided loop, several times slower than a plain transposing copy.
    """
    return [lax.optimization_barrier(jnp.moveaxis(x, source, destination))
            for x in arrays]


# --------------------------------------------------------------------------
# Euclidean feature transform
# --------------------------------------------------------------------------

def _nearest_along_first(background: Array) -> Array:
    """Index along axis 0 of the nearest background element, the lower one
    on ties; -1 where the line has none."""
    n = background.shape[0]
    index = _coordinates(background.shape, 0)
    before = _running(jnp.where(background, index, -1), jnp.maximum)
    after = _running(jnp.where(background, index, 2 * n + 1), jnp.minimum,
                     reverse=True)
    use_after = (before < 0) | ((after - index) < (index - before))
    nearest = jnp.where(use_after, after, before)
    return jnp.where(nearest > n, -1, nearest)


def _traced_zero(sampling: Array | None) -> Array | None:
    """0 computed from ``sampling`` (None without it); see `_rounded`."""
    return None if sampling is None else sampling[0] * 0


def _rounded(values: list[Array], zero: Array | None) -> list[Array]:
    """Non-negative products ``values``, each rounded on its own.

    XLA's CPU backend fuses a product and the sum it feeds into one
    multiply-add, which rounds once where SciPy's C code rounds twice.  A
    maximum with ``zero`` (a traced 0, which the compiler cannot fold away)
    keeps them apart.  ``zero`` is None where the arithmetic is exact
    (integer values), and nothing is done.
    """
    return values if zero is None else [jnp.maximum(v, zero) for v in values]


def _pops(top: Array, second: Array, r_top: Array, r_second: Array,
          t: Array, r_new: Array, is_site: Array, step: Array,
          zero: Array | None, dtype: np.dtype) -> Array:
    """Whether a new site at ``t`` (``r_new``) pops the stack's ``top``
    (``r_top``) above ``second`` (``r_second``; -1 for none): SciPy's
    test, with the products rounded before the differences."""
    a = (top - second).astype(dtype) * step
    b = (t - top).astype(dtype) * step
    c = a + b
    products = _rounded([c * r_top, b * r_second, a * r_new, a * b * c],
                        zero)
    return is_site & (second >= 0) & (
        products[0] - products[1] - products[2] - products[3] > 0)


def _build_stack(r: Array, site: Array, step_size: Array,
                 zero: Array | None) -> tuple[Array, Array]:
    """Maurer's stack along axis 0 of ``(n, lanes)`` arrays.

    ``r`` is each site's squared distance to its feature across the line.
    Returns, per position, the site below it on the stack when it was pushed
    (-1 for the bottom, ``n`` for positions that are not sites) and that
    site's ``r``.
    """
    n, lanes = r.shape
    dtype = r.dtype
    lane = jnp.arange(lanes, dtype=jnp.int32)

    def popping(top, second, r_top, r_second, t, r_new, is_site):
        return _pops(top, second, r_top, r_second, t, r_new, is_site,
                     step_size, zero, dtype)

    def push(carry, t):
        top, second, r_top, r_second, below, r_below = carry
        r_new = r[t]
        is_site = site[t]

        def pop(state):
            top, second, r_top, r_second, mask = state
            at = jnp.maximum(second, 0) * lanes + lane
            deeper = below.reshape(-1)[at]
            r_deeper = r_below.reshape(-1)[at]
            top = jnp.where(mask, second, top)
            second = jnp.where(mask, deeper, second)
            r_top = jnp.where(mask, r_second, r_top)
            r_second = jnp.where(mask, r_deeper, r_second)
            return (top, second, r_top, r_second,
                    popping(top, second, r_top, r_second, t, r_new, is_site))

        mask = popping(top, second, r_top, r_second, t, r_new, is_site)
        top, second, r_top, r_second, _ = lax.while_loop(
            lambda state: jnp.any(state[-1]), pop,
            (top, second, r_top, r_second, mask))
        below = lax.dynamic_update_slice(
            below, jnp.where(is_site, top, n)[None], (t, jnp.int32(0)))
        r_below = lax.dynamic_update_slice(
            r_below, jnp.where(is_site & (top >= 0), r_top, 0)[None],
            (t, jnp.int32(0)))
        second = jnp.where(is_site, top, second)
        r_second = jnp.where(is_site, r_top, r_second)
        top = jnp.where(is_site, t, top)
        r_top = jnp.where(is_site, r_new, r_top)
        return (top, second, r_top, r_second, below, r_below), None

    minus = jnp.full(lanes, -1, jnp.int32)
    empty = jnp.zeros(lanes, dtype)
    init = (minus, minus, empty, empty, jnp.zeros((n, lanes), jnp.int32),
            jnp.zeros((n, lanes), dtype))
    (*_, below, r_below), _ = lax.scan(push, init,
                                       jnp.arange(n, dtype=jnp.int32))
    return below, r_below


@cached_jit(static_argnames=("axis", "dtype"))
def _stack_pass(previous: list[Array], sampling: Array | None, *,
                axis: int, dtype: np.dtype) -> tuple[Array, Array, Array]:
    """Maurer's stack along axis 0 of every line (:func:`_build_stack`).

    ``previous`` are the features along the axes before ``axis``, with
    ``axis`` moved to the front.  Also returns ``r``, each site's squared
    distance across the line to its feature.  Arrays are ``(n, lanes)``.
    """
    n = previous[0].shape[0]
    squares = []
    for other in range(axis):
        across = _coordinates(previous[0].shape, other + 1)
        t = (previous[other] - across).astype(dtype).reshape(n, -1)
        if sampling is not None:
            t = t * sampling[other]
        squares.append(t * t)
    r = lax.optimization_barrier(_sum_in_order(squares, sampling))
    step_size = (jnp.asarray(1.0, dtype) if sampling is None
                 else sampling[axis])
    below, r_below = _build_stack(r, previous[0].reshape(n, -1) >= 0,
                                  step_size, _traced_zero(sampling))
    return r, below, r_below


@cached_jit(static_argnames=("axis", "dtype"))
def _walk_pass(previous: list[Array], r: Array, below: Array,
               r_below: Array, sampling: Array | None, *, axis: int,
               dtype: np.dtype) -> list[Array]:
    """SciPy's walk along every line, over the stack of
    :func:`_stack_pass`: the features along the axes up to ``axis``, with
    ``axis`` at the front."""
    n, lanes = r.shape
    front = previous[0].shape
    previous = [x.reshape(n, lanes) for x in previous]
    site = previous[0] >= 0
    step_size = (jnp.asarray(1.0, dtype) if sampling is None
                 else sampling[axis])
    zero = _traced_zero(sampling)

    # Sites still on the stack: no later site was pushed onto one below.
    later = _running(below, jnp.minimum, reverse=True)
    later = jnp.concatenate([later[1:], jnp.full((1, lanes), n, jnp.int32)])
    position = _coordinates((n, lanes), 0)
    kept = site & (later >= position)

    # First position where a kept site beats the one below it (SciPy's walk
    # moves on when the next site is strictly nearer).
    def delta(rr, p, x):
        t = (p - x) * step_size
        return rr + _rounded([t * t], zero)[0]

    p = position.astype(dtype)
    q = jnp.maximum(below, 0).astype(dtype)
    s2 = step_size * step_size
    den = 2 * s2 * (p - q)
    safe = jnp.where(den > 0, den, 1)
    x = jnp.floor(((r - r_below) + s2 * (p * p - q * q)) / safe) + 1
    x = jnp.where(delta(r_below, q, x - 1) > delta(r, p, x - 1), x - 1, x)
    x = jnp.where(delta(r_below, q, x) > delta(r, p, x), x, x + 1)
    x = jnp.clip(jnp.where(below < 0, 0, x), 0, n).astype(jnp.int32)
    # SciPy's walk moves on from a kept site at the first position where
    # the next one is nearer, and on again at that position while the one
    # after that is nearer still.  So it reaches a site at the first
    # position past the crossings of all sites before it: the running
    # maximum of the crossings (rounding can put a crossing before the
    # one of the site below).
    x = _running(jnp.where(kept, x, -1), jnp.maximum)
    x = jnp.where(kept, x, n + 1)

    # For every position: the next kept site, the position where the walk
    # reaches it, and the last kept site reached at that same position.

    def backward(carry, inputs):
        start, target, target_features = carry
        x_c, kept_c, c, feats = inputs
        out = (start, target, *target_features)
        same = kept_c & (x_c == start)
        new_target = jnp.where(kept_c & ~same, c, target)
        new_features = tuple(jnp.where(kept_c & ~same, f, g)
                             for f, g in zip(feats, target_features))
        start = jnp.where(kept_c, x_c, start)
        return (start, new_target, new_features), jnp.stack(out, axis=-1)

    init = (jnp.full(lanes, n + 1, jnp.int32), jnp.full(lanes, -1, jnp.int32),
            tuple(jnp.zeros(lanes, jnp.int32) for _ in previous))
    (_, first, first_features), table = lax.scan(
        backward, init, (x, kept, position, tuple(previous)), reverse=True)

    lane = jnp.arange(lanes, dtype=jnp.int32)
    flat = table.reshape(-1, table.shape[-1])
    def walk(carry, xx):
        current, feats = carry
        entry = flat[jnp.maximum(current, 0) * lanes + lane]
        move = (current >= 0) & (entry[:, 0] <= xx)
        current = jnp.where(move, entry[:, 1], current)
        feats = tuple(jnp.where(move, entry[:, 2 + k], f)
                      for k, f in enumerate(feats))
        return (current, feats), (current, *feats)

    _, (chosen, *chosen_features) = lax.scan(
        walk, (first, first_features), jnp.arange(n, dtype=jnp.int32))

    found = chosen >= 0
    out = [jnp.where(found, chosen_features[other], previous[other])
           for other in range(axis)]
    # Before this pass an element's coordinate along ``axis`` is its own
    # (0 where no feature has been found yet).
    own = jnp.where(site, position, 0)
    return [x.reshape(front) for x in (*out, jnp.where(found, chosen, own))]


@cached_jit()
def _first_features(input: Array) -> list[Array]:
    """The nearest background element along axis 0 (-1 for none) and the
    element's own coordinates along the other axes (0 where there is
    none)."""
    shape = input.shape
    first = _nearest_along_first(input == 0)
    found = first >= 0
    return [first] + [jnp.where(found, _coordinates(shape, axis), 0)
                      for axis in range(1, len(shape))]


#: Shifts (each at + and -) one step of :func:`_shifts_pass`'s loop tries.
_SHIFTS_PER_STEP = 4


@cached_jit(static_argnames=("axis", "dtype"))
def _shifts_pass(previous: list[Array], sampling: Array | None, *,
                 axis: int, dtype: np.dtype) -> list[Array]:
    """The Euclidean pass along ``axis`` by shifts, without a loop along
    the lines.

    ``previous`` are the features along the axes before ``axis`` (-1 along
    axis 0 where none is found yet), in the array's own layout; returns
    those along the axes up to ``axis``, as :func:`_walk_pass` does.  Each
    element ``x`` takes the feature of the element ``x + s`` along ``axis``
    (one that has a feature) that minimises ``(s * sampling[axis]) ** 2 +
    r(x + s)``, ``r`` being an element's squared distance to its feature
    across the line, summed as :func:`_stack_pass` sums it; of equal
    values, the one with the least ``s``.  The loop compares, for
    ``s = 1, 2, ...``, the elements at ``+s`` (which win when nearer) and
    ``-s`` (which win when as near) with the best so far, and stops once
    ``(s * sampling[axis]) ** 2`` exceeds every element's best: no farther
    element can then be as near.

    Without sampling the sums are integers, computed in int32 where they
    cannot overflow.  In exact arithmetic the least value with the least
    ``s`` is what SciPy's walk picks; with a sampling whose products round,
    a near tie can go the other way (see the module docstring).
    """
    shape = previous[0].shape
    n = shape[axis]
    exact = (sampling is None
             and sum(m * m for m in shape[:axis + 1]) < 2 ** 31)
    work = np.dtype(np.int32) if exact else np.dtype(dtype)
    far = jnp.asarray(np.iinfo(np.int32).max if exact else np.inf, work)
    zero = _traced_zero(sampling)

    def square(s: Array) -> Array:
        """``(s * sampling[axis]) ** 2``, rounded as :func:`_walk_pass`
        rounds it."""
        t = s.astype(work)
        if sampling is not None:
            t = t * sampling[axis]
        return _rounded([t * t], zero)[0]

    # The features and ``r``, with ``n`` elements of no feature before and
    # after each line: the slice from ``n + s`` along ``axis`` reads, for
    # each element ``x``, ``x + s``, or no feature past either end (a slice
    # starting past the padding is clamped into it).
    widths = [(0, 0)] * len(shape)
    widths[axis] = (n, n)
    padded = [jnp.pad(x, widths, constant_values=fill) for x, fill in zip(
        [*previous, _squared_sum(previous, sampling, work)],
        [-1] + [0] * len(previous))]

    def at(s: Array) -> tuple[Array, list[Array], Array]:
        """Whether ``x + s`` has a feature, its features, its value."""
        *features, r = [lax.dynamic_slice_in_dim(x, n + s, n, axis)
                        for x in padded]
        return features[0] >= 0, features, r + square(s)

    site = previous[0] >= 0
    # Lines without a site are left as they are (found nowhere).
    lines = jnp.any(site, axis=axis, keepdims=True)

    def more(state):
        s, best, _, _ = state
        return (s < n) & (square(s) <= jnp.max(jnp.where(lines, best, 0)))

    def step(state):
        s, best, shift, chosen = state
        for k in range(_SHIFTS_PER_STEP):
            for sign in (1, -1):
                offset = sign * (s + k)
                valid, features, value = at(offset)
                better = valid & ((value < best) if sign > 0
                                  else (value <= best))
                best = jnp.where(better, value, best)
                shift = jnp.where(better, offset, shift)
                chosen = [jnp.where(better, f, c)
                          for f, c in zip(features, chosen)]
        return s + _SHIFTS_PER_STEP, best, shift, chosen

    _, best, shift, chosen = lax.while_loop(more, step, (
        jnp.int32(1), jnp.where(site, at(jnp.int32(0))[2], far),
        jnp.zeros(shape, jnp.int32), list(previous)))
    found = best < far
    return [*chosen,
            jnp.where(found, _coordinates(shape, axis) + shift, 0)]


def _feature_transform(input: Array, sampling: Array | None,
                       dtype: np.dtype, method: str) -> Array:
    """Feature transform: ``(ndim,) + shape`` int32, the passes along axes
    1, 2, ... by ``method`` ("stack" or "shifts", the family "euclidean
    distance" of `_algorithms`).

    For concrete input each stage is a program of its own, and so is each
    transpose between them (:func:`_moved`).
    """
    features = _first_features(input)
    for axis in range(1, input.ndim):
        if method == "shifts":
            features = [*_shifts_pass(features[:axis], sampling, axis=axis,
                                      dtype=dtype), *features[axis + 1:]]
            continue
        # SciPy's _VoronoiFT along ``axis``, for every line at once.
        previous = _to_front(features[:axis], axis)
        stack = _stack_pass(previous, sampling, axis=axis, dtype=dtype)
        lines = _walk_pass(previous, *stack, sampling, axis=axis,
                           dtype=dtype)
        features = [*_from_front(lines, axis), *features[axis + 1:]]
    return _stacked(features)


@cached_jit()
def _stacked(features: list[Array]) -> Array:
    return jnp.stack(features)


@cached_jit(static_argnames=("dtype",))
def _feature_distances(features: Array, sampling: Array | None, *,
                       dtype: np.dtype) -> Array:
    squared = _squared_sum(list(features), sampling, dtype)
    # sqrt, with a zero gradient (not NaN) at the background.
    positive = squared > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, squared, 1)), 0)


# --------------------------------------------------------------------------
# Chamfer distances
# --------------------------------------------------------------------------

def _shift(x: Array, offset: tuple[int, ...], fill: int) -> Array:
    """``x`` read at ``index + offset``; ``fill`` outside."""
    for axis, o in enumerate(offset):
        if o == 0:
            continue
        pad = jnp.full(x.shape[:axis] + (1,) + x.shape[axis + 1:], fill,
                       x.dtype)
        n = x.shape[axis]
        if o < 0:
            x = jnp.concatenate([pad, lax.slice_in_dim(x, 0, n - 1,
                                                       axis=axis)], axis)
        else:
            x = jnp.concatenate([lax.slice_in_dim(x, 1, n, axis=axis), pad],
                                axis)
    return x


def _line_pass(e: Array, f: Array | None) -> tuple[Array, Array | None]:
    """``d[j] = min(e[j], d[j - 1] + 1)`` along the last axis, the earlier
    value (``e[j]``) winning ties, as SciPy's raster pass does."""
    m = e.shape[-1]
    position = _coordinates(e.shape, e.ndim - 1)
    key = e - position
    least = lax.cummin(key, axis=e.ndim - 1)
    d = least + position
    if f is None:
        return d, None
    source = lax.cummax(jnp.where(key == least, position, -1),
                        axis=e.ndim - 1)
    del m
    return d, jnp.take_along_axis(f, source, axis=-1)


def _raster_pass(d: Array, f: Array | None,
                 offsets: tuple[tuple[int, ...], ...]
                 ) -> tuple[Array, Array | None]:
    """One of SciPy's chamfer passes, in raster order over ``d``."""
    ndim = d.ndim
    left = (0,) * (ndim - 1) + (-1,)

    def level(k, current, feature):
        if k == ndim - 1:
            if left in offsets:
                return _line_pass(current, feature)
            return current, feature
        mine = [o[k + 1:] for o in offsets
                if all(v == 0 for v in o[:k]) and o[k] == -1]

        def step(carry, inputs):
            before, before_f = carry
            value, value_f = inputs
            for offset in mine:
                candidate = _shift(before, offset, _FAR) + 1
                better = candidate < value
                value = jnp.where(better, candidate, value)
                if value_f is not None:
                    value_f = jnp.where(better, _shift(before_f, offset, 0),
                                        value_f)
            value, value_f = level(k + 1, value, value_f)
            return (value, value_f), (value, value_f)

        init = (jnp.full(current.shape[1:], _FAR, jnp.int32),
                None if feature is None
                else jnp.zeros(current.shape[1:], jnp.int32))
        _, out = lax.scan(step, init, (current, feature))
        return out

    return level(0, d, f)


@cached_jit(static_argnames=("offsets", "features"))
def _cdt_kernel(input: Array, *, offsets: tuple[tuple[int, ...], ...],
                features: bool) -> tuple[Array, Array | None]:
    """SciPy's two chamfer passes; distances (-1 unreached) and flat
    feature indices."""
    d = jnp.where(input != 0, _FAR, 0).astype(jnp.int32)
    f = (jnp.arange(input.size, dtype=jnp.int32).reshape(input.shape)
         if features else None)
    everything = tuple(slice(None, None, -1) for _ in range(input.ndim))
    d, f = _raster_pass(d, f, offsets)
    d, f = _raster_pass(d[everything], None if f is None else f[everything],
                        offsets)
    d = d[everything]
    f = None if f is None else f[everything]
    return jnp.where(d >= _FAR, -1, d), f


def _min3(x: Array, axes: range) -> Array:
    """Minimum over the 3-wide neighbourhood along ``axes``."""
    for axis in axes:
        offset = [0] * x.ndim
        offset[axis] = -1
        low = _shift(x, tuple(offset), _FAR)
        offset[axis] = 1
        x = jnp.minimum(x, jnp.minimum(low, _shift(x, tuple(offset), _FAR)))
    return x


def _cdt_separable(input: Array, chessboard: bool) -> Array:
    """Exact chessboard or taxicab distances (what SciPy's passes give for
    those structures), -1 where there is no background.

    One program per stage for concrete input, the transposes apart
    (:func:`_moved`), where the device's "chamfer stages" are programs;
    else one program (:func:`_cdt_separable_program`).
    """
    if (not isinstance(input, jax.core.Tracer)
            and algorithm("chamfer stages") == "one program"):
        return _cdt_separable_program(input, chessboard=chessboard)
    d = _chamfer_start(input)
    cones = []
    for axis in range(input.ndim):
        scanned = _chamfer_scans(_to_front([d], axis)[0],
                                 chessboard=chessboard)
        scanned = _from_front([scanned], axis)[0]
        if chessboard:
            cones.append(scanned)
        else:
            d = scanned
    return _chamfer_finish(cones if chessboard else [d])


@cached_jit(static_argnames=("chessboard",))
def _cdt_separable_program(input: Array, *, chessboard: bool) -> Array:
    """:func:`_cdt_separable` as one program (its stages traced: the
    transposes kept apart by optimisation barriers)."""
    return _cdt_separable(input, chessboard)


@cached_jit()
def _chamfer_start(input: Array) -> Array:
    return jnp.where(input != 0, _FAR, 0).astype(jnp.int32)


@cached_jit(static_argnames=("chessboard",))
def _chamfer_scans(x: Array, *, chessboard: bool) -> Array:
    """Along axis 0: the chessboard distance within the double cone around
    the axis, or the taxicab distance along it."""
    if chessboard:
        def op(carry, row):
            return jnp.minimum(row, _min3(carry, range(row.ndim)) + 1)

        return jnp.minimum(_running(x, op), _running(x, op, reverse=True))

    def op(carry, row):
        return jnp.minimum(row, carry + 1)

    return _running(_running(x, op), op, reverse=True)


@cached_jit()
def _chamfer_finish(parts: list[Array]) -> Array:
    d = functools.reduce(jnp.minimum, parts)
    return jnp.where(d >= _FAR, -1, d)


def _structure_offsets(metric: Any, ndim: int) -> tuple[tuple[int, ...], ...]:
    """The neighbours SciPy's chamfer pass reads: the true elements of the
    structure's first half, in structure order."""
    if isinstance(metric, str):
        if metric in ("taxicab", "cityblock", "manhattan"):
            structure = generate_binary_structure(ndim, 1)
        elif metric == "chessboard":
            structure = generate_binary_structure(ndim, ndim)
        else:
            raise ValueError("invalid metric provided")
    else:
        try:
            structure = np.asarray(metric)
        except Exception as error:
            raise ValueError("invalid metric provided") from error
        for size in structure.shape:
            if size != 3:
                raise ValueError("metric sizes must be equal to 3")
        if structure.ndim != ndim:
            raise RuntimeError(
                f"metric: structure rank ({structure.ndim}) must equal the "
                f"input rank ({ndim})")
        # SciPy's C code reads the structure's memory as bytes of booleans,
        # whatever its dtype; so do we.
        raw = np.ascontiguousarray(structure)
        structure = (raw.reshape(-1).view(np.uint8)[:raw.size] != 0
                     ).reshape(raw.shape)
    flat = structure.reshape(-1)
    return tuple(tuple(int(i) - 1 for i in np.unravel_index(k, (3,) * ndim))
                 for k in range(flat.size // 2) if flat[k])


# --------------------------------------------------------------------------
# Brute force
# --------------------------------------------------------------------------

_METRICS = {"euclidean": 1, "taxicab": 2, "cityblock": 2, "manhattan": 2,
            "chessboard": 3}


def _border(foreground: Array) -> Array:
    """Background elements with a foreground neighbour (full
    connectivity)."""
    grown = foreground
    for axis in range(foreground.ndim):
        offset = [0] * foreground.ndim
        offset[axis] = -1
        low = _shift(grown, tuple(offset), False)
        offset[axis] = 1
        grown = grown | low | _shift(grown, tuple(offset), False)
    return grown & ~foreground


def _bf_distance(coordinates: list[Array], place: list[Array], metric: int,
                 sampling: Array | None, dtype: np.dtype) -> Array:
    """The distance by ``metric`` (1 Euclidean, squared, in ``dtype``; 2
    taxicab; 3 chessboard, in uint32) from points at ``coordinates`` to
    the element at ``place``, per axis summed in SciPy's order."""
    terms = []
    for axis, (c, p) in enumerate(zip(coordinates, place)):
        t = c - p
        if metric == 1:
            t = t.astype(dtype)
            if sampling is not None:
                t = t * sampling[axis]
            terms.append(t * t)
        else:
            terms.append(jnp.abs(t).astype(jnp.uint32))
    if metric == 3:
        return functools.reduce(jnp.maximum, terms)
    return _sum_in_order(terms, sampling if metric == 1 else None)


#: Elements x candidates one step of :func:`_bf_kernel` compares at most,
#: on devices that compare blocks of candidates at once.
_BF_BLOCK_ELEMENTS = 2**22


def _bf_block(size: int, count: int) -> int:
    """Candidates per step of :func:`_bf_kernel` for ``size`` elements and
    ``count`` candidates: one on a CPU (a scan of elementwise steps); on
    other devices a power of two up to ``count`` whose comparisons with
    every element fit `_BF_BLOCK_ELEMENTS` (a step is a launch there, and
    costs as much as many comparisons)."""
    if algorithm("brute-force distance") == "scan":
        return 1
    fits = max(1, _BF_BLOCK_ELEMENTS // max(size, 1))
    return 1 << (min(fits, max(count, 1)).bit_length() - 1)


@cached_jit(static_argnames=("metric", "dtype", "block"))
def _bf_kernel(input: Array, candidates: Array, sampling: Array | None, *,
               metric: int, dtype: np.dtype, block: int
               ) -> tuple[Array, Array]:
    """Distances and features (an ``(ndim,) + shape`` array of their
    coordinates) by comparing every element with every candidate (flat
    indices of border elements in raster order, -1 for none; a multiple
    of ``block`` of them), ``block`` candidates per step of a scan."""
    shape = input.shape
    foreground = input != 0
    border = _border(foreground).reshape(-1)
    coords = [_coordinates(shape, axis).reshape(-1, 1)
              for axis in range(len(shape))]
    size = input.size
    if metric == 1:
        far = jnp.asarray(np.finfo(dtype).max, dtype)
        beyond = jnp.asarray(np.inf, dtype)
    else:
        far = beyond = jnp.asarray(np.iinfo(np.uint32).max, jnp.uint32)

    def step(carry, candidate):
        best, best_index = carry
        valid = (candidate >= 0) & border[jnp.maximum(candidate, 0)]
        rest = jnp.maximum(candidate, 0)
        place = [None] * len(shape)
        for axis in range(len(shape) - 1, -1, -1):
            place[axis] = rest % shape[axis]
            rest = rest // shape[axis]
        total = jnp.where(valid, _bf_distance(coords, place, metric,
                                              sampling, dtype), beyond)
        # SciPy's list holds the border in reverse raster order and keeps
        # the first strictly nearer one: of equally near ones the last in
        # raster order wins, within the block and against earlier blocks.
        nearest = total.min(axis=1)
        chosen = jnp.max(jnp.where(valid & (total == nearest[:, None]),
                                   candidate, -1), axis=1)
        better = (chosen >= 0) & (nearest <= best)
        return (jnp.where(better, nearest, best),
                jnp.where(better, chosen, best_index)), None

    init = (jnp.full(size, far), jnp.zeros(size, jnp.int32))
    (best, best_index), _ = lax.scan(step, init,
                                     candidates.reshape(-1, block))
    own = jnp.arange(size, dtype=jnp.int32)
    fg = foreground.reshape(-1)
    if metric == 1:
        distance = jnp.where(fg, jnp.sqrt(best), 0).astype(dtype)
    else:
        distance = jnp.where(fg, best, 0).astype(jnp.uint32)
    index = jnp.where(fg, best_index, own)
    return distance.reshape(shape), _unravel(index.reshape(shape), shape)


@cached_jit()
def _border_of(input: Array) -> Array:
    """:func:`_border` of ``input``'s nonzero elements, in one program."""
    return _border(input != 0)


# --------------------------------------------------------------------------
# Concrete input on a CPU: flat canvases (see the module docstring)
# --------------------------------------------------------------------------

#: Offset of "no feature found yet" in the flat Euclidean kernels.
_NONE = -(2 ** 31)

#: Lines a step of a flat line kernel works on at once, by the number of
#: lines (at most, lanes): a step costs a fixed time on top of its lanes,
#: so a line kernel runs fastest with one block of lanes a little wider
#: than its lines.  Four widths, each four times the one before: at most
#: four programs per kernel and bucket, and lanes at most four times the
#: lines (in one block) below 1024 lines.
_LANES = ((64, 64), (256, 256), (1024, 1024), (None, 2048))

#: Elements an element-wise step of a flat kernel works on at once.
_CHUNK = 16384

#: Positions a canvas holds before an array (rows of the chamfer passes
#: read up to a step of lanes before their start) and after it.
_MARGIN = 2048


def _lanes_for(lines: int) -> int:
    """The lanes of a flat line kernel for ``lines`` lines."""
    return next(lanes for most, lanes in _LANES
                if most is None or lines <= most)


def _flat_length(size: int) -> int:
    """The canvas length for ``size`` elements and a margin before and
    after them: a bucket length (:func:`_canvas.bucket_length`)."""
    return bucket_length(size + 2 * _MARGIN)


def _flat_geometry(shape: tuple[int, ...]) -> np.ndarray:
    """Row 0: the shape; row ``1 + a``: the stride of each axis in *layout
    a*, the array with axis ``a`` moved to the front (layout 0 is the array
    itself).  In layout ``a`` element ``(p, line)`` lies at ``p * lines +
    line``, ``line`` running over the other axes in C order."""
    ndim = len(shape)
    geometry = np.zeros((1 + ndim, ndim), np.int32)
    geometry[0] = shape
    for a in range(ndim):
        stride = 1
        for j in reversed((a,) + tuple(j for j in range(ndim) if j != a)):
            geometry[1 + a, j] = stride
            stride *= shape[j]
    return geometry


def _get(buffer: Array, start: Array, length: int) -> Array:
    return lax.dynamic_slice(buffer, (start,), (length,))


def _set(buffer: Array, start: Array, values: Array) -> Array:
    return lax.dynamic_update_slice(buffer, values, (start,))


def _take(buffer: Array, index: Array) -> Array:
    return jnp.take(buffer, index, axis=0, mode="clip")


def _divide(values: Array, divisor: Array) -> Array:
    """``values // divisor`` for non-negative int32 values below 2**31: in
    float64 where JAX has it (XLA's CPU backend divides integers one
    element at a time), exactly, as :func:`_canvas.flat_position` does."""
    if _float_dtype() == np.float64:
        return jnp.floor((values.astype(np.float64) + 0.5)
                         / divisor.astype(np.float64)).astype(np.int32)
    return values // divisor


def _chunked(count: Array, function, outputs: list[Array],
             *inputs: Array) -> list[Array]:
    """``outputs[k][q] = function(q, *(x[q] for x in inputs))[k]`` for every
    flat position ``q < count``, `_CHUNK` positions per step (the last
    chunk overlaps the one before it rather than run past the canvas)."""
    length = outputs[0].shape[0]

    def step(i, outputs):
        start = jnp.minimum(i * _CHUNK, length - _CHUNK)
        position = start + lax.iota(np.int32, _CHUNK)
        values = function(position, *[_get(x, start, _CHUNK)
                                      for x in inputs])
        return [_set(o, start, v) for o, v in zip(outputs, values)]

    return lax.fori_loop(0, (count + _CHUNK - 1) // _CHUNK, step,
                         list(outputs))


def _squares(offsets: list[Array], sampling: Array | None,
             dtype: np.dtype) -> Array:
    """``sum((offset * sampling) ** 2)`` in axis order, as SciPy rounds."""
    terms = []
    for axis, offset in enumerate(offsets):
        t = offset.astype(dtype)
        if sampling is not None:
            t = t * sampling[axis]
        terms.append(t * t)
    return _sum_in_order(terms, sampling)


def _root(squared: Array) -> Array:
    positive = squared > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, squared, 1)), 0)


def _edt_results(offsets: list[Array], coordinates: list[Array],
                 sampling: Array | None, distances: bool, indices: bool,
                 dtype: np.dtype) -> list[Array]:
    """The distances and the features of elements at ``coordinates``
    whose features lie ``offsets`` away."""
    results = []
    if distances:
        results.append(_root(_squares(offsets, sampling, dtype)))
    if indices:
        results += [o + c for o, c in zip(offsets, coordinates)]
    return results


def _edt_outputs(size: int, distances: bool, indices: bool, ndim: int,
                 dtype: np.dtype) -> list[Array]:
    return ([jnp.zeros(size, dtype)] * distances
            + [jnp.zeros(size, np.int32)] * (ndim * indices))


@cached_jit(static_argnames=("lanes", "last", "distances", "indices",
                             "dtype"))
def _edt_first_flat(mask: Array, geometry: Array, sampling: Array | None, *,
                    lanes: int, last: bool, distances: bool, indices: bool,
                    dtype: np.dtype) -> list[Array]:
    """The Euclidean pass along axis 0 of a flat canvas: ``mask`` is True
    on the foreground.

    Per element, the offset along axis 0 to the nearest background element
    of its column (the lower on ties; `_NONE` for none), in layout 0; or,
    for a 1-D array, the distances and/or features.
    """
    n, lines = geometry[0, 0], geometry[1, 0]
    length = mask.shape[0]
    blocks = (lines + lanes - 1) // lanes

    def block(i, state):
        after_all, out = state
        # Blocks run from the last: the lanes of the last block past the
        # last line write into the next row, which the blocks after it
        # overwrite.  Within a block every buffer is written in increasing
        # position, so that those lanes only write where a later step
        # writes again.
        first = (blocks - 1 - i) * lanes

        def backward(k, state):
            after_all, after = state
            p = n - 1 - k
            background = ~_get(mask, p * lines + first, lanes)
            after = jnp.where(background, p, after)
            return _set(after_all, k * lines + first, after), after

        after_all, _ = lax.fori_loop(
            0, n, backward,
            (after_all, jnp.full(lanes, 2 * n + 1, np.int32)))

        def forward(p, state):
            out, before = state
            start = p * lines + first
            background = ~_get(mask, start, lanes)
            before = jnp.where(background, p, before)
            after = _get(after_all, (n - 1 - p) * lines + first, lanes)
            use_after = (before < 0) | ((after - p) < (p - before))
            nearest = jnp.where(use_after, after, before)
            offset = jnp.where(nearest > n, _NONE, nearest - p)
            return _set(out, start, offset), before

        out, _ = lax.fori_loop(0, n, forward,
                               (out, jnp.full(lanes, -1, np.int32)))
        return after_all, out

    zeros = jnp.zeros(length, np.int32)
    _, offsets = lax.fori_loop(0, blocks, block, (zeros, zeros))
    if not last:
        return [offsets]
    return _chunked(
        n, lambda q, offset: _edt_results([offset], [q], sampling,
                                          distances, indices, dtype),
        _edt_outputs(length, distances, indices, 1, dtype), offsets)


@cached_jit(static_argnames=("axis", "lanes", "last", "distances",
                             "indices", "dtype"))
def _edt_axis_flat(previous: list[Array], geometry: Array,
                   sampling: Array | None, *, axis: int, lanes: int,
                   last: bool, distances: bool, indices: bool,
                   dtype: np.dtype) -> list[Array]:
    """SciPy's Voronoi pass along ``axis`` >= 1 of a flat canvas, as
    :func:`_stack_pass` and :func:`_walk_pass` do it.

    ``previous`` are the offsets to the features along the axes before
    ``axis``, in layout ``axis - 1`` (`_NONE` along axis 0 where no feature
    is found yet).  Returns those along the axes up to ``axis`` in layout
    ``axis``; or, after the last axis, the distances and/or features in
    the array's own layout.
    """
    a = axis
    ndim = geometry.shape[1]
    shape, strides = geometry[0], geometry[1:]
    n, lines = shape[a], strides[a, a]
    count = n * lines
    length = previous[0].shape[0]
    lane = lax.iota(np.int32, lanes)
    blocks = (lines + lanes - 1) // lanes
    step = (jnp.asarray(1.0, dtype) if sampling is None
            else sampling[a])
    zero = _traced_zero(sampling)
    s2 = step * step

    def source(p: Array, others: list[Array]) -> Array:
        """Where element ``p`` of a line with coordinates ``others`` (along
        the axes but ``a``, in turn) lies in layout ``a - 1``."""
        index = p * strides[a - 1, a]
        for j, c in zip([j for j in range(ndim) if j != a], others):
            index = index + c * strides[a - 1, j]
        return index

    def split(q: Array) -> tuple[Array, list[Array]]:
        """Position along the line, and the line's coordinates, of the
        elements at ``q`` in layout ``a``."""
        p = _divide(q, lines)
        rest = q - p * lines
        others = []
        for j in range(ndim - 1, -1, -1):
            if j == a:
                continue
            if len(others) == ndim - 2:
                others.append(rest)
            else:
                quotient = _divide(rest, shape[j])
                others.append(rest - quotient * shape[j])
                rest = quotient
        return p, others[::-1]

    # r: each element's squared distance across the line to its feature
    # (-1 where there is none yet; such elements are not sites).
    def across(q):
        p, others = split(q)
        offsets = [_take(x, source(p, others)) for x in previous]
        r = _squares(offsets, sampling, dtype)
        return [jnp.where(offsets[0] != _NONE, r, -1)]

    zeros_i = jnp.zeros(length, np.int32)
    zeros_f = jnp.zeros(length, dtype)
    (r_all,) = _chunked(count, across, [zeros_f])

    def popping(top, second, r_top, r_second, t, r_new, is_site):
        return _pops(top, second, r_top, r_second, t, r_new, is_site, step,
                     zero, dtype)

    # Maurer's stack along every line (:func:`_build_stack`): per element,
    # the site below it when it was pushed (n for non-sites) and its r.
    def stack_block(i, state):
        below, r_below = state
        first = (blocks - 1 - i) * lanes
        line = first + lane

        def push(p, state):
            below, r_below, top, second, r_top, r_second = state
            start = p * lines + first
            r_new = _get(r_all, start, lanes)
            is_site = (r_new >= 0) & (line < lines)

            def pop(state):
                top, second, r_top, r_second, _ = state
                at = jnp.maximum(second, 0) * lines + line
                deeper, r_deeper = _take(below, at), _take(r_below, at)
                mask = state[-1]
                top = jnp.where(mask, second, top)
                second = jnp.where(mask, deeper, second)
                r_top = jnp.where(mask, r_second, r_top)
                r_second = jnp.where(mask, r_deeper, r_second)
                return (top, second, r_top, r_second,
                        popping(top, second, r_top, r_second, p, r_new,
                                is_site))

            top, second, r_top, r_second, _ = lax.while_loop(
                lambda state: jnp.any(state[-1]), pop,
                (top, second, r_top, r_second,
                 popping(top, second, r_top, r_second, p, r_new, is_site)))
            below = _set(below, start, jnp.where(is_site, top, n))
            r_below = _set(r_below, start,
                           jnp.where(is_site & (top >= 0), r_top, 0))
            second = jnp.where(is_site, top, second)
            r_second = jnp.where(is_site, r_top, r_second)
            top = jnp.where(is_site, p, top)
            r_top = jnp.where(is_site, r_new, r_top)
            return below, r_below, top, second, r_top, r_second

        minus = jnp.full(lanes, -1, np.int32)
        empty = jnp.zeros(lanes, dtype)
        return lax.fori_loop(0, n, push, (below, r_below, minus, minus,
                                          empty, empty))[:2]

    below, r_below = lax.fori_loop(0, blocks, stack_block,
                                   (zeros_i, zeros_f))

    # Where the walk moves onto each site from the one below it.
    def delta(rr, p, x):
        t = (p - x) * step
        return rr + _rounded([t * t], zero)[0]

    def crossing(q, b, rb, r):
        p = _divide(q, lines).astype(dtype)
        bq = jnp.maximum(b, 0).astype(dtype)
        den = 2 * s2 * (p - bq)
        safe = jnp.where(den > 0, den, 1)
        x = jnp.floor(((r - rb) + s2 * (p * p - bq * bq)) / safe) + 1
        x = jnp.where(delta(rb, bq, x - 1) > delta(r, p, x - 1), x - 1, x)
        x = jnp.where(delta(rb, bq, x) > delta(r, p, x), x, x + 1)
        return [jnp.clip(jnp.where(b < 0, 0, x), 0, n).astype(np.int32)]

    (crossings,) = _chunked(count, crossing, [zeros_i], below, r_below,
                            r_all)

    # SciPy's walk (:func:`_walk_pass`): per element, the site whose
    # feature it takes (-1 where the line has none).
    def walk_block(i, state):
        start_table, target_table, chosen = state
        first = (blocks - 1 - i) * lanes
        line = first + lane
        valid = line < lines

        def backward(k, state):
            start_table, target_table, later, start_at, target = state
            p = n - 1 - k
            start = p * lines + first
            b = _get(below, start, lanes)
            kept = valid & (_get(r_all, start, lanes) >= 0) & (later >= p)
            later = jnp.minimum(later, b)
            x = jnp.where(kept, _get(crossings, start, lanes), n + 1)
            # Per site, the next kept site and its crossing; stored at k,
            # in increasing order (see _edt_first_flat).
            start_table = _set(start_table, k * lines + first, start_at)
            target_table = _set(target_table, k * lines + first, target)
            target = jnp.where(kept, p, target)
            start_at = jnp.where(kept, x, start_at)
            return start_table, target_table, later, start_at, target

        start_table, target_table, _, _, current = lax.fori_loop(
            0, n, backward,
            (start_table, target_table, jnp.full(lanes, n, np.int32),
             jnp.full(lanes, n + 1, np.int32),
             jnp.full(lanes, -1, np.int32)))

        # SciPy's walk: at each position, on to the next kept site while
        # that one is nearer, i.e. while the position has reached its
        # crossing (see _walk_pass).
        def onward(current, p):
            at = (n - 1 - jnp.maximum(current, 0)) * lines + line
            return (current >= 0) & (_take(start_table, at) <= p), at

        def walk(p, state):
            chosen, current = state

            def step(current):
                move, at = onward(current, p)
                return jnp.where(move, _take(target_table, at), current)

            current = lax.while_loop(
                lambda current: jnp.any(onward(current, p)[0]), step,
                current)
            return _set(chosen, p * lines + first, current), current

        chosen, _ = lax.fori_loop(0, n, walk, (chosen, current))
        return start_table, target_table, chosen

    *_, chosen = lax.fori_loop(0, blocks, walk_block,
                               (zeros_i, zeros_i, zeros_i))

    def offsets_of(p, others, site):
        """The offsets of the features of the elements at ``p`` on lines
        ``others`` that take the feature of ``site``."""
        found = site >= 0
        index = source(jnp.maximum(site, 0), others)
        return ([jnp.where(found, _take(x, index), _NONE if j == 0 else 0)
                 for j, x in enumerate(previous)]
                + [jnp.where(found, site - p, 0)])

    if not last:
        def features(q, site):
            p, others = split(q)
            return offsets_of(p, others, site)

        return _chunked(count, features, [zeros_i] * (a + 1), chosen)

    # The last pass: every element has a feature (the array has
    # background); the results in the array's own layout.
    def results(q):
        coordinates = flat_position(q[0], _CHUNK, shape)
        others = coordinates[:a] + coordinates[a + 1:]
        line = sum((c * strides[a, j] for j, c in enumerate(coordinates)
                    if j != a), start=jnp.zeros_like(q))
        p = coordinates[a]
        site = _take(chosen, p * lines + line)
        return _edt_results(offsets_of(p, others, site), coordinates,
                            sampling, distances, indices, dtype)

    return _chunked(count, results,
                    _edt_outputs(length, distances, indices, ndim, dtype))


def _unravel_values(values: Array, shape: Array) -> list[Array]:
    """The coordinates, one array per axis, of flat indices ``values``
    into an array of the traced ``shape``."""
    ndim = shape.shape[0]
    coordinates = []
    for axis in range(ndim - 1, 0, -1):
        quotient = _divide(values, shape[axis])
        coordinates.append(values - quotient * shape[axis])
        values = quotient
    return [values] + coordinates[::-1]


@cached_jit(static_argnames=("offsets", "width", "features"))
def _cdt_flat(mask: Array, geometry: Array, *,
              offsets: tuple[tuple[int, ...], ...], width: int,
              features: bool) -> list[Array]:
    """SciPy's two chamfer passes over a flat canvas, in raster order.

    ``mask`` holds the array from position `_MARGIN` on, True on the
    foreground.  Each row (the elements along the last axis) runs in
    chunks of ``width``; a chunk takes the neighbours in the rows before
    it from what is written, then runs the pass along the row
    (:func:`_line_pass`) on from where the chunk before it ended.  The
    second pass runs the same way in reverse raster order with the offsets
    negated: SciPy's pass over the reversed array.  Returns the distances
    (-1 unreached) and, with ``features``, the coordinates of the
    features, from position 0 on.

    A distance and its feature are stored side by side (one write per
    chunk): written apart, XLA would reread the neighbours for the second
    write after the first, and copy the whole buffer to do so.
    """
    ndim = geometry.shape[1]
    shape, strides = geometry[0], geometry[1]
    n = shape[ndim - 1]
    rows = functools.reduce(lambda u, v: u * v,
                            [shape[k] for k in range(ndim - 1)],
                            jnp.ones((), np.int32))
    margin = _MARGIN
    length = mask.shape[0]
    lane = lax.iota(np.int32, width)
    chunks = (n + width - 1) // width
    left = (0,) * (ndim - 1) + (-1,)
    others = [o for o in offsets if o != left]
    far = jnp.int32(_FAR)
    fields = 2 if features else 1

    def row_coordinates(r):
        coordinates = []
        for k in range(ndim - 2, -1, -1):
            coordinates.append(r % shape[k])
            r = r // shape[k]
        return coordinates[::-1]

    def read(buffer, start):
        return lax.dynamic_slice(buffer, (start, jnp.int32(0)),
                                 (width, fields))

    def along_row(e, fe, carry):
        """``d[l] = min(e[l], d[l - 1] + 1)``, ``e`` winning ties; lane -1
        holds ``carry`` (distance and feature)."""
        key = e - lane
        least = jnp.minimum(lax.cummin(key), carry[0] + 1)
        d = least + lane
        if fe is None:
            return d, None
        source = lax.cummax(jnp.where(key == least, lane, -1))
        return d, jnp.where(source < 0, carry[-1],
                            jnp.take(fe, jnp.maximum(source, 0)))

    def one_pass(before, backward):
        sign = -1 if backward else 1

        def row_step(k, out):
            r = rows - 1 - k if backward else k
            coordinates = row_coordinates(r)
            row_start = margin + r * n
            # Whether each neighbour's row exists, and how far it lies.
            neighbours = []
            for o in others:
                o = tuple(sign * v for v in o)
                inside = functools.reduce(
                    jnp.logical_and,
                    [(c + v >= 0) & (c + v < shape[axis])
                     for axis, (c, v) in enumerate(zip(coordinates, o))],
                    jnp.bool_(True))
                distance = sum(v * strides[axis] for axis, v in enumerate(o)
                               if v)
                neighbours.append((o[-1], inside, distance))

            def chunk_step(c, state):
                out, carry = state
                # Chunks in the order of the pass, the last one reaching
                # past the row into positions a later row overwrites.
                first = n - (c + 1) * width if backward else c * width
                position = first + lane
                start = row_start + first
                if backward:
                    values = read(before, start)
                    e = values[:, 0]
                    fe = values[:, 1] if features else None
                else:
                    e = jnp.where(_get(mask, start, width), far, 0)
                    fe = (r * n + position) if features else None
                for last, inside, distance in neighbours:
                    beside = position + last
                    ok = inside & (beside >= 0) & (beside < n)
                    there = read(out, start + distance)
                    candidate = jnp.where(ok, there[:, 0] + 1, far + 1)
                    better = candidate < e
                    e = jnp.where(better, candidate, e)
                    if features:
                        fe = jnp.where(better, there[:, 1], fe)
                if left in offsets:
                    if backward:
                        e, fe = e[::-1], None if fe is None else fe[::-1]
                    e, fe = along_row(e, fe, carry)
                    if backward:
                        e, fe = e[::-1], None if fe is None else fe[::-1]
                values = jnp.stack([e, fe] if features else [e], axis=-1)
                out = lax.dynamic_update_slice(out, values,
                                               (start, jnp.int32(0)))
                # The carry is read back from what is written.
                edge = start + (0 if backward else width - 1)
                return out, lax.dynamic_slice(out, (edge, jnp.int32(0)),
                                              (1, fields))[0]

            out, _ = lax.fori_loop(
                0, chunks, chunk_step,
                (out, jnp.full(fields, _FAR, np.int32)))
            return out

        return lax.fori_loop(0, rows, row_step,
                             jnp.zeros((length, fields), np.int32))

    out = one_pass(one_pass(None, backward=False), backward=True)
    out = out[margin:]
    results = [jnp.zeros(length - margin, np.int32)] * (1 + ndim * features)

    def finish(q, d, f=None):
        values = [jnp.where(d >= _FAR, -1, d)]
        if f is not None:
            values += _unravel_values(f, shape)
        return values

    return _chunked(rows * n, finish, results,
                    *[out[:, k] for k in range(fields)])


def _cdt_flat_run(mask: np.ndarray, offsets: tuple[tuple[int, ...], ...],
                  features: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """The chamfer transform of a host ``mask`` (True on the foreground,
    at least one element, at least 1-D) on a flat canvas."""
    shape, size = mask.shape, mask.size
    canvas = aligned_empty(_flat_length(size), np.bool_)
    canvas[:_MARGIN] = True
    canvas[_MARGIN:_MARGIN + size] = mask.reshape(-1)
    canvas[_MARGIN + size:] = True
    values = _cdt_flat(canvas, _flat_geometry(shape), offsets=offsets,
                       width=_lanes_for(shape[-1]), features=features)
    values = [np.asarray(x)[:size].reshape(shape) for x in values]
    return values[0], np.stack(values[1:]) if features else None


#: Border elements one call of :func:`_bf_flat` compares with: few for
#: arrays of little border, else many (a longer list runs in several
#: calls of one program).
_FEW_CANDIDATES, _MANY_CANDIDATES = 32, 512


@cached_jit(static_argnames=("metric", "dtype"))
def _bf_flat(best: Array, best_index: Array, places: Array, indices: Array,
             geometry: Array, sampling: Array | None, *, metric: int,
             dtype: np.dtype) -> list[Array]:
    """:func:`_bf_kernel` on a flat canvas, for one list of candidates:
    ``places`` their coordinates (one row per axis), ``indices`` their
    flat indices (-1 for none), in raster order.  Updates each element's
    least distance so far and its candidate's index, the later candidate
    winning ties."""
    shape = geometry[0]
    ndim = shape.shape[0]

    def compare(q, best, best_index):
        coordinates = flat_position(q[0], _CHUNK, shape)

        def step(carry, candidate):
            best, best_index = carry
            place, index = candidate
            total = _bf_distance(coordinates, place, metric, sampling,
                                 dtype)
            better = (index >= 0) & (total <= best)
            return (jnp.where(better, total, best),
                    jnp.where(better, index, best_index)), None

        (best, best_index), _ = lax.scan(step, (best, best_index),
                                         (places.T, indices))
        return [best, best_index]

    count = functools.reduce(lambda u, v: u * v,
                             [shape[k] for k in range(ndim)])
    return _chunked(count, compare, [jnp.zeros_like(best),
                                     jnp.zeros_like(best_index)],
                    best, best_index)


def _border_host(foreground: np.ndarray) -> np.ndarray:
    """:func:`_border` of a host array, by numpy."""
    grown = foreground
    for axis in range(foreground.ndim):
        wider = grown.copy()
        low = [slice(None)] * foreground.ndim
        high = [slice(None)] * foreground.ndim
        low[axis], high[axis] = slice(None, -1), slice(1, None)
        wider[tuple(high)] |= grown[tuple(low)]
        wider[tuple(low)] |= grown[tuple(high)]
        grown = wider
    return grown & ~foreground


def _bf_flat_run(foreground: np.ndarray, metric: int, dtype: np.dtype,
                 sampling: tuple | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The brute-force transform of a host ``foreground`` (at least one
    element, at least 1-D) on a flat canvas: distances and features."""
    shape, size = foreground.shape, foreground.size
    border = np.flatnonzero(_border_host(foreground)).astype(np.int32)
    chunk = (_FEW_CANDIDATES if border.size <= _FEW_CANDIDATES
             else _MANY_CANDIDATES)
    length = _flat_length(size)
    if metric == 1:
        best = np.full(length, np.finfo(dtype).max, dtype)
    else:
        best = np.full(length, np.iinfo(np.uint32).max, np.uint32)
    best_index = np.zeros(length, np.int32)
    geometry = _flat_geometry(shape)
    sampling = (None if sampling is None or metric != 1
                else np.asarray(sampling, dtype).reshape(len(shape)))
    for start in range(0, max(border.size, 1), chunk):
        indices = np.full(chunk, -1, np.int32)
        part = border[start:start + chunk]
        indices[:part.size] = part
        places = np.stack(np.unravel_index(np.maximum(indices, 0), shape)
                          ).astype(np.int32)
        best, best_index = _bf_flat(best, best_index, places, indices,
                                    geometry, sampling, metric=metric,
                                    dtype=dtype)
    flat = foreground.reshape(-1)
    best = np.asarray(best)[:size]
    if metric == 1:
        dt = np.where(flat, np.sqrt(best), 0).astype(dtype)
    else:
        dt = np.where(flat, best, 0).astype(np.uint32)
    ft = np.where(flat, np.asarray(best_index)[:size],
                  np.arange(size, dtype=np.int32))
    ft = np.stack(np.unravel_index(ft, shape)).astype(np.int32)
    return dt.reshape(shape), ft.reshape((len(shape),) + shape)


#: Per (plan, shape, dtype): the seconds its calls after the first have
#: run on flat canvases in this process (the first may compile a bucket's
#: programs, so it is not counted).
_flat_seconds = SecondsSpent()

#: The seconds a plan on a shape may run on flat canvases before it
#: compiles its own exact-shape programs: about what compiling them costs
#: on a CPU (more for more axes), so that a shape's calls take at most
#: about twice as long as the better of the two choices made in hindsight.
EXACT_AFTER_S = 1.0


def _on_flat_canvases(input: Any, plan: Plan, sampling: Any,
                      compute: Callable[[], tuple]) -> tuple | None:
    """``compute()``, the flat-canvas kernels' results, where a call runs
    on flat canvases, else None: concrete, non-empty input on a CPU with a
    concrete sampling, outside ``jax.disable_jit()``, whose plan on its
    shape and dtype has not yet run `EXACT_AFTER_S` seconds on them.

    A shape met once compiles nothing of its own; a shape met often
    compiles its exact-shape kernels once its flat runs have cost about as
    much, then runs at their speed (the flat kernels are 1-2× slower for
    the Euclidean transforms, 2-7× for the chamfer ones, with the same
    values).
    """
    if (not concrete_on_cpu(input) or input.size == 0
            or jax.config.jax_disable_jit
            or any(isinstance(v, jax.core.Tracer)
                   for v in jax.tree.leaves(sampling))):
        return None
    key = (plan, input.shape, np.dtype(input.dtype))
    spent = _flat_seconds.get(key)
    if (spent or 0.0) >= EXACT_AFTER_S:
        return None
    start = time.perf_counter()
    results = compute()
    _flat_seconds.add(key, 0.0 if spent is None
                      else time.perf_counter() - start)
    return results


def _like(input: Any, *values: np.ndarray | None) -> list[Any]:
    """Host results as the kind of array ``input`` is (see
    :func:`_canvas.like_input`)."""
    return [None if v is None else like_input(v, input) for v in values]


def _edt_no_background(shape: tuple[int, ...], sampling: tuple | None,
                       dtype: np.dtype, distances: bool, indices: bool
                       ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """SciPy's results without background: feature -1 along axis 0 and 0
    along the others, the distances to that point (computed on the host,
    rounded as the kernels round)."""
    ft = np.zeros((len(shape),) + shape, np.int32)
    ft[0] = -1
    dt = None
    if distances:
        dt = np.zeros(shape, dtype)
        for axis, n in enumerate(shape):
            t = ((ft[axis, ...] if axis == 0 else 0)
                 - np.arange(n).reshape((-1,) + (1,) * (len(shape) - 1
                                                        - axis)))
            t = np.broadcast_to(t, shape).astype(dtype)
            if sampling is not None:
                t = t * dtype.type(sampling[axis])
            dt += t * t
        np.sqrt(dt, out=dt)
    return dt, ft if indices else None


#: The most shifts along an axis the host's shifts take (see
#: :func:`_edt_host_shifts`) before they give the array to the flat
#: canvases, by the integer type of their keys: past about this many the
#: flat kernels are faster (``benchmarks/bench_distance.py``).
_MOST_HOST_SHIFTS = {np.dtype(np.int32): 32, np.dtype(np.int64): 10}


def _running_rows(values: np.ndarray, op: np.ufunc, reverse: bool = False
                  ) -> np.ndarray:
    """``values[i] = op(values[i -+ 1], values[i])`` along axis 0, in place,
    one row at a time (numpy's ``accumulate`` along axis 0 walks each
    column with a stride)."""
    lines = values.reshape(len(values), -1)
    if reverse:
        for i in range(len(lines) - 2, -1, -1):
            op(lines[i + 1], lines[i], out=lines[i])
    else:
        for i in range(1, len(lines)):
            op(lines[i - 1], lines[i], out=lines[i])
    return values


def _along(axis: int, ndim: int, start: int, stop: int) -> tuple:
    """The index of positions ``start:stop`` along ``axis``."""
    index: list[Any] = [slice(None)] * ndim
    index[axis] = slice(start, stop)
    return tuple(index)


def _nearest_offsets_first(background: np.ndarray, none: int,
                           work: np.dtype) -> np.ndarray:
    """Offset along axis 0 from each element to its nearest background
    element, the lower on ties, and ``none`` (at least the axis's length)
    where the line has none; by a running maximum and minimum of
    positions.  Selections are products with the masks, as numpy's
    masked selections are several times slower."""
    n = background.shape[0]
    position = np.arange(n, dtype=work).reshape(
        (n,) + (1,) * (background.ndim - 1))
    flags = background.astype(work)
    past = work.type(none + n)  # farther than ``none`` from any position
    # The last background position at or before each element, and the
    # first at or after it (``-past`` and ``past`` where there is none).
    below = _running_rows(flags * (position + past) - past, np.maximum)
    above = _running_rows(past - flags * (past - position), np.minimum,
                          reverse=True)
    down, up = position - below, above - position
    offset = (up < down).astype(work) * (up + down) - down
    return np.clip(offset, -none, none, out=offset)


def _least_keys(keys: np.ndarray, axis: int, width: int, far: int,
                signed: bool, most_shifts: int) -> np.ndarray | None:
    """Each element's least key ``(squared distance) * width + bias``
    against the keys of the elements ``t`` away along ``axis`` plus
    ``t ** 2 * width`` (and ``t``, where ``signed``), ``t = ±1, ±2, ...``,
    until ``t ** 2`` exceeds every squared distance of a line that has one
    below ``far``; in place.  None where that takes more than
    ``most_shifts`` shifts."""
    ndim, length = keys.ndim, keys.shape[axis]
    # Lines along the axis without a feature are left as they are.
    lines = (keys < far * width).any(axis=axis, keepdims=True)
    candidates = keys.copy()
    s = 1
    while s < length:
        top = keys.max() // width
        if top >= far:
            top = (keys * lines).max() // width
        if s * s > top:
            break
        if s > most_shifts:
            return None
        for t in (s, -s):
            here = _along(axis, ndim, 0, length - s)
            there = _along(axis, ndim, s, length)
            if t < 0:
                here, there = there, here
            step = keys.dtype.type(s * s * width + (t if signed else 0))
            np.minimum(keys[here], candidates[there] + step, out=keys[here])
        s += 1
    return keys


#: Lines along axis 1 that :func:`_edt_host_shifts` tries first, one in
#: this many along axis 0, to give up early on an array whose features lie
#: far apart.
_PROBE_STRIDE = 16


def _probe_fails(mask: np.ndarray, most_shifts: int) -> bool:
    """Whether the pass along axis 1 of :func:`_edt_host_shifts` needs more
    than ``most_shifts`` shifts on the lines of ``mask`` at every
    `_PROBE_STRIDE`-th position along axis 0, or finds no background
    within ``most_shifts`` of one of their elements along axes 0 and 1.

    Their distances along axis 0 are searched only that far (past it, the
    pass fails whatever they are), so the probe reads a small part of the
    array: a few percent of the transform's work.
    """
    reach = most_shifts + 1
    rows = len(range(0, mask.shape[0], _PROBE_STRIDE))
    widths = [(reach, reach)] + [(0, 0)] * (mask.ndim - 1)
    padded = np.pad(mask, widths, constant_values=True)
    # Each probed element's distance along axis 0 to the background, up to
    # ``reach``: the steps after which it has found none.
    open_ = np.ones((rows,) + mask.shape[1:], bool)
    distance = np.zeros(open_.shape, np.int32)
    for t in range(reach):
        for start in (reach + t, reach - t):
            open_ &= padded[start::_PROBE_STRIDE][:rows]
        distance += open_
    keys = distance * distance
    # A far beyond ``reach ** 2``: every line is searched.
    return _least_keys(keys, 1, 1, reach * reach + 1, False,
                       most_shifts) is None


def _edt_host_shifts(mask: np.ndarray, dtype: np.dtype, distances: bool,
                     indices: bool
                     ) -> tuple[np.ndarray | None, np.ndarray | None] | None:
    """The Euclidean transform of a host ``mask`` (True on the foreground,
    some background) without sampling, by the shifts of the accelerators'
    kernels (:func:`_shifts_pass`) in numpy: distances and features as
    numpy arrays (None where not wanted), or None where an axis needs more
    than `_MOST_HOST_SHIFTS` shifts (features far apart: large blobs).

    Along axis 0, each element's nearest background element, the lower on
    ties; along each further axis, each element against those ``t`` away,
    ``t = ±1, ±2, ...`` (:func:`_least_keys`): the least squared distance
    wins, and of equal ones the least ``t``.  The squared distances are
    integers, summed exactly, so the distances and features are SciPy's,
    ties included; nothing is compiled, so an image of a new shape costs
    only its numpy work.
    """
    shape, ndim = mask.shape, mask.ndim
    # ``far``, the squared distance of "no feature", exceeds every squared
    # distance in the array, and the keys of far ones fit in ``work``.
    none = math.isqrt(sum(n * n for n in shape)) + 1
    far = none * none
    width = 2 * max(shape) - 1 if indices else 1
    work = np.dtype(np.int32)
    if (far + ndim * (_MOST_HOST_SHIFTS[work] + 1) ** 2) * width >= 2 ** 31:
        work = np.dtype(np.int64)
    most_shifts = _MOST_HOST_SHIFTS[work]
    if ndim > 1 and _probe_fails(mask, most_shifts):
        return None
    offset = _nearest_offsets_first(~mask, none, work)
    best = offset * offset
    offsets = [offset]
    for axis in range(1, ndim):
        length = shape[axis]
        # Keys: squared distance * width + t + length - 1.
        keys = best * work.type(width)
        if indices:
            keys += length - 1
        if _least_keys(keys, axis, width, far, indices,
                       most_shifts) is None:
            return None
        if indices:
            shift = keys % width - (length - 1)
            source = shift + np.arange(length, dtype=work).reshape(
                (length,) + (1,) * (ndim - 1 - axis))
            offsets = [np.take_along_axis(o, source, axis) for o in offsets]
            offsets.append(shift)
            best = keys // width
        else:
            best = keys
    if np.dtype(dtype).itemsize < 8 and best.max() >= 2 ** 24:
        return None  # a float32 sum of the axes' squares would round
    dt = np.sqrt(best.astype(dtype)) if distances else None
    ft = None
    if indices:
        ft = (np.stack(offsets) + np.indices(shape, work)).astype(np.int32)
    return dt, ft


def _on_host_shifts(input: Any, plan: EuclideanPlan, sampling: tuple | None
                    ) -> tuple | None:
    """:func:`_edt_host_shifts` of concrete input on a CPU with some
    background and no sampling but ones, where they finish; else None."""
    if (not concrete_on_cpu(input) or input.ndim == 0 or input.size == 0
            or (sampling is not None and not all(
                not isinstance(v, jax.core.Tracer) and v == 1
                for v in sampling))):
        return None
    mask = np.asarray(input) != 0
    if mask.all():
        return None
    return _edt_host_shifts(mask, plan.dtype, plan.return_distances,
                            plan.return_indices)


def _edt_flat(mask: np.ndarray, sampling: tuple | None, dtype: np.dtype,
              distances: bool, indices: bool
              ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The Euclidean transform of a host ``mask`` (True on the foreground,
    at least one element) on flat canvases: distances and features as
    numpy arrays (None where not wanted)."""
    shape, size, ndim = mask.shape, mask.size, mask.ndim
    if mask.all():
        return _edt_no_background(shape, sampling, dtype, distances, indices)
    length = _flat_length(size)
    canvas = aligned_empty(length, np.bool_)
    canvas[:size] = mask.reshape(-1)
    canvas[size:] = True
    geometry = _flat_geometry(shape)
    sampling = (None if sampling is None
                else np.asarray(sampling, dtype).reshape(ndim))
    flags = dict(distances=distances, indices=indices, dtype=dtype)
    outputs = _edt_first_flat(canvas, geometry, sampling,
                              lanes=_lanes_for(size // shape[0]),
                              last=ndim == 1, **flags)
    for axis in range(1, ndim):
        outputs = _edt_axis_flat(outputs, geometry, sampling, axis=axis,
                                 lanes=_lanes_for(size // shape[axis]),
                                 last=axis == ndim - 1, **flags)
    values = [np.asarray(x)[:size].reshape(shape) for x in outputs]
    dt = values.pop(0) if distances else None
    ft = np.stack(values) if indices else None
    return dt, ft


# --------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------

def _run_bf(plan: BruteForcePlan, input: Array, sampling: tuple | None,
            distances: Any, indices: Any) -> Any:
    """The kernel of a :class:`BruteForcePlan`."""
    flat = _on_flat_canvases(input, plan, sampling, lambda: _bf_flat_run(
        np.asarray(input) != 0, plan.metric, plan.dtype, sampling)
    ) if input.ndim else None
    if flat is not None:
        return _results(*_like(input, *flat), distances, indices,
                        plan.return_distances, plan.return_indices)
    input = to_jax(input)
    code, dtype = plan.metric, plan.dtype
    sampling = _sampling_array(sampling, dtype)
    shape = input.shape
    flat = input.reshape(-1) if input.ndim == 0 else input
    if flat.size == 0:
        dt = jnp.zeros(shape, dtype if code == 1 else jnp.uint32)
        ft = jnp.zeros((len(shape),) + shape, jnp.int32)
    else:
        if isinstance(flat, jax.core.Tracer):
            border = np.arange(flat.size)
            count = flat.size
        else:
            border = np.flatnonzero(_border_host(nonzero_mask(flat))
                                    if concrete_on_cpu(flat)
                                    else np.asarray(_border_of(flat)))
            # A power of two, at least 64: few programs whatever the image.
            count = max(64, 1 << int(border.size - 1).bit_length())
        block = _bf_block(flat.size, count)
        candidates = np.full(-(-count // block) * block, -1, np.int32)
        candidates[:border.size] = border
        dt, ft = _bf_kernel(flat, jnp.asarray(candidates), sampling,
                            metric=code, dtype=dtype, block=block)
    if input.ndim == 0:
        dt, ft = dt.reshape(shape), jnp.zeros((0,), jnp.int32)
    return _results(dt, ft, distances, indices, plan.return_distances,
                    plan.return_indices)


def _distance_kinds(arguments: Mapping[str, Any]) -> str:
    """``results_64`` of the distance transforms: float distances are
    float64; integer distances and the indices have SciPy's fixed dtypes
    (int32, uint32), whatever the input's."""
    return "f"


@docfiller
@_whole_dask
@ndimage_function("input", reject_float16=False, planned=True,
                  results_64=_distance_kinds)
def distance_transform_bf(input: ArrayLike, metric: str = "euclidean",
                          sampling: Any = None, return_distances: bool = True,
                          return_indices: bool = False, distances: Any = None,
                          indices: Any = None) -> Any:
    """Distance transform by brute force.

    Replaces each foreground (non-zero) element by its distance to the
    nearest background (zero) element, comparing it with every background
    element next to the foreground.  Of equally near background elements
    the feature transform picks the last in raster order, as SciPy does.

    Parameters
    ----------
    %(distance_input)s
    metric : {'euclidean', 'taxicab', 'chessboard'}, optional
        'cityblock' and 'manhattan' are also valid and mean 'taxicab'.
        Default is 'euclidean'.
    sampling : float or sequence of float, optional
        Spacing of the elements along each axis (one per axis, or one for
        all); only used by the 'euclidean' metric. Default: 1.
    %(return_distances_indices)s
    distances : ndarray, optional
        A numpy array to write the distances into instead of returning
        them (`return_distances` must be True): float64 for 'euclidean',
        uint32 otherwise, of the shape of `input`.
    %(indices_array)s

    Returns
    -------
    distances : ndarray, optional
        float64 for 'euclidean', uint32 otherwise. Returned only when
        `return_distances` is True and `distances` is not supplied.
    %(indices_returned)s

    Examples
    --------
    >>> import numpy as np
    >>> import jaxndimage as ndi
    >>> a = np.array([[0, 1, 1, 1, 0]])
    >>> ndi.distance_transform_bf(a)
    array([[0., 1., 2., 1., 0.]])
    >>> ndi.distance_transform_bf(a, 'taxicab', return_indices=True)[1][1]
    array([[0, 0, 4, 4, 4]], dtype=int32)
    """
    dt_inplace, ft_inplace = _check_returns(distances, indices,
                                            return_distances, return_indices)
    _check_concrete(input, dt_inplace, ft_inplace)
    input = as_array(input)
    if not isinstance(metric, str):
        metric.lower()  # SciPy's AttributeError for a non-string metric
    code = _METRICS.get(metric.lower())
    if code is None:
        raise RuntimeError("distance metric not supported")
    sampling = _sampling(sampling, input.ndim)
    if dt_inplace:
        if distances.shape != input.shape:
            raise RuntimeError("distances array has wrong shape")
        wanted = np.float64 if code == 1 else np.uint32
        if distances.dtype.type != wanted:
            raise RuntimeError("distances array must be "
                               + ("float64" if code == 1 else "uint32"))
    if ft_inplace:  # SciPy checks it after computing; no other error between
        _check_indices(indices, input.shape, RuntimeError)
    plan = BruteForcePlan(input.ndim, bool(return_distances),
                          bool(return_indices), code, _float_dtype(),
                          sampling is not None)
    return Planned(plan, _run_bf, (input, sampling, distances, indices))


def _run_cdt(plan: ChamferPlan, input: Array, distances: Any,
             indices: Any) -> Any:
    """The kernel of a :class:`ChamferPlan`."""
    flat = _on_flat_canvases(input, plan, None, lambda: _cdt_flat_run(
        np.asarray(input) != 0, plan.offsets, plan.return_indices))
    if flat is not None:
        return _results(*_like(input, *flat), distances, indices,
                        plan.return_distances, plan.return_indices)
    input = to_jax(input)
    offsets, shape = plan.offsets, input.shape
    if input.size == 0:
        dt = jnp.zeros(shape, jnp.int32)
        ft = jnp.zeros(shape, jnp.int32)
    elif not plan.return_indices and offsets in (
            _structure_offsets("chessboard", input.ndim),
            _structure_offsets("taxicab", input.ndim)):
        dt = _cdt_separable(input, offsets == _structure_offsets(
            "chessboard", input.ndim) and input.ndim > 1)
        ft = None
    else:
        dt, ft = _cdt_kernel(input, offsets=offsets,
                             features=plan.return_indices)
    if plan.return_indices:
        ft = _unravel(ft, shape)
    return _results(dt, ft, distances, indices, plan.return_distances,
                    plan.return_indices)


@docfiller(dtype="int32")
@_whole_dask
@ndimage_function("input", reject_float16=False, planned=True,
                  results_64=_distance_kinds)
def distance_transform_cdt(input: ArrayLike, metric: Any = "chessboard",
                           return_distances: bool = True,
                           return_indices: bool = False,
                           distances: Any = None, indices: Any = None) -> Any:
    """Distance transform for chamfer type of transforms.

    Replaces each foreground (non-zero) element by its chamfer distance to
    the nearest background (zero) element: the number of steps between
    neighbours of the structure, -1 where there is no background.  The
    feature transform follows SciPy's two raster passes, ties included.

    Parameters
    ----------
    %(distance_input)s
    metric : {'chessboard', 'taxicab'} or array_like, optional
        'taxicab' (or 'cityblock', 'manhattan') steps between elements that
        share a face, 'chessboard' (default) between elements that touch. A
        custom structure has every dimension of length three; as in SciPy
        its memory is read as booleans, so pass it as a bool array.
    %(distance_outputs)s

    Returns
    -------
    distances : int32 ndarray, optional
        Returned only when `return_distances` is True and `distances` is
        not supplied.
    %(indices_returned)s

    Examples
    --------
    >>> import numpy as np
    >>> import jaxndimage as ndi
    >>> a = np.ones((4, 5), np.uint8)
    >>> a[0, 0] = 0
    >>> ndi.distance_transform_cdt(a)
    array([[0, 1, 2, 3, 4],
           [1, 1, 2, 3, 4],
           [2, 2, 2, 3, 4],
           [3, 3, 3, 3, 4]], dtype=int32)
    >>> ndi.distance_transform_cdt(a, 'taxicab')[3]
    array([3, 4, 5, 6, 7], dtype=int32)
    """
    dt_inplace, ft_inplace = _check_returns(distances, indices,
                                            return_distances, return_indices)
    _check_concrete(input, dt_inplace, ft_inplace)
    input = as_array(input)
    if input.ndim == 0:
        raise TypeError("input: distance_transform_cdt needs an array of "
                        "at least one dimension (SciPy raises TypeError)")
    offsets = _structure_offsets(metric, input.ndim)
    if dt_inplace:
        if distances.dtype.type != np.int32:
            raise ValueError("distances must be of int32 type")
        if distances.shape != input.shape:
            raise ValueError("distances has wrong shape")
    if return_indices and ft_inplace:  # SciPy checks it after computing
        _check_indices(indices, input.shape, ValueError)
    plan = ChamferPlan(input.ndim, bool(return_distances),
                       bool(return_indices), offsets)
    return Planned(plan, _run_cdt, (input, distances, indices))


def _run_edt(plan: EuclideanPlan, input: Array, sampling: tuple | None,
             distances: Any, indices: Any) -> Any:
    """The kernel of a :class:`EuclideanPlan`."""
    shifted = _on_host_shifts(input, plan, sampling)
    if shifted is not None:
        return _results(*_like(input, *shifted), distances, indices,
                        plan.return_distances, plan.return_indices)
    flat = _on_flat_canvases(input, plan, sampling, lambda: _edt_flat(
        np.asarray(input).reshape(input.shape or (1,)) != 0, sampling,
        plan.dtype, plan.return_distances, plan.return_indices))
    if flat is not None:
        return _results(*_like(input, *flat), distances, indices,
                        plan.return_distances, plan.return_indices)
    # The foreground, as a bool array of at least one dimension.
    input = nonzero_mask(input)
    if input.ndim == 0:
        input = input.reshape(1)
    dtype = plan.dtype
    sampling = _sampling_array(sampling, dtype)
    shape = input.shape
    if input.size == 0:
        ft = jnp.zeros((input.ndim,) + shape, jnp.int32)
    else:
        ft = _feature_transform(input, sampling, dtype,
                                algorithm("euclidean distance"))
    dt = None
    if plan.return_distances:
        dt = (jnp.zeros(shape, dtype) if input.size == 0
              else _feature_distances(ft, sampling, dtype=dtype))
    return _results(dt, ft, distances, indices, plan.return_distances,
                    plan.return_indices)


@docfiller(dtype="float64")
@_whole_dask
@ndimage_function("input", reject_float16=False, planned=True,
                  results_64=_distance_kinds)
def distance_transform_edt(input: ArrayLike, sampling: Any = None,
                           return_distances: bool = True,
                           return_indices: bool = False,
                           distances: Any = None, indices: Any = None) -> Any:
    """Exact Euclidean distance transform.

    Replaces each foreground (non-zero) element by its Euclidean distance
    to the nearest background (zero) element, with per-axis `sampling`.
    The feature transform is SciPy's, ties included: of equally near
    background elements, the one with the smallest coordinate along the
    last axis, then the one before it, and so on.  Linear time per axis.

    Parameters
    ----------
    %(distance_input)s
    sampling : float or sequence of float, optional
        Spacing of the elements along each axis (one per axis, or one for
        all). Default: 1.
    %(distance_outputs)s

    Returns
    -------
    distances : float64 ndarray, optional
        Returned only when `return_distances` is True and `distances` is
        not supplied (float32 for JAX input with x64 off).
    %(indices_returned)s

    Examples
    --------
    >>> import numpy as np
    >>> import jaxndimage as ndi
    >>> a = np.array([[0, 1, 1, 1, 1],
    ...               [0, 0, 1, 1, 1],
    ...               [0, 1, 1, 1, 1]])
    >>> ndi.distance_transform_edt(a)
    array([[0.        , 1.        , 1.41421356, 2.23606798, 3.16227766],
           [0.        , 0.        , 1.        , 2.        , 3.        ],
           [0.        , 1.        , 1.41421356, 2.23606798, 3.16227766]])
    >>> ndi.distance_transform_edt(a, sampling=[2, 1])
    array([[0.        , 1.        , 2.        , 2.82842712, 3.60555128],
           [0.        , 0.        , 1.        , 2.        , 3.        ],
           [0.        , 1.        , 2.        , 2.82842712, 3.60555128]])
    >>> ndi.distance_transform_edt(a, return_distances=False,
    ...                            return_indices=True)[1][0]
    array([0, 0, 1, 1, 1], dtype=int32)
    """
    dt_inplace, ft_inplace = _check_returns(distances, indices,
                                            return_distances, return_indices)
    _check_concrete(input, dt_inplace, ft_inplace)
    input = as_array(input)
    shape = input.shape or (1,)  # a 0-d input is transformed as 1-D
    sampling = _sampling(sampling, len(shape))
    if ft_inplace:
        _check_indices(indices, shape, RuntimeError, shape_first=True)
    if return_distances and dt_inplace:  # SciPy checks it after computing
        if distances.shape != shape:
            raise RuntimeError("distances array has wrong shape")
        if distances.dtype.type != np.float64:
            raise RuntimeError("distances array must be float64")
    plan = EuclideanPlan(input.ndim, bool(return_distances),
                         bool(return_indices), _float_dtype(),
                         sampling is not None)
    return Planned(plan, _run_edt, (input, sampling, distances, indices))
