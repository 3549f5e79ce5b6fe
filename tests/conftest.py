"""Shared fixtures for jaxndimage's own tests."""

import numpy as np
import pytest

# Failed asserts in the shared checks (tests/plan_checks.py) are reported
# with their values, as in the test modules.
pytest.register_assert_rewrite("plan_checks")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """An empty kernel cache directory of the test's own, with the cache on:
    a program the test runs is compiled (or loaded from what the test
    itself stored), never loaded from the user's cache."""
    monkeypatch.setenv("JAXNDIMAGE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("JAXNDIMAGE_CACHE", raising=False)
    return tmp_path
