"""DLPack: `array.__dlpack__` / `__dlpack_device__` export weft memory to numpy and torch
without copies, and `wp.from_dlpack` views numpy arrays, torch tensors and bare capsules
(legacy and versioned); vector dtypes take trailing dimensions; memory on other devices,
objects that do not speak DLPack and used capsules are refused clearly."""

import gc

import numpy as np
import pytest

import weft as wp

from .common import COPY, SCALARS, affine, torch_dtype
from .common import other as _other
from .common import values as _values


@wp.kernel
def vec_sum(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i][0] + a[i][1] + a[i][2]


class FakeDevice:
    """A DLPack producer whose memory is on another device."""

    def __init__(self, device):
        self.device = device
        self.exported = False

    def __dlpack__(self, **kwargs):
        self.exported = True
        raise AssertionError("weft must check the device before asking for the capsule")

    def __dlpack_device__(self):
        return self.device


# Export: numpy --------------------------------------------------------------------------------------
def test_dlpack_device_is_the_cpu():
    assert wp.zeros(3).__dlpack_device__() == (1, 0)
    assert wp.zeros((2, 2), dtype=wp.mat22).__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("name", SCALARS)
def test_numpy_from_dlpack_of_weft_array_shares_memory(name):
    a = wp.array(_values(name))
    n = np.from_dlpack(a)
    assert n.dtype == np.dtype(name) and n.shape == (6,)
    assert n.ctypes.data == a.ptr
    np.testing.assert_array_equal(n, _values(name))
    new = _other(name)
    n[3] = new[3]  # numpy write, seen by weft
    assert a.numpy()[3] == new[3]
    wp.launch(COPY[name], 6, inputs=[wp.array(new), a])  # kernel write, seen by numpy
    np.testing.assert_array_equal(n, new)


def test_numpy_from_dlpack_of_vector_and_strided_arrays():
    v = wp.array(np.arange(12, dtype=np.float32).reshape(4, 3), dtype=wp.vec3)
    n = np.from_dlpack(v)
    assert n.shape == (4, 3) and n.ctypes.data == v.ptr
    m = wp.zeros((2, 3), dtype=wp.mat22d)
    assert np.from_dlpack(m).shape == (2, 3, 2, 2) and np.from_dlpack(m).dtype == np.float64
    base = wp.array(np.arange(10, dtype=np.float32))
    s = np.from_dlpack(base[1::3])
    assert s.strides == (12,) and s.ctypes.data == base.ptr + 4
    np.testing.assert_array_equal(s, [1.0, 4.0, 7.0])


def test_dlpack_capsules_legacy_versioned_and_copied():
    a = wp.array(np.arange(6, dtype=np.float32))
    legacy = a.__dlpack__()
    assert "dltensor" in repr(legacy)
    assert wp.from_dlpack(legacy).ptr == a.ptr
    versioned = a.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(versioned)
    assert wp.from_dlpack(versioned).ptr == a.ptr
    copied = wp.from_dlpack(a.__dlpack__(copy=True))
    assert copied.ptr != a.ptr
    np.testing.assert_array_equal(copied.numpy(), a.numpy())


def test_dlpack_export_refuses_streams_and_other_devices():
    a = wp.zeros(3)
    with pytest.raises(BufferError, match="no stream"):
        a.__dlpack__(stream=1)
    with pytest.raises(BufferError, match=r"\(2, 0\)"):
        a.__dlpack__(dl_device=(2, 0))
    assert wp.from_dlpack(a.__dlpack__(dl_device=(1, 0))).ptr == a.ptr


# Export: torch --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SCALARS)
def test_torch_from_dlpack_of_weft_array_shares_memory(name):
    torch_dtype(name)  # skips where this torch lacks it
    torch = pytest.importorskip("torch")
    a = wp.array(_values(name))
    t = torch.from_dlpack(a)
    assert t.dtype == getattr(torch, name) and t.data_ptr() == a.ptr
    new = _other(name)
    t[0] = torch.from_numpy(new[:1])[0]  # torch write, seen by weft
    assert a.numpy()[0] == new[0]
    wp.launch(COPY[name], 6, inputs=[wp.array(new), a])  # kernel write, seen by torch
    np.testing.assert_array_equal(t.numpy(), new)


def test_torch_utils_from_dlpack_of_weft_capsule():
    torch = pytest.importorskip("torch")
    a = wp.array(np.arange(5, dtype=np.float32))
    t = torch.utils.dlpack.from_dlpack(a.__dlpack__())
    assert t.data_ptr() == a.ptr
    t.mul_(2.0)
    assert a.numpy().tolist() == [0.0, 2.0, 4.0, 6.0, 8.0]
    v = wp.zeros(3, dtype=wp.vec3)
    assert tuple(torch.from_dlpack(v).shape) == (3, 3)


