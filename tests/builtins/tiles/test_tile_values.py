"""Tiles as values: updates never leak into other values (in-place writes only where the
old value is dead), loop-carried tiles, tiles saved on the AD stack, bounds, views, and
launch_tiled's CPU block semantics."""

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import CompileError

F64 = wp.float64


@wp.kernel
def update_keeps_the_old_value(a: wp.array[float], out: wp.array2d[float]):
    t0 = wp.tile_load(a, shape=4)
    t1 = t0
    t1[0] = 100.0  # t0 is still read below: this must not write its buffer
    acc = wp.tile_zeros(shape=4, dtype=float)
    for i in range(3):
        u = t0  # a fresh copy each iteration: the update below must not reach t0
        u[i] = -1.0
        acc += u
    wp.tile_store(out[0], t0)
    wp.tile_store(out[1], t1)
    wp.tile_store(out[2], acc)


def test_an_update_does_not_change_other_values():
    a = wp.array([1.0, 2.0, 3.0, 4.0], dtype=float)
    out = wp.zeros((3, 4), dtype=float)
    wp.launch_tiled(update_keeps_the_old_value, dim=[1], inputs=[a, out], block_dim=8)
    np.testing.assert_array_equal(out.numpy()[0], [1, 2, 3, 4])
    np.testing.assert_array_equal(out.numpy()[1], [100, 2, 3, 4])
    np.testing.assert_array_equal(out.numpy()[2], [1 * 3 - 1 - 1, 2 * 3 - 2 - 1, 3 * 3 - 3 - 1, 12])


@wp.kernel
def swap_in_loop(a: wp.array[float], b: wp.array[float], n: int, out: wp.array2d[float]):
    x = wp.tile_load(a, shape=3)
    y = wp.tile_load(b, shape=3)
    for _ in range(n):
        x, y = y, x + y  # two carried tiles, one yielding the other's buffer
    wp.tile_store(out[0], x)
    wp.tile_store(out[1], y)


def test_loop_carried_tiles_swap():
    a, b = np.array([1.0, 0.0, 2.0]), np.array([0.0, 1.0, 3.0])
    out = wp.zeros((2, 3), dtype=float)
    wp.launch_tiled(swap_in_loop, dim=[1], inputs=[wp.array(a, dtype=float), wp.array(b, dtype=float), 5, out],
                    block_dim=4)
    x, y = a.copy(), b.copy()
    for _ in range(5):
        x, y = y, x + y
    np.testing.assert_array_equal(out.numpy(), [x, y])


@wp.kernel
def power_by_loop(a: wp.array[F64], n: int, out: wp.array[F64]):
    x = wp.tile_load(a, shape=4)
    t = wp.tile_ones(shape=4, dtype=F64)
    for _ in range(n):  # dynamic: each iteration's t is saved for the reverse sweep
        t = wp.tile_map(wp.sin, t) * x
    wp.tile_store(out, t)


