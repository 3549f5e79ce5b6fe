"""The one decorator that turns a JAX implementation into a SciPy drop-in.

An implementation is a plain Python function that takes JAX arrays (and
SciPy's other arguments), validates, and calls jitted kernels.  Decorated with
:func:`ndimage_function`, it accepts what SciPy accepts and returns what the
caller holds:

* JAX arrays (tracers included) go straight through: no host round trip, so
  the function works under ``jit``, ``vmap`` and ``grad``.
* numpy, array-likes and other array-API arrays are moved to JAX (zero-copy
  through DLPack where possible), computed under a local x64 scope (the user's
  global JAX configuration is never touched), and handed back as the caller's
  array type.  ``output=`` may then be an array of that type, written in place
  and returned, as SciPy does.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import jax
import numpy as np

from jaxndimage._support import OutputArray

__all__ = ["from_jax", "is_jax_array", "ndimage_function", "to_jax"]

F = TypeVar("F", bound=Callable[..., Any])


def is_jax_array(value: Any) -> bool:
    """True for JAX arrays and tracers."""
    return isinstance(value, jax.Array)


def _is_array(value: Any) -> bool:
    return (not isinstance(value, type | np.dtype | str)
            and hasattr(value, "shape") and hasattr(value, "dtype"))


def _as_numpy(value: Any) -> np.ndarray:
    """A numpy view of an array-like, without a copy where one is possible."""
    if isinstance(value, np.ndarray):
        return value
    if _is_array(value) and hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except (TypeError, RuntimeError, BufferError, ValueError):
            pass
    return np.asarray(value)


def to_jax(value: Any) -> jax.Array:
    """Move an array-like to JAX; C-contiguous numpy data is not copied."""
    array = _as_numpy(value)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    if array.flags.c_contiguous and array.size and array.dtype != object:
        try:
            return jax.dlpack.from_dlpack(array)
        except (TypeError, RuntimeError, BufferError, ValueError):
            pass
    return jax.device_put(np.ascontiguousarray(array))


class _HostBuffer:
    """Lends a JAX CPU buffer to numpy as a writeable array.

    Only used for results that nothing else references: the numpy array keeps
    this object, and so the JAX buffer, alive.
    """

    def __init__(self, array: jax.Array):
        self._array = array
        self.__array_interface__ = {
            "data": (array.unsafe_buffer_pointer(), False),
            "shape": array.shape,
            "typestr": np.dtype(array.dtype).str,
            "version": 3,
        }


def _buffer_pointer(array: jax.Array) -> int | None:
    try:
        return array.unsafe_buffer_pointer()
    except Exception:  # non-CPU, sharded or deleted buffers have none
        return None


def from_jax(array: jax.Array, borrowed: frozenset[int] = frozenset()
             ) -> np.ndarray:
    """A writeable numpy array holding ``array``'s values.

    A fresh single-device CPU result is handed over without a copy; a result
    that still shares memory with an input (``borrowed`` pointers) is copied.
    """
    array.block_until_ready()
    devices = array.devices()
    pointer = _buffer_pointer(array) if array.size else None
    if (pointer is not None and pointer not in borrowed and len(devices) == 1
            and next(iter(devices)).platform == "cpu"):
        return np.asarray(_HostBuffer(array))
    return np.array(array)


def _output_request(output: Any) -> Any:
    """Turn a caller's ``output=`` into what an implementation expects."""
    if output is None or isinstance(output, str | type | np.dtype):
        return output
    if hasattr(output, "_np_dtype"):  # array_api_strict dtype objects
        return output._np_dtype
    if _is_array(output):
        return OutputArray(np.dtype(_as_numpy(output).dtype),
                           tuple(output.shape))
    try:
        return np.dtype(output)
    except TypeError:
        array = np.asarray(output)
        return OutputArray(array.dtype, array.shape)


def _namespace_of(arrays: list[Any]):
    """The namespace results go back to: that of the first real array."""
    for value in arrays:
        if _is_array(value) and not isinstance(value, np.ndarray | np.generic):
            import array_api_compat

            return array_api_compat.array_namespace(value)
    return None


def _to_namespace(result: np.ndarray, namespace) -> Any:
    if namespace is None:
        return result
    return namespace.asarray(result)


def ndimage_function(*array_params: str, reject_float16: bool = True
                     ) -> Callable[[F], F]:
    """Decorate a JAX implementation into a drop-in ``scipy.ndimage`` function.

    Parameters
    ----------
    *array_params : str
        Names of the parameters that hold arrays (``"input"``, ``"weights"``,
        ...).  They decide the namespace and are converted to JAX.
    reject_float16 : bool, optional
        Raise SciPy's RuntimeError for a non-JAX float16 ``input``, as SciPy's
        C routines do.  JAX float16 input is always accepted.
    """

    def decorate(impl: F) -> F:
        signature = inspect.signature(impl)
        has_output = "output" in signature.parameters

        @functools.wraps(impl)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            arguments = bound.arguments
            arrays = [arguments[name] for name in array_params
                      if arguments.get(name) is not None]
            output = arguments.get("output") if has_output else None

            if any(is_jax_array(value) for value in arrays):
                if _is_array(output) and not isinstance(output, OutputArray):
                    raise TypeError(
                        "output: JAX arrays are immutable, so an output array "
                        "cannot be written in place; pass a dtype instead "
                        "(output=jnp.float32) and use the returned array")
                return impl(*bound.args, **bound.kwargs)

            namespace = _namespace_of(arrays)
            with jax.enable_x64(True):
                borrowed = set()
                for name in array_params:
                    if arguments.get(name) is None:
                        continue
                    value = to_jax(arguments[name])
                    if (name == "input" and reject_float16
                            and value.dtype == np.float16):
                        raise RuntimeError(
                            "input: array type dtype('float16') not supported")
                    arguments[name] = value
                    pointer = _buffer_pointer(value)
                    if pointer is not None:
                        borrowed.add(pointer)
                if has_output:
                    arguments["output"] = _output_request(output)
                result = impl(*bound.args, **bound.kwargs)
                result = jax.tree.map(
                    lambda a: from_jax(a, frozenset(borrowed)), result)

            if has_output and isinstance(arguments["output"], OutputArray):
                if isinstance(output, np.ndarray):
                    output[...] = result
                else:
                    output[...] = _to_namespace(result, namespace)
                return output
            return jax.tree.map(lambda a: _to_namespace(a, namespace), result)

        return wrapper  # type: ignore[return-value]

    return decorate
