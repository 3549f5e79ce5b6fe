"""Per-sample divergence (Jacobian trace) of a batched function.

For ``f`` mapping a batch ``x`` of ``k`` samples to an array of the same shape,
``div[i] = trace(d f(x)[i] / d x[i])``. The samples must be independent under
``f`` (``f(x)[i]`` depends on ``x[i]`` only), so the batch Jacobian is block
diagonal. Then one Jacobian-vector product with a tangent that holds a
(possibly different) vector ``v_i`` in every sample returns ``J_i v_i`` for all
samples at once, and a basis vector ``e_j`` placed in every sample returns the
``j``-th diagonal entry of every ``J_i``. Nothing here builds a Jacobian.

The shortcut "sum of ``grad(sum(f))``" gives the sum of *all* Jacobian entries,
not the trace, and is wrong for any ``f`` that couples pixels or channels.
"""

from __future__ import annotations

import contextlib
import dataclasses
import operator
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxndimage._dispatch import computing_on, is_jax_array
from jaxndimage._docstrings import docfiller
from jaxndimage._plans import Plan, Planned
from jaxndimage.devices import host_device

__all__ = ["divergence", "value_and_divergence"]

METHODS = ("exact", "hutchinson", "hutch++")

# Default chunk_size: as many tangents as fit in this many elements (16 MiB of
# float32), at least one. The tangents of f's intermediates scale the same way.
_TANGENT_BUDGET = 2**22


