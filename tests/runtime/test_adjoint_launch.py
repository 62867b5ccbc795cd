"""`launch(..., adjoint=True)`: adjoint arguments (None: an array's own .grad; None or
zero for non-arrays), accumulation, argument-count errors; recorded forward and adjoint
`Launch` objects (behaviour 4 of the mission) with their parameters and shape changed in
place; kernels without an adjoint; the AD stack limit."""

import numpy as np
import pytest
from autodiff.helpers import F64, check_adjoint

import weft as wp


@wp.kernel
def step(x: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d), gravity: wp.vec3d, dt: F64,
         flags: wp.array(dtype=int), x_out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    vi = v[i] + gravity * dt
    if flags[i] == 1:
        vi = vi * 0.5
    x_out[i] = x[i] + vi * dt + wp.vec3d(wp.sin(x[i][0]), 0.0, 0.0) * dt


X = np.array([[0.1, 1.0, -0.5], [0.7, 2.0, 0.3], [-1.2, 0.5, 0.9]])
V = np.array([[1.0, 0.0, 0.5], [-0.3, 0.4, 0.0], [0.2, -1.0, 0.6]])
FLAGS = np.array([0, 1, 0], np.int32)


def _step_arrays():
    x = wp.array(X, dtype=wp.vec3d)
    v = wp.array(V, dtype=wp.vec3d)
    return x, v, wp.array(FLAGS, dtype=int), wp.zeros(3, dtype=wp.vec3d)


def test_non_array_arguments_take_none_or_zero():
    gravity, dt = wp.vec3d(0.0, -9.8, 0.0), 0.1
    x, v, flags, x_out = _step_arrays()
    adj_x, adj_v = wp.zeros(3, dtype=wp.vec3d), wp.zeros(3, dtype=wp.vec3d)
    adj_out = wp.array(np.ones((3, 3)), dtype=wp.vec3d)
    wp.launch(step, 3, inputs=[x, v, gravity, dt, flags], outputs=[x_out],
              adj_inputs=[adj_x, adj_v, None, None, None], adj_outputs=[adj_out], adjoint=True)
    expected_x = np.ones((3, 3))
    expected_x[:, 0] += np.cos(X[:, 0]) * dt
    np.testing.assert_allclose(adj_x.numpy(), expected_x, rtol=1e-12)
    np.testing.assert_allclose(adj_v.numpy(), np.where(FLAGS[:, None] == 1, 0.5, 1.0) * dt * np.ones((3, 3)))
    # zeros (Warp's other spelling) for the vector and the float
    adj_x.zero_()
    adj_out.fill_(1.0)
    wp.launch(step, 3, inputs=[x, v, gravity, dt, flags], outputs=[x_out],
              adj_inputs=[adj_x, None, wp.vec3d(), 0.0, None], adj_outputs=[adj_out], adjoint=True)
    np.testing.assert_allclose(adj_x.numpy(), expected_x, rtol=1e-12)
    # and against finite differences
    check_adjoint(step, 3, [(X, wp.vec3d), (V, wp.vec3d), gravity, dt, FLAGS, (np.zeros((3, 3)), wp.vec3d)])


@wp.kernel
def cube(x: wp.array(dtype=F64), y: wp.array(dtype=F64), total: wp.array(dtype=F64)):
    i = wp.tid()
    y[i] = x[i] * x[i] * x[i]
    wp.atomic_add(total, 0, x[i])


def test_input_adjoints_accumulate_across_calls():
    values = np.array([0.5, -1.0, 2.0])
    x, y, total = wp.array(values, dtype=F64), wp.zeros(3, dtype=F64), wp.zeros(1, dtype=F64)
    adj_x = wp.array(np.array([10.0, 20.0, 30.0]), dtype=F64)  # existing contents are added to
    adj_y, adj_total = wp.zeros(3, dtype=F64), wp.zeros(1, dtype=F64)
    for k in (1, 2):
        adj_y.fill_(1.0)
        wp.launch(cube, 3, inputs=[x], outputs=[y, total], adj_inputs=[adj_x], adj_outputs=[adj_y, adj_total],
                  adjoint=True)
        np.testing.assert_allclose(adj_x.numpy(), [10.0, 20.0, 30.0] + k * 3 * values**2)
        # y is only written by the kernel: a user's adjoint launch reads its adjoint and
        # leaves it as given (a torch grad_output stays intact; a Tape consumes it)
        np.testing.assert_array_equal(adj_y.numpy(), 1.0)
    adj_total.fill_(1.0)  # an accumulator's adjoint is read, not consumed
    wp.launch(cube, 3, inputs=[x, y, total], adj_inputs=[None, None, adj_total], adjoint=True)
    assert adj_total.numpy()[0] == 1.0


