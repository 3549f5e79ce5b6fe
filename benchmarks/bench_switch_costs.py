"""Where the acceleration switch's time goes, on the device JAX has.

    python benchmarks/bench_switch_costs.py OUT.json

At 2048² (median of warm calls): the transfers of float32 and complex64
arrays to the device and back, complex64 also as its real and imaginary
parts; the host's dtype conversions; ten functions of
``jaxndimage._catalogue.CALLS`` under ``devices.accelerated()``, as JAX
arrays on the device and under SciPy; and a profile of two switched calls
of four of them.  The keys are ``<name>_switch``, ``<name>_jax``,
``<name>_scipy`` and ``<name>_profile``, in seconds.
"""

import cProfile
import io
import json
import pstats
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy.ndimage as ndi

import jaxndimage as jn
from jaxndimage import devices
from jaxndimage._catalogue import CALLS, inputs

out = {}


def t(f, n=5):
    f()
    s = []
    for _ in range(n):
        a = time.perf_counter()
        r = f()
        if isinstance(r, jax.Array):
            jax.block_until_ready(r)
        s.append(time.perf_counter() - a)
    return float(np.median(s))


dev = jax.devices()[0]
x32 = np.random.default_rng(0).random((2048, 2048), np.float32)
c64 = np.fft.fft2(x32).astype(np.complex64)
c128 = c64.astype(np.complex128)
d32 = jax.device_put(x32, dev)
dc = jax.device_put(c64, dev)
out["put_f32"] = t(lambda: jax.device_put(x32, dev))
out["get_f32"] = t(lambda: np.asarray(d32 + 0))
out["put_c64"] = t(lambda: jax.device_put(c64, dev))
out["get_c64"] = t(lambda: np.asarray(dc * 1))
cplx = jax.jit(lambda a, b: jax.lax.complex(a, b))
out["put_c64_as_pair"] = t(lambda: cplx(
    jax.device_put(np.ascontiguousarray(c64.real), dev),
    jax.device_put(np.ascontiguousarray(c64.imag), dev)))
parts = jax.jit(lambda z: (jnp.real(z), jnp.imag(z)))


def get_pair():
    r, i = parts(dc)
    h = np.empty(c64.shape, np.complex64)
    h.real = np.asarray(r)
    h.imag = np.asarray(i)
    return h


out["get_c64_as_pair"] = t(get_pair)
out["host_c128_to_c64"] = t(lambda: c128.astype(np.complex64))
out["host_f32_to_f64"] = t(lambda: x32.astype(np.float64))
a = inputs(2048)
for name in ["spline_filter", "fourier_gaussian", "fourier_shift",
             "uniform_filter1d", "gaussian_filter", "label", "find_objects",
             "value_indices", "rotate", "map_coordinates"]:
    call = CALLS[name]
    args = [a[k] for k in call.takes]
    jargs = [jax.device_put(v, dev) for v in args]
    with devices.accelerated(dev):
        out[name + "_switch"] = t(lambda c=call, x=args: c.run(jn, *x), 3)
    out[name + "_jax"] = t(lambda c=call, x=jargs: c.run(jn, *x), 3)
    out[name + "_scipy"] = t(lambda c=call, x=args: c.run(ndi, *x), 3)
    print(name, out[name + "_switch"], out[name + "_jax"],
          out[name + "_scipy"], flush=True)
for name in ["spline_filter", "fourier_gaussian", "label", "value_indices"]:
    call = CALLS[name]
    args = [a[k] for k in call.takes]
    with devices.accelerated(dev):
        pr = cProfile.Profile()
        pr.enable()
        call.run(jn, *args)
        call.run(jn, *args)
        pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(25)
    out[name + "_profile"] = s.getvalue()
json.dump(out, open(sys.argv[1], "w"), indent=1)
print({k: v for k, v in out.items() if not k.endswith("profile")})
