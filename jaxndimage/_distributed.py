"""Distributed inputs: dask arrays chunk by chunk, JAX arrays across devices.

dask
    A function that reads only a bounded neighbourhood of each output point
    declares how far it reaches, per axis, with a *depth rule*: a callable
    ``rule(arguments, ndim)`` that maps the call's bound arguments (defaults
    applied) to one entry per axis of ``input`` — an int (the halo, the
    kernel radius plus ``|origin|``) or None (the axis must be whole, as for a
    user's callable or a Fourier filter).  A planned function's rule is its
    plan's :attr:`~jaxndimage._plans.Plan.depth`
    (:func:`jaxndimage._plans.plan_of`); the others name a rule in their
    decorator, ``@ndimage_function("input", depth=footprint_depth)``.

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
from jaxndimage._support import (
    aligned_empty,
    check_axes,
    gaussian_radius,
    normalize_axis,
    normalize_sequence,
)

__all__ = [
    "DepthRule",
    "axis_whole_depth",
    "call_sharded",
    "explicit_sharding",
    "footprint_depth",
    "gaussian_depth",
    "is_dask_array",
    "map_dask",
    "neighbour_depth",
    "whole_depth",
    "window1d_depth",
    "window_reach",
]

#: ``rule(arguments, ndim) -> one int or None per axis of input``, or None
#: for a call without bounded reach (computed whole, as without a rule).
DepthRule = Callable[[Mapping[str, Any], int], Sequence[int | None] | None]


# --------------------------------------------------------------------------
# Depth rules
# --------------------------------------------------------------------------

def window_reach(size: int, origin: int = 0) -> int:
    """How far a window of ``size`` taps centred at ``size // 2 + origin``
    reaches on its longer side.

    Examples
    --------
    >>> window_reach(5), window_reach(4), window_reach(3, origin=-1)
    (2, 2, 2)
    """
    before = size // 2 + origin
    return max(before, size - 1 - before, 0)


def _axes(arguments: Mapping[str, Any], ndim: int) -> tuple[int, ...]:
    return check_axes(arguments.get("axes"), ndim)


def _per_axis(values: Sequence, axes: Sequence[int], ndim: int
              ) -> list[int | None]:
    depth: list[int | None] = [0] * ndim
    for axis, value in zip(axes, values):
        depth[axis] = value
    return depth


def _gaussian_depth(sigma: Any, truncate: float, radius: Any,
                    axes: Sequence[int], ndim: int) -> list[int | None]:
    sigmas = normalize_sequence(sigma, len(axes), "sigma")
    radii = normalize_sequence(radius, len(axes), "radius")
    return _per_axis([0 if float(s) <= 1e-15 else gaussian_radius(s, truncate, r)
                      for s, r in zip(sigmas, radii)], axes, ndim)


def gaussian_depth(arguments: Mapping[str, Any], ndim: int
                   ) -> list[int | None]:
    """Depth of ``gaussian_filter`` and of the Gaussian derivative filters
    (``truncate``/``radius`` may come through ``**kwargs``).

    Examples
    --------
    >>> gaussian_depth({"sigma": [1.0, 2.5], "truncate": 4.0}, 2)
    [4, 10]
    """
    extra = arguments.get("kwargs", {})
    truncate = arguments.get("truncate", extra.get("truncate", 4.0))
    radius = arguments.get("radius", extra.get("radius"))
    return _gaussian_depth(arguments["sigma"], truncate, radius,
                           _axes(arguments, ndim), ndim)


def footprint_depth(arguments: Mapping[str, Any], ndim: int
                    ) -> list[int | None]:
    """Depth of a filter over a window given by ``footprint`` (or
    ``weights``) or else ``size``, shifted by ``origin``, over ``axes``.

    Fits ``uniform_filter``, ``correlate`` and the rank filters
    (``minimum_filter``, ``median_filter``, ...).

    Examples
    --------
    >>> footprint_depth({"size": 3, "origin": [0, 1]}, 2)
    [1, 2]
    >>> footprint_depth({"footprint": np.ones((5, 2)), "axes": (0, 2)}, 3)
    [2, 0, 1]
    """
    axes = _axes(arguments, ndim)
    sizes = _window_sizes(arguments, axes)
    origin = arguments.get("origin")  # None: vectorized_filter's default
    origins = normalize_sequence(0 if origin is None else origin, len(axes),
                                 "origin")
    return _per_axis([window_reach(int(n), int(o))
                      for n, o in zip(sizes, origins)], axes, ndim)


def _window_sizes(arguments: Mapping[str, Any], axes: Sequence[int]
                  ) -> list[int]:
    for name in ("footprint", "weights"):
        if arguments.get(name) is not None:
            return list(np.shape(arguments[name]))
    return normalize_sequence(arguments.get("size", 3), len(axes), "size")


def _window1d(arguments: Mapping[str, Any], ndim: int) -> tuple[int, int]:
    axis = normalize_axis(arguments.get("axis", -1), ndim)
    weights = arguments.get("weights")
    if weights is not None:
        return axis, int(np.shape(weights)[-1])
    return axis, int(arguments.get("size", arguments.get("filter_size")))


def window1d_depth(arguments: Mapping[str, Any], ndim: int
                   ) -> list[int | None]:
    """Depth of a 1-D filter along ``axis`` over ``weights`` or ``size``
    (or ``filter_size``) taps (``correlate1d``, ``uniform_filter1d``,
    ``minimum_filter1d``, ``generic_filter1d``).

    Examples
    --------
    >>> window1d_depth({"size": 4, "axis": 0, "origin": 1}, 2)
    [3, 0]
    """
    axis, size = _window1d(arguments, ndim)
    origin = int(arguments.get("origin", 0))
    return _per_axis([window_reach(size, origin)], (axis,), ndim)


def neighbour_depth(arguments: Mapping[str, Any], ndim: int
                    ) -> list[int | None]:
    """Depth 1 on ``axes`` (``laplace``), or on every axis for functions
    without ``axes`` (``sobel``, ``prewitt`` smooth along every axis)."""
    if "axes" in arguments:
        axes = _axes(arguments, ndim)
        return _per_axis([1] * len(axes), axes, ndim)
    return [1] * ndim


def whole_depth(arguments: Mapping[str, Any], ndim: int
                ) -> list[int | None]:
    """Every axis whole: for functions whose reach is not known in advance
    (a user's callable).  Each block then holds the whole array."""
    return [None] * ndim


def axis_whole_depth(arguments: Mapping[str, Any], ndim: int
                     ) -> list[int | None]:
    """The ``axis`` whole, other axes untouched: for 1-D filters with
    unbounded reach (recursive spline prefilters)."""
    return _per_axis([None], (normalize_axis(arguments.get("axis", -1),
                                             ndim),), ndim)


# --------------------------------------------------------------------------
# dask
# --------------------------------------------------------------------------

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
             rule: DepthRule | None,
             planner: Callable[[Mapping[str, Any]], Any] | None = None
             ) -> Any:
    """``func`` over the dask array argument ``name`` of a bound call, as a
    lazy dask array equal to the single-array result.

    ``signature_bound`` is the call's :class:`inspect.BoundArguments`
    (defaults applied); ``func`` is the public function, which filters each
    numpy block.  The halo comes from ``rule``, or for a planned function
    from the call's plan, ``planner(arguments)`` (its ``depth``,
    ``extends_edges`` and ``sample_reach``).  Other dask array arguments (weights, footprints) are
    computed first: they are small.  A dask ``output`` array receives the
    result by dask's lazy assignment and is returned, as SciPy returns an
    ``output`` array.
    """
    arguments = signature_bound.arguments
    output = arguments.get("output")
    if is_dask_array(output):
        # Assigned lazily, as dask's own ``output[...] = result`` does.
        arguments["output"] = output.dtype
        result = _map_dask(func, signature_bound, name, rule, planner)
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
    return _map_dask(func, signature_bound, name, rule, planner)


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


