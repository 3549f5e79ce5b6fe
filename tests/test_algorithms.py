"""Both algorithms of each family in `_algorithms` give SciPy's answers:
the CPU's and the accelerators' (``as_on``), on numpy and JAX input, in
one to four dimensions, for every connectivity or sampling.  (The
per-label reductions' are in test_dense_groups.py.)"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi

import jaxndimage as jn
from jaxndimage import _distance
from jaxndimage._algorithms import ALGORITHMS, algorithm, as_on
from jaxndimage._cache import SecondsSpent
from jaxndimage._chip_scans import suits
from jaxndimage._propagation import along_runs

KINDS = ["cpu", "accelerator"]
SHAPES = [(61,), (40, 37), (12, 13, 14), (5, 6, 7, 8)]


def _mask(shape, seed, density=0.55):
    return np.random.default_rng(seed).random(shape) < density


def test_every_family_has_an_algorithm_for_each_kind():
    for family, choices in ALGORITHMS.items():
        assert {"cpu", "accelerator"} <= set(choices) <= {
            "cpu", "accelerator", "tpu"}, family
        with as_on("accelerator"):
            assert algorithm(family) == choices["accelerator"]
        with as_on("tpu"):
            assert algorithm(family) == choices.get(
                "tpu", choices["accelerator"])
    assert algorithm("label") == ALGORITHMS["label"][
        "cpu" if jax.devices()[0].platform == "cpu" else "accelerator"]
    with pytest.raises(ValueError, match="kind"):
        with as_on("gpu"):
            pass


def _labels_equal_scipys(mask, jax_too=True):
    """`label` of ``mask`` (and of it as a JAX array) for every
    connectivity equals SciPy's."""
    for connectivity in range(1, mask.ndim + 1):
        structure = ndi.generate_binary_structure(mask.ndim, connectivity)
        want, count = ndi.label(mask, structure)
        for given in (mask, jnp.asarray(mask)) if jax_too else (mask,):
            got, got_count = jn.label(given, structure)
            np.testing.assert_array_equal(got, want)
            assert int(got_count) == count


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", SHAPES)
def test_label_numbers_features_as_scipy(kind, shape):
    with as_on(kind):
        _labels_equal_scipys(_mask(shape, len(shape)))


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


# The TPU's Pallas kernels, in Pallas' interpreter off a TPU, and which
# axes they take: one line, lines along lanes (a width off the 128-lane
# tile) and along sublanes with fewer and more than 128 lanes after them;
# the last axis of N-D arrays whose next-to-last axis is a whole number of
# 8-sublane tiles; not axes whose view would merge tiled axes.
CHIP_CASES = [((300,), [True]), ((21, 300), [True, True]),
              ((5, 9, 140), [False, True, False]),
              ((3, 4, 8, 6), [False, False, True, True])]


@pytest.mark.parametrize("shape, on_chip", CHIP_CASES)
def test_on_chip_scans_equal_the_dense_steps(shape, on_chip):
    assert [suits(shape, axis) for axis in range(len(shape))] == on_chip
    rng = np.random.default_rng(5)
    passable = jnp.asarray(_mask(shape, 2, 0.8))
    fill = np.iinfo(np.int32).max
    values = jnp.asarray(np.where(np.asarray(passable),
                                  rng.integers(0, 999, shape), fill),
                         jnp.int32)
    seeds = jnp.asarray(_mask(shape, 3, 0.05))
    for axis in np.flatnonzero(on_chip):
        # Labels' minima both ways along an axis (each direction and their
        # composition); binary propagation's seeds one way, as booleans,
        # along the last axis.
        cases = [(values, (-1, 1), jnp.minimum, fill)]
        if axis == len(shape) - 1:
            cases.append((seeds, (1,), jnp.logical_or, False))
        for y, directions, combine, fill_ in cases:
            want = along_runs(y, passable, int(axis), directions,
                                   combine, fill_)
            got = along_runs(y, passable, int(axis), directions,
                                  combine, fill_, "on-chip steps")
            np.testing.assert_array_equal(got, want)


