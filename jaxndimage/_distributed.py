"""Distributed inputs: dask arrays chunk by chunk, JAX arrays across devices.

dask
    A planned function (see :mod:`jaxndimage._plans`) reads a dask input's
    halo from the call's plan (:func:`jaxndimage._plans.plan_of`): its
    :attr:`~jaxndimage._plans.Plan.depth` gives, per axis of ``input``, an
    int (the halo, the kernel radius plus ``|origin|``) or None (the axis
    must be whole, as for a user's callable or a Fourier filter).  A plan
    whose depth is None, and a function without a plan, have no block-wise
    form: the dask input is computed whole when called, and the result
    handed back as a dask array.

    :func:`map_dask` then builds ``dask.array.map_overlap`` over the dask
    input.  Every block is filtered by the same public function on numpy, with
    the user's arguments: at a true edge of the array the function's own mode
    extends the block, which is the whole-array answer because a block there
    is at least ``depth + 1`` long; at a seam between blocks the halo comes
    from the neighbour and the values the function computed from its mode are
    trimmed away.  ``wrap`` axes get their halo from the far end of the array
    (dask's ``periodic`` boundary).  Blocks shorter than ``depth + 1`` are
    merged with their neighbours first.  A block at a true edge is extended
    there by the mode (a copy, ``np.take``) and its result cut back, so that
    edge blocks have the shape of the others.

JAX sharding
    Under automatic sharding XLA partitions the kernels' slices, pads and
    concatenations itself, with halo exchanges, and keeps the result sharded.
    Arrays whose type carries *explicit* sharding (``jax.make_mesh``'s default
    axis types) cannot gather along a sharded axis, so :func:`call_sharded`
    runs the function with those axes switched to automatic sharding and
    gives the result the input's sharding back.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from jaxndimage._modes import FILTER_EXTENSION, extend_indices
from jaxndimage._plans import Plan
from jaxndimage._support import aligned_empty, check_axes, normalize_axis

__all__ = [
    "call_sharded",
    "explicit_sharding",
    "is_dask_array",
    "map_dask",
]


# --------------------------------------------------------------------------
# dask
# --------------------------------------------------------------------------

def _axes(arguments: Mapping[str, Any], ndim: int) -> tuple[int, ...]:
    return check_axes(arguments.get("axes"), ndim)


def is_dask_array(value: Any) -> bool:
    """True for a dask array (without importing dask)."""
    import array_api_compat

    return array_api_compat.is_dask_array(value)


def _axis_modes(arguments: Mapping[str, Any], ndim: int) -> list[str]:
    """The boundary mode of every axis of the input.  A function without
    a ``mode`` (binary morphology, with its ``border_value``) extends its
    blocks itself, as for a constant mode."""
    mode = arguments.get("mode", "constant")
    if isinstance(mode, str):
        return [mode] * ndim
    if "axes" in arguments:
        axes = _axes(arguments, ndim)
    elif "axis" in arguments:
        axes = (normalize_axis(arguments["axis"], ndim),)
    else:
        axes = tuple(range(ndim))
    modes = ["reflect"] * ndim
    for axis, axis_mode in zip(axes, mode):
        modes[axis] = axis_mode
    return modes


def _merge_chunks(chunks: Sequence[int], minimum: int) -> tuple[int, ...]:
    """Merge neighbouring chunks until each is at least ``minimum`` long."""
    merged: list[int] = []
    pending = 0
    for size in chunks:
        pending += size
        if pending >= minimum:
            merged.append(pending)
            pending = 0
    if pending:
        if merged:
            merged[-1] += pending
        else:
            merged.append(pending)
    return tuple(merged)


def _filter_block(func: Callable, args: tuple, kwargs: dict,
                  position: int | str, edges: Sequence[tuple[int, str]],
                  block: np.ndarray, block_info: Any = None) -> np.ndarray:
    """``func`` with ``block`` in place of the chunked argument.

    ``edges`` holds, per axis, the depth to extend a block lying at a true
    edge of the array by, and the mode to extend it with (depth 0: none).
    Extending there, and cutting the extension off the result, gives edge
    blocks the shape of the others, so one compiled kernel serves them all.
    """
    cut = []
    if block_info is not None:
        location = block_info[0]["chunk-location"]
        count = block_info[0]["num-chunks"]
        for axis, (reach, mode) in enumerate(edges):
            before = reach if reach and location[axis] == 0 else 0
            after = reach if reach and location[axis] == count[axis] - 1 else 0
            if before or after:
                size = block.shape[axis]
                index = extend_indices(np.arange(-before, size + after), size,
                                       mode)
                block = np.take(block, index, axis=axis)
                cut.append((axis, before, after))
    if isinstance(position, int):
        args = args[:position] + (block,) + args[position + 1:]
    else:
        kwargs = {**kwargs, position: block}
    result = func(*args, **kwargs)
    for axis, before, after in cut:
        stop = result.shape[axis] - after
        result = result[(slice(None),) * axis + (slice(before, stop),)]
    return result


def map_dask(func: Callable, signature_bound: Any, name: str,
             planner: Callable[[Mapping[str, Any]], Plan] | None) -> Any:
    """``func`` over the dask array argument ``name`` of a bound call, as a
    lazy dask array equal to the single-array result.

    ``signature_bound`` is the call's :class:`inspect.BoundArguments`
    (defaults applied); ``func`` is the public function, which filters each
    numpy block.  The halo comes from the call's plan,
    ``planner(arguments)`` (its ``depth``, ``extends_edges`` and
    ``sample_reach``); without a ``planner`` the dask input is computed
    whole.  Other dask array arguments (weights, footprints) are
    computed first: they are small.  A dask ``output`` array receives the
    result by dask's lazy assignment and is returned, as SciPy returns an
    ``output`` array.
    """
    arguments = signature_bound.arguments
    output = arguments.get("output")
    if is_dask_array(output):
        # Assigned lazily, as dask's own ``output[...] = result`` does.
        arguments["output"] = output.dtype
        result = _map_dask(func, signature_bound, name, planner)
        if tuple(output.shape) != tuple(result.shape):
            raise RuntimeError("output shape not correct")
        output[...] = result
        return output
    if not isinstance(output, type | str | np.dtype) and hasattr(output,
                                                                 "shape"):
        raise TypeError(
            "output: with a dask input the result is a lazy dask array, so "
            "only a dask output array can receive it; pass a dask array or "
            "a dtype (output=np.float32)")
    return _map_dask(func, signature_bound, name, planner)


def computed(x: Any) -> np.ndarray:
    """A dask array's values as one numpy array.

    Under dask's in-process schedulers the blocks are stored straight into
    a buffer that JAX adopts without a copy (no concatenated intermediate);
    a cluster's scheduler computes them where it runs and sends the result.
    """
    import dask
    import dask.array as da
    import dask.local
    import dask.threaded

    if dask.base.get_scheduler(collections=[x]) not in (dask.threaded.get,
                                                        dask.local.get_sync):
        return np.asarray(x.compute())
    result = aligned_empty(x.shape, x.dtype)
    da.store(x, result, lock=False)
    return result


def _map_dask(func: Callable, bound: Any, name: str,
              planner: Callable[[Mapping[str, Any]], Plan] | None) -> Any:
    import dask.array as da

    arguments = bound.arguments
    public = getattr(func, "__name__", "function")
    for key, value in arguments.items():
        if key != name and is_dask_array(value):
            arguments[key] = computed(value)
    x = arguments[name]
    plan = None if planner is None else planner(arguments)
    if plan is None or plan.depth is None:
        # No block-wise form (interpolation, whose output has another shape):
        # computed whole, now, as SciPy does, and handed back as dask.
        arguments[name] = computed(x)
        return da.from_array(np.asarray(func(*bound.args, **bound.kwargs)))
    depths = list(plan.depth)
    extends_edges, sample_reach = plan.extends_edges, plan.sample_reach
    ndim = x.ndim

    parameter_names = list(bound.signature.parameters)
    position: int | str = parameter_names.index(name)
    if position >= len(bound.args):
        position = name

    # Validate now, as for a numpy input, and learn the result's dtype.
    probe = np.zeros((0,) + tuple(x.shape[1:]) if ndim else (), x.dtype)
    sample = _filter_block(func, bound.args, bound.kwargs, position, (),
                           probe)
    if sample_reach is not None and x.size:
        # The result type of a user's callable may depend on the values,
        # and SciPy returns an empty input unchanged: learn it from a small
        # sample instead, as large as the window, so a 'valid' one fits.
        probe = np.zeros([min(n, 2 * r + 1)
                          for n, r in zip(x.shape, sample_reach)], x.dtype)
        sample = _filter_block(func, bound.args, bound.kwargs, position, (),
                               probe)
    if not isinstance(sample, np.ndarray) or sample.ndim != ndim:
        raise TypeError(f"{public} cannot run block by block on a dask "
                        f"array: its result is not an array of the input's "
                        f"shape. Pass {name}.compute() for a numpy result.")
    # A 'valid' window shortens the axes of a whole-array function's one
    # block by a fixed amount.
    shortened = ([p - s for p, s in zip(probe.shape, sample.shape)]
                 if sample_reach is not None else [0] * ndim)
    meta = np.empty((0,) * ndim, sample.dtype)
    if x.size == 0:
        return x.map_blocks(
            functools.partial(_filter_block, func, bound.args, bound.kwargs,
                              position, ()), dtype=sample.dtype, meta=meta)

    modes = _axis_modes(arguments, ndim)
    chunks, depth, boundary, edges = [], {}, {}, []
    for axis in range(ndim):
        reach = depths[axis]
        axis_chunks = x.chunks[axis]
        if reach is None:
            axis_chunks = (x.shape[axis],)
            reach = 0
        elif reach > 0:
            axis_chunks = _merge_chunks(axis_chunks, reach + 1)
        if len(axis_chunks) == 1:
            reach = 0
        chunks.append(axis_chunks)
        depth[axis] = reach
        extension = FILTER_EXTENSION.get(modes[axis], "reflect")
        boundary[axis] = ("periodic" if extension == "wrap" and reach
                          else "none")
        # Data-copying modes extend edge blocks here; a constant is left to
        # the function, which knows how to cast cval.
        # Without ``extends_edges`` (one filter applied to the result of
        # another, with a window that is not symmetric) the true edges
        # are left to the function too.
        copies = (extension in ("reflect", "mirror", "nearest")
                  and extends_edges)
        edges.append((reach if copies else 0, modes[axis]))
    x = x.rechunk(tuple(chunks))
    block_func = functools.partial(_filter_block, func, bound.args,
                                   bound.kwargs, position, tuple(edges))
    if any(shortened):
        chunks = tuple((n - k,) for n, k in zip(x.shape, shortened))
        return x.map_blocks(block_func, dtype=sample.dtype, meta=meta,
                            chunks=chunks)
    if not any(depth.values()):
        return x.map_blocks(block_func, dtype=sample.dtype, meta=meta)
    return da.map_overlap(block_func, x, depth=depth, boundary=boundary,
                          trim=True, dtype=sample.dtype, meta=meta)


# --------------------------------------------------------------------------
# JAX sharding
# --------------------------------------------------------------------------

def explicit_sharding(arrays: Sequence[Any]) -> Any:
    """The first array whose type is explicitly sharded over some mesh axis
    (``jax.make_mesh``'s default), else None."""
    import jax
    from jax.sharding import AxisType

    for value in arrays:
        if not isinstance(value, jax.Array):
            continue
        sharding = getattr(jax.typeof(value), "sharding", None)
        mesh = getattr(sharding, "mesh", None)
        if mesh is None or AxisType.Explicit not in mesh.axis_types:
            continue
        if any(entry is not None for entry in sharding.spec):
            return value
    return None


def call_sharded(run: Callable[..., Any], arrays: Sequence[Any],
                 sharding: Any, shape: tuple[int, ...]) -> Any:
    """``run(*arrays)`` with the explicit mesh axes of ``sharding`` switched
    to automatic sharding inside.

    Results of the sharded input's ``shape`` keep its partition spec; any
    other result is replicated.
    """
    import jax
    from jax.sharding import PartitionSpec

    with jax.sharding.use_abstract_mesh(sharding.mesh):
        shapes = jax.eval_shape(
            jax.sharding.auto_axes(run, out_sharding=PartitionSpec()),
            *arrays)
        out_sharding = jax.tree.map(
            lambda result: sharding.spec if tuple(result.shape) == shape
            else PartitionSpec(), shapes)
        return jax.sharding.auto_axes(run, out_sharding=out_sharding)(
            *arrays)
