"""Devices: host arrays compute on the host's CPU whatever JAX's default
device is, or on the device the acceleration switch names; JAX arrays
compute on their own device and their results stay there; programs are
compiled, and kept, per device; a dtype a device cannot compute is refused.

The check runs in a subprocess (tests/_devices_check.py) with two forced
CPU devices, the second made JAX's default: on one machine this stands in
for an accelerator host, where the default device is the accelerator.
Before host arrays were pinned to the host's CPU, the label kernel there
raised "compiled for input shardings that disagree" as it did on a TPU
machine.
"""

import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi

import jaxndimage as jn
from jaxndimage import devices
from jaxndimage._catalogue import difference

CHECK = Path(__file__).with_name("_devices_check.py")


def test_host_and_device_arrays_compute_where_they_live():
    env = dict(os.environ, JAX_PLATFORMS="cpu", JAXNDIMAGE_CACHE="0")
    run = subprocess.run([sys.executable, str(CHECK)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith("ok ")


# --------------------------------------------------------------------------
# The acceleration switch (jaxndimage.devices), on the CPU: the TPU's
# arithmetic is the CPU's with NATIVE_64_BITS["cpu"] set to False.
# --------------------------------------------------------------------------

IMAGE = np.random.default_rng(3).random((40, 33))


@pytest.fixture
def like_a_tpu(monkeypatch):
    """The host's CPU as a device without native 64-bit floats."""
    monkeypatch.setitem(devices.NATIVE_64_BITS, "cpu", False)
    return devices.host_device()


def _close(got, expected, rtol=2e-6):
    assert type(got) is type(expected)
    assert got.dtype == expected.dtype
    scale = max(float(np.abs(expected).max()), 1.0)
    np.testing.assert_allclose(got, expected, rtol=0, atol=rtol * scale)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.uint8])
def test_switch_computes_in_float32_and_returns_scipys_dtype(like_a_tpu,
                                                              dtype):
    image = (IMAGE * 200).astype(dtype)
    with devices.accelerated(like_a_tpu) as device:
        assert device == like_a_tpu
        got = jn.gaussian_filter(image, 2.0)
        edt = jn.distance_transform_edt(image > 50)
    expected = ndi.gaussian_filter(image, 2.0)
    if dtype == np.uint8:  # float32 arithmetic may round a .5 the other way
        assert got.dtype == expected.dtype
        assert np.abs(got.astype(int) - expected).max() <= 1
    else:
        _close(got, expected)
    _close(edt, ndi.distance_transform_edt(image > 50))
    if dtype == np.float64:  # computed in float32: not SciPy's bits
        assert not np.array_equal(got, expected)


def test_small_host_input_stays_on_the_host_under_the_switch(like_a_tpu,
                                                            monkeypatch):
    # Below the platform's ACCELERATED_FROM (the arrays' elements
    # together) a call computes on the host in SciPy's arithmetic: its
    # bits; from it on, on the device in float32.
    monkeypatch.setitem(devices.ACCELERATED_FROM, like_a_tpu.platform,
                        IMAGE.size)
    small = IMAGE[:, :-1]
    with devices.accelerated(like_a_tpu):
        assert devices.accelerator_for([small]) is None
        assert devices.accelerator_for([IMAGE]) == like_a_tpu
        assert devices.accelerator_for([small, small[:2]]) == like_a_tpu
        on_host = jn.gaussian_filter(small, 2.0)
        on_device = jn.gaussian_filter(IMAGE, 2.0)
    np.testing.assert_array_equal(on_host, ndi.gaussian_filter(small, 2.0))
    expected = ndi.gaussian_filter(IMAGE, 2.0)
    assert not np.array_equal(on_device, expected)
    _close(on_device, expected)


def test_switch_keeps_complex_results_complex128(like_a_tpu):
    image = IMAGE + 1j * IMAGE[::-1]
    with devices.accelerated(like_a_tpu):
        got = jn.fourier_gaussian(np.fft.fft2(image), 1.5)
        shifted = jn.fourier_shift(np.fft.fft2(IMAGE), (1.5, -2.0))
    _close(got, ndi.fourier_gaussian(np.fft.fft2(image), 1.5), 1e-5)
    _close(shifted, ndi.fourier_shift(np.fft.fft2(IMAGE), (1.5, -2.0)), 1e-5)