@docfiller
def value_and_divergence(f: Callable[[jax.Array], jax.Array], x: Any, *,
                         method: str = "exact", key: jax.Array | None = None,
                         num_probes: int | None = None,
                         chunk_size: int | None = None,
                         batch_axis: int | None = 0) -> tuple[Any, Any]:
    """Return ``f(x)`` and the per-sample trace of the Jacobian of ``f``.

    ``div[i] = trace(d f(x)[i] / d x[i])``, where ``i`` indexes ``batch_axis``.
    ``f`` is called once, on the whole batch, and must map samples
    independently: ``f(x)[i]`` may depend on ``x[i]`` only (true of a network
    without batch normalisation in training mode). Cross-sample derivatives
    are assumed zero and are not checked; if they are not, the result is the
    trace of the diagonal blocks plus terms from the off-diagonal blocks.

    Parameters
    ----------
    %(divergence_f)s
    x : array_like
        Real floating input. A JAX array (also a tracer, under ``jit``) gives
        JAX arrays back; anything else is converted with ``numpy.asarray``,
        computed in its own precision (float64 in a local
        ``jax.enable_x64(True)`` scope, leaving the global config alone) and
        returned as numpy arrays.
    method : {"exact", "hutchinson", "hutch++"}, optional
        ``"exact"``: the true trace from ``D`` forward-mode products with basis
        tangents, ``D = x.size / k`` the size of one sample.
        ``"hutchinson"``: the unbiased estimate
        ``mean_p z_p^T J_i z_p`` with ``num_probes`` Rademacher probes
        ``z_p``, drawn independently for every sample.
        ``"hutch++"``: Hutch++ (Meyer, Musco, Musco and Woodruff, 2021) with
        ``num_probes`` products per sample: ``s = num_probes // 3`` to
        sketch ``Y = J_i S``, ``s`` more for ``trace(Q^T J_i Q)`` with ``Q``
        from a per-sample QR of ``Y``, and the remaining
        ``num_probes - 2 s`` (one or two more than ``s`` when ``num_probes``
        is not a multiple of 3) as Hutchinson probes of the deflated
        residual. With ``num_probes < 3`` there is no sketch and the result
        equals ``"hutchinson"`` with the same key. Unbiased.
    key : jax.Array, optional
        PRNG key (``jax.random.key`` or ``jax.random.PRNGKey``); required by
        the stochastic methods, ignored by ``"exact"``.
    num_probes : int, optional
        Products with the Jacobian per sample for the stochastic methods.
        Default 1 for ``"hutchinson"`` (the usual single probe of
        continuous-normalising-flow training) and 3 for ``"hutch++"`` (the
        smallest with a sketch). Ignored by ``"exact"``.
    chunk_size : int, optional
        Number of tangents pushed through ``f`` together (vmapped); the
        chunks run one after another. Memory for the tangents is
        ``O(chunk_size * x.size)`` plus the same factor on ``f``'s
        intermediates, on top of one forward pass of ``f`` kept for the
        linearisation. Default: as many as fit ``2**22`` elements
        (``max(1, 2**22 // x.size)``), capped at the number of tangents.
        The stochastic methods also hold their ``num_probes * x.size``
        probes. Results do not depend on ``chunk_size`` beyond rounding.
    batch_axis : int or None, optional
        Axis of ``x`` that indexes the samples. ``None``: ``x`` is one sample
        and ``div`` is a scalar.

    Returns
    -------
    y : array
        ``f(x)``.
    %(divergence_div)s

    Raises
    ------
    ValueError
        Unknown ``method``; stochastic method without ``key``; non-positive
        ``num_probes`` or ``chunk_size``; ``batch_axis`` out of range;
        ``f(x)`` not shaped like ``x``.
    TypeError
        Non-integer ``num_probes``, ``chunk_size`` or ``batch_axis``;
        ``x`` or ``f(x)`` not real floating.

    Notes
    -----
    Cost, with ``C`` the cost of one forward-mode product through ``f``
    (about one forward pass): ``"exact"`` is ``D * C``; the stochastic
    methods are ``num_probes * C``, plus for ``"hutch++"`` a QR of a
    ``D x num_probes // 3`` matrix per sample. Every method evaluates
    ``f`` once (``jax.linearize``) and then only its linear tangent map.

    Under ``jax.jit``, mark ``f``, ``method``, ``num_probes``,
    ``chunk_size`` and ``batch_axis`` static.

    Examples
    --------
    A per-pixel channel mixing ``x @ A`` on 4 x 4 pixels has trace
    ``16 * trace(A)`` in every sample:

    >>> import jax, jax.numpy as jnp
    >>> from jaxndimage import value_and_divergence
    >>> A = jnp.array([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0], [0.0, 1.0, 2.0]])
    >>> x = jnp.ones((2, 4, 4, 3))
    >>> y, div = value_and_divergence(lambda x: x @ A, x)
    >>> y.shape, div
    ((2, 4, 4, 3), Array([32., 32.], dtype=float32))

    For an elementwise ``f`` the Jacobian is diagonal and a single
    Rademacher probe already gives the exact trace:

    >>> _, div = value_and_divergence(
    ...     jnp.sin, x, method="hutchinson", key=jax.random.key(0))
    >>> bool(jnp.allclose(div, 48 * jnp.cos(1.0)))
    True
    """
    planned = _plan_value_and_divergence(
        f, x, method=method, key=key, num_probes=num_probes,
        chunk_size=chunk_size, batch_axis=batch_axis)
    x = planned.operands[1]
    if is_jax_array(x):
        return planned.run()
    # Not the ndimage dispatch: the user's ``f`` runs here, and its own
    # arithmetic keeps float32 float32 only outside an x64 scope.
    scope = jax.enable_x64(True) if x.dtype == np.float64 else contextlib.nullcontext()
    with scope, computing_on(host_device()):
        y, div = planned.run()
        return np.asarray(y), np.asarray(div)


@docfiller
def divergence(f: Callable[[jax.Array], jax.Array], x: Any, *,
               method: str = "exact", key: jax.Array | None = None,
               num_probes: int | None = None, chunk_size: int | None = None,
               batch_axis: int | None = 0) -> Any:
    """Return the per-sample trace of the Jacobian of ``f`` at ``x``.

    ``divergence(f, x, **kw)`` is ``value_and_divergence(f, x, **kw)[1]``; see
    :func:`value_and_divergence` for the parameters, the assumption that
    ``f`` maps samples independently, costs and errors.

    Parameters
    ----------
    %(divergence_f)s
    x : array_like
        Real floating input; ``x.shape[batch_axis]`` samples.
    method : {"exact", "hutchinson", "hutch++"}, optional
        How the trace is computed.
    key : jax.Array, optional
        PRNG key, required by the stochastic methods.
    num_probes : int, optional
        Products with the Jacobian per sample for the stochastic methods.
    chunk_size : int, optional
        Number of tangents pushed through ``f`` together.
    batch_axis : int or None, optional
        Axis of ``x`` that indexes the samples; ``None`` for a single sample.

    Returns
    -------
    %(divergence_div)s

    Examples
    --------
    A 3 x 3 box blur (zero padding) scaled by 2 on one channel has diagonal
    entries ``2 / 9``, so the trace over 5 x 5 pixels is ``50 / 9``:

    >>> import jax, jax.numpy as jnp
    >>> from jaxndimage import divergence
    >>> def blur(x):  # x: [k, W, H, 1]
    ...     w = jnp.full((3, 3, 1, 1), 2.0 / 9.0)
    ...     return jax.lax.conv_general_dilated(
    ...         x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    >>> x = jnp.zeros((3, 5, 5, 1))
    >>> div = jax.jit(divergence, static_argnums=0, static_argnames="chunk_size")(
    ...     blur, x, chunk_size=4)
    >>> bool(jnp.allclose(div, 50 / 9))
    True
    """
    return value_and_divergence(
        f,
        x,
        method=method,
        key=key,
        num_probes=num_probes,
        chunk_size=chunk_size,
        batch_axis=batch_axis,
    )[1]


