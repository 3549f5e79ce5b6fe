"""Property tests: the distance transforms against SciPy.

Random shapes (1-D to 3-D, length-1 axes included), densities, dtypes,
samplings and structures; distances and feature indices must be identical,
ties included.
"""

import numpy as np
import scipy.ndimage as ndi
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxndimage as jnd

SETTINGS = settings(max_examples=10, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
DTYPES = [np.bool_, np.uint8, np.int32, np.float32, np.float64]


@st.composite
def binary_images(draw, max_ndim=3):
    ndim = draw(st.integers(1, max_ndim))
    shape = tuple(draw(st.lists(st.integers(1, 7), min_size=ndim,
                                max_size=ndim)))
    density = draw(st.sampled_from([0.0, 0.5, 0.8, 0.95, 1.0]))
    seed = draw(st.integers(0, 2**32 - 1))
    image = np.random.default_rng(seed).random(shape) < density
    return image.astype(draw(st.sampled_from(DTYPES)))


@st.composite
def samplings(draw, ndim):
    kind = draw(st.sampled_from(["none", "scalar", "sequence"]))
    if kind == "none":
        return None
    values = st.floats(0.25, 4.0, allow_nan=False)
    if kind == "scalar":
        return draw(values)
    return draw(st.lists(values, min_size=ndim, max_size=ndim))


def _same(ours, theirs):
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


@SETTINGS
@given(data=st.data())
def test_edt_matches_scipy(data):
    image = data.draw(binary_images())
    sampling = data.draw(samplings(image.ndim))
    _same(jnd.distance_transform_edt(image, sampling, return_indices=True),
          ndi.distance_transform_edt(image, sampling, return_indices=True))


@SETTINGS
@given(data=st.data())
def test_cdt_matches_scipy(data):
    image = data.draw(binary_images())
    metric = data.draw(st.sampled_from(["chessboard", "taxicab", "custom"]))
    if metric == "custom":
        seed = data.draw(st.integers(0, 2**32 - 1))
        metric = np.random.default_rng(seed).random((3,) * image.ndim) < 0.5
    indices = data.draw(st.booleans())
    ours = jnd.distance_transform_cdt(image, metric, return_indices=indices)
    theirs = ndi.distance_transform_cdt(image, metric, return_indices=indices)
    _same(ours if indices else (ours,), theirs if indices else (theirs,))


@SETTINGS
@given(data=st.data())
def test_bf_matches_scipy(data):
    image = data.draw(binary_images(max_ndim=2))
    metric = data.draw(st.sampled_from(["euclidean", "taxicab",
                                        "chessboard"]))
    sampling = data.draw(samplings(image.ndim))
    _same(jnd.distance_transform_bf(image, metric, sampling,
                                    return_indices=True),
          ndi.distance_transform_bf(image, metric, sampling,
                                    return_indices=True))