def test_large_complex_results_come_back_as_their_parts(like_a_tpu,
                                                       monkeypatch):
    # A TPU hands complex arrays to the host slowly: large ones come back
    # as real and imaginary parts, with the same values and dtypes.
    monkeypatch.setitem(devices.SPLIT_COMPLEX_TRANSFERS,
                        like_a_tpu.platform, True)
    parts = []
    split = devices._complex_parts
    monkeypatch.setattr(devices, "_complex_parts",
                        lambda values: parts.append(values.shape)
                        or split(values))
    spectrum = np.fft.fft2(np.random.default_rng(1).random((300, 300)))
    narrow = spectrum.astype(np.complex64)
    with devices.accelerated(like_a_tpu):
        shifted = jn.fourier_shift(spectrum, (1.5, -2.0))
        smooth = jn.fourier_gaussian(narrow, 1.5, output=np.complex64)
        small = jn.fourier_shift(spectrum[:8, :8], 0.5)
    assert parts == [(300, 300), (300, 300)]
    _close(shifted, ndi.fourier_shift(spectrum, (1.5, -2.0)), 1e-5)
    _close(smooth, ndi.fourier_gaussian(narrow, 1.5, output=np.complex64),
           1e-5)
    _close(small, ndi.fourier_shift(spectrum[:8, :8], 0.5), 1e-5)


def test_switch_honours_output_requests(like_a_tpu):
    image = IMAGE.astype(np.float32)
    out = np.zeros(image.shape, np.float64)
    with devices.accelerated(like_a_tpu):
        as_dtype = jn.uniform_filter(image, 3, output=np.float64)
        into = jn.uniform_filter(IMAGE, 3, output=out)
        narrow = jn.uniform_filter(IMAGE, 3, output=np.float32)
    _close(as_dtype, ndi.uniform_filter(image, 3, output=np.float64))
    assert into is out
    _close(out, ndi.uniform_filter(IMAGE, 3))
    _close(narrow, ndi.uniform_filter(IMAGE, 3, output=np.float32))


def test_switch_measurements_and_labels(like_a_tpu):
    labels, count = ndi.label(IMAGE > 0.6)
    index = np.arange(1, count + 1)
    with devices.accelerated(like_a_tpu):
        got_labels, got_count = jn.label(IMAGE > 0.6)
        means = jn.mean(IMAGE, labels, index)
        centres = jn.center_of_mass(IMAGE, labels, index)
    np.testing.assert_array_equal(got_labels, labels)
    assert got_count == count
    _close(means, ndi.mean(IMAGE, labels, index))
    np.testing.assert_allclose(centres, ndi.center_of_mass(IMAGE, labels,
                                                           index), rtol=1e-5)


_INTS = (IMAGE * 9).astype(np.int32)
_LABELS = ndi.label(IMAGE > 0.6)[0]
#: Distinct values: with an index array SciPy's positions of tied
#: extremes are any of them (its sort is not stable).
_DISTINCT = np.random.default_rng(4).permutation(IMAGE.size).reshape(
    IMAGE.shape).astype(np.int32)
#: Calls whose result dtypes SciPy derives from the arguments, not from
#: the input's dtype alone (found by SciPy's suite under the switch).
DERIVED_DTYPES = {
    "sum of one region, int32": lambda m: m.sum(_INTS),
    "sum of one label, uint32": lambda m: m.sum(_INTS.astype(np.uint32),
                                                _LABELS, 2),
    "sums per label, int32": lambda m: m.sum(_INTS, _LABELS, [1, 2]),
    "median, int64": lambda m: m.median(_INTS.astype(np.int64), _LABELS,
                                        [1, 2]),
    "median, float32": lambda m: m.median(IMAGE.astype(np.float32)),
    "extrema, int32": lambda m: m.extrema(_DISTINCT, _LABELS, [1, 2]),
    "extrema of one region, int32": lambda m: m.extrema(_INTS),
    "maximum_position, int32": lambda m: m.maximum_position(_DISTINCT,
                                                            _LABELS, [1, 2]),
    "label, int64 input": lambda m: m.label(_LABELS.astype(np.int64)),
    "distance_transform_cdt, int64 input": lambda m:
        m.distance_transform_cdt(_LABELS.astype(np.int64),
                                 return_indices=True),
    "distance_transform_bf taxicab, uint64 input": lambda m:
        m.distance_transform_bf(_LABELS.astype(np.uint64), "taxicab",
                                return_indices=True),
    "correlate1d, float64 input, complex64 weights": lambda m:
        m.correlate1d(IMAGE, np.array([1, 1 + 1j], np.complex64)),
    "correlate, int32 input, complex64 weights": lambda m:
        m.correlate(_INTS, np.array([[1, 1j]], np.complex64)),
    "convolve, float32 input, complex128 weights, real output dtype":
        lambda m: m.convolve(IMAGE.astype(np.float32),
                             np.array([[1, 1j]]), output=np.float64),
    "vectorized_filter np.sum, int8": lambda m: m.vectorized_filter(
        _INTS.astype(np.int8), np.sum, size=3),
    "fourier_gaussian, int32 input": lambda m: m.fourier_gaussian(_INTS, 2),
    "fourier_shift, float32 input": lambda m: m.fourier_shift(
        IMAGE.astype(np.float32), 1.5),
    "fourier_gaussian, big-endian complex128 input": lambda m:
        m.fourier_gaussian(np.fft.fft2(IMAGE).astype(">c16"), 1.5),
    # Output dtypes SciPy ignores or replaces, not casts to.
    "binary_erosion, output=object": lambda m: m.binary_erosion(
        IMAGE > 0.5, output=object),
    "watershed_ift, an output dtype": lambda m: m.watershed_ift(
        (IMAGE * 200).astype(np.uint8), np.eye(40, 33, dtype=np.int16),
        output=np.float64),
}


