"""Matrix values: constructors (components, fill, from rows/columns as vectors, matrix_from_rows
and matrix_from_cols, wp.matrix with shape/dtype, identity, diag, outer, skew, a transform
matrix from transform_compose), indexing m[i, j] and m[i] rows, element and row assignment,
transpose, determinant, inverse, trace, ddot, products with vectors, float64 and 2x3 shapes,
and gradients of a determinant and an inverse."""

import numpy as np
import warp as wp

mat23 = wp.types.matrix(shape=(2, 3), dtype=wp.float32)


@wp.kernel
def build(out: wp.array(dtype=wp.mat33, ndim=2), out23: wp.array(dtype=mat23), outd: wp.array(dtype=wp.mat22d)):
    i = wp.tid()
    f = float(i) + 1.0
    r0 = wp.vec3(f, 1.0, 0.0)
    r1 = wp.vec3(0.0, 2.0, f)
    r2 = wp.vec3(1.0, -1.0, 3.0)
    out[i, 0] = wp.mat33(f, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 10.0)
    out[i, 1] = wp.mat33(f)
    out[i, 2] = wp.matrix_from_rows(r0, r1, r2)
    out[i, 3] = wp.matrix_from_cols(r0, r1, r2)
    out[i, 4] = wp.identity(n=3, dtype=float) * f
    out[i, 5] = wp.diag(r0)
    out[i, 6] = wp.outer(r0, r2)
    out[i, 7] = wp.skew(r1)
    out[i, 8] = wp.matrix(f, 0.0, 1.0, 0.0, f, 0.0, 1.0, 0.0, f, shape=(3, 3))
    out[i, 9] = wp.mat33()
    out23[i] = mat23(1.0, f, 3.0, 4.0, 5.0, -f)
    outd[i] = wp.mat22d(wp.float64(f), wp.float64(0.5), wp.float64(-1.0), wp.float64(2.0))


@wp.kernel
def algebra(m: wp.array(dtype=wp.mat33), v: wp.array(dtype=wp.vec3), mats: wp.array(dtype=wp.mat33, ndim=2),
            vecs: wp.array(dtype=wp.vec3, ndim=2), s: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    a = m[i]
    x = v[i]
    mats[i, 0] = wp.transpose(a)
    mats[i, 1] = wp.inverse(a)
    mats[i, 2] = a @ wp.transpose(a)
    mats[i, 3] = a * 2.0 - a / 4.0 + wp.identity(n=3, dtype=float)
    mats[i, 4] = wp.cw_mul(a, a)
    b = a
    b[0, 1] = 9.0
    b[2] = wp.vec3(-1.0, -2.0, -3.0)
    b[1, 1] += 0.5
    mats[i, 5] = b
    vecs[i, 0] = a @ x
    vecs[i, 1] = x @ a
    vecs[i, 2] = a * x
    vecs[i, 3] = a[1]
    vecs[i, 4] = wp.get_diag(a)
    s[i, 0] = wp.determinant(a)
    s[i, 1] = wp.trace(a)
    s[i, 2] = wp.ddot(a, a)
    s[i, 3] = a[2, 0] + a[0][2]
    s[i, 4] = wp.determinant(wp.mat22(a[0, 0], a[0, 1], a[1, 0], a[1, 1]))
    s[i, 5] = wp.determinant(wp.mat44(a[0, 0], 0.0, 0.0, 1.0, 0.0, a[1, 1], 0.0, 0.0, 0.0, 0.0, 2.0, 0.0,
                                      1.0, 0.0, 0.0, a[2, 2]))


@wp.kernel
def transform_matrix(p: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.mat44), pts: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    q = wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), 0.3 * float(i))
    m = wp.transform_compose(p[i], q, wp.vec3(1.0, 2.0, 0.5))
    out[i] = m
    pts[i] = wp.transform_point(m, wp.vec3(1.0, 1.0, 1.0)) + wp.transform_vector(m, wp.vec3(0.0, 0.0, 1.0))


@wp.kernel
def rect(a: wp.array(dtype=mat23), x: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec2),
         t: wp.array(dtype=wp.types.matrix(shape=(3, 2), dtype=wp.float32))):
    i = wp.tid()
    y[i] = a[i] @ x[i]
    t[i] = wp.transpose(a[i])


@wp.kernel
def loss(m: wp.array(dtype=wp.mat33), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    a = m[i]
    inv = wp.inverse(a)
    y = inv @ v[i]
    wp.atomic_add(out, 0, wp.determinant(a) + wp.dot(y, y) + wp.trace(a @ a))


def run():
    n = 6
    rng = np.random.default_rng(4)
    out = wp.zeros((n, 10), dtype=wp.mat33)
    out23 = wp.zeros(n, dtype=mat23)
    outd = wp.zeros(n, dtype=wp.mat22d)
    wp.launch(build, dim=n, outputs=[out, out23, outd])

    mh = (rng.uniform(-1.0, 1.0, (n, 3, 3)) + 2.0 * np.eye(3)).astype(np.float32)
    m = wp.array(mh, dtype=wp.mat33, requires_grad=True)
    v = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    mats = wp.zeros((n, 6), dtype=wp.mat33)
    vecs = wp.zeros((n, 5), dtype=wp.vec3)
    s = wp.zeros((n, 6), dtype=float)
    wp.launch(algebra, dim=n, inputs=[m, v], outputs=[mats, vecs, s])

    tm = wp.zeros(n, dtype=wp.mat44)
    pts = wp.zeros(n, dtype=wp.vec3)
    wp.launch(transform_matrix, dim=n, inputs=[v], outputs=[tm, pts])

    y = wp.zeros(n, dtype=wp.vec2)
    t = wp.zeros(n, dtype=wp.types.matrix(shape=(3, 2), dtype=wp.float32))
    wp.launch(rect, dim=n, inputs=[out23, v], outputs=[y, t])

    total = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(loss, dim=n, inputs=[m, v], outputs=[total])
    tape.backward(total)
    return {"build": out.numpy(), "m23": out23.numpy(), "m22d": outd.numpy(), "mats": mats.numpy(),
            "vecs": vecs.numpy(), "scalars": s.numpy(), "xform": tm.numpy(), "pts": pts.numpy(), "rect": y.numpy(),
            "rectT": t.numpy(), "loss": total.numpy(), "grad_m": m.grad.numpy(), "grad_v": v.grad.numpy()}


TOLERANCE = {"mats": (1e-5, 1e-5), "scalars": (1e-5, 1e-5), "loss": (1e-5, 1e-5), "grad_m": (1e-4, 1e-5),
             "grad_v": (1e-4, 1e-5)}
