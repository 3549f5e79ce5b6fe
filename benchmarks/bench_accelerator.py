"""Every public function on the device JAX has, against SciPy on the host.

    python benchmarks/bench_accelerator.py [--sizes 2048 4096] [--out FILE]

For each function of ``jaxndimage._catalogue.CALLS`` and each size, side by
side in one process: SciPy on the host (numpy float32 input), numpy input
under ``devices.accelerated()`` (transfers to and from the device
included), and float32 JAX arrays already on the device (results left
there).  Each jaxndimage row has its first call (compilation included;
the switch runs first, as a numpy user's script would) and its warm time
(median of runs interleaved with SciPy's, each column in a loop of its
own), with its difference from SciPy (scaled by the result's largest
magnitude).  Functions that call a Python function
per point (``generic_filter``, ``geometric_transform``) run at `SMALL`
samples a side: SciPy takes minutes at 2048².

Then: ``vmap`` of ``gaussian_filter`` over a batch; the streaming filters'
share of the device's memory-bandwidth bound; and peers on the same
device: ``jax.scipy.ndimage.map_coordinates``, a Gaussian blur written
with ``lax.conv_general_dilated`` (at the default precision and at the
highest), and dm-pix's ``gaussian_blur`` where installed.

Rows are written to the JSON file as they are measured, so a run that is
stopped keeps what it measured.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import jax
import numpy as np
import scipy
import scipy.ndimage as ndi

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jaxndimage as jn  # noqa: E402
from jaxndimage import devices  # noqa: E402
from jaxndimage._catalogue import CALLS, difference, inputs  # noqa: E402
from jaxndimage._timing import block, first_call, interleaved, median  # noqa: E402

#: Side of the image for functions that call Python per point.
SMALL = 512
PER_POINT = {"generic_filter", "geometric_transform"}
#: Memory bandwidth of a device kind, bytes per second (vendor figures).
BANDWIDTH = {"TPU v5 lite": 819e9, "TPU v5e": 819e9}
STREAMING = ["gaussian_filter", "uniform_filter", "correlate1d",
             "maximum_filter1d"]


def _device_info(device: jax.Device) -> dict[str, Any]:
    return {"platform": device.platform, "kind": device.device_kind,
            "jax": jax.__version__, "scipy": scipy.__version__,
            "numpy": np.__version__, "host_cpus": os.cpu_count(),
            "host": platform.processor() or platform.machine(),
            "date": time.strftime("%Y-%m-%d")}


def _time(fns: dict[str, Any], repeat: int, budget: float
          ) -> dict[str, float]:
    times = interleaved(fns, repeat=repeat, warmup=0, budget=budget)
    return {name: median(samples) for name, samples in times.items()}


def _against_scipy(scipy_call: Any, fns: dict[str, Any], repeat: int,
                   budget: float) -> dict[str, float]:
    """Warm medians of ``fns`` (name to call), each interleaved with SciPy's
    call in a loop of its own, and SciPy's median over all those loops.

    The two jaxndimage columns are not interleaved with each other: a call
    under the switch that brings a large complex result back slows the
    next call on the device by milliseconds (measured on the TPU v5e),
    which would charge the JAX column for the switch's transfers."""
    scipy_samples, medians = [], {}
    for name, fn in fns.items():
        times = interleaved({"scipy": scipy_call, name: fn}, repeat=repeat,
                            warmup=0, budget=budget)
        scipy_samples += times["scipy"]
        medians[name] = median(times[name])
    medians["scipy"] = median(scipy_samples)
    return medians


