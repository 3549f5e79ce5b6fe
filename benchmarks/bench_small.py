"""Small arrays: where a call's fixed cost decides, against SciPy and Numba.

    python benchmarks/bench_small.py

Warm calls, numpy in and numpy out, on float32 images of 32², 64², 128² and
256² (``mean`` of three of eight labels): SciPy, jaxndimage and (for
``gaussian_filter``) a Numba separable Gaussian, interleaved, median of
the repeats.  "fixed" is jaxndimage's time for the same call on a 2x2
array: the cost of a call on the shortest canvas or list, whatever the
image.  First calls are timed once per function: for jaxndimage on a new
shape of a bucket already compiled, and for Numba its compilation.
Writes ``results/small.json``.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import scipy.ndimage as ndi

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import _numba_gaussian  # noqa: E402

import jaxndimage as jn  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "small.json"
SIZES = (32, 64, 128, 256)


def _points(shape):
    rows, cols = shape
    grid = np.meshgrid(np.linspace(0, rows - 1, 32), np.linspace(0, cols - 1, 32),
                       indexing="ij")
    return np.stack(grid).reshape(2, -1)


#: By ``id`` of the image: the image is kept with its labels, so that its
#: id is not reused by another array while the entry exists.
_LABELS: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _labels(image: np.ndarray) -> np.ndarray:
    """Eight labels (0-7) of ``image``, made once per image."""
    key = id(image)
    if key not in _LABELS:
        _LABELS[key] = (image, (image * 8).astype(np.int32))
    return _LABELS[key][1]


CASES = {
    "gaussian_filter": lambda m, a: m.gaussian_filter(a, 2.0),
    "sobel": lambda m, a: m.sobel(a),
    "uniform_filter": lambda m, a: m.uniform_filter(a, 5),
    "median_filter": lambda m, a: m.median_filter(a, 3),
    "zoom": lambda m, a: m.zoom(a, 0.5, order=1),
    "map_coordinates": lambda m, a: m.map_coordinates(a, _points(a.shape),
                                                      order=1),
    "mean": lambda m, a: m.mean(a, _labels(a), [1, 2, 3]),
}


def _timed(call) -> float:
    start = time.perf_counter()
    np.asarray(call())
    return time.perf_counter() - start


def interleaved(calls: dict, repeats: int) -> dict[str, float]:
    for call in calls.values():
        call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            times[name].append(_timed(call))
    return {name: float(np.median(t)) for name, t in times.items()}


def write_results(path: Path, results: dict, **extra) -> None:
    """Write ``results`` to ``path`` as JSON, with the machine and
    ``extra`` entries."""
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"machine": platform.platform(),
                                "cpus": os.cpu_count(), **extra,
                                "results": results}, indent=2) + "\n")
    print(f"wrote {path.relative_to(ROOT)}")


def main() -> None:
    rng = np.random.default_rng(0)
    results = {}
    print(f"{'function':16s} {'size':>5s} {'SciPy ms':>9s} {'ours ms':>8s} "
          f"{'ratio':>6s} {'fixed ms':>9s} {'Numba ms':>9s}")
    for name, case in CASES.items():
        tiny = rng.random((2, 2), dtype=np.float32)
        for size in SIZES:
            image = rng.random((size, size), dtype=np.float32)
            calls = {"scipy": partial(case, ndi, image),
                     "ours": partial(case, jn, image),
                     "fixed": partial(case, jn, tiny)}
            if name == "gaussian_filter":
                calls["numba"] = partial(_numba_gaussian.gaussian_filter,
                                         image, 2.0)
            t = interleaved(calls, repeats=50)
            ratio = t["scipy"] / t["ours"]
            numba = f"{t['numba'] * 1e3:9.3f}" if "numba" in t else " " * 9
            print(f"{name:16s} {size:5d} {t['scipy'] * 1e3:9.3f} "
                  f"{t['ours'] * 1e3:8.3f} {ratio:6.2f} "
                  f"{t['fixed'] * 1e3:9.3f} {numba}")
            results[f"{name} {size}"] = {**t, "ratio": ratio}
    # First calls: a new shape (its bucket compiled above), and Numba's
    # first call in this process (compilation included) on another dtype.
    shape_first = _timed(lambda: jn.gaussian_filter(
        rng.random((77, 91), dtype=np.float32), 2.0))
    numba_first = _timed(lambda: _numba_gaussian.gaussian_filter(
        rng.random((77, 91)), 2.0))
    print(f"first call on a new shape 77x91: jaxndimage "
          f"{shape_first * 1e3:.1f} ms; Numba on a new dtype (compiles) "
          f"{numba_first * 1e3:.1f} ms")
    results["first_call_new_shape_s"] = shape_first
    results["numba_first_call_new_dtype_s"] = numba_first
    write_results(RESULTS, results)


if __name__ == "__main__":
    main()
