"""Filters with a user function as the kernel: generic_filter,
generic_filter1d and vectorized_filter.

The rule for a user's callable: it is traced once, as the kernel of one
jitted program that applies it to every window at once (the windows are
gathered as shifted views of the padded input and the function is
``vmap``-ed over them; ``vectorized_filter`` hands it the whole window view,
as SciPy does).  Array-valued extra arguments are traced arguments of that
program, so new values compile nothing.

If that trace fails because the callable needs concrete values -- it raises
one of `_NEEDS_VALUES`: it calls ``float`` or ``np.asarray`` on its argument,
branches on a value, indexes with a boolean mask -- or because it returns
another library's array (it computes with dask or torch), the callable runs on the
host exactly as SciPy runs it: ``generic_filter`` and ``generic_filter1d``
through SciPy's own per-window C driver, ``vectorized_filter`` through numpy
window views (or the caller's array type: a torch caller's callable gets
torch views and is never traced).  So is a ``scipy.LowLevelCallable``, and
so is a ``vectorized_filter`` callable of bool or integer numpy input whose
result type on numpy windows (numpy's type promotion, as in SciPy) is not
its traced one (JAX's): this is tried on a corner of the input first.  That
path is as slow as SciPy and needs concrete input (under ``jit`` it raises
``TypeError``).  Any other error the callable raises reaches the caller.
The aborted trace has run the callable's Python code up to the failing
operation, once.
"""

from __future__ import annotations

import dataclasses
import math
import operator
import warnings
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxndimage._cache import cached_jit
from jaxndimage._canvas import (
    Margins,
    flat_bucket,
    in_chunks,
    list_chunks,
    shape_generic,
    window_margins,
)
from jaxndimage._casting import cast_like_c
from jaxndimage._dispatch import (
    as_array,
    as_caller_array,
    as_numpy,
    caller_namespace,
    host_dtype,
    host_only,
    ndimage_function,
    nonempty,
    to_jax,
    wide_kind,
)
from jaxndimage._docstrings import docfiller
from jaxndimage._modes import check_mode, pad_axis
from jaxndimage._plans import Plan, Planned, window_depth
from jaxndimage._rank import (
    Pattern,
    check_footprint_origins,
    footprint_taps,
    pad_for_footprint,
    window_footprint,
)
from jaxndimage._support import (
    OutputArray,
    check_axes,
    check_origin,
    check_real_cval,
    is_low_level_callable,
    normalize_axis,
    output_dtype,
)
from jaxndimage._typing import Array, ArrayLike

__all__ = ["generic_filter", "generic_filter1d", "vectorized_filter"]


#: What JAX raises when traced code needs concrete values (``float(x)``,
#: ``np.asarray(x)``, Python branches on values, boolean masks).  A
#: callable that raises one of these while traced runs as SciPy runs it.
_NEEDS_VALUES = (jax.errors.ConcretizationTypeError,
                 jax.errors.TracerArrayConversionError,
                 jax.errors.TracerIntegerConversionError,
                 jax.errors.NonConcreteBooleanIndexError)


class _Identity:
    """Compares by identity and keeps its object alive (so that its id is
    never reused while a compiled program is keyed by it)."""

    def __init__(self, value: Any):
        self.value = value

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Identity) and other.value is self.value


def _keyed(function: Callable) -> Any:
    """A user's callable as a plan field: itself, or by identity
    (:class:`_Identity`) when it is unhashable."""
    return function if _hashable(function) else _Identity(function)


def _unkeyed(key: Any) -> Callable:
    """The callable :func:`_keyed` keyed."""
    return key.value if isinstance(key, _Identity) else key


class _Bound:
    """A user function with the static part of its extra arguments.

    A static jit argument: equal for an equal function and equal static
    arguments, so calls reuse the compiled program.  Array-valued extra
    arguments are not part of it: `arrays` lists them, to be passed to the
    kernel as traced arguments and handed back to :meth:`bind`.  Unhashable
    non-array arguments are keyed by identity.
    """

    def __init__(self, function: Callable, args: tuple, kwargs: dict):
        leaves, self._tree = jax.tree.flatten((tuple(args), dict(kwargs)))
        self._is_array = tuple(isinstance(leaf, np.ndarray | jax.Array)
                               for leaf in leaves)
        self.arrays = tuple(jnp.asarray(leaf) for leaf, is_array
                            in zip(leaves, self._is_array) if is_array)
        static = tuple(None if is_array else leaf
                       for leaf, is_array in zip(leaves, self._is_array))
        self._static = tuple(leaf if _hashable(leaf) else _Identity(leaf)
                             for leaf in static)
        self.function = function
        self._key = (_keyed(function), self._tree, self._is_array,
                     self._static)

    def bind(self, arrays: Sequence[Array]) -> Callable:
        """``values -> function(*values, *args, **kwargs)`` with ``arrays``
        in place of the array-valued extra arguments."""
        given = iter(arrays)
        leaves = [next(given) if is_array else
                  (leaf.value if isinstance(leaf, _Identity) else leaf)
                  for leaf, is_array in zip(self._static, self._is_array)]
        args, kwargs = jax.tree.unflatten(self._tree, leaves)

        def call(*values: Any, **more: Any) -> Any:
            result = self.function(*values, *args, **kwargs, **more)
            if hasattr(result, "shape") and not isinstance(
                    result, jax.Array | np.ndarray | np.generic):
                raise _ForeignResult(
                    f"the callable returned a {type(result).__name__}, "
                    "not a JAX value")
            return result

        return call

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Bound) and self._key == other._key


