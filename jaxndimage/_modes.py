"""Boundary modes: one table for filters and interpolation.

SciPy names eight ways to extend an array past its edges.  For filters they
collapse to five index maps (``grid-mirror`` is ``reflect``, ``grid-wrap`` is
``wrap`` and ``grid-constant`` is ``constant``); interpolation distinguishes all
eight.  Every filter pads through :func:`pad_axis`, which looks the mode up in
:data:`FILTER_EXTENSION`, so no kernel re-implements a mode.

All index maps are periodic extensions, which is what SciPy's C line
extension produces for pads of any width, including pads wider than the axis.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage._support import normalize_sequence

__all__ = [
    "FILTER_EXTENSION",
    "MODES",
    "check_mode",
    "check_modes",
    "extend_indices",
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


def extend_indices(indices: np.ndarray, size: int, mode: str) -> np.ndarray:
    """Map integer positions along an axis of length ``size`` into ``[0, size)``.

    Positions are arbitrary integers (far outside the axis too).  For the
    constant modes, positions outside the axis map to -1.
    """
    indices = np.asarray(indices, dtype=np.int64)
    extension = FILTER_EXTENSION[check_mode(mode)]
    if extension == "nearest":
        return np.clip(indices, 0, size - 1)
    if extension == "wrap":
        return indices % size
    if extension == "reflect":
        folded = indices % (2 * size)
        return np.where(folded < size, folded, 2 * size - 1 - folded)
    if extension == "mirror":
        if size == 1:
            return np.zeros_like(indices)
        folded = indices % (2 * size - 2)
        return np.where(folded < size, folded, 2 * size - 2 - folded)
    return np.where((indices >= 0) & (indices < size), indices, -1)


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
    start = int(indices[0])
    if np.array_equal(indices, np.arange(start, start + indices.size)):
        return lax.slice_in_dim(x, start, start + indices.size, axis=axis)
    return jnp.take(x, jnp.asarray(indices, dtype=jnp.int32), axis=axis)


def pad_axis(x: jnp.ndarray, axis: int, before: int, after: int, mode: str,
             cval: Any = 0.0) -> jnp.ndarray:
    """Extend ``x`` along ``axis`` by ``before``/``after`` elements.

    ``before`` and ``after`` may exceed the axis length; negative values crop
    instead of padding.  ``cval`` may be traced.
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
