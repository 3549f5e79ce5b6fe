"""Both algorithms of each family in `_algorithms` give SciPy's answers:
the CPU's and the accelerators' (``as_on``), on numpy and JAX input, in
one to four dimensions, for every connectivity.  (The per-label
reductions' are in test_dense_groups.py.)"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi

import jaxndimage as jn
from jaxndimage._algorithms import ALGORITHMS, algorithm, as_on

KINDS = ["cpu", "accelerator"]
SHAPES = [(61,), (40, 37), (12, 13, 14), (5, 6, 7, 8)]


def _mask(shape, seed, density=0.55):
    return np.random.default_rng(seed).random(shape) < density


def test_every_family_has_an_algorithm_for_each_kind():
    for family, choices in ALGORITHMS.items():
        assert set(choices) == {"cpu", "accelerator"}, family
        with as_on("accelerator"):
            assert algorithm(family) == choices["accelerator"]
    assert algorithm("label") == ALGORITHMS["label"][
        "cpu" if jax.devices()[0].platform == "cpu" else "accelerator"]
    with pytest.raises(ValueError, match="kind"):
        with as_on("gpu"):
            pass


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", SHAPES)
def test_label_numbers_features_as_scipy(kind, shape):
    mask = _mask(shape, len(shape))
    with as_on(kind):
        for connectivity in range(1, len(shape) + 1):
            structure = ndi.generate_binary_structure(len(shape),
                                                      connectivity)
            want, count = ndi.label(mask, structure)
            got, got_count = jn.label(mask, structure)
            np.testing.assert_array_equal(got, want)
            assert got_count == count
            got, got_count = jn.label(jnp.asarray(mask), structure)
            np.testing.assert_array_equal(got, want)
            assert int(got_count) == count


@pytest.mark.parametrize("kind", KINDS)
def test_label_of_winding_features_and_under_jit(kind):
    # A spiral: one feature that turns back on itself along both axes.
    spiral = np.zeros((31, 31), bool)
    top, left, bottom, right = 0, 0, 30, 30
    while top <= bottom and left <= right:
        spiral[top, left:right + 1] = spiral[top:bottom + 1, right] = True
        spiral[bottom, left:right + 1] = True
        spiral[top + 2:bottom + 1, left] = True
        top, left, bottom, right = top + 2, left + 2, bottom - 2, right - 2
    want, count = ndi.label(spiral)
    with as_on(kind):
        got, got_count = jax.jit(jn.label)(jnp.asarray(spiral))
    np.testing.assert_array_equal(got, want)
    assert int(got_count) == count


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", SHAPES[1:])
def test_hole_filling_and_propagation_equal_scipy(kind, shape):
    mask = ndi.binary_opening(_mask(shape, 7, 0.7))
    seeds = mask & _mask(shape, 8, 0.02)
    with as_on(kind):
        for connectivity in (1, len(shape)):
            structure = ndi.generate_binary_structure(len(shape),
                                                      connectivity)
            np.testing.assert_array_equal(
                jn.binary_fill_holes(mask, structure),
                ndi.binary_fill_holes(mask, structure))
            np.testing.assert_array_equal(
                jn.binary_fill_holes(jnp.asarray(mask), structure),
                ndi.binary_fill_holes(mask, structure))
            np.testing.assert_array_equal(
                jn.binary_propagation(seeds, structure, mask),
                ndi.binary_propagation(seeds, structure, mask))