@dataclasses.dataclass(frozen=True)
class DivergencePlan(Plan):
    """The per-sample Jacobian trace of a function of an ``ndim``-D batch,
    samples along ``batch_axis`` (None: one sample), by ``method`` with
    ``num_probes`` probes per sample (None for ``"exact"``), pushing
    ``chunk_size`` tangents at a time (None: as many as fit the tangent
    budget).  The result has no block-wise form (depth None)."""

    method: str
    num_probes: int | None
    chunk_size: int | None
    batch_axis: int | None

    @property
    def depth(self) -> None:
        return None


def _plan_value_and_divergence(
    f: Callable[[jax.Array], jax.Array], x: Any, *, method: str,
    key: jax.Array | None, num_probes: int | None, chunk_size: int | None,
    batch_axis: int | None,
) -> Planned:
    """The shell of :func:`value_and_divergence`: its arguments checked, in
    its order, into a :class:`DivergencePlan` with the kernel and the
    operands ``(f, x, key)``, ``x`` as a JAX array or else numpy.  Runs no
    JAX computation (``f`` is first called by the kernel)."""
    method = _check_method(method)
    stochastic = method != "exact"
    if stochastic and key is None:
        raise ValueError(
            f"method={method!r} is stochastic and needs key=, a PRNG key such as "
            "jax.random.key(0)"
        )
    if stochastic:
        default_probes = 1 if method == "hutchinson" else 3
        num_probes = _positive_int(
            default_probes if num_probes is None else num_probes, "num_probes"
        )
    else:
        num_probes = None  # ignored by "exact"
    if chunk_size is not None:
        chunk_size = _positive_int(chunk_size, "chunk_size")
    if not is_jax_array(x):
        x = np.asarray(x)
    batch_axis = _check_batch_axis(batch_axis, x.ndim)
    _check_floating(x.dtype)
    plan = DivergencePlan(x.ndim, method, num_probes, chunk_size, batch_axis)
    return Planned(plan, _run_value_and_divergence, (f, x, key))


def _run_value_and_divergence(plan: DivergencePlan,
                              f: Callable[[jax.Array], jax.Array], x: Any,
                              key: jax.Array | None
                              ) -> tuple[jax.Array, jax.Array]:
    """The kernel of a :class:`DivergencePlan`: ``(f(x), div)`` as JAX
    arrays (numpy ``x`` is converted here, in the caller's x64 scope)."""
    return _value_and_divergence(f, jnp.asarray(x), plan.method, key,
                                 plan.num_probes, plan.chunk_size,
                                 plan.batch_axis)


