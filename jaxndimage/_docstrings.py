"""Parameter descriptions shared by many docstrings.

A docstring writes ``%(name)s`` where a shared description belongs and the
function is decorated with :func:`docfiller`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import TypeVar

__all__ = ["docfiller"]

F = TypeVar("F", bound=Callable)

_PARAMETERS = {
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
    "interpolation": """\
order : int, optional
    Order of the spline, 0 to 5. Default is 3.
mode : str, optional
    How `input` is extended past its edges: 'constant' (default),
    'grid-constant', 'nearest', 'reflect', 'grid-mirror', 'mirror',
    'wrap' or 'grid-wrap', with SciPy's meaning. 'constant' gives `cval`
    outside ``[0, n - 1]`` and interpolates inside it; 'grid-constant'
    interpolates everywhere with `cval` past the edges. 'wrap' is
    SciPy's legacy periodic extension of period ``n - 1``; 'grid-wrap'
    has period ``n``.
cval : scalar, optional
    Value past the edges for the constant modes. Default is 0.0.
prefilter : bool, optional
    Whether to compute the spline coefficients of `input` first
    (`spline_filter`, with the boundary condition of `mode`). Default
    is True. Without it an ``order > 1`` spline smooths `input`.""",
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
    "extra_arguments": """\
extra_arguments : sequence, optional
    Extra positional arguments passed to the callable.""",
    "extra_keywords": """\
extra_keywords : dict, optional
    Extra keyword arguments passed to the callable.""",
}


def docfiller(func: F) -> F:
    """Substitute the shared parameter descriptions into ``func.__doc__``."""
    doc = textwrap.dedent(func.__doc__ or "")
    lines = []
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.startswith("%(") and stripped.endswith(")s"):
            indent = line[: len(line) - len(line.lstrip())]
            text = _PARAMETERS[stripped[2:-2]]
            lines.extend(indent + part if part else part
                         for part in text.splitlines())
        else:
            lines.append(line)
    func.__doc__ = "\n".join(lines)
    return func