@wp.kernel
def write_scaled(x: wp.array(dtype=F64), s: F64, y: wp.array(dtype=F64)):
    i = wp.tid()
    y[i] = x[i] * s


def test_an_arrays_own_gradient_is_consumed_by_its_stores():
    """Warp's rule: where the adjoint given for an array the kernel only writes is that
    array's own `.grad` (or None, which stands for it), the store's adjoint consumes it, so
    a hand-written backward pass through two launches writing y skips the dead one; an
    array with retain_grad keeps it."""
    x = wp.array([1.0, 2.0], dtype=F64, requires_grad=True)
    y = wp.zeros(2, dtype=F64, requires_grad=True)
    y.grad.fill_(1.0)  # d(sum y)/dy after `y = 3x` then `y = 2x`
    wp.launch(write_scaled, 2, inputs=[x, 2.0], outputs=[y], adj_inputs=[None, 0.0], adj_outputs=[None],
              adjoint=True)
    np.testing.assert_array_equal(y.grad.numpy(), 0.0)
    wp.launch(write_scaled, 2, inputs=[x, 3.0], outputs=[y], adj_inputs=[x.grad, 0.0], adj_outputs=[y.grad],
              adjoint=True)
    np.testing.assert_array_equal(x.grad.numpy(), 2.0)  # (the first write is dead)
    y.retain_grad = True
    y.grad.fill_(1.0)
    wp.launch(write_scaled, 2, inputs=[x, 2.0], outputs=[y], adj_inputs=[None, 0.0], adj_outputs=[None],
              adjoint=True)
    np.testing.assert_array_equal(y.grad.numpy(), 1.0)


