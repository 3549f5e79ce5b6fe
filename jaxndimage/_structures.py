"""Structuring elements: `generate_binary_structure`, and the check of
the connectivity structures that `label` and `watershed_ift` take.

Structures are small numpy arrays that describe an operation (they decide
the program, they are not data), so everything here is plain numpy on
concrete values.  Morphology, the distance transforms and the measurements
import this module; it imports none of them.  (`iterate_structure` dilates
a structure with morphology's binary kernel, so it lives in
:mod:`jaxndimage._morphology`.)
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from jaxndimage._dispatch import as_numpy

__all__ = ["generate_binary_structure"]


def generate_binary_structure(rank: int, connectivity: int) -> np.ndarray:
    """A 3 x 3 x ... boolean structuring element of a given connectivity.

    Parameters
    ----------
    rank : int
        Number of dimensions of the structure.
    connectivity : int
        Elements up to a squared distance of `connectivity` from the centre
        belong to the structure: 1 (no diagonal neighbours) to `rank` (all).

    Returns
    -------
    output : numpy.ndarray of bool
        The structure, of shape ``(3,) * rank`` (a 0-d True for
        ``rank < 1``).  Structures are small and describe the operation, so
        this is a numpy array, as in SciPy.

    Examples
    --------
    >>> from jaxndimage import generate_binary_structure
    >>> generate_binary_structure(2, 1).astype(int)
    array([[0, 1, 0],
           [1, 1, 1],
           [0, 1, 0]])
    >>> generate_binary_structure(2, 2).all()
    np.True_
    """
    if connectivity < 1:
        connectivity = 1
    if rank < 1:
        return np.array(True, dtype=bool)
    output = np.fabs(np.indices([3] * rank) - 1)
    output = np.add.reduce(output, 0)
    return output <= connectivity


def _check_structure(structure: Any, ndim: int, error: type[Exception],
                     default: bool = True) -> np.ndarray:
    """``structure`` as a boolean numpy array of shape ``(3,) * ndim``
    (the face neighbours for None), refused as SciPy refuses it (``error``
    for a dimension other than 3)."""
    if structure is None:
        return generate_binary_structure(ndim, 1)
    if isinstance(structure, jax.core.Tracer):
        raise TypeError("structure: must be concrete (a numpy or JAX array "
                        "outside jit), as it decides the program")
    structure = np.asarray(as_numpy(structure), dtype=bool)
    if structure.ndim != ndim:
        raise RuntimeError("structure and input must have equal rank")
    if any(size != 3 for size in structure.shape):
        raise error("structure dimensions must be equal to 3")
    return structure
