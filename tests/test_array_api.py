"""Any array-API array in, the same kind out: torch (CPU), array_api_strict;
unknown array types are a TypeError naming the type."""

import array_api_strict as xps
import numpy as np
import pytest
import scipy.ndimage as sp

import jaxndimage as jn

torch = pytest.importorskip("torch")

CALLS = [
    ("gaussian_filter", (1.2,), {}),
    ("uniform_filter", (3,), {"mode": "wrap"}),
    ("sobel", (0,), {}),
    ("correlate1d", ([1.0, -2.0, 0.5],), {"origin": 1}),
    ("median_filter", (3,), {}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8"])
@pytest.mark.parametrize("name, args, kwargs", CALLS)
def test_torch_round_trip(rng, name, args, kwargs, dtype):
    data = (rng.random((9, 7)) * 100).astype(dtype)
    tensor = torch.from_numpy(data.copy())
    result = getattr(jn, name)(tensor, *args, **kwargs)
    expected = getattr(sp, name)(data, *args, **kwargs)
    assert type(result) is torch.Tensor
    assert result.device == tensor.device
    assert result.dtype == tensor.dtype
    assert tuple(result.shape) == expected.shape
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-5)
    np.testing.assert_array_equal(tensor.numpy(), data)  # input untouched


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
@pytest.mark.parametrize("name, args, kwargs", CALLS[:3])
def test_array_api_strict_round_trip(rng, name, args, kwargs, dtype):
    data = (rng.random((8, 6)) * 10).astype(dtype)
    array = xps.asarray(data)
    result = getattr(jn, name)(array, *args, **kwargs)
    expected = getattr(sp, name)(data, *args, **kwargs)
    assert type(result) is type(array)
    assert result.dtype == array.dtype
    assert result.shape == expected.shape
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-5)


def test_torch_result_is_writeable_and_independent(rng):
    tensor = torch.from_numpy(rng.random((6, 6)))
    before = tensor.clone()
    result = jn.gaussian_filter(tensor, 0)  # filters nothing
    result += 1.0
    assert torch.equal(tensor, before)


def test_torch_output_array_and_dtype(rng):
    data = rng.random((7, 5))
    out = torch.zeros((7, 5), dtype=torch.float32)
    returned = jn.laplace(torch.from_numpy(data), output=out)
    assert returned is out
    np.testing.assert_allclose(out.numpy(), sp.laplace(data), rtol=1e-6)
    result = jn.sobel(torch.from_numpy(data * 50), output=torch.int32)
    assert result.dtype == torch.int32
    np.testing.assert_array_equal(result.numpy(),
                                  sp.sobel(data * 50, output=np.int32))


def test_torch_weights_with_numpy_input(rng):
    data = rng.random((6, 6))
    weights = torch.ones((2, 3), dtype=torch.float64)
    result = jn.correlate(torch.from_numpy(data), weights)
    np.testing.assert_allclose(result.numpy(),
                               sp.correlate(data, np.ones((2, 3))))


class _Opaque:
    """Looks like an array (shape, dtype) but nothing can convert it."""

    shape = (3, 3)
    dtype = np.dtype(float)


def test_unknown_array_type_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match=r"input: unsupported array type "
                       r".*test_array_api\._Opaque"):
        jn.gaussian_filter(_Opaque(), 1.0)


def test_numpy_convertible_objects_stay_numpy_like_scipy(rng):
    class Wrapped:
        def __init__(self, data):
            self.data, self.shape, self.dtype = data, data.shape, data.dtype

        def __array__(self, dtype=None, copy=None):
            return self.data

    data = rng.random((5, 5))
    result = jn.uniform_filter(Wrapped(data), 3)
    assert type(result) is np.ndarray
    np.testing.assert_allclose(result, sp.uniform_filter(data, 3))
