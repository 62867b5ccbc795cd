"""`weft.map`: funcs, builtins, Python functions and lambdas applied elementwise over
broadcast arrays; outputs, validation messages, the kernel cache, gradients through a Tape,
and the arithmetic operators of arrays that use it."""

import numpy as np
import pytest

import weft as wp
from weft.utils import map_cache


@wp.struct
class Pair:
    a: float
    b: float


@wp.func
def add_pairs(x: Pair, y: Pair):
    return Pair(x.a + y.a, x.b + y.b)


@wp.func
def sq_and_vec(x: float):
    return x * x, wp.vec2(x, -x)


def _arange(n, dtype=np.float32, **kw):
    return wp.array(np.arange(n, dtype=dtype), **kw)


def test_lambda_builtin_func_and_python_function():
    a = _arange(6)
    np.testing.assert_allclose(wp.map(lambda x: x * 3.0 + 1.0, a).numpy(), np.arange(6) * 3.0 + 1.0)
    np.testing.assert_allclose(wp.map(wp.clamp, a, 1.0, 4.0).numpy(), np.clip(np.arange(6), 1, 4))

    def halve(x):
        return x * 0.5
    np.testing.assert_allclose(wp.map(halve, a).numpy(), np.arange(6) * 0.5)

    tf = wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat_identity())
    pts = wp.array([(1.0, 0.0, 0.0), (0.0, 5.0, 0.0)], dtype=wp.vec3)
    np.testing.assert_allclose(wp.map(wp.transform_point, tf, pts).numpy(), [[2, 2, 3], [1, 7, 3]])


def test_structs_and_several_results():
    p = Pair(a=1.0, b=2.0)
    q = Pair(a=10.0, b=20.0)
    out = wp.map(add_pairs, wp.array([p, q], dtype=Pair), wp.array([q, p], dtype=Pair)).list()
    assert [(s.a, s.b) for s in out] == [(11.0, 22.0), (11.0, 22.0)]

    sq, v = wp.map(sq_and_vec, _arange(4))
    assert sq.dtype is wp.float32 and v.dtype is wp.vec2
    np.testing.assert_allclose(sq.numpy(), [0, 1, 4, 9])
    np.testing.assert_allclose(v.numpy(), [[0, 0], [1, -1], [2, -2], [3, -3]])


def test_lambdas_on_one_line_are_told_apart():
    a = _arange(3)
    f, g = (lambda x: x + 100.0), (lambda x: x * 2.0)
    np.testing.assert_allclose(wp.map(g, a).numpy(), [0, 2, 4])
    np.testing.assert_allclose(wp.map(f, a).numpy(), [100, 101, 102])


def test_captured_value_change_is_not_stale():
    a = _arange(3)
    results = []
    for k in (2.0, 3.0):
        results.append(wp.map(lambda x: x * k, a).numpy())  # noqa: B023 - the point of the test
    np.testing.assert_allclose(results, [[0, 2, 4], [0, 3, 6]])

    scale = 2.0

    def f(x):
        return x * scale
    first = wp.map(f, a).numpy()
    scale = 5.0  # the same function object, its captured variable rebound
    np.testing.assert_allclose([first, wp.map(f, a).numpy()], [[0, 2, 4], [0, 5, 10]])


def test_broadcasting():
    a = wp.array(np.arange(3, dtype=np.float32).reshape(3, 1))
    b = wp.array(np.arange(4, dtype=np.float32) * 10.0)
    out = wp.map(wp.add, a, b)
    assert out.shape == (3, 4)
    np.testing.assert_allclose(out.numpy(), np.arange(3).reshape(3, 1) + np.arange(4) * 10.0)
    with pytest.raises(ValueError, match=r"Shapes \(3, 1, 2\) and \(5,\) are not broadcastable"):
        wp.map(wp.add, wp.zeros((3, 1, 2)), wp.zeros(5))


def test_indexed_arrays_in_and_out():
    base = _arange(8)
    idx = wp.array([1, 3, 6], dtype=wp.int32)
    view = wp.indexedarray1d(base, [idx])
    np.testing.assert_allclose(wp.map(lambda x: x + 0.5, view).numpy(), [1.5, 3.5, 6.5])
    wp.map(lambda x: -x, view, out=view)
    np.testing.assert_allclose(base.numpy(), [0, -1, 2, -3, 4, 5, -6, 7])


