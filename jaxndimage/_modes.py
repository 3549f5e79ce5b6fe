"""Boundary modes: one table for filters and interpolation.

SciPy names eight ways to extend an array past its edges.  For filters they
collapse to five index maps (``grid-mirror`` is ``reflect``, ``grid-wrap`` is
``wrap`` and ``grid-constant`` is ``constant``); interpolation distinguishes all
eight.  Every filter pads through :func:`pad_axis`, which looks the mode up in
:data:`FILTER_EXTENSION`, so no kernel re-implements a mode.

All index maps are periodic extensions, which is what SciPy's C line
extension produces for pads of any width, including pads wider than the axis.

Interpolation adds three columns to the table (:data:`INTERPOLATION`): how a
float coordinate past the edge is mapped back (:func:`map_coordinate`), how
the spline coefficients are extended to reach the neighbours of a point near
the edge, and which boundary condition the spline prefilter assumes (with the
padding SciPy applies first for ``nearest`` and ``grid-constant``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage._support import check_origin, normalize_sequence

__all__ = [
    "FILTER_EXTENSION",
    "MODES",
    "check_mode",
    "check_modes",
    "extend_indices",
    "fold_indices",
    "INTERPOLATION",
    "InterpolationMode",
    "map_coordinate",
    "pad_axis",
]

#: Every mode SciPy accepts, mapped to the index extension filters use for it.
FILTER_EXTENSION: dict[str, str] = {
    "reflect": "reflect",          # d c b a | a b c d | d c b a
    "grid-mirror": "reflect",
    "mirror": "mirror",            # d c b | a b c d | c b a
    "nearest": "nearest",          # a a a | a b c d | d d d
    "wrap": "wrap",                # b c d | a b c d | a b c
    "grid-wrap": "wrap",
    "constant": "constant",        # k k k | a b c d | k k k
    "grid-constant": "constant",
}

MODES: tuple[str, ...] = tuple(FILTER_EXTENSION)


def check_mode(mode: Any, name: str = "mode") -> str:
    """Return ``mode`` if SciPy accepts it, else raise SciPy's RuntimeError."""
    if not isinstance(mode, str) or mode not in FILTER_EXTENSION:
        raise RuntimeError(
            f"boundary mode not supported: {name}={mode!r}; expected one of "
            f"{', '.join(MODES)}")
    return mode


def check_modes(mode: Any, rank: int, name: str = "mode") -> list[str]:
    """Normalise a mode or per-axis sequence of modes to ``rank`` modes."""
    return [check_mode(m, name) for m in normalize_sequence(mode, rank, name)]


def window_passes(axes: Iterable[int], sizes: Iterable[Any],
                  origins: Iterable[Any], modes: Iterable[Any]
                  ) -> list[tuple[int, int, int, str]]:
    """The 1-D passes of a separable window filter: ``(axis, size, origin,
    mode)`` for each axis whose window is longer than one, validated."""
    passes = []
    for axis, size, origin, mode in zip(axes, sizes, origins, modes):
        if size > 1:
            size = int(size)
            passes.append((axis, size, check_origin(origin, size),
                           check_mode(mode)))
    return passes


def extend_indices(indices: np.ndarray, size: int, mode: str) -> np.ndarray:
    """Map integer positions along an axis of length ``size`` into ``[0, size)``.

    Positions are arbitrary integers (far outside the axis too).  For the
    constant modes, positions outside the axis map to -1.
    """
    indices = np.asarray(indices, dtype=np.int64)
    return _fold(indices, size, FILTER_EXTENSION[check_mode(mode)], np)


def _fold(indices: Any, size: int, extension: str, xp: Any) -> Any:
    """The index map of ``extension``, in numpy or jax.numpy (``xp``)."""
    if extension == "nearest":
        return xp.clip(indices, 0, size - 1)
    if extension == "wrap":
        return indices % size
    if extension == "reflect":
        folded = indices % (2 * size)
        return xp.where(folded < size, folded, 2 * size - 1 - folded)
    if extension == "mirror":
        if size == 1:
            return xp.zeros_like(indices)
        folded = indices % (2 * size - 2)
        return xp.where(folded < size, folded, 2 * size - 2 - folded)
    return xp.where((indices >= 0) & (indices < size), indices, -1)


