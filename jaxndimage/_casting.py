"""SciPy's casting of floating-point results to the output dtype.

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

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["cast_like_c", "compute_dtype"]


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


def _int_dtype(bits: int) -> np.dtype:
    return np.dtype(jax.dtypes.canonicalize_dtype(np.dtype(f"int{bits}")))


def cast_like_c(x: jnp.ndarray, dtype: np.dtype) -> jnp.ndarray:
    """Cast a float array to ``dtype`` as a C ``(type)value`` cast would."""
    dtype = np.dtype(dtype)
    if jnp.issubdtype(dtype, jnp.inexact) or x.dtype == dtype:
        return x.astype(dtype)
    if x.dtype.kind in "biu":
        return x.astype(dtype)
    truncated = jnp.trunc(x)
    # C converts through a signed register: 32 bits for types narrower than
    # 64 bits and for int32, 64 bits otherwise.  Out-of-range values become
    # INT_MIN of that register (x86 cvttsd2si); narrower types then wrap.
    bits = 32 if dtype.itemsize < 4 or dtype == np.int32 else 64
    via = _int_dtype(bits)
    limit = float(2 ** (np.iinfo(via).bits - 1))
    if dtype == np.uint64 and np.iinfo(via).bits == 64:
        high = truncated >= limit
        truncated = jnp.where(high, truncated - limit, truncated)
    in_range = (truncated >= -limit) & (truncated < limit)
    value = jnp.where(in_range, truncated, -limit).astype(via)
    if dtype == np.bool_:
        return value.astype(np.uint8) != 0
    if dtype == np.uint64 and np.iinfo(via).bits == 64:
        return value.astype(dtype) + jnp.where(high, np.uint64(2 ** 63),
                                               np.uint64(0))
    return value.astype(dtype)
