"""Gradients: compiling and running ``jax.grad`` of a filter, against dm-pix.

    python benchmarks/bench_grad.py

``jax.jit(jax.grad(loss))`` of a Gaussian blur of a float32 JAX image,
``loss`` the sum of squares of the blur, with zero padding: jaxndimage's
``gaussian_filter(mode="constant")`` and dm-pix's ``gaussian_blur`` (a
depthwise convolution) with the same taps (radius ``4 * sigma``).  For each
the compile time of the gradient program and its warm run time (median,
interleaved), at sigma 2 and 8 on 256² and 1024², and jaxndimage's
``zoom(order=3)``, whose gradient passes the spline prefilter.  Writes
``results/grad.json``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_small import interleaved, write_results  # noqa: E402

import jaxndimage as jn  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "grad.json"


def _compiled(loss, image):
    """The jitted gradient of ``loss``, compiled, and its compile time."""
    start = time.perf_counter()
    compiled = jax.jit(jax.grad(loss)).lower(image).compile()
    return compiled, time.perf_counter() - start


def _losses(sigma: float) -> dict:
    radius = int(4 * sigma)
    losses = {"jaxndimage": lambda a: (jn.gaussian_filter(
        a, sigma, mode="constant", radius=radius) ** 2).sum()}
    try:
        import dm_pix

        losses["dm-pix"] = lambda a: (dm_pix.gaussian_blur(
            a[..., None], sigma, 2 * radius + 1)[..., 0] ** 2).sum()
    except ImportError:
        print("dm-pix is not installed (pip install dm-pix): jaxndimage only")
    return losses


def main() -> None:
    rng = np.random.default_rng(0)
    results = {}
    print(f"{'case':36s} {'library':11s} {'compile s':>9s} {'run ms':>8s}")
    for size in (256, 1024):
        image = jnp.asarray(rng.random((size, size), dtype=np.float32))
        cases = {f"gaussian sigma {s:g}, {size}²": _losses(s) for s in (2, 8)}
        cases[f"zoom order 3 x0.5, {size}²"] = {"jaxndimage": lambda a: (
            jn.zoom(a, 0.5, order=3) ** 2).sum()}
        for case, losses in cases.items():
            compiled, compile_s = {}, {}
            for name, loss in losses.items():
                compiled[name], compile_s[name] = _compiled(loss, image)
            runs = interleaved({name: (lambda c=c, a=image: c(a).block_until_ready())
                                for name, c in compiled.items()}, repeats=7)
            for name in losses:
                print(f"{case:36s} {name:11s} {compile_s[name]:9.2f} "
                      f"{runs[name] * 1e3:8.2f}")
                results[f"{case} {name}"] = {"compile_s": compile_s[name],
                                             "run_s": runs[name]}
    write_results(RESULTS, results, jax=jax.__version__)


if __name__ == "__main__":
    main()
