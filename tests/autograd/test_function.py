"""weft.autograd.Function: hand-written backward steps on a Tape, checked against finite
differences (float64) and analytic values; misuse gives clear errors."""

import numpy as np
import pytest

import weft as wp

from .kernels import Cube, cube

N = 5


@wp.kernel
def scale(x: wp.array(dtype=wp.float64), s: wp.float64, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = s * x[i]


@wp.kernel
def total(x: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, x[i])


@wp.kernel
def sin_sum(x: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, wp.sin(x[i]))


class Scale(wp.autograd.Function):
    @staticmethod
    def forward(ctx, x, s):
        ctx.s = s  # non-array state on ctx
        y = wp.empty_like(x)
        wp.launch(scale, dim=x.shape, inputs=[x, s], outputs=[y])
        return y

    @staticmethod
    def backward(ctx, adj_y):
        return adj_y.numpy() * ctx.s, None


def _x(values=None):
    values = np.linspace(-1.0, 1.5, N) if values is None else values
    return wp.array(values, dtype=wp.float64, requires_grad=True)


def _loss_of(fn, values):
    """loss = sum(sin(fn(x))) in float64, evaluated without a Tape (for finite differences)."""
    x = wp.array(values, dtype=wp.float64)
    loss = wp.zeros(1, dtype=wp.float64)
    wp.launch(sin_sum, dim=N, inputs=[fn(x)], outputs=[loss])
    return loss.numpy()[0]


def _finite_difference(fn, values, eps=1e-6):
    grad = np.zeros_like(values)
    for k in range(len(values)):
        up, down = values.copy(), values.copy()
        up[k] += eps
        down[k] -= eps
        grad[k] = (_loss_of(fn, up) - _loss_of(fn, down)) / (2 * eps)
    return grad


def test_function_between_kernels_matches_finite_differences():
    x = _x()
    y = wp.empty(N, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(scale, dim=N, inputs=[x, 2.0], outputs=[y])
        z = Cube.apply(y)
        wp.launch(sin_sum, dim=N, inputs=[z], outputs=[loss])
    tape.backward(loss)

    def fn(a):
        b = wp.empty_like(a)
        wp.launch(scale, dim=N, inputs=[a, 2.0], outputs=[b])
        return Cube.apply(b)

    values = x.numpy().copy()
    expected = np.cos((2 * values) ** 3) * 3 * (2 * values) ** 2 * 2  # analytic
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), _finite_difference(fn, values), rtol=1e-6, atol=1e-8)


def test_one_step_recorded_and_inner_launches_not():
    x = _x()
    with wp.Tape() as tape:
        Cube.apply(x)
    assert len(tape.launches) == 1
    assert tape.launches[0].name == "Cube"


