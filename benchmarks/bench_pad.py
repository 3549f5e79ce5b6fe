"""``_modes.pad_axis`` against ``jnp.pad``: the static-shape edge extension.

    python benchmarks/bench_pad.py

Both extend one axis of a float32 array by SciPy's boundary modes (SciPy's
names mapped to numpy's for ``jnp.pad``) and feed the result to a sum along
that axis, as a filter pass would, inside one jitted program.  Per mode and
pad width: the compile time and the warm median, interleaved.  Writes
``results/pad.json``.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from jaxndimage._modes import pad_axis  # noqa: E402
from jaxndimage._timing import block, interleaved, median  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "pad.json"
SHAPE = (1024, 1024)
WIDTHS = (1, 8, 64)
#: SciPy's filter modes and numpy's names for the same extension.
NUMPY_MODE = {"reflect": "symmetric", "mirror": "reflect", "nearest": "edge",
              "wrap": "wrap", "constant": "constant"}


def _programs(mode: str, width: int):
    def ours(x):
        return pad_axis(x, 1, width, width, mode, 0.0).sum(axis=1)

    def numpy_style(x):
        kwargs = {"constant_values": 0.0} if mode == "constant" else {}
        return jnp.pad(x, ((0, 0), (width, width)), mode=NUMPY_MODE[mode],
                       **kwargs).sum(axis=1)

    return {"pad_axis": jax.jit(ours), "jnp.pad": jax.jit(numpy_style)}


def main() -> None:
    x = jnp.asarray(np.random.default_rng(0).random(SHAPE, np.float32))
    rows = []
    for mode in NUMPY_MODE:
        for width in WIDTHS:
            programs = _programs(mode, width)
            compile_s = {}
            for name, program in programs.items():
                start = time.perf_counter()
                block(program(x))
                compile_s[name] = time.perf_counter() - start
            reference = np.asarray(programs["jnp.pad"](x))
            np.testing.assert_allclose(programs["pad_axis"](x), reference,
                                       rtol=1e-6)
            times = interleaved({name: (lambda p=p: p(x))
                                 for name, p in programs.items()}, repeat=15)
            row = {"mode": mode, "width": width,
                   "first_call_s": compile_s,
                   "warm_s": {name: median(t) for name, t in times.items()}}
            row["ratio"] = row["warm_s"]["jnp.pad"] / row["warm_s"]["pad_axis"]
            rows.append(row)
            print(f"{mode:>9} {width:>3}  pad_axis {row['warm_s']['pad_axis'] * 1e3:7.3f} ms"
                  f"  jnp.pad {row['warm_s']['jnp.pad'] * 1e3:7.3f} ms"
                  f"  ratio {row['ratio']:5.2f}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({
        "machine": platform.platform(), "jax": jax.__version__,
        "shape": SHAPE, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
