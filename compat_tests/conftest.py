"""Start SciPy's suite in the background once the tests are collected, and
print its per-function tables at the end of the session."""

from compat_tests import test_scipy_suite

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


def pytest_collection_finish(session):
    test_scipy_suite.start_in_background(session.items)


def pytest_sessionfinish(session):
    test_scipy_suite.stop_background()
