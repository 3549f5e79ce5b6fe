"""A plain SciPy script over a folder of images of many sizes.

It is what the pipeline benchmark runs unmodified, once under SciPy
(``python benchmarks/pipeline_script.py``) and once under jaxndimage
(``python -m jaxndimage run benchmarks/pipeline_script.py``).  The "folder"
is generated: ``--images`` float32 images of distinct shapes between 64²
and 1024² (fixed seed).  Each image goes through the steps of issue 43's
script: smoothing, edges, denoising, downsampling and sampling; the
gradient magnitude, local mean and maximum; a rotation and an affine
transform; spline interpolation of orders 3 and 5 (prefiltered); a
Fourier-domain Gaussian of the image's FFT; labels of its bright pixels
and the distance transform of its mask.  It prints the loop time, the time
of each step (``step_<name>_s``, first calls and compilation included)
and a checksum.
"""

import argparse
import time
from collections import defaultdict

import numpy as np
from scipy import ndimage


def images(count: int, seed: int = 0):
    """``count`` float32 images of distinct shapes, 64 to 1024 per axis."""
    rng = np.random.default_rng(seed)
    shapes: list[tuple[int, int]] = []
    while len(shapes) < count:
        shape = tuple(int(v) for v in rng.integers(64, 1025, 2))
        if shape not in shapes:
            shapes.append(shape)
    for shape in shapes:
        yield rng.random(shape, dtype=np.float32)


def grid(shape: tuple[int, ...], count: int = 64) -> np.ndarray:
    """A ``count`` x ``count`` grid of points spanning an array of
    ``shape``, as map_coordinates takes them."""
    rows, cols = shape
    return np.stack(np.meshgrid(np.linspace(0, rows - 1, count),
                                np.linspace(0, cols - 1, count),
                                indexing="ij")).reshape(2, -1)


def process(image: np.ndarray, times: dict[str, float]) -> float:
    """Every step of the script on one image; each step's time is added to
    ``times``.  Returns a checksum of the results."""

    def step(name, function, *args, **kwargs):
        start = time.perf_counter()
        result = function(*args, **kwargs)
        times[name] += time.perf_counter() - start
        return result

    smooth = step("gaussian_filter", ndimage.gaussian_filter, image, 2.0)
    edges = np.hypot(step("sobel", ndimage.sobel, smooth, axis=0),
                     step("sobel", ndimage.sobel, smooth, axis=1))
    clean = step("median_filter", ndimage.median_filter, edges, size=3)
    small = step("zoom_order1", ndimage.zoom, clean, 0.5, order=1)
    samples = step("map_coordinates_order1", ndimage.map_coordinates, small,
                   grid(small.shape), order=1)
    magnitude = step("gaussian_gradient_magnitude",
                     ndimage.gaussian_gradient_magnitude, image, 1.5)
    local = step("uniform_filter", ndimage.uniform_filter, image, 5)
    peaks = step("maximum_filter", ndimage.maximum_filter, image, 3)
    turned = step("rotate_order1", ndimage.rotate, image, 15, order=1,
                  reshape=False)
    sheared = step("affine_transform_order1", ndimage.affine_transform,
                   image, [[1.0, 0.1], [0.05, 0.95]], offset=(-3.0, 5.0),
                   order=1)
    resized = step("zoom_order3", ndimage.zoom, image, 0.75, order=3)
    fine = step("map_coordinates_order5", ndimage.map_coordinates, image,
                grid(image.shape), order=5, mode="mirror")
    blurred = step("fourier_gaussian", ndimage.fourier_gaussian,
                   np.fft.fft2(image), 3.0)
    labels, count = step("label", ndimage.label, image > 0.7)
    distance = step("distance_transform_edt",
                    ndimage.distance_transform_edt, image > 0.5)
    return float(samples.sum() + magnitude.mean() + local.mean()
                 + peaks.mean() + turned.mean() + sheared.mean()
                 + resized.mean() + fine.sum() + np.abs(blurred).mean()
                 + labels.max() + count + distance.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--images", type=int, default=60)
    args = parser.parse_args()
    folder = list(images(args.images))
    times: dict[str, float] = defaultdict(float)
    start = time.perf_counter()
    checksum = sum(process(image, times) for image in folder)
    elapsed = time.perf_counter() - start
    steps = " ".join(f"step_{name}_s={seconds:.4f}"
                     for name, seconds in times.items())
    print(f"loop_s={elapsed:.4f} {steps} checksum={checksum:.6e}")


if __name__ == "__main__":
    main()
