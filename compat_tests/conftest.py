"""Print the per-function tables of the SciPy suite runs at the end of the session."""

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