def test_tpu_algorithms_label_and_fill_as_scipy_under_jit_and_vmap():
    masks = np.stack([ndi.gaussian_filter(
        np.random.default_rng(seed).random((20, 130)), 2) > 0.5
        for seed in range(2)])
    with as_on("tpu"):
        labels, counts = jax.jit(jax.vmap(jn.label))(jnp.asarray(masks))
        filled = jax.vmap(jn.binary_fill_holes)(jnp.asarray(masks))
    for k, mask in enumerate(masks):
        want, count = ndi.label(mask)
        np.testing.assert_array_equal(labels[k], want)
        assert int(counts[k]) == count
        np.testing.assert_array_equal(filled[k], ndi.binary_fill_holes(mask))


# Samplings whose products are exact (dyadic), so that both Euclidean
# algorithms break ties as SciPy does (see `_distance`'s docstring).
EDT_CASES = [((17,), None), ((9, 10), None), ((9, 10), (1, 1)),
             ((9, 10), (0.5, 2.0)), ((5, 6, 7), None),
             ((5, 6, 7), (1.5, 1, 0.25)), ((3, 4, 5, 6), None),
             ((3, 4, 5, 6), (0.5, 1, 2, 1.5))]


@pytest.fixture
def exact_shape(monkeypatch):
    """Concrete input through the exact-shape kernels, which run the
    family's algorithms (a plan's first calls on a CPU run on flat
    canvases, which have one, or the Euclidean transform's host shifts)."""
    monkeypatch.setattr(_distance, "_flat_seconds", SecondsSpent())
    monkeypatch.setattr(_distance, "EXACT_AFTER_S", 0.0)
    monkeypatch.setattr(_distance, "_on_host_shifts", lambda *args: None)


