"""Bad input raises SciPy's exception type, with the argument named."""

import numpy as np
import pytest
import scipy.ndimage as sp

import jaxndimage as jn

IMAGE = np.arange(30.0).reshape(5, 6)

# (function, args, kwargs, argument the message must name)
CASES = [
    ("correlate1d", (IMAGE, []), {}, "weights"),
    ("correlate1d", (IMAGE, [[1, 2]]), {}, "weights"),
    ("correlate1d", (IMAGE, [1, 2, 3]), {"origin": 2}, "origin"),
    ("correlate1d", (IMAGE, [1, 2, 3]), {"axis": 2}, "axis"),
    ("correlate1d", (IMAGE, [1, 2, 3]), {"mode": "edge"}, "mode"),
    ("correlate1d", (IMAGE, [1, 2, 3]), {"cval": 1j}, "cval"),
    ("convolve1d", (IMAGE, [1, 2, 3]), {"origin": -2}, "origin"),
    ("correlate", (IMAGE, np.ones((3,))), {}, "weights"),
    ("correlate", (IMAGE, np.ones((3, 3))), {"origin": (0, 2)}, "origin"),
    ("correlate", (IMAGE, np.ones((3, 3))), {"mode": ["wrap", "reflect"]},
     "mode"),
    ("correlate", (IMAGE, np.ones((3, 3))), {"axes": (0, 0)}, "axes"),
    ("correlate", (IMAGE, np.ones((3, 3))), {"axes": (0, 2)}, "axes"),
    ("convolve", (IMAGE, np.ones((3, 3))), {"output": np.zeros((6, 5))},
     "output"),
    ("gaussian_filter", (IMAGE, 1.0), {"order": -1}, "order"),
    ("gaussian_filter", (IMAGE, (1.0, 2.0, 3.0)), {}, "sigma"),
    ("gaussian_filter", (IMAGE, 1.0), {"mode": ("wrap",)}, "mode"),
    ("gaussian_filter", (IMAGE, 1.0), {"radius": -1}, "radius"),
    ("gaussian_filter", (IMAGE, 1.0), {"radius": 1.5}, "radius"),
    ("gaussian_filter", (IMAGE, 1.0), {"axes": (1.5,)}, "axes"),
    ("gaussian_filter1d", (IMAGE, 1.0), {"axis": -3}, "axis"),
    ("gaussian_laplace", (IMAGE, (1.0,)), {}, "sigma"),
    ("gaussian_gradient_magnitude", (IMAGE, 1.0), {"mode": "bogus"}, "mode"),
    ("uniform_filter1d", (IMAGE, 0), {}, "size"),
    ("uniform_filter1d", (IMAGE, 3), {"origin": 2}, "origin"),
    ("uniform_filter", (IMAGE, (3, 3, 3)), {}, "size"),
    ("uniform_filter", (IMAGE, 3), {"output": "complex64"}, None),
    ("sobel", (IMAGE,), {"axis": 5}, "axis"),
    ("prewitt", (IMAGE,), {"mode": ("wrap", "bogus")}, "mode"),
    ("laplace", (IMAGE,), {"axes": (3,)}, "axes"),
    ("gaussian_filter", (np.ones(4, np.float16), 1.0), {}, "input"),
    ("label", (np.eye(4, dtype=np.float16),), {}, "input"),
]


def _raised(func, args, kwargs):
    with pytest.raises(Exception) as info:
        func(*args, **kwargs)
    return info.value


@pytest.mark.parametrize("name, args, kwargs, argument", CASES,
                         ids=[f"{c[0]}-{c[3]}-{i}" for i, c in
                              enumerate(CASES)])
def test_same_exception_type_as_scipy(name, args, kwargs, argument):
    expected = _raised(getattr(sp, name), args, kwargs)
    before = [np.copy(a) for a in args if isinstance(a, np.ndarray)]
    error = _raised(getattr(jn, name), args, kwargs)
    assert type(error) is type(expected), (error, expected)
    if argument is not None:
        assert argument in str(error), str(error)
    after = [a for a in args if isinstance(a, np.ndarray)]
    for old, new in zip(before, after):
        np.testing.assert_array_equal(old, new)


