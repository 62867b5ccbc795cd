"""`wp.jax_kernel`: a weft kernel as a JAX op (a pure_callback on host buffers). Inputs first,
outputs last (returned as a tuple); scalars static; jit, vmap (every vmap method, every axis),
grad through the kernel's adjoint (`enable_backward=True`), in-out arguments, launch and
output dims, and clear errors for what cannot work."""

from functools import partial
from typing import Any

import numpy as np
import pytest

import weft as wp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


@wp.kernel
def add(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] + b[i]


@wp.kernel
def add2d(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    out[i, j] = a[i, j] + b[i, j]


@wp.kernel
def sincos(x: wp.array(dtype=float), s: wp.array(dtype=float), c: wp.array(dtype=float)):
    i = wp.tid()
    s[i] = wp.sin(x[i])
    c[i] = wp.cos(x[i])


@wp.kernel
def scale_vec(a: wp.array(dtype=wp.vec2), s: float, out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    out[i] = a[i] * s


@wp.kernel
def scale_mat(a: wp.array(dtype=wp.mat22), s: float, out: wp.array(dtype=wp.mat22)):
    i = wp.tid()
    out[i] = a[i] * s


@wp.kernel
def diagonal(out: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    d = float(i + 1)
    out[i] = wp.mat33(d, 0.0, 0.0, 0.0, 2.0 * d, 0.0, 0.0, 0.0, 3.0 * d)


@wp.kernel
def accumulate(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array(dtype=float)):
    i = wp.tid()
    b[i] += a[i]
    c[i] = 2.0 * a[i]


@wp.kernel
def rowsum(m: wp.array2d(dtype=float), sums: wp.array(dtype=float)):
    i, j = wp.tid()
    wp.atomic_add(sums, i, m[i, j])


@wp.kernel
def lookup(table: wp.array(dtype=float), idx: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = table[idx[i]]


@wp.kernel
def square_sum(a: wp.array(dtype=float), b: wp.array(dtype=float), s: float, c: wp.array(dtype=float)):
    i = wp.tid()
    c[i] = (a[i] * s + b[i]) * (a[i] * s + b[i])


@wp.kernel
def two_outputs(a: wp.array(dtype=float), b: wp.array(dtype=float), s: float, c: wp.array(dtype=float),
                d: wp.array(dtype=float)):
    i = wp.tid()
    c[i] = a[i] * a[i]
    d[i] = a[i] * b[i] * s


@wp.kernel
def gather_scaled(a: wp.array(dtype=float), idx: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = 3.0 * a[idx[i]]


@wp.kernel
def writes_its_input(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + 1.0
    out[i] = a[i]


@wp.kernel
def rows_doubled(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float)):
    j = wp.tid()
    for m in range(a.shape[0]):
        b[m, j] = a[m, j] * 2.0


@wp.kernel(enable_backward=False)
def triple_any(a: wp.array(dtype=Any), out: wp.array(dtype=Any)):
    i = wp.tid()
    out[i] = a.dtype(3) * a[i]


@wp.kernel
def no_tid(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    out[0] = a[0]


def _f32(*shape, start=0.0):
    return jnp.arange(int(np.prod(shape)), dtype=jnp.float32).reshape(shape) + start


# Forward -------------------------------------------------------------------------------------------
def test_inputs_in_outputs_out_eagerly_and_under_jit():
    op = wp.jax_kernel(add)
    a, b = _f32(64), jnp.ones(64, dtype=jnp.float32)
    (eager,) = op(a, b)
    (jitted,) = jax.jit(op)(a, b)
    np.testing.assert_array_equal(np.asarray(eager), np.arange(64) + 1.0)
    np.testing.assert_array_equal(np.asarray(jitted), np.arange(64) + 1.0)


def test_several_outputs():
    op = wp.jax_kernel(sincos, num_outputs=2)
    x = jnp.linspace(0.0, 6.0, 50, dtype=jnp.float32)
    # the outputs come as a list, as Warp gives them (eager, jitted, and differentiable)
    assert isinstance(op(x), list) and isinstance(jax.jit(op)(x), list)
    assert isinstance(wp.jax_kernel(sincos, num_outputs=2, enable_backward=True)(x), list)
    s, c = jax.jit(op)(x)
    np.testing.assert_allclose(np.asarray(s), np.sin(np.asarray(x)), atol=1e-6)
    np.testing.assert_allclose(np.asarray(c), np.cos(np.asarray(x)), atol=1e-6)


def test_vectors_and_matrices_have_their_components_as_trailing_dims_and_scalars_are_static():
    a = _f32(8, 2)
    (v,) = jax.jit(wp.jax_kernel(scale_vec), static_argnums=1)(a, 3.0)
    np.testing.assert_array_equal(np.asarray(v), 3.0 * np.asarray(a))
    m = _f32(3, 2, 2)
    (w,) = wp.jax_kernel(scale_mat)(m, 0.5)
    np.testing.assert_array_equal(np.asarray(w), 0.5 * np.asarray(m))


def test_launch_dims_give_the_output_shape_when_there_is_no_input():
    (d,) = jax.jit(lambda: wp.jax_kernel(diagonal)(launch_dims=4))()
    assert d.shape == (4, 3, 3)
    np.testing.assert_array_equal(np.asarray(d)[3], np.diag([4.0, 8.0, 12.0]))


def test_launch_dims_and_output_dims_per_call_and_by_name():
    op = wp.jax_kernel(lookup)
    table, idx = _f32(10), jnp.array([9, 0, 3], dtype=jnp.int32)
    (out,) = op(table, idx, launch_dims=3)  # the first input array would give 10 threads
    np.testing.assert_array_equal(np.asarray(out), [9.0, 0.0, 3.0])
    (out,) = op(table, idx, launch_dims=2, output_dims={"out": 3})  # the third element stays zero
    np.testing.assert_array_equal(np.asarray(out), [9.0, 0.0, 0.0])


def test_in_out_arguments_start_from_the_input_and_leave_it_unchanged():
    op = wp.jax_kernel(accumulate, num_outputs=2, in_out_argnames=["b"])
    a, b = jnp.ones(16, dtype=jnp.float32), _f32(16)
    b_out, c = jax.jit(op)(a, b)
    np.testing.assert_array_equal(np.asarray(b_out), np.arange(16) + 1.0)
    np.testing.assert_array_equal(np.asarray(c), np.full(16, 2.0))
    np.testing.assert_array_equal(np.asarray(b), np.arange(16))  # JAX arrays are values


def test_an_input_the_kernel_writes_is_copied_first():
    a = _f32(5)
    (out,) = wp.jax_kernel(writes_its_input)(a)
    np.testing.assert_array_equal(np.asarray(out), np.arange(5) + 1.0)
    np.testing.assert_array_equal(np.asarray(a), np.arange(5))


def test_wrappers_are_cached_by_their_arguments():
    assert wp.jax_kernel(add) is wp.jax_kernel(add)
    assert wp.jax_kernel(add, in_out_argnames=[]) is wp.jax_kernel(add)
    assert wp.jax_kernel(add, launch_dims=4) is not wp.jax_kernel(add)
    assert wp.jax_kernel(accumulate, num_outputs=2, in_out_argnames=["b"]) is not \
        wp.jax_kernel(accumulate, num_outputs=1)


def test_overloads_of_generic_kernels():
    for t, jt in ((wp.float32, jnp.float32), (wp.int32, jnp.int32), (wp.uint8, jnp.uint8)):
        op = wp.jax_kernel(triple_any.add_overload([wp.array(dtype=t), wp.array(dtype=t)]))
        (out,) = jax.jit(op)(jnp.arange(5, dtype=jt))
        assert out.dtype == jt
        np.testing.assert_array_equal(np.asarray(out), 3 * np.arange(5))


# vmap ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["broadcast_all", "sequential", "expand_dims", "legacy_vectorized"])
def test_vmap_over_every_axis(method):
    op = wp.jax_kernel(add2d, vmap_method=method)
    a, b = _f32(2, 3, 4), jnp.ones((2, 3, 4), dtype=jnp.float32)
    for in_axis in range(3):
        for out_axis in range(3):
            (out,) = jax.jit(jax.vmap(op, in_axes=in_axis, out_axes=out_axis))(a, b)
            expected = jax.vmap(lambda x, y: x + y, in_axes=in_axis, out_axes=out_axis)(a, b)
            assert out.shape == expected.shape
            np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))


@wp.kernel
def shift_sum(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    below = float(0.0)  # noqa: UP018 - a variable (a literal would be a constant)
    if i + 1 < a.shape[0]:
        below = a[i + 1, j]
    out[i, j] = a[i, j] + 10.0 * below


@pytest.mark.parametrize("method", ["broadcast_all", "expand_dims", "legacy_vectorized"])
def test_vmap_of_a_stencil_keeps_batch_elements_apart(method):
    # A kernel that reads a neighbour row sees each batch element on its own, as jax.vmap
    # means. Warp 1.19 folds the batch into the first dimension for "broadcast_all" (one
    # launch over a (batch * rows, cols) array), so there the last row of element k reads
    # the first row of element k + 1; weft launches per element and gives vmap's answer.
    op = wp.jax_kernel(shift_sum, vmap_method=method)
    batch = _f32(3, 4, 2)
    (out,) = jax.vmap(op)(batch)
    x = np.asarray(batch)
    expected = x + 10.0 * np.concatenate([x[:, 1:], np.zeros_like(x[:, :1])], axis=1)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


@pytest.mark.parametrize("method", ["broadcast_all", "sequential", "expand_dims", "legacy_vectorized"])
def test_vmap_with_an_unbatched_input_and_in_out_arguments(method):
    table, idx = _f32(20), jnp.array([[1, 5, 19], [0, 0, 7]], dtype=jnp.int32)
    op = wp.jax_kernel(lookup, vmap_method=method)
    (out,) = jax.vmap(partial(op, launch_dims=3), in_axes=(None, 0))(table, idx)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(table)[np.asarray(idx)])
    sums_op = wp.jax_kernel(rowsum, in_out_argnames=["sums"], vmap_method=method)
    m = _f32(2, 3, 4)
    (sums,) = jax.vmap(sums_op)(m, jnp.zeros((2, 3), dtype=jnp.float32))
    np.testing.assert_array_equal(np.asarray(sums), np.asarray(m).sum(axis=2))


@wp.kernel
def add_scaled(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] + 10.0 * b[i]


def test_legacy_vectorized_passes_unbatched_inputs_as_they_are():
    """JAX's "legacy_vectorized" (its former `vectorized=True`) moves each batched input's
    batch axis to the front and leaves the others without one; weft aligns an input's batch
    dimensions with the call's innermost ones, as numpy broadcasts."""
    op = wp.jax_kernel(add_scaled, vmap_method="legacy_vectorized")
    f = lambda a, b: op(a, b)[0]  # noqa: E731
    xs, y = _f32(3, 4), _f32(4) * 0.5
    np.testing.assert_array_equal(np.asarray(f(y, y)), 11.0 * np.asarray(y))
    for in_axes, args, expected in (((0, 0), (xs, xs), xs + 10.0 * xs), ((0, None), (xs, y), xs + 10.0 * y),
                                    ((None, 0), (y, xs), y + 10.0 * xs)):
        out = jax.jit(jax.vmap(f, in_axes=in_axes))(*args)
        np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))
    x3 = _f32(2, 3, 4)
    out = jax.vmap(jax.vmap(f), in_axes=(0, None))(x3, xs)  # b batched by the inner vmap only
    np.testing.assert_array_equal(np.asarray(out), np.asarray(x3 + 10.0 * xs))
    with pytest.raises(Exception, match="do not broadcast to the call's batch"):  # by the outer one only
        jax.vmap(jax.vmap(f, in_axes=(0, None)))(x3, xs[:2])
    vec_op = wp.jax_kernel(scale_vec, vmap_method="legacy_vectorized")
    v = _f32(2, 3, 2)
    np.testing.assert_array_equal(np.asarray(jax.vmap(lambda a: vec_op(a, 2.0)[0])(v)), 2.0 * np.asarray(v))


def test_legacy_vectorized_gradients_and_callables():
    op = wp.jax_kernel(square_sum, enable_backward=True, vmap_method="legacy_vectorized")
    a, b = _f32(3, 5), jnp.ones(5, dtype=jnp.float32)
    grads = jax.vmap(jax.grad(lambda a, b: jnp.sum(op(a, b, 2.0)[0]), argnums=(0, 1)), in_axes=(0, None))(a, b)
    r = 2.0 * (np.asarray(a) * 2.0 + 1.0)
    np.testing.assert_allclose(np.asarray(grads[0]), r * 2.0)
    np.testing.assert_allclose(np.asarray(grads[1]), r)

    def call(x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float)):
        wp.launch(add_scaled, dim=x.shape, inputs=[x, y], outputs=[out])

    cb = wp.jax_callable(call, vmap_method="legacy_vectorized")
    out = jax.vmap(lambda x, y: cb(x, y)[0], in_axes=(None, 0))(b, a)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(b + 10.0 * a))


