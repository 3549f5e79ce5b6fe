"""Docstring texts shared by many functions, and the decorator that fills
them in.

A docstring line that holds only ``%(text)s`` is replaced by the shared text
``text``, indented as the placeholder is; a shared text may hold such lines
itself.  A text is one parameter (``input``), a block of parameters
(``size_footprint``), a whole section with its header, named after the
section (``parameters_...``, ``returns_...``, ``notes_...``,
``examples_...``, ``see_also_...``), or, named ``..._doc``, the docstring of
a pair of functions from its summary on.

Texts that differ only in a word or two take fields: ``%(field)s`` is
replaced by the keyword argument ``field`` of :func:`docfiller` (on a line of
its own it may span several lines), and ``%(name)s`` by the function's name.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import TypeVar, overload

__all__ = ["docfiller"]

F = TypeVar("F", bound=Callable)

#: The shared texts, by name.
SHARED: dict[str, str] = {
    # -- Parameters of many functions --------------------------------------
    "input": """\
input : array_like
    Array to filter: numpy, JAX (also inside ``jit``/``vmap``/``grad``) or
    any array-API array; the result is of the same kind.""",
    "axis": """\
axis : int, optional
    Axis of `input` to filter along. Default is -1.""",
    "output": """\
output : array or dtype, optional
    dtype of the result, or (for non-JAX input) an array to write the result
    into, which is then returned. JAX arrays are immutable: with JAX input,
    pass a dtype. Default: the dtype of `input`.""",
    "mode": """\
mode : {'reflect', 'grid-mirror', 'constant', 'grid-constant', 'nearest', \
'mirror', 'wrap', 'grid-wrap'}, optional
    How `input` is extended past its edges. Default is 'reflect'.

    - 'reflect' / 'grid-mirror': ``d c b a | a b c d | d c b a``
      (mirrored about the edge of the last sample).
    - 'mirror': ``d c b | a b c d | c b a`` (mirrored about the centre of
      the last sample).
    - 'nearest': ``a a a | a b c d | d d d``.
    - 'wrap' / 'grid-wrap': ``b c d | a b c d | a b c`` (periodic).
    - 'constant' / 'grid-constant': ``k k k | a b c d | k k k`` with
      ``k = cval``.""",
    "mode_multiple": """\
mode : str or sequence of str, optional
    How `input` is extended past its edges, one of 'reflect',
    'grid-mirror', 'constant', 'grid-constant', 'nearest', 'mirror', 'wrap',
    'grid-wrap' (see `correlate1d`), or one mode per filtered axis.
    Default is 'reflect'.""",
    "cval": """\
cval : scalar, optional
    Value past the edges for the constant modes. Default is 0.0.""",
    "origin": """\
origin : int, optional
    Shift of the filter relative to the centre of each sample; positive
    values shift the filter to the right. Default is 0.""",
    "origin_multiple": """\
origin : int or sequence of int, optional
    Shift of the filter relative to the centre of each sample, per axis;
    positive values shift it towards higher indices. Default is 0.""",
    "axes": """\
axes : tuple of int or None, optional
    Axes to filter along; None (default) means all. Per-axis sequences given
    for other parameters then have one entry per axis in `axes`.""",
    "extra_arguments": """\
extra_arguments : sequence, optional
    Extra positional arguments passed to the callable.""",
    "extra_keywords": """\
extra_keywords : dict, optional
    Extra keyword arguments passed to the callable.""",
    "extra_arguments_keywords": "%(extra_arguments)s\n%(extra_keywords)s",

    # -- Cross references --------------------------------------------------
    "see_also_scipy": """\
See Also
--------
scipy.ndimage.%(name)s : the reference implementation.""",
    # Fields `inverse` and `forward`: the function that undoes this one,
    # and the one this one undoes.
    "see_also_inverse": "See Also\n--------\n%(inverse)s : the inverse.",
    "see_also_forward": "See Also\n--------\n%(forward)s : the forward operation.",

    # -- Filters: parameters -----------------------------------------------
    "size_1d": """\
