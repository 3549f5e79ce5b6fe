"""Distance transforms, jaxndimage against SciPy on this machine.

Run ``python benchmarks/bench_distance.py``.  Both sides take numpy in and
give numpy out (jaxndimage's conversions are inside the timing).  Calls
alternate between the two libraries, after a warm-up call; the table
reports the median time of each and SciPy's time over ours.  jaxndimage
runs each case twice: on flat canvases, as a shape's calls do until they
have taken ``_distance.EXACT_AFTER_S``, and on the shape's own programs,
as they do from then on.  Results go to
``benchmarks/results/distance.json``.

The image is 2048x2048 blobs with ragged edges (a smooth pattern plus noise,
thresholded), about 79% foreground: distances up to a hundred pixels and
many equally near background pixels.  Without sampling, the Euclidean
transform first tries the host's shifts, which give such far features
back (to the flat canvases or the shape's programs) after a probe; the
rows of those routes include it.  Where features lie near (noise, small
blobs; 2-D and 3-D) the host's shifts finish the transform, in numpy:
those rows are "host shifts".

The last cases are folders of images of many sizes: 40 shapes from 64 to
1024 a side (the pipeline script's), blobs of each, or half-foreground
noise, each transformed once, the two libraries alternating image by
image; the times are the totals.  jaxndimage runs the blobs on flat
canvases, a few programs over all the shapes, compiled at their first use
or loaded from the kernel cache, and the noise by the host's shifts.
"""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

import numpy as np
import scipy
import scipy.ndimage as ndi
from bench_rank import side_by_side

import jaxndimage
from jaxndimage import _distance

DEFAULT_BUDGET = _distance.EXACT_AFTER_S
RESULTS = Path(__file__).parent / "results" / "distance.json"


def blobs(n: int = 2048, m: int | None = None) -> np.ndarray:
    m = n if m is None else m
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[:n, :m]
    pattern = np.sin(xx / 37.0) * np.cos(yy / 53.0)
    return (pattern + 0.3 * rng.random((n, m)) < 0.6).astype(np.uint8)


def many_shapes(kind: str = "blobs", count: int = 40) -> dict:
    """The folder case: ``count`` shapes once each, of ``kind`` ("blobs"
    or "noise"; see the docstring)."""
    rng = np.random.default_rng(0)
    shapes: list[tuple[int, int]] = []
    while len(shapes) < count:
        shape = tuple(int(v) for v in rng.integers(64, 1025, 2))
        if shape not in shapes:
            shapes.append(shape)
    images = [blobs(*shape) if kind == "blobs" else rng.random(shape) > 0.5
              for shape in shapes]
    ours_s = theirs_s = 0.0
    for image in images:
        start = time.perf_counter()
        jaxndimage.distance_transform_edt(image)
        ours_s += time.perf_counter() - start
        start = time.perf_counter()
        ndi.distance_transform_edt(image)
        theirs_s += time.perf_counter() - start
    return {"case": f"distance_transform_edt, {count} shapes 64..1024 a "
                    f"side, {kind}, each once (totals)",
            "jaxndimage_s": ours_s, "scipy_s": theirs_s,
            "ratio": theirs_s / ours_s, "repeats": 1}


def near_features() -> dict[str, np.ndarray]:
    """Masks whose features lie within a few elements: half-foreground
    noise in 2-D and 3-D, and blobs a few pixels across."""
    rng = np.random.default_rng(0)
    smooth = ndi.gaussian_filter(rng.random((1024, 1024)), 2)
    return {"noise, 2048x2048": rng.random((2048, 2048)) > 0.5,
            "noise, 96x96x96": rng.random((96, 96, 96)) > 0.5,
            "blobs of a few pixels, 1024x1024": smooth > np.median(smooth)}


#: The routes of each case's jaxndimage calls.
FAR_ROUTES = ("flat canvases", "own programs")
NEAR_ROUTES = ("host shifts",)


def cases():
    for name, mask in near_features().items():
        yield (f"distance_transform_edt return_indices, {name}", 5,
               lambda m=mask: jaxndimage.distance_transform_edt(
                   m, return_indices=True)[1],
               lambda m=mask: ndi.distance_transform_edt(
                   m, return_indices=True)[1], NEAR_ROUTES)
        yield (f"distance_transform_edt, {name}", 5,
               lambda m=mask: jaxndimage.distance_transform_edt(m),
               lambda m=mask: ndi.distance_transform_edt(m), NEAR_ROUTES)
    image = blobs()
    yield ("distance_transform_edt return_indices, 2048x2048", 5,
           lambda: jaxndimage.distance_transform_edt(
               image, return_indices=True)[1],
           lambda: ndi.distance_transform_edt(image, return_indices=True)[1],
           FAR_ROUTES)
    yield ("distance_transform_edt, 2048x2048", 5,
           lambda: jaxndimage.distance_transform_edt(image),
           lambda: ndi.distance_transform_edt(image), FAR_ROUTES)
    yield ("distance_transform_cdt chessboard, 2048x2048", 5,
           lambda: jaxndimage.distance_transform_cdt(image),
           lambda: ndi.distance_transform_cdt(image), FAR_ROUTES)
    yield ("distance_transform_cdt taxicab, 2048x2048", 5,
           lambda: jaxndimage.distance_transform_cdt(image, "taxicab"),
           lambda: ndi.distance_transform_cdt(image, "taxicab"), FAR_ROUTES)


def main() -> None:
    rows = []
    budgets = {"flat canvases": np.inf, "own programs": 0.0,
               "host shifts": DEFAULT_BUDGET}
    for name, repeats, ours, theirs, routes in cases():
        for route in routes:
            _distance.EXACT_AFTER_S = budgets[route]
            ours()  # warm-up: a first call, or the shape's compilation
            ours_s, their_s = side_by_side(ours, theirs, repeats)
            rows.append({"case": f"{name}, {route}", "jaxndimage_s": ours_s,
                         "scipy_s": their_s, "ratio": their_s / ours_s,
                         "repeats": repeats})
    _distance.EXACT_AFTER_S = DEFAULT_BUDGET
    rows.extend(many_shapes(kind) for kind in ("blobs", "noise"))
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