def _edge(x: jnp.ndarray, axis: int, indices: np.ndarray,
          cval: Any) -> jnp.ndarray:
    """Gather the positions ``indices`` (already mapped) along ``axis``."""
    if indices.size == 0:
        shape = list(x.shape)
        shape[axis] = 0
        return jnp.zeros(shape, x.dtype)
    if np.all(indices < 0):
        shape = list(x.shape)
        shape[axis] = indices.size
        return jnp.full(shape, cval, x.dtype)
    runs = _step_runs(indices)
    if len(runs) > _MAX_RUNS:
        return jnp.take(x, jnp.asarray(indices, dtype=jnp.int32), axis=axis)
    parts = []
    for run in runs:
        low, high = int(run.min()), int(run.max()) + 1
        part = lax.slice_in_dim(x, low, high, axis=axis)
        if run.size > 1 and run[1] < run[0]:
            part = lax.rev(part, (axis,))
        elif run.size > high - low:
            part = jnp.repeat(part, run.size, axis=axis)
        parts.append(part)
    return parts[0] if len(parts) == 1 else jnp.concatenate(parts, axis=axis)


#: Edges made of more runs than this are gathered instead of sliced.
_MAX_RUNS = 8


def _step_runs(indices: np.ndarray) -> list[np.ndarray]:
    """Split ``indices`` into maximal runs that step by +1, -1 or 0.

    An edge of a reflecting or wrapping pad is such a run (or a few, when
    the pad is wider than the axis): a slice, reversed or repeated, which
    XLA copies far faster than a gather of the same positions.

    Examples
    --------
    >>> [r.tolist() for r in _step_runs(np.array([2, 1, 0, 0, 1, 2, 5, 5, 5]))]
    [[2, 1, 0], [0, 1, 2], [5, 5, 5]]
    """
    runs, first = [], 0
    for k in range(1, indices.size + 1):
        if k < indices.size:
            step = indices[k] - indices[k - 1]
            if abs(step) <= 1 and (k - first == 1
                                   or step == indices[first + 1] - indices[first]):
                continue
        runs.append(indices[first:k])
        first = k
    return runs


def pad_axis(x: jnp.ndarray, axis: int, before: int, after: int, mode: str,
             cval: Any = 0.0) -> jnp.ndarray:
    """Extend ``x`` along ``axis`` by ``before``/``after`` elements.

    ``before`` and ``after`` may exceed the axis length; negative values crop
    instead of padding.  ``cval`` may be traced.

    Kept instead of ``jnp.pad`` (numpy's mode names): it reads the mode
    table every other extension reads, and ``benchmarks/bench_pad.py``
    (``results/pad.json``) has it as fast for the reflecting and wrapping
    modes and 1.5-1.9x faster for 'constant'.
    """
    size = x.shape[axis]
    if before < 0:
        x = lax.slice_in_dim(x, -before, size, axis=axis)
        size += before
        before = 0
    if after < 0:
        x = lax.slice_in_dim(x, 0, size + after, axis=axis)
        size += after
        after = 0
    if before == 0 and after == 0:
        return x
    left = extend_indices(np.arange(-before, 0), size, mode)
    right = extend_indices(np.arange(size, size + after), size, mode)
    return jnp.concatenate(
        [_edge(x, axis, left, cval), x, _edge(x, axis, right, cval)],
        axis=axis)


# --------------------------------------------------------------------------
# Interpolation
# --------------------------------------------------------------------------

class InterpolationMode(NamedTuple):
    """How one SciPy mode behaves in interpolation.

    coordinate:
        how :func:`map_coordinate` folds a float coordinate into the axis:
        "mirror" (about 0 and n-1), "reflect" (about -1/2 and n-1/2),
        "wrap" (period n-1, SciPy's legacy 'wrap'), "grid-wrap" (period n),
        "outside" (leave it; points past the edges give cval) or "keep"
        (leave it; the coefficient extension covers any distance).
    coefficients:
        the :data:`FILTER_EXTENSION` mode that extends the spline
        coefficients to the neighbours of a point near the edge.
    prefilter:
        the boundary condition of the spline prefilter, again as a
        :data:`FILTER_EXTENSION` mode (the prefilter is exact for that
        extension of the signal).
    prepad:
        the mode SciPy pads the input with (by :data:`PREPAD` samples)
        before the prefilter, or None.
    """

    coordinate: str
    coefficients: str
    prefilter: str
    prepad: str | None