size : int
    Length of the window.""",
    "size_footprint": """\
size : int or sequence of int, optional
    Shape of a rectangular window (one size per filtered axis, or one for
    all). Ignored, with a warning, when `footprint` is given.
footprint : array_like of bool, optional
    The window as a boolean mask over its bounding box; only the True
    samples take part. Either `size` or `footprint` must be given.""",
    "options_1d": "%(axis)s\n%(output)s\n%(mode)s\n%(cval)s\n%(origin)s",
    "output_modes_cval": "%(output)s\n%(mode_multiple)s\n%(cval)s",
    "cval_origin_axes": "%(cval)s\n%(origin_multiple)s\n%(axes)s",
    "generic_derivative_options": "%(output_modes_cval)s\n%(extra_arguments_keywords)s\n%(axes)s",
    "gaussian_derivative_options": """\
%(output_modes_cval)s
%(axes)s
**kwargs
    Passed on to `gaussian_filter` (``truncate``, ``radius``).""",
    # The window of minimum_filter and maximum_filter.
    "extreme_window": """\
%(size_footprint)s
%(output)s
%(mode_multiple)s
    A sequence of modes needs a rectangular window.
%(cval_origin_axes)s""",
    # The window of rank_filter and percentile_filter (field `parameter`).
    "rank_window": """\
%(size_footprint)s
%(output)s
%(mode_multiple)s
    A sequence of modes is only accepted when the %(parameter)s makes this
    a minimum or maximum filter over a rectangular window.
%(cval_origin_axes)s""",

    # -- Filters: sections -------------------------------------------------
    "parameters_filter1d": """\
Parameters
----------
%(input)s
%(size_1d)s
%(options_1d)s""",
    "returns_filtered": """\
Returns
-------
result : array
    Filtered array of the shape of `input`.""",
    # The Notes of rank_filter and median_filter.
    "notes_rank_filter": """\
Notes
-----
Windows of up to 64 samples select with a pruned comparator network
that XLA fuses into one loop; larger ones sort. The result for windows
holding NaN is not specified.""",

    # -- Filters: docstrings of pairs of functions -------------------------
    # correlate1d and convolve1d (fields `verb` and `operation`).
    "weights1d_doc": """\
%(verb)s an array with 1-D weights along one axis.

Parameters
----------
%(input)s
weights : array_like
    1-D sequence of weights.
%(options_1d)s

Returns
-------
result : array
    The %(operation)s, of the same shape as `input`.""",
    # correlate and convolve (fields `operation` and `index`, the index of
    # `input` in the sum).
    "kernel_doc": """\
Multidimensional %(operation)s with a kernel of weights.

Parameters
----------
%(input)s
weights : array_like
    Kernel, with one dimension per filtered axis.
%(output)s
%(mode)s
%(cval_origin_axes)s

Returns
-------
result : array
    ``sum_j input[%(index)s] * weights[j]`` at every ``i``, where ``c`` is
    the kernel centre shifted by `origin`.""",
    # minimum_filter1d and maximum_filter1d (fields `title`, "Minimum" or
    # "Maximum", and `example`, the example's result).
    "extreme_filter1d_doc": """\
%(title)s of `size` consecutive samples along one axis.

%(parameters_filter1d)s

%(returns_filtered)s

Notes
-----
``ceil(log2(size))`` comparisons per sample, exact for every dtype.

Examples
--------
>>> from jaxndimage import %(name)s
>>> %(name)s([2, 8, 0, 4, 1, 9, 9, 0], size=3)
array([%(example)s])""",
    # minimum_filter and maximum_filter up to the end of their first example
    # (fields `kind`, "minimum" or "maximum", and `example`, the example's
    # result).
    "extreme_filter_doc": """\
Multidimensional %(kind)s filter.

Parameters
----------
%(input)s
%(extreme_window)s

%(returns_filtered)s

Notes
-----
Rectangular windows are separable (one 1-D pass per axis, each
``ceil(log2(size))`` comparisons per sample); other footprints are
decomposed into runs along the last axis. The result for windows holding
NaN is not specified (NaN propagates here).