def _edt_masks(shape):
    """Foreground masks of several densities, one background element, no
    background and all background."""
    masks = [_mask(shape, seed, density) for seed, density in
             enumerate((0.3, 0.8, 0.97))]
    single = np.ones(shape, bool)
    single[tuple(n // 3 for n in shape)] = False
    return masks + [single, np.ones(shape, bool), np.zeros(shape, bool)]


@pytest.mark.usefixtures("exact_shape")
@pytest.mark.parametrize("shape, sampling", EDT_CASES)
def test_euclidean_distances_and_features_equal_scipy(shape, sampling):
    masks = _edt_masks(shape)
    for mask in masks:
        want = ndi.distance_transform_edt(mask, sampling,
                                          return_indices=True)
        results = {}
        for kind in KINDS:
            with as_on(kind):
                results[kind] = jn.distance_transform_edt(
                    mask, sampling, return_indices=True)
                got = jn.distance_transform_edt(
                    jnp.asarray(mask), sampling, return_indices=True)
            np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
            np.testing.assert_array_equal(got[1], want[1])
        for got in (results["accelerator"], want):
            np.testing.assert_array_equal(got[0], results["cpu"][0])
            np.testing.assert_array_equal(got[1], results["cpu"][1])
    with as_on("accelerator"):
        np.testing.assert_array_equal(
            jn.distance_transform_edt(masks[1], sampling,
                                      return_distances=False,
                                      return_indices=True),
            ndi.distance_transform_edt(masks[1], sampling,
                                       return_distances=False,
                                       return_indices=True))
        np.testing.assert_array_equal(
            jn.distance_transform_edt(masks[1], sampling),
            ndi.distance_transform_edt(masks[1], sampling))


@pytest.mark.parametrize("kind", KINDS)
def test_euclidean_under_jit_and_grad_in_the_sampling(kind):
    mask = _edt_masks((11, 12))[1]
    sampling = np.array([0.5, 2.0])
    with as_on(kind):
        got = jax.jit(lambda a, s: jn.distance_transform_edt(
            a, s, return_indices=True))(jnp.asarray(mask),
                                        jnp.asarray(sampling))
    want = ndi.distance_transform_edt(mask, sampling, return_indices=True)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_array_equal(got[1], want[1])
    # The gradient in the sampling: sum((feature - index)**2 * s / d).
    with as_on(kind):
        grad = jax.grad(lambda s: jn.distance_transform_edt(
            jnp.asarray(mask), s).sum())(jnp.asarray(sampling))
    offsets = want[1] - np.indices(mask.shape)
    far = want[0] > 0
    np.testing.assert_allclose(grad, [
        np.sum(o[far] ** 2 * s / want[0][far])
        for o, s in zip(offsets, sampling)], rtol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_euclidean_under_vmap(kind):
    masks = np.stack(_edt_masks((4, 5, 6)))
    with as_on(kind):
        got = jax.vmap(lambda a: jn.distance_transform_edt(
            a, return_indices=True))(jnp.asarray(masks))
    for k, mask in enumerate(masks):
        want = ndi.distance_transform_edt(mask, return_indices=True)
        np.testing.assert_allclose(got[0][k], want[0], rtol=1e-6)
        np.testing.assert_array_equal(got[1][k], want[1])


@pytest.mark.usefixtures("exact_shape")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", SHAPES)
def test_chamfer_stages_as_programs_or_one_program_equal_scipy(kind, shape):
    masks = _edt_masks(shape)
    with as_on(kind):
        for mask in masks:
            for metric in ("chessboard", "taxicab"):
                want = ndi.distance_transform_cdt(mask, metric)
                np.testing.assert_array_equal(
                    jn.distance_transform_cdt(mask, metric), want)
                np.testing.assert_array_equal(
                    jn.distance_transform_cdt(jnp.asarray(mask), metric),
                    want)
        got = jax.jit(jn.distance_transform_cdt)(jnp.asarray(masks[0]))
    np.testing.assert_array_equal(got, ndi.distance_transform_cdt(masks[0]))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("per_step", ["one block", "blocks of 8"])
def test_brute_force_distances_and_features_equal_scipy(kind, per_step,
                                                        monkeypatch):
    """JAX input, concrete and under `jit` (every element a candidate),
    in one to four dimensions: a grid of foreground points makes many
    equally near border elements, whose last in raster order wins across
    and within blocks of candidates."""
    if per_step == "blocks of 8":
        monkeypatch.setattr(_distance, "_BF_BLOCK_ELEMENTS", 8 * 13 * 14)
    grid = np.ones((13, 14), bool)
    grid[::4, ::5] = False
    masks = [grid] + [_mask(shape, 9) for shape in SHAPES[:1] + SHAPES[2:]]
    cases = [("euclidean", None), ("euclidean", 0.5), ("taxicab", None),
             ("chessboard", None)]
    with as_on(kind):
        for mask in masks:
            for metric, sampling in cases:
                want = ndi.distance_transform_bf(mask, metric, sampling,
                                                 return_indices=True)
                got = jn.distance_transform_bf(
                    jnp.asarray(mask), metric, sampling,
                    return_indices=True)
                np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
                np.testing.assert_array_equal(got[1], want[1])
        got = jax.jit(lambda a: jn.distance_transform_bf(
            a, return_indices=True))(jnp.asarray(grid))
    want = ndi.distance_transform_bf(grid, return_indices=True)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.usefixtures("cache_dir")
def test_label_of_host_input_compiles_nothing_over_many_shapes():
    """Noise and blobs of many shapes, 2-D to 4-D, every connectivity:
    SciPy's labels by numpy, and not one program compiled."""
    from compilations import counting_compilations, distinct_shapes

    rng = np.random.default_rng(6)
    shapes = distinct_shapes(8, 16, 600, 2, seed=6) + [(40, 37, 45),
                                                        (9, 10, 11, 12)]
    with counting_compilations() as counted:
        for shape in shapes:
            smooth = ndi.gaussian_filter(rng.random(shape), 2)
            for mask in (rng.random(shape) < 0.5, smooth > 0.5):
                _labels_equal_scipys(mask, jax_too=False)
    assert counted[0] == 0


@pytest.mark.parametrize("shape", [(300, 257), (40, 37, 45), (9, 10, 11, 12)])
def test_label_of_host_input_long_and_short_runs_equals_scipy(shape):
    """Both ways the host (`_labelling._label_on_host`) writes labels:
    painted run by run (long runs: blobs) and looked up point by point
    (short runs: noise); each for every connectivity."""
    from jaxndimage import _labelling

    noise = _mask(shape, 3, 0.5)
    blobs = ndi.gaussian_filter(np.random.default_rng(4).random(shape),
                                2) > 0.5
    for mask, short in ((noise, True), (blobs, False)):
        runs = np.count_nonzero(mask[..., 0]) + np.count_nonzero(
            mask[..., 1:] & ~mask[..., :-1])
        points = math.prod(_labelling._guarded_shape(shape))
        assert (_labelling._DENSE_RUNS * runs > points) == short
        _labels_equal_scipys(mask, jax_too=False)