@wp.kernel
def cube_only(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    y[i] = x[i] * x[i] * x[i]


def test_strided_primal_and_adjoint_arrays():
    big = wp.array(np.arange(10.0), dtype=F64)
    x, y = big[1::2], wp.zeros(5, dtype=F64)
    grad_big = wp.zeros(10, dtype=F64)
    wp.launch(cube_only, 5, inputs=[x, y], adj_inputs=[grad_big[::2], wp.ones(5, dtype=F64)], adjoint=True)
    expected = np.zeros(10)
    expected[::2] = 3 * np.arange(1.0, 10.0, 2) ** 2
    np.testing.assert_allclose(grad_big.numpy(), expected)
    # a recorded adjoint launch switched to a strided adjoint array (another compiled variant)
    cmd = wp.launch(cube_only, 5, inputs=[x, y], adj_inputs=[wp.zeros(5, dtype=F64), wp.ones(5, dtype=F64)],
                    adjoint=True, record_cmd=True)
    grad2 = wp.zeros(10, dtype=F64)
    cmd.set_param_at_index(0, grad2[1::2], adjoint=True)
    cmd.launch()
    np.testing.assert_allclose(grad2.numpy(), np.roll(expected, 1))


def test_wrong_number_of_adjoint_arguments():
    x, y, total = wp.zeros(3, dtype=F64), wp.zeros(3, dtype=F64), wp.zeros(1, dtype=F64)
    with pytest.raises(TypeError, match=r"kernel 'cube'.*one adjoint per argument \(3: x, y, total\).*got 2"):
        wp.launch(cube, 3, inputs=[x, y, total], adj_inputs=[None, None], adjoint=True)
    with pytest.raises(TypeError, match=r"kernel 'cube'.*got 0"):
        wp.launch(cube, 3, inputs=[x, y, total], adjoint=True)
    with pytest.raises(TypeError, match="kernel 'cube'.*got 4"):
        wp.launch(cube, 3, inputs=[x, y, total], adj_inputs=[None] * 4, adjoint=True)


def test_adjoint_argument_of_the_wrong_type():
    x, y = wp.array(np.arange(3.0), dtype=F64), wp.zeros(3, dtype=F64)
    with pytest.raises(TypeError, match="kernel 'cube_only', argument 'adj_x': expected an array of float64"):
        wp.launch(cube_only, 3, inputs=[x, y], adj_inputs=[wp.zeros(3), None], adjoint=True)
    with pytest.raises(TypeError, match=r"kernel 'cube_only', argument 'adj_y' expects an array of type "
                                        r"array\(ndim=1, dtype=float64\), but passed value has type list"):
        wp.launch(cube_only, 3, inputs=[x, y], adj_inputs=[None, [0.0, 0.0, 0.0]], adjoint=True)


# Behaviour 4: recorded launches keep their adjoint flag ----------------------------------------
def test_recorded_forward_and_adjoint_launches_alternate():
    values = np.array([0.5, -1.0, 2.0])
    x, y, total = wp.array(values, dtype=F64), wp.zeros(3, dtype=F64), wp.zeros(1, dtype=F64)
    adj_x, adj_y, adj_total = wp.zeros(3, dtype=F64), wp.zeros(3, dtype=F64), wp.zeros(1, dtype=F64)
    forward = wp.launch(cube, 3, inputs=[x], outputs=[y, total], record_cmd=True)
    backward = wp.launch(cube, 3, inputs=[x], outputs=[y, total], adj_inputs=[adj_x],
                         adj_outputs=[adj_y, adj_total], adjoint=True, record_cmd=True)
    assert isinstance(forward, wp.Launch) and isinstance(backward, wp.Launch)
    assert not forward.adjoint and backward.adjoint
    assert not y.numpy().any() and not adj_x.numpy().any()  # recording runs nothing
    grad_sum = np.zeros(3)
    for k in range(4):
        current = values + k
        x.assign(current)
        y.zero_()
        forward.launch()  # recomputes the outputs from the current x
        np.testing.assert_allclose(y.numpy(), current**3)
        adj_y.fill_(1.0)
        backward.launch()  # accumulates the gradient at the current x
        grad_sum += 3 * current**2
        np.testing.assert_allclose(adj_x.numpy(), grad_sum)
        np.testing.assert_allclose(y.numpy(), current**3)  # the adjoint does not write primal outputs
    assert total.numpy()[0] == pytest.approx(sum(np.sum(values + k) for k in range(4)))


def test_recorded_launches_on_a_tape_are_not_recorded():
    x = wp.array(np.array([1.0, 2.0]), dtype=F64, requires_grad=True)
    y, total = wp.zeros(2, dtype=F64), wp.zeros(1, dtype=F64)
    with wp.Tape() as tape:
        cmd = wp.launch(cube, 2, inputs=[x, y, total], adj_inputs=[x.grad, None, None], adjoint=True,
                        record_cmd=True)
    assert tape.launches == []
    cmd.launch()


def test_set_param_at_index_on_forward_and_adjoint_launches():
    x, y, total = wp.array(np.array([1.0, 2.0, 3.0]), dtype=F64), wp.zeros(3, dtype=F64), wp.zeros(1, dtype=F64)
    adj_x, adj_y = wp.zeros(3, dtype=F64), wp.ones(3, dtype=F64)
    forward = wp.launch(cube, 3, inputs=[x, y, total], record_cmd=True)
    backward = wp.launch(cube, 3, inputs=[x, y, total], adj_inputs=[adj_x, adj_y, None], adjoint=True,
                         record_cmd=True)
    x2, y2 = wp.array(np.array([-1.0, 0.5, 4.0]), dtype=F64), wp.zeros(3, dtype=F64)
    forward.set_param_at_index(0, x2)
    forward.set_param_at_index(1, y2)
    forward.launch()
    np.testing.assert_allclose(y2.numpy(), [-1.0, 0.125, 64.0])
    assert not y.numpy().any()
    # primal argument of the adjoint launch, then its adjoint arrays
    backward.set_param_at_index(0, x2)
    adj_x2 = wp.zeros(3, dtype=F64)
    backward.set_param_at_index(0, adj_x2, adjoint=True)
    backward.launch()
    np.testing.assert_allclose(adj_x2.numpy(), [3.0, 0.75, 48.0])
    assert not adj_x.numpy().any()
    with pytest.raises(ValueError, match="runs the forward kernel"):
        forward.set_param_at_index(0, adj_x, adjoint=True)
    with pytest.raises(IndexError, match="cube"):
        backward.set_param_at_index(3, x)


def test_none_adjoint_set_on_a_recorded_launch_of_arrays_without_grad_means_no_gradient():
    x, y, total = wp.array(np.array([1.0, 2.0]), dtype=F64), wp.zeros(2, dtype=F64), wp.zeros(1, dtype=F64)
    adj_x, adj_total = wp.zeros(2, dtype=F64), wp.ones(1, dtype=F64)
    backward = wp.launch(cube, 2, inputs=[x, y, total], adj_inputs=[adj_x, None, adj_total], adjoint=True,
                         record_cmd=True)
    backward.set_param_at_index(2, None, adjoint=True)  # as None in adj_inputs: total has no .grad
    backward.launch()
    np.testing.assert_allclose(adj_x.numpy(), [0.0, 0.0])


def test_set_params_and_set_dim():
    x, y, total = wp.array(np.array([1.0, 2.0, 3.0]), dtype=F64), wp.zeros(3, dtype=F64), wp.zeros(1, dtype=F64)
    adj_x, adj_y, adj_total = wp.zeros(3, dtype=F64), wp.ones(3, dtype=F64), wp.zeros(1, dtype=F64)
    forward = wp.launch(cube, 3, inputs=[x, y, total], record_cmd=True)
    backward = wp.launch(cube, 3, inputs=[x, y, total], adj_inputs=[adj_x, adj_y, adj_total], adjoint=True,
                         record_cmd=True)
    x2, y2, t2 = wp.array(np.array([2.0, 3.0, 4.0]), dtype=F64), wp.zeros(3, dtype=F64), wp.zeros(1, dtype=F64)
    forward.set_params([x2, y2, t2])
    forward.set_dim(2)  # only the first two threads
    forward.launch()
    np.testing.assert_allclose(y2.numpy(), [8.0, 27.0, 0.0])
    assert t2.numpy()[0] == 5.0
    backward.set_params([x2, y2, t2])  # the primal arguments
    adj_x2, adj_y2 = wp.zeros(3, dtype=F64), wp.ones(3, dtype=F64)
    backward.set_params_adjoint([adj_x2, adj_y2, wp.zeros(1, dtype=F64)])
    backward.set_dim(2)
    backward.launch()
    np.testing.assert_allclose(adj_x2.numpy(), [12.0, 27.0, 0.0])
    np.testing.assert_allclose(adj_y2.numpy(), [1.0, 1.0, 1.0])  # read, not consumed
    assert not adj_x.numpy().any()


# Kernels without an adjoint and the AD stack limit ---------------------------------------------
@wp.kernel(enable_backward=False)
def no_adjoint(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    y[i] = x[i] * 2.0


def test_enable_backward_false():
    x, y = wp.array(np.array([1.0, 2.0]), dtype=F64), wp.zeros(2, dtype=F64)
    wp.launch(no_adjoint, 2, inputs=[x, y])  # the forward kernel runs
    assert y.numpy().tolist() == [2.0, 4.0]
    adj = [wp.zeros(2, dtype=F64), wp.ones(2, dtype=F64)]
    with pytest.raises(RuntimeError, match="kernel 'no_adjoint'.*enable_backward=False"):
        wp.launch(no_adjoint, 2, inputs=[x, y], adj_inputs=adj, adjoint=True)
    with pytest.raises(RuntimeError, match="kernel 'no_adjoint'.*enable_backward=False"):
        wp.launch(no_adjoint, 2, inputs=[x, y], adj_inputs=adj, adjoint=True, record_cmd=True)
    with pytest.raises(RuntimeError, match="enable_backward=False"):
        wp.print_ir(no_adjoint, adjoint=True)


@wp.kernel
def long_loop(x: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    v = x[i]
    for _j in range(n):
        v = v * 0.999 + wp.sin(v) * 0.001
    y[i] = v


def test_adstack_limit_raises_memory_error_naming_the_kernel():
    x, y = wp.array(np.array([0.5, 1.0]), dtype=F64), wp.zeros(2, dtype=F64)
    saved = wp.config.adstack_limit
    wp.config.adstack_limit = 256
    try:
        ax, ay = wp.zeros(2, dtype=F64), wp.ones(2, dtype=F64)
        wp.launch(long_loop, 2, inputs=[x, y, 3], adj_inputs=[ax, ay, None], adjoint=True)  # fits
        assert ax.numpy().all()
        wp.launch(long_loop, 2, inputs=[x, y, 100000])  # the forward kernel needs no stack
        with pytest.raises(MemoryError, match="kernel 'long_loop.*adstack_limit") as info:
            wp.launch(long_loop, 2, inputs=[x, y, 100000], adj_inputs=[ax, wp.ones(2, dtype=F64), None],
                      adjoint=True)
        assert "test_adjoint_launch.py:" in str(info.value)  # at the loop in the user's source
    finally:
        wp.config.adstack_limit = saved
    ax.zero_()
    wp.launch(long_loop, 2, inputs=[x, y, 1000], adj_inputs=[ax, wp.ones(2, dtype=F64), None], adjoint=True)
    assert ax.numpy().all()  # the default limit holds a 1000-trip loop


@wp.kernel
def weighted(x: wp.array(dtype=F64), w: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    y[i] = x[i] * w[i]


def test_none_for_an_array_with_grad_means_its_grad():
    # Warp's rule: None in adj_inputs/adj_outputs for an array is that array's .grad
    x = wp.array(np.array([1.0, 2.0, 3.0]), dtype=F64, requires_grad=True)
    y = wp.zeros(3, dtype=F64, requires_grad=True)
    wp.launch(cube_only, 3, inputs=[x, y])
    y.grad = wp.array(np.ones(3), dtype=F64)
    wp.launch(cube_only, 3, inputs=[x, y], adj_inputs=[None, None], adjoint=True)
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0, 27.0])
    np.testing.assert_array_equal(y.grad.numpy(), 0.0)  # (its own gradient: consumed by the store)
    # an adjoint given explicitly takes precedence
    y.grad.fill_(1.0)
    adj_x = wp.zeros(3, dtype=F64)
    wp.launch(cube_only, 3, inputs=[x, y], adj_inputs=[adj_x, None], adjoint=True)
    np.testing.assert_allclose(adj_x.numpy(), [3.0, 12.0, 27.0])
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0, 27.0])  # unchanged
    # and a recorded adjoint launch follows the same rule
    y.grad.fill_(1.0)
    cmd = wp.launch(cube_only, 3, inputs=[x, y], adj_inputs=[None, None], adjoint=True, record_cmd=True)
    cmd.launch()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 24.0, 54.0])
    np.testing.assert_array_equal(y.grad.numpy(), 0.0)


