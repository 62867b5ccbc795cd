"""Reverse mode through composite locals: vectors, matrices, quaternions, transforms and
structs; component assignment (a functional update of the local), components assigned
twice, `v[i] = v[i] * x`, dynamic indices and matrix elements. Checked in float64 against
finite differences of the forward kernel, and analytically where easy."""

import numpy as np
import pytest

import weft as wp

from .helpers import F64, check_adjoint, ones_seed

X = np.array([-1.3, -0.4, 0.6, 1.1])
V = np.array([[0.3, -1.2, 0.8], [1.5, 0.2, -0.7], [-0.6, 0.9, 1.1], [0.4, 0.4, -1.6]])


@wp.struct
class Body:
    pos: wp.vec3d
    mass: F64


@wp.func
def body_energy(b: Body) -> F64:
    return b.mass * wp.dot(b.pos, b.pos) + wp.sin(b.pos[1])


# Vector, matrix, quaternion, transform and struct locals --------------------------------------
@wp.kernel
def vector_ops(x: wp.array(dtype=wp.vec3d), w: wp.array(dtype=F64), y: wp.array(dtype=F64),
               z: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = x[i]
    s = w[i]
    u = wp.vec3d(s, s * s, 1.0)
    c = wp.cross(v, u)
    n = wp.normalize(v + u)
    y[i] = wp.dot(c, n) + wp.length(v) * s + wp.length_sq(u) + v[1] * u[2]
    z[i] = c * s + wp.cw_mul(v, u) - n / (s * s + 1.0) + wp.vec3d(v.x * v.z, s, v.y)


def test_vector_locals():
    check_adjoint(vector_ops, 4, [(V, wp.vec3d), X, np.zeros(4), (np.zeros((4, 3)), wp.vec3d)])


@wp.kernel
def matrix_ops(x: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat33d), y: wp.array(dtype=F64),
               z: wp.array(dtype=wp.vec3d), o: wp.array(dtype=wp.mat33d)):
    i = wp.tid()
    a = m[i]
    v = x[i]
    b = a * wp.transpose(a) + wp.identity(n=3, dtype=F64)
    y[i] = wp.determinant(b) + wp.trace(a * a) + a[1, 2] * v[0]
    z[i] = wp.inverse(b) * v + a[1] + wp.skew(v) * a[2]
    o[i] = wp.outer(v, v) * a + wp.diag(v) * 2.0


def test_matrix_locals():
    m = np.random.default_rng(1).standard_normal((4, 3, 3))
    check_adjoint(matrix_ops, 4, [(V, wp.vec3d), (m, wp.mat33d), np.zeros(4), (np.zeros((4, 3)), wp.vec3d),
                                  (np.zeros((4, 3, 3)), wp.mat33d)])


