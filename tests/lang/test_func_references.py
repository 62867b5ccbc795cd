"""Func parameters passed by reference (`wp.ref[T]`) and function-valued parameters
(`g: wp.Function`)."""

import numpy as np
import pytest

import weft as wp
from tests.autodiff.helpers import check_adjoint
from weft.types import Reference


@wp.func
def bump(x: wp.ref[wp.int32]):
    x += 1


@wp.func
def bump_twice(x: wp.ref[wp.int32]):
    bump(x)  # a reference forwarded to another reference
    bump(x)


@wp.func
def add_into(x: wp.ref[wp.float32], delta: wp.float32):
    x += delta


@wp.func
def swap(a: wp.ref[wp.float32], b: wp.ref[wp.float32]):
    a, b = b, a


@wp.func
def scale_unless(x: wp.ref[wp.float32], stop: int) -> float:
    x = x * 2.0
    if stop > 0:
        return x  # the value of x at this return is what the caller sees
    x = x + 100.0
    return -1.0


@wp.struct
class Box:
    count: wp.int32
    pos: wp.vec3


@wp.func
def bump_box(b: wp.ref[Box]):
    b.count += 1


def test_ref_annotation_type():
    r = wp.ref[wp.int32]
    assert isinstance(r, Reference) and r.dtype is wp.int32 and r.value_type is wp.int32
    assert r == wp.ref[wp.int32] and hash(r) == hash(wp.ref[wp.int32]) and r != wp.ref[wp.float32]
    assert repr(r) == "wp.ref[int32]"


def test_ref_updates_locals_elements_fields_and_components():
    @wp.kernel(enable_backward=False)
    def k(ints: wp.array[wp.int32], arr: wp.array[wp.float32], out: wp.array[wp.float32],
          vs: wp.array[wp.vec3]):
        i = wp.tid()
        n = wp.int32(0)
        bump(n)
        bump_twice(n)
        for _ in range(3):  # (a loop must carry the variable the call updates)
            bump(n)
        ints[0] = n
        b = Box()
        b.count = 5
        bump_box(b)
        ints[1] = b.count
        add_into(arr[i], 10.0)
        x = wp.float32(1.0)
        y = wp.float32(2.0)
        swap(x, y)
        out[0] = x
        out[1] = y
        e = wp.float32(3.0)
        out[2] = scale_unless(e, 1)
        out[3] = e
        f = wp.float32(3.0)
        out[4] = scale_unless(f, 0)
        out[5] = f
        v = vs[0]
        add_into(v[1], 5.0)  # a component of a local vector
        vs[2] = v
        add_into(vs[1][2], 7.0)  # a component of an array element

    ints = wp.zeros(2, dtype=wp.int32)
    arr = wp.array([1.0, 2.0, 3.0], dtype=wp.float32)
    out = wp.zeros(6, dtype=wp.float32)
    vs = wp.zeros(3, dtype=wp.vec3)
    wp.launch(k, dim=3, inputs=[ints, arr, out, vs])
    np.testing.assert_array_equal(ints.numpy(), [6, 6])
    np.testing.assert_array_equal(arr.numpy(), [11.0, 12.0, 13.0])
    np.testing.assert_array_equal(out.numpy(), [2.0, 1.0, 6.0, 6.0, -1.0, 106.0])
    np.testing.assert_array_equal(vs.numpy(), [[0, 0, 0], [0, 0, 21], [0, 5, 0]])


def test_by_value_parameter_is_a_copy():
    @wp.func
    def by_value(x: wp.int32):
        x += 1

    @wp.kernel(enable_backward=False)
    def k(out: wp.array[wp.int32]):
        n = wp.int32(10)
        by_value(n)
        out[0] = n

    out = wp.zeros(1, dtype=wp.int32)
    wp.launch(k, dim=1, inputs=[out])
    assert out.numpy()[0] == 10


@wp.func
def cube_into(y: wp.ref[wp.float64], x: wp.float64):
    y = y * x + x * x * x


