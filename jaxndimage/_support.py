"""Argument normalisation and validation, with SciPy's exceptions.

Everything here runs in plain Python on concrete values, before any kernel is
traced, so the checks cost nothing inside ``jit`` and raise the exception type
that ``scipy.ndimage`` raises for the same input.  Messages keep SciPy's wording
(tests match on it) and start with the name of the offending argument.
"""

from __future__ import annotations

import math
import numbers
import operator
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "XLA_ALIGNMENT",
    "OutputArray",
    "aligned_empty",
    "as_int",
    "check_axes",
    "check_origin",
    "check_real_cval",
    "convolution_origin",
    "gaussian_radius",
    "expand_origins",
    "expand_to_ndim",
    "is_low_level_callable",
    "normalize_axis",
    "normalize_sequence",
    "stacked",
    "output_dtype",
    "window_reach",
]


#: XLA's CPU client adopts host memory aligned to this many bytes as it is.
XLA_ALIGNMENT = 64


def aligned_empty(shape: int | tuple[int, ...], dtype: Any) -> np.ndarray:
    """An uninitialised C-ordered array whose data XLA can adopt without a
    copy."""
    dtype = np.dtype(dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    nbytes = math.prod(shape) * dtype.itemsize
    raw = np.empty(nbytes + XLA_ALIGNMENT, np.uint8)
    start = -raw.__array_interface__["data"][0] % XLA_ALIGNMENT
    return raw[start:start + nbytes].view(dtype).reshape(shape)


class OutputArray(NamedTuple):
    """Stands in for an ``output=`` array inside a kernel shell.

    The dispatch layer replaces a caller's output array by this record, so the
    shell validates it exactly as SciPy does and the dispatcher writes the
    result back afterwards.  ``writeable`` is False for a read-only numpy
    array, which SciPy refuses (see :func:`output_dtype`).
    """

    dtype: np.dtype
    shape: tuple[int, ...]
    writeable: bool = True


def normalize_sequence(value: Any, rank: int, name: str) -> list:
    """Repeat a scalar ``rank`` times, or check a sequence has length ``rank``.

    Strings count as scalars, as in SciPy's ``_normalize_sequence``.
    """
    if not isinstance(value, str) and np.iterable(value):
        values = list(value)
        if len(values) != rank:
            raise RuntimeError(
                f"{name}: sequence argument must have length equal to input "
                f"rank ({rank}), got length {len(values)}"
            )
        return values
    return [value] * rank


def stacked(values: Sequence[Any], dtype: Any = None) -> Any:
    """``values`` (numbers, one per axis) as one 1-D array, in ``dtype``
    where given: a numpy array where every value is a host number (one
    small operand, which a kernel on an accelerator keeps on its device:
    :func:`jaxndimage._cache.resident`), else a JAX array of them (a
    traced value or a JAX array among them)."""
    if any(isinstance(v, jax.Array) for v in values):
        return jnp.stack([jnp.asarray(v, dtype) for v in values])
    return np.asarray(values, dtype)


def normalize_axis(axis: Any, ndim: int, name: str = "axis") -> int:
    """Return ``axis`` as a non-negative int, raising numpy's ``AxisError``."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim, name)
    return axis % ndim


def check_axes(axes: Any, ndim: int) -> tuple[int, ...]:
    """Normalise ``axes`` (None, an int or an iterable of ints) like SciPy."""
    if axes is None:
        return tuple(range(ndim))
    if np.isscalar(axes):
        axes = (as_int(axes, "axes"),)
    elif isinstance(axes, Iterable):
        axes = tuple(as_int(ax, "axes") for ax in axes)
        for ax in axes:
            if ax < -ndim or ax > ndim - 1:
                raise ValueError(f"axes: specified axis {ax} is out of range "
                                 f"for an array of dimension {ndim}")
        axes = tuple(ax % ndim for ax in axes)
    else:
        raise ValueError(
            "axes must be an integer, iterable of integers, or None")
    if len(set(axes)) != len(axes):
        raise ValueError(f"axes must be unique, got {axes}")
    return axes


def expand_to_ndim(values: Sequence, axes: Sequence[int], ndim: int,
                   fill: Any) -> list:
    """Scatter per-axis ``values`` (one per entry of ``axes``) to all ``ndim``
    axes, with ``fill`` for the axes that are not filtered."""
    full = [fill] * ndim
    for value, ax in zip(values, axes):
        full[ax] = value
    return full


def check_real_cval(cval: Any) -> None:
    """SciPy's C filters and interpolation read ``cval`` as a double: a
    complex one (with real input) is a TypeError there."""
    if np.iscomplexobj(cval):
        raise TypeError("cval: must be real number, not complex")


def expand_origins(origin: Any, axes: Sequence[int], ndim: int) -> list:
    """SciPy's origins of a window over ``axes`` (its ``_expand_origin``):
    ``origin``, a scalar or one per entry of ``axes``, scattered to all
    ``ndim`` axes with 0 on the others.  With every axis filtered they
    stay in the order given, whatever the order of ``axes``, as SciPy
    keeps them (and the window's axes)."""
    origins = normalize_sequence(origin, len(axes), "origin")
    if len(axes) < ndim:
        origins = expand_to_ndim(origins, axes, ndim, 0)
    return origins


def is_low_level_callable(function: Any) -> bool:
    """True for ``scipy.LowLevelCallable`` and bare C-function capsules."""
    from scipy import LowLevelCallable

    return (isinstance(function, LowLevelCallable)
            or type(function).__name__ == "PyCapsule")


def as_int(value: Any, name: str) -> int:
    """``operator.index`` with the argument's name in the error."""
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: {type(value).__name__!r} object cannot be "
                        f"interpreted as an integer") from None


def check_origin(origin: Any, size: int, name: str = "origin") -> int:
    """Validate one origin of a window of ``size`` samples: the window's
    centre, ``size // 2 + origin``, must fall inside it."""
    origin = as_int(origin, name)
    if not 0 <= size // 2 + origin < size:
        raise ValueError(
            f"{name}: invalid origin {origin} for a window of size {size}; "
            f"it must satisfy -(size // 2) <= origin <= (size - 1) // 2")
    return origin


def convolution_origin(origin: int, size: int) -> int:
    """The correlation origin of a convolution: its window is flipped, so
    an even window's centre moves by one."""
    return -origin - (0 if size % 2 else 1)


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


def gaussian_radius(sigma: Any, truncate: float, radius: Any) -> int:
    """A Gaussian kernel's radius: `radius` if given, else SciPy's
    ``int(truncate * sigma + 0.5)``."""
    if radius is None:
        if isinstance(sigma, jax.core.Tracer):
            raise TypeError("radius: a traced sigma needs an explicit integer "
                            "radius, since the kernel size must be static")
        radius = int(truncate * float(sigma) + 0.5)
    if not isinstance(radius, numbers.Integral) or radius < 0:
        raise ValueError(f"radius: Radius must be a nonnegative integer, "
                         f"got {radius!r}.")
    return int(radius)


def output_dtype(output: Any, input_dtype: np.dtype, *,
                 shape: tuple[int, ...] | None = None,
                 complex_output: bool = False,
                 real_output: bool = False) -> np.dtype:
    """The dtype of the result, following SciPy's ``_get_output``.

    ``output`` is None, a dtype-like (a scalar type, an ``np.dtype`` or a
    string) or an :class:`OutputArray`.  ``shape`` is the shape the result will
    have; an output array of another shape is a RuntimeError.  The dtype is
    returned in native byte order (kernels compute natively; the dispatcher
    restores a requested byte order).

    After ``_get_output``'s checks come the two checks every C function of
    SciPy makes of its output before its own: a read-only output array is
    a ValueError, and an output of a non-numeric dtype (``object``) a
    RuntimeError.  Shells check the output's dtype further after this.
    ``real_output``: the function's C code has no complex output (the rank,
    extreme and generic filters), and a complex one is its RuntimeError.
    """
    dtype = _requested_dtype(output, input_dtype, shape, complex_output)
    if isinstance(output, OutputArray) and not output.writeable:
        raise ValueError("output array is read-only.")
    if not (dtype == np.bool_ or jnp.issubdtype(dtype, np.number)) or (
            real_output and dtype.kind == "c"):
        raise RuntimeError(f"output: array type {dtype!r} not supported")
    return dtype if dtype.isnative else dtype.newbyteorder("=")


def _requested_dtype(output: Any, input_dtype: np.dtype,
                     shape: tuple[int, ...] | None,
                     complex_output: bool) -> np.dtype:
    input_dtype = np.dtype(input_dtype)
    if output is None:
        if complex_output:
            return np.promote_types(input_dtype, np.complex64)
        return input_dtype
    if isinstance(output, OutputArray):
        if shape is not None and tuple(output.shape) != tuple(shape):
            raise RuntimeError(
                f"output shape not correct: got {tuple(output.shape)}, "
                f"expected {tuple(shape)}")
        if complex_output and output.dtype.kind != "c":
            raise RuntimeError("output must have complex dtype")
        return np.dtype(output.dtype)
    if isinstance(output, str):
        dtype = np.dtype(output)
        if complex_output and dtype.kind != "c":
            raise RuntimeError("output must have complex dtype")
        if not issubclass(dtype.type, np.number):
            raise RuntimeError("output must have numeric dtype")
        return dtype
    dtype = np.dtype(output)
    if complex_output and dtype.kind != "c":
        warnings.warn("promoting specified output dtype to complex",
                      UserWarning, stacklevel=5)
        dtype = np.promote_types(dtype, np.complex64)
    return dtype
