"""dask arrays: lazy in, lazy out, equal to the single-array result.

Everything runs on a real ``dask.distributed`` LocalCluster with two worker
processes, on small arrays cut into chunks smaller than the kernels.
"""

import numpy as np
import pytest
import scipy.ndimage as sp

import jaxndimage as jn

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

MODES = ["reflect", "grid-mirror", "constant", "grid-constant", "nearest",
         "mirror", "wrap", "grid-wrap"]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True,
        dashboard_address=None, memory_limit="2GiB")
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


@pytest.fixture(scope="module")
def image():
    return np.random.default_rng(7).random((20, 24))


def _check(client, cases):
    """Compute every lazy result on the cluster at once and compare each with
    the same function on the numpy array."""
    lazy = [result for result, _ in cases]
    assert all(isinstance(result, da.Array) for result in lazy)
    computed = client.gather(client.compute(lazy))
    for got, (result, expected) in zip(computed, cases):
        assert got.dtype == expected.dtype == result.dtype
        assert got.shape == expected.shape == result.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_matches_the_single_array(client, image, mode):
    x = da.from_array(image, chunks=(5, 6))
    weights = np.random.default_rng(1).random((3, 4))
    calls = [
        # radius 6 is wider than the 5 x 6 chunks: they are merged first.
        (jn.gaussian_filter, (1.5,), {}),
        (jn.uniform_filter, ((4, 5),), {"origin": (1, -2)}),
        (jn.correlate, (weights,), {"origin": (-1, 1)}),
        (jn.convolve1d, ([1.0, -2.0, 0.5, 3.0],), {"axis": 0, "origin": 1}),
        (jn.median_filter, (), {"footprint": np.eye(3, 4, dtype=bool)}),
    ]
    _check(client, [(f(x, *args, mode=mode, cval=0.25, **kw),
                     f(image, *args, mode=mode, cval=0.25, **kw))
                    for f, args, kw in calls])
    # and the single-array result is SciPy's
    np.testing.assert_allclose(jn.gaussian_filter(image, 1.5, mode=mode),
                               sp.gaussian_filter(image, 1.5, mode=mode),
                               rtol=1e-12)


def test_every_implemented_filter(client, image):
    x = da.from_array(image, chunks=(7, 8))
    rng = np.random.default_rng(2)

    def d2(input, axis, output, mode, cval):
        return jn.correlate1d(input, [1.0, -2.0, 1.0], axis, output, mode,
                              cval)

    calls = [
        (jn.correlate1d, (rng.random(5),), {"origin": -1}),
        (jn.convolve, (rng.random((2, 3)),), {}),
        (jn.uniform_filter1d, (6,), {"axis": 0}),
        (jn.gaussian_filter1d, (2.0,), {"order": 1}),
        (jn.gaussian_laplace, (1.0,), {}),
        (jn.gaussian_gradient_magnitude, (1.0,), {"mode": "wrap"}),
        (jn.sobel, (0,), {}),
        (jn.prewitt, (1,), {"mode": "nearest"}),
        (jn.laplace, (), {"mode": "mirror"}),
        (jn.generic_laplace, (d2,), {}),
        (jn.minimum_filter1d, (4,), {"origin": 1}),
        (jn.maximum_filter1d, (3,), {"mode": "wrap"}),
        (jn.minimum_filter, (3,), {}),
        (jn.maximum_filter, ((2, 5),), {"mode": "constant"}),
        (jn.rank_filter, (2,), {"size": 3}),
        (jn.percentile_filter, (30,), {"size": (3, 2)}),
        (jn.generic_filter, (np.ptp,), {"size": 3}),
    ]
    _check(client, [(f(x, *args, **kw), f(image, *args, **kw))
                    for f, args, kw in calls])


def test_result_is_lazy_and_keeps_the_chunking(image):
    x = da.from_array(image, chunks=(10, 12))
    result = jn.gaussian_filter(x, 1.0)
    assert isinstance(result, da.Array)
    assert result.chunks == x.chunks
    assert any("overlap" in name for name in result.dask.layers)


def test_chunks_smaller_than_the_depth(client):
    data = np.random.default_rng(3).random((30, 9))
    x = da.from_array(data, chunks=(2, 3))
    cases = [(jn.gaussian_filter(x, 3.0, mode=mode),
              jn.gaussian_filter(data, 3.0, mode=mode))
             for mode in ("wrap", "mirror")]
    # An axis shorter than the kernel radius is filtered whole.
    cases.append((jn.uniform_filter1d(x, 25, axis=1, mode="reflect"),
                  jn.uniform_filter1d(data, 25, axis=1, mode="reflect")))
    _check(client, cases)