# Gradients -----------------------------------------------------------------------------------------
def test_grad_through_the_adjoint_kernel():
    op = wp.jax_kernel(square_sum, enable_backward=True)
    a, b, s = _f32(32), jnp.ones(32, dtype=jnp.float32), 2.0

    def loss(a, b, s):
        return jnp.sum(op(a, b, s)[0])

    da, db = jax.jit(jax.grad(loss, argnums=(0, 1)), static_argnames="s")(a, b, s)
    r = 2.0 * (np.arange(32) * s + 1.0)
    np.testing.assert_allclose(np.asarray(da), r * s)
    np.testing.assert_allclose(np.asarray(db), r)


def test_grad_of_two_outputs_matches_jax_and_integer_arrays_get_none():
    op = wp.jax_kernel(two_outputs, num_outputs=2, enable_backward=True)

    def loss(fn, a, b):
        c, d = fn(a, b, 1.5)
        return jnp.sum(c * 2.0 + d)

    a, b = _f32(10, start=-3.0), _f32(10, start=1.0)
    mine = jax.grad(partial(loss, op), argnums=(0, 1))(a, b)
    ref = jax.grad(partial(loss, lambda a, b, s: (a * a, a * b * s)), argnums=(0, 1))(a, b)
    for g, r in zip(mine, ref):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-6)
    gather = wp.jax_kernel(gather_scaled, enable_backward=True)
    idx = jnp.array([0, 0, 2], dtype=jnp.int32)
    g = jax.grad(lambda a: jnp.sum(gather(a, idx)[0]))(_f32(3))
    np.testing.assert_array_equal(np.asarray(g), [6.0, 0.0, 3.0])


