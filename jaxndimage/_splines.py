"""Spline prefilters: ``spline_filter1d``, ``spline_filter`` and the
coefficients interpolation starts from.

SciPy turns samples into B-spline coefficients with one causal and one
anticausal first-order recursion per pole of the spline, starting from
initial conditions that are exact for one extension of the signal: mirror
(``constant``, ``grid-constant``, ``mirror``, ``wrap``), half-sample
reflection (``reflect``, ``grid-mirror``, ``nearest``) or periodic
(``grid-wrap``); see :data:`jaxndimage._modes.INTERPOLATION`.  Two routes
compute them:

* Concrete CPU input (numpy, and JAX arrays outside a trace on one CPU
  device) runs SciPy's recursions in numpy, nothing compiled: the initial
  conditions as weights of the line (:func:`_initial_weights`), and each
  recursion over all lines of an axis at once, cut into segments that
  recur side by side and are then joined (:func:`_recurse`).
* Other input (traced, or on an accelerator) computes the recursions'
  closed form: with exact initial conditions the two recursions of a pole
  ``z`` are the symmetric convolution of the extension with
  ``h[k] = (1 - z) / (1 + z) * z**|k|``, truncated where ``|z|**k`` falls
  below the rounding error of the compute dtype, on the extension from
  ``_modes.pad_axis``; a short axis is filtered by its matrix.  A
  convolution vectorises over the whole array and has no recursion to
  carry rounding errors, so it is as accurate in float32 as in float64.

Host (numpy) float32 input computes in float64, as SciPy does; JAX float32
input computes in float32.  Accuracy against SciPy in float64 on a 256x256
uniform random float32 image in [0, 1), worst over all eight modes, as the
largest absolute difference divided by the largest magnitude of SciPy's
result, for ``spline_filter`` of orders 2 to 5:

==================================  =========
input                               worst
==================================  =========
JAX float32, eager (numpy route)    2.9e-07
JAX float32, under ``jit``          4.7e-07
float64 (numpy route)               1.0e-15
==================================  =========
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage._cache import cached_jit
from jaxndimage._canvas import (
    concrete_on_cpu,
    like_input,
)
from jaxndimage._casting import arithmetic_dtype, cast_like_c, compute_dtype
from jaxndimage._dispatch import as_array, ndimage_function, to_jax
from jaxndimage._docstrings import docfiller
from jaxndimage._filters import _correlate_along
from jaxndimage._modes import INTERPOLATION, PREPAD, check_mode, extend_indices, pad_axis
from jaxndimage._plans import Plan, Planned
from jaxndimage._support import normalize_axis, output_dtype
from jaxndimage._typing import Array, ArrayLike

__all__ = ["spline_filter", "spline_filter1d"]


#: Poles of the B-spline prefilter of each order, to the digits of
#: ni_splines.c (the closed forms of orders 4 and 5 lose digits to
#: cancellation in float64).
POLES: dict[int, tuple[float, ...]] = {
    2: (-0.171572875253809902396622551580603843,),   # sqrt(8) - 3
    3: (-0.267949192431122706472553658494127633,),   # sqrt(3) - 2
    4: (-0.361341225900220177092212841325675255,
        -0.013725429297339121360331226939128204),
    5: (-0.430575347099973791851434783493520110,
        -0.043096288203264653822712376822550182),
}

#: Relative size below which kernel taps are dropped, per compute dtype.
_TOLERANCE = {np.dtype(np.float32): 1e-10, np.dtype(np.float64): 1e-18}


@lru_cache(maxsize=None)
def pole_kernel(z: float, dtype: np.dtype) -> np.ndarray:
    """The symmetric FIR of one pole's causal and anticausal passes (gain
    included), ``h[-K..K]`` in float64, truncated below the tolerance."""
    radius = int(np.ceil(np.log(_TOLERANCE[np.dtype(dtype)])
                         / np.log(abs(z))))
    k = np.arange(-radius, radius + 1)
    return (1 - z) / (1 + z) * z ** np.abs(k)


@lru_cache(maxsize=None)
def _reflect_correction(z: float, n: int, dtype: np.dtype
                        ) -> tuple[np.ndarray, np.ndarray] | None:
    """SciPy's half-sample ('reflect') initial condition, minus the exact one.

    SciPy's causal initial sum reads its first sample after starting to
    accumulate into it, so its result differs from the exact half-sample
    symmetric filter by a rank-one term ``v * (w . x)`` (``x`` the input of
    the pole's passes).  It vanishes like ``z**(2n)``; None when negligible.
    """
    scale = z ** (2 * n) / (1 - z ** (2 * n))
    if abs(scale) < _TOLERANCE[np.dtype(dtype)]:
        return None
    w = np.zeros(n)
    w[n - 1] += z ** n
    for i in range(1, n - 1):
        w[i] += z ** i
        w[n - 1 - i] += z ** (i + n)
    causal = z ** np.arange(n)
    v = np.empty(n)
    v[n - 1] = z / (z - 1) * causal[n - 1]
    for i in range(n - 2, -1, -1):
        v[i] = z * (v[i + 1] - causal[i])
    gain = (1 - z) * (1 - 1 / z)
    return v * gain * scale, w


@lru_cache(maxsize=None)
def _axis_matrix(order: int, n: int, extension: str, dtype: np.dtype
                 ) -> np.ndarray:
    """The prefilter of an axis of length ``n`` as an ``n x n`` matrix, in
    float64: the product over the poles of each pole's FIR on the extended
    axis, folded back onto the axis, plus its 'reflect' correction."""
    rows = np.arange(n)
    total = np.eye(n)
    for z in POLES[order]:
        taps = pole_kernel(z, dtype)
        radius = taps.size // 2
        source = extend_indices(np.arange(-radius, n + radius), n, extension)
        matrix = np.zeros((n, n))
        for k, tap in enumerate(taps):
            np.add.at(matrix, (rows, source[rows + k]), tap)
        correction = (_reflect_correction(z, n, dtype)
                      if extension == "reflect" else None)
        if correction is not None:
            matrix += np.outer(*correction)
        total = matrix @ total
    return total


def _filter_axis(x: Array, order: int, axis: int, extension: str) -> Array:
    """Prefilter ``x`` (a float array) along ``axis`` with the spline
    boundary condition ``extension`` ('mirror', 'reflect' or 'wrap').

    An axis no longer than the poles' FIRs is filtered by its matrix
    (:func:`_axis_matrix`): fewer operations than the taps, and one
    product, whose gradient compiles as fast as itself (the transposed
    taps of a short axis take XLA tens of seconds).
    """
    n = x.shape[axis]
    if order < 2 or n <= 1:
        return x
    if n <= max(pole_kernel(z, x.dtype).size for z in POLES[order]):
        matrix = jnp.asarray(_axis_matrix(order, n, extension, x.dtype),
                             x.dtype)
        return jnp.moveaxis(jnp.tensordot(
            matrix, jnp.moveaxis(x, axis, 0), axes=1,
            precision=lax.Precision.HIGHEST), 0, axis)
    for z in POLES[order]:
        taps = jnp.asarray(pole_kernel(z, x.dtype), x.dtype)
        filtered = _correlate_along(x, taps, 0.0, axis, extension, 0, 1)
        correction = (_reflect_correction(z, n, x.dtype)
                      if extension == "reflect" else None)
        if correction is not None:
            v, w = (jnp.asarray(a, x.dtype) for a in correction)
            weight = jnp.moveaxis(jnp.tensordot(
                jnp.moveaxis(x, axis, -1), w, axes=1)[..., None] * v, -1,
                axis)
            filtered = filtered + weight
        x = filtered
    return x


@lru_cache(maxsize=256)
def _initial_weights(z: float, n: int, extension: str
                     ) -> tuple[np.ndarray, np.ndarray]:
    """SciPy's initial conditions of pole ``z`` on a line of ``n > 1``
    samples, as weights: the causal pass starts from ``causal @ line``
    (the line scaled by the gain and the earlier poles), the anticausal
    one from ``anticausal @ line[-len(anticausal):]`` (the end of the line
    after the causal pass it reads: a weight of 0 would make an infinite
    sample a NaN where SciPy never reads it).

    The weights are ni_splines.c's ``_init_causal_*`` and
    ``_init_anticausal_*`` written out, including the last step of the
    'reflect' causal sum, which reads the first sample after adding into
    it (the aliasing :func:`_reflect_correction` describes)."""
    k = np.arange(n, dtype=np.float64)
    causal = np.zeros(n)
    anticausal = np.zeros(n)
    if extension == "mirror":
        causal[:] = z ** k + z ** (2 * n - 2 - k)
        causal[0], causal[-1] = 1.0, z ** (n - 1)
        causal /= 1 - z ** (2 * n - 2)
        anticausal = np.array([z * z, z]) / (z * z - 1)
    elif extension == "wrap":
        causal[0] = 1.0
        causal[1:] = z ** (n - k[1:])
        causal /= 1 - z ** n
        anticausal[:-1] = z ** (k[:-1] + 2)
        anticausal[-1] = z
        anticausal /= z ** n - 1
    else:
        # Sum over all but the last step, then the last step reads that
        # sum as the first sample: sum * (1 + z**(2n-1)) + z**(n-1) x[n-1].
        partial = z ** k + z ** (2 * n - 1 - k)
        partial[0], partial[-1] = 1.0, z ** n
        causal[:] = partial * (1 + z ** (2 * n - 1))
        causal[-1] += z ** (n - 1)
        causal *= z / (1 - z ** (2 * n))
        causal[0] += 1.0
        anticausal = np.array([z / (z - 1)])
    return causal, anticausal


def _reach(z: float, dtype: np.dtype) -> int:
    """Samples after which ``z**k`` is below a quarter of ``dtype``'s
    rounding error: how far one sample's value carries in a recursion."""
    return int(np.ceil(np.log(np.finfo(dtype).eps / 4) / np.log(abs(z))))


#: The elements a numpy operation works through in the time its call
#: costs: :func:`_recurse` weighs calls against work with it.
CALL_ELEMENTS = 1000


def _recurse(c: np.ndarray, z: float, anticausal: bool = False,
             whole: bool = False) -> None:
    """SciPy's recursion of pole ``z`` along the first axis of the 2-D
    ``c`` (a view), in place, from ``i = 1``: ``c[i] += z * c[i - 1]``, or
    ``anticausal`` (``c`` reversed) ``c[i] = z * (c[i - 1] - c[i])``.

    The rows are cut into segments (the last may be shorter), which recur
    side by side from a zero start; each segment's start then receives the
    true end of the one before, through as many rows as a value carries
    (:func:`_reach`).  Results differ from the sequential recursion by
    rounding only: what a carry adds past its reach is below a quarter of
    the rounding error of the carry.  The segments' length ``L`` balances
    the calls (about ``2 L + 2 n / L``) against the rows the carries add
    to (``n reach / L``): ``L = sqrt(n (1 + m reach / CALL_ELEMENTS))``
    for ``n`` rows of ``m`` elements.  ``whole``: one segment, the
    sequential recursion itself."""
    n, m = c.shape
    reach = _reach(z, c.dtype)
    length = n if whole else min(n, max(1, round(np.sqrt(
        n * (1 + m * reach / CALL_ELEMENTS)))))
    step = np.empty((-(-n // length), m), c.dtype)
    if anticausal:
        c[length::length] *= -z  # z * (0 - c[i]) at the later starts
    for j in range(1, length):
        rows = c[j::length]
        count = rows.shape[0]
        before, term = c[j - 1::length][:count], step[:count]
        if anticausal:
            np.subtract(before, rows, out=term)
            np.multiply(term, z, out=rows)
        else:
            np.multiply(before, z, out=term)
            rows += term
    powers = (z ** np.arange(1, min(reach, length) + 1, dtype=c.dtype))[:, None]
    for start in range(length, n, length):
        carried = c[start:start + len(powers)]
        carried += powers[:len(carried)] * c[start - 1]


def _filter_lines_on_host(lines: np.ndarray, order: int,
                          extension: str) -> None:
    """SciPy's prefilter of each column of the 2-D ``lines`` in place, by
    :func:`_filter_lines`.  Nothing is compiled; results agree with
    SciPy's to rounding.

    SciPy's recursions carry a NaN or an infinity to the ends of its
    line; the carries between segments stop at their reach, so lines
    holding one are filtered again from their samples, whole.  As in
    SciPy's C, arithmetic on them warns of nothing."""
    with np.errstate(all="ignore"):
        # One sum finds that every sample is finite, without a mask of
        # the lines (a sum that overflows looks for them too).
        whole = None
        if not np.isfinite(np.sum(lines)):
            finite = np.isfinite(lines).all(axis=0)
            whole = None if finite.all() else np.flatnonzero(~finite)
        kept = None if whole is None else lines[:, whole]
        _filter_lines(lines, order, extension)
        if whole is not None:
            _filter_lines(kept, order, extension, whole=True)
            lines[:, whole] = kept


def _filter_lines(lines: np.ndarray, order: int, extension: str,
                  whole: bool = False) -> None:
    """SciPy's prefilter of each column of the 2-D ``lines``, in place:
    the gain, then per pole the causal and anticausal recursions
    (:func:`_recurse`, ``whole`` or in segments) from SciPy's initial
    conditions (:func:`_initial_weights`; for ``whole`` lines, which hold
    a NaN or an infinity, formed term by term, :func:`_causal_start`)."""
    n = lines.shape[0]
    poles = POLES[order]
    lines *= np.prod([(1 - z) * (1 - 1 / z) for z in poles])
    for z in poles:
        causal, anticausal = (w.astype(lines.dtype)
                              for w in _initial_weights(z, n, extension))
        lines[0] = (_causal_start(lines, z, extension) if whole
                    else causal @ lines)
        _recurse(lines, z, whole=whole)
        lines[-1] = (_anticausal_start(lines, z, extension) if whole
                     else anticausal @ lines[-len(anticausal):])
        _recurse(lines[::-1], z, anticausal=True, whole=whole)


def _causal_start(c: np.ndarray, z: float, extension: str) -> np.ndarray:
    """ni_splines.c's ``_init_causal_*`` of the columns of ``c``, term by
    term as SciPy forms them: each product of a sample and a power of
    ``z`` made as SciPy makes it (powers by repeated products, which
    underflow to 0 where SciPy's do), so that an infinite sample gives
    SciPy's NaN where SciPy multiplies it by 0 or adds it to an infinity
    of the other sign.  Summed in another order than SciPy's loop, so for
    the lines that hold a NaN or an infinity, whose every coefficient is
    then one too (:func:`_filter_lines_on_host`)."""
    n = len(c)
    powers = np.cumprod(np.full(n, z))[:, None]  # z**1 ... z**n
    if extension == "wrap":
        terms = powers[:n - 1] * c[:0:-1]
        return (c[0] + terms.sum(axis=0)) / (1 - powers[-1])
    if extension == "mirror":
        far = z ** (n - 1)
        terms = powers[:n - 2] * (c[1:n - 1] + far * c[n - 2:0:-1])
        return (c[0] + far * c[-1] + terms.sum(axis=0)) / (1 - far * far)
    far = z ** n
    terms = powers[:n - 2] * (c[1:n - 1] + far * c[n - 2:0:-1])
    sum_ = c[0] + far * c[-1] + terms.sum(axis=0)
    # The last step reads the sum as its first sample.
    sum_ = sum_ + powers[n - 2] * (c[-1] + far * sum_)
    return sum_ * (z / (1 - far * far)) + c[0]


def _anticausal_start(c: np.ndarray, z: float, extension: str
                      ) -> np.ndarray:
    """ni_splines.c's ``_init_anticausal_*`` of the columns of ``c``, as
    :func:`_causal_start` forms the causal ones."""
    if extension == "wrap":
        powers = np.cumprod(np.full(len(c), z))[:, None]
        terms = powers[:-1] * c[:-1]
        return (c[-1] + terms.sum(axis=0)) * (z / (powers[-1] - 1))
    if extension == "mirror":
        return (z * c[-2] + c[-1]) * z / (z * z - 1)
    return c[-1] * (z / (z - 1))


def _filter_on_host(x: np.ndarray, order: int, axes: Sequence[int],
                    extension: str, out_dtype: np.dtype,
                    compute: np.dtype) -> np.ndarray:
    """:func:`_spline_filter` of a numpy array in numpy, one axis after the
    other (:func:`_filter_lines_on_host`), each pass stored in
    ``out_dtype``; nothing is compiled.

    The passes run in place on one C-ordered copy in ``compute``: along
    the first axis its lines are its columns; along another axis they are
    copied, transposed, into one scratch array that every such axis
    reuses, and back.  A new array costs its page faults, about as much as
    a pass over it."""
    out_dtype, compute = np.dtype(out_dtype), np.dtype(compute)
    c = np.array(x, dtype=compute, order="C")
    scratch = None
    for k, axis in enumerate(axes):
        n = c.shape[axis]
        if n > 1 and c.size:
            if axis == 0:
                _filter_lines_on_host(c.reshape(n, -1), order, extension)
            else:
                before = math.prod(c.shape[:axis])
                if scratch is None:
                    scratch = np.empty(c.size, compute)
                lines = scratch.reshape(n, before, -1)
                along = c.reshape(before, n, -1).transpose(1, 0, 2)
                np.copyto(lines, along)
                _filter_lines_on_host(lines.reshape(n, -1), order, extension)
                np.copyto(along, lines)
        if out_dtype != compute:
            rounded = cast_like_c(c, out_dtype)
            if k == len(axes) - 1:
                return rounded
            c[...] = rounded
    return c


def _host_pad(x: np.ndarray, axis: int, width: int, mode: str,
              cval: Any) -> np.ndarray:
    """``x`` extended by ``width`` samples on both sides of ``axis`` as
    :func:`_modes.pad_axis` extends it, on the host."""
    n = x.shape[axis]
    source = extend_indices(np.arange(-width, n + width), n, mode)
    padded = np.take(x, np.maximum(source, 0), axis=axis)
    if np.any(source < 0):
        outside = (slice(None),) * axis + (source < 0,)
        padded[outside] = np.asarray(cval).astype(x.dtype)
    return padded


def coefficients_on_host(x: Any, order: int, mode: str, cval: Any,
                         axes: Sequence[int], compute: np.dtype
                         ) -> np.ndarray:
    """:func:`spline_coefficients` (``prefilter`` on, ``order`` 2 to 5) of
    concrete CPU input along ``axes``, in ``compute``: padded and filtered
    in numpy (:func:`_filter_on_host`), nothing compiled.  A numpy
    array."""
    info = INTERPOLATION[mode]
    x = np.asarray(x)
    if info.prepad:
        # SciPy pads by numpy's pad, which stores cval in the input's
        # dtype (2.5 as 2, -1 as 255 in uint8).
        with np.errstate(invalid="ignore", over="ignore"):
            cval = np.asarray(cval).astype(x.dtype)
    x = x.astype(compute)
    if info.prepad:
        for axis in axes:
            x = _host_pad(x, axis, PREPAD, info.prepad, cval)
    return _filter_on_host(x, order, axes, info.prefilter, compute, compute)


@cached_jit(static_argnames=("order", "axes", "mode", "out_dtype",
                             "compute"))
def _spline_filter(x: Array, *, order: int, axes: tuple[int, ...], mode: str,
                   out_dtype: np.dtype, compute: np.dtype) -> Array:
    """Filter along each of ``axes`` in ``compute``, storing each pass in
    ``out_dtype`` as SciPy does."""
    extension = INTERPOLATION[mode].prefilter
    for axis in axes:
        x = x.astype(compute)
        x = cast_like_c(_filter_axis(x, order, axis, extension), out_dtype)
    return x


def spline_coefficients(x: Array, order: int, mode: str, cval: Any,
                        prefilter: bool) -> tuple[Array, int]:
    """The array interpolation reads: spline coefficients (or ``x`` itself
    when ``prefilter`` is off or ``order < 2``), and the padding in samples
    SciPy adds on each side first (``_prepad_for_spline_filter``).

    Traceable; ``order``, ``mode`` and ``prefilter`` are static.  The
    coefficients have the compute dtype of ``x``; with nothing to filter
    ``x`` itself is returned, uncast, so that no copy of it is made (cast
    what is read from it).
    """
    dtype = compute_dtype(x.dtype)
    if not prefilter or order < 2:
        return x, 0
    info = INTERPOLATION[mode]
    npad = PREPAD if info.prepad else 0
    if npad:
        for axis in range(x.ndim):
            x = pad_axis(x, axis, npad, npad, info.prepad, cval)
    x = x.astype(dtype)
    for axis in range(x.ndim):
        x = _filter_axis(x, order, axis, info.prefilter)
    return x, npad


def _check_order(order: Any, low: int = 0) -> int:
    if not low <= order <= 5:
        raise RuntimeError("spline order not supported")
    return int(order)


def _spline_output(output: Any, input: Array) -> np.dtype:
    # The default output is float64 (float32 where JAX has no float64).
    if output is np.float64:
        output = jax.dtypes.canonicalize_dtype(np.float64)
    out = output_dtype(output, input.dtype, shape=input.shape,
                       complex_output=jnp.iscomplexobj(input))
    if out.kind == "c" and not jnp.iscomplexobj(input):
        raise RuntimeError(f"output: array type {out!r} not supported for "
                           "real input")
    return out


@dataclasses.dataclass(frozen=True)
class SplinePlan(Plan):
    """Spline coefficients of ``order`` along each of ``axes`` (boundary
    ``mode``), every pass stored in ``out_dtype``; no axes (or order 0
    and 1): the input cast to ``out_dtype``.  A complex input is filtered
    as its real and imaginary parts.  The prefilter is recursive: its reach
    along a filtered axis is the whole axis."""

    order: int
    axes: tuple[int, ...]
    mode: str
    out_dtype: np.dtype
    complex_input: bool

    @property
    def depth(self) -> tuple[int | None, ...]:
        return tuple(None if axis in self.axes else 0
                     for axis in range(self.ndim))

    @property
    def copies(self) -> bool:
        return not self.axes or self.order < 2

    def refuses_float16(self, input: Any) -> bool:
        """SciPy's C pass along an axis refuses float16 only if the axis
        has samples (an empty line ends it first); every pass writes the
        output, the first reads the input."""
        if self.copies:
            return False
        return ((input.dtype == np.float16 and input.shape[self.axes[0]] > 0)
                or (self.out_dtype == np.float16
                    and any(input.shape[axis] > 0 for axis in self.axes)))


def _run_spline(plan: SplinePlan, input: ArrayLike) -> Array:
    """The kernel of a :class:`SplinePlan`: concrete CPU input in numpy
    (:func:`_filter_on_host`), nothing compiled; other input by
    :func:`_spline_filter`, for its shape."""
    if concrete_on_cpu(input):
        return like_input(_spline_on_host(plan, np.asarray(input)), input)
    input = to_jax(input)
    if plan.complex_input:
        part = dataclasses.replace(plan, complex_input=False,
                                   out_dtype=np.finfo(plan.out_dtype).dtype)
        return jax.lax.complex(_run_spline(part, input.real),
                               _run_spline(part, input.imag)
                               ).astype(plan.out_dtype)
    if plan.order < 2 or not plan.axes or input.size == 0:
        return cast_like_c(input, plan.out_dtype)
    return _spline_filter(input, order=plan.order, axes=plan.axes,
                          mode=plan.mode, out_dtype=plan.out_dtype,
                          compute=arithmetic_dtype(input.dtype))


def _spline_on_host(plan: SplinePlan, input: np.ndarray) -> np.ndarray:
    """:func:`_run_spline` of a numpy array, as a numpy array."""
    if plan.complex_input:
        part = dataclasses.replace(plan, complex_input=False,
                                   out_dtype=np.finfo(plan.out_dtype).dtype)
        result = np.empty(input.shape, plan.out_dtype)
        result.real = _spline_on_host(part, input.real)
        result.imag = _spline_on_host(part, input.imag)
        return result
    if plan.order < 2 or not plan.axes or input.size == 0:
        return cast_like_c(input, plan.out_dtype)
    return _filter_on_host(
        input, plan.order, plan.axes, INTERPOLATION[plan.mode].prefilter,
        plan.out_dtype, arithmetic_dtype(input.dtype))


def _plan_spline(input: Array, order: int, axes: tuple[int, ...],
                 out: np.dtype, mode: str) -> Planned:
    plan = SplinePlan(ndim=input.ndim, order=order, axes=axes, mode=mode,
                      out_dtype=out,
                      complex_input=bool(jnp.iscomplexobj(input)))
    return Planned(plan, _run_spline, (input,))


@docfiller
@ndimage_function("input", planned=True, results_64="f")
def spline_filter1d(input: ArrayLike, order: int = 3, axis: int = -1,
                    output: Any = np.float64, mode: str = "mirror") -> Array:
    """Spline coefficients of `input` along one axis.

    Parameters
    ----------
    %(input)s
    %(spline_order)s
        Orders 0 and 1 return a copy of `input`.
    %(axis)s
    %(spline_output_mode)s

    %(returns_spline_coefficients)s

    Notes
    -----
    Traced and accelerator input is filtered by the recursions' closed
    form, an exact-boundary convolution; see the module notes for the
    accuracy of each route.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import spline_filter1d
    >>> spline_filter1d(np.array([0., 0., 6., 0., 0.])).round(4)
    array([ 1.5, -3. , 10.5, -3. ,  1.5])
    """
    input = as_array(input)
    order = _check_order(order)
    out = _spline_output(output, input)
    check_mode(mode)
    # (SciPy normalises the axis for orders 2-5 only: a 0-d input has none.)
    axes = (normalize_axis(axis, input.ndim),) if order >= 2 else ()
    return _plan_spline(input, order, axes, out, mode)


@docfiller
@ndimage_function("input", planned=True, results_64="f")
def spline_filter(input: ArrayLike, order: int = 3, output: Any = np.float64,
                  mode: str = "mirror") -> Array:
    """Multidimensional spline coefficients of `input`.

    One `spline_filter1d` pass per axis, cast to `output`'s dtype after
    each pass, as SciPy does.

    Parameters
    ----------
    %(input)s
    order : int, optional
        Order of the spline, 2 to 5. Default is 3.
    %(spline_output_mode)s

    %(returns_spline_coefficients)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import spline_filter
    >>> spline_filter(np.eye(3), order=2).round(3)
    array([[ 2.264, -1.125,  0.486],
           [-1.125,  2.375, -1.125],
           [ 0.486, -1.125,  2.264]])
    """
    input = as_array(input)
    order = _check_order(order, low=2)
    out = _spline_output(output, input)
    check_mode(mode)
    return _plan_spline(input, order, tuple(range(input.ndim)), out, mode)
