"""scipy_backend.patch/unpatch/patched and the `run` command."""

import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import scipy.ndimage

import jaxndimage
from jaxndimage import scipy_backend

PIPELINE = Path(__file__).parent / "data" / "pipeline.py"
RUN = ("import sys, jaxndimage._runner as r; "
       "sys.exit(r.main(sys.argv[1:]))")


def _scipy_functions():
    return {name: getattr(scipy.ndimage, name)
            for name in dir(scipy.ndimage) if not name.startswith("_")}


@pytest.fixture(autouse=True)
def clean():
    before = _scipy_functions()
    yield
    scipy_backend.unpatch()
    assert not scipy_backend.is_patched()
    assert _scipy_functions() == before


def test_patch_routes_implemented_names_only_and_unpatch_restores_them():
    before = _scipy_functions()
    scipy_backend.patch()
    scipy_backend.patch()  # idempotent
    routed = {name for name in jaxndimage.__all__ if name in before}
    assert {"gaussian_filter", "sobel", "median_filter"} <= routed
    for name, original in before.items():
        now = getattr(scipy.ndimage, name)
        if name in routed:
            assert now is not original
            assert now.__wrapped__ is getattr(jaxndimage, name)
        else:
            assert now is original, name
    scipy_backend.unpatch()
    scipy_backend.unpatch()  # idempotent
    for name, original in before.items():
        assert getattr(scipy.ndimage, name) is original, name


def test_routed_functions_give_scipys_numbers(rng):
    image = rng.random((20, 16))
    expected = scipy.ndimage.gaussian_laplace(image, 1.5)
    with scipy_backend.patched() as calls:
        result = scipy.ndimage.gaussian_laplace(image, 1.5)
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)
    assert calls == {"scipy.ndimage.gaussian_laplace": 1}


def test_contexts_nest_and_outlive_unpatch():
    original = scipy.ndimage.uniform_filter
    outer_record = Counter()
    with scipy_backend.patched(record=outer_record):
        with scipy_backend.patched() as inner:
            scipy.ndimage.uniform_filter(np.ones(5), 3)
        assert scipy_backend.is_patched()
        scipy.ndimage.uniform_filter(np.ones(5), 3)
        scipy_backend.unpatch()  # a running block keeps its patch
        assert scipy_backend.is_patched()
    assert scipy.ndimage.uniform_filter is original
    assert inner == {"scipy.ndimage.uniform_filter": 1}
    assert outer_record == {"scipy.ndimage.uniform_filter": 2}


def test_patch_record_counts_until_unpatch():
    record = {}
    scipy_backend.patch(record=record)
    scipy.ndimage.sobel(np.ones((4, 4)))
    scipy.ndimage.sobel(np.ones((4, 4)))
    scipy_backend.unpatch()
    scipy.ndimage.sobel(np.ones((4, 4)))
    assert record == {"scipy.ndimage.sobel": 2}


def test_entering_from_many_threads_is_safe():
    # A record counts the routed calls of every thread while it is active.
    original = scipy.ndimage.gaussian_filter
    errors, inner = [], []
    barrier = threading.Barrier(8)

    def work():
        try:
            barrier.wait()
            for _ in range(20):
                with scipy_backend.patched() as calls:
                    assert scipy.ndimage.gaussian_filter is not original
                    scipy.ndimage.gaussian_filter(np.ones(3), 0)
                inner.append(calls["scipy.ndimage.gaussian_filter"])
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(8)]
    with scipy_backend.patched() as total:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not errors
    assert total == {"scipy.ndimage.gaussian_filter": 160}
    assert len(inner) == 160 and min(inner) >= 1
    assert scipy.ndimage.gaussian_filter is original


def test_skimage_patch_tools_are_routed():
    skimage_util = pytest.importorskip("skimage.util")
    original = skimage_util.view_as_blocks
    with scipy_backend.patched() as calls:
        blocks = skimage_util.view_as_blocks(np.arange(16).reshape(4, 4),
                                             (2, 2))
    assert skimage_util.view_as_blocks is original
    assert blocks.shape == (2, 2, 2, 2)
    assert calls == {"skimage.util.view_as_blocks": 1}
    assert "skimage.util.montage" in scipy_backend.routed_names()


def _pipeline(folder, *runner):
    folder.mkdir()
    run = subprocess.run([sys.executable, *runner, str(PIPELINE),
                          "out.npz", "1.5"], capture_output=True,
                         text=True, timeout=300, cwd=folder)
    assert run.returncode == 0, run.stderr
    return run, np.load(folder / "out.npz")


def test_unmodified_script_runs_the_same_under_run(tmp_path):
    plain, expected = _pipeline(tmp_path / "plain")
    routed, result = _pipeline(tmp_path / "routed", "-c", RUN, "--report")
    assert routed.stdout == plain.stdout
    assert "argv: ['out.npz', '1.5']" in plain.stdout
    assert sorted(result.files) == sorted(expected.files)
    for name in expected.files:
        np.testing.assert_allclose(result[name], expected[name],
                                   rtol=1e-10, atol=1e-10, err_msg=name)
    report = routed.stderr
    assert "jaxndimage: 8 calls routed to jaxndimage" in report
    for name, count in [("gaussian_filter", 1), ("sobel", 2),
                        ("gaussian_gradient_magnitude", 1),
                        ("uniform_filter", 1), ("median_filter", 1),
                        ("label", 1), ("sum_labels", 1)]:
        assert f"scipy.ndimage.{name}" in report
        line = next(line for line in report.splitlines()
                    if line.strip().startswith(f"scipy.ndimage.{name} "))
        assert line.split()[-1] == str(count)


def test_run_passes_exit_status_and_restores_state(tmp_path):
    from jaxndimage import _runner

    script = tmp_path / "stop.py"
    script.write_text("import sys\nfrom scipy import ndimage\n"
                      "assert ndimage.sobel.__module__ == 'jaxndimage._filters'\n"
                      "sys.exit(3)\n")
    argv, path = sys.argv[:], sys.path[:]
    assert _runner.main([str(script)]) == 3
    assert sys.argv == argv and sys.path == path
    assert not scipy_backend.is_patched()
