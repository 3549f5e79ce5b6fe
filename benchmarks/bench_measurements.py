"""Measurements, jaxndimage against SciPy on this machine.

Run ``python benchmarks/bench_measurements.py``.  A 2048x2048 image of
about 1 269 blobs (thresholded smoothed noise) is labelled, and the labels
measured with every label as the index; `value_indices` of the labels,
and `watershed_ift` of the image's levels from 64 markers on a grid.
Both sides take numpy in and give SciPy's results out (jaxndimage's
conversions are inside the timing).  Calls alternate between the two
libraries, after one warm-up call each (which compiles the JAX program);
the table reports the median time of each and SciPy's time over ours.  Results go to
``benchmarks/results/measurements.json``.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

import numpy as np
import scipy
import scipy.ndimage as ndi

import jaxndimage

RESULTS = Path(__file__).parent / "results" / "measurements.json"


def _timed(call) -> float:
    start = time.perf_counter()
    result = call()
    if isinstance(result, tuple):
        np.asarray(result[0])
    elif not isinstance(result, list):
        np.asarray(result)
    return time.perf_counter() - start


def side_by_side(ours, theirs, repeats: int) -> tuple[float, float]:
    """Median seconds of interleaved calls, after a warm-up call each."""
    ours(), theirs()
    ours_times, their_times = [], []
    for _ in range(repeats):
        ours_times.append(_timed(ours))
        their_times.append(_timed(theirs))
    return float(np.median(ours_times)), float(np.median(their_times))


def blobs(size: int = 2048, seed: int = 0) -> np.ndarray:
    """A float image whose top 39 % are about 1 269 blobs."""
    noise = np.random.default_rng(seed).random((size, size))
    return ndi.gaussian_filter(noise, 6)


def cases():
    image = blobs()
    mask = image > np.quantile(image, 0.61)
    labels, count = ndi.label(mask)
    index = np.arange(1, count + 1)
    print(f"{count} blobs")
    yield ("label 2048x2048", 7,
           lambda: jaxndimage.label(mask), lambda: ndi.label(mask))
    yield ("sum_labels, every label", 7,
           lambda: jaxndimage.sum_labels(image, labels, index),
           lambda: ndi.sum_labels(image, labels, index))
    yield ("mean, every label", 7,
           lambda: jaxndimage.mean(image, labels, index),
           lambda: ndi.mean(image, labels, index))
    yield ("center_of_mass, every label", 5,
           lambda: jaxndimage.center_of_mass(image, labels, index),
           lambda: ndi.center_of_mass(image, labels, index))
    yield ("maximum, every label", 3,
           lambda: jaxndimage.maximum(image, labels, index),
           lambda: ndi.maximum(image, labels, index))
    yield ("find_objects", 7,
           lambda: jaxndimage.find_objects(labels),
           lambda: ndi.find_objects(labels))
    yield ("value_indices", 5,
           lambda: jaxndimage.value_indices(labels),
           lambda: ndi.value_indices(labels))
    yield ("median, every label", 3,
           lambda: jaxndimage.median(image, labels, index),
           lambda: ndi.median(image, labels, index))
    levels = (image * 255 / image.max()).astype(np.uint8)
    markers = np.zeros(labels.shape, np.int16)
    markers[::256, ::256] = np.arange(1, 65).reshape(8, 8)
    yield ("watershed_ift, 64 markers", 3,
           lambda: jaxndimage.watershed_ift(levels, markers),
           lambda: ndi.watershed_ift(levels, markers))


def main() -> None:
    rows = []
    for name, repeats, ours, theirs in cases():
        ours_s, their_s = side_by_side(ours, theirs, repeats)
        rows.append({"case": name, "jaxndimage_s": ours_s, "scipy_s": their_s,
                     "ratio": their_s / ours_s, "repeats": repeats})
    width = max(len(r["case"]) for r in rows)
    print(f"{'case':<{width}}  {'jaxndimage':>11}  {'scipy':>9}  ratio")
    for r in rows:
        print(f"{r['case']:<{width}}  {r['jaxndimage_s'] * 1e3:9.2f}ms  "
              f"{r['scipy_s'] * 1e3:7.1f}ms  {r['ratio']:6.2f}x")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "machine": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "jax": __import__("jax").__version__,
        "results": rows,
    }, indent=2) + "\n")


if __name__ == "__main__":
    main()
