"""The `storage` argument of tile constructors and tile_load: "register" and "shared" are
accepted (weft keeps every tile on the thread's stack), anything else is refused, and one
shared tile larger than Warp's 256 KiB CPU shared arena is refused as Warp refuses it."""

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import CompileError


def _run(make):
    out = wp.zeros(1, dtype=float)
    a = wp.ones(70000, dtype=float)
    wp.launch_tiled(make(), dim=[1], inputs=[a, out], block_dim=1)
    return out.numpy()[0]


def _zeros(n, storage):
    @wp.kernel(module="unique")
    def k(a: wp.array[float], out: wp.array[float]):
        t = wp.tile_zeros(shape=n, dtype=float, storage=storage)
        out[0] = t[n - 1] + 1.0
    return k


def _load(n, storage):
    @wp.kernel(module="unique")
    def k(a: wp.array[float], out: wp.array[float]):
        t = wp.tile_load(a, shape=n, storage=storage)
        out[0] = t[n - 1] * 2.0
    return k


def test_a_shared_tile_up_to_the_arena_size_runs():
    assert _run(lambda: _zeros(65536, "shared")) == 1.0
    assert _run(lambda: _load(65536, "shared")) == 2.0
    assert _run(lambda: _zeros(65537, "register")) == 1.0  # (register tiles are not in the arena)


@pytest.mark.parametrize("make", [_zeros, _load], ids=["tile_zeros", "tile_load"])
def test_a_shared_tile_larger_than_the_arena_is_refused(make):
    with pytest.raises((CompileError, ValueError), match="exceeds the 256 KiB arena"):
        _run(lambda: make(65537, "shared"))


def test_an_unknown_storage_is_refused():
    with pytest.raises((CompileError, ValueError), match="storage must be 'register' or 'shared'"):
        _run(lambda: _zeros(4, "global"))
    assert np.isfinite(_run(lambda: _zeros(4, "register")))


@wp.kernel
def _print_tiles(x: wp.array2d(dtype=float)):
    print(wp.tile_load(x, shape=(2, 2), storage="shared"))
    print(wp.tile_ones(shape=3, dtype=float))


def test_printed_tiles_name_their_shape_and_storage_as_warp_does(capfd):
    wp.launch_tiled(_print_tiles, dim=[1], inputs=[wp.array(np.array([[0.0, 0.5], [1.0, 1.5]]), dtype=float)],
                    block_dim=1)
    assert capfd.readouterr().out == ("[[0 0.5]\n [1 1.5]] = tile(shape=(2,2), storage=shared)\n"
                                      "[1 1 1] = tile(shape=(3), storage=register)\n")


@wp.kernel
def _print_results(x: wp.array2d(dtype=float)):
    t = wp.tile_load(x, shape=(2, 2))
    print(wp.tile_transpose(t))
    print(wp.tile_matmul(t, t))
    print(wp.tile_sum(t))


def test_transposes_and_products_print_as_shared_tiles(capfd):  # (Warp 1.19's output)
    wp.launch_tiled(_print_results, dim=[1], inputs=[wp.array(np.array([[0.0, 1.0], [2.0, 3.0]]), dtype=float)],
                    block_dim=1)
    assert capfd.readouterr().out == ("[[0 2]\n [1 3]] = tile(shape=(2,2), storage=shared)\n"
                                      "[[2 3]\n [6 11]] = tile(shape=(2,2), storage=shared)\n"
                                      "[6] = tile(shape=(1), storage=register)\n")