Examples
--------
>>> import numpy as np
>>> from jaxndimage import %(name)s
>>> a = np.array([[5, 3, 8], [1, 9, 4], [7, 2, 6]])
>>> %(name)s(a, size=2)
%(example)s""",
    # sobel and prewitt (fields `title`, the smoothing weights `smoothing`
    # and `edge`, the example's result).
    "derivative_and_smoothing_doc": """\
%(title)s derivative along one axis.

The central difference ``[-1, 0, 1]`` along `axis`, smoothed with
``[%(smoothing)s]`` along every other axis.

Parameters
----------
%(input)s
%(axis)s
%(output_modes_cval)s

%(returns_filtered)s

Examples
--------
>>> import numpy as np
>>> from jaxndimage import %(name)s
>>> image = np.zeros((4, 4)); image[:, 2:] = 1.0
>>> %(name)s(image, axis=1)
array([[0., %(edge)s, %(edge)s, 0.],
       [0., %(edge)s, %(edge)s, 0.],
       [0., %(edge)s, %(edge)s, 0.],
       [0., %(edge)s, %(edge)s, 0.]])""",

    # -- Fourier filters ---------------------------------------------------
    "fourier_input": """\
input : array_like
    The transformed array (numpy, JAX or any array-API array).""",
    "fourier_n_axis": """\
n : int, optional
    -1 (default) for a complex transform along every axis; otherwise
    the length of the original axis `axis` of a real transform.
axis : int, optional
    Axis of the real transform. Default is -1.""",
    # n, axis and output of the filters that may return a real array.
    "fourier_output_forms": """\
A dtype may be given in any form numpy reads (``np.float32``,
``np.dtype('float32')``, ``'float32'``, ``float``); SciPy takes only
numpy's scalar types, such as ``np.float32``, and raises for the others
(a deliberate difference, listed in the README).""",
    "fourier_filter_options": """\
%(fourier_n_axis)s
output : array or dtype, optional
    complex64, complex128, float32 or float64 (an array of one of these,
    for non-JAX input). Default: the input dtype for complex64,
    complex128 and float32, otherwise float64.
    %(fourier_output_forms)s""",
    "returns_fourier_filtered": """\
Returns
-------
%(name)s : array
    The filtered transform.""",

    # -- Interpolation and spline prefilters -------------------------------
    "spline_order": """\
order : int, optional
    Order of the spline, 0 to 5. Default is 3.""",
    "interpolation": """\
%(spline_order)s
mode : str, optional
    How `input` is extended past its edges: 'constant' (default),
    'grid-constant', 'nearest', 'reflect', 'grid-mirror', 'mirror',
    'wrap' or 'grid-wrap', with SciPy's meaning. 'constant' gives `cval`
    outside ``[0, n - 1]`` and interpolates inside it; 'grid-constant'
    interpolates everywhere with `cval` past the edges. 'wrap' is
    SciPy's legacy periodic extension of period ``n - 1``; 'grid-wrap'
    has period ``n``.
%(cval)s
prefilter : bool, optional
    Whether to compute the spline coefficients of `input` first
    (`spline_filter`, with the boundary condition of `mode`). Default
    is True. Without it an ``order > 1`` spline smooths `input`.""",
    "returns_transformed": """\
Returns
-------
%(name)s : array
    The transformed input.""",
    "spline_output_mode": """\
output : array or dtype, optional
    dtype of the result (default float64; float32 when JAX's x64 mode
    is off), or for non-JAX input an array to write it into.
mode : str, optional
    The boundary condition the coefficients are exact for, as in
    `map_coordinates`. Default is 'mirror'.""",
    "returns_spline_coefficients": """\
Returns
-------
%(name)s : array
    The coefficients, of the shape of `input`.""",

    # -- Measurements ------------------------------------------------------
    "labels": """\
labels : array_like, optional
    Labels of the regions of `input`, of its shape (or broadcastable to
    it). Without `labels` the whole of `input` is measured.""",
    "index": """\
