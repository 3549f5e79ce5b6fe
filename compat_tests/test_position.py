"""A filter's value depends only on the window's values (DESIGN.md, Precision).

Identical lines at different positions of an array give identical results,
bit for bit, whichever axis the filter runs along and however XLA
vectorises the loop over the others; an antisymmetric kernel of a constant
line is exactly 0, as in SciPy.  Both hold for numpy and JAX input.
"""

import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as sp

import jaxndimage as jn

rng = np.random.default_rng(7)
BASE = rng.random((3, 37))

#: 1-D filters: each output line depends on its own input line only.
FILTERS = {
    "gaussian_filter1d": lambda m, x, axis: m.gaussian_filter1d(x, 2.1213, axis=axis, truncate=8),
    "gaussian_filter1d order 1": lambda m, x, axis: m.gaussian_filter1d(x, 1.7, axis=axis, order=1),
    "correlate1d": lambda m, x, axis: m.correlate1d(x, [0.3, -1.1, 2.7, 0.2, -0.4], axis=axis),
    "uniform_filter1d": lambda m, x, axis: m.uniform_filter1d(x, 19, axis=axis),
    "minimum_filter1d": lambda m, x, axis: m.minimum_filter1d(x, 4, axis=axis),
    "spline_filter1d": lambda m, x, axis: m.spline_filter1d(x, 3, axis=axis),
}


def _repeated_lines(axis: int, dtype) -> np.ndarray:
    """(12, 37, 5) with axis ``axis`` of length 37 the line axis: line ``k``
    of the flattened other axes equals base line ``k % 3``."""
    lines = np.stack([BASE[k % 3] for k in range(12 * 5)]).astype(dtype)  # (60, 37)
    x = lines.reshape(12, 5, 37)
    return np.moveaxis(x, -1, axis).copy()


@pytest.mark.parametrize("jax_input", [False, True], ids=["numpy", "jax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("name", FILTERS)
def test_identical_lines_give_identical_results(name, axis, dtype, jax_input):
    x = _repeated_lines(axis, dtype)
    got = np.asarray(FILTERS[name](jn, jnp.asarray(x) if jax_input else x, axis))
    lines = np.moveaxis(got, axis, -1).reshape(60, 37)
    for k in range(3, 60):
        np.testing.assert_array_equal(lines[k], lines[k % 3],
                                      err_msg=f"line {k} differs from line {k % 3}")


@pytest.mark.parametrize("jax_input", [False, True], ids=["numpy", "jax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_antisymmetric_kernels_of_constant_lines_are_exactly_zero(dtype, jax_input):
    # Constant along the last axis, varying along the others.
    x = (np.arange(12)[:, None, None] * 1.3 + np.arange(21)[None, :, None] ** 1.5
         + np.zeros((1, 1, 5))).astype(dtype)
    calls = {
        "gaussian order 1": lambda m, a: m.gaussian_filter(
            a, 2.1213, order=(0, 0, 1), mode="reflect", truncate=8),
        "gaussian order 3": lambda m, a: m.gaussian_filter1d(a, 1.5, axis=-1, order=3),
        "sobel": lambda m, a: m.sobel(a, axis=-1),
        "prewitt": lambda m, a: m.prewitt(a, axis=-1),
    }
    for name, call in calls.items():
        assert not np.count_nonzero(call(sp, x))  # SciPy's answer
        got = np.asarray(call(jn, jnp.asarray(x) if jax_input else x))
        assert not np.count_nonzero(got), f"{name}: {np.count_nonzero(got)} nonzero values"
