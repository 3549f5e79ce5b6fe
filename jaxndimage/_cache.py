"""A persistent cache of jaxndimage's compiled kernels.

A script's first call of a filter on a new shape pays for tracing and XLA
compilation (hundreds of milliseconds on a CPU).  This module keeps the
compiled executables of jaxndimage's own kernels on disk, so the next process
that makes the same call loads the executable instead (milliseconds).

Why not JAX's persistent compilation cache?  Turning it on means setting the
global options ``jax_compilation_cache_dir`` and (since our kernels compile
in well under its default one-second threshold)
``jax_persistent_cache_min_compile_time_secs``.  Both change how the user's
own programs are compiled and cached, and JAX initialises its cache once per
process, so a directory chosen by a library would also shadow one the user
sets later.  Instead this cache serialises only jaxndimage's executables
(``jax.experimental.serialize_executable``) into a directory of its own, and
touches no JAX option.  The trade-off: it covers concrete calls (numpy input,
or JAX arrays outside ``jit``); calls traced inside a user's ``jit``/``vmap``
compile as part of the user's program, under the user's cache settings.

Where and how to switch it off
------------------------------
* ``JAXNDIMAGE_CACHE=0`` turns it off.
* ``JAXNDIMAGE_CACHE_DIR`` picks the directory; the default is
  ``$XDG_CACHE_HOME/jaxndimage`` (``~/.cache/jaxndimage``), or
  ``%LOCALAPPDATA%\\jaxndimage`` on Windows, ``~/Library/Caches/jaxndimage``
  on macOS.
* When the user has configured JAX's own persistent cache
  (``jax_compilation_cache_dir``), this cache stands aside and JAX's serves.

Entries are keyed by the kernel, its static arguments, the argument types,
the JAX/jaxlib versions, the device and a digest of jaxndimage's sources, so
an upgrade never loads a stale kernel.  Like JAX's cache, the directory is
trusted: it holds executable code, so it is created private to the user.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax

__all__ = ["cache_dir", "cache_enabled", "cached_jit", "stats"]

#: Counters of this process: kernels compiled, loaded from disk, failures.
stats: dict[str, int] = {"compiled": 0, "loaded": 0, "errors": 0}


def cache_dir() -> Path:
    """The directory compiled kernels are kept in."""
    override = os.environ.get("JAXNDIMAGE_CACHE_DIR")
    if override:
        return Path(override)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home()))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME",
                                   Path.home() / ".cache"))
    return base / "jaxndimage"


def cache_enabled() -> bool:
    """False when switched off or when JAX's own persistent cache is set."""
    if os.environ.get("JAXNDIMAGE_CACHE", "1").lower() in ("0", "false",
                                                           "no", "off"):
        return False
    return not jax.config.jax_compilation_cache_dir


@functools.cache
def _source_digest(module_name: str) -> str:
    """A digest of the JAX installation and of the sources of ``module_name``
    and of the jaxndimage modules it imports from."""
    import jaxlib

    digest = hashlib.sha256()
    digest.update(f"{jax.__version__} {jaxlib.__version__}".encode())
    digest.update(os.environ.get("XLA_FLAGS", "").encode())
    module = sys.modules[module_name]
    names = {module_name}
    for value in vars(module).values():
        owner = (value.__name__ if isinstance(value, types.ModuleType)
                 else getattr(value, "__module__", None))
        if isinstance(owner, str) and owner.startswith("jaxndimage"):
            names.add(owner)
    for name in sorted(names):
        path = getattr(sys.modules.get(name), "__file__", None)
        if path:
            digest.update(name.encode())
            digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def _device_key() -> str:
    device = jax.devices()[0]
    return (f"{device.platform}:{device.device_kind}:{jax.device_count()}:"
            f"{os.environ.get('XLA_FLAGS', '')}")


def _concrete(leaves: list[Any]) -> bool:
    """True when no leaf is traced and every array lives on device 0."""
    device = jax.devices()[0]
    for leaf in leaves:
        if isinstance(leaf, jax.core.Tracer):
            return False
        if isinstance(leaf, jax.Array) and (
                leaf.is_deleted() or leaf.sharding.device_set != {device}):
            return False
    return True


def _aval_key(leaf: Any) -> Any:
    """What the compiled kernel depends on in an argument: its shape and
    dtype (and JAX's weak-type flag)."""
    if isinstance(leaf, jax.Array):
        return (leaf.shape, leaf.dtype.name, leaf.weak_type)
    return str(jax.typeof(leaf))


def _load(path: Path) -> Any | None:
    from jax.experimental import serialize_executable

    try:
        payload, in_tree, out_tree = pickle.loads(path.read_bytes())
        return serialize_executable.deserialize_and_load(payload, in_tree,
                                                         out_tree)
    except Exception:  # noqa: BLE001 (corrupt or stale entry: recompile)
        stats["errors"] += 1
        return None


def _store(path: Path, compiled: Any) -> None:
    from jax.experimental import serialize_executable

    try:
        data = pickle.dumps(serialize_executable.serialize(compiled))
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent,
                                             suffix=".tmp")
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except Exception:  # noqa: BLE001 (a full disk must not break a filter)
        stats["errors"] += 1


def cached_jit(static_argnames: tuple[str, ...] = ()
               ) -> Callable[[Callable], Callable]:
    """``jax.jit`` whose concrete calls are compiled once per machine.

    Traced calls go straight to the jitted function.  Concrete calls look up
    the executable in memory, then on disk, and compile (and store) it only
    when both miss.  Static arguments must be passed by keyword.  The jitted
    function is available as ``.jitted``.
    """

    def decorate(fun: Callable) -> Callable:
        jitted = jax.jit(fun, static_argnames=static_argnames)
        memory: dict[tuple, Any] = {}

        @functools.wraps(fun)
        def call(*args: Any, **kwargs: Any) -> Any:
            leaves, treedef = jax.tree.flatten(args)
            if not cache_enabled() or not _concrete(leaves):
                return jitted(*args, **kwargs)
            key = (treedef, tuple(_aval_key(leaf) for leaf in leaves),
                   tuple(sorted(kwargs.items())),
                   bool(jax.config.jax_enable_x64))
            compiled = memory.get(key)
            if compiled is None:
                name = hashlib.sha256(repr((
                    fun.__module__, fun.__qualname__, str(key[0]), key[1:],
                    _device_key(), _source_digest(fun.__module__),
                )).encode()).hexdigest()
                stem = fun.__name__.strip("<>")
                path = cache_dir() / f"{stem}-{name[:32]}.bin"
                compiled = _load(path) if path.exists() else None
                if compiled is None:
                    compiled = jitted.lower(*args, **kwargs).compile()
                    stats["compiled"] += 1
                    _store(path, compiled)
                else:
                    stats["loaded"] += 1
                memory[key] = compiled
            try:
                return compiled(*args)
            except jax.errors.JaxRuntimeError:
                # An entry that does not fit this process (another device
                # layout): forget it and run the plain jitted function.
                stats["errors"] += 1
                memory.pop(key, None)
                return jitted(*args, **kwargs)

        call.jitted = jitted  # type: ignore[attr-defined]
        call.lower = jitted.lower  # type: ignore[attr-defined]
        return call

    return decorate
