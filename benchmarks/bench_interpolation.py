"""Interpolation, side by side with SciPy on this machine.

Run ``python benchmarks/bench_interpolation.py``.  Each case calls SciPy and
jaxndimage alternately (interleaved, so load on the machine hits both alike)
with numpy arrays in and out, conversions included, after a warm-up call
that compiles; the table shows warm medians and SciPy's time divided by
ours.  Results go to ``benchmarks/results/interpolation.json``.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import statistics
import time
from pathlib import Path

import jax
import numpy as np
import scipy
import scipy.ndimage as ndi

import jaxndimage

REPEATS = int(os.environ.get("BENCH_REPEATS", 7))
RESULTS = Path(__file__).with_name("results") / "interpolation.json"


def _cases():
    rng = np.random.default_rng(0)
    image = rng.random((1024, 1024), dtype=np.float32)
    coordinates = rng.uniform(0, 1023, size=(2, 10**6))
    odd = rng.random((700, 600), dtype=np.float32)
    grid = np.stack(np.meshgrid(np.linspace(0, 699, 64), np.linspace(0, 599, 64),
                                indexing="ij")).reshape(2, -1)
    volume = rng.random((64, 64, 64), dtype=np.float32)
    long = rng.random((3000, 40))
    return {
        # The spline prefilter of host input (numpy's recursions).
        "spline_filter order 3, 1024^2 float32": (
            lambda m: m.spline_filter(image, 3)),
        "spline_filter order 5, 1024^2 float32": (
            lambda m: m.spline_filter(image, 5)),
        "spline_filter order 5, 700x600 float32": (
            lambda m: m.spline_filter(odd, 5)),
        "spline_filter order 5, 64^3 float32": (
            lambda m: m.spline_filter(volume, 5)),
        "spline_filter1d order 4 'reflect', 3000x40 float64, axis 0": (
            lambda m: m.spline_filter1d(long, 4, axis=0, mode="reflect")),
        "map_coordinates order 5 'mirror', 700x600 float32, 64^2 points": (
            lambda m: m.map_coordinates(odd, grid, order=5, mode="mirror")),
        "map_coordinates order 3, 1024^2 float32, 1e6 points": (
            lambda m: m.map_coordinates(image, coordinates, order=3)),
        "zoom x2 order 3, 1024^2 float32": (
            lambda m: m.zoom(image, 2, order=3)),
        "rotate 30 deg order 1, 1024^2 float32": (
            lambda m: m.rotate(image, 30, order=1)),
    }


def _time(call) -> float:
    start = time.perf_counter()
    result = call()
    if isinstance(result, jax.Array):
        result.block_until_ready()
    return time.perf_counter() - start


def main() -> None:
    rows = []
    for name, case in _cases().items():
        ours = functools.partial(case, jaxndimage)
        theirs = functools.partial(case, ndi)
        expected, got = theirs(), ours()
        error = float(np.max(np.abs(got.astype(np.float64) - expected)))
        scipy_times, jax_times = [], []
        for _ in range(REPEATS):
            scipy_times.append(_time(theirs))
            jax_times.append(_time(ours))
        row = {
            "case": name,
            "scipy_s": statistics.median(scipy_times),
            "jaxndimage_s": statistics.median(jax_times),
            "max_abs_difference": error,
        }
        row["speedup"] = row["scipy_s"] / row["jaxndimage_s"]
        rows.append(row)
        print(f"{name:55s} scipy {row['scipy_s'] * 1e3:8.1f} ms   "
              f"jaxndimage {row['jaxndimage_s'] * 1e3:8.1f} ms   "
              f"x{row['speedup']:5.1f}   (max |diff| {error:.1e})",
              flush=True)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({
        "machine": {"platform": platform.platform(),
                    "processor": platform.processor(),
                    "cpu_count": os.cpu_count(),
                    "jax": jax.__version__, "scipy": scipy.__version__,
                    "numpy": np.__version__,
                    "jax_devices": [str(d) for d in jax.devices()]},
        "repeats": REPEATS,
        "results": rows,
    }, indent=2) + "\n")


if __name__ == "__main__":
    main()
