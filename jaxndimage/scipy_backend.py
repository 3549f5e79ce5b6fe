"""Run unmodified SciPy code on jaxndimage by patching ``scipy.ndimage``.

:func:`patch` replaces every ``scipy.ndimage.<name>`` that jaxndimage
implements by the jaxndimage function (and ``skimage.util.view_as_blocks``,
``view_as_windows`` and ``montage`` when scikit-image is installed); every
other name stays SciPy's.  Code that looks functions up when it calls them
(``ndimage.gaussian_filter(...)``) or imports them after the patch
(``from scipy.ndimage import gaussian_filter``) then runs on jaxndimage;
names imported before the patch keep SciPy's function.

:func:`unpatch` puts SciPy's own function objects back.  :func:`patched` is
the same as a context manager; entering it from several threads, nested or
not, is safe: the patch stays while any user of it is active.

Examples
--------
>>> import numpy as np
>>> from scipy import ndimage
>>> from jaxndimage import scipy_backend
>>> original = ndimage.gaussian_filter
>>> with scipy_backend.patched() as calls:
...     result = ndimage.gaussian_filter(np.eye(4), 1.0)
...     ndimage.gaussian_filter.__module__
'jaxndimage._filters'
>>> dict(calls)
{'scipy.ndimage.gaussian_filter': 1}
>>> ndimage.gaussian_filter is original
True
"""

from __future__ import annotations

import collections
import contextlib
import functools
import importlib
import threading
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

__all__ = ["is_patched", "patch", "patched", "routed_names", "unpatch"]

_SKIMAGE_NAMES = ("view_as_blocks", "view_as_windows", "montage")

_lock = threading.RLock()
_originals: dict[tuple[str, str], Any] = {}  # (module, name) -> SciPy's
_explicit = False  # patch() called and not undone
_contexts = 0  # patched() blocks being run
_records: list[MutableMapping[str, int]] = []  # counters of routed calls
_explicit_record: MutableMapping[str, int] | None = None


def _targets() -> list[tuple[Any, str, Callable]]:
    """(module, name, jaxndimage function) for every name to route."""
    import scipy.ndimage

    import jaxndimage

    targets = [(scipy.ndimage, name, getattr(jaxndimage, name))
               for name in jaxndimage.__all__
               if hasattr(scipy.ndimage, name)
               and callable(getattr(jaxndimage, name))]
    try:
        skimage_util = importlib.import_module("skimage.util")
    except ImportError:
        return targets
    targets += [(skimage_util, name, getattr(jaxndimage, name))
                for name in _SKIMAGE_NAMES
                if hasattr(jaxndimage, name) and hasattr(skimage_util, name)]
    return targets


def routed_names() -> list[str]:
    """Qualified names that :func:`patch` routes to jaxndimage.

    Examples
    --------
    >>> "scipy.ndimage.gaussian_filter" in routed_names()
    True
    """
    return [f"{module.__name__}.{name}" for module, name, _ in _targets()]


def _router(qualified: str, function: Callable) -> Callable:
    """``function`` under SciPy's name, counting calls into active records."""

    @functools.wraps(function)
    def routed(*args, **kwargs):
        if _records:
            with _lock:
                for record in _records:
                    record[qualified] = record.get(qualified, 0) + 1
        return function(*args, **kwargs)

    routed.__jaxndimage_routed__ = True
    return routed


def _install() -> None:
    for module, name, function in _targets():
        key = (module.__name__, name)
        if key in _originals:
            continue
        _originals[key] = getattr(module, name)
        setattr(module, name, _router(f"{module.__name__}.{name}", function))


def _uninstall() -> None:
    for (module_name, name), original in _originals.items():
        setattr(importlib.import_module(module_name), name, original)
    _originals.clear()


def is_patched() -> bool:
    """Whether SciPy's functions are routed to jaxndimage now."""
    return bool(_originals)


def patch(*, record: MutableMapping[str, int] | None = None) -> None:
    """Route ``scipy.ndimage`` (and ``skimage.util``'s patch tools) to
    jaxndimage until :func:`unpatch`.

    Calling it again changes nothing (except registering another record).

    Parameters
    ----------
    record : dict-like, optional
        Counts routed calls, as ``{"scipy.ndimage.<name>": calls}``, until
        :func:`unpatch`.

    Examples
    --------
    >>> from scipy import ndimage
    >>> original = ndimage.sobel
    >>> patch(); patch()
    >>> ndimage.sobel.__module__
    'jaxndimage._filters'
    >>> unpatch()
    >>> ndimage.sobel is original
    True
    """
    global _explicit, _explicit_record
    with _lock:
        _install()
        _explicit = True
        if record is not None and not any(r is record for r in _records):
            if _explicit_record is not None:
                _records.remove(_explicit_record)
            _records.append(record)
            _explicit_record = record


def unpatch() -> None:
    """Undo :func:`patch`: SciPy's own function objects are back, unless a
    :func:`patched` block is still running, which restores them when it
    ends.  Calling it when nothing is patched changes nothing."""
    global _explicit, _explicit_record
    with _lock:
        _explicit = False
        if _explicit_record is not None:
            _records.remove(_explicit_record)
            _explicit_record = None
        if not _contexts:
            _uninstall()


@contextlib.contextmanager
def patched(*, record: MutableMapping[str, int] | None = None
            ) -> Iterator[MutableMapping[str, int]]:
    """Route SciPy to jaxndimage inside a ``with`` block.

    Yields the record of routed calls: ``record`` if given, else a new
    :class:`collections.Counter`.
    """
    global _contexts
    record = collections.Counter() if record is None else record
    with _lock:
        _install()
        _contexts += 1
        _records.append(record)
    try:
        yield record
    finally:
        with _lock:
            _contexts -= 1
            for index, active in enumerate(_records):
                if active is record:
                    del _records[index]
                    break
            if not _contexts and not _explicit:
                _uninstall()
