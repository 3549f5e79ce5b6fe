"""Checks shared by the tests of planned functions (``tests/test_plans*.py``).

Imported as ``from plan_checks import assert_compile_key``: pytest puts
``tests/`` (which has no ``__init__.py``) on ``sys.path`` for its test
modules, and ``tests/conftest.py`` has pytest rewrite the asserts here.
"""

import dataclasses

import pytest

from jaxndimage._plans import Plan, Planned


def assert_compile_key(planned: Planned, other: Planned) -> None:
    """Assert that ``planned.plan`` is a compile key shared with ``other``.

    Parameters
    ----------
    planned, other : Planned
        What a shell returned for two calls of one configuration on other
        values.

    Notes
    -----
    Passing guarantees that ``planned`` is a :class:`Planned` whose plan is
    a frozen dataclass :class:`Plan` (assigning a field raises
    ``dataclasses.FrozenInstanceError``), and that ``other``'s plan is equal
    to it and hashes alike, so the same compiled program serves both calls.
    """
    plan = planned.plan
    assert isinstance(planned, Planned)
    assert isinstance(plan, Plan)
    assert dataclasses.is_dataclass(plan)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.ndim = 3
    assert plan == other.plan
    assert hash(plan) == hash(other.plan)
