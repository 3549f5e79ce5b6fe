"""Binary and grey morphology: behaviour, errors, JAX transforms, dask,
and programs compiled over many shapes."""


import dask.array as da
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi
from compilations import counting_compilations, distinct_shapes
from jax.test_util import check_grads

import jaxndimage as jnd

RNG = np.random.default_rng(7)
#: One image shape for most tests, so that few programs compile.
BLOBS = ndi.gaussian_filter(RNG.random((40, 36)), 2) > 0.5
CROSS = ndi.generate_binary_structure(2, 1)
SQUARE = np.ones((3, 3), bool)
SKEWED = np.array([[1, 1, 0], [0, 1, 0], [0, 1, 1]], bool)


def _equal(ours, theirs):
    ours = np.asarray(ours)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


# --------------------------------------------------------------------------
# Propagation to convergence (the run-filling rounds) against SciPy
# --------------------------------------------------------------------------

@pytest.mark.parametrize("structure", [None, SQUARE, SKEWED])
def test_fill_holes_matches_scipy(structure):
    data = BLOBS.copy()
    _equal(jnd.binary_fill_holes(data, structure),
           ndi.binary_fill_holes(BLOBS, structure))
    _equal(data, BLOBS)  # the input is not modified


@pytest.mark.parametrize("shape", [(120, 140), (20, 30, 34)])
def test_fill_holes_by_labels_matches_scipy_for_every_connectivity(shape):
    # Symmetric structures fill by labelling the background; with more
    # than 4096 points the label kernel works on counted runs.
    noise = np.random.default_rng(3).random(shape)
    image = ndi.gaussian_filter(noise, 1.5) > 0.45
    for rank in range(1, len(shape) + 1):
        structure = ndi.generate_binary_structure(len(shape), rank)
        expected = ndi.binary_fill_holes(image, structure)
        assert (expected != image).any()  # there are holes to fill
        _equal(jnd.binary_fill_holes(image, structure), expected)


@pytest.mark.parametrize("structure, origin", [(None, 0), (SKEWED, (0, 1)),
                                               (np.ones((2, 3)), 0)])
@pytest.mark.parametrize("border_value", [0, 1])
def test_propagation_matches_scipy(structure, origin, border_value):
    seeds = np.zeros_like(BLOBS)
    seeds[5, 5] = seeds[30, 20] = True
    mask = ~ndi.binary_erosion(BLOBS)
    _equal(jnd.binary_propagation(seeds, structure, mask,
                                  border_value=border_value, origin=origin),
           ndi.binary_propagation(seeds, structure, mask,
                                  border_value=border_value, origin=origin))


def test_erosion_to_convergence_with_mask_matches_scipy():
    mask = RNG.random(BLOBS.shape) > 0.3
    for iterations in (0, -1):
        _equal(jnd.binary_erosion(BLOBS, SQUARE, iterations, mask,
                                  border_value=1),
               ndi.binary_erosion(BLOBS, SQUARE, iterations, mask,
                                  border_value=1))


def test_structure_without_centre_iterates_like_scipy():
    # Without its centre the step does not only shrink or grow: plain
    # iterations (no run filling), as SciPy.
    ring = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], bool)
    for iterations in (1, 2, 5):
        _equal(jnd.binary_dilation(BLOBS, ring, iterations),
               ndi.binary_dilation(BLOBS, ring, iterations))
    shift = np.array([1, 1, 0], bool)
    line = RNG.random(30) > 0.4
    _equal(jnd.binary_erosion(line, shift, -1, border_value=1),
           ndi.binary_erosion(line, shift, -1, border_value=1))


def test_fixed_iterations_with_mask_and_origin_match_scipy():
    mask = RNG.random(BLOBS.shape) > 0.2
    for name in ("binary_erosion", "binary_dilation", "binary_opening",
                 "binary_closing"):
        ours = getattr(jnd, name)(BLOBS, SKEWED, iterations=3, mask=mask,
                                  origin=(1, -1), border_value=1)
        theirs = getattr(ndi, name)(BLOBS, SKEWED, iterations=3, mask=mask,
                                    origin=(1, -1), border_value=1)
        _equal(ours, theirs)


