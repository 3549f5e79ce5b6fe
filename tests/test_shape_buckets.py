"""A new input shape must not compile: canvases of a few bucket lengths."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as sn
from compilations import counting_compilations, distinct_shapes

import jaxndimage as jn
from jaxndimage import _cache, _canvas, _catalogue, _filters


@pytest.mark.parametrize("ndim, low, high", [(2, 16, 2048), (3, 4, 160),
                                             (4, 4, 40)])
def test_a_hundred_shapes_compile_at_most_eight_programs(ndim, low, high):
    shapes = distinct_shapes(100, low, high, ndim, seed=ndim)
    with counting_compilations() as counted:
        for shape in shapes:
            jn.uniform_filter(np.zeros(shape, np.float32), 3)
    assert counted[0] <= 8, f"{counted[0]} compilations for 100 shapes"
    if ndim == 2:  # the buckets up to the tile; larger images run in bands
        levels = 1 + _canvas.BUCKETS.index(_canvas.TILE_LENGTH)
        assert counted[0] <= levels, f"{counted[0]} compilations in 2-D"


def _points_in(shape: tuple[int, ...]) -> np.ndarray:
    """500 points inside an array of ``shape`` (the same for every shape,
    scaled)."""
    unit = np.random.default_rng(0).random((len(shape), 500))
    return unit * (np.array(shape)[:, None] - 1)


def _halved(point):
    return tuple(0.8 * c + 0.5 for c in point)


#: Calls of the interpolation functions and the Fourier filters whose
#: programs are counted over many shapes, with a spline order and mode
#: each, some prefiltered (orders 2-5): (function, arguments, keywords);
#: the Fourier filters take the FFT of the image.
_MAPPINGS = {
    "rotate": (15.0,), "shift": (1.7,), "zoom": (0.6,),
    "affine_transform": (None,), "map_coordinates": (None,),
    "geometric_transform": (_halved,),
}
_CALLS_2D = [
    ("rotate", {"order": 1, "reshape": False}),
    ("rotate", {"order": 3, "mode": "mirror"}),
    ("shift", {"order": 3, "mode": "nearest"}),
    ("affine_transform", {"order": 5, "offset": 1.5}),
    ("zoom", {"order": 3, "grid_mode": True, "mode": "grid-constant"}),
    ("map_coordinates", {"order": 3, "mode": "mirror"}),
    ("geometric_transform", {"order": 1}),
    ("spline_filter", {"order": 5}),
    ("spline_filter1d", {"order": 4, "axis": 0, "mode": "reflect"}),
    ("fourier_gaussian", {"sigma": 2.0}),
    ("fourier_uniform", {"size": 3.0}),
    ("fourier_ellipsoid", {"size": 3.0}),
    ("fourier_shift", {"shift": 1.5}),
]


def _call(module, name: str, keywords: dict, x: np.ndarray):
    """``module.name`` of ``x`` with the arguments of `_MAPPINGS` (a
    matrix or points made for ``x``) and ``keywords``."""
    function = getattr(module, name)
    if name.startswith("fourier"):
        return function(np.fft.fftn(x), **keywords)
    if name == "binary_erosion":
        return function(x > 0.5, **keywords)
    if name == "mean":
        return function(x, (x * 4).astype(int), [1, 2, 3], **keywords)
    arguments = _MAPPINGS.get(name, ())
    if name == "affine_transform":
        arguments = (np.eye(x.ndim) * 0.9 + 0.05,)
    elif name == "map_coordinates":
        arguments = (_points_in(x.shape),)
    return function(x, *arguments, **keywords)


def _programs_per_call(calls, shapes, seed: int, check_every: int = 0):
    """The compilations of each of ``calls`` (:func:`_call`) over arrays
    of ``shapes``;
    every ``check_every``-th shape, each result is compared with SciPy's."""
    rng = np.random.default_rng(seed)
    counts = [0] * len(calls)
    for k, shape in enumerate(shapes):
        x = rng.random(shape)
        for c, (name, keywords) in enumerate(calls):
            with counting_compilations() as counted:
                ours = _call(jn, name, keywords, x)
            counts[c] += counted[0]
            if check_every and k % check_every == 0:
                np.testing.assert_allclose(
                    ours, _call(sn, name, keywords, x), rtol=1e-12,
                    atol=1e-12, err_msg=f"{name} {keywords} {shape}")
    return {f"{name} {keywords}": count
            for (name, keywords), count in zip(calls, counts)}


