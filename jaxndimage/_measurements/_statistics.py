"""The twelve per-label statistics: `sum_labels` (`sum`), `mean`,
`variance`, `standard_deviation`, `minimum`, `maximum`, `median`,
`minimum_position`, `maximum_position`, `extrema` and `center_of_mass`.

Each is made by one factory, :func:`_statistic`, with SciPy's signature
``(input, labels=None, index=None)``: the shell :func:`._bodies._measure`
with the statistic's body (:mod:`._bodies`), its docstring filled from
:mod:`jaxndimage._docstrings`, and a *finish* step that turns the arrays
into SciPy's structure (numpy's ValueError for the minimum of an empty
region, positions as tuples).  `sum_labels`, `sum`, `mean` and
`center_of_mass` add up per-block sums for dask input (:func:`_summed`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import jax.numpy as jnp
import numpy as np

from jaxndimage._dispatch import (
    as_numpy,
    family_member,
    host_dtype,
    is_jax_array,
    wide_kind,
)
from jaxndimage._measurements._bodies import _STATISTIC_PARAMETERS, _measure
from jaxndimage._measurements._dispatch import _measurement
from jaxndimage._measurements._over_blocks import _summed_over_blocks
from jaxndimage._measurements._results import (
    _is_traced,
    _positions,
    _rows,
    _scalar,
    _scalars,
)
from jaxndimage._typing import ArrayLike


def _one_region(arguments: Mapping[str, Any]) -> bool:
    """Whether a statistic gives one value: no labels, no index or a
    scalar index (SciPy's rule)."""
    return (arguments.get("labels") is None or arguments.get("index") is None
            or bool(np.isscalar(arguments["index"])))


def _sum_kinds(arguments: Mapping[str, Any]) -> str:
    """The sums' kinds in 64 bits (``results_64``): a region's sum has
    ``input.sum()``'s dtype (numpy sums integers in 64 bits), sums per
    label are float64."""
    if _one_region(arguments):
        return "iu" + wide_kind(host_dtype(arguments["input"]))
    return "f"


def _median_kinds(arguments: Mapping[str, Any]) -> str:
    """The medians' kinds in 64 bits (``results_64``): float64 for integer
    and boolean input, the input's dtype for floats."""
    dtype = host_dtype(arguments["input"])
    return "f" if dtype.kind in "biu" else wide_kind(dtype)


def _statistic(name: str, *, summary: str, returns: str, examples: str,
               input_doc: str = "Values.",
               statistic: str | None = None,
               finish: Callable[[Any, inspect.BoundArguments], Any]
               = _scalars,
               results_64: str | Callable[[Mapping[str, Any]], str] = "",
               over_blocks: Callable[..., Any] | None = None,
               **fields: str) -> Callable[..., Any]:
    """The public per-label statistic ``name``, with SciPy's signature
    ``(input, labels=None, index=None)``: the body ``_BODIES[statistic]``
    (default ``name``) run by :func:`_measure`, its result turned into
    SciPy's structure by ``finish``.

    Its docstring is ``statistic_doc`` of :mod:`jaxndimage._docstrings`,
    filled with ``summary``, ``input_doc`` (what `input` holds), the
    section ``returns`` (without its heading), the section ``examples``,
    and ``fields``.  ``results_64``: the kinds of result SciPy gives in 64
    bits whatever the input (see :func:`ndimage_function`).
    ``over_blocks``: its route for a dask ``input`` (see :func:`_summed`).
    """
    key = statistic or name

    def per_label(input: ArrayLike, labels: ArrayLike | None = None,
                  index: ArrayLike | None = None) -> Any:
        return _measure(key, input, labels, index)

    sections = dict(summary=summary, input_doc=input_doc, returns=returns,
                    examples=examples)
    return family_member(per_label, name, "%(statistic_doc)s",
                         *_STATISTIC_PARAMETERS, dispatch=_measurement,
                         finish=finish, results_64=results_64,
                         over_blocks=over_blocks,
                         fields={**sections, **fields})


def _nonempty(reduction: str) -> Callable:
    """A finish step that raises numpy's ValueError for the minimum or
    maximum of an empty single region (outside a trace).  Over an index
    array, a 0-d one included, SciPy gives an absent label 0."""

    def finish(result, bound):
        value, count = result
        if (_one_region(bound.arguments) and not _is_traced(count)
                and int(as_numpy(count)) == 0):
            raise ValueError(f"zero-size array to reduction operation "
                             f"{reduction} which has no identity")
        return _scalar(value)

    return finish


def _summed(name: str) -> Callable[..., Any]:
    """The route of ``name`` (`sum_labels`, `sum`, `mean` or
    `center_of_mass`) for a dask ``input``: `sum_labels` of each block,
    added up by :func:`_summed_over_blocks`."""

    def over_blocks(input, labels=None, index=None):
        return _summed_over_blocks(name, sum_labels, input, labels, index)

    return over_blocks


sum_labels = _statistic(
    "sum_labels", results_64=_sum_kinds, over_blocks=_summed("sum_labels"),
    summary="The sum of the values of an array, over labelled regions.",
    input_doc="Values to sum.",
    returns="""\
sum : scalar or ndarray
    One sum (of ``input.sum()``'s dtype) when `index` is None or a
    scalar; else a float64 array of `index`'s shape, 0 for labels that
    do not occur.""",
    examples="""\
Examples
--------
>>> import jaxndimage
>>> input = [0, 1, 2, 3]
>>> labels = [1, 1, 2, 2]
>>> jaxndimage.sum_labels(input, labels, index=[1, 2])
array([1., 5.])
>>> jaxndimage.sum_labels(input, labels, index=1)
np.int64(1)
>>> jaxndimage.sum_labels(input, labels)
np.int64(6)""",
    statistic="sum")


sum = _statistic(
    "sum", results_64=_sum_kinds, over_blocks=_summed("sum"),
    summary="""\
The sum of the values of an array, over labelled regions.

An alias of `sum_labels`, kept as SciPy keeps it.""",
    input_doc="Values to sum.",
    returns="""\
sum : scalar or ndarray
    As `sum_labels`.""",
    examples="""\
Examples
--------
>>> import jaxndimage
>>> jaxndimage.sum([1, 2, 3], [1, 0, 1], index=[1])
array([4.])""")


mean = _statistic(
    "mean", results_64="f", over_blocks=_summed("mean"),
    summary="The mean of the values of an array, over labelled regions.",
    input_doc="Values to average.",
    returns="""\
mean : float or ndarray
    float64: one mean, or one per element of `index` (NaN for labels
    that do not occur).""",
    examples="""\
%(examples_measurements)s
>>> float(jaxndimage.mean(a))
2.125
>>> labels, n = jaxndimage.label(a)
>>> jaxndimage.mean(a, labels=labels, index=np.arange(1, n + 1))
array([2.75, 5.5 , 6.  ])""")


variance = _statistic(
    "variance", results_64="f",
    summary="The variance of the values of an array, over labelled regions.",
    returns="""\
variance : float or ndarray
    float64 (population variance, as SciPy): one value, or one per
    element of `index` (NaN for labels that do not occur).""",
    examples="""\
%(examples_measurements)s
>>> float(jaxndimage.variance(a))
7.609375
>>> labels, n = jaxndimage.label(a)
>>> jaxndimage.variance(a, labels, index=np.arange(1, n + 1))
array([2.1875, 2.25  , 9.    ])""")


standard_deviation = _statistic(
    "standard_deviation", results_64="f",
    summary="""\
The standard deviation of the values of an array, over labelled
regions.""",
    returns="""\
standard_deviation : float or ndarray
    float64: the square root of `variance`.""",
    examples="""\
%(examples_measurements)s
>>> float(jaxndimage.standard_deviation(a))
2.7585095613392387""")


def _extremum(kind: str, numpy: str, per_label: str,
              whole: str) -> Callable[..., Any]:
    """`minimum` or `maximum` (``kind``): numpy's ``numpy`` per label;
    ``per_label`` and ``whole`` are its example results."""
    return _statistic(kind, summary="%(summary_extremum)s",
                      returns="%(returns_extremum)s",
                      examples="%(examples_extremum)s",
                      finish=_nonempty(kind), numpy=numpy,
                      per_label=per_label, whole=whole)


minimum = _extremum("minimum", "min", per_label="array([1, 4, 3])",
                    whole="np.int64(0)")
maximum = _extremum("maximum", "max", per_label="array([5, 7, 9])",
                    whole="np.int64(9)")


median = _statistic(
    "median", results_64=_median_kinds,
    summary="The median of the values of an array, over labelled regions.",
    returns="""\
median : float or ndarray
    One median, or one per element of `index`: float64 for integer
    and boolean input (the two middle values averaged in float64),
    `input`'s dtype for floats. An empty region gives NaN; a label of
    `index` that does not occur gives what SciPy gives (the smallest
    value among the points of the lowest label).""",
    examples="""\
%(examples_measurements)s
>>> labels, n = jaxndimage.label(a)
>>> jaxndimage.median(a, labels=labels, index=np.arange(1, n + 1))
array([2.5, 5.5, 6. ])
>>> float(jaxndimage.median(a))
0.5""")


def _position_result(reduction: str) -> Callable:
    """A finish step for positions: tuples, a list of tuples for an index
    array, numpy's ValueError for an empty region."""
    check = _nonempty(reduction)

    def finish(result, bound):
        positions, count = result
        check((positions, count), bound)
        if isinstance(positions, np.ndarray):
            # numpy's index dtype, as SciPy's, whatever the device's was.
            positions = positions.astype(np.intp, copy=False)
        return _positions(positions)

    return finish


def _position(kind: str, whole: str, per_label: str) -> Callable[..., Any]:
    """`minimum_position` or `maximum_position` (``kind``, "minimum" or
    "maximum"); ``whole`` and ``per_label`` are its example results."""
    return _statistic(f"{kind}_position", summary="%(summary_position)s",
                      returns="%(returns_position)s",
                      examples="%(examples_position)s",
                      finish=_position_result(kind),
                      kind=kind,
                      whole=whole, per_label=per_label)


minimum_position = _position(
    "minimum", whole="(np.int64(0), np.int64(2))",
    per_label="[(np.int64(2), np.int64(1)), (np.int64(0), np.int64(3))]")
maximum_position = _position(
    "maximum", whole="(np.int64(3), np.int64(0))",
    per_label="[(np.int64(1), np.int64(1)), (np.int64(2), np.int64(3))]")


def _extrema_result(result, bound):
    low, high, low_at, high_at, count = result
    positions = _position_result("minimum")
    return (_nonempty("minimum")((low, count), bound), _scalar(high),
            positions((low_at, count), bound),
            positions((high_at, count), bound))


extrema = _statistic(
    "extrema",
    summary="Minimum, maximum and their positions, over labelled regions.",
    returns="""\
minimums, maximums : scalar or ndarray
    As `minimum` and `maximum`.
min_positions, max_positions : tuple or list of tuples
    As `minimum_position` and `maximum_position`.""",
    examples="""\
%(examples_measurements)s
>>> low, high, low_at, high_at = jaxndimage.extrema(a)
>>> int(low), int(high), low_at, high_at
(0, 9, (np.int64(0), np.int64(2)), (np.int64(3), np.int64(0)))""",
    finish=_extrema_result)


def _centres_result(result, bound):
    if result.ndim <= 2:
        return _positions(result)
    # An n-d index: SciPy's [tuple(v) for v in np.array(per_axis).T].
    xp = jnp if is_jax_array(result) else np
    per_axis = xp.moveaxis(as_numpy(result) if xp is np else result, -1, 0)
    return [tuple(_rows(v)) for v in _rows(xp.transpose(per_axis))]


center_of_mass = _statistic(
    "center_of_mass", results_64="f",
    over_blocks=_summed("center_of_mass"),
    summary="The centre of mass of an array, over labelled regions.",
    input_doc="Masses (positive or negative).",
    returns="""\
center_of_mass : tuple or list of tuples
    float64 coordinates: one tuple, or a list with one per element of
    `index` (NaN for labels that do not occur).""",
    examples="""\
%(examples_measurements)s
>>> [round(float(c), 3) for c in jaxndimage.center_of_mass(a)]
[1.824, 1.206]""",
    finish=_centres_result)