def _traced(kernel: Callable[[], Array]) -> Array | None:
    """``kernel()``, whose trace calls a user's callable; None when that
    trace needs concrete values (the module docstring's rule)."""
    try:
        return kernel()
    except (*_NEEDS_VALUES, _LineAttributeError, _ForeignResult):
        return None


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _real_float() -> np.dtype:
    """SciPy hands callables float64 buffers (float32 with JAX's x64 off)."""
    return np.dtype(jax.dtypes.canonicalize_dtype(np.float64))


def _scipy_c_loop(name: str, values: np.ndarray, function: Any,
                  window: tuple, out_dtype: np.dtype, mode: str, cval: Any,
                  origin: Any, extra_arguments: tuple,
                  extra_keywords: dict) -> Array:
    """``function`` run by SciPy's own C loop ``_nd_image.<name>``, once per
    window: the only private SciPy API jaxndimage calls.

    Nothing else runs a plain Python callable or a ``LowLevelCallable``
    exactly as SciPy does, and the public function cannot stand in, since
    ``scipy_backend.patch()`` replaces it with jaxndimage's.
    ``tests/test_rank.py`` fails loudly if SciPy moves it.
    """
    from scipy.ndimage import _nd_image, _ni_support

    result = np.zeros(values.shape, out_dtype)
    getattr(_nd_image, name)(values, function, *window, result,
                             _ni_support._extend_mode_to_code(mode), cval,
                             origin, tuple(extra_arguments), extra_keywords)
    return jnp.asarray(result)


def _check_real(input: Array) -> None:
    if jnp.iscomplexobj(input):
        raise TypeError("Complex type not supported")


# --------------------------------------------------------------------------
# generic_filter
# --------------------------------------------------------------------------

def _generic_margins(ndim, *, pattern, origins, mode, **_) -> Margins:
    return window_margins(pattern.array.shape, origins, (mode,) * ndim)


@shape_generic(("function", "pattern", "origins", "mode", "out_dtype"),
               _generic_margins, mode_args=("mode",))
def _generic_kernel(x: Array, cval: Any, extra: tuple[Array, ...], *,
                    grid: Any, function: _Bound, pattern: Pattern,
                    origins: tuple[int, ...], mode: str,
                    out_dtype: np.dtype) -> Array:
    footprint = pattern.array
    dtype = _real_float()
    padded = pad_for_footprint(grid, x.astype(dtype), footprint.shape,
                               origins, (mode,) * footprint.ndim,
                               jnp.asarray(cval, dtype))
    taps = [grid.crop(t, x.shape)
            for t in footprint_taps(grid, padded, footprint)]
    shape = taps[0].shape if taps else grid.crop(x, x.shape).shape
    windows = (jnp.stack(taps, axis=-1) if taps
               else jnp.zeros(shape + (0,), dtype))
    windows = windows.reshape(-1, windows.shape[-1])
    values = jax.vmap(function.bind(extra))(windows)
    if values.shape != windows.shape[:1]:  # SciPy takes float(result)
        raise TypeError("only 0-dimensional arrays can be converted to "
                        "Python scalars")
    values = values.reshape(shape)
    return cast_like_c(values, out_dtype)


@dataclasses.dataclass(frozen=True)
class GenericPlan(Plan):
    """A user's ``function`` (see :func:`_keyed`) of the values under the
    window ``pattern`` (a :class:`Pattern` over every axis) centred at
    ``shape[i] // 2 + origins[i]``, all axes extended by ``mode``, stored
    in ``out_dtype``; its extra arguments are operands."""

    function: Any
    pattern: Pattern
    origins: tuple[int, ...]
    mode: str
    out_dtype: np.dtype

    @property
    def depth(self) -> tuple[int, ...]:
        shape, _ = self.pattern
        return window_depth(self.ndim, range(self.ndim), shape, self.origins)


def _run_callable(name: str, plan: GenericPlan | Generic1dPlan,
                  input: Array, cval: Any, extra_arguments: tuple,
                  extra_keywords: dict, *, kernel: Callable,
                  static: dict[str, Any], window: tuple, origin: Any,
                  traceable: bool) -> Array:
    """The kernel of the plans of `generic_filter` and `generic_filter1d`
    (``name``): the callable traced by ``kernel`` (with the ``static``
    arguments) where ``traceable``, or else run by SciPy's C loop over
    ``window`` (the module docstring's rule)."""
    input = to_jax(input)
    if input.size == 0:
        return jnp.zeros(input.shape, plan.out_dtype)
    function = _unkeyed(plan.function)
    if traceable and not is_low_level_callable(function):
        bound = _Bound(function, extra_arguments, extra_keywords)
        result = _traced(partial(
            kernel, input, cval, bound.arrays, function=bound, mode=plan.mode,
            out_dtype=plan.out_dtype, **static))
        if result is not None:
            return result
    return _scipy_c_loop(name, host_only(input, name), function, window,
                         plan.out_dtype, plan.mode, cval, origin,
                         extra_arguments, extra_keywords)


