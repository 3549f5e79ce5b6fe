"""Distance transforms: SciPy's values and feature indices (ties included),
output arrays, exceptions, JAX transformations and dask; a bounded number
of programs over many shapes (flat canvases), and a shape's own programs
once it recurs.

Shapes are few and reused, so few programs compile, but in the tests of
many shapes.
"""


import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi
from compilations import counting_compilations, distinct_shapes

import jaxndimage as jnd
from jaxndimage import _distance
from jaxndimage._cache import SecondsSpent

SHAPES = [(13,), (9, 10), (4, 5, 6)]


def _images(shape, seed=0):
    """Images full of ties: sparse background on a grid, symmetric blobs,
    random ones, no background and no foreground."""
    rng = np.random.default_rng(seed)
    grid = np.ones(shape, np.uint8)
    grid[tuple(slice(0, None, 4) for _ in shape)] = 0
    centre = np.ones(shape, np.uint8)
    centre[tuple(slice(n // 2, n // 2 + 1) for n in shape)] = 0
    corners = np.ones(shape, np.uint8)
    for index in np.ndindex(*(2,) * len(shape)):
        corners[tuple(i * (n - 1) for i, n in zip(index, shape))] = 0
    return [grid, centre, corners,
            (rng.random(shape) < 0.7).astype(np.uint8),
            (rng.random(shape) < 0.95).astype(np.int32),
            np.ones(shape, np.float32), np.zeros(shape, bool)]


def _same(ours, theirs):
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    assert isinstance(ours, np.ndarray)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_array_equal(ours, theirs)


def _without_host_shifts(monkeypatch):
    """The Euclidean transform of numpy input without the host's shifts:
    what an array whose features lie far apart runs."""
    monkeypatch.setattr(_distance, "_on_host_shifts", lambda *args: None)


@pytest.fixture(params=["flat", "exact"])
def route(request, monkeypatch):
    """Numpy input through the flat-canvas kernels (the first calls of a
    plan on a shape) or through the exact-shape ones (once they pay); the
    Euclidean transform's host shifts are tested on their own."""
    monkeypatch.setattr(_distance, "_flat_seconds", SecondsSpent())
    monkeypatch.setattr(_distance, "EXACT_AFTER_S",
                        np.inf if request.param == "flat" else 0.0)
    _without_host_shifts(monkeypatch)
    return request.param


@pytest.mark.parametrize("shape", SHAPES)
def test_edt_matches_scipy_with_ties(shape, route):
    samplings = (None, 0.3, [1.3, 0.7, 2.0][:len(shape)])
    for image in _images(shape)[: 7 if len(shape) < 3 else 4]:
        for sampling in samplings[: 3 if len(shape) < 3 else 2]:
            _same(jnd.distance_transform_edt(image, sampling,
                                             return_indices=True),
                  ndi.distance_transform_edt(image, sampling,
                                             return_indices=True))


@pytest.mark.parametrize("shape", SHAPES)
def test_cdt_matches_scipy_with_ties(shape, route):
    rng = np.random.default_rng(1)
    custom = rng.random((3,) * len(shape)) < 0.5
    cases = [(metric, indices) for metric in ("chessboard", "taxicab", custom)
             for indices in (False, True)]
    if len(shape) == 3:  # each structure is a program of its own: fewer
        cases = [("chessboard", False), ("taxicab", False), (custom, True)]
    for image in _images(shape):
        for metric, indices in cases:
                _same(jnd.distance_transform_cdt(image, metric,
                                                 return_indices=indices),
                      ndi.distance_transform_cdt(image, metric,
                                                 return_indices=indices))


@pytest.mark.parametrize("shape", SHAPES[:2])
def test_bf_matches_scipy_with_ties(shape, route):
    for image in _images(shape):
        for metric in ("euclidean", "cityblock", "chessboard"):
            _same(jnd.distance_transform_bf(image, metric, sampling=0.7,
                                            return_indices=True),
                  ndi.distance_transform_bf(image, metric, sampling=0.7,
                                            return_indices=True))


def _noise_and_blobs(shape, seed):
    """Noise of several densities (near features, and in 3-D and 4-D lines
    without any) and blobs of a few radii."""
    rng = np.random.default_rng(seed)
    masks = [rng.random(shape) < p for p in (0.3, 0.7, 0.95, 0.995)]
    smooth = ndi.gaussian_filter(rng.random(shape), 2)
    return masks + [smooth > np.median(smooth)] + _images(shape, seed)[:3]


@pytest.mark.parametrize("shape", [(40,), (1, 9), (23, 31), (3, 200),
                                   (200, 3), (9, 10, 11), (5, 6, 7, 8)])
def test_edt_host_shifts_match_scipy_with_ties(shape, monkeypatch):
    """Numpy input without sampling (or a sampling of ones): the host's
    shifts where features are near, SciPy's distances and indices, ties
    included, in float64 and (for JAX input without x64) float32."""
    taken = []
    shifts = _distance._edt_host_shifts
    monkeypatch.setattr(_distance, "_edt_host_shifts", lambda *args: (
        taken.append(shifts(*args)) or taken[-1]))
    for image in _noise_and_blobs(shape, len(shape)):
        if image.all():
            continue
        expected = ndi.distance_transform_edt(image, return_indices=True)
        for sampling in (None, [1] * len(shape)):
            taken.clear()
            _same(jnd.distance_transform_edt(image, sampling,
                                             return_indices=True), expected)
            # Features this near need few shifts: the host's run.
            assert taken and (taken[-1] is not None
                              or expected[0].max() > 8)
        _same(jnd.distance_transform_edt(image),
              ndi.distance_transform_edt(image))
        np.testing.assert_array_equal(
            jnd.distance_transform_edt(jnp.asarray(image)),
            ndi.distance_transform_edt(image).astype(np.float32))


def test_edt_host_shifts_keep_scipy_s_ties_in_int64_keys():
    """An array whose keys (squared distance and shift) need int64, the
    features of a noise image among many ties."""
    image = np.ones((1300, 40), bool)
    image[::5, ::3] = False
    image[np.random.default_rng(0).random(image.shape) < 0.1] = False
    assert _distance._edt_host_shifts(image, np.dtype(np.float64), True,
                                      True) is not None
    _same(jnd.distance_transform_edt(image, return_indices=True),
          ndi.distance_transform_edt(image, return_indices=True))


def test_edt_host_shifts_give_far_features_to_the_flat_canvases(monkeypatch):
    """Features farther apart than the host's shifts go: found by the probe
    (a blob), or past it (a blob between probed lines, with the probe
    reading only the first line): SciPy's results by the flat canvases."""
    monkeypatch.setattr(_distance, "_flat_seconds", SecondsSpent())
    blob = np.ones((150, 160), bool)
    blob[0] = blob[-1] = False
    between = blob.copy()
    between[::4] = False
    between[20:120] = True
    for image, stride in ((blob, _distance._PROBE_STRIDE), (between, 10 ** 6)):
        monkeypatch.setattr(_distance, "_PROBE_STRIDE", stride)
        assert _distance._edt_host_shifts(image, np.dtype(np.float64), True,
                                          False) is None
        _same(jnd.distance_transform_edt(image, return_indices=True),
              ndi.distance_transform_edt(image, return_indices=True))


@pytest.mark.usefixtures("cache_dir")
def test_edt_host_shifts_compile_nothing_over_many_shapes():
    """Noise masks of many shapes, 1-D to 4-D: SciPy's distances and
    indices by the host's shifts, and not one program compiled."""
    rng = np.random.default_rng(5)
    shapes = distinct_shapes(8, 16, 600, 2, seed=5) + [
        (300,), (20, 21, 22), (6, 7, 8, 9)]
    with counting_compilations() as counted:
        for shape in shapes:
            mask = rng.random(shape) < 0.6
            for indices in (False, True):
                _same(jnd.distance_transform_edt(mask,
                                                 return_indices=indices),
                      ndi.distance_transform_edt(mask,
                                                 return_indices=indices))
    assert counted[0] == 0


def test_cdt_reads_a_structure_as_bytes_like_scipy():
    image = _images((9, 10))[3]
    for structure in (np.ones((3, 3), int), np.ones((3, 3)),
                      np.ones((3, 3), np.int8)):
        _same(jnd.distance_transform_cdt(image, structure),
              ndi.distance_transform_cdt(image, structure))


def test_zero_dimensional_input():
    for value in (0, 1):
        _same(jnd.distance_transform_edt(np.array(value), return_indices=True),
              ndi.distance_transform_edt(np.array(value), return_indices=True))
        _same(jnd.distance_transform_bf(np.array(value), return_indices=True),
              ndi.distance_transform_bf(np.array(value), return_indices=True))
    with pytest.raises(TypeError):
        jnd.distance_transform_cdt(np.array(1))


@pytest.mark.parametrize("func, dtype", [
    (jnd.distance_transform_edt, np.float64),
    (jnd.distance_transform_cdt, np.int32),
    (jnd.distance_transform_bf, np.float64)])
def test_output_arrays_are_written_and_none_returned(func, dtype):
    image = _images((9, 10))[3]
    expected_dt, expected_ft = func(image, return_indices=True)
    dt = np.zeros(image.shape, dtype)
    ft = np.zeros((2,) + image.shape, np.int32)
    assert func(image, return_indices=True, distances=dt, indices=ft) is None
    np.testing.assert_array_equal(dt, expected_dt)
    np.testing.assert_array_equal(ft, expected_ft)
    dt[...] = 0
    returned = func(image, return_indices=True, distances=dt)
    np.testing.assert_array_equal(returned, expected_ft)
    np.testing.assert_array_equal(dt, expected_dt)


@pytest.mark.parametrize("call, error", [
    (lambda f, x: f(x, return_distances=False, return_indices=False),
     RuntimeError),
    (lambda f, x: f(x, return_distances=False,
                    distances=np.zeros(x.shape)), RuntimeError),
    (lambda f, x: f(x, indices=np.zeros((2,) + x.shape, np.int32)),
     RuntimeError),
])
@pytest.mark.parametrize("func", [jnd.distance_transform_edt,
                                  jnd.distance_transform_cdt,
                                  jnd.distance_transform_bf])
def test_return_flag_errors(func, call, error):
    with pytest.raises(error):
        call(func, np.ones((9, 10)))


def test_argument_errors_are_scipy_s():
    x = _images((9, 10))[3]
    cases = [
        (lambda m: m.distance_transform_edt(x, sampling=[1, 2, 3]),
         RuntimeError),
        (lambda m: m.distance_transform_bf(x, sampling=[1, 2, 3]),
         RuntimeError),
        (lambda m: m.distance_transform_bf(x, metric="garbage"),
         RuntimeError),
        (lambda m: m.distance_transform_cdt(x, metric="garbage"), ValueError),
        (lambda m: m.distance_transform_cdt(x, metric=np.ones((3, 2))),
         ValueError),
        (lambda m: m.distance_transform_edt(
            x, return_indices=True, indices=np.zeros((2, 9, 9), np.int32)),
         RuntimeError),
        (lambda m: m.distance_transform_edt(
            x, return_indices=True, indices=np.zeros((2, 9, 10))),
         RuntimeError),
        (lambda m: m.distance_transform_edt(x, distances=np.zeros((9, 9))),
         RuntimeError),
        (lambda m: m.distance_transform_edt(
            x, distances=np.zeros((9, 10), np.float32)), RuntimeError),
        (lambda m: m.distance_transform_cdt(x, distances=np.zeros((9, 10))),
         ValueError),
        (lambda m: m.distance_transform_cdt(
            x, distances=np.zeros((9, 9), np.int32)), ValueError),
        (lambda m: m.distance_transform_cdt(
            x, return_indices=True, indices=np.zeros((2, 9, 10))),
         ValueError),
        (lambda m: m.distance_transform_bf(
            x, metric="taxicab", distances=np.zeros((9, 10))), RuntimeError),
        (lambda m: m.distance_transform_bf(
            x, return_indices=True, indices=np.zeros((1, 9, 10), np.int32)),
         RuntimeError),
    ]
    for call, error in cases:
        with pytest.raises(error):
            call(ndi)
        with pytest.raises(error):
            call(jnd)


def test_jax_arrays_jit_and_vmap():
    images = np.stack(_images((9, 10))[:4]).astype(np.float32)
    x = jnp.asarray(images)
    edt = jax.jit(jax.vmap(lambda a: jnd.distance_transform_edt(
        a, sampling=(2.0, 1.0), return_indices=True)))
    cdt = jax.jit(jax.vmap(lambda a: jnd.distance_transform_cdt(
        a, "taxicab", return_indices=True)))
    bf = jax.jit(jax.vmap(lambda a: jnd.distance_transform_bf(a)))
    for func, reference in [
            (edt, lambda a: ndi.distance_transform_edt(
                a, sampling=(2.0, 1.0), return_indices=True)),
            (cdt, lambda a: ndi.distance_transform_cdt(
                a, "taxicab", return_indices=True)),
            (bf, ndi.distance_transform_bf)]:
        result = func(x)
        assert isinstance(jax.tree.leaves(result)[0], jax.Array)
        for k, image in enumerate(images):
            expected = reference(image)
            got = jax.tree.map(lambda r, k=k: np.asarray(r[k]), result)
            np.testing.assert_allclose(
                jax.tree.leaves(got)[0], jax.tree.leaves(expected)[0],
                rtol=1e-6)
            if isinstance(expected, tuple):
                np.testing.assert_array_equal(got[1], expected[1])


def test_jax_input_gives_jax_output_without_x64():
    image = _images((9, 10))[3]
    dt, ft = jnd.distance_transform_edt(jnp.asarray(image),
                                        return_indices=True)
    assert isinstance(dt, jax.Array) and ft.dtype == jnp.int32
    np.testing.assert_allclose(dt, ndi.distance_transform_edt(image),
                               rtol=1e-6)


def test_edt_distances_are_differentiable_in_sampling():
    image = _images((9, 10))[0]

    def total(sampling):
        return jnd.distance_transform_edt(jnp.asarray(image),
                                          sampling=sampling).sum()

    grad = jax.grad(total)(jnp.asarray([2.0, 1.0]))
    step = 1e-3
    numeric = (total(jnp.asarray([2.0 + step, 1.0]))
               - total(jnp.asarray([2.0 - step, 1.0]))) / (2 * step)
    np.testing.assert_allclose(grad[0], numeric, rtol=1e-2)


def test_dask_is_computed_whole_and_returned_as_dask():
    da = pytest.importorskip("dask.array")
    image = _images((9, 10))[3]
    lazy = da.from_array(image, chunks=(4, 5))
    dt, ft = jnd.distance_transform_edt(lazy, return_indices=True)
    assert isinstance(dt, da.Array) and isinstance(ft, da.Array)
    expected = ndi.distance_transform_edt(image, return_indices=True)
    np.testing.assert_array_equal(dt.compute(), expected[0])
    np.testing.assert_array_equal(ft.compute(), expected[1])
    cdt = jnd.distance_transform_cdt(lazy)
    assert isinstance(cdt, da.Array)
    np.testing.assert_array_equal(cdt.compute(),
                                  ndi.distance_transform_cdt(image))


# --------------------------------------------------------------------------
# Many shapes: flat canvases, a bounded number of programs
# --------------------------------------------------------------------------

@pytest.fixture
def unseen(monkeypatch):
    """No call of this process met before: the first call of a plan on a
    shape runs on flat canvases (the Euclidean transform's host shifts,
    which compile nothing, left out)."""
    monkeypatch.setattr(_distance, "_flat_seconds", SecondsSpent())
    _without_host_shifts(monkeypatch)


def _ragged(shape, seed):
    """Blobs with ragged edges, about 80% foreground: distances of a few
    elements, many ties."""
    rng = np.random.default_rng(seed)
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    pattern = np.sin(grids[-1] / 7.0) * np.cos(grids[0] / 11.0)
    return (pattern + 0.3 * rng.random(shape) < 0.7).astype(np.uint8)


#: Calls of every option: (name, function, keywords, largest image the
#: call is made for: the brute force compares every element with every
#: border element).
_MANY_SHAPE_CALLS = [
    ("edt", "distance_transform_edt", {}, None),
    ("edt indices", "distance_transform_edt",
     {"return_indices": True, "return_distances": False}, None),
    ("edt sampling", "distance_transform_edt",
     {"sampling": 0.7, "return_indices": True}, None),
    ("cdt chessboard", "distance_transform_cdt", {}, None),
    ("cdt taxicab", "distance_transform_cdt", {"metric": "taxicab"}, None),
    ("cdt indices", "distance_transform_cdt", {"return_indices": True},
     None),
    ("bf", "distance_transform_bf", {"return_indices": True}, 80 * 80),
    ("bf taxicab", "distance_transform_bf", {"metric": "taxicab"}, 80 * 80),
]


def _programs_over(shapes, images):
    """Compilations of each call of `_MANY_SHAPE_CALLS` over ``shapes``,
    each call the first of its shape (on flat canvases), each result equal
    to SciPy's."""
    counts = {name: 0 for name, *_ in _MANY_SHAPE_CALLS}
    for shape in shapes:
        for image in images(shape):
            for name, function, keywords, largest in _MANY_SHAPE_CALLS:
                if largest is not None and image.size > largest:
                    continue
                _distance._flat_seconds.clear()
                with counting_compilations() as counted:
                    ours = getattr(jnd, function)(image, **keywords)
                counts[name] += counted[0]
                _same(ours, getattr(ndi, function)(image, **keywords))
    return counts


@pytest.mark.usefixtures("cache_dir", "unseen")
def test_many_image_shapes_compile_a_bounded_number_of_programs():
    """30 image shapes from 16 to 1024 a side: each call compiles at most
    16 programs in all, a program per pass for each bucket length and lane
    width met (15 for the Euclidean transform, 7 for the chamfer one; the
    exact-shape kernels compiled a program per stage and shape: 89 to 210
    here), with SciPy's results, ties included."""
    shapes = distinct_shapes(30, 16, 1024, 2, seed=43)
    counts = _programs_over(shapes, lambda shape: [_ragged(shape, 1)])
    over = {name: n for name, n in counts.items() if n > 16}
    assert not over, f"compilations over {len(shapes)} shapes: {counts}"


@pytest.mark.usefixtures("cache_dir", "unseen")
def test_odd_shapes_and_volumes_compile_a_bounded_number_of_programs():
    """1-D arrays, an axis of one element, volumes and 4-D arrays, with no
    background, all background and ties: SciPy's results, and at most 24
    programs a call over them all (22 for the Euclidean transform, which
    compiles a program per axis for each rank, bucket and lane width met;
    the exact-shape kernels compiled 44 to 545 here)."""
    shapes = ([(1,), (7,), (2000,), (1, 1), (1, 300), (300, 1), (3, 1, 9),
               (5, 1, 6, 7), (6, 7, 8, 9)]
              + distinct_shapes(6, 4, 48, 3, seed=3))

    def images(shape):
        grid = np.ones(shape, np.uint8)
        grid[tuple(slice(0, None, 3) for _ in shape)] = 0
        return [_ragged(shape, 2), grid, np.ones(shape, np.float32),
                np.zeros(shape, bool)]

    counts = _programs_over(shapes, images)
    over = {name: n for name, n in counts.items() if n > 24}
    assert not over, f"compilations over {len(shapes)} shapes: {counts}"


@pytest.mark.usefixtures("cache_dir", "unseen")
def test_a_recurring_shape_runs_its_own_programs_once_they_pay(monkeypatch):
    """A plan on a shape runs on flat canvases until its calls after the
    first have taken `EXACT_AFTER_S`; the next call compiles the shape's
    own programs, and the one after that nothing; every call gives SciPy's
    result, and output arrays are written on both routes."""
    monkeypatch.setattr(_distance, "EXACT_AFTER_S", 1e-9)
    image = _ragged((37, 45), 3)
    expected = ndi.distance_transform_edt(image, return_indices=True)
    counts = []
    for _ in range(4):
        dt = np.zeros(image.shape)
        ft = np.zeros((2,) + image.shape, np.int32)
        with counting_compilations() as counted:
            assert jnd.distance_transform_edt(
                image, return_indices=True, distances=dt, indices=ft) is None
        counts.append(counted[0])
        _same((dt, ft), expected)
    assert counts[1] == 0 and counts[2] > 0 and counts[3] == 0, counts


@pytest.mark.usefixtures("cache_dir", "unseen")
def test_a_shape_met_a_few_times_compiles_nothing_of_its_own():
    image = _ragged((41, 39), 5)
    jnd.distance_transform_edt(image)
    with counting_compilations() as counted:
        for _ in range(3):
            jnd.distance_transform_edt(image)
    assert counted[0] == 0


@pytest.mark.usefixtures("unseen")
def test_flat_canvases_take_concrete_jax_arrays_and_give_jax_arrays():
    image = _ragged((23, 31), 4)
    for function, keywords in [("distance_transform_edt", {}),
                               ("distance_transform_cdt", {}),
                               ("distance_transform_bf", {})]:
        ours = getattr(jnd, function)(jnp.asarray(image),
                                      return_indices=True, **keywords)
        assert all(isinstance(r, jax.Array) for r in ours)
        theirs = getattr(ndi, function)(image, return_indices=True,
                                        **keywords)
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
        np.testing.assert_array_equal(ours[1], theirs[1])


@pytest.mark.usefixtures("unseen")
@pytest.mark.parametrize("shape, crop", [
    ((16, 533), np.s_[:, 105:139]),
    ((850, 653), np.s_[520:548, 125:150])])
def test_edt_walk_reaches_a_site_past_the_crossings_before_it(shape, crop):
    """Rounding can put the crossing where SciPy's walk moves onto a kept
    site at or before the crossing of the site below it.  SciPy's walk
    reaches a site only past the crossings of all sites before it, and
    passes it at once when the next one is nearer (the walk here once
    stopped on such a site, or moved past the one below too early: a
    farther feature).  On flat canvases and on the shape's own programs.
    """
    image = _ragged(shape, 1)[crop]
    expected = ndi.distance_transform_edt(image, 0.7, return_indices=True)
    for _ in range(2):
        _same(jnd.distance_transform_edt(image, 0.7, return_indices=True),
              expected)
