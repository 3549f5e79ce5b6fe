"""`label` of a dask array: each block labelled on its own, the labels
merged across the seams, renumbered as SciPy numbers them.

Only small arrays are computed eagerly (per-block counts, first points and
the pairs of labels that touch across each seam, joined into features by
SciPy's ``connected_components``); the labels themselves stay a lazy dask
array.
"""

from __future__ import annotations

import numpy as np

from jaxndimage import _distributed
from jaxndimage._labelling import _max_exact
from jaxndimage._structures import _check_structure


def _label_dask(input, structure, output, *, label):
    """`label` of a dask array, block by block, equal to SciPy's labels
    (``label`` is the public function, which labels numpy blocks).

    Each block is labelled on its own; the labels of features that cross a
    seam are merged from the planes on both sides of every seam (with the
    structure's diagonal neighbours), and the features renumbered in the
    raster order of their first point in the whole array.  Returns a lazy
    dask array and the number of features (computing the per-block counts,
    seams and first points, all small).  The blocks' labels are persisted
    (in the workers' memory on a cluster), so each block is labelled once.
    """
    import dask
    import dask.array as da
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    if input.dtype.kind == "c":
        raise TypeError("Complex type not supported")
    ndim = input.ndim
    structure = _check_structure(structure, ndim, ValueError)
    # Validates everything else (symmetry, output dtype) on a tiny array.
    dtype = label(np.zeros((1,) * ndim, input.dtype), structure,
                  output)[0].dtype
    if output is None and input.size >= 2 ** 31 - 2:
        dtype = np.dtype(np.intp)
    if input.size == 0 or ndim == 0:
        labels, count = label(_distributed.computed(input), structure, output)
        return da.from_array(labels), count

    def local(block):
        return label(block, structure, np.int64)[0]

    # Each block is labelled once: the steps below read the stored blocks.
    blocks = input.map_blocks(local, dtype=np.int64).persist()
    starts = [np.concatenate([[0], np.cumsum(c)[:-1]]) for c in input.chunks]

    def firsts(block_labels, corner):
        """The flat index in the whole array of each local label's first
        point.  Local labels are numbered in raster order of their first
        points, so label k first occurs where the running maximum first
        reaches k."""
        flat = block_labels.ravel()
        if not flat.size:
            return np.zeros(0, np.int64)
        before = np.maximum.accumulate(np.concatenate([[0], flat[:-1]]))
        where = np.unravel_index(np.flatnonzero(flat > before),
                                 block_labels.shape)
        return np.ravel_multi_index(
            tuple(w + c for w, c in zip(where, corner)), input.shape)

    labels_blocks = blocks.to_delayed()
    positions = list(np.ndindex(*[len(c) for c in input.chunks]))
    first_points = dask.compute(*[dask.delayed(firsts)(
        labels_blocks[p], [int(starts[k][i]) for k, i in enumerate(p)])
        for p in positions])
    counts = np.array([len(f) for f in first_points])
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]])
    total = int(counts.sum())
    offset_array = np.zeros([len(c) for c in input.chunks], np.int64)
    count_array = np.zeros_like(offset_array)
    for p, o, n in zip(positions, offsets, counts):
        offset_array[p], count_array[p] = o, n

    # Equivalences across the seams: the two planes either side of each,
    # in the numbering of the whole array (each block's labels shifted by
    # the count of the blocks before it).
    pairs = []
    for axis in range(ndim):
        bounds = np.cumsum(input.chunks[axis])
        for edge in bounds[:-1]:
            slab = blocks[(slice(None),) * axis
                          + (slice(edge - 1, edge + 1),)]

            def numbered(block, block_info=None, axis=axis, edge=edge,
                         bounds=bounds):
                info = block_info[0]
                where = list(info["chunk-location"])
                row = edge - 1 + info["array-location"][axis][0]
                where[axis] = int(np.searchsorted(bounds, row, side="right"))
                return np.where(block > 0,
                                block + offset_array[tuple(where)], 0)

            pairs.append(dask.delayed(_seam_pairs)(
                slab.map_blocks(numbered, dtype=np.int64), axis, structure))
    found = [p for p in dask.compute(*pairs) if len(p)]
    found = np.concatenate(found) if found else np.zeros((0, 2), np.int64)
    graph = coo_matrix((np.ones(len(found)), (found[:, 0] - 1,
                                              found[:, 1] - 1)),
                       shape=(total, total))
    _, component = connected_components(graph, directed=False)
    first = np.concatenate(first_points) if total else np.zeros(0, np.int64)
    component_first = np.full(component.max() + 1 if total else 0,
                              np.iinfo(np.int64).max)
    np.minimum.at(component_first, component, first)
    rank = np.empty_like(component_first)
    rank[np.argsort(component_first, kind="stable")] = np.arange(
        1, len(component_first) + 1)
    table = rank[component].astype(dtype)
    count = len(component_first)
    if count > _max_exact(dtype):
        raise RuntimeError("insufficient bit-depth in requested output type")

    def relabelled(block, block_info=None):
        where = tuple(block_info[0]["chunk-location"])
        start = offset_array[where]
        return np.concatenate([np.zeros(1, dtype), table[
            start:start + count_array[where]]])[block]

    return blocks.map_blocks(relabelled, dtype=dtype), count


def _seam_pairs(slab: np.ndarray, axis: int, structure: np.ndarray
                ) -> np.ndarray:
    """Pairs of labels connected across the seam in the middle of a slab
    two planes thick along ``axis``."""
    slab = np.asarray(slab)
    before = np.take(slab, 0, axis=axis)
    after = np.take(slab, 1, axis=axis)
    pairs = []
    for position in zip(*np.nonzero(structure)):
        offset = [int(q) - 1 for q in position]
        if offset[axis] != 1:
            continue
        rest = offset[:axis] + offset[axis + 1:]
        source = [slice(max(-o, 0), n - max(o, 0)) for o, n in
                  zip(rest, before.shape)]
        target = [slice(max(o, 0), n - max(-o, 0)) for o, n in
                  zip(rest, before.shape)]
        a, b = before[tuple(source)], after[tuple(target)]
        both = (a > 0) & (b > 0)
        pairs.append(np.stack([a[both], b[both]], axis=-1))
    return np.concatenate(pairs) if pairs else np.zeros((0, 2), np.int64)