def measure(name: str, arrays: dict[str, np.ndarray], device: jax.Device,
            repeat: int) -> dict[str, Any]:
    call = CALLS[name]
    host = [arrays[k] for k in call.takes]
    on_device = [jax.device_put(a, device) for a in host]
    block(on_device)
    start = time.perf_counter()
    expected = call.run(ndi, *host)
    scipy_once = time.perf_counter() - start

    def accelerated():
        with devices.accelerated(device):
            return call.run(jn, *host)

    def jax_arrays():
        return call.run(jn, *on_device)

    first_switch = first_call(accelerated)
    first_jax = first_call(jax_arrays)
    # SciPy's slowest calls run once or twice: the budget stops the rounds.
    budget = max(3 * scipy_once, 2.0)
    warm = _against_scipy(lambda: call.run(ndi, *host),
                          {"switch": accelerated, "jax": jax_arrays},
                          repeat if scipy_once < 1 else 3, budget)
    return {
        "name": name, "size": host[0].shape[0] if host else 0,
        "scipy_s": warm["scipy"],
        "switch_s": warm["switch"], "switch_first_s": first_switch,
        "switch_ratio": warm["scipy"] / warm["switch"],
        "switch_difference": difference(accelerated(), expected),
        "jax_s": warm["jax"], "jax_first_s": first_jax,
        "jax_ratio": warm["scipy"] / warm["jax"],
        "jax_difference": difference(jax_arrays(), expected,
                                     check_dtype=False),
    }


def _blur_weights(sigma: float) -> np.ndarray:
    radius = int(4 * sigma + 0.5)
    x = np.arange(-radius, radius + 1)
    w = np.exp(-0.5 * (x / sigma) ** 2)
    return (w / w.sum()).astype(np.float32)


def peers(size: int, device: jax.Device, repeat: int) -> list[dict]:
    """The same work done by JAX's own functions and dm-pix on the device."""
    rows = []
    image = inputs(size)["image"]
    x = jax.device_put(image, device)
    sigma = 2.0
    expected = ndi.gaussian_filter(image, sigma, mode="constant")
    w = _blur_weights(sigma)
    kernel = jax.device_put(np.outer(w, w)[None, None], device)

    def conv(precision):
        return jax.jit(lambda a: jax.lax.conv_general_dilated(
            a[None, None], kernel, (1, 1), "SAME",
            precision=precision)[0, 0])

    candidates = {
        "jaxndimage gaussian_filter(mode='constant')": jax.jit(
            lambda a: jn.gaussian_filter(a, sigma, mode="constant")),
        "lax.conv_general_dilated blur, default precision": conv(None),
        "lax.conv_general_dilated blur, HIGHEST precision": conv(
            jax.lax.Precision.HIGHEST),
    }
    try:
        import dm_pix

        candidates["dm-pix gaussian_blur"] = jax.jit(
            lambda a: dm_pix.gaussian_blur(a[..., None], sigma,
                                           kernel_size=len(w))[..., 0])
    except ImportError:
        pass
    for label, fn in candidates.items():
        first = first_call(lambda fn=fn: fn(x))
        warm = _time({label: lambda fn=fn: fn(x)}, repeat, 5.0)[label]
        rows.append({"name": label, "size": size, "first_s": first,
                     "warm_s": warm,
                     "difference": difference(np.asarray(fn(x)), expected,
                                              check_dtype=False)})
    rng = np.random.default_rng(1)
    points = (rng.random((2, 10 ** 6)) * (size - 1)).astype(np.float32)
    expected = ndi.map_coordinates(image, points, order=1)
    p = jax.device_put(points, device)
    for label, fn in {
            "jaxndimage map_coordinates(order=1), 1e6 points": jax.jit(
                lambda a, q: jn.map_coordinates(a, q, order=1)),
            "jax.scipy.ndimage.map_coordinates(order=1), 1e6 points":
                jax.jit(lambda a, q: jax.scipy.ndimage.map_coordinates(
                    a, q, order=1))}.items():
        first = first_call(lambda fn=fn: fn(x, p))
        warm = _time({label: lambda fn=fn: fn(x, p)}, repeat, 5.0)[label]
        scipy_s = _time({"s": lambda: ndi.map_coordinates(image, points,
                                                          order=1)}, 3, 5.0)
        rows.append({"name": label, "size": size, "first_s": first,
                     "warm_s": warm, "scipy_s": scipy_s["s"],
                     "difference": difference(np.asarray(fn(x, p)),
                                              expected, check_dtype=False)})
    return rows