def test_interpolation_and_fourier_filters_compile_per_bucket_not_per_shape():
    """rotate, shift, affine_transform, zoom, map_coordinates,
    geometric_transform, the spline prefilter (orders 2-5) and the Fourier
    filters of concrete input run on buckets: over 32 image shapes each
    call compiles at most 12 programs (the list and source lengths, canvas
    buckets and small per-dtype operations it meets; 11 at most, as over
    24 of these shapes), not one per shape, with SciPy's result at every
    size (several chunks of points, bands of a canvas)."""
    shapes = distinct_shapes(32, 16, 600, 2, seed=21)
    counts = _programs_per_call(_CALLS_2D, shapes, seed=21, check_every=6)
    over = {call: n for call, n in counts.items() if n > 12}
    assert not over, f"compilations for {len(shapes)} shapes: {over}"


_VOLUME_CALLS = [
    ("gaussian_filter", {"sigma": 2.0}),
    ("uniform_filter", {"size": 5}),
    ("maximum_filter", {"size": 3, "mode": "constant"}),
    ("median_filter", {"size": 3}),
    ("binary_erosion", {}),
    ("mean", {}),
    ("rotate", {"order": 1, "axes": (0, 1)}),
    ("shift", {"order": 3, "mode": "nearest"}),
    ("affine_transform", {"order": 1, "offset": 1.5}),
    ("zoom", {"order": 1}),
    ("map_coordinates", {"order": 3, "mode": "mirror"}),
    ("spline_filter", {"order": 3}),
    ("fourier_gaussian", {"sigma": 2.0}),
    ("fourier_shift", {"shift": 1.5}),
]


@pytest.mark.parametrize("ndim, low, high", [(3, 8, 40), (4, 8, 14)])
def test_volumes_compile_per_bucket_not_per_shape(ndim, low, high):
    """Volumes of many sizes: the window filters, binary morphology, the
    statistics, interpolation and the Fourier filters compile at most 10
    programs per call over 24 shapes (9 at most, as over 16 of them), not
    one per shape."""
    shapes = distinct_shapes(24, low, high, ndim, seed=ndim + 30)
    counts = _programs_per_call(_VOLUME_CALLS, shapes, seed=ndim,
                                check_every=10)
    over = {call: n for call, n in counts.items() if n > 10}
    assert not over, f"compilations for {len(shapes)} {ndim}-D shapes: {over}"


def test_a_wide_4d_filter_runs_within_a_bounded_canvas_memory():
    """A wide separable filter of a 4-D array runs one pass per call, each
    on lines along its own axis (or a canvas extended along it alone):
    every compiled program's memory (XLA's analysis: arguments, output
    and temporaries) stays within a bounded multiple of the array and its
    result.

    The bound is that of a canvas: a pass along the slowest axis reads
    ``radius`` planes away, and a canvas reaches a sixteenth of its length
    (`_canvas.reach_of`), about 49 times the input and output bytes here;
    a block of lines holds `_canvas.LINE_BLOCK` samples.  Extending every
    axis up front, as volumes did before, took the program more than 500
    times (a canvas of 56**4 samples).
    """
    from jaxndimage import _filters

    kernel = _filters._correlate_separable_kernel
    x = np.random.default_rng(5).random((16,) * 4).astype(np.float32)
    result = jn.gaussian_laplace(x, 5.0)
    np.testing.assert_allclose(result, sn.gaussian_laplace(x, 5.0),
                               rtol=1e-5, atol=1e-6)
    programs = [p for key, p in kernel.programs.items()
                if key[0] == x.shape]
    assert programs
    for program in programs:
        memory = program.executable.memory_analysis()
        used = (memory.temp_size_in_bytes + memory.argument_size_in_bytes
                + memory.output_size_in_bytes)
        assert used <= 64 * (x.nbytes + result.nbytes), (
            f"{used / 2**20:.1f} MiB for {x.nbytes / 2**20:.2f} MiB")


