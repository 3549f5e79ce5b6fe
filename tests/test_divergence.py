"""Tests for divergence / value_and_divergence (per-sample Jacobian trace)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxndimage import divergence, value_and_divergence

# [k, W, H, C] with W != H so a transposed layout cannot pass; D = 5 * 4 * 2 = 40.
SHAPE = (3, 5, 4, 2)
D = 40
W_CONV = np.random.default_rng(0).normal(size=(3, 3, 2, 2)) / 3.0
STATIC = ("method", "num_probes", "chunk_size", "batch_axis")


def net(x, w=W_CONV):
    """A 3x3 convolution mixing pixels and channels, a nonlinearity, a channel shift."""
    h = jax.lax.conv_general_dilated(
        x,
        jnp.asarray(w, x.dtype),
        (1, 1),
        "SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
    )
    return jnp.tanh(h) * x + 0.5 * jnp.roll(x, 1, axis=-1) + jnp.sin(h)


def dense_jacobians(f, x):
    """Per-sample [k, D, D] Jacobians by jacfwd, one sample at a time."""

    def single(xi):
        return f(xi[None])[0]

    return jax.vmap(jax.jacfwd(single))(x).reshape(x.shape[0], x[0].size, x[0].size)


def dense_trace(f, x):
    return jnp.trace(dense_jacobians(f, x), axis1=1, axis2=2)


def sample_x(dtype=np.float32, seed=1):
    return np.random.default_rng(seed).normal(size=SHAPE).astype(dtype)


@pytest.fixture(scope="module")
def exact32():
    x = jnp.asarray(sample_x())
    return x, dense_trace(net, x)


# --- exact -----------------------------------------------------------------


@pytest.mark.parametrize("chunk_size", [None, 1, 8, 7, 40, 64])
def test_exact_matches_dense_trace_float32(exact32, chunk_size):
    x, ref = exact32
    div = divergence(net, x, chunk_size=chunk_size)
    assert div.shape == (3,) and div.dtype == jnp.float32
    np.testing.assert_allclose(div, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("chunk_size", [8, 7])
def test_exact_under_jit(exact32, chunk_size):
    x, ref = exact32
    jitted = jax.jit(divergence, static_argnums=0, static_argnames=STATIC)
    np.testing.assert_allclose(
        jitted(net, x, chunk_size=chunk_size), ref, rtol=1e-5, atol=1e-5
    )
    y, div = jax.jit(lambda x: value_and_divergence(net, x, chunk_size=chunk_size))(x)
    np.testing.assert_allclose(div, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y, net(x), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("chunk_size", [None, 7])
def test_exact_float64_numpy_in_numpy_out(chunk_size):
    x = sample_x(np.float64)
    before = jax.config.jax_enable_x64
    y, div = value_and_divergence(net, x, chunk_size=chunk_size)
    assert jax.config.jax_enable_x64 == before
    assert isinstance(y, np.ndarray) and isinstance(div, np.ndarray)
    assert y.dtype == np.float64 and div.dtype == np.float64 and div.shape == (3,)
    with jax.enable_x64(True):
        xj = jnp.asarray(x)
        ref = np.asarray(dense_trace(net, xj))
        np.testing.assert_allclose(y, np.asarray(net(xj)), rtol=1e-13)
    np.testing.assert_allclose(div, ref, rtol=1e-12, atol=1e-12)


def test_exact_float64_jax_under_jit():
    with jax.enable_x64(True):
        x = jnp.asarray(sample_x(np.float64))
        div = jax.jit(lambda x: divergence(net, x, chunk_size=7))(x)
        assert div.dtype == jnp.float64
        np.testing.assert_allclose(div, dense_trace(net, x), rtol=1e-12, atol=1e-12)


def test_numpy_float32_in_numpy_float32_out(exact32):
    x, ref = exact32
    y, div = value_and_divergence(net, np.asarray(x))
    assert isinstance(div, np.ndarray) and div.dtype == np.float32
    assert isinstance(y, np.ndarray) and y.dtype == np.float32
    np.testing.assert_allclose(div, ref, rtol=1e-5, atol=1e-5)


def test_sum_of_gradients_is_not_the_trace(exact32):
    """Negative control: grad(sum f) summed per sample is the sum of all Jacobian entries."""
    x, ref = exact32
    shortcut = jax.grad(lambda x: jnp.sum(net(x)))(x).reshape(3, -1).sum(axis=1)
    np.testing.assert_allclose(
        shortcut, dense_jacobians(net, x).sum(axis=(1, 2)), rtol=1e-4
    )
    assert np.all(np.abs(shortcut - ref) > 1.0), (shortcut, ref)
    np.testing.assert_allclose(divergence(net, x), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("batch_axis", [1, -3])
def test_batch_axis_not_first(exact32, batch_axis):
    x, ref = exact32
    xt = jnp.moveaxis(x, 0, 1)  # [W, k, H, C]

    def ft(xt):
        return jnp.moveaxis(net(jnp.moveaxis(xt, 1, 0)), 0, 1)

    y, div = value_and_divergence(ft, xt, batch_axis=batch_axis, chunk_size=6)
    assert y.shape == xt.shape and div.shape == (3,)
    np.testing.assert_allclose(div, ref, rtol=1e-5, atol=1e-5)


def test_batch_axis_none_is_one_sample(exact32):
    x, ref = exact32

    def single(xi):
        return net(xi[None])[0]

    y, div = value_and_divergence(single, x[2], batch_axis=None, chunk_size=9)
    assert y.shape == x[2].shape and div.shape == ()
    np.testing.assert_allclose(div, ref[2], rtol=1e-5, atol=1e-5)


def test_primal_computed_once_and_returned(exact32):
    x, _ = exact32
    calls = []

    def counted(x):
        calls.append(1)
        return net(x)

    y, _ = value_and_divergence(counted, x, chunk_size=7)
    assert len(calls) == 1
    np.testing.assert_allclose(y, net(x), rtol=1e-6, atol=1e-6)


def test_gradient_through_exact_divergence(exact32):
    """Training on the divergence (e.g. a flow's log-density) differentiates it."""
    x, _ = exact32
    w = jnp.asarray(W_CONV, jnp.float32)
    ours = jax.grad(lambda w: divergence(lambda x: net(x, w), x, chunk_size=16).sum())(
        w
    )
    ref = jax.grad(lambda w: dense_trace(lambda x: net(x, w), x).sum())(w)
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4)