def _run_generic(plan: GenericPlan, input: Array, cval: Any,
                 extra_arguments: tuple, extra_keywords: dict) -> Array:
    """The kernel of a :class:`GenericPlan`."""
    footprint = plan.pattern.array
    # An empty footprint hands the callable empty windows: SciPy's C loop
    # calls it on them, as it does for a low-level callable.
    return _run_callable(
        "generic_filter", plan, input, cval, extra_arguments, extra_keywords,
        kernel=_generic_kernel,
        static={"pattern": plan.pattern, "origins": plan.origins},
        window=(np.ascontiguousarray(footprint),), origin=list(plan.origins),
        traceable=bool(footprint.any()))


@docfiller
@ndimage_function("input", "footprint", reject_float16=nonempty,
                   planned=True)
def generic_filter(input: ArrayLike, function: Any, size: Any = None,
                   footprint: Any = None, output: Any = None,
                   mode: str = "reflect", cval: Any = 0.0, origin: Any = 0,
                   extra_arguments: tuple = (), extra_keywords: Any = None,
                   *, axes: Any = None) -> Array:
    """Filter with a function of the window's values.

    At every sample, ``function(values, *extra_arguments,
    **extra_keywords)`` receives the 1-D float64 array of the input values
    under the True samples of the footprint (in C order) and returns one
    number.

    Parameters
    ----------
    %(input)s
    function : callable or scipy.LowLevelCallable
        Traced once and ``vmap``-ed over all windows (``jnp`` code, or
        numpy calls that dispatch to array methods). One that needs
        concrete values, and a ``LowLevelCallable``, is called once per
        window on the host, as SciPy does (slow, and not under ``jit``).
    size : int or sequence of int, optional
        Shape of a rectangular window. Ignored, with a warning, when
        `footprint` is given.
    footprint : array_like of bool, optional
        The window as a boolean mask over its bounding box.
    %(output)s
    %(mode)s
    %(cval)s
    %(origin_multiple)s
    %(extra_arguments_keywords)s
    %(axes)s

    %(returns_filtered)s

    Notes
    -----
    `function` is traced once, as the kernel of one jitted program; if the
    trace fails because it needs concrete values (``float(v)``,
    ``np.asarray(v)``, a branch on a value), it is called per window as
    SciPy calls it. Any other error it raises reaches the caller.

    Examples
    --------
    >>> import numpy as np
    >>> import jax.numpy as jnp
    >>> from jaxndimage import generic_filter
    >>> a = np.arange(12.0).reshape(3, 4)
    >>> generic_filter(a, jnp.std, size=3, mode='nearest').round(3)
    array([[1.944, 2.055, 2.055, 1.944],
           [3.3  , 3.367, 3.367, 3.3  ],
           [1.944, 2.055, 2.055, 1.944]])
    >>> generic_filter(a, lambda v: float(np.ptp(v)), size=2)
    array([[0., 1., 1., 1.],
           [4., 5., 5., 5.],
           [4., 5., 5., 5.]])
    """
    if size is not None and footprint is not None:
        warnings.warn("ignoring size because footprint is set", UserWarning,
                      stacklevel=3)
    extra_keywords = {} if extra_keywords is None else extra_keywords
    input = as_array(input)
    _check_real(input)
    axes = check_axes(axes, input.ndim)
    footprint = window_footprint(size, footprint, axes, input.ndim)
    origins = check_footprint_origins(footprint, origin, axes, input.ndim)
    out = output_dtype(output, input.dtype, shape=input.shape,
                       real_output=True)
    check_mode(mode)
    check_real_cval(cval)
    plan = GenericPlan(input.ndim, _keyed(function), Pattern.of(footprint),
                       origins, mode, out)
    return Planned(plan, _run_generic,
                   (input, cval, extra_arguments, extra_keywords))


# --------------------------------------------------------------------------
# generic_filter1d
# --------------------------------------------------------------------------

def _in_place(op: Callable) -> Callable:
    def update(self, other):
        self.value = op(self.value, other).astype(self.value.dtype)
        return self

    return update


def _reading(op: Callable, reflected: bool = False) -> Callable:
    if reflected:
        return lambda self, other: op(other, self.value)
    return lambda self, other: op(self.value, other)


def _forwarded(name: str) -> property:
    return property(lambda self: getattr(self.value, name))


class _OutputLine:
    """Stands in for the output line a generic_filter1d callable writes
    into: item assignment and in-place arithmetic become functional updates
    of ``value``; reads and other arithmetic see ``value``."""

    def __init__(self, value: Array):
        self.value = value

    __iadd__ = _in_place(operator.add)
    __isub__ = _in_place(operator.sub)
    __imul__ = _in_place(operator.mul)
    __itruediv__ = _in_place(operator.truediv)
    __ipow__ = _in_place(operator.pow)
    __add__, __radd__ = _reading(operator.add), _reading(operator.add, True)
    __sub__, __rsub__ = _reading(operator.sub), _reading(operator.sub, True)
    __mul__, __rmul__ = _reading(operator.mul), _reading(operator.mul, True)
    __truediv__ = _reading(operator.truediv)
    __rtruediv__ = _reading(operator.truediv, True)
    __pow__ = _reading(operator.pow)

    def __neg__(self):
        return -self.value

    def __jax_array__(self):
        return self.value

    def __setitem__(self, index, item):
        self.value = self.value.at[index].set(item)

    def __getitem__(self, index):
        return self.value[index]

    def __len__(self):
        return self.value.shape[0]

    def __array__(self, *args, **kwargs):
        return np.asarray(self.value, *args, **kwargs)

    shape = _forwarded("shape")
    dtype = _forwarded("dtype")
    size = _forwarded("size")
    ndim = _forwarded("ndim")

    def __getattr__(self, name: str):
        raise _LineAttributeError(
            f"generic_filter1d's traced output line has no {name!r}")


