"""gaussian_filter through dask on a 2-worker LocalCluster: jaxndimage
against dask-image, on the same chunks of the same float32 image.

    python benchmarks/bench_dask.py [--size 8192] [--chunk 2048] [--sigma 4]

Writes benchmarks/results/dask.json.  The image is generated on the workers
and kept there (``persist``), so the timings are the filters alone: each
result is persisted and waited for, then cancelled.  The first run of each
(jaxndimage compiles its kernels in every worker then) is reported apart;
the comparison uses the best of the repeats that follow.
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
from distributed import Client, LocalCluster, wait

import jaxndimage

RESULTS = Path(__file__).parent / "results" / "dask.json"


def _time(client, make, repeats):
    """Seconds for each of ``repeats`` runs of ``make()`` persisted.

    Each result is released and the scheduler waited on until it has
    forgotten its keys, so the next run computes them again.
    """
    def tasks(dask_scheduler):
        return len(dask_scheduler.tasks)

    baseline = client.run_on_scheduler(tasks)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = make().persist()
        wait(result)
        times.append(time.perf_counter() - start)
        del result
        while client.run_on_scheduler(tasks) > baseline:
            time.sleep(0.05)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8192)
    parser.add_argument("--chunk", type=int, default=2048)
    parser.add_argument("--sigma", type=float, default=4.0)
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args()

    import dask_image.ndfilters

    cluster = LocalCluster(n_workers=2, threads_per_worker=1,
                           processes=True, dashboard_address=None,
                           memory_limit="8GiB")
    with Client(cluster) as client:
        n, c = options.size, options.chunk
        image = da.random.default_rng(0).random((n, n), chunks=(c, c),
                                                dtype=np.float32).persist()
        wait(image)
        sigma = options.sigma

        def ours():
            return jaxndimage.gaussian_filter(image, sigma)

        def theirs():
            return dask_image.ndfilters.gaussian_filter(image, sigma)

        # the same numbers, on a corner that spans a chunk seam
        corner = (slice(c - 64, c + 64), slice(c - 64, c + 64))
        a = ours()[corner].compute()
        b = theirs()[corner].compute()
        max_difference = float(np.abs(a - b).max())

        first = _time(client, ours, 1)[0]
        first_theirs = _time(client, theirs, 1)[0]
        ours_times = _time(client, ours, options.repeats)
        theirs_times = _time(client, theirs, options.repeats)
    cluster.close()

    record = {
        "benchmark": "gaussian_filter through dask on a LocalCluster",
        "shape": [n, n], "dtype": "float32", "chunks": [c, c],
        "sigma": sigma, "workers": 2, "threads_per_worker": 1,
        "jaxndimage_first_run_s": round(first, 3),
        "dask_image_first_run_s": round(first_theirs, 3),
        "jaxndimage_s": [round(t, 3) for t in ours_times],
        "dask_image_s": [round(t, 3) for t in theirs_times],
        "speedup_best": round(min(theirs_times) / min(ours_times), 2),
        "max_abs_difference": max_difference,
        "cpus": os.cpu_count(), "machine": platform.machine(),
        "note": "Shared 2-core machine; other jobs may have been running.",
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
