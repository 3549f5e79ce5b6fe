"""Property tests: rank, generic and Fourier filters against SciPy.

Random shapes, dtypes, boundary modes, footprints (non-rectangular and
even-sized), origins and axes; rank-type results must be identical, the
floating-point ones within the precision rules of DESIGN.md.
"""

import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxndimage as jnd

MODES = ["reflect", "grid-mirror", "constant", "grid-constant", "nearest",
         "mirror", "wrap", "grid-wrap"]
DTYPES = [np.uint8, np.int8, np.uint16, np.int32, np.int64, np.float32,
          np.float64]
SETTINGS = settings(max_examples=12, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def images(draw, dtypes=DTYPES, max_ndim=3, min_side=1):
    ndim = draw(st.integers(1, max_ndim))
    shape = tuple(draw(st.lists(st.integers(min_side, 7), min_size=ndim,
                                max_size=ndim)))
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    seed = draw(st.integers(0, 2**32 - 1))
    values = np.random.default_rng(seed).integers(-40, 200, shape)
    if dtype.kind == "u":
        values = np.abs(values)
    if dtype == np.int8:
        values = values % 100
    image = values.astype(dtype)
    if dtype.kind == "f":
        image = image + np.random.default_rng(seed).random(shape) \
            .astype(dtype)
    return image


@st.composite
def windows(draw, image):
    """(kwargs for size/footprint, window shape, axes)."""
    axes = None
    if image.ndim > 1 and draw(st.booleans()):
        count = draw(st.integers(1, image.ndim))
        axes = tuple(draw(st.permutations(range(image.ndim)))[:count])
    rank = image.ndim if axes is None else len(axes)
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank,
                                max_size=rank)))
    if draw(st.booleans()):
        return {"size": shape}, shape, axes
    seed = draw(st.integers(0, 2**32 - 1))
    footprint = np.random.default_rng(seed).random(shape) > 0.4
    footprint.flat[draw(st.integers(0, footprint.size - 1))] = True
    return {"footprint": footprint}, shape, axes


