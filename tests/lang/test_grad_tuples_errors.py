"""weft.grad in forward code, tuple returns, Python's loop-variable rule, Warp's error names."""

import numpy as np
import pytest

import weft as wp


@wp.func
def cube(x: float):
    return x * x * x


@wp.func
def weighted(x: float, w: float):
    return w * wp.sin(x)


@wp.kernel(enable_backward=False)
def gradients(x: wp.array(dtype=float), out: wp.array2d(dtype=float)):
    i = wp.tid()
    g = wp.grad(cube)
    out[i, 0] = g(x[i])
    dx, dw = wp.grad(weighted)(x[i], 2.0)
    out[i, 1] = dx
    out[i, 2] = dw
    dy, dxx = wp.grad(wp.atan2)(1.0, x[i])
    out[i, 3] = dy
    out[i, 4] = dxx


def test_grad_of_funcs_and_builtins():
    xs = np.array([0.5, 1.0, 2.0], dtype=np.float32)
    out = wp.zeros((3, 5))
    wp.launch(gradients, dim=3, inputs=[wp.array(xs), out])
    expected = np.stack([3 * xs**2, 2 * np.cos(xs), np.sin(xs), xs / (xs**2 + 1), -1 / (xs**2 + 1)], axis=1)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5)


@wp.func
def swap(a: int, b: float) -> tuple[float, int]:
    return b, a


@wp.func
def three(x: float) -> tuple[float, float, float]:
    return x, x, x


@wp.kernel
def uses_tuples(out: wp.array(dtype=float)):
    f, i = swap(3, 0.5)
    a, b, c = three(f)
    out[0] = f + float(i) + a + b + c


def test_tuple_annotations():
    out = wp.zeros(1)
    wp.launch(uses_tuples, dim=1, inputs=[out])
    assert out.numpy()[0] == 5.0


def test_return_annotation_mismatches():
    @wp.func
    def wrong_count(x: int) -> tuple[int, int, int]:
        return x, x

    @wp.func
    def wrong_type(x: wp.int32) -> wp.int16:
        return wp.int8(x)

    @wp.kernel
    def k1():
        a, b, c = wrong_count(1)

    @wp.kernel
    def k2():
        a = wrong_type(1)  # noqa: F841

    with pytest.raises(wp.WarpCodegenError, match="annotated as a tuple of 3 elements but the code returns 2"):
        wp.launch(k1, dim=1)
    with pytest.raises(wp.WarpCodegenTypeError, match="annotated as `int16` but the code returns a value of "
                                                      "type `int8`"):
        wp.launch(k2, dim=1)


@wp.kernel
def loop_variables(n: int, out: wp.array(dtype=int)):
    for i in range(3):  # noqa: B007
        pass
    out[0] = i
    for j in range(n):
        if j == 4:
            break
    out[1] = j
    k = 7
    for k in range(n, 0, -1):  # noqa: B007
        pass
    out[2] = k


def test_loop_variable_keeps_its_last_value():
    out = wp.zeros(3, dtype=int)
    wp.launch(loop_variables, dim=1, inputs=[10, out])
    np.testing.assert_array_equal(out.numpy(), [2, 4, 1])
    wp.launch(loop_variables, dim=1, inputs=[2, out])
    np.testing.assert_array_equal(out.numpy(), [2, 1, 1])
    wp.launch(loop_variables, dim=1, inputs=[0, out])  # empty loops: the value before (or start)
    np.testing.assert_array_equal(out.numpy(), [2, 0, 7])


def test_compile_errors_are_warp_codegen_errors():
    assert issubclass(wp.WarpCodegenTypeError, wp.WarpCodegenError)
    assert issubclass(wp.WarpCodegenKeyError, KeyError) and issubclass(wp.WarpCodegenError, RuntimeError)

    @wp.kernel
    def missing_function():
        wp.no_such_builtin(1.0)

    @wp.kernel
    def missing_symbol():
        x = no_such_symbol  # noqa: F821, F841

    @wp.kernel
    def rebinds_function():
        f = cube
        f = 1.0  # noqa: F841

    with pytest.raises(AttributeError, match="Could not find function wp.no_such_builtin"):
        wp.launch(missing_function, dim=1)
    with pytest.raises(KeyError, match="Referencing undefined symbol: no_such_symbol") as info:
        wp.launch(missing_symbol, dim=1)
    assert str(info.value).startswith(__file__)  # the message itself, not its repr
    with pytest.raises(wp.WarpCodegenError, match="rebinding function-valued local 'f' to a non-function"):
        wp.launch(rebinds_function, dim=1)


def test_expect_builtins_print_failures_only(capfd):
    @wp.kernel
    def checks(x: float):
        wp.expect_eq(x, 2.0)
        wp.expect_neq(wp.vec2(x, 1.0), wp.vec2(0.0, 1.0))
        wp.expect_near(x, 2.05, tolerance=0.1)
        wp.expect_eq(wp.pow(y=3.0, x=x), 8.0)

    wp.launch(checks, dim=1, inputs=[2.0])
    assert capfd.readouterr().out == ""
    wp.launch(checks, dim=1, inputs=[1.0])
    out = capfd.readouterr().out
    assert "Error, expect_eq() failed:\n\t Expected: 2\n\t Actual: 1\n" in out
    assert "Error, expect_near() failed with tolerance 0.1\n" in out


GLOBAL_ARRAY = wp.zeros(3)


def test_global_arrays_are_refused():
    @wp.kernel
    def reads_global(out: wp.array(dtype=float)):
        out[0] = GLOBAL_ARRAY[0]

    with pytest.raises(TypeError, match=r"'GLOBAL_ARRAY' is an array from outside the kernel; pass it as a "
                                        r"parameter: Invalid external reference type: <class '[\w.]+'>$"):
        wp.launch(reads_global, dim=1, inputs=[wp.zeros(1)])


@wp.func
def counted_index(counter: wp.array(dtype=int), i: int) -> int:
    wp.atomic_add(counter, 0, 1)
    return i


@wp.struct
class Slot:
    value: float


@wp.kernel
def augmented_slots(counter: wp.array(dtype=int), data: wp.array(dtype=Slot), rows: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    data[counted_index(counter, i)].value += 5.0
    rows[counted_index(counter, i)][1] += wp.vec2(float(counter[0]), 0.0)  # index first, then the value


def test_augmented_assignment_evaluates_its_target_once():
    counter, data, rows = wp.zeros(1, dtype=int), wp.zeros(1, dtype=Slot), wp.zeros(1, dtype=wp.mat22)
    wp.launch(augmented_slots, dim=1, inputs=[counter, data, rows])
    assert counter.numpy()[0] == 2
    assert data.numpy()[0][0] == 5.0
    np.testing.assert_array_equal(rows.numpy()[0], [[0.0, 0.0], [2.0, 0.0]])
