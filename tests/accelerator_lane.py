"""The accelerator test lane: the tests that matter on a GPU or TPU, in one
command, on whatever device JAX has.

    python tests/accelerator_lane.py [--out DIR] [PYTEST TARGETS...]
                                     [--scipy-modules NAME...]
                                     [--numpy-modules NAME...]
                                     [--switch-modules NAME...]
                                     [--switch-properties [FILE...]]
                                     [--select EXPRESSION]

It runs pytest, one process at a time (one process can hold a TPU), in
two parts:

1. ``TARGETS``:

   * ``tests/test_accelerator.py``: every public function with numpy input
     by default (SciPy's bits, on the host's CPU), numpy input under the
     acceleration switch, and JAX arrays on the device (within the device
     tolerance, results left on the device);
   * ``tests/test_devices.py``: the switch, the refused dtypes, per-device
     programs;
   * ``compat_tests/test_precision.py``, ``compat_tests/test_parity.py``
     and the property tests (``compat_tests/test_*_properties.py``):
     numpy input gives SciPy's bits, and SciPy's behaviour, on a machine
     whose default device is the accelerator.

2. SciPy's own test modules (`SCIPY_MODULES`, or ``--scipy-modules``; none
   to skip them) with jaxndimage swapped in (``compat_tests.scipy_plugin``,
   its known failures included) and JAX arrays on the default device: the
   tests SciPy parametrizes over ``jax.numpy`` (``SCIPY_ARRAY_API``), with
   SciPy's own tolerances; those of ``--numpy-modules`` (none by
   default) in SciPy's plain run, numpy input with default settings,
   which must give SciPy's bits on an accelerator's host too; and those
   of ``--switch-modules`` (none by default) in SciPy's plain run with
   every call also made under the acceleration switch on the default
   device, whatever its size, and checked against the host's result
   (the plugin's ``--jaxndimage-accelerated``: within the tolerance of
   ``tests/test_accelerator.py``, dtypes and exceptions equal).  With
   ``--switch-properties [FILE...]`` the property tests (all, or those
   files) run so too, after the first part
   (``compat_tests/switch_check.py``), each test with the same first
   three examples (hypothesis' profile ``device``, ``conftest.py``): on a
   TPU each configuration they draw compiles there.
   ``--select EXPRESSION`` runs only SciPy's tests that pytest's ``-k``
   selects, to split a module over runs that each fit a time limit.

A test that aborts the whole process (XLA's TPU compiler aborts on some
dtype conversions instead of raising) is recorded as aborted, and pytest
starts again with it and every test already run deselected, so one abort
does not hide the rest.  Writes ``DIR/lane.log`` (pytest's verbose output)
and ``DIR/lane-summary.txt`` (the device, the counts of each part, every
failure and abort), and exits non-zero if any test failed or aborted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TextIO

import scipy

ROOT = Path(__file__).resolve().parent.parent
PROPERTY_TESTS = sorted(str(path.relative_to(ROOT)) for path in
                        (ROOT / "compat_tests").glob("test_*_properties.py"))
TARGETS = ["tests/test_accelerator.py", "tests/test_devices.py",
           "compat_tests/test_precision.py", "compat_tests/test_parity.py",
           *PROPERTY_TESTS]
SCIPY_MODULES = ["test_filters", "test_interpolation", "test_morphology",
                 "test_measurements", "test_fourier"]
#: Test ids can hold spaces (parameters' ids): an id runs to its outcome.
OUTCOME = re.compile(
    r"^(\S+::.+?) (PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)\b")
STARTED = re.compile(r"^(\S+::.+?)\s*$")
#: SciPy's tests run in, and with pytest's root at, the folder that holds
#: ``scipy``: pytest prints ids relative to the first and ``--deselect``
#: reads them relative to the second.
SCIPY_ROOT = Path(scipy.__file__).resolve().parent.parent
RESTARTS = 20
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:xdist",
          "-p", "no:cacheprovider", "-o", "addopts=", "-v", "-W", "ignore",
          "-rfE"]


def _device() -> str:
    code = ("import jax; d = jax.devices()[0]; "
            "print(d.platform, d.device_kind, jax.__version__)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True,
                         text=True, cwd=ROOT)
    return run.stdout.strip() or run.stderr.strip().splitlines()[-1]


def _run(arguments: list[str], log: TextIO,
         environment: dict[str, str] | None = None,
         folder: Path = ROOT) -> dict[str, str]:
    """Each test's outcome in ``pytest arguments``, restarting pytest
    without a test that aborted the process (and those already run); a
    run that pytest ends with an error of its own (nothing collected, a
    module not found) is the outcome ``ERROR`` of ``arguments``."""
    outcomes: dict[str, str] = {}
    for _ in range(RESTARTS):
        command = PYTEST + arguments
        command += [f"--deselect={test}" for test in outcomes]
        process = subprocess.Popen(command, cwd=folder, text=True,
                                   env=environment, stdout=subprocess.PIPE,
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
    if code not in (0, 1) and running is None:
        outcomes[" ".join(arguments)] = "ERROR"
    return outcomes


def _summary(part: str, outcomes: dict[str, str]) -> tuple[list[str], int]:
    """The summary lines of one part and its number of failures."""
    counts: dict[str, int] = {}
    for outcome in outcomes.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    lines = [f"{part}: " + ", ".join(f"{n} {k.lower()}" for k, n in
                                     sorted(counts.items()))]
    lines += [f"  {outcome}: {test}" for test, outcome in sorted(
        outcomes.items()) if outcome in ("FAILED", "ERROR", "ABORTED")]
    failed = sum(counts.get(k, 0) for k in ("FAILED", "ERROR", "ABORTED"))
    return lines, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".", help="folder for the log and "
                                                   "the summary")
    parser.add_argument("--scipy-modules", nargs="*", default=SCIPY_MODULES,
                        metavar="NAME", help="SciPy's test modules to run "
                                             "on the device (none: skip)")
    parser.add_argument("--numpy-modules", nargs="*", default=[],
                        metavar="NAME", help="SciPy's test modules to run "
                                             "with numpy input and default "
                                             "settings (default: none)")
    parser.add_argument("--switch-modules", nargs="*", default=[],
                        metavar="NAME", help="SciPy's test modules to run "
                                             "with numpy input, each call "
                                             "also under the switch "
                                             "(default: none)")
    parser.add_argument("--select", metavar="EXPRESSION",
                        help="only SciPy's tests that pytest's -k "
                             "EXPRESSION selects (to split a module over "
                             "runs)")
    parser.add_argument("--switch-properties", nargs="*", default=None,
                        metavar="FILE",
                        help="also run the property tests (these files; "
                             "none: all of them and test_position.py) "
                             "with every call on numpy input also under "
                             "the switch")
    parser.add_argument("targets", nargs="*", default=TARGETS)
    options = parser.parse_args(argv)
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    parts = {}
    with (out / "lane.log").open("w") as log:
        parts["jaxndimage's device tests"] = _run(options.targets, log)
        if options.switch_properties is not None:
            files = options.switch_properties or [
                *PROPERTY_TESTS, "compat_tests/test_position.py"]
            parts["property tests, numpy input, also under the switch"] = (
                _run([*files, "--jaxndimage-accelerated", "default",
                      "--hypothesis-profile", "device"], log))
        plain = {name: value for name, value in os.environ.items()
                 if name != "SCIPY_ARRAY_API"}
        plain["PYTHONPATH"] = os.pathsep.join(
            [str(ROOT), os.environ.get("PYTHONPATH", "")])
        jax_arrays = dict(plain, SCIPY_ARRAY_API=json.dumps(["jax.numpy"]))
        switched = ["--jaxndimage-accelerated", "default"]
        chosen = options.select
        jax_only = ["-k", "jax" if chosen is None else f"jax and ({chosen})"]
        numpy_only = [] if chosen is None else ["-k", chosen]
        runs = ([(module, "JAX arrays", jax_only, jax_arrays)
                 for module in options.scipy_modules]
                + [(module, "numpy input", numpy_only, plain)
                   for module in options.numpy_modules]
                + [(module, "numpy input, also under the switch",
                    switched + numpy_only, plain)
                   for module in options.switch_modules])
        for module, arrays, select, environment in runs:
            picked = "" if chosen is None else f" (-k {chosen!r})"
            parts[f"scipy.ndimage.tests.{module}, {arrays}{picked}"] = _run(
                ["--rootdir", str(SCIPY_ROOT), "--pyargs",
                 f"scipy.ndimage.tests.{module}", "-p",
                 "compat_tests.scipy_plugin", *select], log, environment,
                SCIPY_ROOT)
    lines = [f"device: {_device()}"]
    failed = passed = 0
    for part, outcomes in parts.items():
        part_lines, part_failed = _summary(part, outcomes)
        lines += part_lines
        failed += part_failed
        passed += sum(outcome == "PASSED" for outcome in outcomes.values())
    lines.append(f"{passed} passed, {failed} failed")
    (out / "lane-summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
