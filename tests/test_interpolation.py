"""Interpolation and spline prefilters: behaviour, errors, jit/vmap, grads."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi
from jax.test_util import check_grads

import jaxndimage as jn
from jaxndimage._modes import INTERPOLATION, map_coordinate
from jaxndimage._splines import POLES, pole_kernel

MODES = list(INTERPOLATION)
RNG = np.random.default_rng(1234)
IMAGE = RNG.random((6, 7))


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


# -- modes -----------------------------------------------------------------

@pytest.mark.parametrize("mode, expected", [
    ("mirror", [1.5, 0.5, 0.0, 3.0, 3.5, 1.5, 2.75, 1.0]),
    ("reflect", [0.5, -0.5, 0.0, 3.0, 3.5, 2.5, 0.25, 2.0]),
    ("wrap", [1.5, 2.5, 0.0, 3.0, 0.5, 1.5, 2.75, 1.0]),
    ("grid-wrap", [2.5, 3.5, 0.0, 3.0, 3.5, 0.5, 2.75, 1.0]),
    ("nearest", [-1.5, -0.5, 0.0, 3.0, 3.5, 4.5, -9.25, 13.0]),
])
def test_map_coordinate_folds_like_scipy(mode, expected):
    # SciPy's C folding on an axis of 4 samples: points within one sample
    # past the last are left alone (their spline value is the same), and
    # legacy 'wrap' has period 3
    x = jnp.array([-1.5, -0.5, 0.0, 3.0, 3.5, 4.5, -9.25, 13.0])
    assert np.array_equal(map_coordinate(x, 4, mode), expected)


def test_map_coordinate_length_one_axis():
    x = jnp.array([-3.2, 0.0, 7.5])
    for mode in ("mirror", "reflect", "wrap", "grid-wrap"):
        assert np.array_equal(map_coordinate(x, 1, mode), [0.0, 0.0, 0.0])


def test_pole_kernel_is_the_inverse_bspline():
    # the FIR must invert sampling of the B-spline: (1/6, 4/6, 1/6) for cubic
    for dtype in (np.float32, np.float64):
        h = pole_kernel(POLES[3][0], np.dtype(dtype))
        direct = np.convolve(h, [1 / 6, 4 / 6, 1 / 6])
        centre = direct.size // 2
        assert abs(direct[centre] - 1) < 1e-9
        assert np.abs(np.delete(direct, centre)).max() < 1e-9


@pytest.mark.parametrize("order", [3, 5])
def test_prefilter_matrix_and_taps_match_scipy(order):
    # traced input: axes no longer than the longest FIR are filtered by the
    # prefilter's matrix, longer ones by the taps: both sides of the rule,
    # for each of the three boundary conditions (mirror, half-sample,
    # periodic)
    longest = max(pole_kernel(z, np.dtype(np.float64)).size
                  for z in POLES[order])
    for n in (3, longest, longest + 1):
        x = RNG.random((2, n))
        for mode in ("mirror", "reflect", "grid-wrap"):
            traced = jax.jit(lambda v, mode=mode: jn.spline_filter1d(
                v, order, axis=1, mode=mode))
            assert np.allclose(traced(jnp.asarray(x)),
                               ndi.spline_filter1d(x, order, axis=1, mode=mode),
                               rtol=1e-12, atol=1e-13), (n, mode)


@pytest.mark.usefixtures("cache_dir")
def test_prefilter_of_host_input_by_numpy_recursions_compiles_nothing():
    """SciPy's recursions in numpy over shapes of 1-D to 4-D, from lines of
    two samples (every initial condition's shortest case) to lines cut
    into many segments with a shorter last one (long axes of few lines):
    SciPy's coefficients to rounding for every order and mode, and not one
    program compiled."""
    from compilations import counting_compilations

    shapes = [(2,), (3, 2), (1, 9), (4000,), (2, 1501), (777, 3), (61, 77),
              (9, 14, 11), (5, 6, 7, 8)]
    with counting_compilations() as counted:
        for shape in shapes:
            x = RNG.standard_normal(shape)
            for order in (2, 3, 4, 5):
                for mode in MODES:
                    expected = ndi.spline_filter(x, order, mode=mode)
                    got = jn.spline_filter(x, order, mode=mode)
                    assert isinstance(got, np.ndarray)
                    scale = np.abs(expected).max()
                    np.testing.assert_allclose(got, expected, rtol=0,
                                               atol=2e-15 * scale,
                                               err_msg=f"{shape} {order} {mode}")
    assert counted[0] == 0


def test_prefilter_of_host_input_leaves_the_input_alone():
    x = RNG.random((40, 30))
    kept = x.copy()
    jn.spline_filter1d(x, 3, axis=0)
    jn.spline_filter(x, 5, output=np.float64)
    np.testing.assert_array_equal(x, kept)


# -- values against SciPy (a few spot checks; compat_tests covers more) ------

@pytest.mark.parametrize("order", range(6))
@pytest.mark.parametrize("mode", MODES)
def test_spline_filter1d_matches_scipy(order, mode):
    x = IMAGE[:, :5]
    assert np.allclose(jn.spline_filter1d(x, order, axis=1, mode=mode),
                       ndi.spline_filter1d(x, order, axis=1, mode=mode),
                       rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("mode", MODES)
def test_map_coordinates_far_outside(mode):
    coords = np.array([[-20.3, -1.0, -0.4, 2.5, 5.0, 5.6, 31.7],
                       [0.2, -3.3, 6.0, 6.5, 1.5, 12.0, -40.0]])
    for order in (0, 2, 5):
        ours = jn.map_coordinates(IMAGE, coords, order=order, mode=mode,
                                  cval=-2.5)
        theirs = ndi.map_coordinates(IMAGE, coords, order=order, mode=mode,
                                     cval=-2.5)
        assert np.allclose(ours, theirs, rtol=1e-12, atol=1e-13)


def test_integer_output_rounds_and_clips():
    x = np.array([0.0, 250.0, 260.0, 100.0])
    # at 0.5: 125 -> rounds half away from zero; 255 clips; -10 clips to 0
    result = jn.map_coordinates(x, [[0.5, 1.5, 2.0, 2.5]], order=1,
                                output=np.uint8)
    assert result.dtype == np.uint8
    assert np.array_equal(result, [125, 255, 255, 180])
    signed = jn.shift(np.array([-3, 4, -4, 3], np.int8), 0.5, order=1,
                      mode="nearest")
    assert np.array_equal(signed, ndi.shift(np.array([-3, 4, -4, 3], np.int8),
                                            0.5, order=1, mode="nearest"))


def test_output_array_is_written():
    out = np.empty((3, 4), np.float32)
    result = jn.zoom(np.arange(6.0).reshape(2, 2 + 1), (1.5, 4 / 3),
                     output=out, order=1)
    assert result is out
    assert np.allclose(out, ndi.zoom(np.arange(6.0).reshape(2, 3),
                                     (1.5, 4 / 3), order=1))


def test_affine_matrix_forms_agree():
    a = IMAGE
    m = np.array([[0.9, 0.2], [-0.1, 1.1]])
    offset = np.array([0.5, -1.0])
    ref = jn.affine_transform(a, m, offset, order=3)
    homogeneous = np.eye(3)
    homogeneous[:2, :2], homogeneous[:2, 2] = m, offset
    assert np.allclose(jn.affine_transform(a, homogeneous, order=3), ref)
    assert np.allclose(jn.affine_transform(a, homogeneous[:2], order=3), ref)
    diag = jn.affine_transform(a, [0.9, 1.1], offset, order=3)
    assert np.allclose(diag, jn.affine_transform(a, np.diag([0.9, 1.1]),
                                                 offset, order=3))
    assert np.allclose(diag, ndi.affine_transform(a, [0.9, 1.1], offset))


def test_rotate_axes_and_reshape():
    a = RNG.random((4, 5, 6))
    for axes, reshape in (((0, 2), True), ((2, 1), False), ((-1, 0), True)):
        ours = jn.rotate(a, 27, axes=axes, reshape=reshape, order=1)
        theirs = ndi.rotate(a, 27, axes=axes, reshape=reshape, order=1)
        assert ours.shape == theirs.shape
        assert np.allclose(ours, theirs)


def test_zoom_grid_mode_warns_for_constant():
    with pytest.warns(UserWarning, match="grid-constant"):
        jn.zoom(IMAGE, 2, grid_mode=True, mode="constant")


@pytest.mark.parametrize("mode", ["constant", "mirror"])
def test_large_prefiltered_zoom_interpolates_axis_by_axis_with_scipy_result(
        mode, monkeypatch):
    # From _SEPARABLE_POINTS output points on, a prefiltered zoom leaves the
    # points kernel for the per-axis one; both give SciPy's numbers.
    from jaxndimage import _interpolation
    calls = []
    per_axis = _interpolation._zoom_shift_kernel
    monkeypatch.setattr(_interpolation, "_zoom_shift_kernel",
                        lambda *a, **k: calls.append(1) or per_axis(*a, **k))
    monkeypatch.setattr(_interpolation, "_SEPARABLE_POINTS", 2**12)
    a = RNG.random((40, 52)).astype(np.float32)
    separable = jn.zoom(a, 1.7, order=3, mode=mode)
    assert calls == [1]
    monkeypatch.setattr(_interpolation, "_SEPARABLE_POINTS", 2**30)
    listed = jn.zoom(a, 1.7, order=3, mode=mode)
    assert calls == [1]
    expected = ndi.zoom(a, 1.7, order=3, mode=mode)
    np.testing.assert_array_equal(separable, expected)
    np.testing.assert_array_equal(listed, expected)


def test_geometric_transform_python_callable_fallback():
    calls = []

    def mapping(point, shift, scale=1.0):
        calls.append(point)
        if point[0] > 2:  # not traceable: forces the per-point path
            return (point[0] * scale - shift, point[1])
        return (point[0] - shift, point[1] * scale)

    kwargs = dict(extra_arguments=(0.5,), extra_keywords={"scale": 0.75})
    ours = jn.geometric_transform(IMAGE, mapping, order=2, **kwargs)
    theirs = ndi.geometric_transform(IMAGE, mapping, order=2, **kwargs)
    assert np.allclose(ours, theirs)
    assert all(isinstance(i, int) for p in calls[-5:] for i in p)


def test_complex_input():
    z = IMAGE + 1j * IMAGE[::-1]
    ours = jn.shift(z, (0.3, -1.2), order=3, mode="wrap", cval=1 + 2j)
    assert ours.dtype == np.complex128
    assert np.allclose(ours, ndi.shift(z, (0.3, -1.2), order=3, mode="wrap",
                                       cval=1 + 2j))


# -- errors -----------------------------------------------------------------

@pytest.mark.parametrize("call, error", [
    (lambda: jn.map_coordinates(IMAGE, [[0.5]], order=6), RuntimeError),
    (lambda: jn.map_coordinates(IMAGE, [[0.5]]), RuntimeError),
    (lambda: jn.map_coordinates(IMAGE, [[0.5j], [1]]), TypeError),
    (lambda: jn.map_coordinates(IMAGE, [[0.5], [1]], mode="edge"),
     RuntimeError),
    (lambda: jn.spline_filter(IMAGE, order=1), RuntimeError),
    (lambda: jn.spline_filter1d(IMAGE, order=-1), RuntimeError),
    (lambda: jn.affine_transform(IMAGE, np.ones((3, 3))), ValueError),
    (lambda: jn.affine_transform(IMAGE, np.ones((3, 2))), RuntimeError),
    (lambda: jn.shift(np.float64(1.0), 1), RuntimeError),
    (lambda: jn.shift(IMAGE, [1, 2, 3]), RuntimeError),
    (lambda: jn.rotate(np.ones(3), 10), ValueError),
    (lambda: jn.rotate(IMAGE, 10, axes=(0, 5)), ValueError),
    (lambda: jn.zoom(jnp.asarray(IMAGE), 2, output=jnp.zeros((12, 14))),
     TypeError),
])
def test_errors_match_scipy(call, error):
    with pytest.raises(error):
        call()


# -- JAX transformations ------------------------------------------------------

def test_jit_and_vmap():
    image = jnp.asarray(IMAGE)
    coords = jnp.asarray(RNG.uniform(-1, 7, size=(2, 9)))

    @jax.jit
    def sample(img, c, cval):
        return jn.map_coordinates(img, c, order=3, mode="grid-constant",
                                  cval=cval)

    expected = ndi.map_coordinates(IMAGE, np.asarray(coords), order=3,
                                   mode="grid-constant", cval=0.25)
    assert np.allclose(sample(image, coords, 0.25), expected)
    batch = jnp.stack([image, 2 * image])
    shifted = jax.vmap(lambda x: jn.shift(x, (0.5, -0.25), mode="mirror"))(
        batch)
    assert np.allclose(shifted[1], 2 * ndi.shift(IMAGE, (0.5, -0.25),
                                                 mode="mirror"))
    zoomed = jax.jit(lambda x: jn.zoom(x, 1.5, order=5, mode="reflect"))(
        image)
    assert np.allclose(zoomed, ndi.zoom(IMAGE, 1.5, order=5, mode="reflect"))


def test_grad_map_coordinates():
    image = jnp.asarray(IMAGE[:4, :5])
    coords = jnp.asarray([[0.3, 1.6, 2.2], [3.7, 0.4, 2.9]])
    for mode in ("mirror", "grid-wrap"):
        def f(img, c, mode=mode):
            return jn.map_coordinates(img, c, order=3, mode=mode)

        check_grads(f, (image, coords), order=1, modes=["rev"])


def test_grad_affine_shift_zoom():
    image = jnp.asarray(IMAGE[:4, :5])
    matrix = jnp.asarray([[0.9, 0.15], [-0.1, 1.05]])
    check_grads(lambda img, m: jn.affine_transform(
        img, m, offset=(0.25, -0.3), order=3, mode="nearest"),
        (image, matrix), order=1, modes=["rev"])
    check_grads(lambda s: jn.shift(image, s, order=3, mode="reflect"),
                (jnp.asarray([0.3, -0.45]),), order=1, modes=["rev"])
    check_grads(lambda img: jn.zoom(img, 1.5, order=2, mode="grid-mirror"),
                (image,), order=1, modes=["rev"])


@pytest.mark.parametrize("mode", [m for m in MODES if m != "grid-wrap"])
def test_window_reads_every_neighbour(mode):
    # one window of order + 1 samples must carry exactly the weights of
    # the folded neighbours, also on axes just longer than the spline
    from jaxndimage._interpolation import _axis_plan, _neighbours, _window

    extension = INTERPOLATION[mode].coefficients
    for order in range(1, 6):
        for size in (order + 1, order + 2, order + 4):
            x = jnp.linspace(-3 * size, 4 * size, 1001)
            start, w, outside = _axis_plan(x, size, order, mode)
            first, folded, _, _ = _window(start, w, size, order, extension)
            index, kept, _, _ = _neighbours(start, w, size, extension)
            rows = np.arange(x.size)
            by_window = np.zeros((x.size, size))
            by_point = np.zeros((x.size, size))
            for p in range(order + 1):
                np.add.at(by_window, (rows, np.asarray(first) + p), folded[p])
                np.add.at(by_point, (rows, np.asarray(index[p])), kept[p])
            inside = (slice(None) if outside is None
                      else ~np.asarray(outside))
            assert np.allclose(by_window[inside], by_point[inside],
                               rtol=0, atol=1e-15)


def test_traced_affine_matrix_inside_jit_reads_consistent_neighbours():
    # Coordinates from a traced matrix are computed in JAX; inside a user's
    # jit they must still be computed once, so that each point's neighbour
    # index and its weights agree (an inconsistent pair is off by a pixel).
    n = 1024
    image = np.random.default_rng(3).random((n, n))
    t = np.deg2rad(30.0)
    matrix = np.array([[np.cos(t), np.sin(t)], [-np.sin(t), np.cos(t)]])
    centre = (n - 1) / 2
    offset = centre - matrix @ [centre, centre]
    rotate = jax.jit(lambda x, m, o: jn.affine_transform(
        x, m, o, order=1, mode="nearest"))
    with jax.enable_x64(True):
        ours = np.asarray(rotate(jnp.asarray(image), jnp.asarray(matrix),
                                 jnp.asarray(offset)))
    np.testing.assert_allclose(
        ours, ndi.affine_transform(image, matrix, offset, order=1,
                                   mode="nearest"), rtol=0, atol=1e-10)


@pytest.mark.parametrize("mode", ["nearest", "grid-constant"])
def test_prepadded_modes_keep_float32_coordinates_exact(mode):
    """SciPy pads 'nearest' and 'grid-constant' input by 12 samples before
    the prefilter and moves the coordinates by 12, in float64.  With JAX's
    64-bit types off the coordinates are float32: moved by 12 they would
    round (by up to 3e-5 past 256); the padding goes into the index
    instead, so values stay within float32 rounding of SciPy's."""
    rng = np.random.default_rng(3)
    image = rng.random((300, 300), dtype=np.float32)
    points = rng.uniform(240, 299, (2, 4000)).astype(np.float32)
    with jax.enable_x64(False):
        for order in (1, 3):
            expected = ndi.map_coordinates(image.astype(np.float64),
                                           points.astype(np.float64),
                                           order=order, mode=mode)
            for call in (jn.map_coordinates, jax.jit(
                    jn.map_coordinates, static_argnames=("order", "mode"))):
                got = call(jnp.asarray(image), jnp.asarray(points),
                           order=order, mode=mode)
                assert got.dtype == np.float32
                np.testing.assert_allclose(np.asarray(got), expected,
                                           rtol=0, atol=1e-6 * np.abs(expected).max())


def test_prefilter_of_host_input_spreads_nan_and_inf_as_scipy():
    """SciPy's recursions carry a NaN or an infinity to the ends of its
    line (as NaN, or as infinities of alternating sign); lines longer than
    one segment recur whole when they hold one, from SciPy's initial sums
    formed term by term (an infinity times a power of the pole that
    underflowed to 0, or beside an infinity of the other sign, is NaN),
    for one and two poles, every extension and place in the line."""
    rng = np.random.default_rng(8)
    cases = [(n, order, mode, bad, place)
             for n in (2, 5, 600, 3000) for order in (2, 3, 5)
             for mode in ("mirror", "reflect", "grid-wrap")
             for bad in (np.nan, np.inf, -np.inf)
             for place in sorted({0, 1, n // 3, n - 2, n - 1})]
    for n, order, mode, bad, place in cases:
        x = rng.random((n, 4))
        x[place, 1] = bad
        expected = ndi.spline_filter1d(x, order, axis=0, mode=mode)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # SciPy warns of nothing
            got = jn.spline_filter1d(x, order, axis=0, mode=mode)
        for kind in (np.isnan, np.isposinf, np.isneginf):
            np.testing.assert_array_equal(
                kind(got), kind(expected),
                err_msg=f"{n} {order} {mode} {bad} {place}")
        finite = np.isfinite(expected)
        np.testing.assert_allclose(got[finite], expected[finite],
                                   rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("cval", [2.5, -1.0, 300])
def test_grid_constant_pads_integer_input_with_cval_in_its_dtype(cval):
    # SciPy pads the input by numpy's pad before the prefilter, which
    # stores cval in the input's dtype (2.5 as 2, -1 as 255 in uint8);
    # points past the padding read cval itself.
    image = np.random.default_rng(8).integers(0, 200, (5, 7)).astype(np.uint8)
    for call in (lambda m: m.shift(image, (0.5, -1.5), order=3,
                                   mode="grid-constant", cval=cval,
                                   output=np.float64),
                 lambda m: m.zoom(image, 1.4, order=2, mode="grid-constant",
                                  cval=cval, output=np.float64)):
        np.testing.assert_allclose(call(jn), call(ndi), rtol=0,
                                   atol=1e-12 * 255)


@pytest.mark.parametrize("cval", [np.nan, np.inf])
def test_a_non_finite_grid_constant_cval_reaches_only_points_past_the_edges(
        cval):
    # SciPy adds cval times the weight of each neighbour past the edges:
    # a point whose neighbours all lie inside never meets cval (0 * nan).
    image = np.arange(24.0).reshape(4, 6)
    for call in (lambda m: m.shift(image, (0.5, -0.25), order=1,
                                   mode="grid-constant", cval=cval),
                 lambda m: m.zoom(image, 1.3, order=1, mode="grid-constant",
                                  cval=cval, grid_mode=True),
                 lambda m: m.rotate(image, 20, order=1, mode="grid-constant",
                                    cval=cval)):
        expected, got = call(ndi), call(jn)
        assert np.isfinite(expected).any()
        np.testing.assert_allclose(got, expected, rtol=1e-12)