def test_empty_batch():
    div = divergence(net, np.zeros((0, 5, 4, 2), np.float32))
    assert div.shape == (0,)


# --- estimators --------------------------------------------------------------


def estimates(method, x, num_probes, n_keys, seed=0):
    keys = jax.random.split(jax.random.key(seed), n_keys)

    def run(key):
        return divergence(net, x, method=method, key=key, num_probes=num_probes)

    return np.asarray(jax.jit(jax.vmap(run))(keys))


@pytest.mark.parametrize("method, num_probes", [("hutchinson", 2), ("hutch++", 7)])
def test_estimators_unbiased(exact32, method, num_probes):
    x, ref = exact32
    est = estimates(method, x, num_probes, n_keys=500)
    mean, se = est.mean(axis=0), est.std(axis=0, ddof=1) / np.sqrt(len(est))
    assert np.all(se > 1e-3)  # genuinely random
    assert np.all(np.abs(mean - ref) < 4 * se), (mean, ref, se)
    # The test has power: the sum-of-gradients shortcut would fail it.
    shortcut = jax.grad(lambda x: jnp.sum(net(x)))(x).reshape(3, -1).sum(axis=1)
    assert np.all(np.abs(shortcut - ref) > 4 * se)


def test_hutchinson_exact_for_diagonal_jacobian(exact32):
    """z_i^2 = 1 for Rademacher z, so one probe of a diagonal Jacobian is exact."""
    x, _ = exact32
    div = divergence(jnp.tanh, x, method="hutchinson", key=jax.random.key(3))
    ref = jnp.sum(1 - jnp.tanh(x) ** 2, axis=(1, 2, 3))
    np.testing.assert_allclose(div, ref, rtol=1e-5)


