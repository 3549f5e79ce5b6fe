"""Connected-component labelling on device: the union-find kernel of
`label`, which `binary_fill_holes` runs too (on a CPU; accelerators run
:mod:`jaxndimage._propagation`).

`label` is traceable: union-find over *runs* (maximal stretches of
foreground along the last axis, numbered in raster order of their first
points).  Two runs that touch through a structure offset touch first at
the first point of one of them, so the links kept are those from or to a
run's first point: at most two per pair of touching runs.  Each root is
hooked onto the smallest root linked to it (a scatter-min) and pointer
jumping makes every run point at its root (O(log N) rounds per pass, not
one per pixel of the longest path), repeated until no two linked roots
differ.  The root of a feature is then its first run, so numbering the
roots by a prefix sum gives SciPy's labels.

Both routes read a *guarded layout* (:func:`_guarded_shape`): the
array's foreground flat, with background guards that keep every
neighbour read inside the buffer.  Concrete CPU input is labelled by
numpy (:func:`_label_on_host`), which finds the runs, their links
(:func:`_links`) and the components of the links
(:func:`_host_components`, the same hooking and pointer jumping), and
paints each run's label into the array (:func:`_painted`), or for short
runs (noise) looks each point's label up by its run: numpy scans and
writes several times faster than XLA's CPU code, and nothing compiles.
Other concrete input is labelled in one program at its shape
(:func:`_label_exact`), its runs counted first and numbered by a prefix
sum and a binary search; traced input likewise, with one node per point.
The programs find the components by :func:`_components`.

The entry point is :func:`_label_runs` (labels and their count for the
structure's :func:`_backward_offsets`).  :func:`label_index_dtype` and
:func:`_max_exact` are the dtypes labels are counted in and may be stored
in.  Morphology and the measurements import this module; it imports
neither.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxndimage._cache import cached_jit
from jaxndimage._canvas import concrete_on_cpu
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
def _count_runs(input: jax.Array, *, offsets):
    """The number of runs of ``input`` (see :func:`_runs`), which sizes
    :func:`_label_exact` for concrete input on other devices than a CPU."""
    return jnp.sum(_runs(input, offsets)[1])


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


def _flat_offset(offset: tuple[int, ...], strides: Any) -> Any:
    """How far ``offset`` reaches in a flat layout of ``strides``."""
    return sum(step * strides[axis] for axis, step in enumerate(offset)
               if step)


def _guarded_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of an array's *guarded layout*: one background plane
    before and after it along axis 0, one after it along every other axis.

    In the C-ordered flat form of that layout every neighbour of a point
    through a ``3 ** ndim`` structure lies inside the buffer, and one that
    lies outside the array is a guard point: a read one row (plane, ...)
    back from the first row lands on the guard plane, one sample on from a
    row's last sample on the guard after it, and one sample back from its
    first on the guard after the row before.  Points keep their raster
    order, and runs end at the guards."""
    return (shape[0] + 2,) + tuple(n + 1 for n in shape[1:])


def _guarded_core(shape: tuple[int, ...]) -> tuple[slice, ...]:
    """Where an array of ``shape`` lies in its guarded layout."""
    return (slice(1, shape[0] + 1),) + tuple(slice(0, n) for n in shape[1:])


def _c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(math.prod(shape[axis + 1:]) for axis in range(len(shape)))


