"""Compilation behaviour: what recompiles, and the persistent kernel cache."""

from __future__ import annotations

import os
import pathlib
import pickle
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.ndimage as ndi

import jaxndimage as jn
from jaxndimage import _cache


def test_new_sigma_with_same_radius_does_not_recompile(cache_dir):
    x = np.random.default_rng(0).random((37, 41), np.float32)
    jn.gaussian_filter(x, 2.0)
    before = _cache.stats["compiled"]
    for sigma in (2.1, 2, np.float32(1.95), jnp.asarray(2.05)):
        jn.gaussian_filter(x, sigma)
    assert _cache.stats["compiled"] == before
    jn.gaussian_filter(x, 4.0)  # a new radius must compile
    assert _cache.stats["compiled"] == before + 1


def test_a_new_shape_in_a_seen_bucket_compiles_no_interpolation_or_fourier_program(
        cache_dir):
    """Interpolation (prefiltered orders included) and the Fourier filters
    of numpy input: a second image of another shape, in the buckets of
    the first, compiles and loads nothing."""
    def calls(image):
        points = np.stack([np.linspace(0, n - 1, 700) for n in image.shape])
        jn.rotate(image, 20, order=1, reshape=False)
        jn.rotate(image, 33, order=3, mode="nearest")
        jn.shift(image, (1.5, -2.25), order=2)
        jn.affine_transform(image, [[0.9, 0.1], [-0.2, 1.1]], order=4)
        jn.zoom(image, 0.7, order=5)
        jn.map_coordinates(image, points, order=3, mode="mirror")
        jn.geometric_transform(image, lambda o: (o[0] * 0.9, o[1] + 0.5),
                               order=1)
        jn.spline_filter(image, 5)
        spectrum = np.fft.fft2(image)
        jn.fourier_gaussian(spectrum, 2.0)
        jn.fourier_ellipsoid(spectrum, 3.0)
        jn.fourier_shift(spectrum, 1.5)

    rng = np.random.default_rng(3)
    calls(rng.random((300, 411)))
    before = _cache.stats["compiled"] + _cache.stats["loaded"]
    calls(rng.random((301, 409)))
    assert _cache.stats["compiled"] + _cache.stats["loaded"] == before


def test_a_mapping_of_jax_operations_compiles_per_list_length_not_per_shape(
        cache_dir):
    """geometric_transform of numpy input calls the mapping on flat chunks
    of the output indices: the JAX operations of a mapping compile once
    per chunk length, a handful over 16 shapes, not some for every shape;
    the result is SciPy's."""
    from jaxndimage import _canvas

    def turned(point, angle):
        cos, sin = jnp.cos(angle), jnp.sin(angle)
        return (cos * point[0] - sin * point[1] + 3.0,
                sin * point[0] + cos * point[1])

    rng = np.random.default_rng(4)
    small = rng.random((20, 30))
    with jax.enable_x64(True):  # SciPy calls it on ints, in JAX's dtypes
        expected = ndi.geometric_transform(small, turned, order=1,
                                           extra_arguments=(0.1,))
    np.testing.assert_allclose(
        jn.geometric_transform(small, turned, order=1,
                               extra_arguments=(0.1,)),
        expected, rtol=0, atol=1e-12)
    before = _cache.stats["compiled"]
    shapes = {tuple(int(n) for n in rng.integers(40, 700, 2))
              for _ in range(16)}
    counted = [0]

    def count(event, duration, **kwargs):
        counted[0] += event == "/jax/core/compile/backend_compile_duration"

    jax.monitoring.register_event_duration_secs_listener(count)
    try:
        for shape in shapes:
            jn.geometric_transform(rng.random(shape), turned, order=1,
                                   extra_arguments=(0.1,))
    finally:
        jax.monitoring.unregister_event_duration_listener(count)
    lengths = {_canvas.list_chunks(n * m)[0] for n, m in shapes}
    # A few operations per chunk length, and the bucketed points kernel.
    assert counted[0] <= 8 * len(lengths) + 4, (
        f"{counted[0]} compilations for {len(shapes)} shapes")
    assert _cache.stats["compiled"] - before <= 2 * len(lengths)


