"""Rank and generic filters, jaxndimage against SciPy on this machine.

Run ``python benchmarks/bench_rank.py``.  Both sides take numpy in and give
numpy out (jaxndimage's conversions are inside the timing, and a numpy result
means the computation has finished).  Calls alternate between the two
libraries, after one warm-up call each (which compiles the JAX program); the
table reports the median time of each and SciPy's time over ours.  Results
go to ``benchmarks/results/rank.json``.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import scipy
import scipy.ndimage as ndi

import jaxndimage

RESULTS = Path(__file__).parent / "results" / "rank.json"


def _timed(call) -> float:
    start = time.perf_counter()
    result = call()
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


def cases():
    rng = np.random.default_rng(0)
    image_u8 = rng.integers(0, 256, (1024, 1024), dtype=np.uint8)
    image_f32 = rng.random((1024, 1024), dtype=np.float32)
    large_f32 = rng.random((2048, 2048), dtype=np.float32)
    small_f64 = rng.random((512, 512))
    yield ("median_filter size 5, 1024x1024 uint8", 7,
           lambda: jaxndimage.median_filter(image_u8, size=5),
           lambda: ndi.median_filter(image_u8, size=5))
    yield ("median_filter size 5, 1024x1024 float32", 7,
           lambda: jaxndimage.median_filter(image_f32, size=5),
           lambda: ndi.median_filter(image_f32, size=5))
    yield ("maximum_filter size 15, 2048x2048 float32", 7,
           lambda: jaxndimage.maximum_filter(large_f32, size=15),
           lambda: ndi.maximum_filter(large_f32, size=15))
    yield ("minimum_filter disk r=3 footprint, 1024x1024 float32", 7,
           lambda: jaxndimage.minimum_filter(image_f32, footprint=_disk(3)),
           lambda: ndi.minimum_filter(image_f32, footprint=_disk(3)))
    yield ("generic_filter local std size 5, 512x512 float64 "
           "(jnp.std vs np.std)", 3,
           lambda: jaxndimage.generic_filter(small_f64, jnp.std, size=5),
           lambda: ndi.generic_filter(small_f64, np.std, size=5))


def _disk(radius: int) -> np.ndarray:
    y, x = np.mgrid[-radius:radius + 1, -radius:radius + 1]
    return x * x + y * y <= radius * radius


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
              f"{r['scipy_s'] * 1e3:7.1f}ms  {r['ratio']:6.1f}x")
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