def test_gradient_magnitude_compiles_per_bucket_not_per_shape():
    # Its square root too: an eager JAX call would compile per shape.
    shapes = distinct_shapes(30, 16, 700, 2, seed=5)
    jn.gaussian_gradient_magnitude(np.ones(shapes[0], np.float32), 2.0)
    with counting_compilations() as counted:
        for shape in shapes:
            jn.gaussian_gradient_magnitude(np.ones(shape, np.float32), 2.0)
    assert counted[0] <= 16, f"{counted[0]} compilations for 30 shapes"


def test_passes_along_other_axes_share_a_program():
    """On a canvas only the strides tell axes apart: a Sobel filter along
    either axis of an image, or a 1-D filter along any axis of a volume,
    runs the program compiled for the first axis, with SciPy's result."""
    rng = np.random.default_rng(3)
    image = rng.random((40, 50)).astype(np.float32)
    volume = rng.random((9, 10, 11)).astype(np.float32)
    np.testing.assert_array_equal(jn.sobel(image, 0), sn.sobel(image, 0))
    for f in (jn.uniform_filter1d, jn.minimum_filter1d):
        f(volume, 4, axis=0, mode="constant", cval=0.5)
    with counting_compilations() as counted:
        np.testing.assert_array_equal(jn.sobel(image, 1), sn.sobel(image, 1))
        for axis in (1, 2):
            for f in ("uniform_filter1d", "minimum_filter1d"):
                np.testing.assert_array_equal(
                    getattr(jn, f)(volume, 4, axis=axis, mode="constant",
                                   cval=0.5),
                    getattr(sn, f)(volume, 4, axis=axis, mode="constant",
                                   cval=0.5))
    assert counted[0] == 0, f"{counted[0]} compilations for other axes"


def test_modes_the_host_extends_share_a_program():
    """On a canvas the host extends the margins by every mode but the
    constant ones: filters in those modes run one program, with SciPy's
    result; a constant mode runs its own."""
    image = np.random.default_rng(4).random((30, 41)).astype(np.float32)
    calls = [("gaussian_filter", 2.0), ("uniform_filter", 3),
             ("median_filter", 3), ("maximum_filter", 3)]
    for f, size in calls:
        getattr(jn, f)(image, size, mode="wrap")
    with counting_compilations() as counted:
        for mode in ("reflect", "grid-mirror", "mirror", "nearest",
                     "grid-wrap"):
            for f, size in calls:
                np.testing.assert_array_equal(
                    getattr(jn, f)(image, size, mode=mode),
                    getattr(sn, f)(image, size, mode=mode))
    assert counted[0] == 0, f"{counted[0]} compilations for other modes"
    # At most one: a program an earlier test of this process compiled (the
    # catalogue's calls) is reused without compiling.
    with counting_compilations() as counted:
        np.testing.assert_array_equal(
            jn.median_filter(image, 3, mode="constant", cval=0.25),
            sn.median_filter(image, 3, mode="constant", cval=0.25))
    assert counted[0] <= 1


@pytest.mark.parametrize("mode", ["reflect", "constant", "wrap"])
def test_arrays_beyond_the_tile_run_in_bands_of_one_program(mode):
    """An array that needs a canvas longer than the tile runs in bands of
    rows, each on a canvas of the tile's length: one program for every
    larger size, and SciPy's result across the seams between bands."""
    rng = np.random.default_rng(9)
    shapes = [(1100, 900), (2000, 800), (5000, 180), (900_000,)]
    for shape in shapes:
        margins = _canvas.Margins((1,) * len(shape), (1,) * len(shape),
                                  (mode,) * len(shape), 2)
        assert len(_canvas.bands(shape, margins)) > 1
    images = [rng.random(shape).astype(np.float32) for shape in shapes]
    # Programs compiled or loaded from the disk cache.
    start = _cache.stats["compiled"] + _cache.stats["loaded"]
    for image in images:
        np.testing.assert_array_equal(jn.sobel(image, mode=mode),
                                      sn.sobel(image, mode=mode))
    programs = _cache.stats["compiled"] + _cache.stats["loaded"] - start
    assert programs <= 2, f"{programs} programs (2-D and 1-D)"


