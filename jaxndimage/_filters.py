"""Linear filters: the correlate/convolve, gaussian and uniform families.

Each public function is planned (:mod:`jaxndimage._plans`): its shell
validates and normalises the arguments in plain Python (they are concrete)
into a frozen plan of only what fixes shapes or program structure (axes,
sizes, modes, origins, kernel symmetry, output dtype) -- a
:class:`WindowPlan`, :class:`CorrelationPlan`, :class:`GaussianPlan` or
:class:`KernelPlan`; for the Laplace and gradient-magnitude filters a
:class:`FilterDerivativesPlan` of such plans, one per axis, or a
:class:`CallableDerivativesPlan` for a user's derivative -- and returns it
with the kernel that runs it.  Numbers
such as sigma, cval and weights are the kernel's operands and traced, so a
new sigma with the same radius reuses the compiled program, and everything
is differentiable with respect to them.

Separable filters run one 1-D pass per axis and cast to the output dtype after
every pass, as SciPy does; the passes of one call are fused into one program.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxndimage._cache import cached_jit
from jaxndimage._canvas import (
    ExactGrid,
    Margins,
    canvas_per_pass,
    one_pass_per_call,
    pointwise,
    separable_margins,
    shape_generic,
    window_margins,
)
from jaxndimage._casting import arithmetic_dtype, cast_like_c, cast_like_numpy, compute_dtype
from jaxndimage._dispatch import (
    as_array,
    family_member,
    host_dtype,
    ndimage_function,
    nonempty,
    wide_kind,
)
from jaxndimage._docstrings import docfiller
from jaxndimage._modes import (
    FILTER_EXTENSION,
    check_mode,
    check_modes,
    window_passes,
)
from jaxndimage._plans import Plan, Planned, widest_depth, window_depth
from jaxndimage._support import (
    as_int,
    check_axes,
    check_origin,
    check_real_cval,
    convolution_origin,
    expand_origins,
    expand_to_ndim,
    gaussian_radius,
    normalize_axis,
    normalize_sequence,
    output_dtype,
)
from jaxndimage._typing import Array, ArrayLike

__all__ = [
    "convolve",
    "convolve1d",
    "correlate",
    "correlate1d",
    "gaussian_filter",
    "gaussian_filter1d",
    "gaussian_gradient_magnitude",
    "gaussian_laplace",
    "generic_gradient_magnitude",
    "generic_laplace",
    "laplace",
    "prewitt",
    "sobel",
    "uniform_filter",
    "uniform_filter1d",
]


# --------------------------------------------------------------------------
# Kernels (pure JAX; everything here may be traced)
# --------------------------------------------------------------------------
#
# A separable filter is a list of 1-D passes.  Each pass extends its axis
# by the boundary mode, then sums its taps as shifted views of the extended
# array in one fused loop.  Kernels are written against a grid
# (`_canvas.ExactGrid` for static shapes, `_canvas.FlatGrid` for the
# shape-generic canvas), which supplies the extension and the shifts.
# Shift-and-add beats lax.conv_general_dilated, a banded matmul and FFT
# convolution for the radii SciPy's default truncate gives
# (benchmarks/README.md).

_BARRIER = lax.optimization_barrier


def _runtime_one(weights: Array) -> Array:
    """1, computed from the data so that XLA cannot fold it.

    XLA's CPU code contracts ``total + w * v`` into one fused multiply-add,
    which rounds once where SciPy rounds the product and then the sum.
    ``total + (w * v) * one`` leaves it only the exact scaling by one to
    contract, so every product is rounded as in SciPy.
    """
    return weights.reshape(-1)[0] * 0 + 1


#: Terms a pass adds in one unrolled fusion.  Longer kernels add theirs in
#: a loop over blocks of `TAP_BLOCK` unrolled terms: XLA's compile time
#: grows faster than linearly with the terms of one fusion, and past about
#: a hundred it stops fusing the shifted reads of a canvas.
UNROLLED_TERMS = 64
TAP_BLOCK = 32

#: The block of the derivatives of a pass, all looped: XLA compiles the
#: transpose of unrolled shifted reads (pads of the cotangent) slowly and
#: runs it slowly, and that of a loop of two terms at a time as fast as
#: the pass (``benchmarks/bench_grad.py``).
TANGENT_BLOCK = 2


def _accumulate(total: Array, term: Callable[[Any], Array], count: int,
                add: Callable[[Array, Array], Array], unrolled: int,
                block: int) -> Array:
    """``total + term(0) + term(1) + ... + term(count - 1)``, added in that
    order; beyond ``unrolled`` terms, in a loop over blocks of ``block``
    terms, which calls ``term`` with a traced index."""
    if count <= unrolled:
        for k in range(count):
            total = add(total, term(k))
        return total
    blocks = count // block

    def body(b: Any, total: Array) -> Array:
        for j in range(block):
            total = add(total, term(b * block + j))
        return total

    total = lax.fori_loop(0, blocks, body, total)
    for k in range(blocks * block, count):
        total = add(total, term(k))
    return total


def _taps(grid: Any, padded: Array, weights: Array, axis: int,
          symmetry: int, unrolled: int, block: int, as_scipy: bool
          ) -> Array:
    """:func:`_weighted_taps`, with `_accumulate`'s ``unrolled`` and
    ``block``.  ``as_scipy``: each product rounded before it is added, as
    SciPy computes (off for the tangents, which must be linear in their
    arrays); an antisymmetric kernel's sum starts from the centre's
    product, so that zeros end at SciPy's signed zero."""
    size = weights.shape[0]
    span = size - 1
    # Materialised, so the weights are not recomputed inside every tap.
    weights = _BARRIER(weights.astype(padded.dtype))
    one = _runtime_one(weights) if as_scipy else None

    def tap(k):
        return grid.shift(padded, axis, k, span)

    def add(a, b):
        return grid.join(jnp.add, a, b)

    def weighted(k, v):
        return weights[k] * v if one is None else (weights[k] * v) * one

    if symmetry and size % 2:
        # SciPy's order: the centre, then the pairs from the outermost in.
        half = size // 2
        op = jnp.add if symmetry > 0 else jnp.subtract
        total = _accumulate(
            weighted(half, tap(half)),
            lambda k: weighted(k, grid.join(op, tap(k), tap(span - k))),
            half, add, unrolled, block)
        return total
    # SciPy's order: the last tap, then the others from the first.
    return _accumulate(weighted(span, tap(span)),
                       lambda k: weighted(k, tap(k)), span, add, unrolled,
                       block)


@functools.partial(jax.custom_jvp, nondiff_argnums=(2, 3))
def _exact_taps(padded: Array, weights: Array, axis: int,
                symmetry: int) -> Array:
    return _taps(ExactGrid(), padded, weights, axis, symmetry,
                 UNROLLED_TERMS, TAP_BLOCK, True)


@functools.partial(_exact_taps.defjvp, symbolic_zeros=True)
def _exact_taps_jvp(axis: int, symmetry: int, primals: tuple,
                    tangents: tuple) -> tuple[Array, Array]:
    # The pass is linear in each of its arrays: the tangent is the same sum
    # of the tangents, in looped blocks (see TANGENT_BLOCK).
    padded, weights = primals
    d_padded, d_weights = tangents
    result = _exact_taps(padded, weights, axis, symmetry)

    def looped(x: Array, w: Array) -> Array:
        return _taps(ExactGrid(), x, w, axis, symmetry, 0, TANGENT_BLOCK,
                     False)

    # JAX calls this rule only when at least one tangent is nonzero.
    terms = [looped(x, w) for x, w, t in ((d_padded, weights, d_padded),
                                          (padded, d_weights, d_weights))
             if not isinstance(t, jax.custom_derivatives.SymbolicZero)]
    return result, sum(terms[1:], terms[0])


def _weighted_taps(grid: Any, padded: Array, weights: Array, axis: int,
                   symmetry: int) -> Array:
    """``sum_k weights[k] * padded[k:]`` along ``axis``.

    ``symmetry`` is +1 for a symmetric, -1 for an antisymmetric odd-sized
    kernel (folded to halve the multiplications, as SciPy does) and 0
    otherwise.  On an :class:`ExactGrid`, the one a user's ``grad`` sees,
    the derivatives add the same terms in loops of `TANGENT_BLOCK`.
    """
    if isinstance(grid, ExactGrid):
        return _exact_taps(padded, weights, axis, symmetry)
    return _taps(grid, padded, weights, axis, symmetry, UNROLLED_TERMS,
                 TAP_BLOCK, True)


