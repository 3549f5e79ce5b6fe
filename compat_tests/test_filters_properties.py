"""Property tests: jaxndimage's linear filters against SciPy's, on random input.

Each example calls the SciPy function and the jaxndimage function with the
same arguments and requires: the same exception type (a subclass is fine)
when SciPy raises; otherwise the same shape and dtype and equal values; and
in every case an unmodified input array.

Inputs cover a fixed small set of shapes (0-d, empty, length-1 axes, kernels
larger than the array; few shapes so that JIT compilation stays cheap),
every dtype (float16 too, which both reject), every boundary mode and
per-axis mode sequences, origins, axes, cval, output dtypes, and C, Fortran,
negative-stride, non-contiguous and big-endian layouts.  Values are finite
(SciPy's running sums spread a NaN along a whole line; that is not
behaviour to copy).

Precision (see DESIGN.md): float outputs are compared with an absolute
tolerance of ``tol * scale``, ``scale`` being the largest input magnitude
(or |cval|) times the gain of the filter (the L1 norm of its weights, per
pass), and ``tol`` 1e-12 for float64 computations and 1e-6 when the input
or the output is 32-bit (float32 inputs compute in float32).

float16 input, which both reject, has its own test so that argument errors
found with it do not hide other differences.

Integer and bool outputs are truncated by a C cast from a float64 result.
* Where that result is exact in float64 (integer input and cval,
  integer-valued weights, moderate magnitudes: correlate/convolve with
  integer weights, sobel, prewitt, laplace) the outputs must be identical,
  wrap-around of out-of-range values included.
* Single-pass filters with inexact arithmetic (float weights, gaussian,
  uniform): summation order changes the last bits, and a value SciPy
  computes as 2.9999999999999996 truncates to 2 where ours may be 3.0.  Each
  element must equal SciPy's cast of some value within ``tol * scale`` of
  SciPy's float64 result (SciPy's own cast, through an identity filter).
* Multi-pass filters with inexact arithmetic (gaussian_filter and
  uniform_filter over several axes): SciPy truncates between passes; such a
  flip moves later passes by at most the later passes' gain, so elements
  may differ by that bound; inputs and cval are kept inside the output
  dtype's range (no wrap-around) in this case.
* Not compared here, because truncated intermediates can wrap around and no
  tight bound exists: integer outputs of gaussian_laplace and
  gaussian_gradient_magnitude, and of sobel, prewitt and laplace on float
  input.  SciPy's own tests (test_scipy_suite.py) cover those paths.
"""

import warnings

import numpy as np
import pytest
import scipy.ndimage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as npst
from scipy.ndimage._filters import _gaussian_kernel1d

import jaxndimage

