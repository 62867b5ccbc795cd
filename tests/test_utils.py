"""weft.utils (Warp's wp.utils): scans, sorts, run-length encoding, casts, ScopedTimer,
MeshAdjacency, warnings, and module options."""

import contextlib
import io
import re
import time
import warnings

import numpy as np
import pytest

import weft as wp
from weft import logger
from weft.runtime.algorithms import KERNEL_SORT_FROM

RNG = np.random.default_rng(7)


@wp.kernel
def exp_kernel(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = wp.exp(x[i])


@pytest.mark.parametrize("dtype", [wp.int32, wp.int64, wp.float32, wp.float64, wp.vec3i, wp.vec3d])
def test_array_scan_inclusive_and_exclusive(dtype):
    shape = (1000,) if dtype.is_scalar else (1000, 3)
    scalar = np.dtype(dtype.np_dtype if dtype.is_scalar else dtype.dtype.np_dtype)
    values = RNG.integers(-50, 50, size=shape).astype(scalar)
    a = wp.array(values, dtype=dtype)
    inc, exc = wp.zeros_like(a), wp.zeros_like(a)
    wp.utils.array_scan(a, inc, True)
    wp.utils.array_scan(a, exc, False)
    expected = np.cumsum(values, axis=0)
    np.testing.assert_array_equal(inc.numpy(), expected)
    np.testing.assert_array_equal(exc.numpy()[1:], expected[:-1])
    assert not exc.numpy()[0].any()


def test_array_scan_writes_only_through_strided_views():
    base = wp.array(np.arange(12, dtype=np.int64))
    out = wp.array(np.full(12, -1, dtype=np.int64))
    wp.utils.array_scan(base[::2], out[::2])
    assert out.numpy()[::2].tolist() == np.cumsum(np.arange(0, 12, 2)).tolist()
    assert (out.numpy()[1::2] == -1).all()


def test_array_scan_errors():
    with pytest.raises(RuntimeError, match=r"sizes do not match \(3 vs 4\)"):
        wp.utils.array_scan(wp.zeros(3, dtype=int), wp.zeros(4, dtype=int))
    with pytest.raises(RuntimeError, match=r"types do not match \(int32 vs float32\)"):
        wp.utils.array_scan(wp.zeros(3, dtype=int), wp.zeros(3, dtype=float))
    with pytest.raises(RuntimeError, match="Unsupported data type: vec3h"):
        wp.utils.array_scan(wp.zeros(3, dtype=wp.vec3h), wp.zeros(3, dtype=wp.vec3h))


@pytest.mark.parametrize("n", [500, KERNEL_SORT_FROM + 37])  # (numpy's sort; the radix kernels)
@pytest.mark.parametrize("dtype", [wp.int32, wp.uint32, wp.float32, wp.int64, wp.uint64, wp.float64])
def test_radix_sort_pairs_is_a_stable_sort(dtype, n):
    np_dtype = np.dtype(dtype.np_dtype)
    if np_dtype.kind == "f":
        keys = RNG.normal(size=n).astype(np_dtype)
        keys[::7] = keys[0]  # duplicates, to check stability
        keys[:3] = [-0.0, np.inf, -np.inf]
    else:
        lo = 0 if np_dtype.kind == "u" else -1000
        keys = RNG.integers(lo, 1000, size=n).astype(np_dtype)
    k = wp.array(np.concatenate([keys, np.zeros(n, np_dtype)]), dtype=dtype)
    v = wp.array(np.arange(2 * n, dtype=np.int32))
    wp.utils.radix_sort_pairs(k, v, n)
    order = np.argsort(keys, kind="stable")
    if np_dtype.kind == "f":  # -0.0 sorts before +0.0 in a radix sort of the bits
        order = np.lexsort((np.arange(n), np.signbit(keys) == 0, keys))
    np.testing.assert_array_equal(k.numpy()[:n], keys[order])
    np.testing.assert_array_equal(v.numpy()[:n], order)


@pytest.mark.parametrize("begin_bit, end_bit", [(0, None), (0, 12), (5, 29), (20, 64)])
@pytest.mark.parametrize("dtype", [wp.float32, wp.int64, wp.float64])
def test_large_radix_sorts_by_bit_range_move_wide_values(dtype, begin_bit, end_bit):
    """The radix kernels (sort_kernels.py) against numpy's stable sort of the same radix keys,
    NaNs and both zeros included, 8-byte values (bit patterns moved unchanged); not recorded
    on a Tape."""
    n = KERNEL_SORT_FROM * 2 + 3
    np_dtype = np.dtype(dtype.np_dtype)
    width = np_dtype.itemsize * 8
    end = min(end_bit or width, width)
    if np_dtype.kind == "f":
        keys = (RNG.normal(size=n) * 1e3).astype(np_dtype)
        keys[::5] = keys[3]
        keys[:6] = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf]
    else:
        keys = RNG.integers(-2**62, 2**62, size=n).astype(np_dtype)
        keys[::4] = keys[1]
    values = RNG.normal(size=n)
    k = wp.array(np.concatenate([keys, keys]), dtype=dtype)
    v = wp.array(np.concatenate([values, values]), dtype=wp.float64)
    with wp.Tape() as tape:
        wp.utils.radix_sort_pairs(k, v, n, begin_bit, end)
    assert not tape.launches
    unsigned = keys.view(f"u{np_dtype.itemsize}").astype(np.uint64)
    sign = np.uint64(1 << (width - 1))
    if np_dtype.kind == "f":
        radix = np.where(unsigned & sign, ~unsigned & np.uint64((1 << width) - 1), unsigned | sign)
    else:
        radix = unsigned ^ sign
    radix = (radix >> np.uint64(begin_bit)) & np.uint64((1 << (end - begin_bit)) - 1)
    order = np.argsort(radix, kind="stable")
    assert k.numpy()[:n].tobytes() == keys[order].tobytes()
    assert v.numpy()[:n].tobytes() == values[order].tobytes()


