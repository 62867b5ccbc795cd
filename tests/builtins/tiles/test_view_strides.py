"""tile_reshape refuses a view whose elements Warp does not lay out densely (a stepped or
partial slice, a tile_view narrower than its source, a broadcast), as Warp's reshape (which
reinterprets the storage) does; dense views and copies reshape."""

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import CompileError


def _launch(body):
    @wp.kernel(module="unique", enable_backward=False)
    def k(a: wp.array2d[float], out: wp.array[float]):
        t = wp.tile_load(a, shape=(4, 4))
        wp.tile_store(out, body(t))
    a = wp.array(np.arange(16, dtype=np.float32).reshape(4, 4))
    out = wp.zeros(8, dtype=float)
    wp.launch_tiled(k, dim=[1], inputs=[a, out], block_dim=16)
    return out.numpy()


@wp.func
def stepped(t: wp.tile[float, 4, 4]):
    return wp.tile_reshape(t[::2, :], shape=(8,))


@wp.func
def narrow(t: wp.tile[float, 4, 4]):
    return wp.tile_reshape(wp.tile_view(t, offset=(0, 0), shape=(4, 2)), shape=(8,))


@wp.func
def broadcast(t: wp.tile[float, 4, 4]):
    return wp.tile_reshape(wp.tile_broadcast(wp.tile_view(t, offset=(0,)), shape=(2, 4)), shape=(8,))


@wp.func
def rows(t: wp.tile[float, 4, 4]):
    return wp.tile_reshape(t[1:3], shape=(8,))


@wp.func
def stepped_copy(t: wp.tile[float, 4, 4]):
    c = wp.tile_zeros(shape=(2, 4), dtype=float)
    wp.tile_assign(c, t[::2, :])
    return wp.tile_reshape(c, shape=(8,))


@pytest.mark.parametrize("body", [stepped, narrow, broadcast], ids=lambda f: f.name if hasattr(f, "name") else str(f))
def test_reshape_of_a_strided_view_is_refused(body):
    with pytest.raises((CompileError, ValueError), match="requires a contiguous tile"):
        _launch(body)


def test_reshape_of_dense_views_and_copies():
    np.testing.assert_array_equal(_launch(rows), np.arange(4, 12))
    np.testing.assert_array_equal(_launch(stepped_copy), [0, 1, 2, 3, 8, 9, 10, 11])
