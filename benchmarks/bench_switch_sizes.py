"""From what size the acceleration switch pays, on the device JAX has.

    python benchmarks/bench_switch_sizes.py [--sizes 32 64 ...] [--out FILE]

For square images of each size, a few functions of
``jaxndimage._catalogue.CALLS`` with numpy input: under SciPy, and under
``devices.accelerated()`` with every size sent to the device
(``devices.ACCELERATED_FROM`` set to 0), warm (each size's first call,
which compiles, is left out).  The ratio is SciPy's time over the
switch's.  `devices.ACCELERATED_FROM` for the device's platform is chosen
from these rows: the fewest elements from which the switch's calls are
at least as fast as SciPy's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jax
import scipy.ndimage as ndi

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import jaxndimage as jn  # noqa: E402
from jaxndimage import devices  # noqa: E402
from jaxndimage._catalogue import CALLS, inputs  # noqa: E402
from jaxndimage._timing import interleaved, median  # noqa: E402

FUNCTIONS = ["gaussian_filter", "median_filter", "binary_erosion", "label",
             "zoom", "sum_labels"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+",
                        default=[32, 64, 128, 256, 512])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", default=str(
        ROOT / "benchmarks" / "results" / "switch-sizes.json"))
    options = parser.parse_args(argv)
    device = jax.devices()[0]
    devices.ACCELERATED_FROM[device.platform] = 0
    rows = []
    for size in options.sizes:
        arrays = inputs(size)
        for name in FUNCTIONS:
            call = CALLS[name]
            args = [arrays[k] for k in call.takes]

            def switched(call=call, args=args):
                with devices.accelerated(device):
                    return call.run(jn, *args)

            switched()  # compiles for the size
            times = {key: median(seconds) for key, seconds in interleaved(
                {"scipy": lambda call=call, args=args: call.run(ndi, *args),
                 "switch": switched}, repeat=options.repeat,
                budget=5).items()}
            row = {"size": size, "function": name,
                   "scipy_s": times["scipy"], "switch_s": times["switch"],
                   "ratio": times["scipy"] / times["switch"]}
            rows.append(row)
            print(f"{size:5d} {name:18s} scipy {row['scipy_s'] * 1e3:8.3f} "
                  f"ms  switch {row['switch_s'] * 1e3:8.3f} ms  "
                  f"{row['ratio']:6.2f}x", flush=True)
    out = {"device": {"platform": device.platform,
                      "kind": device.device_kind, "jax": jax.__version__},
           "rows": rows}
    Path(options.out).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
