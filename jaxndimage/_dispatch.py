"""The one decorator that turns a JAX implementation into a SciPy drop-in.

An implementation is a plain Python function that takes JAX arrays (and
SciPy's other arguments), validates, and calls jitted kernels.  Decorated with
:func:`ndimage_function`, it accepts what SciPy accepts and returns what the
caller holds:

* JAX arrays (tracers included) go straight through: no host round trip, so
  the function works under ``jit``, ``vmap`` and ``grad``.
* numpy, array-likes and other array-API arrays in host memory reach the
  implementation as numpy arrays (views where possible), are computed under a
  local x64 scope (the user's global JAX configuration is never touched), and
  are handed back as the caller's array type.  A compiled kernel reads an
  aligned numpy buffer without a copy, so host arrays are not turned into
  JAX arrays on the way (``jax.dlpack.from_dlpack`` alone costs about 60 µs
  a call); implementations that run eager JAX code on an array convert it
  with :func:`to_jax`.  ``output=`` may then be an array of that type,
  written in place and returned, as SciPy does.  Arrays in accelerator memory (CuPy, torch on
  CUDA) go to JAX and back through DLPack on their device; an array type
  nobody can convert is a TypeError naming the type.
* dask arrays come back as lazy dask arrays, filtered block by block with a
  halo of the depth the call's plan gives (see :mod:`jaxndimage._distributed`).
* JAX arrays with explicit sharding run with those mesh axes switched to
  automatic sharding inside, and keep their sharding.

These routes are one table, :data:`ROUTES` (the first route that takes a
call's arrays runs it); where a call on arrays other than JAX arrays
computes, and how they go there and back, is its :class:`Placement`.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple, TypeVar

import jax
import numpy as np

from jaxndimage import _distributed, devices
from jaxndimage._cache import KernelRefused, checking_arguments
from jaxndimage._casting import scipy_arithmetic
from jaxndimage._docstrings import docfiller
from jaxndimage._plans import Planned, plan_of, run
from jaxndimage._support import XLA_ALIGNMENT, OutputArray

__all__ = ["as_array", "as_caller_array", "as_numpy", "caller_namespace",
           "computing_on", "family_member", "from_jax", "host_array",
           "host_only", "is_jax_array",
           "ndimage_function", "nonempty", "to_jax"]

F = TypeVar("F", bound=Callable[..., Any])


def is_jax_array(value: Any) -> bool:
    """True for JAX arrays and tracers."""
    return isinstance(value, jax.Array)


def _is_array(value: Any) -> bool:
    return (not isinstance(value, type | np.dtype | str)
            and hasattr(value, "shape") and hasattr(value, "dtype"))


def as_numpy(value: Any) -> np.ndarray:
    """A numpy view of an array-like, without a copy where one is possible."""
    if isinstance(value, np.ndarray):
        return value
    if _is_array(value) and hasattr(value, "__dlpack__"):
        try:
            return np.from_dlpack(value)
        except (TypeError, RuntimeError, BufferError, ValueError):
            pass
    return np.asarray(value)


def host_array(value: Any) -> np.ndarray:
    """An array-like in host memory as a numpy array of native byte order
    (a view where one is possible)."""
    array = as_numpy(value)
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    return array


def as_array(value: Any) -> Any:
    """numpy and JAX arrays (tracers included) as they are; any other
    array-like as numpy.  For implementations whose kernels take either."""
    if isinstance(value, np.ndarray | jax.Array):
        return value
    return host_array(value)


def to_jax(value: Any) -> jax.Array:
    """An array-like as a JAX array: JAX arrays (tracers included) as they
    are; C-contiguous numpy data aligned for XLA without a copy.

    Other data is copied once, by ``jax.device_put`` (not by the DLPack
    import, whose copy of unaligned memory is slower).
    """
    if isinstance(value, jax.Array):
        return value
    array = host_array(value)
    if (array.flags.c_contiguous and array.size and array.dtype != object
            and array.ctypes.data % XLA_ALIGNMENT == 0):
        try:
            return jax.dlpack.from_dlpack(_c_strides(array))
        except (TypeError, RuntimeError, BufferError, ValueError):
            pass
    return jax.device_put(np.asarray(array, order="C"))


def _c_strides(array: np.ndarray) -> np.ndarray:
    """``array`` (C-contiguous) with the strides of a fresh C array.

    numpy leaves the stride of a length-1 axis arbitrary; DLPack hands it
    to XLA, which reads it as a permuted layout that compiled programs,
    built for the default layout, refuse.
    """
    strides = np.cumprod((*array.shape[1:], 1)[::-1])[::-1] * array.itemsize
    if tuple(strides) == array.strides:
        return array
    return np.lib.stride_tricks.as_strided(
        array, strides=tuple(strides), writeable=array.flags.writeable)


class _HostBuffer:
    """Lends a JAX CPU buffer to numpy as a writeable array.

    Only used for results that nothing else references: the numpy array keeps
    this object, and so the JAX buffer, alive.
    """

    def __init__(self, array: jax.Array):
        self._array = array
        self.__array_interface__ = {
            "data": (array.unsafe_buffer_pointer(), False),
            "shape": array.shape,
            "typestr": np.dtype(array.dtype).str,
            "version": 3,
        }


def _buffer_pointer(array: jax.Array) -> int | None:
    try:
        return array.unsafe_buffer_pointer()
    except Exception:  # non-CPU, sharded or deleted buffers have none
        return None


def from_jax(array: Any, borrowed: tuple[np.ndarray, ...] = ()
             ) -> np.ndarray:
    """A writeable numpy array holding the values of a result (a JAX
    array, a numpy array or a scalar) that shares no memory with the
    ``borrowed`` host inputs.

    A fresh single-device CPU result is handed over without a copy; a result
    that still shares memory with an input is copied.
    """
    if not isinstance(array, jax.Array):
        values = np.asarray(array)
        if values.ndim and (not values.flags.writeable or any(
                np.may_share_memory(values, b) for b in borrowed)):
            return values.copy()
        return values
    array.block_until_ready()
    devices = array.devices()
    pointer = _buffer_pointer(array) if array.size else None
    if (pointer is not None and len(devices) == 1
            and next(iter(devices)).platform == "cpu"
            and not any(_within(pointer, b) for b in borrowed)):
        return np.asarray(_HostBuffer(array))
    return np.array(array)


def _within(pointer: int, array: np.ndarray) -> bool:
    """True if ``pointer`` lies in ``array``'s memory."""
    start = array.__array_interface__["data"][0]
    return start <= pointer < start + max(array.nbytes, 1)


