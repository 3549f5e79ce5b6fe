"""The dtype a kernel computes in, and SciPy's casting of its results.

SciPy computes in double whatever the input.  Calls from host arrays
(numpy and other non-JAX arrays) do the same: the dispatcher marks them
(:func:`scipy_arithmetic`), and a function's plan asks
:func:`arithmetic_dtype`, which is float64 there, and passes the answer to
its kernels as a static argument.  JAX input computes in its own precision
(:func:`compute_dtype`), float32 for float32, which is what a GPU is fast
at.  Kernels never read the mark themselves: a traced program must depend
only on its arguments.

SciPy's C filters compute in double and store with a C cast, which truncates
toward zero.  An out-of-range value is undefined behaviour in C, and the
platforms differ: SciPy's x86-64 builds (``cvttsd2si``) give INT_MIN of a
32- or 64-bit register, which narrower types then wrap; its arm64 builds
saturate.  JAX's ``astype`` saturates.  :func:`cast_like_c` reproduces the
x86-64 behaviour on every platform, so on arm64 jaxndimage differs from the
local SciPy for out-of-range values only (the casting test is skipped
there).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["arithmetic_dtype", "cast_like_c", "cast_like_numpy",
           "compute_dtype", "scipy_arithmetic"]

_SCIPY_ARITHMETIC: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "jaxndimage_scipy_arithmetic", default=False)


@contextlib.contextmanager
def scipy_arithmetic() -> Iterator[None]:
    """Within: the running public function was called with host arrays, and
    computes in float64 as SciPy does (the dispatcher's x64 scope holds)."""
    token = _SCIPY_ARITHMETIC.set(True)
    try:
        yield
    finally:
        _SCIPY_ARITHMETIC.reset(token)


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The real floating dtype a kernel computes in for inputs of ``dtype``.

    float16, bfloat16 and float32 compute in float32; everything else in
    float64 (float32 when JAX's x64 mode is off, since there is no float64).
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        dtype = np.finfo(dtype).dtype
    # numpy reports bfloat16's kind as 'V'; JAX knows it is a float.
    if jnp.issubdtype(dtype, jnp.floating) and dtype.itemsize <= 4:
        return np.dtype(np.float32)
    return np.dtype(jax.dtypes.canonicalize_dtype(np.float64))


def arithmetic_dtype(dtype: np.dtype) -> np.dtype:
    """The real floating dtype to compute in for input of ``dtype``.

    float64 for a call from host arrays (:func:`scipy_arithmetic`), as
    SciPy computes; else :func:`compute_dtype`.  Planning code calls it,
    outside any trace, and hands the result to kernels as a static
    argument.
    """
    if _SCIPY_ARITHMETIC.get():
        return np.dtype(jax.dtypes.canonicalize_dtype(np.float64))
    return compute_dtype(dtype)


def _int_dtype(bits: int) -> np.dtype:
    return np.dtype(jax.dtypes.canonicalize_dtype(np.dtype(f"int{bits}")))


def cast_like_c(x: jnp.ndarray, dtype: np.dtype) -> jnp.ndarray:
    """Cast a float array to ``dtype`` as a C ``(type)value`` cast would.

    A numpy array (a host value such as a ``cval``) is cast by numpy, with
    no JAX program to compile.
    """
    xp = np if isinstance(x, np.ndarray | np.generic) else jnp
    dtype = np.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.inexact) or x.dtype == dtype:
        return x.astype(dtype)
    if x.dtype.kind in "iu" and dtype == np.bool_:
        # SciPy's C stores an integer result through double into the byte
        # of a bool: the low byte of the 32-bit conversion, not ``!= 0``.
        return cast_like_c(x.astype(compute_dtype(x.dtype)), dtype)
    if x.dtype.kind in "biu":
        return x.astype(dtype)
    truncated = xp.trunc(x)
    # C converts through a signed register: 32 bits for types narrower than
    # 64 bits and for int32, 64 bits otherwise.  Out-of-range values become
    # INT_MIN of that register (x86 cvttsd2si); narrower types then wrap.
    bits = 32 if dtype.itemsize < 4 or dtype == np.int32 else 64
    via = _int_dtype(bits)
    limit = float(2 ** (np.iinfo(via).bits - 1))
    if dtype == np.uint64 and np.iinfo(via).bits == 64:
        high = truncated >= limit
        truncated = xp.where(high, truncated - limit, truncated)
    in_range = (truncated >= -limit) & (truncated < limit)
    value = xp.where(in_range, truncated, -limit).astype(via)
    if dtype == np.bool_:
        return value.astype(np.uint8) != 0
    if dtype == np.uint64 and np.iinfo(via).bits == 64:
        return value.astype(dtype) + xp.where(high, np.uint64(2 ** 63),
                                               np.uint64(0))
    return value.astype(dtype)


def store_like_c(x: jnp.ndarray, dtype: np.dtype) -> jnp.ndarray:
    """Store a filter's result in ``dtype`` as SciPy's C filters store it:
    through a double, then by C's cast (:func:`cast_like_c`).  For integer
    results this differs from numpy's wrap-around only where a uint32 or
    64-bit value beyond int32's range goes into a type C converts through a
    32-bit register (narrower than 32 bits, int32, bool): it becomes the
    low bits of INT_MIN.  (Into 64-bit types and uint32 the integers stay
    exact, where SciPy's double rounds them beyond 2**53.)"""
    dtype = np.dtype(dtype)
    if (x.dtype in (np.uint32, np.int64, np.uint64)
            and (dtype.itemsize < 4 or dtype == np.int32)):
        x = x.astype(compute_dtype(x.dtype))
    return cast_like_c(x, dtype)


def cast_like_numpy(x: jnp.ndarray, dtype: np.dtype) -> jnp.ndarray:
    """Cast ``x`` to ``dtype`` as numpy's ``output[...] = x`` would (SciPy's
    early exits copy this way): a bool is ``x != 0``; every other cast is
    the C cast numpy performs, as :func:`cast_like_c`."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return x != 0
    return cast_like_c(x, dtype)
