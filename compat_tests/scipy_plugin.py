"""pytest plugin: run SciPy's own ``scipy.ndimage`` tests against jaxndimage.

Run one SciPy test module with jaxndimage swapped in, from the repository
root (add ``SCIPY_ARRAY_API=1`` in front to also run on jax.numpy,
array_api_strict and dask.array; add ``-n 2`` for pytest-xdist)::

    python -m pytest -p compat_tests.scipy_plugin -p no:cacheprovider -q \\
        --pyargs scipy.ndimage.tests.test_filters

``python -m pytest compat_tests/test_scipy_suite.py`` runs every relevant
module in both modes.

How it works
------------
* At ``pytest_configure`` (before any SciPy test module is imported) every
  name in ``jaxndimage.__all__`` that also exists in ``scipy.ndimage`` is
  replaced, in ``scipy.ndimage`` and in
  ``scipy.ndimage._support_alternative_backends`` (where SciPy defines the
  public functions), by a thin wrapper around the jaxndimage function that
  records the call.  SciPy's test modules only reach the public functions
  through ``scipy.ndimage.<name>`` (``from scipy import ndimage``), and they
  capture those objects at import time (``make_xp_test_case(ndimage.f)``,
  ``parametrize('func', [ndimage.f, ...])``), so they capture the wrapper.
  The private modules (``scipy.ndimage._filters`` and friends) are left
  alone: SciPy's own implementations of names jaxndimage does not export
  keep calling SciPy, and the tests use those modules only for private
  helpers (``_gaussian_kernel1d``, ``_ni_support``).
* SciPy's array-API machinery looks functions up by identity in
  ``scipy._lib._array_api.xp_capabilities_table`` (``make_xp_test_case``,
  ``make_xp_pytest_param``, ``make_xp_pytest_marks``).  Each wrapper is
  registered there with the capabilities of the SciPy function it
  replaces, so SciPy's skip/xfail markers and ``lazy_xp_function`` tags
  stay exactly what they are for SciPy.  The wrapper copies the name and
  signature (``functools.wraps``), so test ids are unchanged.
* Known failures (``compat_tests/known_failures.txt``) are marked
  ``xfail(strict=True)``: a listed test that passes fails the run, and so
  does every unlisted failure.  Tests are named
  ``<dotted module>::<rest of the node id>``, so names do not depend on where
  SciPy is installed.  See that file for the format.
* Each test report carries the jaxndimage functions called during that
  phase (it survives pytest-xdist's report serialisation), and the
  controller prints, per function, how many tests that called it passed,
  failed, xfailed, xpassed or were skipped; tests that called none of them
  are one separate line.  ``--jaxndimage-report=PATH`` also writes the
  counts as JSON.

Options: ``--jaxndimage-report=PATH`` (JSON summary),
``--jaxndimage-check-stale`` (fail when a known-failures entry for a
collected module and the current mode matched no test; only meaningful
when whole modules run, which is what the driver does), and
``--jaxndimage-accelerated=DEVICE`` (with ``--jaxndimage-without-64-bits``
to compute there as on a TPU, in 32-bit types): SciPy's suite under the
acceleration switch (``compat_tests/switch_check.py``).  Each call of a
swapped function runs twice, under ``devices.accelerated(DEVICE)``
whatever its size and then with default settings, whose result SciPy's
test goes on to check against SciPy's bits; the wrapper fails the test
where the switch's result differs from the host's.
"""

import functools
import json
from collections import Counter
from pathlib import Path

import pytest

from compat_tests.switch_check import add_options, also_accelerated, switch_device

KNOWN_FAILURES = Path(__file__).with_name("known_failures.txt")
MODES = ("numpy", "array_api", "switch-32")
OUTCOMES = ("passed", "failed", "xfailed", "xpassed", "skipped")
UNEXERCISED = "did not exercise jaxndimage"

_called = set()  # names of swapped functions called in the current phase
_swapped = {}  # name -> (module, SciPy's function), for unswapping


