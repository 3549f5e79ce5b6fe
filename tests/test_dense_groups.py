"""The dense per-group reductions of accelerators (`_dense_groups`) give
the answers of the scatters they replace, and of SciPy.

On a CPU the measurements keep their scatters; here the plans are made to
choose the dense forms (as they do on a GPU or TPU), so both are tested
for the same answers on every machine.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi

import jaxndimage as jn
from jaxndimage import _dense_groups as dense
from jaxndimage._algorithms import as_on
from jaxndimage._measurements._groups import _plan


@pytest.fixture
def dense_plans():
    """Plans choose the accelerators' algorithms, whatever the device."""
    with as_on("accelerator"):
        yield


def _segments(rng, points, groups):
    # Some points in no group, some groups empty.
    return rng.integers(0, groups + 7, points).astype(np.int32) * (
        rng.random(points) < 0.97)


def test_sums_are_float32_sums_and_non_finite_values_stay_in_their_group():
    rng = np.random.default_rng(0)
    points, groups = 70_001, 300
    values = (rng.standard_normal((points, 2)) * 1e3).astype(np.float32)
    segments = _segments(rng, points, groups)
    values[5, 1], values[7, 0], values[9, 0] = np.nan, np.inf, -np.inf
    segments[9] = segments[7]
    got = np.asarray(dense.group_sums(values, segments,
                                      dense.numbered(groups)))
    want = np.stack([np.bincount(segments, values[:, i].astype(np.float64),
                                 minlength=groups + 7)[:groups]
                     for i in range(2)], axis=1)
    finite = np.isfinite(want)
    scale = np.abs(want[finite]).max()
    np.testing.assert_allclose(got[finite], want[finite], rtol=0,
                               atol=1e-6 * scale)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    assert np.isnan(want).sum() == 2  # NaN, and inf + -inf


def test_complex_sums_counts_and_histograms():
    rng = np.random.default_rng(1)
    points, groups = 40_000, 129
    segments = _segments(rng, points, groups)
    values = (rng.standard_normal(points)
              + 1j * rng.standard_normal(points)).astype(np.complex64)
    got = np.asarray(dense.group_sums(values, segments,
                                      dense.numbered(groups)))
    want = (np.bincount(segments, values.real, minlength=groups + 7)
            + 1j * np.bincount(segments, values.imag,
                               minlength=groups + 7))[:groups]
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4)
    counts = dense.group_counts(segments, dense.numbered(groups), np.int32)
    np.testing.assert_array_equal(
        counts, np.bincount(segments, minlength=groups + 7)[:groups])
    # Sums and counts from one product.
    both, counted = dense.group_sums(values, segments, dense.numbered(groups),
                                     counted=np.int32)
    np.testing.assert_array_equal(both, got)
    assert counted.dtype == np.int32
    np.testing.assert_array_equal(counted, counts)
    bins = rng.integers(0, 11, points)
    histograms = dense.group_histograms(bins, segments,
                                        dense.numbered(groups), 9, np.int32)
    want = np.zeros((groups + 7, 11), int)
    np.add.at(want, (segments, bins), 1)
    np.testing.assert_array_equal(histograms, want[:groups, :9])


@pytest.mark.parametrize("find_max", [False, True])
def test_extremes_and_first_positions_select_as_scipy(find_max):
    rng = np.random.default_rng(2)
    points, groups = 50_000, 200
    segments = _segments(rng, points, groups)
    values = rng.integers(-3, 4, points).astype(np.float32)
    values[11] = np.nan
    # Infinities, a NaN with its sign bit set, and both zeros.
    values[[20, 21, 22, 23]] = -np.inf, np.inf, -0.0, 0.0
    values[24] = -np.float32(np.nan)
    assert np.signbit(values[24])
    segments[(segments == 5) | (segments == 6)] = 7
    values[[12, 13]], segments[[12, 13]] = np.nan, 5  # only NaN
    index = np.arange(groups)
    select = ndi.maximum if find_max else ndi.minimum
    want = select(values, segments + 1, index + 1)
    keys = dense.numbered(groups)
    got = dense.group_extremes(values[:, None], segments, keys,
                               find_max)[:, 0]
    present = np.bincount(segments, minlength=groups)[:groups] > 0
    np.testing.assert_array_equal(np.asarray(got)[present], want[present])
    assert np.isnan(got[5]) and np.isnan(got[segments[11]]) == find_max
    assert np.isnan(got[segments[24]]) == find_max
    assert got[6] == (-np.inf if find_max else np.inf)
    flat = np.arange(points, dtype=np.int32)
    first = dense.group_extremes(flat[:, None], segments, keys, False,
                                 (values, got))[:, 0]
    for group in range(groups):
        # A NaN extreme is held by the group's NaNs (SciPy's position).
        same = (values == got[group]) | (np.isnan(values)
                                         & np.isnan(got[group]))
        hits = np.flatnonzero((segments == group) & same)
        assert first[group] == (hits[0] if hits.size
                                else np.iinfo(np.int32).max)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8,
                                   np.int16, np.int32, np.uint8, np.uint32,
                                   np.bool_])
def test_ranked_values_are_those_of_a_sort(dtype):
    rng = np.random.default_rng(4)
    points, groups = 20_000, 12
    segments = _segments(rng, points, groups)
    if np.dtype(dtype).kind == "f":
        values = (rng.standard_normal(points) * 50).astype(dtype)
        values[[5, 6, 7, 8, 9]] = np.nan, -np.inf, np.inf, -0.0, 0.0
    elif dtype == np.bool_:
        values = rng.random(points) < 0.3
    else:
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, points,
                              endpoint=True).astype(dtype)
    counts = np.bincount(segments, minlength=groups + 7)[:groups]
    ranks = (rng.random(groups) * counts).astype(np.int32)
    got = np.asarray(dense.group_ranked(values, segments,
                                        dense.numbered(groups), ranks))
    assert got.dtype == values.dtype
    for group in range(groups):
        # NaN sorts last, as in numpy; -0.0 and 0.0 are one value.
        want = np.sort(values[segments == group])[ranks[group]]
        np.testing.assert_array_equal(got[group], want)


