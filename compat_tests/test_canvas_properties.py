"""Property: every kernel that runs on a shape-bucket canvas gives the same
answer there as at the array's own shape, and as SciPy.

Concrete input to a window filter runs on a flat canvas
(`jaxndimage._canvas.shape_generic`); the same call on a JAX array inside
``jax.jit`` runs at the array's own static shape, on no canvas.  The two
must agree with each other and with SciPy for every footprint a user may
pass: round, diamond, ring, random or box, larger than the image along
some axes, on sparse data (where a dilation does not saturate and a wrong
read shows) as well as dense, in every boundary mode, in 1-D, 2-D and 3-D.
The canvas calls run with their reads checked (`checking_reads`): a
kernel that reads past its canvas, where XLA would clamp the read and
return wrong values only for some data, raises for any data.  Cases are
drawn, not enumerated, so the default run stays short.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxndimage as jnd
from jaxndimage._canvas import checking_reads

MODES = ["reflect", "grid-mirror", "constant", "grid-constant", "nearest",
         "mirror", "wrap", "grid-wrap"]
SETTINGS = settings(max_examples=10, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def _footprint(kind: str, radius: tuple[int, ...], rng) -> np.ndarray:
    """A boolean footprint of ``2 * radius + 1`` samples a side."""
    grid = np.meshgrid(*(np.arange(-r, r + 1) / max(r, 1) for r in radius),
                       indexing="ij")
    if kind == "round":
        footprint = sum(g ** 2 for g in grid) <= 1
    elif kind == "diamond":
        footprint = sum(np.abs(g) for g in grid) <= 1
    elif kind == "ring":
        distance = np.sqrt(sum(g ** 2 for g in grid))
        footprint = (distance <= 1) & (distance >= 0.5)
    elif kind == "random":
        footprint = rng.random(grid[0].shape) < 0.5
    else:  # a box without its centre: not separable
        footprint = np.ones(grid[0].shape, bool)
        footprint[tuple(r for r in radius)] = False
    if not footprint.any():
        footprint.flat[0] = True
    return footprint


@st.composite
def cases(draw, max_radius: int, min_ndim: int = 1):
    """(image, footprint, mode, origin): a footprint up to ``max_radius``
    a side, often wider than the image along some axis, on dense or
    sparse data."""
    ndim = draw(st.integers(min_ndim, 3))
    # Sampled, not drawn as integers: hypothesis favours small integers,
    # and a canvas is tightest where the image is wide and the window long.
    extents = {1: [1, 5, 40], 2: [1, 5, 24, 61], 3: [2, 9, 14, 20]}[ndim]
    shape = tuple(draw(st.lists(st.sampled_from(extents), min_size=ndim,
                                max_size=ndim)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["round", "diamond", "ring", "random",
                                 "hollow box"]))
    longest = max_radius if ndim < 3 else min(max_radius, 5)
    if kind == "random":
        # Hundreds of runs (a 41 x 41 random footprint has about 400) make
        # as many reads, each checked here: a minute to compile one case.
        # Random runs are checked up to 13 samples a side, the shapes of
        # the other kinds up to the full radius.
        longest = min(longest, 6 if ndim < 3 else 3)
    radius = tuple(draw(st.lists(st.sampled_from(range(longest // 2,
                                                       longest + 1)),
                                 min_size=ndim, max_size=ndim)))
    footprint = _footprint(kind, radius, rng)
    density = draw(st.sampled_from([0.005, 0.05, 1.0]))
    image = rng.random(shape) * (rng.random(shape) < density)
    origin = tuple(draw(st.integers(-(n // 2), (n - 1) // 2))
                   for n in footprint.shape)
    return image, footprint, draw(st.sampled_from(MODES)), origin


def _on_canvas_and_exact(call, image):
    """``call`` of a numpy image (on a canvas, every read checked) and of
    the same values as a JAX array inside ``jax.jit`` (at its own
    shape), both on the host's CPU, in SciPy's float64, whatever the
    default device (the accelerator test lane runs these tests too)."""
    with checking_reads():
        on_canvas = np.asarray(call(image))
    with jax.enable_x64(True), jax.default_device(jax.devices("cpu")[0]):
        exact = np.asarray(jax.jit(call)(jnp.asarray(image)))
    return on_canvas, exact


def _scipy_reads_outside(shape, footprint_shape, origin, mode) -> bool:
    """Whether SciPy's n-D filters read outside the axis: in mode
    'reflect' its window offsets map a position ``2 * k * n`` samples
    before an axis of ``n >= 2`` samples (``k >= 2``) to the position one
    before the axis's first sample (of the previous row, or before the
    array), not to a reflected sample."""
    if mode not in ("reflect", "grid-mirror"):
        return False
    return any(n >= 2 and size // 2 + o >= 4 * n
               for n, size, o in zip(shape, footprint_shape, origin))


def _check(call, scipy_call, image, exact=True, scipy_in_bounds=True):
    on_canvas, at_shape = _on_canvas_and_exact(call, image)
    if not scipy_in_bounds:
        np.testing.assert_allclose(on_canvas, at_shape, rtol=1e-12,
                                   atol=1e-14)
        return
    expected = scipy_call(image)
    assert on_canvas.dtype == expected.dtype
    if exact:
        np.testing.assert_array_equal(on_canvas, expected)
        np.testing.assert_array_equal(at_shape, expected)
    else:
        np.testing.assert_allclose(on_canvas, expected, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(at_shape, expected, rtol=1e-12, atol=1e-14)


@SETTINGS
@given(case=cases(max_radius=20),
       name=st.sampled_from(["minimum_filter", "maximum_filter",
                             "grey_erosion", "grey_dilation"]))
def test_footprint_extremes(case, name):
    image, footprint, mode, origin = case
    kwargs = dict(footprint=footprint, mode=mode, origin=origin, cval=0.25)
    on_canvas, at_shape = _on_canvas_and_exact(
        lambda x: getattr(jnd, name)(x, **kwargs), image)
    np.testing.assert_array_equal(on_canvas, at_shape)
    # A minimum or maximum selects: every value is the input's or cval.
    assert np.isin(on_canvas, np.append(image, 0.25)).all()
    expected = getattr(ndi, name)(image, **kwargs)
    if np.isin(expected, np.append(image, 0.25)).all():
        np.testing.assert_array_equal(on_canvas, expected)
    # Else SciPy read memory past the array: its grey dilation of a
    # 2 x 2 x 2 array by a footprint 11 wide with an origin returns
    # values (4e-322) that are not in the array.


@SETTINGS
@given(case=cases(max_radius=12),
       name=st.sampled_from(["binary_dilation", "binary_erosion"]),
       border_value=st.sampled_from([0, 1]))
def test_binary_structures(case, name, border_value):
    image, footprint, _, origin = case
    image = image > 0
    kwargs = dict(structure=footprint, origin=origin,
                  border_value=border_value)
    _check(lambda x: getattr(jnd, name)(x, **kwargs),
           lambda x: getattr(ndi, name)(x, **kwargs), image)


# SciPy's 1-D rank filters ignore a footprint's holes (its fast 1-D path
# ranks the whole window; README, "Deliberate differences"): compared in
# two and three dimensions.
@SETTINGS
@given(case=cases(max_radius=2, min_ndim=2),
       name=st.sampled_from(["median_filter", "rank_filter"]))
def test_rank_footprints(case, name):
    image, footprint, mode, origin = case
    kwargs = dict(footprint=footprint, mode=mode, origin=origin, cval=0.25)
    if name == "rank_filter":
        kwargs["rank"] = -1
    _check(lambda x: getattr(jnd, name)(x, **kwargs),
           lambda x: getattr(ndi, name)(x, **kwargs), image)


@SETTINGS
@given(case=cases(max_radius=4),
       name=st.sampled_from(["correlate", "convolve"]))
def test_weights(case, name):
    image, footprint, mode, origin = case
    weights = footprint * np.linspace(-1.0, 2.0, footprint.size).reshape(
        footprint.shape)
    kwargs = dict(weights=weights, mode=mode, origin=origin, cval=0.25)
    # convolve reads at the origin mirrored: -o - 1 for an even size.
    reads_from = origin if name == "correlate" else tuple(
        -o - (1 - n % 2) for o, n in zip(origin, weights.shape))
    _check(lambda x: getattr(jnd, name)(x, **kwargs),
           lambda x: getattr(ndi, name)(x, **kwargs), image, exact=False,
           scipy_in_bounds=not _scipy_reads_outside(
               image.shape, weights.shape, reads_from, mode))


@SETTINGS
@given(case=cases(max_radius=12),
       name=st.sampled_from(["uniform_filter", "minimum_filter",
                             "maximum_filter", "gaussian_filter"]))
def test_separable_windows(case, name):
    image, footprint, mode, _ = case
    size = footprint.shape
    kwargs = dict(mode=mode, cval=0.25)
    if name == "gaussian_filter":
        kwargs.update(sigma=[max(n / 4, 0.1) for n in size])
    else:
        kwargs.update(size=size)
    _check(lambda x: getattr(jnd, name)(x, **kwargs),
           lambda x: getattr(ndi, name)(x, **kwargs), image,
           exact=name not in ("uniform_filter", "gaussian_filter"))


@SETTINGS
@given(case=cases(max_radius=12, min_ndim=2),
       name=st.sampled_from(["uniform_filter", "gaussian_filter",
                             "correlate1d"]))
def test_separable_windows_on_lines(case, name):
    """The separable windows whose passes run on lines
    (`_canvas.runs_on_lines`), in blocks small enough that these arrays
    take them, several to an array: SciPy's values, and the exact-shape
    program's."""
    from jaxndimage import _canvas, _filters

    image, footprint, mode, origin = case
    kwargs = dict(mode=mode, cval=0.25)
    if name == "gaussian_filter":
        kwargs.update(sigma=[max(n / 4, 0.1) for n in footprint.shape])
    elif name == "uniform_filter":
        kwargs.update(size=footprint.shape)
    else:
        weights = np.linspace(-1.0, 2.0, footprint.shape[0])
        kwargs.update(weights=weights, axis=0, origin=origin[0])
    kernels = (_filters._correlate_separable_kernel,
               _filters._uniform_separable)
    line_block = _canvas.LINE_BLOCK
    try:
        _canvas.LINE_BLOCK = 600
        for kernel in kernels:
            kernel.programs.clear()
        _check(lambda x: getattr(jnd, name)(x, **kwargs),
               lambda x: getattr(ndi, name)(x, **kwargs), image,
               exact=False)
    finally:
        _canvas.LINE_BLOCK = line_block
        for kernel in kernels:
            kernel.programs.clear()