#: Every interpolation mode, in SciPy's C semantics (ni_interpolation.c,
#: ni_splines.c): 'constant' and 'wrap' have no exact prefilter of their own
#: and use the mirror one; 'nearest' and 'grid-constant' are padded first.
INTERPOLATION: dict[str, InterpolationMode] = {
    "constant": InterpolationMode("outside", "mirror", "mirror", None),
    "grid-constant": InterpolationMode("keep", "constant", "mirror",
                                       "constant"),
    "nearest": InterpolationMode("keep", "nearest", "reflect", "nearest"),
    "reflect": InterpolationMode("reflect", "reflect", "reflect", None),
    "grid-mirror": InterpolationMode("reflect", "reflect", "reflect", None),
    "mirror": InterpolationMode("mirror", "mirror", "mirror", None),
    "wrap": InterpolationMode("wrap", "mirror", "mirror", None),
    "grid-wrap": InterpolationMode("grid-wrap", "wrap", "wrap", None),
}

#: Samples SciPy pads on each side before prefiltering 'nearest' and
#: 'grid-constant' (``_prepad_for_spline_filter``).
PREPAD = 12


def map_coordinate(x: jnp.ndarray, size: int, mode: str) -> jnp.ndarray:
    """Fold float coordinates past the edges of an axis of ``size`` samples.

    Coordinates inside ``[0, size - 1]`` are unchanged.  The folding uses
    C's truncating division, as SciPy does, so results agree to the last
    bit.  'constant', 'grid-constant' and 'nearest' leave coordinates
    unchanged (see :class:`InterpolationMode`).
    """
    kind = INTERPOLATION[check_mode(mode)].coordinate
    if kind in ("outside", "keep"):
        return x
    if isinstance(size, int) and size <= 1:
        return jnp.zeros_like(x)
    n = float(size) if isinstance(size, int) else size.astype(x.dtype)
    low, high = x < 0, x > n - 1
    if kind == "mirror":
        period = 2 * n - 2
        below = period * jnp.trunc(-x / period) + x
        below = jnp.where(below <= 1 - n, below + period, -below)
        above = x - period * jnp.trunc(x / period)
        above = jnp.where(above >= n, period - above, above)
    elif kind == "reflect":
        period = 2 * n
        below = jnp.where(x < -period, period * jnp.trunc(-x / period) + x, x)
        below = jnp.where(below < -n, below + period, -below - 1)
        above = x - period * jnp.trunc(x / period)
        above = jnp.where(above >= n, period - above - 1, above)
    elif kind == "wrap":
        period = n - 1
        below = x + period * (jnp.trunc(-x / period) + 1)
        above = x - period * jnp.trunc(x / period)
    else:  # grid-wrap
        below = x + n * (jnp.trunc((-1 - x) / n) + 1)
        above = x - n * jnp.trunc(x / n)
    return jnp.where(low, below, jnp.where(high, above, x))


def fold_indices(indices: jnp.ndarray, size: int, extension: str,
                 reach: int | None = None) -> jnp.ndarray:
    """Traceable :func:`extend_indices` for interpolation: map integer
    positions along an axis of ``size`` into ``[0, size)`` by the
    :data:`FILTER_EXTENSION` mode ``extension``; -1 past the edges of
    'constant'.

    Interpolation reads the neighbours of a point through this map
    instead of padding a copy of the array.  ``size`` may be traced.  When the positions are known
    to lie at most ``reach`` samples past the edges, and that is less than
    one period away, the map is one reflection or shift per edge, which
    avoids an integer division per position.
    """
    # A traced size comes from a caller that guarantees size > reach + 1.
    if reach is not None and (not isinstance(size, int) or reach <= size - 2):
        low, high = indices < 0, indices > size - 1
        if extension == "reflect":
            return jnp.where(low, -1 - indices,
                             jnp.where(high, 2 * size - 1 - indices, indices))
        if extension == "mirror":
            return jnp.where(low, -indices,
                             jnp.where(high, 2 * size - 2 - indices, indices))
        if extension == "wrap":
            return jnp.where(low, indices + size,
                             jnp.where(high, indices - size, indices))
    return _fold(indices, size, extension, jnp)
