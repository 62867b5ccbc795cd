"""`wp.jax_callable`: a Python function launching weft kernels as a JAX op (weft arrays viewing
XLA's buffers in, outputs filled in place); graph modes on the CPU; JAX devices as weft
devices; the ops inside `shard_map` (two host devices, in a subprocess)."""

import os
import subprocess
import sys
import textwrap
from functools import partial

import numpy as np
import pytest

import weft as wp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


@wp.kernel
def scale(a: wp.array(dtype=float), s: float, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] * s


@wp.kernel
def scale_vec(a: wp.array(dtype=wp.vec2), s: float, out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    out[i] = a[i] * s


@wp.kernel
def accumulate(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    b[i] += a[i]


def scale_both(a: wp.array(dtype=float), b: wp.array(dtype=wp.vec2), s: float, c: wp.array(dtype=float),
               d: wp.array(dtype=wp.vec2)):
    wp.launch(scale, dim=a.shape, inputs=[a, s], outputs=[c])
    wp.launch(scale_vec, dim=b.shape, inputs=[b, s], outputs=[d])


def double_then_add(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array(dtype=float)):
    wp.launch(scale, dim=a.shape, inputs=[a, 2.0], outputs=[c])
    wp.launch(accumulate, dim=a.shape, inputs=[a, b])  # changes the in-out argument b


def double(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    wp.launch(scale, dim=a.shape, inputs=[a, 2.0], outputs=[out])


def test_function_with_static_scalar_and_output_dims_by_name():
    op = wp.jax_callable(scale_both, num_outputs=2)
    a, b = jnp.arange(8, dtype=jnp.float32), jnp.arange(8, dtype=jnp.float32).reshape(4, 2)

    def f(a, b, s):
        return op(a, b, s, output_dims={"c": a.shape, "d": b.shape})  # d: the JAX shape, components too

    c, d = jax.jit(f, static_argnames="s")(a, b, 3.0)
    np.testing.assert_array_equal(np.asarray(c), 3.0 * np.arange(8))
    np.testing.assert_array_equal(np.asarray(d), 3.0 * np.arange(8).reshape(4, 2))
    outputs = op(a, b, 1.0, output_dims={"c": 8, "d": 4})  # or the weft shape
    assert isinstance(outputs, list)  # as Warp returns them
    c, d = outputs
    assert d.shape == (4, 2)


def test_in_out_arguments_and_default_output_dims():
    op = wp.jax_callable(double_then_add, num_outputs=2, in_out_argnames=["b"])
    a, b = jnp.ones(10, dtype=jnp.float32), jnp.arange(10, dtype=jnp.float32)
    b_out, c = jax.jit(op)(a, b)
    np.testing.assert_array_equal(np.asarray(b_out), np.arange(10) + 1.0)
    np.testing.assert_array_equal(np.asarray(c), np.full(10, 2.0))


@pytest.mark.parametrize("method", ["broadcast_all", "sequential", "legacy_vectorized"])
def test_vmap_calls_the_function_per_batch_element(method):
    op = wp.jax_callable(double, vmap_method=method)
    a = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    (out,) = jax.jit(jax.vmap(op, in_axes=1, out_axes=0))(a)
    np.testing.assert_array_equal(np.asarray(out), 2.0 * np.asarray(a).T)


def test_graph_modes_on_the_cpu():
    a = jnp.arange(4, dtype=jnp.float32)
    for mode in (wp.JaxCallableGraphMode.NONE, wp.JaxCallableGraphMode.JAX):
        (out,) = jax.jit(wp.jax_callable(double, graph_mode=mode))(a)
        np.testing.assert_array_equal(np.asarray(out), 2.0 * np.arange(4))
    for mode in (wp.JaxCallableGraphMode.WARP, wp.JaxCallableGraphMode.WARP_STAGED,
                 wp.JaxCallableGraphMode.WARP_STAGED_EX):
        with pytest.raises(RuntimeError, match=f"{mode.name}.*CPU"):
            jax.jit(wp.jax_callable(double, graph_mode=mode))(a)
    assert wp.jax_callable(double, graph_mode=2).graph_mode is wp.JaxCallableGraphMode.WARP
    op = wp.jax_callable(double)
    assert op.graph_cache_size == 0
    wp.clear_jax_callable_graph_cache(op)
    wp.clear_jax_callable_graph_cache()


def test_wrappers_are_cached_by_their_arguments():
    assert wp.jax_callable(double) is wp.jax_callable(double, in_out_argnames=[])
    staged = wp.jax_callable(scale_both, num_outputs=2, stage_in_argnames=["a"], stage_out_argnames=["c"])
    assert staged.stage_in_argnames == {"a"} and staged.stage_out_argnames == {"c"}
    assert staged is not wp.jax_callable(scale_both, num_outputs=2, stage_in_argnames=["b"])
    assert wp.jax_callable(double_then_add, num_outputs=3, in_out_argnames=["a", "b"]) is not \
        wp.jax_callable(double_then_add, num_outputs=3, in_out_argnames=["b", "a"])


def test_errors():
    with pytest.raises(ValueError, match="in_out arguments should be placed before output-only"):
        wp.jax_callable(scale_both, num_outputs=2, in_out_argnames=["d"])
    with pytest.raises(ValueError, match="did not match any function argument names"):
        wp.jax_callable(double, in_out_argnames=["x"])

    def returns(a: wp.array(dtype=float), b: wp.array(dtype=float)) -> int:
        return 1

    with pytest.raises(TypeError, match="must not return a value"):
        wp.jax_callable(returns)


def test_exceptions_in_the_function_reach_the_caller():
    def fails(a: wp.array(dtype=float), out: wp.array(dtype=float)):
        raise ValueError("the function refused")

    with pytest.raises(Exception, match="the function refused"):
        jax.block_until_ready(wp.jax_callable(fails)(jnp.ones(3, dtype=jnp.float32)))


# Devices -------------------------------------------------------------------------------------------
def test_devices_map_both_ways():
    cpu = jax.local_devices(backend="cpu")[0]
    assert wp.device_from_jax(cpu) == wp.get_device("cpu")
    assert wp.device_to_jax("cpu") == cpu
    assert wp.device_from_jax(wp.device_to_jax(None)) == wp.get_device()
    with jax.default_device(cpu):
        from weft._src.jax import get_jax_device
        assert get_jax_device() == cpu


def test_a_gpu_of_another_process_is_refused():
    class OtherGpu:
        platform, process_index, local_hardware_id = "gpu", 5, 0

    with pytest.raises(RuntimeError, match="belongs to process 5"):
        wp.device_from_jax(OtherGpu())


def test_shard_map_outputs_vary_like_their_inputs(tmp_path):
    script = tmp_path / "shard_map_check.py"  # (a file: weft reads kernels' source)
    script.write_text(textwrap.dedent("""
        import numpy as np, jax, jax.numpy as jnp
        import weft as wp

        @wp.kernel
        def copy(a: wp.array(dtype=float), b: wp.array(dtype=float)):
            i = wp.tid()
            b[i] = a[i]

        def copy_fn(a: wp.array(dtype=float), b: wp.array(dtype=float)):
            wp.launch(copy, dim=a.shape, inputs=[a, b])

        P = jax.sharding.PartitionSpec
        mesh = jax.sharding.Mesh(np.array(jax.devices("cpu")[:2]), ("x",))
        for op in (wp.jax_kernel(copy), wp.jax_callable(copy_fn)):
            @jax.shard_map(mesh=mesh, in_specs=P("x"), out_specs=P("x"), check_vma=True)
            def scan_copy(x, op=op):
                return jax.lax.scan(lambda c, _: (op(c)[0], None), x, None, length=2)[0]
            np.testing.assert_array_equal(np.asarray(scan_copy(jnp.arange(16.0, dtype=jnp.float32))),
                                          np.arange(16.0))
        print("ok")
    """))
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    result = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr[-3000:]


def test_a_function_with_side_effects_runs_even_when_its_outputs_are_unused():
    calls = []

    def counted(a: wp.array(dtype=float), out: wp.array(dtype=float)):
        calls.append(a.shape)

    pure = wp.jax_callable(counted)
    effect = wp.jax_callable(counted, has_side_effect=True)

    def unused(op, x):
        op(x)
        return x + 1.0

    x = jnp.ones(3, dtype=jnp.float32)
    jax.block_until_ready(jax.jit(partial(unused, pure))(x))
    assert calls == []  # a pure op whose result is unused is removed
    jax.block_until_ready(jax.jit(partial(unused, effect))(x))
    assert calls == [(3,)]
    (out,) = jax.vmap(effect)(jnp.ones((2, 3), dtype=jnp.float32))  # one call per batch element
    assert out.shape == (2, 3) and len(calls) == 3


def test_raw_ffi_callback_with_attributes():
    """Warp's register_ffi_callback: XLA's buffers as numpy views (vec2 arrays as (n, 2)),
    the call's attributes as a dict; errors come back as exceptions."""
    from weft._src.jax import get_jax_device
    from weft._src.jax.ffi import register_ffi_callback

    seen = {}

    def scale_both_raw(inputs, outputs, attrs, ctx):
        a, b = inputs
        c, d = outputs
        seen.update(attrs, stream=ctx.stream, device=wp.device_from_jax(get_jax_device()))
        wp.launch(scale, dim=a.shape, inputs=[a, attrs["scale"]], outputs=[c])
        wp.launch(scale_vec, dim=b.shape[0], inputs=[b, attrs["scale"]], outputs=[d])

    register_ffi_callback("weft_test_scale_both", scale_both_raw)
    a, b = jnp.arange(6, dtype=jnp.float32), jnp.arange(6, dtype=jnp.float32).reshape(3, 2)
    call = jax.ffi.ffi_call("weft_test_scale_both", [jax.ShapeDtypeStruct(a.shape, a.dtype),
                                                     jax.ShapeDtypeStruct(b.shape, b.dtype)])
    c, d = jax.jit(lambda a, b: call(a, b, scale=np.float32(2.0), label="x"))(a, b)
    np.testing.assert_array_equal(np.asarray(c), 2.0 * np.arange(6))
    np.testing.assert_array_equal(np.asarray(d), 2.0 * np.arange(6).reshape(3, 2))
    assert seen == {"scale": 2.0, "label": "x", "stream": None, "device": wp.get_device("cpu")}

    def refuses(inputs, outputs, attrs, ctx):
        raise ValueError("refused by the callback")

    register_ffi_callback("weft_test_refuses", refuses)
    with pytest.raises(Exception, match="refused by the callback"):
        jax.block_until_ready(jax.ffi.ffi_call("weft_test_refuses", jax.ShapeDtypeStruct((2,), jnp.float32))(a))
