"""Where jaxndimage computes: the one switch that accelerates host arrays.

JAX arrays compute on their own device, and their results stay there.
Host arrays (numpy, and other arrays in host memory) compute on the host's
CPU by default, in SciPy's arithmetic, whatever accelerators JAX sees: a
numpy user gets SciPy's bits on a laptop and on a TPU machine alike.

Acceleration of host arrays is explicit::

    from jaxndimage import devices

    with devices.accelerated("tpu"):        # this block
        smooth = ndimage.gaussian_filter(image, 2.0)

    devices.set_device("tpu")               # the rest of the process
    devices.set_device(None)                # back to the host's CPU

or ``python -m jaxndimage run --device tpu SCRIPT``.  Under it, host input
goes to the device and computes there as JAX input does: on a device
without native 64-bit floats (a TPU emulates them, slowly to compile and
not exactly, and cannot convert complex64 to complex128 at all) with JAX's
64-bit types off, in float32, complex64 and int32; elsewhere (a CPU or GPU)
in the input's own precision.  Results come back as the caller's array
type, in the dtype SciPy returns (a function declares the results SciPy
gives in 64 bits whatever the input, ``ndimage_function(results_64=)``),
within the tolerance the README states for float32.

A call whose host input is small (fewer elements than its platform's
`ACCELERATED_FROM`) computes on the host even under the switch, in
SciPy's arithmetic: sending it would cost more than computing it.

The device's dtype limits are one table, `NATIVE_64_BITS`; a JAX array of a
dtype its device cannot compute is refused with a TypeError before
anything compiles (:func:`check_dtypes`).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Iterable, Iterator
from typing import Any

import jax
import numpy as np

__all__ = ["accelerated", "accelerator", "accelerator_for", "host_device",
           "resolve", "set_device"]

#: Whether a platform computes float64 and complex128 natively.  Where it
#: does not (a TPU), host input computes with 32-bit types under the
#: switch, and JAX arrays of complex128 (or float64, for functions that
#: compute in complex numbers) are refused.
NATIVE_64_BITS: dict[str, bool] = {"cpu": True, "gpu": True, "cuda": True,
                                   "rocm": True, "tpu": False}

_ACCELERATOR: contextvars.ContextVar[jax.Device | None] = \
    contextvars.ContextVar("jaxndimage_accelerator", default=None)
_PROCESS_ACCELERATOR: list[jax.Device | None] = [None]


@functools.cache
def host_device() -> jax.Device:
    """The device host arrays compute on by default: the host's first CPU
    device."""
    return jax.devices("cpu")[0]


def resolve(device: Any) -> jax.Device | None:
    """A device from a device, a platform name ("tpu", "gpu", "cpu") or
    "default" (JAX's default device); None stays None."""
    if device is None or isinstance(device, jax.Device):
        return device
    if not isinstance(device, str):
        raise TypeError(f"device: expected a jax.Device, a platform name or "
                        f"None, got {type(device).__name__}")
    try:
        return jax.devices()[0] if device == "default" else jax.devices(
            device)[0]
    except RuntimeError as error:
        raise ValueError(f"device: JAX has no {device!r} device here "
                         f"({error})") from None


def accelerator() -> jax.Device | None:
    """The device host arrays are sent to (None: they compute on the host,
    in SciPy's arithmetic)."""
    device = _ACCELERATOR.get()
    return device if device is not None else _PROCESS_ACCELERATOR[0]


#: The fewest elements of host input (a call's arrays together) that a
#: platform computes under the switch: a smaller call computes on the
#: host's CPU, where the transfers and the device's call would cost more
#: than the computation.  A TPU: a call costs about 1.5 ms there whatever
#: its size, so at 256² cheap filters run faster on the host and at 512²
#: nearly everything runs faster on the chip
#: (``benchmarks/results/switch-sizes-tpu-v5e.json``).
ACCELERATED_FROM: dict[str, int] = {"tpu": 2 ** 17}


def accelerator_for(arrays: Iterable[Any]) -> jax.Device | None:
    """The device the host ``arrays`` of one call compute on:
    :func:`accelerator`, or None (the host) where they hold fewer elements
    than its platform's `ACCELERATED_FROM`."""
    device = accelerator()
    if device is None:
        return None
    size = sum(int(np.size(a)) for a in arrays)
    return device if size >= ACCELERATED_FROM.get(device.platform, 0) else None


@contextlib.contextmanager
def accelerated(device: Any = "default") -> Iterator[jax.Device]:
    """Compute host arrays on ``device`` within the block.

    Parameters
    ----------
    device : jax.Device or str, optional
        A device, a platform name (``"tpu"``, ``"gpu"``), or ``"default"``
        for JAX's default device.

    Yields
    ------
    jax.Device
        The device host input computes on.

    Examples
    --------
    >>> import numpy as np
    >>> import jaxndimage as ndimage
    >>> from jaxndimage import devices
    >>> with devices.accelerated("cpu") as device:
    ...     out = ndimage.uniform_filter(np.arange(5.0), 3)
    >>> device.platform, out.dtype
    ('cpu', dtype('float64'))
    """
    chosen = resolve(device)
    token = _ACCELERATOR.set(chosen)
    try:
        yield chosen
    finally:
        _ACCELERATOR.reset(token)


def set_device(device: Any) -> jax.Device | None:
    """Compute host arrays on ``device`` for the rest of the process, or on
    the host's CPU again with ``None``.  Returns the device.

    A block of :func:`accelerated` takes precedence within it.
    """
    _PROCESS_ACCELERATOR[0] = resolve(device)
    return _PROCESS_ACCELERATOR[0]


def native_64_bits(device: jax.Device) -> bool:
    """Whether ``device`` computes 64-bit floats natively."""
    return NATIVE_64_BITS.get(device.platform, False)


#: The 32-bit type a 64-bit one computes in on a device without 64-bit
#: floats, where host input runs with JAX's 64-bit types off.
_NARROWER = {np.dtype(np.float64): np.dtype(np.float32),
             np.dtype(np.complex128): np.dtype(np.complex64),
             np.dtype(np.int64): np.dtype(np.int32),
             np.dtype(np.uint64): np.dtype(np.uint32)}


def narrowed(dtype: np.dtype, device: jax.Device) -> np.dtype:
    """``dtype`` as host input computes in on ``device``: its 32-bit
    counterpart where the device has no native 64-bit floats."""
    dtype = np.dtype(dtype)
    if native_64_bits(device):
        return dtype
    return _NARROWER.get(dtype, dtype)


#: The platforms that hand a complex array to the host several times
#: slower than its real and imaginary parts (a TPU:
#: ``benchmarks/results/switch-costs-tpu-v5e.json``): there,
#: complex results of at least `_SPLIT_COMPLEX` points come back as parts.
SPLIT_COMPLEX_TRANSFERS: dict[str, bool] = {"tpu": True}
_SPLIT_COMPLEX = 2 ** 16


@jax.jit
def _complex_parts(values: jax.Array) -> tuple[jax.Array, jax.Array]:
    return values.real, values.imag


def fetched(array: jax.Array | np.ndarray, kinds: str) -> np.ndarray:
    """A result computed with 32-bit types, on the host in the dtype SciPy
    returns: a 32-bit array of one of ``kinds`` (``"f"``, ``"c"``, ``"i"``,
    ``"u"``) goes back to 64 bits.  A large complex result on a platform of
    `SPLIT_COMPLEX_TRANSFERS` comes back as its two parts, each written
    into the result's final dtype: the same values, faster.
    """
    wide = {narrow: wide for wide, narrow in _NARROWER.items()}.get(
        np.dtype(array.dtype))
    dtype = wide if wide is not None and wide.kind in kinds else array.dtype
    if (isinstance(array, jax.Array) and array.dtype.kind == "c"
            and array.size >= _SPLIT_COMPLEX
            and all(SPLIT_COMPLEX_TRANSFERS.get(device.platform, False)
                    for device in array.devices())):
        real, imag = _complex_parts(array)
        host = np.empty(array.shape, dtype)
        host.real = np.asarray(real)
        host.imag = np.asarray(imag)
        return host
    return np.asarray(array).astype(dtype, copy=False)


def check_dtypes(name: str, arrays: dict[str, Any],
                 complex_arithmetic: bool = False) -> None:
    """Refuse JAX arrays of a dtype their device cannot compute, before
    anything compiles: complex128 on a device without native 64-bit
    floats, and float64 there for a function that computes in complex
    numbers (``complex_arithmetic``; it would convert to complex128, which
    a TPU's compiler aborts the process on)."""
    for argument, value in arrays.items():
        if not isinstance(value, jax.Array) or isinstance(value,
                                                          jax.core.Tracer):
            continue
        dtype = np.dtype(value.dtype)
        refused = dtype == np.complex128 or (complex_arithmetic
                                             and dtype == np.float64)
        if not refused:
            continue
        for device in value.devices():
            if not native_64_bits(device):
                raise TypeError(
                    f"{name}: {argument} of dtype {dtype} cannot be computed "
                    f"on {device.platform} ({device.device_kind}), which has "
                    f"no native 64-bit floats; pass "
                    f"{narrowed(dtype, device)} or an array on the CPU")