def _window_taps(grid: Any, padded: Array, size: int, axis: int) -> Array:
    """Sum of ``size`` consecutive samples along ``axis``.

    Short windows add their taps in one fused loop; long ones build sums of
    1, 2, 4, ... samples from each other (materialised, so O(log size)
    additions per sample) and combine them along the binary digits of
    ``size``.
    """
    if size <= 16:
        total = grid.shift(padded, axis, 0)
        for k in range(1, size):
            total = grid.join(jnp.add, total, grid.shift(padded, axis, k))
        return total
    block, span, offset, total, remaining = padded, 1, 0, None, size
    while remaining:
        if remaining & 1:
            part = grid.shift(block, axis, offset)
            total = part if total is None else grid.join(jnp.add, total, part)
            offset += span
        remaining >>= 1
        if remaining:
            block = _BARRIER(grid.join(jnp.add, grid.shift(block, axis, 0),
                                       grid.shift(block, axis, span)))
            span *= 2
    return total


class _Pass(NamedTuple):
    """One 1-D pass: extend ``axis`` by ``before``/``after`` samples by
    ``mode``, then ``taps(grid, padded, axis)``."""

    axis: int
    before: int
    after: int
    mode: str
    taps: Callable[[Any, Array, int], Array]


def _run_passes(grid: Any, x: Array, passes: Sequence[_Pass], cval: Any,
                out_dtype: np.dtype, compute: np.dtype) -> Array:
    """Run 1-D passes in turn, each computed in ``compute`` and stored in
    ``out_dtype``, as SciPy does."""
    for index, p in enumerate(passes):
        if FILTER_EXTENSION[p.mode] == "constant":
            x = x.astype(compute)  # cval is padded in ``compute``, as in SciPy
        shape = x.shape
        # Other modes copy samples: the padded copy keeps the stored dtype
        # (half the memory of float64 for float32 data), and the taps read
        # it in ``compute``.
        padded = _BARRIER(grid.pad(x, p.axis, p.before, p.after, p.mode,
                                   cval))
        result = grid.crop(p.taps(grid, padded.astype(compute), p.axis),
                           shape)
        # SciPy's bool output buffer holds the raw C-cast byte between
        # passes; only the final result is read as true/false.
        x = cast_like_c(result, _between_passes(out_dtype,
                                                index == len(passes) - 1))
    return x


def _correlate_pass(weights: Array, axis: int, mode: str, origin: int,
                    symmetry: int) -> _Pass:
    size = weights.shape[0]
    before = size // 2 + origin
    return _Pass(axis, before, size - 1 - before, mode,
                 lambda grid, v, a: _weighted_taps(grid, v, weights, a,
                                                   symmetry))


def _correlate_along(x: Array, weights: Array, cval: Any, axis: int,
                     mode: str, origin: int, symmetry: int) -> Array:
    """Correlate ``x`` with 1-D ``weights`` along ``axis``, in ``x.dtype``.

    ``symmetry`` is +1 for a symmetric, -1 for an antisymmetric odd-sized
    kernel and 0 otherwise.  ``x`` has a static shape (inside a kernel).
    """
    return _run_passes(ExactGrid(), x, [_correlate_pass(
        weights, axis, mode, origin, symmetry)], cval, x.dtype,
        compute_dtype(x.dtype))


def _correlate_separable_margins(ndim, *, axes, modes, origins, sizes,
                                 **_) -> Margins:
    return separable_margins(ndim, axes, sizes, origins, modes, len(axes))


@shape_generic(("axes", "modes", "origins", "sizes", "symmetries",
                "out_dtype", "compute"), _correlate_separable_margins,
               pass_axes="axes", mode_args=("modes",), lines=True)
def _correlate_separable_kernel(x: Array, weights: tuple[Array, ...],
                                cval: Any, *, grid: Any,
                                axes: tuple[int, ...],
                                modes: tuple[str, ...],
                                origins: tuple[int, ...],
                                sizes: tuple[int, ...],
                                symmetries: tuple[int, ...],
                                out_dtype: np.dtype,
                                compute: np.dtype) -> Array:
    passes = [_correlate_pass(w, a, m, o, s)
              for w, a, m, o, s in zip(weights, axes, modes, origins,
                                       symmetries)]
    return _run_passes(grid, x, passes, cval, out_dtype, compute)


def _between_passes(out_dtype: np.dtype, last: bool) -> np.dtype:
    """The dtype a pass of :func:`_run_passes` is stored in: the output's,
    except that a bool output holds SciPy's raw C-cast byte between
    passes."""
    return (np.dtype(np.uint8) if out_dtype == np.bool_ and not last
            else out_dtype)


def _correlate_separable(x: Array, weights: tuple[Array, ...], cval: Any, *,
                         axes: tuple[int, ...], modes: tuple[str, ...],
                         origins: tuple[int, ...],
                         symmetries: tuple[int, ...],
                         out_dtype: np.dtype) -> Array:
    """Correlate ``x`` with 1-D ``weights`` along each of ``axes``."""
    sizes = tuple(int(w.shape[0]) for w in weights)
    compute = arithmetic_dtype(x.dtype)
    margins = _correlate_separable_margins(
        x.ndim, axes=axes, modes=modes, origins=origins, sizes=sizes)
    if canvas_per_pass(x, margins, axes):
        return _correlate_per_call(x, weights, cval, axes=axes, modes=modes,
                                   origins=origins, symmetries=symmetries,
                                   out_dtype=out_dtype, compute=compute,
                                   last=True)
    return _correlate_separable_kernel(
        x, weights, cval, axes=axes, modes=modes, origins=origins,
        sizes=sizes, symmetries=symmetries, out_dtype=out_dtype,
        compute=compute)


def _correlate_per_call(x: Array, weights: tuple[Array, ...], cval: Any, *,
                        axes: tuple[int, ...], modes: tuple[str, ...],
                        origins: tuple[int, ...],
                        symmetries: tuple[int, ...], out_dtype: np.dtype,
                        compute: np.dtype, last: bool) -> Array:
    """:func:`_correlate_separable` one pass per call
    (:func:`~jaxndimage._canvas.one_pass_per_call`), in ``compute``;
    ``last``: whether these passes end the filter (the last one then
    stores ``out_dtype``, as SciPy's output)."""
    sizes = tuple(int(w.shape[0]) for w in weights)
    margins = _correlate_separable_margins(
        x.ndim, axes=axes, modes=modes, origins=origins, sizes=sizes)
    return one_pass_per_call(x, axes, margins, lambda v, part, ends, axis: (
        _correlate_separable_kernel(
            v, weights[part], cval, axes=(axis,), modes=modes[part],
            origins=origins[part], sizes=sizes[part],
            symmetries=symmetries[part],
            out_dtype=_between_passes(out_dtype, last and ends),
            compute=compute)))


def _gaussian_kernel1d(sigma: Array, order: int, radius: int) -> Array:
    """Correlation weights of a Gaussian (derivative) of ``order``, for a
    traced sigma (:func:`_host_gaussian_kernel1d` for a concrete one).

    The derivative is the Gaussian times a polynomial q whose coefficients
    follow q' + q * p' with p' = -x / sigma**2, applied ``order`` times.
    """
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    sigma2 = sigma * sigma
    phi = jnp.exp(-0.5 / sigma2 * x ** 2)
    phi = phi / phi.sum()
    if order == 0:
        return phi
    coefficients = [jnp.ones_like(sigma2)] + [jnp.zeros_like(sigma2)] * order
    for _ in range(order):
        coefficients = [
            ((i + 1) * coefficients[i + 1] if i < order else 0.0)
            + (coefficients[i - 1] * (-1.0 / sigma2) if i > 0 else 0.0)
            for i in range(order + 1)
        ]
    polynomial = sum(c * x ** i for i, c in enumerate(coefficients))
    return (polynomial * phi)[::-1]


@functools.lru_cache(maxsize=256)
def _host_gaussian_kernel1d(sigma: float, order: int, radius: int
                            ) -> np.ndarray:
    """:func:`_gaussian_kernel1d` of a concrete sigma, as a read-only C
    array that the calls with these arguments share.

    Computed by SciPy's numpy operations (its derivative polynomial as
    matrix products on integer powers), so that the weights, and so the
    results, have SciPy's bits: the traced form's sum of terms rounds a
    derivative's weights differently in the last bit.
    """
    x = np.arange(-radius, radius + 1)
    sigma2 = np.float64(sigma) * np.float64(sigma)
    phi = np.exp(-0.5 / sigma2 * x ** 2)
    phi = phi / phi.sum()
    if order:
        powers = np.arange(order + 1)
        q = np.zeros(order + 1)
        q[0] = 1
        step = np.diag(powers[1:], 1) + np.diag(np.ones(order) / -sigma2, -1)
        for _ in range(order):
            q = step.dot(q)
        phi = ((x[:, None] ** powers).dot(q) * phi)[::-1]
    weights = np.ascontiguousarray(phi)
    weights.flags.writeable = False
    return weights


