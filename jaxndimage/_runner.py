"""``python -m jaxndimage run [--report] [--device NAME] SCRIPT [ARGS...]``.

Runs an unmodified script as ``python SCRIPT ARGS...`` would (same
``sys.argv``, ``__name__ == "__main__"``, the script's folder first on
``sys.path``), with ``scipy.ndimage`` routed to jaxndimage
(:func:`jaxndimage.scipy_backend.patched`).  With ``--report`` it prints,
on stderr after the script ends, which SciPy functions were routed and how
many times.  With ``--device NAME`` (``tpu``, ``gpu``, ``default``) the
script's host arrays compute on that device
(:func:`jaxndimage.devices.accelerated`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import sys

from jaxndimage import devices, scipy_backend

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m jaxndimage run",
        description="Run a Python script with scipy.ndimage routed to "
                    "jaxndimage.")
    parser.add_argument("--report", action="store_true",
                        help="print which scipy.ndimage calls went to "
                             "jaxndimage, and how many")
    parser.add_argument("--device", metavar="NAME",
                        help="compute the script's host arrays on this "
                             "device (tpu, gpu, default); by default they "
                             "compute on the host's CPU, as in SciPy")
    parser.add_argument("script", help="path of the script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER,
                        help="arguments passed on to the script")
    return parser


def _report(calls: dict[str, int]) -> str:
    total = sum(calls.values())
    lines = [f"jaxndimage: {total} call{'s' * (total != 1)} routed to "
             f"jaxndimage"]
    width = max((len(name) for name in calls), default=0)
    for name, count in sorted(calls.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {name:<{width}}  {count}")
    return "\n".join(lines)


def _exit_code(code: object) -> int:
    """What the interpreter makes of ``sys.exit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def main(argv: list[str]) -> int:
    """Run ``argv`` (``[--report] SCRIPT ARGS...``, without "run").

    Returns the script's exit status.  An exception escaping the script
    propagates, with its traceback, as it would from ``python SCRIPT``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> script = pathlib.Path(tempfile.mkdtemp()) / "blur.py"
    >>> _ = script.write_text(
    ...     "import sys\\n"
    ...     "from scipy import ndimage\\n"
    ...     "print(ndimage.uniform_filter([0.0, 3.0, 0.0], 3), sys.argv[1:])\\n")
    >>> main([str(script), "a", "--b"])
    [1. 1. 1.] ['a', '--b']
    0
    """
    options = _parser().parse_args(argv)
    try:
        device = (contextlib.nullcontext() if options.device is None
                  else devices.accelerated(devices.resolve(options.device)))
    except ValueError as error:
        _parser().error(str(error))
    script = options.script
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [script, *options.args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    code = 0
    try:
        with device, scipy_backend.patched() as calls:
            try:
                runpy.run_path(script, run_name="__main__")
            except SystemExit as stop:
                code = _exit_code(stop.code)
            finally:
                if options.report:
                    sys.stdout.flush()
                    print(_report(dict(calls)), file=sys.stderr)
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    return code