def test_radix_sort_pairs_bit_range_and_errors():
    k = wp.array([8, 1, 10, 3, 4, 5, 6, 7] + [0] * 8, dtype=wp.uint32)
    v = wp.array(list(range(1, 9)) + [0] * 8, dtype=wp.int32)
    wp.utils.radix_sort_pairs(k, v, 8, end_bit=2)  # by the two low bits only
    assert k.numpy()[:8].tolist() == [8, 4, 1, 5, 10, 6, 3, 7]
    with pytest.raises(RuntimeError, match="2\\*count"):
        wp.utils.radix_sort_pairs(wp.zeros(3, dtype=int), wp.zeros(3, dtype=int), 3)
    with pytest.raises(RuntimeError, match=r"bit range \[4, 2\) for 32-bit"):
        wp.utils.radix_sort_pairs(wp.zeros(6, dtype=int), wp.zeros(6, dtype=int), 3, begin_bit=4, end_bit=2)
    with pytest.raises(RuntimeError, match="Unsupported keys and values data types: int32, float16"):
        wp.utils.radix_sort_pairs(wp.zeros(6, dtype=int), wp.zeros(6, dtype=wp.float16), 3)
    with pytest.raises(RuntimeError, match="contiguous keys"):
        wp.utils.radix_sort_pairs(wp.zeros(16, dtype=int)[::2], wp.zeros(16, dtype=int), 4)


def test_segmented_sort_pairs():
    keys = wp.array([7, 2, 8, 4, 1, 6, 5, 3] + [0] * 8, dtype=wp.float32)
    values = wp.array(list(range(1, 9)) + [0] * 8, dtype=int)
    wp.utils.segmented_sort_pairs(keys, values, 8, wp.array([0, 4], dtype=int), wp.array([4, 8], dtype=int))
    assert keys.numpy()[:8].tolist() == [2, 4, 7, 8, 1, 3, 5, 6]
    assert values.numpy()[:8].tolist() == [2, 4, 1, 3, 5, 8, 7, 6]
    keys = wp.array([3, 1, 4, 2, 0, 0, 0, 0], dtype=int)
    values = wp.array([30, 10, 40, 20, 0, 0, 0, 0], dtype=int)
    wp.utils.segmented_sort_pairs(keys, values, 4, wp.array([0, 2, 4], dtype=int))  # offsets form
    assert keys.numpy()[:4].tolist() == [1, 3, 2, 4] and values.numpy()[:4].tolist() == [10, 30, 20, 40]