def _gaussian_weights(sigmas: tuple[Any, ...], orders: tuple[int, ...],
                      radii: tuple[int, ...]
                      ) -> tuple[tuple[Array, ...], tuple[int, ...]]:
    """The correlation weights of each Gaussian pass, and their
    symmetries.

    The weights are computed outside the compiled kernel (on the host for a
    concrete sigma, which also keeps compilation short) and passed to it as
    traced arguments, so a new sigma of the same radius reuses the kernel.
    """
    real = np.dtype(jax.dtypes.canonicalize_dtype(np.float64))
    weights = tuple(
        _gaussian_kernel1d(sigma.astype(real), order, radius)
        if isinstance(sigma, jax.core.Tracer)
        else _host_gaussian_kernel1d(float(sigma), order, radius)
        for sigma, order, radius in zip(sigmas, orders, radii))
    weights = tuple(w.astype(real, copy=False) for w in weights)
    return weights, tuple(1 if o % 2 == 0 else -1 for o in orders)


def _gaussian_separable(x: Array, sigmas: tuple[Any, ...], cval: Any, *,
                        axes: tuple[int, ...], orders: tuple[int, ...],
                        radii: tuple[int, ...], modes: tuple[str, ...],
                        out_dtype: np.dtype) -> Array:
    """Separable Gaussian (derivative) filter."""
    weights, symmetries = _gaussian_weights(sigmas, orders, radii)
    return _correlate_separable(x, weights, cval, axes=axes, modes=modes,
                                origins=(0,) * len(axes),
                                symmetries=symmetries, out_dtype=out_dtype)


def _window_steps(size: int) -> int:
    """How many sequential reads :func:`_window_taps` makes."""
    return 1 if size <= 16 else size.bit_length()


def _uniform_margins(ndim, *, axes, sizes, origins, modes, **_) -> Margins:
    return separable_margins(ndim, axes, sizes, origins, modes,
                             sum(_window_steps(n) for n in sizes))


@shape_generic(("axes", "sizes", "origins", "modes", "out_dtype", "compute"),
               _uniform_margins, pass_axes="axes", mode_args=("modes",),
               lines=True)
def _uniform_separable(x: Array, cval: Any, *, grid: Any,
                       axes: tuple[int, ...], sizes: tuple[int, ...],
                       origins: tuple[int, ...], modes: tuple[str, ...],
                       out_dtype: np.dtype, compute: np.dtype) -> Array:
    passes = [_Pass(a, n // 2 + o, n - 1 - (n // 2 + o), m,
                    lambda grid, v, axis, n=n: _window_taps(
                        grid, v, n, axis) / n)
              for a, n, o, m in zip(axes, sizes, origins, modes)]
    return _run_passes(grid, x, passes, cval, out_dtype, compute)


#: Kernels with at most this many taps, and any computed in float64
#: (SciPy's arithmetic, SciPy's order of the terms), are applied by
#: shift-and-add over a padded copy; larger ones in float32 by
#: lax.conv_general_dilated on a static shape.
_MAX_SHIFT_ADD_TAPS = 125


def _window_margins(ndim, *, shape, origins, mode, **_) -> Margins:
    return window_margins(shape, origins, (mode,) * ndim)


@shape_generic(("shape", "kept", "mode", "origins", "out_dtype", "compute"),
               _window_margins, mode_args=("mode",))
def _correlate_nd_kernel(x: Array, weights: Array, cval: Any, *, grid: Any,
                         shape: tuple[int, ...], kept: tuple[bool, ...] | None,
                         mode: str, origins: tuple[int, ...],
                         out_dtype: np.dtype, compute: np.dtype) -> Array:
    """SciPy's sum per point: from +0, each weight of its footprint times
    its shifted sample, rounded, in raster order of the weights.  SciPy's
    footprint leaves out the weights of magnitude at most float64's
    epsilon: ``kept`` marks the others for concrete weights (the rest are
    not read); for traced weights (None) each term is chosen at run time.
    Beyond `_MAX_SHIFT_ADD_TAPS` terms, in a loop over blocks of
    `TAP_BLOCK`."""
    x = x.astype(compute)
    weights = _BARRIER(weights.astype(compute)).reshape(-1)
    taps = np.flatnonzero(np.ones(len(weights), bool) if kept is None
                          else kept)
    offsets = np.array(list(np.ndindex(*shape)), np.int32).reshape(
        len(weights), len(shape))[taps]
    margins = _window_margins(len(shape), shape=shape, origins=origins,
                              mode=mode)
    padded = _BARRIER(grid.pad_all(x, margins.lo, margins.hi, margins.modes,
                                   cval))
    span = tuple(n - 1 for n in shape)
    one = _runtime_one(weights)
    zero = one - one  # +0, which XLA cannot fold away
    chosen = None if kept is not None else _BARRIER(
        jnp.abs(weights) > _SKIPPED_WEIGHT)

    def term(k: Any) -> Array:
        if isinstance(k, int):
            tap, offset = int(taps[k]), tuple(int(v) for v in offsets[k])
        else:
            tap, offset = jnp.asarray(taps)[k], jnp.asarray(offsets)[k]
        product = (weights[tap] * grid.shift_nd(padded, offset, span)) * one
        return product if chosen is None else jnp.where(chosen[tap], product,
                                                        zero)

    if not len(taps):
        total = jnp.zeros_like(grid.shift_nd(padded, (0,) * len(shape),
                                             span))
    else:
        total = _accumulate(term(0) + zero, lambda k: term(k + 1),
                            len(taps) - 1,
                            lambda a, b: grid.join(jnp.add, a, b),
                            _MAX_SHIFT_ADD_TAPS, TAP_BLOCK)
    return cast_like_c(grid.crop(total, x.shape), out_dtype)


#: SciPy's n-D correlation leaves weights of at most this magnitude
#: (``DBL_EPSILON``) out of its footprint.
_SKIPPED_WEIGHT = float(np.finfo(np.float64).eps)


@cached_jit(static_argnames=("mode", "origins", "out_dtype", "compute"))
def _correlate_nd_conv(x: Array, weights: Array, cval: Any, *, mode: str,
                       origins: tuple[int, ...], out_dtype: np.dtype,
                       compute: np.dtype) -> Array:
    x, weights = x.astype(compute), weights.astype(compute)
    margins = _window_margins(x.ndim, shape=weights.shape, origins=origins,
                              mode=mode)
    x = ExactGrid().pad_all(x, margins.lo, margins.hi, margins.modes, cval)
    result = lax.conv_general_dilated(
        x[None, None], weights[None, None], (1,) * x.ndim, "VALID",
        precision=lax.Precision.HIGHEST)[0, 0]
    return cast_like_c(result, out_dtype)


def _correlate_nd(x: Array, weights: Array, cval: Any, *, mode: str,
                  origins: tuple[int, ...], out_dtype: np.dtype) -> Array:
    """Correlate ``x`` with n-D ``weights`` (the same rank as ``x``)."""
    compute = arithmetic_dtype(x.dtype)
    if x.ndim == 0:
        weight = weights.astype(compute)
        with np.errstate(all="ignore"):  # SciPy's C warns of nothing
            product = x.astype(compute) * weight
        return cast_like_c(jnp.where(jnp.abs(weight) > _SKIPPED_WEIGHT,
                                     product + 0.0, 0.0), out_dtype)
    if weights.size > _MAX_SHIFT_ADD_TAPS and compute != np.float64:
        return _correlate_nd_conv(x, weights, cval, mode=mode,
                                  origins=origins, out_dtype=out_dtype,
                                  compute=compute)
    kept = None
    if not isinstance(weights, jax.core.Tracer):
        kept = tuple(bool(k) for k in (np.abs(np.asarray(
            weights, np.float64)) > _SKIPPED_WEIGHT).ravel())
    return _correlate_nd_kernel(x, weights, cval, shape=tuple(weights.shape),
                                kept=kept, mode=mode, origins=origins,
                                out_dtype=out_dtype, compute=compute)


# --------------------------------------------------------------------------
# Shared shell helpers
# --------------------------------------------------------------------------

def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.finfo(dtype).dtype if np.dtype(dtype).kind == "c" else dtype


def _is_complex(value: Any) -> bool:
    return jnp.iscomplexobj(value)


def _symmetry(weights: Array) -> int:
    """+1/-1 for a concrete odd-sized (anti)symmetric kernel, else 0, by
    SciPy's rule: the weights at ``c + i`` and ``c - i`` of the centre ``c``
    differ (or add up) by at most the float64 epsilon; the centre is free."""
    if isinstance(weights, jax.core.Tracer) or weights.shape[0] % 2 == 0:
        return 0
    values = np.asarray(weights, np.float64)
    half = values.shape[0] // 2
    left, right = values[:half], values[half + 1:][::-1]
    epsilon = np.finfo(np.float64).eps
    if np.all(np.abs(right - left) <= epsilon):
        return 1
    if np.all(np.abs(right + left) <= epsilon):
        return -1
    return 0


def _check_real_filter(cval: Any, out: np.dtype) -> None:
    """SciPy's C filters take a real cval and write a real output."""
    check_real_cval(cval)
    if np.dtype(out).kind == "c":
        raise RuntimeError(f"output: array type dtype('{np.dtype(out)}') not "
                           f"supported for real input and weights")


