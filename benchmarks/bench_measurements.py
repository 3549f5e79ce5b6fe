"""Measurements, jaxndimage against SciPy on this machine.

Run ``python benchmarks/bench_measurements.py [--device-arrays] [--out
FILE]``.  A 2048x2048 image of about 1 269 blobs (thresholded smoothed
noise) is labelled, and the labels measured with every label as the
index; `value_indices` of the labels, and `watershed_ift` of the image's
levels from 64 markers on a grid.  By default both sides take numpy in and
give SciPy's results out (jaxndimage's conversions are inside the timing);
with ``--device-arrays`` jaxndimage takes float32 JAX arrays on JAX's
default device (a GPU or TPU where there is one) and its results stay
there, waited for.  Calls alternate between the two libraries, after one
first call each (jaxndimage's compiles its programs, and is reported);
the table reports the median time of each and SciPy's time over ours.
Results go to ``benchmarks/results/measurements.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import scipy
import scipy.ndimage as ndi

import jaxndimage
from jaxndimage._timing import block

RESULTS = Path(__file__).parent / "results" / "measurements.json"


def _timed(call) -> float:
    start = time.perf_counter()
    result = call()
    if isinstance(result, tuple):
        block(np.asarray(result[0]) if isinstance(result[0], np.ndarray)
              else result[0])
    elif not isinstance(result, list | dict):
        block(result)
    return time.perf_counter() - start


def side_by_side(ours, theirs, repeats: int
                 ) -> tuple[float, float, float]:
    """Our first call's seconds, and the median seconds of interleaved
    calls of each after a first call each."""
    first = _timed(ours)
    theirs()
    ours_times, their_times = [], []
    for _ in range(repeats):
        ours_times.append(_timed(ours))
        their_times.append(_timed(theirs))
    return first, float(np.median(ours_times)), float(np.median(their_times))


def blobs(size: int = 2048, seed: int = 0) -> np.ndarray:
    """A float image whose top 39 % are about 1 269 blobs."""
    noise = np.random.default_rng(seed).random((size, size))
    return ndi.gaussian_filter(noise, 6)


def cases(device_arrays: bool):
    image = blobs()
    mask = image > np.quantile(image, 0.61)
    labels, count = ndi.label(mask)
    index = np.arange(1, count + 1)
    levels = (image * 255 / image.max()).astype(np.uint8)
    markers = np.zeros(labels.shape, np.int16)
    markers[::256, ::256] = np.arange(1, 65).reshape(8, 8)
    print(f"{count} blobs")
    ours = dict(image=image, mask=mask, labels=labels, levels=levels,
                markers=markers)
    if device_arrays:
        import jax

        ours = {name: jax.device_put(value.astype(np.float32)
                                     if value.dtype == np.float64 else value)
                for name, value in ours.items()}
        block(ours)
    theirs = dict(image=image, mask=mask, labels=labels, levels=levels,
                  markers=markers)

    def both(name, repeats, call):
        return (name, repeats, lambda: call(jaxndimage, **ours),
                lambda: call(ndi, **theirs))

    yield both("label 2048x2048", 7, lambda m, mask, **_: m.label(mask))
    for name, repeats in (("sum_labels", 7), ("mean", 7),
                          ("center_of_mass", 5), ("maximum", 3),
                          ("extrema", 3), ("minimum_position", 3)):
        yield both(f"{name}, every label", repeats,
                   lambda m, image, labels, name=name, **_:
                   getattr(m, name)(image, labels, index))
    yield both("find_objects", 7,
               lambda m, labels, **_: m.find_objects(labels))
    yield both("value_indices", 5,
               lambda m, labels, **_: m.value_indices(labels))
    yield both("median, every label", 3,
               lambda m, image, labels, **_: m.median(image, labels, index))
    yield both("watershed_ift, 64 markers", 3,
               lambda m, levels, markers, **_: m.watershed_ift(levels,
                                                               markers))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device-arrays", action="store_true",
                        help="JAX arrays on JAX's default device for "
                             "jaxndimage")
    parser.add_argument("--out", default=str(RESULTS))
    options = parser.parse_args()
    import jax

    device = jax.devices()[0]
    rows = []
    for name, repeats, ours, theirs in cases(options.device_arrays):
        first, ours_s, their_s = side_by_side(ours, theirs, repeats)
        rows.append({"case": name, "jaxndimage_s": ours_s, "scipy_s": their_s,
                     "ratio": their_s / ours_s, "first_s": first,
                     "repeats": repeats})
        print(f"{name:<28}  {ours_s * 1e3:9.2f}ms  {their_s * 1e3:7.1f}ms  "
              f"{their_s / ours_s:6.2f}x  (first {first:.2f} s)", flush=True)
    out = Path(options.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "input": "JAX arrays on the device" if options.device_arrays
        else "numpy",
        "device": f"{device.platform} ({device.device_kind})",
        "machine": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "jax": __import__("jax").__version__,
        "results": rows,
    }, indent=2) + "\n")


if __name__ == "__main__":
    main()
