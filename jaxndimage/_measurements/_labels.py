"""`label`: its plan, its shell and kernel, and the public function.

The shell validates the structure (:func:`jaxndimage._structures._check_structure`)
and the output dtype in SciPy's order and plans the call (a
:class:`LabelPlan`); the kernel is the run-based union-find of
:mod:`jaxndimage._labelling` on a CPU, the propagation of
:mod:`jaxndimage._propagation` on accelerators (`_algorithms`); both
traceable.  The public function writes
``output=`` arrays and hands dask input to the block-wise merge of
:mod:`._label_dask`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxndimage import _distributed
from jaxndimage._algorithms import algorithm
from jaxndimage._canvas import like_input
from jaxndimage._dispatch import (
    as_array,
    as_numpy,
    is_jax_array,
    ndimage_function,
    to_jax,
)
from jaxndimage._docstrings import docfiller
from jaxndimage._labelling import (
    _backward_offsets,
    _label_runs,
    _max_exact,
    label_index_dtype,
)
from jaxndimage._measurements._dispatch import MeasurementPlan
from jaxndimage._measurements._label_dask import _label_dask
from jaxndimage._measurements._results import _is_traced, _python_int
from jaxndimage._plans import Planned
from jaxndimage._propagation import propagated_labels
from jaxndimage._structures import _check_structure
from jaxndimage._support import output_dtype


@dataclasses.dataclass(frozen=True)
class LabelPlan(MeasurementPlan):
    """`label`: features connected through the structure's ``offsets``
    (its first half, :func:`_backward_offsets`), counted in
    ``index_dtype`` and labelled in ``dtype``; by propagation where
    ``propagated``, else by union-find (the choice of `_algorithms`)."""

    offsets: tuple[tuple[int, ...], ...]
    index_dtype: np.dtype
    dtype: np.dtype
    propagated: bool = False


def _labels_fit(dtype: np.dtype) -> bool:
    """Whether SciPy's `label` writes labels of ``dtype``: bool, integers,
    float32 and float64."""
    return dtype.kind in "biu" or dtype.newbyteorder("=") in (np.float32,
                                                             np.float64)


def _int32_labels(arguments: Mapping[str, Any]) -> str:
    """``results_64`` of `label`: nothing widened, as SciPy's labels are
    int32 whatever the input's dtype (or ``output=``'s)."""
    return ""


@ndimage_function("input", reject_float16=False, planned=True,
                  results_64=_int32_labels)
def _label(input, structure=None, output=None):
    """The shell of `label`: the labels and their count (a JAX integer)."""
    input = as_array(input)
    if input.dtype.kind == "c":
        raise TypeError("Complex type not supported")
    structure = _check_structure(structure, input.ndim, ValueError)
    if not np.array_equal(structure, structure[(slice(None, None, -1),)
                                                * structure.ndim]):
        raise AssertionError("structure: Structuring element is not "
                             "symmetric")
    index_dtype = label_index_dtype(input.size)
    if (output is not None and input.ndim and input.size
            and not _labels_fit(np.dtype(output))):
        # SciPy's labelling loop has no signature for it (and 0-d or
        # empty input does not reach it).
        raise TypeError(f"output: labels of {np.dtype(output)} are not "
                        "supported (as in SciPy)")
    if output is not None and not np.dtype(output).isnative:
        raise ValueError("output: labels of non-native byte order are not "
                         "supported (as in SciPy)")
    dtype = output_dtype(output, index_dtype)
    if input.ndim and input.size and input.dtype == np.float16:
        # SciPy's labelling loop has no float16.
        raise TypeError("input: float16 is not supported (No matching "
                        "signature found)")
    plan = LabelPlan(input.ndim, _backward_offsets(structure), index_dtype,
                     dtype, algorithm("label") == "propagation")
    return Planned(plan, _run_label, (input,))


def _run_label(plan: LabelPlan, input: Any) -> tuple[jax.Array, jax.Array]:
    """The kernel of a :class:`LabelPlan`; RuntimeError (outside a trace)
    where ``plan.dtype`` cannot hold the largest label."""
    given, input = input, to_jax(input)
    if input.ndim == 0:
        count = (input != 0).astype(plan.index_dtype)
        return count.astype(plan.dtype), count
    if input.size == 0:
        return (jnp.zeros(input.shape, plan.dtype),
                jnp.zeros((), plan.index_dtype))
    if plan.propagated:
        labels, count = propagated_labels(
            input, offsets=plan.offsets, index_dtype=plan.index_dtype,
            steps=algorithm("run scans"))
    else:
        labels, count = _label_runs(input, plan.offsets, plan.index_dtype)
    if (plan.dtype != np.bool_ and not _is_traced(count)
            and int(count) > _max_exact(plan.dtype)):
        # (SciPy's labelling loop writes labels into bools as true.)
        raise RuntimeError("insufficient bit-depth in requested output type")
    # Host labels (concrete CPU input) are cast by numpy, not by an eager
    # JAX operation compiled for the shape.
    labels = labels != 0 if plan.dtype == np.bool_ else labels.astype(
        plan.dtype, copy=False)
    if isinstance(labels, np.ndarray):
        labels = like_input(labels, given)
    return labels, count


def _is_output_array(output: Any) -> bool:
    return (output is not None and hasattr(output, "shape")
            and hasattr(output, "dtype") and not isinstance(output, type))


@docfiller
def label(input, structure=None, output=None):
    """Label the connected features of an array.

    Every connected set of non-zero points is a feature; features are
    numbered 1, 2, ... in the order of their first point in raster order, as
    SciPy numbers them.

    Parameters
    ----------
    input : array_like
        Array to label: numpy, JAX (also inside ``jit``/``vmap``) or any
        array-API array. Non-zero points are features.
    structure : array_like, optional
        Which neighbours are connected: a symmetric boolean array of shape
        ``(3,) * input.ndim``. Default: the face neighbours
        (``generate_binary_structure(input.ndim, 1)``).
    output : dtype or array, optional
        dtype of the labels (default int32, int64 for arrays of 2**31 points
        or more), or (for non-JAX input) an array of `input`'s shape to
        write them into; then only the number of features is returned.

    Returns
    -------
    label : ndarray
        The labels, 0 for the background (only when `output` is not an
        array).
    num_features : int
        The number of features: a Python int, or a JAX integer for JAX
        input.

    Raises
    ------
    RuntimeError
        If `output`'s dtype cannot hold the largest label (checked outside a
        trace), or `structure` has another rank.
    ValueError
        If a dimension of `structure` is not 3, or an `output` array has
        another shape.

    Examples
    --------
    >>> import numpy as np
    >>> import jaxndimage
    >>> a = np.array([[0, 0, 1, 1, 0, 0],
    ...               [0, 0, 0, 1, 0, 0],
    ...               [1, 1, 0, 0, 1, 0],
    ...               [0, 0, 0, 1, 0, 0]])
    >>> labels, n = jaxndimage.label(a)
    >>> n
    4
    >>> labels
    array([[0, 0, 1, 1, 0, 0],
           [0, 0, 0, 1, 0, 0],
           [2, 2, 0, 0, 3, 0],
           [0, 0, 0, 4, 0, 0]], dtype=int32)
    >>> jaxndimage.label(a, structure=np.ones((3, 3)))[1]
    2
    """
    if _distributed.is_dask_array(input):
        if _is_output_array(output):
            raise TypeError("output: pass a dtype for dask input")
        return _label_dask(input, structure, output, label=label)
    if _is_output_array(output):
        if is_jax_array(output):
            raise TypeError(
                "output: JAX arrays are immutable, so an output array cannot "
                "be written in place; pass a dtype instead (output=jnp.int32)"
                " and use the returned array")
        if tuple(output.shape) != tuple(np.shape(input)):
            raise ValueError("output shape not correct")
        labels, count = _label(input, structure, as_numpy(output).dtype)
        output[...] = labels
        return _python_int(count)
    labels, count = _label(input, structure, output)
    return labels, _python_int(count)