def _check_complex_output(out: np.dtype) -> None:
    """Complex input or weights filter into a complex output only."""
    if np.dtype(out).kind != "c":
        raise RuntimeError(f"output must have complex dtype for complex "
                           f"input or weights, got {np.dtype(out)}")


def _check_real_cval(cval: Any) -> None:
    """SciPy's rule for complex weights on a real input."""
    if _is_complex(cval):
        raise ValueError("cval: cannot provide a complex-valued cval "
                         "when the input is real.")


def _via_real_components(apply: Callable, input: Array, weights: Array | None,
                         cval: Any, out: np.dtype) -> Array:
    """Complex filtering as real filters of the components, as SciPy does.

    ``apply(x, weights, cval, dtype)`` filters a real ``x`` with real
    ``weights`` into ``dtype``.
    """
    _check_complex_output(out)
    real_out = _real_dtype(out)
    complex_input = _is_complex(input)
    complex_weights = weights is not None and _is_complex(weights)
    if complex_input and complex_weights:
        real = (apply(input.real, weights.real, jnp.real(cval), real_out)
                - apply(input.imag, weights.imag, jnp.imag(cval),
                        _real_dtype(input.dtype)))
        imag = (apply(input.real, weights.imag, jnp.real(cval), real_out)
                + apply(input.imag, weights.real, jnp.imag(cval),
                        _real_dtype(input.dtype)))
        real, imag = real.astype(real_out), imag.astype(real_out)
    elif complex_input:
        real = apply(input.real, weights, jnp.real(cval), real_out)
        imag = apply(input.imag, weights, jnp.imag(cval), real_out)
    else:
        _check_real_cval(cval)
        real = apply(input, weights.real, cval, real_out)
        imag = apply(input, weights.imag, cval, real_out)
    return lax.complex(real, imag).astype(out)


def _filter_weights(weights: ArrayLike, input: Array) -> Array:
    """Weights as a JAX array of the precision the filter computes in."""
    weights = as_array(weights)
    if not _is_complex(weights):
        weights = weights.astype(arithmetic_dtype(input.dtype))
    return weights


def _empty_result(input: Array, out: np.dtype) -> Array:
    return jnp.zeros(input.shape, out)


# --------------------------------------------------------------------------
# correlate1d / convolve1d
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class FilterPlan(Plan):
    """A linear filter into ``out_dtype``.  A complex input (or complex
    weights) is filtered as real filters of its components, as SciPy
    does."""

    out_dtype: np.dtype
    complex_input: bool
    complex_weights: bool

    def component(self, out_dtype: np.dtype, **fields: Any) -> Any:
        """The plan of the real filter of one component, into
        ``out_dtype``."""
        return dataclasses.replace(self, out_dtype=np.dtype(out_dtype),
                                   complex_input=False,
                                   complex_weights=False, **fields)


@dataclasses.dataclass(frozen=True)
class WindowPlan(FilterPlan):
    """A separable filter: along ``axes[i]``, one 1-D window of
    ``sizes[i]`` taps centred at ``sizes[i] // 2 + origins[i]``, the axis
    extended by ``modes[i]``; every pass stored in ``out_dtype``, as SciPy
    does."""

    axes: tuple[int, ...]
    sizes: tuple[int, ...]
    origins: tuple[int, ...]
    modes: tuple[str, ...]

    @property
    def depth(self) -> tuple[int, ...]:
        return window_depth(self.ndim, self.axes, self.sizes, self.origins)

    @property
    def copies(self) -> bool:
        return not self.axes


@dataclasses.dataclass(frozen=True)
class CorrelationPlan(WindowPlan):
    """Correlation with 1-D weights per pass; ``symmetries[i]`` is +1 for
    symmetric, -1 for antisymmetric, 0 for other weights
    (:func:`_symmetry`; complex weights: of each component, when it is
    filtered)."""

    symmetries: tuple[int, ...]


def _run_correlation(plan: CorrelationPlan, input: Array,
                     weights: tuple[ArrayLike, ...], cval: Any) -> Array:
    """The kernel of a :class:`CorrelationPlan`."""
    if plan.complex_input or plan.complex_weights:
        def apply(x, w, c, dtype):
            symmetries = ((_symmetry(w),) if plan.complex_weights
                          else plan.symmetries)
            return _run_correlation(
                plan.component(dtype, symmetries=symmetries), x,
                (w,) if plan.complex_weights else weights, c)

        return _via_real_components(
            apply, input, weights[0] if plan.complex_weights else None,
            cval, plan.out_dtype)
    if input.size == 0:
        return _empty_result(input, plan.out_dtype)
    return _correlate_separable(
        input, tuple(_filter_weights(w, input) for w in weights), cval,
        axes=plan.axes, modes=plan.modes, origins=plan.origins,
        symmetries=plan.symmetries, out_dtype=plan.out_dtype)


def _plan_correlate1d(input: Array, weights: Array, axis: Any, output: Any,
                      mode: Any, cval: Any, origin: Any) -> Planned:
    complex_input, complex_weights = _is_complex(input), _is_complex(weights)
    filtered_complex = complex_input or complex_weights
    out = output_dtype(output, input.dtype, shape=input.shape,
                       complex_output=filtered_complex)
    if filtered_complex:
        if complex_weights:
            weights = weights.conj().astype(jnp.result_type(complex))
            if not complex_input:
                _check_real_cval(cval)
    if weights.ndim != 1 or weights.shape[0] < 1:
        raise RuntimeError("weights: no filter weights given (weights must "
                           "be a non-empty 1-D sequence)")
    axis = normalize_axis(axis, input.ndim)
    origin = check_origin(origin, weights.shape[0])
    check_mode(mode)
    if not filtered_complex:
        _check_real_filter(cval, out)
    plan = CorrelationPlan(
        ndim=input.ndim, out_dtype=out, complex_input=complex_input,
        complex_weights=complex_weights, axes=(axis,),
        sizes=(int(weights.shape[0]),), origins=(origin,), modes=(mode,),
        symmetries=(0 if complex_weights else _symmetry(weights),))
    return Planned(plan, _run_correlation, (input, (weights,), cval))


def _weighted_kinds(arguments: Mapping[str, Any]) -> str:
    """``results_64`` of the filters by weights: SciPy's result has the
    input's dtype, or with complex input or weights the input's promoted
    with complex64's (complex128 for integer and float64 input, whatever
    the weights' precision)."""
    dtype = host_dtype(arguments["input"])
    if np.promote_types(dtype, np.complex64) == np.complex128:
        return wide_kind(dtype) + "c"
    return wide_kind(dtype)


@docfiller(verb="Correlate", operation="correlation")
@ndimage_function("input", "weights", planned=True,
                  results_64=_weighted_kinds)
def correlate1d(input: ArrayLike, weights: ArrayLike, axis: int = -1,
                output: Any = None, mode: str = "reflect", cval: Any = 0.0,
                origin: int = 0) -> Array:
    """%(weights1d_doc)s

    %(see_also_scipy)s

    Examples
    --------
    >>> from jaxndimage import correlate1d
    >>> correlate1d([2, 8, 0, 4, 1, 9, 9, 0], weights=[1, 3])
    array([ 8, 26,  8, 12,  7, 28, 36,  9])
    """
    return _plan_correlate1d(as_array(input), as_array(weights), axis,
                             output, mode, cval, origin)


@docfiller(verb="Convolve", operation="convolution")
@ndimage_function("input", "weights", planned=True,
                  results_64=_weighted_kinds)
def convolve1d(input: ArrayLike, weights: ArrayLike, axis: int = -1,
               output: Any = None, mode: str = "reflect", cval: Any = 0.0,
               origin: int = 0) -> Array:
    """%(weights1d_doc)s

    Examples
    --------
    >>> from jaxndimage import convolve1d
    >>> convolve1d([2, 8, 0, 4, 1, 9, 9, 0], weights=[1, 3])
    array([14, 24,  4, 13, 12, 36, 27,  0])
    """
    weights = as_array(weights)[::-1]
    if _is_complex(weights):
        weights = weights.conj()
    return _plan_correlate1d(
        as_array(input), weights, axis, output, mode, cval,
        convolution_origin(as_int(origin, "origin"), weights.shape[0]))


# --------------------------------------------------------------------------
# correlate / convolve
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class KernelPlan(FilterPlan):
    """Correlation with n-D weights of ``shape`` (the input's rank),
    centred at ``shape[i] // 2 + origins[i]``, every axis extended by
    ``mode``."""

    shape: tuple[int, ...]
    origins: tuple[int, ...]
    mode: str

    @property
    def depth(self) -> tuple[int, ...]:
        return window_depth(self.ndim, range(self.ndim), self.shape,
                            self.origins)


