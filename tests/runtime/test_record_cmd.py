"""`launch(..., record_cmd=True)`: a `Launch` that runs later, as often as wanted, with
parameters and launch shape changed in place."""

import numpy as np
import pytest

import weft as wp


@wp.kernel
def scale(a: wp.array(dtype=float), out: wp.array(dtype=float), s: float):
    i = wp.tid()
    out[i] = a[i] * s


@wp.kernel
def count(n: wp.array(dtype=int)):
    wp.atomic_add(n, 0, 1)


@wp.kernel
def grid(out: wp.array2d(dtype=int)):
    i, j = wp.tid()
    out[i, j] = i * 10 + j


def test_recording_does_not_run():
    a, out = wp.ones(4), wp.zeros(4)
    cmd = wp.launch(scale, 4, inputs=[a, out, 2.0], record_cmd=True)
    assert isinstance(cmd, wp.Launch)
    assert not out.numpy().any()
    cmd.launch()
    assert out.numpy().tolist() == [2] * 4


def test_launch_reruns_with_current_array_contents():
    n = wp.zeros(1, dtype=int)
    cmd = wp.launch(count, 5, inputs=[n], record_cmd=True)
    for k in range(1, 4):
        cmd.launch()
        assert n.numpy()[0] == 5 * k
    a, out = wp.ones(3), wp.zeros(3)
    cmd = wp.launch(scale, 3, inputs=[a], outputs=[out, 3.0], record_cmd=True)
    cmd.launch()
    a.fill_(2.0)
    cmd.launch()
    assert out.numpy().tolist() == [6] * 3


def test_set_param_at_index_and_set_params():
    a, out = wp.array(np.arange(4, dtype=np.float32)), wp.zeros(4)
    cmd = wp.launch(scale, 4, inputs=[a, out, 2.0], record_cmd=True)
    cmd.set_param_at_index(2, 5.0)
    cmd.launch()
    assert out.numpy().tolist() == [0, 5, 10, 15]
    b, out2 = wp.ones(4), wp.zeros(4)
    cmd.set_params([b, out2, 7.0])
    cmd.launch()
    assert out2.numpy().tolist() == [7] * 4
    assert out.numpy().tolist() == [0, 5, 10, 15]  # the old output is left alone
    assert cmd.arguments[0] is b and cmd.params[1] is b  # (params: Warp's, the bounds first)


def test_set_param_by_name():
    a, out = wp.array(np.arange(3, dtype=np.float32)), wp.zeros(3)
    cmd = wp.launch(scale, 3, inputs=[a, out, 1.0], record_cmd=True)
    cmd.set_param_by_name("s", 4.0)
    cmd.launch(stream=None)
    assert out.numpy().tolist() == [0, 4, 8]
    with pytest.raises(KeyError, match="kernel 'scale' has no parameter 't' \\(it has a, out, s\\)"):
        cmd.set_param_by_name("t", 1.0)
    with pytest.raises(TypeError, match="argument 's'"):
        cmd.set_param_by_name("s", "x")


def test_set_dim():
    n = wp.zeros(1, dtype=int)
    cmd = wp.launch(count, 5, inputs=[n], record_cmd=True)
    for dim, total in [(3, 3), ((2, 4), 8), (0, 0), ((2, 2, 2, 2), 16)]:
        n.zero_()
        cmd.set_dim(dim)
        cmd.launch()
        assert n.numpy()[0] == total
    out = wp.zeros((3, 4), dtype=int)
    g = wp.launch(grid, (2, 2), inputs=[out], record_cmd=True)
    g.set_dim((3, 4))
    g.launch()
    np.testing.assert_array_equal(out.numpy(), np.add.outer(np.arange(3) * 10, np.arange(4)))


def test_strided_array_set_into_a_contiguous_launch():
    """The recorded variant was specialised for contiguous arrays; a strided one must not be
    read as if it were contiguous."""
    base = wp.array(np.arange(20, dtype=np.float32))
    out = wp.zeros(10)
    cmd = wp.launch(scale, 10, inputs=[base[:10], out, 1.0], record_cmd=True)
    cmd.set_param_at_index(0, base[::2])
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), np.arange(0, 20, 2))
    cmd.set_param_at_index(0, base[10:])  # and back to a contiguous one
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), np.arange(10, 20))
    cmd.set_params([base[::-2], out, 2.0])
    cmd.launch()
    np.testing.assert_array_equal(out.numpy(), np.arange(19, 0, -2) * 2)


def test_recording_validates_arguments():
    with pytest.raises(TypeError, match="kernel 'scale', argument 's'"):
        wp.launch(scale, 4, inputs=[wp.ones(4), wp.zeros(4), "2"], record_cmd=True)
    with pytest.raises(TypeError, match="takes 3 arguments"):
        wp.launch(scale, 4, inputs=[wp.ones(4)], record_cmd=True)
    with pytest.raises(ValueError, match="unpacks tid"):
        wp.launch(grid, (2, 2, 2), inputs=[wp.zeros((2, 2), dtype=int)], record_cmd=True)


def test_bad_updates_leave_the_launch_usable():
    a, out = wp.ones(4), wp.zeros(4)
    cmd = wp.launch(scale, 4, inputs=[a, out, 2.0], record_cmd=True)
    with pytest.raises(TypeError, match="kernel 'scale', argument 's': expected a number"):
        cmd.set_param_at_index(2, "x")
    with pytest.raises(TypeError, match="kernel 'scale', argument 'a'"):
        cmd.set_param_at_index(0, wp.zeros(4, dtype=int))
    with pytest.raises(IndexError, match="kernel 'scale' has 3 parameters, no index 3"):
        cmd.set_param_at_index(3, 1.0)
    with pytest.raises(ValueError, match="dim must be"):
        cmd.set_dim(-1)
    g = wp.launch(grid, (2, 2), inputs=[wp.zeros((2, 2), dtype=int)], record_cmd=True)
    with pytest.raises(ValueError, match="unpacks tid"):
        g.set_dim((2, 2, 2))
    cmd.launch()
    assert out.numpy().tolist() == [2] * 4
    assert cmd.arguments[2] == 2.0 and cmd.params[3] == 2.0


def test_recorded_launch_reports_run_time_errors():
    short, out = wp.ones(2), wp.zeros(4)
    cmd = wp.launch(scale, 4, inputs=[short, out, 1.0], record_cmd=True)
    with pytest.raises(IndexError, match="index 2 is out of bounds for array 'a' with shape"):
        cmd.launch()
    assert out.numpy().tolist() == [1, 1, 0, 0]
    cmd.set_dim(2)
    cmd.launch()  # the error record was reset


def test_recorded_and_direct_launches_do_not_disturb_each_other():
    a, out1, out2 = wp.ones(4), wp.zeros(4), wp.zeros(4)
    cmd = wp.launch(scale, 4, inputs=[a, out1, 2.0], record_cmd=True)
    wp.launch(scale, 4, inputs=[a, out2, 3.0])
    cmd.launch()
    wp.launch(scale, 2, inputs=[a, out2, 4.0])
    assert out1.numpy().tolist() == [2] * 4 and out2.numpy().tolist() == [4, 4, 3, 3]
