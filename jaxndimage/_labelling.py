"""Connected-component labelling on device: the union-find kernel of
`label`, which `binary_fill_holes` runs too.

`label` is traceable: union-find over *runs* (maximal stretches of
foreground along the last axis, numbered in raster order of their first
points by a prefix sum).  Two runs that touch through a structure offset
touch first at the first point of one of them, so the links kept are those
from or to a run's first point: at most two per pair of touching runs.
Each root is hooked onto the smallest root linked to it (a scatter-min) and
pointer jumping makes every run point at its root (O(log N) rounds per
pass, not one per pixel of the longest path), repeated until no two linked
roots differ.  The root of a feature is then its first run, so numbering
the roots by a prefix sum gives SciPy's labels.  For concrete input the
runs are counted first and the union-find runs on arrays of the next power
of two of that count (the first points found by a binary search in the
prefix sum, and the links read at them); under a trace, where the count is
not known, on arrays of one node per point.

The entry point is :func:`_label_runs` (labels and their count for the
structure's :func:`_backward_offsets`); :func:`_label_kernel` is the
compiled kernel.  :func:`label_index_dtype` and :func:`_max_exact` are the
dtypes labels are counted in and may be stored in.  Morphology and the
measurements import this module; it imports neither.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxndimage._cache import cached_jit
from jaxndimage._canvas import concrete_on_cpu, nonzero_mask
from jaxndimage._propagation import shifted_by


def _backward_offsets(structure: np.ndarray) -> tuple[tuple[int, ...], ...]:
    """Offsets of the structure's neighbours that come earlier in raster
    order (a symmetric structure's other half mirrors them); none for a
    0-d structure."""
    if structure.ndim == 0:
        return ()
    offsets = []
    for position in zip(*np.nonzero(structure)):
        offset = tuple(int(p) - 1 for p in position)
        if offset < (0,) * len(offset):
            offsets.append(offset)
    return tuple(offsets)


def _compress(parent: jax.Array) -> jax.Array:
    """Pointer jumping until every point points at its root."""

    def step(state):
        parent, _ = state
        grand = parent[parent]
        return grand, jnp.any(grand != parent)

    return jax.lax.while_loop(lambda state: state[1], step,
                              (parent, jnp.array(True)))[0]


def _along_rows(ndim: int) -> tuple[int, ...]:
    """The offset of a point's predecessor along the last axis."""
    return (0,) * (ndim - 1) + (-1,)


def _runs(input: jax.Array, offsets: tuple[tuple[int, ...], ...]
          ) -> tuple[jax.Array, jax.Array]:
    """The foreground and the first point of each of its *runs*: maximal
    stretches along the last axis when the structure connects neighbours
    along it, else single points."""
    foreground = input != 0
    if _along_rows(input.ndim) not in offsets:
        return foreground, foreground
    return foreground, foreground & ~shifted_by(
        foreground, _along_rows(input.ndim), False)


@cached_jit(static_argnames=("offsets",))
def _count_runs_kernel(input: jax.Array, *, offsets):
    return jnp.sum(_runs(input, offsets)[1])


def _count_runs(input: Any, offsets: tuple[tuple[int, ...], ...]) -> int:
    """The number of runs of concrete input (see :func:`_runs`), which
    sizes :func:`_label_kernel`; counted by numpy for host memory."""
    if not concrete_on_cpu(input):
        return int(_count_runs_kernel(input, offsets=offsets))
    foreground = nonzero_mask(input)
    if _along_rows(foreground.ndim) not in offsets:
        return int(np.count_nonzero(foreground))
    return int(np.count_nonzero(foreground[..., :1])
               + np.count_nonzero(foreground[..., 1:]
                                  & ~foreground[..., :-1]))


#: The block length of :func:`_prefix_count`.  Each point of a block is
#: one unrolled addition: the program's compile time grows with the
#: length, and longer blocks run no faster.
_PREFIX_BLOCK = 16


def _prefix_count(mask: jax.Array, dtype: np.dtype) -> jax.Array:
    """The inclusive prefix sum of a flat boolean ``mask``, in ``dtype``.

    Added within blocks of `_PREFIX_BLOCK` points, then across blocks,
    which XLA's CPU backend runs in about two thirds of the time of
    ``jnp.cumsum`` on millions of points.
    """
    size = mask.shape[0]
    padded = -(-size // _PREFIX_BLOCK) * _PREFIX_BLOCK
    blocks = jnp.pad(mask.astype(dtype), (0, padded - size)).reshape(
        -1, _PREFIX_BLOCK)
    columns = [blocks[:, 0]]
    for k in range(1, _PREFIX_BLOCK):
        columns.append(columns[-1] + blocks[:, k])
    within = jnp.stack(columns, axis=1)
    before = jnp.cumsum(within[:, -1], dtype=dtype) - within[:, -1]
    return (within + before[:, None]).reshape(-1)[:size]


def _flat_offset(offset: tuple[int, ...], shape: tuple[int, ...]) -> int:
    """How far ``offset`` reaches in the C-ordered flat array."""
    return int(np.dot(offset, [math.prod(shape[axis + 1:])
                               for axis in range(len(shape))]))


@cached_jit(static_argnames=("offsets", "index_dtype", "runs"))
def _label_kernel(input: jax.Array, *, offsets, index_dtype, runs):
    """SciPy's labels and their number, by union-find over runs.

    With ``runs`` (a bound of the number of runs, for concrete input) the
    runs are numbered in raster order of their first points; with None (a
    trace, where the number is not known) a run is named by the flat
    index of its first point.  Either way each feature's root is its first
    run, so numbering the roots by a prefix sum numbers the features by
    their first point, as SciPy does.

    Two runs that touch through an offset touch first at the first point
    of one of them; so the links hooked are those from and to the first
    points of runs, at most two per pair of touching runs (under a trace:
    one per point).
    """
    shape, size = input.shape, input.size
    foreground, start = _runs(input, offsets)
    flat_start = start.ravel()
    if runs is None:
        node = jnp.arange(size, dtype=index_dtype)
        if _along_rows(input.ndim) in offsets:  # the first point of its run
            first = jnp.where(start, node.reshape(shape), 0)
            node = jax.lax.associative_scan(jnp.maximum, first,
                                            axis=-1).ravel()
        nodes, is_node = size, flat_start
        # Every point links to its neighbours (`touching` decides).
        firsts = jnp.arange(size, dtype=index_dtype)
        valid = jnp.ones(size, bool)
    else:
        count = _prefix_count(flat_start, index_dtype)
        node = jnp.maximum(count - 1, 0)
        nodes = runs
        is_node = jnp.arange(runs, dtype=index_dtype) < count[-1]
        firsts = jnp.searchsorted(
            count, jnp.arange(1, runs + 1, dtype=index_dtype)
        ).astype(index_dtype)
        valid = firsts < size
        firsts = jnp.minimum(firsts, size - 1)
    none = nodes  # the node of padding links, and of nothing else
    ends = []
    for offset in offsets:
        if offset == _along_rows(input.ndim):
            continue
        step = _flat_offset(offset, shape)
        touching = (foreground & shifted_by(foreground, offset, False)).ravel()
        # From a run's first point p to p + offset ...
        linked = valid & touching[firsts]
        ends.append((jnp.where(linked, node[firsts], none),
                     jnp.where(linked, node[jnp.clip(firsts + step, 0,
                                                     size - 1)], none)))
        if runs is None:
            continue  # every point is a first point here
        # ... and from p - offset to a run's first point p.
        back = firsts - step
        inside = (back >= 0) & (back < size)
        back = jnp.clip(back, 0, size - 1)
        linked = valid & inside & touching[back]
        ends.append((jnp.where(linked, node[back], none),
                     jnp.where(linked, node[firsts], none)))
    parent = jnp.arange(nodes + 1, dtype=index_dtype)

    def hook(state):
        parent, _ = state
        parent = _compress(parent)
        hooked = parent
        for a, b in ends:
            root_a, root_b = parent[a], parent[b]
            low, high = (jnp.minimum(root_a, root_b),
                         jnp.maximum(root_a, root_b))
            hooked = hooked.at[jnp.where(low != high, high, none)].min(low)
        hooked = hooked.at[none].set(none)
        return hooked, jnp.any(hooked != parent)

    parent, _ = jax.lax.while_loop(lambda state: state[1], hook,
                                   (parent, jnp.array(True)))
    root = _compress(parent)[:nodes]
    is_root = (root == jnp.arange(nodes, dtype=index_dtype)) & is_node
    number = jnp.cumsum(is_root, dtype=index_dtype)
    labels = jnp.where(foreground.ravel(), number[root][node], 0)
    return labels.reshape(shape), number[-1]


def label_index_dtype(size: int) -> np.dtype:
    """The dtype of labels and flat indices for ``size`` points: int32,
    int64 from 2**31 - 2 points (where x64 allows)."""
    return np.dtype(jax.dtypes.canonicalize_dtype(
        np.int64 if size >= 2 ** 31 - 2 else np.int32))


def _max_exact(dtype: np.dtype) -> int:
    """The largest label ``dtype`` stores exactly."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return 1
    if dtype.kind == "f":
        return 2 ** (np.finfo(dtype).nmant + 1)
    return int(np.iinfo(dtype).max)


def _label_runs(input: jax.Array, offsets: tuple[tuple[int, ...], ...],
                index_dtype: np.dtype) -> tuple[jax.Array, jax.Array]:
    """:func:`_label_kernel`, sized by the number of runs where it can be
    counted first (concrete input): the next power of two, at least 4096;
    one node per point under a trace."""
    runs = None
    if not isinstance(input, jax.core.Tracer):
        bound = max(4096, 1 << (_count_runs(input, offsets) - 1).bit_length())
        runs = bound if bound < input.size else None
    return _label_kernel(input, offsets=offsets, index_dtype=index_dtype,
                         runs=runs)