def test_wide_kernels_run_in_bands_on_a_longer_canvas():
    """A kernel that reads further than the tile's reach runs its bands on
    the first longer bucket that reaches as far: one program for every
    larger size, SciPy's result across the seams."""
    rng = np.random.default_rng(10)
    shapes = [(1500, 1500), (2100, 1400)]
    margins = _canvas.Margins((32, 32), (32, 32), ("reflect",) * 2, 2)
    reach = 32 * (1400 + 64)
    assert _canvas.reach_of(_canvas.TILE_LENGTH) < reach
    assert _canvas.band_length(reach) > _canvas.TILE_LENGTH
    start = _cache.stats["compiled"] + _cache.stats["loaded"]
    for shape in shapes:
        assert len(_canvas.bands(shape, margins)) > 1
        image = rng.random(shape)
        np.testing.assert_allclose(jn.gaussian_filter(image, 8.0),
                                   sn.gaussian_filter(image, 8.0),
                                   rtol=1e-12, atol=1e-15)
    programs = _cache.stats["compiled"] + _cache.stats["loaded"] - start
    assert programs <= 1, f"{programs} programs for two sizes"


@pytest.mark.parametrize("mode", ["reflect", "constant", "nearest",
                                  "mirror", "wrap"])
def test_wide_passes_along_slow_axes_run_moved_last(mode):
    """A pass whose canvas would be many times the volume (a wide kernel
    along a slow axis) runs with its axis moved last, with SciPy's values;
    JAX input comes back as JAX."""
    rng = np.random.default_rng(11)
    margins = _canvas.separable_margins(3, (0, 1, 2), (81, 81, 81),
                                        (0, 0, 0), ("reflect",) * 3, 3)
    assert _canvas._moved_last((40, 30, 20), 0, margins)
    assert not _canvas._moved_last((40, 30, 20), 2, margins)
    for shape in [(40, 30, 20), (9, 10, 11, 12)]:
        x = rng.random(shape).astype(np.float32)
        for f, args in ((jn.gaussian_filter, (10.0,)),
                        (jn.uniform_filter, (31,)),
                        (jn.maximum_filter, (25,))):
            want = getattr(sn, f.__name__)(x, *args, mode=mode, cval=0.5)
            np.testing.assert_array_equal(f(x, *args, mode=mode, cval=0.5),
                                          want)
    got = jn.gaussian_filter(jnp.asarray(x), 10.0, mode=mode)
    assert isinstance(got, jax.Array)
    np.testing.assert_allclose(got, sn.gaussian_filter(x, 10.0, mode=mode),
                               rtol=1e-5, atol=1e-6)


def _lines_taken() -> int:
    """The programs on lines among the kernels that may run on them."""
    return sum(program.lines is not None
               for kernel in (_filters._correlate_separable_kernel,
                              _filters._uniform_separable)
               for program in kernel.programs.values())


@pytest.fixture
def small_line_blocks(monkeypatch):
    """Blocks of 700 samples (`_canvas.LINE_BLOCK`), so that small arrays
    run on lines, in several blocks, the last one partly filled; the
    programs of these calls are dropped before and after."""
    kernels = (_filters._correlate_separable_kernel,
               _filters._uniform_separable)
    for kernel in kernels:
        kernel.programs.clear()
    monkeypatch.setattr(_canvas, "LINE_BLOCK", 700)
    yield
    for kernel in kernels:
        kernel.programs.clear()


#: Calls whose passes run on lines in small blocks.  The uniform filters
#: add their windows in another order than SciPy's running sums: equal to
#: rounding in float64, and bit for bit once rounded to float32 or int16.
_LINE_CALLS = [
    lambda m, x, **k: m.gaussian_filter(x, 2.5, **k),
    lambda m, x, **k: m.gaussian_filter(x, (1.0, 3.0, 2.0, 1.5)[:x.ndim],
                                        order=(2, 0, 1, 0)[:x.ndim], **k),
    lambda m, x, **k: m.gaussian_filter1d(x, 4.0, axis=1, order=1, **k),
    lambda m, x, **k: m.correlate1d(x, [0.5, -1.0, 2.0, 0.25, 3.0, 1.5, 0.0,
                                        -2.0, 1.0], axis=0, origin=-3, **k),
    lambda m, x, **k: m.convolve1d(x, np.linspace(-1.0, 3.0, 12), axis=2,
                                   origin=2, **k),
    lambda m, x, **k: m.uniform_filter(x, (5, 13, 21, 7)[:x.ndim],
                                       origin=(1, -3, 0, 2)[:x.ndim], **k),
    lambda m, x, **k: m.uniform_filter1d(x, 19, axis=2, **k),
]
_SUMMED_WINDOWS = 2  # the last calls