def _output_request(output: Any, namespace: Any = None) -> Any:
    """Turn a caller's ``output=`` into what an implementation expects."""
    if output is None or isinstance(output, str | type | np.dtype
                                    | OutputArray):
        return output  # an OutputArray: a request from an implementation
    if _is_array(output):
        return OutputArray(np.dtype(as_numpy(output).dtype),
                           tuple(output.shape),
                           not isinstance(output, np.ndarray)
                           or output.flags.writeable)
    try:
        return np.dtype(output)
    except TypeError:
        if namespace is not None:  # a dtype of the caller's library
            try:
                return as_numpy(namespace.empty((0,), dtype=output)).dtype
            except (TypeError, ValueError, RuntimeError, AttributeError):
                pass
        array = np.asarray(output)
        return OutputArray(array.dtype, array.shape)


def host_only(input: Any, name: str) -> np.ndarray:
    """``input`` as a read-only numpy view, for callables that only run on
    the host (a callable that writes to its argument cannot reach the
    caller's array)."""
    if isinstance(input, jax.core.Tracer):
        raise TypeError(
            f"function: {name} cannot trace this callable with JAX, and a "
            "non-traceable callable needs concrete input; call it outside "
            "jit/vmap/grad or pass a JAX-traceable function")
    view = np.asarray(input).view()
    view.flags.writeable = False
    return view


_CALLER_NAMESPACE: contextvars.ContextVar = contextvars.ContextVar(
    "jaxndimage_caller_namespace", default=None)


def caller_namespace() -> Any:
    """The array namespace of the caller of the running public function.

    None for numpy and JAX callers.  Implementations that hand the caller's
    own Python callables host arrays (plain, non-traceable callables) use
    it, with :func:`as_caller_array`, so the callable sees the array type
    its author wrote it for.
    """
    return _CALLER_NAMESPACE.get()


def as_caller_array(values: np.ndarray) -> Any:
    """``values`` as an array of :func:`caller_namespace` (numpy if None)."""
    namespace = caller_namespace()
    return values if namespace is None else namespace.asarray(values)