def test_segmented_sort_pairs_checks_every_range_before_sorting():
    keys = wp.array([2, 1, 4, 3, 0, 0, 0, 0], dtype=int)
    values = wp.array([20, 10, 40, 30, 0, 0, 0, 0], dtype=int)
    with pytest.raises(ValueError, match="Invalid segment range at index 1"):
        wp.utils.segmented_sort_pairs(keys, values, 4, wp.array([0, 2], dtype=int), wp.array([2, 5], dtype=int))
    assert keys.numpy()[:4].tolist() == [2, 1, 4, 3]  # the valid first segment was not sorted either
    for bad in ((1.5,), (True,)):
        with pytest.raises(TypeError, match="count must be an integer"):
            wp.utils.segmented_sort_pairs(keys, values, bad[0], wp.array([0], dtype=int))
    with pytest.raises(ValueError, match="non-negative"):
        wp.utils.segmented_sort_pairs(keys, values, -1, wp.array([0], dtype=int))


def test_runlength_encode():
    values = wp.array([1, 1, 1, 2, 2, 3, 1, 1], dtype=int)
    run_values, run_lengths = wp.zeros(8, dtype=int), wp.zeros(8, dtype=int)
    assert wp.utils.runlength_encode(values, run_values, run_lengths) == 4
    assert run_values.numpy()[:4].tolist() == [1, 2, 3, 1] and run_lengths.numpy()[:4].tolist() == [3, 2, 1, 2]
    count = wp.zeros(1, dtype=int)
    assert wp.utils.runlength_encode(values, run_values, run_lengths, run_count=count, value_count=5) is count
    assert count.numpy()[0] == 2 and run_lengths.numpy()[:2].tolist() == [3, 2]


def test_array_cast():
    out = wp.zeros(3, dtype=int)
    wp.utils.array_cast(wp.array([1.9, -2.7, 3.0], dtype=float), out)
    assert out.numpy().tolist() == [1, -2, 3]  # truncation, as a C cast
    flat = wp.zeros(2, dtype=float)
    wp.utils.array_cast(wp.array([[1, 2], [3, 4]], dtype=wp.vec2), flat, count=1)  # scalar by scalar
    assert flat.numpy().tolist() == [1.0, 2.0]
    grid = wp.zeros((2, 3), dtype=wp.float64)
    wp.utils.array_cast(wp.array(np.arange(6, dtype=np.float32).reshape(2, 3)), grid)
    assert grid.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(RuntimeError, match=r"Array shapes do not match \(\(2, 3\) vs \(3, 2\)\)"):
        wp.utils.array_cast(wp.zeros((2, 3)), wp.zeros((3, 2), dtype=wp.float64))
    with pytest.raises(RuntimeError, match="exceeds"):
        wp.utils.array_cast(wp.zeros(10), wp.zeros(10, dtype=int)[:3])


def test_array_cast_out_of_range_wraps_without_a_warning():
    out = wp.zeros(2, dtype=wp.uint8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wp.utils.array_cast(wp.array(np.array([-1.5, 300.7], dtype=np.float32)), out)
    assert out.numpy().tolist() == [255, 44]  # (what Warp's C cast gives on x86-64)


def test_scoped_timer(capsys):
    timings = {}
    with wp.ScopedTimer("outer", dict=timings):
        with wp.ScopedTimer("inner", dict=timings) as inner:
            time.sleep(0.01)
        inner.extra_msg = ""
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"    inner took \d+\.\d\d ms", lines[0]) and re.fullmatch(r"outer took \d+\.\d\d ms", lines[1])
    assert inner.elapsed >= 10.0 and timings["inner"] == [inner.elapsed] and len(timings["outer"]) == 1
    with wp.ScopedTimer("quiet", print=False, synchronize=True) as quiet:
        pass
    with wp.ScopedTimer("off", active=False):
        pass
    assert capsys.readouterr().out == "" and quiet.elapsed >= 0.0
    with wp.ScopedTimer("profiled", detailed=True):
        sum(range(1000))
    out = capsys.readouterr().out
    assert re.match(r"^\s+\d+ function calls", out) and out.rstrip().endswith("ms")


