"""Wide kernels: Gaussians of large sigma, against SciPy.

    python benchmarks/bench_wide.py

``gaussian_filter`` with sigma 4 to 32 (radius 16 to 128) on float32
images of 256² and 1024², numpy in and numpy out: SciPy and jaxndimage
interleaved, median of the warm repeats, and jaxndimage's first call on
each configuration (compilation included; the kernel cache is not used).
Kernels reading further than ``_canvas.WIDEST_MARGIN`` run on the array's
own shape, narrower ones on a canvas; a ``canvas`` column forces the canvas
for the wide ones too, to show what the rule gains.  Writes
``results/wide.json``.
"""

from __future__ import annotations

import os
import sys
from functools import partial
from pathlib import Path

import numpy as np
import scipy.ndimage as ndi

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ["JAXNDIMAGE_CACHE"] = "0"

from bench_small import _timed, interleaved, write_results  # noqa: E402

import jaxndimage as jn  # noqa: E402
from jaxndimage import _canvas  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "wide.json"
SIGMAS = (4, 8, 16, 32)
SIZES = (256, 1024)


def _on_canvas(image: np.ndarray, sigma: float) -> np.ndarray:
    """jaxndimage's call with the canvas allowed at any width."""
    limit = _canvas.WIDEST_MARGIN
    _canvas.WIDEST_MARGIN = 10 ** 9
    try:
        return jn.gaussian_filter(image, sigma)
    finally:
        _canvas.WIDEST_MARGIN = limit


def main() -> None:
    rng = np.random.default_rng(0)
    results = {}
    print(f"{'size':>5s} {'sigma':>5s} {'SciPy ms':>9s} {'ours ms':>8s} "
          f"{'ratio':>6s} {'canvas ms':>10s} {'first s':>8s}")
    for size in SIZES:
        image = rng.random((size, size), dtype=np.float32)
        for sigma in SIGMAS:
            first = _timed(partial(jn.gaussian_filter, image, sigma))
            calls = {"scipy": partial(ndi.gaussian_filter, image, sigma),
                     "ours": partial(jn.gaussian_filter, image, sigma)}
            wide = 4 * sigma > _canvas.WIDEST_MARGIN
            if wide:
                calls["canvas"] = partial(_on_canvas, image, sigma)
            t = interleaved(calls, repeats=7 if size > 256 else 25)
            ratio = t["scipy"] / t["ours"]
            canvas = f"{t['canvas'] * 1e3:10.1f}" if wide else " " * 10
            print(f"{size:5d} {sigma:5d} {t['scipy'] * 1e3:9.1f} "
                  f"{t['ours'] * 1e3:8.1f} {ratio:6.2f} {canvas} "
                  f"{first:8.2f}")
            results[f"gaussian_filter {size} sigma {sigma}"] = {
                **t, "ratio": ratio, "first_call_s": first}
    write_results(RESULTS, results, widest_margin=_canvas.WIDEST_MARGIN)


if __name__ == "__main__":
    main()