# --------------------------------------------------------------------------
# Outputs and dtypes
# --------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(13, 9), (5, 6, 7)])
def test_one_step_on_a_canvas_equals_scipy_at_every_edge(shape):
    # One step without a mask runs on a canvas: every edge's margin is the
    # border value, for separable and other structures, shifted origins,
    # and integer input with negative values.
    rng = np.random.default_rng(len(shape))
    image = rng.integers(-2, 3, shape).astype(np.int16)
    ndim = len(shape)
    box = np.ones((3,) * ndim, bool)
    skewed = rng.random((3,) * ndim) < 0.5
    skewed[(1,) * ndim] = True
    for structure, origins in [(None, (0, -1)), (box, (1,)),
                               (skewed, (0, -1)),
                               (np.ones((2,) * ndim, bool), (0,))]:
        for origin in origins:
            for border in (0, 1):
                for name in ("binary_erosion", "binary_dilation"):
                    options = dict(structure=structure, origin=origin,
                                   border_value=border)
                    theirs = getattr(ndi, name)(image, **options)
                    _equal(getattr(jnd, name)(image, **options), theirs)
                    ours = getattr(jnd, name)(jnp.asarray(image), **options)
                    assert isinstance(ours, jax.Array)
                    _equal(ours, theirs)


def test_binary_output_dtype_is_bool_unless_an_array_is_given():
    image = BLOBS.astype(np.float32)
    assert jnd.binary_erosion(image, output=np.float32).dtype == np.bool_
    out = np.zeros(image.shape, np.int16)
    assert jnd.binary_dilation(image, output=out) is out
    _equal(out, ndi.binary_dilation(image).astype(np.int16))


def test_output_may_be_the_input():
    data = BLOBS.copy()
    expected = ndi.binary_closing(data, iterations=2)
    jnd.binary_closing(data, iterations=2, output=data)
    _equal(data, expected)
    grey = (RNG.random(BLOBS.shape) * 255).astype(np.uint8)
    expected = ndi.grey_dilation(grey, size=3)
    jnd.grey_dilation(grey, size=3, output=grey)
    _equal(grey, expected)


@pytest.mark.parametrize("name", ["morphological_gradient",
                                  "morphological_laplace", "white_tophat",
                                  "black_tophat"])
def test_uint8_arithmetic_wraps_like_scipy(name):
    image = (RNG.random(BLOBS.shape) * 255).astype(np.uint8)
    for kwargs in ({"size": 3}, {"structure": np.full((3, 3), 2)},
                   {"size": 3, "output": np.int16}):
        _equal(getattr(jnd, name)(image, **kwargs),
               getattr(ndi, name)(image, **kwargs))


def test_bool_gradient_is_a_type_error_like_numpy():
    with pytest.raises(TypeError, match="boolean subtract"):
        jnd.morphological_gradient(BLOBS, size=3)


def test_empty_and_zero_dimensional_inputs():
    empty = np.zeros((0, 4), bool)
    _equal(jnd.binary_erosion(empty), ndi.binary_erosion(empty))
    _equal(jnd.binary_fill_holes(empty), ndi.binary_fill_holes(empty))
    _equal(jnd.binary_dilation(np.array(1)), ndi.binary_dilation(np.array(1)))


def test_structures():
    for rank in range(4):
        for connectivity in range(-1, 4):
            _equal(jnd.generate_binary_structure(rank, connectivity),
                   ndi.generate_binary_structure(rank, connectivity))
    for iterations in (1, 2, 3):
        _equal(jnd.iterate_structure(SKEWED, iterations),
               ndi.iterate_structure(SKEWED, iterations))
    even = np.array([[1, 1], [0, 1]])
    ours, origin = jnd.iterate_structure(even, 3, origin=(0, -1))
    theirs, their_origin = ndi.iterate_structure(even, 3, origin=(0, -1))
    _equal(ours, theirs)
    assert origin == their_origin


