"""Results in SciPy's types, and the refusal of a trace where a result is
built on the host.

numpy input gets numpy scalars and arrays, tuples and lists; JAX input JAX
arrays (0-d for scalars); other array-API input arrays of the caller's
library; dask input dask arrays (:func:`_to_dask`).  The measurements'
*finish* steps (``finish(result, bound)``, see
:func:`._dispatch._measurement`) build their Python structures with these
helpers; :func:`_host` raises a TypeError that names the function and why
where such a structure would need a traced value.  A function whose result
is an array of a known shape but is computed on the host (a user's
function, SciPy's sequential queue) runs in a trace as a host callback
(:func:`_on_host_in_trace`).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import array_api_compat
import jax
import jax.numpy as jnp
import numpy as np

from jaxndimage._dispatch import as_numpy, is_jax_array


def _is_traced(value: Any) -> bool:
    return isinstance(value, jax.core.Tracer)


def _on_host_in_trace(compute: Callable[..., Any], shape: tuple[int, ...],
                      dtype: Any, *arrays: Any) -> jax.Array:
    """``compute(*arrays)``, a numpy array of ``shape`` and ``dtype``,
    called on the host from inside a trace (:func:`jax.pure_callback`;
    once per example under ``vmap``): the result in ``dtype`` as JAX
    stores it (float32 for float64 with JAX's 64-bit types off)."""
    dtype = np.dtype(jax.dtypes.canonicalize_dtype(dtype))

    def on_host(*values: Any) -> np.ndarray:
        # JAX hands the callback its arrays as (CPU) JAX arrays.
        result = compute(*(np.asarray(value) for value in values))
        return np.asarray(result).astype(dtype, copy=False)

    return jax.pure_callback(on_host, jax.ShapeDtypeStruct(shape, dtype),
                             *arrays, vmap_method="sequential")


def _host(value: Any, function: str, why: str) -> np.ndarray:
    """A result array as numpy, for building a Python result on the host."""
    if _is_traced(value):
        raise TypeError(
            f"{function}: cannot be traced by jit/vmap/grad: {why}; call it "
            f"on concrete arrays (outside the transformation)")
    return as_numpy(value)


def _hosts(values: tuple, function: str, why: str
           ) -> tuple[np.ndarray, ...]:
    """:func:`_host` of several result arrays, their copies to the host
    started together (one wait on an accelerator, not one per array)."""
    for value in values:
        if is_jax_array(value) and not _is_traced(value):
            value.copy_to_host_async()
    return tuple(_host(value, function, why) for value in values)


def _like(template: Any, values: Any) -> Any:
    """numpy ``values`` (an array, or a tuple, list or dict of them) as
    arrays of the same library as ``template``: for JAX, on its device,
    in one transfer (one per array would cost a dispatch each)."""
    if isinstance(template, np.ndarray | np.generic):
        return values
    if is_jax_array(template):
        devices = template.devices()
        if len(devices) == 1:
            return jax.device_put(values, next(iter(devices)))
        return jax.tree.map(jnp.asarray, values)
    xp = array_api_compat.array_namespace(template)
    return jax.tree.map(xp.asarray, values)


def _scalar(value: Any) -> Any:
    """0-d numpy arrays as numpy scalars (SciPy's type); others unchanged."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    return value


def _rows(array: Any) -> list:
    """The first axis of ``array`` as a list of its elements: numpy
    scalars of a numpy array, arrays of the caller's library otherwise.

    A concrete JAX array is split on its device by JAX's own iteration
    (one dispatch per hundred elements); copying it to the host and
    sending each element back would cost a transfer per element.
    """
    if isinstance(array, np.ndarray) or (is_jax_array(array)
                                         and not _is_traced(array)):
        return list(array)
    return [_scalar(array[i, ...]) for i in range(array.shape[0])]


def _positions(positions: Any) -> Any:
    """Coordinates as SciPy returns them: a tuple for one region, a list of
    tuples for an index array (listed flat for an n-d index)."""
    if positions.ndim == 1:
        return tuple(_rows(positions))
    xp = array_api_compat.array_namespace(positions)
    width = positions.shape[-1]
    flat = _rows(xp.reshape(positions, (-1,)))
    return [tuple(flat[row * width:(row + 1) * width])
            for row in range(math.prod(positions.shape[:-1]))]


def _python_int(value: Any) -> Any:
    """A count as a Python int, except for JAX callers (a JAX integer)."""
    return value if is_jax_array(value) else int(as_numpy(value))


def _to_dask(result: Any) -> Any:
    """A numpy result as SciPy's array-API layer hands it to dask callers."""
    import dask.array as da

    if isinstance(result, np.ndarray | np.generic):
        if isinstance(result, np.ndarray) and result.dtype == object:
            return result
        return da.asarray(result)
    if isinstance(result, dict):
        return {key.item() if isinstance(key, np.generic) else key:
                tuple(da.asarray(v) for v in value)
                for key, value in result.items()}
    if isinstance(result, list | tuple):
        return type(result)(_to_dask(item) for item in result)
    return result


def _scalars(result: Any, bound: inspect.BoundArguments) -> Any:
    """The default finish step: each 0-d array of ``result`` a scalar."""
    return jax.tree.map(_scalar, result)
