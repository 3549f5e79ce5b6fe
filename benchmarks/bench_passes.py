"""Separable filters of images: both passes in one program, or one call per
pass.

    python benchmarks/bench_passes.py

XLA's CPU fusion may compute a first pass again inside every tap of the
second pass of the same program.  For float32 images (numpy) of 128², 512²
and 1024² and kernels of 3 to 21 taps, `gaussian_filter` (its radius half
the taps) and `uniform_filter` are timed four ways, interleaved, median of
warm calls: both passes in one program, one call per pass
(``_canvas.one_pass_per_call``), jaxndimage's choice between them
(``_canvas.canvas_per_pass``) and SciPy.  Writes ``results/passes.json``.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import sys
from pathlib import Path

import numpy as np
import scipy.ndimage as ndi

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jaxndimage as jn  # noqa: E402
from jaxndimage import _filters  # noqa: E402
from jaxndimage._timing import interleaved, median  # noqa: E402

SIDES = (128, 512, 1024)
TAPS = (3, 5, 7, 9, 11, 13, 15, 17, 21)
FILTERS = {
    "gaussian_filter": lambda m, image, taps: m.gaussian_filter(
        image, 1.0, radius=taps // 2),
    "uniform_filter": lambda m, image, taps: m.uniform_filter(image, taps),
}


def _forced(choice):
    """A call of jaxndimage with ``canvas_per_pass`` answering ``choice``
    (None: its own answer)."""
    own = _filters.canvas_per_pass

    def run(call, image, taps):
        if choice is not None:
            _filters.canvas_per_pass = lambda x, margins, axes=(): choice
        try:
            return np.asarray(call(jn, image, taps))
        finally:
            _filters.canvas_per_pass = own

    return run


def measure(name: str, call, image: np.ndarray, taps: int) -> dict:
    """One row: the four ways of running ``call`` on ``image``."""
    ways = {"one_program": _forced(False), "per_pass": _forced(True),
            "chosen": _forced(None)}
    calls = {key: functools.partial(way, call, image, taps)
             for key, way in ways.items()}
    calls["scipy"] = functools.partial(call, ndi, image, taps)
    times = interleaved(calls, repeat=9, warmup=2)
    row = {"filter": name, "shape": list(image.shape), "taps": taps}
    row.update({key: median(samples) for key, samples in times.items()})
    return row


def main() -> int:
    rows = []
    for side in SIDES:
        image = np.random.default_rng(side).random(
            (side, side + side // 8)).astype(np.float32)
        for name, call in FILTERS.items():
            for taps in TAPS:
                row = measure(name, call, image, taps)
                rows.append(row)
                print(f"{name:16s} {side:5d} {taps:3d} taps: one program "
                      f"{row['one_program'] * 1e3:7.3f} ms, per pass "
                      f"{row['per_pass'] * 1e3:7.3f} ms, chosen "
                      f"{row['chosen'] * 1e3:7.3f} ms, SciPy "
                      f"{row['scipy'] * 1e3:7.3f} ms", flush=True)
    out = ROOT / "benchmarks" / "results" / "passes.json"
    out.write_text(json.dumps({
        "machine": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(), "rows": rows}, indent=1) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
