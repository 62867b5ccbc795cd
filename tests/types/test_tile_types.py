"""wp.tile[...] annotation types (tile values themselves are issue 11)."""

from typing import Any, Literal

import pytest

import weft as wp


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
