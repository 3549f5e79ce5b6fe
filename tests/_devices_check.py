"""Run by tests/test_devices.py in a subprocess with 2 forced CPU devices,
the second made JAX's default: host arrays compute on the host's first CPU
device whatever the default, JAX arrays on their own device, and every
table of programs keys them by device.  Prints one line per failure and
"ok N" at the end."""

import os
import sys

if __name__ == "__main__":  # not when pytest imports it for doctests
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + " --xla_force_host_platform_device_count=2")

import jax  # noqa: E402
import numpy as np  # noqa: E402
import scipy.ndimage as ndi  # noqa: E402

import jaxndimage as jn  # noqa: E402
from jaxndimage import _cache  # noqa: E402

# One function per kind of kernel: a canvas kernel, a points kernel, a
# cached per-shape kernel, a flat statistic and an eager composition.
CALLS = {
    "gaussian_filter": lambda x: jn.gaussian_filter(x, 1.5),
    "map_coordinates": lambda x: jn.map_coordinates(
        x, np.array([[0.5, 3.25], [1.5, 2.0]]), order=1),
    "label": lambda x: jn.label(x > 0.5)[0],
    "sum_labels": lambda x: jn.sum_labels(x, x > 0.5, index=[0, 1]),
    "distance_transform_edt": lambda x: jn.distance_transform_edt(x > 0.5),
}


def programs() -> set:
    """(cache, key) of every program the KernelCaches hold; a key ends with
    the device the program was compiled for."""
    import gc

    return {(id(cache), key) for cache in gc.get_objects()
            if isinstance(cache, _cache.KernelCache) for key in cache.memory}


def main() -> int:
    first, second = jax.devices("cpu")[:2]
    failures, checked = [], 0
    jax.config.update("jax_default_device", second)
    image = np.random.default_rng(0).random((12, 10))
    for name, call in CALLS.items():
        before = programs()
        expected = call(image)  # numpy in: on the host's first CPU
        checked += 1
        compiled_for = {key[-1] for _, key in programs() - before}
        if compiled_for - {first}:
            failures.append(f"{name}: numpy input compiled for "
                            f"{compiled_for}")
        for device in (first, second):
            got = call(jax.device_put(image, device))
            checked += 1
            where = {d for leaf in jax.tree.leaves(got)
                     if isinstance(leaf, jax.Array) for d in leaf.devices()}
            if where != {device}:
                failures.append(f"{name}: input on {device}, result on "
                                f"{where}")
            for g, e in zip(jax.tree.leaves(got), jax.tree.leaves(expected)):
                if not np.allclose(np.asarray(g), np.asarray(e), rtol=1e-5):
                    failures.append(f"{name} on {device}: values differ")
    checked += 1
    if second not in {key[-1] for _, key in programs()}:
        failures.append("no program was compiled for the second device")
    checked += 1
    if not np.array_equal(jn.gaussian_filter(image, 1.5),
                          ndi.gaussian_filter(image, 1.5)):
        failures.append("numpy input: not SciPy's bits")
    for line in failures:
        print(line)
    print(f"ok {checked - len(failures)} of {checked}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
