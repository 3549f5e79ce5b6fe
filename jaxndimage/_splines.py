"""Spline prefilters: ``spline_filter1d``, ``spline_filter`` and the
coefficients interpolation starts from.

SciPy turns samples into B-spline coefficients with one causal and one
anticausal first-order recursion per pole of the spline, starting from
initial conditions that are exact for one extension of the signal: mirror
(``constant``, ``grid-constant``, ``mirror``, ``wrap``), half-sample
reflection (``reflect``, ``grid-mirror``, ``nearest``) or periodic
(``grid-wrap``); see :data:`jaxndimage._modes.INTERPOLATION`.  With exact
initial conditions the two recursions of a pole ``z`` are the symmetric
convolution of that extension with ``h[k] = (1 - z) / (1 + z) * z**|k|``.
That is what is computed here: the extension comes from the shared
``_modes.pad_axis`` and the kernel is truncated where ``|z|**k`` falls below
the rounding error of the compute dtype.  A convolution has no recursion to
amplify rounding errors, so it is as stable in float32 as in float64, and it
vectorises over the whole array.

Concrete CPU input (numpy, and JAX arrays outside a trace on one CPU
device) compiles nothing per shape: each axis is filtered by one call on a
canvas extended along that axis only (:func:`_canvas_axis`, the poles'
FIRs in turn; see :mod:`jaxndimage._canvas`), or, for an axis of a few
samples whose 'reflect' initial condition needs its correction, by the
axis's matrix on the host.  Other input compiles for its shape.

Host (numpy) float32 input computes in float64, as SciPy does.  Accuracy
of JAX float32 input, which computes in float32, measured against SciPy in
float64 on a 256x256 uniform random float32 image in [0, 1), worst over all
eight modes, as the largest absolute difference divided by the largest
magnitude of SciPy's result (``map_coordinates`` at 20000 random points in
[-2, 258)):

=====  =================  ==================================
order  ``spline_filter``  ``map_coordinates`` (prefiltered)
=====  =================  ==================================
4      4.1e-07            8.1e-07
5      3.5e-07            9.5e-07
=====  =================  ==================================

float64 inputs agree with SciPy to about 1e-14.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage._cache import cached_jit
from jaxndimage._canvas import (
    Margins,
    concrete_on_cpu,
    like_input,
    separable_margins,
    shape_generic,
)
from jaxndimage._casting import arithmetic_dtype, cast_like_c, compute_dtype
from jaxndimage._dispatch import as_array, ndimage_function, to_jax
from jaxndimage._docstrings import docfiller
from jaxndimage._filters import _correlate_along, _correlate_pass, _run_passes
from jaxndimage._modes import INTERPOLATION, PREPAD, check_mode, extend_indices, pad_axis
from jaxndimage._plans import Plan, Planned
from jaxndimage._support import normalize_axis, output_dtype
from jaxndimage._typing import Array, ArrayLike

__all__ = ["spline_filter", "spline_filter1d"]


#: Poles of the B-spline prefilter of each order (ni_splines.c).
POLES: dict[int, tuple[float, ...]] = {
    2: (np.sqrt(8.0) - 3.0,),
    3: (np.sqrt(3.0) - 2.0,),
    4: (np.sqrt(664.0 - np.sqrt(438976.0)) + np.sqrt(304.0) - 19.0,
        np.sqrt(664.0 + np.sqrt(438976.0)) - np.sqrt(304.0) - 19.0),
    5: (np.sqrt(67.5 - np.sqrt(4436.25)) + np.sqrt(26.25) - 6.5,
        np.sqrt(67.5 + np.sqrt(4436.25)) - np.sqrt(26.25) - 6.5),
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


def _exact_fir(order: int, n: int, extension: str, dtype: np.dtype) -> bool:
    """Whether the poles' FIRs alone filter an axis of ``n`` samples: in
    every extension but 'reflect', whose initial condition differs by a
    term that vanishes on all but the shortest axes
    (:func:`_reflect_correction`)."""
    return extension != "reflect" or all(
        _reflect_correction(z, n, np.dtype(dtype)) is None
        for z in POLES[order])


def _axis_margins(ndim: int, *, axes: tuple[int], radii: tuple[int, ...],
                  mode: str, **_: Any) -> Margins:
    """The poles' FIRs read one after the other along the axis of
    ``axes``: as far as their radii together, in one step each."""
    return separable_margins(ndim, axes, (2 * sum(radii) + 1,), (0,), (mode,),
                             len(radii))


#: The widest margin of the prefilter on a canvas: its poles' radii
#: together, 64 samples for order 5 in float64.  Its canvases extend one
#: axis only, by a fraction of the array for all but short axes.
_WIDEST_POLES = 64


@shape_generic(("axes", "radii", "mode", "out_dtype", "compute"),
               _axis_margins, pass_axes="axes", mode_args=("mode",),
               widest_margin=_WIDEST_POLES)
def _canvas_axis(x: Array, taps: tuple[Array, ...], *, grid: Any,
                 axes: tuple[int], radii: tuple[int, ...], mode: str,
                 out_dtype: np.dtype, compute: np.dtype) -> Array:
    """:func:`_filter_axis` of an axis the FIRs filter alone
    (:func:`_exact_fir`) on a canvas: each pole's FIR in ``compute``, the
    last one stored in ``out_dtype``."""
    for index, weights in enumerate(taps):
        stored = out_dtype if index == len(taps) - 1 else compute
        x = _run_passes(grid, x, [_correlate_pass(weights, axes[0], mode, 0, 1)],
                        0.0, stored, compute)
    return x


def _filter_on_canvases(x: np.ndarray, order: int, axes: Sequence[int],
                        extension: str, out_dtype: np.dtype,
                        compute: np.dtype) -> np.ndarray:
    """:func:`_spline_filter` of concrete CPU input, one axis per call, so
    that no new shape compiles: on a canvas (:func:`_canvas_axis`), or
    where the 'reflect' correction holds, an axis of a few samples, by its
    matrix on the host; an axis of one sample is cast."""
    compute = np.dtype(compute)
    taps = tuple(pole_kernel(z, compute).astype(compute)
                 for z in POLES[order])
    radii = tuple(t.size // 2 for t in taps)
    for axis in axes:
        n = x.shape[axis]
        if n > 1 and _exact_fir(order, n, extension, compute):
            x = _canvas_axis(x, taps, axes=(axis,), radii=radii,
                             mode=extension, out_dtype=out_dtype,
                             compute=compute)
            continue
        x = x.astype(compute)
        if n > 1:
            matrix = _axis_matrix(order, n, extension, compute).astype(compute)
            x = np.moveaxis(np.tensordot(matrix, np.moveaxis(x, axis, 0),
                                         axes=1), 0, axis)
        x = cast_like_c(x, out_dtype)
    return np.ascontiguousarray(x)


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


def coefficients_on_canvases(x: Any, order: int, mode: str, cval: Any,
                             axes: Sequence[int], compute: np.dtype
                             ) -> np.ndarray:
    """:func:`spline_coefficients` (``prefilter`` on, ``order`` 2 to 5) of
    concrete CPU input along ``axes``, in ``compute``: padded on the host
    and filtered one axis per call (:func:`_filter_on_canvases`), so that
    no new shape compiles.  A numpy array."""
    info = INTERPOLATION[mode]
    x = np.asarray(x).astype(compute)
    if info.prepad:
        for axis in axes:
            x = _host_pad(x, axis, PREPAD, info.prepad, cval)
    return _filter_on_canvases(x, order, axes, info.prefilter, compute,
                               compute)


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


def _run_spline(plan: SplinePlan, input: ArrayLike) -> Array:
    """The kernel of a :class:`SplinePlan`: concrete CPU input on the host
    and on canvases (:func:`_filter_on_canvases`), nothing compiled per
    shape; other input by :func:`_spline_filter`, for its shape."""
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
    return _filter_on_canvases(
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
    The prefilter is computed as an exact-boundary convolution rather than a
    recursion; see the module notes for its accuracy on JAX float32 input.

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
    axes = ((normalize_axis(axis, input.ndim),) if order >= 2 and input.ndim
            else ())
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
