"""Start SciPy's suite in the background once the tests are collected, and
print its per-function tables at the end of the session.

With ``--jaxndimage-accelerated DEVICE`` (``compat_tests/switch_check.py``)
every public function of jaxndimage that these tests call on host arrays
also runs under the acceleration switch, checked against its result with
default settings.
"""

import pytest

import jaxndimage
from compat_tests import switch_check, test_scipy_suite

TABLE_KEY = "jaxndimage_table"
_tables = []


def pytest_runtest_logreport(report):
    if report.when == "call":
        _tables.extend(value for key, value in report.user_properties if key == TABLE_KEY)


def pytest_terminal_summary(terminalreporter):
    if not _tables:
        return
    terminalreporter.section("jaxndimage vs SciPy's scipy.ndimage tests")
    for table in sorted(_tables):
        terminalreporter.write_line(table)
        terminalreporter.write_line("")


_switch = []  # the device of --jaxndimage-accelerated, where given


def pytest_addoption(parser):
    switch_check.add_options(parser)


def pytest_configure(config):
    device = switch_check.switch_device(config)
    if device is not None:
        _switch.append(device)


@pytest.fixture(scope="package", autouse=True)
def _switch_checked():
    """jaxndimage's public functions, each call also made under the switch
    (``switch_check.also_accelerated``), for this folder's tests only."""
    if not _switch:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        for name in jaxndimage.__all__:
            function = getattr(jaxndimage, name)
            if callable(function) and not isinstance(function, type):
                patch.setattr(jaxndimage, name, switch_check.also_accelerated(
                    function, name, _switch[0]))
        yield


def pytest_collection_finish(session):
    test_scipy_suite.start_in_background(session.items)


def pytest_sessionfinish(session):
    test_scipy_suite.stop_background()
