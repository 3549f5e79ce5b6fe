"""Planned functions: a pure plan step, then the kernel (docs/ARCHITECTURE.md).

The shell of a planned public function validates and returns a frozen,
hashable plan with its kernel and operands, running no kernel; the plan is
what the call compiles for, and its depth is the dask halo.
"""

import jax
import numpy as np
import pytest
import scipy.ndimage as ndi
from plan_checks import assert_compile_key

import jaxndimage as jn
from jaxndimage._cache import checking_arguments
from jaxndimage._casting import scipy_arithmetic
from jaxndimage._plans import plan_of


def _second_derivative(input, axis, output, mode, cval):
    """A derivative callable for SciPy's and jaxndimage's generic_laplace
    alike: jaxndimage's correlate1d fills SciPy's output array in place."""
    return jn.correlate1d(input, [1.0, -2.0, 1.0], axis, output, mode, cval)

def _halved(point):
    """A mapping for geometric_transform: SciPy calls it with a tuple of
    ints, jaxndimage first with a tuple of arrays of them."""
    return point[0] * 0.5, point[1] + 0.25


#: (name, positional arguments after the input, keywords)
PLANNED = [
    ("correlate1d", ([1.0, 2.0, -1.0],), {"axis": 0, "origin": 1}),
    ("convolve1d", ([1.0, 2.0],), {"mode": "wrap"}),
    ("correlate", (np.arange(6.0).reshape(2, 3),), {"mode": "nearest"}),
    ("convolve", (np.ones((3, 1)),), {"origin": (1, 0)}),
    ("gaussian_filter1d", (1.5,), {"order": 1}),
    ("gaussian_filter", ((1.0, 0.0),), {"mode": "constant", "cval": 2.0}),
    ("uniform_filter1d", (4,), {"axis": 0}),
    ("uniform_filter", ((3, 5),), {"mode": "mirror"}),
    ("sobel", (0,), {}),
    ("prewitt", (), {"mode": "constant"}),
    ("laplace", (), {"mode": ("wrap", "nearest")}),
    ("gaussian_laplace", (1.5,), {"axes": (0,)}),
    ("gaussian_gradient_magnitude", ((1.0, 2.0),), {"truncate": 3.0}),
    ("generic_laplace", (_second_derivative,), {"mode": "mirror"}),
    ("generic_gradient_magnitude", (_second_derivative,), {"axes": (1,)}),
    ("minimum_filter1d", (3,), {"axis": 0}),
    ("maximum_filter1d", (1,), {}),
    ("minimum_filter", (), {"size": (2, 3), "mode": "constant"}),
    ("maximum_filter", (), {"footprint": np.eye(3, dtype=bool)}),
    ("median_filter", (), {"size": 3}),
    ("rank_filter", (-2,), {"footprint": [[1, 0, 1], [0, 1, 0]]}),
    ("percentile_filter", (30,), {"size": (3, 1), "origin": (1, 0)}),
    ("fourier_gaussian", (2.0,), {}),
    ("fourier_uniform", ((3.0, 1.0),), {"n": 20, "axis": 0}),
    ("fourier_ellipsoid", (2.5,), {}),
    ("fourier_shift", ((1.0, -2.5),), {}),
    ("spline_filter1d", (3, 0), {"mode": "wrap"}),
    ("spline_filter", (5,), {"output": np.float32}),
    ("binary_erosion", (), {"iterations": 2, "origin": (0, -1)}),
    ("binary_dilation", (np.eye(2, dtype=bool),), {"border_value": 1}),
    ("binary_hit_or_miss", (), {"structure1": [[1, 1, 0]]}),
    ("map_coordinates", ([[0.5, 3.2, 8.0], [1.0, 11.5, -1.0]],), {}),
    ("shift", ((1.5, -0.25),), {"order": 1, "mode": "nearest"}),
    ("zoom", (0.5,), {"order": 1}),
    ("affine_transform", ([[0.9, 0.2], [-0.1, 1.1]],), {"offset": 0.5}),
    ("affine_transform", ([1.2, 0.8],), {"output_shape": (7, 9)}),
    ("rotate", (30.0,), {"order": 1, "mode": "nearest"}),
    ("geometric_transform", (_halved,), {"output_shape": (11, 8)}),
    ("zoom", ((2.0, 1.3),), {"grid_mode": True, "mode": "grid-wrap"}),
]


def _shell(name):
    """The undecorated shell of a public function."""
    return getattr(jn, name).__wrapped__


@pytest.mark.parametrize("name, args, kwargs", PLANNED,
                         ids=[p[0] for p in PLANNED])
