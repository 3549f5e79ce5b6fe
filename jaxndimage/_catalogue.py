"""One representative call of every public function, on prepared inputs.

The accelerator test lane (``tests/test_accelerator.py``) and the device
benchmark (``benchmarks/bench_accelerator.py``) run every function of
jaxndimage the same way: a call here takes the module it runs
(``scipy.ndimage`` or ``jaxndimage``) and the arrays it names, prepared
once by :func:`inputs` with numpy from one smooth float32 image, so the
same values reach SciPy and jaxndimage whatever array type carries them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

__all__ = ["CALLS", "Call", "difference", "inputs"]


class Call(NamedTuple):
    """``run(module, *arrays)`` with the prepared arrays named ``takes``;
    ``exact``: the result equals SciPy's exactly in float32 arithmetic
    too (selections, labels, counts and positions, not sums)."""

    run: Callable[..., Any]
    takes: tuple[str, ...] = ("image",)
    exact: bool = False


def inputs(size: int = 128, seed: int = 0) -> dict[str, np.ndarray]:
    """The arrays the calls take, for a ``size`` x ``size`` image: a smooth
    random float32 image, its threshold, the threshold's labels and their
    numbers (the per-label statistics take them as an array of their own,
    as a user holds on to what `label` counted, so a device's calls do not
    read the labels back to find them), a small sparse mask, the image's
    complex64 spectrum, a uint8 image with watershed markers, and float32
    coordinates of points near the image's own grid (``map_coordinates``
    takes them as an array of its own, so a device's calls read them on
    the device)."""
    import scipy.ndimage as ndi

    rng = np.random.default_rng(seed)
    noise = rng.standard_normal((size, size))
    image = ndi.gaussian_filter(noise, size / 32)
    image = ((image - image.min()) / np.ptp(image)).astype(np.float32)
    binary = image > 0.5
    labels, count = ndi.label(binary)
    markers = np.zeros((size, size), np.int32)
    markers[size // 4, size // 4], markers[-size // 4, -size // 4] = 1, 2
    return {
        "image": image,
        "binary": binary,
        "labels": labels.astype(np.int32),
        "index": np.arange(1, count + 1),
        "seeds": binary & (rng.random((size, size)) < 0.01),
        "spectrum": np.fft.fft2(image).astype(np.complex64),
        "bytes": (image * 255).astype(np.uint8),
        "markers": markers,
        "coordinates": np.indices((size, size), np.float32) * 0.93 + 2.1,
    }


def distinct_shapes(count: int, low: int, high: int, ndim: int, seed: int
                    ) -> list[tuple[int, ...]]:
    """``count`` distinct shapes, log-uniform per axis in [low, high]: the
    many image sizes of the compile-count tests and benchmarks."""
    rng = np.random.default_rng(seed)
    found: set[tuple[int, ...]] = set()
    while len(found) < count:
        found.add(tuple(int(round(np.exp(v))) for v in rng.uniform(
            np.log(low), np.log(high), ndim)))
    return sorted(found)


# A rotation by 0.13 radians scaled by 0.97: no output point maps exactly
# onto the input's edge, where a float32 coordinate could fall on the
# other side of it than SciPy's float64 one.
_MATRIX = 0.97 * np.array([[np.cos(0.13), np.sin(0.13)],
                           [-np.sin(0.13), np.cos(0.13)]])
_K3 = np.array([[1.0, 2.0, 0.0], [-1.0, 0.0, 1.0], [0.5, -2.0, 1.0]])
_W5 = np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16
_DISK = np.hypot(*np.mgrid[-3:4, -3:4]) <= 3
#: What the per-label statistics take: values, labels and the numbers of
#: the labels to measure.
_LABELLED = ("image", "labels", "index")


def _shifted_by(shift: tuple[float, float]) -> Callable:
    def mapping(point: tuple) -> tuple:
        return (point[0] - shift[0], point[1] - shift[1])
    return mapping


def _square(values: Any) -> Any:
    return values.sum() / values.size  # JAX-traceable


# The callables are module-level functions, one object for every call, as
# a user's are when defined once: a callable is part of the configuration
# a program is compiled for.
def _line_interior(line: Any, out: Any) -> None:
    out[:] = line[1:-1]


def _window_max(windows: Any, axis: Any) -> Any:
    return windows.max(axis=axis)


#: Every public function of scipy.ndimage, by name.
CALLS: dict[str, Call] = {
    # linear filters
    "gaussian_filter": Call(lambda m, a: m.gaussian_filter(a, 2.0)),
    "gaussian_filter1d": Call(lambda m, a: m.gaussian_filter1d(a, 3.0, 0)),
    "gaussian_laplace": Call(lambda m, a: m.gaussian_laplace(a, 2.0)),
    "gaussian_gradient_magnitude": Call(
        lambda m, a: m.gaussian_gradient_magnitude(a, 2.0)),
    "uniform_filter": Call(lambda m, a: m.uniform_filter(a, 5)),
    "uniform_filter1d": Call(lambda m, a: m.uniform_filter1d(a, 7)),
    "correlate": Call(lambda m, a: m.correlate(a, _K3, mode="nearest")),
    "convolve": Call(lambda m, a: m.convolve(a, _K3, mode="wrap")),
    "correlate1d": Call(lambda m, a: m.correlate1d(a, _W5, axis=0)),
    "convolve1d": Call(lambda m, a: m.convolve1d(a, _W5, mode="mirror")),
    "sobel": Call(lambda m, a: m.sobel(a, axis=0)),
    "prewitt": Call(lambda m, a: m.prewitt(a, axis=1)),
    "laplace": Call(lambda m, a: m.laplace(a)),
    "generic_gradient_magnitude": Call(
        lambda m, a: m.generic_gradient_magnitude(a, m.sobel)),
    "generic_laplace": Call(lambda m, a: m.generic_laplace(
        a, lambda i, ax, o, mo, c: m.correlate1d(i, [1, -2, 1], ax, o, mo,
                                                 c))),
    # rank filters and user callables
    "minimum_filter": Call(lambda m, a: m.minimum_filter(a, 5), exact=True),
    "maximum_filter": Call(lambda m, a: m.maximum_filter(a, footprint=_DISK),
                           exact=True),
    "minimum_filter1d": Call(lambda m, a: m.minimum_filter1d(a, 9),
                             exact=True),
    "maximum_filter1d": Call(lambda m, a: m.maximum_filter1d(a, 9),
                             exact=True),
    "median_filter": Call(lambda m, a: m.median_filter(a, 5), exact=True),
    "rank_filter": Call(lambda m, a: m.rank_filter(a, 2, 3), exact=True),
    "percentile_filter": Call(lambda m, a: m.percentile_filter(a, 25, 3),
                              exact=True),
    "generic_filter": Call(lambda m, a: m.generic_filter(a, _square, 3)),
    "generic_filter1d": Call(lambda m, a: m.generic_filter1d(
        a, _line_interior, 3), exact=True),
    "vectorized_filter": Call(lambda m, a: m.vectorized_filter(
        a, _window_max, size=3), exact=True),
    # Fourier filters
    "fourier_gaussian": Call(lambda m, s: m.fourier_gaussian(s, 2.0),
                             ("spectrum",)),
    "fourier_uniform": Call(lambda m, s: m.fourier_uniform(s, 5.0),
                            ("spectrum",)),
    "fourier_ellipsoid": Call(lambda m, s: m.fourier_ellipsoid(s, 5.0),
                              ("spectrum",)),
    "fourier_shift": Call(lambda m, s: m.fourier_shift(s, (3.0, -2.0)),
                          ("spectrum",)),
    # interpolation
    "spline_filter": Call(lambda m, a: m.spline_filter(a)),
    "spline_filter1d": Call(lambda m, a: m.spline_filter1d(a, axis=0)),
    "shift": Call(lambda m, a: m.shift(a, (3.3, -2.7))),
    "zoom": Call(lambda m, a: m.zoom(a, 0.75)),
    "rotate": Call(lambda m, a: m.rotate(a, 31.0, reshape=False)),
    "affine_transform": Call(lambda m, a: m.affine_transform(
        a, _MATRIX, offset=(5.31, -3.77), order=1)),
    "map_coordinates": Call(lambda m, a, c: m.map_coordinates(a, c),
                            ("image", "coordinates")),
    "geometric_transform": Call(lambda m, a: m.geometric_transform(
        a, _shifted_by((2.3, -1.4)), order=1)),
    # binary morphology
    "binary_erosion": Call(lambda m, b: m.binary_erosion(b, iterations=3),
                           ("binary",), exact=True),
    "binary_dilation": Call(lambda m, b: m.binary_dilation(
        b, structure=_DISK), ("binary",), exact=True),
    "binary_opening": Call(lambda m, b: m.binary_opening(b, iterations=2),
                           ("binary",), exact=True),
    "binary_closing": Call(lambda m, b: m.binary_closing(b, iterations=2),
                           ("binary",), exact=True),
    "binary_hit_or_miss": Call(lambda m, b: m.binary_hit_or_miss(b),
                               ("binary",), exact=True),
    "binary_propagation": Call(lambda m, s, b: m.binary_propagation(
        s, mask=b), ("seeds", "binary"), exact=True),
    "binary_fill_holes": Call(lambda m, b: m.binary_fill_holes(b),
                              ("binary",), exact=True),
    "generate_binary_structure": Call(
        lambda m: m.generate_binary_structure(2, 1), (), exact=True),
    "iterate_structure": Call(lambda m: m.iterate_structure(
        m.generate_binary_structure(2, 1), 3), (), exact=True),
    # grey morphology
    "grey_erosion": Call(lambda m, a: m.grey_erosion(a, size=5), exact=True),
    "grey_dilation": Call(lambda m, a: m.grey_dilation(a, footprint=_DISK),
                          exact=True),
    "grey_opening": Call(lambda m, a: m.grey_opening(a, size=5), exact=True),
    "grey_closing": Call(lambda m, a: m.grey_closing(a, size=5), exact=True),
    "morphological_gradient": Call(
        lambda m, a: m.morphological_gradient(a, size=3)),
    "morphological_laplace": Call(
        lambda m, a: m.morphological_laplace(a, size=3)),
    "white_tophat": Call(lambda m, a: m.white_tophat(a, size=7)),
    "black_tophat": Call(lambda m, a: m.black_tophat(a, size=7)),
    # distance transforms
    "distance_transform_edt": Call(lambda m, b: m.distance_transform_edt(b),
                                   ("binary",)),
    "distance_transform_cdt": Call(lambda m, b: m.distance_transform_cdt(b),
                                   ("binary",), exact=True),
    # About 48 x 48 samples of the whole mask: a corner of it can be all
    # foreground, which leaves no feature to measure a distance to.
    "distance_transform_bf": Call(lambda m, b: m.distance_transform_bf(
        b[::max(1, len(b) // 48), ::max(1, len(b) // 48)]), ("binary",)),
    # measurements
    "label": Call(lambda m, b: m.label(b), ("binary",), exact=True),
    "find_objects": Call(lambda m, lab: m.find_objects(lab), ("labels",),
                         exact=True),
    "value_indices": Call(lambda m, lab: m.value_indices(lab),
                          ("labels",), exact=True),
    "sum_labels": Call(lambda m, a, lab, i: m.sum_labels(a, lab, i),
                       _LABELLED),
    "sum": Call(lambda m, a, lab, i: m.sum(a, lab, i), _LABELLED),
    "mean": Call(lambda m, a, lab, i: m.mean(a, lab, i), _LABELLED),
    "variance": Call(lambda m, a, lab, i: m.variance(a, lab, i), _LABELLED),
    "standard_deviation": Call(
        lambda m, a, lab, i: m.standard_deviation(a, lab, i), _LABELLED),
    "minimum": Call(lambda m, a, lab, i: m.minimum(a, lab, i), _LABELLED,
                    exact=True),
    "maximum": Call(lambda m, a, lab, i: m.maximum(a, lab, i), _LABELLED,
                    exact=True),
    "median": Call(lambda m, a, lab, i: m.median(a, lab, i), _LABELLED),
    "minimum_position": Call(
        lambda m, a, lab, i: m.minimum_position(a, lab, i), _LABELLED,
        exact=True),
    "maximum_position": Call(
        lambda m, a, lab, i: m.maximum_position(a, lab, i), _LABELLED,
        exact=True),
    "extrema": Call(lambda m, a, lab, i: m.extrema(a, lab, i), _LABELLED,
                    exact=True),
    "center_of_mass": Call(lambda m, a, lab, i: m.center_of_mass(a, lab, i),
                           _LABELLED),
    "histogram": Call(lambda m, a, lab, i: m.histogram(a, 0.0, 1.0, 16, lab,
                                                       i),
                      _LABELLED, exact=True),
    "labeled_comprehension": Call(
        lambda m, a, lab, i: m.labeled_comprehension(
            a, lab, i, np.max, np.float64, 0.0), _LABELLED, exact=True),
    "watershed_ift": Call(lambda m, u, k: m.watershed_ift(u, k),
                          ("bytes", "markers"), exact=True),
}


def difference(got: Any, expected: Any, check_dtype: bool = True,
               units: int = 0, scale: float = 1.0) -> float:
    """The largest difference between two results of a call, scaled by the
    expected result's largest magnitude (at least ``scale``): 0 where
    equal, inf where their structure, length, shape or (with
    ``check_dtype``) dtype differ, or where integer results differ by more
    than ``units``.
    Results are arrays, scalars, slices, None, and tuples, lists and dicts
    of them."""
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            return np.inf
        return max((difference(got[k], expected[k], check_dtype, units,
                               scale) for k in expected), default=0.0)
    if isinstance(expected, tuple | list):
        if not isinstance(got, tuple | list) or len(got) != len(expected):
            return np.inf
        return max((difference(g, e, check_dtype, units, scale)
                    for g, e in zip(got, expected)), default=0.0)
    if expected is None or isinstance(expected, slice):
        return 0.0 if got == expected else np.inf
    if isinstance(expected, np.ndarray) and expected.dtype == object:
        return difference(list(np.asarray(got, dtype=object).ravel()),
                          list(expected.ravel()), check_dtype, units, scale)
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape or (check_dtype
                                       and got.dtype != expected.dtype):
        return np.inf
    if not expected.size:
        return 0.0
    if expected.dtype.kind in "biu" and got.dtype.kind in "biu":
        if np.array_equal(got, expected):
            return 0.0
        apart = np.abs(got.astype(np.float64) - expected.astype(np.float64))
        return 0.0 if units and np.max(apart) <= units else np.inf
    scale = max(float(np.max(np.abs(expected))), scale)
    return float(np.max(np.abs(got.astype(np.complex128)
                               - expected.astype(np.complex128)))) / scale
