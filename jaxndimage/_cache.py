"""Compiled kernels for concrete calls, in memory and on disk.

With shape buckets (:mod:`jaxndimage._canvas`) a kernel compiles once per
configuration and bucket, so a process compiles a handful of programs.
This module keeps those programs:

* in memory, keyed by the static arguments and the argument types (a cheap
  tuple), so a warm call is one dictionary lookup and one call of the
  compiled executable;
* on disk, so the next process loads a program instead of compiling it.
  An entry is named by a digest of what was compiled: the JAX/jaxlib
  versions, the device, ``XLA_FLAGS``, JAX's x64 setting, the argument
  types, and the kernel with its static arguments and a digest of all of
  jaxndimage's sources (read once, at the first compilation), so an
  edited helper can never load a stale executable.  Where a static
  argument is not a plain value (a user's callable) or the sources cannot
  be read (a frozen application), the lowered program text itself stands
  in.  The directory is kept below a size (least recently used entries go
  first).

Why not JAX's persistent compilation cache?  It is switched on by global
options (``jax_compilation_cache_dir`` and a minimum compile time), which
would change how the user's own programs are cached; JAX offers no way to
cache one function's programs only.  When the user has configured JAX's
cache, this one stands aside and JAX's serves.

Under ``jax.disable_jit()`` kernels run op by op, as JAX does, and nothing
is compiled or stored.

* ``JAXNDIMAGE_CACHE=0`` turns the disk cache off.
* ``JAXNDIMAGE_CACHE_DIR`` picks the directory; the default is
  ``$XDG_CACHE_HOME/jaxndimage`` (``~/.cache/jaxndimage``), or
  ``%LOCALAPPDATA%\\jaxndimage`` on Windows, ``~/Library/Caches/jaxndimage``
  on macOS.
* ``JAXNDIMAGE_CACHE_MAX_MB`` bounds its size (default 512).

The directory holds executable code: it is created private to the user,
and an entry is read only where this user owns it and the directory and no
other user can write to either (a shared directory set by
``JAXNDIMAGE_CACHE_DIR`` is then neither read nor written).  Programs and
entries are per device (:func:`current_device`): platform and kind.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import functools
import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jax
import numpy as np

__all__ = ["LOOP_EMITTERS", "KernelCache", "KernelRefused", "SecondsSpent",
           "cache_dir",
           "cache_enabled", "cached_jit", "checking_arguments",
           "current_device", "kernel_entry", "resident", "stats"]

#: Counters of this process: programs compiled, loaded from disk, stored
#: on disk, failures, entries not read because another user could have
#: written them.
stats: dict[str, int] = {"compiled": 0, "loaded": 0, "stored": 0, "errors": 0,
                         "untrusted": 0}

#: CPU compiler options for XLA's loop emitters in place of its fusion
#: emitters.  The programs compute the same values; for the window kernels
#: and the gathers of interpolation they compile in less time and run as
#: fast or faster (the doubling windows of ``maximum_filter`` about five
#: times faster; ``benchmarks/bench_rank.py``), while the rank and the
#: segment-reduction kernels run slower with them.
LOOP_EMITTERS: dict[str, Any] = {"xla_cpu_use_fusion_emitters": False}


def current_device() -> jax.Device:
    """The device a concrete call computes on: JAX's default device where
    one is set (the dispatcher sets it for every call: the host's CPU for
    host arrays, the array's own device for JAX arrays), else JAX's first
    device.  Programs are compiled for it, and every table of programs is
    keyed by it."""
    device = jax.config.jax_default_device
    if device is None:
        return jax.devices()[0]
    if isinstance(device, str):
        return jax.devices(device)[0]
    return device


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


def _max_bytes() -> int:
    try:
        megabytes = float(os.environ.get("JAXNDIMAGE_CACHE_MAX_MB", 512))
    except ValueError:
        megabytes = 512
    return int(megabytes * 2 ** 20)


def argument_types(value: Any) -> Any:
    """What a compiled program depends on in an argument."""
    if type(value) is np.ndarray:
        return (value.shape, value.dtype, False)
    if isinstance(value, jax.Array | np.ndarray | np.generic):
        return (value.shape, value.dtype, getattr(value, "weak_type", False))
    if type(value) in (tuple, list):
        return (type(value), *(argument_types(v) for v in value))
    if value is None or isinstance(value, bool | int | float | complex):
        return type(value)
    leaves, tree = jax.tree.flatten(value)
    if len(leaves) == 1 and leaves[0] is value:  # a leaf of another type
        return type(value)
    return tree, tuple(argument_types(leaf) for leaf in leaves)  # a pytree node


@functools.cache
def _package_digest() -> str | None:
    """A digest of jaxndimage's own sources (its subpackages' included), or
    None where they cannot be read (a frozen application)."""
    digest = hashlib.sha256()
    root = Path(__file__).parent
    try:
        for path in sorted(root.rglob("*.py")):
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    except OSError:
        return None
    return digest.hexdigest()


def _plain(value: Any) -> bool:
    """True for static arguments whose repr is the same in every process."""
    if isinstance(value, tuple | list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, str | bytes | int | float
                                       | bool | np.dtype)


def _entry_name(jitted: Any, args: tuple, static: dict,
                lowered: Callable[[], Any], options: dict[str, Any]) -> str:
    """The name of a program's entry on disk.

    It digests the JAX installation, the device, ``XLA_FLAGS`` and the
    compiler options, the x64 setting in force at the call (it decides the
    dtypes a kernel computes and returns where its arguments do not, e.g.
    an ``argsort``'s indices), the arguments' tree structure and types, and
    then what determines the program: the jaxndimage kernel, its static
    arguments and jaxndimage's sources where those are plain values and
    readable, else the lowered program text itself (which costs a trace,
    but holds for any static argument, a callable's included).  JAX leaves
    unused arguments out of the text, but the executable still checks
    their types, hence the argument types.
    """
    import jaxlib

    device = current_device()
    parts = [jax.__version__, jaxlib.__version__, device.platform,
             device.device_kind, str(jax.device_count()),
             os.environ.get("XLA_FLAGS", ""), repr(sorted(options.items())),
             str(jax.dtypes.canonicalize_dtype(np.float64)),  # the x64 scope
             str(jax.tree.structure(args)),
             str([jax.typeof(leaf) for leaf in jax.tree.leaves(args)])]
    function = getattr(jitted, "__wrapped__", jitted)
    module = getattr(function, "__module__", None) or ""
    sources = _package_digest()
    if (sources is not None and module.startswith("jaxndimage")
            and _plain(list(static.values()))):
        parts += [sources, module, function.__qualname__,
                  repr(sorted(static.items()))]
    else:
        parts.append(lowered().as_text())
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:40] + ".bin"


def _private(path: Path) -> bool:
    """True if ``path`` is owned by this process's user and no other user
    can write to it.  Where the platform has no user ids (Windows), the
    per-user default directory is taken as private."""
    if not hasattr(os, "getuid"):
        return True
    try:
        status = path.stat()
    except OSError:
        return False
    return status.st_uid == os.getuid() and not status.st_mode & 0o022


def _trusted(path: Path) -> bool:
    """True if the entry at ``path`` may be loaded.

    An entry is unpickled and its machine code run: only an entry that this
    user owns, in a directory that this user owns and no other user can
    write to (so no other user could have put or replaced it there), is
    read.
    """
    return _private(path.parent) and _private(path)


def _load(path: Path, device: jax.Device) -> Any | None:
    from jax.experimental import serialize_executable

    if not _trusted(path):
        stats["untrusted"] += 1
        return None
    try:
        payload, in_tree, out_tree = pickle.loads(path.read_bytes())
        compiled = serialize_executable.deserialize_and_load(
            payload, in_tree, out_tree, execution_devices=[device])
    except Exception:  # noqa: BLE001 (a corrupt or foreign entry: recompile)
        stats["errors"] += 1
        return None
    os.utime(path)  # recently used: evicted last
    return compiled


def _evict(directory: Path, budget: int) -> int:
    """Delete the least recently used entries until ``directory`` fits;
    the size left."""
    entries = sorted(directory.glob("*.bin"), key=lambda p: p.stat().st_mtime)
    total = sum(p.stat().st_size for p in entries)
    for path in entries:
        if total <= budget:
            break
        total -= path.stat().st_size
        path.unlink(missing_ok=True)
    return total


#: Bytes this process believes each directory holds.  Other processes
#: write too, so a directory is recounted every `_RECOUNT` stores as well as
#: whenever its estimate exceeds the budget.
_estimates: dict[Path, int] = {}
_RECOUNT = 64


def _store(path: Path, compiled: Any) -> None:
    from jax.experimental import serialize_executable

    try:
        data = pickle.dumps(serialize_executable.serialize(compiled))
        directory = path.parent
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(directory):
            stats["untrusted"] += 1
            return  # what others could replace is never read: not stored
        handle, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
        stats["stored"] += 1
        estimate = _estimates.get(directory)
        budget = _max_bytes()
        if (estimate is None or estimate + len(data) > budget
                or stats["stored"] % _RECOUNT == 0):
            _estimates[directory] = _evict(directory, budget)
        else:
            _estimates[directory] = estimate + len(data)
    except Exception:  # noqa: BLE001 (a full disk must not break a filter)
        stats["errors"] += 1


class KernelRefused(BaseException):
    """Raised at the entry of the first kernel a call reaches inside
    :func:`checking_arguments`.  A BaseException, so that no ``except
    Exception`` on the way catches it."""


_checking_arguments = contextvars.ContextVar("checking_arguments",
                                             default=False)


@contextlib.contextmanager
def checking_arguments() -> Iterator[None]:
    """Within the block a call stops at the entry of its first kernel
    (:class:`KernelRefused`): it checks its arguments and runs nothing."""
    token = _checking_arguments.set(True)
    try:
        yield
    finally:
        _checking_arguments.reset(token)


def kernel_entry() -> None:
    """Called where a kernel is about to run (see `checking_arguments`)."""
    if _checking_arguments.get():
        raise KernelRefused


#: The most compiled programs all kernel caches keep in memory together;
#: beyond it the least recently used is dropped (and loaded from disk, or
#: compiled, again when next needed), and its machine code unmapped (see
#: :meth:`KernelCache._compile`).  Each program holds tens of memory
#: mappings (the measurements' kernels about fifty): this many leave most
#: of Linux's 65 530 mappings per process to everything else, where a
#: process that kept every program it compiled would exhaust them, and
#: XLA's compiler then crashes.
MOST_PROGRAMS = 512

#: (kernel cache, key) of every program in memory, least recently used
#: first.
_recent: collections.OrderedDict[tuple[int, tuple], KernelCache] = (
    collections.OrderedDict())


def _used(cache: KernelCache, key: tuple) -> None:
    """Record a use of ``cache.memory[key]``; drop the least recently used
    program of all caches while more than `MOST_PROGRAMS` are kept."""
    _recent[id(cache), key] = cache
    _recent.move_to_end((id(cache), key))
    while len(_recent) > MOST_PROGRAMS:
        (_, old), owner = _recent.popitem(last=False)
        owner.memory.pop(old, None)


#: Host values of at most this many bytes (numpy arrays and scalars,
#: Python numbers: a kernel's weights, sigmas, origins, cval) that a kernel
#: on an accelerator takes are copied to the device once and reused
#: (:func:`resident`).  Each copy to a TPU costs as much as the launch of
#: a small program (``benchmarks/results/``); a filter's few operands, sent
#: anew with every call, took longer than its work.
RESIDENT_BYTES = 4096

#: The most such copies kept, together; the least recently used go first.
MOST_RESIDENT = 512

#: (device, x64, type, dtype, shape, bytes) -> the value on that device.
_resident: collections.OrderedDict[tuple, jax.Array] = (
    collections.OrderedDict())


def _resident_key(value: Any) -> tuple | None:
    """What identifies a small host value's copy (its bits, so -0.0 and 0.0
    differ), or None for anything else."""
    if type(value) in (bool, int, float, complex):
        try:
            bits = np.asarray(value).tobytes()
        except OverflowError:
            return None
        return (type(value), bits)
    if type(value) is np.ndarray or isinstance(value, np.generic):
        if value.nbytes > RESIDENT_BYTES or value.dtype.hasobject:
            return None
        return (type(value), value.dtype, value.shape, value.tobytes())
    return None


def resident(args: tuple, device: jax.Device) -> tuple:
    """``args`` with each small host value (see `RESIDENT_BYTES`) replaced
    by its copy on ``device``: the same value, dtype and weak type, so the
    program compiled for ``args`` takes it; made by the first call that
    passes that value and kept (immutable, as every JAX array is).  Other
    leaves are passed unchanged."""
    x64 = jax.config.jax_enable_x64

    def on_device(value: Any) -> Any:
        key = _resident_key(value)
        if key is None:
            return value
        key = (device, x64) + key
        copy = _resident.get(key)
        if copy is None:
            copy = _resident[key] = jax.device_put(value, device)
            while len(_resident) > MOST_RESIDENT:
                _resident.popitem(last=False)
        else:
            _resident.move_to_end(key)
        return copy

    return tuple(jax.tree.map(on_device, args))


def keeps_operands(device: jax.Device) -> bool:
    """Whether kernels on ``device`` take their small host operands from
    :func:`resident` copies: on accelerators (a CPU program reads host
    memory where it is)."""
    return device.platform != "cpu"


class KernelCache:
    """Compiled programs of one jitted kernel, for concrete arguments.

    ``cache(*args, **static)`` equals ``jitted(*args, **static)``, with
    static arguments passed by keyword.  ``cpu_compiler_options`` are XLA
    options (``DebugOptions`` fields) its programs compile with on a CPU
    device; they change how XLA compiles, not what the program computes.
    """

    def __init__(self, jitted: Callable,
                 cpu_compiler_options: dict[str, Any] | None = None):
        self.jitted = jitted
        self.cpu_compiler_options = dict(cpu_compiler_options or {})
        self.memory: dict[tuple, Any] = {}

    def __call__(self, *args: Any, **static: Any) -> Any:
        kernel_entry()
        if jax.config.jax_disable_jit:
            return self.jitted(*args, **static)
        compiled = self.executable(*args, **static)
        device = current_device()
        if keeps_operands(device):
            args = resident(args, device)
        return compiled(*args)

    def executable(self, *args: Any, **static: Any) -> Any:
        """The compiled program for these arguments (compiled, or loaded
        from disk, on first use); call it with the arguments alone."""
        device = current_device()
        key = (tuple(static.items()), argument_types(args),
               jax.dtypes.canonicalize_dtype(np.float64),  # the x64 scope
               device)
        compiled = self.memory.get(key)
        if compiled is None:
            compiled = self.memory[key] = self._compile(args, static, device)
        _used(self, key)
        return compiled

    def _compile(self, args: tuple, static: dict, device: jax.Device) -> Any:
        # Lowered through a jit of its own: JAX's tracing and lowering
        # caches keep a jitted function's programs, machine code included,
        # for as long as the function lives (up to thousands of them), so
        # programs lowered by the kernel's own jit would outlive their
        # eviction here (`MOST_PROGRAMS`).  This jit's entries die with it.
        function = functools.partial(self.jitted.__wrapped__, **static)
        lowered = functools.cache(lambda: jax.jit(function).lower(*args))
        # Tuned on and for CPUs: never applied to another platform.
        options = (self.cpu_compiler_options if device.platform == "cpu"
                   else {})
        path = None
        if cache_enabled():
            path = cache_dir() / _entry_name(self.jitted, args, static,
                                             lowered, options)
            compiled = _load(path, device) if path.exists() else None
            if compiled is not None:
                stats["loaded"] += 1
                return compiled
        compiled = lowered().compile(compiler_options=options or None)
        stats["compiled"] += 1
        if path is not None:
            _store(path, compiled)
        return compiled


class SecondsSpent:
    """Seconds this process has spent, per key, on a route that compiles
    nothing in place of the key's own programs: a kernel compiles them
    once they would have paid (their calls then run faster), so that a
    script over many sizes compiles nothing while a long run of one size
    does.  Holds at most ``most`` keys, and is emptied when full.
    """

    def __init__(self, most: int = 4096) -> None:
        self.most = most
        self._seconds: dict[Any, float] = {}

    def get(self, key: Any) -> float | None:
        """The seconds spent on ``key``; None for a key not met."""
        return self._seconds.get(key)

    def add(self, key: Any, seconds: float) -> None:
        """Count ``seconds`` more for ``key``."""
        if key not in self._seconds and len(self._seconds) >= self.most:
            self._seconds.clear()
        self._seconds[key] = self._seconds.get(key, 0.0) + seconds

    def clear(self) -> None:
        self._seconds.clear()


def cached_jit(static_argnames: tuple[str, ...] = ()
               ) -> Callable[[Callable], Callable]:
    """``jax.jit`` whose concrete calls go through a :class:`KernelCache`.

    For kernels that are not shape-generic: traced calls (inside a user's
    ``jit``/``vmap``/``grad``) use the jitted function; concrete calls keep
    their programs in memory and on disk.  Static arguments are passed by
    keyword.
    """

    def decorate(function: Callable) -> Callable:
        jitted = jax.jit(function, static_argnames=static_argnames)
        cache = KernelCache(jitted)

        @functools.wraps(function)
        def call(*args: Any, **static: Any) -> Any:
            if any(isinstance(leaf, jax.core.Tracer)
                   for leaf in jax.tree.leaves(args)):
                kernel_entry()  # (the cache's own call checks the others)
                return jitted(*args, **static)
            return cache(*args, **static)

        return call

    return decorate