SETTINGS = settings(
    max_examples=30,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SHAPES = [(), (0,), (1,), (6,), (0, 3), (1, 5), (4, 5), (2, 3, 4)]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float32", "float64"]
COMPLEX_DTYPES = ["complex64", "complex128"]
INPUT_DTYPES = ["bool", *INT_DTYPES, *FLOAT_DTYPES, *COMPLEX_DTYPES]
REAL_OUTPUTS = [None, "bool", *INT_DTYPES, *FLOAT_DTYPES]
MODES = ["reflect", "grid-mirror", "constant", "grid-constant", "nearest",
         "mirror", "wrap", "grid-wrap"]
LAYOUTS = ["C", "F", "reversed", "strided", "big-endian"]
MAX_ABS = 2.0**20  # integer magnitudes stay exact through float64 filters


# -- strategies --------------------------------------------------------------

def _layout(array, layout):
    """The same values in another memory layout."""
    if array.ndim == 0 or layout == "C":
        return np.ascontiguousarray(array)
    if layout == "F":
        return np.asfortranarray(array)
    if layout == "reversed":
        flip = (slice(None, None, -1),) * array.ndim
        return np.ascontiguousarray(array[flip])[flip]
    if layout == "strided":
        big = np.zeros(tuple(2 * n for n in array.shape), array.dtype)
        view = big[(slice(None, None, 2),) * array.ndim]
        view[...] = array
        return view
    return array.astype(array.dtype.newbyteorder(">"))


@st.composite
def images(draw, dtypes=INPUT_DTYPES, shapes=SHAPES, within=None):
    """An input array; `within` (a dtype) bounds the values to its range."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = draw(st.sampled_from(shapes))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = max(info.min, -MAX_ABS), min(info.max, MAX_ABS)
        if within is not None and np.dtype(within).kind in "iu":
            lo = max(lo, np.iinfo(within).min)
            hi = min(hi, np.iinfo(within).max)
        if within is not None and np.dtype(within) == np.bool_:
            lo, hi = 0, 1
        elements = st.integers(int(lo), int(hi))
    elif dtype.kind == "b":
        elements = st.booleans()
    else:
        lo, hi = -1e4, 1e4
        if within is not None and np.dtype(within).kind in "iu":
            lo = max(lo, np.iinfo(within).min)
            hi = min(hi, np.iinfo(within).max)
        if within is not None and np.dtype(within) == np.bool_:
            lo, hi = 0, 1
        width = 8 * dtype.itemsize // (2 if dtype.kind == "c" else 1)
        elements = st.floats(lo, hi, width=width)
        if dtype.kind == "c":
            elements = st.builds(complex, elements, elements)
    array = draw(npst.arrays(dtype, shape, elements=elements))
    return _layout(array, draw(st.sampled_from(LAYOUTS)))


def modes(ndim, sequences=True):
    """A mode name or, for n-D filters, sometimes one mode per axis."""
    single = st.sampled_from(MODES)
    if not sequences or ndim == 0:
        return single
    return st.one_of(single, st.lists(single, min_size=ndim, max_size=ndim))


def cvals(integer=False):
    if integer:
        return st.integers(-5, 5)
    return st.one_of(st.integers(-5, 5), st.floats(-100, 100))


def outputs(input_dtype, integer_ok=True):
    """None or an output dtype; complex inputs also try real outputs.

    Without `integer_ok`, None stands for float64 where the input is integral.
    """
    choices = [o for o in REAL_OUTPUTS if integer_ok or o is None or o.startswith("f")]
    if not integer_ok and input_dtype.kind in "biu":
        choices = [o for o in choices if o is not None]
    if input_dtype.kind == "c":
        choices = [None, *COMPLEX_DTYPES, "float64"]
    return st.sampled_from(choices)


# -- comparison --------------------------------------------------------------

def _float_tol(input, out_dtype):
    single = {np.dtype("float32"), np.dtype("complex64"), np.dtype("float16")}
    return 1e-6 if input.dtype.newbyteorder("=") in single or out_dtype in single else 1e-12


def _scale(input, cval, gain):
    data = float(np.max(np.abs(input.astype(np.complex128)))) if input.size else 0.0
    return max(1.0, data, abs(cval)) * max(1.0, gain)


def _scipy_cast(values, dtype):
    """`values` cast to `dtype` exactly as SciPy's C filters cast results."""
    flat = np.ascontiguousarray(values, np.float64).reshape(-1)
    if flat.size == 0:
        return flat.astype(dtype).reshape(np.shape(values))
    cast = scipy.ndimage.correlate1d(flat, [1.0], output=dtype)
    return cast.reshape(np.shape(values))


def check(name, input, *args, gain=1.0, exact=False, passes=1, **kwargs):
    """Compare ``scipy.ndimage.<name>`` and ``jaxndimage.<name>`` on one call.

    `gain` bounds the filter's amplification of the data, `exact` says the
    float64 arithmetic is exact for integer outputs, and `passes` is the
    number of 1-D passes that each truncate to an integer output.
    """
    snapshot = input.copy()
    ours = getattr(jaxndimage, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = getattr(scipy.ndimage, name)(input, *args, **kwargs)
        except Exception as exc:
            with pytest.raises(type(exc)):
                ours(input, *args, **kwargs)
            _assert_unchanged(input, snapshot)
            return
    actual = ours(input, *args, **kwargs)
    _assert_unchanged(input, snapshot)
    assert isinstance(actual, np.ndarray)
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    if expected.size == 0:
        return

    cval = kwargs.get("cval", 0.0)
    tol = _float_tol(input, expected.dtype)
    scale = _scale(input, cval, gain)
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol * scale)
    elif exact:
        np.testing.assert_array_equal(actual, expected)
    elif passes == 1:
        reference = getattr(scipy.ndimage, name)(input, *args, **{**kwargs, "output": np.float64})
        delta = tol * scale
        lo, mid, hi = (_scipy_cast(reference + d, expected.dtype) for d in (-delta, 0.0, delta))
        assert np.all((expected == lo) | (expected == mid) | (expected == hi)), "cast model"
        ok = (actual == lo) | (actual == mid) | (actual == hi)
        assert np.all(ok), (
            f"integer output differs beyond a truncation flip at {np.argwhere(~ok)[:5]}:\n"
            f"ours {actual[~ok][:5]}, SciPy {expected[~ok][:5]}, float64 {reference[~ok][:5]}")
    else:
        diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
        assert np.all(diff <= passes * gain), f"max difference {diff.max()} > {passes * gain}"


def _assert_unchanged(input, snapshot):
    assert input.dtype == snapshot.dtype
    np.testing.assert_array_equal(input, snapshot)


def _is_int(array):
    return array.dtype.kind in "biu"


def _integral(weights):
    weights = np.asarray(weights)
    return weights.dtype.kind in "biu" or bool(np.all(weights == np.round(weights)))


def _axis(ndim):
    return st.integers(-ndim - 1, ndim)


def _axes(ndim):
    """None or a tuple of axes, sometimes invalid (out of range, repeated)."""
    if ndim == 0:
        return st.none()
    axes = st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim + 1).map(tuple)
    return st.one_of(st.none(), axes)


