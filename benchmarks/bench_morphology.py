"""Morphology, jaxndimage against SciPy on this machine.

Run ``python benchmarks/bench_morphology.py``.  Both sides take numpy in and
give numpy out (jaxndimage's conversions are inside the timing).  Calls
alternate between the two libraries, after one warm-up call each (which
compiles the JAX program); the table reports the median time of each and
SciPy's time over ours.  Results go to ``benchmarks/results/morphology.json``
(key ``results``).

``--sizes`` times instead the calls whose programs were compiled per shape
before issue 43 (iterated, masked and converging binary steps, the
propagation, hole filling by both paths, grey morphology by a non-flat
structure) at 64² to 2048² and 96³, warm, jaxndimage against SciPy
(key ``sizes``); ``--programs`` counts the programs each of them compiles
over 30 image shapes from 16² to 1024² with an empty kernel cache (key
``programs``).  Each mode replaces only its own key of the results file.

The binary images are smoothed noise thresholded into blobs (about half the
image foreground, with holes), so that fill-holes has real background to
propagate through.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import scipy
import scipy.ndimage as ndi

sys.path.insert(0, str(Path(__file__).parent))

from bench_rank import side_by_side  # noqa: E402

import jaxndimage  # noqa: E402
from jaxndimage._catalogue import distinct_shapes  # noqa: E402
from jaxndimage._timing import interleaved, median  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "morphology.json"


def blobs(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
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


#: The calls timed per size and counted over shapes (``--sizes``,
#: ``--programs``): name, and a function of (module, blobs, grey image)
#: calling the module's function.
SKEWED = np.array([[1, 1, 0], [0, 1, 0], [0, 1, 1]], bool)


def _weights(ndim: int) -> np.ndarray:
    return np.arange(3 ** ndim, dtype=np.float64).reshape((3,) * ndim) % 4


def _seeds(image: np.ndarray) -> np.ndarray:
    seeds = np.zeros_like(image)
    seeds[tuple(n // 3 for n in image.shape)] = True
    seeds[tuple(n // 2 for n in image.shape)] = True
    return seeds


SHAPE_CALLS = {
    "binary_erosion iterations=3": lambda m, b, g: m.binary_erosion(
        b, iterations=3),
    "binary_erosion box iterations=10": lambda m, b, g: m.binary_erosion(
        b, np.ones((3,) * b.ndim, bool), iterations=10),
    "binary_dilation iterations=-1": lambda m, b, g: m.binary_dilation(
        _seeds(b), iterations=-1),
    "binary_erosion iterations=0 border_value=1": lambda m, b, g:
        m.binary_erosion(b, iterations=0, border_value=1),
    "binary_dilation mask=": lambda m, b, g: m.binary_dilation(
        b, mask=g > 100),
    "binary_propagation mask=": lambda m, b, g: m.binary_propagation(
        _seeds(b), mask=b),
    "binary_opening iterations=2": lambda m, b, g: m.binary_opening(
        b, iterations=2),
    "binary_fill_holes": lambda m, b, g: m.binary_fill_holes(b),
    "binary_fill_holes skewed structure": lambda m, b, g:
        m.binary_fill_holes(b, SKEWED if b.ndim == 2 else None, origin=(
            0,) * (b.ndim - 1) + (1,)),
    "grey_erosion non-flat structure": lambda m, b, g: m.grey_erosion(
        g, structure=_weights(g.ndim)),
    "grey_dilation non-flat structure": lambda m, b, g: m.grey_dilation(
        g, structure=_weights(g.ndim)),
}

SIZES = [(64, 64), (128, 128), (256, 256), (512, 512), (1024, 1024),
         (2048, 2048), (96, 96, 96)]


def _images(shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    grey = np.random.default_rng(1).integers(0, 256, shape, dtype=np.uint8)
    return blobs(shape), grey


def _module_from(path: str) -> Any:
    """Another copy of ``jaxndimage/_morphology.py`` (an earlier version,
    say), imported as a module of the package."""
    name = "jaxndimage._morphology_compared"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def sizes(repeats: int, against: str | None = None) -> list[dict]:
    """Warm medians of `SHAPE_CALLS` per size, interleaved with SciPy, and
    with the functions of the ``against`` copy of the morphology module
    where given."""
    other = _module_from(against) if against else None
    rows = []
    for shape in SIZES:
        image, grey = _images(shape)
        for name, call in SHAPE_CALLS.items():
            expected = call(ndi, image, grey)
            np.testing.assert_array_equal(call(jaxndimage, image, grey),
                                          expected)
            calls = {"jaxndimage": functools.partial(call, jaxndimage, image,
                                                     grey),
                     "scipy": functools.partial(call, ndi, image, grey)}
            if other is not None:
                np.testing.assert_array_equal(call(other, image, grey),
                                              expected)
                calls["compared"] = functools.partial(call, other, image,
                                                      grey)
            times = interleaved(calls, repeat=repeats)
            row = {"case": name, "shape": list(shape)}
            row.update({f"{key}_s": median(value)
                        for key, value in times.items()})
            rows.append(row)
            print(f"{name:<45} {'x'.join(map(str, shape)):>10} " + " ".join(
                f"{key} {row[f'{key}_s'] * 1e3:8.3f}ms" for key in calls),
                flush=True)
    return rows


def programs(count: int = 30) -> dict[str, int]:
    """Compilations of each of `SHAPE_CALLS` over ``count`` image shapes
    (16² to 1024²), with an empty kernel cache of its own."""
    import jax

    compiles = [0]

    def counted(event: str, duration: float, **kwargs) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            compiles[0] += 1

    jax.monitoring.register_event_duration_secs_listener(counted)
    shapes = distinct_shapes(count, 16, 1024, 2, seed=43)
    totals = dict.fromkeys(SHAPE_CALLS, 0)
    with tempfile.TemporaryDirectory() as directory:
        os.environ["JAXNDIMAGE_CACHE_DIR"] = directory
        for shape in shapes:
            image, grey = _images(shape)
            for name, call in SHAPE_CALLS.items():
                before = compiles[0]
                call(jaxndimage, image, grey)
                totals[name] += compiles[0] - before
    for name, total in totals.items():
        print(f"{name:<45} {total:4d} programs over {count} shapes")
    return totals


def _update(key: str, value) -> None:
    """Replace ``key`` of the results file (with the versions)."""
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data.update({
        "machine": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "jax": __import__("jax").__version__,
        key: value,
    })
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(data, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", action="store_true")
    parser.add_argument("--programs", action="store_true")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--against", help="with --sizes: a copy of "
                        "jaxndimage/_morphology.py to time alongside")
    options = parser.parse_args()
    if options.programs:
        _update("programs", programs())
    if options.sizes:
        _update("sizes", sizes(options.repeats, options.against))
    if options.programs or options.sizes:
        return
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
    _update("results", rows)


if __name__ == "__main__":
    main()
