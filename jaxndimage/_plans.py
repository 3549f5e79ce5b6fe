"""Plans: a call's arguments, validated and normalised into a frozen record.

A planned public function is a shell that returns a :class:`Planned`
instead of computing: the *plan* (a frozen, hashable dataclass of everything
that fixes the program a call runs: axes, sizes, origins, modes, dtypes, the
kernel's symmetry) with the *kernel* that runs it and the *operands* the
kernel takes as data (the input, weights, sigma, cval).  The shell raises
SciPy's exceptions, in SciPy's order, and runs nothing.  The dispatcher
(:func:`jaxndimage._dispatch.ndimage_function`) then

* runs the kernel (:meth:`Planned.run`) for an ordinary call,
* refuses float16 host input once the plan exists, before any kernel runs,
* reads the plan's :attr:`Plan.depth` for a dask input: how far the result
  at a point reaches along each axis, the halo of ``map_overlap``.

A plan's fields are its kernel's static arguments, so the plan is the
compile key.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from jaxndimage._support import window_reach

__all__ = ["Plan", "Planned", "chained_depth", "plan_of", "run",
           "widest_depth", "window_depth"]


@dataclasses.dataclass(frozen=True)
class Plan:
    """Base of the plan records.  Subclasses are frozen dataclasses.

    ``ndim`` is the number of dimensions of the input the plan was made
    for.
    """

    ndim: int

    #: Whether SciPy's C loop of this kind of call returns before it meets
    #: the input's type when the input is empty (float16 then passes).
    empty_input_exits: ClassVar[bool] = False

    @property
    def depth(self) -> tuple[int | None, ...] | None:
        """Per axis of the input, how far the result at a point reads
        (None: the whole axis); or None for calls without a block-wise
        form (a result of another shape, a reach to convergence), whose
        dask input is computed whole.  Every axis whole unless a subclass
        knows better."""
        return (None,) * self.ndim

    @property
    def extends_edges(self) -> bool:
        """Whether dask may extend the blocks at a true edge of the array
        by copying data (modes reflect, mirror, nearest) before the call.
        True unless a window is applied to another window's result, and
        the extension of that result is not the input's (a composition
        with asymmetric windows extends its true edges itself)."""
        return True

    @property
    def copies(self) -> bool:
        """Whether the result is the input copied into the output: one of
        SciPy's early exits, which run no C filter (so float16 input,
        which SciPy's C layer refuses, passes them).  False unless a
        subclass knows better."""
        return False

    def refuses_float16(self, input: Any) -> bool:
        """Whether SciPy's C layer meets float16, as ``input``'s dtype or
        as the plan's ``out_dtype``, and refuses it: everywhere but its
        early exits (:attr:`copies`, and an empty input where
        :attr:`empty_input_exits`) unless a subclass knows better."""
        return meets_float16(self, input) and not (
            self.copies or (self.empty_input_exits and input.size == 0))

    @property
    def sample_reach(self) -> tuple[int, ...] | None:
        """For a call whose result dtype and shape depend on the values
        (a user's callable): per axis, the reach of its window, so that
        dask learns them from a sample block ``2 * reach + 1`` wide.
        None for the others, which an empty block shows."""
        return None


def meets_float16(plan: Plan, input: Any) -> bool:
    """Whether ``input`` or ``plan``'s ``out_dtype`` (where it has one) is
    float16."""
    return np.float16 in (input.dtype, getattr(plan, "out_dtype", None))


def window_depth(ndim: int, axes: Sequence[int], sizes: Sequence[int],
                 origins: Sequence[int]) -> tuple[int, ...]:
    """The depth of windows of ``sizes[i]`` samples centred at
    ``sizes[i] // 2 + origins[i]`` along ``axes[i]`` (the larger, for an
    axis named twice), 0 along the other axes of an ``ndim``-D input.

    Examples
    --------
    >>> window_depth(3, (2, 0), (9, 3), (0, 1))
    (2, 0, 4)
    """
    depth = [0] * ndim
    for axis, size, origin in zip(axes, sizes, origins):
        depth[axis] = max(depth[axis], window_reach(size, origin))
    return tuple(depth)


def _combined_depth(plans: Sequence[Plan],
                    combine: Callable[[int, int], int]
                    ) -> tuple[int | None, ...] | None:
    depths = [plan.depth for plan in plans]
    if not depths or any(depth is None for depth in depths):
        return None
    total = list(depths[0])
    for depth in depths[1:]:
        total = [None if a is None or b is None else combine(a, b)
                 for a, b in zip(total, depth)]
    return tuple(total)


def chained_depth(plans: Sequence[Plan]) -> tuple[int | None, ...] | None:
    """The depth of ``plans`` run one after the other, each on the result
    of the one before: their reaches add up, per axis.  None if one of
    them has no block-wise form (or there are none).

    Examples
    --------
    >>> from jaxndimage._plans import Plan
    >>> chained_depth([Plan(2), Plan(2)])
    (None, None)
    """
    return _combined_depth(plans, lambda a, b: a + b)


def widest_depth(plans: Sequence[Plan]) -> tuple[int | None, ...] | None:
    """The depth of ``plans`` each run on the same input (terms of one
    result): the widest reach of any, per axis.  None if one of them has
    no block-wise form (or there are none)."""
    return _combined_depth(plans, max)


@dataclasses.dataclass(frozen=True)
class Planned:
    """A plan with the kernel that runs it and the kernel's operands: what
    a planned shell returns.  ``kernel(plan, *operands)`` computes the
    result."""

    plan: Plan
    kernel: Callable[..., Any]
    operands: tuple[Any, ...] = ()

    def run(self) -> Any:
        """The result: the kernel applied to the plan and the operands."""
        return self.kernel(self.plan, *self.operands)


def run(result: Any) -> Any:
    """What a shell returned, computed: a :class:`Planned` is run, anything
    else (the result of a shell that computes itself) is returned."""
    return result.run() if isinstance(result, Planned) else result


def plan_of(shell: Callable[..., Any], name: str
            ) -> Callable[[Mapping[str, Any]], Plan]:
    """The plan of a call of a planned ``shell`` from its bound arguments
    (``inspect.BoundArguments.arguments``, defaults applied), for an
    argument ``name`` of that shape and dtype: the shell reads no values of
    it, so it is planned on a zero-strided stand-in (the dask route's
    depth, edges and sample come from this plan)."""
    keywords = [p.name for p in inspect.signature(shell).parameters.values()
                if p.kind is inspect.Parameter.VAR_KEYWORD]

    def plan(arguments: Mapping[str, Any]) -> Plan:
        x = arguments[name]
        stand_in = np.broadcast_to(np.zeros((), np.dtype(x.dtype)), x.shape)
        given = {**arguments, name: stand_in}
        for keyword in keywords:  # ``**kwargs`` bind as one dict
            given.update(given.pop(keyword, {}))
        return shell(**given).plan

    return plan
