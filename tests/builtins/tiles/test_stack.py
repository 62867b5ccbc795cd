"""tile_stack and tile_stack_push/pop/clear/count: one thread per block on the CPU, a
stack shared by reference with funcs, capacity and type checks."""

import numpy as np
import pytest

import weft as wp

CAP = wp.constant(4)


@wp.func
def _push_twice(s: wp.tile_stack(capacity=CAP, dtype=int), value: int):
    wp.tile_stack_push(s, value, True)
    wp.tile_stack_push(s, value + 1, True)


@wp.kernel
def _stack_ops(out: wp.array(dtype=int)):
    s = wp.tile_stack(capacity=CAP, dtype=int)
    out[0] = wp.tile_stack_push(s, 5, True)
    _push_twice(s, 6)  # the func pushes onto this stack
    out[1] = wp.tile_stack_push(s, 9, False)
    out[2] = wp.tile_stack_count(s)
    value, slot = wp.tile_stack_pop(s)
    out[3] = value
    out[4] = slot
    for i in range(4):
        wp.tile_stack_push(s, 10 * (i + 1), True)  # room for two: the others are dropped
    out[5] = wp.tile_stack_count(s)
    k = 6
    while wp.tile_stack_count(s) > 0:
        v, _ = wp.tile_stack_pop(s)
        out[k] = v
        k += 1
    v, slot = wp.tile_stack_pop(s)  # empty: a zero and slot -1
    out[10] = v
    out[11] = slot
    wp.tile_stack_push(s, 1, True)
    wp.tile_stack_clear(s)
    out[12] = wp.tile_stack_count(s)
    out[13] = wp.tile_stack_push(s, 2, True)  # after a clear, slot 0 again


def test_push_pop_clear_count_and_a_func_sharing_the_stack():
    out = wp.full(14, -9, dtype=int)
    wp.launch_tiled(_stack_ops, dim=[3], inputs=[out], block_dim=1)
    np.testing.assert_array_equal(out.numpy(), [0, -1, 3, 7, 2, 4, 20, 10, 6, 5, 0, -1, 0, 0])


def test_stacks_of_vectors_and_half_floats_are_independent():
    @wp.kernel
    def two_stacks(vecs: wp.array(dtype=wp.vec3), halves: wp.array(dtype=wp.float16)):
        a = wp.tile_stack(capacity=2, dtype=wp.vec3)
        b = wp.tile_stack(capacity=3, dtype=wp.float16)
        wp.tile_stack_push(a, wp.vec3(1.0, 2.0, 3.0), True)
        wp.tile_stack_push(b, wp.float16(0.5), True)
        wp.tile_stack_push(b, wp.float16(1.5), True)
        v, _ = wp.tile_stack_pop(a)
        vecs[0] = v
        v, _ = wp.tile_stack_pop(a)
        vecs[1] = v
        h, _ = wp.tile_stack_pop(b)
        halves[0] = h
        halves[1] = wp.float16(float(wp.tile_stack_count(b)))

    vecs = wp.full(2, wp.vec3(7.0, 7.0, 7.0), dtype=wp.vec3)
    halves = wp.zeros(2, dtype=wp.float16)
    wp.launch_tiled(two_stacks, dim=[1], inputs=[vecs, halves], block_dim=1)
    np.testing.assert_array_equal(vecs.numpy(), [[1, 2, 3], [0, 0, 0]])
    np.testing.assert_array_equal(halves.numpy(), [1.5, 1.0])


@wp.struct
class _Item:
    a: float
    b: wp.vec2
    c: int


def test_a_stack_of_structs_and_the_empty_pop():
    @wp.kernel
    def structs(out: wp.array(dtype=_Item)):
        s = wp.tile_stack(capacity=2, dtype=_Item)
        p = _Item()
        p.a = 1.5
        p.b = wp.vec2(2.0, 3.0)
        p.c = 7
        wp.tile_stack_push(s, p, True)
        v, _ = wp.tile_stack_pop(s)
        out[0] = v
        v, _ = wp.tile_stack_pop(s)
        out[1] = v

    out = wp.zeros(2, dtype=_Item)
    wp.launch_tiled(structs, dim=[1], inputs=[out], block_dim=1)
    got = out.numpy()
    assert (got[0]["a"], list(got[0]["b"]), got[0]["c"]) == (1.5, [2.0, 3.0], 7)
    assert (got[1]["a"], list(got[1]["b"]), got[1]["c"]) == (0.0, [0.0, 0.0], 0)


def test_the_stack_type_in_python_scope_and_bad_arguments():
    assert wp.tile_stack(capacity=CAP, dtype=int) is wp.tile_stack(4, wp.int32)
    with pytest.raises(ValueError, match="positive integer"):
        wp.tile_stack(capacity=0, dtype=int)

    @wp.kernel
    def bool_capacity():
        wp.tile_stack(capacity=True, dtype=int)

    with pytest.raises(TypeError, match="tile_stack: capacity must be a compile-time integer"):
        wp.launch_tiled(bool_capacity, dim=[1], inputs=[], block_dim=1)

    @wp.kernel
    def mismatch():
        s = wp.tile_stack(capacity=CAP, dtype=int)
        wp.tile_stack_push(s, 1.0, True)

    with pytest.raises(TypeError, match="does not match the stack's dtype"):
        wp.launch_tiled(mismatch, dim=[1], inputs=[], block_dim=1)


def test_a_gradient_through_a_popped_value_is_refused():
    @wp.kernel
    def through_stack(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        s = wp.tile_stack(capacity=2, dtype=float)
        wp.tile_stack_push(s, x[0] * 2.0, True)
        v, _ = wp.tile_stack_pop(s)
        y[0] = x[0] * 3.0 + v

    x = wp.array([1.0], dtype=float, requires_grad=True)
    y = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(through_stack, dim=[1], inputs=[x, y], block_dim=1)
    assert y.numpy()[0] == 5.0
    with pytest.raises(Exception, match="builtin 'tile_stack_pop' has no derivative rule"):
        tape.backward(grads={y: wp.array([1.0], dtype=float)})