def test_none_adjoint_leaves_that_array_out_of_the_adjoint():
    x = wp.array(np.array([1.0, 2.0]), dtype=F64)
    w = wp.array(np.array([3.0, 4.0]), dtype=F64)
    y = wp.zeros(2, dtype=F64)
    adj_x, adj_y = wp.zeros(2, dtype=F64), wp.ones(2, dtype=F64)
    wp.launch(weighted, 2, inputs=[x, w], outputs=[y], adj_inputs=[adj_x, None], adj_outputs=[adj_y],
              adjoint=True)
    np.testing.assert_array_equal(adj_x.numpy(), [3.0, 4.0])
    # the variant without adj_w does not touch w's gradient at all
    adjoint_fn = weighted.adjoint_ir(frozenset({1}))
    assert "adj_w" not in " ".join(op.operands[0].hint for op in adjoint_fn.body.ops
                                   if op.name in ("load", "store", "atomic"))



@wp.kernel
def _weighted_samples(samples: wp.indexedarray(dtype=float), weights: wp.array(dtype=float),
                      total: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(total, 0, samples[i] * weights[i])


def test_adjoint_of_an_indexed_array_given_as_its_arrays_gradient():
    """Warp's backward ABI: the adjoint of an indexed array argument is the gradient array of
    the array it indexes, indexed the same way."""
    base = wp.array(np.linspace(1, 6, 6, dtype=np.float32), requires_grad=True)
    weights = wp.array([0.25, 0.5, 1.0], dtype=float)
    samples = wp.indexedarray1d(base, [wp.array([1, 3, 5], dtype=wp.int32)])
    total = wp.zeros(1, requires_grad=True)
    total.grad.fill_(2.0)
    wp.launch(_weighted_samples, 3, inputs=[samples, weights], outputs=[total], adj_inputs=[base.grad, None],
              adj_outputs=[total.grad], adjoint=True)
    np.testing.assert_array_equal(base.grad.numpy(), [0, 0.5, 0, 1.0, 0, 2.0])