def test_grad_of_vectors_and_under_vmap():
    op = wp.jax_kernel(scale_vec, enable_backward=True)
    g = jax.grad(lambda a: jnp.sum(op(a, 3.0)[0]))(_f32(4, 2))
    np.testing.assert_array_equal(np.asarray(g), np.full((4, 2), 3.0))
    add_op = wp.jax_kernel(add, enable_backward=True)
    a = _f32(3, 5)
    out = jax.vmap(add_op)(a, a)[0]
    np.testing.assert_array_equal(np.asarray(out), 2.0 * np.asarray(a))
    g = jax.grad(lambda x: jnp.sum(jax.vmap(add_op)(x, x)[0] ** 2))(a)
    np.testing.assert_allclose(np.asarray(g), 8.0 * np.asarray(a))


def test_differentiable_wrappers_fix_their_dims():
    op = wp.jax_kernel(add, enable_backward=True, launch_dims=4)
    assert op.block_dim is None and op.launch_dims == (4,)
    (out,) = op(_f32(6), _f32(6))  # outputs take the first input's shape; 4 threads run
    np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0, 4.0, 6.0, 0.0, 0.0])
    with pytest.raises(TypeError, match="launch_dims cannot be overridden per-call"):
        op(_f32(6), _f32(6), launch_dims=6)
    with pytest.raises(TypeError, match="output_dims is not supported"):
        op(_f32(6), _f32(6), output_dims=6)
    with pytest.raises(TypeError, match="vmap_method cannot be overridden"):
        op(_f32(6), _f32(6), vmap_method="sequential")
    with pytest.raises(NotImplementedError, match="output_dims"):
        wp.jax_kernel(add, enable_backward=True, output_dims=3)
    with pytest.raises(NotImplementedError, match="in_out_argnames"):
        wp.jax_kernel(accumulate, num_outputs=2, in_out_argnames=["b"], enable_backward=True)


