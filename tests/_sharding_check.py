"""Run by tests/test_sharding.py in a subprocess with 4 forced CPU devices:
sharded filters against the unsharded ones, for every mode, on meshes with
automatic and with explicit axis types.  Prints one line per failure and
"ok N" at the end."""

import os
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_force_host_platform_device_count=4")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import jaxndimage as jn  # noqa: E402

MODES = ["reflect", "grid-mirror", "constant", "grid-constant", "nearest",
         "mirror", "wrap", "grid-wrap"]


def filters(x, mode):
    weights = jnp.arange(12.0, dtype=x.dtype).reshape(3, 4) / 66.0
    # sigma 1.5 reaches 6 samples: wider than the 4 x 6 shards.
    return (jn.gaussian_filter(x, 1.5, mode=mode, cval=0.5),
            jn.uniform_filter(x, (5, 3), mode=mode, origin=(1, -1)),
            jn.correlate(x, weights, mode=mode, cval=-1.0))


def check(failures, where, got, want, sharding, keep_sharding):
    if keep_sharding and (got.sharding.is_fully_replicated or not
                          got.sharding.is_equivalent_to(sharding, got.ndim)):
        failures.append(f"{where}: not sharded like the input: "
                        f"{got.sharding}")
    error = float(jnp.abs(got - want).max())
    if not error <= 1e-6:
        failures.append(f"{where}: max error {error}")


def main() -> int:
    """Explicit meshes (``jax.make_mesh``'s default): every mode, results
    sharded like the input.  Automatic meshes: values, and with
    ``--auto-sharding`` also the result's sharding, which XLA decides."""
    assert jax.device_count() == 4, jax.devices()
    image = jnp.asarray(np.random.default_rng(0).random((8, 12)),
                        jnp.float32)
    jitted = jax.jit(filters, static_argnums=1)
    grad = jax.jit(jax.grad(
        lambda v: (jn.gaussian_filter(v, 2.0, mode="wrap") ** 2).sum()))
    failures, checked = [], 0
    only_auto = "--auto-sharding" in sys.argv
    for axis_type in ((AxisType.Auto,) if only_auto
                      else (AxisType.Explicit, AxisType.Auto)):
        mesh = jax.make_mesh((2, 2), ("rows", "cols"),
                             axis_types=(axis_type,) * 2)
        sharding = NamedSharding(mesh, P("rows", "cols"))
        sharded = jax.device_put(image, sharding)
        explicit = axis_type == AxisType.Explicit
        keep = explicit or only_auto
        for mode in MODES if explicit else ["reflect", "wrap"]:
            calls = {"jit": jitted}
            if mode == "reflect":
                calls["eager"] = filters
            for how, call in calls.items():
                expected = filters(image, mode)
                for k, (got, want) in enumerate(zip(call(sharded, mode),
                                                    expected)):
                    checked += 1
                    check(failures, f"{axis_type.name} {mode} {how} "
                          f"filter {k}", got, want, sharding, keep)
        checked += 1
        check(failures, f"{axis_type.name} grad", grad(sharded), grad(image),
              sharding, keep)
    for line in failures:
        print(line)
    print(f"ok {checked - len(failures)} of {checked}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