@pytest.mark.parametrize("iterations", [-1, 0, 1, 1.5, 2])
def test_iterate_structure_returns_an_origin_only_when_it_iterates(
        iterations):
    # SciPy returns the copied structure alone below 2 iterations, even
    # with an origin.
    ours = jnd.iterate_structure(SKEWED, iterations, origin=(1, -1))
    theirs = ndi.iterate_structure(SKEWED, iterations, origin=(1, -1))
    assert type(ours) is type(theirs)
    if isinstance(theirs, tuple):
        _equal(ours[0], theirs[0])
        assert ours[1] == theirs[1]
    else:
        _equal(ours, theirs)


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, match", [
    ({"iterations": 1.5}, TypeError, "iterations"),
    ({"mask": np.ones((3, 3))}, RuntimeError, "mask"),
    ({"structure": np.ones(3)}, RuntimeError, "structure"),
    ({"structure": np.ones((0, 3))}, RuntimeError, "structure"),
    ({"origin": (0, 2)}, IndexError, "origin"),  # SciPy reads past the centre
    ({"origin": (0, -2)}, ValueError, "origin"),  # SciPy crashes
    ({"origin": (0, 0, 0)}, RuntimeError, "sequence"),
    ({"output": np.zeros((40, 36), complex)}, TypeError, "Complex"),
    ({"output": np.zeros((4, 4), bool)}, RuntimeError, "output"),
])
def test_binary_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        jnd.binary_erosion(BLOBS, **kwargs)
    if "origin" not in kwargs or len(kwargs["origin"]) != 2:
        # (SciPy indexes the structure with a bad origin: IndexError, or a
        # crash for negative ones; jaxndimage raises ValueError.)
        with pytest.raises(error):
            ndi.binary_erosion(BLOBS, **kwargs)


def test_grey_errors():
    with pytest.raises(ValueError, match="size, footprint, or structure"):
        jnd.grey_erosion(BLOBS)
    with pytest.raises(RuntimeError, match="ndim"):
        jnd.grey_erosion(BLOBS, structure=np.ones(3))
    with pytest.raises(TypeError, match="immutable"):
        jnd.binary_erosion(jnp.asarray(BLOBS), output=jnp.zeros(BLOBS.shape))


# --------------------------------------------------------------------------
# JAX: jit, vmap, grad
# --------------------------------------------------------------------------

def test_binary_under_jit_and_vmap():
    image = jnp.asarray(BLOBS)

    @jax.jit
    def pipeline(x):
        return (jnd.binary_erosion(x, SQUARE, iterations=2),
                jnd.binary_fill_holes(x),
                jnd.binary_dilation(x, mask=~x, iterations=-1))

    eroded, filled, grown = pipeline(image)
    assert isinstance(filled, jax.Array)
    _equal(eroded, ndi.binary_erosion(BLOBS, SQUARE, iterations=2))
    _equal(filled, ndi.binary_fill_holes(BLOBS))
    _equal(grown, ndi.binary_dilation(BLOBS, mask=~BLOBS, iterations=-1))

    stack = jnp.stack([image, ~image, image[::-1]])
    filled = jax.vmap(jnd.binary_fill_holes)(stack)
    for k in range(3):
        _equal(filled[k], ndi.binary_fill_holes(np.asarray(stack[k])))