@contextlib.contextmanager
def _calling_from(namespace: Any) -> Iterator[None]:
    token = _CALLER_NAMESPACE.set(namespace)
    try:
        yield
    finally:
        _CALLER_NAMESPACE.reset(token)


def _type_name(value: Any) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def _namespace_of(arrays: dict[str, Any]):
    """The namespace results go back to: that of the first real array.

    numpy arrays, array-likes and objects numpy converts (``__array__``)
    give None: numpy out, as in SciPy.  Other array types must be known to
    ``array_api_compat``; anything else is a TypeError naming the type.
    """
    import array_api_compat

    for name, value in arrays.items():
        if not _is_array(value) or isinstance(value, np.ndarray | np.generic):
            continue
        try:
            return array_api_compat.array_namespace(value)
        except TypeError:
            if hasattr(value, "__array__") or hasattr(value,
                                                      "__array_interface__"):
                continue
            raise TypeError(
                f"{name}: unsupported array type {_type_name(value)}; "
                f"jaxndimage accepts numpy, JAX, dask, torch, CuPy and other "
                f"array-API arrays, and anything numpy.asarray "
                f"converts") from None
    return None


_CPU = 1  # DLPack's device type for host memory


def _on_host(value: Any) -> bool:
    """False for arrays in accelerator memory (CuPy, torch on CUDA, ...)."""
    try:
        return value.__dlpack_device__()[0] == _CPU
    except (AttributeError, TypeError, RuntimeError, BufferError):
        return True


def _from_device(value: Any) -> jax.Array:
    """An accelerator array as a JAX array on the same device, via DLPack."""
    return jax.dlpack.from_dlpack(value)


def _to_device(array: jax.Array, borrowed: tuple[np.ndarray, ...],
               namespace: Any) -> Any:
    """A JAX result on an accelerator handed to ``namespace`` via DLPack
    (a copy first where it shares memory with a host input)."""
    pointer = _buffer_pointer(array)
    if pointer is not None and any(_within(pointer, b) for b in borrowed):
        array = array.copy()
    return namespace.from_dlpack(array)


def _to_namespace(result: np.ndarray, namespace) -> Any:
    """A numpy result as an array of ``namespace``, sharing its memory
    through DLPack where that namespace can."""
    if namespace is None:
        return result
    try:
        return namespace.from_dlpack(result)
    except (AttributeError, TypeError, RuntimeError, BufferError,
            ValueError):
        return namespace.asarray(result)


def _sent_to(array: np.ndarray, device: jax.Device) -> jax.Array:
    """A host array on ``device``, in the dtype it computes in there
    (`jaxndimage.devices.narrowed`)."""
    dtype = devices.narrowed(array.dtype, device)
    return jax.device_put(array.astype(dtype, copy=False), device)


def _narrowed_request(request: Any, device: jax.Device) -> Any:
    """An ``output=`` request for a call on ``device``: a 64-bit dtype the
    device cannot compute as its 32-bit counterpart (the caller gets the
    dtype it asked for on the host), a dtype's name as a name (SciPy
    checks names as it does not check dtypes)."""
    if isinstance(request, OutputArray):
        return request._replace(dtype=devices.narrowed(request.dtype, device))
    if request is None:
        return None
    try:
        dtype = devices.narrowed(np.dtype(request), device)
    except TypeError:
        return request
    return dtype.name if isinstance(request, str) else dtype


def _brought_back(value: Any, kinds: str, wanted: Any,
                  device: jax.Device) -> Any:
    """A result of a call on ``device`` as a host value: in the dtype
    asked for with ``output=`` (``wanted``, a dtype) where the function
    computed it in that dtype's form on the device (it may ignore the
    request, or promote it to complex as SciPy does), else with its
    32-bit results of ``kinds`` widened to 64 bits (see
    :func:`jaxndimage.devices.fetched`)."""
    if not isinstance(value, jax.Array | np.ndarray | np.generic):
        return value
    if wanted is not None and not isinstance(wanted, OutputArray):
        try:
            dtype = np.dtype(wanted)
        except TypeError:
            pass
        else:
            if value.dtype.kind == "c" and dtype.kind != "c":
                # SciPy promotes a real output dtype of a complex result.
                dtype = np.promote_types(dtype, np.complex64)
            if value.dtype == devices.narrowed(dtype, device):
                return devices.fetched(value, "").astype(dtype, copy=False)
    return devices.fetched(value, kinds)