@pytest.mark.filterwarnings("ignore:promoting specified output dtype")
@pytest.mark.parametrize("name", sorted(DERIVED_DTYPES))
def test_switch_returns_the_dtypes_scipy_derives_from_the_arguments(
        like_a_tpu, name):
    call = DERIVED_DTYPES[name]
    expected = call(ndi)
    with devices.accelerated(like_a_tpu):
        got = call(jn)
    assert type(got) is type(expected)
    assert jax.tree.map(lambda a: np.asarray(a).dtype, got) == jax.tree.map(
        lambda a: np.asarray(a).dtype, expected)
    assert difference(got, expected) <= 1e-5


def test_switch_checks_output_dtype_names_as_scipy_does(like_a_tpu):
    # SciPy refuses a non-numeric dtype given by name (not as a dtype).
    with devices.accelerated(like_a_tpu), pytest.raises(
            RuntimeError, match="numeric dtype"):
        jn.correlate1d(_INTS, [1.0, 2.0], output="bool")


def test_set_device_lasts_until_unset_and_a_block_takes_precedence():
    assert devices.accelerator() is None
    try:
        assert devices.set_device("cpu") == devices.host_device()
        assert devices.accelerator() == devices.host_device()
        with devices.accelerated("cpu"):
            assert devices.accelerator() == devices.host_device()
    finally:
        devices.set_device(None)
    assert devices.accelerator() is None


def test_unknown_devices_are_refused_by_name():
    with pytest.raises(ValueError, match="device: JAX has no 'nodevice'"):
        devices.set_device("nodevice")
    with pytest.raises(TypeError, match="device"):
        devices.set_device(3)


def test_run_device_option(tmp_path, capsys):
    from jaxndimage import _runner

    script = tmp_path / "where.py"
    script.write_text("from jaxndimage import devices\n"
                      "print(devices.accelerator().platform)\n")
    assert _runner.main(["--device", "cpu", str(script)]) == 0
    assert capsys.readouterr().out.strip() == "cpu"
    assert devices.accelerator() is None


def test_jax_arrays_of_dtypes_a_device_cannot_compute_are_refused(
        like_a_tpu):
    with jax.enable_x64(True):
        spectrum = jax.device_put(np.fft.fft2(IMAGE), like_a_tpu)
        with pytest.raises(TypeError, match="input of dtype complex128 "
                                            "cannot be computed on cpu"):
            jn.fourier_gaussian(spectrum, 1.5)
        with pytest.raises(TypeError, match="complex128"):
            jn.gaussian_filter(spectrum, 1.5)
        wide = jax.device_put(IMAGE, like_a_tpu)  # float64: refused where
        with pytest.raises(TypeError, match="float64"):  # made complex128
            jn.fourier_shift(wide, 1.0)
        assert jn.gaussian_filter(wide, 1.5).dtype == jnp.float64


def test_switch_forms_no_complex128_on_a_device_without_it(like_a_tpu):
    # A TPU's compiler aborts the process on a conversion to complex128.
    # Under the switch every input is at most 32 bits wide there, so no
    # program may form complex128 (from a float64 constant, say).
    import gc

    from jaxndimage import _cache
    from jaxndimage._catalogue import CALLS, inputs

    caches = [cache for cache in gc.get_objects()
              if isinstance(cache, _cache.KernelCache)]
    kept = [dict(cache.memory) for cache in caches]
    for cache in caches:  # every program the calls run is compiled anew
        cache.memory.clear()
    try:
        arrays = inputs(32)
        with devices.accelerated(like_a_tpu):
            for call in CALLS.values():
                call.run(jn, *(arrays[k] for k in call.takes))
        formed = [key for cache in gc.get_objects()
                  if isinstance(cache, _cache.KernelCache)
                  for key, program in cache.memory.items()
                  if "c128" in program.as_text()]
    finally:
        for cache, memory in zip(caches, kept):
            cache.memory.update(memory)
    assert not formed


