"""`labeled_comprehension`: a user's function applied to each labelled
region, on the host.

The points are sorted by label as SciPy sorts them and each index
element's run of that order handed to the function as numpy arrays.  In a
trace (``jit``, ``vmap``) a call over an index, whose length is the
result's, runs on the host as a callback; without labels or an index the
result has whatever shape the function returns, and a trace is refused.
dask arguments are computed first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxndimage import _distributed
from jaxndimage._dispatch import as_numpy
from jaxndimage._docstrings import docfiller
from jaxndimage._measurements._dispatch import MeasurementPlan
from jaxndimage._measurements._groups import _check_comprehension_index
from jaxndimage._measurements._results import (
    _host,
    _is_traced,
    _like,
    _on_host_in_trace,
    _to_dask,
)
from jaxndimage._plans import Planned, run


@docfiller
def labeled_comprehension(input, labels, index, func, out_dtype, default,
                          pass_positions=False):
    """Apply a function to each labelled region of an array.

    Roughly ``[func(input[labels == i]) for i in index]``. The points of
    each region are passed to `func` in raster order.

    Parameters
    ----------
    %(input_values)s
    labels : array_like or None
        Labels, of `input`'s shape (or broadcastable to it). None: `func` is
        applied to all of `input`.
    index : int, sequence of ints or None
        Labels of the regions; a scalar gives one result. None: `func` is
        applied to all points where `labels` > 0.
    func : callable
        ``func(values)``, or ``func(values, positions)`` with
        `pass_positions`; values (and flat positions) are numpy arrays.
    out_dtype : dtype
        dtype of the result.
    default : scalar or None
        The result for labels of `index` that do not occur.
    pass_positions : bool, optional
        Also pass the flat positions of the points to `func`. Default False.

    Returns
    -------
    result : ndarray or scalar
        `func`'s results, one per element of `index`. `func` runs on the
        host; under ``jit`` or ``vmap`` (which need `labels`, `index` and
        a numeric `out_dtype`) as a host callback.

    %(examples_measurements)s
    >>> labels, n = jaxndimage.label(a)
    >>> jaxndimage.labeled_comprehension(a, labels, np.arange(1, n + 2),
    ...                                  np.mean, float, -1)
    array([ 2.75,  5.5 ,  6.  , -1.  ])
    """
    if _distributed.is_dask_array(input) or _distributed.is_dask_array(
            labels) or _distributed.is_dask_array(index):
        result = labeled_comprehension(
            *(_distributed.computed(a) if _distributed.is_dask_array(a) else a
              for a in (input, labels, index)),
            func, out_dtype, default, pass_positions)
        return _to_dask(result)
    return run(_plan_labeled_comprehension(input, labels, index, func,
                                           out_dtype, default,
                                           pass_positions))


@dataclasses.dataclass(frozen=True)
class ComprehensionPlan(MeasurementPlan):
    """`labeled_comprehension`: ``func`` applied on the host to all points
    (``mode`` "all"), to those with ``labels > 0`` ("positive"), or to each
    label of an index array ("array"; ``scalar`` for an index given as a
    scalar), the points' flat positions passed too if ``pass_positions``;
    results of ``out_dtype``."""

    mode: str
    scalar: bool
    pass_positions: bool
    out_dtype: np.dtype | None


def _plan_labeled_comprehension(input, labels, index, func, out_dtype,
                                default, pass_positions) -> Planned:
    """The shell of `labeled_comprehension` (for concrete, non-dask
    arrays): the checks, in SciPy's order, and the host arrays."""
    why = "it calls a Python function on each region"
    if any(_is_traced(a) for a in (input, labels, index)):
        return _traced_comprehension(input, labels, index, func, out_dtype,
                                     default, pass_positions)
    template = next((a for a in (input, labels) if hasattr(a, "shape")
                     and not isinstance(a, np.ndarray)), None)
    values = np.asarray(_host(input, "labeled_comprehension", why))
    pass_positions = bool(pass_positions)

    def planned(mode: str, arrays: tuple = (), scalar: bool = False,
                dtype: np.dtype | None = None) -> Planned:
        plan = ComprehensionPlan(values.ndim, mode, scalar, pass_positions,
                                 dtype)
        return Planned(plan, _run_comprehension,
                       (func, default, template, values, *arrays))

    if labels is None:
        if index is not None:
            raise ValueError("index without defined labels")
        return planned("all")
    label_values = np.asarray(_host(labels, "labeled_comprehension", why))
    if index is not None and _is_traced(index):
        _host(index, "labeled_comprehension", why)
    try:
        values, label_values = np.broadcast_arrays(values, label_values)
    except ValueError:
        raise ValueError("labels: input and labels must have the same shape "
                         "(excepting dimensions with width 1)") from None
    if index is None:
        return planned("positive", (label_values,))
    scalar = bool(np.isscalar(index))
    index = np.atleast_1d(as_numpy(index))
    _check_comprehension_index("labeled_comprehension", index,
                               label_values)
    return planned("array", (label_values, index.astype(label_values.dtype)),
                   scalar, np.dtype(out_dtype))