#: The dtypes the acceleration switch sends narrower to a device without
#: 64-bit types.
_WIDE = frozenset(np.dtype(t) for t in (np.int64, np.uint64, np.float64,
                                        np.complex128))


def host_dtype(value: Any) -> np.dtype:
    """The dtype of a host array-like, in native byte order: what
    ``results_64`` callables read their arguments' dtypes with."""
    return as_numpy(value).dtype.newbyteorder("=")


def wide_kind(dtype: np.dtype) -> str:
    """The kind of a 64-bit ``dtype`` (which the switch sends narrower),
    else ''."""
    return dtype.kind if dtype in _WIDE else ""


def _kinds_widened(results_64: str | Callable[[Mapping[str, Any]], str],
                   arguments: Mapping[str, Any],
                   first: np.dtype | None) -> str:
    """The kinds of 32-bit result a call under the switch brings back in
    64 bits: ``results_64`` (:func:`ndimage_function`'s), and the kind of
    its first array argument where that was sent narrower (``first``, its
    own dtype): SciPy's results follow the input's dtype, not that of
    weights or labels.  A callable ``results_64`` decides alone, from the
    call's arguments."""
    if callable(results_64):
        return results_64(arguments)
    return results_64 + (first.kind if first is not None else "")


def _array_device(values: Any) -> jax.Device | None:
    """The device of the concrete single-device JAX arrays among
    ``values``; None where one is traced or spans several devices."""
    for value in values:
        if isinstance(value, jax.core.Tracer):
            return None
        if isinstance(value, jax.Array):
            where = value.devices()
            return next(iter(where)) if len(where) == 1 else None
    return None


def computing_on(device: jax.Device | None):
    """Within the block, JAX's default device is ``device`` (unchanged for
    None): programs for host data compile for it, results land on it, and
    the kernel caches key their programs by it."""
    if device is None:
        return contextlib.nullcontext()
    return jax.default_device(device)


def nonempty(input: jax.Array) -> bool:
    """``reject_float16`` rule of functions that return empty input early."""
    return input.size > 0


class _Options(NamedTuple):
    """What :func:`ndimage_function` was told about its function."""

    array_params: tuple[str, ...]
    planner: Callable[[Mapping[str, Any]], Any] | None
    has_output: bool
    reject_float16: bool | Callable[[Any], bool]
    none_for_output_array: bool
    keeps_output: Callable[[Any], bool] | None
    keeps_byte_order: bool
    complex_arithmetic: bool
    results_64: str


class _Call(NamedTuple):
    """One call of a decorated function: its implementation and public
    wrapper, its arguments (as given, and by name), the arrays among them
    and its ``output=``."""

    impl: Callable
    public: Callable
    signature: inspect.Signature
    args: tuple
    kwargs: dict
    arguments: dict[str, Any]
    given: dict[str, Any]
    output: Any


class Route(NamedTuple):
    """One way into the implementations: the calls it ``takes`` (decided
    from the call's arrays, by name) and the function that runs them."""

    name: str
    takes: Callable[[Mapping[str, Any]], bool]
    run: Callable[[_Call, _Options], Any]


class Placement(NamedTuple):
    """Where a call on arrays that are not JAX arrays computes: on
    ``device`` (None: JAX's default), with JAX's 64-bit types on where
    ``wide``, in SciPy's arithmetic (:func:`scipy_arithmetic`) where
    ``scipy``; ``accelerated``: host arrays sent to the device and their
    results brought back; ``in_device_memory``: arrays in accelerator
    memory, taken and handed back through DLPack."""

    device: jax.Device | None
    wide: bool
    scipy: bool
    accelerated: bool = False
    in_device_memory: bool = False


def _placement(given: Mapping[str, Any]) -> Placement:
    """Host arrays compute on the host's CPU in SciPy's arithmetic, or on
    the device :mod:`jaxndimage.devices` accelerates them on, in its
    arithmetic (on a device without 64-bit floats, as JAX input does
    there: a TPU emulates them, slowly to compile and not exactly); arrays
    in accelerator memory compute on their own device."""
    if not all(_on_host(value) for value in given.values()):
        return Placement(None, True, True, in_device_memory=True)
    accelerator = devices.accelerator_for(given.values())
    if accelerator is None:
        return Placement(devices.host_device(), True, True)
    return Placement(accelerator, devices.native_64_bits(accelerator), False,
                     accelerated=True)