def _union_find(foreground: jax.Array, strides: Any, offsets, index_dtype,
                runs: int | None) -> tuple[jax.Array, jax.Array, jax.Array]:
    """SciPy's label of each run, each point's run and the number of labels
    for the flat guarded layout ``foreground`` (see :func:`_guarded_shape`)
    of strides ``strides``, by union-find over runs (:func:`_components`).
    A point's label is its run's where it is foreground
    (:func:`_per_point`); the labels of nodes that are no run (padding)
    are meaningless.

    With ``runs`` (a bound of the number of runs, for concrete input) the
    runs are numbered in raster order of their first points by a prefix
    sum; with None
    (a trace, where the number is not known) a run is named by the flat
    index of its first point.  Either way a feature's first run is its
    smallest node.

    Two runs that touch through an offset touch first at the first point
    of one of them; so the links hooked are those from and to the first
    points of runs, at most two per pair of touching runs (under a trace:
    one per point).  Every neighbour read lies in the buffer (the guards),
    and is background outside the array.
    """
    size, ndim = foreground.shape[0], len(strides)
    along_rows = _along_rows(ndim) in offsets
    start = foreground
    if along_rows:
        start = foreground & ~jnp.concatenate([jnp.zeros(1, bool),
                                               foreground[:-1]])
    if runs is None:
        node = jnp.arange(size, dtype=index_dtype)
        if along_rows:  # the first point of its run
            node = jax.lax.cummax(jnp.where(start, node, 0))
        nodes, is_node = size, start
        # Every point links to its neighbours.
        firsts = jnp.arange(size, dtype=index_dtype)
        valid = foreground
    else:
        count = _prefix_count(start, index_dtype)
        node = jnp.maximum(count - 1, 0)
        firsts = jnp.searchsorted(
            count, jnp.arange(1, runs + 1, dtype=index_dtype)
        ).astype(index_dtype)
        nodes = runs
        valid = is_node = firsts < size
        firsts = jnp.minimum(firsts, size - 1)
    none = nodes  # the node of padding links, and of nothing else

    def at(positions):
        return jnp.clip(positions, 0, size - 1)

    ends = []
    for offset in offsets:
        if along_rows and offset == _along_rows(ndim):
            continue
        step = _flat_offset(offset, strides)
        # From a run's first point p to p + offset ...
        ahead = at(firsts + step)
        linked = valid & foreground[ahead]
        ends.append((jnp.where(linked, node[firsts], none),
                     jnp.where(linked, node[ahead], none)))
        if runs is None:
            continue  # every point is a first point here
        # ... and from p - offset to a run's first point p.
        back = at(firsts - step)
        linked = valid & foreground[back]
        ends.append((jnp.where(linked, node[back], none),
                     jnp.where(linked, node[firsts], none)))
    run_labels, count = _components(ends, nodes, is_node, index_dtype)
    return run_labels, node, count


def _components(ends: list[tuple[jax.Array, jax.Array]], nodes: int,
                is_node: jax.Array, index_dtype: np.dtype
                ) -> tuple[jax.Array, jax.Array]:
    """The label of each of ``nodes`` nodes linked by ``ends`` (pairs of
    node arrays; ``nodes`` for no link), and the number of labels: the
    components of the links among the nodes that are ``is_node``, numbered
    in the order of their smallest node.

    Each root is hooked onto the smallest root linked to it (a
    scatter-min) and pointer jumping makes every node point at its root
    (O(log N) rounds per pass, not one per node of the longest path),
    repeated until no two linked roots differ.  A component's root is then
    its smallest node, so numbering the roots by a prefix sum numbers the
    components by it.
    """
    none = nodes
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
    return number[root], number[-1]


def _per_point(foreground: jax.Array, run_labels: jax.Array,
               node: jax.Array) -> jax.Array:
    """Each point's label from its run's (:func:`_union_find`): a gather
    per point."""
    return jnp.where(foreground, run_labels[node], 0)


def _host_components(a: np.ndarray, b: np.ndarray, runs: int
                     ) -> tuple[np.ndarray, int]:
    """:func:`_components` in numpy: the label of each of ``runs`` runs
    linked by ``a[i]`` to ``b[i]`` (links the host found) and the number
    of labels, with nothing compiled.

    Each root is hooked onto the smallest root linked to it
    (``np.minimum.at``) after pointer jumping has made every run point at
    its root (:func:`_point_at_roots`); links whose two runs share a root
    are dropped, as they share one from then on.  A run's parent is never
    above it, so a feature's root is its first run.
    """
    parent = np.arange(runs, dtype=a.dtype)
    # The first hooking: every run is its own root yet, and no link joins
    # a run to itself.
    np.minimum.at(parent, np.maximum(a, b), np.minimum(a, b))
    while True:
        _point_at_roots(parent)
        root_a, root_b = parent[a], parent[b]
        apart = np.flatnonzero(root_a != root_b)
        if not apart.size:
            break
        a, b, root_a, root_b = a[apart], b[apart], root_a[apart], root_b[apart]
        np.minimum.at(parent, np.maximum(root_a, root_b),
                      np.minimum(root_a, root_b))
    is_root = parent == np.arange(runs, dtype=a.dtype)
    number = np.cumsum(is_root, dtype=a.dtype)
    return number[parent], int(number[-1]) if runs else 0


