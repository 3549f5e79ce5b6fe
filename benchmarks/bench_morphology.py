"""Morphology, jaxndimage against SciPy on this machine.

Run ``python benchmarks/bench_morphology.py``.  Both sides take numpy in and
give numpy out (jaxndimage's conversions are inside the timing).  Calls
alternate between the two libraries, after one warm-up call each (which
compiles the JAX program); the table reports the median time of each and
SciPy's time over ours.  Results go to ``benchmarks/results/morphology.json``.

The binary images are smoothed noise thresholded into blobs (about half the
image foreground, with holes), so that fill-holes has real background to
propagate through.
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

import numpy as np
import scipy
import scipy.ndimage as ndi

sys.path.insert(0, str(Path(__file__).parent))

from bench_rank import side_by_side  # noqa: E402

import jaxndimage  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "morphology.json"


def blobs(shape: tuple[int, int], seed: int = 0) -> np.ndarray:
    """Thresholded smoothed noise: blobs with holes."""
    noise = np.random.default_rng(seed).random(shape, dtype=np.float32)
    return ndi.gaussian_filter(noise, 4) > 0.5


def cases():
    image = blobs((2048, 2048))
    grey = np.random.default_rng(1).integers(0, 256, (2048, 2048),
                                             dtype=np.uint8)
    square = np.ones((3, 3), bool)
    yield ("binary_erosion 3x3, iterations=10, 2048x2048 bool", 7,
           lambda: jaxndimage.binary_erosion(image, square, iterations=10),
           lambda: ndi.binary_erosion(image, square, iterations=10))
    yield ("binary_erosion default structure, one step, 2048x2048 bool", 7,
           lambda: jaxndimage.binary_erosion(image),
           lambda: ndi.binary_erosion(image))
    yield ("binary_opening 3x3, one step each, 2048x2048 bool", 7,
           lambda: jaxndimage.binary_opening(image, square),
           lambda: ndi.binary_opening(image, square))
    yield ("grey_dilation size 5, 2048x2048 uint8", 7,
           lambda: jaxndimage.grey_dilation(grey, size=5),
           lambda: ndi.grey_dilation(grey, size=5))
    smooth = grey.astype(np.float32)
    yield ("grey_erosion size 3, 2048x2048 float32", 7,
           lambda: jaxndimage.grey_erosion(smooth, size=3),
           lambda: ndi.grey_erosion(smooth, size=3))
    yield ("binary_fill_holes, 2048x2048 bool", 5,
           lambda: jaxndimage.binary_fill_holes(image),
           lambda: ndi.binary_fill_holes(image))


def main() -> None:
    rows = []
    for name, repeats, ours, theirs in cases():
        np.testing.assert_array_equal(ours(), theirs())
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