@pytest.mark.parametrize("mode", ["reflect", "grid-mirror", "constant",
                                  "grid-constant", "nearest", "mirror",
                                  "wrap", "grid-wrap"])
@pytest.mark.parametrize("call", range(len(_LINE_CALLS)))
def test_passes_on_lines_equal_scipy(call, mode, small_line_blocks):
    """A pass on lines (a wide kernel along a short axis) gives SciPy's
    bits in every mode, with margins past several reflections of a line,
    for float and integer input, in blocks of lines of one width; JAX
    input comes back as JAX, with float32's precision."""
    f = _LINE_CALLS[call]
    rng = np.random.default_rng(call)
    for shape, dtype in (((9, 6, 11), np.float64), ((5, 7, 4, 8), np.float32),
                         ((12, 3, 10), np.int16)):
        x = (rng.random(shape) * 100).astype(dtype)
        taken = _lines_taken()
        got = f(jn, x, mode=mode, cval=0.375)
        assert _lines_taken() > taken
        want = f(sn, x, mode=mode, cval=0.375)
        if dtype == np.float64 and call >= len(_LINE_CALLS) - _SUMMED_WINDOWS:
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
        else:
            np.testing.assert_array_equal(got, want)
    x = x.astype(np.float32)  # JAX computes float32 in float32
    got = f(jn, jnp.asarray(x), mode=mode)
    assert isinstance(got, jax.Array)
    np.testing.assert_allclose(got, f(sn, x, mode=mode), rtol=1e-5,
                               atol=1e-3)


def test_lines_serve_the_passes_whose_canvas_computes_more():
    """Lines take the passes whose margins are at least half the axis and
    whose lines compute fewer values than the canvas: a wide Gaussian
    along any axis of a 64³ volume, not a narrow one along a 96³ volume,
    nor a 1-D array or a small volume."""
    def along(shape, axis, radius):
        margins = _canvas.separable_margins(len(shape), (axis,),
                                            (2 * radius + 1,), (0,),
                                            ("reflect",), 1)
        return _canvas.runs_on_lines(shape, axis, margins)

    assert all(along((64,) * 3, axis, 40) for axis in range(3))
    assert all(along((16,) * 4, axis, 21) for axis in range(4))
    assert not any(along((96,) * 3, axis, 8) for axis in range(3))
    assert not along((4000,), 0, 3000)
    assert not along((12, 12, 12), 0, 20)
    assert not along((64,) * 3, 1, 0)


def test_wide_passes_compile_per_width_of_lines_not_per_shape():
    """A wide Gaussian over 16 volumes of many sizes compiles a program per
    width of lines it meets (a few), with SciPy's values."""
    shapes = distinct_shapes(16, 40, 72, 3, seed=43)
    widths = {_canvas.line_width(n, 2 * 40) for shape in shapes
              for n in shape}
    rng = np.random.default_rng(43)
    taken = _lines_taken()
    with counting_compilations() as counted:
        for k, shape in enumerate(shapes):
            x = rng.random(shape).astype(np.float32)
            got = jn.gaussian_filter(x, 10.0, mode="nearest")
            if k % 5 == 0:
                np.testing.assert_array_equal(
                    got, sn.gaussian_filter(x, 10.0, mode="nearest"))
    assert _lines_taken() - taken == 3 * len(shapes)  # every pass
    assert counted[0] <= len(widths) <= 4, (
        f"{counted[0]} compilations for {len(shapes)} shapes")


