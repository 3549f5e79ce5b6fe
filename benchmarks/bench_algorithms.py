"""Each family's two algorithms side by side (``jaxndimage._algorithms``),
on the device JAX has, against SciPy on the host.

    python benchmarks/bench_algorithms.py [--size 2048] [--out FILE]

For every family of ``_algorithms.ALGORITHMS`` and a few of its functions,
on float32 JAX arrays on the default device (results left there): the
CPU's algorithm and the accelerator's (``_algorithms.as_on``), and on a
TPU its own where it has one (a ``tpu`` column), first call and warm,
against SciPy with numpy input, on images of three kinds:
``blobs`` (the thresholded smooth image of ``_catalogue.inputs``: few
large features), ``spots`` (a finer image: hundreds of features) and
``maze`` (a thresholded image of fine noise: thousands of winding
features, the worst case of propagation); the Euclidean distance
transform of each thresholded image, and affine maps of the image.  Each row says whether both
algorithms gave SciPy's answer (exactly, or for sums within 1e-5 of the
result's range).  The table in ``_algorithms`` is chosen from these rows.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.ndimage as ndi

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jaxndimage as jn  # noqa: E402
from jaxndimage import _distance  # noqa: E402
from jaxndimage._algorithms import as_on  # noqa: E402
from jaxndimage._catalogue import CALLS as CATALOGUE  # noqa: E402
from jaxndimage._catalogue import difference  # noqa: E402
from jaxndimage._timing import block, first_call, interleaved, median  # noqa: E402

#: image kind -> smoothing of the noise, as a fraction of the side
KINDS = {"blobs": 1 / 32, "spots": 1 / 256, "maze": 1 / 1024}

#: family -> (name, call(module, image, binary, labels, index))
CALLS = {
    "label": [
        ("label", lambda m, a, b, lab, i: m.label(b)[0]),
    ],
    "binary propagation": [
        ("binary_fill_holes", lambda m, a, b, lab, i: m.binary_fill_holes(b)),
        ("binary_propagation", lambda m, a, b, lab, i: m.binary_propagation(
            b & (a > 0.9), mask=b)),
    ],
    "per-label reductions": [
        ("sum_labels", lambda m, a, b, lab, i: m.sum_labels(a, lab, i)),
        ("mean", lambda m, a, b, lab, i: m.mean(a, lab, i)),
        ("variance", lambda m, a, b, lab, i: m.variance(a, lab, i)),
        ("maximum", lambda m, a, b, lab, i: m.maximum(a, lab, i)),
        ("maximum_position", lambda m, a, b, lab, i: m.maximum_position(
            a, lab, i)),
        ("center_of_mass", lambda m, a, b, lab, i: m.center_of_mass(
            a, lab, i)),
        ("histogram", lambda m, a, b, lab, i: m.histogram(
            a, 0.0, 1.0, 16, lab, i)),
        ("find_objects", lambda m, a, b, lab, i: m.find_objects(lab)),
    ],
    # (the calls of bench_accelerator's catalogue; map_coordinates with
    # its coordinates formed once)
    "affine interpolation": [
        ("rotate", lambda m, a, b, lab, i: CATALOGUE["rotate"].run(m, a)),
        ("affine_transform", lambda m, a, b, lab, i:
            CATALOGUE["affine_transform"].run(m, a)),
        ("map_coordinates", lambda m, a, b, lab, i: m.map_coordinates(
            a, _zoomed(m, a.shape))),
    ],
    "euclidean distance": [
        ("distance_transform_edt", lambda m, a, b, lab, i:
            m.distance_transform_edt(b)),
        ("edt return_indices", lambda m, a, b, lab, i:
            m.distance_transform_edt(b, return_indices=True)),
    ],
}


@functools.cache
def _zoomed(module: Any, shape: tuple[int, ...]) -> Any:
    """Coordinates of a zoom by 0.93 over ``shape``, formed once per
    module (on the device for jaxndimage, as the image is)."""
    coordinates = np.indices(shape, dtype=np.float32) * 0.93 + 2.1
    return coordinates if module is ndi else jax.device_put(coordinates)


def _image(size: int, smoothing: float) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    image = ndi.gaussian_filter(rng.standard_normal((size, size)),
                                max(size * smoothing, 0.7))
    image = ((image - image.min()) / np.ptp(image)).astype(np.float32)
    binary = image > 0.5
    labels, count = ndi.label(binary)
    return {"image": image, "binary": binary,
            "labels": labels.astype(np.int32),
            "index": np.arange(1, count + 1)}


def _as_host(result: Any) -> Any:
    return jax.tree.map(np.asarray, result)


def _row(call, host: dict, arrays: dict, repeat: int,
         choices: tuple[str, ...]) -> dict[str, Any]:
    """One function's times and differences, SciPy's and each kind's of
    ``choices`` (`_algorithms.as_on`)."""
    args = (host["image"], host["binary"], host["labels"], host["index"])
    jax_args = (arrays["image"], arrays["binary"], arrays["labels"],
                host["index"])
    want = call(ndi, *args)
    row: dict[str, Any] = {}
    runs = {"scipy": lambda: call(ndi, *args)}
    for choice in choices:
        def run(choice=choice):
            with as_on(choice):
                return block(call(jn, *jax_args))
        row[f"{choice}_first_s"] = first_call(run)
        row[f"{choice}_difference"] = difference(_as_host(run()), want,
                                                 check_dtype=False)
        runs[choice] = run
    times = {key: median(seconds) for key, seconds in interleaved(
        runs, repeat=repeat, budget=10).items()}
    for key, seconds in times.items():
        row[f"{key}_s"] = seconds
    for choice in choices:
        row[f"{choice}_ratio"] = times["scipy"] / times[choice]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--kinds", nargs="+", default=list(KINDS))
    parser.add_argument("--families", nargs="+", default=list(CALLS))
    parser.add_argument("--out", default=str(
        ROOT / "benchmarks" / "results" / "algorithms.json"))
    options = parser.parse_args(argv)
    # The Euclidean transform's algorithms run in its exact-shape kernels,
    # which concrete input on a CPU reaches only after running on flat
    # canvases for a while (`_distance.EXACT_AFTER_S`): time those kernels
    # from the first call on every device.
    _distance.EXACT_AFTER_S = 0.0
    device = jax.devices()[0]
    # A TPU has algorithms of its own (Pallas kernels, which run only in
    # Pallas' interpreter elsewhere).
    choices = ("cpu", "accelerator") + (
        ("tpu",) if device.platform == "tpu" else ())
    out = {"device": {"platform": device.platform,
                      "kind": device.device_kind, "jax": jax.__version__},
           "size": options.size, "rows": []}
    for kind in options.kinds:
        host = _image(options.size, KINDS[kind])
        arrays = {key: jnp.asarray(value) for key, value in host.items()
                  if key != "index"}
        print(f"{kind}: {host['index'].size} features", flush=True)
        for family in options.families:
            for name, call in CALLS[family]:
                row = {"kind": kind, "features": int(host["index"].size),
                       "family": family, "function": name,
                       **_row(call, host, arrays, options.repeat, choices)}
                out["rows"].append(row)
                print(f"  {name:20s} scipy {row['scipy_s'] * 1e3:8.2f} ms | "
                      + " | ".join(
                          f"{c} {row[c + '_s'] * 1e3:8.2f} ms "
                          f"({row[c + '_ratio']:6.2f}x, first "
                          f"{row[c + '_first_s']:5.1f} s, diff "
                          f"{row[c + '_difference']:.1e})"
                          for c in choices), flush=True)
                Path(options.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