def _run_kernel_filter(plan: KernelPlan, input: Array, weights: Array,
                       cval: Any) -> Array:
    """The kernel of a :class:`KernelPlan`."""
    if plan.complex_input or plan.complex_weights:
        return _via_real_components(
            lambda x, w, c, dtype: _run_kernel_filter(plan.component(dtype),
                                                      x, w, c),
            input, weights, cval, plan.out_dtype)
    if input.size == 0:
        return _empty_result(input, plan.out_dtype)
    return _correlate_nd(input, _filter_weights(weights, input), cval,
                         mode=plan.mode, origins=plan.origins,
                         out_dtype=plan.out_dtype)


def _plan_kernel_filter(input: Array, weights: Array, output: Any,
                        mode: str, cval: Any, origin: Any,
                        convolution: bool, axes: Any) -> Planned:
    complex_input, complex_weights = _is_complex(input), _is_complex(weights)
    filtered_complex = complex_input or complex_weights
    if filtered_complex:
        if complex_weights and not convolution:
            weights = weights.conj()
        out = output_dtype(output, input.dtype, shape=input.shape,
                           complex_output=True)
        if complex_weights and not complex_input:
            _check_real_cval(cval)
    axes = check_axes(axes, input.ndim)
    if len(axes) < input.ndim:
        if weights.ndim != len(axes):
            raise RuntimeError(f"weights.ndim ({weights.ndim}) must match "
                               f"len(axes) ({len(axes)})")
        weights = jnp.expand_dims(
            weights, tuple(ax for ax in range(input.ndim) if ax not in axes))
    origins = expand_origins(origin, axes, input.ndim)
    if len([n for n in weights.shape if n > 0]) != input.ndim:
        raise RuntimeError(f"weights.ndim ({weights.ndim}) must match "
                           f"len(axes) ({len(axes)})")
    origins = [as_int(o, "origin") for o in origins]
    if convolution:
        weights = weights[(slice(None, None, -1),) * weights.ndim]
        origins = [convolution_origin(o, n)
                   for o, n in zip(origins, weights.shape)]
    origins = tuple(check_origin(o, n) for o, n in zip(origins, weights.shape))
    if not filtered_complex:
        out = output_dtype(output, input.dtype, shape=input.shape)
    if not isinstance(mode, str):
        raise RuntimeError("mode: a sequence of modes is not supported by "
                           "correlate and convolve")
    check_mode(mode)
    if not filtered_complex:
        _check_real_filter(cval, out)
    plan = KernelPlan(ndim=input.ndim, out_dtype=out,
                      complex_input=complex_input,
                      complex_weights=complex_weights,
                      shape=tuple(int(n) for n in weights.shape),
                      origins=origins, mode=mode)
    return Planned(plan, _run_kernel_filter, (input, weights, cval))


def _kernel_filter(name: str, convolution: bool, doc: str,
                   **fields: str) -> Callable[..., Array]:
    """correlate or convolve, with SciPy's signature."""

    def kernel_filter(input: ArrayLike, weights: ArrayLike,
                      output: Any = None, mode: str = "reflect",
                      cval: Any = 0.0, origin: Any = 0, *,
                      axes: Any = None) -> Array:
        return _plan_kernel_filter(as_array(input), as_array(weights),
                                   output, mode, cval, origin, convolution,
                                   axes)

    return family_member(
        kernel_filter, name, doc, "input", "weights",
        reject_float16=nonempty, planned=True, results_64=_weighted_kinds,
        fields=fields)


correlate = _kernel_filter("correlate", False, """\
%(kernel_doc)s

Notes
-----
Kernels of up to 125 taps are applied as shifted multiply-adds, larger
ones as one XLA convolution; either way `weights` may be traced (and
differentiated) too.

Examples
--------
>>> import numpy as np
>>> from jaxndimage import correlate
>>> image = np.arange(25).reshape(5, 5)
>>> cross = [[0, 1, 0], [1, 1, 1], [0, 1, 0]]
>>> correlate(image, cross)
array([[  6,  10,  15,  20,  24],
       [ 26,  30,  35,  40,  44],
       [ 51,  55,  60,  65,  69],
       [ 76,  80,  85,  90,  94],
       [ 96, 100, 105, 110, 114]])""", operation="correlation",
    index="i + j - c")

convolve = _kernel_filter("convolve", True, """\
%(kernel_doc)s

Examples
--------
>>> import numpy as np
>>> from jaxndimage import convolve
>>> a = np.array([[1, 2, 0, 0],
...               [5, 3, 0, 4],
...               [0, 0, 0, 7],
...               [9, 3, 0, 0]])
>>> k = np.array([[1, 1, 1], [1, 1, 0], [1, 0, 0]])
>>> convolve(a, k, mode='constant', cval=0.0)
array([[11, 10,  7,  4],
       [10,  3, 11, 11],
       [15, 12, 14,  7],
       [12,  3,  7,  0]])""", operation="convolution", index="i + c - j")


# --------------------------------------------------------------------------
# Gaussian family
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class GaussianPlan(WindowPlan):
    """A separable Gaussian filter: the window of axis ``axes[i]`` is
    the Gaussian derivative of ``orders[i]`` of radius ``sizes[i] // 2``
    (``origins`` are 0).  No axes: the input copied into ``out_dtype``."""

    orders: tuple[int, ...]


