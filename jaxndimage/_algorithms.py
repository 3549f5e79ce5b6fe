"""Which algorithm each family of kernels runs on each kind of device.

A CPU runs scatters, gathers and long sequential loops well; a GPU or TPU
serialises each scattered or gathered point and each small step of a
loop, and runs dense work (elementwise steps, reductions, scans, matrix
products) fast.  Where the two call for different algorithms, both are
kept, they give the same answers (the tests run both on every machine,
see :func:`as_on`), and this table says which one a call runs.  The
choice is made on the host when a call is planned, for the device the
call computes on (:func:`jaxndimage._cache.current_device`), and is a
static argument of the kernels, so each device keeps its own programs.
The measurements behind each choice are ``benchmarks/bench_algorithms.py``'s
``benchmarks/results/algorithms-tpu-v5e.json`` and ``algorithms-cpu.json``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from jaxndimage._cache import current_device

__all__ = ["ALGORITHMS", "algorithm", "as_on"]

#: family -> {"cpu": algorithm, "accelerator": algorithm}, and "tpu" where
#: a TPU runs another algorithm than the other accelerators.
ALGORITHMS: dict[str, dict[str, str]] = {
    # Per-label sums, counts, extremes, histograms and bounding boxes:
    # XLA's segment reductions (scatters), or products of one-hot matrices
    # and reductions over chunks of points (`_dense_groups`).
    "per-label reductions": {"cpu": "scatter", "accelerator": "dense"},
    # Binary propagation to convergence in 2-D (`binary_propagation`,
    # `binary_fill_holes`, iterations < 1): raster passes row by row, or
    # doubling scans along the runs of both axes (`_propagation`).
    "binary propagation": {"cpu": "raster", "accelerator": "runs"},
    # `binary_fill_holes` by a symmetric structure: the background features
    # labelled, those touching the edges kept (a gather per point); or the
    # propagation of the edges' background (above).
    "hole filling": {"cpu": "labels", "accelerator": "propagation"},
    # `label`: union-find over runs (`_labelling`), or the minimum of flat
    # indices propagated along runs (`_propagation`).
    "label": {"cpu": "union-find", "accelerator": "propagation"},
    # Affine maps of planes (`affine_transform` of 2-D input with a
    # concrete matrix, `rotate`) and concrete points of 2-D input that lie
    # close together (`map_coordinates`, `geometric_transform`): per point,
    # gathers of the neighbours; or per tile of points, one slice of the
    # input and one-hot matrix products (`_interpolation._points_tiled`).
    "affine interpolation": {"cpu": "gathers", "accelerator": "tiles"},
    # `distance_transform_edt` (exact-shape kernels), the passes along axes
    # 1, 2, ...: Maurer's stack along each line (a scan, with a small loop
    # per position), or each element against those s away along the axis,
    # s = 1, 2, ... until none farther can be nearer (`_distance`).
    "euclidean distance": {"cpu": "stack", "accelerator": "shifts"},
    # `distance_transform_bf` of JAX arrays: every element against one
    # border element per step of a scan, or against a block of them per
    # step, the nearest of each block found by one reduction (`_distance`).
    "brute-force distance": {"cpu": "scan", "accelerator": "blocks"},
    # `distance_transform_cdt` by the chessboard or taxicab structure
    # (exact-shape kernels): a program per scan and per transpose (XLA's
    # CPU backend compiles a transpose fused with its neighbours to a
    # strided loop), or all of them in one program (each launch on an
    # accelerator costs as much as the scans of a large image).
    "chamfer stages": {"cpu": "programs", "accelerator": "one program"},
    # The doubling scans along runs (`_propagation.along_runs`: binary
    # propagation by runs, label propagation): each step materialised
    # behind an optimisation barrier, left to XLA to fuse (on an
    # accelerator the fused program compiles in less time and runs
    # faster), or on a TPU every step of a block of lines in on-chip
    # memory (`_chip_scans`, Pallas).
    "run scans": {"cpu": "materialised steps", "accelerator": "fused steps",
                  "tpu": "on-chip steps"},
}

_forced: str | None = None


def algorithm(family: str) -> str:
    """The algorithm of ``family`` (a key of `ALGORITHMS`) for the device
    the current call computes on."""
    kind = _forced or {"cpu": "cpu", "tpu": "tpu"}.get(
        current_device().platform, "accelerator")
    choices = ALGORITHMS[family]
    return choices.get(kind, choices["accelerator"])


@contextlib.contextmanager
def as_on(kind: str) -> Iterator[None]:
    """Within the block, calls choose the algorithms of ``kind`` ("cpu",
    "accelerator" or "tpu") whatever their device: how the tests run an
    accelerator's algorithms on a CPU (a TPU's Pallas kernels in Pallas'
    interpreter)."""
    global _forced
    if kind not in ("cpu", "accelerator", "tpu"):
        raise ValueError(f"kind: expected 'cpu', 'accelerator' or 'tpu', "
                         f"got {kind!r}")
    before, _forced = _forced, kind
    try:
        yield
    finally:
        _forced = before
