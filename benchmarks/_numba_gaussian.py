"""A Numba separable Gaussian with SciPy's 'reflect' boundary: the peer that
users who find JAX slow to compile switch to.  Numba compiles once per dtype
and number of dimensions (here: 2-D float32), never per shape."""

import numba
import numpy as np


def _weights(sigma: float, truncate: float = 4.0) -> np.ndarray:
    radius = int(truncate * sigma + 0.5)
    x = np.arange(-radius, radius + 1, dtype=np.float64)
    phi = np.exp(-0.5 / sigma ** 2 * x ** 2)
    return phi / phi.sum()


@numba.njit(cache=False)
def _reflect(i: int, n: int) -> int:
    period = 2 * n
    i %= period
    return i if i < n else period - 1 - i


@numba.njit(cache=False)
def _pass(image, weights, axis):
    rows, cols = image.shape
    radius = weights.shape[0] // 2
    out = np.empty_like(image)
    for r in range(rows):
        for c in range(cols):
            total = 0.0
            for k in range(weights.shape[0]):
                if axis == 0:
                    total += weights[k] * image[_reflect(r + k - radius, rows), c]
                else:
                    total += weights[k] * image[r, _reflect(c + k - radius, cols)]
            out[r, c] = total
    return out


def gaussian_filter(image: np.ndarray, sigma: float) -> np.ndarray:
    """``scipy.ndimage.gaussian_filter(image, sigma)`` for a 2-D array."""
    weights = _weights(sigma)
    return _pass(_pass(image, weights, 0), weights, 1)