index : int or array_like of int, optional
    Label, or labels, of the regions to measure: a scalar gives one result,
    an array one result per element (with SciPy's value for labels that do
    not occur). Default None: all points where `labels` > 0, as one
    region. Used only with `labels`.""",
    "labels_index": "%(labels)s\n%(index)s",
    "input_values": "input : array_like\n    Values.",
    # The docstring of each per-label statistic (fields: `summary`,
    # `input_doc`, and the sections `returns` and `examples`).
    "statistic_doc": """\
%(summary)s

Parameters
----------
input : array_like
    %(input_doc)s
%(labels_index)s

Returns
-------
%(returns)s

%(examples)s""",
    # The sections of minimum and maximum (fields: `numpy`, "min" or "max",
    # and the example results `per_label` and `whole`).
    "summary_extremum":
        "The %(name)s of the values of an array, over labelled regions.",
    "returns_extremum": """\
%(name)s : scalar or ndarray
    Of `input`'s dtype: one %(name)s (a ValueError for an empty region,
    as numpy's ``%(numpy)s``), or one per element of `index` (0 for labels
    that do not occur).""",
    "examples_extremum": """\
%(examples_measurements)s
>>> labels, n = jaxndimage.label(a)
>>> jaxndimage.%(name)s(a, labels=labels, index=np.arange(1, n + 1))
%(per_label)s
>>> jaxndimage.%(name)s(a)
%(whole)s""",
    # The sections of minimum_position and maximum_position (fields:
    # `kind`, "minimum" or "maximum", and the example results `whole` and
    # `per_label`).
    "summary_position":
        "The position of the %(kind)s of an array, over labelled regions.",
    "returns_position": """\
position : tuple or list of tuples
    Coordinates of the first %(kind)s in raster order: one tuple, or a
    list with one per element of `index` (all zeros for labels that do
    not occur).""",
    "examples_position": """\
%(examples_measurements)s
>>> jaxndimage.%(name)s(a)
%(whole)s
>>> labels = np.array([[0, 1, 2, 3]] * 4)
>>> jaxndimage.%(name)s(a, labels, [1, 3])
%(per_label)s""",
    # The start of many Examples: the array `a` of SciPy's examples.
    "examples_measurements": """\
Examples
--------
>>> import numpy as np
>>> import jaxndimage
>>> a = np.array([[1, 2, 0, 0],
...               [5, 3, 0, 4],
...               [0, 0, 0, 7],
...               [9, 3, 0, 0]])""",

    # -- Binary morphology -------------------------------------------------
    "binary_input": """\
input : array_like
    Binary image (non-zero is True): numpy, JAX (also inside
    ``jit``/``vmap``) or any array-API array.""",
    "binary_structure": """\
structure : array_like, optional
    Structuring element (non-zero is True); default: connectivity one
    (`generate_binary_structure` with rank ``len(axes)``).""",
    "binary_mask": """\
mask : array_like, optional
    Only samples where `mask` is True are modified, in every iteration.""",
    "binary_output": """\
output : array or dtype, optional
    An array (non-JAX input) to write the result into; a dtype is
    ignored, as in SciPy: the result is bool.""",
    "border_value": """\
border_value : int, optional
    Value past the edges (0 or 1). Default is 0.""",
    "binary_origin": """\
origin : int or sequence of int, optional
    Placement of the structure, per axis. Default is 0.""",
    "binary_brute_force": """\
brute_force : bool, optional
    Accepted for compatibility; every iteration runs over the whole
    array on device, and the result is the same.""",
    # binary_erosion and binary_dilation (field `operations`, "erosions" or
    # "dilations").
    "parameters_binary_erosion": """\
Parameters
----------
%(binary_input)s
%(binary_structure)s
iterations : int, optional
    Number of %(operations)s (default 1); below 1, repeated until nothing
    changes.
%(binary_mask)s
output : array or dtype, optional
    An array (non-JAX input) to write the result into, which is then
    returned. As in SciPy, a dtype is ignored: the result is bool.