def test_scoped_timer_enabled_class_switch():
    timings = {}
    try:
        wp.ScopedTimer.enabled = False
        with wp.ScopedTimer("off", dict=timings, print=False) as off:
            pass
    finally:
        wp.ScopedTimer.enabled = True
    assert not off.active and timings == {"off": []} and off.elapsed == 0.0
    with wp.ScopedTimer("on", dict=timings, print=False) as on:
        pass
    assert on.active and len(timings["on"]) == 1


def test_scoped_timer_records_a_tape_scope():
    x = wp.ones(2, requires_grad=True)
    with wp.Tape() as tape, wp.ScopedTimer("step", print=False):
        wp.launch(exp_kernel, 2, inputs=[x])
    assert [name for _, name, _ in tape.scopes] == ["step", None]


def test_mesh_adjacency(capsys):
    adj = wp.utils.MeshAdjacency([(0, 3, 1), (0, 2, 3)], 2)
    e = adj.edges[(0, 3)]
    assert (e.v0, e.v1, e.o0, e.o1, e.f0, e.f1) == (0, 3, 1, 2, 0, 1)
    e = adj.edges[(1, 3)]
    assert (e.o1, e.f1) == (-1, -1) and len(adj.edges) == 5
    wp.utils.MeshAdjacency([(0, 3, 1), (0, 2, 3), (3, 0, 1)], 3)
    assert capsys.readouterr().out == "Detected non-manifold edge\n"


def test_warnings_go_through_the_logger():
    logger._warnings_seen.clear()
    with contextlib.redirect_stderr(io.StringIO()) as f, warnings.catch_warnings():
        warnings.simplefilter("always")
        wp.utils.warn("twice")
        wp.utils.warn("twice")
        wp.utils.warn("once", category=DeprecationWarning, once=True)
        wp.utils.warn("once", category=DeprecationWarning, once=True)
    assert f.getvalue() == "Warp UserWarning: twice\nWarp UserWarning: twice\nWarp DeprecationWarning: once\n"
    seen = []

    class Collect:
        debug = info = error = seen.append

        def warning(self, message, category=None, stacklevel=1):
            seen.append(message)

    wp.set_logger(Collect())
    try:
        wp.utils.warn("to my logger")
        with wp.ScopedLogLevel(wp.LOG_ERROR):
            wp.utils.warn("filtered")
    finally:
        wp.set_logger(None)
    assert seen == ["to my logger"]
    with pytest.raises(TypeError, match="logger"):
        wp.set_logger(object())


def test_module_options():
    options = wp.get_module_options()
    assert options["optimization_level"] is None and options["enable_backward"] == wp.config.enable_backward
    x = wp.array([0.5, 1.0], dtype=float)
    try:
        for level in (0, 2, None):
            for flags in ("", "-march=native"):
                wp.set_module_options({"optimization_level": level, "cpu_compiler_flags": flags})
                x.assign([0.5, 1.0])
                wp.launch(exp_kernel, 2, inputs=[x])
                np.testing.assert_allclose(x.numpy(), np.exp([0.5, 1.0]), rtol=1e-6)
        assert wp.get_module(__name__).options["cpu_compiler_flags"] == "-march=native"
        # a misspelt option warns; like Warp, weft stores it (it changes nothing)
        with pytest.warns(UserWarning, match="module option 'optimisation_level' is not one weft knows"):
            wp.set_module_options({"optimisation_level": 2})
        assert wp.get_module_options()["optimisation_level"] == 2
        assert wp.get_module_options()["optimization_level"] is None
        with pytest.raises(ValueError, match="unknown module option 'fast_mth'. Valid options"):
            wp.kernel(module="unique", module_options={"fast_mth": True})  # (the decorator refuses, as Warp's)
    finally:
        wp.set_module_options({"optimization_level": None, "cpu_compiler_flags": None})
        wp.get_module(__name__).options.pop("optimisation_level", None)


def test_module_hash_follows_the_settings_it_inherits(monkeypatch):
    module = wp.get_module(__name__)
    before = module.get_module_hash()
    monkeypatch.setattr(wp.config, "optimization_level", 1)
    assert module.get_module_hash() != before
    monkeypatch.setattr(wp.config, "optimization_level", None)
    assert module.get_module_hash() == before
    wp.set_module_options({"optimization_level": 1})
    try:
        assert module.get_module_hash() != before
    finally:
        wp.set_module_options({"optimization_level": None})



