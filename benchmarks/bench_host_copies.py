"""What a result's last step to the host costs, on the device JAX has.

    python benchmarks/bench_host_copies.py OUT.json

At 2048² float32 (median of warm calls, seconds): widening to float64 on
the host (``astype``), the same copy into memory already touched
(``copyto_touched``), allocating and touching a fresh float64 array
(``empty_touch_f64``), fetching a float32 result from the device with and
without widening it on the host, and fetching it widened on the device
(with JAX's 64-bit types on; ``device_widen_exact``: whether that gives
the host's values).
"""

import json
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np


def t(f, n=7):
    f()
    s = []
    for _ in range(n):
        a = time.perf_counter()
        f()
        s.append(time.perf_counter() - a)
    return float(np.median(s))


out = {}
x = np.random.default_rng(0).random((2048, 2048), np.float32)
buf = np.empty(x.shape, np.float64)
out["astype_f64"] = t(lambda: x.astype(np.float64))
out["copyto_touched"] = t(lambda: np.copyto(buf, x))
out["empty_touch_f64"] = t(lambda: np.ones(x.shape, np.float64))
d = jax.device_put(x)
out["get_f32"] = t(lambda: np.asarray(d + 0))
out["get_f32_astype"] = t(lambda: np.asarray(d + 0).astype(np.float64))
with jax.enable_x64(True):
    widen = jax.jit(lambda a: a.astype(jnp.float64))
    w = widen(d)
    out["get_f64_widened_on_device"] = t(lambda: np.asarray(widen(d)))
    out["device_widen_exact"] = bool(
        np.array_equal(np.asarray(w), x.astype(np.float64)))
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(out)