def test_grey_under_jit_and_grad():
    values = np.random.default_rng(3).permutation(40 * 36).reshape(40, 36)
    values = values / 100.0
    # Weights below the spacing of the values: no ties.
    weights = np.array([[0.0, 0.001, 0.0], [0.002, 0.0, 0.003],
                        [0.0, 0.004, 0.0]])
    jitted = jax.jit(lambda v: jnd.grey_closing(v, structure=weights))
    np.testing.assert_allclose(
        jitted(jnp.asarray(values, jnp.float32)),
        ndi.grey_closing(values.astype(np.float32), structure=weights),
        rtol=1e-6)
    # Distinct values: no ties within a window, so min and max are
    # differentiable (an opening has ties by construction).
    with jax.enable_x64(True):
        x = jnp.asarray(values)
        for f in (lambda v: jnd.grey_dilation(v, size=3).sum(),
                  lambda v: jnd.grey_erosion(v, structure=weights).sum(),
                  lambda v: jnd.morphological_gradient(
                      v, footprint=CROSS).sum()):
            check_grads(f, (x,), order=1, modes=["rev"], eps=1e-4)


# --------------------------------------------------------------------------
# dask
# --------------------------------------------------------------------------

def test_dask_matches_the_single_array_result():
    x = da.from_array(BLOBS, chunks=(20, 18))
    grey = (RNG.random(BLOBS.shape) * 100).astype(np.int16)
    g = da.from_array(grey, chunks=(20, 18))
    mask = RNG.random(BLOBS.shape) > 0.2
    calls = [
        (jnd.binary_erosion, x, BLOBS, {"structure": SKEWED, "iterations": 3,
                                        "origin": (1, 0)}),
        (jnd.binary_dilation, x, BLOBS, {"structure": np.ones((2, 4)),
                                         "iterations": 2, "border_value": 1}),
        (jnd.binary_hit_or_miss, x, BLOBS, {"structure1": SKEWED}),
        (jnd.binary_erosion, x, BLOBS, {"iterations": -1}),
        (jnd.binary_dilation, x, BLOBS, {"mask": mask, "iterations": 4}),
        (jnd.binary_fill_holes, x, BLOBS, {}),
        (jnd.grey_dilation, g, grey, {"size": (2, 5), "mode": "wrap"}),
        (jnd.black_tophat, g, grey, {"footprint": SKEWED, "origin": 1}),
        (jnd.grey_opening, g, grey, {"size": (2, 3), "mode": "mirror"}),
    ]
    for f, lazy, whole, kwargs in calls:
        result = f(lazy, **kwargs)
        assert isinstance(result, da.Array), f.__name__
        _equal(result.compute(), getattr(ndi, f.__name__)(whole, **kwargs))


def test_float16_is_refused_like_scipy_except_by_jax():
    half = BLOBS.astype(np.float16)
    for name in ("binary_erosion", "binary_hit_or_miss"):
        with pytest.raises(RuntimeError):
            getattr(ndi, name)(half)
        with pytest.raises(RuntimeError, match="float16"):
            getattr(jnd, name)(half)
    _equal(jnd.binary_fill_holes(half), ndi.binary_fill_holes(half))
    _equal(np.asarray(jnd.binary_erosion(jnp.asarray(half))),
           ndi.binary_erosion(BLOBS))


@pytest.mark.parametrize("name", ["binary_fill_holes", "binary_hit_or_miss"])
def test_output_array_is_filled_and_none_returned_as_scipy(name):
    image = np.zeros((7, 7), bool)
    image[1:6, 1:6] = True
    image[3, 3] = False
    ours, theirs = np.zeros_like(image), np.zeros_like(image)
    assert getattr(jnd, name)(image, output=ours) is None
    assert getattr(ndi, name)(image, output=theirs) is None
    np.testing.assert_array_equal(ours, theirs)


# --------------------------------------------------------------------------
# Programs over many shapes: a new shape compiles nothing once its canvas
# bucket has been seen (numpy input and concrete JAX arrays on a CPU)
# --------------------------------------------------------------------------

def _skewed(ndim):
    """A structure that is not symmetric, holding its centre."""
    structure = np.zeros((3,) * ndim, bool)
    structure[(1,) * ndim] = True
    structure[(0,) * ndim] = structure[(2,) * (ndim - 1) + (1,)] = True
    structure[(1,) * (ndim - 1) + (2,)] = True
    return structure


