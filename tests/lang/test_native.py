"""`@wp.func_native` C++ snippets (weft/lang/native.py): forward, adjoint and replay
snippets, `wp.ref[T]` parameters, `wp.address_of`, and the errors around them."""

import shutil

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import CompileError

pytestmark = pytest.mark.skipif(not any(shutil.which(c) for c in ("c++", "g++", "clang++")),
                                reason="no C++ compiler: weft compiles snippets with the system's")


# A scalar snippet with its adjoint, against the analytic gradient and central differences ------
@wp.func_native("return sin(a) * b;", adj_snippet="adj_a += cos(a) * b * adj_ret;\nadj_b += sin(a) * adj_ret;")
def sin_times(a: wp.float64, b: wp.float64) -> wp.float64: ...


@wp.kernel
def sin_times_kernel(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = sin_times(a[i], b[i]) * a[i]


def _loss(a, b):
    out = wp.zeros(len(a), dtype=wp.float64)
    wp.launch(sin_times_kernel, len(a), [wp.array(a, dtype=wp.float64), wp.array(b, dtype=wp.float64), out])
    return out.numpy().sum()


def test_scalar_snippet_gradient_matches_analytic_and_finite_differences():
    a0, b0 = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.7, -0.4])
    a = wp.array(a0, dtype=wp.float64, requires_grad=True)
    b = wp.array(b0, dtype=wp.float64, requires_grad=True)
    out = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(sin_times_kernel, 3, [a, b, out])
    np.testing.assert_allclose(out.numpy(), np.sin(a0) * b0 * a0, rtol=1e-14)
    tape.backward(grads={out: wp.ones(3, dtype=wp.float64)})
    # out = sin(a) b a: d/da = cos(a) b a + sin(a) b, d/db = sin(a) a
    np.testing.assert_allclose(a.grad.numpy(), np.cos(a0) * b0 * a0 + np.sin(a0) * b0, rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), np.sin(a0) * a0, rtol=1e-12)
    h = 1e-6
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        fd_a = (_loss(a0 + e, b0) - _loss(a0 - e, b0)) / (2 * h)
        fd_b = (_loss(a0, b0 + e) - _loss(a0, b0 - e)) / (2 * h)
        assert a.grad.numpy()[k] == pytest.approx(fd_a, rel=1e-7)
        assert b.grad.numpy()[k] == pytest.approx(fd_b, rel=1e-7)


def test_snippet_called_from_python_scope():
    assert sin_times(wp.float64(0.5), wp.float64(2.0)) == pytest.approx(np.sin(0.5) * 2.0, rel=1e-15)


# Arrays: the snippet indexes them; its adjoint gets their adjoint arrays --------------------------
@wp.func_native("out[tid] = a * x[tid] + y[tid];",
                "adj_a += x[tid] * adj_out[tid];\nadj_x[tid] += a * adj_out[tid];\nadj_y[tid] += adj_out[tid];")
def saxpy(a: wp.float32, x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32),
          out: wp.array(dtype=wp.float32), tid: int): ...


@wp.kernel
def saxpy_kernel(a: wp.array(dtype=wp.float32), x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32),
                 out: wp.array(dtype=wp.float32)):
    tid = wp.tid()
    saxpy(a[0], x, y, out, tid)