def test_grad_with_fewer_threads_than_array_dims_uses_the_forward_launch_dims():
    op = wp.jax_kernel(rows_doubled, launch_dims=5, enable_backward=True)
    a = _f32(3, 5)
    (out,) = op(a)
    assert out.shape == (3, 5)  # the first input's shape
    np.testing.assert_array_equal(np.asarray(out), 2.0 * np.asarray(a))
    g = jax.grad(lambda x: jnp.sum(op(x)[0] * jnp.arange(15.0).reshape(3, 5)))(a)
    np.testing.assert_array_equal(np.asarray(g), 2.0 * np.arange(15.0).reshape(3, 5))  # no 3x over-count


# Errors --------------------------------------------------------------------------------------------
def test_argument_name_errors():
    with pytest.raises(ValueError, match="must not contain duplicate names"):
        wp.jax_kernel(add, in_out_argnames=["out", "out"])
    with pytest.raises(ValueError, match="in_out arguments should be placed before output-only arguments"):
        wp.jax_kernel(sincos, num_outputs=2, in_out_argnames=["c"])
    with pytest.raises(ValueError, match="did not match any function argument names"):
        wp.jax_kernel(add, in_out_argnames=["nope"])
    with pytest.raises(TypeError, match="expected a @weft.kernel"):
        wp.jax_kernel(lambda x: x)