def _two_line_lambda():
    return lambda q, qd: (
        q[0] == 0.0
        and q[1] == 0.0
    )


def test_create_warp_function_from_a_lambda_and_a_function():
    original = _two_line_lambda()
    created, module = wp.utils.create_warp_function(original)
    assert re.fullmatch(r"func_[0-9a-f]{16}", created.key) and module.name == f"map_{created.key}"
    for q in (wp.vec2(0.0, 0.0), wp.vec2(1.0, 0.0)):
        assert created(q, wp.vec2()) == original(q, wp.vec2())
    assert wp.utils.create_warp_function(_two_line_lambda())[0].key == created.key  # by its text
    factor = 3.0
    triple, _ = wp.utils.create_warp_function(lambda x: x * factor)  # closures are seen

    @wp.kernel
    def use(out: wp.array(dtype=float)):
        out[0] = triple(2.0)

    out = wp.zeros(1)
    wp.launch(use, 1, inputs=[out])
    assert out.numpy()[0] == 6.0

    def add(a, b):
        return a + b
    added, _ = wp.utils.create_warp_function(add)
    assert added(1.0, 2.5) == 3.5


@wp.kernel
def square_module_default(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    y[0] = x[0] * x[0]


@wp.kernel(enable_backward=True)
def square_own_backward(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    y[0] = x[0] * x[0]


def test_enable_backward_module_option(capsys):
    """A module's `enable_backward=False` leaves its kernels without adjoints: a Tape that
    needs one warns, naming the kernel and the module option, and the kernel contributes no
    gradient (Warp's behaviour). A kernel's own option wins over its module's."""
    wp.set_module_options({"enable_backward": False})
    try:
        x = wp.array([3.0], dtype=float, requires_grad=True)
        y = wp.zeros(1, requires_grad=True)
        with wp.Tape() as tape:
            wp.launch(square_module_default, 1, inputs=[x, y])
        tape.backward(grads={y: wp.ones(1)})
        assert ("kernel square_module_default is defined in a module with the option 'enable_backward=False' "
                "set") in capsys.readouterr().err
        assert x.grad.numpy()[0] == 0.0
        with wp.Tape() as tape:
            wp.launch(square_own_backward, 1, inputs=[x, y])
        tape.backward(grads={y: wp.ones(1)})
        assert x.grad.numpy()[0] == 6.0
    finally:
        wp.set_module_options({"enable_backward": True})


def test_quat_between_vectors_turns_one_direction_onto_the_other():
    rng = np.random.default_rng(3)
    for _ in range(5):
        a, b = rng.normal(size=3), rng.normal(size=3)
        q = wp.quat_between_vectors(wp.vec3(*a), wp.vec3(*b))
        assert isinstance(q, wp.quat)
        np.testing.assert_allclose(np.linalg.norm(np.array(q)), 1.0, rtol=1e-6)
        turned = np.array(wp.quat_rotate(q, wp.normalize(wp.vec3(*a))))
        np.testing.assert_allclose(turned, b / np.linalg.norm(b), atol=1e-6)
    q = wp.quat_between_vectors(wp.vec3(1.0, 0.0, 0.0), wp.vec3(2.0, 0.0, 0.0))  # same direction
    np.testing.assert_allclose(np.array(q), [0.0, 0.0, 0.0, 1.0])


@wp.kernel
def _between(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.quat)):
    i = wp.tid()
    out[i] = wp.quat_between_vectors(a[i], b[i])  # (a func in Warp: kernels call it)


def test_quat_between_vectors_in_a_kernel_matches_python_scope():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(8, 3)), rng.normal(size=(8, 3))
    out = wp.zeros(8, dtype=wp.quat)
    wp.launch(_between, 8, inputs=[wp.array(a, dtype=wp.vec3), wp.array(b, dtype=wp.vec3), out])
    for k in range(8):
        np.testing.assert_allclose(out.numpy()[k], np.array(wp.quat_between_vectors(wp.vec3(*a[k]), wp.vec3(*b[k]))),
                                   rtol=1e-6, atol=1e-7)


def test_timing_print_of_no_results_says_so(capsys):
    wp.timing_print([])  # (CPU launches give no timing results: a CPU Warp prints this)
    assert capsys.readouterr().out == "No activity\n"
