"""Planned measurements.

As in ``tests/test_plans.py``: the shell of each measurement validates and
returns a frozen, hashable plan with its kernel and operands, running no
kernel; other values of the same configuration give an equal plan, and the
plan run, turned into SciPy's structure by the function's finish step,
gives SciPy's result.
"""

import inspect

import jax
import numpy as np
import pytest
import scipy.ndimage as ndi
from plan_checks import assert_compile_key

import jaxndimage as jn
from jaxndimage._cache import checking_arguments
from jaxndimage._casting import scipy_arithmetic
from jaxndimage._measurements._comprehension import _plan_labeled_comprehension
from jaxndimage._measurements._histogram import _histogram_result
from jaxndimage._measurements._labels import _label
from jaxndimage._measurements._objects import _boxes_as_slices, _indices_dict
from jaxndimage._measurements._results import _scalars
from jaxndimage._measurements._statistics import (
    _centres_result,
    _extrema_result,
    _nonempty,
    _position_result,
)

#: Labels 0..3 on the (9, 12) test image; the same for both images of a
#: configuration (a lookup table's length is part of the plan).
LABELS = np.arange(9 * 12).reshape(9, 12) % 4


def _labels(x):
    return (x * 8).astype(np.int32)


def _markers(x):
    markers = np.zeros(x.shape, np.int16)
    markers[1, 1], markers[7, 10], markers[0, 11] = 1, 2, -1
    return markers


def _as_is(result, arguments):
    return result


#: (shell, input from a (9, 12) random image, positional arguments after
#: the input, keywords, how the function turns the plan's result into its
#: own, SciPy's function of the image)
PLANNED = [
    ("sum_labels", None, (LABELS, [1, 2, 3]), {}, _scalars,
     lambda x: ndi.sum_labels(x, LABELS, [1, 2, 3])),
    ("mean", None, (LABELS,), {}, _scalars, lambda x: ndi.mean(x, LABELS)),
    ("variance", None, (), {}, _scalars, ndi.variance),
    ("standard_deviation", None, (LABELS, 2), {}, _scalars,
     lambda x: ndi.standard_deviation(x, LABELS, 2)),
    ("median", None, (LABELS, [3, 1]), {}, _scalars,
     lambda x: ndi.median(x, LABELS, [3, 1])),
    ("minimum", None, (LABELS, [1, 2, 3]), {}, _nonempty("minimum"),
     lambda x: ndi.minimum(x, LABELS, [1, 2, 3])),
    ("maximum", None, (), {}, _nonempty("maximum"), ndi.maximum),
    ("maximum_position", None, (LABELS, 2), {},
     _position_result("maximum"),
     lambda x: ndi.maximum_position(x, LABELS, 2)),
    ("minimum_position", None, (LABELS,), {},
     _position_result("minimum"),
     lambda x: ndi.minimum_position(x, LABELS)),
    ("extrema", None, (LABELS, 1), {}, _extrema_result,
     lambda x: ndi.extrema(x, LABELS, 1)),
    ("center_of_mass", None, (LABELS, [1, 2]), {}, _centres_result,
     lambda x: ndi.center_of_mass(x, LABELS, [1, 2])),
    ("histogram", None, (0, 1, 5), {"labels": LABELS, "index": 2},
     _histogram_result,
     lambda x: ndi.histogram(x, 0, 1, 5, labels=LABELS, index=2)),
    ("find_objects", _labels, (), {}, _boxes_as_slices,
     lambda x: ndi.find_objects(_labels(x))),
    ("find_objects", lambda x: x > 0.5, (), {"max_label": 2},
     _boxes_as_slices,
     lambda x: ndi.find_objects(x > 0.5, max_label=2)),
    ("value_indices", _labels, (), {"ignore_value": 0}, _indices_dict,
     lambda x: ndi.value_indices(_labels(x), ignore_value=0)),
    ("watershed_ift", lambda x: (x * 200).astype(np.uint8),
     (_markers(LABELS),), {"structure": np.ones((3, 3))}, _as_is,
     lambda x: ndi.watershed_ift((x * 200).astype(np.uint8),
                                 _markers(LABELS), np.ones((3, 3)))),
]


