"""`weft.Launch` in Warp's form: made empty and filled in, adjoints from the arrays' .grad."""

import numpy as np

import weft as wp


@wp.kernel
def arange(out: wp.array(dtype=int)):
    out[wp.tid()] = wp.tid()


@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


@wp.struct
class Params:
    offset: int


@wp.kernel
def add_offset(p: Params, out: wp.array(dtype=int)):
    out[wp.tid()] = out[wp.tid()] + p.offset


def test_empty_launch_filled_in():
    out = wp.zeros(10, dtype=int)
    cmd = wp.Launch(arange, "cpu")
    cmd.launch()  # no threads yet
    cmd.set_param_by_name("out", out)
    cmd.set_dim(5)
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), [0, 1, 2, 3, 4, 0, 0, 0, 0, 0])


def test_adjoint_launch_uses_the_arrays_own_gradients():
    x = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    y.grad.fill_(1.0)
    cmd = wp.Launch(square, "cpu", adjoint=True)
    cmd.set_param_by_name("x", x)
    cmd.set_param_by_name("y", y)
    cmd.set_dim(3)
    cmd.launch()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(y.grad.numpy(), 0.0)  # (its own gradient: consumed, as in Warp)
    y.grad.fill_(1.0)
    gx = wp.zeros(3)  # an adjoint given explicitly wins
    cmd.set_param_by_name("x", gx, adjoint=True)
    cmd.launch()
    np.testing.assert_array_equal(gx.numpy(), [2.0, 4.0, 6.0])


def test_recorded_launch_sees_struct_fields_changed_later():
    p = Params()
    p.offset = 1
    out = wp.zeros(2, dtype=int)
    cmd = wp.launch(add_offset, dim=2, inputs=[p, out], record_cmd=True)
    cmd.launch()
    p.offset = 10
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), [11, 11])


def test_a_launch_does_not_keep_its_arrays_alive():
    import gc
    import weakref

    out = wp.zeros(4, dtype=int)
    ref = weakref.ref(out)
    wp.launch(arange, dim=4, inputs=[out])
    wp.launch(arange, dim=4, inputs=[out])  # the same array again: packed once
    np.testing.assert_array_equal(out.numpy(), [0, 1, 2, 3])
    del out
    gc.collect()
    assert ref() is None
    other = wp.zeros(2, dtype=int)  # a new array, perhaps at the same address: packed anew
    wp.launch(arange, dim=2, inputs=[other])
    np.testing.assert_array_equal(other.numpy(), [0, 1])


@wp.kernel
def composite_params(v: wp.vec3, m: wp.mat22, s: Params, out: wp.array(dtype=float), idx: wp.array(dtype=int)):
    out[0] = v[0] + m[1, 1] + float(s.offset + idx[0])


def test_params_are_listed_in_warps_order():
    """`params`: the launch bounds, the arguments, then (adjoint) one adjoint per parameter;
    unset numbers, composites and structs are zero, in the forward and the adjoint lists."""
    cmd = wp.Launch(composite_params, "cpu")
    assert cmd.params[0] is cmd.bounds == (0,)
    assert len(cmd.params) == 1 + 5 and cmd.params[4] is None and cmd.params[5] is None
    assert cmd.params[3].offset == 0
    np.testing.assert_array_equal(np.concatenate([np.ravel(cmd.params[k]) for k in (1, 2)]), np.zeros(7))
    cmd.set_dim(3)
    assert cmd.params[0] is cmd.bounds == (3,)

    out = wp.zeros(1, requires_grad=True)
    out.grad.fill_(1.0)
    adj = wp.Launch(composite_params, "cpu", adjoint=True)
    assert len(adj.params) == 1 + 2 * 5
    np.testing.assert_array_equal(np.concatenate([np.ravel(adj.params[k]) for k in (6, 7)]), np.zeros(7))
    assert adj.params[8].offset == 0
    adj.set_param_by_name("out", out)
    assert adj.params[4] is out and adj.params[9] is out.grad  # an array's adjoint: its .grad
    assert adj.params[10] is None  # an int array has no adjoint
    adj.set_param_by_name("idx", wp.zeros(1, dtype=int))
    adj.set_dim(1)
    adj.launch()


@wp.kernel
def block_size(out: wp.array(dtype=int)):
    out[wp.tid()] = wp.block_dim()


def test_cpu_block_dim_is_one_unless_cpu_blocks_are_enabled():
    import pytest
    saved = wp.config.enable_cpu_blocks
    try:
        wp.config.enable_cpu_blocks = False
        assert wp.Launch(block_size, "cpu").block_dim == 1
        assert wp.Launch(block_size, "cpu", block_dim=4).block_dim == 1
        wp.config.enable_cpu_blocks = True
        assert wp.Launch(block_size, "cpu").block_dim == 1
        assert wp.Launch(block_size, "cpu", block_dim=4).block_dim == 4
        out = wp.zeros(8, dtype=int)
        command = wp.launch(block_size, 8, inputs=[out], block_dim=4, record_cmd=True)
        assert command.block_dim == 4
        command.launch()
        assert out.numpy().tolist() == [4] * 8
        for enabled in (False, True):
            wp.config.enable_cpu_blocks = enabled
            with pytest.raises(ValueError, match="at most 1024 on CPU"):
                wp.launch(block_size, 0, inputs=[out], block_dim=1025)
            with pytest.raises(ValueError, match="at most 1024 on CPU"):
                wp.Launch(block_size, "cpu", block_dim=1025)
            with pytest.raises(ValueError, match="at most 1024 on CPU"):
                wp.force_load(modules=[block_size.module], block_dim=1025)
    finally:
        wp.config.enable_cpu_blocks = saved


@wp.kernel
def scale_by_block(values: wp.array(dtype=float), output: wp.array(dtype=float)):
    i = wp.tid()
    output[i] = values[i] * float(wp.block_dim()) + 17.0


def test_a_launch_made_under_cpu_blocks_runs_blocks_forward_and_adjoint():
    saved = wp.config.enable_cpu_blocks
    host = np.arange(11, dtype=np.float32) - 3.0
    for block_dim in (1, 4):
        values, output = wp.array(host, dtype=float), wp.zeros(11, dtype=float)
        adj_values, adj_output = wp.zeros(11, dtype=float), wp.ones(11, dtype=float)
        commands = []
        for adjoint in (False, True):
            wp.config.enable_cpu_blocks = True
            try:
                commands.append(wp.Launch(scale_by_block, "cpu", block_dim=block_dim, adjoint=adjoint))
            finally:
                wp.config.enable_cpu_blocks = saved
        forward, backward = commands
        forward.set_dim(11)  # (the block program depends on the launch's shape)
        forward.set_params((values, output))
        forward.launch()
        np.testing.assert_array_equal(output.numpy(), host * block_dim + 17.0)
        backward.set_dim(11)
        backward.set_params((values, output))
        backward.set_param_at_index(0, adj_values, adjoint=True)
        backward.set_param_at_index(1, adj_output, adjoint=True)
        backward.launch()
        np.testing.assert_array_equal(adj_values.numpy(), np.full(11, float(block_dim)))
