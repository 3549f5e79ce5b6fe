"""Behaviour of the timing utilities and of ``python -m jaxndimage``.

Nothing here asserts how fast anything is: timings belong in benchmarks/.
"""

from __future__ import annotations

import subprocess
import sys
import types

import numpy as np
import pytest

import jaxndimage
from jaxndimage import __main__ as showcase
from jaxndimage import _timing


def test_interleaved_alternates_calls_and_skips_warmup():
    order = []
    fns = {"a": lambda: order.append("a"), "b": lambda: order.append("b")}
    times = _timing.interleaved(fns, repeat=3, warmup=1)
    assert order == ["a", "b"] * 4
    assert set(times) == {"a", "b"}
    assert all(len(v) == 3 and min(v) >= 0 for v in times.values())


def test_interleaved_budget_keeps_at_least_three_rounds():
    times = _timing.interleaved({"a": lambda: None}, repeat=50, warmup=0,
                                budget=0.0)
    assert len(times["a"]) == 3


def test_median_and_bound():
    assert _timing.median([3.0, 1.0, 2.0]) == 2.0
    assert np.isnan(_timing.median([]))
    assert _timing.bandwidth_bound_time(10_000, 1000.0) == 10.0


def test_compare_ratio_is_reference_over_candidate():
    calls = []
    result = _timing.compare("x", lambda: calls.append("ref"),
                             lambda: calls.append("cand"), repeat=2)
    assert calls[0] == "cand"  # the first call is the candidate's, alone
    assert calls[1:] == ["ref", "cand"] * 2
    assert result.ratio == pytest.approx(result.reference / result.candidate)
    assert set(result.as_dict()) >= {"ratio", "first_call_s"}


def test_block_waits_for_jax_and_passes_numpy_through():
    import jax.numpy as jnp

    value = {"a": jnp.ones(3), "b": np.zeros(2)}
    assert _timing.block(value) is value


def test_conversion_time_and_bandwidth_are_positive():
    assert _timing.conversion_time(np.ones((64, 64), np.float32), 2) > 0
    assert _timing.memory_bandwidth(1 << 16, repeat=2) > 0


def test_sample_image_is_deterministic_float32():
    a = showcase.sample_image(32)
    assert a.dtype == np.float32 and a.shape == (32, 32)
    np.testing.assert_array_equal(a, showcase.sample_image(32))
    assert a.std() > 0


def test_showcase_follows_the_public_api():
    names = showcase.showcased()
    assert "gaussian_filter" in names
    assert set(names) <= set(jaxndimage.__all__)
    fake = types.SimpleNamespace(__all__=["sobel", "not_a_showcase_call"])
    assert showcase.showcased(fake) == ["sobel"]


def test_showcase_prints_a_table_and_saves_a_figure(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out = tmp_path / "showcase.png"
    assert showcase.main(["--size", "24", "--repeat", "1", "--out", str(out),
                          "--only", "gaussian_filter", "sobel",
                          "--sizes", "24", "30"]) == 0
    text = capsys.readouterr().out
    assert "one script over 2 images" in text
    assert "results equal: yes" in text
    lines = [line for line in text.splitlines()
             if line.startswith(("gaussian_filter", "sobel"))]
    assert len(lines) == 2
    assert all(" yes " in line for line in lines)
    assert out.exists() and out.stat().st_size > 0


def test_showcase_rows_agree_with_scipy():
    rows = showcase.run_showcase(24, 1, ["gaussian_filter", "laplace"])
    assert [r["function"] for r in rows] == ["gaussian_filter", "laplace"]
    for row in rows:
        assert row["dtype_match"]
        assert row["max_abs_diff"] < 1e-4
        assert row["first_s"] > 0 and row["warm_s"] > 0


def test_showcase_pipeline_row_and_the_run_over_sizes_agree_with_scipy():
    rows = showcase.run_showcase(48, 1, ["label"])
    assert rows[0]["function"] == showcase.TITLES["label"]
    assert rows[0]["dtype_match"] and rows[0]["max_abs_diff"] < 1e-6
    run = showcase.run_sizes([20, 33], ["sobel", "zoom_linear"])
    assert run["equal"] and run["sizes"] == [20, 33]
    assert run["scipy_s"] > 0 and run["jax_s"] > 0 and run["compiled"] >= 0
    assert run["again_compiled"] == 0  # sobel on new sizes of seen buckets
    assert "results equal: yes" in showcase.format_sizes(run)


def test_showcase_rejects_unknown_names(capsys):
    with pytest.raises(SystemExit):
        showcase.main(["--only", "no_such_function", "--out", ""])
    assert "no_such_function" in capsys.readouterr().err


def test_help_mentions_size_and_run():
    done = subprocess.run([sys.executable, "-m", "jaxndimage", "--help"],
                          capture_output=True, text=True, check=True)
    text = " ".join(done.stdout.split())  # argparse wraps lines anywhere
    assert "--size" in text and "run [--report] SCRIPT [ARGS...]" in text


def test_run_subcommand_delegates_to_runner(monkeypatch):
    seen = []
    fake = types.ModuleType("jaxndimage._runner")
    fake.main = lambda argv: seen.append(argv) or 7
    monkeypatch.setitem(sys.modules, "jaxndimage._runner", fake)
    monkeypatch.setattr(jaxndimage, "_runner", fake, raising=False)
    assert showcase.main(["run", "script.py", "a", "--report"]) == 7
    assert seen == [["script.py", "a", "--report"]]
