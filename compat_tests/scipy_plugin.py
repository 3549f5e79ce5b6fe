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
acceleration switch.  Each call of a swapped function runs twice, under
``devices.accelerated(DEVICE)`` whatever its size, on a copy of its
``output=`` array, and then with default settings, whose result SciPy's
test goes on to check against SciPy's bits; the wrapper fails the test
where the switch's result (its type, dtype, shape, value within
`SWITCH_TOLERANCE`, its ``output=`` array, or the type of the exception
it raises) differs from the host's.
"""

import functools
import inspect
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

KNOWN_FAILURES = Path(__file__).with_name("known_failures.txt")
MODES = ("numpy", "array_api", "switch-32")
OUTCOMES = ("passed", "failed", "xfailed", "xpassed", "skipped")
UNEXERCISED = "did not exercise jaxndimage"
#: ``--jaxndimage-accelerated``: the largest difference of a result under
#: the switch from the host's, relative to the host result's largest
#: magnitude (at least 1), as ``tests/test_accelerator.py`` holds them;
#: integer and boolean results must be equal.
SWITCH_TOLERANCE = 1e-5

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


def _same_types(got, expected):
    """Whether two results have the same types throughout (containers and
    leaves, numpy scalars' dtypes included)."""
    if type(got) is not type(expected):
        return False
    if isinstance(expected, tuple | list):
        return len(got) == len(expected) and all(
            _same_types(g, e) for g, e in zip(got, expected))
    if isinstance(expected, dict):
        return got.keys() == expected.keys() and all(
            _same_types(got[k], expected[k]) for k in expected)
    return True


def _kind(value):
    """A result's types, dtypes and shapes, briefly."""
    if isinstance(value, tuple | list):
        inner = ", ".join(_kind(v) for v in value[:4])
        more = ", ..." if len(value) > 4 else ""
        return f"{type(value).__name__}({inner}{more})"
    if isinstance(value, np.ndarray | np.generic):
        return f"{type(value).__name__} {value.dtype} {value.shape}"
    return type(value).__name__


_comparing = [False]  # within a call of `_also_accelerated`'s wrapper


def _also_accelerated(func, name, device):
    """``func``, which first runs each call under the acceleration switch
    (``devices.accelerated(device)``, any size), on a copy of its
    ``output=`` array, then as called; it returns the second call's result
    (or raises its exception) and raises AssertionError where the first
    call's differs (see ``--jaxndimage-accelerated``).  Integer results
    of functions that compute in floating point (all but the catalogue's
    exact ones: selections, labels, positions, counts) may differ by one
    unit (a value rounded or truncated from either side of an integer).
    Calls made by a call (a user's callable calling another function)
    run once, as called."""
    from jaxndimage import devices
    from jaxndimage._catalogue import CALLS, difference

    signature = inspect.signature(func)
    units = 0 if name in CALLS and CALLS[name].exact else 1

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if _comparing[0]:
            return func(*args, **kwargs)
        _comparing[0] = True
        try:
            return compared(*args, **kwargs)
        finally:
            _comparing[0] = False

    def compared(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return func(*args, **kwargs)
        output = bound.arguments.get("output")
        if isinstance(output, np.ndarray):
            copy = output.copy()
            copy.flags.writeable = output.flags.writeable
            bound.arguments["output"] = copy
        try:
            with devices.accelerated(device):
                switched = func(*bound.args, **bound.kwargs)
        except Exception as error:  # compared with the host's below
            switched = error
        try:
            host = func(*args, **kwargs)
        except Exception as error:
            if type(switched) is not type(error):
                raise AssertionError(
                    f"{name} under the switch: {switched!r}, where with "
                    f"default settings it raises {error!r}") from error
            raise
        if isinstance(switched, Exception):
            raise AssertionError(f"{name} under the switch raised "
                                 f"{switched!r}") from switched
        gap = difference(switched, host, units=units)
        if isinstance(output, np.ndarray):
            gap = max(gap, difference(bound.arguments["output"], output,
                                      units=units))
        if gap > SWITCH_TOLERANCE or not _same_types(switched, host):
            raise AssertionError(
                f"{name} under the switch on {device}: {_kind(switched)}, "
                f"differing by {gap:.3g} (relative to the largest magnitude)"
                f" from the host's {_kind(host)}")
        return host

    return wrapper


def swap(accelerated=None):
    """Put jaxndimage's functions into SciPy's public ndimage namespaces;
    with a device ``accelerated``, functions that also run each call under
    the switch (`_also_accelerated`)."""
    import scipy.ndimage
    from scipy._lib._array_api import xp_capabilities_table
    from scipy.ndimage import _support_alternative_backends

    import jaxndimage

    for name in swapped_names():
        original = getattr(scipy.ndimage, name)
        function = getattr(jaxndimage, name)
        if accelerated is not None:
            function = _also_accelerated(function, name, accelerated)
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
    group.addoption(
        "--jaxndimage-accelerated",
        metavar="DEVICE",
        help="also run every call under devices.accelerated(DEVICE) (a "
        "platform name or 'default') and fail where it differs from the host's",
    )
    group.addoption(
        "--jaxndimage-without-64-bits",
        action="store_true",
        help="with --jaxndimage-accelerated: compute there in 32-bit types, "
        "as on a TPU",
    )


def pytest_configure(config):
    # SciPy's conftest uses these marks before its own pytest_configure runs.
    config.addinivalue_line("markers", "array_api_backends: SciPy array API backends")
    config.addinivalue_line("markers", "thread_unsafe: not safe to run in threads")
    known = load_known_failures()
    mode = current_mode()
    device = _accelerator(config)
    if device is not None:
        from jaxndimage import devices

        if not devices.native_64_bits(device):
            mode = "switch-32"
            known.update(load_known_failures(mode=mode))
    recorder = _Recorder(config, known, mode)
    swap(device)
    config.pluginmanager.register(recorder, "jaxndimage_recorder")


def _accelerator(config):
    """The device of ``--jaxndimage-accelerated`` (None without it), which
    takes host input of any size, in 32-bit types with
    ``--jaxndimage-without-64-bits``."""
    name = config.getoption("jaxndimage_accelerated")
    if name is None:
        return None
    from jaxndimage import devices

    device = devices.resolve(name)
    devices.ACCELERATED_FROM[device.platform] = 0
    if config.getoption("jaxndimage_without_64_bits"):
        devices.NATIVE_64_BITS[device.platform] = False
    return device


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
