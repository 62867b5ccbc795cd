"""select/where, tid in 1 to 4 dimensions, len and shape, printf."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def choose(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec2), out: wp.array(dtype=float, ndim=2),
           vout: wp.array(dtype=wp.vec2, ndim=2)):
    i = wp.tid()
    c = x[i] > 0.0
    out[i, 0] = wp.select(c, -1.0, 1.0)  # Warp's order: the value if false comes first
    out[i, 1] = wp.where(c, -1.0, 1.0)   # where: the value if true comes first
    out[i, 2] = wp.where(x[i], 5.0, 6.0)  # a number as the condition: x != 0
    out[i, 3] = float(wp.select(i % 2 == 0, 10, 20))
    vout[i, 0] = wp.select(c, v[i], -v[i])
    vout[i, 1] = wp.where(c, v[i], wp.vec2(0.0, 0.0))


def test_select_and_where(run):
    x = np.array([1.5, -2.0, 0.0, 3.0], np.float32)
    v = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.float32)
    *_, out, vout = run(choose, 4, x, (v, wp.vec2), np.zeros((4, 4), np.float32),
                        (np.zeros((4, 2, 2), np.float32), wp.vec2))
    c = x > 0
    np.testing.assert_array_equal(out[:, 0], np.where(c, 1.0, -1.0))
    np.testing.assert_array_equal(out[:, 1], np.where(c, -1.0, 1.0))
    np.testing.assert_array_equal(out[:, 2], np.where(x != 0, 5.0, 6.0))
    np.testing.assert_array_equal(out[:, 3], [20, 10, 20, 10])
    np.testing.assert_array_equal(vout[:, 0], np.where(c[:, None], -v, v))
    np.testing.assert_array_equal(vout[:, 1], np.where(c[:, None], v, 0))


@wp.kernel
def select_mismatched_types(out: wp.array(dtype=float)):
    out[0] = wp.select(out[0] > 0.0, 1.0, wp.vec2(1.0, 2.0))[0]


def test_select_with_different_types_is_an_error():
    with pytest.raises(wp.CompileError, match="select"):
        wp.launch(select_mismatched_types, 1, inputs=[wp.zeros(1)])


@wp.kernel
def tid1(out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = i * 10


@wp.kernel
def tid2(out: wp.array(dtype=int, ndim=2)):
    i, j = wp.tid()
    out[i, j] = i * 100 + j


@wp.kernel
def tid3(out: wp.array(dtype=int, ndim=3)):
    i, j, k = wp.tid()
    out[i, j, k] = i * 100 + j * 10 + k


@wp.kernel
def tid4(out: wp.array(dtype=int, ndim=4)):
    i, j, k, m = wp.tid()
    out[i, j, k, m] = i * 1000 + j * 100 + k * 10 + m


@pytest.mark.parametrize("kernel,shape,weights", [
    (tid1, (7,), [10]), (tid2, (3, 5), [100, 1]), (tid3, (2, 3, 4), [100, 10, 1]),
    (tid4, (2, 2, 3, 2), [1000, 100, 10, 1])], ids=["1d", "2d", "3d", "4d"])
def test_tid_in_each_dimension(run, kernel, shape, weights):
    (out,) = run(kernel, shape, np.full(shape, -1, np.int32))
    expect = sum(idx * w for idx, w in zip(np.indices(shape), weights))
    np.testing.assert_array_equal(out, expect)


def test_tid_in_a_large_2d_launch(run):
    (out,) = run(tid2, (300, 400), np.full((300, 400), -1, np.int32))
    i, j = np.indices((300, 400))
    np.testing.assert_array_equal(out, i * 100 + j)


@wp.kernel
def count_tid(counts: wp.array(dtype=int)):
    i = wp.tid()
    wp.atomic_add(counts, i, 1)


@wp.kernel
def count_tid2(counts: wp.array2d(dtype=int)):
    i, j = wp.tid()
    wp.atomic_add(counts, i, j, 1)


def test_tid_reads_the_leading_launch_indices():
    """As Warp 1.19 documents `tid()`: where it unpacks fewer indices than the launch has
    dimensions, it gives the leading ones; the others enumerate threads that share them."""
    counts = wp.zeros(3, dtype=int)
    wp.launch(count_tid, (3, 4), inputs=[counts])
    np.testing.assert_array_equal(counts.numpy(), [4, 4, 4])
    counts2 = wp.zeros((2, 3), dtype=int)
    wp.launch(count_tid2, (2, 3, 5), inputs=[counts2])
    np.testing.assert_array_equal(counts2.numpy(), np.full((2, 3), 5))
    wp.launch(count_tid, 3, inputs=[counts])  # the 1-D launch is the linear index again
    np.testing.assert_array_equal(counts.numpy(), [5, 5, 5])


@wp.kernel
def scale_rows(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 3.0 * x[i] * x[i]  # every thread of row i writes the same value


@wp.kernel
def add_rows(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(y, i, x[i] * x[i])


def test_adjoint_of_threads_sharing_a_leading_index():
    """The threads of one leading index all read x[i]: their adjoints add up (not one
    thread's overwriting the others'), analytic d/dx of sum_j x^2 over 4 threads."""
    x = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(add_rows, (3, 4), inputs=[x, y])
    tape.backward(grads={y: wp.ones(3, dtype=float)})
    np.testing.assert_allclose(y.numpy(), 4 * np.array([1.0, 4.0, 9.0]))
    np.testing.assert_allclose(x.grad.numpy(), 4 * 2 * np.array([1.0, 2.0, 3.0]))
    y2 = wp.zeros(3, dtype=float)
    wp.launch(scale_rows, (3, 2), inputs=[x, y2])
    np.testing.assert_allclose(y2.numpy(), 3 * np.array([1.0, 4.0, 9.0]))


@wp.kernel
def sizes(a: wp.array(dtype=float, ndim=2), b: wp.array(dtype=float), out: wp.array(dtype=int)):
    out[0] = a.shape[0]
    out[1] = a.shape[1]
    out[2] = len(b)
    out[3] = len(wp.vec4())
    out[4] = wp.len(wp.mat33()) + a.ndim
    out[5] = b.shape[0] * 2


def test_len_and_shape(run):
    *_, out = run(sizes, 1, np.zeros((3, 5), np.float32), np.zeros(7, np.float32),
                  np.zeros(6, np.int32))
    assert out.tolist() == [3, 5, 7, 4, 5, 14]


@wp.kernel
def c_printf(x: float, k: int):
    wp.printf("k=%d x=%.3f\n", k, x)


def test_printf(capfd):
    wp.launch(c_printf, 1, inputs=[2.5, 7])
    assert capfd.readouterr().out == "k=7 x=2.500\n"


@wp.kernel
def c_printf_strings(x: float, k: int):
    wp.printf("%s: k=%d x=%.1f %s%%\n", "tag", k, x, "50%")


def test_printf_string_arguments_are_printed_as_given(capfd):
    wp.launch(c_printf_strings, 1, inputs=[2.5, 7])
    assert capfd.readouterr().out == "tag: k=7 x=2.5 50%%\n"


@wp.kernel
def c_printf_widths_and_bools(flags: wp.array(dtype=bool)):
    wp.printf("|%3s|%8s|%-6s|%.2s|\n", "i", "x", "y", "abcdef")
    wp.printf("%d %d %d\n", True, flags[0], flags[0] and False)


def test_printf_formats_strings_and_bools_as_c_does(capfd):
    """A string argument takes its %s's width, precision and `-` flag; a bool is the int C
    promotes it to (it was a pointer, printed as a garbage number)."""
    wp.launch(c_printf_widths_and_bools, 1, inputs=[wp.array([True], dtype=bool)])
    assert capfd.readouterr().out == "|  i|       x|y     |ab|\n1 1 0\n"


@wp.func
def pair_of(x: float):
    return x * 2.0, 2.5


@wp.kernel
def print_shapes_and_tuples(a: wp.array2d(dtype=float), b: wp.array(dtype=float)):
    print(a.shape)
    print(b.shape)
    print(pair_of(3.0))
    print((wp.vec2(1.0, 2.0), 7))


def test_print_of_shapes_and_tuples_is_warps(capfd):
    """A shape prints as Warp's four extents; a tuple prints its elements one per line."""
    wp.launch(print_shapes_and_tuples, 1, inputs=[wp.zeros((4, 3)), wp.zeros(5)])
    assert capfd.readouterr().out == "(4, 3, 0, 0)\n(5, 0, 0, 0)\n6\n2.5\n1 2 \n7\n"


