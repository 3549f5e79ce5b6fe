"""Every public function on the device JAX has: host arrays by default, host
arrays under the acceleration switch, and JAX arrays on the device.

On a CPU (CI) the device is the CPU.  On an accelerator this is the
accelerator test lane (README, "On a GPU or TPU"):

* numpy input with default settings computes on the host's CPU and equals
  SciPy, dtype included (bit for bit but for the last-bit rounding of a
  few spline and interpolation results);
* numpy input under ``devices.accelerated()`` computes on the default
  device and comes back in SciPy's dtype, within `TOLERANCE` of SciPy
  (scaled by the result's largest magnitude, at least 1);
* float32 JAX arrays on the default device compute there, leave their
  results there, and agree within the same tolerance.

Selections (rank filters, morphology, labels, positions, counts) must be
equal in all three (`Call.exact`).
"""

import itertools

import jax
import numpy as np
import pytest
import scipy.ndimage as ndi

import jaxndimage as jn
from jaxndimage import devices
from jaxndimage._catalogue import CALLS, difference, inputs

#: float32 results against SciPy's float64 ones, relative to the result's
#: largest magnitude (at least 1).
TOLERANCE = 1e-5
#: numpy input with default settings: SciPy's arithmetic, equal but for
#: last-bit rounding of float32 results.
HOST_TOLERANCE = 2 * float(np.finfo(np.float32).eps)

DEVICE = jax.devices()[0]
ARRAYS = inputs(96)


@pytest.fixture(autouse=True)
def accelerate_any_size(monkeypatch):
    """The switch sends these small arrays to the device too (however few
    elements its platform accelerates from: `devices.ACCELERATED_FROM`)."""
    monkeypatch.setitem(devices.ACCELERATED_FROM, DEVICE.platform, 0)


@pytest.fixture(scope="module")
def expected():
    """SciPy's result of every call, computed once."""
    return {}


def _scipy(expected, name):
    if name not in expected:
        call = CALLS[name]
        expected[name] = call.run(ndi, *(ARRAYS[k] for k in call.takes))
    return expected[name]


def _check(name, got, want, tolerance, check_dtype=True):
    error = difference(got, want, check_dtype)
    limit = 0.0 if CALLS[name].exact else tolerance
    assert error <= limit, f"{name}: difference {error:.3g} > {limit:.3g}"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_host_arrays_by_default(name, expected):
    call = CALLS[name]
    got = call.run(jn, *(ARRAYS[k] for k in call.takes))
    _check(name, got, _scipy(expected, name), HOST_TOLERANCE)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_host_arrays_accelerated(name, expected):
    call = CALLS[name]
    with devices.accelerated(DEVICE):
        got = call.run(jn, *(ARRAYS[k] for k in call.takes))
    _check(name, got, _scipy(expected, name), TOLERANCE)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_host_arrays_accelerated_without_64_bits(name, expected,
                                                 monkeypatch):
    # What a TPU does under the switch (32-bit types only, results widened
    # to SciPy's dtypes on the host), on the device JAX has.
    monkeypatch.setitem(devices.NATIVE_64_BITS, DEVICE.platform, False)
    call = CALLS[name]
    with devices.accelerated(DEVICE):
        got = call.run(jn, *(ARRAYS[k] for k in call.takes))
    _check(name, got, _scipy(expected, name), TOLERANCE)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_jax_arrays_on_the_device(name, expected):
    call = CALLS[name]
    arrays = [jax.device_put(ARRAYS[k], DEVICE) for k in call.takes]
    got = call.run(jn, *arrays)
    for leaf in jax.tree.leaves(got):
        if isinstance(leaf, jax.Array):
            assert leaf.devices() == {DEVICE}, name
    _check(name, got, _scipy(expected, name), TOLERANCE, check_dtype=False)


@pytest.mark.skipif(DEVICE.platform != "tpu", reason=(
    "a TPU's XLA fuses the comparisons into the reductions; a CPU's would "
    "store the mask, and the CPU runs scatters instead (`_algorithms`)"))
def test_per_label_extremes_store_no_mask_on_a_tpu():
    # The groups x points mask of `_dense_groups.group_extremes` (here
    # 1328 x 2**22 entries, 5.6 GB as bytes) lives only inside the
    # reductions: the program's scratch memory is below two columns (the
    # integer keys of a float column may be stored).
    from jaxndimage import _dense_groups

    points, groups = 1 << 22, 1328
    shape = jax.ShapeDtypeStruct
    for dtype, where_equal in itertools.product((np.int32, np.float32),
                                                (False, True)):
        def extremes(column, segments, keys, values, targets,
                     where_equal=where_equal):
            return _dense_groups.group_extremes(
                column[:, None], segments, keys, False,
                (values, targets) if where_equal else None)

        compiled = jax.jit(extremes).lower(
            shape((points,), dtype), shape((points,), np.int32),
            shape((groups,), np.int32), shape((points,), np.float32),
            shape((groups,), np.float32)).compile()
        scratch = compiled.memory_analysis().temp_size_in_bytes
        assert scratch < 8 * points, (dtype, where_equal, scratch)
