"""Settings shared by every test run from this repository."""

import os

import jax
import pytest
from hypothesis import settings

# CI (which sets CI=true) replays the same examples every run, so a new
# hypothesis find shows up on a developer's machine, not as a flaky CI run.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")
# The accelerator lane's property tests under the switch: each example
# compiles its configuration on the device (0.3-12 s on a TPU), so the lane
# replays the same first few examples of each test.
settings.register_profile("device", derandomize=True, deadline=None,
                          max_examples=3)


def pytest_collection_modifyitems(items):
    """SciPy's suite first: its subprocesses are the longest file of the
    session, and under pytest-xdist (the default run's ``--dist
    loadfile``) a file runs on one worker, so it starts at once while the
    other worker takes the remaining files, not last, alone."""
    items.sort(key=lambda item: item.nodeid.split("::")[0]
               != "compat_tests/test_scipy_suite.py")


@pytest.fixture(autouse=True, scope="module")
def _release_jax_programs():
    """JAX keeps every program it compiles for eager operations and
    ``jax.jit`` (jaxndimage bounds its own, ``_cache.MOST_PROGRAMS``); each
    maps pages of machine code, and thousands of test modules' programs
    together would exhaust the process's memory mappings, where XLA's
    compiler then crashes.  Each module's are released after it."""
    yield
    jax.clear_caches()
