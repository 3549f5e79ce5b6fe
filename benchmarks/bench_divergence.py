"""Benchmark jaxndimage.divergence on a small conv net over a [16, 32, 32, 3] batch.

Side by side, in one run:
- exact divergence (default chunk_size) against the dense baseline
  ``vmap(jacfwd(f_single))`` followed by a trace: wall time and peak memory;
- XLA memory of the exact method for several chunk sizes (compiled only);
- relative error of "hutchinson" and "hutch++" for num_probes 1, 4, 16, 64,
  averaged over 100 keys.

Peak memory is XLA's own compiled memory analysis
(``jax.jit(fn).lower(x).compile().memory_analysis()``): argument + output +
temporary buffers - aliased bytes, i.e. everything XLA's buffer assignment
allocates for the call. It does not count Python or allocator overhead.
Times are wall clock of the compiled call (compilation excluded), the minimum
of ``--repeat`` runs; they depend on whatever else the machine is doing.

Relative error for one key is ``||est - tr||_2 / ||tr||_2`` over the 16
samples, with ``tr`` the exact divergence; the table reports its mean over the
keys and the standard error of that mean.

Run ``python benchmarks/bench_divergence.py``; writes
``benchmarks/results/divergence.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxndimage import divergence

SHAPE = (16, 32, 32, 3)
HIDDEN = 4
PROBES = (1, 4, 16, 64)
METHODS = ("hutchinson", "hutch++")
MEMORY_CHUNKS = (16, 512, 3072)
RESULTS = Path(__file__).parent / "results" / "divergence.json"


def make_net(hidden: int = HIDDEN):
    """conv3x3(3->h) - tanh - conv3x3(h->h) - tanh - conv3x3(h->3), no skip connection."""
    rng = np.random.default_rng(0)
    shapes = [(3, 3, 3, hidden), (3, 3, hidden, hidden), (3, 3, hidden, 3)]
    ws = [
        jnp.asarray(rng.normal(size=s) / np.sqrt(9 * s[2]), jnp.float32) for s in shapes
    ]

    def conv(x, w):
        return jax.lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
        )

    def net(x):
        h = jnp.tanh(conv(x, ws[0]))
        h = jnp.tanh(conv(h, ws[1]))
        return conv(h, ws[2])

    return net


def dense_trace(net):
    def trace(x):
        d = x[0].size
        jac = jax.vmap(jax.jacfwd(lambda xi: net(xi[None])[0]))(x)
        return jnp.trace(jac.reshape(x.shape[0], d, d), axis1=1, axis2=2)

    return trace


def memory(compiled) -> dict:
    m = compiled.memory_analysis()
    peak = (
        m.argument_size_in_bytes
        + m.output_size_in_bytes
        + m.temp_size_in_bytes
        - m.alias_size_in_bytes
    )
    return {"peak_bytes": int(peak), "temp_bytes": int(m.temp_size_in_bytes)}


def timed(fn, *args, repeat: int) -> tuple[dict, jax.Array]:
    compiled = jax.jit(fn).lower(*args).compile()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        out = jax.block_until_ready(compiled(*args))
        best = min(best, time.perf_counter() - start)
    return {"time_s": best, **memory(compiled)}, out


def estimates(net, x, method: str, num_probes: int, keys: jax.Array) -> jax.Array:
    """[n_keys, k] estimates; several keys vmapped together, ~256 tangents per pass."""

    def one(key):
        return divergence(net, x, method=method, key=key, num_probes=num_probes)

    batch = max(1, 256 // num_probes)
    return jax.jit(lambda keys: jax.lax.map(one, keys, batch_size=batch))(keys)


def estimator_errors(net, x, exact, n_keys: int) -> list[dict]:
    keys = jax.random.split(jax.random.key(2024), n_keys)
    rows = []
    for method in METHODS:
        for m in PROBES:
            start = time.perf_counter()
            est = np.asarray(estimates(net, x, method, m, keys))
            seconds = time.perf_counter() - start
            rel = np.linalg.norm(est - exact, axis=1) / np.linalg.norm(exact)
            rows.append(
                {
                    "method": method,
                    "num_probes": m,
                    "rel_err_mean": float(rel.mean()),
                    "rel_err_se": float(rel.std(ddof=1) / np.sqrt(n_keys)),
                    "seconds_all_keys_incl_compile": seconds,
                }
            )
            print(f"  {method:<10} m={m:<3} rel err {rel.mean():.4f}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per method")
    parser.add_argument(
        "--keys", type=int, default=100, help="keys per estimator setting"
    )
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    net = make_net()
    x = jnp.asarray(np.random.default_rng(1).normal(size=SHAPE), jnp.float32)
    d = x[0].size

    print("dense vmap(jacfwd) + trace ...", flush=True)
    dense, dense_out = timed(dense_trace(net), x, repeat=args.repeat)
    print("exact divergence ...", flush=True)
    exact, exact_out = timed(lambda x: divergence(net, x), x, repeat=args.repeat)
    exact["max_abs_diff_vs_dense"] = float(jnp.max(jnp.abs(exact_out - dense_out)))
    exact["max_rel_diff_vs_dense"] = float(
        jnp.max(jnp.abs(exact_out - dense_out) / jnp.abs(dense_out))
    )

    chunk_memory = []
    for c in MEMORY_CHUNKS:
        compiled = (
            jax.jit(lambda x, c=c: divergence(net, x, chunk_size=c)).lower(x).compile()
        )
        chunk_memory.append({"chunk_size": c, **memory(compiled)})

    print(f"estimators over {args.keys} keys ...", flush=True)
    estimators = estimator_errors(net, x, np.asarray(exact_out), args.keys)

    results = {
        "setup": {
            "x_shape": list(SHAPE),
            "dtype": "float32",
            "net": (
                f"conv3x3(3->{HIDDEN})-tanh-conv3x3({HIDDEN}->{HIDDEN})"
                f"-tanh-conv3x3({HIDDEN}->3)"
            ),
            "D_per_sample": d,
            "default_chunk_size": max(1, 2**22 // x.size),
            "exact_trace_mean": float(jnp.mean(exact_out)),
            "memory_measure": (
                "XLA compiled memory_analysis: argument + output + temp - alias bytes"
            ),
            "time_measure": f"min of {args.repeat} runs of the compiled call, compile excluded",
            "jax": jax.__version__,
            "backend": jax.default_backend(),
            "device": str(jax.devices()[0]),
            "cpu_count": os.cpu_count(),
            "machine": platform.machine(),
            "load_average_1min_before_after": [load_before, os.getloadavg()[0]],
        },
        "dense_vmap_jacfwd": dense,
        "exact": exact,
        "exact_memory_by_chunk_size": chunk_memory,
        "estimators": estimators,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")

    mib = 2.0**20
    print()
    print(f"x {SHAPE} float32, D = {d}, {results['setup']['net']}")
    print(
        f"{os.cpu_count()} CPUs, 1-min load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after"
    )
    print(f"{'method':<28}{'time (s)':>10}{'peak MiB':>11}")
    print(
        f"{'vmap(jacfwd) + trace':<28}{dense['time_s']:>10.2f}{dense['peak_bytes'] / mib:>11.1f}"
    )
    label = f"exact (chunk_size={results['setup']['default_chunk_size']})"
    print(f"{label:<28}{exact['time_s']:>10.2f}{exact['peak_bytes'] / mib:>11.1f}")
    for row in chunk_memory:
        label = f"exact (chunk_size={row['chunk_size']})"
        print(f"{label:<28}{'-':>10}{row['peak_bytes'] / mib:>11.1f}")
    print(
        f"exact vs dense: max relative difference {exact['max_rel_diff_vs_dense']:.1e}"
    )
    print()
    print(f"relative error, mean (standard error) over {args.keys} keys")
    print(f"{'num_probes':<12}" + "".join(f"{m:>18}" for m in METHODS))
    for m in PROBES:
        cells = [r for r in estimators if r["num_probes"] == m]
        print(
            f"{m:<12}"
            + "".join(
                f"{r['rel_err_mean']:>10.4f} ({r['rel_err_se']:.4f})" for r in cells
            )
        )
    print(f"\nwrote {RESULTS}")


if __name__ == "__main__":
    main()
