"""wp.Texture1D/2D/3D on the CPU: construction, properties, copies, mip chains and errors
(sampling: tests/builtins/test_texture_sample.py)."""

import numpy as np
import pytest

import weft as wp

F = wp.TextureFilterMode
A = wp.TextureAddressMode


def test_shapes_channels_and_defaults_from_data():
    t = wp.Texture2D(np.zeros((3, 5, 4), np.float32))
    assert (t.ndim, t.width, t.height, t.depth, t.num_channels) == (2, 5, 3, 1, 4)
    assert t.dtype is wp.float32 and t.filter_mode == F.LINEAR and t.mip_filter_mode == F.LINEAR
    assert (t.address_mode_u, t.address_mode_v, t.address_mode_w) == (A.CLAMP, A.CLAMP, A.CLAMP)
    assert t.normalized_coords and t.num_mip_levels == 1 and not t.is_mipmapped and t.id != 0
    v = wp.Texture3D(wp.array(np.zeros((2, 3, 4, 2), np.float32), dtype=wp.vec2f).reshape((2, 3, 4)))
    assert (v.width, v.height, v.depth, v.num_channels) == (4, 3, 2, 2)
    i = wp.Texture1D(np.zeros(8, np.int32))
    assert i.dtype is wp.int32 and i.filter_mode == F.CLOSEST  # 32-bit integers: closest by default


def test_empty_texture_from_sizes_and_copy_round_trip():
    t = wp.Texture2D(width=4, height=3, num_channels=2, dtype=wp.uint8)
    data = np.arange(24, dtype=np.uint8).reshape(3, 4, 2)
    t.copy_from(data)
    out = np.zeros_like(data)
    t.copy_to(out)
    np.testing.assert_array_equal(out, data)
    dst = wp.zeros((3, 4, 2), dtype=wp.uint8)
    t.copy_to(dst)
    np.testing.assert_array_equal(dst.numpy(), data)
    other = wp.Texture2D(width=4, height=3, num_channels=2, dtype=wp.uint8)
    other.copy_from(t)
    back = np.zeros_like(data)
    other.copy_to(back)
    np.testing.assert_array_equal(back, data)


def test_copy_mismatches_are_value_errors_naming_shapes_and_types():
    t = wp.Texture2D(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"texture shape=\(2, 3\), source shape=\(2, 4\)"):
        t.copy_from(np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match="texture dtype=float32, source dtype=int32"):
        t.copy_from(np.zeros((2, 3), np.int32))
    with pytest.raises(ValueError, match=r"destination shape=\(2, 4\)"):
        t.copy_to(np.zeros((2, 4), np.float32))
    with pytest.raises(ValueError, match="Expected contiguous array or Texture"):
        t.copy_from([1, 2, 3])


@pytest.mark.parametrize("kwargs,message", [
    ({"filter_mode": 2}, "Invalid texture filter mode"),
    ({"mip_filter_mode": 7}, "Invalid texture mip filter mode"),
    ({"address_mode": 9}, "Invalid texture address mode"),
    ({"num_mip_levels": -1}, "num_mip_levels must be >= 0"),
    ({"num_mip_levels": 4}, "exceeds the maximum"),
])
def test_bad_settings_are_value_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        wp.Texture2D(np.zeros((4, 4), np.float32), **kwargs)


def test_bad_data_is_refused():
    with pytest.raises(ValueError, match="Unsupported texture dtype"):
        wp.Texture1D(np.zeros(4, np.float64))
    with pytest.raises(ValueError, match="num_channels must be 1, 2, or 4"):
        wp.Texture1D(np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match="2D texture data must be 2D or 3D"):
        wp.Texture2D(np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="filter_mode=TextureFilterMode.CLOSEST"):
        wp.Texture1D(np.zeros(4, np.uint32), filter_mode=F.LINEAR)
    with pytest.raises(ValueError, match="require data"):
        wp.Texture2D(width=4, height=4, num_channels=1, num_mip_levels=2)
    with pytest.raises(ValueError, match="does not match data width"):
        wp.Texture2D(np.zeros((4, 4), np.float32), width=5)


def test_mip_chain_shapes_and_box_filter():
    data = np.arange(5 * 6, dtype=np.float32).reshape(5, 6)
    t = wp.Texture2D(data, num_mip_levels=0)
    assert t.num_mip_levels == 3 and t._mip_shapes == [(6, 5, 1), (3, 2, 1), (1, 1, 1)]
    level1 = t._raw[1]
    # texel (x, y) of level 1 averages columns 2x, 2x + 1 of rows 2y, 2y + 1
    assert level1[1, 2] == np.mean(data[2:4, 4:6])
    with pytest.raises(RuntimeError, match="mipmapped"):
        t.copy_from(data)
    u8 = wp.Texture1D(np.array([0, 1, 255, 254], np.uint8), num_mip_levels=2)
    np.testing.assert_array_equal(u8._raw[1], [0, 254])  # rounded half to even, as numpy's rint


def test_cuda_handles_are_refused_on_the_cpu():
    t = wp.Texture1D(np.zeros(4, np.float32))
    for name in ("cuda_array", "cuda_texture", "cuda_surface"):
        with pytest.raises(RuntimeError, match="only supported for CUDA textures"):
            getattr(t, name)