def test_validation_messages():
    a = wp.zeros(3)

    @wp.func
    def nothing(x: float):
        pass

    @wp.func
    def on_ints(i: int):
        return float(i)

    with pytest.raises(TypeError, match="must return a value"):
        wp.map(nothing, a)
    with pytest.raises(TypeError, match=r"Number of input arguments \(2\) does not match .* \(1\)"):
        wp.map(on_ints, a, a)
    with pytest.raises(TypeError, match="on_ints does not support the provided argument types float32"):
        wp.map(on_ints, a)
    with pytest.raises(ValueError, match="at least one warp.array input"):
        wp.map(lambda x: x, 1.0)
    with pytest.raises(TypeError, match=r"Output array shape \(2,\) does not match expected shape \(3,\)"):
        wp.map(wp.sub, a, a, out=wp.zeros(2))
    with pytest.raises(TypeError, match="Output array dtype int32 does not match expected dtype float32"):
        wp.map(wp.sub, a, a, out=wp.zeros(3, dtype=wp.int32))
    with pytest.raises(TypeError, match="cannot be an array element"):
        wp.map(lambda x: wp.zeros(shape=(2,), dtype=float), a)
    with pytest.raises(TypeError, match=r"Number of provided output arrays \(1\) .* outputs \(2\)"):
        wp.map(sq_and_vec, a, out=[wp.zeros(3)])


def test_cache_reuses_kernels_by_types_not_shapes():
    map_cache.clear()
    wp.map(lambda x, y: x - y, _arange(3), _arange(3))
    n = len(map_cache)
    wp.map(lambda x, y: x - y, _arange(7), _arange(7), out=wp.zeros(7))  # same text, other shape
    assert len(map_cache) == n
    wp.map(lambda x, y: x - y, _arange(3, np.float64), _arange(3, np.float64))
    assert len(map_cache) == n + 1
    wp.map(lambda x, y: x - y, wp.zeros((3, 1)), _arange(3))  # another broadcast pattern
    assert len(map_cache) == n + 2


def test_return_kernel_is_a_kernel_over_inputs_then_outputs():
    k = wp.map(lambda x: x * x, _arange(2), return_kernel=True)
    assert isinstance(k, wp.Kernel)
    out = wp.zeros(5)
    wp.launch(k, dim=5, inputs=[_arange(5)], outputs=[out])
    np.testing.assert_allclose(out.numpy(), np.arange(5) ** 2)


def test_gradient_through_tape():
    x = wp.array(np.linspace(0.1, 1.0, 5), dtype=wp.float32, requires_grad=True)
    with wp.Tape() as tape:
        y = wp.map(lambda v: wp.sin(v) * v, x)
    assert y.requires_grad
    y.grad.fill_(1.0)
    tape.backward()
    xs = np.linspace(0.1, 1.0, 5)
    np.testing.assert_allclose(x.grad.numpy(), np.cos(xs) * xs + np.sin(xs), rtol=1e-5)


def test_integer_outputs_carry_no_gradient():
    a = wp.array(np.arange(6, dtype=np.int32).reshape(2, 3), dtype=wp.vec3i, requires_grad=True)
    out = wp.map(wp.bit_and, a, a)
    assert not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), np.arange(6).reshape(2, 3))


def test_array_operators():
    a, b = _arange(5), wp.array(np.arange(1, 6, dtype=np.float32))
    an, bn = np.arange(5.0), np.arange(1.0, 6.0)
    np.testing.assert_allclose((a + b).numpy(), an + bn)
    np.testing.assert_allclose((2.0 - a).numpy(), 2.0 - an)
    np.testing.assert_allclose((a * 3.0).numpy(), an * 3.0)
    np.testing.assert_allclose((1.0 / b).numpy(), 1.0 / bn, rtol=1e-6)
    np.testing.assert_allclose((a // 2.0).numpy(), an // 2.0)
    np.testing.assert_allclose((b ** 2.0).numpy(), bn ** 2.0, rtol=1e-6)
    np.testing.assert_allclose((-a).numpy(), -an)
    ai, bi = wp.array([7, -7], dtype=wp.int32), wp.array([2, 2], dtype=wp.int32)
    q = ai / bi
    assert q.dtype is wp.int32
    np.testing.assert_array_equal(q.numpy(), [3, -3])  # integer division truncates, as in kernels
    a += 1.0
    np.testing.assert_allclose(a.numpy(), an + 1.0)
    view = wp.indexedarray1d(b, [wp.array([0, 4], dtype=wp.int32)])
    view *= 10.0
    np.testing.assert_allclose(b.numpy(), [10, 2, 3, 4, 50])
