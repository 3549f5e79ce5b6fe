"""jaxndimage: ``scipy.ndimage`` with JAX kernels behind the same signatures.

Swap ``from scipy import ndimage`` for ``import jaxndimage as ndimage`` and get
the same numbers; hand it JAX arrays and every function works under
``jax.jit``, ``jax.vmap`` and ``jax.grad``.
"""

# Linear filters (scipy.ndimage)
from jaxndimage._filters import (
    convolve,
    convolve1d,
    correlate,
    correlate1d,
    gaussian_filter,
    gaussian_filter1d,
    gaussian_gradient_magnitude,
    gaussian_laplace,
    generic_gradient_magnitude,
    generic_laplace,
    laplace,
    prewitt,
    sobel,
    uniform_filter,
    uniform_filter1d,
)

# Rank filters (scipy.ndimage)
from jaxndimage._rank import (
    maximum_filter,
    maximum_filter1d,
    median_filter,
    minimum_filter,
    minimum_filter1d,
    percentile_filter,
    rank_filter,
)

# Generic filters (scipy.ndimage)
from jaxndimage._generic import (
    generic_filter,
    generic_filter1d,
    vectorized_filter,
)

# Fourier filters (scipy.ndimage)
from jaxndimage._fourier import (
    fourier_ellipsoid,
    fourier_gaussian,
    fourier_shift,
    fourier_uniform,
)

# Interpolation and spline prefilters (scipy.ndimage)
from jaxndimage._interpolation import (
    affine_transform,
    geometric_transform,
    map_coordinates,
    rotate,
    shift,
    zoom,
)
from jaxndimage._splines import (
    spline_filter,
    spline_filter1d,
)

# Measurements (scipy.ndimage)
from jaxndimage._measurements import (
    center_of_mass,
    extrema,
    find_objects,
    histogram,
    label,
    labeled_comprehension,
    maximum,
    maximum_position,
    mean,
    median,
    minimum,
    minimum_position,
    standard_deviation,
    sum,
    sum_labels,
    value_indices,
    variance,
    watershed_ift,
)

# Morphology (scipy.ndimage)
from jaxndimage._morphology import (
    binary_closing,
    binary_dilation,
    binary_erosion,
    binary_fill_holes,
    binary_hit_or_miss,
    binary_opening,
    binary_propagation,
    black_tophat,
    generate_binary_structure,
    grey_closing,
    grey_dilation,
    grey_erosion,
    grey_opening,
    iterate_structure,
    morphological_gradient,
    morphological_laplace,
    white_tophat,
)

# Patch tools (skimage.util) and their inverses
from jaxndimage._blocks import (
    montage,
    unmontage,
    unview_as_blocks,
    unview_as_windows,
    view_as_blocks,
    view_as_windows,
)

# Distance transforms (scipy.ndimage)
from jaxndimage._distance import (
    distance_transform_bf,
    distance_transform_cdt,
    distance_transform_edt,
)

# Divergence of a function
from jaxndimage._divergence import divergence, value_and_divergence

__version__ = "0.1.0"

__all__ = [
    "affine_transform",
    "binary_closing",
    "binary_dilation",
    "binary_erosion",
    "binary_fill_holes",
    "binary_hit_or_miss",
    "binary_opening",
    "binary_propagation",
    "black_tophat",
    "center_of_mass",
    "convolve",
    "convolve1d",
    "correlate",
    "correlate1d",
    "distance_transform_bf",
    "distance_transform_cdt",
    "distance_transform_edt",
    "divergence",
    "extrema",
    "find_objects",
    "fourier_ellipsoid",
    "fourier_gaussian",
    "fourier_shift",
    "fourier_uniform",
    "gaussian_filter",
    "gaussian_filter1d",
    "gaussian_gradient_magnitude",
    "gaussian_laplace",
    "generate_binary_structure",
    "generic_filter",
    "generic_filter1d",
    "generic_gradient_magnitude",
    "generic_laplace",
    "geometric_transform",
    "grey_closing",
    "grey_dilation",
    "grey_erosion",
    "grey_opening",
    "histogram",
    "iterate_structure",
    "label",
    "labeled_comprehension",
    "laplace",
    "map_coordinates",
    "maximum",
    "maximum_filter",
    "maximum_filter1d",
    "maximum_position",
    "mean",
    "median",
    "median_filter",
    "minimum",
    "minimum_filter",
    "minimum_filter1d",
    "minimum_position",
    "montage",
    "morphological_gradient",
    "morphological_laplace",
    "percentile_filter",
    "prewitt",
    "rank_filter",
    "rotate",
    "shift",
    "sobel",
    "spline_filter",
    "spline_filter1d",
    "standard_deviation",
    "sum",
    "sum_labels",
    "uniform_filter",
    "uniform_filter1d",
    "unmontage",
    "unview_as_blocks",
    "unview_as_windows",
    "value_and_divergence",
    "value_indices",
    "variance",
    "vectorized_filter",
    "view_as_blocks",
    "view_as_windows",
    "watershed_ift",
    "white_tophat",
    "zoom",
]
