"""Devices: host arrays compute on the host's CPU whatever JAX's default
device is; JAX arrays compute on their own device and their results stay
there; programs are compiled, and kept, per device.

The check runs in a subprocess (tests/_devices_check.py) with two forced
CPU devices, the second made JAX's default: on one machine this stands in
for an accelerator host, where the default device is the accelerator.
Before host arrays were pinned to the host's CPU, the label kernel there
raised "compiled for input shardings that disagree" as it did on a TPU
machine.
"""

import os
import subprocess
import sys
from pathlib import Path

CHECK = Path(__file__).with_name("_devices_check.py")


def test_host_and_device_arrays_compute_where_they_live():
    env = dict(os.environ, JAX_PLATFORMS="cpu", JAXNDIMAGE_CACHE="0")
    run = subprocess.run([sys.executable, str(CHECK)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith("ok ")
