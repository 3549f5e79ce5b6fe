"""Counting XLA compilations over many shapes, for the compile-count tests.

Imported as ``from compilations import counting_compilations, distinct_shapes``:
pytest puts this directory on ``sys.path``.  ``distinct_shapes`` lives in
``jaxndimage._catalogue``, which the benchmarks share.  The listener is registered
once, when this module is first imported.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import jax

from jaxndimage._catalogue import distinct_shapes  # noqa: F401 (re-exported)

_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
_compiles = [0]


def _count(event: str, duration: float, **kwargs) -> None:
    if event == _COMPILE_EVENT:
        _compiles[0] += 1


jax.monitoring.register_event_duration_secs_listener(_count)


@contextlib.contextmanager
def counting_compilations() -> Iterator[list[int]]:
    """Counts every XLA compilation in the block (``counted[0]``)."""
    counted = [0]
    start = _compiles[0]
    try:
        yield counted
    finally:
        counted[0] = _compiles[0] - start