def test_array_snippet_and_its_adjoint_arrays():
    n = 100
    x0 = np.linspace(-1, 1, n).astype(np.float32)
    a = wp.array([3.0], dtype=wp.float32, requires_grad=True)
    x = wp.array(x0, requires_grad=True)
    y = wp.array(np.ones(n, dtype=np.float32), requires_grad=True)
    out = wp.zeros(n, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(saxpy_kernel, n, [a, x, y, out])
    np.testing.assert_allclose(out.numpy(), 3.0 * x0 + 1.0, rtol=1e-6)
    tape.backward(grads={out: wp.ones(n, dtype=wp.float32)})
    np.testing.assert_allclose(x.grad.numpy(), np.full(n, 3.0))
    np.testing.assert_allclose(y.grad.numpy(), np.ones(n))
    assert a.grad.numpy()[0] == pytest.approx(x0.sum(), abs=1e-4)


# wp.ref[T] parameters: the caller's variable, array element or field is updated ------------------
@wp.func_native("x = y * 2.0f;", adj_snippet="adj_y += 2.0f * adj_x;\nadj_x = 0.0f;")
def store_double(x: wp.ref[wp.float32], y: wp.float32): ...


@wp.func_native("x = x + 5;")
def add_five(x: wp.ref[wp.int32]): ...


@wp.kernel
def ref_kernel(x: wp.array(dtype=float), out: wp.array(dtype=float), ints: wp.array(dtype=wp.int32)):
    i = wp.tid()
    tmp = wp.float32(0.0)
    store_double(tmp, x[i])
    out[i] = tmp * tmp
    k = wp.int32(10)
    add_five(k)
    add_five(ints[i])
    ints[i] += k


def test_ref_parameters_update_the_callers_storage_and_differentiate():
    x0 = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    x = wp.array(x0, requires_grad=True)
    out = wp.zeros(3, dtype=float, requires_grad=True)
    ints = wp.array([1, 2, 3], dtype=wp.int32)
    tape = wp.Tape()
    with tape:
        wp.launch(ref_kernel, 3, [x, out, ints])
    np.testing.assert_allclose(out.numpy(), (2 * x0) ** 2)
    np.testing.assert_array_equal(ints.numpy(), [1 + 5 + 15, 2 + 5 + 15, 3 + 5 + 15])
    tape.backward(grads={out: wp.ones(3, dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), 8 * x0)  # d (2x)^2 / dx


# wp.address_of: the snippet writes through the address ---------------------------------------
@wp.func_native("*(int32_t*)ptr = 42;")
def set_42(ptr: wp.uint64): ...


@wp.func_native("*(float*)ptr += 1.0f;")
def increment(ptr: wp.uint64): ...


@wp.kernel(enable_backward=False)
def address_kernel(arr: wp.array(dtype=float), result: wp.array(dtype=wp.int32), vs: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    increment(wp.address_of(arr[i]))
    v = wp.vec3(1.0, 2.0, 3.0)
    increment(wp.address_of(v.y))
    vs[i] = v
    val = wp.int32(0)
    set_42(wp.address_of(val))
    result[i] = val


def test_address_of_locals_elements_and_components():
    arr = wp.array([1.0, 2.0], dtype=float)
    result = wp.zeros(2, dtype=wp.int32)
    vs = wp.zeros(2, dtype=wp.vec3)
    wp.launch(address_kernel, 2, [arr, result, vs])
    np.testing.assert_allclose(arr.numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(result.numpy(), [42, 42])
    np.testing.assert_allclose(vs.numpy(), [[1.0, 3.0, 3.0]] * 2)


# Composite values: vectors, matrices and structs in and out -----------------------------------
@wp.struct
class Scale:
    factor: float
    offset: wp.vec3


@wp.func_native("return wp::vec_t<3, wp::float32>(x, 2.0f * x, 3.0f * x);")
def spread(x: float) -> wp.vec3: ...


@wp.func_native("return m * (v * s.factor) + s.offset;")
def affine(m: wp.mat33, v: wp.vec3, s: Scale) -> wp.vec3: ...


@wp.func_native("return wp::mat_t<2, 2, wp::float32>(x, 0.0f, 0.0f, 2.0f * x);")
def diag(x: float) -> wp.mat22: ...


@wp.kernel
def composite_kernel(s: Scale, out: wp.array(dtype=wp.vec3), mats: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    m = wp.mat33(1.0, 2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    out[i] = affine(m, spread(float(i)), s)
    mats[i] = diag(float(i))


def test_vectors_matrices_and_structs():
    s = Scale()
    s.factor = 2.0
    s.offset = wp.vec3(0.5, 0.0, -1.0)
    out = wp.zeros(3, dtype=wp.vec3)
    mats = wp.zeros(3, dtype=wp.mat22)
    wp.launch(composite_kernel, 3, [s, out, mats])
    m = np.array([[1, 2, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float32)
    want = [m @ (np.array([i, 2 * i, 3 * i], dtype=np.float32) * 2) + [0.5, 0, -1] for i in range(3)]
    np.testing.assert_allclose(out.numpy(), want)
    np.testing.assert_allclose(mats.numpy(), [[[i, 0], [0, 2 * i]] for i in range(3)])


# A replay snippet: what the adjoint kernel runs instead of the forward snippet ---------------------
@wp.func_native("int old = atomic_add(&counter[0], 1);\nout[old] = x[tid] * x[tid];",
                adj_snippet="adj_x[tid] += 2.0f * x[tid] * adj_out[tid];",
                replay_snippet="")
def counted_square(counter: wp.array(dtype=int), x: wp.array(dtype=float), out: wp.array(dtype=float),
                   tid: int): ...


@wp.kernel
def counted_kernel(counter: wp.array(dtype=int), x: wp.array(dtype=float), out: wp.array(dtype=float)):
    tid = wp.tid()
    counted_square(counter, x, out, tid)


def test_replay_snippet_runs_in_the_adjoint_instead_of_the_snippet():
    counter = wp.zeros(1, dtype=int)
    x = wp.array([1.0], dtype=float, requires_grad=True)
    out = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(counted_kernel, 1, [counter, x, out])
    tape.backward(grads={out: wp.ones(1, dtype=float)})
    assert counter.numpy()[0] == 1  # the adjoint did not count again
    assert out.numpy()[0] == 1.0 and x.grad.numpy()[0] == 2.0


# Errors ---------------------------------------------------------------------------------------
@wp.func_native("this is not C++ ;;;")
def broken(a: float) -> float: ...


@wp.func_native("return a * 3.0f;")
def no_adjoint(a: float) -> float: ...


def test_a_snippet_that_does_not_compile_names_the_func_and_the_error():
    @wp.kernel
    def uses_broken(x: wp.array(dtype=float)):
        x[0] = broken(x[0])

    with pytest.raises(CompileError, match="func_native broken: the C\\+\\+ snippet does not compile") as info:
        wp.launch(uses_broken, 1, [wp.zeros(1)])
    assert "error" in str(info.value) and "test_native.py" in str(info.value)


def test_a_gradient_through_a_snippet_without_adjoint_is_an_error():
    @wp.kernel
    def uses_no_adjoint(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        y[0] = no_adjoint(x[0])

    x = wp.array([1.0], dtype=float, requires_grad=True)
    y = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(uses_no_adjoint, 1, [x, y])
    assert y.numpy()[0] == 3.0
    with pytest.raises(CompileError, match="no_adjoint.*no derivative rule"):
        tape.backward(grads={y: wp.ones(1, dtype=float)})


def test_address_of_outside_a_snippet_call_and_of_constants():
    @wp.kernel(enable_backward=False)
    def stores_an_address(result: wp.array(dtype=wp.uint64)):
        x = wp.int32(1)
        result[0] = wp.address_of(x)

    with pytest.raises(CompileError, match="argument of a C\\+\\+ snippet"):
        wp.launch(stores_an_address, 1, [wp.zeros(1, dtype=wp.uint64)])

    @wp.kernel(enable_backward=False)
    def address_of_constant(result: wp.array(dtype=wp.int32)):
        x = 0
        set_42(wp.address_of(x))

    with pytest.raises(CompileError, match=r"x = wp\.int32\(0\)"):
        wp.launch(address_of_constant, 1, [wp.zeros(1, dtype=wp.int32)])
    with pytest.raises(RuntimeError, match="inside a @wp.kernel"):
        wp.address_of(1)


def test_a_struct_result_is_refused():
    @wp.func_native("return {};")
    def make_scale(a: float) -> Scale: ...

    @wp.kernel
    def uses_make_scale(out: wp.array(dtype=float)):
        out[0] = make_scale(1.0).factor

    with pytest.raises(CompileError, match="returns .*a snippet returns a scalar, vector or matrix"):
        wp.launch(uses_make_scale, 1, [wp.zeros(1)])


def test_module_build_options_reach_the_snippets_compiler(tmp_path):
    """`extra_cpu_include_dirs` and `extra_cpu_preamble` of the func's module are used."""
    (tmp_path / "scale_by.h").write_text("inline float scale_by_three(float x) { return 3.0f * x; }\n")
    source = tmp_path / "snippet_module.py"
    source.write_text(
        "import weft as wp\n"
        "wp.set_module_options({'extra_build_options': wp.ModuleBuildOptions(\n"
        f"    extra_cpu_include_dirs=[{str(tmp_path)!r}],\n"
        "    extra_cpu_preamble='#include \"scale_by.h\"\\ninline float plus_one(float x) { return x + 1.0f; }')})\n"
        "@wp.func_native('return plus_one(::scale_by_three(x));')\n"
        "def scaled(x: float) -> float: ...\n"
        "@wp.kernel\n"
        "def scaled_kernel(x: wp.array(dtype=float)):\n"
        "    i = wp.tid()\n"
        "    x[i] = scaled(x[i])\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("snippet_module", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = wp.array([1.0, 2.0], dtype=float)
    wp.launch(module.scaled_kernel, 2, [x])
    np.testing.assert_allclose(x.numpy(), [4.0, 7.0])


def test_same_named_snippets_of_two_modules_keep_their_own_code(tmp_path):
    """Native libraries share one symbol namespace: two modules' funcs `f` calling their own
    preamble's `helper` must each run their own (the symbols name the module)."""
    import importlib.util
    kernels = []
    for name, step in (("weft_native_twin_a", 1.0), ("weft_native_twin_b", 100.0)):
        source = tmp_path / f"{name}.py"
        source.write_text(
            "import weft as wp\n"
            "wp.set_module_options({'extra_build_options': wp.ModuleBuildOptions(\n"
            f"    extra_cpu_preamble='inline float helper(float x) {{ return x + {step}f; }}')}})\n"
            "@wp.func_native('return helper(x);')\n"
            "def f(x: float) -> float: ...\n"
            "@wp.kernel\n"
            "def k(x: wp.array(dtype=float)):\n"
            "    x[0] = f(x[0])\n")
        spec = importlib.util.spec_from_file_location(name, source)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kernels.append(module.k)
    results = []
    for k in kernels:
        x = wp.zeros(1)
        wp.launch(k, 1, [x])
        results.append(float(x.numpy()[0]))
    assert results == [1.0, 100.0]


@wp.func_native(snippet="WP_TILE_SYNC();\nreturn WP_TILE_THREAD_IDX;")
def _block_barrier() -> int: ...


@wp.kernel
def _barrier_between_stores(x: wp.array(dtype=int)):
    i = wp.tid()
    x[i] = 1
    x[i] += _block_barrier() + 1  # mujoco_warp's `WP_TILE_SYNC();` snippet between phases


def test_warps_tile_barrier_macros_in_a_snippet():
    x = wp.zeros(3, dtype=int)
    wp.launch_tiled(_barrier_between_stores, 3, [x], block_dim=1)
    np.testing.assert_array_equal(x.numpy(), [2, 2, 2])
