"""Fourier-domain filters: multiply a transform by an analytic transfer
function.

The input is the FFT of an image (``n=-1``, all axes complex transforms) or
a real FFT (``n`` the length of the original axis ``axis``, whose
frequencies then run 0, 1, ..., as ``numpy.fft.rfft`` lays them out).  The
transfer function is a product (or radial function) of per-axis tables over
the frequency indices, evaluated in the compute precision of the input
(float64 for float64/complex128/integer input) and broadcast against it;
the parameters (sigma, size, shift) are traced, so they may be
differentiated.

Concrete CPU input compiles nothing per shape: the per-axis tables are
computed over a list length with the extents traced
(:func:`_axis_tables`).  A product of factors (`fourier_gaussian`,
`fourier_uniform`) is then formed by numpy, the tables broadcast over
blocks of rows in the kernel's order of operations
(:func:`_product_on_host`: the same values, at the speed of a pass over
memory); the phase of `fourier_shift` and the radius of
`fourier_ellipsoid` run over the flattened transform in chunks of a list
length (:func:`_chunk_of_product`), each point reading its tables at its
indices (:func:`_canvas.flat_position`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage._cache import KernelCache, cached_jit
from jaxndimage._canvas import (
    chunk_of,
    concrete_on_cpu,
    flat_position,
    in_chunks,
    like_input,
    list_length,
)
from jaxndimage._casting import arithmetic_dtype
from jaxndimage._dispatch import (
    as_array,
    host_dtype,
    ndimage_function,
    nonempty,
    to_jax,
    wide_kind,
)
from jaxndimage._docstrings import docfiller
from jaxndimage._plans import Plan, Planned
from jaxndimage._support import (
    OutputArray,
    normalize_axis,
    normalize_sequence,
    stacked,
)
from jaxndimage._typing import Array, ArrayLike

__all__ = ["fourier_ellipsoid", "fourier_gaussian", "fourier_shift",
           "fourier_uniform"]


_REAL_OUTPUTS = (np.complex64, np.complex128, np.float32, np.float64)
_COMPLEX_OUTPUTS = (np.complex64, np.complex128)


def _frequencies(shape: tuple[int, ...], n: int, axis: int, kind: str
                 ) -> list[np.ndarray | None]:
    """Per axis, the signed frequency index of every sample (None for axes
    of length 1, which SciPy leaves unfiltered, except in the ellipsoid's
    radius: there SciPy adds their one frequency, 0, times the axis's
    scale, which is NaN where the scale is infinite, as for ``n=0``)."""
    tables = []
    for k, length in enumerate(shape):
        if length <= 1 and not (kind == "ellipsoid" and length == 1):
            tables.append(None)
        elif k == axis and n >= 0:
            tables.append(np.arange(length, dtype=np.float64))
        else:
            tables.append(np.concatenate([np.arange((length + 1) // 2),
                                          np.arange(-(length // 2), 0)])
                          .astype(np.float64))
    return tables


def _lengths(shape: tuple[int, ...], n: int, axis: int) -> list[int]:
    """The transform length of every axis: ``n`` along a real transform."""
    return [n if (k == axis and n >= 0) else length
            for k, length in enumerate(shape)]


def _along(table: Array, axis: int, ndim: int) -> Array:
    """The 1-D ``table`` as an array that broadcasts along ``axis``.

    The table is materialised first: fused into the product over the whole
    array, its transcendental functions would be evaluated for every
    element instead of once per entry, as SciPy's C code evaluates them.
    """
    shape = [1] * ndim
    shape[axis] = table.shape[0]
    return jax.lax.optimization_barrier(table).reshape(shape)


#: Cephes' rational approximations of J1 (j1.c), which SciPy's
#: ni_fourier.c evaluates: below 5 ``x (z - Z1)(z - Z2) RP(z) / RQ(z)`` with
#: ``z = x**2``; above, Hankel's form with ``P(25/x**2)``, ``Q(25/x**2)``.
_J1_RP = (-8.99971225705559398224e8, 4.52228297998194034323e11,
          -7.27494245221818276015e13, 3.68295732863852883286e15)
_J1_RQ = (6.20836478118054335476e2, 2.56987256757748830383e5,
          8.35146791431949253037e7, 2.21511595479792499675e10,
          4.74914122079991414898e12, 7.84369607876235854894e14,
          8.95222336184627338078e16, 5.32278620332680085395e18)
_J1_PP = (7.62125616208173112003e-4, 7.31397056940917570436e-2,
          1.12719608129684925192e0, 5.11207951146807644818e0,
          8.42404590141772420927e0, 5.21451598682361504063e0,
          1.00000000000000000254e0)
_J1_PQ = (5.71323128072548699714e-4, 6.88455908754495404082e-2,
          1.10514232634061696926e0, 5.07386386128601488557e0,
          8.39985554327604159757e0, 5.20982848682361821619e0,
          9.99999999999999997461e-1)
_J1_QP = (5.10862594750176621635e-2, 4.98213872951233449420e0,
          7.58238284132545283818e1, 3.66779609360150777800e2,
          7.10856304998926107277e2, 5.97489612400613639965e2,
          2.11688757100572135698e2, 2.52070205858023719784e1)
_J1_QQ = (7.42373277035675149943e1, 1.05644886038262816351e3,
          4.98641058337653607651e3, 9.56231892404756170795e3,
          7.99704160447350683650e3, 2.82619278517639096600e3,
          3.36093607810698293419e2)
_J1_Z1, _J1_Z2 = 1.46819706421238932572e1, 4.92184563216946036703e1


def _polynomial(z: Array, coefficients: tuple[float, ...],
                monic: bool = False) -> Array:
    """Horner's rule, highest power first; ``monic`` prepends a leading 1
    (Cephes' ``polevl`` and ``p1evl``)."""
    value = z + coefficients[0] if monic else jnp.full_like(
        z, coefficients[0])
    for c in coefficients[1:]:
        value = value * z + c
    return value


def _bessel_j1(x: Array) -> Array:
    """Bessel function J1 for ``x >= 0``, as SciPy's C code computes it."""
    near = jnp.minimum(x, 5.0)  # each branch only sees its own range
    z = near * near
    small = (_polynomial(z, _J1_RP) / _polynomial(z, _J1_RQ, monic=True)
             * near * (z - _J1_Z1) * (z - _J1_Z2))
    far = jnp.maximum(x, 5.0)
    w = 5.0 / far
    z = w * w
    p = _polynomial(z, _J1_PP) / _polynomial(z, _J1_PQ)
    q = _polynomial(z, _J1_QP) / _polynomial(z, _J1_QQ, monic=True)
    phase = far - 0.75 * np.pi
    large = ((p * jnp.cos(phase) - w * q * jnp.sin(phase))
             * float(np.sqrt(2.0 / np.pi)) / jnp.sqrt(far))
    return jnp.where(x <= 5.0, small, large)


def _ellipsoid(scaled: list[Array], ndim: int, dtype: np.dtype) -> Array:
    """The ellipsoid's factor of the scaled frequencies of the axes (of an
    ``ndim``-dimensional transform)."""
    squares = [t * t for t in scaled]
    radius = jnp.sqrt(sum(squares, jnp.zeros((), dtype)))
    safe = jnp.where(radius > 0, radius, 1.0)
    if ndim == 1:
        return _sinc(radius)
    if ndim == 2:
        bessel = _bessel_j1(safe)
        return jnp.where(radius > 0, 2.0 * bessel / safe, 1.0)
    value = 3.0 * (jnp.sin(safe) - safe * jnp.cos(safe)) / safe ** 3
    # The difference cancels for small r: use its Taylor series.
    r2 = radius * radius
    series = 1.0 - r2 / 10.0 * (1.0 - r2 / 28.0 * (
        1.0 - r2 / 54.0 * (1.0 - r2 / 88.0)))
    # A NaN radius (an infinite scale) leaves the point as it is, as in
    # SciPy's C code.
    return jnp.where(radius > 0, jnp.where(radius < 0.5, series, value), 1.0)


def _sinc(x: Array) -> Array:
    safe = jnp.where(x == 0, 1.0, x)
    return jnp.where(x == 0, 1.0, jnp.sin(safe) / safe)


def _table(kind: str, parameter: Array, positive: Array, length: Any,
           freq: Array, dtype: np.dtype) -> Array:
    """One axis's table over its signed frequency indices ``freq`` (for an
    axis of transform ``length``): its factor (``"gaussian"``,
    ``"uniform"``), its scaled frequency (``"ellipsoid"``) or its phase
    (``"shift"``), as SciPy's C code computes them per index."""
    index = freq.astype(dtype)
    if kind == "gaussian":
        scale = parameter * np.pi / length
        exponent = -2.0 * scale * scale * (index * index)
        return jnp.where(jnp.abs(exponent) > 50.0, 0.0, jnp.exp(exponent))
    if kind == "shift":
        return -2.0 * np.pi * parameter / length * index
    scaled = parameter * np.pi / length * index
    if kind == "uniform":
        # SciPy keeps only the zero frequency for sizes <= 0.
        return jnp.where(freq == 0, 1.0,
                         jnp.where(positive, _sinc(scaled), 0.0))
    return scaled


def _apply(kind: str, x: Array, terms: list[Array], ndim: int,
           dtype: np.dtype, out_dtype: np.dtype) -> Array:
    """``x`` filtered by the tables of its axes (``terms``, each read at
    the points of ``x``; none for the axes of one sample, which SciPy
    leaves unfiltered)."""
    if kind == "shift":
        return _shifted(x, sum(terms, jnp.zeros((), dtype)), dtype,
                        out_dtype)
    if kind == "ellipsoid":
        factor = _ellipsoid(terms, ndim, dtype)
    else:
        factor = jnp.ones((), dtype)
        for term in terms:
            factor = factor * term
    # In ``dtype``, whatever a constant promoted it to: a float32 part
    # times a float64 factor is complex128, which a TPU cannot form.
    return _multiply(x, factor.astype(dtype), dtype, out_dtype)


@cached_jit(static_argnames=("kind", "n", "axis", "dtype", "out_dtype"))
def _fourier_kernel(x: Array, parameters: Array, *, kind: str, n: int,
                    axis: int, dtype: np.dtype, out_dtype: np.dtype) -> Array:
    """A Fourier filter of ``x``, compiled for its shape: each axis's table
    (:func:`_table`) broadcast against ``x``."""
    positive = parameters > 0
    parameters = parameters.astype(dtype)
    terms = [_along(_table(kind, parameters[k], positive[k], length,
                           jnp.asarray(freq), dtype), k, x.ndim)
             for k, (freq, length) in enumerate(zip(
                 _frequencies(x.shape, n, axis, kind),
                 _lengths(x.shape, n, axis)))
             if freq is not None]
    return _apply(kind, x, terms, x.ndim, dtype, out_dtype)


def _axis_tables(parameters: Array, lengths: Array, shape: Array, *,
                 kind: str, real_axis: int, dtype: np.dtype,
                 length: int) -> Array:
    """The tables (:func:`_table`) of the axes of traced ``shape`` and
    transform ``lengths`` (axis ``real_axis`` a real transform) over the
    frequency indices ``0 .. length - 1``.  An axis of one sample, which
    SciPy leaves unfiltered, has the neutral table (1 for a factor, 0 for
    a phase) but in the ellipsoid's radius (see :func:`_frequencies`)."""
    index = lax.iota(np.int32, length)
    positive = parameters > 0
    parameters = parameters.astype(dtype)
    neutral = 1.0 if kind in ("gaussian", "uniform") else 0.0
    rows = []
    for k in range(shape.shape[0]):
        extent = shape[k]
        freq = index if k == real_axis else jnp.where(
            index < (extent + 1) // 2, index, index - extent)
        table = _table(kind, parameters[k], positive[k],
                       lengths[k].astype(dtype), freq, dtype)
        kept = extent > 1 if kind != "ellipsoid" else extent > 0
        rows.append(jnp.where(kept, table, neutral).astype(dtype))
    return jnp.stack(rows)


_tables_kernel = KernelCache(jax.jit(_axis_tables, static_argnames=(
    "kind", "real_axis", "dtype", "length")))


def _chunk_of_product(x: Array, tables: Array, shape: Array, start: Array, *,
                      kind: str, dtype: np.dtype, out_dtype: np.dtype,
                      length: int) -> Array:
    """The filter of the flat positions ``start`` to ``start + length`` of
    a transform of traced ``shape``, ``x`` their values, each reading the
    tables (:func:`_axis_tables`) at its indices."""
    index = flat_position(start, length, shape)
    terms = [tables[k].at[i].get(mode="promise_in_bounds")
             for k, i in enumerate(index)]
    return _apply(kind, x, terms, len(terms), dtype, out_dtype)


_chunk_kernel = KernelCache(jax.jit(_chunk_of_product, static_argnames=(
    "kind", "dtype", "out_dtype", "length")))


def _on_chunks(x: Array, parameters: Array, *, kind: str, n: int, axis: int,
               dtype: np.dtype, out_dtype: np.dtype) -> np.ndarray:
    """A Fourier filter of a concrete CPU array, compiled per list length,
    not per shape (see the module docstring)."""
    host = np.asarray(x)
    shape = np.array(host.shape, np.int32)
    real_axis = axis if n >= 0 else -1
    lengths = np.array(_lengths(host.shape, n, axis), np.int32)
    tables = _tables_kernel(
        np.asarray(parameters), lengths, shape, kind=kind,
        real_axis=real_axis, dtype=dtype,
        length=list_length(max(host.shape)))
    if kind in ("gaussian", "uniform"):
        return _product_on_host(host, np.asarray(tables), dtype, out_dtype)
    flat = host.reshape(-1)
    values = in_chunks(flat.size, lambda start, length: _chunk_kernel(
        chunk_of(flat, start, length), tables, shape, np.int32(start),
        kind=kind, dtype=dtype, out_dtype=out_dtype, length=length))
    return values.reshape(host.shape)


#: The points per block of :func:`_product_on_host`.
_PRODUCT_BLOCK = 2 ** 17


def _product_on_host(host: np.ndarray, tables: np.ndarray, dtype: np.dtype,
                     out_dtype: np.dtype) -> np.ndarray:
    """``host`` times the product of its axes' ``tables`` (a factor per
    axis, :func:`_axis_tables`), by numpy: the operations of
    :func:`_apply` (the factor multiplied up in axis order, then each part
    times it, in ``dtype``), broadcast over blocks of rows along axis 0,
    without reading the tables at each point."""
    factors = [tables[k, :n].reshape((n,) + (1,) * (host.ndim - 1 - k))
               for k, n in enumerate(host.shape)]
    out = np.empty(host.shape, out_dtype)
    parts = ([(host.real, out.real), (host.imag, out.imag)]
             if out.dtype.kind == "c" else [(host, out)])
    if out.dtype.kind == "c" and host.dtype.kind != "c":
        parts = parts[:1]
        out.imag = 0
    rows = max(1, _PRODUCT_BLOCK // max(1, host.size // max(1, len(host))))
    for start in range(0, len(host), rows):
        block = slice(start, start + rows)
        factor = factors[0][block]
        for table in factors[1:]:
            factor = factor * table
        for values, result in parts:
            with np.errstate(all="ignore"):  # inf * 0 is NaN, as in SciPy
                np.multiply(values[block], factor, out=result[block],
                            dtype=dtype, casting="unsafe")
    return out


def _shifted(x: Array, phase: Array, dtype: np.dtype,
             out_dtype: np.dtype) -> Array:
    """``x`` times ``exp(i phase)``, part by part (see :func:`_parts`)."""
    cos, sin = jnp.cos(phase), jnp.sin(phase)
    real, imag = _parts(x, dtype)
    if imag is None:
        result = jax.lax.complex(real * cos, real * sin)
    else:
        result = jax.lax.complex(real * cos - imag * sin,
                                 real * sin + imag * cos)
    return jnp.broadcast_to(result, x.shape).astype(out_dtype)


def _parts(x: Array, dtype: np.dtype) -> tuple[Array, Array | None]:
    """The real and imaginary parts of ``x`` in ``dtype`` (None for real
    ``x``).

    The filters multiply the parts by real factors, as SciPy's C code
    does: a complex product would also form ``0 * inf`` from a part that
    is not infinite, and put NaN where SciPy has none.
    """
    if jnp.iscomplexobj(x):
        return x.real.astype(dtype), x.imag.astype(dtype)
    return x.astype(dtype), None


def _multiply(x: Array, factor: Array, dtype: np.dtype,
              out_dtype: np.dtype) -> Array:
    """``x`` times the real ``factor``, part by part (see :func:`_parts`);
    a real ``x`` into a complex output has an imaginary part of 0."""
    real, imag = _parts(x, dtype)
    result = real * factor if imag is None else jax.lax.complex(
        real * factor, imag * factor)
    return jnp.broadcast_to(result, x.shape).astype(out_dtype)


def _output(output: Any, input: Array, allowed: tuple[type, ...],
            default: type) -> np.dtype | OutputArray:
    """SciPy's ``_get_output_fourier``: None keeps the input dtype when it
    is one of ``allowed`` (except float64, which is the real default) and is
    ``default`` otherwise; a requested dtype must be one of ``allowed``; an
    output array must have the input's shape (its dtype is checked later,
    by :func:`_output_dtype`, where SciPy's C code checks it).

    A dtype may be any dtype-like (``np.dtype``, a string, ``float``),
    where SciPy takes only numpy's scalar types such as ``np.float32`` (a
    deliberate difference: SciPy's check reads ``.shape`` of anything
    else, or compares ``float`` with its list of numpy types).
    """
    if output is None:
        if input.dtype.type in allowed and input.dtype != np.float64:
            return np.dtype(input.dtype)
        return np.dtype(jax.dtypes.canonicalize_dtype(default))
    if isinstance(output, OutputArray):
        if tuple(output.shape) != tuple(input.shape):
            raise RuntimeError("output shape not correct")
        return output
    dtype = np.dtype(output)
    if dtype.type not in allowed:
        raise RuntimeError("output type not supported")
    return dtype


def _output_dtype(output: np.dtype | OutputArray, input: Array,
                  allowed: tuple[type, ...]) -> np.dtype:
    """The checks of SciPy's C code, in its order: a read-only output array
    (ValueError), then an output array of a type the filter does not write
    (met per sample: not for an empty input), or a real output for complex
    input (RuntimeError)."""
    if isinstance(output, OutputArray):
        if not output.writeable:
            raise ValueError("output array is read-only.")
        dtype = np.dtype(output.dtype)
        if dtype.type not in allowed and input.size:
            raise RuntimeError("data type not supported")
    else:
        dtype = output
    if jnp.iscomplexobj(input) and dtype.kind != "c":
        raise RuntimeError("output: a real output cannot hold the filtered "
                           "complex input; pass a complex output type")
    # An output array of another byte order is written by the dispatcher.
    return dtype.newbyteorder("=")


@dataclasses.dataclass(frozen=True)
class FourierPlan(Plan):
    """A Fourier filter of ``kind`` (``"gaussian"``, ``"uniform"``,
    ``"ellipsoid"`` or ``"shift"``) of a transform whose axis ``axis`` is
    a real transform of length ``n`` (``n=-1``: every axis complex),
    computed in ``dtype`` and stored in ``out_dtype``.  Every output sample
    depends on every input sample: no axis has a bounded reach."""

    kind: str
    n: int
    axis: int
    dtype: np.dtype
    out_dtype: np.dtype

    empty_input_exits = True


def _run_fourier(plan: FourierPlan, input: ArrayLike, parameters: Array
                 ) -> Array:
    """The kernel of a :class:`FourierPlan`: concrete CPU input in chunks
    (:func:`_on_chunks`), other input compiled for its shape."""
    options = dict(n=plan.n, axis=plan.axis, dtype=plan.dtype,
                   out_dtype=plan.out_dtype)
    if (concrete_on_cpu(input) and input.size < 2**31
            and not isinstance(parameters, jax.core.Tracer)):
        if input.size == 0:
            return like_input(np.zeros(input.shape, plan.out_dtype), input)
        return like_input(_on_chunks(input, parameters, kind=plan.kind,
                                     **options), input)
    input = to_jax(input)
    if input.size == 0:
        return jnp.zeros(input.shape, plan.out_dtype)
    return _fourier_kernel(input, parameters, kind=plan.kind, **options)


def _plan_fourier(input: ArrayLike, parameter: Any, n: Any, axis: int,
                  output: Any, kind: str, name: str) -> Planned:
    input = as_array(input)
    allowed, default = ((_COMPLEX_OUTPUTS, np.complex128) if kind == "shift"
                        else (_REAL_OUTPUTS, np.float64))
    out = _output(output, input, allowed, default)
    if kind == "ellipsoid" and input.size == 0:
        # SciPy returns the output here, before it looks at the rest.
        dtype = np.dtype(out.dtype if isinstance(out, OutputArray) else out)
        plan = FourierPlan(ndim=input.ndim, kind=kind, n=int(n), axis=0,
                           dtype=dtype, out_dtype=dtype.newbyteorder("="))
        return Planned(plan, _run_fourier, (input, jnp.zeros((0,))))
    axis = normalize_axis(axis, input.ndim)
    values = normalize_sequence(parameter, input.ndim, name)
    parameters = stacked(values)
    out = _output_dtype(out, input, allowed)
    plan = FourierPlan(
        ndim=input.ndim, kind=kind, n=int(n), axis=axis,
        dtype=np.dtype(arithmetic_dtype(np.promote_types(input.dtype, out))),
        out_dtype=out)
    return Planned(plan, _run_fourier, (input, parameters))


def _filter_kinds(arguments: Mapping[str, Any]) -> str:
    """``results_64`` of the Fourier filters but `fourier_shift`: SciPy
    keeps complex64, complex128 and float32 input's dtype and gives
    float64 for any other."""
    dtype = host_dtype(arguments["input"])
    if dtype in (np.complex64, np.complex128, np.float32):
        return wide_kind(dtype)
    return "f"


def _shift_kinds(arguments: Mapping[str, Any]) -> str:
    """``results_64`` of `fourier_shift`: SciPy keeps complex64 input's
    dtype and gives complex128 for any other."""
    return "" if host_dtype(arguments["input"]) == np.complex64 else "c"


@docfiller
@ndimage_function("input", keeps_byte_order=True, planned=True,
                  complex_arithmetic=True, results_64=_filter_kinds)
def fourier_gaussian(input: ArrayLike, sigma: Any, n: int = -1,
                     axis: int = -1, output: Any = None) -> Array:
    """Multidimensional Gaussian filter in the Fourier domain.

    Multiplies the transform by ``exp(-2 (pi sigma f / N)**2)`` per axis,
    the transform of a Gaussian of standard deviation `sigma`.

    Parameters
    ----------
    %(fourier_input)s
    sigma : float or sequence of float
        Standard deviation per axis (or one for all).
    %(fourier_filter_options)s

    %(returns_fourier_filtered)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import fourier_gaussian
    >>> image = np.zeros((4, 4)); image[1, 1] = 1.0
    >>> blurred = np.fft.ifft2(fourier_gaussian(np.fft.fft2(image), sigma=1))
    >>> np.round(blurred.real, 3)
    array([[0.062, 0.099, 0.062, 0.026],
           [0.099, 0.158, 0.099, 0.042],
           [0.062, 0.099, 0.062, 0.026],
           [0.026, 0.042, 0.026, 0.011]])
    """
    return _plan_fourier(input, sigma, n, axis, output, "gaussian", "sigma")


@docfiller
@ndimage_function("input", keeps_byte_order=True, planned=True,
                  complex_arithmetic=True, results_64=_filter_kinds)
def fourier_uniform(input: ArrayLike, size: Any, n: int = -1,
                    axis: int = -1, output: Any = None) -> Array:
    """Multidimensional uniform filter in the Fourier domain.

    Multiplies the transform by ``sinc(pi size f / N)`` per axis, the
    transform of a box of width `size`.

    Parameters
    ----------
    %(fourier_input)s
    size : float or sequence of float
        Width of the box per axis (or one for all).
    %(fourier_filter_options)s

    %(returns_fourier_filtered)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import fourier_uniform
    >>> fourier_uniform(np.ones(4, complex), size=2).real.round(4)
    array([1.    , 0.6366, 0.    , 0.6366])
    """
    return _plan_fourier(input, size, n, axis, output, "uniform", "size")


@docfiller
@ndimage_function("input", keeps_byte_order=True, planned=True,
                  complex_arithmetic=True, results_64=_filter_kinds)
def fourier_ellipsoid(input: ArrayLike, size: Any, n: int = -1,
                      axis: int = -1, output: Any = None) -> Array:
    """Ellipsoidal box filter in the Fourier domain (1-D to 3-D).

    Multiplies the transform by the transform of an ellipsoid of axes
    `size`: ``sinc(r)`` in 1-D, ``2 J1(r) / r`` in 2-D and
    ``3 (sin r - r cos r) / r**3`` in 3-D, with ``r`` the radius of the
    frequency scaled by ``pi size / N`` per axis.

    Parameters
    ----------
    input : array_like
        The transformed array, with 1, 2 or 3 dimensions.
    size : float or sequence of float
        Length of the ellipsoid's axes (or one for all).
    %(fourier_filter_options)s

    %(returns_fourier_filtered)s

    Raises
    ------
    NotImplementedError
        For inputs of more than 3 dimensions, as SciPy.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import fourier_ellipsoid
    >>> fourier_ellipsoid(np.ones((2, 2)), size=1)
    array([[1.        , 0.72170284],
           [0.72170284, 0.49771703]])
    """
    input = as_array(input)
    if input.ndim > 3:
        raise NotImplementedError("Only 1d, 2d and 3d inputs are supported")
    return _plan_fourier(input, size, n, axis, output, "ellipsoid", "size")


@docfiller
@ndimage_function("input", reject_float16=nonempty,
                  keeps_byte_order=True, planned=True,
                  complex_arithmetic=True, results_64=_shift_kinds)
def fourier_shift(input: ArrayLike, shift: Any, n: int = -1, axis: int = -1,
                  output: Any = None) -> Array:
    """Shift in the Fourier domain.

    Multiplies the transform by ``exp(-2j pi shift f / N)`` per axis, which
    shifts the image by `shift` samples (periodically).

    Parameters
    ----------
    %(fourier_input)s
    shift : float or sequence of float
        Shift per axis (or one for all).
    %(fourier_n_axis)s
    output : array or dtype, optional
        complex64 or complex128. Default: the input dtype for complex
        input, otherwise complex128.
        %(fourier_output_forms)s

    Returns
    -------
    fourier_shift : array
        The shifted transform.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import fourier_shift
    >>> shifted = fourier_shift(np.fft.fft(np.arange(4.0)), shift=1)
    >>> np.fft.ifft(shifted).real.round(6)
    array([3., 0., 1., 2.])
    """
    return _plan_fourier(input, shift, n, axis, output, "shift", "shift")
