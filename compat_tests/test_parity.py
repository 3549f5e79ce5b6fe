"""Edge cases where SciPy's answer comes from its C casts, its early exits or
its validation: jaxndimage gives the same values, dtype (byte order
included) and exception type."""

import warnings

import numpy as np
import pytest
import scipy.ndimage as sp

import jaxndimage as jn

WIDE = np.array([256, 257, -256, 512])
IMAGE = np.arange(16.0).reshape(4, 4)
SPECTRUM = np.fft.fft2(IMAGE)
BOOLS = np.tile([0, 1, 0], (3, 1)).astype(bool)
CROSS = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], bool)


def _read_only(dtype, shape=IMAGE.shape):
    array = np.zeros(shape, dtype)
    array.flags.writeable = False
    return array


CASES = {
    # SciPy's C stores through a 32-bit integer into a bool's byte.
    "maximum_filter int -> bool": lambda m: m.maximum_filter(WIDE, 2, output=bool),
    "minimum_filter int -> bool": lambda m: m.minimum_filter(WIDE, 3, output=bool),
    "maximum_filter1d size 1 int -> bool": lambda m: m.maximum_filter1d(WIDE, 1, output=bool),
    "uniform_filter1d size 1 int -> bool": lambda m: m.uniform_filter1d(WIDE, 1, output=bool),
    "float -> bool": lambda m: m.uniform_filter(WIDE + 0.5, 3, output=bool),
    # SciPy ranks bools as bytes, with cval cast to one.
    "median_filter bool, cval 2.5": lambda m: m.median_filter(
        BOOLS, 3, mode="constant", cval=2.5, output=float),
    "percentile_filter bool, cval -1": lambda m: m.percentile_filter(
        BOOLS, 50, 3, mode="constant", cval=-1, output=float),
    "maximum_filter bool footprint, cval 2.5": lambda m: m.maximum_filter(
        BOOLS, footprint=CROSS, mode="constant", cval=2.5, output=float),
    "maximum_filter bool box, cval 2.5": lambda m: m.maximum_filter(
        BOOLS, 3, mode="constant", cval=2.5, output=float),
    # Without a window to apply SciPy copies: output[...] = input.
    "maximum_filter size 1 copies": lambda m: m.maximum_filter(WIDE, 1, output=bool),
    "uniform_filter size 1 copies": lambda m: m.uniform_filter(WIDE, 1, output=bool),
    "gaussian_filter sigma 0 copies": lambda m: m.gaussian_filter(WIDE, 0, output=bool),
    "zoom by 1 copies": lambda m: m.zoom(np.array([300.0, -5.0, 2.5]), 1, output=np.uint8),
    "zoom by 1 without prefilter": lambda m: m.zoom(
        np.array([300.0, -5.0, 2.5]), 1, output=np.uint8, prefilter=False),
    # Byte order.
    "fourier output array big-endian": lambda m: m.fourier_uniform(
        IMAGE, 2, output=np.zeros((4, 4), ">f8")),
    "fourier input big-endian": lambda m: m.fourier_gaussian(SPECTRUM.astype(">c16"), 1.5),
    "fourier input big-endian float32": lambda m: m.fourier_shift(IMAGE.astype(">f4"), 1),
    # Exceptions.
    "fourier complex input, real output": lambda m: m.fourier_uniform(
        SPECTRUM, 2, output=np.float64),
    "fourier_ellipsoid complex input, real output": lambda m: m.fourier_ellipsoid(
        SPECTRUM, 2, output=np.float32),
    "map_coordinates real input, complex output": lambda m: m.map_coordinates(
        IMAGE, [[1.5], [2.5]], output=np.complex128),
    "zoom real input, complex output": lambda m: m.zoom(IMAGE, 2, output=np.complex128),
    "zoom by 1, complex output": lambda m: m.zoom(IMAGE, 1, output=np.complex128),
    "shift real input, complex output": lambda m: m.shift(
        IMAGE, 1, order=1, output=np.complex128),
    "affine_transform real input, complex output": lambda m: m.affine_transform(
        IMAGE, np.eye(2), output=np.complex64),
    "rotate real input, complex output": lambda m: m.rotate(IMAGE, 10, output=np.complex128),
    "geometric_transform real input, complex output": lambda m: m.geometric_transform(
        IMAGE, lambda c: c, output=np.complex128),
    "spline_filter real input, complex output": lambda m: m.spline_filter(
        IMAGE, output=np.complex128),
    "spline_filter1d real input, complex output": lambda m: m.spline_filter1d(
        IMAGE, output=np.complex128),
    "rotate by nan": lambda m: m.rotate(IMAGE, np.nan),
    "uniform_filter1d float size": lambda m: m.uniform_filter1d(IMAGE, 2.0),
    "gaussian_filter1d axis of 0-d input": lambda m: m.gaussian_filter1d(np.array(1.0), 1, axis=1),
    # A non-finite sample that SciPy does not read (past the edge of a
    # constant mode, outside the window) does not reach the result.
    "map_coordinates nan past the edge": lambda m: m.map_coordinates(
        np.array([np.nan, 1, 2, 3.0]), [[3.0, 3.5, -1.5]], order=1, mode="grid-constant"),
    "map_coordinates nan beside a cubic window": lambda m: m.map_coordinates(
        np.array([np.nan, 1, 2, 3, 4, 5.0]), [[3.0, 2.5]], order=3, prefilter=False),
    "map_coordinates nan, 2-d quadratic": lambda m: m.map_coordinates(
        np.array([[np.nan, 1, 2, 3, 4, 5.0]] * 5), [[2, 1.5], [3.0, 3.5]], order=2,
        prefilter=False),
    "map_coordinates inf, 2-d linear": lambda m: m.map_coordinates(
        np.tile([np.inf, 1, 2, 3, 4], (4, 1)), [[1.0, 2.0], [3.0, 4.5]], order=1),
    "shift nan": lambda m: m.shift(np.array([np.nan, 1, 2, 3, 4, 5.0]), 0.5, order=1),
    "zoom nan": lambda m: m.zoom(np.array([1, 2, 3, 4, 5, np.nan]), 0.5, order=1),
    "shift nan, cubic": lambda m: m.shift(
        np.array([1, 2, 3, 4, 5, np.nan]), -2.0, order=3, prefilter=False),
    # Non-finite coordinates: SciPy's C turns them into the most negative
    # integer; what that gives depends on the mode and the order.
    "rotate by nan, reshape=False": lambda m: m.rotate(IMAGE, np.nan, reshape=False),
    **{f"map_coordinates at nan and inf, {mode}, order {order}": (
        lambda m, mode=mode, order=order: m.map_coordinates(
            np.arange(1, 7.0), [[np.nan, np.inf, -np.inf, 2.5]], order=order,
            mode=mode, cval=-7))
       for mode in ("constant", "grid-constant", "nearest", "reflect", "wrap")
       for order in (0, 1, 3)},
    # SciPy's C code refuses a read-only output before it reads the dtype,
    # and an object output (as an array or a requested dtype).
    "fourier_gaussian read-only int output": lambda m: m.fourier_gaussian(
        IMAGE, 1.0, output=_read_only(np.int8)),
    "fourier_uniform complex input, read-only real output": lambda m: m.fourier_uniform(
        SPECTRUM, 1.0, output=_read_only(np.float64)),
    "fourier_shift read-only real output": lambda m: m.fourier_shift(
        IMAGE, 1.0, output=_read_only(np.float32)),
    "fourier_shift wrong shape before read-only": lambda m: m.fourier_shift(
        IMAGE, 1.0, output=_read_only(np.complex128, (3, 4))),
    "fourier_gaussian wrong shape before a bad axis": lambda m: m.fourier_gaussian(
        IMAGE, 1.0, axis=3, output=np.zeros((3, 4))),
    "fourier_gaussian output array of int type": lambda m: m.fourier_gaussian(
        IMAGE, 1.0, output=np.zeros((4, 4), np.int16)),
    "fourier_ellipsoid empty input, int output array": lambda m: m.fourier_ellipsoid(
        np.ones((0, 3)), 1.0, output=np.zeros((0, 3), np.int8)),
    "correlate read-only complex output": lambda m: m.correlate(
        IMAGE, CROSS, output=_read_only(np.complex64)),
    "uniform_filter1d read-only complex output": lambda m: m.uniform_filter1d(
        IMAGE, 3, output=_read_only(np.complex128)),
    "spline_filter1d read-only complex output": lambda m: m.spline_filter1d(
        IMAGE, output=_read_only(np.complex64)),
    "affine_transform read-only complex output": lambda m: m.affine_transform(
        IMAGE, np.eye(2), output=_read_only(np.complex64)),
    "maximum_filter read-only output": lambda m: m.maximum_filter(
        IMAGE, 3, output=_read_only(np.float32)),
    "maximum_filter wrong shape before read-only": lambda m: m.maximum_filter(
        IMAGE, 3, output=_read_only(np.float32, (2, 2))),
    "geometric_transform output=object": lambda m: m.geometric_transform(
        IMAGE, lambda c: c, output=object),
    "rotate object output array": lambda m: m.rotate(
        IMAGE, 30, reshape=False, output=np.zeros((4, 4), object)),
    "gaussian_filter output=object": lambda m: m.gaussian_filter(IMAGE, 1.0, output=object),
    "median_filter output=dtype(object)": lambda m: m.median_filter(
        IMAGE, 3, output=np.dtype(object)),
    "binary_erosion output=object": lambda m: m.binary_erosion(BOOLS, output=object),
    "grey_opening output=object": lambda m: m.grey_opening(IMAGE, 3, output=object),
    "label complex output": lambda m: m.label(BOOLS, output=np.complex64),
    "label object output array": lambda m: m.label(BOOLS, output=np.zeros((3, 3), object)),
    "label big-endian output": lambda m: m.label(BOOLS, output=np.dtype(">i4")),
    # watershed_ift takes an output array; anything else SciPy ignores.
    "watershed_ift output dtype ignored": lambda m: m.watershed_ift(
        np.zeros((3, 3), np.uint8), np.eye(3, dtype=np.int16), output=np.int64),
    "watershed_ift output=object ignored": lambda m: m.watershed_ift(
        np.zeros((3, 3), np.uint8), np.eye(3, dtype=np.int32), output=object),
    # numpy callables get numpy's result types, as SciPy calls them.
    "vectorized_filter np.mean of bool": lambda m: m.vectorized_filter(BOOLS, np.mean, size=2),
    "vectorized_filter mean of uint8 windows": lambda m: m.vectorized_filter(
        WIDE.astype(np.uint8), lambda w, axis: w.mean(axis=axis), size=3),
    "vectorized_filter np.var of int16, footprint": lambda m: m.vectorized_filter(
        (IMAGE * 3).astype(np.int16), np.var, footprint=CROSS, mode="wrap"),
    "vectorized_filter sqrt of bool windows": lambda m: m.vectorized_filter(
        BOOLS, lambda w, axis: np.sqrt(w).sum(axis=axis), size=(2, 3)),
    "vectorized_filter np.mean of 0-d bool": lambda m: m.vectorized_filter(
        np.array(True), np.mean, size=()),
    "vectorized_filter 0-d input, output array left alone": lambda m: m.vectorized_filter(
        np.array(3), np.mean, size=(), output=np.zeros((), np.int8)),
    "vectorized_filter empty input with axes": lambda m: m.vectorized_filter(
        np.ones((0, 4)), np.mean, size=(3, 1), axes=(1, 0)),
    "vectorized_filter output array of another shape": lambda m: m.vectorized_filter(
        IMAGE, np.mean, size=2, output=np.zeros((4, 3))),
    "vectorized_filter valid window larger than input": lambda m: m.vectorized_filter(
        np.ones(3), np.mean, size=5, mode="valid"),
    # Where SciPy computes, compute.
    "vectorized_filter float16": lambda m: m.vectorized_filter(
        IMAGE.astype(np.float16), np.mean, size=3),
    "vectorized_filter empty input, valid": lambda m: m.vectorized_filter(
        np.ones((0, 4)), np.mean, size=(1, 3), mode="valid"),
    "generic_filter empty footprint": lambda m: m.generic_filter(
        IMAGE, np.mean, footprint=np.zeros((2, 2), bool)),
    # SciPy's 1-D rank route: other integers and bools ranked in int64,
    # cval converted as numpy's scalar types convert it.
    "median_filter 1-D uint8, cval -3.5": lambda m: m.median_filter(
        np.arange(7, dtype=np.uint8), 3, mode="constant", cval=-3.5),
    "rank_filter 1-D int8 into bool, cval 300": lambda m: m.rank_filter(
        np.arange(-3, 4, dtype=np.int8), 1, 4, mode="constant", cval=300,
        output=bool),
    "median_filter 1-D int, NaN cval": lambda m: m.median_filter(
        np.arange(5), 3, mode="constant", cval=np.nan),
    "percentile_filter 1-D bool, infinite cval": lambda m: m.percentile_filter(
        np.arange(5) > 2, 50, 3, mode="constant", cval=np.inf),
    # numpy's ufuncs store the gradient and top-hats into the output
    # under the same-kind rule.
    "morphological_gradient into an int16 array": lambda m: m.morphological_gradient(
        IMAGE.astype(np.float32), size=2, output=np.zeros((4, 4), np.int16)),
    "morphological_laplace into an int16 array": lambda m: m.morphological_laplace(
        IMAGE.astype(np.float32), size=2, output=np.zeros((4, 4), np.int16)),
    "white_tophat of int32 into uint16": lambda m: m.white_tophat(
        IMAGE.astype(np.int32), size=2, output=np.zeros((4, 4), np.uint16)),
    "black_tophat of int32 into a uint16 dtype": lambda m: m.black_tophat(
        IMAGE.astype(np.int32), size=2, output=np.uint16),
    "morphological_gradient into a float32 array": lambda m: m.morphological_gradient(
        IMAGE.astype(np.int16), size=2, output=np.zeros((4, 4), np.float32)),
    # Labels written into bools are true; a centre past the structure
    # is an IndexError; complex values have no sums per label of an index.
    "label into bools": lambda m: m.label(np.array([1, 0, 1, 0, 1], bool), output=bool)[0],
    "binary_erosion origin past the structure": lambda m: m.binary_erosion(
        BOOLS, CROSS, origin=2),
    "binary_hit_or_miss origin past the structure": lambda m: m.binary_hit_or_miss(
        BOOLS, np.ones((1, 2)), origin1=[0, 1]),
    "sum_labels of complex input over an index": lambda m: m.sum_labels(
        SPECTRUM, BOOLS.astype(int) + 1, [1, 2]),
    "center_of_mass of complex input over an index": lambda m: m.center_of_mass(
        SPECTRUM, BOOLS.astype(int) + 1, [1, 2]),
    "mean of complex input, scalar index": lambda m: m.mean(
        SPECTRUM, BOOLS.astype(int) + 1, 1),
    # float16: SciPy's C layer refuses it, its early exits and its 1-D
    # rank route (in float32) do not.
    "float16 uniform_filter size 1 copies": lambda m: m.uniform_filter(
        IMAGE.astype(np.float16), 1),
    "float16 maximum_filter size 1 copies": lambda m: m.maximum_filter(
        IMAGE.astype(np.float16), 1),
    "float16 maximum_filter1d size 1": lambda m: m.maximum_filter1d(
        IMAGE.astype(np.float16), 1),
    "float16 median_filter size 1 copies": lambda m: m.median_filter(
        IMAGE.astype(np.float16), 1),
    "float16 gaussian_laplace sigma 0 copies": lambda m: m.gaussian_laplace(
        IMAGE.astype(np.float16), 0),
    "float16 white_tophat size 1": lambda m: m.white_tophat(
        IMAGE.astype(np.float16), size=1),
    "float16 spline_filter1d order 1 copies": lambda m: m.spline_filter1d(
        IMAGE.astype(np.float16), 1),
    "float16 rank_filter 1-D maximum": lambda m: m.rank_filter(
        np.arange(6, dtype=np.float16), -1, size=3),
    "float16 rank_filter 1-D middle rank": lambda m: m.rank_filter(
        np.arange(6, dtype=np.float16), 1, size=3),
    "float16 median_filter empty 2-D": lambda m: m.median_filter(
        np.zeros((0, 4), np.float16), 3),
    "float16 minimum_filter empty 2-D": lambda m: m.minimum_filter(
        np.zeros((0, 4), np.float16), 3),
    # SciPy divides by sigma squared: a Python 0 raises, a numpy 0 gives
    # NaN weights; gaussian_filter leaves such axes alone.
    "gaussian_filter1d sigma 0": lambda m: m.gaussian_filter1d(IMAGE, 0),
    "gaussian_filter1d sigma numpy 0": lambda m: m.gaussian_filter1d(
        IMAGE, np.float64(0)),
    "gaussian_filter1d sigma 1e-200": lambda m: m.gaussian_filter1d(IMAGE, 1e-200),
    "gaussian_filter sigma (0, 1)": lambda m: m.gaussian_filter(IMAGE, (0, 1)),
    # SciPy's C layer reads cval as a double; its early exits copy.
    "shift of real input, complex cval": lambda m: m.shift(IMAGE, 0.5, cval=1j),
    "map_coordinates of real input, complex cval": lambda m: m.map_coordinates(
        IMAGE, [[0.5], [1.5]], cval=1j),
    "zoom by 1 of real input, complex cval copies": lambda m: m.zoom(IMAGE, 1, cval=1j),
    "maximum_filter complex cval": lambda m: m.maximum_filter(IMAGE, 3, cval=1j),
    "median_filter complex cval": lambda m: m.median_filter(IMAGE, 3, cval=1j),
    "minimum_filter1d size 1, complex cval": lambda m: m.minimum_filter1d(
        IMAGE, 1, cval=1j),
    "generic_filter complex cval": lambda m: m.generic_filter(
        IMAGE, np.mean, 3, cval=1j),
    "maximum_filter size 1 into a complex output copies": lambda m: m.maximum_filter(
        WIDE, 1, output=np.zeros(4, complex)),
    "uniform_filter size 1 into a complex output copies": lambda m: m.uniform_filter(
        WIDE, 1, output=np.zeros(4, complex)),
    "uniform_filter size 1, complex cval copies": lambda m: m.uniform_filter(
        WIDE, 1, cval=1 + 2j),
    # With every axis in `axes`, in any order, SciPy keeps the weights'
    # and the origins' order.
    "correlate every axis out of order, origins": lambda m: m.correlate(
        IMAGE ** 2, np.arange(9.0).reshape(3, 3), origin=(0, 1), axes=(1, 0)),
    "convolve every axis out of order, origins": lambda m: m.convolve(
        IMAGE ** 2, np.arange(6.0).reshape(3, 2), origin=(-1, 0), axes=(1, 0)),
    "correlate every axis out of order, invalid origin": lambda m: m.correlate(
        IMAGE, [[1.0], [2.0]], origin=(0, -1), axes=(1, 0)),
    "maximum_filter footprint, every axis out of order": lambda m: m.maximum_filter(
        IMAGE ** 2, footprint=CROSS[:, :2], origin=(1, 0), axes=(1, 0)),
    "binary_erosion every axis out of order, origins": lambda m: m.binary_erosion(
        IMAGE > 3, CROSS[:2], origin=(-1, 0), axes=(1, 0)),
}