def batched(device: jax.Device, repeat: int) -> dict[str, Any]:
    """``vmap`` of gaussian_filter over 32 images of 512², against SciPy
    looping over them."""
    stack = np.stack([inputs(512, seed)["image"] for seed in range(32)])
    x = jax.device_put(stack, device)
    fn = jax.jit(jax.vmap(lambda a: jn.gaussian_filter(a, 2.0)))
    first = first_call(lambda: fn(x))
    warm = _time({"scipy": lambda: [ndi.gaussian_filter(a, 2.0)
                                    for a in stack],
                  "vmap": lambda: fn(x)}, repeat, 10.0)
    expected = np.stack([ndi.gaussian_filter(a, 2.0) for a in stack])
    return {"name": "vmap(gaussian_filter) over 32 x 512²",
            "scipy_s": warm["scipy"], "jax_s": warm["vmap"],
            "jax_first_s": first, "jax_ratio": warm["scipy"] / warm["vmap"],
            "jax_difference": difference(np.asarray(fn(x)), expected,
                                         check_dtype=False)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2048])
    parser.add_argument("--large", type=int, default=4096,
                        help="size for the streaming filters' second run "
                             "(0 for none)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="these functions only")
    parser.add_argument("--part", type=int, nargs=2, metavar=("K", "N"),
                        help="the K-th of N equal parts of the functions "
                             "(1-based), to split a run across calls")
    parser.add_argument("--no-extras", action="store_true",
                        help="skip the batch, the bandwidth and the peers")
    parser.add_argument("--out", default=str(
        ROOT / "benchmarks" / "results" / "accelerator.json"))
    options = parser.parse_args(argv)
    device = jax.devices()[0]
    names = options.only or sorted(CALLS)
    if options.part:
        k, n = options.part
        names = names[k - 1::n]
    result: dict[str, Any] = {"device": _device_info(device), "rows": [],
                              "bandwidth": [], "peers": [], "batched": None}
    out = Path(options.out)

    def save():
        out.write_text(json.dumps(result, indent=1, default=float) + "\n")

    print(f"device: {result['device']}", flush=True)
    for size in options.sizes:
        arrays = inputs(size)
        small = inputs(SMALL)
        for name in names:
            row = measure(name, small if name in PER_POINT else arrays,
                          device, options.repeat)
            result["rows"].append(row)
            save()
            print(f"{name:28s} {row['size']:5d}  scipy {row['scipy_s']:9.4f}"
                  f"  switch {row['switch_ratio']:8.1f}x"
                  f" (first {row['switch_first_s']:6.2f} s)"
                  f"  jax {row['jax_ratio']:8.1f}x"
                  f" (first {row['jax_first_s']:6.2f} s)"
                  f"  diff {row['switch_difference']:.1e}"
                  f" / {row['jax_difference']:.1e}", flush=True)
    if options.large and not options.no_extras:
        arrays = inputs(options.large)
        for name in STREAMING:
            row = measure(name, arrays, device, options.repeat)
            result["rows"].append(row)
            save()
            print(f"{name:28s} {options.large}  jax {row['jax_ratio']:.1f}x",
                  flush=True)
    bandwidth = BANDWIDTH.get(device.device_kind)
    if bandwidth:
        for row in result["rows"]:
            if row["name"] in STREAMING:
                bound = 2 * 4 * row["size"] ** 2 / bandwidth
                result["bandwidth"].append({
                    "name": row["name"], "size": row["size"],
                    "bound_s": bound, "jax_s": row["jax_s"],
                    "fraction_of_bound": bound / row["jax_s"]})
    if not options.no_extras:
        result["batched"] = batched(device, options.repeat)
        save()
        result["peers"] = peers(options.sizes[0], device, options.repeat)
        save()
        print(json.dumps({"batched": result["batched"],
                          "peers": result["peers"],
                          "bandwidth": result["bandwidth"]}, indent=1,
                         default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