def _traced_comprehension(input, labels, index, func, out_dtype, default,
                          pass_positions) -> Any:
    """`labeled_comprehension` of traced arrays: the checks of the
    concrete route, then its kernel on the host as a callback in the
    trace, its result of the index's length."""
    if labels is None or index is None or np.dtype(out_dtype) == object:
        raise TypeError(
            "labeled_comprehension: cannot be traced by jit/vmap/grad "
            "without labels, an index and a numeric out_dtype (the result "
            "then has the function's own shape or objects); call it on "
            "concrete arrays (outside the transformation)")
    values, labels = jnp.asarray(input), jnp.asarray(labels)
    try:
        shape = np.broadcast_shapes(values.shape, labels.shape)
    except ValueError:
        raise ValueError("labels: input and labels must have the same shape "
                         "(excepting dimensions with width 1)") from None
    scalar = bool(np.isscalar(index))
    _check_comprehension_index("labeled_comprehension", index, labels)
    index = jnp.atleast_1d(jnp.asarray(index)).astype(labels.dtype)
    plan = ComprehensionPlan(len(shape), "array", False,
                             bool(pass_positions), np.dtype(out_dtype))
    result = _on_host_in_trace(
        lambda *arrays: _run_comprehension(plan, func, default, None,
                                           *arrays),
        index.shape, plan.out_dtype, jnp.broadcast_to(values, shape),
        jnp.broadcast_to(labels, shape), index)
    return result[0] if scalar else result


def _run_comprehension(plan: ComprehensionPlan, func: Callable,
                       default: Any, template: Any, values: np.ndarray,
                       labels: np.ndarray | None = None,
                       index: np.ndarray | None = None) -> Any:
    """The kernel of a :class:`ComprehensionPlan` (host arrays; an index
    array's results in the array type of ``template``, unless None)."""
    positions = (np.arange(values.size).reshape(values.shape)
                 if plan.pass_positions else None)

    def call(mask=None):
        if mask is None:
            args = (values.ravel(),) + (
                (positions.ravel(),) if plan.pass_positions else ())
        else:
            args = (values[mask],) + (
                (positions[mask],) if plan.pass_positions else ())
        return func(*args)

    if plan.mode == "all":
        return call()
    if plan.mode == "positive":
        return call(labels > 0)
    order, lows, highs, flat_values, flat_positions = _comprehension_groups(
        values, labels, index, plan.pass_positions)
    result = np.empty(index.shape, plan.out_dtype)
    result[...] = default
    for i, (low, high) in enumerate(zip(lows, highs)):
        if low == high:
            continue
        args = (flat_values[low:high],) + (
            (flat_positions[low:high],) if plan.pass_positions else ())
        result.flat[order[i]] = func(*args)
    if template is not None and result.dtype != object:
        result = _like(template, result)
    return result[0] if plan.scalar else result


def _comprehension_groups(values, labels, index, pass_positions):
    """The points whose labels lie within the index's range, in the order
    of numpy's ``argsort`` of their labels, and each index element's run
    in that order: SciPy's steps, so that each group's values reach the
    user's function in SciPy's order (an unstable sort's; a function such
    as ``np.mean`` rounds by it)."""
    kept = (labels >= index.min()) & (labels <= index.max())
    kept_labels = labels[kept]
    order = kept_labels.argsort()
    sorted_labels = kept_labels[order]
    flat_values = values[kept][order]
    flat_positions = (np.arange(values.size).reshape(values.shape)[kept][
        order] if pass_positions else None)
    index_order = np.argsort(index.ravel(), kind="stable")
    ordered_index = index.ravel()[index_order]
    lows = np.searchsorted(sorted_labels, ordered_index, side="left")
    highs = np.searchsorted(sorted_labels, ordered_index, side="right")
    return index_order, lows, highs, flat_values, flat_positions
