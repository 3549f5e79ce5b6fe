"""`watershed_ift`: SciPy's sequential bucket-queue algorithm, on the host.

Its result depends on the exact order in which equal-cost points leave the
queue (SciPy's lists keep stale ends, which reorder it further), which no
parallel formulation reproduces, so :func:`_watershed_host` follows
SciPy's ``NI_WatershedIFT`` step for step.  Traced input (under ``jit`` or
``vmap``) reaches it through :func:`jax.pure_callback`, one example at a
time under ``vmap``; the labels then return to the trace's device.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from jaxndimage._canvas import like_input
from jaxndimage._dispatch import as_array, as_numpy, ndimage_function
from jaxndimage._measurements._dispatch import MeasurementPlan
from jaxndimage._measurements._results import _is_traced, _on_host_in_trace
from jaxndimage._plans import Planned
from jaxndimage._structures import _check_structure
from jaxndimage._support import OutputArray, output_dtype

_MARKER_TYPES = (np.int8, np.int16, np.int32, np.int64, np.intc, np.intp)


def _watershed_host(image: np.ndarray, markers: np.ndarray,
                    offsets: tuple[tuple[int, ...], ...],
                    out: np.ndarray) -> None:
    """SciPy's ``NI_WatershedIFT``, step for step, into ``out``.

    A bucket queue per cost in doubly linked lists; object markers enter the
    front of bucket 0, background markers its back; a point relabelled from
    an object label enters the front of its new bucket, from a background
    label the back.  Neighbours are taken on flat indices (so they wrap
    across rows, as in SciPy), and the list pointers are kept exactly as
    SciPy's C code leaves them, stale ones included, because the order in
    which equal-cost points leave the queue decides the result.
    """
    size = image.size
    costs_in = image.ravel().astype(np.int64)
    labels = out.reshape(-1)
    labels[...] = markers.ravel()
    maxval = int(costs_in.max()) if size else 0
    first = [-1] * (maxval + 1)
    last = [-1] * (maxval + 1)
    nxt = [-1] * size
    prv = [-1] * size
    done = [False] * size
    cost = [maxval + 1] * size

    def enqueue(point: int, bucket: int, at_front: bool) -> None:
        # Link `point` in at the front (or back) of the list of `bucket`.
        end, other_end, outward, inward = ((first, last, nxt, prv) if at_front
                                           else (last, first, prv, nxt))
        outward[point], inward[point] = end[bucket], -1
        if end[bucket] >= 0:
            inward[end[bucket]] = point
        end[bucket] = point
        if other_end[bucket] < 0:
            other_end[bucket] = point

    marker_list = markers.ravel().tolist()
    for j, mark in enumerate(marker_list):
        if mark == 0:
            continue
        cost[j] = 0
        enqueue(j, 0, at_front=mark > 0)
    shape = image.shape
    strides = [int(np.prod(shape[k + 1:], dtype=np.int64))
               for k in range(len(shape))]
    steps = []
    for offset in offsets:
        step = sum(o * s for o, s in zip(offset, strides))
        if step != 0:
            steps.append(step)
    values = costs_in.tolist()
    label_list = labels.tolist()
    # The queue's loop, with `enqueue` written out and the popped point's
    # cost, value and label read once (the hot loop of the function).
    for level in range(maxval + 1):
        while first[level] >= 0:
            v = first[level]
            after = nxt[v]
            first[level] = after
            if after >= 0:
                prv[after] = -1
            prv[v] = nxt[v] = -1
            done[v] = True
            cost_v, value_v, mark = cost[v], values[v], label_list[v]
            # The ends of a bucket's list that `enqueue` links at for
            # this point's label.
            end, other_end, outward, inward = (
                (first, last, nxt, prv) if mark >= 0
                else (last, first, prv, nxt))
            for step in steps:
                p = v + step
                if p < 0 or p >= size or done[p]:
                    continue
                pcost = cost[p]
                wvp = abs(values[p] - value_v)
                high = cost_v if cost_v > wvp else wvp
                if high >= pcost:
                    continue
                cost[p] = high
                label_list[p] = mark
                before, after = prv[p], nxt[p]
                if after >= 0 or before >= 0:
                    if first[pcost] == p:
                        first[pcost] = after
                    if last[pcost] == p:
                        last[pcost] = before
                    if before >= 0:
                        nxt[before] = after
                    if after >= 0:
                        prv[after] = before
                # enqueue(p, high, at_front=mark >= 0)
                neighbour = end[high]
                outward[p], inward[p] = neighbour, -1
                if neighbour >= 0:
                    inward[neighbour] = p
                end[high] = p
                if other_end[high] < 0:
                    other_end[high] = p
    labels[...] = np.asarray(label_list, dtype=np.int64).astype(
        labels.dtype, casting="unsafe")


@dataclasses.dataclass(frozen=True)
class WatershedPlan(MeasurementPlan):
    """`watershed_ift`: the queue over the neighbours at the structure's
    ``offsets`` (in its raster order), labels of ``dtype``."""

    offsets: tuple[tuple[int, ...], ...]
    dtype: np.dtype


def _labels_on_host(plan: WatershedPlan, image: Any, markers: Any
                    ) -> np.ndarray:
    """:func:`_watershed_host` of host ``image`` and ``markers``."""
    result = np.empty(np.shape(image), plan.dtype)
    _watershed_host(np.asarray(image), np.asarray(markers), plan.offsets,
                    result)
    return result


def _run_watershed(plan: WatershedPlan, image: Any, markers: Any,
                   input: Any) -> Any:
    """The kernel of a :class:`WatershedPlan`: host arrays computed here,
    the result as the kind of array ``input`` is; traced ones by a host
    callback in the trace."""
    if _is_traced(image) or _is_traced(markers):
        return _on_host_in_trace(
            functools.partial(_labels_on_host, plan), image.shape,
            plan.dtype, image, markers)
    return like_input(_labels_on_host(plan, image, markers), input)


@ndimage_function("input", "markers", reject_float16=False, planned=True)
def watershed_ift(input, markers, structure=None, output=None):
    """Watershed from markers by the image foresting transform.

    SciPy's algorithm, run on the host: every point takes the label of the
    marker it is reached from along the path whose largest step
    ``|input[p] - input[q]|`` is smallest, with SciPy's order among equal
    costs, so the result equals SciPy's exactly. Under ``jit`` and
    ``vmap`` it runs as a host callback (one example at a time).

    Parameters
    ----------
    input : array_like
        uint8 or uint16 costs.
    markers : array_like
        Signed integer markers of `input`'s shape: positive values are
        objects, negative values background (processed after the objects),
        0 unlabelled.
    structure : array_like, optional
        Connectivity, of shape ``(3,) * input.ndim``. Default: the face
        neighbours. As in SciPy, neighbours are taken on flat indices.
    output : array, optional
        An integer array to write the labels into. Anything else (a dtype
        included) is ignored, as in SciPy: the labels have the dtype of
        `markers`.

    Returns
    -------
    watershed_ift : ndarray
        The labels, of `input`'s shape.

    Examples
    --------
    >>> import numpy as np
    >>> import jaxndimage
    >>> image = np.array([[0, 0, 0, 0, 0],
    ...                   [0, 1, 1, 1, 0],
    ...                   [0, 1, 0, 1, 0],
    ...                   [0, 1, 1, 1, 0],
    ...                   [0, 0, 0, 0, 0]], dtype=np.uint8)
    >>> markers = np.zeros((5, 5), dtype=np.int8)
    >>> markers[2, 2], markers[0, 0] = 1, -1
    >>> jaxndimage.watershed_ift(image, markers, structure=np.ones((3, 3)))
    array([[-1, -1, -1, -1, -1],
           [-1,  1,  1,  1, -1],
           [-1,  1,  1,  1, -1],
           [-1,  1,  1,  1, -1],
           [-1, -1, -1, -1, -1]], dtype=int8)
    """
    input = as_array(input)
    if input.dtype not in (np.uint8, np.uint16):
        raise TypeError("only 8 and 16 unsigned inputs are supported")
    structure = _check_structure(structure, input.ndim, RuntimeError)
    markers = as_array(markers)
    if input.shape != markers.shape:
        raise RuntimeError("input and markers must have equal shape")
    if markers.dtype not in _MARKER_TYPES:
        raise RuntimeError("marker should be of integer type")
    if isinstance(output, OutputArray):
        if output.dtype.type not in _MARKER_TYPES:
            raise RuntimeError("output should be of integer type")
    else:
        output = markers.dtype
    dtype = output_dtype(output, markers.dtype, shape=input.shape)
    if _is_traced(input) or _is_traced(markers):
        image, marks = input, markers  # for a host callback in the trace
    else:
        image, marks = as_numpy(input), as_numpy(markers)
    if dtype.kind not in "iu":
        raise RuntimeError("data type not supported")
    offsets = tuple(tuple(int(p) - 1 for p in position)
                    for position in zip(*np.nonzero(structure)))
    plan = WatershedPlan(input.ndim, offsets, dtype)
    return Planned(plan, _run_watershed, (image, marks, input))