def _shell(name):
    """The undecorated shell of a public function."""
    return inspect.unwrap(getattr(jn, name))


def _bound(name, x, args, kwargs):
    bound = inspect.signature(getattr(jn, name)).bind(x, *args, **kwargs)
    bound.apply_defaults()
    return bound


def _plan_and_run(shell, x, args, kwargs):
    # The shell as the dispatcher calls it for numpy input.
    with jax.enable_x64(True), scipy_arithmetic():
        with checking_arguments():  # a kernel reached here would raise
            planned = shell(x, *args, **kwargs)
        return planned, planned.run()


def _assert_equal(ours, theirs):
    """The same Python structure and values (numpy arrays to 1e-12)."""
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for key in theirs:
            _assert_equal(ours[key], theirs[key])
    elif isinstance(theirs, list | tuple):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_equal(a, b)
    elif theirs is None or isinstance(theirs, slice):
        assert ours == theirs
    else:
        assert np.shape(ours) == np.shape(theirs)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def _check(planned, other, result, expected):
    assert_compile_key(planned, other)
    _assert_equal(result, expected)


@pytest.mark.parametrize("name, make, args, kwargs, finish, expected",
                         PLANNED, ids=[p[0] for p in PLANNED])
def test_planned_shell_runs_no_kernel_and_its_plan_is_a_compile_key(
        name, make, args, kwargs, finish, expected):
    image = np.random.default_rng(0).random((9, 12))
    x = image if make is None else make(image)
    planned, result = _plan_and_run(_shell(name), x, args, kwargs)
    other_image = image[::-1] * 0.5 + 0.25
    y = other_image if make is None else make(other_image)
    if name == "find_objects" and not kwargs:
        y = x.copy()  # its default max_label is the input's maximum
        y[0, 0] = 0
    other, _ = _plan_and_run(_shell(name), y, args, kwargs)
    ours = finish(np.asarray(result) if name == "watershed_ift" else result,
                  _bound(name, x, args, kwargs))
    _check(planned, other, ours, expected(image))


def test_label_is_planned():
    image = np.random.default_rng(1).random((9, 12))
    shell = _label.__wrapped__
    structure = np.ones((3, 3))
    planned, (labels, count) = _plan_and_run(shell, image > 0.5,
                                             (structure,), {})
    other, _ = _plan_and_run(shell, image < 0.3, (structure,), {})
    want_labels, want_count = ndi.label(image > 0.5, structure)
    assert planned.plan.offsets == ((-1, -1), (-1, 0), (-1, 1), (0, -1))
    _check(planned, other, (np.asarray(labels), int(count)),
           (want_labels, want_count))


def test_labeled_comprehension_is_planned():
    image = np.random.default_rng(2).random((9, 12))
    arguments = (LABELS, [1, 3, 7], np.ptp, np.float64, -1.0)
    planned, result = _plan_and_run(_plan_labeled_comprehension, image,
                                    arguments, {"pass_positions": False})
    other, _ = _plan_and_run(_plan_labeled_comprehension, image * 2,
                             arguments, {"pass_positions": False})
    _check(planned, other, result,
           ndi.labeled_comprehension(image, *arguments))


@pytest.mark.parametrize("name, arguments, error", [
    ("mean", ((2, 2), np.ones((3, 3), int)), ValueError),
    ("histogram", (0, 1, 4, None, [1]), ValueError),
    ("find_objects", (), TypeError),
    ("value_indices", (), ValueError),
    ("watershed_ift", (np.zeros((4, 4), np.int8),), TypeError),
])
def test_shells_raise_scipy_errors_before_any_kernel(name, arguments, error):
    x = np.ones((4, 4), np.complex64 if name == "find_objects" else float)
    if name == "mean":
        x = np.ones(arguments[0])
        arguments = arguments[1:]
    with checking_arguments(), pytest.raises(error):
        getattr(jn, name)(x, *arguments)
    with pytest.raises(error):
        getattr(ndi, name)(x, *arguments)