def _run_dask(call: _Call, options: _Options) -> Any:
    """dask arrays: lazily, block by block with the plan's halo, or whole
    where the function has no block-wise form (:mod:`._distributed`)."""
    bound = call.signature.bind(*call.args, **call.kwargs)
    bound.apply_defaults()
    return _distributed.map_dask(call.public, bound, options.array_params[0],
                                 options.planner)


def _run_jax(call: _Call, options: _Options) -> Any:
    """JAX arrays and tracers: on their device, the result left there;
    arrays of explicit sharding keep it (:func:`_call_explicitly_sharded`).
    """
    if _is_array(call.output) and not isinstance(call.output, OutputArray):
        raise TypeError(
            "output: JAX arrays are immutable, so an output array "
            "cannot be written in place; pass a dtype instead "
            "(output=jnp.float32) and use the returned array")
    devices.check_dtypes(call.impl.__name__, call.given,
                         options.complex_arithmetic)
    sharded = _distributed.explicit_sharding(list(call.given.values()))
    if sharded is None:
        with computing_on(_array_device(call.given.values())):
            return run(call.impl(**call.arguments))
    return _call_explicitly_sharded(
        call.impl, call.signature.bind(*call.args, **call.kwargs), call.given,
        sharded)


def _run_placed(call: _Call, options: _Options) -> Any:
    """Every other array (host arrays, array-likes, arrays in accelerator
    memory): computed where :func:`_placement` says, and handed back as
    the caller's array type, or written into its ``output=`` array."""
    given, arguments, output = call.given, dict(call.arguments), call.output
    namespace = _namespace_of(given)
    place = _placement(given)
    with (jax.enable_x64(place.wide), _calling_from(namespace),
          scipy_arithmetic() if place.scipy else contextlib.nullcontext(),
          computing_on(place.device)):
        narrowed = {}  # the dtypes of inputs sent narrower
        for name, value in given.items():
            if not _on_host(value):
                value = _from_device(value)
            elif place.accelerated:
                host = host_array(value)
                value = _sent_to(host, place.device)
                if value.dtype != host.dtype:
                    narrowed[name] = host.dtype
            elif place.in_device_memory:  # beside accelerator arrays
                value = to_jax(value)
            else:
                value = host_array(value)
            arguments[name] = value
        borrowed = tuple(arguments[name] for name in given
                         if isinstance(arguments[name], np.ndarray))
        wanted = None
        if options.has_output and "output" in arguments:
            wanted = _output_request(output, namespace)
            arguments["output"] = (_narrowed_request(wanted, place.device)
                                   if place.accelerated else wanted)
        _refuse_float16(call.impl, arguments, options)
        result = run(call.impl(**arguments))
        if place.accelerated:
            # SciPy's results follow the input's dtype (not that of weights
            # or labels), but for those it gives in 64 bits whatever the
            # input.
            kinds = _kinds_widened(options.results_64, call.arguments,
                                   narrowed.get(options.array_params[0]))
            result = jax.tree.map(
                lambda a: _brought_back(a, kinds, wanted, place.device),
                result)
        if place.in_device_memory and namespace is not None:
            result = jax.tree.map(
                lambda a: _to_device(to_jax(a), borrowed, namespace), result)
        elif isinstance(result, np.ndarray | jax.Array):
            result = _to_namespace(from_jax(result, borrowed), namespace)
        else:
            result = jax.tree.map(
                lambda a: _to_namespace(from_jax(a, borrowed), namespace),
                result)
    return _delivered(result, arguments, call, options, namespace)


def _refuse_float16(impl: Callable, arguments: dict[str, Any],
                    options: _Options) -> None:
    """SciPy's RuntimeError for float16 ``input``, or a float16 output,
    raised where SciPy's C layer refuses it: after the arguments have been
    checked (a planned shell makes its plan and returns; another runs up to
    its first kernel, and no further), where the plan says SciPy's C layer
    meets it (:meth:`Plan.refuses_float16`: not in SciPy's early exits)."""
    reject = options.reject_float16
    input = arguments.get("input")
    from_input = getattr(input, "dtype", None) == np.float16
    if not (from_input or (options.has_output
                           and _float16_request(arguments.get("output")))):
        return
    if not (reject is True or (callable(reject) and reject(input))):
        return
    try:
        with checking_arguments():
            planned = impl(**arguments)
    except KernelRefused:
        planned = None
    if isinstance(planned, Planned) and not planned.plan.refuses_float16(
            input):
        return
    raise RuntimeError(f"{'input' if from_input else 'output'}: array type "
                       f"dtype('float16') not supported")


