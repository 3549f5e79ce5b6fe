"""Timing utilities shared by ``benchmarks/run.py`` and ``python -m jaxndimage``.

Machines that run these are often busy with other work, so every comparison
is *interleaved*: the candidates run in turn (A, B, A, B, ...) and each is
summarised by its median, so a burst of load hits all of them alike and the
ratio stays fair.  First-call latency (tracing and compiling included) is
measured separately, once, on a shape not seen before.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "Comparison",
    "bandwidth_bound_time",
    "block",
    "compare",
    "conversion_time",
    "first_call",
    "interleaved",
    "median",
    "memory_bandwidth",
]


def block(value: Any) -> Any:
    """Wait for every JAX array in ``value`` (a pytree) to be computed."""
    import jax

    return jax.block_until_ready(value)


def median(samples: list[float]) -> float:
    """The median of ``samples`` (NaN when empty)."""
    return statistics.median(samples) if samples else float("nan")


def _elapsed(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    block(fn())
    return time.perf_counter() - start


def first_call(fn: Callable[[], Any]) -> float:
    """Seconds taken by one call of ``fn``, results waited for.

    Call it before anything else has run ``fn`` on this shape to measure
    first-call latency (tracing and compilation included).
    """
    return _elapsed(fn)


def interleaved(fns: Mapping[str, Callable[[], Any]], repeat: int = 7,
                warmup: int = 1, budget: float | None = None
                ) -> dict[str, list[float]]:
    """Time several zero-argument callables in turn, ``repeat`` rounds.

    Each round calls every function once, in order, so load on the machine
    hits them alike.  ``warmup`` untimed rounds run first.  With ``budget``
    (seconds), rounds stop early once it is spent (at least three are kept).

    Returns
    -------
    dict
        Name to the list of per-call times in seconds.
    """
    for _ in range(warmup):
        for fn in fns.values():
            block(fn())
    times: dict[str, list[float]] = {name: [] for name in fns}
    start = time.perf_counter()
    for round_ in range(repeat):
        for name, fn in fns.items():
            times[name].append(_elapsed(fn))
        if (budget is not None and round_ >= 2
                and time.perf_counter() - start > budget):
            break
    return times


@dataclass
class Comparison:
    """One side-by-side measurement of a reference and a candidate.

    Times are in seconds; ``ratio`` is reference / candidate warm medians
    (above 1 means the candidate is faster).
    """

    name: str
    reference: float
    candidate: float
    first: float = float("nan")
    samples: dict[str, list[float]] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.reference / self.candidate if self.candidate else float(
            "nan")

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "reference_s": self.reference,
                "candidate_s": self.candidate, "first_call_s": self.first,
                "ratio": self.ratio}


def compare(name: str, reference: Callable[[], Any],
            candidate: Callable[[], Any], repeat: int = 7,
            budget: float | None = None,
            measure_first: bool = True) -> Comparison:
    """Time ``candidate`` against ``reference``: first call, then interleaved
    warm runs.

    ``measure_first`` times the candidate's first call before any warm-up,
    so call it on a shape the candidate has not compiled yet.
    """
    first = first_call(candidate) if measure_first else float("nan")
    times = interleaved({"reference": reference, "candidate": candidate},
                        repeat=repeat, warmup=0 if measure_first else 1,
                        budget=budget)
    return Comparison(name, median(times["reference"]),
                      median(times["candidate"]), first, times)


def conversion_time(array: np.ndarray, repeat: int = 7) -> float:
    """Seconds jaxndimage spends moving ``array`` to JAX and a result of the
    same size back to numpy (``to_jax`` and ``from_jax``): what a shell that
    runs eager JAX code on host input pays.  The window filters and
    interpolation hand host arrays to their kernels as numpy instead (the
    canvas filters copy their input into an aligned canvas), so for them
    this is an upper bound.

    Each result handed back is a fresh JAX array, as a filter's result is.
    """
    import jax
    import jax.numpy as jnp

    from jaxndimage._dispatch import from_jax, to_jax

    fresh = jax.jit(lambda a: a + jnp.ones((), a.dtype))
    with jax.enable_x64(True):
        source = to_jax(array)
        inward, outward = [], []
        for _ in range(repeat):
            inward.append(_elapsed(lambda: to_jax(array)))
            result = block(fresh(source))
            start = time.perf_counter()
            from_jax(result)
            outward.append(time.perf_counter() - start)
    return median(inward) + median(outward)


def memory_bandwidth(nbytes: int = 1 << 28, repeat: int = 5) -> float:
    """The machine's copy bandwidth in bytes per second (read plus write).

    Copies ``nbytes`` with ``numpy.copyto`` (one thread, streaming) and with
    a jitted JAX copy (XLA's threads); the faster of the two medians counts.
    """
    import jax

    source = np.ones(nbytes // 8, np.float64)
    target = np.empty_like(source)
    with jax.enable_x64(True):
        device = jax.device_put(source)
        # Negation cannot be simplified away: a real read and write.
        negate = jax.jit(lambda a: -a)
        times = interleaved({
            "numpy": lambda: np.copyto(target, source),
            "jax": lambda: negate(device),
        }, repeat=repeat)
    best = min(median(times["numpy"]), median(times["jax"]))
    return 2 * source.nbytes / best


def bandwidth_bound_time(nbytes_moved: int, bandwidth: float) -> float:
    """The least time moving ``nbytes_moved`` can take at ``bandwidth``."""
    return nbytes_moved / bandwidth