class _ForeignResult(TypeError):
    """A traced callable returned another library's array (it computes with
    that library, e.g. dask's functions): it runs on host arrays, as SciPy
    runs it."""


class _LineAttributeError(AttributeError):
    """A numpy output-line attribute that the traced stand-in lacks: the
    callable then runs on numpy lines, as SciPy runs it."""


def _line_function(function: Callable, length: int):
    def apply(line: Array) -> Array:
        output = _OutputLine(jnp.zeros((length,), line.dtype))
        function(line, output)
        return output.value

    return apply


@cached_jit(static_argnames=("function", "size", "axis", "mode",
                             "origin", "out_dtype"))
def _generic1d_kernel(x: Array, cval: Any, extra: tuple[Array, ...], *,
                      function: _Bound, size: int,
                      axis: int, mode: str, origin: int,
                      out_dtype: np.dtype) -> Array:
    dtype = _real_float()
    before = size // 2 + origin
    padded = pad_axis(x.astype(dtype), axis, before, size - 1 - before, mode,
                      jnp.asarray(cval, dtype))
    lines = jnp.moveaxis(padded, axis, -1)
    batch = lines.shape[:-1]
    lines = lines.reshape(-1, lines.shape[-1])
    length = x.shape[axis]
    values = jax.vmap(_line_function(function.bind(extra), length))(lines)
    values = jnp.moveaxis(values.reshape(batch + (length,)), -1, axis)
    return cast_like_c(values, out_dtype)


@dataclasses.dataclass(frozen=True)
class Generic1dPlan(Plan):
    """A user's ``function`` (see :func:`_keyed`) of every line along
    ``axis``, extended by ``size - 1`` samples (``size // 2 + origin``
    before) by ``mode``, stored in ``out_dtype``; its extra arguments are
    operands."""

    function: Any
    size: int
    axis: int
    mode: str
    origin: int
    out_dtype: np.dtype

    @property
    def depth(self) -> tuple[int, ...]:
        return window_depth(self.ndim, (self.axis,), (self.size,),
                            (self.origin,))


def _run_generic1d(plan: Generic1dPlan, input: Array, cval: Any,
                   extra_arguments: tuple, extra_keywords: dict) -> Array:
    """The kernel of a :class:`Generic1dPlan`."""
    return _run_callable(
        "generic_filter1d", plan, input, cval, extra_arguments,
        extra_keywords, kernel=_generic1d_kernel,
        static={"size": plan.size, "axis": plan.axis, "origin": plan.origin},
        window=(plan.size, plan.axis), origin=plan.origin, traceable=True)


@docfiller
@ndimage_function("input", planned=True)
def generic_filter1d(input: ArrayLike, function: Any, filter_size: int,
                     axis: int = -1, output: Any = None,
                     mode: str = "reflect", cval: Any = 0.0, origin: int = 0,
                     extra_arguments: tuple = (),
                     extra_keywords: Any = None) -> Array:
    """Filter every line along one axis with a function of the line.

    ``function(input_line, output_line, *extra_arguments,
    **extra_keywords)`` receives one line of the input extended by
    ``filter_size - 1`` samples (float64, padded by `mode`) and writes the
    filtered line into ``output_line`` in place.

    Parameters
    ----------
    %(input)s
    function : callable or scipy.LowLevelCallable
        Traced once and ``vmap``-ed over all lines (item assignment
        ``output_line[...] = ...`` works on the stand-in output line); one
        that needs concrete values, and a ``LowLevelCallable``, is called
        once per line on the host, as SciPy does.
    filter_size : int
        Length of the filter window.
    %(options_1d)s
    %(extra_arguments_keywords)s

    %(returns_filtered)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import generic_filter1d
    >>> def moving_sum(line, out):
    ...     out[...] = line[:-2] + line[1:-1] + line[2:]
    >>> generic_filter1d(np.arange(6.0), moving_sum, filter_size=3)
    array([ 1.,  3.,  6.,  9., 12., 14.])
    """
    extra_keywords = {} if extra_keywords is None else extra_keywords
    input = as_array(input)
    _check_real(input)
    out = output_dtype(output, input.dtype, shape=input.shape,
                       real_output=True)
    if filter_size < 1:
        raise RuntimeError("filter_size: invalid filter size "
                           f"{filter_size}")
    axis = normalize_axis(axis, input.ndim)
    filter_size = int(filter_size)
    origin = check_origin(origin, filter_size)
    check_mode(mode)
    check_real_cval(cval)
    plan = Generic1dPlan(input.ndim, _keyed(function), filter_size, axis,
                         mode, origin, out)
    return Planned(plan, _run_generic1d,
                   (input, cval, extra_arguments, extra_keywords))


# --------------------------------------------------------------------------
# vectorized_filter
# --------------------------------------------------------------------------

