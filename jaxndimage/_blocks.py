"""Patch tools of ``skimage.util`` and the inverses scikit-image lacks.

``view_as_blocks``, ``view_as_windows`` and ``montage`` follow scikit-image
exactly (signatures, shapes, dtypes, values and exception types).
``unview_as_blocks``, ``unview_as_windows`` and ``unmontage`` put the pieces
back.  numpy in gives numpy out; a JAX array in gives a JAX array out, and
every function is then pure and static-shaped, so it works under ``jax.jit``,
``jax.vmap`` and ``jax.grad``.

The JAX kernels never scatter and never loop over patches: blocks are a
reshape and a transpose, and windows are cut and overlap-added axis by axis
with one strided slice (or one shifted add) per window offset modulo the step,
that is at most ``ceil(window / step)`` of them per axis.
"""

import dataclasses
import functools
import math
import numbers
import operator
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from numpy.lib.array_utils import normalize_axis_index
from numpy.lib.stride_tricks import as_strided
from numpy.typing import ArrayLike

from jaxndimage._dispatch import is_jax_array, ndimage_function
from jaxndimage._docstrings import docfiller
from jaxndimage._plans import Plan, Planned

__all__ = [
    "montage",
    "unmontage",
    "unview_as_blocks",
    "unview_as_windows",
    "view_as_blocks",
    "view_as_windows",
]

Array = np.ndarray | jax.Array


# ---------------------------------------------------------------- plans


@dataclasses.dataclass(frozen=True)
class PatchPlan(Plan):
    """Base of the patch tools' plans: their results are not arrays of the
    input's shape, so they have no block-wise form (depth None: a dask
    input is computed whole)."""

    @property
    def depth(self) -> None:
        return None


@dataclasses.dataclass(frozen=True)
class BlocksPlan(PatchPlan):
    """An array of shape ``grid * block`` as the non-overlapping blocks of
    shape ``block`` on ``grid``: the view of an ``ndim = len(grid)`` array
    (`view_as_blocks`), or put back together from the ``ndim =
    2 * len(grid)`` array of blocks (`unview_as_blocks`)."""

    grid: tuple[int, ...]
    block: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class WindowsPlan(PatchPlan):
    """The ``grid`` of windows of shape ``window``, ``step`` apart, of an
    ``ndim``-D array (`view_as_windows`)."""

    window: tuple[int, ...]
    step: tuple[int, ...]
    grid: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class UnwindowsPlan(PatchPlan):
    """Windows ``step`` apart (an ``ndim = 2 * len(step)`` array, grid axes
    then window axes) overlap-added onto an array of ``shape``, combined by
    ``reduce`` ('mean' or 'sum') (`unview_as_windows`)."""

    step: tuple[int, ...]
    reduce: str
    shape: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class MontagePlan(PatchPlan):
    """A montage of an ``ndim``-D stack of images, channels on
    ``channel_axis`` (None: grayscale), each image's intensity rescaled
    if ``rescale``, laid out row by row on a ``grid`` of (rows, columns)
    tiles ``pad`` apart; the padding and the tiles after the last image
    filled with the mean of the images where ``mean_fill``, else with
    the fill operand (`montage`)."""

    channel_axis: int | None
    rescale: bool
    grid: tuple[int, int]
    pad: int
    mean_fill: bool


@dataclasses.dataclass(frozen=True)
class UnmontagePlan(PatchPlan):
    """The first ``count`` tiles of a montage (an ``ndim``-D array, channels
    on ``channel_axis``, None: grayscale) of a ``grid`` of (rows, columns)
    tiles ``pad`` apart, as a stack of images (`unmontage`)."""

    channel_axis: int | None
    grid: tuple[int, int]
    pad: int
    count: int


def _runs_plan(shell: Callable[..., Planned]) -> Callable[..., Any]:
    """The public function of a planned ``shell`` that takes numpy and JAX
    arrays as they are (numpy results are views of the input, which the
    dispatcher would copy): the :class:`Planned` it returns, run."""

    @functools.wraps(shell)
    def public(*args: Any, **kwargs: Any) -> Any:
        return shell(*args, **kwargs).run()

    return public


# ---------------------------------------------------------------- helpers


def _check_view_input(arr_in) -> None:
    if not isinstance(arr_in, (np.ndarray, jax.Array)):
        raise TypeError("`arr_in` must be a numpy ndarray or a JAX array")


def _per_axis_step(step, ndim: int, against: str = "`arr_in.shape`") -> tuple[int, ...]:
    """Normalise ``step`` (an int or one int per axis) as view_as_windows does."""
    if isinstance(step, numbers.Number):
        if step < 1:
            raise ValueError("`step` must be >= 1")
        step = (step,) * ndim
    if len(step) != ndim:
        raise ValueError(f"`step` is incompatible with {against}")
    try:
        step = tuple(operator.index(s) for s in step)
    except TypeError:
        raise TypeError("`step` must hold integers") from None
    if any(s < 1 for s in step):
        raise ValueError("`step` must be >= 1")
    return step


