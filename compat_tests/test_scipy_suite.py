"""Run SciPy's own ``scipy.ndimage`` test modules with jaxndimage swapped in.

One subprocess per (SciPy test module, mode), ``mode`` being the plain run
("numpy") or the array-API run ("array_api": ``SCIPY_ARRAY_API`` set to
the backends of `ARRAY_API_BACKENDS`), each
``python -m pytest --pyargs scipy.ndimage.tests.<module> -p
compat_tests.scipy_plugin``.  A module runs when it tests at least one name
that jaxndimage exports (`MODULE_FUNCTIONS`); the others would only run
SciPy against itself.  The per-function outcome tables are printed at the
end of the session by ``compat_tests/conftest.py``.

The subprocesses start in the background as soon as the session has
collected its tests (`start_in_background`, called from
``compat_tests/conftest.py``), one after the other, so they run while the
rest of the session does; each ``test_scipy_module`` then waits for its
own.  Under pytest-xdist each case runs its subprocess when it is reached.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
import scipy.ndimage

import jaxndimage
from compat_tests.scipy_plugin import UNEXERCISED, format_table

REPO = Path(__file__).resolve().parents[1]
SCIPY_TESTS = Path(scipy.ndimage.__file__).parent / "tests"
WORKERS = 2  # pytest-xdist workers per subprocess
TIMEOUT_S = 3000

# The public scipy.ndimage functions each SciPy test module calls.
MODULE_FUNCTIONS = {
    "test_c_api": ["generic_filter", "generic_filter1d", "geometric_transform"],
    "test_datatypes": ["affine_transform", "map_coordinates", "shift", "zoom"],
    "test_filters": [
        "convolve", "convolve1d", "correlate", "correlate1d",
        "gaussian_filter", "gaussian_filter1d", "gaussian_gradient_magnitude",
        "gaussian_laplace", "generic_filter", "generic_filter1d",
        "generic_gradient_magnitude", "generic_laplace", "laplace",
        "maximum_filter", "maximum_filter1d", "median_filter",
        "minimum_filter", "minimum_filter1d", "percentile_filter", "prewitt",
        "rank_filter", "sobel", "uniform_filter", "uniform_filter1d",
        "vectorized_filter",
    ],
    "test_fourier": [
        "fourier_ellipsoid", "fourier_gaussian", "fourier_shift",
        "fourier_uniform", "sum",
    ],
    "test_interpolation": [
        "affine_transform", "geometric_transform", "map_coordinates",
        "rotate", "shift", "spline_filter", "zoom",
    ],
    "test_measurements": [
        "center_of_mass", "extrema", "find_objects", "generate_binary_structure",
        "histogram", "label", "maximum", "maximum_position", "mean", "median",
        "minimum", "minimum_position", "standard_deviation", "sum",
        "sum_labels", "value_indices", "variance", "watershed_ift",
    ],
    "test_morphology": [
        "binary_closing", "binary_dilation", "binary_erosion",
        "binary_fill_holes", "binary_hit_or_miss", "binary_opening",
        "binary_propagation", "black_tophat", "distance_transform_bf",
        "distance_transform_cdt", "distance_transform_edt",
        "generate_binary_structure", "grey_closing", "grey_dilation",
        "grey_erosion", "grey_opening", "iterate_structure",
        "morphological_gradient", "morphological_laplace", "white_tophat",
    ],
    # Tests private helpers only.
    "test_ni_support": [],
    "test_splines": ["spline_filter1d"],
}

#: The backends of the array-API run.  SciPy's numpy backend is left out:
#: the plain run already passes numpy arrays through the same tests, and
#: running it twice costs a third of the array-API run.
ARRAY_API_BACKENDS = ["jax.numpy", "torch", "dask.array", "array_api_strict"]

SWAPPED = sorted(set(jaxndimage.__all__) & set(scipy.ndimage.__all__))
MODES = ("numpy", "array_api")
#: The modules also run in the plain run with every call made under the
#: acceleration switch on the CPU in 32-bit types, as on a TPU ("switch-32":
#: the plugin's ``--jaxndimage-accelerated``): the quick ones, whose
#: results' dtypes SciPy derives from the arguments in the most ways; the
#: accelerator lane runs the others (``--switch-modules``).
SWITCH_MODULES = ("test_fourier", "test_measurements")
CASES = [
    pytest.param(module, mode, id=f"{module}-{mode}")
    for module, functions in MODULE_FUNCTIONS.items()
    if set(functions) & set(SWAPPED)
    for mode in MODES
] + [pytest.param(module, "switch-32", id=f"{module}-switch-32")
     for module in SWITCH_MODULES]


def test_module_map_covers_scipy():
    """Every SciPy ndimage test module is in MODULE_FUNCTIONS, naming real functions."""
    shipped = {p.stem for p in SCIPY_TESTS.glob("test_*.py")}
    assert shipped == set(MODULE_FUNCTIONS)
    named = {f for functions in MODULE_FUNCTIONS.values() for f in functions}
    assert named <= set(scipy.ndimage.__all__)


class _Background:
    """The SciPy subprocesses of this session, run one after the other on a
    thread, on one shared kernel cache."""

    def __init__(self, cases: list[tuple[str, str]]):
        self.folder = Path(tempfile.mkdtemp(prefix="jaxndimage-scipy-suite-"))
        self.kernel_cache = self.folder / "kernel-cache"
        self.kernel_cache.mkdir()
        self.processes: list[subprocess.Popen] = []
        self.executor = ThreadPoolExecutor(max_workers=1)
        self.runs: dict[tuple[str, str], Future] = {
            case: self.executor.submit(self._run, *case) for case in cases}

    def _run(self, module: str, mode: str) -> tuple[int, str, Path]:
        return _run_module(module, mode, self.folder / f"{module}-{mode}.json",
                           self.kernel_cache, self.processes)

    def close(self) -> None:
        """Stop what still runs (an interrupted session) and remove the
        files."""
        for future in self.runs.values():
            future.cancel()
        for process in self.processes:
            if process.poll() is None:
                process.kill()
        self.executor.shutdown(wait=True)
        shutil.rmtree(self.folder, ignore_errors=True)


_background: _Background | None = None


def start_in_background(items: list[pytest.Item]) -> None:
    """Start the subprocesses of the ``test_scipy_module`` cases among the
    session's ``items`` (outside pytest-xdist workers)."""
    global _background
    cases = [(item.callspec.params["module"], item.callspec.params["mode"])
             for item in items
             if getattr(item, "originalname", None) == "test_scipy_module"]
    if cases and _background is None and "PYTEST_XDIST_WORKER" not in os.environ:
        _background = _Background(cases)


