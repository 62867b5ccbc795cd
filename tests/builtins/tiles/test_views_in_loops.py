"""Tile views carried by loops and branches: writes through a view inside a loop body or
an `if` branch reach its source (the loop or the if carries both), and so do writes after
them; a view rebound in a loop body after a write through it is refused, and so is a write
through a variable that is a view on one path only."""

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import CompileError


def _run(kernel, n=3):
    out = wp.zeros((2, 4), dtype=float)
    wp.launch_tiled(kernel, dim=[1], inputs=[n, out], block_dim=8)
    return out.numpy()


@wp.kernel
def row_written_in_loop_and_after(n: int, out: wp.array2d[float]):
    t = wp.tile_zeros(shape=(2, 4), dtype=float)
    row = t[1]
    for i in range(n):
        row[i] = float(i + 1)
    row[3] = 9.0
    wp.tile_store(out, t)


@wp.kernel
def nested_loops(n: int, out: wp.array2d[float]):
    t = wp.tile_zeros(shape=(2, 4), dtype=float)
    row = t[0]
    for i in range(n):
        for _ in range(2):
            row[i] = row[i] + 1.0
    wp.tile_store(out, t)


@wp.kernel
def while_loop(n: int, out: wp.array2d[float]):
    t = wp.tile_zeros(shape=(2, 4), dtype=float)
    col = wp.tile_view(t, offset=(0, 1), shape=(2, 1))
    i = 0
    while i < n:
        col[i % 2, 0] = col[i % 2, 0] + 1.0
        i += 1
    wp.tile_store(out, t)


@wp.kernel
def view_taken_in_body(n: int, out: wp.array2d[float]):
    t = wp.tile_zeros(shape=(2, 4), dtype=float)
    for i in range(n):
        row = t[i % 2]
        row[i] = float(i + 1)
    wp.tile_store(out, t)


def test_writes_through_a_view_in_a_loop_reach_the_source():
    np.testing.assert_array_equal(_run(row_written_in_loop_and_after), [[0, 0, 0, 0], [1, 2, 3, 9]])
    np.testing.assert_array_equal(_run(nested_loops), [[2, 2, 2, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(_run(while_loop), [[0, 2, 0, 0], [0, 1, 0, 0]])
    np.testing.assert_array_equal(_run(view_taken_in_body), [[1, 0, 3, 0], [0, 2, 0, 0]])
    np.testing.assert_array_equal(_run(row_written_in_loop_and_after, 0), [[0, 0, 0, 0], [0, 0, 0, 9]])


@wp.kernel
def axpy_onto_broadcast_in_loop(bias_in: wp.array[float], n: int, out: wp.array2d[float]):
    bias = wp.tile_load(bias_in, shape=4)
    dest = wp.tile_broadcast(bias, shape=(2, 4))
    for _ in range(n):
        wp.tile_axpy(1.0, wp.tile_ones(shape=(2, 4), dtype=float), dest)
    wp.tile_store(out, dest)


def test_a_broadcast_updated_in_a_loop_accumulates_every_row_each_time():
    out = wp.zeros((2, 4), dtype=float)
    wp.launch_tiled(axpy_onto_broadcast_in_loop, dim=[1], inputs=[wp.array([1.0, 2.0, 3.0, 4.0], dtype=float), 3, out],
                    block_dim=8)
    np.testing.assert_array_equal(out.numpy(), [[7, 8, 9, 10]] * 2)


@wp.kernel
def rebound_after_write(n: int, out: wp.array2d[float]):
    t = wp.tile_zeros(shape=(2, 4), dtype=float)
    row = t[0]
    for i in range(n):
        row[i] = 1.0
        row = t[1]
    wp.tile_store(out, t)


def test_a_view_rebound_after_a_write_in_the_loop_is_refused():
    with pytest.raises((CompileError, ValueError), match="written through and then given another value"):
        _run(rebound_after_write)


@wp.kernel
def written_in_a_branch(n: int, out: wp.array2d[float]):
    t = wp.tile_zeros(shape=(2, 4), dtype=float)
    row = t[1]
    if n > 2:
        row[0] = 1.0
    for i in range(n):
        if i == 1:
            row[i] = 5.0
    row[3] = 2.0
    wp.tile_store(out, t)


@wp.kernel
def a_view_on_one_path(n: int, out: wp.array2d[float]):
    t = wp.tile_zeros(shape=(2, 4), dtype=float)
    row = t[1]
    if n > 2:
        row = wp.tile_zeros(shape=4, dtype=float)
    row[3] = 2.0
    wp.tile_store(out, t)


def test_writes_through_a_view_in_and_after_branches_reach_the_source():
    np.testing.assert_array_equal(_run(written_in_a_branch, 3), [[0, 0, 0, 0], [1, 5, 0, 2]])
    np.testing.assert_array_equal(_run(written_in_a_branch, 1), [[0, 0, 0, 0], [0, 0, 0, 2]])
    with pytest.raises((CompileError, ValueError), match="view of another tile"):
        _run(a_view_on_one_path)
