"""JAX interop: `wp.from_jax` views a JAX array's memory (zero copy, writable as in Warp),
`wp.to_jax` and `jax.dlpack.from_dlpack(weft_array)` give JAX arrays sharing a weft array's
memory (weft allocations are 64-byte aligned, as XLA needs), and `wp.dtype_from_jax` /
`wp.dtype_to_jax` map dtypes."""

import gc

import numpy as np
import pytest

import weft as wp

from .common import COPY, affine, values
from .common import SCALARS as ALL_SCALARS

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
pytest.importorskip("jax.dlpack")

# JAX's default (32-bit) dtypes; 64-bit ones need x64 mode (see test_float64_and_int64_under_x64)
SCALARS = [name for name in ALL_SCALARS if name not in ("int64", "uint64", "float64")]


@wp.kernel
def vec_dot(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.dot(a[i], wp.vec3(1.0, 10.0, 100.0))


@wp.kernel
def scale64(a: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = a[i] * wp.float64(3.0)


def _values(name, n=8):
    return values(name, n)


def _aligned(name, n, alignment=64):
    """A weft array of `n` `name` values (`_values`, repeated) whose data is `alignment`-byte aligned:
    a slice of a larger allocation."""
    itemsize = np.dtype(name).itemsize
    base = wp.zeros(n + alignment // itemsize, dtype=getattr(wp, name))
    start = ((-base.ptr) % alignment) // itemsize
    view = base[start:start + n]
    assert view.ptr % alignment == 0
    view.numpy()[:] = np.resize(_values(name), n)
    return view


# JAX -> weft ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SCALARS)
def test_from_jax_is_zero_copy(name):
    x = jnp.asarray(_values(name))
    assert x.dtype == np.dtype(name)
    a = wp.from_jax(x)
    assert a.dtype is getattr(wp, name) and a.shape == (8,)
    assert a.ptr == x.unsafe_buffer_pointer()
    np.testing.assert_array_equal(a.numpy(), _values(name))
    out = wp.zeros(8, dtype=getattr(wp, name))
    wp.launch(COPY[name], 8, inputs=[a, out])  # a kernel reads JAX's memory
    np.testing.assert_array_equal(out.numpy(), _values(name))


def test_kernel_reading_a_jax_array_computes_the_right_values():
    x = jnp.linspace(-1.0, 1.0, 33, dtype=jnp.float32) ** 2
    a = wp.from_jax(x)
    out = wp.zeros(33)
    wp.launch(affine, 33, inputs=[a, out])
    np.testing.assert_allclose(out.numpy(), np.asarray(x) * 2.0 + 1.0, rtol=1e-6)
    assert np.asarray(x).tolist() == a.numpy().tolist()  # JAX's array was only read


def test_from_jax_is_writable_as_in_warp():
    # JAX's DLPack export is read-only; Warp's array over it is writable anyway, and programs
    # fill such arrays (e.g. outputs made with jnp.zeros): fill_, assign, numpy() and kernels
    x = jnp.zeros(4, dtype=jnp.float32)
    a = wp.from_jax(x)
    a.fill_(3.0)
    assert np.asarray(x).tolist() == [3.0] * 4
    a.numpy()[0] = 5.0
    a.assign(a.numpy() + 1.0)
    assert np.asarray(x).tolist() == [6.0, 4.0, 4.0, 4.0]
    wp.launch(affine, 4, inputs=[wp.array(np.ones(4, dtype=np.float32)), a])
    assert np.asarray(x).tolist() == [3.0] * 4


def test_from_jax_vec3_and_strided_results():
    x = jnp.arange(12, dtype=jnp.float32).reshape(4, 3)
    a = wp.from_jax(x, dtype=wp.vec3)
    assert a.dtype is wp.vec3 and a.shape == (4,) and a.ptr == x.unsafe_buffer_pointer()
    out = wp.zeros(4)
    wp.launch(vec_dot, 4, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), np.asarray(x) @ np.array([1.0, 10.0, 100.0], np.float32))
    with pytest.raises(TypeError, match="int32"):
        wp.from_jax(jnp.zeros((4, 3), jnp.int32), dtype=wp.vec3)
    with pytest.raises(ValueError, match="does not end in"):
        wp.from_jax(jnp.zeros((4, 2), jnp.float32), dtype=wp.vec3)
    m = wp.from_jax(jnp.zeros((2, 3, 3), jnp.float32), dtype=wp.mat33)
    assert m.shape == (2,) and m.dtype is wp.mat33


def test_float64_and_int64_under_x64():
    with jax.enable_x64():
        x = jnp.asarray(np.array([0.5, -2.0, 3.25]))
        k = jnp.asarray(np.array([-(2 ** 40), 7], np.int64))
    assert x.dtype == np.float64 and k.dtype == np.int64
    a = wp.from_jax(x)
    assert a.dtype is wp.float64 and a.ptr == x.unsafe_buffer_pointer()
    assert wp.from_jax(k).numpy().tolist() == [-(2 ** 40), 7]
    out = wp.zeros(3, dtype=wp.float64)
    wp.launch(scale64, 3, inputs=[a, out])
    assert out.numpy().tolist() == [1.5, -6.0, 9.75]
    with jax.enable_x64():
        back = wp.to_jax(wp.array(np.array([1.0, 2.5])))
        assert back.dtype == np.float64
        assert np.asarray(back).tolist() == [1.0, 2.5]


def test_from_jax_keeps_the_jax_memory_alive():
    x = jnp.arange(1000, dtype=jnp.float32) * 2.0
    a = wp.from_jax(x)
    del x
    gc.collect()
    junk = [jnp.full(1000, -9.0, jnp.float32) for _ in range(20)]
    np.testing.assert_array_equal(a.numpy(), np.arange(1000, dtype=np.float32) * 2.0)
    del junk


# weft -> JAX ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SCALARS)
def test_to_jax_shares_the_memory_of_weft_allocations(name):
    # weft aligns every allocation to 64 bytes, so JAX views it without a copy (as Warp's):
    # later writes to the array show in the JAX array
    a = wp.array(_values(name))
    assert a.ptr % 64 == 0
    x = wp.to_jax(a)
    assert x.dtype == np.dtype(name) and x.shape == (8,)
    assert x.unsafe_buffer_pointer() == a.ptr
    np.testing.assert_array_equal(np.asarray(x), _values(name))
    y = jax.dlpack.from_dlpack(a)
    np.testing.assert_array_equal(np.asarray(y), _values(name))
    a.zero_()
    assert not np.asarray(x).any()


@pytest.mark.parametrize("name", SCALARS)
def test_to_jax_of_64_byte_aligned_data_is_zero_copy(name):
    # Established on this machine (JAX 0.10, CPU): JAX aliases a DLPack buffer that is 64-byte
    # aligned and copies one that is not. So the pointers are compared for aligned data only.
    a = _aligned(name, 64)
    x = wp.to_jax(a)
    assert x.unsafe_buffer_pointer() == a.ptr
    y = jax.dlpack.from_dlpack(a)
    assert y.unsafe_buffer_pointer() == a.ptr
    np.testing.assert_array_equal(np.asarray(x), np.resize(_values(name), 64))
    np.testing.assert_array_equal(np.asarray(y), a.numpy())


def test_to_jax_of_unaligned_data_gives_the_values():
    base = _aligned("float32", 65)
    a = base[1:]  # 4 bytes past a 64-byte boundary: JAX copies (values only are asserted)
    x = wp.to_jax(a)
    np.testing.assert_array_equal(np.asarray(x), a.numpy())


def test_to_jax_of_vector_and_strided_arrays():
    v = wp.array(np.arange(15, dtype=np.float32).reshape(5, 3), dtype=wp.vec3)
    x = wp.to_jax(v)
    assert x.shape == (5, 3) and x.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(x), v.numpy())
    assert jax.dlpack.from_dlpack(wp.zeros(2, dtype=wp.mat22)).shape == (2, 2, 2)


@pytest.mark.parametrize("view", ["stepped", "reversed", "column"])
def test_to_jax_of_strided_views_gives_their_values(view):
    base = wp.array(np.arange(12, dtype=np.float32).reshape(3, 4))
    a = {"stepped": base[:, ::2], "reversed": base[::-1], "column": base[:, 1]}[view]
    np.testing.assert_array_equal(np.asarray(wp.to_jax(a)), a.numpy())


def test_round_trip_through_jax():
    a = _aligned("float32", 64)
    b = wp.from_jax(wp.to_jax(a))
    assert b.ptr == a.ptr  # zero copy both ways for aligned data
    np.testing.assert_array_equal(b.numpy(), a.numpy())


# dtypes ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SCALARS + ["int64", "uint64", "float64"])
def test_dtype_maps(name):
    t = getattr(wp, name)
    assert wp.dtype_from_jax(np.dtype(name)) is t
    assert wp.dtype_to_jax(t) == np.dtype(name)


def test_dtype_maps_of_jax_types_and_composites():
    assert wp.dtype_from_jax(jnp.float32) is wp.float32
    assert wp.dtype_from_jax(jnp.bool_) is wp.bool
    assert wp.dtype_from_jax(jnp.zeros(2, jnp.int16).dtype) is wp.int16
    assert wp.dtype_to_jax(wp.vec3) == jnp.float32
    assert wp.dtype_to_jax(wp.mat22d) == jnp.float64
    assert wp.dtype_to_jax(wp.types.vector(4, wp.uint8)) == jnp.uint8


@wp.struct
class Pair:
    a: float
    b: int


def test_dtype_errors():
    with pytest.raises(TypeError, match="complex64"):
        wp.dtype_from_jax(jnp.complex64)
    with pytest.raises(TypeError, match="no JAX equivalent"):
        wp.dtype_to_jax(Pair)
    with pytest.raises(TypeError, match="complex64"):
        wp.from_jax(jnp.zeros(3, jnp.complex64))


def test_bfloat16_both_ways():
    assert wp.dtype_from_jax(jnp.bfloat16) is wp.bfloat16 and wp.dtype_to_jax(wp.bfloat16) == jnp.bfloat16
    a = wp.array(np.array([1.0, 2.5, -3.0], np.float32), dtype=wp.bfloat16)
    j = wp.to_jax(a)
    assert j.dtype == jnp.bfloat16  # (a view where the memory is aligned as JAX needs: see _aligned)
    np.testing.assert_array_equal(np.asarray(j).astype(np.float32), [1.0, 2.5, -3.0])
    b = wp.from_jax(jnp.array([1.0, 3.0], dtype=jnp.bfloat16))
    assert b.dtype is wp.bfloat16
    np.testing.assert_array_equal(b.numpy().astype(np.float32), [1.0, 3.0])