def test_small_host_operands_are_copied_once_with_their_bits_and_types():
    from jaxndimage import _cache

    device = devices.host_device()
    values = (2.0, -0.0, 0.0, float("nan"), 3, True, 1j, np.float32(-0.0),
              np.arange(5, dtype=np.float64) / 16, None)
    first = _cache.resident(values, device)
    again = _cache.resident(values, device)
    for value, copy, copy_again in zip(values, first, again):
        if value is None:
            assert copy is None
            continue
        assert isinstance(copy, jax.Array)
        assert copy is copy_again  # copied once
        expected = jnp.asarray(value)
        assert copy.dtype == expected.dtype
        assert copy.weak_type == expected.weak_type
        assert np.asarray(copy).tobytes() == np.asarray(expected).tobytes()
    # -0.0 and 0.0 are different copies; large arrays stay where they are.
    assert np.signbit(np.asarray(first[1])) and not np.signbit(
        np.asarray(first[2]))
    large = np.zeros(_cache.RESIDENT_BYTES // 8 + 1)
    assert _cache.resident((large,), device)[0] is large


def test_kernels_taking_device_copies_of_their_operands_give_the_same_bits(
        monkeypatch):
    """What an accelerator runs: a kernel's small host operands (shifts,
    zooms, a cval of NaN, a sigma, label indices) passed as device copies,
    compared with the same calls passing them as they are.  (On a CPU the
    window filters of JAX arrays run on canvases, which take no copies.)"""
    from jaxndimage import _cache

    image = jnp.asarray(IMAGE.astype(np.float32))
    calls = [
        lambda: jn.shift(image, (0.5, -1.25), cval=np.nan),
        lambda: jn.zoom(image, 0.75, order=1, cval=-0.0),
        lambda: jn.fourier_gaussian(image, 2.0),
        lambda: jn.distance_transform_cdt(image > 0.5),
        lambda: jn.maximum(image, jn.label(image > 0.5)[0], index=[1, 2]),
    ]
    expected = [call() for call in calls]
    copied, original = [], _cache.resident

    def counting(args, device):
        copies = original(args, device)
        copied.append(sum(a is not b for a, b in zip(
            jax.tree.leaves(args), jax.tree.leaves(copies))))
        return copies

    monkeypatch.setattr(_cache, "keeps_operands", lambda device: True)
    monkeypatch.setattr(_cache, "resident", counting)
    for call, want in zip(calls, expected):
        got = call()
        for got_leaf, want_leaf in zip(jax.tree.leaves(got),
                                       jax.tree.leaves(want), strict=True):
            np.testing.assert_array_equal(np.asarray(got_leaf),
                                          np.asarray(want_leaf))
    # (Which calls pass host numbers to their kernels differs by device.)
    assert sum(copied) > 0


def test_accelerator_lane_reads_test_ids_holding_spaces():
    # A parameter's id can hold spaces: each test is counted once, by its
    # whole id (the lane's summary once merged such tests).
    import accelerator_lane

    test = "compat_tests/test_parity.py::test_same[affine_transform 2 x]"
    done = accelerator_lane.OUTCOME.match(f"{test} PASSED   [ 10%]")
    assert done.groups() == (test, "PASSED")
    assert accelerator_lane.STARTED.match(f"{test} ").group(1) == test


def test_switch_check_fails_where_the_switch_differs_from_the_host(
        monkeypatch):
    # compat_tests' check of the switch (--jaxndimage-accelerated) compares
    # each call on host arrays under the switch with the call by default,
    # relative to the result's or the input's magnitude, and runs calls on
    # JAX arrays once, as called.
    from compat_tests import switch_check

    cpu = devices.host_device()
    monkeypatch.setitem(devices.ACCELERATED_FROM, cpu.platform, 0)
    switched = []

    def shifted(input, by=0.0):
        # Differs by ``by`` where the switch would move ``input``.
        on_device = devices.accelerator_for([input]) is not None
        switched.append(on_device)
        return np.asarray(input) + (by if on_device else 0.0)

    checked = switch_check.also_accelerated(shifted, "shifted", cpu)
    near = np.full(3, 1e6)
    assert checked(near, by=1.0)[0] == 1e6  # 1e-6 of the input's scale
    assert switched == [True, False]
    with pytest.raises(AssertionError, match="shifted under the switch"):
        checked(np.ones(3), by=1e-3)
    switched.clear()
    checked(jnp.ones(3), by=1.0)
    assert switched == [False]  # once, as called
