"""Measurements: results and types against SciPy, errors, JAX transforms,
host-only functions under a trace, dask input."""

import contextlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi

import jaxndimage as jnd

RNG = np.random.default_rng(17)
# One image shape for most tests, so kernels compile once.
IMAGE = RNG.integers(0, 9, (12, 10))
LABELS, COUNT = ndi.label(IMAGE > 4)
INDEX = np.arange(0, COUNT + 3)  # 0, every label, two that do not occur

STATISTICS = ["sum", "sum_labels", "mean", "variance", "standard_deviation",
              "minimum", "maximum", "median", "center_of_mass"]


def _assert_same(ours, theirs, rtol=1e-12):
    """Same Python structure, same numpy types, values to rtol (SciPy
    computes some float32 statistics in float32, we in float64)."""
    assert type(ours) is type(theirs), (type(ours), type(theirs))
    if isinstance(theirs, list | tuple):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b, rtol)
        return
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    np.testing.assert_allclose(ours, theirs, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize("name", STATISTICS)
@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.bool_])
def test_statistics_equal_scipy_in_value_and_type(name, dtype):
    image = IMAGE.astype(dtype)
    for labels, index in [(None, None), (LABELS, None), (LABELS, 2),
                          (LABELS, list(INDEX))]:
        ours = getattr(jnd, name)(image, labels, index)
        theirs = getattr(ndi, name)(image, labels, index)
        _assert_same(ours, theirs, 1e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("name", ["minimum_position", "maximum_position",
                                  "extrema"])
def test_positions_are_the_first_occurrence(name):
    image = IMAGE.astype(np.int16)
    for labels, index in [(None, None), (LABELS, None), (LABELS, 3)]:
        _assert_same(getattr(jnd, name)(image, labels, index),
                     getattr(ndi, name)(image, labels, index))
    # With an index array SciPy's positions come from an unstable sort:
    # ours are the first occurrence, at the same values as SciPy's.
    ours = jnd.minimum_position(image, LABELS, INDEX)
    first = [tuple(np.argwhere((LABELS == i)
                               & (image == ndi.minimum(image, LABELS, i)))[0])
             if (LABELS == i).any() else (0, 0) for i in INDEX]
    assert ours == first


def test_float_index_with_integer_labels_is_truncated_as_in_scipy():
    index = [1.5, 2.0, 9.7]
    np.testing.assert_array_equal(jnd.maximum(IMAGE, LABELS, index),
                                  ndi.maximum(IMAGE, LABELS, index))
    np.testing.assert_allclose(jnd.mean(IMAGE, LABELS, index),
                               ndi.mean(IMAGE, LABELS, index))


@pytest.mark.parametrize("route", ["host", "kernel"])
@pytest.mark.parametrize("shape, labels_shape", [
    ((40, 30), (40, 30)), ((9, 8, 7), (9, 8, 7)), ((5, 6, 4, 3), (5, 6, 4, 3)),
    ((1, 30), (40, 30)), ((40, 30), (30,))])
def test_sums_over_an_index_array_are_scipys_bits(route, shape, labels_shape,
                                                  monkeypatch):
    # Host arrays take numpy's bincount as SciPy's _stats does, with its
    # warnings (absent labels divide 0 by 0); the kernel (JAX arrays off
    # the CPU, and labels bincount does not take) sums in the same order.
    from jaxndimage._measurements import _bodies

    if route == "kernel":
        monkeypatch.setattr(_bodies, "_labelled_sums_on_host",
                            lambda *args: None)
    rng = np.random.default_rng(len(shape))
    index = np.array([[0, 1, 2], [5, 9, -1]])
    for dtype in (np.float32, np.float64, np.int16, np.bool_):
        image = (rng.standard_normal(shape) * 50).astype(dtype)
        labels = rng.integers(0, 6, labels_shape).astype(np.int32)
        for name in ("sum_labels", "mean", "center_of_mass"):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                ours = getattr(jnd, name)(image, labels, index)
            with pytest.warns(RuntimeWarning) if name != "sum_labels" else (
                    contextlib.nullcontext()):
                theirs = getattr(ndi, name)(image, labels, index)
            _assert_same(ours, theirs, rtol=0)
            if route == "host":
                assert ([w.category for w in caught] != []) == (
                    name != "sum_labels")


def test_a_0d_index_of_summed_statistics_is_a_type_error_as_in_scipy():
    for name in ("sum", "mean", "variance", "center_of_mass"):
        with pytest.raises(TypeError):
            getattr(ndi, name)(IMAGE, LABELS, np.array(2))
        with pytest.raises(TypeError, match="index"):
            getattr(jnd, name)(IMAGE, LABELS, np.array(2))
    # The selections take it, as SciPy's do.
    assert jnd.maximum(IMAGE, LABELS, np.array(2)) == ndi.maximum(
        IMAGE, LABELS, np.array(2))


@pytest.mark.parametrize("name", ["minimum", "maximum", "minimum_position",
                                  "maximum_position", "extrema", "median"])
@pytest.mark.parametrize("label", [2, COUNT + 2, -1])
def test_a_0d_index_selects_as_an_index_array_as_in_scipy(name, label):
    # A 0-d array is not a scalar to SciPy: it takes the index array's
    # route, where a label that does not occur gives 0 (a scalar index
    # that does not occur raises numpy's ValueError).
    index = np.array(label)
    _assert_same(getattr(jnd, name)(IMAGE, LABELS, index),
                 getattr(ndi, name)(IMAGE, LABELS, index))
    if name != "median":
        with pytest.raises(ValueError):
            getattr(ndi, name)(IMAGE, LABELS, COUNT + 2)
        with pytest.raises(ValueError, match="zero-size"):
            getattr(jnd, name)(IMAGE, LABELS, COUNT + 2)


@pytest.mark.parametrize("labels", [LABELS - 1, LABELS * 100,
                                    LABELS.astype(np.float32)])
def test_a_0d_index_with_labels_scipy_renumbers_is_a_type_error(labels):
    # Negative labels, labels above their number and float labels are
    # renumbered by np.unique in SciPy's selections, which then cannot take
    # a 0-d index; a scalar or a 1-d index is fine.
    label = labels[LABELS == 2][0]
    for name in ("minimum", "median", "maximum_position", "extrema"):
        with pytest.raises(TypeError):
            getattr(ndi, name)(IMAGE, labels, np.array(label))
        with pytest.raises(TypeError, match="index"):
            getattr(jnd, name)(IMAGE, labels, np.array(label))
        for index in (label, [label]):
            _assert_same(getattr(jnd, name)(IMAGE, labels, index),
                         getattr(ndi, name)(IMAGE, labels, index))


@pytest.mark.parametrize("label", [2, COUNT + 2])
def test_histogram_of_a_0d_index_is_a_1d_object_array_as_in_scipy(label):
    ours = jnd.histogram(IMAGE, 0, 9, 3, LABELS, np.array(label))
    theirs = ndi.histogram(IMAGE, 0, 9, 3, LABELS, np.array(label))
    assert ours.shape == theirs.shape == (1,) and ours.dtype == object
    if theirs[0] is None:
        assert ours[0] is None
    else:
        np.testing.assert_array_equal(ours[0], theirs[0])


@pytest.mark.parametrize("index", [np.array([[1, 2], [3, 0]]),
                                   np.zeros((0,), int), np.zeros((2, 0), int)])
def test_comprehensions_refuse_empty_and_multidimensional_indices(index):
    # SciPy's loop over the labels fails on an index of two or more
    # dimensions (ValueError for this one) and reads the labels' range from
    # an empty index's minimum; the other statistics take both.
    calls = {"histogram": lambda m: m.histogram(IMAGE, 0, 9, 3, LABELS,
                                                index),
             "labeled_comprehension": lambda m: m.labeled_comprehension(
                 IMAGE, LABELS, index, np.mean, float, -1.0)}
    for name, call in calls.items():
        with pytest.raises(ValueError):
            call(ndi)
        with pytest.raises(ValueError, match=f"index: {name}"):
            call(jnd)
    np.testing.assert_array_equal(jnd.mean(IMAGE, LABELS, index),
                                  ndi.mean(IMAGE, LABELS, index))


@pytest.mark.parametrize("shape", [(1, 30), (30,)])
def test_center_of_mass_over_broadcasting_labels_has_the_inputs_coordinates(
        shape):
    # SciPy's coordinates are the input's: one per input axis, 0 along an
    # axis of length 1 that the labels broadcast.
    import dask
    import dask.array as da

    image = np.random.default_rng(3).random(shape)
    labels = np.random.default_rng(4).integers(0, 3, (4, 30))
    for given in (image, jnp.asarray(image),
                  da.from_array(image, chunks=(1,) * (image.ndim - 1) + (7,))):
        for index in (None, 1, [1, 2]):
            ours = dask.compute(jnd.center_of_mass(given, labels, index))[0]
            theirs = ndi.center_of_mass(image, labels, index)
            np.testing.assert_allclose(np.asarray(ours, float),
                                       np.asarray(theirs), rtol=1e-6)


def test_median_of_one_region_holding_nan_is_nan_as_numpys():
    # SciPy takes numpy.median of one region (no labels, labels > 0, a
    # scalar index): NaN if any value is; over an index array it selects
    # from its sorted values, NaN last.
    values = IMAGE.astype(np.float32)
    values[tuple(np.argwhere(LABELS == 1)[0])] = np.nan
    for given in (values, jnp.asarray(values)):
        for args in ((), (LABELS,), (LABELS, 1), (LABELS, 2), (LABELS, [1]),
                     (LABELS, [1, 2])):
            np.testing.assert_array_equal(jnd.median(given, *args),
                                          ndi.median(values, *args))


@pytest.mark.parametrize("kind", ["cpu", "accelerator"])
def test_extremes_over_an_index_array_put_nan_last_as_scipy(kind):
    # SciPy selects from the sorted values over an index array: a region
    # holding a NaN has that NaN as its maximum (and its position), and
    # its least number as its minimum.
    from jaxndimage._algorithms import as_on

    rng = np.random.default_rng(8)
    values = rng.standard_normal((12, 10)).astype(np.float32)
    labels = rng.integers(0, 4, (12, 10)).astype(np.int32)
    values[tuple(np.argwhere(labels == 1)[1])] = np.nan
    index = [1, 2, 3, 5]
    with as_on(kind):
        for given in (values, jnp.asarray(values)):
            for name in ("minimum", "maximum", "minimum_position",
                         "maximum_position", "extrema"):
                got = getattr(jnd, name)(given, labels, index)
                want = getattr(ndi, name)(values, labels, index)
                for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
                    np.testing.assert_array_equal(np.asarray(g), w)


def test_median_of_an_absent_label_is_scipys():
    np.testing.assert_array_equal(jnd.median(IMAGE, LABELS, [99, 1]),
                                  ndi.median(IMAGE, LABELS, [99, 1]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16,
                                   np.uint8, np.bool_])
@pytest.mark.parametrize("shape", [(50,), (20, 30), (6, 7, 8), (3, 4, 5, 6)])
def test_medians_of_host_arrays_are_scipys_bits(dtype, shape):
    # numpy input sorts on the host (one value sort, a radix sort of the
    # groups); the kernel serves traced input: both give SciPy's bits on a
    # CPU, with absent, negative, repeated and background labels in the
    # index, signed zeros and NaN.  (The trace is held to the CPU: on an
    # accelerator's host its default device may be a TPU, whose float64
    # is emulated, one ulp off in the medians' halving.)
    rng = np.random.default_rng(len(shape))
    values = rng.standard_normal(shape) * 5
    if dtype in (np.float64, np.float32):
        values[values > 6] = np.nan
        values.reshape(-1)[::5] = 0.0
        values.reshape(-1)[1::5] = -0.0
    values = values.astype(dtype)
    labels = rng.integers(-1, 6, shape)
    for index in (np.arange(7), np.array([3, 1, 3, 9, -2]),
                  np.array([[1, 2], [2, 5]])):
        want = np.asarray(ndi.median(values, labels, index))
        with jax.enable_x64(True), jax.default_device(jax.devices("cpu")[0]):
            traced = jax.jit(jnd.median)(values, labels, jnp.asarray(index))
        for got in (jnd.median(values, labels, index), traced):
            got = np.asarray(got)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_empty_region_raises_like_numpy():
    with pytest.raises(ValueError, match="zero-size"):
        jnd.minimum(IMAGE, LABELS, 99)
    with pytest.raises(ValueError, match="zero-size"):
        jnd.maximum_position(IMAGE, LABELS, 99)
    assert jnd.sum_labels(IMAGE, LABELS, 99) == 0


def test_labels_of_another_shape_are_a_value_error_naming_labels():
    with pytest.raises(ValueError, match="labels"):
        jnd.sum_labels(IMAGE, LABELS[:3], [1])


def test_histogram_and_labeled_comprehension_equal_scipy():
    for index in [None, 1, [1, 2, 99]]:
        ours = jnd.histogram(IMAGE, 0, 9, 4, LABELS, index)
        theirs = ndi.histogram(IMAGE, 0, 9, 4, LABELS, index)
        if isinstance(theirs, np.ndarray) and theirs.dtype == object:
            assert ours.dtype == object and ours.shape == theirs.shape
            for a, b in zip(ours, theirs):
                assert (a is None and b is None) or np.array_equal(a, b)
        else:
            np.testing.assert_array_equal(ours, theirs)
    assert jnd.histogram(IMAGE, 0, 9, 4, LABELS, 99) is None
    with pytest.raises(ValueError, match="loss of precision"):
        jnd.histogram(IMAGE, 0, 9, 4, LABELS, [1.5])

    def spread(values, positions):
        return values.sum() if positions.sum() % 2 == 0 else -values.sum()

    for index in [None, 2, INDEX]:
        ours = jnd.labeled_comprehension(IMAGE, LABELS, index, spread, float,
                                         -1, pass_positions=True)
        theirs = ndi.labeled_comprehension(IMAGE, LABELS, index, spread,
                                           float, -1, pass_positions=True)
        _assert_same(ours, theirs)


def test_label_equals_scipy_for_every_connectivity():
    image = RNG.random((5, 6, 7)) > 0.6
    for rank in (1, 2, 3):
        structure = ndi.generate_binary_structure(3, rank)
        ours, n = jnd.label(image, structure)
        theirs, m = ndi.label(image, structure)
        assert type(n) is int and n == m
        assert ours.dtype == np.int32
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("shape, density", [
    ((160, 170), 0.5),    # thousands of runs, below one per point
    ((90, 100), 0.97),    # a few long runs
    ((12, 40, 30), 0.4),  # 3-D
])
def test_label_on_counted_runs_equals_scipy(shape, density):
    # Arrays of more than 4096 points whose runs are counted first: the
    # union-find runs on arrays of that count (small arrays, and traced
    # ones, use one node per point).
    image = RNG.random(shape) < density
    structures = [ndi.generate_binary_structure(len(shape), rank)
                  for rank in range(1, len(shape) + 1)]
    if len(shape) == 2:  # no neighbour along the last axis: a run a point
        structures.append(np.eye(3, dtype=bool))
    for structure in structures:
        ours, n = jnd.label(image, structure)
        theirs, m = ndi.label(image, structure)
        assert n == m
        np.testing.assert_array_equal(ours, theirs)


def test_label_output_dtype_and_array():
    image = np.tile([1, 0], 200)
    labels, n = jnd.label(image, output=np.uint16)
    assert labels.dtype == np.uint16 and n == 200
    out = np.zeros(image.shape, np.int64)
    assert jnd.label(image, output=out) == 200
    np.testing.assert_array_equal(out, ndi.label(image)[0])
    with pytest.raises(RuntimeError, match="bit-depth"):
        jnd.label(image, output=np.int8)
    with pytest.raises(ValueError, match="output shape"):
        jnd.label(image, output=np.zeros(3, np.int32))
    assert jnd.label(np.array(3.0)) == ndi.label(np.array(3.0))


def test_label_structure_errors_are_scipys():
    image = np.ones((4, 4))
    with pytest.raises(RuntimeError, match="equal rank"):
        jnd.label(image, np.ones(3))
    with pytest.raises(ValueError, match="equal to 3"):
        jnd.label(image, np.ones((3, 5)))
    with pytest.raises(AssertionError, match="symmetric"):
        jnd.label(image, [[0, 0, 0], [1, 1, 0], [0, 0, 0]])
    with pytest.raises(TypeError, match="Complex"):
        jnd.label(image.astype(complex))


def test_label_under_jit_and_vmap_returns_a_jax_count():
    batch = RNG.random((3,) + IMAGE.shape) > 0.5
    labels, counts = jax.jit(jax.vmap(jnd.label))(jnp.asarray(batch))
    assert isinstance(counts, jax.Array)
    for image, ours, n in zip(batch, labels, counts):
        theirs, m = ndi.label(image)
        np.testing.assert_array_equal(ours, theirs)
        assert int(n) == m


def test_statistics_trace_with_a_static_index_length():
    @jax.jit
    def measure(image, labels):
        return (jnd.sum_labels(image, labels, jnp.arange(1, 4)),
                jnd.maximum(image, labels, jnp.arange(1, 4)),
                jnd.center_of_mass(image, labels, jnp.arange(1, 4)))

    sums, highs, centres = measure(jnp.asarray(IMAGE, jnp.float32),
                                   jnp.asarray(LABELS))
    np.testing.assert_allclose(sums, ndi.sum_labels(IMAGE, LABELS, [1, 2, 3]),
                               rtol=1e-6)
    np.testing.assert_array_equal(highs, ndi.maximum(IMAGE, LABELS, [1, 2, 3]))
    np.testing.assert_allclose(np.array(centres, float),
                               ndi.center_of_mass(IMAGE, LABELS, [1, 2, 3]),
                               rtol=1e-5)


@pytest.mark.parametrize("call", [
    lambda x: jnd.find_objects(x),
    lambda x: jnd.value_indices(x),
    lambda x: jnd.histogram(x, 0, 9, 3, x, [1, 2]),
    lambda x: jnd.labeled_comprehension(x, x, None, np.sum, float, 0),
])
def test_host_built_results_raise_type_error_in_a_trace(call):
    with pytest.raises(TypeError, match="jit"):
        jax.jit(call)(jnp.asarray(LABELS))


def test_jax_input_gives_jax_results():
    image, labels = jnp.asarray(IMAGE), jnp.asarray(LABELS)
    assert isinstance(jnd.mean(image, labels, 1), jax.Array)
    assert all(isinstance(p, jax.Array)
               for p in jnd.maximum_position(image, labels, 1))
    found = jnd.value_indices(labels)
    assert all(type(key) is int for key in found)
    assert all(isinstance(v, jax.Array) for v in found[1])
    assert jnd.find_objects(labels) == ndi.find_objects(LABELS)


def test_find_objects_and_value_indices_equal_scipy():
    assert jnd.find_objects(LABELS) == ndi.find_objects(LABELS)
    assert jnd.find_objects(LABELS, max_label=COUNT + 2) == ndi.find_objects(
        LABELS, max_label=COUNT + 2)
    values = (IMAGE - 4).astype(np.int8)
    ours, theirs = jnd.value_indices(values), ndi.value_indices(values)
    assert list(ours) == list(theirs)
    assert all(type(k) is np.int8 for k in ours)
    for key in theirs:
        for a, b in zip(ours[key], theirs[key]):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype
    with pytest.raises(ValueError, match="integer array"):
        jnd.value_indices(IMAGE.astype(float))


@pytest.mark.parametrize("shape", [(300,), (60, 70), (16, 20, 60),
                                   (5, 6, 7, 64)])
def test_find_objects_of_blobs_and_of_noise_in_every_rank(shape):
    # Blobs: host labels take the boxes of their runs; noise (about a run
    # per point) the segment reductions.  Both give SciPy's boxes, for
    # max_label below, at and above the largest label.
    from jaxndimage._measurements import _objects

    rng = np.random.default_rng(len(shape))
    blobs = ndi.label(ndi.gaussian_filter(rng.random(shape), 4) > 0.5)[0]
    noise = rng.integers(-1, 40, shape).astype(np.int16)
    assert _objects._boxes_of_runs(blobs, int(blobs.max())) is not None
    assert _objects._boxes_of_runs(noise, 40) is None
    for labels in (blobs, noise):
        count = int(labels.max())
        for max_label in (0, count // 2, count + 3):
            assert (jnd.find_objects(labels, max_label)
                    == ndi.find_objects(labels, max_label))
        assert (jnd.find_objects(labels.astype(np.uint8))
                == ndi.find_objects(labels.astype(np.uint8)))


@pytest.mark.parametrize("spread", [100, 2**16 - 1, 2**16, 2**20])
def test_value_indices_of_wide_integers_equal_scipy(spread):
    # Host values of 32 or 64 bits within a range of 2**16 are sorted as
    # uint16 offsets (a radix sort); wider ranges as themselves.
    rng = np.random.default_rng(spread)
    values = rng.integers(-3, 9, (40, 50)).astype(np.int64) * 7 - 40000
    values[0, 0], values[-1, -1] = -40021, -40021 + spread
    for dtype in (np.int32, np.int64):
        ours = jnd.value_indices(values.astype(dtype), ignore_value=-40000)
        theirs = ndi.value_indices(values.astype(dtype), ignore_value=-40000)
        assert list(ours) == list(theirs)
        for key in theirs:
            for a, b in zip(ours[key], theirs[key]):
                np.testing.assert_array_equal(a, b)
                assert a.dtype == b.dtype


@pytest.mark.parametrize("shape", [(), (0, 4), (61,), (9, 11), (4, 5, 6),
                                   (2, 3, 4, 5)])
def test_value_indices_by_the_devices_kernel_equal_scipy(shape, monkeypatch):
    # The kernel that accelerators run (one sort carrying the raster
    # indices, coordinates unravelled in the program), here on the CPU.
    from jaxndimage._measurements import _objects

    monkeypatch.setattr(_objects, "concrete_on_cpu", lambda arr: False)
    values = np.random.default_rng(len(shape)).integers(-2, 5, shape)
    for given in (values.astype(np.int32), jnp.asarray(values, np.int16)):
        ours = jnd.value_indices(given, ignore_value=0)
        theirs = ndi.value_indices(values, ignore_value=0)
        assert list(ours) == list(theirs)
        for key in theirs:
            assert len(ours[key]) == len(theirs[key]) == len(shape)
            for a, b in zip(ours[key], theirs[key]):
                np.testing.assert_array_equal(a, b)
                assert isinstance(given, jax.Array) or a.dtype == b.dtype


@pytest.mark.parametrize("shape", [(3, 16), (6, 8, 5, 4), (5, 1, 2),
                                   (7, 9, 3)])
def test_value_indices_coordinates_equal_scipy_for_any_extents(shape):
    # Axes of a power-of-two extent are unravelled by a shift and a mask,
    # the others by a division.
    values = np.random.default_rng(len(shape)).integers(0, 5, shape)
    ours, theirs = jnd.value_indices(values), ndi.value_indices(values)
    assert list(ours) == list(theirs)
    for key in theirs:
        for a, b in zip(ours[key], theirs[key], strict=True):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == b.dtype


def test_watershed_ift_equals_scipy_and_checks_its_arguments():
    image = (IMAGE * 25).astype(np.uint8)
    markers = np.zeros(IMAGE.shape, np.int16)
    markers[0, 0], markers[5, 5], markers[11, 9], markers[3, 8] = -1, 1, 2, 2
    for structure in (None, np.ones((3, 3))):
        ours = jnd.watershed_ift(image, markers, structure)
        theirs = ndi.watershed_ift(image, markers, structure)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(TypeError, match="unsigned"):
        jnd.watershed_ift(image.astype(np.int16), markers)
    with pytest.raises(RuntimeError, match="integer type"):
        jnd.watershed_ift(image, markers.astype(np.uint8))
    with pytest.raises(RuntimeError, match="equal shape"):
        jnd.watershed_ift(image, markers[:2])


def _assert_eager_jit_and_vmap(call, stacks, want, dtype, example=1):
    """``call`` of JAX arrays, eager and under ``jit`` for one example of
    the ``stacks`` and under ``jit`` of ``vmap`` for all of them, gives
    ``want`` (one result per example) as JAX arrays of ``dtype``."""
    stacks = [jnp.asarray(stack) for stack in stacks]
    one = [stack[example] for stack in stacks]
    for got, expected in ((call(*one), want[example]),
                          (jax.jit(call)(*one), want[example]),
                          (jax.jit(jax.vmap(call))(*stacks), want)):
        assert isinstance(got, jax.Array) and got.dtype == dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("structure", [None, np.ones((3, 3), bool)])
def test_watershed_ift_under_jit_and_vmap_equals_scipy(structure):
    # The queue runs as a host callback in the trace, once per example
    # under vmap: the labels, dtype and device of eager JAX input.
    rng = np.random.default_rng(5)
    costs = (ndi.gaussian_filter(rng.random((3, 24, 31)), 2) * 255
             ).astype(np.uint8)
    markers = np.zeros(costs.shape, np.int16)
    markers[:, 4, 5], markers[:, 18, 25], markers[:, 0, 0] = 1, 2, -1
    markers[1, 10, 3] = 3
    want = np.stack([ndi.watershed_ift(c, m, structure)
                     for c, m in zip(costs, markers)])

    _assert_eager_jit_and_vmap(
        lambda c, m: jnd.watershed_ift(c, m, structure), (costs, markers),
        want, np.int16)


@pytest.mark.parametrize("index, func, positions", [
    ([1, 2, 3, 9], np.mean, False),   # a label that does not occur
    (2, np.max, False),               # a scalar index: a scalar result
    ([3, 1], lambda v, p: (v * p).sum(), True),
])
def test_labeled_comprehension_under_jit_and_vmap_equals_scipy(
        index, func, positions):
    # The user's function runs on the host as a callback in the trace, on
    # the values in SciPy's order: eager JAX input's results, to the bit.
    rng = np.random.default_rng(6)
    values = rng.random((3, 14, 17)).astype(np.float32)
    labels = (rng.random((3, 14, 17)) * 4).astype(np.int32)

    def call(module, v, lab):
        return module.labeled_comprehension(
            v, lab, index, func, np.float64, -1.0, pass_positions=positions)

    want = np.stack([call(ndi, v, lab) for v, lab in zip(values, labels)])
    _assert_eager_jit_and_vmap(lambda v, lab: call(jnd, v, lab),
                               (values, labels), want.astype(np.float32),
                               np.float32, example=2)


def test_dask_label_across_chunks_equals_scipy():
    da = pytest.importorskip("dask.array")
    image = RNG.random((13, 11, 7)) > 0.55
    for rank in (1, 3):
        structure = ndi.generate_binary_structure(3, rank)
        labels, n = jnd.label(da.from_array(image, chunks=(4, 5, 3)),
                              structure)
        theirs, m = ndi.label(image, structure)
        assert isinstance(labels, da.Array) and n == m
        np.testing.assert_array_equal(labels.compute(), theirs)
    # uneven chunks, one of a single row, and diagonal links across seams
    image = RNG.random((17, 12)) > 0.6
    labels, n = jnd.label(da.from_array(image, chunks=((6, 1, 10), (5, 7))),
                          np.ones((3, 3)))
    theirs, m = ndi.label(image, np.ones((3, 3)))
    assert n == m
    np.testing.assert_array_equal(labels.compute(), theirs)


def test_dask_statistics_are_lazy_and_equal_scipy():
    da = pytest.importorskip("dask.array")
    image = da.from_array(IMAGE, chunks=(5, 4))
    labels = da.from_array(LABELS, chunks=6)
    for name in ["sum_labels", "mean", "maximum"]:  # tree-reduced, whole
        for index in [None, 2, INDEX]:
            ours = getattr(jnd, name)(image, labels, index)
            theirs = getattr(ndi, name)(IMAGE, LABELS, index)
            assert isinstance(ours, da.Array)
            np.testing.assert_allclose(ours.compute(), theirs)


def test_dask_center_of_mass_and_find_objects_by_blocks_equal_scipy():
    da = pytest.importorskip("dask.array")
    labels = da.from_array(LABELS, chunks=(5, 4))
    image = da.from_array(IMAGE, chunks=(6, 3))
    for index in [None, 2, INDEX]:
        ours = jnd.center_of_mass(image, labels, index)
        theirs = ndi.center_of_mass(IMAGE, LABELS, index)
        rows = ours if isinstance(ours, list) else [ours]
        assert all(isinstance(x, da.Array) for row in rows for x in row)
        np.testing.assert_allclose(
            [[float(x.compute()) for x in row] for row in rows],
            np.reshape(theirs, (len(rows), -1)), rtol=1e-12)
    assert jnd.find_objects(labels) == ndi.find_objects(LABELS)
    assert (jnd.find_objects(labels, max_label=COUNT + 2)
            == ndi.find_objects(LABELS, max_label=COUNT + 2))


def test_float32_sums_of_a_million_points_keep_float32_precision():
    # A group's float32 points added one after the other are off by about
    # n * eps (1e-3 at 2048²); in blocks the error stays near float32's.
    rng = np.random.default_rng(7)
    image = rng.random((1024, 1024)).astype(np.float32)
    labels = (rng.random((1024, 1024)) * 4).astype(np.int32)
    index = [0, 1, 2, 3]
    expected = ndi.sum_labels(image, labels, index)
    got = np.asarray(jnd.sum_labels(jnp.asarray(image), jnp.asarray(labels),
                                    index))
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    centres = jnd.center_of_mass(jnp.asarray(image), jnp.asarray(labels),
                                 index)
    np.testing.assert_allclose(np.asarray(centres),
                               ndi.center_of_mass(image, labels, index),
                               rtol=1e-6)
