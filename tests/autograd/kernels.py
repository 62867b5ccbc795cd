"""Kernels and helpers shared by the weft.autograd tests (float64, with Jacobians known in
closed form)."""

import numpy as np

import weft as wp

F64 = wp.float64


def f64(values, requires_grad=True, dtype=F64):
    """A float64 (or `dtype`) weft array holding `values`."""
    return wp.array(np.asarray(values, dtype=np.float64), dtype=dtype, requires_grad=requires_grad)


def zeros(shape, dtype=F64):
    return wp.zeros(shape, dtype=dtype, requires_grad=True)


@wp.kernel
def sin_times_x(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    y[i] = wp.sin(x[i]) * x[i]


@wp.kernel
def sin_times_x32(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = wp.sin(x[i]) * x[i]


@wp.kernel
def sum_squares(x: wp.array(dtype=F64), loss: wp.array(dtype=F64)):
    i = wp.tid()
    wp.atomic_add(loss, 0, x[i] * x[i])


def d_sin_times_x(x):
    return np.sin(x) + x * np.cos(x)


def two_launch_chain(x):
    """A Python function of two launches: y = sin(x)*x, then loss = sum(y^2); returns [y, loss]."""
    y = wp.zeros(x.shape[0], dtype=F64, requires_grad=True)
    loss = wp.zeros(1, dtype=F64, requires_grad=True)
    wp.launch(sin_times_x, x.shape[0], inputs=[x], outputs=[y])
    wp.launch(sum_squares, x.shape[0], inputs=[y], outputs=[loss])
    return [y, loss]


@wp.kernel
def cube(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    y[i] = x[i] * x[i] * x[i]


@wp.kernel
def cube_adjoint(x: wp.array(dtype=F64), adj_y: wp.array(dtype=F64),
                 adj_x: wp.array(dtype=F64)):
    i = wp.tid()
    adj_x[i] = 3.0 * x[i] * x[i] * adj_y[i]


class Cube(wp.autograd.Function):
    """y = x^3 with a hand-written backward (cube_adjoint); `calls` counts backward calls."""

    calls = 0

    @staticmethod
    def forward(ctx, x):
        y = wp.empty_like(x)
        wp.launch(cube, dim=x.shape, inputs=[x], outputs=[y])
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, adj_y):
        Cube.calls += 1
        (x,) = ctx.saved_arrays
        adj_x = wp.empty_like(x)
        wp.launch(cube_adjoint, dim=x.shape, inputs=[x, adj_y], outputs=[adj_x])
        return adj_x