def _blockwise_form(rule: DepthRule | None, planner: Callable | None,
                    arguments: Mapping[str, Any], ndim: int) -> tuple:
    """``(depth, extends_edges, sample_reach)`` of a call (see
    :class:`jaxndimage._plans.Plan`), from its plan or its depth rule."""
    if planner is not None:
        plan = planner(arguments)
        return plan.depth, plan.extends_edges, plan.sample_reach
    if rule is None:
        return None, True, None
    sample = None
    if rule is whole_depth:
        sample = (footprint_depth(arguments, ndim) if "footprint" in arguments
                  else [0] * ndim)
    return (rule(arguments, ndim), getattr(rule, "extends_edges", True),
            sample)


def _map_dask(func: Callable, bound: Any, name: str,
              rule: DepthRule | None, planner: Callable | None) -> Any:
    import dask.array as da

    arguments = bound.arguments
    public = getattr(func, "__name__", "function")
    for key, value in arguments.items():
        if key != name and is_dask_array(value):
            arguments[key] = computed(value)
    x = arguments[name]
    depths, extends_edges, sample_reach = _blockwise_form(
        rule, planner, arguments, x.ndim)
    if depths is None:
        # No bounded reach (interpolation, whose output has another shape):
        # computed whole, now, as SciPy does, and handed back as dask.
        arguments[name] = computed(x)
        return da.from_array(np.asarray(func(*bound.args, **bound.kwargs)))
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

    depths = list(depths)
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