def test_traced_sigma_does_not_retrace_the_users_jit():
    blur = jax.jit(lambda a, s: jn.gaussian_filter(a, s, radius=6))
    x = jnp.ones((16, 16))
    blur(x, 1.5)
    blur(x, 2.5)
    assert blur._cache_size() == 1


def test_persistent_cache_serves_a_second_process(cache_dir):
    code = textwrap.dedent("""
        import numpy as np, jaxndimage as jn
        from jaxndimage import _cache
        jn.gaussian_filter(np.ones((29, 31), np.float32), 1.5)
        print(_cache.stats["compiled"], _cache.stats["loaded"])
    """)

    def run(**env):
        out = subprocess.run([sys.executable, "-c", code], check=True,
                             capture_output=True, text=True,
                             env={**os.environ, **env}).stdout
        return tuple(int(v) for v in out.split())

    assert run() == (1, 0)
    assert any(cache_dir.iterdir())
    assert run() == (0, 1)
    # Opting out: nothing is loaded, the kernel compiles.
    assert run(JAXNDIMAGE_CACHE="0") == (1, 0)


def test_opt_out_writes_nothing(cache_dir, monkeypatch):
    monkeypatch.setenv("JAXNDIMAGE_CACHE", "0")
    assert not _cache.cache_enabled()
    jn.uniform_filter(np.ones((23, 19)), 3)
    assert not any(cache_dir.iterdir())


def test_a_users_jax_cache_takes_precedence(tmp_path):
    code = "from jaxndimage import _cache; print(_cache.cache_enabled())"
    env = {**os.environ, "JAX_COMPILATION_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], check=True, env=env,
                         capture_output=True, text=True).stdout
    assert out.strip() == "False"


def _kernel(function):
    return _cache.KernelCache(jax.jit(function))


def test_corrupt_entries_are_recompiled(cache_dir):
    def double(a):
        return a * 2

    _kernel(double)(jnp.ones(3))
    entries = list(cache_dir.iterdir())
    assert len(entries) == 1
    entries[0].write_bytes(b"not an executable")
    errors = _cache.stats["errors"]
    again = _kernel(double)  # a fresh in-memory table
    np.testing.assert_array_equal(again(jnp.ones(3)), 2 * np.ones(3))
    assert _cache.stats["errors"] == errors + 1