@pytest.mark.parametrize("taps", [3, 5, 9, 15, 17])
def test_images_whose_first_pass_xla_would_fuse_run_a_pass_per_call(
        taps, monkeypatch):
    """An image's separable filter runs one pass per call where its first
    pass has 5 to 15 taps (XLA's CPU fusion would recompute it inside the
    second), with the same values as one call; other images, and small
    ones, keep one."""
    margins = _canvas.separable_margins(2, (0, 1), (taps, 3), (0, 0),
                                        ("reflect",) * 2, 2)
    image = np.random.default_rng(taps).random((200, 180)).astype(np.float32)
    assert _canvas.canvas_per_pass(image, margins, (0, 1)) == (5 <= taps
                                                               <= 15)
    assert not _canvas.canvas_per_pass(image, margins, (1,))
    assert not _canvas.canvas_per_pass(image[:100], margins, (0, 1))
    sigma = (taps // 2) / 4.0
    calls = [lambda m: m.gaussian_filter(image, sigma, mode="mirror"),
             lambda m: m.uniform_filter(image, (taps, 5), mode="constant",
                                        cval=0.25),
             lambda m: m.gaussian_gradient_magnitude(image, sigma)]
    for call in calls:
        want = call(sn)
        np.testing.assert_array_equal(call(jn), want)
        with monkeypatch.context() as patched:  # one call, whatever taps
            patched.setattr(_filters, "canvas_per_pass",
                            lambda x, m, axes=(): False)
            np.testing.assert_array_equal(call(jn), want)


def test_binary_morphology_compiles_per_bucket_not_per_shape():
    shapes = distinct_shapes(30, 16, 1024, 2, seed=5)
    with counting_compilations() as counted:
        for shape in shapes:
            jn.binary_erosion(np.ones(shape, bool))
            jn.binary_dilation(np.zeros(shape, np.uint8), np.ones((3, 3)))
    assert counted[0] <= 16, f"{counted[0]} compilations for 30 shapes"


def test_grey_composites_compile_per_bucket_not_per_shape():
    """The gradient, Laplace and top-hats combine their erosion and dilation
    on the canvas too (each used to compile its arithmetic per shape)."""
    shapes = distinct_shapes(24, 16, 512, 2, seed=6)
    with counting_compilations() as counted:
        for shape in shapes:
            x = (np.arange(np.prod(shape)) % 251).astype(np.uint8).reshape(shape)
            for f in (jn.morphological_gradient, jn.morphological_laplace,
                      jn.white_tophat):
                f(x, size=3)
    assert counted[0] <= 24, f"{counted[0]} compilations for 24 shapes"


def test_statistics_compile_per_bucket_not_per_shape():
    """The per-label statistics run on the points laid out flat in a bucket
    and index arrays padded to a power-of-two length (each used to compile
    per shape and per index length), and equal SciPy's there."""
    shapes = distinct_shapes(16, 16, 512, 2, seed=7)
    rng = np.random.default_rng(7)
    with counting_compilations() as counted:
        for k, shape in enumerate(shapes):
            x = rng.random(shape)
            labels = rng.integers(0, 5, shape)
            for f, index in ((jn.mean, list(range(1, 2 + k % 7))),
                             (jn.maximum_position, 3),
                             (jn.median, None), (jn.center_of_mass, [2, 4])):
                got = f(x, labels, index)
                want = getattr(sn, f.__name__)(x, labels, index)
                np.testing.assert_allclose(got, want, rtol=1e-12)
    # Per list length at most six programs (four functions and their
    # helpers); compiling per shape would take 64 or more.
    levels = len({_canvas.list_length(int(np.prod(s))) for s in shapes})
    assert counted[0] <= 6 * levels, (
        f"{counted[0]} compilations for 16 shapes in {levels} list lengths")


def _labels_equal_scipy(mask: np.ndarray, values: np.ndarray) -> None:
    """`label` by every structure, `find_objects`, `value_indices` and
    `labeled_comprehension` of ``mask``'s labels equal SciPy's."""
    for rank in (1, mask.ndim):
        structure = sn.generate_binary_structure(mask.ndim, rank)
        labels, count = jn.label(mask, structure)
        want, want_count = sn.label(mask, structure)
        np.testing.assert_array_equal(labels, want)
        assert count == want_count
    assert jn.find_objects(want) == sn.find_objects(want)
    assert jn.find_objects(want, 3) == sn.find_objects(want, 3)
    found = jn.value_indices(want, ignore_value=0)
    expected = sn.value_indices(want, ignore_value=0)
    assert list(found) == list(expected)
    for key in expected:
        np.testing.assert_array_equal(found[key], expected[key])
    np.testing.assert_array_equal(
        jn.labeled_comprehension(values, want, [1, 2, 5], np.mean, float, -1),
        sn.labeled_comprehension(values, want, [1, 2, 5], np.mean, float, -1))


def test_labels_and_their_boxes_compile_per_bucket_not_per_shape():
    """`label` runs on a guarded flat layout in a buffer of a list length,
    `find_objects` and `value_indices` on labels laid out flat (each used
    to compile per shape, `find_objects` per ``max_label`` too), and
    `labeled_comprehension` sorts on the host; all equal SciPy's."""
    rng = np.random.default_rng(8)
    shapes = distinct_shapes(24, 16, 600, 2, seed=8)
    with counting_compilations() as counted:
        for shape in shapes:
            _labels_equal_scipy(rng.random(shape) > 0.6, rng.random(shape))
    # Per list length: `label` per structure and power of two of the runs
    # (two or three at one density), `find_objects` per power of 64 of
    # max_label (two here), `value_indices` one; per shape it was 96.
    levels = len({_canvas.list_length(int(np.prod(s))) for s in shapes})
    assert counted[0] <= 9 * levels, (
        f"{counted[0]} compilations for {len(shapes)} shapes in {levels} "
        "list lengths")


@pytest.mark.parametrize("shape", [(37,), (1, 50), (50, 1), (1, 1),
                                   (5, 4, 3), (9, 1, 7), (3, 4, 5, 6)])
def test_labels_and_their_boxes_on_a_flat_layout_equal_scipy(shape):
    rng = np.random.default_rng(len(shape))
    for density in (0.0, 0.5, 1.0):
        _labels_equal_scipy(rng.random(shape) < density, rng.random(shape))


#: The public functions that compile for each new shape, and why; they are
#: left out of the test below.
_PER_SHAPE = {
    "generic_filter1d": "the user's function is traced for lines of the "
                        "axis's length, which it may read",
}

#: Image sizes whose layouts fall in one bucket of every mechanism.
_CATALOGUE_SIZES = (100, 106, 113, 120, 124)


@pytest.mark.usefixtures("cache_dir")  # not the user's cache: compiled here
@pytest.mark.parametrize("name", sorted(set(_catalogue.CALLS)
                                         - set(_PER_SHAPE)))
def test_every_function_compiles_per_bucket_not_per_shape(name):
    """One call of every public function (`_catalogue.CALLS`) on images of
    five sizes: after the first, at most two programs (a new index length
    of the per-label statistics, a bucket boundary), not one per size."""
    call = _catalogue.CALLS[name]
    compiled = []
    for size in _CATALOGUE_SIZES:
        arrays = _catalogue.inputs(size)
        with counting_compilations() as counted:
            call.run(jn, *[arrays[key] for key in call.takes])
        compiled.append(counted[0])
    assert sum(compiled[1:]) <= 2, f"compilations per size: {compiled}"


def test_buckets_hold_every_size_and_its_reach():
    for size in (1, 4608, 4609, 4718592, 4718593, 10 ** 8):
        length = _canvas.bucket_length(size)
        assert length >= size
        assert length == min(n for n in _canvas.BUCKETS + (length,)
                             if n >= size)
        if size > _canvas.BUCKETS[-1]:  # beyond the table: at most +25%
            assert length <= 1.25 * size + 4096
    # A thin array reads far (a whole row per tap): a longer canvas.
    assert _canvas.reach_of(_canvas.bucket_length(100, reach=50000)) >= 50000


def test_point_lists_are_padded_to_the_shortest_length_that_holds_them():
    lengths = _canvas.SHORT_LISTS + _canvas.BUCKETS
    for count in (1, 1024, 1025, 4096, 4097, 23104, 23105):
        assert _canvas.list_length(count) == min(n for n in lengths
                                                 if n >= count)
    # zoom of a small image interpolates a short list, with SciPy's result
    x = np.random.default_rng(0).random((48, 40)).astype(np.float32)
    np.testing.assert_array_equal(jn.zoom(x, 0.5, order=1),
                                  sn.zoom(x, 0.5, order=1))


def test_interpolation_reads_its_source_only_within_the_values(monkeypatch):
    """The points kernel gathers from a buffer of a source length whose
    tail is never written: filled with NaN here, it must not show."""
    empty = _canvas.aligned_empty

    def nan_filled(size, dtype):
        buffer = empty(size, dtype)
        buffer.fill(np.nan if np.dtype(dtype).kind == "f" else 0)
        return buffer

    monkeypatch.setattr(_canvas, "aligned_empty", nan_filled)
    rng = np.random.default_rng(8)
    x = rng.random((20, 31))
    points = rng.uniform(-3, 34, (2, 500))
    for order in (1, 3):
        for mode in ("mirror", "wrap", "grid-constant"):
            np.testing.assert_allclose(
                jn.map_coordinates(x, points, order=order, mode=mode,
                                   cval=0.5),
                sn.map_coordinates(x, points, order=order, mode=mode,
                                   cval=0.5), rtol=0, atol=1e-12)
    image = x.astype(np.float32)
    np.testing.assert_array_equal(jn.zoom(image, 1.7, order=1),
                                  sn.zoom(image, 1.7, order=1))


def test_long_point_lists_run_in_chunks_of_one_program():
    """A list of more than `LIST_CHUNK` points runs in chunks through one
    program, whatever its length, with SciPy's values in every chunk (the
    last one partly filled)."""
    from jaxndimage._interpolation import _points_bucketed

    rng = np.random.default_rng(9)
    x = rng.random((300, 280))
    programs = []
    for count in (_canvas.LIST_CHUNK + 1, 2 * _canvas.LIST_CHUNK + 17,
                  3 * _canvas.LIST_CHUNK):
        points = rng.uniform(-3, 303, (2, count))
        np.testing.assert_allclose(
            jn.map_coordinates(x, points, order=1, mode="mirror"),
            sn.map_coordinates(x, points, order=1, mode="mirror"),
            rtol=0, atol=1e-12)
        programs.append(set(_points_bucketed.memory))
    assert programs[0] == programs[1] == programs[2]
    assert _canvas.list_chunks(_canvas.LIST_CHUNK) == (_canvas.LIST_CHUNK, 1)
    assert _canvas.list_chunks(1000) == (1024, 1)


@pytest.mark.parametrize("mode", ["reflect", "constant", "nearest",
                                  "mirror", "wrap"])
@pytest.mark.parametrize("shape", [(3, 2000), (2000, 3), (5, 6, 7), (1, 1),
                                   (11,)])
def test_canvas_equals_scipy_for_thin_and_tiny_shapes(shape, mode):
    x = np.random.default_rng(0).random(shape) * 10
    for ours, theirs in [
        (jn.gaussian_filter(x, 1.5, mode=mode, cval=2.5),
         sn.gaussian_filter(x, 1.5, mode=mode, cval=2.5)),
        (jn.uniform_filter(x, 4, mode=mode, cval=2.5),
         sn.uniform_filter(x, 4, mode=mode, cval=2.5)),
        (jn.median_filter(x, 3, mode=mode, cval=2.5),
         sn.median_filter(x, 3, mode=mode, cval=2.5)),
    ]:
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_canvas_equals_the_exact_shape_kernel_under_jit():
    x = np.random.default_rng(1).random((37, 29)).astype(np.float32)
    for f in (lambda a: jn.gaussian_filter(a, 2.0, mode="constant", cval=1.0),
              lambda a: jn.sobel(a, mode="wrap"),
              lambda a: jn.median_filter(a, 5, mode="mirror"),
              lambda a: jn.maximum_filter(a, (3, 7), mode="nearest"),
              lambda a: jn.uniform_filter(a, 21)):
        canvas = f(jnp.asarray(x))      # concrete: on a canvas
        exact = jax.jit(f)(jnp.asarray(x))  # traced: the static shape
        np.testing.assert_allclose(canvas, exact, rtol=1e-6, atol=1e-6)


def test_concrete_jax_input_comes_back_as_jax():
    x = jnp.arange(20.0).reshape(4, 5)
    result = jn.uniform_filter(x, 3)
    assert isinstance(result, jax.Array)
    np.testing.assert_allclose(result, sn.uniform_filter(np.asarray(x), 3),
                               rtol=1e-6)