def stop_background() -> None:
    global _background
    if _background is not None:
        _background.close()
        _background = None


@pytest.fixture(scope="session")
def kernel_cache(tmp_path_factory):
    """jaxndimage's kernel cache, shared by all subprocesses and their workers.

    Both modes and both xdist workers compile many of the same kernels: an
    entry one of them stores is loaded by the others without tracing,
    lowering or compiling.
    """
    if _background is not None:
        return _background.kernel_cache
    return tmp_path_factory.mktemp("kernel-cache")


def _environment(mode, kernel_cache):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTEST_", "SCIPY_ARRAY_API", "JAXNDIMAGE_CACHE"))}
    if mode == "array_api":
        env["SCIPY_ARRAY_API"] = json.dumps(ARRAY_API_BACKENDS)
    env["JAXNDIMAGE_CACHE_DIR"] = str(kernel_cache)
    env["JAXNDIMAGE_CACHE_MAX_MB"] = "4096"
    # jaxndimage's cache stands aside for JAX's own; the suite uses jaxndimage's.
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    return env


def _run_module(module: str, mode: str, report: Path, kernel_cache: Path,
                processes: list[subprocess.Popen] | None = None
                ) -> tuple[int, str, Path]:
    """Run SciPy's ``module`` in ``mode``; the exit status, the output and
    where the report is.  The process is added to ``processes`` while it
    runs, so that it can be stopped."""
    command = [
        sys.executable, "-m", "pytest", "--pyargs", f"scipy.ndimage.tests.{module}",
        "-p", "compat_tests.scipy_plugin", "-p", "no:cacheprovider",
        "-q", "--no-header", "-n", str(WORKERS), "--dist", "load",
        "--jaxndimage-check-stale", f"--jaxndimage-report={report}",
    ]
    if mode == "switch-32":
        command += ["--jaxndimage-accelerated", "cpu",
                    "--jaxndimage-without-64-bits"]
    process = subprocess.Popen(
        command, cwd=REPO, env=_environment(mode, kernel_cache),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if processes is not None:
        processes.append(process)
    try:
        output, _ = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        output += f"\n(stopped after {TIMEOUT_S} s)"
    return process.returncode, output, report


@pytest.mark.parametrize("module, mode", CASES)
def test_scipy_module(module, mode, tmp_path, kernel_cache, record_property):
    """SciPy's ``<module>`` passes (known failures aside) with jaxndimage swapped in."""
    if _background is not None and (module, mode) in _background.runs:
        returncode, output, report = _background.runs[module, mode].result()
    else:
        returncode, output, report = _run_module(module, mode, tmp_path / "report.json",
                                                 kernel_cache)
    assert report.exists(), f"no report from the subprocess:\n{output[-6000:]}"
    data = json.loads(report.read_text())
    counts = {name: Counter(c) for name, c in data["counts"].items()}
    table = "\n".join(format_table(counts))
    record_property("jaxndimage_table", f"scipy.ndimage.tests.{module} [{mode}]\n{table}")

    assert returncode == 0, f"exit status {returncode}:\n{output[-12000:]}"
    assert data["mode"] == mode
    assert data["swapped"] == SWAPPED
    tested = set(MODULE_FUNCTIONS[module]) & set(SWAPPED)
    unexercised = sorted(f for f in tested if not any(counts.get(f, {}).values()))
    assert not unexercised, f"no test reached jaxndimage's {unexercised}:\n{table}"
    assert set(counts) - {UNEXERCISED} <= set(SWAPPED)