@st.composite
def origins(draw, shape):
    return tuple(draw(st.integers(-(n // 2), (n - 1) // 2)) for n in shape)


def _scipy(name, image, *args, **kwargs):
    """SciPy's result.  SciPy 1.17 sends 1-D rank filters to a separate
    routine that ignores the False entries of a footprint and reads past
    lines shorter than the window; the reference for 1-D input is SciPy's
    N-D routine on a (1, n) view."""
    if image.ndim == 1 and name in ("median_filter", "rank_filter",
                                    "percentile_filter"):
        kwargs = dict(kwargs)
        if kwargs.get("footprint") is not None:
            kwargs["footprint"] = np.asarray(kwargs["footprint"])[None]
        if kwargs.get("size") is not None:
            kwargs["size"] = (1,) + tuple(kwargs["size"])
        kwargs["origin"] = (0,) + tuple(np.atleast_1d(kwargs.get("origin",
                                                                  0)))
        return getattr(ndi, name)(image[None], *args, **kwargs)[0]
    return getattr(ndi, name)(image, *args, **kwargs)


def _compare(name, image, *args, **kwargs):
    try:
        theirs = _scipy(name, image, *args, **kwargs)
    except (ValueError, RuntimeError) as error:
        with pytest.raises(type(error)):
            getattr(jnd, name)(image, *args, **kwargs)
        return
    ours = getattr(jnd, name)(image, *args, **kwargs)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


@SETTINGS
@given(data=st.data())
@pytest.mark.parametrize("name", ["minimum_filter", "maximum_filter",
                                  "median_filter"])
def test_min_max_median(name, data):
    image = data.draw(images())
    kwargs, shape, axes = data.draw(windows(image))
    origin = data.draw(origins(shape))
    mode = data.draw(st.sampled_from(MODES))
    cval = data.draw(st.sampled_from([0, 3, -1.5, 250]))
    _compare(name, image, **kwargs, origin=origin, mode=mode, cval=cval,
             axes=axes)


@SETTINGS
@given(data=st.data())
def test_rank_and_percentile(data):
    image = data.draw(images())
    kwargs, shape, axes = data.draw(windows(image))
    count = (int(np.prod(shape)) if "size" in kwargs
             else int(kwargs["footprint"].sum()))
    rank = data.draw(st.integers(-count, count - 1))
    mode = data.draw(st.sampled_from(MODES))
    origin = data.draw(origins(shape))
    _compare("rank_filter", image, rank, **kwargs, mode=mode, origin=origin,
             axes=axes)
    percentile = data.draw(st.floats(-100, 100))
    _compare("percentile_filter", image, percentile, **kwargs, mode=mode,
             origin=origin, axes=axes)


@SETTINGS
@given(data=st.data())
def test_separable_modes_per_axis(data):
    image = data.draw(images())
    size = tuple(data.draw(st.lists(st.integers(1, 5), min_size=image.ndim,
                                    max_size=image.ndim)))
    modes = data.draw(st.lists(st.sampled_from(MODES), min_size=image.ndim,
                               max_size=image.ndim))
    name = data.draw(st.sampled_from(["minimum_filter", "maximum_filter"]))
    output = data.draw(st.sampled_from([None, np.float64, np.int16]))
    _compare(name, image, size=size, mode=modes, cval=2.5, output=output)


@SETTINGS
@given(data=st.data())
def test_filters1d(data):
    image = data.draw(images())
    size = data.draw(st.integers(1, 6))
    axis = data.draw(st.integers(-image.ndim, image.ndim - 1))
    origin = data.draw(st.integers(-(size // 2), (size - 1) // 2))
    mode = data.draw(st.sampled_from(MODES))
    name = data.draw(st.sampled_from(["minimum_filter1d",
                                      "maximum_filter1d"]))
    _compare(name, image, size, axis=axis, origin=origin, mode=mode, cval=-7)


@SETTINGS
@given(data=st.data())
def test_generic_filter(data):
    image = data.draw(images(max_ndim=2))
    kwargs, shape, axes = data.draw(windows(image))
    origin = data.draw(origins(shape))
    mode = data.draw(st.sampled_from(MODES))
    traced = data.draw(st.sampled_from([jnp.mean, jnp.max, jnp.ptp]))
    reference = {jnp.mean: np.mean, jnp.max: np.max, jnp.ptp: np.ptp}[traced]
    ours = jnd.generic_filter(image, traced, **kwargs, origin=origin,
                              mode=mode, cval=1.5, axes=axes)
    theirs = ndi.generic_filter(image, reference, **kwargs, origin=origin,
                                mode=mode, cval=1.5, axes=axes)
    assert ours.dtype == theirs.dtype
    if theirs.dtype.kind == "f":
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)
    else:
        # Means of integers may land within rounding of an integer.
        np.testing.assert_allclose(ours, theirs, atol=1)


VECTORIZED_MODES = MODES + ["valid"]


@SETTINGS
@given(data=st.data())
def test_vectorized_filter(data):
    # numpy callables of numpy windows, as SciPy calls them: numpy's result
    # types (np.mean of bool or integer windows is float64), empty input
    # returned as it is, an output array left alone there.
    image = data.draw(images(dtypes=[np.bool_, np.uint8, np.int16, np.int64,
                                     np.float32, np.float64],
                             max_ndim=2, min_side=0))
    kwargs, shape, axes = data.draw(windows(image))
    mode = data.draw(st.sampled_from(VECTORIZED_MODES))
    if mode != "valid":
        kwargs["origin"] = data.draw(origins(shape))
    function = data.draw(st.sampled_from([np.mean, np.sum, np.max, np.var]))
    call = dict(kwargs, mode=mode, axes=axes)
    try:
        expected = ndi.vectorized_filter(image, function, **call)
    except ValueError as error:  # a window larger than 'valid' input
        with pytest.raises(type(error)):
            jnd.vectorized_filter(image, function, **call)
        return
    theirs_out = ours_out = None
    if data.draw(st.booleans()):  # an output array, of another dtype
        dtype = data.draw(st.sampled_from([np.float32, np.float64,
                                           np.int32]))
        theirs_out = np.zeros(expected.shape, dtype)
        ours_out = theirs_out.copy()
        expected = ndi.vectorized_filter(image, function, **call,
                                         output=theirs_out)
    ours = jnd.vectorized_filter(image, function, **call, output=ours_out)
    assert ours.dtype == expected.dtype
    if ours_out is not None:
        # SciPy returns a view of the array it wrote, jaxndimage the array.
        written = np.shares_memory(expected, theirs_out)
        assert (ours is ours_out) == written
    # A traced reduction of float32 windows adds (and divides) in XLA's
    # order, which can differ from numpy's in the last bit (the README's
    # deliberate differences), also when an output array widens it; an
    # integer output truncates it, which that bit can move by one.
    single = np.float32 in (image.dtype, expected.dtype, ours.dtype)
    tol = 1e-5 if single else 1e-12
    atol = 1 if single and expected.dtype.kind in "iu" else tol
    np.testing.assert_allclose(ours, expected, rtol=tol, atol=atol)
    if ours_out is not None:
        np.testing.assert_allclose(ours_out, theirs_out, rtol=tol, atol=atol)


@st.composite
def non_finite(draw, image):
    """``image`` with NaN and infinities in up to three samples (in the
    real part, the imaginary part or both of complex samples)."""
    image = image.copy()
    if image.dtype.kind not in "fc" or not image.size or not draw(
            st.booleans()):
        return image
    flat = image.reshape(-1)
    for _ in range(draw(st.integers(1, 3))):
        k = draw(st.integers(0, flat.size - 1))
        value = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
        if image.dtype.kind == "c":
            real, imag = draw(st.sampled_from([(True, False), (False, True),
                                               (True, True)]))
            flat[k] = complex(value if real else flat[k].real,
                              value if imag else flat[k].imag)
        else:
            flat[k] = value
    return image


@st.composite
def fourier_outputs(draw, image, name):
    """None, a dtype or an output array of a dtype the filter writes."""
    if name == "fourier_shift" or image.dtype.kind == "c":
        dtypes = [np.complex64, np.complex128]
    else:
        dtypes = [np.float32, np.float64, np.complex64, np.complex128]
    form = draw(st.sampled_from(["none", "dtype", "array"]))
    if form == "none":
        return None
    dtype = draw(st.sampled_from(dtypes))
    return dtype if form == "dtype" else np.zeros(image.shape, dtype)


@SETTINGS
@given(data=st.data())
@pytest.mark.parametrize("name", ["fourier_gaussian", "fourier_uniform",
                                  "fourier_ellipsoid", "fourier_shift"])
def test_fourier(name, data):
    image = data.draw(images(dtypes=[np.float32, np.float64, np.int32],
                             min_side=0))
    if data.draw(st.booleans()):
        image = image + 1j * image[::-1]
    image = data.draw(non_finite(image))
    # Tiny parameters are excluded: for radii near 0 SciPy's 3-D ellipsoid
    # cancels to 0 (the limit is 1), and float32 input rounds them to 0.
    parameter = data.draw(st.floats(-5, 5).filter(
        lambda p: p == 0 or abs(p) > 1e-3))
    axis = data.draw(st.integers(-image.ndim, image.ndim - 1))
    # n=0 (an empty original axis) is degenerate: SciPy divides by zero.
    n = data.draw(st.sampled_from([-1, 2 * image.shape[axis] - 1,
                                   max(1, 2 * image.shape[axis] - 2)]))
    output = data.draw(fourier_outputs(image, name))
    theirs_out = output.copy() if isinstance(output, np.ndarray) else output
    with np.errstate(invalid="ignore", over="ignore"):
        theirs = getattr(ndi, name)(image, parameter, n=n, axis=axis,
                                    output=theirs_out)
    ours = getattr(jnd, name)(image, parameter, n=n, axis=axis,
                              output=output)
    assert ours.dtype == theirs.dtype
    assert (ours is output) == (theirs is theirs_out)
    tol = 1e-5 if ours.dtype in (np.float32, np.complex64) else 1e-11
    for part in (np.real, np.imag):  # NaN and inf where SciPy has them
        expected = part(theirs)
        finite = expected[np.isfinite(expected)]
        scale = max(1.0, np.abs(finite).max()) if finite.size else 1.0
        np.testing.assert_array_equal(np.isnan(part(ours)),
                                      np.isnan(expected))
        np.testing.assert_allclose(part(ours), expected, rtol=tol,
                                   atol=tol * scale)