def test_gradient_through_a_dynamic_loop_of_tiles_matches_the_chain_rule():
    x = np.array([0.3, -0.7, 1.1, 0.5])
    a = wp.array(x, dtype=F64, requires_grad=True)
    out = wp.zeros(4, dtype=F64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch_tiled(power_by_loop, dim=[1], inputs=[a, 4, out], block_dim=8)
    out.grad = wp.ones(4, dtype=F64)
    tape.backward()
    t, dt = np.ones(4), np.zeros(4)  # forward-mode reference: dt = d t / d x
    for _ in range(4):
        t, dt = np.sin(t) * x, np.cos(t) * dt * x + np.sin(t)
    np.testing.assert_allclose(out.numpy(), t, rtol=1e-14)
    np.testing.assert_allclose(a.grad.numpy(), dt, rtol=1e-13)


@wp.kernel
def load_store_edges(a: wp.array[float], offset: int, out: wp.array[float]):
    t = wp.tile_load(a, shape=4, offset=offset)
    wp.tile_store(out, t + 1.0, offset=offset)


def test_out_of_range_loads_read_zero_and_stores_are_skipped():
    a = wp.array([1.0, 2.0, 3.0, 4.0, 5.0], dtype=float)
    out = wp.full(5, -7.0, dtype=float)
    wp.launch_tiled(load_store_edges, dim=[1], inputs=[a, 3, out], block_dim=4)
    np.testing.assert_array_equal(out.numpy(), [-7, -7, -7, 5, 6])


@wp.kernel
def element_index(a: wp.array[float], i: int, out: wp.array[float]):
    t = wp.tile_load(a, shape=4)
    out[0] = t[i]


def test_an_element_index_out_of_range_is_an_index_error_after_the_launch():
    out = wp.zeros(1, dtype=float)
    with pytest.raises(IndexError, match="out of bounds for tile element"):
        wp.launch_tiled(element_index, dim=[1], inputs=[wp.ones(4, dtype=float), 4, out], block_dim=4)


@wp.kernel
def write_views(a: wp.array2d[float], n: int, out: wp.array2d[float]):
    t = wp.tile_load(a, shape=(3, 4))
    b = wp.tile_zeros(shape=(3, 4), dtype=float)
    for i in range(3):  # unrolled: each row view written through into b
        row = b[i]
        wp.tile_assign(row, t[i] * 2.0)
    col = wp.tile_view(b, offset=(0, 1), shape=(3, 1))
    col[1, 0] = -1.0  # into b[1, 1]
    flat = wp.tile_reshape(b, shape=(12,))
    flat[11] = 99.0  # into b[2, 3]
    for j in range(n):  # a dynamic loop: b is assigned in it, so writes through views may reach it
        b = b
        r = b[0]
        r[j] = 7.0
    wp.tile_store(out, b)


def test_writes_through_views_reach_their_source():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = wp.zeros((3, 4), dtype=float)
    wp.launch_tiled(write_views, dim=[1], inputs=[wp.array(a), 2, out], block_dim=4)
    want = a * 2
    want[1, 1] = -1
    want[2, 3] = 99
    want[0, :2] = 7
    np.testing.assert_array_equal(out.numpy(), want)


def test_a_view_whose_source_cannot_be_updated_is_refused():
    @wp.kernel
    def temporary_source(a: wp.array2d[float], out: wp.array2d[float]):
        t = wp.tile_load(a, shape=(2, 2))
        row = (t * 2.0)[0]  # a view of a temporary: nothing to write back into
        row[1] = 5.0
        wp.tile_store(out, t)

    with pytest.raises(CompileError, match="whose source weft cannot update"):
        wp.launch_tiled(temporary_source, dim=[1], inputs=[wp.zeros((2, 2)), wp.zeros((2, 2))], block_dim=4)



@wp.kernel
def source_in_loops(a: wp.array2d[float], n: int, out: wp.array2d[float]):
    t = wp.tile_load(a, shape=(2, 2))
    for _ in range(n):
        for k in range(n):
            row = t[k % 2]
            row[1] = row[1] + 1.0  # changes t, which no assignment in the loops names: they carry it
    wp.tile_store(out, t)


def test_loops_carry_a_source_written_through_a_view():
    out = wp.zeros((2, 2))
    a = wp.zeros((2, 2))
    wp.launch_tiled(source_in_loops, dim=[1], inputs=[a, 3, out], block_dim=4)
    np.testing.assert_array_equal(out.numpy(), [[0, 6], [0, 3]])


@wp.kernel
def thread_values(out: wp.array[int]):
    i = wp.tid()
    t = wp.tile(i * 2)
    out[i] = wp.untile(t) + wp.block_dim() * 1000 + t.shape[0] * 100


def test_a_cpu_block_is_one_thread():
    out = wp.zeros(5, dtype=int)
    wp.launch_tiled(thread_values, dim=[5], inputs=[out], block_dim=64)
    np.testing.assert_array_equal(out.numpy(), np.arange(5) * 2 + 1100)


@wp.struct
class Particle:
    mass: float
    vel: wp.vec3
    tag: wp.int8  # no arithmetic: keeps the left operand's value, gets no gradient


@wp.func
def energy(p: Particle):
    return 0.5 * p.mass * wp.dot(p.vel, p.vel)


@wp.kernel
def struct_tiles(parts: wp.array[Particle], out: wp.array[Particle], total: wp.array[float]):
    t = wp.tile_load(parts, shape=(3,))
    doubled = t + t  # field by field
    wp.tile_store(out, doubled)
    wp.tile_atomic_add(total, wp.tile_sum(wp.tile_map(energy, doubled)))


def test_struct_tiles_add_field_by_field_with_gradients():
    rng = np.random.default_rng(5)
    parts_np = np.zeros(3, dtype=wp.zeros(1, dtype=Particle).numpy().dtype)  # (the struct's C layout)
    parts_np["mass"] = rng.uniform(1, 2, 3)
    parts_np["vel"] = rng.normal(size=(3, 3))
    parts_np["tag"] = [1, 2, 3]
    parts = wp.array(parts_np, dtype=Particle, requires_grad=True)
    out = wp.zeros(3, dtype=Particle)
    total = wp.zeros(1, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch_tiled(struct_tiles, dim=[1], inputs=[parts, out, total], block_dim=4)
    got = out.numpy()
    np.testing.assert_allclose(got["mass"], 2 * parts_np["mass"], rtol=1e-6)
    np.testing.assert_allclose(got["vel"], 2 * parts_np["vel"], rtol=1e-6)
    np.testing.assert_array_equal(got["tag"], parts_np["tag"])
    tape.backward(loss=total)
    g = parts.grad.numpy()
    # E = sum 0.5 (2m) |2v|^2 = 4 m |v|^2: dE/dm = 4 |v|^2, dE/dv = 8 m v
    np.testing.assert_allclose(g["mass"], 4 * (parts_np["vel"] ** 2).sum(1), rtol=1e-5)
    np.testing.assert_allclose(g["vel"], 8 * parts_np["mass"][:, None] * parts_np["vel"], rtol=1e-5)


def test_tiles_too_big_for_a_thread_stack_are_a_compile_error():
    @wp.kernel
    def huge(out: wp.array[float]):
        t = wp.tile_zeros(shape=2_000_000, dtype=float)  # 8 MB: a thread's whole stack
        out[0] = t[0]

    with pytest.raises(CompileError, match="bytes of the thread's stack"):
        wp.launch_tiled(huge, dim=[1], inputs=[wp.zeros(1)], block_dim=1)


@wp.kernel
def _arg_extremes(a: wp.array2d(dtype=float), out: wp.array2d(dtype=int)):
    i = wp.tid()
    t = wp.tile_load(a[i], shape=8)
    out[i, 0] = wp.tile_argmin(t)[0]
    out[i, 1] = wp.tile_argmax(t)[0]


def _warp_arg_extreme(row, better):
    """Warp's CPU recurrence: the index moves to a strictly better element; the running
    extreme skips NaNs (fmin/fmax)."""
    best, index = row[0], 0
    for j, x in enumerate(row[1:], 1):
        if better(x, best):
            index = j
        if better(x, best) or np.isnan(best):
            best = x
    return index


def test_argmin_and_argmax_with_nans_follow_warps_recurrence():
    rng = np.random.default_rng(1)
    a = rng.integers(-5, 5, (64, 8)).astype(np.float32)
    a[rng.random(a.shape) < 0.25] = np.nan
    a[0] = [np.nan, 3.0, 5.0, -1.0, 2.0, 2.0, 7.0, 0.0]  # (Warp: 3 and 6, the extremes after the NaN)
    out = wp.zeros((64, 2), dtype=int)
    wp.launch_tiled(_arg_extremes, dim=64, inputs=[wp.array(a, dtype=float), out], block_dim=4)
    expected = [[_warp_arg_extreme(r, np.less), _warp_arg_extreme(r, np.greater)] for r in a]
    np.testing.assert_array_equal(out.numpy(), expected)
    assert out.numpy()[0].tolist() == [3, 6]


@wp.kernel
def rebinds_to_other_shapes(a: wp.array2d(dtype=float), out: wp.array(dtype=float)):
    m = wp.tile_load(a, shape=(4, 8))
    m = wp.tile_reshape(m, (32,))  # (a name may take a tile of another shape, as in Warp)
    m = m * 2.0
    wp.tile_store(out, m)


@wp.kernel
def rebinds_in_a_loop(a: wp.array2d(dtype=float), out: wp.array(dtype=float), n: int):
    m = wp.tile_load(a, shape=(4, 8))
    for _ in range(n):
        m = wp.tile_reshape(m, (32,))
    wp.tile_store(out, m)


def test_a_name_takes_tiles_of_other_shapes_outside_joins():
    a = wp.array(np.arange(32, dtype=np.float32).reshape(4, 8))
    out = wp.zeros(32, dtype=float)
    wp.launch_tiled(rebinds_to_other_shapes, dim=[1], inputs=[a, out], block_dim=32)
    np.testing.assert_array_equal(out.numpy(), 2.0 * np.arange(32))
    with pytest.raises(CompileError, match="'m' changes type in the loop body"):
        wp.launch_tiled(rebinds_in_a_loop, dim=[1], inputs=[a, out, 2], block_dim=32)
