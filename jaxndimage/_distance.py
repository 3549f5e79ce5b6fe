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
    to a power of two, so few programs compile); traced input compares with
    every element.

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
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage import _distributed
from jaxndimage._cache import cached_jit
from jaxndimage._canvas import nonzero_mask
from jaxndimage._dispatch import as_array, ndimage_function, to_jax
from jaxndimage._docstrings import docfiller
from jaxndimage._plans import Plan, Planned
from jaxndimage._structures import generate_binary_structure
from jaxndimage._support import normalize_sequence
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
    return jnp.stack([jnp.asarray(v, dtype) for v in values]) if values \
        else jnp.zeros((0,), dtype)


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
        a = (top - second).astype(dtype) * step_size
        b = (t - top).astype(dtype) * step_size
        c = a + b
        # SciPy's test, with the products rounded before the differences.
        products = _rounded([c * r_top, b * r_second, a * r_new, a * b * c],
                            zero)
        return is_site & (second >= 0) & (
            products[0] - products[1] - products[2] - products[3] > 0)

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


def _feature_transform(input: Array, sampling: Array | None,
                       dtype: np.dtype) -> Array:
    """Feature transform: ``(ndim,) + shape`` int32.

    For concrete input each stage is a program of its own, and so is each
    transpose between them (:func:`_moved`).
    """
    features = _first_features(input)
    for axis in range(1, input.ndim):
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
    (:func:`_moved`).
    """
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


@cached_jit(static_argnames=("metric", "dtype"))
def _bf_kernel(input: Array, candidates: Array, sampling: Array | None, *,
               metric: int, dtype: np.dtype) -> tuple[Array, Array]:
    """Distances and flat feature indices by comparing every element with
    every candidate (flat indices of border elements, -1 for none)."""
    shape = input.shape
    foreground = input != 0
    border = _border(foreground).reshape(-1)
    coords = [_coordinates(shape, axis).reshape(-1)
              for axis in range(len(shape))]
    size = input.size
    if metric == 1:
        far = jnp.asarray(np.finfo(dtype).max, dtype)
    else:
        far = jnp.asarray(np.iinfo(np.uint32).max, jnp.uint32)

    def step(carry, candidate):
        best, best_index = carry
        valid = (candidate >= 0) & border[jnp.maximum(candidate, 0)]
        rest = jnp.maximum(candidate, 0)
        place = [None] * len(shape)
        for axis in range(len(shape) - 1, -1, -1):
            place[axis] = rest % shape[axis]
            rest = rest // shape[axis]
        terms = []
        for axis in range(len(shape)):
            t = coords[axis] - place[axis]
            if metric == 1:
                t = t.astype(dtype)
                if sampling is not None:
                    t = t * sampling[axis]
                terms.append(t * t)
            else:
                terms.append(jnp.abs(t).astype(jnp.uint32))
        if metric == 3:
            total = terms[0]
            for term in terms[1:]:
                total = jnp.maximum(total, term)
        else:
            total = _sum_in_order(terms, sampling if metric == 1 else None)
        # SciPy's list holds the border in reverse raster order and keeps
        # the first strictly nearer one: the last in raster order wins.
        better = valid & (total <= best)
        return (jnp.where(better, total, best),
                jnp.where(better, candidate, best_index)), None

    init = (jnp.full(size, far), jnp.zeros(size, jnp.int32))
    (best, best_index), _ = lax.scan(step, init, candidates)
    own = jnp.arange(size, dtype=jnp.int32)
    fg = foreground.reshape(-1)
    if metric == 1:
        distance = jnp.where(fg, jnp.sqrt(best), 0).astype(dtype)
    else:
        distance = jnp.where(fg, best, 0).astype(jnp.uint32)
    index = jnp.where(fg, best_index, own)
    return distance.reshape(shape), index.reshape(shape)


# --------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------

def _run_bf(plan: BruteForcePlan, input: Array, sampling: tuple | None,
            distances: Any, indices: Any) -> Any:
    """The kernel of a :class:`BruteForcePlan`."""
    input = to_jax(input)
    code, dtype = plan.metric, plan.dtype
    sampling = _sampling_array(sampling, dtype)
    shape = input.shape
    flat = input.reshape(-1) if input.ndim == 0 else input
    if flat.size == 0:
        dt = jnp.zeros(shape, dtype if code == 1 else jnp.uint32)
        ft = jnp.zeros(shape, jnp.int32)
    else:
        if isinstance(flat, jax.core.Tracer):
            candidates = jnp.arange(flat.size, dtype=jnp.int32)
        else:
            border = np.flatnonzero(np.asarray(_border(flat != 0)))
            # A power of two, at least 64: few programs whatever the image.
            count = max(64, 1 << int(border.size - 1).bit_length())
            candidates = np.full(count, -1, np.int32)
            candidates[:border.size] = border
            candidates = jnp.asarray(candidates)
        dt, ft = _bf_kernel(flat, candidates, sampling, metric=code,
                            dtype=dtype)
        dt = dt.reshape(shape)
    if input.ndim == 0:
        ft = jnp.zeros((0,), jnp.int32)
    elif plan.return_indices:
        ft = _unravel(ft.reshape(shape), shape)
    return _results(dt, ft, distances, indices, plan.return_distances,
                    plan.return_indices)


@docfiller
@_whole_dask
@ndimage_function("input", reject_float16=False, planned=True,
                  results_64="f")
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
@ndimage_function("input", reject_float16=False, planned=True)
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
        ft = _feature_transform(input, sampling, dtype)
    dt = None
    if plan.return_distances:
        dt = (jnp.zeros(shape, dtype) if input.size == 0
              else _feature_distances(ft, sampling, dtype=dtype))
    return _results(dt, ft, distances, indices, plan.return_distances,
                    plan.return_indices)


@docfiller(dtype="float64")
@_whole_dask
@ndimage_function("input", reject_float16=False, planned=True,
                  results_64="f")
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
