"""The acceleration switch checked against the host, call by call.

``--jaxndimage-accelerated DEVICE`` (a platform name or ``default``; with
``--jaxndimage-without-64-bits`` the device computes in 32-bit types, as a
TPU does) makes every call of a jaxndimage function on host arrays run
twice: under ``devices.accelerated(DEVICE)`` whatever its size, on a copy
of its ``output=`` array, and then with default settings, whose result the
test goes on to check as always.  The call fails where the switch's result
differs from the host's: its types and dtypes, its values beyond
`SWITCH_TOLERANCE`, its ``output=`` array, or the type of the exception it
raises.  SciPy's suite (``compat_tests/scipy_plugin.py``) and the property
tests (``compat_tests/conftest.py``) take the options.

Calls on JAX arrays (tracers included) run once, as called: the switch
moves host arrays only.  So do calls made within a call (a user's
callable calling another function).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

#: The largest difference of a result under the switch from the host's,
#: relative to the largest magnitude of the host's result or of the call's
#: input (at least 1): float32 arithmetic errs relative to its operands,
#: so a result that cancels to near 0 is held to its input's scale.
#: ``tests/test_accelerator.py`` holds JAX input to the same bound.
SWITCH_TOLERANCE = 1e-5

#: Functions whose unsigned 32-bit results under the switch on a device
#: without 64-bit types may differ from the host's: negative values stored
#: in such an output between their passes wrap around to 2**32 and beyond,
#: which float32 arithmetic cannot carry (SciPy's C casts them through a
#: 64-bit register).  Two more limits of 32-bit types hold for every
#: function there (`_beyond_32_bits`): an unsigned 64-bit result wraps
#: around at 2**32 on the device where a value is negative, at 2**64 in
#: SciPy; and a float64 value beyond float32's range (an input's, or
#: ``distance_transform_bf``'s distance without background, the square
#: root of the largest float64) is out of the device's reach.  The types
#: and dtypes of such results are still compared; SciPy's own tests of
#: them are known failures of mode ``switch-32``.
UNSIGNED_WRAP_32 = frozenset({"sobel", "prewitt", "generic_laplace"})
FLOAT32_LARGEST = float(np.finfo(np.float32).max)

_comparing = [False]  # within a call of `also_accelerated`'s wrapper


def add_options(parser) -> None:
    """Register ``--jaxndimage-accelerated`` and
    ``--jaxndimage-without-64-bits`` in ``parser`` (pytest's)."""
    group = parser.getgroup("jaxndimage", "jaxndimage equivalence against SciPy")
    group.addoption(
        "--jaxndimage-accelerated",
        metavar="DEVICE",
        help="also run every call under devices.accelerated(DEVICE) (a "
        "platform name or 'default') and fail where it differs from the host's",
    )
    group.addoption(
        "--jaxndimage-without-64-bits",
        action="store_true",
        help="with --jaxndimage-accelerated: compute there in 32-bit types, "
        "as on a TPU",
    )


def switch_device(config):
    """The device of ``--jaxndimage-accelerated`` (None without it), which
    takes host input of any size, in 32-bit types with
    ``--jaxndimage-without-64-bits`` (None too where no plugin registered
    the options: a conftest whose folder pytest was not started on)."""
    name = config.getoption("jaxndimage_accelerated", None)
    if name is None:
        return None
    from jaxndimage import devices

    device = devices.resolve(name)
    devices.ACCELERATED_FROM[device.platform] = 0
    if config.getoption("jaxndimage_without_64_bits"):
        devices.NATIVE_64_BITS[device.platform] = False
    return device


def _same_types(got, expected):
    """Whether two results have the same types throughout (containers and
    leaves, numpy scalars' dtypes included)."""
    if type(got) is not type(expected):
        return False
    if isinstance(expected, tuple | list):
        return len(got) == len(expected) and all(
            _same_types(g, e) for g, e in zip(got, expected))
    if isinstance(expected, dict):
        return got.keys() == expected.keys() and all(
            _same_types(got[k], expected[k]) for k in expected)
    return True


def _kind(value):
    """A result's types, dtypes and shapes, briefly."""
    if isinstance(value, tuple | list):
        inner = ", ".join(_kind(v) for v in value[:4])
        more = ", ..." if len(value) > 4 else ""
        return f"{type(value).__name__}({inner}{more})"
    if isinstance(value, np.ndarray | np.generic):
        return f"{type(value).__name__} {value.dtype} {value.shape}"
    return type(value).__name__


def _magnitude(value: Any) -> float:
    """The largest magnitude of a numeric array-like (0 for anything
    else, or an empty or non-finite one)."""
    try:
        array = np.asarray(value)
    except Exception:  # not an array-like
        return 0.0
    if array.dtype.kind not in "biufc" or not array.size:
        return 0.0
    largest = float(np.max(np.abs(array.astype(np.complex128))))
    return largest if np.isfinite(largest) else 0.0


def _beyond_32_bits(name: str, device, result: Any) -> bool:
    """Whether ``result`` of ``name`` holds a value that a device without
    64-bit types cannot give (see `UNSIGNED_WRAP_32`), if ``device`` is
    one."""
    from jaxndimage import devices

    if devices.native_64_bits(device):
        return False
    if isinstance(result, dict):
        result = list(result.values())
    if isinstance(result, tuple | list):
        return any(_beyond_32_bits(name, device, part) for part in result)
    dtype = getattr(result, "dtype", None)
    if dtype == np.uint64 or (dtype == np.uint32
                              and name in UNSIGNED_WRAP_32):
        return True
    if dtype is None or dtype.kind not in "fc":
        return False
    magnitudes = np.abs(np.asarray(result))
    return bool(np.any(magnitudes[np.isfinite(magnitudes)]
                       > FLOAT32_LARGEST))


def _on_device(args: tuple, kwargs: dict) -> bool:
    """Whether a call has a JAX array (or tracer) among its arguments."""
    import jax

    return any(isinstance(leaf, jax.Array)
               for leaf in jax.tree.leaves((args, kwargs)))


def also_accelerated(func: Callable, name: str, device) -> Callable:
    """``func``, which first runs each call on host arrays under the
    acceleration switch (``devices.accelerated(device)``, any size), on a
    copy of its ``output=`` array, then as called; it returns the second
    call's result (or raises its exception) and raises AssertionError
    where the first call's differs.  Integer results of functions that
    compute in floating point (all but the catalogue's exact ones:
    selections, labels, positions, counts) may differ by one unit (a value
    rounded or truncated from either side of an integer)."""
    from jaxndimage import devices
    from jaxndimage._catalogue import CALLS, difference

    signature = inspect.signature(func)
    first = next(iter(signature.parameters), None)
    units = 0 if name in CALLS and CALLS[name].exact else 1

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if _comparing[0] or _on_device(args, kwargs):
            return func(*args, **kwargs)
        _comparing[0] = True
        try:
            return compared(*args, **kwargs)
        finally:
            _comparing[0] = False

    def compared(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return func(*args, **kwargs)
        output = bound.arguments.get("output")
        if isinstance(output, np.ndarray):
            copy = output.copy()
            copy.flags.writeable = output.flags.writeable
            bound.arguments["output"] = copy
        try:
            with devices.accelerated(device):
                switched = func(*bound.args, **bound.kwargs)
        except Exception as error:  # compared with the host's below
            switched = error
        try:
            host = func(*args, **kwargs)
        except Exception as error:
            if type(switched) is not type(error):
                raise AssertionError(
                    f"{name} under the switch: {switched!r}, where with "
                    f"default settings it raises {error!r}") from error
            raise
        if isinstance(switched, Exception):
            raise AssertionError(f"{name} under the switch raised "
                                 f"{switched!r}") from switched
        scale = max(1.0, _magnitude(bound.arguments.get(first)))
        gap = difference(switched, host, units=units, scale=scale)
        if isinstance(output, np.ndarray):
            gap = max(gap, difference(bound.arguments["output"], output,
                                      units=units, scale=scale))
        beyond = gap > SWITCH_TOLERANCE and not _beyond_32_bits(
            name, device, host)
        if beyond or not _same_types(switched, host):
            raise AssertionError(
                f"{name} under the switch on {device}: {_kind(switched)}, "
                f"differing by {gap:.3g} (relative to the largest magnitude"
                f" of the result and the input) from the host's "
                f"{_kind(host)}")
        return host

    return wrapper