def test_per_axis_modes_axes_and_integer_output(client):
    rng = np.random.default_rng(4)
    data = (rng.random((12, 5, 14)) * 200).astype(np.uint8)
    x = da.from_array(data, chunks=(4, 5, 5))
    kwargs = {"mode": ["wrap", "constant"], "cval": 7.6, "axes": (0, 2)}
    cases = [
        (jn.gaussian_filter(x, [1.0, 2.0], **kwargs),
         jn.gaussian_filter(data, [1.0, 2.0], **kwargs)),
        (jn.uniform_filter(x, 3, output=np.int16, mode="mirror"),
         jn.uniform_filter(data, 3, output=np.int16, mode="mirror")),
        (jn.sobel(x, 2, mode=["reflect", "wrap", "nearest"]),
         jn.sobel(data, 2, mode=["reflect", "wrap", "nearest"])),
    ]
    _check(client, cases)
    np.testing.assert_array_equal(cases[0][1],
                                  sp.gaussian_filter(data, [1.0, 2.0],
                                                     **kwargs))


def test_dask_weights_are_computed(client, image):
    x = da.from_array(image, chunks=(5, 6))
    weights = np.arange(6.0).reshape(2, 3)
    _check(client, [(jn.correlate(x, da.from_array(weights)),
                     jn.correlate(image, weights))])


def test_dask_output_array_receives_the_result_lazily(client, image):
    x = da.from_array(image, chunks=(10, 12))
    output = da.zeros(image.shape, dtype=np.float32, chunks=(10, 12))
    result = jn.gaussian_filter(x, 1.0, output=output)
    assert result is output and output.dtype == np.float32
    _check(client, [(output, jn.gaussian_filter(image, 1.0,
                                                output=np.float32))])
    with pytest.raises(RuntimeError, match="output shape"):
        jn.gaussian_filter(x, 1.0, output=da.zeros((3, 4)))


def test_numpy_output_array_with_a_dask_input_is_a_clear_error(image):
    x = da.from_array(image, chunks=(10, 12))
    with pytest.raises(TypeError, match="output.*dask"):
        jn.gaussian_filter(x, 1.0, output=np.zeros_like(image))
    assert jn.gaussian_filter(x, 1.0, output=np.float32).dtype == np.float32


def test_vectorized_filter_learns_a_value_dependent_dtype(client):
    data = np.arange(40, dtype=np.int8)
    x = da.from_array(data, chunks=10)
    lazy = jn.vectorized_filter(x, np.sum, size=3)
    assert lazy.dtype == sp.vectorized_filter(data, np.sum, size=3).dtype
    valid = jn.vectorized_filter(x.astype(np.float64), np.mean, size=5,
                                 mode="valid")
    _check(client, [
        (lazy, sp.vectorized_filter(data, np.sum, size=3)),
        (valid, sp.vectorized_filter(data.astype(np.float64), np.mean,
                                     size=5, mode="valid"))])
    with pytest.raises(ValueError, match="batch_memory"):
        jn.vectorized_filter(x, np.sum, size=3, batch_memory=1)


def test_bad_arguments_raise_at_call_time_as_for_numpy(image):
    x = da.from_array(image, chunks=(10, 12))
    with pytest.raises(RuntimeError, match="mode"):
        jn.gaussian_filter(x, 1.0, mode="bogus")
    with pytest.raises(RuntimeError, match="sequence argument"):
        jn.uniform_filter(x, (3, 3, 3))


def test_function_without_a_depth_computes_the_whole_array(image):
    x = da.from_array(image, chunks=(10, 12))
    result = jn.zoom(x, 1.5, order=1)
    assert isinstance(result, da.Array)
    np.testing.assert_allclose(result.compute(), jn.zoom(image, 1.5, order=1))


def test_empty_and_zero_dimensional():
    empty = da.zeros((0, 6), chunks=(1, 3))
    assert jn.gaussian_filter(empty, 1.0).compute().shape == (0, 6)
    scalar = da.from_array(np.float64(3.0))
    np.testing.assert_allclose(jn.gaussian_filter(scalar, 1.0).compute(),
                               3.0)


def test_vectorized_filter_takes_an_array_origin(client):
    data = np.arange(40.0).reshape(5, 8)
    x = da.from_array(data, chunks=4)
    origin = np.array([0, 1])
    _check(client, [(jn.vectorized_filter(x, np.mean, size=3, origin=origin),
                     sp.vectorized_filter(data, np.mean, size=3,
                                          origin=origin))])
