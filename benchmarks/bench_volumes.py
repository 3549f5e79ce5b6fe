"""Volumes: 3-D and 4-D float32 arrays against SciPy, numpy in and out.

    python benchmarks/bench_volumes.py

The calls of issue 43 (the Gaussian family with sigma 1 to 10, the other
window filters, label) at 64³ and 96³, and the 4-D calls scikit-image's
blob detectors make at 16⁴: SciPy and jaxndimage side by side,
interleaved, median of the warm runs, and jaxndimage's first call
(compilation included, on a shape it has not seen).  Then scikit-image
itself (`blob_log` and `blob_dog` of a 16⁴ array of zeros, the ridge
filters `sato`, `meijering` and `frangi` of a 48³ volume) under SciPy and
with jaxndimage patched in (`jaxndimage.scipy_backend`), the same way.
Writes ``results/volumes.json``.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import scipy.ndimage as ndi

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jaxndimage as jn  # noqa: E402
from jaxndimage import scipy_backend  # noqa: E402
from jaxndimage._timing import first_call, interleaved, median  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "volumes.json"


def _volume(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).random(shape).astype(np.float32)


CASES = {
    "gaussian_filter σ=1": ((96,) * 3, lambda m, a: m.gaussian_filter(a, 1)),
    "gaussian_filter σ=2": ((96,) * 3, lambda m, a: m.gaussian_filter(a, 2)),
    "gaussian_filter σ=6": ((96,) * 3, lambda m, a: m.gaussian_filter(a, 6)),
    "gaussian_filter σ=10": ((64,) * 3, lambda m, a: m.gaussian_filter(a, 10)),
    "gaussian_filter order=2 σ=3": ((96,) * 3, lambda m, a: m.gaussian_filter(
        a, 3, order=2)),
    "gaussian_laplace σ=4": ((64,) * 3, lambda m, a: m.gaussian_laplace(a, 4)),
    "gaussian_gradient_magnitude σ=2": ((96,) * 3, lambda m, a:
                                        m.gaussian_gradient_magnitude(a, 2)),
    "uniform_filter 9": ((96,) * 3, lambda m, a: m.uniform_filter(a, 9)),
    "maximum_filter 9": ((96,) * 3, lambda m, a: m.maximum_filter(a, 9)),
    "median_filter 3": ((96,) * 3, lambda m, a: m.median_filter(a, 3)),
    "sobel": ((96,) * 3, lambda m, a: m.sobel(a, axis=0)),
    "label": ((96,) * 3, lambda m, a: m.label(a > 0.7)[0]),
    "gaussian_laplace 4-D σ=5": ((16,) * 4, lambda m, a: m.gaussian_laplace(
        a, 5)),
    "gaussian_filter 4-D σ=10": ((16,) * 4, lambda m, a: m.gaussian_filter(
        a, 10)),
    "gaussian_filter 4-D σ=3 32⁴": ((32,) * 4, lambda m, a:
                                    m.gaussian_filter(a, 3)),
}


def measure(name: str, shape: tuple[int, ...], call) -> dict:
    image = _volume(shape)
    fresh = _volume(tuple(n + 1 for n in shape), seed=1)
    first = first_call(lambda: call(jn, fresh))
    times = interleaved({"scipy": lambda: call(ndi, image),
                         "jaxndimage": lambda: call(jn, image)},
                        repeat=5, budget=20.0)
    expected, got = call(ndi, image), call(jn, image)
    scale = max(float(np.max(np.abs(expected))), 1.0)
    return {"name": name, "shape": list(shape),
            "scipy_s": median(times["scipy"]),
            "jaxndimage_s": median(times["jaxndimage"]),
            "first_call_s": first,
            "ratio": median(times["scipy"]) / median(times["jaxndimage"]),
            "max_difference": float(np.max(np.abs(
                got.astype(np.float64) - expected))) / scale}


def _skimage_cases() -> dict:
    """scikit-image's calls of issue 43: ``call(volume)`` and the shape of
    its volume (zeros for the blob detectors, as scikit-image's own tests
    give them)."""
    from skimage import feature, filters

    return {
        "skimage blob_log 4-D zeros": ((16,) * 4, feature.blob_log, True),
        "skimage blob_dog 4-D zeros": ((16,) * 4, feature.blob_dog, True),
        "skimage sato 3-D": ((48,) * 3, filters.sato, False),
        "skimage meijering 3-D": ((48,) * 3, filters.meijering, False),
        "skimage frangi 3-D": ((48,) * 3, filters.frangi, False),
    }


def _under_jaxndimage(call):
    def run(volume):
        with scipy_backend.patched():
            return call(volume)
    return run


def measure_skimage(name: str, shape: tuple[int, ...], call,
                    zeros: bool) -> dict:
    def volume(shape, seed):
        return (np.zeros(shape, np.float32) if zeros
                else _volume(shape, seed))

    image = volume(shape, 0)
    fresh = volume(tuple(n + 1 for n in shape), 1)
    patched = _under_jaxndimage(call)
    first = first_call(lambda: patched(fresh))
    times = interleaved({"scipy": lambda: call(image),
                         "jaxndimage": lambda: patched(image)},
                        repeat=3, budget=30.0)
    expected = np.asarray(call(image), np.float64)
    got = np.asarray(patched(image), np.float64)
    scale = max(float(np.max(np.abs(expected), initial=0.0)), 1.0)
    return {"name": name, "shape": list(shape),
            "scipy_s": median(times["scipy"]),
            "jaxndimage_s": median(times["jaxndimage"]),
            "first_call_s": first,
            "ratio": median(times["scipy"]) / median(times["jaxndimage"]),
            "max_difference": float(np.max(np.abs(got - expected),
                                           initial=0.0)) / scale}


def main() -> int:
    rows = []
    cases = [(name, measure, (name, shape, call))
             for name, (shape, call) in CASES.items()]
    cases += [(name, measure_skimage, (name, *case))
              for name, case in _skimage_cases().items()]
    for name, measurer, arguments in cases:
        shape = arguments[1]
        row = measurer(*arguments)
        rows.append(row)
        print(f"{name:32s} {'x'.join(map(str, shape)):>11s}  scipy "
              f"{row['scipy_s'] * 1e3:8.1f} ms  jaxndimage "
              f"{row['jaxndimage_s'] * 1e3:8.1f} ms  {row['ratio']:5.2f}x  "
              f"first {row['first_call_s']:6.2f} s  "
              f"diff {row['max_difference']:.1e}", flush=True)
    RESULTS.write_text(json.dumps({
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average": list(os.getloadavg())},
        "date": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": rows},
        indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
