"""Planned distance transforms, generic filters, patch tools and divergence.

As in ``tests/test_plans.py``: the shell of each function validates and
returns a frozen, hashable plan with its kernel and operands, running no
kernel; other values of the same configuration give an equal plan, and the
plan run gives SciPy's (or scikit-image's) result.
"""

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi
import skimage.util
from plan_checks import assert_compile_key

import jaxndimage as jn
from jaxndimage._cache import checking_arguments
from jaxndimage._casting import scipy_arithmetic
from jaxndimage._plans import Planned


def _plan_value_and_divergence(*args, **kwargs):
    """The shell of ``value_and_divergence`` (imported when called, so
    that the other tests run without it)."""
    from jaxndimage._divergence import _plan_value_and_divergence as shell

    return shell(*args, **kwargs)


def _spread(values, scale=1.0):
    return (values.max() - values.min()) * scale


def _difference(line, out, k):
    out[...] = (line[2:] - line[:-2]) * k


def _mask(image):
    return image > 0.3


def _blocks(image):
    return skimage.util.view_as_blocks(image, (3, 4))


def _windows(image):
    return skimage.util.view_as_windows(image, (3, 4), step=(2, 3))


def _montaged(image):
    return skimage.util.montage(image.reshape(3, 6, 6)[:3], padding_width=1,
                                grid_shape=(2, 2))


def _stack(image):
    return image.reshape(3, 6, 6)


#: (name, input from a (9, 12) random image, positional arguments after the
#: input, keywords, SciPy's or skimage's function of the image)
PLANNED = [
    ("distance_transform_bf", _mask, (), {},
     lambda x: ndi.distance_transform_bf(_mask(x))),
    ("distance_transform_bf", _mask, ("taxicab",), {"return_indices": True},
     lambda x: ndi.distance_transform_bf(_mask(x), "taxicab",
                                         return_indices=True)),
    ("distance_transform_bf", _mask, (), {"sampling": (1.5, 0.5),
                                          "return_distances": False,
                                          "return_indices": True},
     lambda x: ndi.distance_transform_bf(_mask(x), sampling=(1.5, 0.5),
                                         return_distances=False,
                                         return_indices=True)),
    ("distance_transform_cdt", _mask, (), {},
     lambda x: ndi.distance_transform_cdt(_mask(x))),
    ("distance_transform_cdt", _mask, ("taxicab",), {"return_indices": True},
     lambda x: ndi.distance_transform_cdt(_mask(x), "taxicab",
                                          return_indices=True)),
    ("distance_transform_cdt", _mask, (np.eye(3, dtype=bool),), {},
     lambda x: ndi.distance_transform_cdt(_mask(x), np.eye(3, dtype=bool))),
    ("distance_transform_edt", _mask, (), {},
     lambda x: ndi.distance_transform_edt(_mask(x))),
    ("distance_transform_edt", _mask, ((2.0, 0.5),), {"return_indices": True},
     lambda x: ndi.distance_transform_edt(_mask(x), (2.0, 0.5),
                                          return_indices=True)),
    ("generic_filter", None, (_spread,),
     {"size": (3, 2), "mode": "nearest", "extra_keywords": {"scale": 2.0}},
     lambda x: ndi.generic_filter(x, _spread, size=(3, 2), mode="nearest",
                                  extra_keywords={"scale": 2.0})),
    ("generic_filter", None, (np.median,),
     {"footprint": [[1, 0, 1], [0, 1, 0]], "origin": (0, 1), "cval": 1.5,
      "mode": "constant"},
     lambda x: ndi.generic_filter(x, np.median,
                                  footprint=[[1, 0, 1], [0, 1, 0]],
                                  origin=(0, 1), cval=1.5, mode="constant")),
    ("generic_filter1d", None, (_difference, 3),
     {"axis": 0, "extra_arguments": (2.0,)},
     lambda x: ndi.generic_filter1d(x, _difference, 3, axis=0,
                                    extra_arguments=(2.0,))),
    ("vectorized_filter", None, (np.mean,), {"size": 3},
     lambda x: ndi.vectorized_filter(x, np.mean, size=3)),
    ("vectorized_filter", None, (np.max,),
     {"footprint": np.eye(3, dtype=bool), "mode": "constant", "cval": 0.5},
     lambda x: ndi.vectorized_filter(x, np.max, footprint=np.eye(3, dtype=bool),
                                     mode="constant", cval=0.5)),
    ("vectorized_filter", None, (np.std,), {"size": 4, "mode": "valid",
                                            "axes": 1},
     lambda x: ndi.vectorized_filter(x, np.std, size=4, mode="valid",
                                     axes=1)),
    ("view_as_blocks", None, ((3, 4),), {},
     lambda x: skimage.util.view_as_blocks(x, (3, 4))),
    ("view_as_windows", None, ((3, 4),), {"step": (2, 3)},
     lambda x: skimage.util.view_as_windows(x, (3, 4), step=(2, 3))),
    ("montage", _stack, (), {"padding_width": 1, "fill": 0.25},
     lambda x: skimage.util.montage(_stack(x), padding_width=1, fill=0.25)),
    ("montage", lambda x: np.moveaxis(_stack(x), 0, -1)[None], (),
     {"channel_axis": -1, "rescale_intensity": True},
     lambda x: skimage.util.montage(np.moveaxis(_stack(x), 0, -1)[None],
                                    channel_axis=-1, rescale_intensity=True)),
    ("unview_as_blocks", _blocks, (), {}, lambda x: x),
    ("unview_as_windows", _windows, ((2, 3),), {}, lambda x: x[:, :10]),
    ("unview_as_windows", _windows, ((2, 3),),
     {"reduce": "sum", "shape": (9, 12)},
     lambda x: skimage.util.view_as_windows(np.ones((9, 12)), (3, 4),
                                            step=(2, 3)).sum()),
    ("unmontage", _montaged, ((2, 2),), {"padding_width": 1, "n_images": 3},
     _stack),
]