@wp.kernel
def quat_ops(q: wp.array(dtype=wp.quatd), x: wp.array(dtype=wp.vec3d), ang: wp.array(dtype=F64),
             y: wp.array(dtype=F64), z: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    r = wp.quat_from_axis_angle(wp.normalize(x[i]), ang[i])
    p = q[i] * r
    t = wp.transformd(x[i] * 0.5, r)
    z[i] = wp.quat_rotate(p, x[i]) + wp.quat_rotate_inv(r, x[i]) + wp.transform_point(t, x[i])
    y[i] = p[3] * 2.0 + p.x * p.y + wp.trace(wp.quat_to_matrix(r)) + wp.quat_inverse(p)[0]


def test_quaternion_and_transform_locals():
    q = np.random.default_rng(2).standard_normal((4, 4))
    check_adjoint(quat_ops, 4, [(q, wp.quatd), (V, wp.vec3d), X, np.zeros(4), (np.zeros((4, 3)), wp.vec3d)])


@wp.kernel
def struct_local(x: wp.array(dtype=wp.vec3d), w: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    b = Body()
    b.pos = x[i] * w[i]
    b.mass = w[i] * w[i]
    if w[i] > 0.0:
        b.mass = b.mass * 3.0
    y[i] = body_energy(b)


def test_struct_local():
    check_adjoint(struct_local, 4, [(V, wp.vec3d), X, np.zeros(4)])


@wp.kernel
def composite_loop(x: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat33d), z: wp.array(dtype=wp.vec3d),
                   n: int):
    i = wp.tid()
    v = x[i]
    a = m[i]
    for _j in range(n):  # a vector and a matrix carried through a dynamic loop
        v = a * v * 0.5 + wp.vec3d(wp.sin(v[0]), wp.cos(v[2]), v[1])
        a = a * 0.9 + wp.outer(v, v) * 0.05
        if v[0] > 0.0:
            v[1] = v[1] * v[0]
    z[i] = v + a[0]


def test_composites_carried_through_dynamic_loop():
    m = np.random.default_rng(3).standard_normal((4, 3, 3)) * 0.5
    check_adjoint(composite_loop, 4, [(V, wp.vec3d), (m, wp.mat33d), (np.zeros((4, 3)), wp.vec3d), 3])


@wp.kernel
def struct_loop(x: wp.array(dtype=wp.vec3d), w: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    b = Body()
    b.pos = x[i]
    b.mass = w[i]
    for _j in range(n):  # a struct carried through a dynamic loop
        b.pos = b.pos * b.mass + wp.vec3d(0.0, 0.1, 0.0)
        b.mass = wp.sin(b.mass) + 0.5
    y[i] = body_energy(b)


def test_struct_carried_through_dynamic_loop():
    check_adjoint(struct_loop, 4, [(V, wp.vec3d), X, np.zeros(4), 3])


# Component assignment -----------------------------------------------------------------------
@wp.kernel
def component_assign(x: wp.array(dtype=F64), y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    s = x[i]
    v = wp.vec3d(1.0, 2.0, 3.0)
    v[0] = s * s  # a functional update: v is a new value with component 0 replaced
    v.z = wp.sin(s)
    y[i] = v


def test_component_assignment():
    args = [X, (np.zeros((4, 3)), wp.vec3d)]
    g = check_adjoint(component_assign, 4, args, {1: np.tile([1.0, 10.0, 100.0], (4, 1))})
    np.testing.assert_allclose(g[0], 2 * X + 100 * np.cos(X), rtol=1e-12)


@wp.kernel
def assigned_twice(x: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    s = x[i]
    v = wp.vec3d(s, s, s)
    v[1] = s * 3.0
    v[1] = v[1] * s  # the same component again, reading its previous value
    y[i] = v[0] + v[1] + v[2]


def test_component_assigned_twice():
    # Warp: the second assignment to v[1] overwrites the adjoint of the first in backward,
    # so the 3 * s path is lost. y = s + 3 s^2 + s, dy/ds = 6 s + 2.
    args = [X, np.zeros(4)]
    g = check_adjoint(assigned_twice, 4, args, ones_seed(args, 1))
    np.testing.assert_allclose(g[0], 6 * X + 2, rtol=1e-12)


@wp.kernel
def scale_component(x: wp.array(dtype=wp.vec3d), w: wp.array(dtype=F64), y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = x[i]
    v[1] = v[1] * w[i]  # v[i] = v[i] * x
    v[2] *= w[i]
    y[i] = v


def test_component_scaled_in_place():
    # Warp: `v[i] = v[i] * x` drops the gradient of the old v[i] (wrong d y / d x[1])
    args = [(V, wp.vec3d), X, (np.zeros((4, 3)), wp.vec3d)]
    g = check_adjoint(scale_component, 4, args, ones_seed(args, 2))
    np.testing.assert_allclose(g[0], np.stack([np.ones(4), X, X], axis=1), rtol=1e-12)
    np.testing.assert_allclose(g[1], V[:, 1] + V[:, 2], rtol=1e-12)


@wp.kernel
def dynamic_component(x: wp.array(dtype=F64), idx: wp.array(dtype=int), y: wp.array(dtype=F64),
                      z: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    s = x[i]
    j = idx[i]
    v = wp.vec3d(s, 2.0 * s, 3.0 * s)
    v[j] = v[j] * s  # dynamic index, read and written
    y[i] = v[j] * v[0]
    z[i] = v


def test_dynamic_component_index():
    idx = np.array([0, 1, 2, 1], np.int32)
    args = [X, idx, np.zeros(4), (np.zeros((4, 3)), wp.vec3d)]
    g = check_adjoint(dynamic_component, 4, args, ones_seed(args, 2))
    # y = (k s^2) * (s or s^2 when j == 0): k = j + 1
    k = idx + 1.0
    expected = np.where(idx == 0, 4 * X**3, 3 * k * X**2)
    np.testing.assert_allclose(g[0], expected, rtol=1e-12)
    check_adjoint(dynamic_component, 4, args)


@wp.kernel
def matrix_elements(x: wp.array(dtype=F64), idx: wp.array(dtype=int), y: wp.array(dtype=F64),
                    o: wp.array(dtype=wp.mat22d)):
    i = wp.tid()
    s = x[i]
    j = idx[i]
    m = wp.mat22d(s, 1.0, 2.0, s * s)
    m[0, 1] = wp.sin(s)
    m[1, 1] = m[1, 1] * s
    m[j, 0] = m[j, 0] + s * 10.0  # dynamic row
    y[i] = wp.determinant(m)
    o[i] = m


def test_matrix_element_assignment():
    idx = np.array([0, 1, 1, 0], np.int32)
    check_adjoint(matrix_elements, 4, [X, idx, np.zeros(4), (np.zeros((4, 2, 2)), wp.mat22d)])


@wp.kernel
def components_in_loops(x: wp.array(dtype=F64), y: wp.array(dtype=F64), n: int):
    i = wp.tid()
    v = x[i]
    u = wp.vec3d(v, 1.0, 0.0)
    m = wp.mat22d(v, 0.0, 0.0, 1.0)
    for j in range(n):
        for k in range(3):  # static inner loop: constant component indices
            u[k] = u[k] * 0.5 + v * F64(k)
        r = j % 2
        m[r, 1 - r] = m[r, r] * v + m[1 - r, r]  # dynamic matrix indices
        if j == 1:
            continue
        v = wp.dot(u, u) * 0.1 + v
        if v > 4.0:
            break
    y[i] = v + u[2] + wp.determinant(m)


def test_component_assignment_in_dynamic_loops():
    check_adjoint(components_in_loops, 4, [X, np.zeros(4), 4])


@wp.kernel
def struct_field_components(x: wp.array(dtype=wp.vec3d), w: wp.array(dtype=F64), y: wp.array(dtype=F64)):
    i = wp.tid()
    b = Body()
    b.pos = x[i]
    b.pos[0] = b.pos[0] * w[i]  # a component of a struct field
    b.mass = w[i]
    b.mass = b.mass * b.pos[2]
    y[i] = body_energy(b)


def test_struct_field_component_assignment():
    check_adjoint(struct_field_components, 4, [(V, wp.vec3d), X, np.zeros(4)])


@pytest.mark.parametrize("branch", [0, 1])
def test_component_assignment_in_branches_and_loops(branch):
    check_adjoint(branchy_components, 4, [(V, wp.vec3d), X, (np.zeros((4, 3)), wp.vec3d), 3, branch])


@wp.kernel
def branchy_components(x: wp.array(dtype=wp.vec3d), w: wp.array(dtype=F64), z: wp.array(dtype=wp.vec3d),
                       n: int, flag: int):
    i = wp.tid()
    v = x[i]
    s = w[i]
    if flag == 1:
        v[0] = v[0] * s
    else:
        v[2] = s
    for _j in range(n):
        v[1] = v[1] * 0.5 + v[0] * s
        v[0] = wp.sin(v[1])
    z[i] = v
