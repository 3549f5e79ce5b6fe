"""``python -m jaxndimage``: side by side with SciPy on a synthetic image.

    python -m jaxndimage [--size N] [--repeat R] [--out FILE.png]
    python -m jaxndimage run [--report] SCRIPT [ARGS...]

The first form runs a set of ``scipy.ndimage`` calls through SciPy and
through jaxndimage on an image it generates (no download), and prints, per
function, the largest absolute difference, whether the dtypes match, SciPy's
time, jaxndimage's first-call and warm times and the speed-up; one row is a
threshold → label → measure pipeline.  Then it runs one script over images
of several sizes under both, first calls included (``--sizes``), and again
over as many new sizes, which compile nothing.  With
matplotlib installed it saves a figure (input, SciPy result, jaxndimage
result, difference) to ``--out``.  Only functions that this jaxndimage
exports are shown.

The second form runs a script with jaxndimage standing in for
``scipy.ndimage`` (see ``jaxndimage._runner``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jaxndimage._timing import first_call, interleaved, median

Call = Callable[[Any, np.ndarray], Any]


def sample_image(size: int = 512, seed: int = 0) -> np.ndarray:
    """A synthetic float32 test image: smooth blobs, a disc, bars and noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size].astype(np.float32) / max(size - 1, 1)
    image = 0.4 * np.sin(6 * np.pi * x) * np.cos(4 * np.pi * y)
    for cx, cy, r in rng.uniform(0.1, 0.9, (6, 3)):
        image += np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (0.02 * r))
    image += ((x - 0.5) ** 2 + (y - 0.5) ** 2 < 0.04).astype(np.float32)
    image[:, (np.arange(size) // max(size // 32, 1)) % 4 == 0] += 0.5
    image += 0.05 * rng.standard_normal((size, size))
    return image.astype(np.float32)


_K3 = np.array([[1.0, 2.0, 0.0], [-1.0, 0.0, 1.0], [0.5, -2.0, 1.0]])
_W1 = np.array([1.0, 4.0, 6.0, 4.0, 1.0]) / 16

#: Showcase calls by scipy.ndimage name; each takes (module, image).
SHOWCASE: dict[str, Call] = {
    "gaussian_filter": lambda m, a: m.gaussian_filter(a, 2.0),
    "gaussian_filter1d": lambda m, a: m.gaussian_filter1d(a, 3.0, axis=0),
    "uniform_filter": lambda m, a: m.uniform_filter(a, 5),
    "uniform_filter1d": lambda m, a: m.uniform_filter1d(a, 7),
    "correlate": lambda m, a: m.correlate(a, _K3, mode="nearest"),
    "convolve": lambda m, a: m.convolve(a, _K3, mode="wrap"),
    "correlate1d": lambda m, a: m.correlate1d(a, _W1, axis=0),
    "convolve1d": lambda m, a: m.convolve1d(a, _W1, mode="mirror"),
    "sobel": lambda m, a: m.sobel(a, axis=0),
    "prewitt": lambda m, a: m.prewitt(a, axis=1),
    "laplace": lambda m, a: m.laplace(a),
    "gaussian_laplace": lambda m, a: m.gaussian_laplace(a, 2.0),
    "gaussian_gradient_magnitude":
        lambda m, a: m.gaussian_gradient_magnitude(a, 2.0),
    "generic_gradient_magnitude":
        lambda m, a: m.generic_gradient_magnitude(a, m.sobel),
    "generic_laplace": lambda m, a: m.generic_laplace(
        a, lambda i, ax, o, mo, c: m.correlate1d(i, [1, -2, 1], ax, o, mo, c)),
    "minimum_filter": lambda m, a: m.minimum_filter(a, 5),
    "maximum_filter": lambda m, a: m.maximum_filter(a, 5),
    "median_filter": lambda m, a: m.median_filter(a, 3),
    "rank_filter": lambda m, a: m.rank_filter(a, 2, 3),
    "percentile_filter": lambda m, a: m.percentile_filter(a, 25, 3),
    "minimum_filter1d": lambda m, a: m.minimum_filter1d(a, 9),
    "maximum_filter1d": lambda m, a: m.maximum_filter1d(a, 9),
    "spline_filter": lambda m, a: m.spline_filter(a),
    "shift": lambda m, a: m.shift(a, (3.5, -2.25)),
    "zoom": lambda m, a: m.zoom(a, 0.75),
    "rotate": lambda m, a: m.rotate(a, 30.0, reshape=False),
    "affine_transform": lambda m, a: m.affine_transform(
        a, [[0.9, 0.1], [-0.1, 0.9]], offset=(5.0, -3.0)),
    "map_coordinates": lambda m, a: m.map_coordinates(
        a, np.indices(a.shape, dtype=np.float32) * 0.9 + 2.0),
    # These three take the image's spectrum: see showcase_input.
    "fourier_gaussian": lambda m, a: m.fourier_gaussian(a, 2.0),
    "fourier_uniform": lambda m, a: m.fourier_uniform(a, 5.0),
    "fourier_shift": lambda m, a: m.fourier_shift(a, (3.0, -2.0)),
    "binary_erosion": lambda m, a: m.binary_erosion(a > 0.5, iterations=3),
    "binary_fill_holes": lambda m, a: m.binary_fill_holes(a > 0.5),
    "grey_dilation": lambda m, a: m.grey_dilation(a, size=5),
    "white_tophat": lambda m, a: m.white_tophat(a, size=7),
    "distance_transform_edt": lambda m, a: m.distance_transform_edt(a > 0.5),
    "distance_transform_cdt": lambda m, a: m.distance_transform_cdt(a > 0.5),
    "label": lambda m, a: segment_and_measure(m, a),
}

#: How a showcase row is titled where it is more than one call.
TITLES = {"label": "threshold→label→measure"}


def segment_and_measure(module: Any, image: np.ndarray) -> np.ndarray:
    """Threshold, label and measure: per feature, in label order, its size,
    mean and centre of mass (equal tables mean equal labels)."""
    labels, count = module.label(image > 1.0)
    index = np.arange(1, count + 1)
    sizes = module.sum_labels(np.ones_like(image), labels, index)
    means = module.mean(image, labels, index)
    centres = np.asarray(module.center_of_mass(image, labels, index))
    return np.column_stack([sizes, means, centres.reshape(count, -1)])


def showcase_input(name: str, image: np.ndarray) -> np.ndarray:
    """The array the showcase call ``name`` takes: ``image``, or for the
    Fourier filters its complex64 spectrum, computed once here so that the
    FFT (numpy's on both sides) is not timed as part of the filter."""
    if name.startswith("fourier_"):
        return np.fft.fft2(image).astype(np.complex64)
    return image


def showcased(module: Any = None) -> list[str]:
    """The showcase calls this jaxndimage implements, in showcase order."""
    if module is None:
        import jaxndimage as module
    exported = set(getattr(module, "__all__", ()))
    return [name for name in SHOWCASE if name in exported]


def run_showcase(size: int = 512, repeat: int = 5,
                 names: Sequence[str] | None = None,
                 device: Any = None) -> list[dict[str, Any]]:
    """Run every showcased call through SciPy and jaxndimage.

    With ``device`` jaxndimage runs under ``devices.accelerated(device)``:
    the numpy image is sent to it, and the results come back.  Returns one
    row per function: ``max_abs_diff``, ``dtype_match``, ``scipy_s``,
    ``first_s``, ``warm_s``, ``ratio`` (SciPy / jaxndimage warm) and the
    two results.
    """
    import contextlib

    import scipy.ndimage as ndi

    import jaxndimage as jn
    from jaxndimage import devices

    def ours(call, data):
        with (contextlib.nullcontext() if device is None
              else devices.accelerated(device)):
            return call(jn, data)

    image = sample_image(size)
    rows = []
    for name in names if names is not None else showcased(jn):
        call, data = SHOWCASE[name], showcase_input(name, image)
        first = first_call(lambda call=call, data=data: ours(call, data))
        times = interleaved(
            {"scipy": lambda call=call, data=data: call(ndi, data),
             "jax": lambda call=call, data=data: ours(call, data)},
            repeat=repeat, budget=2.0)
        expected = np.asarray(call(ndi, data))
        result = np.asarray(ours(call, data))
        same_shape = expected.shape == result.shape
        wide = np.result_type(expected, result, np.float64)
        diff = (float(np.max(np.abs(expected.astype(wide)
                                    - result.astype(wide))))
                if same_shape and expected.size else float("nan"))
        rows.append({
            "function": TITLES.get(name, name),
            "max_abs_diff": diff,
            "dtype_match": expected.dtype == result.dtype and same_shape,
            "scipy_s": median(times["scipy"]),
            "first_s": first,
            "warm_s": median(times["jax"]),
            "ratio": median(times["scipy"]) / median(times["jax"]),
            "scipy_result": expected,
            "result": result,
        })
    return rows


#: The script of :func:`run_sizes`: one image through these showcase
#: calls, which compile per size bucket, not per size (the spline
#: prefilter of orders 2-5 still compiles per shape: zoom by linear
#: interpolation here).
SCRIPT = ("gaussian_filter", "sobel", "median_filter", "uniform_filter",
          "zoom_linear")
SHOWCASE_EXTRA: dict[str, Call] = {
    "zoom_linear": lambda m, a: m.zoom(a, 0.75, order=1),
}


def run_sizes(sizes: Sequence[int], names: Sequence[str] = SCRIPT
              ) -> dict[str, Any]:
    """One script over images of several sizes, as a user's loop over a
    folder runs: every image through the showcase calls ``names``, first
    calls included, under SciPy and then under jaxndimage.

    Returns both loop times, whether every result equalled SciPy's to
    float32 rounding, and the programs jaxndimage compiled in the loop
    (loaded from its kernel cache when an earlier run compiled them); then
    the same for a second folder of new sizes (``again_*``), where the
    size buckets seen already compile nothing.
    """
    import scipy.ndimage as ndi

    import jaxndimage as jn
    from jaxndimage import _cache

    images = [sample_image(size, seed=index)
              for index, size in enumerate(sizes)]
    calls = [{**SHOWCASE, **SHOWCASE_EXTRA}[name] for name in names]

    def loop(module: Any) -> tuple[float, list[np.ndarray]]:
        start = time.perf_counter()
        results = [np.asarray(call(module, image))
                   for image in images for call in calls]
        return time.perf_counter() - start, results

    scipy_s, expected = loop(ndi)
    compiled = _cache.stats["compiled"]
    jax_s, results = loop(jn)
    equal = all(np.allclose(a, b, rtol=1e-5, atol=1e-5)
                for a, b in zip(expected, results))
    compiled = _cache.stats["compiled"] - compiled
    # A second folder: new sizes, each 7 larger; buckets seen compile nothing.
    images = [sample_image(size + 7, seed=index)
              for index, size in enumerate(sizes)]
    again_scipy_s, _ = loop(ndi)
    again = _cache.stats["compiled"]
    again_s, _ = loop(jn)
    return {"sizes": list(sizes), "calls": list(names), "scipy_s": scipy_s,
            "jax_s": jax_s, "ratio": scipy_s / jax_s, "equal": equal,
            "compiled": compiled, "again_scipy_s": again_scipy_s,
            "again_s": again_s, "again_ratio": again_scipy_s / again_s,
            "again_compiled": _cache.stats["compiled"] - again}


def format_sizes(run: dict[str, Any]) -> str:
    """The :func:`run_sizes` result as a few lines of text."""
    sizes = run["sizes"]
    return (f"one script over {len(sizes)} images of distinct sizes "
            f"({min(sizes)}² to {max(sizes)}²: {', '.join(run['calls'])}), "
            f"first calls included:\n"
            f"  SciPy {run['scipy_s']:.2f} s, jaxndimage {run['jax_s']:.2f} s"
            f" ({run['ratio']:.2f}x), results equal: "
            f"{'yes' if run['equal'] else 'NO'}, programs compiled: "
            f"{run['compiled']} (a later process loads them from the kernel "
            f"cache)\n"
            f"  the same script over {len(sizes)} new sizes (each 7 larger): "
            f"SciPy {run['again_scipy_s']:.2f} s, jaxndimage "
            f"{run['again_s']:.2f} s ({run['again_ratio']:.2f}x), programs "
            f"compiled: {run['again_compiled']}")


def format_table(rows: list[dict[str, Any]]) -> str:
    """The showcase rows as a plain-text table."""
    header = (f"{'function':<28} {'max|diff|':>10} {'dtype':>6} "
              f"{'scipy ms':>9} {'first ms':>9} {'warm ms':>8} {'ratio':>7}")
    lines = [header, "-" * len(header)]
    for row in rows:
        lines.append(
            f"{row['function']:<28} {row['max_abs_diff']:>10.2e} "
            f"{'yes' if row['dtype_match'] else 'NO':>6} "
            f"{row['scipy_s'] * 1e3:>9.2f} {row['first_s'] * 1e3:>9.1f} "
            f"{row['warm_s'] * 1e3:>8.2f} {row['ratio']:>6.1f}x")
    return "\n".join(lines)


def save_figure(rows: list[dict[str, Any]], image: np.ndarray, path: str,
                count: int = 4) -> bool:
    """Save input / SciPy / jaxndimage / difference panels for the first
    ``count`` image-shaped results; False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    shown = [r for r in rows if r["result"].shape == image.shape
             and r["dtype_match"] and np.isrealobj(r["result"])][:count]
    if not shown:
        return False
    figure, axes = plt.subplots(len(shown), 4,
                                figsize=(12, 3 * len(shown)), squeeze=False)
    for line, row in zip(axes, shown):
        panels = [(image, "input"), (row["scipy_result"], "SciPy"),
                  (row["result"], "jaxndimage"),
                  (row["result"].astype(np.float64)
                   - row["scipy_result"].astype(np.float64), "difference")]
        for ax, (data, title) in zip(line, panels):
            shown_image = ax.imshow(data, cmap="gray" if title != "difference"
                                    else "coolwarm")
            ax.set_title(f"{row['function']}: {title}", fontsize=9)
            ax.axis("off")
            if title == "difference":
                figure.colorbar(shown_image, ax=ax, fraction=0.046)
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    plt.close(figure)
    return True


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m jaxndimage",
        description="Run scipy.ndimage calls through SciPy and jaxndimage "
                    "on a synthetic image and compare results and times. "
                    "'python -m jaxndimage run [--report] SCRIPT [ARGS...]' "
                    "runs a script with jaxndimage in place of "
                    "scipy.ndimage.")
    parser.add_argument("--size", type=int, default=512,
                        help="side of the square test image (default 512)")
    parser.add_argument("--repeat", type=int, default=5,
                        help="warm runs per function (default 5)")
    parser.add_argument("--out", default="jaxndimage-showcase.png",
                        help="PNG to save with matplotlib (default "
                             "jaxndimage-showcase.png; '' for none)")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="show only these functions")
    parser.add_argument("--sizes", type=int, nargs="*",
                        default=[96, 144, 200, 256, 330, 420, 512, 640],
                        metavar="N",
                        help="image sides of the whole-script run (default "
                             "eight between 96 and 640; none to skip it)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m jaxndimage``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "run":
        from jaxndimage import _runner

        return _runner.main(argv[1:])
    args = _parser().parse_args(argv)
    if args.size < 8:
        _parser().error("--size must be at least 8")
    names = showcased()
    if args.only:
        unknown = [n for n in args.only if n not in names]
        if unknown:
            _parser().error(f"not showcased here: {', '.join(unknown)}; "
                            f"choose from {', '.join(names)}")
        names = [n for n in names if n in args.only]
    start = time.perf_counter()
    import jax

    accelerator = next((d for d in jax.devices() if d.platform != "cpu"),
                       None)
    print(f"devices: {', '.join(str(d) for d in jax.devices())}; numpy "
          f"input computes on the host's CPU"
          + (f", and on {accelerator.device_kind} in the second table"
             if accelerator else " (no accelerator found)") + "\n")
    rows = run_showcase(args.size, args.repeat, names)
    print(f"jaxndimage vs scipy.ndimage, {args.size}x{args.size} float32 "
          f"synthetic image; ratio = SciPy / jaxndimage warm (median of "
          f"interleaved runs)\n")
    print(format_table(rows))
    if accelerator is not None:
        print(f"\nthe same, numpy in and out, computed on "
              f"{accelerator.device_kind} (devices.accelerated; transfers "
              f"included, float32 there)\n")
        print(format_table(run_showcase(args.size, args.repeat, names,
                                        accelerator)))
    if args.sizes:
        print()
        print(format_sizes(run_sizes(args.sizes)))
    if args.out:
        if save_figure(rows, sample_image(args.size), args.out):
            print(f"\nfigure saved to {args.out}")
        else:
            print("\nno figure (matplotlib is not installed)")
    print(f"\n{len(rows)} functions in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