def _weights(ndim):
    return np.arange(3 ** ndim, dtype=float).reshape((3,) * ndim) % 5 - 1


def _last(ndim, value):
    """An origin shifted along the last axis only."""
    return (0,) * (ndim - 1) + (value,)


#: Calls whose programs were compiled per shape before issue 43: name and
#: a function of (module, image, mask, seeds, grey image, grey float32).
#: Iterated, masked and converging binary steps (by labels for symmetric
#: structures, on a canvas for the others), the propagation, the
#: compositions, hole filling by both paths and grey morphology by a
#: non-flat structure.
_MANY_SHAPES = {
    "erosion iterations=3": lambda m, b, k, s, g, f: m.binary_erosion(
        b, iterations=3),
    "dilation iterations=3 origin": lambda m, b, k, s, g, f:
        m.binary_dilation(b, _skewed(b.ndim), iterations=3,
                          origin=_last(b.ndim, 1), border_value=1),
    "erosion box iterations=4": lambda m, b, k, s, g, f: m.binary_erosion(
        b, np.ones((3,) * b.ndim), iterations=4, border_value=1),
    "erosion iterations=-1": lambda m, b, k, s, g, f: m.binary_erosion(
        b, iterations=-1),
    "dilation iterations=0 border_value=1": lambda m, b, k, s, g, f:
        m.binary_dilation(s, iterations=0, mask=k, border_value=1),
    "dilation mask": lambda m, b, k, s, g, f: m.binary_dilation(b, mask=k),
    "erosion mask iterations=2": lambda m, b, k, s, g, f: m.binary_erosion(
        b, _skewed(b.ndim), iterations=2, mask=k, origin=_last(b.ndim, -1)),
    "propagation": lambda m, b, k, s, g, f: m.binary_propagation(s, mask=k),
    "propagation skewed origin": lambda m, b, k, s, g, f:
        m.binary_propagation(s, _skewed(b.ndim), mask=k,
                             origin=_last(b.ndim, 1)),
    "erosion ring iterations=-1": lambda m, b, k, s, g, f: m.binary_erosion(
        b, ~_skewed(b.ndim), iterations=-1, border_value=1),
    "opening iterations=2": lambda m, b, k, s, g, f: m.binary_opening(
        b, iterations=2),
    "closing iterations=2": lambda m, b, k, s, g, f: m.binary_closing(
        b, iterations=2, border_value=1),
    "hit_or_miss": lambda m, b, k, s, g, f: m.binary_hit_or_miss(b),
    "hit_or_miss origins": lambda m, b, k, s, g, f: m.binary_hit_or_miss(
        b, _skewed(b.ndim), origin1=_last(b.ndim, 1),
        origin2=_last(b.ndim, -1)),
    "fill_holes": lambda m, b, k, s, g, f: m.binary_fill_holes(b),
    "fill_holes skewed": lambda m, b, k, s, g, f: m.binary_fill_holes(
        b, _skewed(b.ndim)),
    "fill_holes origin": lambda m, b, k, s, g, f: m.binary_fill_holes(
        b, origin=_last(b.ndim, 1)),
    "grey_erosion structure": lambda m, b, k, s, g, f: m.grey_erosion(
        g, structure=_weights(g.ndim)),
    "grey_dilation structure constant": lambda m, b, k, s, g, f:
        m.grey_dilation(f, structure=_weights(g.ndim), mode="constant",
                        cval=3.5, origin=_last(g.ndim, 1)),
}


