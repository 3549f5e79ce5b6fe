"""Start SciPy's suite in the background once the tests are collected, and
print its per-function tables at the end of the session.

With ``--jaxndimage-accelerated DEVICE`` (``compat_tests/switch_check.py``)
every public function of jaxndimage that these tests call on host arrays
also runs under the acceleration switch, checked against its result with
default settings.
"""

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


_unwrapped = {}  # name -> jaxndimage's function, while wrapped


def pytest_addoption(parser):
    switch_check.add_options(parser)


def pytest_configure(config):
    device = switch_check.switch_device(config)
    if device is None:
        return
    for name in jaxndimage.__all__:
        function = getattr(jaxndimage, name)
        if callable(function) and not isinstance(function, type):
            _unwrapped[name] = function
            setattr(jaxndimage, name,
                    switch_check.also_accelerated(function, name, device))


def pytest_unconfigure(config):
    for name, function in _unwrapped.items():
        setattr(jaxndimage, name, function)
    _unwrapped.clear()


def pytest_collection_finish(session):
    test_scipy_suite.start_in_background(session.items)


def pytest_sessionfinish(session):
    test_scipy_suite.stop_background()
