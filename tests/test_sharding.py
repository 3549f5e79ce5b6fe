"""JAX arrays sharded across devices: sharded results, equal to unsharded.

The check runs in a subprocess (tests/_sharding_check.py) because the number
of CPU devices is fixed when JAX starts:
``XLA_FLAGS=--xla_force_host_platform_device_count=4``, a 2 x 2 mesh over
both spatial axes, shards (4 x 6) narrower than the Gaussian's radius (6).

On meshes with automatic axis types XLA decides where results live, and it
currently replicates the separable filters (their padding is one gather
along the axis); ``python tests/_sharding_check.py --auto-sharding`` (with
the XLA_FLAGS above) shows it.
"""

import os
import subprocess
import sys
from pathlib import Path

CHECK = Path(__file__).with_name("_sharding_check.py")


def _run(*flags):
    env = dict(os.environ, JAX_PLATFORMS="cpu",
               XLA_FLAGS="--xla_force_host_platform_device_count=4")
    return subprocess.run([sys.executable, str(CHECK), *flags], env=env,
                          capture_output=True, text=True, timeout=600)


def test_sharded_filters_every_mode():
    # Explicit meshes (jax.make_mesh's default): every mode, jit and eager,
    # results keep the input's sharding.  Automatic meshes: same values.
    run = _run()
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith("ok ")
