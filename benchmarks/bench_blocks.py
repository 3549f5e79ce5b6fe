"""Reassembling patches: jaxndimage's inverses against a JAX scatter-add and scikit-learn.

A 1024 x 1024 float32 image cut into 16 x 16 windows at step 16 (blocks), 8
and 1 is put back by

* ``unview_as_blocks`` / ``unview_as_windows`` (reshape, or one shifted add per
  window offset modulo the step);
* the same result written as a JAX scatter-add (``.at[rows, cols].add``), the
  usual way to overlap-add patches in JAX, counts scattered the same way;
* ``sklearn.feature_extraction.image.reconstruct_from_patches_2d`` (step 1,
  numpy in, numpy out), against ``unview_as_windows`` on the same numpy patches.

Every function runs in the same process on the same inputs, jitted and warm;
each time is the median of several repeats, with ``block_until_ready``.
Writes ``benchmarks/results/blocks.json`` and prints the ratios.

Run: ``python benchmarks/bench_blocks.py``.
"""

import json
import os
import platform
import statistics
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from sklearn.feature_extraction.image import reconstruct_from_patches_2d

from jaxndimage import (
    unview_as_blocks,
    unview_as_windows,
    view_as_blocks,
    view_as_windows,
)

SIZE, WINDOW = 1024, 16
RESULTS = Path(__file__).parent / "results" / "blocks.json"


def median_ms(func, *args, repeats):
    jax.block_until_ready(func(*args))  # compile and warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(func(*args))
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def scatter_overlap_add(step, mean):
    """The windows back onto the image with a scatter-add, as one usually writes it."""

    @jax.jit
    def reassemble(windows):
        n = windows.shape[0]
        index = jnp.arange(n)[:, None] * step + jnp.arange(WINDOW)[None, :]
        rows, cols = index[:, None, :, None], index[None, :, None, :]
        extent = (n - 1) * step + WINDOW
        total = jnp.zeros((extent, extent), windows.dtype).at[rows, cols].add(windows)
        if not mean:
            return total
        count = jnp.zeros((extent, extent), windows.dtype).at[rows, cols].add(1.0)
        return total / jnp.maximum(count, 1)

    return reassemble


def main():
    image = jnp.asarray(np.random.default_rng(0).random((SIZE, SIZE), dtype=np.float32))
    rows = []

    blocks = view_as_blocks(image, (WINDOW, WINDOW))
    ours, scatter = jax.jit(unview_as_blocks), scatter_overlap_add(WINDOW, mean=False)
    np.testing.assert_array_equal(ours(blocks), scatter(blocks))
    rows.append(
        {
            "case": "unview_as_blocks, step 16",
            "ours_ms": median_ms(ours, blocks, repeats=21),
            "scatter_ms": median_ms(scatter, blocks, repeats=21),
        }
    )
    del blocks

    for step, repeats in [(16, 21), (8, 11), (1, 3)]:
        windows = view_as_windows(image, WINDOW, step)
        ours = jax.jit(lambda w, step=step: unview_as_windows(w, step))
        scatter = scatter_overlap_add(step, mean=True)
        np.testing.assert_allclose(ours(windows), scatter(windows), rtol=1e-5)
        row = {
            "case": f"unview_as_windows mean, step {step}",
            "ours_ms": median_ms(ours, windows, repeats=repeats),
            "scatter_ms": median_ms(scatter, windows, repeats=repeats),
        }
        if step == 1:
            patches = np.asarray(windows).reshape(-1, WINDOW, WINDOW)  # numpy, no copy
            expected = reconstruct_from_patches_2d(patches, (SIZE, SIZE))
            np.testing.assert_allclose(unview_as_windows(patches.reshape(windows.shape)), expected,
                                       rtol=1e-5)
            row["ours_numpy_ms"] = median_ms(
                unview_as_windows, patches.reshape(windows.shape), repeats=repeats
            )
            row["sklearn_ms"] = median_ms(
                reconstruct_from_patches_2d, patches, (SIZE, SIZE), repeats=repeats
            )
        rows.append(row)
        del windows

    for row in rows:
        row["scatter_over_ours"] = row["scatter_ms"] / row["ours_ms"]
        if "sklearn_ms" in row:
            row["sklearn_over_ours_numpy"] = row["sklearn_ms"] / row["ours_numpy_ms"]

    report = {
        "benchmark": "reassembling 16x16 patches of a 1024x1024 float32 image",
        "machine": {
            "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(),
            "device": str(jax.devices()[0]),
            "jax": jax.__version__,
            "numpy": np.__version__,
            "sklearn": __import__("sklearn").__version__,
        },
        "method": (
            "jitted, warm, median of repeats, block_until_ready; ratio > 1 means ours is faster"
        ),
        "rows": rows,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")

    print(f"{'case':34} {'ours ms':>9} {'scatter ms':>11} {'scatter/ours':>13}"
          f" {'ours(np) ms':>12} {'sklearn ms':>11} {'sklearn/ours':>13}")
    for row in rows:
        extra = ""
        if "sklearn_ms" in row:
            extra = (f" {row['ours_numpy_ms']:12.1f} {row['sklearn_ms']:11.1f}"
                     f" {row['sklearn_over_ours_numpy']:12.1f}x")
        print(f"{row['case']:34} {row['ours_ms']:9.2f} {row['scatter_ms']:11.2f}"
              f" {row['scatter_over_ours']:12.1f}x{extra}")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