def test_nested_functions():
    class CubeOfScale(wp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            with wp.Tape() as inner:  # forward may record its own Tape to differentiate itself
                y = Scale.apply(x, 3.0)
                z = Cube.apply(y)
            ctx.inner, ctx.x, ctx.z = inner, x, z
            return wp.clone(z)

        @staticmethod
        def backward(ctx, adj):
            ctx.inner.backward(grads={ctx.z: adj})
            g = ctx.x.grad.numpy().copy()
            ctx.inner.zero()
            return g

    x = _x()
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        z = CubeOfScale.apply(x)
        wp.launch(total, dim=N, inputs=[z], outputs=[loss])
    tape.backward(loss)
    values = x.numpy()
    np.testing.assert_allclose(x.grad.numpy(), 3 * (3 * values) ** 2 * 3, rtol=1e-12)


def test_non_array_arguments_and_ctx_attributes():
    x = _x()
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        y = Scale.apply(x, 4.0)
        wp.launch(total, dim=N, inputs=[y], outputs=[loss])
    tape.backward(loss)
    np.testing.assert_array_equal(x.grad.numpy(), np.full(N, 4.0))


def test_gradients_accumulate_and_outputs_adjoint_consumed():
    x = _x()
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        y = Scale.apply(x, 2.0)
        wp.launch(total, dim=N, inputs=[y], outputs=[loss])
        wp.launch(total, dim=N, inputs=[x], outputs=[loss])  # x also feeds the loss directly
    tape.backward(loss)
    np.testing.assert_array_equal(x.grad.numpy(), np.full(N, 3.0))
    np.testing.assert_array_equal(y.grad.numpy(), np.zeros(N))  # consumed by the step
    tape.zero()
    assert not x.grad.numpy().any()


def test_saved_array_overwritten_before_backward_keeps_forward_values():
    x = _x()
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    values = x.numpy().copy()
    with wp.Tape() as tape:
        z = Cube.apply(x)
        wp.launch(sin_sum, dim=N, inputs=[z], outputs=[loss])
        with wp.no_grad():
            x.fill_(7.0)  # overwrites the saved input after the step recorded it
    tape.backward(loss)
    expected = np.cos(values ** 3) * 3 * values ** 2
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_materialize_grads_and_non_differentiable_outputs():
    seen = {}

    class Two(wp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            a, b = wp.clone(x), wp.clone(x)
            ctx.mark_non_differentiable(b)
            return a, b

        @staticmethod
        def backward(ctx, adj_a, adj_b):
            seen["a"], seen["b"] = adj_a, adj_b
            return adj_a

    class Lazy(Two):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return wp.clone(x), wp.clone(x)

    for function, materialized in ((Two, True), (Lazy, False)):
        x = _x()
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        with wp.Tape() as tape:
            a, b = function.apply(x)
            wp.launch(total, dim=N, inputs=[a], outputs=[loss])
        tape.backward(loss)
        np.testing.assert_array_equal(x.grad.numpy(), np.ones(N))
        if materialized:
            assert seen["b"] is None  # non-differentiable
        else:
            assert seen["b"] is None  # not reached and not materialized


def test_needs_input_grad():
    seen = {}

    class Probe(wp.autograd.Function):
        @staticmethod
        def forward(ctx, x, c, k):
            seen["needs"] = ctx.needs_input_grad
            return wp.clone(x)

        @staticmethod
        def backward(ctx, adj):
            return adj, None, None

    Probe.apply(_x(), wp.array(np.ones(N)), 2)
    assert seen["needs"] == (True, False, False)


def test_no_tape_runs_forward_only():
    Cube.calls = 0
    x = _x(np.arange(N, dtype=np.float64))
    y = Cube.apply(x)
    np.testing.assert_array_equal(y.numpy(), np.arange(N) ** 3.0)
    assert Cube.calls == 0


def test_wrong_gradient_count_and_shape_are_errors():
    class TooMany(wp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return wp.clone(x)

        @staticmethod
        def backward(ctx, adj):
            return adj, adj

    class BadShape(TooMany):
        @staticmethod
        def backward(ctx, adj):
            return np.ones(N + 1)

    for function, message in ((TooMany, "returned 2 gradients, but forward took 1"),
                              (BadShape, r"shape \(6,\) for argument 0, which has shape \(5,\)")):
        x = _x()
        loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
        with wp.Tape() as tape:
            y = function.apply(x)
            wp.launch(total, dim=N, inputs=[y], outputs=[loss])
        with pytest.raises(RuntimeError, match=message):
            tape.backward(loss)


def test_saving_a_non_array_is_an_error():
    class SavesNumber(wp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3.0)
            return wp.clone(x)

    with pytest.raises(TypeError, match="argument 1 is a float, not a weft array"):
        SavesNumber.apply(_x())


def test_forward_returning_non_array_is_an_error():
    class ReturnsNumpy(wp.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.numpy()

    with pytest.raises(TypeError, match="ReturnsNumpy.forward returned a ndarray as output 0"):
        ReturnsNumpy.apply(_x())


def test_no_grad_records_nothing():
    x = _x()
    y = wp.empty_like(x)
    with wp.Tape() as tape:
        with wp.no_grad():
            wp.launch(cube, dim=N, inputs=[x], outputs=[y])
            Cube.apply(x)
        wp.launch(cube, dim=N, inputs=[x], outputs=[y])
    assert [e.name for e in tape.launches] == ["cube"]


def test_no_grad_write_keeps_recorded_reads_right():
    x = _x()
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    values = x.numpy().copy()
    with wp.Tape() as tape:
        wp.launch(sin_sum, dim=N, inputs=[x], outputs=[loss])
        with wp.no_grad():
            wp.launch(scale, dim=N, inputs=[x, 0.0], outputs=[x])  # x zeroed, not recorded
    tape.backward(loss)
    np.testing.assert_allclose(x.grad.numpy(), np.cos(values), rtol=1e-12)


def test_gradcheck_tape_checks_functions():
    class WrongCube(Cube):
        @staticmethod
        def backward(ctx, adj_y):
            (x,) = ctx.saved_arrays
            return adj_y.numpy() * 2.0 * x.numpy() ** 2  # 2x^2 instead of 3x^2

    for function, right in ((Cube, True), (WrongCube, False)):
        x = _x()
        with wp.Tape() as tape:
            function.apply(x)
        assert wp.autograd.gradcheck_tape(tape, raise_exception=False, show_summary=False) is right


def test_views_keyword_arguments_and_gradcheck():
    class ScaleBy(wp.autograd.Function):
        @staticmethod
        def forward(ctx, x, *, factor):
            ctx.factor = factor
            y = wp.empty_like(x)
            wp.launch(scale, dim=x.shape, inputs=[x, factor], outputs=[y])
            return y

        @staticmethod
        def backward(ctx, adj):
            return adj.numpy() * ctx.factor

    base = wp.array(np.linspace(0.5, 2.0, 8), dtype=wp.float64, requires_grad=True)
    view = base[2:7]
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        y = ScaleBy.apply(view, factor=3.0)
        z = Cube.apply(y)
        wp.launch(total, dim=N, inputs=[z], outputs=[loss])
    tape.backward(loss)
    v = base.numpy()[2:7]
    expected = np.zeros(8)
    expected[2:7] = 3 * (3 * v) ** 2 * 3
    np.testing.assert_allclose(base.grad.numpy(), expected, rtol=1e-12)
    x = _x()
    assert wp.autograd.gradcheck(Cube.apply, inputs=[x], eps=1e-6, atol=1e-7, rtol=1e-6, show_summary=False)