def _value_and_divergence(
    f: Callable[[jax.Array], jax.Array],
    x: jax.Array,
    method: str,
    key: jax.Array | None,
    num_probes: int | None,
    chunk_size: int | None,
    batch_axis: int | None,
) -> tuple[jax.Array, jax.Array]:
    y, f_lin = jax.linearize(f, x)
    if not isinstance(y, jax.Array) or y.shape != x.shape:
        raise ValueError(
            "f must map x to one array of the same shape; x has shape "
            f"{x.shape}, f(x) is {_describe(y)}"
        )
    if not jnp.issubdtype(y.dtype, jnp.floating):
        raise TypeError(f"f must return a real floating array, got dtype {y.dtype}")

    if batch_axis is None:
        k, sample_shape = 1, x.shape
    else:
        k = x.shape[batch_axis]
        sample_shape = x.shape[:batch_axis] + x.shape[batch_axis + 1 :]
    d = int(np.prod(sample_shape))
    if k * d == 0:
        div = jnp.zeros((k,), y.dtype)
        return y, div[0] if batch_axis is None else div

    def to_user(v: jax.Array) -> jax.Array:  # [k, D] -> x's layout
        v = v.astype(x.dtype).reshape((k, *sample_shape))
        return v[0] if batch_axis is None else jnp.moveaxis(v, 0, batch_axis)

    def matvec(v: jax.Array) -> jax.Array:  # [k, D] -> [k, D]: J_i v_i
        t = f_lin(to_user(v))
        if batch_axis is not None:
            t = jnp.moveaxis(t, batch_axis, 0)
        return t.reshape(k, d)

    def quad(v: jax.Array) -> jax.Array:  # [k, D] -> [k]: v_i^T J_i v_i
        return jnp.sum(v * matvec(v), axis=-1)

    def chunked(fn: Callable, xs: jax.Array) -> jax.Array:
        n = xs.shape[0]
        size = chunk_size or max(1, _TANGENT_BUDGET // x.size)
        return jax.lax.map(fn, xs, batch_size=min(size, n))

    if method == "exact":

        def diagonal_entry(j: jax.Array) -> jax.Array:
            e = jnp.broadcast_to(jax.nn.one_hot(j, d, dtype=x.dtype), (k, d))
            return matvec(e)[:, j]

        div = jnp.sum(chunked(diagonal_entry, jnp.arange(d)), axis=0)
    elif method == "hutchinson" or num_probes < 3:
        z = jax.random.rademacher(key, (num_probes, k, d), dtype=x.dtype)
        div = jnp.mean(chunked(quad, z), axis=0)
    else:
        div = _hutchpp(matvec, quad, chunked, key, num_probes, k, d, x.dtype)

    return y, div[0] if batch_axis is None else div


def _hutchpp(
    matvec: Callable,
    quad: Callable,
    chunked: Callable,
    key: jax.Array,
    num_probes: int,
    k: int,
    d: int,
    dtype: Any,
) -> jax.Array:
    """Hutch++ per sample: exact trace on a sketched range, Hutchinson on the rest."""
    s = num_probes // 3
    g = num_probes - 2 * s
    key_s, key_g = jax.random.split(key)
    sketch = jax.random.rademacher(key_s, (s, k, d), dtype=dtype)
    probes = jax.random.rademacher(key_g, (g, k, d), dtype=dtype)

    y = chunked(matvec, sketch)  # [s, k, D]
    q, _ = jnp.linalg.qr(jnp.transpose(y, (1, 2, 0)))  # [k, D, r], r = min(s, D)
    r = q.shape[-1]
    # Probes projected off span(Q), per sample: G - Q Q^T G.
    coeffs = jnp.einsum("kdr,gkd->gkr", q, probes)
    residual = probes - jnp.einsum("kdr,gkr->gkd", q, coeffs)

    forms = chunked(quad, jnp.concatenate([jnp.transpose(q, (2, 0, 1)), residual]))
    return jnp.sum(forms[:r], axis=0) + jnp.mean(forms[r:], axis=0)


def _check_method(method: Any) -> str:
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(
            f"method must be one of {', '.join(map(repr, METHODS))}; got {method!r}"
        )
    return method


def _positive_int(value: Any, name: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a positive integer, got {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be a positive integer, got {value!r}") from None
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return value


def _check_batch_axis(batch_axis: Any, ndim: int) -> int | None:
    if batch_axis is None:
        return None
    if isinstance(batch_axis, bool):
        raise TypeError(f"batch_axis must be an integer or None, got {batch_axis!r}")
    try:
        batch_axis = operator.index(batch_axis)
    except TypeError:
        raise TypeError(
            f"batch_axis must be an integer or None, got {batch_axis!r}"
        ) from None
    if not -ndim <= batch_axis < ndim:
        raise ValueError(
            f"batch_axis {batch_axis} is out of range for x with {ndim} dimensions"
        )
    return batch_axis % ndim


def _check_floating(dtype: Any) -> None:
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(
            f"x must be a real floating array to be differentiated, got dtype {dtype}"
        )


def _describe(y: Any) -> str:
    if isinstance(y, jax.Array):
        return f"an array of shape {y.shape}"
    return f"a {type(y).__name__}"