def _outcome(call, module):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return call(module)
        except Exception as error:  # noqa: BLE001 (the type is compared)
            return error


@pytest.mark.parametrize("name", CASES)
def test_same_answer_or_same_exception_as_scipy(name):
    expected = _outcome(CASES[name], sp)
    got = _outcome(CASES[name], jn)
    if isinstance(expected, Exception):
        assert isinstance(got, type(expected)), f"SciPy raises {expected!r}, got {got!r}"
        return
    assert not isinstance(got, Exception), f"SciPy computes, jaxndimage raised {got!r}"
    got = np.asarray(got)
    assert got.dtype == expected.dtype  # byte order included
    if got.dtype.kind in "fc":  # NaN where SciPy has NaN; values to rounding
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("shape", [(3, 3), (15, 15), (5, 5, 5), (4, 5, 4, 3)])
def test_correlate_adds_as_scipy_bit_for_bit(shape):
    """SciPy's sum per point: from +0 (no -0), over the weights above
    float64's epsilon only (an infinite sample under a zero weight is
    left out, not a NaN), in its order, for any number of weights."""
    rng = np.random.default_rng(len(shape))
    weights = rng.standard_normal(shape)
    weights.flat[1] = 0.0
    weights.flat[-1] = 1e-17
    x = rng.standard_normal((7,) * len(shape))
    x.flat[3], x.flat[5] = np.inf, 0.0
    for function in ("correlate", "convolve"):
        want = getattr(sp, function)(x, weights, mode="nearest")
        got = getattr(jn, function)(x, weights, mode="nearest")
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    for x, weights in ((np.zeros(3), [-1.0]), (np.array(0.0), np.array(-1.0)),
                       (np.array(np.inf), np.array(0.0))):
        want, got = sp.correlate(x, weights), jn.correlate(x, weights)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