%(border_value)s
%(binary_origin)s
%(binary_brute_force)s
%(axes)s""",
    # binary_opening and binary_closing (fields `first` and `second`, the
    # operations in the order they are applied).
    "parameters_binary_opening": """\
Parameters
----------
%(binary_input)s
%(binary_structure)s
iterations : int, optional
    The %(first)s, then the %(second)s, are each repeated `iterations`
    times (default 1); below 1, until nothing changes.
%(binary_output)s
%(binary_origin)s
%(binary_mask)s
%(border_value)s
%(binary_brute_force)s
%(axes)s""",
    # The results of binary_erosion and binary_dilation (field `result`,
    # "eroded" or "dilated").
    "returns_binary_erosion": """\
Returns
-------
%(name)s : array of bool
    The %(result)s image (the dtype of `output` when an array is given).""",
    # The results of binary_opening and binary_closing (field `result`,
    # "opened" or "closed").
    "returns_binary_opening": """\
Returns
-------
%(name)s : array of bool
    The %(result)s image.""",
    # binary_opening and binary_closing from the summary on (fields
    # `operation`, `first`, `second` and `result`; `effect`, a sentence;
    # `examples`, the section).
    "binary_opening_doc": """\
Multidimensional binary %(operation)s: the %(second)s of the %(first)s.

%(effect)s

%(parameters_binary_opening)s

%(returns_binary_opening)s

%(examples)s""",
    "examples_binary_opening": """\
Examples
--------
>>> import numpy as np
>>> from jaxndimage import binary_opening
>>> a = np.zeros((5, 5), dtype=int)
>>> a[1:4, 1:4] = 1
>>> a[4, 4] = 1
>>> binary_opening(a).astype(int)
array([[0, 0, 0, 0, 0],
       [0, 0, 1, 0, 0],
       [0, 1, 1, 1, 0],
       [0, 0, 1, 0, 0],
       [0, 0, 0, 0, 0]])""",
    # The example of binary_closing and binary_fill_holes: a square with a
    # hole.
    "examples_square_with_hole": """\
Examples
--------
>>> import numpy as np
>>> from jaxndimage import %(name)s
>>> a = np.zeros((5, 5), dtype=int)
>>> a[1:4, 1:4] = 1
>>> a[2, 2] = 0
>>> %(name)s(a).astype(int)
array([[0, 0, 0, 0, 0],
       [0, 1, 1, 1, 0],
       [0, 1, 1, 1, 0],
       [0, 1, 1, 1, 0],
       [0, 0, 0, 0, 0]])""",

    # -- Grey morphology ---------------------------------------------------
    "grey_size_footprint": """\
size : int or sequence of int, optional
    Shape of a flat, full structuring element. Optional when
    `footprint` or `structure` is given.
footprint : array_like, optional
    The samples (non-zero) of a flat structuring element.""",
    "grey_options": "%(output)s\n%(mode_multiple)s\n%(cval_origin_axes)s",
    "parameters_grey": """\
Parameters
----------
%(input)s
%(grey_size_footprint)s
structure : array_like, optional
    A non-flat structuring element.
%(grey_options)s""",
    # grey_erosion and grey_dilation (field `use`, how the structure
    # applies: "subtracted" or "added").
    "parameters_grey_erosion": """\
Parameters
----------
%(input)s
%(grey_size_footprint)s
structure : array_like, optional
    A non-flat structuring element, %(use)s in floating point.
%(grey_options)s""",
    # grey_erosion and grey_dilation from the summary on (fields `summary`,
    # which may span paragraphs; `use`; `result`; `example`, the result of
    # the example).
    "grey_erosion_doc": """\
%(summary)s

%(parameters_grey_erosion)s

%(returns_grey)s

Examples
--------
>>> import numpy as np
>>> from jaxndimage import %(name)s
>>> a = np.array([[5, 3, 8], [1, 9, 4], [7, 2, 6]])
>>> %(name)s(a, size=(2, 2))
%(example)s""",
    # The dtype of white_tophat and black_tophat.
    "tophat_dtype": """\
In the output dtype (``uint8`` wraps around); boolean images use XOR.""",
    # The dtype of morphological_gradient and morphological_laplace.
    "combination_dtype": """\
