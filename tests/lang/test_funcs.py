"""@weft.func: typed and generic device functions, overloads, nesting, tuples, composites."""

import inspect
import typing

import numpy as np
import pytest

import weft as wp


@wp.func
def saxpy(a: float, x: float, y: float) -> float:
    return a * x + y


@wp.func
def twice_any(x: typing.Any):
    return x + x


@wp.func
def twice_wp_any(x: typing.Any):  # weft accepts typing.Any, as Warp does
    return x * 2


@wp.func
def twice_untyped(x):
    return x + x


@wp.kernel
def typed_and_generic(x: wp.array(dtype=float), k: wp.array(dtype=int),
                      d: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec3),
                      out: wp.array(dtype=float), kout: wp.array(dtype=int),
                      dout: wp.array(dtype=wp.float64), vout: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = saxpy(2.0, x[i], 1.0) + twice_untyped(x[i])
    kout[i] = twice_any(k[i]) + twice_wp_any(k[i]) + twice_untyped(3)
    dout[i] = twice_any(d[i]) + twice_untyped(d[i])
    vout[i] = twice_any(v[i]) + twice_wp_any(v[i])


def test_typed_and_generic_funcs(run):
    x = np.array([1.0, -0.5], np.float32)
    k = np.array([3, -4], np.int32)
    d = np.array([0.1, 1e-300], np.float64)
    v = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    *_, out, kout, dout, vout = run(
        typed_and_generic, 2, x, k, d, (v, wp.vec3), np.zeros(2, np.float32),
        np.zeros(2, np.int32), np.zeros(2, np.float64), (np.zeros((2, 3), np.float32), wp.vec3))
    np.testing.assert_array_equal(out, 2 * x + 1 + 2 * x)
    np.testing.assert_array_equal(kout, 4 * k + 6)
    np.testing.assert_array_equal(dout, 4 * d)  # computed in float64
    np.testing.assert_array_equal(vout, 4 * v)


@wp.func
def describe(x: float) -> int:
    return 1


@wp.func
def describe(x: int) -> int:  # noqa: F811 - a second overload of the same func
    return 2


@wp.func
def describe(v: wp.vec3) -> int:  # noqa: F811
    return 3


@wp.func
def describe(x: float, y: float) -> int:  # noqa: F811
    return 4


@wp.kernel
def call_overloads(out: wp.array(dtype=int)):
    out[0] = describe(1.0)
    out[1] = describe(1)
    out[2] = describe(wp.vec3(1.0, 2.0, 3.0))
    out[3] = describe(1.0, 2.0)
    out[4] = describe(float(out[0]))


def test_overloads_pick_by_argument_types(run):
    (out,) = run(call_overloads, 1, np.zeros(5, np.int32))
    assert out.tolist() == [1, 2, 3, 4, 1]


@wp.func
def square(x: float) -> float:
    return x * x


@wp.func
def sum_of_squares(x: float, y: float) -> float:
    return square(x) + square(y)


@wp.func
def hypot3(v: wp.vec3) -> float:
    return wp.sqrt(sum_of_squares(v[0], v[1]) + square(v[2]))