#: SciPy pads through ``np.pad`` and maps 'grid-mirror' to np.pad's
#: 'reflect', i.e. ndimage's 'mirror'; the other names keep their meaning.
_VECTORIZED_MODES = {"reflect": "reflect", "constant": "constant",
                     "nearest": "nearest", "mirror": "mirror",
                     "wrap": "wrap", "grid-mirror": "mirror",
                     "grid-constant": "constant", "grid-wrap": "wrap",
                     "valid": "valid"}
_NUMPY_PAD = {"reflect": "symmetric", "mirror": "reflect",
              "nearest": "edge", "wrap": "wrap", "constant": "constant"}


def _rows_per_batch(view_shape: tuple[int, ...], itemsize: int,
                    batch_memory: Any) -> int:
    """Slices of the window view along its first axis per call, as SciPy
    splits them to bound memory."""
    chunk = math.prod(view_shape[1:]) * itemsize
    rows = min(view_shape[0], batch_memory // chunk if chunk else math.inf)
    if rows < 1:
        raise ValueError("`batch_memory` is insufficient for minimum chunk "
                         "size.")
    return int(rows)


def _window_views(padded, size: tuple[int, ...], mask: np.ndarray | None,
                  xp):
    """The window view of ``padded`` (an ``xp`` array: numpy or jax.numpy)
    over its last ``len(size)`` axes: ``out_shape + size``, or
    ``out_shape + (mask.sum(),)`` with a mask.  numpy's is SciPy's (a
    strided view, masked by indexing), so that a reduction over it adds in
    SciPy's order."""
    n = len(size)
    if xp is np:
        view = np.lib.stride_tricks.sliding_window_view(
            padded, size, axis=tuple(range(padded.ndim - n, padded.ndim)))
        return view if mask is None else view[..., mask]
    lead = padded.shape[:padded.ndim - n]
    core = tuple(p - s + 1 for p, s in zip(padded.shape[padded.ndim - n:],
                                           size))
    offsets = [o for o in np.ndindex(*size) if mask is None or mask[o]]
    taps = [padded[(Ellipsis,) + tuple(slice(o, o + c)
                                       for o, c in zip(offset, core))]
            for offset in offsets]
    if not taps:
        return xp.zeros(lead + core + (0,), padded.dtype)
    if mask is not None:
        return xp.stack(taps, -1)
    return xp.reshape(xp.stack(taps, -1), lead + core + size)


def _apply_in_batches(padded, size, mask, n_batch: int, rows: int, call, xp):
    """``call`` on the window view, ``rows`` slices of its first axis at a
    time (the first axis is a batch axis, or the first window axis)."""
    overlap = 0 if n_batch else size[0] - 1
    total = padded.shape[0] - overlap
    parts = [call(_window_views(padded[start:start + rows + overlap], size,
                                mask, xp))
             for start in range(0, total, rows)]
    return parts[0] if len(parts) == 1 else xp.concatenate(parts, 0)


@cached_jit(static_argnames=("function", "size", "pattern", "origins",
                             "mode", "n_batch", "rows"))
def _vectorized_kernel(x: Array, cval: Any, *, function: _Bound,
                       size: tuple[int, ...], pattern: Pattern | None,
                       origins: tuple[int, ...], mode: str, n_batch: int,
                       rows: int) -> Array:
    n = len(size)
    if mode != "valid":
        for k, (s, o) in enumerate(zip(size, origins)):
            before = s // 2 + o
            x = pad_axis(x, n_batch + k, before, s - 1 - before, mode, cval)
    mask = None if pattern is None else pattern.array
    axis = -1 if mask is not None else tuple(range(-n, 0))
    apply = function.bind(())
    return _apply_in_batches(x, size, mask, n_batch, rows,
                             lambda v: apply(v, axis=axis), jnp)


@cached_jit(static_argnames=("function", "size", "pattern", "length"))
def _vectorized_chunk(buffer: Array, strides: Array, start: Array, *,
                      function: _Bound, size: tuple[int, ...],
                      pattern: Pattern | None, length: int) -> Array:
    """The callable on the windows of the flat positions ``start`` to
    ``start + length`` of an extended array laid out flat in ``buffer``,
    the strides of its window axes traced: one program per buffer length
    and chunk length, not per shape.  The windows are read as
    :func:`_window_views` lays them out (taps in ``np.ndindex`` order),
    with the output points flat."""
    taps = [jax.lax.dynamic_slice(
        buffer, (start + sum(k * strides[a] for a, k in enumerate(tap)),),
        (length,))
        for tap in np.ndindex(*size) if pattern is None or pattern.array[tap]]
    if pattern is None:
        view = jnp.stack(taps, -1).reshape((length,) + size)
        axis = tuple(range(-len(size), 0))
    else:
        view = (jnp.stack(taps, -1) if taps
                else jnp.zeros((length, 0), buffer.dtype))
        axis = -1
    result = function.bind(())(view, axis=axis)
    if getattr(result, "shape", None) != (length,):
        raise _ForeignResult  # not one value per window: the exact path
    return result


def _vectorized_on_buffer(x: np.ndarray, cval: np.ndarray,
                          plan: VectorizedPlan, function: _Bound
                          ) -> np.ndarray:
    """:func:`_vectorized_chunk` over every window of host ``x`` (axes
    moved last), extended by numpy as SciPy extends it, in chunks of a
    list length."""
    padded = np.ascontiguousarray(_padded_numpy(
        x, cval, plan.size, plan.origins, plan.mode, plan.n_batch))
    n = len(plan.size)
    strides = [s // padded.itemsize for s in padded.strides[-n:]]
    reach = sum((k - 1) * s for k, s in zip(plan.size, strides))
    length, chunks = list_chunks(padded.size)
    buffer = flat_bucket(np.concatenate([
        padded.reshape(-1), np.zeros(length * chunks - padded.size + reach,
                                     padded.dtype)]))
    values = in_chunks(padded.size, lambda start, length: _vectorized_chunk(
        buffer, np.asarray(strides, np.int32), np.int32(start),
        function=function, size=plan.size, pattern=plan.pattern,
        length=length))
    core = tuple(slice(0, p - k + 1) for p, k in zip(padded.shape[-n:],
                                                     plan.size))
    return np.ascontiguousarray(values.reshape(padded.shape)[
        (Ellipsis,) + core])


def _call_once(function: Callable, value: Array, **kwargs: Any) -> Array:
    """``function(value, **kwargs)``, once: on the JAX array for JAX
    callers, on the caller's array type (numpy included) for the others,
    as SciPy calls it."""
    if isinstance(value, jax.Array):
        return jnp.asarray(function(value, **kwargs))
    host = as_caller_array(host_only(value, "vectorized_filter"))
    return jnp.asarray(as_numpy(function(host, **kwargs)))


def _padded_numpy(x: np.ndarray, cval: Any, size, origins, mode: str,
                  n_batch: int) -> np.ndarray:
    """``x`` extended by ``mode`` (numpy's padding, as SciPy's)."""
    if mode == "valid":
        return x
    borders = ((0, 0),) * n_batch + tuple(
        (s // 2 + o, (s - 1) // 2 - o) for s, o in zip(size, origins))
    kwargs = ({"constant_values": np.asarray(cval)[()]}
              if mode == "constant" else {})
    return np.pad(x, borders, mode=_NUMPY_PAD[mode], **kwargs)


def _vectorized_numpy(x: np.ndarray, cval: Any, function, size, mask,
                      origins, mode: str, n_batch: int, rows: int):
    x = _padded_numpy(x, cval, size, origins, mode, n_batch)
    n = len(size)
    axis = -1 if mask is not None else tuple(range(-n, 0))
    return _apply_in_batches(
        x, size, mask, n_batch, rows,
        lambda v: as_numpy(function(as_caller_array(v), axis=axis)), np)


def _traces_like_numpy(function: Callable, x: np.ndarray, cval: Any,
                       plan: VectorizedPlan, mask: np.ndarray | None) -> bool:
    """Whether ``function`` traced returns the dtype it returns on numpy
    windows of ``x`` (axes moved last), as SciPy calls it.

    numpy's and JAX's type promotion differ for bool and integer arrays
    (``np.mean`` of uint8 windows is float64, traced float32; ``np.sqrt``
    of bool is float16, traced float32), so for those the callable is
    applied to the windows of a corner of ``x`` on the host, and traced on
    them without values.  Elsewhere the two agree.
    """
    if x.dtype.kind not in "biu":
        return True
    corner = x[(slice(0, 1),) * plan.n_batch
               + tuple(slice(0, s) for s in plan.size)]
    padded = _padded_numpy(corner, cval, plan.size, plan.origins, plan.mode,
                           plan.n_batch)
    view = _window_views(padded, plan.size, mask, np)
    axis = -1 if mask is not None else tuple(range(-len(plan.size), 0))
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            on_host = np.asarray(function(view, axis=axis)).dtype
    except Exception:  # noqa: BLE001 (then it runs on the host, as in SciPy)
        return False
    call = _Bound(function, (), {}).bind(())
    traced = _traced(lambda: jax.eval_shape(partial(call, axis=axis), view))
    return getattr(traced, "dtype", None) == on_host


@dataclasses.dataclass(frozen=True)
class VectorizedPlan(Plan):
    """A user's ``function`` (see :func:`_keyed`) of the window view of
    the input with ``axes`` moved last, the windows of shape ``size`` (of
    the True samples of ``pattern``, a :class:`Pattern`, where not None)
    shifted by ``origins``, the input extended by ``mode`` ('valid': not
    extended), ``n_batch`` leading batch axes and ``rows`` slices of the
    first axis per call (None: the input is empty or 0-d, and the callable
    runs once); the result cast to ``output`` where not None.  Every axis
    whole for dask, as the result's dtype and shape are the callable's."""

    function: Any
    axes: tuple[int, ...]
    size: tuple[int, ...]
    pattern: Pattern | None
    origins: tuple[int, ...]
    mode: str
    n_batch: int
    rows: int | None
    output: Any

    @property
    def sample_reach(self) -> tuple[int, ...]:
        """The window's reach: dask learns the result's dtype and shape
        from a sample block of the window's size."""
        return window_depth(self.ndim, self.axes, self.size, self.origins)


def _run_vectorized(plan: VectorizedPlan, input: Array, cval: Any) -> Array:
    """The kernel of a :class:`VectorizedPlan`: the callable traced, or
    else run on host window views (the module docstring's rule).  Host
    input is moved, extended and cropped by numpy and its windows laid out
    flat (:func:`_vectorized_on_buffer`), so a new shape compiles
    nothing."""
    function = _unkeyed(plan.function)
    mask = None if plan.pattern is None else plan.pattern.array
    working = tuple(range(-len(plan.size), 0))
    on_host = isinstance(input, np.ndarray)
    xp = np if on_host else jnp
    input = xp.moveaxis(input if on_host else to_jax(input), plan.axes,
                        working)
    if input.size == 0:  # SciPy returns it as it is, with the axes moved
        result = input
    elif plan.rows is None:  # 0-d input, 0-d window
        if mask is None:
            result = _call_once(function, input, axis=())
        else:
            # SciPy masks twice here: input[mask][..., mask].
            count = int(mask)
            result = _call_once(function, xp.broadcast_to(input,
                                                          (count, count)),
                                axis=-1)
    else:
        bound = _Bound(function, (), {})
        kernel = partial(_vectorized_kernel, function=bound,
                         size=plan.size, pattern=plan.pattern,
                         origins=plan.origins, mode=plan.mode,
                         n_batch=plan.n_batch, rows=plan.rows)
        if on_host:
            cval = np.asarray(cval)
            cval = cval.astype(input.dtype) if (
                cval.dtype.kind != "c" or input.dtype.kind == "c") else cval
        else:
            cval = jnp.asarray(cval).astype(input.dtype) \
                if not jnp.iscomplexobj(cval) or jnp.iscomplexobj(input) \
                else jnp.asarray(cval)
        result = None
        if caller_namespace() is None and (not on_host or _traces_like_numpy(
                function, input, np.asarray(cval), plan, mask)):
            # The module rule: traced where the callable traces.
            result = _traced(
                partial(_vectorized_on_buffer, input, cval, plan, bound)
                if on_host else partial(kernel, input, cval))
        if result is None:
            values = host_only(input, "vectorized_filter")
            result = _vectorized_numpy(
                values, np.asarray(cval), function, plan.size, mask,
                plan.origins, plan.mode, plan.n_batch, plan.rows)
            if not on_host:
                result = jnp.asarray(result)
    if result.ndim and input.size:  # SciPy returns empty input unmoved
        result = xp.moveaxis(result, working, plan.axes)
    if plan.output is not None:
        if (isinstance(plan.output, OutputArray)
                and tuple(plan.output.shape) != result.shape):
            # SciPy assigns the result to the array, as numpy does.
            raise ValueError(f"output: could not broadcast the result of "
                             f"shape {result.shape} into shape "
                             f"{tuple(plan.output.shape)}")
        out = output_dtype(plan.output, result.dtype, shape=result.shape)
        result = cast_like_c(result, out)
    return result


def _keeps_output(input: Any) -> bool:
    """SciPy's `vectorized_filter` returns empty and 0-d input as it
    computes it, without looking at an ``output=`` array."""
    return np.size(input) == 0 or np.ndim(input) == 0


def _vectorized_kinds(arguments: Mapping[str, Any]) -> str:
    """``results_64`` of `vectorized_filter`: the kind of the dtype the
    callable gives on numpy windows, where that is 64-bit (numpy sums
    small integers in 64 bits; traced on a device without 64-bit types
    they are summed in 32).  Bool and integer input only: the callable is
    applied to one window of the input's first value on the host, as
    :func:`_traces_like_numpy` does; float input follows its own dtype."""
    input = as_numpy(arguments["input"])
    if input.dtype.kind not in "biu" or not input.size:
        return wide_kind(host_dtype(input))
    footprint = arguments.get("footprint")
    size = arguments.get("size")
    if footprint is not None:
        window, axis = (int(np.count_nonzero(footprint)),), -1
    else:
        window = (size,) if np.isscalar(size) else tuple(size)
        axis = tuple(range(-len(window), 0))
    view = np.full((1,) + window, input.flat[0])
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return wide_kind(host_dtype(arguments["function"](view,
                                                              axis=axis)))
    except Exception:  # noqa: BLE001 (the call ran: its dtype stands)
        return ""


@docfiller
@ndimage_function("input", "footprint", reject_float16=False, planned=True,
                  keeps_output=_keeps_output, results_64=_vectorized_kinds)
def vectorized_filter(input: ArrayLike, function: Any, *, size: Any = None,
                      footprint: Any = None, output: Any = None,
                      mode: str = "reflect", cval: Any = None,
                      origin: Any = None, axes: Any = None,
                      batch_memory: Any = 2**30) -> Array:
    """Filter with a vectorized function of the window view.

    ``function(view, axis=axes)`` receives the sliding-window view of the
    padded input, whose last ``len(size)`` axes run over each window (with
    a `footprint`: one last axis holding the True samples), and reduces
    those axes.

    Parameters
    ----------
    %(input)s
    function : callable
        A reduction with an ``axis`` keyword, such as ``jnp.mean`` or
        ``np.std``. For numpy and JAX input it is traced once, as one
        jitted program; if it needs concrete values it runs on numpy views,
        as SciPy does, and so it does for bool and integer numpy input
        where its result type on numpy views is not its traced one
        (``np.mean`` of uint8 windows is float64). For other array types
        it gets views of that type.
    size : int or tuple of int, optional
        Window shape, one entry per axis in `axes`.
    footprint : array_like of bool, optional
        The window as a boolean mask. Exactly one of `size` and `footprint`
        must be given.
    output : array or dtype, optional
        dtype of the result, or (for non-JAX input) an array to write into,
        which is returned. Default: the dtype `function` returns. As in
        SciPy, empty and 0-d input are returned as computed, and an output
        array is then left as it is. Deliberate differences (listed in
        the README): SciPy 1.17 takes only an array, raising for a dtype,
        and returns a view of it.
    mode : {'reflect', 'constant', 'nearest', 'mirror', 'wrap', \
'grid-mirror', 'grid-constant', 'grid-wrap', 'valid'}, optional
        How `input` is extended past its edges; 'valid' does not extend it
        and returns only the windows that fit. As in SciPy, 'grid-mirror'
        extends like 'mirror' here. Default is 'reflect'.
    cval : scalar, optional
        Value past the edges; only with a constant mode. Default 0.
    origin : int or tuple of int, optional
        Shift of the window per axis. Default 0.
    axes : int or tuple of int, optional
        Axes to filter along; default: the last ``len(size)`` axes (all
        axes when the window has as many dimensions as `input`).
    batch_memory : int, optional
        Most bytes of window view per call of `function`; larger views
        are processed in slices along the first axis. Default is 2**30.

    Returns
    -------
    result : array
        The filtered array.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import vectorized_filter
    >>> a = np.arange(10.0)
    >>> vectorized_filter(a, np.max, size=3)
    array([1., 2., 3., 4., 5., 6., 7., 8., 9., 9.])
    >>> vectorized_filter(a, np.mean, size=4, mode='valid')
    array([1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5])
    """
    input = as_array(input)
    if not callable(function):
        raise ValueError("`function` must be a callable.")
    if size is None and footprint is None:
        raise ValueError("Either `size` or `footprint` must be provided.")
    if size is not None and footprint is not None:
        raise ValueError("Either `size` or `footprint` may be provided, "
                         "not both.")
    if axes is None:
        axes = tuple(range(-input.ndim, 0))
    elif np.isscalar(axes):
        axes = (axes,)
    axes = tuple(axes)
    n_axes = len(axes)
    n_batch = input.ndim - n_axes
    if n_axes > input.ndim:
        raise ValueError("The length of `axes` may not exceed the "
                         "dimensionality of `input`(`input.ndim`).")
    mask = None
    if size is not None:
        size = (size,) * n_axes if np.isscalar(size) else tuple(size)
        if not all(np.asarray(s).dtype.kind in "iu" and s > 0 for s in size):
            raise ValueError("All elements of `size` must be positive "
                             "integers.")
        size = tuple(int(s) for s in size)
    else:
        mask = np.asarray(footprint, dtype=bool)
        size = mask.shape
    if n_axes != len(size):
        raise ValueError("`axes` must be compatible with the dimensionality "
                         "of the window specified by `size` or `footprint`.")
    if origin is None:
        origin = (0,) * n_axes
    else:
        origin = (origin,) * n_axes if np.isscalar(origin) else tuple(origin)
        if not all(np.asarray(o).dtype.kind in "iu" for o in origin):
            raise ValueError("All elements of `origin` must be integers.")
        if len(origin) != n_axes:
            raise ValueError("`origin` must be an integer or tuple of "
                             "integers with length equal to the number of "
                             "axes.")
        origin = tuple(int(o) for o in origin)
    if not isinstance(mode, str) or mode not in _VECTORIZED_MODES:
        raise ValueError(f"`mode` must be one of {set(_VECTORIZED_MODES)}.")
    mode = _VECTORIZED_MODES[mode]
    if mode == "valid" and any(origin):
        raise ValueError("`mode='valid'` is incompatible with use of "
                         "`origin`.")
    if cval is None:
        cval = 0.0
    elif mode != "constant":
        raise ValueError("Use of `cval` is compatible only with "
                         "`mode='constant'`.")
    if np.asarray(cval).dtype.kind not in "iufc":
        raise ValueError("`cval` must include only numbers.")
    memory = np.asarray(batch_memory)
    if memory.ndim != 0 or memory.dtype.kind not in "iuf" or memory <= 0:
        raise ValueError("`batch_memory` must be positive number.")

    # The shape with the axes moved last, and jnp.moveaxis's errors for
    # bad axes, by tracing it on the shape alone (no values, no program).
    shape = jax.eval_shape(
        partial(jnp.moveaxis, source=axes, destination=tuple(range(-n_axes, 0))),
        jax.ShapeDtypeStruct(input.shape, np.bool_)).shape
    if input.size and mode == "valid" and any(
            s > n for s, n in zip(size, shape[n_batch:])):
        raise ValueError("window shape cannot be larger than input array "
                         f"shape: a window of {size} in 'valid' mode")
    rows = None  # empty or 0-d input: no window view to split
    if input.size and not (input.ndim == 0 and size == ()):
        padded_shape = list(shape)
        if mode != "valid":
            for k, s in enumerate(size):
                padded_shape[n_batch + k] += s - 1
        view_shape = tuple(padded_shape[:n_batch]) + tuple(
            p - s + 1 for p, s in zip(padded_shape[n_batch:], size)) + size
        rows = _rows_per_batch(view_shape, input.dtype.itemsize,
                               batch_memory)
    if isinstance(output, OutputArray) and _keeps_output(input):
        output = None
    plan = VectorizedPlan(input.ndim, _keyed(function), axes, size,
                          None if mask is None else Pattern.of(mask), origin,
                          mode, n_batch, rows, output)
    return Planned(plan, _run_vectorized, (input, cval))
