"""Rank, generic and vectorized filters: behaviour, errors, JAX transforms."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi

import jaxndimage as jnd
from jaxndimage._rank import selection_network

RNG = np.random.default_rng(1234)


@pytest.mark.parametrize("n", range(1, 20))
def test_selection_network_selects_every_rank(n):
    values = RNG.permutation(n)
    for rank in range(n):
        wires = list(values)
        for a, b in selection_network(n, rank):
            wires[a], wires[b] = min(wires[a], wires[b]), max(wires[a],
                                                              wires[b])
        assert wires[rank] == rank


def test_int64_extremes_are_exact():
    big = np.array([2**62 + 1, 2**62 + 3, 2**62 + 2, -2**62 - 1],
                   dtype=np.int64)
    np.testing.assert_array_equal(jnd.maximum_filter1d(big, 2),
                                  [2**62 + 1, 2**62 + 3, 2**62 + 3,
                                   2**62 + 2])
    np.testing.assert_array_equal(
        jnd.median_filter(big, 3, mode="nearest"),
        [2**62 + 1, 2**62 + 2, 2**62 + 2, -2**62 - 1])


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.uint64,
                                   np.float32, np.float64, np.bool_])
@pytest.mark.parametrize("name", ["minimum_filter", "maximum_filter",
                                  "median_filter"])
def test_matches_scipy_dtypes(name, dtype):
    image = (RNG.random((13, 10)) * 200).astype(dtype)
    for kwargs in [{"size": (3, 4)}, {"footprint": [[1, 0, 1], [0, 1, 1]]},
                   {"size": 2, "mode": "constant", "cval": 1}]:
        ours = getattr(jnd, name)(image, **kwargs)
        theirs = getattr(ndi, name)(image, **kwargs)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_sliding_extremes_read_directly_and_by_doubling_equal_scipy(dtype):
    """Windows up to DIRECT_WINDOW read every sample, longer ones double:
    both sides of the rule, along both axes, with an origin and cval."""
    from jaxndimage._rank import DIRECT_WINDOW

    image = (RNG.random((23, 41)) * 200).astype(dtype)
    for size in (2, 3, DIRECT_WINDOW, DIRECT_WINDOW + 1, 13):
        for name, kwargs in [("maximum_filter", {"mode": "reflect"}),
                             ("minimum_filter", {"mode": "constant",
                                                 "cval": 7, "origin": -1})]:
            ours = getattr(jnd, name)(image, size=(size, size - 1), **kwargs)
            theirs = getattr(ndi, name)(image, size=(size, size - 1), **kwargs)
            np.testing.assert_array_equal(ours, theirs)


def test_fractional_cval_on_integers_kept_like_scipy():
    image = np.arange(6, dtype=np.int16)
    for cval in (-0.5, 2.5, 1e6):
        for out in (None, np.float64):
            np.testing.assert_array_equal(
                jnd.minimum_filter1d(image, 3, output=out, mode="constant",
                                     cval=cval),
                ndi.minimum_filter1d(image, 3, output=out, mode="constant",
                                     cval=cval))


def test_large_footprint_sorts():
    image = RNG.random((20, 20))
    footprint = RNG.random((9, 9)) > 0.2
    np.testing.assert_array_equal(
        jnd.rank_filter(image, 17, footprint=footprint),
        ndi.rank_filter(image, 17, footprint=footprint))


def test_errors_match_scipy():
    image = np.ones((4, 4))
    with pytest.raises(RuntimeError):
        jnd.minimum_filter(image)
    with pytest.raises(ValueError, match="All-zero footprint"):
        jnd.maximum_filter(image, footprint=np.zeros((2, 2)))
    with pytest.raises(TypeError, match="Complex"):
        jnd.median_filter(image + 1j, 3)
    with pytest.raises(RuntimeError, match="rank not within"):
        jnd.rank_filter(image, 9, size=3)
    with pytest.raises(RuntimeError, match="invalid percentile"):
        jnd.percentile_filter(image, 101, size=3)
    with pytest.raises(ValueError, match="invalid origin"):
        jnd.median_filter(image, 3, origin=2)
    with pytest.raises(RuntimeError, match="sequence of modes"):
        jnd.median_filter(image, 3, mode=["reflect", "wrap"])
    with pytest.warns(UserWarning, match="ignoring size"):
        jnd.minimum_filter(image, size=2, footprint=[[1, 0], [0, 1]])


def test_jax_in_jax_out_and_jit_vmap():
    image = jnp.asarray(RNG.random((3, 16, 16)), jnp.float32)
    expected = ndi.median_filter(np.asarray(image[0]), 3)
    result = jax.jit(lambda x: jnd.median_filter(x, 3))(image[0])
    assert isinstance(result, jax.Array)
    np.testing.assert_array_equal(result, expected)
    batched = jax.vmap(lambda x: jnd.maximum_filter(x, 4, cval=0.5,
                                                    mode="constant"))(image)
    for k in range(3):
        np.testing.assert_array_equal(
            batched[k], ndi.maximum_filter(np.asarray(image[k]), 4,
                                           cval=0.5, mode="constant"))


def test_grad_of_maximum_filter_routes_to_the_maximum():
    x = jnp.array([0.0, 3.0, 1.0, 2.0])
    grad = jax.grad(lambda v: jnd.maximum_filter1d(v, 3).sum())(x)
    np.testing.assert_allclose(grad, [0.0, 3.0, 0.0, 1.0])


# ----------------------------------------------------------------- generic

def test_generic_filter_traceable_and_python_callables_agree():
    image = RNG.random((12, 9))
    footprint = [[1, 0, 1], [1, 1, 0]]
    expected = ndi.generic_filter(image, np.std, footprint=footprint,
                                  mode="wrap")
    np.testing.assert_allclose(
        jnd.generic_filter(image, jnp.std, footprint=footprint, mode="wrap"),
        expected, rtol=1e-12)
    calls = []

    def python_only(values):
        calls.append(1)
        return float(np.std(values))

    np.testing.assert_allclose(
        jnd.generic_filter(image, python_only, footprint=footprint,
                           mode="wrap"), expected, rtol=1e-12)
    # One call per window, plus the one aborted trace.
    assert len(calls) == image.size + 1


def test_generic_filter_extra_arguments_and_integer_output():
    image = np.arange(20, dtype=np.int32).reshape(4, 5)

    def weighted(values, scale, offset=0.0):
        return values.sum() * scale + offset

    kwargs = dict(size=3, extra_arguments=(0.3,),
                  extra_keywords={"offset": -2.0})
    np.testing.assert_array_equal(jnd.generic_filter(image, weighted,
                                                     **kwargs),
                                  ndi.generic_filter(image, weighted,
                                                     **kwargs))


def test_generic_filter_under_jit_and_grad():
    image = jnp.asarray(RNG.random((8, 8)))
    local_var = jax.jit(lambda x: jnd.generic_filter(x, jnp.var, size=3))
    np.testing.assert_allclose(local_var(image),
                               ndi.generic_filter(np.asarray(image), np.var,
                                                  size=3), rtol=1e-6)
    grad = jax.grad(lambda x: jnd.generic_filter(x, jnp.sum, size=3).sum())
    np.testing.assert_allclose(grad(image)[3:5, 3:5], 9.0)


def test_generic_filter_non_traceable_under_jit_is_type_error():
    with pytest.raises(TypeError, match="cannot trace"):
        jax.jit(lambda x: jnd.generic_filter(
            x, lambda v: float(v.max()), size=3))(jnp.ones((4, 4)))


def test_generic_filter1d_with_item_assignment():
    image = RNG.random((5, 7))

    def smooth(line, out, weight):
        for i in range(out.shape[0]):
            out[i] = line[i] * weight + line[i + 1] + line[i + 2] * weight

    ours = jnd.generic_filter1d(image, smooth, 3, axis=0,
                                extra_arguments=(0.25,))
    theirs = ndi.generic_filter1d(image, smooth, 3, axis=0,
                                  extra_arguments=(0.25,))
    np.testing.assert_allclose(ours, theirs, rtol=1e-13)
    with pytest.raises(RuntimeError):
        jnd.generic_filter1d(image, smooth, 0)


def test_vectorized_filter_jax_and_numpy_paths():
    image = RNG.random((6, 7, 8))
    for function in (np.mean, jnp.median):
        res = jnd.vectorized_filter(image, function, size=(3, 2), axes=(0, 2),
                                    mode="nearest", origin=(1, 0))
        ref = ndi.vectorized_filter(image, np.mean if function is np.mean
                                    else np.median, size=(3, 2), axes=(0, 2),
                                    mode="nearest", origin=(1, 0))
        np.testing.assert_allclose(res, ref, rtol=1e-12)
    res = jnd.vectorized_filter(image, lambda v, axis: np.percentile(
        v, 30, axis=axis), size=3, mode="valid", batch_memory=7000)
    ref = ndi.vectorized_filter(image, lambda v, axis: np.percentile(
        v, 30, axis=axis), size=3, mode="valid")
    np.testing.assert_allclose(res, ref)
    with pytest.raises(ValueError, match="insufficient"):
        jnd.vectorized_filter(image, np.mean, size=3, batch_memory=8)


# The rule for a user's callable (jaxndimage._generic's module docstring):
# traced once; on a trace that needs concrete values, run as SciPy runs it;
# any other error reaches the caller.

def test_generic_filter_errors_in_a_traceable_callable_reach_the_caller():
    def buggy(values):
        return values.reshape(7, 3).sum()  # a window of 9 has no such shape

    with pytest.raises(TypeError, match="reshape"):
        jnd.generic_filter(RNG.random((6, 6)), buggy, size=3)
    with pytest.raises(TypeError, match="0-dimensional"):  # as SciPy
        jnd.generic_filter(RNG.random((6, 6)), lambda v: v[:2], size=3)
    with pytest.raises(ZeroDivisionError):
        jnd.vectorized_filter(RNG.random((6, 6)), lambda v, axis: 1 // 0,
                              size=3)


def test_generic_filter_traces_once_and_array_arguments_are_traced():
    image = RNG.random((9, 11))
    traces = []

    def weighted(values, weights, scale):
        traces.append(1)
        return (values * weights).sum() * scale

    for seed in range(3):  # new weight values each call, same shapes
        weights = np.random.default_rng(seed).random(6)
        ours = jnd.generic_filter(image, weighted, size=(2, 3),
                                  extra_arguments=(weights, 0.5))
        np.testing.assert_allclose(
            ours, ndi.generic_filter(image, weighted, size=(2, 3),
                                     extra_arguments=(weights, 0.5)),
            rtol=1e-12)
    # SciPy's calls appended one per window; jaxndimage's traced once.
    assert len(traces) == 1 + 3 * image.size


def test_generic_filter1d_array_argument_is_traced():
    traces = []

    def scaled(line, out, factors):
        traces.append(1)
        out[...] = line[1:-1] * factors

    for seed in range(2):
        factors = np.random.default_rng(seed).random(7)
        ours = jnd.generic_filter1d(np.arange(7.0), scaled, 3,
                                    extra_arguments=(factors,))
        np.testing.assert_allclose(ours, np.arange(7.0) * factors)
    assert len(traces) == 1


def test_scipy_private_c_loops_still_exist():
    # jaxndimage._generic._scipy_c_loop and geometric_transform's
    # LowLevelCallable path call these; if SciPy moves them, say so here.
    from scipy.ndimage import _interpolation, _nd_image, _ni_support

    assert callable(_nd_image.generic_filter)
    assert callable(_nd_image.generic_filter1d)
    assert _ni_support._extend_mode_to_code("nearest") == 0
    assert callable(_interpolation.geometric_transform)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.uint32])
@pytest.mark.parametrize("out", [np.uint8, np.int16, np.int32, np.bool_])
def test_wide_integers_are_stored_in_narrower_outputs_through_a_double(
        dtype, out):
    # SciPy's C filters store a result through a double, which C converts
    # to a type narrower than 64 bits through a 32-bit register: a value
    # beyond int32's range becomes the low bits of INT_MIN, not its own.
    values = np.array([2**40 + 5, 3_000_000_005, 300, 7, 2**31 + 7, 5],
                      np.int64).astype(dtype)
    image = np.stack([values] * 3, axis=1)
    calls = [lambda m: m.minimum_filter(image, size=2, output=out),
             lambda m: m.median_filter(image, footprint=[[1, 0, 1]],
                                       output=out),
             lambda m: m.grey_dilation(image, footprint=[[1, 1], [0, 1]],
                                       output=out)]
    for call in calls:
        np.testing.assert_array_equal(call(jnd), call(ndi))

