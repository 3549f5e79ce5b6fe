"""The type aliases of the public signatures.

``ArrayLike`` is whatever a function accepts as an array: numpy, JAX,
array-API or dask arrays, scalars and nested sequences (checked at run time
by the dispatch, not by the type checker). ``Array`` is what a JAX kernel
returns; the dispatch hands the caller's array type back.
"""

from typing import Any

import jax

Array = jax.Array
ArrayLike = Any