@wp.kernel
def ref_in_backward(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    t = y[i]
    cube_into(t, x[i])
    cube_into(y[i], t)  # through an array element too


def test_ref_gradients_match_finite_differences():
    """Warp refuses wp.ref funcs in kernels with a backward pass; in weft the reference is
    ordinary dataflow (the callee returns the final value, the caller stores it), so the
    gradient is the one of the equivalent by-value program."""
    rng = np.random.default_rng(3)
    x, y = rng.uniform(0.5, 1.5, 4), rng.uniform(-1, 1, 4)
    grads = check_adjoint(ref_in_backward, 4, [x, y], seeds={1: np.ones(4)})
    # t = y x + x^3, then y <- y t + t^3: d/dy = t + (y + 3 t^2) x
    t = y * x + x**3
    np.testing.assert_allclose(grads[1], t + (y + 3 * t**2) * x, rtol=1e-12)


@pytest.mark.parametrize("call, message", [
    ("bump(wp.int32(5))", "a temporary"),
    ("bump(n + 1)", "a temporary"),
    ("add_into(wp.vec3(1.0, 2.0, 3.0)[0], 1.0)", "a temporary"),
    ("bump(f)", "has type float32 but int32 is expected"),
    ("swap(g, g)", "passed to two wp.ref parameters"),
])
def test_ref_argument_must_be_storage(call, message):
    source = ("def body(out: wp.array[wp.int32]):\n"
              "    n = wp.int32(0)\n"
              "    f = wp.float32(0.0)\n"
              "    g = wp.float32(0.0)\n"
              f"    {call}\n"
              "    out[0] = n\n")
    scope = {"wp": wp, "bump": bump, "add_into": add_into, "swap": swap}
    exec(compile(source, "<ref-test>", "exec"), scope)  # noqa: S102 - a kernel made from test text
    kernel = wp.Kernel(scope["body"], key=f"ref_arg_{abs(hash(call))}", source=source)
    with pytest.raises(wp.WarpCodegenError, match=message):
        wp.launch(kernel, dim=1, inputs=[wp.zeros(1, dtype=wp.int32)])


def test_ref_func_from_python_scope_is_refused():
    with pytest.raises(TypeError, match="by reference"):
        bump(wp.int32(1))


def test_ref_not_allowed_in_kernel_signature():
    with pytest.raises(TypeError, match="wp.ref"):
        @wp.kernel
        def k(x: wp.ref[wp.float32]):
            pass

        wp.launch(k, dim=1, inputs=[1.0])


def test_overloads_differing_only_in_refness_are_refused():
    src = ("@wp.func\ndef refness(x: wp.int32) -> wp.int32:\n    return x\n\n"
           "@wp.func\ndef refness(x: wp.ref[wp.int32]):\n    x += 1\n")
    with pytest.raises(RuntimeError, match="differ only"):
        exec(compile(src, "<refness>", "exec"), {"wp": wp, "__name__": "refness_test"})  # noqa: S102


@wp.func
def double_it(x: float):
    return x * 2.0


@wp.func
def triple_it(x: float):
    return x * 3.0


@wp.func
def apply(g: wp.Function, x: float):
    return g(x)


@wp.func
def apply_default(g: wp.Function = double_it, x: float = 3.0):
    return g(x)


@wp.func
def apply_bound(g: wp.Function, x: float):
    f = g
    return f(x)


def test_function_parameters():
    assert isinstance(double_it, wp.Function)

    @wp.kernel
    def k(out: wp.array[float]):
        out[0] = apply(double_it, 3.0)
        out[1] = apply(triple_it, 4.0)
        out[2] = apply_default()
        out[3] = apply(g=triple_it, x=8.0)
        out[4] = apply(wp.sin, 0.5)  # a builtin
        f = double_it
        out[5] = apply_bound(f, 5.0)

    out = wp.zeros(6, dtype=float)
    wp.launch(k, dim=1, inputs=[out])
    np.testing.assert_allclose(out.numpy(), [6.0, 12.0, 6.0, 24.0, np.sin(0.5), 10.0], rtol=1e-6)


@wp.func
def apply64(g: wp.Function, x: wp.float64):
    return g(x)


@wp.func
def square64(x: wp.float64):
    return x * x * x


@wp.kernel
def function_param_grad(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = apply64(square64, x[i]) + apply64(wp.exp, x[i])


def test_function_parameter_gradients():
    xs = np.linspace(0.1, 1.0, 5)
    grads = check_adjoint(function_param_grad, 5, [xs, np.zeros(5)], seeds={1: np.ones(5)})
    np.testing.assert_allclose(grads[0], 3 * xs**2 + np.exp(xs), rtol=1e-12)


def test_function_parameter_errors():
    @wp.kernel
    def not_a_function(out: wp.array[float]):
        out[0] = apply(1.0, 2.0)

    with pytest.raises(wp.WarpCodegenError, match="expects a function"):
        wp.launch(not_a_function, dim=1, inputs=[wp.zeros(1, dtype=float)])

    with pytest.raises(TypeError, match="wp.Function"):
        @wp.kernel
        def k(g: wp.Function):
            pass

        wp.launch(k, dim=1, inputs=[double_it])


TARGET = double_it


@wp.kernel
def apply_global_target(out: wp.array[float]):
    out[0] = apply(TARGET, 2.0)
    out[1] = apply_default()


def test_function_target_counts_in_the_module_hash():
    """hash_module() is computed afresh (as Warp's): the func a global names is part of it,
    and so is a func's default argument."""
    global TARGET
    module = apply_global_target.module
    try:
        first = module.hash_module()
        TARGET = triple_it
        assert module.hash_module() != first
        TARGET = double_it
        assert module.hash_module() == first
        apply_default.defaults["g"] = triple_it
        assert module.hash_module() != first
    finally:
        TARGET = double_it
        apply_default.defaults["g"] = double_it