@pytest.mark.parametrize("shape", [(96, 80), (20, 18, 22), (6, 7, 8, 9)])
@pytest.mark.parametrize("kind", [np.float32, np.int16, np.bool_])
def test_medians_of_dense_plans_equal_scipy(dense_plans, shape, kind):
    values, labels, count = _labelled(shape, 6)
    values = (values > 0) if kind == np.bool_ else values.astype(kind)
    index = np.arange(0, min(count, 20) + 3)  # absent labels, background
    want = ndi.median(values, labels, index)
    got = jn.median(jnp.asarray(values), jnp.asarray(labels), index)
    np.testing.assert_array_equal(got, want.astype(np.float32))
    one = jn.median(jnp.asarray(values), jnp.asarray(labels), [2])
    np.testing.assert_array_equal(one, ndi.median(values, labels, [2]))


def test_lookup_is_exact_for_every_entry():
    rng = np.random.default_rng(3)
    table = rng.standard_normal(300).astype(np.float32) * 1e30
    table[[3, 4, 5]] = np.nan, np.inf, -np.inf
    segments = rng.integers(0, 310, 20_000).astype(np.int32)
    got = dense.lookup(table, segments, dense.numbered(300))
    want = np.where(segments < 300, table[np.minimum(segments, 299)], 0)
    np.testing.assert_array_equal(got, want)


def test_plans_choose_dense_groups_for_an_accelerator_only():
    values = jnp.ones((4, 4), np.float32)
    labels = jnp.arange(16).reshape(4, 4)
    index = np.arange(3)
    with as_on("cpu"):
        assert not _plan("mean", values, labels, index, False)[0].dense
    with as_on("accelerator"):
        assert _plan("mean", values, labels, index, False)[0].dense
        # More groups than a product serves, or than ranks are selected
        # for (a median then sorts), or values of 64 bits.
        many = np.arange(dense.MOST_GROUPS + 1)
        assert not _plan("mean", values, labels, many, False)[0].dense
        assert _plan("median", values, labels, index, False)[0].dense
        more = np.arange(dense.MOST_RANKED_GROUPS + 1)
        assert not _plan("median", values, labels, more, False)[0].dense
        assert not _plan("median", np.ones((4, 4)), labels, index,
                         False)[0].dense


def _labelled(shape, seed):
    rng = np.random.default_rng(seed)
    image = ndi.gaussian_filter(rng.standard_normal(shape), 1.5)
    labels, count = ndi.label(image > 0.2)
    values = rng.standard_normal(shape).astype(np.float32) * 10
    return values, labels.astype(np.int32), count


@pytest.mark.parametrize("shape", [(96, 80), (20, 18, 22), (6, 7, 8, 9)])
@pytest.mark.parametrize("name", ["sum_labels", "mean", "variance",
                                  "standard_deviation", "minimum", "maximum",
                                  "minimum_position", "maximum_position",
                                  "extrema", "center_of_mass"])
def test_statistics_of_dense_plans_equal_scipy(dense_plans, shape, name):
    values, labels, count = _labelled(shape, 4)
    index = np.arange(0, count + 3)  # absent labels, and the background
    want = getattr(ndi, name)(values, labels, index)
    got = getattr(jn, name)(jnp.asarray(values), jnp.asarray(labels), index)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        w = np.asarray(w, np.float64)
        scale = np.abs(w[np.isfinite(w)]).max(initial=1)
        np.testing.assert_allclose(np.asarray(g, np.float64), w, rtol=0,
                                   atol=2e-5 * scale)


def test_histogram_and_find_objects_of_dense_plans_equal_scipy(dense_plans):
    values, labels, count = _labelled((40, 50, 30), 5)
    index = np.arange(1, count + 2)
    want = ndi.histogram(values, -10, 10, 12, labels, index)
    got = jn.histogram(jnp.asarray(values), -10, 10, 12, jnp.asarray(labels),
                       index)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    assert jn.find_objects(jnp.asarray(labels)) == ndi.find_objects(labels)
    assert (jn.find_objects(jnp.asarray(labels), max_label=count + 2)
            == ndi.find_objects(labels, max_label=count + 2))


@pytest.mark.parametrize("count", [1, 9, 40, 300])
@pytest.mark.parametrize("shape", [(150, 160), (40, 38, 36), (9, 10, 11, 12)])
def test_presence_boxes_equal_scipy_for_few_and_many_labels(dense_plans,
                                                           shape, count):
    # One comparison per label (at most `_FEW_BOXES`: 1 and 9), or labels
    # split into two parts of `presence_width(count)` (40 and 300);
    # features given random labels up to max_label + 2 (shared, or
    # absent), and points of a negative label.
    rng = np.random.default_rng(6)
    image = ndi.gaussian_filter(rng.standard_normal(shape), 1.0)
    features, found = ndi.label(image > 0.3)
    labels = rng.integers(1, count + 3, found + 1)[features] * (features > 0)
    labels[rng.random(shape) < 0.01] = -5
    labels = labels.astype(np.int32)
    got = jn.find_objects(jnp.asarray(labels), max_label=count)
    assert got == ndi.find_objects(labels, max_label=count)
