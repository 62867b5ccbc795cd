"""Where weft's gradient deliberately differs from what Warp's own tests expect, because
Warp's is wrong or Warp refuses something weft gets right. Each test states the right value.

- Warp's test_tape_copy_adjoint_out_of_scope: an overlapping copy within one array keeps
  the incoming gradient as it is (Warp copies the gradient's bytes); the gradient of
  y[1:4] = y[0:3] followed by sum(y) is [2, 1, 1, 0].
- Warp's test_array_composite_slot_multiply_assign_backward_rejected: `dst[0].x *= src[0]`
  is refused by Warp when backward is enabled; weft differentiates it exactly (the Tape
  keeps the old contents of dst for the adjoint).
- Warp's test_codegen.test_overloaded_slot_update_backward_rejected: a slot update through
  a user-redefined operator (`values[0].x += r` calling a @func `add`) is refused by Warp
  with backward enabled; weft differentiates the redefined operator like any @func call.
"""

import numpy as np

import weft as wp

from . import slot_operator_kernels as ops
from .helpers import check_adjoint


@wp.kernel
def total(x: wp.array(dtype=float), loss: wp.array(dtype=float)):
    wp.atomic_add(loss, 0, x[wp.tid()])


def test_overlapping_copy_within_one_array():
    y = wp.array(np.arange(1.0, 5.0, dtype=np.float32), requires_grad=True)
    loss = wp.zeros(1, requires_grad=True)
    with wp.Tape() as tape:
        wp.copy(y, y, dest_offset=1, src_offset=0, count=3)  # y = [y0, y0, y1, y2]
        wp.launch(total, 4, inputs=[y, loss])
    assert y.numpy().tolist() == [1.0, 1.0, 2.0, 3.0]
    tape.backward(loss=loss)
    # d(sum of new y) / d(old y): y0 appears twice, y1 and y2 once, y3 is gone
    assert y.grad.numpy().tolist() == [2.0, 1.0, 1.0, 0.0]


@wp.kernel
def scale_component(src: wp.array(dtype=float), dst: wp.array(dtype=wp.vec3)):
    dst[0].x *= src[0]


def test_component_multiply_assign_on_an_array_element():
    src = wp.array([2.0], dtype=float, requires_grad=True)
    dst = wp.array([[5.0, 1.0, 0.0]], dtype=wp.vec3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(scale_component, 1, inputs=[src, dst])
    assert dst.numpy().tolist() == [[10.0, 1.0, 0.0]]
    dst.grad.assign(np.array([[1.0, 2.0, 3.0]], np.float32))
    tape.backward()
    assert src.grad.numpy().tolist() == [5.0]  # d(x * s) / ds = the old x
    assert dst.grad.numpy().tolist() == [[2.0, 2.0, 3.0]]  # old x scaled by s; y, z pass through


@wp.kernel
def scale_slots(s: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat22d)):
    i = wp.tid()
    v[i].x *= s[i]  # a component of an array element, multiplied in place
    v[i][2] *= v[i].x  # reading the component just updated
    m[i][1, 0] *= s[i] * s[i]
    m[i][0] = m[i][0] * v[i].y  # a whole row, read, scaled and written back


def test_slot_multiply_assign_matches_finite_differences():
    # (the in-place updates Warp refuses with backward enabled; every element of v and m is
    # both read and written, so the adjoint must use the old contents, not the new ones)
    rng = np.random.default_rng(3)
    s, v, m = rng.uniform(0.5, 1.5, 5), rng.standard_normal((5, 3)), rng.standard_normal((5, 2, 2))
    g = check_adjoint(scale_slots, 5, [s, (v, wp.vec3d), (m, wp.mat22d)])
    assert all(np.any(x != 0) for x in g)


def test_slot_updates_through_redefined_operators_match_finite_differences():
    rng = np.random.default_rng(5)
    v, r = rng.standard_normal((4, 3)), rng.uniform(0.5, 1.5, 4)
    for kernel, row in ((ops.slot_add, 0), (ops.slot_sub, 1), (ops.slot_add_in_func, 2)):
        values, rhs = wp.array(v, dtype=wp.vec3d), wp.array(r, dtype=wp.float64)
        wp.launch(kernel, 4, inputs=[values, rhs])
        want = v.copy()
        want[:, row] = v[:, row] * r if kernel is ops.slot_sub else v[:, row] - r
        np.testing.assert_array_equal(values.numpy(), want)  # the redefined operators ran
        g_values, g_rhs = check_adjoint(kernel, 4, [(v, wp.vec3d), r])
        assert np.all(g_rhs != 0.0)