def test_block_dim_is_checked():
    with pytest.raises(ValueError, match="block_dim must be positive"):
        wp.jax_kernel(add, block_dim=0)
    with pytest.raises(TypeError, match="block_dim must be an integer or None"):
        wp.jax_kernel(add, block_dim=1.5)
    with pytest.raises(TypeError, match="block_dim must be an integer or None"):
        wp.jax_kernel(add, block_dim=True)
    assert wp.jax_kernel(add, block_dim=np.int64(64)).block_dim == 64


def test_call_errors_name_the_argument():
    op = wp.jax_kernel(scale_vec)
    with pytest.raises(TypeError, match="'a'.*float32, got int32"):
        op(jnp.zeros((3, 2), dtype=jnp.int32), 1.0)
    with pytest.raises(TypeError, match="inner dimensions.*'a'"):
        op(jnp.zeros((3, 3), dtype=jnp.float32), 1.0)
    with pytest.raises(ValueError, match="expected 2 inputs"):
        op(jnp.zeros((3, 2), dtype=jnp.float32))
    with pytest.raises(ValueError, match="'s' must be a static value"):
        jax.jit(op)(jnp.zeros((3, 2), dtype=jnp.float32), 2.0)


def test_tid_extents_over_32_bits_are_refused_when_traced():
    big = 2**31 + 1
    op = wp.jax_kernel(add, launch_dims=big, output_dims=1)
    with pytest.raises(ValueError, match=f"wp.tid\\(\\) with extent {big} in dimension 0"):
        jax.jit(lambda: op(jnp.ones(1, jnp.float32), jnp.ones(1, jnp.float32))).lower()
    inferred = jax.ShapeDtypeStruct((big,), jnp.float32)
    with pytest.raises(ValueError, match="in dimension 0"):
        jax.jit(wp.jax_kernel(add, output_dims=1)).lower(inferred, inferred)
    # a kernel that never calls tid() has no index to overflow
    lowered = jax.jit(lambda: wp.jax_kernel(no_tid, launch_dims=big, output_dims=1)(jnp.ones(1, jnp.float32)))
    assert lowered.lower() is not None


