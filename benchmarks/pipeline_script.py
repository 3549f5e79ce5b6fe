"""A plain SciPy script over a folder of images of many sizes.

It is what the pipeline benchmark runs unmodified, once under SciPy
(``python benchmarks/pipeline_script.py``) and once under jaxndimage
(``python -m jaxndimage run benchmarks/pipeline_script.py``).  The "folder"
is generated: ``--images`` float32 images of distinct shapes between 64²
and 1024² (fixed seed).  It prints the loop time and a checksum.
"""

import argparse
import time

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


def process(image: np.ndarray) -> float:
    """Smooth, take edges, denoise, downsample and sample an image."""
    smooth = ndimage.gaussian_filter(image, 2.0)
    edges = np.hypot(ndimage.sobel(smooth, axis=0), ndimage.sobel(smooth, axis=1))
    clean = ndimage.median_filter(edges, size=3)
    small = ndimage.zoom(clean, 0.5, order=1)
    rows, cols = small.shape
    points = np.stack(np.meshgrid(np.linspace(0, rows - 1, 64),
                                  np.linspace(0, cols - 1, 64), indexing="ij"))
    samples = ndimage.map_coordinates(small, points.reshape(2, -1), order=1)
    return float(samples.sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--images", type=int, default=60)
    args = parser.parse_args()
    folder = list(images(args.images))
    start = time.perf_counter()
    checksum = sum(process(image) for image in folder)
    elapsed = time.perf_counter() - start
    print(f"loop_s={elapsed:.4f} checksum={checksum:.6e}")


if __name__ == "__main__":
    main()
