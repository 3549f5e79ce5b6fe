"""What SciPy's float64 arithmetic costs on float32 images.

    python benchmarks/bench_precision.py

numpy float32 input computes in float64 and rounds where SciPy rounds, so
it gives SciPy's bits; a JAX float32 array computes in float32.  Per
function, on a 2048² float32 image, interleaved in one process: SciPy,
jaxndimage on the numpy array (numpy out, conversion included) and
jaxndimage on the same data as a JAX array (JAX out), with the fraction of
elements equal to SciPy's bit for bit.  Writes ``results/precision.json``.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import scipy.ndimage as sp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jaxndimage as jn  # noqa: E402
from jaxndimage._timing import block, interleaved, median  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "precision.json"
SIZE = 2048
CASES = {
    "gaussian_filter sigma=2": lambda m, x: m.gaussian_filter(x, 2.0),
    "gaussian_filter sigma=4": lambda m, x: m.gaussian_filter(x, 4.0),
    "uniform_filter size=9": lambda m, x: m.uniform_filter(x, 9),
    "correlate1d 9 taps": lambda m, x: m.correlate1d(x, np.linspace(-1, 1, 9), axis=0),
    "sobel": lambda m, x: m.sobel(x, axis=0),
    "gaussian_gradient_magnitude sigma=2": lambda m, x: m.gaussian_gradient_magnitude(x, 2.0),
    "zoom 0.5 order 1": lambda m, x: m.zoom(x, 0.5, order=1),
    "shift order 3": lambda m, x: m.shift(x, (1.5, -2.25)),
}


def main() -> None:
    x = np.random.default_rng(0).random((SIZE, SIZE), np.float32)
    xj = jnp.asarray(x)
    rows = []
    for name, call in CASES.items():
        expected = call(sp, x)
        got_numpy = call(jn, x)
        got_jax = np.asarray(block(call(jn, xj)))
        times = interleaved({
            "scipy": lambda call=call: call(sp, x),
            "numpy in (float64 arithmetic)": lambda call=call: call(jn, x),
            "JAX in (float32 arithmetic)": lambda call=call: block(call(jn, xj)),
        }, repeat=7)
        warm = {k: median(v) for k, v in times.items()}
        row = {"case": name, "warm_s": warm,
               "bit_equal": {"numpy in": float(np.mean(got_numpy == expected)),
                             "JAX in": float(np.mean(got_jax == expected))}}
        rows.append(row)
        scipy_s = warm["scipy"]
        print(f"{name:<36} scipy {scipy_s * 1e3:7.1f} ms"
              f" | numpy in {warm['numpy in (float64 arithmetic)'] * 1e3:7.1f} ms"
              f" {scipy_s / warm['numpy in (float64 arithmetic)']:5.2f}x"
              f" bits {row['bit_equal']['numpy in']:7.2%}"
              f" | JAX in {warm['JAX in (float32 arithmetic)'] * 1e3:7.1f} ms"
              f" {scipy_s / warm['JAX in (float32 arithmetic)']:5.2f}x"
              f" bits {row['bit_equal']['JAX in']:7.2%}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({
        "machine": platform.platform(), "cpus": os.cpu_count(),
        "load_average": os.getloadavg(), "jax": jax.__version__,
        "size": SIZE, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