@wp.kernel
def nested_calls(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = hypot3(v[i])


def test_nested_funcs(run):
    v = np.array([[3, 4, 12], [1, 2, 2]], np.float32)
    _, out = run(nested_calls, 2, (v, wp.vec3), np.zeros(2, np.float32))
    np.testing.assert_allclose(out, [13.0, 3.0], rtol=1e-7)


@wp.func
def divmod_(a: int, b: int):
    return a // b, a % b


@wp.func
def min_max_mean(a: float, b: float, c: float):
    lo = wp.min(a, wp.min(b, c))
    hi = wp.max(a, wp.max(b, c))
    return lo, hi, (a + b + c) / 3.0


@wp.kernel
def tuples(out: wp.array(dtype=int), fout: wp.array(dtype=float)):
    q, r = divmod_(17, 5)
    out[0] = q
    out[1] = r
    t = divmod_(-17, 5)
    out[2] = t[0]
    out[3] = t[1]
    lo, hi, mean = min_max_mean(3.0, -1.0, 7.0)
    fout[0] = lo
    fout[1] = hi
    fout[2] = mean


def test_funcs_returning_tuples(run):
    out, fout = run(tuples, 1, np.zeros(4, np.int32), np.zeros(3, np.float32))
    assert out.tolist() == [3, 2, -4, int(np.fmod(-17, 5))]
    assert fout.tolist() == [-1.0, 7.0, 3.0]


@wp.func
def reflect(v: wp.vec3, n: wp.vec3) -> wp.vec3:
    return v - 2.0 * wp.dot(v, n) * n


@wp.func
def zero_first(v: wp.vec3) -> float:
    v[0] = 0.0  # changes the func's own copy only
    v.y = v.y * 2.0
    return v[0] + v[1] + v[2]


@wp.func
def scaled_rows(m: wp.mat22, s: float) -> wp.mat22:
    m[0] = m[0] * s
    return m


@wp.kernel
def composite_funcs(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3),
                    sums: wp.array(dtype=float), m_out: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    a = v[i]
    out[i] = reflect(a, wp.vec3(0.0, 1.0, 0.0))
    sums[i] = zero_first(a) + a[0] * 1000.0  # a is unchanged by the call
    m = wp.mat22(1.0, 2.0, 3.0, 4.0)
    m2 = scaled_rows(m, 10.0)
    m_out[i] = m2 - m


def test_funcs_with_vector_arguments_have_value_semantics(run):
    v = np.array([[1, 2, 3], [-1, 5, 0.5]], np.float32)
    *_, out, sums, m_out = run(composite_funcs, 2, (v, wp.vec3),
                               (np.zeros((2, 3), np.float32), wp.vec3),
                               np.zeros(2, np.float32), (np.zeros((2, 2, 2), np.float32), wp.mat22))
    np.testing.assert_array_equal(out, v * [1, -1, 1])
    np.testing.assert_array_equal(sums, 2 * v[:, 1] + v[:, 2] + 1000 * v[:, 0])
    np.testing.assert_array_equal(m_out, [[[9.0, 18.0], [0.0, 0.0]]] * 2)


@wp.func
def store_twice(a: wp.array(dtype=float), i: int, x: float):
    a[i] = 2.0 * x  # arrays are passed by reference


@wp.func
def with_defaults(x: float, scale: float = 10.0, shift: float = 1.0) -> float:
    return x * scale + shift


@wp.kernel
def array_args_and_keywords(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    store_twice(a, i, float(i))
    out[i * 3 + 0] = with_defaults(1.0)
    out[i * 3 + 1] = with_defaults(1.0, shift=-1.0)
    out[i * 3 + 2] = with_defaults(x=2.0, scale=0.5)


def test_array_arguments_defaults_and_keywords(run):
    a, out = run(array_args_and_keywords, 2, np.zeros(2, np.float32), np.zeros(6, np.float32))
    assert a.tolist() == [0.0, 2.0]
    assert out.tolist() == [11.0, 9.0, 2.0] * 2


@wp.func
def inferred_return(x: float):
    if x > 0.0:
        return x
    return -x * 2.0


@wp.kernel
def call_inferred(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = inferred_return(x[i])


def test_return_type_inferred_with_early_return(run):
    _, out = run(call_inferred, 2, np.array([3.0, -1.5], np.float32), np.zeros(2, np.float32))
    assert out.tolist() == [3.0, 3.0]


@wp.func
def find_pair(n: int, target: int) -> int:
    for i in range(n):
        for j in range(n):
            if i * j == target:
                return i * 10 + j  # leaves both loops
    return -1


@wp.func
def maybe_store(a: wp.array(dtype=float), i: int):
    if i > 0:
        return  # a func without a value may return early too
    a[i] = 9.0


@wp.kernel
def nested_loop_returns(out: wp.array(dtype=int), a: wp.array(dtype=float)):
    out[0] = find_pair(5, 6)
    out[1] = find_pair(2, 6)
    out[2] = find_pair(4, 0)
    maybe_store(a, 1)
    maybe_store(a, 0)


def test_return_from_nested_loops(run):
    out, a = run(nested_loop_returns, 1, np.zeros(3, np.int32), np.zeros(2, np.float32))
    assert out.tolist() == [23, -1, 0]
    assert a.tolist() == [9.0, 0.0]


@wp.func
def total(a: typing.Any):
    s = a.dtype(0)
    for i in range(a.shape[0]):
        s += a[i]
    return s


@wp.kernel
def generic_over_arrays(f: wp.array(dtype=float), k: wp.array(dtype=wp.int64),
                        out: wp.array(dtype=float), kout: wp.array(dtype=wp.int64)):
    out[0] = total(f)
    kout[0] = total(k)


def test_generic_func_over_array_types(run):
    *_, out, kout = run(generic_over_arrays, 1, np.array([0.5, 1.5], np.float32),
                        np.array([2**40, 1], np.int64), np.zeros(1, np.float32), np.zeros(1, np.int64))
    assert out[0] == 2.0 and kout[0] == 2**40 + 1


def test_array_of_any_annotation():
    @wp.func
    def first(a: wp.array(dtype=typing.Any)):
        return a[0]

    @wp.kernel
    def use_first(a: wp.array(dtype=float), out: wp.array(dtype=float)):
        out[0] = first(a)

    out = wp.zeros(1, dtype=float)
    wp.launch(use_first, 1, inputs=[wp.array(np.array([3.0], np.float32)), out])
    assert out.numpy()[0] == 3.0


@wp.struct
class Pair:
    a: float
    b: int


@wp.func
def make_pair(x: float) -> Pair:
    p = Pair()
    p.a = x
    p.b = 3
    return p


def make_kernel(fn):
    @wp.kernel
    def apply(out: wp.array(dtype=float)):
        out[0] = fn(2.0)
    return apply


@wp.func
def doubled(x: float) -> float:
    return x * 2.0


@wp.kernel
def returns_struct(out: wp.array(dtype=float)):
    p = make_pair(2.5)
    out[0] = p.a * float(p.b)


def test_func_returning_a_struct(run):
    (out,) = run(returns_struct, 1, np.zeros(1, np.float32))
    assert out[0] == 7.5


def test_funcs_and_builtins_captured_by_closures(run):
    (out,) = run(make_kernel(doubled), 1, np.zeros(1, np.float32))
    assert out[0] == 4.0
    (out,) = run(make_kernel(wp.sqrt), 1, np.zeros(1, np.float32))
    assert out[0] == np.float32(np.sqrt(2.0))


def test_func_called_from_python_scope():
    assert saxpy(1.0, 2.0, 3.0) == 5.0  # more in tests/lang/test_pyscope.py


@wp.func
def recursive(n: int) -> int:
    if n <= 0:
        return 0
    return n + recursive(n - 1)


def test_a_funcs_key_is_its_qualified_name_in_its_module():  # (Warp's rule, a kernel's)
    @wp.func
    def local_helper(x: float) -> float:
        return x

    assert recursive.key == "recursive"
    assert local_helper.key == "test_a_funcs_key_is_its_qualified_name_in_its_module__locals__local_helper"


def test_recursion_is_a_compile_error():
    @wp.kernel
    def calls_recursive(out: wp.array(dtype=int)):
        out[0] = recursive(3)

    with pytest.raises(RecursionError, match="recursion") as excinfo:  # (Warp's class)
        wp.launch(calls_recursive, 1, inputs=[wp.zeros(1, dtype=int)])
    assert isinstance(excinfo.value, wp.CompileError)
    line = inspect.getsourcelines(recursive.func)[1] + 1  # the `def` line, after the decorator
    assert f"{__file__}:{line}:" in str(excinfo.value)
