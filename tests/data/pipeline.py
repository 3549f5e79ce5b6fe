"""A typical scipy.ndimage pipeline, written for SciPy only.

tests/test_scipy_backend.py runs it unmodified under plain Python and under
``python -m jaxndimage run``: denoise, find edges, threshold, label blobs,
measure them.  Usage: python pipeline.py OUTPUT.npz [SIGMA]
"""

import sys

import numpy as np
from scipy import ndimage
from scipy.ndimage import gaussian_filter


def synthetic_image(shape=(96, 128), seed=0):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    image = np.zeros(shape)
    for cy, cx, r in [(30, 40, 12), (60, 90, 18), (70, 25, 8)]:
        image += ((yy - cy) ** 2 + (xx - cx) ** 2 < r ** 2) * 1.0
    return image + 0.2 * rng.standard_normal(shape)


def main(output, sigma):
    image = synthetic_image()
    smooth = gaussian_filter(image, sigma)
    edges = np.hypot(ndimage.sobel(smooth, axis=0),
                     ndimage.sobel(smooth, axis=1))
    magnitude = ndimage.gaussian_gradient_magnitude(image, sigma)
    background = ndimage.uniform_filter(smooth, size=15, mode="nearest")
    cleaned = ndimage.median_filter(smooth - background, size=3)
    mask = smooth > 0.5
    labels, count = ndimage.label(mask)
    sizes = ndimage.sum_labels(mask, labels, range(1, count + 1))
    print(f"blobs: {count}")
    print("sizes:", " ".join(str(int(s)) for s in sorted(sizes)))
    print(f"argv: {sys.argv[1:]}")
    np.savez(output, smooth=smooth, edges=edges, magnitude=magnitude,
             cleaned=cleaned, labels=labels)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 2.0)