def _programs_over(shapes, seed, jax_input=False):
    """The compilations of each of `_MANY_SHAPES` over arrays of
    ``shapes``; every result equals SciPy's."""
    rng = np.random.default_rng(seed)
    counts = dict.fromkeys(_MANY_SHAPES, 0)
    for shape in shapes:
        image = ndi.gaussian_filter(rng.random(shape), 1.5) > 0.5
        mask = rng.random(shape) > 0.3
        grey = rng.integers(0, 200, shape).astype(np.uint8)
        arrays = (image, mask, image & mask, grey, grey.astype(np.float32))
        ours_in = [jnp.asarray(a) for a in arrays] if jax_input else arrays
        for name, call in _MANY_SHAPES.items():
            expected = call(ndi, *arrays)
            with counting_compilations() as counted:
                ours = call(jnd, *ours_in)
            counts[name] += counted[0]
            assert isinstance(ours, jax.Array if jax_input else np.ndarray)
            np.testing.assert_array_equal(np.asarray(ours), expected,
                                          err_msg=f"{name} {shape}")
    return counts


@pytest.mark.usefixtures("cache_dir")
def test_images_of_many_shapes_compile_per_bucket_not_per_shape():
    """24 image shapes from 16² to 1024², and images one sample wide:
    each call compiles at most 16 programs, not one per shape (the canvas
    buckets, at most 8 for two structures; the line widths of the sweeps;
    the labelling's buffer lengths and bounds of runs, which the first call
    that converges by labels meets: 12 measured, 7 of them the
    labelling's)."""
    shapes = distinct_shapes(24, 16, 1024, 2, seed=43) + [(1, 37), (53, 1)]
    counts = _programs_over(shapes, seed=43)
    over = {name: n for name, n in counts.items() if n > 16}
    assert not over, f"compilations for {len(shapes)} shapes: {over}"


@pytest.mark.usefixtures("cache_dir")
@pytest.mark.parametrize("ndim, low, high", [(1, 5, 5000), (3, 4, 40),
                                             (4, 3, 12)])
def test_lines_and_volumes_compile_per_bucket_not_per_shape(ndim, low, high):
    """Lines, volumes and 4-D arrays of 12 shapes each: at most 10
    programs per call (4 measured)."""
    counts = _programs_over(distinct_shapes(12, low, high, ndim, seed=ndim),
                            seed=ndim)
    over = {name: n for name, n in counts.items() if n > 10}
    assert not over, f"compilations for 12 {ndim}-D shapes: {over}"


@pytest.mark.usefixtures("cache_dir")
def test_jax_arrays_on_a_cpu_compile_per_bucket_not_per_shape():
    """Concrete JAX arrays on a CPU take the host's paths: JAX arrays
    back, SciPy's values, at most 10 programs per call over 10 shapes (6
    measured)."""
    counts = _programs_over(distinct_shapes(10, 16, 300, 2, seed=5), seed=5,
                            jax_input=True)
    over = {name: n for name, n in counts.items() if n > 10}
    assert not over, f"compilations for 10 shapes: {over}"


@pytest.mark.parametrize("mask", [np.array([0.5, 0.5, 1.0, 2.0, 0.0, 1.0]),
                                  np.array([256, 256, 1, 3, 0, 1], np.int16)])
def test_iterations_after_the_first_read_the_mask_as_int8_as_scipy(mask):
    # SciPy's iterations after the first read the mask cast to int8, where
    # 0.5 and 256 are 0; the first iteration, and every iteration of the
    # brute-force path, reads it as given.
    x = np.array([0, 0, 1, 0, 0, 1])
    calls = [lambda m, **k: m.binary_dilation(x, iterations=2, mask=mask, **k),
             lambda m, **k: m.binary_dilation(x, iterations=-1, mask=mask,
                                              **k),
             lambda m, **k: m.binary_erosion(1 - x, iterations=3, mask=mask,
                                             **k),
             lambda m, **k: m.binary_closing(x, iterations=2, mask=mask, **k)]
    for call in calls:
        for brute_force in (False, True):
            np.testing.assert_array_equal(
                call(jnd, brute_force=brute_force),
                call(ndi, brute_force=brute_force))
    np.testing.assert_array_equal(jnd.binary_propagation(x, mask=mask),
                                  ndi.binary_propagation(x, mask=mask))
    assert not jnd.binary_propagation(x, mask=mask)[0]

