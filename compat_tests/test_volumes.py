"""Every function of scipy.ndimage on 3-D and 4-D numpy input equals SciPy's
result bit for bit: dtype, shape and values (or the same exception type),
but for the differences by rounding the README lists (`ROUNDED`).

SciPy's own suite and the catalogue (``jaxndimage._catalogue``) call most
functions on images; volumes are what many users filter.  The arguments
here are N-D: round (ball) footprints and structures of full
connectivity, wide kernels along one axis, sparse masks, labels of many
features, rotations in a plane of non-adjacent axes.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage as sp

import jaxndimage as jn

SHAPES = {3: (9, 11, 8), 4: (6, 7, 5, 6)}


def _volume(ndim: int, dtype: type = np.float32) -> dict[str, np.ndarray]:
    """The arrays of one dimensionality: a smooth volume of ``dtype``, its
    threshold (a few features), a sparse mask, its labels under full
    connectivity, a complex spectrum, uint8 costs and watershed markers,
    and a ball footprint and structure."""
    shape = SHAPES[ndim]
    rng = np.random.default_rng(ndim)
    image = sp.gaussian_filter(rng.standard_normal(shape), 1.0)
    image = ((image - image.min()) / np.ptp(image)).astype(dtype)
    binary = image > 0.55
    sparse = rng.random(shape) < 0.08
    full = np.ones((3,) * ndim, bool)
    labels = sp.label(binary, full)[0]
    ball = (np.indices((5,) * ndim) - 2) ** 2
    markers = np.zeros(shape, np.int16)
    markers[(1,) * ndim] = 1
    markers[(-2,) * ndim] = 2
    markers[(0,) * (ndim - 1) + (-1,)] = -1
    return {
        "image": image, "binary": binary, "sparse": sparse, "labels": labels,
        "full": full, "ball": ball.sum(axis=0) <= 4,
        "cross": sp.generate_binary_structure(ndim, 1),
        "spectrum": np.fft.fftn(image).astype(np.result_type(dtype, 1j)),
        "bytes": (image * 255).astype(np.uint8), "markers": markers,
        "weights": rng.standard_normal((3,) * ndim),
        "points": rng.uniform(-1, min(shape), (ndim, 20)),
    }


def _shifted_back(coordinates):
    """geometric_transform's mapping: half a sample back along every
    axis."""
    return tuple(c - 0.5 for c in coordinates)


# name -> call(m, v, ndim) with m the module, v the arrays of _volume.
CALLS = {
    # Filters.
    "gaussian_filter": lambda m, v, n: m.gaussian_filter(
        v["image"], [1.5, 0.7, 3.0, 1.0][:n], order=[0, 1, 2, 0][:n]),
    "gaussian_filter1d": lambda m, v, n: m.gaussian_filter1d(
        v["image"], 6.0, axis=0, mode="wrap"),
    "gaussian_laplace": lambda m, v, n: m.gaussian_laplace(v["image"], 1.2),
    "gaussian_gradient_magnitude": lambda m, v, n:
        m.gaussian_gradient_magnitude(v["image"], 1.2, mode="nearest"),
    "uniform_filter": lambda m, v, n: m.uniform_filter(
        v["image"], [3, 5, 2, 4][:n], mode="mirror"),
    "uniform_filter1d": lambda m, v, n: m.uniform_filter1d(
        v["image"], 4, axis=1),
    "correlate": lambda m, v, n: m.correlate(v["image"], v["weights"],
                                             mode="constant", cval=0.5),
    "convolve": lambda m, v, n: m.convolve(v["image"], v["weights"],
                                           mode="wrap"),
    "correlate1d": lambda m, v, n: m.correlate1d(
        v["image"], [1.0, -2.0, 0.5, 3.0], axis=-2),
    "convolve1d": lambda m, v, n: m.convolve1d(
        v["image"], [1.0, -2.0, 0.5], axis=0, mode="reflect"),
    "sobel": lambda m, v, n: m.sobel(v["image"], axis=-1),
    "prewitt": lambda m, v, n: m.prewitt(v["bytes"], axis=1),
    "laplace": lambda m, v, n: m.laplace(v["image"], mode="nearest"),
    "generic_filter": lambda m, v, n: m.generic_filter(
        v["image"], np.ptp, footprint=v["cross"]),
    "generic_filter1d": lambda m, v, n: m.generic_filter1d(
        v["image"], _running_sum, 3, axis=0),
    "generic_laplace": lambda m, v, n: m.generic_laplace(
        v["image"], _second_difference),
    "generic_gradient_magnitude": lambda m, v, n:
        m.generic_gradient_magnitude(v["image"], m.sobel),
    "minimum_filter": lambda m, v, n: m.minimum_filter(
        v["image"], footprint=v["ball"]),
    "maximum_filter": lambda m, v, n: m.maximum_filter(
        v["bytes"], footprint=v["ball"], mode="constant", cval=7),
    "minimum_filter1d": lambda m, v, n: m.minimum_filter1d(
        v["image"], 5, axis=0),
    "maximum_filter1d": lambda m, v, n: m.maximum_filter1d(
        v["image"], 4, axis=-1, mode="wrap"),
    "median_filter": lambda m, v, n: m.median_filter(v["image"], 3),
    "rank_filter": lambda m, v, n: m.rank_filter(
        v["image"], 3, footprint=v["ball"]),
    "percentile_filter": lambda m, v, n: m.percentile_filter(
        v["bytes"], 70, footprint=v["cross"], mode="mirror"),
    "vectorized_filter": lambda m, v, n: m.vectorized_filter(
        v["image"], np.mean, size=3),
    # Morphology.
    "binary_erosion": lambda m, v, n: m.binary_erosion(
        v["binary"], v["ball"], border_value=1),
    "binary_dilation": lambda m, v, n: m.binary_dilation(
        v["sparse"], v["ball"]),
    "binary_opening": lambda m, v, n: m.binary_opening(
        v["binary"], v["cross"], iterations=2),
    "binary_closing": lambda m, v, n: m.binary_closing(
        v["sparse"], v["full"]),
    "binary_propagation": lambda m, v, n: m.binary_propagation(
        v["sparse"], v["cross"], mask=v["binary"]),
    "binary_fill_holes": lambda m, v, n: m.binary_fill_holes(~v["binary"]),
    "binary_hit_or_miss": lambda m, v, n: m.binary_hit_or_miss(
        v["binary"], v["cross"]),
    "grey_erosion": lambda m, v, n: m.grey_erosion(
        v["image"], footprint=v["ball"]),
    "grey_dilation": lambda m, v, n: m.grey_dilation(
        v["image"], structure=v["weights"], mode="nearest"),
    "grey_opening": lambda m, v, n: m.grey_opening(v["bytes"], size=3),
    "grey_closing": lambda m, v, n: m.grey_closing(
        v["image"], footprint=v["cross"]),
    "morphological_gradient": lambda m, v, n: m.morphological_gradient(
        v["image"], footprint=v["ball"]),
    "morphological_laplace": lambda m, v, n: m.morphological_laplace(
        v["image"], size=3),
    "white_tophat": lambda m, v, n: m.white_tophat(
        v["image"], footprint=v["ball"]),
    "black_tophat": lambda m, v, n: m.black_tophat(v["bytes"], size=3),
    "distance_transform_edt": lambda m, v, n: m.distance_transform_edt(
        v["binary"], sampling=[1.0, 2.0, 0.5, 1.5][:n], return_indices=True),
    "distance_transform_cdt": lambda m, v, n: m.distance_transform_cdt(
        ~v["sparse"], "chessboard", return_indices=True),
    "distance_transform_bf": lambda m, v, n: m.distance_transform_bf(
        ~v["sparse"], "taxicab"),
    "generate_binary_structure": lambda m, v, n:
        m.generate_binary_structure(n, 2),
    "iterate_structure": lambda m, v, n: m.iterate_structure(v["cross"], 2),
    # Measurements.
    "label": lambda m, v, n: m.label(v["binary"], v["full"]),
    "find_objects": lambda m, v, n: m.find_objects(v["labels"]),
    "value_indices": lambda m, v, n: m.value_indices(v["labels"],
                                                     ignore_value=0),
    "sum_labels": lambda m, v, n: m.sum_labels(
        v["image"], v["labels"], np.arange(5)),
    "sum": lambda m, v, n: m.sum(v["image"], v["labels"], [1, 2]),
    "mean": lambda m, v, n: m.mean(v["image"], v["labels"], np.arange(5)),
    "variance": lambda m, v, n: m.variance(v["image"], v["labels"], [1, 3]),
    "standard_deviation": lambda m, v, n: m.standard_deviation(
        v["image"], v["labels"]),
    "minimum": lambda m, v, n: m.minimum(v["image"], v["labels"], [1, 2]),
    "maximum": lambda m, v, n: m.maximum(v["bytes"], v["labels"],
                                         np.arange(4)),
    "median": lambda m, v, n: m.median(v["image"], v["labels"], [1, 2]),
    "minimum_position": lambda m, v, n: m.minimum_position(
        v["image"], v["labels"], [1, 2]),
    "maximum_position": lambda m, v, n: m.maximum_position(v["image"]),
    "extrema": lambda m, v, n: m.extrema(v["image"], v["labels"], [1, 2]),
    "center_of_mass": lambda m, v, n: m.center_of_mass(
        v["image"], v["labels"], [1, 2]),
    "histogram": lambda m, v, n: m.histogram(
        v["image"], 0.0, 1.0, 7, v["labels"], [1, 2]),
    "labeled_comprehension": lambda m, v, n: m.labeled_comprehension(
        v["image"], v["labels"], np.arange(1, 4), np.median, float, -1.0),
    "watershed_ift": lambda m, v, n: m.watershed_ift(
        v["bytes"], v["markers"], structure=v["full"]),
    # Interpolation.
    "zoom": lambda m, v, n: m.zoom(v["image"], [1.5, 0.7, 2.0, 1.0][:n],
                                   order=3, mode="grid-mirror"),
    "shift": lambda m, v, n: m.shift(
        v["image"], [0.5, -1.25, 2.0, 0.75][:n], order=1, mode="nearest"),
    "affine_transform": lambda m, v, n: m.affine_transform(
        v["image"], np.eye(n) + 0.1 * np.tri(n, k=-1), offset=0.3, order=2),
    "map_coordinates": lambda m, v, n: m.map_coordinates(
        v["image"], v["points"], order=5, mode="wrap"),
    "geometric_transform": lambda m, v, n: m.geometric_transform(
        v["image"], _shifted_back, order=1),
    "rotate": lambda m, v, n: m.rotate(v["image"], 25, axes=(0, n - 1),
                                       order=1),
    "spline_filter": lambda m, v, n: m.spline_filter(v["image"], 4),
    "spline_filter1d": lambda m, v, n: m.spline_filter1d(
        v["image"], 3, axis=1, mode="reflect"),
    # Fourier filters.
    "fourier_gaussian": lambda m, v, n: m.fourier_gaussian(
        v["spectrum"], [1.0, 2.0, 0.5, 1.5][:n]),
    "fourier_uniform": lambda m, v, n: m.fourier_uniform(v["spectrum"], 3),
    "fourier_shift": lambda m, v, n: m.fourier_shift(v["spectrum"], 1.5),
    "fourier_ellipsoid": lambda m, v, n: m.fourier_ellipsoid(
        v["spectrum"], 2.5),
}


#: Functions whose values the README's "Deliberate differences from SciPy"
#: lets differ by rounding, per input dtype, with the bound held here
#: (relative to the largest magnitude of SciPy's result).  float32: the
#: spline prefilters' segmented recursions (and zoom's, of order 3), and a
#: numpy callable traced by JAX, whose mean adds the windows in XLA's
#: order.  float64 (complex128 spectra): also the running sums of the
#: uniform filters, the interpolation's weights and the Fourier filters'
#: factors, which add in other orders than SciPy's C loops; rounding to
#: float32 hides those.
ROUNDED = {
    np.float32: {"spline_filter": 1e-13, "spline_filter1d": 1e-13,
                 "zoom": 1e-13, "vectorized_filter": 1e-6},
    np.float64: {name: 1e-14 for name in (
        "spline_filter1d", "zoom", "vectorized_filter", "uniform_filter",
        "uniform_filter1d", "affine_transform", "map_coordinates",
        "rotate", "fourier_gaussian", "fourier_shift", "fourier_ellipsoid")}
    | {"spline_filter": 1e-13},
}


def _running_sum(line, out):
    """generic_filter1d's callable: the sum of each window of 3."""
    out[:] = line[:-2] + line[1:-1] + line[2:]