def test_promoting_a_real_output_dtype_warns_like_scipy():
    with pytest.warns(UserWarning, match="promoting specified output dtype"):
        jn.correlate(IMAGE + 0j, np.ones((3, 3)), output=np.float64)


FLOAT16 = np.ones((5, 6), np.float16)


@pytest.mark.parametrize("name, args, kwargs", [
    ("gaussian_filter", (FLOAT16, 1.0), {}),
    ("gaussian_laplace", (FLOAT16, 1.0), {}),
    ("median_filter", (FLOAT16, 3), {}),
    ("correlate", (FLOAT16, np.ones((3, 3))), {}),
    ("zoom", (FLOAT16, 2), {}),
    ("grey_erosion", (FLOAT16,), {"size": 3}),
    ("fourier_gaussian", (FLOAT16, 1.0), {}),
])
def test_float16_is_refused_before_any_kernel_runs(monkeypatch, name, args,
                                                    kwargs):
    """SciPy refuses float16 numpy input where its C code is reached; so
    does jaxndimage, at the entry of the first kernel, which never runs."""
    from jaxndimage import _cache, _canvas

    def ran(*args, **kwargs):
        raise AssertionError("a kernel ran on float16 input")

    monkeypatch.setattr(_canvas, "_on_canvases", ran)
    monkeypatch.setattr(_cache.KernelCache, "executable", ran)
    with pytest.raises(RuntimeError, match="float16"):
        getattr(jn, name)(*args, **kwargs)
    # Bad arguments are reported first, as SciPy reports them.
    with pytest.raises(ValueError, match="order"):
        jn.gaussian_filter(FLOAT16, 1.0, order=-1)


#: Calls whose refusal of float16 depends on where SciPy's C loops end:
#: before they read an empty input, an empty axis or an empty output.
FLOAT16_CALLS = {
    "zoom": lambda m, x, **k: m.zoom(x, 2, **k),
    "zoom order 1": lambda m, x, **k: m.zoom(x, 2, order=1, **k),
    "zoom by 1": lambda m, x, **k: m.zoom(x, 1, **k),
    "shift": lambda m, x, **k: m.shift(x, 1, **k),
    "rotate": lambda m, x, **k: m.rotate(x, 30, **k),
    "rotate in place": lambda m, x, **k: m.rotate(x, 30, reshape=False, **k),
    "affine_transform": lambda m, x, **k: m.affine_transform(
        x, np.eye(x.ndim), order=1, **k),
    "map_coordinates": lambda m, x, **k: m.map_coordinates(
        x, np.zeros((x.ndim, 0)), **k),
    "spline_filter": lambda m, x, **k: m.spline_filter(x, **k),
    "spline_filter1d": lambda m, x, **k: m.spline_filter1d(x, axis=0, **k),
    "fourier_gaussian": lambda m, x, **k: m.fourier_gaussian(x, 1.0, **k),
    "fourier_shift": lambda m, x, **k: m.fourier_shift(x, 1.0, **k),
    "binary_erosion": lambda m, x, **k: m.binary_erosion(x, **k),
    "binary_opening": lambda m, x, **k: m.binary_opening(x, **k),
    "binary_hit_or_miss": lambda m, x, **k: m.binary_hit_or_miss(x, **k),
    "binary_fill_holes": lambda m, x, **k: m.binary_fill_holes(x, **k),
    "grey_opening": lambda m, x, **k: m.grey_opening(x, 3, **k),
    "white_tophat": lambda m, x, **k: m.white_tophat(x, 3, **k),
    "morphological_gradient": lambda m, x, **k: m.morphological_gradient(
        x, 3, **k),
    "label": lambda m, x, **k: m.label(x, **k),
}


def _outcome(call, *args, **kwargs):
    """What a call gives: its exception's type, or the dtype it returns."""
    try:
        result = call(*args, **kwargs)
    except (RuntimeError, TypeError, ValueError) as error:
        return type(error)
    return np.asarray(result[0] if isinstance(result, tuple)
                      else result).dtype