def test_hutchpp_exact_for_low_rank_jacobian():
    """With a rank-2 Jacobian, a sketch of 2 vectors spans its range: no residual."""
    rng = np.random.default_rng(4)
    u, v = rng.normal(size=(2, D, 2)).astype(np.float32)

    def f(x):
        return ((x.reshape(3, D) @ v) @ u.T).reshape(x.shape)

    x = sample_x()
    div = divergence(f, x, method="hutch++", key=jax.random.key(5), num_probes=6)
    np.testing.assert_allclose(div, np.full(3, np.trace(v @ u.T)), rtol=1e-4)


def test_hutchpp_beats_hutchinson_on_decaying_spectrum():
    d, n_keys, matvecs = 48, 200, 24
    rng = np.random.default_rng(6)
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    a = jnp.asarray((q * 0.7 ** np.arange(d)) @ q.T, jnp.float32)

    def f(x):  # x: [k, d]
        return x @ a

    x = jnp.ones((4, d), jnp.float32)
    exact = divergence(f, x)
    np.testing.assert_allclose(exact, np.full(4, np.trace(a)), rtol=1e-5)
    keys = jax.random.split(jax.random.key(7), n_keys)

    def rms_error(method):
        def run(key):
            return divergence(f, x, method=method, key=key, num_probes=matvecs)

        return np.sqrt(np.mean((jax.jit(jax.vmap(run))(keys) - exact) ** 2))

    hutch, hutchpp = rms_error("hutchinson"), rms_error("hutch++")
    assert hutchpp < 0.25 * hutch, (hutchpp, hutch)


def test_hutchpp_below_three_probes_is_hutchinson(exact32):
    x, _ = exact32
    key = jax.random.key(8)
    for m in (1, 2):
        a = divergence(net, x, method="hutch++", key=key, num_probes=m)
        b = divergence(net, x, method="hutchinson", key=key, num_probes=m)
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", ["hutchinson", "hutch++"])
def test_estimate_independent_of_chunk_size(exact32, method):
    x, _ = exact32
    key = jax.random.key(9)
    a = divergence(net, x, method=method, key=key, num_probes=10, chunk_size=3)
    b = divergence(net, x, method=method, key=key, num_probes=10)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_estimator_under_jit_with_static_arguments(exact32):
    x, _ = exact32
    key = jax.random.key(10)
    jitted = jax.jit(divergence, static_argnums=0, static_argnames=STATIC)
    a = jitted(net, x, method="hutch++", key=key, num_probes=9, chunk_size=4)
    b = divergence(net, x, method="hutch++", key=key, num_probes=9, chunk_size=4)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


# --- argument validation ---------------------------------------------------


@pytest.mark.parametrize("method", ["hutchinson", "hutch++"])
def test_stochastic_without_key(method):
    with pytest.raises(ValueError, match="key"):
        divergence(net, sample_x(), method=method)


def test_unknown_method_lists_methods():
    with pytest.raises(ValueError, match="'exact', 'hutchinson', 'hutch\\+\\+'"):
        divergence(net, sample_x(), method="hutch")


@pytest.mark.parametrize(
    "kwargs, error, name",
    [
        ({"chunk_size": 0}, ValueError, "chunk_size"),
        ({"chunk_size": -2}, ValueError, "chunk_size"),
        ({"chunk_size": 2.0}, TypeError, "chunk_size"),
        ({"chunk_size": True}, TypeError, "chunk_size"),
        (
            {"method": "hutchinson", "key": jax.random.key(0), "num_probes": 0},
            ValueError,
            "num_probes",
        ),
        (
            {"method": "hutch++", "key": jax.random.key(0), "num_probes": 1.5},
            TypeError,
            "num_probes",
        ),
        ({"batch_axis": 4}, ValueError, "batch_axis"),
        ({"batch_axis": -5}, ValueError, "batch_axis"),
        ({"batch_axis": "0"}, TypeError, "batch_axis"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, error, name):
    with pytest.raises(error, match=name):
        divergence(net, sample_x(), **kwargs)


def test_integer_x_is_a_type_error():
    with pytest.raises(TypeError, match="x must be a real floating"):
        divergence(net, np.ones(SHAPE, np.int32))


def test_f_changing_shape_is_a_value_error():
    with pytest.raises(ValueError, match="f must map x to one array of the same shape"):
        divergence(lambda x: x.sum(axis=-1), sample_x())
