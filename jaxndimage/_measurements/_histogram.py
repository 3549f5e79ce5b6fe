"""`histogram` over labelled regions: the shell (a statistic of its own,
whose body, :func:`._bodies._histogram_body`, counts per group and bin)
and its finish step, which builds SciPy's object array of histograms on
the host for an index array.
"""

from __future__ import annotations

import operator

import jax.numpy as jnp
import numpy as np

from jaxndimage._docstrings import docfiller
from jaxndimage._measurements._bodies import _STATISTIC_PARAMETERS, _measure
from jaxndimage._measurements._dispatch import _measurement
from jaxndimage._measurements._groups import (
    _check_comprehension_index,
    _float_dtype,
)
from jaxndimage._measurements._results import _host, _is_traced, _like


def _histogram_result(result, bound):
    counts, present = result
    index = bound.arguments.get("index")
    if bound.arguments.get("labels") is None or index is None:
        return counts
    if np.isscalar(index):
        if _is_traced(present):
            return counts
        return counts if bool(_host(present, "histogram", "")) else None
    why = "with an index array it returns an object array of histograms"
    # A 0-d index array gives one histogram in a 1-d array, as in SciPy.
    present_np = np.atleast_1d(_host(present, "histogram", why))
    counts_np = _host(counts, "histogram", why).reshape(
        present_np.shape + (-1,))
    output = np.zeros(present_np.shape, object)
    for position in np.ndindex(present_np.shape):
        if present_np[position]:
            output[position] = _like(counts, counts_np[position])
        else:
            output[position] = None
    return output


@docfiller
@_measurement(*_STATISTIC_PARAMETERS, finish=_histogram_result,
              results_64="iu")
def histogram(input, min, max, bins, labels=None, index=None):
    """The histogram of the values of an array, over labelled regions.

    Parameters
    ----------
    input : array_like
        Values to count.
    min, max : scalar
        The range of the bins, ``numpy.linspace(min, max, bins + 1)``;
        values outside it are not counted, `max` counts in the last bin.
    bins : int
        Number of bins.
    %(labels_index)s

    Returns
    -------
    hist : ndarray
        The counts (int64): one histogram, or for an index array an object
        array of histograms (None for labels that do not occur), built on
        the host (not traceable). A scalar `index` that does not occur gives
        None, as in SciPy (under a trace: zeros).

    Examples
    --------
    >>> import numpy as np
    >>> import jaxndimage
    >>> a = np.array([[0., 0.2146, 0.5962, 0.],
    ...               [0., 0.7778, 0., 0.],
    ...               [0., 0., 0., 0.],
    ...               [0., 0., 0.7181, 0.2787],
    ...               [0., 0., 0.6573, 0.3094]])
    >>> jaxndimage.histogram(a, 0, 1, 10)
    array([13,  0,  2,  1,  0,  1,  1,  2,  0,  0])
    """
    if labels is None and index is not None:
        raise ValueError("index without defined labels")
    if labels is not None and index is not None and not np.isscalar(index):
        _check_comprehension_index("histogram", index, labels)
    edges = jnp.asarray(np.linspace(min, max, operator.index(bins) + 1),
                        _float_dtype(np.float64))
    return _measure("histogram", input, labels, index, exact_index=True,
                    operands=(edges,))
