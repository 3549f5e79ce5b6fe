"""The accelerator test lane: the tests that matter on a GPU or TPU, in one
command, on whatever device JAX has.

    python tests/accelerator_lane.py [--out DIR] [PYTEST TARGETS...]

It runs, with pytest in one process at a time (one process can hold a
TPU), `TARGETS`:

* ``tests/test_accelerator.py``: every public function with numpy input by
  default (SciPy's bits, on the host's CPU), numpy input under the
  acceleration switch, and JAX arrays on the device (within the device
  tolerance, results left on the device);
* ``tests/test_devices.py``: the switch, the refused dtypes, per-device
  programs;
* ``compat_tests/test_precision.py`` and ``compat_tests/test_parity.py``:
  numpy input gives SciPy's bits, and SciPy's behaviour, on a machine
  whose default device is the accelerator.

A test that aborts the whole process (XLA's TPU compiler aborts on some
dtype conversions instead of raising) is recorded as aborted, and pytest
starts again with it and every test already run deselected, so one abort
does not hide the rest.  Writes ``DIR/lane.log`` (pytest's verbose output)
and ``DIR/lane-summary.txt`` (the device, the counts, every failure and
abort), and exits non-zero if any test failed or aborted.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = ["tests/test_accelerator.py", "tests/test_devices.py",
           "compat_tests/test_precision.py", "compat_tests/test_parity.py"]
OUTCOME = re.compile(r"^(\S+::\S+) (PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)")
STARTED = re.compile(r"^(\S+::\S+) ")
RESTARTS = 20


def _device() -> str:
    code = ("import jax; d = jax.devices()[0]; "
            "print(d.platform, d.device_kind, jax.__version__)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, cwd=ROOT)
    return run.stdout.strip() or run.stderr.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".", help="folder for the log and "
                                                   "the summary")
    parser.add_argument("targets", nargs="*", default=TARGETS)
    options = parser.parse_args(argv)
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    device = _device()
    outcomes: dict[str, str] = {}
    log = (out / "lane.log").open("w")
    for _ in range(RESTARTS):
        command = [sys.executable, "-m", "pytest", "-p", "no:xdist",
                   "-p", "no:cacheprovider", "-o", "addopts=", "-v",
                   "-W", "ignore", "-rfE", *options.targets]
        command += [f"--deselect={test}" for test in outcomes]
        process = subprocess.Popen(command, cwd=ROOT, text=True,
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
        running = None
        for line in process.stdout:
            log.write(line)
            log.flush()
            done = OUTCOME.match(line)
            if done:
                outcomes[done.group(1)] = done.group(2)
                running = None
            elif STARTED.match(line):
                running = STARTED.match(line).group(1)
        code = process.wait()
        if code >= 0 and code != 134 or running is None:
            break
        outcomes[running] = "ABORTED"  # the process died inside this test
        log.write(f"\n== {running} aborted the process; going on without "
                  f"it ==\n")
    log.close()
    counts: dict[str, int] = {}
    for outcome in outcomes.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    lines = [f"device: {device}",
             "counts: " + ", ".join(f"{n} {k.lower()}" for k, n in
                                    sorted(counts.items()))]
    lines += [f"{outcome}: {test}" for test, outcome in sorted(
        outcomes.items()) if outcome in ("FAILED", "ERROR", "ABORTED")]
    passed = counts.get("PASSED", 0)
    failed = sum(counts.get(k, 0) for k in ("FAILED", "ERROR", "ABORTED"))
    lines.append(f"{passed} passed, {failed} failed")
    (out / "lane-summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