def _point_at_roots(parent: np.ndarray) -> None:
    """Pointer jumping in place until every node of the forest ``parent``
    points at its root.  While more than a quarter of the nodes move, a
    round jumps them all in one pass; then each round jumps only the nodes
    whose parent is not yet a root, so its cost shrinks with them."""
    while True:
        grandparent = parent[parent]
        jumping = np.flatnonzero(grandparent != parent)
        if 4 * jumping.size <= parent.size:
            break
        np.copyto(parent, grandparent)
    while jumping.size:
        grandparent = parent[parent[jumping]]
        parent[jumping] = grandparent
        jumping = jumping[parent[grandparent] != grandparent]


@cached_jit(static_argnames=("offsets", "index_dtype", "runs"))
def _label_exact(input: jax.Array, *, offsets, index_dtype, runs):
    """:func:`_union_find` of ``input`` at its own shape (traced input,
    and concrete input on other devices)."""
    shape = input.shape
    guarded = _guarded_shape(shape)
    foreground = jnp.pad(input != 0, [(1, 1)] + [(0, 1)] * (input.ndim - 1))
    foreground = foreground.ravel()
    run_labels, node, count = _union_find(foreground, _c_strides(guarded),
                                          offsets, index_dtype, runs)
    labels = _per_point(foreground, run_labels, node)
    return labels.reshape(guarded)[_guarded_core(shape)], count


def _runs_bound(runs: int, size: int) -> int:
    """The number of nodes of the union-find for ``runs`` runs among
    ``size`` points: the next power of two, at least 4096, at most
    ``size``."""
    return min(size, max(4096, 1 << (runs - 1).bit_length()))


def _label_runs(input: Any, offsets: tuple[tuple[int, ...], ...],
                index_dtype: np.dtype) -> tuple[Any, jax.Array]:
    """SciPy's labels of ``input`` and their number, by union-find over
    runs.

    Concrete input on a CPU is labelled by numpy
    (:func:`_label_on_host`), its labels a numpy array.  Other concrete
    input is labelled at its own shape, with the runs counted first;
    traced input with one node per point.  Those labels are JAX arrays.
    """
    if isinstance(input, jax.core.Tracer):
        return _label_exact(input, offsets=offsets, index_dtype=index_dtype,
                            runs=None)
    if not concrete_on_cpu(input):
        bound = _runs_bound(int(_count_runs(input, offsets=offsets)),
                            input.size)
        return _label_exact(input, offsets=offsets, index_dtype=index_dtype,
                            runs=None if bound == input.size else bound)
    return _label_on_host(input, offsets, index_dtype)