def test_planned_shell_runs_no_kernel_and_its_plan_is_a_compile_key(
        name, args, kwargs):
    image = np.random.default_rng(0).random((9, 12))
    if name.startswith("binary"):
        image = image > 0.3
    # The shell as the dispatcher calls it for numpy input.
    with jax.enable_x64(True), scipy_arithmetic():
        with checking_arguments():  # a kernel reached here would raise
            planned = _shell(name)(image, *args, **kwargs)
            other = _shell(name)(image[::-1] * 3, *args, **kwargs)
        result = np.asarray(planned.run())
    assert_compile_key(planned, other)
    np.testing.assert_allclose(result,
                               getattr(ndi, name)(image, *args, **kwargs),
                               rtol=1e-12, atol=1e-12)


def test_plan_changes_with_the_configuration():
    image = np.ones((8, 8))
    plans = {_shell("uniform_filter")(image, size).plan for size in (3, 5)}
    plans |= {_shell("uniform_filter")(image, 3, mode=m).plan
              for m in ("reflect", "wrap")}
    plans.add(_shell("uniform_filter")(image.astype(np.float32), 3).plan)
    assert len(plans) == 4


@pytest.mark.parametrize("name, args, kwargs, depth", [
    ("correlate1d", ([1.0, 2.0, -1.0],), {"axis": 0, "origin": 1}, (2, 0)),
    ("convolve1d", ([1.0, 2.0, 3.0, 4.0],), {}, (0, 2)),
    ("convolve", (np.ones((3, 1)),), {"origin": (1, 0)}, (2, 0)),
    ("gaussian_filter", ((1.0, 0.0),), {}, (4, 0)),
    ("gaussian_filter", (1.0,), {"radius": (2, 6)}, (2, 6)),
    ("uniform_filter", ((3, 4),), {"origin": (0, 1)}, (1, 3)),
    ("sobel", (0,), {}, (1, 1)),
    ("laplace", (), {"axes": (1,)}, (0, 1)),
    ("gaussian_laplace", (1.0,), {"axes": (0,)}, (4, 0)),
    ("gaussian_laplace", (1.0,), {"radius": 2}, (2, 2)),
    ("gaussian_gradient_magnitude", (1.0,), {"axes": (1,)}, (4, 4)),
    ("generic_laplace", (_second_derivative,), {}, (None, None)),
    ("maximum_filter1d", (4,), {"axis": 0, "origin": -1}, (2, 0)),
    ("minimum_filter", (), {"size": 5, "axes": (1,)}, (0, 2)),
    ("median_filter", (), {"footprint": np.ones((1, 4))}, (0, 2)),
    ("fourier_gaussian", (2.0,), {}, (None, None)),
    ("spline_filter1d", (3, 0), {}, (None, 0)),
    ("spline_filter1d", (1, 0), {}, (0, 0)),
    ("spline_filter", (2,), {}, (None, None)),
    ("binary_erosion", (), {"iterations": 3}, (3, 3)),
    ("binary_dilation", (np.ones((2, 4)),), {}, (1, 2)),
    ("binary_erosion", (), {"iterations": -1}, None),
    ("binary_hit_or_miss", (), {"structure1": [[1, 1, 1, 1, 1]],
                                "structure2": np.ones((3, 1))}, (1, 2)),
    ("zoom", (2.0,), {}, None),
    ("rotate", (10.0,), {}, None),
])
def test_plan_depth_is_the_reach_of_the_filter(name, args, kwargs, depth):
    planned = _shell(name)(np.ones((10, 10)), *args, **kwargs)
    assert planned.plan.depth == depth


def test_plan_of_a_call_binds_keywords_of_a_var_keyword_parameter():
    # ``inspect`` binds ``truncate=2.0`` into ``kwargs``; the shell must
    # receive it as a keyword.
    plan = plan_of(_shell("gaussian_laplace"), "input")(
        {"input": np.ones((10, 10)), "sigma": 1.0, "output": None,
         "mode": "reflect", "cval": 0.0, "axes": None,
         "kwargs": {"truncate": 2.0}})
    assert plan.depth == (2, 2)


def test_plan_raises_scipys_error_before_float16_refusal():
    # A bad argument is reported first, float16 only for a valid call.
    with pytest.raises(ValueError, match="origin"):
        jn.uniform_filter(np.ones(4, np.float16), 3, origin=5)
    with pytest.raises(RuntimeError, match="float16"):
        jn.uniform_filter(np.ones(4, np.float16), 3)