@pytest.mark.filterwarnings("ignore:`binary_:FutureWarning")
@pytest.mark.parametrize("radius", [1, 2, 3])
@pytest.mark.parametrize("name", ["binary_erosion", "binary_dilation",
                                  "binary_closing", "binary_opening"])
def test_scikit_image_octahedron_decomposition_with_the_patch(name, radius):
    # scikit-image's test_octahedron_decomposition (tests/skimage/
    # morphology/test_binary.py): an octahedron footprint and its
    # decomposition into a sequence give the same result, here with
    # jaxndimage patched in, and the same as with SciPy.
    skimage = pytest.importorskip("skimage")
    from skimage.morphology import binary, footprints

    from jaxndimage import scipy_backend

    image = skimage.data.binary_blobs(32, n_dim=3, rng=1)
    whole = footprints.octahedron(radius, decomposition=None)
    sequence = footprints.octahedron(radius, decomposition="sequence")
    function = getattr(binary, name)
    expected = function(image, footprint=whole)
    with scipy_backend.patched():
        got_whole = function(image, footprint=whole)
        got_sequence = function(image, footprint=sequence)
    np.testing.assert_array_equal(got_whole, expected)
    np.testing.assert_array_equal(got_sequence, expected)


def test_issue_examples():
    # The two calls of issue 42: a ball of radius 3 on a sparse volume, and
    # a disk wider than the image along one axis.
    rng = np.random.default_rng(0)
    ball = _footprint("round", (3, 3, 3), rng)
    volume = rng.random((64, 64, 64)) < 0.01
    np.testing.assert_array_equal(jnd.binary_dilation(volume, structure=ball),
                                  ndi.binary_dilation(volume, structure=ball))
    image = rng.random((61, 24)).astype(np.float32)
    disk = _footprint("round", (20, 20), rng)
    np.testing.assert_array_equal(jnd.minimum_filter(image, footprint=disk),
                                  ndi.minimum_filter(image, footprint=disk))