def test_printf_takes_at_most_32_values(capfd):
    fmt = " ".join(["%d"] * 33)
    source = f"def many():\n    wp.printf({fmt!r}, {', '.join(map(str, range(33)))})\n"
    scope = {"wp": wp}
    exec(compile(source, "<many>", "exec"), scope)  # noqa: S102 - a 33-value call, written out
    kernel = wp.Kernel(scope["many"], source=source)
    with pytest.raises(RuntimeError, match=r"the maximum number of variadic arguments .* is 32"):
        wp.launch(kernel, 1)


@wp.kernel
def empty_launch(out: wp.array(dtype=int)):
    out[wp.tid()] = 1


def test_zero_threads_run_nothing(run):
    (out,) = run(empty_launch, 0, np.zeros(2, np.int32))
    assert out.tolist() == [0, 0]


@wp.struct
class Printed:
    x: float


@wp.kernel
def print_one(v: wp.vec3, m: wp.mat22, q: wp.quat, t: wp.transform, s: Printed, a: wp.array(dtype=float)):
    print(v)
    print(m)
    print(q)
    print(t)
    print(s)
    print(a)


def test_print_of_one_composite_is_warps_format(capfd):
    wp.launch(print_one, 1, inputs=[wp.vec3(1.0, 2.5, 3.0), wp.mat22(1.0, 2.0, 3.0, 4.0), wp.quat(0.0, 0.0, 0.0, 1.0),
                                    wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat(0.0, 0.0, 0.0, 1.0)), Printed(),
                                    wp.zeros(2)])
    assert capfd.readouterr().out == ("1 2.5 3 \n"
                                      "1 2 \n3 4 \n"
                                      "0 0 0 1\n"
                                      "(1 2 3) (0 0 0 1)\n"
                                      "<type without print implementation>\n"
                                      "<type without print implementation>\n")