def _float16_request(request: Any) -> bool:
    """Whether an ``output=`` request (see :func:`_output_request`) asks
    for float16."""
    if isinstance(request, OutputArray):
        return request.dtype == np.float16
    try:
        return request is not None and np.dtype(request) == np.float16
    except TypeError:
        return False


def _delivered(result: Any, arguments: dict[str, Any], call: _Call,
               options: _Options, namespace: Any) -> Any:
    """The value a call returns: ``result``, or the caller's ``output=``
    array with ``result`` written into it (None where SciPy returns None),
    with SciPy's byte order for numpy results."""
    output = call.output
    request = arguments.get("output") if options.has_output else None
    if isinstance(request, OutputArray) and request is not output:
        if options.keeps_output and options.keeps_output(
                arguments[options.array_params[0]]):
            return result
        output[...] = result
        return None if options.none_for_output_array else output
    if namespace is None and request is not None:
        if not np.dtype(request).isnative:
            return result.astype(request)  # SciPy honours byte order
    elif namespace is None and options.keeps_byte_order:
        original = getattr(call.given.get("input"), "dtype", None)
        original = result.dtype if original is None else np.dtype(original)
        if (not original.isnative
                and result.dtype == original.newbyteorder("=")):
            return result.astype(original)
    return result


#: The routes of a call, in order: the first that takes the call's arrays
#: runs it, as SciPy's ``_support_alternative_backends`` keeps one table of
#: what each backend does.
ROUTES: tuple[Route, ...] = (
    Route("dask", lambda given: any(_distributed.is_dask_array(value)
                                    for value in given.values()), _run_dask),
    Route("jax", lambda given: any(is_jax_array(value)
                                   for value in given.values()), _run_jax),
    Route("placed", lambda given: True, _run_placed),
)


def ndimage_function(*array_params: str,
                     reject_float16: bool | Callable[[jax.Array], bool] = True,
                     planned: bool = False,
                     none_for_output_array: bool = False,
                     keeps_output: Callable[[Any], bool] | None = None,
                     keeps_byte_order: bool = False,
                     complex_arithmetic: bool = False,
                     results_64: str | Callable[[Mapping[str, Any]], str]
                     = ""
                     ) -> Callable[[F], F]:
    """Decorate a JAX implementation into a drop-in ``scipy.ndimage`` function.

    Parameters
    ----------
    *array_params : str
        Names of the parameters that hold arrays (``"input"``, ``"weights"``,
        ...).  They decide the namespace and are converted to JAX.
    reject_float16 : bool or callable, optional
        Raise SciPy's RuntimeError for a non-JAX float16 ``input``, as SciPy's
        C routines do; a callable decides from the input, for functions that
        SciPy finishes before reaching C for some inputs (e.g.
        :func:`nonempty`).  JAX float16 input is always accepted.
    planned : bool, optional
        The implementation is a planned shell: it returns a
        :class:`~jaxndimage._plans.Planned` (see :mod:`jaxndimage._plans`),
        which the decorator runs, and whose plan gives the dask depth.
        Without it, the function computes a dask input whole, when called,
        and returns a dask array of the result.
    none_for_output_array : bool, optional
        Return None, not the array, when ``output=`` is an array the result
        was written into (SciPy's ``binary_fill_holes`` and
        ``binary_hit_or_miss`` do).
    keeps_output : callable, optional
        Decides from the (host) input whether an ``output=`` array is left
        as it is and the result returned instead (SciPy's
        ``vectorized_filter`` does so for empty and 0-d input).
    keeps_byte_order : bool, optional
        Without ``output=``, give a result of the input's dtype the input's
        byte order (SciPy's Fourier filters allocate ``input.dtype``; the
        others allocate its native form).
    complex_arithmetic : bool, optional
        The function computes in complex numbers: a float64 JAX array on a
        device without native 64-bit floats is refused (see
        :func:`jaxndimage.devices.check_dtypes`), as complex128 arrays
        are for every function.
    results_64 : str or callable, optional
        The kinds of result (``"f"``, ``"i"``, ...) SciPy gives in 64 bits
        whatever the input's dtype (the per-label statistics, distances):
        under the acceleration switch on a device without 64-bit types
        they are computed in 32 bits and widened on the host, as are
        those of the kind of a 64-bit input.  A callable takes the call's
        arguments (by name, as given) and returns all the kinds widened,
        for functions whose result dtypes SciPy derives from them (and
        that may not follow the input's).

    Examples
    --------
    >>> import jax.numpy as jnp
    >>> @ndimage_function("input")
    ... def box3(input, axis=-1):
    ...     return (jnp.roll(input, 1, axis) + input
    ...             + jnp.roll(input, -1, axis)) / 3
    >>> box3([3.0, 0.0, 0.0, 0.0, 3.0])
    array([2., 1., 0., 1., 2.])
    """

    def decorate(impl: F) -> F:
        signature = inspect.signature(impl)
        has_output = "output" in signature.parameters
        bind = _binder(signature)
        options = _Options(
            array_params, plan_of(impl, array_params[0]) if planned else None,
            has_output, reject_float16, none_for_output_array, keeps_output,
            keeps_byte_order, complex_arithmetic, results_64)

        @functools.wraps(impl)
        def wrapper(*args, **kwargs):
            arguments = bind(args, kwargs)
            call = _Call(impl, wrapper, signature, args, kwargs, arguments,
                         {name: arguments[name] for name in array_params
                          if arguments.get(name) is not None},
                         arguments.get("output") if has_output else None)
            route = next(route for route in ROUTES if route.takes(call.given))
            return route.run(call, options)

        return wrapper  # type: ignore[return-value]

    return decorate


