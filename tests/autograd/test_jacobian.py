"""`weft.autograd.jacobian` (adjoint launches) and `jacobian_fd` (central differences)
against Jacobians known in closed form."""

import numpy as np
import pytest

import weft as wp
from weft.autograd import jacobian, jacobian_fd

from .kernels import F64, d_sin_times_x, f64, sin_times_x, sin_times_x32, sum_squares, two_launch_chain, zeros

RNG = np.random.default_rng(7)


def matrices(jacobians: dict) -> dict:
    """Jacobians (weft arrays in Warp's layout) as float64 matrices (output scalars, input scalars)."""
    return {k: J.numpy().astype(np.float64).reshape(J.shape[0], -1) for k, J in jacobians.items()}


def both(*args, **kwargs):
    """The adjoint and the finite-difference Jacobians of the same launch, as matrices."""
    return matrices(jacobian(*args, **kwargs)), matrices(jacobian_fd(*args, **kwargs))


@wp.kernel
def matvec(A: wp.array2d(dtype=F64), x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    s = F64(0.0)
    for k in range(x.shape[0]):
        s += A[i, k] * x[k]
    y[i] = s


@wp.kernel
def scale_vec(a: wp.array(dtype=wp.vec3d), s: wp.array(dtype=F64), out: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    out[i] = a[i] * s[i]


@wp.kernel
def square_2d(x: wp.array2d(dtype=F64), y: wp.array2d(dtype=F64)):
    i, j = wp.tid()
    y[i, j] = x[i, j] * x[i, j] + F64(1.0)


def test_matvec_jacobians_are_A_and_x():
    A = RNG.normal(size=(3, 4))
    x = RNG.normal(size=4)
    args = (matvec, 3, [f64(A), f64(x)], [zeros(3)])
    for J in both(*args):
        assert set(J) == {(0, 0), (1, 0)}
        np.testing.assert_allclose(J[1, 0], A, rtol=1e-7, atol=1e-9)
        # d y_i / d A[k, l] = delta_ik x_l: row i holds x in columns 4 i .. 4 i + 3
        np.testing.assert_allclose(J[0, 0], np.kron(np.eye(3), x[None, :]), rtol=1e-7, atol=1e-9)


def test_elementwise_jacobian_is_diagonal():
    x = np.array([0.3, -1.2, 2.0, 0.0, 4.5])
    expected = np.diag(d_sin_times_x(x))
    for J in both(sin_times_x, 5, [f64(x)], [zeros(5)]):
        np.testing.assert_allclose(J[0, 0], expected, rtol=1e-7, atol=1e-9)


def test_vector_components_are_rows_and_columns():
    a = RNG.normal(size=(2, 3))
    s = np.array([2.0, -0.5])
    out = wp.zeros(2, dtype=wp.vec3d, requires_grad=True)
    for J in both(scale_vec, 2, [f64(a, dtype=wp.vec3d), f64(s)], [out]):
        assert J[0, 0].shape == (6, 6) and J[1, 0].shape == (6, 2)
        np.testing.assert_allclose(J[0, 0], np.kron(np.diag(s), np.eye(3)), atol=1e-9)
        expected = np.zeros((6, 2))
        expected[:3, 0], expected[3:, 1] = a[0], a[1]
        np.testing.assert_allclose(J[1, 0], expected, rtol=1e-7, atol=1e-9)


def test_two_dimensional_arrays_flatten_in_c_order():
    x = RNG.normal(size=(2, 3))
    for J in both(square_2d, (2, 3), [f64(x)], [zeros((2, 3))]):
        np.testing.assert_allclose(J[0, 0], np.diag(2 * x.reshape(-1)), rtol=1e-7, atol=1e-9)


def test_accumulating_kernel_is_differenced_from_the_saved_state():
    x = np.array([1.0, -2.0, 0.5])
    xs, loss = f64(x), f64([5.0])
    for J in both(sum_squares, 3, [xs], [loss]):
        np.testing.assert_allclose(J[0, 0], 2 * x[None, :], rtol=1e-7)
    np.testing.assert_array_equal(xs.numpy(), x)  # inputs and outputs are left as they were
    np.testing.assert_array_equal(loss.numpy(), [5.0])


def test_user_gradients_are_not_touched():
    x = f64([0.5, 1.0])
    x.grad.fill_(7.0)
    y = f64([0.0, 0.0])
    y.grad.fill_(3.0)
    jacobian(sin_times_x, 2, [x], [y])
    np.testing.assert_array_equal(x.grad.numpy(), [7.0, 7.0])
    np.testing.assert_array_equal(y.grad.numpy(), [3.0, 3.0])


def test_only_arrays_requiring_grad_take_part():
    A, x = f64(np.eye(2), requires_grad=False), f64([1.0, 2.0])
    J = jacobian(matvec, 2, [A, x], [zeros(2)])
    assert set(J) == {(1, 0)}
    J = jacobian(matvec, 2, [A, x], [wp.zeros(2, dtype=F64)])
    assert J == {}


def test_mask_by_name_and_index():
    args = (matvec, 2, [f64(np.eye(2)), f64([1.0, 2.0])], [zeros(2)])
    assert set(jacobian(*args, input_output_mask=[("x", "y")])) == {(1, 0)}
    assert set(jacobian_fd(*args, input_output_mask=[(0, 0)])) == {(0, 0)}
    with pytest.raises(ValueError, match="names input 'z', which is not one of its inputs"):
        jacobian(*args, input_output_mask=[("z", "y")])
    with pytest.raises(ValueError, match="index below 1"):
        jacobian(*args, input_output_mask=[(0, 1)])


def test_mask_naming_an_array_without_gradient_is_an_error():
    args = (matvec, 2, [f64(np.eye(2), requires_grad=False), f64([1.0, 2.0])],
            [zeros(2)])
    with pytest.raises(ValueError, match="input 'A', which has no gradient.*: 'x'"):
        jacobian(*args, input_output_mask=[("A", "y")])


def test_row_and_column_limits_leave_nan():
    x = np.array([0.1, 0.2, 0.3])
    args = (sin_times_x, 3, [f64(x)], [zeros(3)])
    J = jacobian(*args, max_outputs_per_var=2)[0, 0]
    assert np.isnan(J[2]).all() and not np.isnan(J[:2]).any()
    J = jacobian_fd(*args, max_inputs_per_var=1)[0, 0]
    assert np.isnan(J[:, 1:]).all() and not np.isnan(J[:, 0]).any()


def test_float32_within_looser_tolerance():
    x = np.array([0.3, 1.1, -2.0], dtype=np.float32)
    xs = wp.array(x, dtype=float, requires_grad=True)
    ys = wp.zeros(3, dtype=float, requires_grad=True)
    expected = np.diag(d_sin_times_x(x.astype(np.float64)))
    np.testing.assert_allclose(jacobian(sin_times_x32, 3, [xs], [ys])[0, 0], expected, rtol=1e-5, atol=1e-6)
    J_fd = jacobian_fd(sin_times_x32, 3, [xs], [ys], eps=1e-2)[0, 0]
    np.testing.assert_allclose(J_fd, expected, rtol=1e-3, atol=1e-4)


def test_python_function_of_two_launches():
    chain = two_launch_chain
    x = np.array([0.4, -0.9, 1.5])
    y = np.sin(x) * x
    dy = d_sin_times_x(x)
    for J in both(chain, inputs=[f64(x)]):
        assert set(J) == {(0, 0), (0, 1)}
        np.testing.assert_allclose(J[0, 0], np.diag(dy), rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(J[0, 1], (2 * y * dy)[None, :], rtol=1e-7, atol=1e-9)
    assert set(jacobian(chain, inputs=[f64(x)], input_output_mask=[("x", "output_1")])) == {(0, 1)}


def test_function_outside_an_active_tape_records_nothing_there():
    x = f64([0.2, 0.4])
    with wp.Tape() as outer:
        jacobian_fd(lambda x: _launch_sin(x), inputs=[x])
        jacobian(lambda x: _launch_sin(x), inputs=[x])
    assert outer.launches == []


def _launch_sin(x):
    y = wp.zeros(x.shape[0], dtype=F64, requires_grad=True)
    wp.launch(sin_times_x, x.shape[0], inputs=[x], outputs=[y])
    return y


def test_argument_errors():
    x, y = f64([1.0]), f64([0.0])
    with pytest.raises(ValueError, match="`dim` must be given"):
        jacobian(sin_times_x, None, [x], [y])
    with pytest.raises(ValueError, match="list the output arrays in `outputs`"):
        jacobian(sin_times_x, 1, [x, y])
    with pytest.raises(TypeError, match=r"takes 2 arguments \(x, y\)"):
        jacobian(sin_times_x, 1, [x], [y, y])
    with pytest.raises(ValueError, match="eps must be positive"):
        jacobian_fd(sin_times_x, 1, [x], [y], eps=0.0)
    with pytest.raises(TypeError, match="must return a weft array"):
        jacobian(lambda x: 3, inputs=[x])


def test_kernel_without_backward_has_no_adjoint_jacobian():
    @wp.kernel(enable_backward=False)
    def no_backward(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
        i = wp.tid()
        y[i] = x[i] * F64(2.0)

    args = (no_backward, 2, [f64([1.0, 2.0])], [zeros(2)])
    np.testing.assert_allclose(jacobian_fd(*args)[0, 0], 2 * np.eye(2), rtol=1e-9)
    with pytest.raises(ValueError, match="enable_backward=False"):
        jacobian(*args)


def test_jacobians_are_weft_arrays_in_warps_layout():
    a = RNG.normal(size=(2, 3))
    s = np.array([2.0, -0.5])
    out = wp.zeros(2, dtype=wp.vec3d, requires_grad=True)
    J = jacobian(scale_vec, 2, [f64(a, dtype=wp.vec3d), f64(s)], [out])
    # rows: the output's scalars; columns: the input's elements, of the input's dtype
    assert isinstance(J[0, 0], wp.array) and J[0, 0].dtype is wp.vec3d and J[0, 0].shape == (6, 2)
    assert J[1, 0].dtype is F64 and J[1, 0].shape == (6, 2)
    np.testing.assert_allclose(J[0, 0].numpy().reshape(6, 6), np.kron(np.diag(s), np.eye(3)), atol=1e-12)


@wp.kernel
def increment(x: wp.array(dtype=F64)):
    i = wp.tid()
    x[i] = x[i] + F64(1.0)


@wp.kernel
def square(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    y[i] = x[i] * x[i]


def _mutating(x):
    wp.launch(increment, x.shape[0], inputs=[x])  # changes its input, then reads it
    y = wp.zeros(x.shape[0], dtype=F64, requires_grad=True)
    wp.launch(square, x.shape[0], inputs=[x], outputs=[y])
    return y


def test_a_function_that_changes_its_inputs():
    x0 = np.array([1.0, 2.0, 3.0])
    x = f64(x0)
    for J in both(_mutating, inputs=[x]):  # y = (x + 1)^2: both from the inputs as given
        np.testing.assert_allclose(J[0, 0], np.diag(2 * (x0 + 1)), rtol=1e-6)
    np.testing.assert_array_equal(x.numpy(), x0)  # put back
    assert wp.autograd.gradcheck(_mutating, inputs=[x], show_summary=False)
    # Warp's restore_inputs=False: runs start wherever the previous run left the inputs
    assert not wp.autograd.gradcheck(_mutating, inputs=[x], restore_inputs=False, raise_exception=False,
                                     show_summary=False)
    assert not np.array_equal(x.numpy(), x0)


def test_overwrite_marks_of_a_pending_tape_are_kept():
    saved = wp.config.verify_autograd_array_access
    wp.config.verify_autograd_array_access = True
    try:
        x = f64([1.0, 2.0])
        y = zeros(2)
        with wp.Tape():
            wp.launch(square, 2, inputs=[x], outputs=[y])
        assert x._is_read
        jacobian(lambda x: _square_of(x), inputs=[x])  # its own tape and backward passes
        assert x._is_read  # the pending tape's mark stays
    finally:
        wp.config.verify_autograd_array_access = saved


def _square_of(x):
    y = wp.zeros(x.shape[0], dtype=F64, requires_grad=True)
    wp.launch(square, x.shape[0], inputs=[x], outputs=[y])
    return y


def test_no_backward_error_uses_warps_words():
    @wp.kernel(enable_backward=False)
    def forward_only(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
        i = wp.tid()
        y[i] = x[i]

    def pipeline(x):
        y = wp.zeros(x.shape[0], dtype=F64, requires_grad=True)
        wp.launch(forward_only, x.shape[0], inputs=[x], outputs=[y])
        return y

    with pytest.raises(ValueError, match="Kernel must have backward pass enabled to compute Jacobians"):
        jacobian(pipeline, inputs=[f64([1.0])])
    np.testing.assert_allclose(jacobian_fd(pipeline, inputs=[f64([1.0])])[0, 0].numpy(), [[1.0]])


@wp.kernel
def _scale_by_block_dim(values: wp.array(dtype=float), output: wp.array(dtype=float)):
    i = wp.tid()
    output[i] = values[i] * float(wp.block_dim())


def test_jacobian_launches_with_the_cpu_default_block_dim():
    """As Warp's: `block_dim=None` (one thread per block on the CPU) unless one is asked for,
    which matters under `config.enable_cpu_blocks`, where `block_dim()` reports it."""
    values = wp.ones(2, dtype=float, requires_grad=True)
    output = wp.zeros(2, dtype=float, requires_grad=True)
    previous = wp.config.enable_cpu_blocks
    wp.config.enable_cpu_blocks = True
    try:
        default = jacobian(_scale_by_block_dim, dim=2, inputs=[values], outputs=[output])
        explicit = jacobian(_scale_by_block_dim, dim=2, inputs=[values], outputs=[output], block_dim=2)
    finally:
        wp.config.enable_cpu_blocks = previous
    np.testing.assert_allclose(default[0, 0].numpy(), np.eye(2))
    np.testing.assert_allclose(explicit[0, 0].numpy(), 2.0 * np.eye(2))