@wp.kernel
def print_wide(v: wp.vec3d, m: wp.mat22d, k: wp.vec3i):
    print(v)
    print(m)
    print(k)


def test_composites_print_their_components_as_float32_as_warps_do(capfd):
    """Warp prints each component as printf("%g ", float(c)): a float64 past float32's range
    prints inf, an integer vector's large components in %g's exponent form."""
    wp.launch(print_wide, 1, inputs=[wp.vec3d(1e300, 1e-320, -0.25), wp.mat22d(1e40, 2.0, 3.0, 4.0),
                                      wp.vec3i(1, -2, 30000000)])
    assert capfd.readouterr().out == "inf 0 -0.25 \ninf 2 \n3 4 \n1 -2 3e+07 \n"


@wp.kernel
def prints_then_uses(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec2), m: wp.array(dtype=wp.mat22),
                     out: wp.array(dtype=float)):
    y = x[0] * 2.0
    print(y)
    a = v[0]
    print(a)
    b = m[0]
    print(b)
    print(7)
    out[0] = y * 3.0 + a[1] * 5.0 + b[1, 0] * 7.0


def test_the_adjoint_pass_prints_again_and_prints_adjoints(capfd):
    """As Warp's: the backward kernel replays the forward prints, then each print(x) prints
    "adj: " and x's adjoint at that point (what the code after it added)."""
    x = wp.array([1.5], dtype=float, requires_grad=True)
    v = wp.array([wp.vec2(1.0, 2.0)], dtype=wp.vec2, requires_grad=True)
    m = wp.array([wp.mat22(1.0, 2.0, 3.0, 4.0)], dtype=wp.mat22, requires_grad=True)
    out = wp.zeros(1, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(prints_then_uses, 1, inputs=[x, v, m, out])
    forward = "3\n1 2 \n1 2 \n3 4 \n7\n"
    assert capfd.readouterr().out == forward
    tape.backward(grads={out: wp.ones(1)})
    assert capfd.readouterr().out == forward + "adj: 0\nadj: 0 0\n     7 0\nadj: 0 5\nadj: 3\n"
    assert x.grad.numpy()[0] == 6.0


@wp.kernel
def _smoothstep_each(e0: wp.array(dtype=float), e1: wp.array(dtype=float), x: wp.array(dtype=float),
                     out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.smoothstep(e0[i], e1[i], x[i])


def test_smoothstep_with_equal_edges_is_a_step_with_zero_gradient():
    e0 = wp.array([0.5, 0.5, 0.0], dtype=float, requires_grad=True)
    e1 = wp.array([0.5, 0.5, 1.0], dtype=float, requires_grad=True)
    x = wp.array([0.2, 0.9, 0.25], dtype=float, requires_grad=True)
    out = wp.zeros(3, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_smoothstep_each, 3, [e0, e1, x, out])
    tape.backward(grads={out: wp.ones(3, dtype=float)})
    np.testing.assert_allclose(out.numpy(), [0.0, 1.0, 0.15625])
    # d/dx of 3t^2 - 2t^3 at t = 0.25 is 6 t (1 - t) = 1.125; equal edges: zero, not NaN
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.0, 1.125])
    np.testing.assert_allclose(e0.grad.numpy(), [0.0, 0.0, -1.125 * 0.75])
    np.testing.assert_allclose(e1.grad.numpy(), [0.0, 0.0, -1.125 * 0.25])
