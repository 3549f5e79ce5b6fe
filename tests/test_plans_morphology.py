"""Planned morphology: opening, closing, propagation, hole filling, the
iterated structure and the eight greyscale operations (docs/ARCHITECTURE.md).

Each shell validates and returns a frozen, hashable plan with its kernel and
operands, running no kernel; compositions are plans of plans, whose depth is
the dask halo.
"""

import jax
import numpy as np
import pytest
import scipy.ndimage as ndi
from plan_checks import assert_compile_key

import jaxndimage as jn
from jaxndimage import _morphology
from jaxndimage._cache import checking_arguments
from jaxndimage._casting import scipy_arithmetic

SKEWED = np.array([[1, 1, 0], [0, 1, 0], [0, 1, 1]], bool)
MASK = np.random.default_rng(1).random((9, 12)) > 0.2
WEIGHTS = np.array([[0.0, 1.0, 0.5], [2.0, 0.0, 1.5]])

#: (name, positional arguments after the input, keywords)
PLANNED = [
    ("binary_opening", (), {"iterations": 2, "origin": (0, -1)}),
    ("binary_closing", (SKEWED,), {"mask": MASK, "border_value": 1}),
    ("binary_propagation", (), {"mask": MASK}),
    ("binary_propagation", (SKEWED,), {"mask": MASK, "origin": (1, 0)}),
    ("binary_fill_holes", (), {}),
    ("binary_fill_holes", (SKEWED,), {}),
    ("grey_erosion", (), {"size": (2, 3), "mode": "nearest"}),
    ("grey_erosion", (), {"footprint": SKEWED, "origin": (0, 1)}),
    ("grey_dilation", (), {"structure": WEIGHTS, "mode": "constant",
                           "cval": 0.5}),
    ("grey_opening", (), {"size": 3, "mode": "mirror"}),
    ("grey_opening", (), {"structure": WEIGHTS}),
    ("grey_closing", (), {"footprint": SKEWED, "mode": "wrap"}),
    ("morphological_gradient", (), {"size": (3, 2)}),
    ("morphological_laplace", (), {"structure": WEIGHTS, "origin": -1}),
    ("white_tophat", (), {"size": 2}),
    ("black_tophat", (), {"footprint": SKEWED, "mode": "constant"}),
]


def _shell(name):
    """The undecorated shell of a public function."""
    return getattr(jn, name).__wrapped__


@pytest.mark.parametrize("name, args, kwargs", PLANNED,
                         ids=[p[0] for p in PLANNED])
def test_planned_shell_runs_no_kernel_and_its_plan_is_a_compile_key(
        name, args, kwargs):
    rng = np.random.default_rng(0)
    image = rng.random((9, 12))
    other = rng.random((9, 12))
    if name.startswith("binary"):
        image, other = image > 0.3, other > 0.6
    # The shell as the dispatcher calls it for numpy input.
    with jax.enable_x64(True), scipy_arithmetic():
        with checking_arguments():  # a kernel reached here would raise
            planned = _shell(name)(image, *args, **kwargs)
            again = _shell(name)(other, *args, **kwargs)
        result = np.asarray(planned.run())
    assert_compile_key(planned, again)
    # The input reaches the kernel as given: planning neither copies it
    # nor moves it to JAX.
    assert planned.operands[0] is image
    expected = getattr(ndi, name)(image, *args, **kwargs)
    assert result.dtype == expected.dtype
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("iterations", [1, 3])
def test_iterated_structure_is_planned(iterations):
    shell = _morphology._iterated_structure.__wrapped__
    with jax.enable_x64(True), scipy_arithmetic():
        with checking_arguments():
            planned = shell(SKEWED.astype(np.int64), iterations)
            again = shell(SKEWED * 3, iterations)
        result = np.asarray(planned.run())
    assert_compile_key(planned, again)
    np.testing.assert_array_equal(
        result, ndi.iterate_structure(SKEWED.astype(np.int64), iterations))
    assert planned.plan.depth is None  # the result has another shape


def test_grey_plans_follow_the_dtypes_of_each_step():
    # A boolean opening by a structure reads back the first pass's bytes
    # (uint8) and stores a boolean result; its top-hat combines by XOR.
    image = np.random.default_rng(2).random((9, 12)) > 0.5
    with jax.enable_x64(True), scipy_arithmetic():
        with checking_arguments():
            opening = _shell("grey_opening")(image, structure=WEIGHTS)
            tophat = _shell("white_tophat")(image, structure=WEIGHTS)
        assert opening.plan.first.out_dtype == np.uint8
        assert not opening.plan.first.boolean
        assert opening.plan.second.boolean
        assert tophat.plan.xor
        np.testing.assert_array_equal(
            np.asarray(tophat.run()), ndi.white_tophat(image,
                                                       structure=WEIGHTS))
    # numpy's boolean subtract error is raised by the plan, before any
    # kernel runs.
    with checking_arguments(), pytest.raises(TypeError, match="subtract"):
        _shell("morphological_gradient")(image, size=3)


@pytest.mark.parametrize("name, args, kwargs, depth", [
    ("binary_opening", (), {"iterations": 2}, (4, 4)),
    ("binary_closing", (np.ones((2, 4)),), {}, (2, 4)),
    ("binary_opening", (), {"iterations": -1}, None),
    ("binary_closing", (), {"mask": np.ones((10, 10))}, None),
    ("binary_fill_holes", (), {}, None),
    ("binary_fill_holes", (SKEWED,), {}, None),
    ("grey_erosion", (), {"size": (2, 5)}, (1, 2)),
    ("grey_dilation", (), {"size": (2, 5), "origin": (0, 1)}, (1, 3)),
    ("grey_dilation", (), {"structure": np.ones(4), "axes": (1,)},
     (0, 2)),
    ("grey_opening", (), {"size": (3, 4)}, (2, 4)),
    ("grey_closing", (), {"footprint": SKEWED}, (2, 2)),
    ("morphological_gradient", (), {"size": (3, 4)}, (1, 2)),
    ("morphological_laplace", (), {"structure": np.ones((5, 1))}, (2, 0)),
    ("white_tophat", (), {"size": 2}, (2, 2)),
    ("black_tophat", (), {"size": 3, "axes": (0,)}, (2, 0)),
])
def test_plan_depth_is_the_reach_of_the_composition(name, args, kwargs,
                                                    depth):
    planned = _shell(name)(np.ones((10, 10)), *args, **kwargs)
    assert planned.plan.depth == depth


@pytest.mark.parametrize("name, extends", [
    ("grey_erosion", True), ("morphological_gradient", True),
    ("grey_opening", False), ("grey_closing", False),
    ("white_tophat", False), ("black_tophat", False),
])
def test_only_terms_of_the_input_let_dask_extend_the_true_edges(name,
                                                                extends):
    # A second pass extends the first one's result at the true edges, not
    # the input: dask leaves those edges to the function.
    planned = _shell(name)(np.ones((10, 10)), size=(2, 3), mode="nearest")
    assert planned.plan.extends_edges is extends