def _shell(name):
    """The undecorated shell of a public function."""
    return inspect.unwrap(getattr(jn, name))


def _run(name, make, args, kwargs, image):
    x = image if make is None else make(image)
    # The shell as the dispatcher calls it for numpy input.
    with jax.enable_x64(True), scipy_arithmetic():
        with checking_arguments():  # a kernel reached here would raise
            planned = _shell(name)(x, *args, **kwargs)
        return planned, planned.run()


@pytest.mark.parametrize("name, make, args, kwargs, expected", PLANNED,
                         ids=[p[0] for p in PLANNED])
def test_planned_shell_runs_no_kernel_and_its_plan_is_a_compile_key(
        name, make, args, kwargs, expected):
    image = np.random.default_rng(0).random((9, 12))
    planned, result = _run(name, make, args, kwargs, image)
    other, _ = _run(name, make, args, kwargs, image[::-1] * 0.5 + 0.25)
    assert_compile_key(planned, other)
    want = expected(image)
    if name == "unview_as_windows" and kwargs.get("reduce") == "sum":
        # The sum of the windows counts each pixel once per window on it.
        cover = jn.unview_as_windows(np.ones(_windows(image).shape), (2, 3),
                                     reduce="sum", shape=(9, 12))
        want = cover * image
        np.testing.assert_allclose(cover.sum(), expected(image))
    results = result if isinstance(result, tuple) else (result,)
    wanted = want if isinstance(want, tuple) else (want,)
    assert len(results) == len(wanted)
    for got, ref in zip(results, wanted):
        got = np.asarray(got)
        assert got.shape == np.shape(ref)
        assert got.dtype == np.asarray(ref).dtype or name.startswith(
            ("montage", "unview", "view"))  # JAX keeps float64 here too
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_numpy_views_stay_views():
    image = np.arange(24.0).reshape(4, 6)
    for name, args in (("view_as_blocks", ((2, 3),)),
                       ("view_as_windows", ((2, 3),))):
        planned = _shell(name)(image, *args)
        assert isinstance(planned, Planned)
        assert np.shares_memory(planned.run(), image)