Each step is computed in the input's dtype (``uint8`` wraps around), or
in that of an `output` array; as in SciPy, an `output` dtype is
ignored.""",
    # The grey operations that combine an erosion and a dilation, from the
    # summary on (fields `summary`, which may span paragraphs; `result`; and
    # a 1-D example: `call`, the arguments, and `example`, the result).
    "grey_combination_doc": """\
%(summary)s

%(parameters_grey)s

%(returns_grey)s

Examples
--------
>>> import numpy as np
>>> from jaxndimage import %(name)s
>>> %(name)s(%(call)s)
%(example)s""",
    # The result of a grey operation (field `result`, "eroded image", ...).
    "returns_grey": """\
Returns
-------
%(name)s : array
    The %(result)s.""",

    # -- Distance transforms -----------------------------------------------
    "distance_input": """\
input : array_like
    Input; non-zero elements are foreground. numpy, JAX (also inside
    ``jit``/``vmap``) or any array-API array; the results are of the
    same kind.""",
    "return_distances_indices": """\
return_distances : bool, optional
    Whether to compute the distance transform. Default is True.
return_indices : bool, optional
    Whether to compute the feature transform. Default is False.""",
    "indices_array": """\
indices : int32 ndarray, optional
    A numpy array to write the feature transform into instead of
    returning it (`return_indices` must be True), of shape
    ``(input.ndim,) + input.shape``.""",
    # return_distances to indices of distance_transform_cdt and _edt (field
    # `dtype`, the dtype of the distances).
    "distance_outputs": """\
%(return_distances_indices)s
distances : %(dtype)s ndarray, optional
    A numpy array to write the distances into instead of returning them
    (`return_distances` must be True), of the shape of `input`.
%(indices_array)s""",
    "indices_returned": """\
indices : int32 ndarray, optional
    The feature transform. Returned only when `return_indices` is True
    and `indices` is not supplied.""",

    # -- Patches and divergence --------------------------------------------
    "view_arr_in": """\
arr_in : ndarray or jax.Array, shape (M[, ...])
    Input array.""",
    "divergence_f": """\
f : callable
    JAX-traceable function mapping an array shaped like ``x`` to a real
    floating array of the same shape.""",
    "divergence_div": """\
div : array
    Shape ``(x.shape[batch_axis],)``, or ``()`` for ``batch_axis=None``.""",
}


_PLACEHOLDER = re.compile(r"%\((\w+)\)s")


def _expand(text: str, texts: Mapping[str, str], indent: str = "") -> list[str]:
    """The lines of ``text``, each line that is only a placeholder replaced
    by its text (recursively), all indented by ``indent``."""
    lines = []
    for line in text.splitlines():
        own_indent = line[: len(line) - len(line.lstrip())]
        match = _PLACEHOLDER.fullmatch(line.strip())
        if match and match[1] in texts:
            lines.extend(_expand(texts[match[1]], texts, indent + own_indent))
        else:
            lines.append(indent + line if line else line)
    return lines


@overload
def docfiller(func: F, /) -> F: ...


@overload
def docfiller(**fields: str) -> Callable[[F], F]: ...


def docfiller(func: F | None = None, /, **fields: str) -> F | Callable[[F], F]:
    """Fill the shared texts and the fields into the docstring of ``func``.

    ``@docfiller`` fills shared texts only; ``@docfiller(kind="minimum")``
    also fills the field ``kind``. An unknown name raises KeyError when the
    module is imported.
    """

    def fill(func: F) -> F:
        texts = {**SHARED, "name": func.__name__, **fields}

        def inline(match: re.Match[str]) -> str:
            if match[1] not in texts:
                raise KeyError(f"{func.__name__}: no shared docstring text "
                               f"or field {match[1]!r}")
            return texts[match[1]]

        doc = "\n".join(_expand(inspect.cleandoc(func.__doc__ or ""), texts))
        func.__doc__ = _PLACEHOLDER.sub(inline, doc)
        return func

    return fill if func is None else fill(func)
