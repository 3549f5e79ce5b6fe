"""Whole scripts over many image sizes: jaxndimage against SciPy and Numba.

    python benchmarks/bench_pipeline.py [--images 60] [--rounds 2]

Runs ``benchmarks/pipeline_script.py`` (a plain SciPy script over images of
distinct shapes between 64² and 1024²: the filters, interpolation of
orders 1, 3 and 5, a rotation and an affine transform, a Fourier filter,
labels and a distance transform of issue 43) unmodified, each run in a
fresh process, interleaved round by round:

* under SciPy;
* under ``python -m jaxndimage run`` with an empty kernel cache (a new
  machine: every program compiles);
* under ``python -m jaxndimage run`` with the cache the previous run left
  (a second run of the script).

It also times the script's Gaussian step alone over the same images, in
fresh processes, for SciPy, jaxndimage and a Numba separable Gaussian
(``_numba_gaussian.py``), first calls and compilation included.  It prints
loop times, ratios (SciPy's time over the other's), the number of XLA
compilations and each step's time in the three runs of the script, and
writes ``results/pipeline.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "pipeline_script.py"
RESULTS = ROOT / "benchmarks" / "results" / "pipeline.json"

# Counts XLA compilations in the child process, then runs the command.
_COUNTING = """
import atexit, runpy, sys
import jax
count = [0]
def listen(event, duration, **kwargs):
    if event == "/jax/core/compile/backend_compile_duration":
        count[0] += 1
jax.monitoring.register_event_duration_secs_listener(listen)
atexit.register(lambda: print(f"compilations={count[0]}"))
sys.argv = sys.argv[1:]
if sys.argv[0] == "-m":
    sys.argv = sys.argv[1:]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
else:
    runpy.run_path(sys.argv[0], run_name="__main__")
"""

# The Gaussian step alone, over the script's images, first call included.
_GAUSSIAN = """
import sys, time
sys.path.insert(0, {benchmarks!r})
from pipeline_script import images
library = sys.argv[1]
if library == "scipy":
    from scipy.ndimage import gaussian_filter
elif library == "jaxndimage":
    from jaxndimage import gaussian_filter
else:
    from _numba_gaussian import gaussian_filter
folder = list(images({count}))
start = time.perf_counter()
for image in folder:
    gaussian_filter(image, 2.0)
print(f"loop_s={{time.perf_counter() - start:.4f}}")
"""


def _run(command: list[str], env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run(command, check=True, capture_output=True, text=True,
                         env=env, cwd=ROOT).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([-+.\deE]+)", out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--images", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    python = sys.executable
    count = ["--images", str(args.images)]
    runs: dict[str, list[dict]] = {k: [] for k in (
        "scipy", "jaxndimage_cold", "jaxndimage_warm", "gaussian_scipy",
        "gaussian_jaxndimage_warm", "gaussian_numba")}
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "JAXNDIMAGE_CACHE_DIR": cache,
                   "PYTHONPATH": str(ROOT)}
            runs["scipy"].append(_run([python, str(SCRIPT), *count], env))
            for name in ("jaxndimage_cold", "jaxndimage_warm"):
                runs[name].append(_run(
                    [python, "-c", _COUNTING, "-m", "jaxndimage", "run",
                     str(SCRIPT), *count], env))
            gaussian = _GAUSSIAN.format(benchmarks=str(ROOT / "benchmarks"),
                                        count=args.images)
            for library in ("scipy", "jaxndimage", "numba"):
                key = "gaussian_" + (library + "_warm" if library ==
                                     "jaxndimage" else library)
                runs[key].append(_run([python, "-c", gaussian, library], env))

    def best(name: str) -> float:
        return min(r["loop_s"] for r in runs[name])

    scipy_s = best("scipy")
    print(f"{args.images} images of distinct shapes, 64² to 1024² float32; "
          f"best of {args.rounds} fresh processes each")
    print(f"{'run':40s} {'loop s':>8s} {'SciPy/it':>9s} {'compiles':>9s}")
    rows = [("SciPy", "scipy"),
            ("jaxndimage run, empty cache", "jaxndimage_cold"),
            ("jaxndimage run, warm cache", "jaxndimage_warm")]
    summary = {}
    for label, name in rows:
        compiles = runs[name][0].get("compilations", 0)
        summary[name] = {"loop_s": best(name), "ratio": scipy_s / best(name),
                         "compilations": compiles}
        print(f"{label:40s} {best(name):8.3f} {scipy_s / best(name):9.2f} "
              f"{int(compiles):9d}")
    steps = [key for key in runs["scipy"][0] if key.startswith("step_")]
    print(f"{'step (s, first calls included)':40s} {'SciPy':>8s} "
          f"{'cold':>8s} {'warm':>8s}")
    for key in steps:
        names = ("scipy", "jaxndimage_cold", "jaxndimage_warm")
        times = [min(r.get(key, float("nan")) for r in runs[name])
                 for name in names]
        summary[key] = dict(zip(names, times))
        print(f"  {key[5:-2]:38s} " + " ".join(f"{t:8.3f}" for t in times))
    gauss = best("gaussian_scipy")
    print("gaussian_filter(sigma=2) step alone, first call included:")
    for label, name in [("SciPy", "gaussian_scipy"),
                        ("jaxndimage (warm cache)", "gaussian_jaxndimage_warm"),
                        ("Numba (compiles in the run)", "gaussian_numba")]:
        summary[name] = {"loop_s": best(name), "ratio": gauss / best(name)}
        print(f"  {label:38s} {best(name):8.3f} {gauss / best(name):9.2f}")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({
        "machine": platform.platform(), "processor": platform.processor(),
        "cpus": os.cpu_count(), "images": args.images,
        "rounds": args.rounds, "summary": summary, "runs": runs},
        indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