def _second_difference(input, axis, output, mode, cval):
    """generic_laplace's derivative: SciPy's own [1, -2, 1]."""
    return sp.correlate1d(input, [1, -2, 1], axis, output, mode, cval, 0)


def _assert_same(got, expected, where="result"):
    """``got`` is ``expected``: the same types throughout (containers,
    scalars), dtypes, shapes and values (NaN where it holds NaN)."""
    assert type(got) is type(expected), f"{where}: {type(got)}"
    if isinstance(expected, dict):
        assert got.keys() == expected.keys(), where
        for key in expected:
            _assert_same(got[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, tuple | list):
        assert len(got) == len(expected), where
        for index, (g, e) in enumerate(zip(got, expected)):
            _assert_same(g, e, f"{where}[{index}]")
    elif expected is None or isinstance(expected, slice | int | float):
        assert got == expected or (got != got and expected != expected), \
            f"{where}: {got!r} != {expected!r}"
    elif expected.dtype == object:  # histogram's arrays per label
        assert got.dtype == object and got.shape == expected.shape, where
        for index, (g, e) in enumerate(zip(got.flat, expected.flat)):
            _assert_same(g, e, f"{where}[{index}]")
    else:
        assert got.dtype == expected.dtype, f"{where}: {got.dtype}"
        np.testing.assert_array_equal(got, expected, err_msg=where,
                                      strict=True)


def test_every_shared_name_is_called():
    shared = set(jn.__all__) & set(sp.__all__)
    assert shared == set(CALLS)


#: (ndim, dtype) of the volumes: float64 in 3-D only, to bound the default
#: run's compiles (float64 programs are others than float32's).
VOLUMES = [(3, np.float32), (4, np.float32), (3, np.float64)]


@pytest.mark.parametrize(("ndim", "dtype"), VOLUMES,
                         ids=[f"{n}d-{np.dtype(t).name}" for n, t in VOLUMES])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_volumes_equal_scipy(name, ndim, dtype):
    arrays = _volume(ndim, dtype)
    kept = {key: value.copy() for key, value in arrays.items()}
    try:
        expected = CALLS[name](sp, arrays, ndim)
    except Exception as error:  # SciPy refuses: the same type of error
        with pytest.raises(type(error)):
            CALLS[name](jn, arrays, ndim)
        return
    got = CALLS[name](jn, arrays, ndim)
    bound = ROUNDED[dtype].get(name)
    if bound is not None:
        assert type(got) is type(expected) and got.dtype == expected.dtype
        scale = max(float(np.max(np.abs(expected))), 1.0)
        np.testing.assert_allclose(got, expected, rtol=0, atol=bound * scale)
    else:
        _assert_same(got, expected, name)
    for key, value in arrays.items():  # no argument written to
        np.testing.assert_array_equal(value, kept[key])


@pytest.mark.parametrize("name", ["gaussian_laplace",
                                  "gaussian_gradient_magnitude"])
def test_gaussian_derivatives_share_their_first_passes(name, monkeypatch):
    """The derivatives of a volume's Laplacian or gradient magnitude that
    begin with the same smoothing passes compute them once (8 passes in
    3-D, 13 in 4-D, where each derivative alone takes one per axis), with
    SciPy's bits: modes per axis, a zero sigma, integer and float64
    outputs."""
    from jaxndimage import _filters

    passes = []
    run = _filters._correlate_per_call

    def counted(x, weights, *args, **kwargs):
        passes.append(len(weights))
        return run(x, weights, *args, **kwargs)

    monkeypatch.setattr(_filters, "_correlate_per_call", counted)
    rng = np.random.default_rng(8)
    cases = [((20, 17, 23), 2.0, {}, 8),
             ((9, 10, 11, 12), 1.5, {}, 13),
             ((20, 17, 23), (1.0, 0.0, 3.0), {"mode": "wrap"}, 5),
             ((12, 15, 13), 2.5, {"mode": ("reflect", "constant", "nearest"),
                                  "cval": 0.75, "output": np.float64}, None),
             ((16, 18, 14), 1.0, {"output": np.int16}, 8)]
    for shape, sigma, keywords, expected_passes in cases:
        image = (rng.random(shape) * 50).astype(np.float32)
        passes.clear()
        got = getattr(jn, name)(image, sigma, **keywords)
        _assert_same(got, getattr(sp, name)(image, sigma, **keywords),
                     f"{name} {shape} {sigma} {keywords}")
        if expected_passes is not None:  # the modes differ per term
            assert sum(passes) == expected_passes, passes