def _weights(draw, length_max=5, integer=None):
    length = draw(st.integers(1, length_max))
    if integer is None:
        integer = draw(st.booleans())
    element = st.integers(-3, 3) if integer else st.floats(-2, 2, allow_subnormal=False)
    return np.array(draw(st.lists(element, min_size=length, max_size=length)),
                    dtype=np.int64 if integer else np.float64)


def _origin(draw, size):
    return draw(st.integers(-(size // 2) - 1, (size - 1) // 2 + 1))


# -- tests --------------------------------------------------------------------

@pytest.mark.parametrize("name", ["correlate1d", "convolve1d"])
@SETTINGS
@given(data=st.data())
def test_correlate1d_convolve1d(name, data):
    input = data.draw(images())
    weights = _weights(data.draw)
    output = data.draw(outputs(input.dtype))
    integer = _is_int(input) and _integral(weights)
    cval = data.draw(cvals(integer=integer))
    check(name, input, weights, axis=data.draw(_axis(input.ndim)), output=output,
          mode=data.draw(modes(input.ndim, sequences=False)), cval=cval,
          origin=_origin(data.draw, weights.size), gain=float(np.abs(weights).sum()),
          exact=integer and (output is None or np.dtype(output).kind in "biu"))


@pytest.mark.parametrize("name", ["correlate", "convolve"])
@SETTINGS
@given(data=st.data())
def test_correlate_convolve(name, data):
    input = data.draw(images())
    ndim = input.ndim
    axes = data.draw(_axes(ndim))
    kernel_ndim = ndim if axes is None else len(axes)
    kernel_shape = tuple(data.draw(st.integers(1, 4)) for _ in range(kernel_ndim))
    integer_weights = data.draw(st.booleans())
    values = st.integers(-3, 3) if integer_weights else st.floats(-2, 2, allow_subnormal=False)
    weights = data.draw(npst.arrays(np.int64 if integer_weights else np.float64,
                                    kernel_shape, elements=values))
    output = data.draw(outputs(input.dtype))
    integer = _is_int(input) and integer_weights
    origin = data.draw(st.one_of(
        st.integers(-1, 1),
        st.lists(st.integers(-2, 1), min_size=kernel_ndim, max_size=kernel_ndim)))
    check(name, input, weights, output=output, mode=data.draw(modes(ndim)),
          cval=data.draw(cvals(integer=integer)), origin=origin, axes=axes,
          gain=float(np.abs(weights).sum()),
          exact=integer and (output is None or np.dtype(output).kind in "biu"))


def _gaussian_gain(sigma, order, truncate=4.0, radius=None):
    sigma = float(sigma)
    if radius is None:
        radius = int(truncate * sigma + 0.5)
    return float(np.abs(_gaussian_kernel1d(sigma, order, radius)).sum())


@SETTINGS
@given(data=st.data())
def test_gaussian_filter1d(data):
    input = data.draw(images())
    sigma = data.draw(st.sampled_from([0.5, 1.0, 1.7, 3.0]))
    order = data.draw(st.integers(0, 3))
    radius = data.draw(st.sampled_from([None, 0, 1, 4]))
    check("gaussian_filter1d", input, sigma, axis=data.draw(_axis(input.ndim)),
          order=order, output=data.draw(outputs(input.dtype)),
          mode=data.draw(modes(input.ndim, sequences=False)), cval=data.draw(cvals()),
          truncate=data.draw(st.sampled_from([2.0, 4.0])), radius=radius,
          gain=_gaussian_gain(sigma, order, radius=radius) if radius != 0 else 1.0)


@SETTINGS
@given(data=st.data())
def test_gaussian_filter(data):
    output = data.draw(outputs(np.dtype("float64")))
    integer_output = output is not None and np.dtype(output).kind in "biu"
    input = data.draw(images(within=output if integer_output else None))
    ndim = input.ndim
    axes = data.draw(_axes(ndim))
    n = ndim if axes is None else len(axes)
    sigma = data.draw(st.one_of(
        st.sampled_from([0.0, 0.7, 1.5]),
        st.lists(st.sampled_from([0.0, 0.7, 1.5]), min_size=n, max_size=n)))
    order = 0 if integer_output else data.draw(st.one_of(
        st.integers(0, 2), st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    sigmas = np.broadcast_to(np.asarray(sigma, float), (n,)) if n else np.zeros(0)
    orders = np.broadcast_to(np.asarray(order), (n,)) if n else np.zeros(0, int)
    gain = float(np.prod([_gaussian_gain(s, o) for s, o in zip(sigmas, orders) if s > 1e-15]))
    passes = int(np.sum(sigmas > 1e-15))
    integer_kind = output is not None and np.dtype(output).kind in "biu" or (
        output is None and _is_int(input))
    cval = data.draw(st.integers(0, 1) if integer_kind else cvals())
    check("gaussian_filter", input, sigma, order=order, output=output,
          mode=data.draw(modes(ndim)), cval=cval, axes=axes,
          radius=data.draw(st.sampled_from([None, 2])), gain=gain,
          passes=max(passes, 1) if integer_kind else 1,
          exact=integer_kind and passes == 0)


@pytest.mark.parametrize("name", ["gaussian_laplace", "gaussian_gradient_magnitude"])
@SETTINGS
@given(data=st.data())
def test_gaussian_laplace_gradient_magnitude(name, data):
    input = data.draw(images())
    ndim = input.ndim
    axes = data.draw(_axes(ndim))
    n = ndim if axes is None else len(axes)
    sigma = data.draw(st.one_of(
        st.sampled_from([0.7, 1.5]),
        st.lists(st.sampled_from([0.7, 1.5]), min_size=max(n, 1), max_size=max(n, 1))))
    output = data.draw(outputs(input.dtype, integer_ok=False))
    order = 2 if name == "gaussian_laplace" else 1
    gain = sum(_gaussian_gain(s, order) for s in np.broadcast_to(sigma, (n,))) if (
        np.size(sigma) in (1, n)) else 1.0
    check(name, input, sigma, output=output, mode=data.draw(modes(ndim)),
          cval=data.draw(cvals()), axes=axes, gain=gain)


@SETTINGS
@given(data=st.data())
def test_uniform_filter1d(data):
    input = data.draw(images())
    size = data.draw(st.integers(0, 8))
    check("uniform_filter1d", input, size, axis=data.draw(_axis(input.ndim)),
          output=data.draw(outputs(input.dtype)),
          mode=data.draw(modes(input.ndim, sequences=False)), cval=data.draw(cvals()),
          origin=_origin(data.draw, max(size, 1)))


@SETTINGS
@given(data=st.data())
def test_uniform_filter(data):
    output = data.draw(outputs(np.dtype("float64")))
    integer_output = output is not None and np.dtype(output).kind in "biu"
    input = data.draw(images(within=output if integer_output else None))
    ndim = input.ndim
    axes = data.draw(_axes(ndim))
    n = ndim if axes is None else len(axes)
    size = data.draw(st.one_of(
        st.integers(1, 7), st.lists(st.integers(1, 5), min_size=n, max_size=n)))
    integer_kind = integer_output or (output is None and _is_int(input))
    passes = int(np.sum(np.broadcast_to(np.asarray(size), (n,)) > 1)) if n else 0
    cval = data.draw(st.integers(0, 1) if integer_kind else cvals())
    check("uniform_filter", input, size, output=output, mode=data.draw(modes(ndim)),
          cval=cval, origin=data.draw(st.integers(-1, 1)), axes=axes,
          passes=max(passes, 1), exact=integer_kind and passes == 0)


@pytest.mark.parametrize("name, gain", [("sobel", 2 * 4), ("prewitt", 2 * 3)])
@SETTINGS
@given(data=st.data())
def test_sobel_prewitt(name, gain, data):
    input = data.draw(images())
    integer = _is_int(input)
    output = data.draw(outputs(input.dtype, integer_ok=integer))
    check(name, input, axis=data.draw(_axis(input.ndim)), output=output,
          mode=data.draw(modes(input.ndim)), cval=data.draw(cvals(integer=integer)),
          gain=gain ** max(input.ndim, 1),
          exact=integer and (output is None or np.dtype(output).kind in "biu"))


@SETTINGS
@given(data=st.data())
def test_laplace(data):
    input = data.draw(images())
    integer = _is_int(input)
    output = data.draw(outputs(input.dtype, integer_ok=integer))
    check("laplace", input, output=output, mode=data.draw(modes(input.ndim)),
          cval=data.draw(cvals(integer=integer)), axes=data.draw(_axes(input.ndim)),
          gain=4.0 * max(input.ndim, 1),
          exact=integer and (output is None or np.dtype(output).kind in "biu"))


FLOAT16_CALLS = {
    "correlate1d": lambda a, d: ([1.0, 2.0],
                                 dict(axis=d.draw(_axis(a.ndim)),
                                      origin=d.draw(st.integers(-2, 1)))),
    "correlate": lambda a, d: (np.ones((2,) * a.ndim),
                               dict(origin=d.draw(st.integers(-2, 1)), axes=d.draw(_axes(a.ndim)))),
    "gaussian_filter": lambda a, d: (1.0, dict(axes=d.draw(_axes(a.ndim)),
                                               mode=d.draw(modes(a.ndim)))),
    "uniform_filter1d": lambda a, d: (d.draw(st.integers(0, 3)), dict(axis=d.draw(_axis(a.ndim)))),
    "sobel": lambda a, d: ((), dict(axis=d.draw(_axis(a.ndim)))),
    "laplace": lambda a, d: ((), dict(axes=d.draw(_axes(a.ndim)))),
}


@pytest.mark.parametrize("name", sorted(FLOAT16_CALLS))
@SETTINGS
@given(data=st.data())
def test_float16_numpy_input(name, data):
    """numpy float16 input: SciPy's exception, argument errors first."""
    input = data.draw(images(dtypes=["float16"]))
    args, kwargs = FLOAT16_CALLS[name](input, data)
    check(name, input, *(args if isinstance(args, tuple) else (args,)), **kwargs)