def _fit(x, axis: int, length: int):
    """Crop or zero-pad ``x`` at the end of ``axis`` to ``length``."""
    size = x.shape[axis]
    if size > length:
        return lax.slice_in_dim(x, 0, length, axis=axis)
    if size < length:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (0, length - size)
        return jnp.pad(x, widths)
    return x


def _split_axis(x, axis: int, sizes: tuple[int, ...]):
    return x.reshape(x.shape[:axis] + sizes + x.shape[axis + 1 :])


def _merge_axes(x, axis: int, count: int):
    size = math.prod(x.shape[axis : axis + count])
    return x.reshape(x.shape[:axis] + (size,) + x.shape[axis + count :])


def _interleave(ndim: int) -> tuple[int, ...]:
    """Axis order that takes ``n + b`` (grid axes, then patch axes) to
    ``(n0, b0, n1, b1, ...)``."""
    return tuple(i for a in range(ndim) for i in (a, ndim + a))


# ------------------------------------------------------------ JAX kernels


def _unfold_axis(x, axis: int, window: int, step: int):
    """Cut the windows along ``axis``: that axis (length L) becomes the window
    count n, and a new last axis holds the window."""
    n = (x.shape[axis] - window) // step + 1
    q = -(-window // step)
    # With x[j] = X[j // step, j % step], window i at offset k = p*step + r
    # reads X[i + p, r]: p takes q values, so q slices of X cut every window.
    x = _split_axis(_fit(x, axis, (n + q - 1) * step), axis, (n + q - 1, step))
    x = jnp.stack([lax.slice_in_dim(x, p, p + n, axis=axis) for p in range(q)], -1)
    x = _merge_axes(jnp.moveaxis(x, axis + 1, -1), x.ndim - 2, 2)
    return lax.slice_in_dim(x, 0, window, axis=-1)


def _fold_axis(x, axis: int, step: int, length: int):
    """Overlap-add the windows along ``axis``: the window count n at ``axis``
    and the window in the last axis become one axis of ``length``."""
    q = -(-x.shape[-1] // step)
    x = _split_axis(_fit(x, -1, q * step), x.ndim - 1, (q, step))
    widths = [(0, 0)] * (x.ndim - 1)
    shifted = []
    for p in range(q):
        widths[axis] = (p, q - 1 - p)
        shifted.append(jnp.pad(lax.index_in_dim(x, p, x.ndim - 2, keepdims=False), widths))
    x = jnp.moveaxis(functools.reduce(operator.add, shifted), -1, axis + 1)
    return _fit(_merge_axes(x, axis, 2), axis, length)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _windows_kernel(x, window: tuple[int, ...], step: tuple[int, ...]):
    for a in range(len(window)):
        x = _unfold_axis(x, a, window[a], step[a])
    return x


def _coverage(length: int, n: int, window: int, step: int) -> np.ndarray:
    """How many of the n windows cover each of ``length`` positions."""
    j = np.arange(length)
    first = np.maximum(0, (j - window) // step + 1)
    last = np.minimum(n - 1, j // step)
    return np.maximum(last - first + 1, 0)


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _unwindows_kernel(windows, step: tuple[int, ...], reduce: str, shape: tuple[int, ...]):
    ndim = len(step)
    reduction = np.mean if reduce == "mean" else np.sum
    dtype = jax.dtypes.canonicalize_dtype(reduction(np.ones(1, windows.dtype)).dtype)
    grid = windows.shape[:ndim]
    window = windows.shape[ndim:]
    x = windows.astype(dtype)
    for a in reversed(range(ndim)):
        x = _fold_axis(x, a, step[a], shape[a])
    if reduce == "sum":
        return x
    count = jnp.ones((), np.finfo(dtype).dtype)
    for a in range(ndim):
        cover = _coverage(shape[a], grid[a], window[a], step[a])
        cover = np.maximum(cover, 1).reshape((-1,) + (1,) * (ndim - 1 - a))
        count = count * cover.astype(count.dtype)
    return x / count


@jax.jit
def _blocks_kernel(blocks):
    ndim = blocks.ndim // 2
    shape = tuple(n * b for n, b in zip(blocks.shape[:ndim], blocks.shape[ndim:]))
    return blocks.transpose(_interleave(ndim)).reshape(shape)


# ------------------------------------------------------------ montage pieces

_DTYPE_LIMITS = {"b": (0, 1), "f": (-1, 1), "c": (-1, 1)}


def _rescale_each(xp, stack, work_dtype, wide_dtype):
    """``skimage.exposure.rescale_intensity`` of every image of ``stack``
    (K, M, N, C), with the same arithmetic and casts as skimage's loop.

    The image is computed in ``work_dtype``; the scalars of the formula in
    ``wide_dtype`` (float64 where available), as skimage's Python floats are.
    """
    dtype = np.dtype(stack.dtype)
    if dtype.kind in "iu":
        lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    else:
        lo, hi = _DTYPE_LIMITS[dtype.kind]
    x = stack.astype(work_dtype)
    imin = xp.min(x, axis=(1, 2, 3), keepdims=True)
    imax = xp.max(x, axis=(1, 2, 3), keepdims=True)
    omin = xp.where(imin.astype(wide_dtype) >= 0, 0.0, float(lo)).astype(wide_dtype)
    spread = (float(hi) - omin).astype(work_dtype)
    span = imax.astype(wide_dtype) - imin.astype(wide_dtype)
    span = xp.where(span == 0, 1.0, span).astype(work_dtype)
    omin = omin.astype(work_dtype)
    x = xp.clip(x, imin, imax)
    stretched = (x - imin) / span * spread + omin
    flat = xp.clip(x, omin, xp.asarray(hi, dtype=work_dtype))
    return xp.where(imin != imax, stretched, flat).astype(dtype)


def _montage_mask(n_images, n_rows, n_cols, grid, pad) -> np.ndarray:
    """True where the montage shows a pixel of one of the images."""
    tiles = np.arange(grid[0] * grid[1]) < n_images
    tiles = np.broadcast_to(tiles[:, None, None, None], (tiles.size, n_rows, n_cols, 1))
    return _lay_out(np, tiles, grid, pad)


def _lay_out(xp, tiles, grid, pad):
    """Tile (R*C, M, N, ch) images row-major on an R x C grid with zero padding."""
    _, n_rows, n_cols, n_chan = tiles.shape
    x = xp.reshape(tiles, (grid[0], grid[1], n_rows, n_cols, n_chan))
    x = xp.pad(xp.transpose(x, (0, 2, 1, 3, 4)), ((0, 0), (pad, 0), (0, 0), (pad, 0), (0, 0)))
    x = xp.reshape(x, (grid[0] * (n_rows + pad), grid[1] * (n_cols + pad), n_chan))
    return xp.pad(x, ((0, pad), (0, pad), (0, 0)))


def _montage_kernel(xp, stack, fill, rescale: bool, grid, pad: int):
    n_images, n_rows, n_cols, n_chan = stack.shape
    if rescale:
        wide = np.float64 if xp is np else jax.dtypes.canonicalize_dtype(np.float64)
        work = stack.dtype if np.issubdtype(stack.dtype, np.inexact) else wide
        stack = _rescale_each(xp, stack, work, wide)
    if fill is None:
        fill = xp.mean(stack, axis=(0, 1, 2))
    fill = xp.reshape(xp.atleast_1d(xp.asarray(fill)).astype(stack.dtype)[:n_chan], (n_chan,))
    blank = xp.zeros((grid[0] * grid[1] - n_images, n_rows, n_cols, n_chan), stack.dtype)
    out = _lay_out(xp, xp.concatenate([stack, blank]), grid, pad)
    return xp.where(_montage_mask(n_images, n_rows, n_cols, grid, pad), out, fill)


_montage_jax = jax.jit(functools.partial(_montage_kernel, jnp), static_argnums=(2, 3, 4))


def _channel_axis_tuple(channel_axis):
    """skimage's reading of ``channel_axis``: one axis, maybe in a 1-tuple."""
    if np.isscalar(channel_axis):
        channel_axis = (channel_axis,)
    if len(channel_axis) > 1:
        raise ValueError("`channel_axis`: only a single channel axis is currently supported")
    if len(channel_axis) == 0:
        raise IndexError("`channel_axis` must name one axis, got an empty sequence")
    return channel_axis[0]


def _channel_axis_index(channel_axis, ndim: int) -> int:
    """The axis of an ``ndim``-D array that ``channel_axis`` names, in
    ``[0, ndim)``."""
    axis = _channel_axis_tuple(channel_axis)
    try:
        return normalize_axis_index(operator.index(axis), ndim)
    except TypeError:
        raise TypeError(f"`channel_axis` must be an integer, got {axis!r}") from None
    except np.exceptions.AxisError:
        raise np.exceptions.AxisError(
            f"`channel_axis` {axis} is out of bounds for an array of dimension {ndim}"
        ) from None


def _channels_last_shape(shape: tuple[int, ...], axis: int | None) -> tuple[int, ...]:
    """``shape`` with ``axis`` moved last; a unit axis appended for None."""
    if axis is None:
        return (*shape, 1)
    shape = list(shape)
    shape.append(shape.pop(axis))
    return tuple(shape)


def _channels_last(xp, arr, axis: int | None):
    """``arr`` with ``axis`` moved last; a unit axis appended for None."""
    return arr[..., None] if axis is None else xp.moveaxis(arr, axis, -1)


def _index(value, name: str) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"`{name}` must be an integer, got {value!r}") from None


# ---------------------------------------------------------------- public API


@docfiller(inverse="unview_as_blocks")
@_runs_plan
def view_as_blocks(arr_in: Array, block_shape: tuple[int, ...]) -> Array:
    """Block view of the input n-dimensional array (using re-striding).

    Blocks are non-overlapping views of the input array.

    Parameters
    ----------
    %(view_arr_in)s
    block_shape : tuple
        The shape of the block. Each dimension must divide evenly into the
        corresponding dimensions of `arr_in`.

    Returns
    -------
    arr_out : ndarray or jax.Array
        Block view of the input array, of shape ``arr_in.shape // block_shape
        + block_shape``. For a numpy array it is a zero-copy view; for a JAX
        array it is a new array (a reshape and a transpose).

    %(see_also_inverse)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import view_as_blocks
    >>> A = np.arange(4 * 4).reshape(4, 4)
    >>> B = view_as_blocks(A, block_shape=(2, 2))
    >>> B[0, 1]
    array([[2, 3],
           [6, 7]])
    >>> B[1, 0, 1, 1]
    np.int64(13)
    >>> view_as_blocks(np.arange(4 * 4 * 6).reshape(4, 4, 6), (1, 2, 2)).shape
    (4, 2, 3, 1, 2, 2)
    """
    if not isinstance(block_shape, tuple):
        raise TypeError("`block_shape` must be a tuple")
    _check_view_input(arr_in)
    try:
        block = tuple(operator.index(b) for b in block_shape)
    except TypeError:
        raise TypeError("`block_shape` must hold integers") from None
    if any(b <= 0 for b in block):
        raise ValueError("'block_shape' elements must be strictly positive")
    if len(block) != arr_in.ndim:
        raise ValueError("'block_shape' must have the same length as 'arr_in.shape'")
    if any(size % b for size, b in zip(arr_in.shape, block)):
        raise ValueError("'block_shape' is not compatible with 'arr_in'")

    grid = tuple(size // b for size, b in zip(arr_in.shape, block))
    return Planned(BlocksPlan(arr_in.ndim, grid, block), _run_view_as_blocks,
                   (arr_in,))


def _run_view_as_blocks(plan: BlocksPlan, arr_in: Array) -> Array:
    """The kernel of `view_as_blocks`: a strided view of a numpy array, a
    reshape and a transpose of a JAX array."""
    grid, block = plan.grid, plan.block
    if isinstance(arr_in, np.ndarray):
        strides = tuple(st * b for st, b in zip(arr_in.strides, block)) + arr_in.strides
        return as_strided(arr_in, shape=grid + block, strides=strides)
    split = arr_in.reshape(tuple(i for pair in zip(grid, block) for i in pair))
    ndim = plan.ndim
    return split.transpose(tuple(range(0, 2 * ndim, 2)) + tuple(range(1, 2 * ndim, 2)))


@docfiller
@_runs_plan
def view_as_windows(
    arr_in: Array,
    window_shape: int | tuple[int, ...],
    step: int | tuple[int, ...] = 1,
) -> Array:
    """Rolling window view of the input n-dimensional array.

    Windows are overlapping views of the input array, with adjacent windows
    shifted by `step` along each axis.

    Parameters
    ----------
    %(view_arr_in)s
    window_shape : integer or tuple of length arr_in.ndim
        Defines the shape of the elementary n-dimensional orthotope (better
        known as hyperrectangle) of the rolling window view. If an integer is
        given, the shape will be a hypercube of sidelength given by its value.
    step : integer or tuple of length arr_in.ndim
        Indicates step size at which extraction shall be performed. If an
        integer is given, then the step is uniform in all dimensions.

    Returns
    -------
    arr_out : ndarray or jax.Array
        (rolling) window view of the input array, of shape ``n + window_shape``
        with ``n = (arr_in.shape - window_shape) // step + 1``.

    See Also
    --------
    unview_as_windows : overlap-add the windows back onto the grid.

    Notes
    -----
    For a numpy array the result is a zero-copy view, as in scikit-image;
    any computation on it may still create an array far larger than the
    input.

    For a JAX array, which cannot be a strided view, the windows are
    materialised: the result holds ``prod(n) * prod(window_shape)`` elements,
    about ``prod(window_shape) / prod(step)`` times the input.  A
    (1024, 1024) float32 image cut into 16 x 16 windows takes 4 MiB at step
    16, 16 MiB at step 8 and 1 GiB at step 1.  Under ``jax.jit`` XLA may fuse
    the windows into their consumer instead of storing them.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import view_as_windows
    >>> A = np.arange(4 * 4).reshape(4, 4)
    >>> B = view_as_windows(A, (2, 2))
    >>> B[0, 1]
    array([[1, 2],
           [5, 6]])
    >>> view_as_windows(np.arange(10), 3, step=3)
    array([[0, 1, 2],
           [3, 4, 5],
           [6, 7, 8]])
    """
    _check_view_input(arr_in)
    ndim = arr_in.ndim
    if isinstance(window_shape, numbers.Number):
        window_shape = (window_shape,) * ndim
    if len(window_shape) != ndim:
        raise ValueError("`window_shape` is incompatible with `arr_in.shape`")
    step = _per_axis_step(step, ndim)

    arr_shape = np.array(arr_in.shape, dtype=np.intp)
    window = np.array(window_shape, dtype=np.intp).reshape(ndim)
    if ((arr_shape - window) < 0).any():
        raise ValueError("`window_shape` is too large")
    if ((window - 1) < 0).any():
        raise ValueError("`window_shape` is too small")

    window = tuple(int(w) for w in window)
    grid = tuple((size - w) // s + 1 for size, w, s in zip(arr_in.shape, window, step))
    return Planned(WindowsPlan(ndim, window, step, grid), _run_view_as_windows,
                   (arr_in,))


def _run_view_as_windows(plan: WindowsPlan, arr_in: Array) -> Array:
    """The kernel of `view_as_windows`: a strided view of a numpy array,
    the windows of a JAX array materialised."""
    if isinstance(arr_in, np.ndarray):
        strides = tuple(st * s for st, s in zip(arr_in.strides, plan.step)) + arr_in.strides
        return as_strided(arr_in, shape=plan.grid + plan.window, strides=strides)
    return _windows_kernel(arr_in, plan.window, plan.step)


@docfiller(forward="view_as_blocks")
@ndimage_function("blocks", reject_float16=False, planned=True)
def unview_as_blocks(blocks: ArrayLike) -> Array:
    """Put the blocks of :func:`view_as_blocks` back together.

    Parameters
    ----------
    blocks : array_like, shape ``n + b``
        An array of ``2 * k`` dimensions: ``k`` grid axes ``n``, then ``k``
        block axes ``b``, as returned by ``view_as_blocks``.

    Returns
    -------
    arr_out : ndarray or jax.Array, shape ``n * b``
        The array the blocks tile, with the dtype of `blocks`. A numpy (or
        array-like) input gives a new numpy array; a JAX array gives a JAX
        array (a transpose and a reshape, differentiable and traceable).

    %(see_also_forward)s

    Notes
    -----
    Patches of shape ``(V, H, C, PH, PW)`` cut from a ``(C, V*PH, H*PW)``
    image are the blocks of that image with a unit leading grid axis, so
    ``unview_as_blocks(patches[None])`` gives back the image. Reshaping the
    patches straight to an image scrambles it.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import unview_as_blocks, view_as_blocks
    >>> A = np.arange(4 * 6).reshape(4, 6)
    >>> B = view_as_blocks(A, (2, 3))
    >>> np.array_equal(unview_as_blocks(B), A)
    True
    >>> unview_as_blocks(np.arange(8).reshape(2, 1, 2, 2))
    array([[0, 1],
           [2, 3],
           [4, 5],
           [6, 7]])
    """
    if blocks.ndim % 2:
        raise ValueError(
            f"`blocks` must have an even number of dimensions (grid axes then block axes), "
            f"got shape {blocks.shape}"
        )
    ndim = blocks.ndim // 2
    plan = BlocksPlan(blocks.ndim, tuple(blocks.shape[:ndim]), tuple(blocks.shape[ndim:]))
    return Planned(plan, _run_unview_as_blocks, (blocks,))


def _run_unview_as_blocks(plan: BlocksPlan, blocks: Array) -> Array:
    """The kernel of `unview_as_blocks`."""
    return _blocks_kernel(blocks)


@docfiller(forward="view_as_windows")
@ndimage_function("windows", reject_float16=False, planned=True)
def unview_as_windows(
    windows: ArrayLike,
    step: int | tuple[int, ...] = 1,
    *,
    reduce: str = "mean",
    shape: tuple[int, ...] | None = None,
) -> Array:
    """Overlap-add the windows of :func:`view_as_windows` onto their grid.

    Parameters
    ----------
    windows : array_like, shape ``n + w``
        An array of ``2 * k`` dimensions: ``k`` grid axes ``n``, then ``k``
        window axes ``w``, as returned by ``view_as_windows``.
    step : int or tuple of ints, optional
        The step the windows were cut with, uniform or one per axis.
    reduce : {'mean', 'sum'}, optional
        How overlapping contributions combine. ``'mean'`` averages them, which
        inverts ``view_as_windows`` wherever a window covers the array (up to
        floating-point rounding). ``'sum'`` adds them: the adjoint of
        ``view_as_windows``.
    shape : tuple of ints, optional
        Shape of the result. By default the extent the windows cover,
        ``(n - 1) * step + w``; pass the original array's shape to restore
        the remainder the step left (those elements are 0). Each entry must
        lie in ``[(n - 1) * step + w, n * step + w - 1]``.

    Returns
    -------
    arr_out : ndarray or jax.Array
        The reassembled array. Its dtype is that of ``np.sum`` (for
        ``'sum'``) or ``np.mean`` (for ``'mean'``) over `windows`: floating
        dtypes are kept, integers are averaged in float64 and summed in the
        default integer. JAX arrays follow JAX's x64 setting.

    %(see_also_forward)s

    Notes
    -----
    No scatter and no loop over windows: along each axis the windows are
    combined with one shifted add per window offset modulo the step, at most
    ``ceil(w / step)`` of them.

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import unview_as_windows, view_as_windows
    >>> A = np.arange(10.0)
    >>> W = view_as_windows(A, 4, step=3)
    >>> unview_as_windows(W, 3)
    array([0., 1., 2., 3., 4., 5., 6., 7., 8., 9.])
    >>> unview_as_windows(W, 3, reduce="sum")
    array([ 0.,  1.,  2.,  6.,  4.,  5., 12.,  7.,  8.,  9.])
    >>> W = view_as_windows(A, 4, step=4)
    >>> unview_as_windows(W, 4, shape=(10,))
    array([0., 1., 2., 3., 4., 5., 6., 7., 0., 0.])
    """
    if windows.ndim % 2:
        raise ValueError(
            f"`windows` must have an even number of dimensions (grid axes then window axes), "
            f"got shape {windows.shape}"
        )
    ndim = windows.ndim // 2
    step = _per_axis_step(step, ndim, "the window axes of `windows`")
    if reduce not in ("mean", "sum"):
        raise ValueError(f"`reduce` must be 'mean' or 'sum', got {reduce!r}")
    if 0 in windows.shape:
        raise ValueError(f"`windows` must not have a zero-length axis, got shape {windows.shape}")
    grid, window = windows.shape[:ndim], windows.shape[ndim:]
    covered = tuple((n - 1) * s + w for n, w, s in zip(grid, window, step))
    if shape is None:
        shape = covered
    else:
        try:
            shape = tuple(operator.index(size) for size in shape)
        except TypeError:
            raise TypeError(f"`shape` must be a tuple of integers, got {shape!r}") from None
        if len(shape) != ndim or any(
            not c <= size < c + s for size, c, s in zip(shape, covered, step)
        ):
            raise ValueError(
                f"`shape` {shape} is incompatible with windows of shape {windows.shape} "
                f"and step {step}: each entry must lie in [(n - 1) * step + w, n * step + w - 1]"
            )

    return Planned(UnwindowsPlan(windows.ndim, step, reduce, shape),
                   _run_unview_as_windows, (windows,))


def _run_unview_as_windows(plan: UnwindowsPlan, windows: Array) -> Array:
    """The kernel of `unview_as_windows`."""
    return _unwindows_kernel(windows, plan.step, plan.reduce, plan.shape)


def _grid_pair(grid_shape: Any, convert: Callable[[Any], int]
               ) -> tuple[int, int]:
    """``grid_shape`` as (rows, columns), each entry passed to ``convert``:
    ``int`` for `montage` (skimage's montage takes any number),
    ``operator.index`` for `unmontage` (integers only)."""
    try:
        grid = tuple(convert(s) for s in grid_shape)
    except (TypeError, ValueError) as error:
        raise type(error)(
            f"`grid_shape` must be a pair of integers, got {grid_shape!r}"
        ) from None
    if len(grid) != 2:
        raise ValueError(
            f"`grid_shape` must be a pair (rows, columns), got {grid_shape!r}")
    return grid


@docfiller(inverse="unmontage")
@_runs_plan
def montage(
    arr_in: ArrayLike,
    fill: float | ArrayLike | str = "mean",
    rescale_intensity: bool = False,
    grid_shape: tuple[int, int] | None = None,
    padding_width: int = 0,
    *,
    channel_axis: int | None = None,
) -> Array:
    """Create a montage of several single- or multichannel images.

    Create a rectangular montage from an input array representing an ensemble
    of equally shaped single- (gray) or multichannel (color) images, laid out
    row by row; tiles after the last image are filled with `fill`.

    Parameters
    ----------
    arr_in : array_like, shape (K, M, N[, C])
        An array representing an ensemble of `K` images of equal shape.
    fill : float or array-like of floats or 'mean', optional
        Value to fill the padding areas and/or the extra tiles in the output
        array. Has to be `float` for single channel collections. For
        multichannel collections has to be an array-like of shape of number
        of channels. If `mean`, uses the mean value over all images.
    rescale_intensity : bool, optional
        Whether to rescale the intensity of each image as
        ``skimage.exposure.rescale_intensity`` does by default: from its
        (min, max) to the range of its dtype, [0, 1] for non-negative floats.
        `arr_in` itself is never modified.
    grid_shape : tuple, optional
        The desired grid shape for the montage `(ntiles_row, ntiles_column)`.
        The default aspect ratio is square.
    padding_width : int, optional
        The size of the spacing between the tiles and between the tiles and
        the borders.
    channel_axis : int or None, optional
        If None, the images are assumed to be grayscale (single channel).
        Otherwise, this parameter indicates which axis of the array
        corresponds to channels.

    Returns
    -------
    arr_out : ndarray or jax.Array, shape (R*(M+p)+p, C*(N+p)+p[, C])
        Output array with input images glued together (including padding
        `p`), channels last, with the dtype of `arr_in`. A JAX array in gives
        a JAX array out.

    %(see_also_inverse)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import montage
    >>> arr_in = np.arange(3 * 2 * 2).reshape(3, 2, 2)
    >>> montage(arr_in)
    array([[ 0,  1,  4,  5],
           [ 2,  3,  6,  7],
           [ 8,  9,  5,  5],
           [10, 11,  5,  5]])
    >>> montage(arr_in, grid_shape=(1, 3))
    array([[ 0,  1,  4,  5,  8,  9],
           [ 2,  3,  6,  7, 10, 11]])
    """
    if not is_jax_array(arr_in):
        arr_in = np.asarray(arr_in)
    axis = channel_axis
    if channel_axis is not None:
        axis = _channel_axis_tuple(channel_axis)
        if axis != -1:  # -1 is last already, whatever the rank
            axis = _channel_axis_index(channel_axis, arr_in.ndim)
    shape = arr_in.shape if axis == -1 else _channels_last_shape(arr_in.shape, axis)
    if len(shape) != 4:
        raise ValueError(
            "Input array has to be 3-dimensional for grayscale images, or "
            "4-dimensional with a `channel_axis` specified."
        )
    n_images, _, _, n_chan = shape

    if grid_shape:
        grid = _grid_pair(grid_shape, int)
    else:
        grid = (math.ceil(math.sqrt(n_images)),) * 2
    if min(grid) < 0:
        raise ValueError(f"`grid_shape` must not be negative, got {grid}")
    if grid[0] * grid[1] < n_images:
        raise IndexError(f"`grid_shape` {grid} has fewer tiles than the {n_images} images")
    pad = _index(padding_width, "padding_width")
    if pad < 0:
        raise ValueError(f"`padding_width` must be non-negative, got {pad}")

    if isinstance(fill, str):
        if fill != "mean":
            raise ValueError(f"`fill` must be a number, one per channel, or 'mean'; got {fill!r}")
        fill = None
    else:
        size = np.shape(fill)[0] if np.ndim(fill) else 1
        if size < n_chan:
            raise IndexError(f"`fill` needs one value per channel ({n_chan}), got {size}")
        if math.prod(np.shape(fill)[1:]) != 1:
            raise ValueError(f"`fill` must hold one value per channel, got shape {np.shape(fill)}")

    plan = MontagePlan(arr_in.ndim, None if axis is None else int(axis),
                       bool(rescale_intensity), grid, pad, fill is None)
    return Planned(plan, _run_montage, (arr_in, fill))


def _run_montage(plan: MontagePlan, arr_in: Array, fill: Any) -> Array:
    """The kernel of `montage`: jitted for a JAX array, numpy for numpy."""
    xp = jnp if is_jax_array(arr_in) else np
    if plan.channel_axis != -1:
        arr_in = _channels_last(xp, arr_in, plan.channel_axis)
    if xp is jnp:
        out = _montage_jax(arr_in, fill, plan.rescale, plan.grid, plan.pad)
    else:
        if plan.rescale and np.isnan(arr_in).any():
            warnings.warn(
                "One or more intensity levels are NaN. Rescaling will broadcast NaN "
                "to the full image.",
                stacklevel=4,  # the caller of montage: public, Planned.run, here
            )
        with np.errstate(invalid="ignore"):
            out = _montage_kernel(np, arr_in, fill, plan.rescale, plan.grid, plan.pad)
    return out if plan.channel_axis is not None else out[..., 0]


@docfiller(forward="montage")
@ndimage_function("arr_in", reject_float16=False, planned=True)
def unmontage(
    arr_in: ArrayLike,
    grid_shape: tuple[int, int],
    *,
    padding_width: int = 0,
    n_images: int | None = None,
    channel_axis: int | None = None,
) -> Array:
    """Cut a montage back into the stack of images :func:`montage` laid out.

    Parameters
    ----------
    arr_in : array_like, shape (R*(M+p)+p, C*(N+p)+p[, ch])
        A montage of an ``R x C`` grid of equally shaped images, separated and
        surrounded by `padding_width` pixels.
    grid_shape : tuple of 2 ints
        The grid ``(ntiles_row, ntiles_column)`` of the montage.
    padding_width : int, optional
        The spacing `p` between the tiles and around them.
    n_images : int, optional
        How many images to return, taken row by row; the default is every
        tile, ``R * C``. Use it to drop the fill tiles after the last image.
    channel_axis : int or None, optional
        The axis of `arr_in` that holds channels; None for a grayscale
        montage. The images come back with channels last, as montage
        takes them with ``channel_axis=-1``.

    Returns
    -------
    arr_out : ndarray or jax.Array, shape (K, M, N[, ch])
        The images, with the dtype of `arr_in`. A numpy (or array-like) input
        gives a new numpy array; a JAX array gives a JAX array.

    %(see_also_forward)s

    Examples
    --------
    >>> import numpy as np
    >>> from jaxndimage import montage, unmontage
    >>> stack = np.arange(3 * 2 * 2).reshape(3, 2, 2)
    >>> tiled = montage(stack, padding_width=1)
    >>> tiled.shape
    (7, 7)
    >>> np.array_equal(unmontage(tiled, (2, 2), padding_width=1, n_images=3), stack)
    True
    """
    axis = None
    if channel_axis is None:
        if arr_in.ndim != 2:
            raise ValueError(
                f"`arr_in` must be 2-dimensional for a grayscale montage, or 3-dimensional "
                f"with a `channel_axis` specified; got shape {arr_in.shape}"
            )
    else:
        axis = _channel_axis_index(channel_axis, arr_in.ndim)
        if arr_in.ndim != 3:
            raise ValueError(
                f"`arr_in` must be 3-dimensional with a `channel_axis`, got shape "
                f"{_channels_last_shape(arr_in.shape, axis)}"
            )
    rows, cols = _grid_pair(grid_shape, operator.index)
    if rows < 1 or cols < 1:
        raise ValueError(f"`grid_shape` must be positive, got {(rows, cols)}")
    pad = _index(padding_width, "padding_width")
    if pad < 0:
        raise ValueError(f"`padding_width` must be non-negative, got {pad}")
    height, width = _channels_last_shape(arr_in.shape, axis)[:2]
    if (height - pad) % rows or (width - pad) % cols:
        raise ValueError(
            f"a montage of shape {(height, width)} does not split into a `grid_shape` "
            f"{(rows, cols)} grid with `padding_width` {pad}"
        )
    n_rows, n_cols = (height - pad) // rows - pad, (width - pad) // cols - pad
    if n_rows < 0 or n_cols < 0:
        raise ValueError(f"`padding_width` {pad} is too large for `grid_shape` {(rows, cols)}")
    count = rows * cols if n_images is None else _index(n_images, "n_images")
    if not 0 <= count <= rows * cols:
        raise ValueError(f"`n_images` must lie in [0, {rows * cols}], got {count}")

    plan = UnmontagePlan(arr_in.ndim, axis, (rows, cols), pad, count)
    return Planned(plan, _run_unmontage, (arr_in,))


@functools.partial(jax.jit, static_argnums=0)
def _run_unmontage(plan: UnmontagePlan, x):
    """The kernel of `unmontage`."""
    x = _channels_last(jnp, x, plan.channel_axis)
    (rows, cols), pad, count = plan.grid, plan.pad, plan.count
    height, width, n_chan = x.shape
    n_rows, n_cols = (height - pad) // rows - pad, (width - pad) // cols - pad
    x = x[pad:, pad:].reshape(rows, n_rows + pad, cols, n_cols + pad, n_chan)
    x = x[:, :n_rows, :, :n_cols].transpose(0, 2, 1, 3, 4)
    x = x.reshape(rows * cols, n_rows, n_cols, n_chan)[:count]
    return x[..., 0] if plan.channel_axis is None else x
