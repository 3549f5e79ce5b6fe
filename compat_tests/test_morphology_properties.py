"""Property tests: binary and grey morphology against SciPy.

Random shapes, dtypes, structures (even-sized, without their centre),
origins, masks, border values, iterations (fixed and to convergence),
boundary modes and axes; every result must equal SciPy's, dtype included.
Shapes come from a short list, so that few programs compile.
"""

import numpy as np
import pytest
import scipy.ndimage as ndi
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxndimage as jnd

SHAPES = [(9,), (7, 6), (4, 5, 3)]
MODES = ["reflect", "grid-mirror", "constant", "grid-constant", "nearest",
         "mirror", "wrap", "grid-wrap"]
GREY_DTYPES = [np.uint8, np.int16, np.int64, np.float32, np.float64]
SETTINGS = settings(max_examples=8, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@st.composite
def binary_images(draw):
    shape = draw(st.sampled_from(SHAPES))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    image = rng.random(shape) > draw(st.sampled_from([0.3, 0.5, 0.7]))
    dtype = draw(st.sampled_from([bool, np.uint8, np.float64]))
    return image.astype(dtype), rng


@st.composite
def structures(draw, ndim, rng):
    """(structure or None, origin) with the origin inside the structure."""
    if draw(st.booleans()):
        return None, 0
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim,
                                max_size=ndim)))
    structure = rng.random(shape) > 0.4
    if draw(st.booleans()):
        structure[...] = True  # a box: separable, iterations in one pass
    origin = tuple(draw(st.integers(-(n // 2), (n - 1) // 2))
                   for n in shape)
    return structure, origin


def _centre_is_true(structure, origin, dilation):
    if structure is None:
        return True
    structure = np.asarray(structure, bool)
    origin = np.broadcast_to(origin, (structure.ndim,))
    if dilation:
        structure = structure[(slice(None, None, -1),) * structure.ndim]
        origin = [-o - (0 if n % 2 else 1)
                  for o, n in zip(origin, structure.shape)]
    index = tuple(n // 2 + o for n, o in zip(structure.shape, origin))
    return bool(structure[index])


def _same(ours, theirs):
    ours = np.asarray(ours)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


@SETTINGS
@given(data=st.data())
def test_binary_erosion_dilation_opening_closing(data):
    image, rng = data.draw(binary_images())
    structure, origin = data.draw(structures(image.ndim, rng))
    name = data.draw(st.sampled_from(["binary_erosion", "binary_dilation",
                                      "binary_opening", "binary_closing"]))
    converging = all(_centre_is_true(structure, origin, d)
                     for d in (False, True))
    iterations = data.draw(st.sampled_from([1, 2, 3] + ([0, -1]
                                                        if converging
                                                        else [])))
    kwargs = {"structure": structure, "iterations": iterations,
              "origin": origin,
              "border_value": data.draw(st.integers(0, 1)),
              "brute_force": data.draw(st.booleans())}
    if data.draw(st.booleans()):
        kwargs["mask"] = rng.random(image.shape) > 0.3
    _same(getattr(jnd, name)(image, **kwargs),
          getattr(ndi, name)(image, **kwargs))


@SETTINGS
@given(data=st.data())
def test_propagation_fill_holes_hit_or_miss(data):
    image, rng = data.draw(binary_images())
    structure, origin = data.draw(structures(image.ndim, rng))
    if not _centre_is_true(structure, origin, True):
        structure, origin = None, 0
    mask = rng.random(image.shape) > 0.3
    border_value = data.draw(st.integers(0, 1))
    _same(jnd.binary_propagation(image, structure, mask,
                                 border_value=border_value, origin=origin),
          ndi.binary_propagation(image, structure, mask,
                                 border_value=border_value, origin=origin))
    _same(jnd.binary_fill_holes(image, structure, origin=origin),
          ndi.binary_fill_holes(image, structure, origin=origin))
    second, origin2 = data.draw(structures(image.ndim, rng))
    _same(jnd.binary_hit_or_miss(image, structure, second, origin1=origin,
                                 origin2=origin2 if second is not None
                                 else None),
          ndi.binary_hit_or_miss(image, structure, second, origin1=origin,
                                 origin2=origin2 if second is not None
                                 else None))


@SETTINGS
@given(data=st.data())
def test_iterate_structure(data):
    ndim = data.draw(st.integers(1, 3))
    shape = tuple(data.draw(st.lists(st.integers(1, 3), min_size=ndim,
                                     max_size=ndim)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    dtype = data.draw(st.sampled_from([bool, np.uint8, np.float64]))
    structure = (rng.random(shape) > 0.4).astype(dtype)
    iterations = data.draw(st.integers(-1, 3))
    origin = data.draw(st.one_of(
        st.none(), st.integers(-1, 1),
        st.lists(st.integers(-1, 1), min_size=ndim, max_size=ndim)))
    ours = jnd.iterate_structure(structure, iterations, origin)
    theirs = ndi.iterate_structure(structure, iterations, origin)
    assert type(ours) is type(theirs)
    if isinstance(theirs, tuple):  # (structure, origin)
        _same(ours[0], theirs[0])
        assert list(ours[1]) == list(theirs[1])
    else:
        _same(ours, theirs)


@SETTINGS
@given(data=st.data())
def test_grey_morphology(data):
    shape = data.draw(st.sampled_from(SHAPES))
    dtype = np.dtype(data.draw(st.sampled_from(GREY_DTYPES)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    image = (rng.random(shape) * 200 - (0 if dtype.kind == "u" else 60))
    image = image.astype(dtype)
    axes = None
    if image.ndim > 1 and data.draw(st.booleans()):
        axes = tuple(data.draw(st.permutations(range(image.ndim)))[:2])
    rank = image.ndim if axes is None else len(axes)
    window = tuple(data.draw(st.lists(st.integers(1, 3), min_size=rank,
                                      max_size=rank)))
    kind = data.draw(st.sampled_from(["size", "footprint", "structure"]))
    kwargs = {"mode": data.draw(st.sampled_from(MODES)),
              "cval": data.draw(st.sampled_from([0.0, 3.0, -7.5])),
              "origin": tuple(data.draw(st.integers(-(n // 2), (n - 1) // 2))
                              for n in window),
              "axes": axes}
    if kind == "size":
        kwargs["size"] = window
    else:
        footprint = rng.random(window) > 0.3
        footprint.flat[0] = True
        kwargs["footprint"] = footprint
        if kind == "structure":
            kwargs["structure"] = np.round(rng.random(window) * 20 - 10, 1)
    name = data.draw(st.sampled_from([
        "grey_erosion", "grey_dilation", "grey_opening", "grey_closing",
        "morphological_gradient", "morphological_laplace", "white_tophat",
        "black_tophat"]))
    try:
        expected = getattr(ndi, name)(image, **kwargs)
    except ValueError as error:  # an origin outside a reversed footprint
        with pytest.raises(type(error)):
            getattr(jnd, name)(image, **kwargs)
        return
    _same(getattr(jnd, name)(image, **kwargs), expected)