def test_distance_outputs_are_operands_written_by_the_kernel():
    image = np.random.default_rng(1).random((7, 8)) > 0.4
    distances = np.zeros(image.shape)
    indices = np.zeros((2,) + image.shape, np.int32)
    with jax.enable_x64(True), scipy_arithmetic():
        with checking_arguments():
            planned = _shell("distance_transform_edt")(
                image, return_indices=True, distances=distances,
                indices=indices)
        plain = _shell("distance_transform_edt")(image, return_indices=True)
        assert planned.plan == plain.plan  # the arrays are operands
        assert not distances.any()  # nothing written before the kernel runs
        assert planned.run() is None
    ref_d, ref_i = ndi.distance_transform_edt(image, return_indices=True)
    np.testing.assert_array_equal(distances, ref_d)
    np.testing.assert_array_equal(indices, ref_i)


@pytest.mark.parametrize("name, args, kwargs, error", [
    ("distance_transform_bf", (), {"return_indices": True,
                                   "indices": np.zeros((2, 7, 8))},
     "indices array must be int32"),
    ("distance_transform_cdt", (), {"return_indices": True,
                                    "indices": np.zeros((1, 7, 8), np.int32)},
     "indices array has wrong shape"),
    ("distance_transform_edt", (), {"distances": np.zeros((7, 8), np.int32)},
     "distances array must be float64"),
])
def test_distance_output_arrays_are_checked_by_the_shell(name, args, kwargs,
                                                         error):
    # SciPy checks these after computing; no other error lies between, so
    # the shell checks them and the kernel never runs.
    image = np.ones((7, 8))
    with checking_arguments(), pytest.raises((RuntimeError, ValueError),
                                             match=error):
        _shell(name)(image, *args, **kwargs)
    with pytest.raises((RuntimeError, ValueError), match=error):
        getattr(ndi, name)(image, *args, **kwargs)


def test_generic_plans_key_the_callable_and_not_its_extra_arguments():
    image = np.ones((6, 6))
    shell = _shell("generic_filter")
    plans = {shell(image, _spread, 3, extra_keywords={"scale": s}).plan
             for s in (1.0, 2.0, np.float64(3.0))}
    assert len(plans) == 1
    plans.add(shell(image, np.mean, 3).plan)
    plans.add(shell(image, _spread, 5).plan)
    assert len(plans) == 3

    class Unhashable:
        __hash__ = None

        def __call__(self, values):
            return values.sum()

    function = Unhashable()
    first = shell(image, function, 3).plan
    assert hash(first) == hash(shell(image, function, 3).plan)
    assert first == shell(image, function, 3).plan
    assert first != shell(image, Unhashable(), 3).plan
    np.testing.assert_allclose(jn.generic_filter(image, function, 3),
                               ndi.generic_filter(image, np.sum, 3))


@pytest.mark.parametrize("name, args, kwargs, depth", [
    ("generic_filter", (np.mean,), {"size": 3, "origin": (0, 1)}, (1, 2)),
    ("generic_filter", (np.mean,), {"footprint": np.ones((1, 4))}, (0, 2)),
    ("generic_filter", (np.mean,), {"size": 5, "axes": (1,)}, (0, 2)),
    ("generic_filter1d", (_difference, 4), {"axis": 0, "origin": 1,
                                            "extra_arguments": (1.0,)},
     (3, 0)),
    ("generic_filter1d", (_difference, 3), {"extra_arguments": (1.0,)},
     (0, 1)),
    ("vectorized_filter", (np.mean,), {"size": 3}, (None, None)),
    ("distance_transform_bf", (), {}, None),
    ("distance_transform_cdt", (), {}, None),
    ("distance_transform_edt", (), {}, None),
    ("unview_as_blocks", (), {}, None),
    ("unview_as_windows", (2,), {}, None),
    ("view_as_windows", ((3, 3),), {}, None),
])
def test_plan_depth_is_the_reach_of_the_filter(name, args, kwargs, depth):
    image = np.ones((10, 10))
    planned = _shell(name)(image, *args, **kwargs)
    assert planned.plan.depth == depth