class _Touch:
    """Unpickling this runs code: it creates the file ``path``."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.path),))


def _replace_entry_by_code(cache_dir, marker):
    def triple(a):
        return a * 3

    _kernel(triple)(jnp.ones(3))
    (entry,) = cache_dir.iterdir()
    entry.write_bytes(pickle.dumps(_Touch(marker)))
    return triple, entry


def test_a_directory_others_can_write_is_neither_read_nor_written(
        cache_dir, tmp_path_factory):
    # A cache directory that other users can write (a shared scratch disk)
    # would let them run code in this user's process: an entry replaced by
    # a pickle that runs a command ran it on the next call.
    marker = tmp_path_factory.mktemp("marker") / "ran"
    triple, entry = _replace_entry_by_code(cache_dir, marker)
    cache_dir.chmod(0o777)
    untrusted = _cache.stats["untrusted"]
    compiled = _cache.stats["compiled"]
    np.testing.assert_array_equal(_kernel(triple)(jnp.ones(3)), [3, 3, 3])
    assert not marker.exists()
    assert _cache.stats["compiled"] == compiled + 1
    assert _cache.stats["untrusted"] >= untrusted + 1
    assert entry.read_bytes() == pickle.dumps(_Touch(marker))  # not written
    # The same directory, private again: the entry is read (and fails as a
    # program), which shows that only the permissions kept it unread.
    cache_dir.chmod(0o700)
    _kernel(triple)(jnp.ones(3))
    assert marker.exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a file to another user needs root")
def test_an_entry_another_user_owns_is_not_read(cache_dir, tmp_path_factory):
    marker = tmp_path_factory.mktemp("marker") / "ran"
    triple, entry = _replace_entry_by_code(cache_dir, marker)
    os.chown(entry, 65534, 65534)  # nobody
    np.testing.assert_array_equal(_kernel(triple)(jnp.ones(3)), [3, 3, 3])
    assert not marker.exists()


def test_entries_are_keyed_by_the_program_not_its_name(cache_dir):
    # Two functions of one name and module but different bodies (as after
    # an edit of a helper they call) must not share an entry.
    namespace: dict = {}
    exec("def f(a):\n    return a + 1", namespace)  # no source file at all
    first = _kernel(namespace["f"])
    exec("def f(a):\n    return a + 2", namespace)
    second = _kernel(namespace["f"])
    np.testing.assert_array_equal(first(jnp.zeros(2)), [1, 1])
    np.testing.assert_array_equal(second(jnp.zeros(2)), [2, 2])
    assert len(list(cache_dir.iterdir())) == 2


def test_entries_are_keyed_by_the_argument_structure(cache_dir):
    # An empty tuple adds nothing to the program text, but the executable
    # checks the structure of what it is called with.
    namespace: dict = {}
    exec("def f(a, *rest):\n    return a + 1", namespace)
    np.testing.assert_array_equal(_kernel(namespace["f"])(jnp.zeros(2)),
                                  [1, 1])
    np.testing.assert_array_equal(
        _kernel(namespace["f"])(jnp.zeros(2), ()), [1, 1])
    assert len(list(cache_dir.iterdir())) == 2


@pytest.mark.parametrize("first_x64", [True, False])
def test_entries_are_keyed_by_the_x64_setting(cache_dir, first_x64):
    # Host input runs under a local x64 scope, JAX input under the user's
    # setting: the same kernel, static arguments and argument types, but a
    # sum of booleans is JAX's default int of the scope (int64 or int32).
    # The public functions cast such results, so the kernel is called
    # directly, each time with a fresh in-memory table so that the second
    # call reads the disk.
    from jaxndimage._labelling import _count_runs

    values = jnp.asarray([3, 0, 2, 1], jnp.int16)
    for x64 in (first_x64, not first_x64):
        kernel = _cache.KernelCache(jax.jit(_count_runs.__wrapped__,
                                            static_argnames=("offsets",)))
        with jax.enable_x64(x64):
            runs = kernel(values, offsets=((-1,),))
        assert runs.dtype == (np.int64 if x64 else np.int32)
        assert int(runs) == 2
    assert len(list(cache_dir.iterdir())) == 2


def test_compiler_options_reach_xla_and_key_the_entry(cache_dir):
    def f(a):
        return a + 1

    plain = _kernel(f)
    tuned = _cache.KernelCache(
        jax.jit(f), cpu_compiler_options={"xla_cpu_use_fusion_emitters": False})
    for cache in (plain, tuned):
        np.testing.assert_array_equal(cache(jnp.zeros(2)), [1, 1])
    assert len(list(cache_dir.iterdir())) == 2
    unknown = _cache.KernelCache(
        jax.jit(f), cpu_compiler_options={"not_an_xla_option": True})
    with pytest.raises(Exception, match="not_an_xla_option"):
        unknown(jnp.zeros(2))


def test_the_directory_is_kept_below_its_size(cache_dir, monkeypatch):
    monkeypatch.setenv("JAXNDIMAGE_CACHE_MAX_MB", "0.000001")
    for k in range(3):
        _kernel(lambda a, k=k: a * k)(jnp.ones(4))
    assert len(list(cache_dir.glob("*.bin"))) <= 1


def test_filters_work_under_disable_jit(cache_dir):
    x = np.random.default_rng(1).random((9, 11))
    expected = jn.gaussian_filter(x, 1.5, mode="constant", cval=0.5)
    expected_sobel = jn.sobel(jnp.asarray(x))
    expected_median = jn.median_filter(x, 3)
    entries = set(cache_dir.iterdir())
    with jax.disable_jit():
        got = jn.gaussian_filter(x, 1.5, mode="constant", cval=0.5)
        sobel = jn.sobel(jnp.asarray(x))
        median = jn.median_filter(x, 3)
    # Op by op, XLA rounds some sums differently than in one fused loop.
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    np.testing.assert_allclose(sobel, expected_sobel, rtol=1e-6)
    np.testing.assert_array_equal(median, expected_median)
    assert set(cache_dir.iterdir()) == entries  # nothing compiled


def _line_interior(line, out):
    out[:] = line[1:-1]


def test_per_shape_kernels_are_cached_like_bucketed_ones(cache_dir):
    # A kernel compiled per shape (`generic_filter1d`, whose callable is
    # traced per line length and count) is kept in memory and on disk: a
    # second call of the shape compiles nothing, a new shape does.
    x = np.random.default_rng(2).random((13, 17))
    jn.generic_filter1d(x, _line_interior, 3)
    before = _cache.stats["compiled"]
    jn.generic_filter1d(x + 1, _line_interior, 3)
    assert _cache.stats["compiled"] == before
    jn.generic_filter1d(x[:12], _line_interior, 3)
    assert _cache.stats["compiled"] == before + 1
    assert any(cache_dir.glob("*.bin"))


def test_argument_types_of_pytree_nodes_and_numpy_scalars_key_a_program():
    keys = {_cache.argument_types(v) for v in (
        np.float32(1), np.float64(1), 1.0, (jnp.zeros(2),), [jnp.zeros(2)],
        {"a": jnp.zeros(2)}, {"a": jnp.zeros(3)})}
    assert len(keys) == 7


#: One or more functions of every module whose docstring examples run op by
#: op in about a second (under ``disable_jit`` every primitive dispatches
#: on its own; the spline prefilter's examples take a minute).
_OP_BY_OP = ["binary_dilation", "binary_hit_or_miss", "white_tophat",
             "grey_dilation", "iterate_structure", "median_filter",
             "maximum_filter", "percentile_filter", "convolve1d", "correlate",
             "uniform_filter", "sobel", "laplace", "gaussian_gradient_magnitude",
             "geometric_transform", "fourier_gaussian", "fourier_shift",
             "generic_filter1d", "vectorized_filter", "variance",
             "value_indices", "watershed_ift", "montage", "view_as_windows",
             "unmontage"]


@pytest.mark.parametrize("name", _OP_BY_OP)
def test_docstring_examples_hold_under_disable_jit(name):
    import doctest

    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS
                                   | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(getattr(jn, name), name, globs={})
    assert tests and tests[0].examples
    report = []
    with jax.disable_jit():
        for test in tests:
            runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_programs_kept_in_memory_are_bounded(cache_dir, monkeypatch):
    # Each program maps pages of code: a process keeping all would run out
    # of memory mappings.  The least recently used are dropped, and loaded
    # from disk when needed again.  (`generic_filter1d` compiles per
    # shape.)
    monkeypatch.setattr(_cache, "MOST_PROGRAMS", 3)
    images = [np.eye(n) for n in range(5, 11)]
    first = jn.generic_filter1d(images[0], _line_interior, 3)
    for image in images[1:]:
        jn.generic_filter1d(image, _line_interior, 3)
        assert len(_cache._recent) <= 3
    loaded = _cache.stats["loaded"]
    np.testing.assert_array_equal(
        jn.generic_filter1d(images[0], _line_interior, 3), first)
    assert _cache.stats["loaded"] == loaded + 1


@pytest.mark.skipif(not pathlib.Path("/proc/self/maps").exists(),
                    reason="counts the process's memory mappings, which only "
                           "Linux lists in /proc/self/maps")
def test_programs_dropped_from_memory_release_their_machine_code(monkeypatch):
    # JAX's tracing and lowering caches keep every program a jitted
    # function compiled while the function lives; kernels compile through a
    # jit of their own per program, so a program dropped here unmaps its
    # code.  Without that each program kept a few mappings more, and a
    # process that compiled a few thousand ran out of them and crashed.
    import gc

    monkeypatch.setenv("JAXNDIMAGE_CACHE", "0")
    monkeypatch.setattr(_cache, "MOST_PROGRAMS", 4)

    @_cache.cached_jit(static_argnames=("k",))
    def kernel(x, *, k):
        return jnp.sin(x) * k + jnp.cos(x * k)

    def mappings() -> int:
        gc.collect()
        return len(pathlib.Path("/proc/self/maps").read_text().splitlines())

    x = np.ones(16, np.float32)
    for k in range(8):
        kernel(x, k=k)
    before = mappings()
    for k in range(8, 88):
        kernel(x, k=k)
    assert mappings() - before < 40