def current_mode():
    """``"array_api"`` when SciPy runs with ``SCIPY_ARRAY_API``, else ``"numpy"``."""
    from scipy._lib._array_api import SCIPY_ARRAY_API

    return "array_api" if SCIPY_ARRAY_API else "numpy"


def swapped_names():
    """Names exported by both jaxndimage and scipy.ndimage, sorted."""
    import scipy.ndimage

    import jaxndimage

    return sorted(set(jaxndimage.__all__) & set(scipy.ndimage.__all__))


def _counting(func, name):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _called.add(name)
        return func(*args, **kwargs)

    # functools.wraps copies the wrapped function's __dict__; drop any
    # lazy_xp_function tag so that SciPy's tagging decides alone.
    wrapper.__dict__.pop("_lazy_xp_function", None)
    return wrapper


def swap(accelerated=None):
    """Put jaxndimage's functions into SciPy's public ndimage namespaces;
    with a device ``accelerated``, functions that also run each call under
    the switch (`switch_check.also_accelerated`)."""
    import scipy.ndimage
    from scipy._lib._array_api import xp_capabilities_table
    from scipy.ndimage import _support_alternative_backends

    import jaxndimage

    for name in swapped_names():
        original = getattr(scipy.ndimage, name)
        function = getattr(jaxndimage, name)
        if accelerated is not None:
            function = also_accelerated(function, name, accelerated)
        wrapper = _counting(function, name)
        if original in xp_capabilities_table:
            xp_capabilities_table[wrapper] = xp_capabilities_table[original]
        for module in (scipy.ndimage, _support_alternative_backends):
            _swapped.setdefault((module, name), getattr(module, name))
            setattr(module, name, wrapper)


def unswap():
    """Undo `swap`."""
    for (module, name), original in _swapped.items():
        setattr(module, name, original)
    _swapped.clear()


def load_known_failures(path=KNOWN_FAILURES, mode=None):
    """Parse the known-failures file into ``{test name: reason}`` for `mode`.

    A line is ``<test name> [mode=numpy|mode=array_api] <reason>``; blank
    lines and lines starting with ``#`` are ignored.  An entry without a
    mode applies to both modes.  Raises ``pytest.UsageError`` for an entry
    without a reason, an unknown mode, or a duplicate.
    """
    mode = current_mode() if mode is None else mode
    entries, seen = {}, set()
    for lineno, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, rest = line.partition(" ")
        rest = rest.strip()
        entry_modes = MODES
        if rest.startswith("mode="):
            token, _, rest = rest.partition(" ")
            entry_modes = (token.removeprefix("mode="),)
            rest = rest.strip()
            if entry_modes[0] not in MODES:
                raise pytest.UsageError(
                    f"{path}:{lineno}: unknown {token!r}; use one of "
                    f"{', '.join('mode=' + m for m in MODES)} or none"
                )
        if not rest:
            raise pytest.UsageError(f"{path}:{lineno}: {name} has no reason")
        for m in entry_modes:
            if (name, m) in seen:
                raise pytest.UsageError(f"{path}:{lineno}: duplicate entry {name}")
            seen.add((name, m))
        if mode in entry_modes:
            entries[name] = rest
    return entries


def test_name(item):
    """``<dotted module>::<node id after the file part>``."""
    module = getattr(item, "module", None)
    _, _, rest = item.nodeid.partition("::")
    return f"{module.__name__}::{rest}" if module is not None else item.nodeid


def pytest_addoption(parser):
    group = parser.getgroup("jaxndimage", "jaxndimage equivalence against SciPy")
    group.addoption(
        "--jaxndimage-report",
        metavar="PATH",
        help="write the per-function outcome counts as JSON to PATH",
    )
    group.addoption(
        "--jaxndimage-check-stale",
        action="store_true",
        help="fail when a known-failures entry for a collected module matched no test",
    )
    add_options(parser)


