"""wp.tile[...] annotation types (tile values themselves are issue 11)."""

from typing import Any, Literal

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import CompileError


def test_tile_subscripts():
    t = wp.tile[float]
    assert wp.types.is_tile(t) and t.dtype is wp.float32 and t.shape is Any and t.storage == "register"
    assert wp.tile[float, Literal[8], Literal[4]].shape == (8, 4)
    assert wp.tile[wp.float64, 16, 8].shape == (16, 8) and wp.tile[wp.float64, 16, 8].dtype is wp.float64
    assert wp.tile[float, (4, 4)] is wp.tile[float, 4, 4]  # one cached type
    assert not wp.types.is_tile(wp.vec3)


def test_tile_errors():
    with pytest.raises(TypeError, match="requires at least a dtype"):
        wp.tile[()]
    with pytest.raises(TypeError, match="positive integer"):
        wp.tile[float, -1, 4]
    with pytest.raises(RuntimeError, match="only be called inside a kernel"):
        wp.tile(1.0)


def test_a_func_annotated_with_tiles_can_be_defined():
    @wp.func
    def passthrough(t: wp.tile[float, Literal[8], Literal[4]]) -> wp.tile[float, Literal[8], Literal[4]]:
        return t

    assert passthrough is not None


@wp.func
def tile_twice(t: wp.tile[float]) -> wp.tile[float]:  # any shape: compiled per shape
    return t + t


@wp.kernel
def twice_of_two_shapes(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float)):
    wide = wp.tile_load(a, shape=(2, 4))
    wp.tile_store(b, tile_twice(wide))
    tall = wp.tile_load(a, shape=(4, 1), offset=(0, 0))
    wp.tile_store(b, tile_twice(tall), offset=(0, 4))


@wp.kernel
def twice_of_float64(a: wp.array2d(dtype=wp.float64), b: wp.array2d(dtype=wp.float64)):
    wp.tile_store(b, tile_twice(wp.tile_load(a, shape=(2, 2))))


def test_a_func_annotated_with_a_dtype_only_tile_takes_any_shape_of_that_dtype():
    import numpy as np
    a = wp.array(np.arange(20.0).reshape(4, 5), dtype=float)
    b = wp.zeros((4, 5))
    wp.launch_tiled(twice_of_two_shapes, dim=[1], inputs=[a, b], block_dim=1)
    want = np.zeros((4, 5))
    want[:2, :4] = 2 * a.numpy()[:2, :4]
    want[:, 4] = 2 * a.numpy()[:, 0]
    assert np.array_equal(b.numpy(), want)
    with pytest.raises(RuntimeError, match=r"expects tile\(dtype=float32, shape=\(Any\)\), got tile\(dtype=float64"):
        x = wp.zeros((2, 2), dtype=wp.float64)
        wp.launch_tiled(twice_of_float64, dim=[1], inputs=[x, x], block_dim=1)


@wp.func
def doubled(t: wp.tile[float]) -> wp.tile[float]:
    return t * 2.0


@wp.func
def first_row(t: wp.tile[float, 2, 3]):
    return t[0]


@wp.kernel(module="unique")
def use_dtype_only_tiles(a: wp.array2d[float], b: wp.array[float], out2: wp.array2d[float], out1: wp.array[float]):
    wp.tile_store(out2, doubled(wp.tile_load(a, shape=(2, 3))))
    wp.tile_store(out1, doubled(wp.tile_load(b, shape=5)))  # the same func, another shape


def test_a_func_parameter_annotated_with_a_tile_dtype_only_takes_any_shape():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(5, dtype=np.float32)
    out2, out1 = wp.zeros((2, 3), dtype=float), wp.zeros(5, dtype=float)
    wp.launch_tiled(use_dtype_only_tiles, dim=[1], inputs=[wp.array(a), wp.array(b), out2, out1], block_dim=8)
    np.testing.assert_array_equal(out2.numpy(), 2 * a)
    np.testing.assert_array_equal(out1.numpy(), 2 * b)


def test_a_tile_annotation_still_checks_the_dtype_and_a_given_shape():
    @wp.kernel(module="unique")
    def wrong_dtype(a: wp.array[wp.float64], out: wp.array[wp.float64]):
        wp.tile_store(out, doubled(wp.tile_load(a, shape=4)))

    @wp.kernel(module="unique")
    def wrong_shape(a: wp.array2d[float], out: wp.array[float]):
        wp.tile_store(out, first_row(wp.tile_load(a, shape=(3, 3))))

    with pytest.raises(CompileError, match="doubled"):
        wp.launch_tiled(wrong_dtype, dim=[1], inputs=[wp.zeros(4, dtype=wp.float64), wp.zeros(4, dtype=wp.float64)],
                        block_dim=8)
    with pytest.raises(CompileError, match="first_row"):
        wp.launch_tiled(wrong_shape, dim=[1], inputs=[wp.zeros((3, 3), dtype=float), wp.zeros(3, dtype=float)],
                        block_dim=8)