def test_montage_and_unmontage_plans():
    stack = np.random.default_rng(2).random((5, 4, 3, 2))
    plan = _shell("montage")(stack, channel_axis=3).plan
    assert plan == _shell("montage")(stack * 2, channel_axis=-1 % 4).plan
    assert plan.depth is None
    montaged = jn.montage(stack, channel_axis=3)
    np.testing.assert_array_equal(
        montaged, skimage.util.montage(stack, channel_axis=3))
    with checking_arguments():
        planned = _shell("unmontage")(np.moveaxis(montaged, -1, 0), (3, 3),
                                      channel_axis=0, n_images=5)
    with jax.enable_x64(True):
        np.testing.assert_array_equal(planned.run(), stack)


@pytest.mark.parametrize("method, kwargs", [
    ("exact", {}),
    ("exact", {"chunk_size": 3, "batch_axis": 1}),
    ("hutchinson", {"num_probes": 4}),
    ("hutch++", {}),
])
def test_divergence_plan_runs_no_jax_and_keys_the_configuration(method,
                                                                kwargs):
    matrix = jnp.asarray([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0], [0.0, 1.0, 2.0]])

    def f(x):
        return x @ matrix if kwargs.get("batch_axis") is None \
            else jnp.moveaxis(jnp.moveaxis(x, 1, 0) @ matrix, 0, 1)

    key = jax.random.key(0) if method != "exact" else None
    x = np.ones((4, 2, 3), np.float32)
    calls = []

    def counted(x):
        calls.append(x)
        return f(x)

    planned = _plan_value_and_divergence(
        counted, x, method=method, key=key,
        num_probes=kwargs.get("num_probes"),
        chunk_size=kwargs.get("chunk_size"),
        batch_axis=kwargs.get("batch_axis", 0))
    other = _plan_value_and_divergence(
        counted, x * 3, method=method, key=key,
        num_probes=kwargs.get("num_probes"),
        chunk_size=kwargs.get("chunk_size"),
        batch_axis=kwargs.get("batch_axis", 0))
    assert not calls  # the shell calls no f and runs no JAX
    assert_compile_key(planned, other)
    assert isinstance(planned.operands[1], np.ndarray)
    assert planned.plan.depth is None
    y, div = planned.run()
    np.testing.assert_allclose(y, f(jnp.asarray(x)), rtol=1e-6)
    samples = x.shape[kwargs.get("batch_axis", 0)]
    if method == "exact":
        per_sample = x.size // samples // 3 * float(jnp.trace(matrix))
        np.testing.assert_allclose(div, np.full(samples, per_sample),
                                   rtol=1e-6)
    ref = jn.divergence(f, x, method=method, key=key,
                        num_probes=kwargs.get("num_probes"),
                        chunk_size=kwargs.get("chunk_size"),
                        batch_axis=kwargs.get("batch_axis", 0))
    np.testing.assert_allclose(div, ref, rtol=1e-6)


def test_divergence_plan_raises_before_computing():
    with pytest.raises(ValueError, match="needs key"):
        _plan_value_and_divergence(jnp.sin, np.ones(3), method="hutchinson",
                                   key=None, num_probes=None,
                                   chunk_size=None, batch_axis=0)
    with pytest.raises(TypeError, match="real floating"):
        _plan_value_and_divergence(jnp.sin, np.ones(3, int), method="exact",
                                   key=None, num_probes=None,
                                   chunk_size=None, batch_axis=0)
