"""label of a dask array on a 2-worker LocalCluster, against SciPy's
label of the whole array.

    python benchmarks/bench_dask_label.py [--size 8192] [--chunk 2048]

The image is thresholded smoothed noise, about 20 000 blobs at 8192², in
chunks of ``--chunk``, so many features cross the seams between chunks.
The labels computed on the cluster must equal SciPy's exactly
(same numbering, same count); the script fails if they do not.  Times are
of the whole call, computed to a numpy array, for jaxndimage on the cluster
and for SciPy on one core of this machine.  Writes
benchmarks/results/dask_label.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import dask.array as da
import numpy as np
import scipy.ndimage as ndi
from distributed import Client, LocalCluster

import jaxndimage

RESULTS = Path(__file__).parent / "results" / "dask_label.json"


def blobs(size: int, seed: int = 0) -> np.ndarray:
    """The top 39 % of smoothed noise: about 1 270 blobs per 2048² (as in
    ``bench_measurements.py``)."""
    smooth = ndi.gaussian_filter(
        np.random.default_rng(seed).random((size, size), np.float32), 6)
    return smooth > np.quantile(smooth, 0.61)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--chunk", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=2)
    options = parser.parse_args()

    mask = blobs(options.size)
    start = time.perf_counter()
    want, want_count = ndi.label(mask)
    scipy_s = time.perf_counter() - start

    cluster = LocalCluster(n_workers=2, threads_per_worker=1,
                           processes=True, dashboard_address=None,
                           memory_limit="8GiB")
    times = []
    with Client(cluster):
        chunked = da.from_array(mask, chunks=options.chunk)
        for _ in range(1 + options.repeats):  # the first run compiles
            start = time.perf_counter()
            labels, count = jaxndimage.label(chunked)
            got = labels.compute()
            times.append(time.perf_counter() - start)
    cluster.close()

    equal = bool(int(count) == want_count and np.array_equal(got, want))
    record = {
        "benchmark": "label of a dask array on a LocalCluster",
        "shape": list(mask.shape), "chunks": [options.chunk] * 2,
        "workers": 2, "threads_per_worker": 1, "features": int(want_count),
        "equal_to_scipy": equal,
        "jaxndimage_first_run_s": round(times[0], 3),
        "jaxndimage_s": [round(t, 3) for t in times[1:]],
        "scipy_s": round(scipy_s, 3),
        "cpus": os.cpu_count(), "machine": platform.machine(),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))
    if not equal:
        raise SystemExit("the labels differ from SciPy's")


if __name__ == "__main__":
    main()