# Import ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SCALARS)
def test_from_dlpack_of_numpy_shares_memory(name):
    n = _values(name)
    a = wp.from_dlpack(n)
    assert a.dtype is getattr(wp, name) and a.shape == (6,) and a.ptr == n.ctypes.data
    out = np.zeros(6, dtype=n.dtype)
    wp.launch(COPY[name], 6, inputs=[a, wp.from_dlpack(out)])  # a kernel reads and writes numpy memory
    np.testing.assert_array_equal(out, n)
    new = _other(name)
    n[5] = new[5]
    assert a.numpy()[5] == new[5]


@pytest.mark.parametrize("name", SCALARS)
def test_from_dlpack_of_torch_tensor_and_capsule_shares_memory(name):
    torch_dtype(name)  # skips where this torch lacks it
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(_values(name))
    a = wp.from_dlpack(t)
    assert a.dtype is getattr(wp, name) and a.ptr == t.data_ptr()
    c = torch.from_numpy(np.zeros(6, dtype=np.dtype(name)))
    b = wp.from_dlpack(torch.utils.dlpack.to_dlpack(c))  # a bare (legacy) capsule
    assert b.dtype is getattr(wp, name) and b.ptr == c.data_ptr()
    wp.launch(COPY[name], 6, inputs=[a, b])
    np.testing.assert_array_equal(c.numpy(), _values(name))
    new = _other(name)
    t[2] = torch.from_numpy(new[2:3])[0]
    assert a.numpy()[2] == new[2]


def test_from_dlpack_of_strided_sources():
    n = np.arange(20, dtype=np.float32)
    a = wp.from_dlpack(n[2::4])
    assert a.shape == (5,) and a.strides == (16,) and not a.is_contiguous
    assert a.ptr == n.ctypes.data + 8
    out = wp.zeros(5)
    wp.launch(affine, 5, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), np.arange(2, 20, 4) * 2.0 + 1.0)
    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert wp.from_dlpack(m.T).strides == (4, 16)


def test_from_dlpack_vec3_from_trailing_dimension():
    n = np.arange(12, dtype=np.float32).reshape(4, 3)
    a = wp.from_dlpack(n, dtype=wp.vec3)
    assert a.dtype is wp.vec3 and a.shape == (4,) and a.ptr == n.ctypes.data
    out = wp.zeros(4)
    wp.launch(vec_sum, 4, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), n.sum(axis=1))
    m = wp.from_dlpack(np.zeros((2, 5, 3, 3)), dtype=wp.mat33d)
    assert m.shape == (2, 5) and m.dtype is wp.mat33d
    with pytest.raises(TypeError, match="float64"):
        wp.from_dlpack(np.zeros((4, 3)), dtype=wp.vec3)
    with pytest.raises(ValueError, match="not contiguous"):
        wp.from_dlpack(np.zeros((3, 4), np.float32).T, dtype=wp.vec3)


def test_from_dlpack_vec3_from_torch():
    torch = pytest.importorskip("torch")
    t = torch.zeros(6, 3)
    a = wp.from_dlpack(t, dtype=wp.vec3)
    assert a.shape == (6,) and a.ptr == t.data_ptr()
    b = wp.from_dlpack(torch.utils.dlpack.to_dlpack(t), dtype=wp.vec3)
    assert b.shape == (6,) and b.ptr == t.data_ptr()


def test_from_dlpack_of_empty_sources_with_zero_strides():
    """An empty producer's strides mean nothing (torch reports (0, 0) for a (0, 3) tensor)."""
    torch = pytest.importorskip("torch")
    t = torch.zeros(0, 3)
    for source in (t, torch.utils.dlpack.to_dlpack(t)):
        a = wp.from_dlpack(source, dtype=wp.vec3)
        assert a.shape == (0,) and a.dtype is wp.vec3 and a.is_contiguous
    n = np.lib.stride_tricks.as_strided(np.zeros(4, np.float32), (2, 0, 2, 2), (0, 0, 0, 0))
    m = wp.from_dlpack(n, dtype=wp.mat22)
    assert m.shape == (2, 0) and m.dtype is wp.mat22
    wp.launch(vec_sum, 0, inputs=[wp.from_dlpack(t, dtype=wp.vec3), wp.zeros(0)])


def test_from_dlpack_of_weft_array():
    a = wp.zeros((4, 3))
    assert wp.from_dlpack(a) is a
    v = wp.from_dlpack(a, dtype=wp.vec3)
    assert v.shape == (4,) and v.dtype is wp.vec3 and v.ptr == a.ptr


def test_from_dlpack_zero_dim_gives_one_element():
    n = np.array(2.5, np.float32)
    a = wp.from_dlpack(n)
    assert a.shape == (1,) and a.numpy().tolist() == [2.5] and a.ptr == n.ctypes.data