@pytest.mark.parametrize("name", FLOAT16_CALLS)
def test_float16_input_and_output_are_refused_where_scipys_are(name):
    call = FLOAT16_CALLS[name]
    for shape in [(0, 3), (3, 0), (4, 5)]:
        float16, float32 = np.ones(shape, np.float16), np.ones(shape,
                                                               np.float32)
        assert _outcome(call, jn, float16) == _outcome(call, sp, float16), (
            shape, "input")
        assert _outcome(call, jn, float32, output=np.float16) == _outcome(
            call, sp, float32, output=np.float16), (shape, "output dtype")
        if name.startswith(("fourier", "binary", "morph", "label")):
            # (The others' results have their own shapes.)
            outcomes = [_outcome(call, module, float32,
                                 output=np.zeros(shape, np.float16))
                        for module in (jn, sp)]
            assert outcomes[0] == outcomes[1], (shape, "output array")


def _read_only(shape, dtype):
    array = np.zeros(shape, dtype)
    array.flags.writeable = False
    return array


SPECTRUM = np.fft.fft2(IMAGE)


@pytest.mark.parametrize("name, args, output", [
    # SciPy's C code refuses a read-only array before it reads its dtype.
    ("fourier_gaussian", (IMAGE, 1.0), _read_only(IMAGE.shape, np.int8)),
    ("fourier_uniform", (SPECTRUM, 1.0), _read_only(IMAGE.shape, np.float64)),
    ("fourier_ellipsoid", (IMAGE, 1.0), _read_only(IMAGE.shape, np.float32)),
    ("fourier_shift", (IMAGE, 1.0), _read_only(IMAGE.shape, np.float64)),
    ("correlate", (IMAGE, np.ones((3, 3))),
     _read_only(IMAGE.shape, np.complex64)),
    ("gaussian_filter", (IMAGE, 1.0), _read_only(IMAGE.shape, np.complex128)),
    ("spline_filter", (IMAGE,), _read_only(IMAGE.shape, np.complex64)),
    ("shift", (IMAGE, 1.0), _read_only(IMAGE.shape, np.complex128)),
    ("median_filter", (IMAGE, 3), _read_only(IMAGE.shape, np.float64)),
])
def test_read_only_output_is_refused_before_its_dtype_is_read(name, args,
                                                              output):
    for module in (sp, jn):
        with pytest.raises(ValueError, match="output array is read-only"):
            getattr(module, name)(*args, output=output)


@pytest.mark.parametrize("name, args", [
    ("geometric_transform", (IMAGE, lambda c: c)),
    ("map_coordinates", (IMAGE, np.zeros((2, 3)))),
    ("correlate", (IMAGE, np.ones((3, 3)))),
    ("minimum_filter", (IMAGE, 3)),
    ("grey_dilation", (IMAGE, 3)),
    ("spline_filter", (IMAGE,)),
])
@pytest.mark.parametrize("output", [object, np.dtype(object)])
def test_object_output_is_runtime_error(name, args, output):
    # SciPy's C code refuses the object array it allocates.
    if name == "map_coordinates":
        output = np.zeros((3,), output)
    for module in (sp, jn):
        with pytest.raises(RuntimeError, match="not supported"):
            getattr(module, name)(*args, output=output)


@pytest.mark.parametrize("name, args", [
    ("median_filter", (IMAGE, 3)),
    ("rank_filter", (IMAGE, 1, 3)),
    ("percentile_filter", (IMAGE, 50, 3)),
    ("minimum_filter", (IMAGE, 3)),
    ("maximum_filter", (IMAGE, None, np.eye(3, dtype=bool))),
    ("maximum_filter1d", (IMAGE, 3)),
    ("grey_erosion", (IMAGE, 3)),
    ("grey_opening", (IMAGE, 3)),
    ("white_tophat", (IMAGE, 3)),
    ("generic_filter", (IMAGE, np.max, 3)),
    ("generic_filter1d", (IMAGE, lambda line, out: None, 3)),
])
@pytest.mark.parametrize("output", [np.complex128, "complex64"])
def test_complex_output_of_the_selecting_filters_is_runtime_error(
        name, args, output):
    # SciPy's C rank, extreme and generic filters have no complex output.
    for module in (sp, jn):
        with pytest.raises(RuntimeError, match="not supported"):
            getattr(module, name)(*args, output=output)