def pytest_configure(config):
    # SciPy's conftest uses these marks before its own pytest_configure runs.
    config.addinivalue_line("markers", "array_api_backends: SciPy array API backends")
    config.addinivalue_line("markers", "thread_unsafe: not safe to run in threads")
    known = load_known_failures()
    mode = current_mode()
    device = switch_device(config)
    if device is not None:
        from jaxndimage import devices

        if not devices.native_64_bits(device):
            mode = "switch-32"
            known.update(load_known_failures(mode=mode))
    recorder = _Recorder(config, known, mode)
    swap(device)
    config.pluginmanager.register(recorder, "jaxndimage_recorder")


def pytest_unconfigure(config):
    unswap()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _called.clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.jaxndimage_calls = sorted(_called)
    report.jaxndimage_name = test_name(item)
    _called.clear()


class _Recorder:
    """Collects outcomes and calls per test and reports them at the end.

    It runs where the reports arrive: in the only process without xdist,
    in the controller with it.
    """

    def __init__(self, config, known, mode):
        self.config = config
        self.known = known  # test name -> reason, for the current mode
        self.mode = mode  # current_mode(), or "switch-32"
        self.tests = {}  # nodeid -> {"name", "calls", "outcome"}
        self.stale = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items):
        for item in items:
            reason = self.known.get(test_name(item))
            if reason is not None:
                item.add_marker(pytest.mark.xfail(strict=True, reason=f"known failure: {reason}"))

    def pytest_runtest_logreport(self, report):
        test = self.tests.setdefault(
            report.nodeid,
            {
                "name": getattr(report, "jaxndimage_name", report.nodeid),
                "calls": set(),
                "outcome": None,
            },
        )
        test["calls"].update(getattr(report, "jaxndimage_calls", ()))
        if report.failed:
            test["outcome"] = "failed"
        elif test["outcome"] is None:
            if hasattr(report, "wasxfail"):
                test["outcome"] = "xfailed" if report.skipped else "xpassed"
            elif report.skipped:
                test["outcome"] = "skipped"
            elif report.when == "call":
                test["outcome"] = "passed"

    def counts(self):
        """``{function or UNEXERCISED: Counter(outcome -> tests)}``."""
        table = {}
        for test in self.tests.values():
            outcome = test["outcome"] or "passed"
            for name in test["calls"] or [UNEXERCISED]:
                table.setdefault(name, Counter())[outcome] += 1
        return table

    def stale_entries(self):
        """Known-failure names for the modules that ran that matched no test."""
        names = {test["name"] for test in self.tests.values()}
        modules = {name.partition("::")[0] for name in names}
        return sorted(
            name
            for name in self.known
            if name.partition("::")[0] in modules and name not in names
        )

    def pytest_sessionfinish(self, session):
        if hasattr(self.config, "workerinput"):
            return
        if self.config.getoption("jaxndimage_check_stale"):
            self.stale = self.stale_entries()
        if self.stale and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        path = self.config.getoption("jaxndimage_report")
        if path:
            data = {
                "mode": self.mode,
                "swapped": swapped_names(),
                "counts": {k: dict(v) for k, v in self.counts().items()},
                "stale": self.stale,
            }
            Path(path).write_text(json.dumps(data, indent=1, sort_keys=True))

    def pytest_terminal_summary(self, terminalreporter):
        if hasattr(self.config, "workerinput"):
            return
        tr = terminalreporter
        tr.section(f"jaxndimage vs SciPy's tests [{self.mode}]")
        for line in format_table(self.counts()):
            tr.write_line(line)
        for name in self.stale:
            tr.write_line(f"STALE known-failures entry (matched no test): {name}", red=True)


def format_table(counts):
    """Lines of a per-function outcome table; the unexercised line comes last."""
    names = sorted(n for n in counts if n != UNEXERCISED)
    if UNEXERCISED in counts:
        names.append(UNEXERCISED)
    width = max([len("function")] + [len(n) for n in names])
    lines = [f"{'function':<{width}}" + "".join(f"{o:>9}" for o in OUTCOMES)]
    for name in names:
        lines.append(f"{name:<{width}}" + "".join(f"{counts[name][o]:>9}" for o in OUTCOMES))
    return lines