def test_from_dlpack_keeps_the_source_memory_alive():
    torch = pytest.importorskip("torch")
    t = torch.arange(1000, dtype=torch.float32)
    a = wp.from_dlpack(t)
    capsule = torch.utils.dlpack.to_dlpack(torch.arange(1000, dtype=torch.float32) * 2)
    b = wp.from_dlpack(capsule)
    del t, capsule
    gc.collect()
    junk = [torch.full((1000,), -9.0) for _ in range(20)]
    np.testing.assert_array_equal(a.numpy(), np.arange(1000, dtype=np.float32))
    np.testing.assert_array_equal(b.numpy(), np.arange(1000, dtype=np.float32) * 2)
    del junk


# Errors ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("device, name", [((2, 0), "cuda:0"), ((2, 3), "cuda:3"), ((10, 0), "rocm:0"),
                                          ((13, 1), "cuda_managed:1")])
def test_from_dlpack_refuses_memory_on_other_devices(device, name):
    src = FakeDevice(device)
    with pytest.raises(ValueError, match=f"DLPack device {name}"):
        wp.from_dlpack(src)
    assert not src.exported


@pytest.mark.parametrize("value", [[1.0, 2.0], 3.0, "abc", object()])
def test_from_dlpack_needs_a_dlpack_object(value):
    with pytest.raises(TypeError, match="expected an object with __dlpack__"):
        wp.from_dlpack(value)


def test_from_dlpack_refuses_a_used_capsule():
    torch = pytest.importorskip("torch")
    capsule = torch.utils.dlpack.to_dlpack(torch.zeros(3))
    wp.from_dlpack(capsule)
    with pytest.raises(ValueError, match="used_dltensor"):
        wp.from_dlpack(capsule)


def test_from_dlpack_refuses_complex_data():
    with pytest.raises(TypeError, match="complex64"):
        wp.from_dlpack(np.zeros(3, np.complex64))


def test_bfloat16_through_dlpack_both_ways():
    """numpy's DLPack has no bfloat16: weft passes the bits as int16 and labels them bfloat16."""
    torch = pytest.importorskip("torch")
    t = torch.tensor([1.5, -2.0, 3.0], dtype=torch.bfloat16)
    a = wp.from_dlpack(t)
    assert a.dtype is wp.bfloat16 and a.ptr == t.data_ptr()
    np.testing.assert_array_equal(a.numpy().astype(np.float32), [1.5, -2.0, 3.0])
    back = torch.from_dlpack(a)
    assert back.dtype == torch.bfloat16 and back.data_ptr() == a.ptr
    b = wp.from_dlpack(wp.to_dlpack(a))
    assert b.dtype is wp.bfloat16 and b.ptr == a.ptr
    v = wp.from_dlpack(wp.to_dlpack(wp.zeros(2, dtype=wp.types.vector(3, wp.bfloat16))))
    assert v.dtype is wp.bfloat16 and v.shape == (2, 3)


# Warp's DLPack API -----------------------------------------------------------------------------------
def test_to_dlpack_round_trip_and_integer_reinterpretation():
    a = wp.array(np.array([True, False, True]))
    b = wp.from_dlpack(wp.to_dlpack(a))
    assert b.ptr == a.ptr and b.dtype is wp.bool and b.strides == a.strides
    c = wp.from_dlpack(wp.to_dlpack(a), dtype=wp.uint8)
    assert c.dtype is wp.uint8 and c.ptr == a.ptr
    np.testing.assert_array_equal(c.numpy(), [1, 0, 1])
    v = wp.from_dlpack(wp.to_dlpack(wp.zeros((4, 3), dtype=wp.int32)), dtype=wp.types.vector(3, wp.uint32))
    assert v.shape == (4,)
    with pytest.raises(RuntimeError, match="Incompatible data types: DLPack bool8 and Warp float32"):
        wp.from_dlpack(wp.to_dlpack(a), dtype=wp.float32)


def test_dlpack_stream_argument_on_the_cpu():
    a = wp.array(np.arange(4.0))
    for ok in (None, -1):
        assert wp.from_dlpack(a.__dlpack__(stream=ok)).ptr == a.ptr
    for bad in (0, 1, 2, -2, "nope"):
        with pytest.raises(TypeError, match="DLPack stream must be None or -1 for CPU device"):
            a.__dlpack__(stream=bad)


def test_from_dlpack_errors_in_warps_words():
    class Elsewhere:
        def __dlpack_device__(self):
            return (123, 7)

        def __dlpack__(self, stream=None):
            raise AssertionError("not called")

    class NotACapsule:
        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, stream=None):
            return object()

    with pytest.raises(TypeError, match="Unsupported source device for DLPack: device_type=123, device_id=7"):
        wp.from_dlpack(Elsewhere())
    with pytest.raises(TypeError, match="Expected a valid DLPack capsule, got object"):
        wp.from_dlpack(NotACapsule())


def test_export_of_an_array_over_a_read_only_buffer():
    data = np.arange(6, dtype=np.float32)
    data.flags.writeable = False
    a = wp.array(data, copy=False)
    b = wp.from_dlpack(wp.to_dlpack(a))
    assert b.ptr == a.ptr == data.ctypes.data
