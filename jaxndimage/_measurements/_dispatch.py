"""The measurements' dispatch: the decorator `_measurement` over
:func:`jaxndimage._dispatch.ndimage_function`, and their base plan.

Measurements return scalars, tuples, lists, dicts and object arrays, not
arrays of the input's shape: the decorated shell plans, the dispatcher runs
the kernel, and the function's *finish* step turns the arrays into SciPy's
structure (:mod:`._results`).  dask arguments are computed first and the
result handed back as dask arrays, except where a function names a
reduction over the blocks of a dask ``input`` (:mod:`._over_blocks`).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from jaxndimage import _distributed
from jaxndimage._dispatch import ndimage_function
from jaxndimage._measurements._results import _scalars, _to_dask
from jaxndimage._plans import Plan


@dataclasses.dataclass(frozen=True)
class MeasurementPlan(Plan):
    """Base of the measurements' plans.  A measurement's result has another
    shape than its input (or reaches across the whole array), so there is
    no block-wise form: depth None.  (dask input takes the routes of
    :func:`_measurement` and :func:`._label_dask._label_dask` instead.)"""

    @property
    def depth(self) -> None:
        return None


def _measurement(*array_params: str,
                 finish: Callable[[Any, inspect.BoundArguments], Any]
                 = _scalars,
                 results_64: str | Callable[[Mapping[str, Any]], str] = "",
                 over_blocks: Callable[..., Any] | None = None) -> Callable:
    """``ndimage_function`` for functions that return scalars, tuples, lists.

    The implementation is a planned shell (it returns a
    :class:`~jaxndimage._plans.Planned` whose kernel returns arrays);
    ``finish(result, bound)`` turns
    the result, already in the caller's array type, into SciPy's Python
    structure.  dask arrays among the arguments (``index`` included) are
    computed first and the result's arrays are returned as dask arrays,
    except that a dask ``input`` goes to ``over_blocks(**arguments)`` where
    one is given (a reduction over the blocks, :mod:`._over_blocks`).
    ``results_64`` is :func:`ndimage_function`'s.
    """

    def decorate(impl: Callable) -> Callable:
        dispatched = ndimage_function(*array_params, reject_float16=False,
                                      planned=True,
                                      results_64=results_64)(impl)
        signature = inspect.signature(impl)
        names = tuple(array_params) + ("index",)

        @functools.wraps(impl)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            lazy = [name for name in names
                    if _distributed.is_dask_array(bound.arguments.get(name))]
            if lazy and over_blocks is not None and _distributed \
                    .is_dask_array(bound.arguments.get("input")):
                return over_blocks(**bound.arguments)
            if lazy:
                for name in lazy:
                    bound.arguments[name] = _distributed.computed(
                        bound.arguments[name])
                return _to_dask(wrapper(*bound.args, **bound.kwargs))
            result = dispatched(*bound.args, **bound.kwargs)
            return finish(result, bound)

        return wrapper

    return decorate