def _run_gaussian(plan: GaussianPlan, input: Array, sigmas: tuple[Any, ...],
                  cval: Any) -> Array:
    """The kernel of a :class:`GaussianPlan`."""
    if not plan.axes:  # SciPy copies the input into the output, whatever dtypes
        if plan.complex_input and plan.out_dtype.kind != "c":
            input = input.real
        return cast_like_numpy(input, plan.out_dtype)
    if plan.complex_input:
        return _via_real_components(
            lambda x, _, c, dtype: _run_gaussian(plan.component(dtype), x,
                                                 sigmas, c),
            input, None, cval, plan.out_dtype)
    if input.size == 0:
        return _empty_result(input, plan.out_dtype)
    return _gaussian_separable(
        input, sigmas, cval, axes=plan.axes, orders=plan.orders,
        radii=tuple(n // 2 for n in plan.sizes), modes=plan.modes,
        out_dtype=plan.out_dtype)


def _plan_gaussian(input: Array, sigmas: Sequence, orders: Sequence,
                   modes: Sequence[str], radii: Sequence, axes: Sequence[int],
                   truncate: float, cval: Any, out: np.dtype,
                   skip_zero: bool = True) -> Planned:
    """The plan of gaussian_filter and gaussian_filter1d: one pass per
    axis, but (``skip_zero``, gaussian_filter's rule) for a sigma of at
    most 1e-15 (a traced sigma always has one)."""
    passes = []
    for axis, sigma, order, mode, radius in zip(axes, sigmas, orders, modes,
                                                radii):
        if (skip_zero and not isinstance(sigma, jax.core.Tracer)
                and not float(sigma) > 1e-15):
            continue
        order = as_int(order, "order")
        if order < 0:
            raise ValueError("order must be non-negative")
        passes.append((axis, sigma, order, check_mode(mode),
                       gaussian_radius(sigma, truncate, radius)))
    complex_input = _is_complex(input)
    if passes:
        if complex_input:
            _check_complex_output(out)
        else:
            _check_real_filter(cval, out)
    axes, sigmas, orders, modes, radii = zip(*passes) if passes else ((),) * 5
    plan = GaussianPlan(
        ndim=input.ndim, out_dtype=out, complex_input=complex_input,
        complex_weights=False, axes=axes,
        sizes=tuple(2 * r + 1 for r in radii), origins=(0,) * len(axes),
        modes=modes, orders=orders)
    return Planned(plan, _run_gaussian, (input, sigmas, cval))


@docfiller
@ndimage_function("input", planned=True)
def gaussian_filter1d(input: ArrayLike, sigma: Any, axis: int = -1,
                      order: int = 0, output: Any = None,
                      mode: str = "reflect", cval: Any = 0.0,
                      truncate: float = 4.0, *, radius: Any = None) -> Array:
    """1-D Gaussian filter (or derivative of Gaussian) along one axis.

    Parameters
    ----------
    %(input)s
    sigma : scalar
        Standard deviation of the Gaussian; may be traced when `radius` is
        given.
    %(axis)s
    order : int, optional
        0 smooths; a positive order convolves with that derivative of the
        Gaussian.
    %(output)s
    %(mode)s
    %(cval)s
    truncate : float, optional
        Kernel radius in standard deviations, ``round(truncate * sigma)``,
        when `radius` is None. Default is 4.0.
    radius : None or int, optional
        Kernel radius; the kernel has ``2 * radius + 1`` taps.

    %(returns_filtered)s

    Examples
    --------
    >>> from jaxndimage import gaussian_filter1d
    >>> gaussian_filter1d([1.0, 2.0, 3.0, 4.0, 5.0], 1)
    array([1.42704095, 2.06782203, 3.        , 3.93217797, 4.57295905])
    """
    input = as_array(input)
    # In SciPy's order: the kernel, then the output, then the axis.
    if (isinstance(sigma, int | float) and not isinstance(sigma, np.generic)
            and sigma * sigma == 0):
        # SciPy divides by sigma squared in Python (a numpy scalar gives
        # NaN weights there, and here).
        raise ZeroDivisionError("sigma: float division by zero")
    if not isinstance(sigma, jax.core.Tracer):
        sigma = float(sigma)
    radius = gaussian_radius(sigma, truncate, radius)
    order = as_int(order, "order")
    if order < 0:
        raise ValueError("order must be non-negative")
    out = output_dtype(output, input.dtype, shape=input.shape,
                       complex_output=_is_complex(input))
    axis = normalize_axis(axis, input.ndim)
    return _plan_gaussian(input, [sigma], [order], [check_mode(mode)],
                          [radius], [axis], truncate, cval, out,
                          skip_zero=False)


@docfiller
@ndimage_function("input", planned=True)
def gaussian_filter(input: ArrayLike, sigma: Any, order: Any = 0,
                    output: Any = None, mode: Any = "reflect",
                    cval: Any = 0.0, truncate: float = 4.0, *,
                    radius: Any = None, axes: Any = None) -> Array:
    """Multidimensional Gaussian filter, one separable pass per axis.

    Parameters
    ----------
    %(input)s
    sigma : scalar or sequence of scalars
        Standard deviation per axis (or one for all). Axes with
        ``sigma <= 1e-15`` are not filtered. May be traced when `radius` is
        given: a new sigma with the same radius does not recompile.
    order : int or sequence of ints, optional
        Derivative order per axis; 0 smooths.
    %(output_modes_cval)s
    truncate : float, optional
        Kernel radius in standard deviations when `radius` is None.
        Default is 4.0.
    radius : None, int or sequence of ints, optional
        Kernel radius per axis; the kernel has ``2 * radius + 1`` taps.
    %(axes)s

    %(returns_filtered)s

    Notes
    -----
    As in SciPy, every 1-D pass is stored in the output dtype, so integer
    outputs are truncated after each axis, not only at the end.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import gaussian_filter
    >>> a = np.arange(50, step=2).reshape((5, 5))
    >>> gaussian_filter(a, sigma=1)
    array([[ 4,  6,  8,  9, 11],
           [10, 12, 14, 15, 17],
           [20, 22, 24, 25, 27],
           [29, 31, 33, 34, 36],
           [35, 37, 39, 40, 42]])

    With JAX arrays it composes with JAX transformations:

    >>> import jax, jax.numpy as jnp
    >>> blur_energy = lambda x: (gaussian_filter(x, 2.0) ** 2).sum()
    >>> jax.grad(blur_energy)(jnp.ones((8, 8))).shape
    (8, 8)
    """
    input = as_array(input)
    out = output_dtype(output, input.dtype, shape=input.shape)
    axes = check_axes(axes, input.ndim)
    rank = len(axes)
    return _plan_gaussian(input, normalize_sequence(sigma, rank, "sigma"),
                          normalize_sequence(order, rank, "order"),
                          normalize_sequence(mode, rank, "mode"),
                          normalize_sequence(radius, rank, "radius"),
                          axes, truncate, cval, out)


# --------------------------------------------------------------------------
# Sums of derivatives: laplace, gaussian_laplace, gaussian_gradient_magnitude,
# generic_laplace, generic_gradient_magnitude
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class DerivativesPlan(Plan):
    """One derivative of the input along each of ``axes``, each stored in
    ``out_dtype``, combined into the result: their sum, or with
    ``magnitude`` the square root of the sum of their squares.  No axes:
    the input copied into ``out_dtype``, as SciPy does."""

    axes: tuple[int, ...]
    magnitude: bool
    out_dtype: np.dtype

    def combine(self, terms: list[Array]) -> Array:
        """The result from the derivatives, in the order of ``axes``."""
        if self.magnitude:
            return pointwise(_gradient_magnitude, *terms, out=self.out_dtype)
        return pointwise(_sum, *terms)


@dataclasses.dataclass(frozen=True)
class FilterDerivativesPlan(DerivativesPlan):
    """A :class:`DerivativesPlan` whose derivatives are planned filters,
    ``terms[i]`` along ``axes[i]``."""

    terms: tuple[Plan, ...]

    @property
    def depth(self) -> tuple[int, ...]:
        return widest_depth(self.terms) if self.terms else (0,) * self.ndim

    @property
    def copies(self) -> bool:
        """Each derivative a copy (SciPy then adds them up in numpy)."""
        return all(term.copies for term in self.terms)


@dataclasses.dataclass(frozen=True)
class CallableDerivativesPlan(DerivativesPlan):
    """A :class:`DerivativesPlan` whose derivatives are a user's callable,
    called along ``axes[i]`` with ``modes[i]``.  Its reach is not known,
    so a dask input is filtered whole; the dtype a callable returns may
    depend on the values."""

    modes: tuple[Any, ...]

    @property
    def sample_reach(self) -> tuple[int, ...]:
        return (0,) * self.ndim


def _run_filter_derivatives(plan: FilterDerivativesPlan, input: Array,
                            terms: tuple[Planned, ...]) -> Array:
    """The kernel of a :class:`FilterDerivativesPlan`: ``terms`` are the
    planned derivatives."""
    if not plan.axes:
        return cast_like_numpy(input, plan.out_dtype)
    return plan.combine(_derivatives(terms))


class _GaussianPass(NamedTuple):
    """One pass of a Gaussian derivative filter."""

    axis: int
    sigma: float
    order: int
    radius: int
    mode: str


def _gaussian_passes(term: Planned) -> tuple[_GaussianPass, ...] | None:
    """The passes of a planned Gaussian derivative that run one per call
    (:func:`~jaxndimage._canvas.canvas_per_pass`: volumes), each stored
    in its output dtype and computed in the input's arithmetic; None for
    other terms."""
    plan = term.plan
    if not isinstance(plan, GaussianPlan) or plan.complex_input:
        return None
    input, sigmas, _ = term.operands
    if (not plan.axes or input.size == 0 or plan.out_dtype == np.bool_
            or any(isinstance(s, jax.core.Tracer) for s in sigmas)
            or arithmetic_dtype(input.dtype)
            != arithmetic_dtype(plan.out_dtype)):
        return None
    margins = _correlate_separable_margins(
        input.ndim, axes=plan.axes, modes=plan.modes, origins=plan.origins,
        sizes=plan.sizes)
    if not canvas_per_pass(input, margins, plan.axes):
        return None
    return tuple(_GaussianPass(axis, float(sigma), order, size // 2, mode)
                 for axis, sigma, order, size, mode in zip(
                     plan.axes, sigmas, plan.orders, plan.sizes, plan.modes))


def _derivatives(terms: tuple[Planned, ...]) -> list[Array]:
    """The result of each planned derivative.

    A Gaussian derivative of a volume runs one pass per call along its
    axes in turn, each pass stored in the output dtype, and every term but
    the first begins by smoothing along the first axis: the passes a term
    begins with as an earlier one did are computed once, the stored
    intermediate being the same (3 axes: 8 passes in place of 9; 4 axes:
    13 in place of 16)."""
    passes = [_gaussian_passes(term) for term in terms]
    sources = {id(term.operands[0]) for term, own in zip(terms, passes)
               if own is not None}
    cvals = {id(term.operands[2]) for term, own in zip(terms, passes)
             if own is not None}
    if len(sources) != 1 or len(cvals) != 1:
        return [term.run() for term in terms]
    kept: dict[tuple[_GaussianPass, ...], Array] = {}
    results = []
    for index, (term, own) in enumerate(zip(terms, passes)):
        later = [p for p in passes[index + 1:] if p is not None]
        shared = [n for n in range(1, len(own or ()))
                  if own[:n] in kept or any(p[:n] == own[:n] for p in later)]
        if not shared:
            results.append(term.run())
            continue
        input, _, cval = term.operands
        done = max((n for n in shared if own[:n] in kept), default=0)
        x = kept[own[:done]] if done else input
        compute = arithmetic_dtype(input.dtype)
        for n in range(done, len(own)):
            step = own[n]
            weights, symmetries = _gaussian_weights(
                (step.sigma,), (step.order,), (step.radius,))
            x = _correlate_per_call(
                x, weights, cval, axes=(step.axis,), modes=(step.mode,),
                origins=(0,), symmetries=symmetries,
                out_dtype=term.plan.out_dtype, compute=compute,
                last=n == len(own) - 1)
            if n + 1 in shared:
                kept[own[:n + 1]] = x
        results.append(x)
    return results


def _run_callable_derivatives(plan: CallableDerivativesPlan, input: Array,
                              derivative: Callable, cval: Any,
                              extra_arguments: Sequence,
                              extra_keywords: dict | None) -> Array:
    """The kernel of a :class:`CallableDerivativesPlan`."""
    if not plan.axes:
        return cast_like_numpy(input, plan.out_dtype)
    terms = []
    for axis, mode in zip(plan.axes, plan.modes):
        term = derivative(input, axis, plan.out_dtype, mode, cval,
                          *extra_arguments, **(extra_keywords or {}))
        if term is None:
            raise TypeError(
                "derivative: the callable must return its result; JAX "
                "arrays cannot be filled in place through `output`")
        # A host term is cast by numpy: jnp.asarray of a numpy array
        # compiles a program per shape.
        terms.append(term.astype(plan.out_dtype, copy=False)
                     if isinstance(term, np.ndarray) else jnp.asarray(term).astype(plan.out_dtype))
    return plan.combine(terms)


def _derivative_configuration(input: Array, output: Any, mode: Any,
                              axes: Any) -> tuple[np.dtype, tuple, list]:
    """``(out, axes, modes)`` of a sum of derivatives, checked in SciPy's
    order: output, axes, then (with axes) a complex input's output dtype
    and one mode per axis."""
    out = output_dtype(output, input.dtype, shape=input.shape)
    axes = check_axes(axes, input.ndim)
    if not axes:
        return out, axes, []
    if _is_complex(input) and out.kind != "c":
        # SciPy's first derivative writes into the real output: refused.
        raise RuntimeError("output must have complex dtype")
    return out, axes, normalize_sequence(mode, len(axes), "mode")


def _plan_filter_derivatives(input: Array, output: Any, mode: Any,
                             axes: Any, magnitude: bool,
                             derivative: Callable[[int, np.dtype, Any],
                                                  Planned]) -> Planned:
    """The plan of a sum of derivatives, ``derivative(axis, out, mode)``
    planning each (``output`` being the output dtype)."""
    out, axes, modes = _derivative_configuration(input, output, mode, axes)
    terms = tuple(derivative(axis, out, axis_mode)
                  for axis, axis_mode in zip(axes, modes))
    plan = FilterDerivativesPlan(
        ndim=input.ndim, axes=axes, magnitude=magnitude, out_dtype=out,
        terms=tuple(term.plan for term in terms))
    return Planned(plan, _run_filter_derivatives, (input, terms))


def _plan_callable_derivatives(input: Array, derivative: Callable,
                               output: Any, mode: Any, cval: Any,
                               extra_arguments: Sequence,
                               extra_keywords: dict | None, axes: Any,
                               magnitude: bool) -> Planned:
    """The plan of a sum of a user's derivatives."""
    input = as_array(input)
    out, axes, modes = _derivative_configuration(input, output, mode, axes)
    plan = CallableDerivativesPlan(
        ndim=input.ndim, axes=axes, magnitude=magnitude, out_dtype=out,
        modes=tuple(modes))
    return Planned(plan, _run_callable_derivatives,
                   (input, derivative, cval, extra_arguments,
                    extra_keywords))


def _sum(*terms: Array) -> Array:
    """The sum of ``terms``, added in order.  numpy terms are added into
    one new array, as SciPy adds them into its output (each large array
    costs its page faults too)."""
    if isinstance(terms[0], np.ndarray) and len(terms) > 1:
        total = terms[0] + terms[1]
        for term in terms[2:]:
            total += term
        return total
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


def _gradient_magnitude(*terms: Array, out: np.dtype) -> Array:
    """``sqrt(sum(term ** 2))``, as SciPy computes it into ``out``: each
    square rounded, then ``numpy.sqrt(..., casting='unsafe')``.  (XLA's
    CPU code contracts ``a * a + b * b`` into multiply-adds, which round
    once: JAX input is not SciPy's bit for bit.)  numpy terms are squared
    and added in two new arrays, as SciPy does in its output."""
    loop = np.sqrt(np.zeros((), out)).dtype
    if isinstance(terms[0], np.ndarray):
        total = np.multiply(terms[0], terms[0])
        square = np.empty_like(total)
        for term in terms[1:]:
            np.multiply(term, term, out=square)
            total += square
        root = (np.sqrt(total, out=total) if total.dtype == loop
                else np.sqrt(total.astype(loop)))
    else:
        root = jnp.sqrt(_sum(*(term * term for term in terms)).astype(loop))
    return root if root.dtype == out else cast_like_c(root, out)


def _unit_orders(ndim: int, axis: int, order: int) -> list[int]:
    """Derivative ``order`` along ``axis``, smoothing (0) along the others."""
    orders = [0] * ndim
    orders[axis] = order
    return orders


def _sigma_per_axis(sigma: Any, axes: tuple[int, ...], ndim: int) -> list:
    sigmas = normalize_sequence(sigma, len(axes), "sigma")
    if len(axes) == ndim:  # SciPy keeps the given order when all axes are
        return sigmas      # filtered, whatever the order of `axes`
    return expand_to_ndim(sigmas, axes, ndim, 0)


@docfiller
@ndimage_function("input", planned=True)
def gaussian_laplace(input: ArrayLike, sigma: Any, output: Any = None,
                     mode: Any = "reflect", cval: Any = 0.0, *,
                     axes: Any = None, **kwargs: Any) -> Array:
    """Laplacian of Gaussian: the sum of second Gaussian derivatives.

    Parameters
    ----------
    %(input)s
    sigma : scalar or sequence of scalars
        Standard deviation of the Gaussian per axis (or one for all).
    %(gaussian_derivative_options)s

    %(returns_filtered)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import gaussian_laplace
    >>> blob = np.zeros((7, 7)); blob[3, 3] = 1.0
    >>> float(gaussian_laplace(blob, sigma=1.0)[3, 3]) < 0
    True
    """
    input = as_array(input)
    sigmas = _sigma_per_axis(sigma, check_axes(axes, input.ndim), input.ndim)
    return _plan_filter_derivatives(
        input, output, mode, axes, False,
        lambda axis, out, mode: gaussian_filter.__wrapped__(
            input, sigmas, _unit_orders(input.ndim, axis, 2), out, mode,
            cval, **kwargs))


@docfiller
@ndimage_function("input", planned=True)
def gaussian_gradient_magnitude(input: ArrayLike, sigma: Any,
                                output: Any = None, mode: Any = "reflect",
                                cval: Any = 0.0, *, axes: Any = None,
                                **kwargs: Any) -> Array:
    """Gradient magnitude from first Gaussian derivatives.

    Parameters
    ----------
    %(input)s
    sigma : scalar or sequence of scalars
        Standard deviation of the Gaussian for every axis of `input` (one
        value, or one per axis of `input`, even with `axes`: as in SciPy,
        each derivative smooths along all axes).
    %(gaussian_derivative_options)s

    %(returns_filtered)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import gaussian_gradient_magnitude
    >>> ramp = np.tile(np.arange(8.0), (8, 1))
    >>> round(float(gaussian_gradient_magnitude(ramp, sigma=1.0)[4, 4]), 3)
    0.999
    """
    input = as_array(input)
    return _plan_filter_derivatives(
        input, output, mode, axes, True,
        lambda axis, out, mode: gaussian_filter.__wrapped__(
            input, sigma, _unit_orders(input.ndim, axis, 1), out, mode,
            cval, **kwargs))


_SECOND_DIFFERENCE = np.array([1.0, -2.0, 1.0])


@docfiller
@ndimage_function("input", planned=True)
def laplace(input: ArrayLike, output: Any = None, mode: Any = "reflect",
            cval: Any = 0.0, *, axes: Any = None) -> Array:
    """Laplace filter from second differences ``[1, -2, 1]`` per axis.

    Parameters
    ----------
    %(input)s
    %(output_modes_cval)s
    %(axes)s

    %(returns_filtered)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import laplace
    >>> laplace(np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]]))
    array([[ 0,  1,  0],
           [ 1, -4,  1],
           [ 0,  1,  0]])
    """
    input = as_array(input)
    return _plan_filter_derivatives(
        input, output, mode, axes, False,
        lambda axis, out, mode: _plan_correlate1d(
            input, _SECOND_DIFFERENCE, axis, out, mode, cval, 0))


@docfiller
@ndimage_function("input", planned=True)
def generic_laplace(input: ArrayLike, derivative2: Callable,
                    output: Any = None, mode: Any = "reflect",
                    cval: Any = 0.0, extra_arguments: Sequence = (),
                    extra_keywords: dict | None = None, *,
                    axes: Any = None) -> Array:
    """N-D Laplace filter from a second-derivative callable.

    Parameters
    ----------
    %(input)s
    derivative2 : callable
        ``derivative2(input, axis, output, mode, cval, *extra_arguments,
        **extra_keywords)`` returning the second derivative along `axis`.
        It receives JAX arrays and `output` as a dtype, and must return its
        result; built from JAX operations or jaxndimage filters it is
        traceable, so the whole filter works under ``jit`` and ``grad``.
    %(generic_derivative_options)s

    Returns
    -------
    result : array
        Sum of the derivatives over `axes`, accumulated in the output dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import correlate1d, generic_laplace
    >>> def d2(input, axis, output, mode, cval):
    ...     return correlate1d(input, [1, -2, 1], axis, output, mode, cval)
    >>> generic_laplace(np.array([[0, 0, 0], [0, 1, 0], [0, 0, 0]]), d2)
    array([[ 0,  1,  0],
           [ 1, -4,  1],
           [ 0,  1,  0]])
    """
    return _plan_callable_derivatives(input, derivative2, output, mode, cval,
                                      extra_arguments, extra_keywords, axes,
                                      magnitude=False)


@docfiller
@ndimage_function("input", planned=True)
def generic_gradient_magnitude(input: ArrayLike, derivative: Callable,
                               output: Any = None, mode: Any = "reflect",
                               cval: Any = 0.0,
                               extra_arguments: Sequence = (),
                               extra_keywords: dict | None = None, *,
                               axes: Any = None) -> Array:
    """Gradient magnitude from a first-derivative callable.

    Parameters
    ----------
    %(input)s
    derivative : callable
        ``derivative(input, axis, output, mode, cval, *extra_arguments,
        **extra_keywords)`` returning the derivative along `axis`; see
        `generic_laplace` for what it receives.
    %(generic_derivative_options)s

    Returns
    -------
    result : array
        ``sqrt(sum of squared derivatives)``, accumulated in the output dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import generic_gradient_magnitude, sobel
    >>> def d(input, axis, output, mode, cval):
    ...     return sobel(input, axis, output, mode, cval)
    >>> image = np.zeros((5, 5)); image[:, 3:] = 1.0
    >>> generic_gradient_magnitude(image, d)[2]
    array([0., 0., 4., 4., 0.])
    """
    return _plan_callable_derivatives(input, derivative, output, mode, cval,
                                      extra_arguments, extra_keywords, axes,
                                      magnitude=True)


# --------------------------------------------------------------------------
# Fixed small kernels: sobel, prewitt
# --------------------------------------------------------------------------

def _plan_derivative_and_smoothing(input: Array, axis: Any, output: Any,
                                   mode: Any, cval: Any,
                                   smoothing: tuple[float, ...]) -> Planned:
    """Central difference along ``axis``, ``smoothing`` along the others."""
    axis = normalize_axis(axis, input.ndim)
    out = output_dtype(output, input.dtype, shape=input.shape)
    modes = check_modes(mode, input.ndim)
    axes = (axis,) + tuple(ax for ax in range(input.ndim) if ax != axis)
    complex_input = _is_complex(input)
    if complex_input:
        _check_complex_output(out)
    else:
        _check_real_filter(cval, out)
    plan = CorrelationPlan(
        ndim=input.ndim, out_dtype=out, complex_input=complex_input,
        complex_weights=False, axes=axes, sizes=(3,) * len(axes),
        origins=(0,) * len(axes), modes=tuple(modes[a] for a in axes),
        symmetries=(-1,) + (1,) * (len(axes) - 1))
    weights = ((-1.0, 0.0, 1.0),) + (smoothing,) * (len(axes) - 1)
    return Planned(plan, _run_correlation, (input, weights, cval))


@docfiller(title="Sobel", smoothing="1, 2, 1", edge="4.")
@ndimage_function("input", planned=True)
def sobel(input: ArrayLike, axis: int = -1, output: Any = None,
          mode: Any = "reflect", cval: Any = 0.0) -> Array:
    """%(derivative_and_smoothing_doc)s"""
    return _plan_derivative_and_smoothing(as_array(input), axis, output,
                                          mode, cval, (1.0, 2.0, 1.0))


@docfiller(title="Prewitt", smoothing="1, 1, 1", edge="3.")
@ndimage_function("input", planned=True)
def prewitt(input: ArrayLike, axis: int = -1, output: Any = None,
            mode: Any = "reflect", cval: Any = 0.0) -> Array:
    """%(derivative_and_smoothing_doc)s"""
    return _plan_derivative_and_smoothing(as_array(input), axis, output,
                                          mode, cval, (1.0, 1.0, 1.0))


# --------------------------------------------------------------------------
# Uniform filters
# --------------------------------------------------------------------------

def _run_uniform(plan: WindowPlan, input: Array, cval: Any) -> Array:
    """The kernel of a uniform filter's :class:`WindowPlan`."""
    if plan.complex_input:
        return _via_real_components(
            lambda x, _, c, dtype: _run_uniform(plan.component(dtype), x, c),
            input, None, cval, plan.out_dtype)
    if input.size == 0:
        return _empty_result(input, plan.out_dtype)
    if not plan.axes:  # SciPy copies the input: output[...] = input
        return cast_like_numpy(input, plan.out_dtype)
    compute = arithmetic_dtype(input.dtype)
    margins = _uniform_margins(input.ndim, axes=plan.axes, sizes=plan.sizes,
                               origins=plan.origins, modes=plan.modes)
    if canvas_per_pass(input, margins, plan.axes):
        return one_pass_per_call(input, plan.axes, margins, lambda v, part,
                                 last, axis: (
            _uniform_separable(v, cval, axes=(axis,),
                               sizes=plan.sizes[part],
                               origins=plan.origins[part],
                               modes=plan.modes[part],
                               out_dtype=_between_passes(plan.out_dtype,
                                                         last),
                               compute=compute)))
    return _uniform_separable(input, cval, axes=plan.axes, sizes=plan.sizes,
                              origins=plan.origins, modes=plan.modes,
                              out_dtype=plan.out_dtype, compute=compute)


def _plan_uniform(input: Array, passes: Sequence[tuple[int, int, int, str]],
                  cval: Any, out: np.dtype) -> Planned:
    """The plan of uniform_filter and uniform_filter1d: ``passes`` of
    ``(axis, size, origin, mode)``, validated."""
    complex_input = _is_complex(input)
    if not complex_input and passes:  # without one, SciPy copies
        _check_real_filter(cval, out)
    axes, sizes, origins, modes = zip(*passes) if passes else ((),) * 4
    plan = WindowPlan(ndim=input.ndim, out_dtype=out,
                      complex_input=complex_input, complex_weights=False,
                      axes=axes, sizes=sizes, origins=origins, modes=modes)
    return Planned(plan, _run_uniform, (input, cval))


@docfiller
@ndimage_function("input", planned=True)
def uniform_filter1d(input: ArrayLike, size: int, axis: int = -1,
                     output: Any = None, mode: str = "reflect",
                     cval: Any = 0.0, origin: int = 0) -> Array:
    """Moving average of `size` samples along one axis.

    %(parameters_filter1d)s

    %(returns_filtered)s

    Examples
    --------
    >>> from jaxndimage import uniform_filter1d
    >>> uniform_filter1d([2, 8, 0, 4, 1, 9, 9, 0], size=3)
    array([4, 3, 4, 1, 4, 6, 6, 3])
    """
    input = as_array(input)
    axis = normalize_axis(axis, input.ndim)
    size = as_int(size, "size")
    if size < 1:
        raise RuntimeError(f"size: incorrect filter size {size}")
    out = output_dtype(output, input.dtype, shape=input.shape,
                       complex_output=_is_complex(input))
    origin = check_origin(origin, size)
    return _plan_uniform(input, [(axis, size, origin, check_mode(mode))],
                         cval, out)


@docfiller
@ndimage_function("input", planned=True)
def uniform_filter(input: ArrayLike, size: Any = 3, output: Any = None,
                   mode: Any = "reflect", cval: Any = 0.0, origin: Any = 0,
                   *, axes: Any = None) -> Array:
    """Multidimensional moving average, one separable pass per axis.

    Parameters
    ----------
    %(input)s
    size : int or sequence of ints, optional
        Window length per axis (or one for all); axes with size 1 are not
        filtered. Default is 3.
    %(output)s
    %(mode_multiple)s
    %(cval_origin_axes)s

    %(returns_filtered)s

    Notes
    -----
    Each window sum costs O(log size) additions per sample whatever the
    size, and every 1-D pass is stored in the output dtype, as in SciPy.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import uniform_filter
    >>> uniform_filter(np.arange(9.0).reshape(3, 3), size=3, mode='nearest')
    array([[1.33333333, 2.        , 2.66666667],
           [3.33333333, 4.        , 4.66666667],
           [5.33333333, 6.        , 6.66666667]])
    """
    input = as_array(input)
    out = output_dtype(output, input.dtype, shape=input.shape,
                       complex_output=_is_complex(input))
    axes = check_axes(axes, input.ndim)
    rank = len(axes)
    sizes = normalize_sequence(size, rank, "size")
    origins = normalize_sequence(origin, rank, "origin")
    modes = normalize_sequence(mode, rank, "mode")
    return _plan_uniform(input, window_passes(axes, sizes, origins, modes),
                         cval, out)