def family_member(function: F, name: str, doc: str, *array_params: str,
                  fields: Mapping[str, str] | None = None,
                  dispatch: Callable[..., Callable[[F], F]] | None = None,
                  **options: Any) -> F:
    """``function``, named ``name``, documented by ``doc`` (filled by
    :func:`~jaxndimage._docstrings.docfiller` with ``fields``) and decorated
    by ``dispatch(*array_params, **options)`` (default
    :func:`ndimage_function`).

    For families of public functions that share SciPy's signature: a
    factory writes the signature once, and makes each member with this.
    """
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    dispatched = (dispatch or ndimage_function)(*array_params,
                                                **options)(function)
    return docfiller(**(fields or {}))(dispatched)


def _binder(signature: inspect.Signature
            ) -> Callable[[tuple, dict], dict[str, Any]]:
    """``bind(args, kwargs)``: the given arguments of a call by name, as
    ``signature.bind(*args, **kwargs).arguments`` has them, except that
    arguments for a ``**kwargs`` parameter stay at the top level (so
    ``impl(**arguments)`` makes the same call).

    Calls that do not bind plainly (too many arguments, a name given twice
    or unknown, a required one missing) are bound by inspect, which raises
    Python's TypeError for them.
    """
    parameters = signature.parameters.values()
    kinds = {p.kind for p in parameters}
    if kinds & {inspect.Parameter.POSITIONAL_ONLY,
                inspect.Parameter.VAR_POSITIONAL}:
        return lambda args, kwargs: signature.bind(*args, **kwargs).arguments
    positional = tuple(p.name for p in parameters
                       if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD)
    named = frozenset(p.name for p in parameters
                      if p.kind is not inspect.Parameter.VAR_KEYWORD)
    any_name = inspect.Parameter.VAR_KEYWORD in kinds
    required = tuple(p.name for p in parameters if p.default is p.empty
                     and p.kind is not inspect.Parameter.VAR_KEYWORD)

    def bind(args: tuple, kwargs: dict) -> dict[str, Any]:
        arguments = dict(zip(positional, args))
        if (len(args) > len(positional)
                or any(name in arguments or not (any_name or name in named)
                       for name in kwargs)):
            signature.bind(*args, **kwargs)  # raises the TypeError
        arguments.update(kwargs)
        if not all(name in arguments for name in required):
            signature.bind(*args, **kwargs)
        return arguments

    return bind


def _call_explicitly_sharded(impl: Callable, bound: inspect.BoundArguments,
                             given: dict[str, Any], sharded: jax.Array) -> Any:
    """``impl`` on arrays whose type carries explicit sharding."""
    names = [name for name, value in given.items() if is_jax_array(value)]

    def call(*values):
        for name, value in zip(names, values):
            bound.arguments[name] = value
        return run(impl(*bound.args, **bound.kwargs))

    return _distributed.call_sharded(
        call, [given[name] for name in names], jax.typeof(sharded).sharding,
        tuple(sharded.shape))
