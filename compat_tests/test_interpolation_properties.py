"""Property tests: jaxndimage's interpolation against SciPy's, on random input.

Each example draws a shape from a small fixed set (length-1 axes included,
so JIT compilation stays cheap), a spline order 0-5, a mode, prefilter on or
off, cval, an input dtype and an output dtype, and requires the same shape,
dtype and values as SciPy, and an unmodified input.

Float results are compared with an absolute tolerance of ``tol * scale``
(``scale`` the largest input magnitude or |cval| times the sum of |weights|
of the order-5 prefilter, about 6.3), ``tol`` 1e-12 in float64 and 2e-6 for
float32 inputs (computed in float32).  Integer outputs are rounded by both;
a value within ``tol * scale`` of a rounding boundary may round either way,
so integer results may differ by one.
"""

import numpy as np
import scipy.ndimage as ndi
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxndimage as jn

MODES = ["constant", "grid-constant", "nearest", "reflect", "grid-mirror",
         "mirror", "wrap", "grid-wrap"]
SHAPES = [(1,), (7,), (1, 5), (4, 1), (5, 6), (3, 1, 4)]
DTYPES = [np.float64, np.float32, np.int16, np.uint8]
OUTPUTS = [None, np.float64, np.int32, np.uint8]

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def problems(draw):
    shape = draw(st.sampled_from(SHAPES))
    dtype = draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**16))
    values = np.random.default_rng(seed).uniform(-20, 120, shape)
    if np.dtype(dtype).kind in "iu":
        values = np.clip(np.round(values), *(np.iinfo(dtype).min,
                                              np.iinfo(dtype).max))
    return dict(
        input=values.astype(dtype),
        order=draw(st.integers(0, 5)),
        mode=draw(st.sampled_from(MODES)),
        prefilter=draw(st.booleans()),
        cval=draw(st.sampled_from([0.0, -3.5, 7.25])),
        output=draw(st.sampled_from(OUTPUTS)),
        seed=seed,
    )


def _compare(ours, theirs, problem):
    assert ours.shape == theirs.shape
    assert ours.dtype == theirs.dtype
    x = problem["input"]
    scale = 6.3 * max(np.abs(x).max(initial=0), abs(problem["cval"]), 1.0)
    tol = 2e-6 if x.dtype == np.float32 else 1e-12
    if theirs.dtype.kind in "iu":
        assert np.abs(ours.astype(np.int64) - theirs).max(initial=0) <= 1
    else:
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=tol * scale)


@SETTINGS
@given(problems())
def test_map_coordinates(problem):
    x = problem["input"]
    rng = np.random.default_rng(problem["seed"])
    coords = rng.uniform(-3, max(x.shape) + 3, (x.ndim, 9))
    before = x.copy()
    kwargs = {k: problem[k] for k in ("order", "mode", "cval", "prefilter",
                                      "output")}
    _compare(jn.map_coordinates(x, coords, **kwargs),
             ndi.map_coordinates(x, coords, **kwargs), problem)
    assert np.array_equal(x, before)


@SETTINGS
@given(problems(), st.sampled_from(["shift", "zoom", "affine", "spline"]))
def test_separable_and_affine(problem, which):
    x = problem["input"]
    kwargs = {k: problem[k] for k in ("order", "mode", "cval", "prefilter",
                                      "output")}
    if which == "shift":
        call = lambda m: m.shift(x, 0.75 - 1.5 * np.arange(x.ndim),  # noqa
                                 **kwargs)
    elif which == "zoom":
        call = lambda m: m.zoom(x, 1.6, **kwargs)  # noqa: E731
    elif which == "affine":
        matrix = np.eye(x.ndim) + 0.2 * np.tri(x.ndim, k=-1)
        call = lambda m: m.affine_transform(  # noqa: E731
            x, matrix, offset=-0.4, **kwargs)
    else:
        call = lambda m: m.spline_filter(  # noqa: E731
            x, max(problem["order"], 2), mode=problem["mode"])
    _compare(call(jn), call(ndi), problem)