def test_run_time_errors_reach_the_caller():
    op = wp.jax_kernel(lookup)
    with pytest.raises(Exception, match="out of bounds"):
        jax.block_until_ready(op(_f32(3), jnp.array([0, 7], dtype=jnp.int32)))


def test_jax_experimental_and_src_paths_give_the_same_objects():
    from weft._src.jax import get_jax_device
    from weft._src.jax.ffi import jax_kernel as src_kernel
    from weft.jax_experimental import jax_callable, jax_kernel
    from weft.jax_experimental.ffi import jax_kernel as ffi_kernel
    assert jax_kernel is wp.jax_kernel is src_kernel is ffi_kernel
    assert jax_callable is wp.jax_callable
    assert get_jax_device().platform == "cpu"


def test_the_pure_callback_fallback_computes_the_same(monkeypatch):
    """Where JAX lacks the FFI, ops are pure_callbacks (outputs copied back by XLA)."""
    from weft.interop import xla_ffi
    monkeypatch.setattr(xla_ffi, "available", lambda jax: False)
    a, b = _f32(2, 4), jnp.ones((2, 4), dtype=jnp.float32)
    (out,) = jax.jit(jax.vmap(wp.jax_kernel(add, launch_dims=4)))(a, b)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(a) + 1.0)
    b_out, c = wp.jax_kernel(accumulate, num_outputs=2, in_out_argnames=["b"], launch_dims=3)(_f32(3), _f32(3))
    np.testing.assert_array_equal(np.asarray(b_out), 2.0 * np.arange(3))
    op = wp.jax_kernel(square_sum, enable_backward=True, launch_dims=8)
    da = jax.grad(lambda a: jnp.sum(op(a, jnp.ones(8, jnp.float32), 1.0)[0]))(_f32(8))
    np.testing.assert_allclose(np.asarray(da), 2.0 * (np.arange(8) + 1.0))


@wp.kernel
def _triple_any(a: wp.array(dtype=Any), out: wp.array(dtype=Any)):
    i = wp.tid()
    out[i] = a.dtype(3) * a[i]


@pytest.mark.parametrize("dtype", [wp.bfloat16, wp.float16, wp.int8, wp.uint16])
def test_jax_kernel_narrow_dtypes_in_one_jit(dtype):
    # bfloat16 buffers reach the kernel as bfloat16 (numpy knows them only as raw bytes)
    f32 = wp.jax_kernel(_triple_any.add_overload([wp.array[wp.float32], wp.array[wp.float32]]))
    narrow = wp.jax_kernel(_triple_any.add_overload([wp.array[dtype], wp.array[dtype]]))
    jdtype = wp.dtype_to_jax(dtype)

    @jax.jit
    def both():
        return f32(jnp.arange(8, dtype=jnp.float32)), narrow(jnp.arange(8, dtype=jdtype))

    (a,), (b,) = both()
    np.testing.assert_array_equal(np.asarray(a), 3 * np.arange(8, dtype=np.float32))
    assert np.asarray(b).dtype == np.dtype(dtype.np_dtype)
    np.testing.assert_array_equal(np.asarray(b).astype(np.float64), 3 * np.arange(8))
