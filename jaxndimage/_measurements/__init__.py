"""Measurements: label, find_objects, per-label statistics, watershed_ift.

Results come back as SciPy's types (:mod:`._results`).  Every per-label
statistic is a segment reduction over groups of points
(:mod:`._groups`), on device and traceable; `label` is a union-find on
device, traceable too (:mod:`jaxndimage._labelling`).  What cannot be
traced:

* functions whose result *structure* depends on the data (`find_objects`,
  `value_indices`, `labeled_comprehension`, `histogram` with an index array)
  reduce on device and build their lists, dicts and object arrays on the
  host; inside ``jit``/``vmap`` they raise a TypeError that says so;
* `watershed_ift` runs SciPy's sequential bucket-queue algorithm on the host
  (its result depends on the exact order in which equal-cost points leave
  the queue, which no parallel formulation reproduces).

On XLA's CPU backend the gathers and scatters of these kernels run at a
few ns per point, several times slower than SciPy's sequential C loops for
`label`, `find_objects` and sums over labels; the segment reductions win
where SciPy sorts (`maximum`, `minimum`, `median`, positions with an index
array).

dask input: `label` labels dask arrays block by block and merges the
labels across the seams (:mod:`._label_dask`); `sum_labels` (`sum`),
`mean`, `center_of_mass` and `find_objects` combine per-block sums,
moments and bounding boxes by a tree reduction (:mod:`._over_blocks`);
the other functions compute dask input whole and hand the result arrays
back as dask arrays (:func:`._dispatch._measurement`).

The modules, from the bottom up:

* :mod:`._results`: conversion of results to the caller's types;
* :mod:`._dispatch`: the decorator `_measurement` and `MeasurementPlan`;
* :mod:`._groups`: `StatisticPlan`, grouping by labels and index, and the
  reductions over groups (segment sums, extrema, first positions);
* :mod:`._over_blocks`: the tree reductions of dask input;
* :mod:`._bodies`: the statistics' shell and kernel, and each body;
* :mod:`._statistics`, :mod:`._histogram`: the public statistics;
* :mod:`._label_dask`, :mod:`._labels`: `label`'s dask merge, and `label`;
* :mod:`._objects`: `find_objects` and `value_indices`;
* :mod:`._comprehension`: `labeled_comprehension`;
* :mod:`._watershed`: `watershed_ift`.
"""

from jaxndimage._measurements._comprehension import labeled_comprehension
from jaxndimage._measurements._histogram import histogram
from jaxndimage._measurements._labels import label
from jaxndimage._measurements._objects import find_objects, value_indices
from jaxndimage._measurements._statistics import (
    center_of_mass,
    extrema,
    maximum,
    maximum_position,
    mean,
    median,
    minimum,
    minimum_position,
    standard_deviation,
    sum,
    sum_labels,
    variance,
)
from jaxndimage._measurements._watershed import watershed_ift

__all__ = [
    "center_of_mass",
    "extrema",
    "find_objects",
    "histogram",
    "label",
    "labeled_comprehension",
    "maximum",
    "maximum_position",
    "mean",
    "median",
    "minimum",
    "minimum_position",
    "standard_deviation",
    "sum",
    "sum_labels",
    "value_indices",
    "variance",
    "watershed_ift",
]
