"""Shared fixtures for jaxndimage's own tests."""

import numpy as np
import pytest

# Failed asserts in the shared checks (tests/plan_checks.py) are reported
# with their values, as in the test modules.
pytest.register_assert_rewrite("plan_checks")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
