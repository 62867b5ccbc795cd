"""Adds into one element every thread adds to go through a per-core sum (uniform_acc.py):
same results (float64 analytic values), and not where the kernel reads the array."""

import numpy as np

import weft as wp
from weft.codegen.uniform_acc import uniform_accumulations


@wp.kernel
def affine(x: wp.array(dtype=wp.vec3d), k: wp.array(dtype=wp.float64), g: wp.array(dtype=wp.vec3d),
           y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    y[i] = x[i] * k[0] + g[0]


@wp.kernel
def squared_norms(y: wp.array(dtype=wp.vec3d), total: wp.array(dtype=wp.float64)):
    i = wp.tid()
    wp.atomic_add(total, 0, wp.dot(y[i], y[i]))


@wp.kernel
def add_then_read(total: wp.array(dtype=float), seen: wp.array(dtype=float)):
    i = wp.tid()
    total[0] += 1.0
    seen[i] = total[0]


def test_shared_parameter_gradients_on_every_core():
    n = 50_000
    rng = np.random.default_rng(0)
    xn = rng.normal(size=(n, 3))
    x = wp.array(xn, dtype=wp.vec3d, requires_grad=True)
    k = wp.array([2.0], dtype=wp.float64, requires_grad=True)
    g = wp.array([[0.0, -1.0, 0.5]], dtype=wp.vec3d, requires_grad=True)
    y = wp.zeros(n, dtype=wp.vec3d, requires_grad=True)
    total = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    saved = wp.config.parallel_threshold
    wp.config.parallel_threshold = 1  # every launch split over the cores
    try:
        with wp.Tape() as tape:
            wp.launch(affine, dim=n, inputs=[x, k, g, y])
            wp.launch(squared_norms, dim=n, inputs=[y, total])
        tape.backward(total)
    finally:
        wp.config.parallel_threshold = saved
    yn = 2.0 * xn + np.array([0.0, -1.0, 0.5])
    np.testing.assert_allclose(total.numpy()[0], (yn * yn).sum(), rtol=1e-12)
    np.testing.assert_allclose(k.grad.numpy()[0], (2 * yn * xn).sum(), rtol=1e-12)
    np.testing.assert_allclose(g.grad.numpy()[0], (2 * yn).sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), 4 * yn, rtol=1e-12)
    # the adjoint's adds into k.grad[0] and g.grad[0] are the per-core kind
    assert len(uniform_accumulations(affine.adjoint_ir())) == 2


def test_not_when_the_kernel_reads_the_array():
    total = wp.zeros(1, dtype=float)
    seen = wp.zeros(1, dtype=float)
    wp.launch(add_then_read, dim=1, inputs=[total, seen])
    assert seen.numpy()[0] == 1.0  # the add is visible to the read that follows it
    assert not uniform_accumulations(add_then_read.ir())
