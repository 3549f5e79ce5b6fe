"""jaxndimage: ``scipy.ndimage`` with JAX kernels behind the same signatures.

Swap ``from scipy import ndimage`` for ``import jaxndimage as ndimage`` and get
the same numbers; hand it JAX arrays and every function works under
``jax.jit``, ``jax.vmap`` and ``jax.grad``.
"""

# Each module's ``__all__`` is its public part; the package exports their
# union (as ``scipy.ndimage`` does).
from jaxndimage import (
    _blocks,
    _distance,
    _divergence,
    _filters,
    _fourier,
    _generic,
    _interpolation,
    _measurements,
    _morphology,
    _rank,
    _splines,
    _structures,
)
from jaxndimage._blocks import *  # noqa: F403  (skimage.util's patch tools)
from jaxndimage._distance import *  # noqa: F403
from jaxndimage._divergence import *  # noqa: F403
from jaxndimage._filters import *  # noqa: F403
from jaxndimage._fourier import *  # noqa: F403
from jaxndimage._generic import *  # noqa: F403
from jaxndimage._interpolation import *  # noqa: F403
from jaxndimage._measurements import *  # noqa: F403
from jaxndimage._morphology import *  # noqa: F403
from jaxndimage._rank import *  # noqa: F403
from jaxndimage._splines import *  # noqa: F403
from jaxndimage._structures import *  # noqa: F403

__version__ = "0.1.0"

__all__ = sorted(
    _blocks.__all__ + _distance.__all__ + _divergence.__all__
    + _filters.__all__ + _fourier.__all__ + _generic.__all__
    + _interpolation.__all__ + _measurements.__all__ + _morphology.__all__
    + _rank.__all__ + _splines.__all__ + _structures.__all__
)