def _label_on_host(input: Any, offsets: tuple[tuple[int, ...], ...],
                   index_dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_label_runs` of concrete CPU input in numpy, nothing
    compiled: the input laid out guarded (:func:`_guarded_shape`), its
    runs found, linked (:func:`_links`) and their components found
    (:func:`_host_components`), then each run's label written.  numpy
    scans, gathers and writes several times faster than XLA's CPU code
    does the same steps."""
    guarded = _guarded_shape(input.shape)
    core = _guarded_core(input.shape)
    # Each large array this makes costs its page faults too, which on a
    # virtual machine take about as long as numpy's pass over it: the
    # steps write into arrays they have, where they can.
    buffer = np.zeros(guarded, np.bool_)
    np.not_equal(np.asarray(input), 0, out=buffer[core])
    buffer = buffer.reshape(-1)
    along_rows = _along_rows(input.ndim) in offsets
    start = buffer
    if along_rows:  # a point after background (a guard before each row)
        start = np.empty_like(buffer)
        start[0] = buffer[0]
        np.greater(buffer[1:], buffer[:-1], out=start[1:])
    found = np.flatnonzero(start)
    flat_dtype = label_index_dtype(buffer.size)
    # Short runs (noise): each point's run by one cumulative sum (a
    # repeat pays per run), and each point's label by one lookup of it;
    # long runs: the run of a point by a binary search, each run painted.
    short = _DENSE_RUNS * found.size > buffer.size
    if short:
        node = np.cumsum(start, dtype=flat_dtype)

        def run_of(points):
            return node[points] - 1
    else:
        def run_of(points):
            return (np.searchsorted(found, points, side="right")
                    - 1).astype(flat_dtype, copy=False)
    a, b = _links(buffer, start, found, run_of, offsets,
                  _c_strides(guarded), flat_dtype)
    run_labels, count = _host_components(a, b, found.size)
    if short:
        # Background points look up the label 0 before the runs'.
        node *= buffer
        table = np.zeros(found.size + 1, index_dtype)
        table[1:] = run_labels
        labels = table[node.reshape(guarded)[core]]
    else:
        lengths = np.ones(found.size, np.intp)
        if along_rows:  # runs end at the guards
            lengths = np.flatnonzero(buffer[:-1] > buffer[1:]) + 1 - found
        labels = _painted(run_labels.astype(index_dtype, copy=False),
                          _unguarded(found, input.shape), lengths,
                          input.size).reshape(input.shape)
    return labels, np.asarray(count, index_dtype)


#: Runs are short (:func:`_label_on_host`) where more than one point in
#: this many of the guarded layout starts one.
_DENSE_RUNS = 8


def _links(buffer: np.ndarray, start: np.ndarray, firsts: np.ndarray,
           run_of: Callable[[np.ndarray], np.ndarray],
           offsets: tuple[tuple[int, ...], ...], strides: tuple[int, ...],
           dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """The links of :func:`_union_find` among the runs of a host guarded
    layout ``buffer`` (``start`` its runs' first points, ``firsts`` their
    positions, ascending; ``run_of`` the runs of foreground points): from
    each run's first point ``p`` to the run at ``p + offset`` and from the
    run at ``p - offset`` to it, for each offset but the one along the
    runs.  Two arrays of run numbers (from 0) in ``dtype``.

    Where the point before ``p + offset`` along the runs is read too
    (another offset reaches it), a foreground one there is in the same
    run, already linked: the link is kept only where ``p + offset``
    starts its run."""
    along = _along_rows(len(strides))
    steps = [_flat_offset(offset, strides) for offset in offsets
             if offset != along]
    ours, theirs = [], []
    for sign in (1, -1) if steps else ():
        reached = {sign * step for step in steps}
        for step in sorted(reached):
            # Reads past the buffer's ends land on guards (background).
            other = firsts + step
            read = (start if along in offsets and step - 1 in reached
                    else buffer)
            linked = np.flatnonzero(read.take(other, mode="clip"))
            ours.append(linked.astype(dtype, copy=False))
            theirs.append(run_of(other[linked]))
    if not ours:
        return np.zeros(0, dtype), np.zeros(0, dtype)
    return np.concatenate(ours), np.concatenate(theirs)


def _unguarded(positions: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Flat positions in the guarded layout of an array of ``shape``
    (:func:`_guarded_shape`) as flat positions in the array."""
    index = np.unravel_index(positions, _guarded_shape(shape))
    return np.ravel_multi_index((index[0] - 1,) + index[1:], shape)


def _painted(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
             size: int) -> np.ndarray:
    """``size`` zeros of ``values``' dtype with ``values[i]`` over
    ``starts[i]`` to ``starts[i] + lengths[i]`` (ascending, disjoint
    stretches): one pass of :func:`numpy.repeat` over the stretches and
    the gaps between them."""
    count = values.size
    segments = np.empty(2 * count + 1, np.intp)
    fill = np.zeros(2 * count + 1, values.dtype)
    if count == 0:
        segments[0] = size
        return np.repeat(fill, segments)
    ends = starts + lengths
    segments[0] = starts[0]
    segments[1:-1:2] = lengths
    segments[2:-1:2] = starts[1:] - ends[:-1]
    segments[-1] = size - ends[-1]
    fill[1::2] = values
    return np.repeat(fill, segments)
