"""Gradients where weft and Warp 1.19 disagree and weft is right (Warp's own tests expect
Warp's values: test_arithmetic.test_binary_ops_*, test_mat.test_mat_slicing_assign_backward,
test_volume.test_volume_transform_gradient).
Each is checked against float64 central differences."""

import numpy as np

import weft as wp


@wp.kernel
def _fmod(a: wp.array(dtype=wp.float64), b: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    out[i] = wp.mod(a[i], b[i])


def _run_fmod(a, b, grad=False):
    aa = wp.array(a, dtype=wp.float64, requires_grad=grad)
    bb = wp.array(b, dtype=wp.float64, requires_grad=grad)
    out = wp.zeros(len(a), dtype=wp.float64, requires_grad=grad)
    tape = wp.Tape()
    with tape:
        wp.launch(_fmod, len(a), inputs=[aa, bb], outputs=[out])
    return aa, bb, out, tape


def test_mod_gradient_in_its_divisor():
    """fmod(a, b) = a - b trunc(a / b): d/db = -trunc(a / b). Warp's adj_mod adds nothing to b."""
    a = np.array([5.3, -5.3, 7.9, 0.4, -3.1])
    b = np.array([2.1, 2.1, -1.7, 3.0, 0.7])
    aa, bb, out, tape = _run_fmod(a, b, grad=True)
    tape.backward(grads={out: wp.ones_like(out)})
    np.testing.assert_allclose(aa.grad.numpy(), np.ones(5))
    np.testing.assert_allclose(bb.grad.numpy(), -np.trunc(a / b))
    h = 1e-6
    fd = (_run_fmod(a, b + h)[2].numpy() - _run_fmod(a, b - h)[2].numpy()) / (2 * h)
    np.testing.assert_allclose(bb.grad.numpy(), fd, rtol=1e-6)
    assert np.any(bb.grad.numpy() != 0.0)  # where Warp reports 0


mat23 = wp.types.matrix((2, 3), wp.float64)


@wp.kernel
def _slice_assign(x: wp.array(dtype=wp.vec2d), y: wp.array(dtype=mat23), z: wp.array(dtype=wp.mat44d)):
    i = wp.tid()
    m = z[i]
    m[0, :2] = x[i]
    m[:2, 1:] = y[i]  # overwrites m[0, 1] = x[1]
    m[:2, 3] += x[i][:2]
    m[1:-1, :2] += y[i][::-1, :-1]
    m[2:, 3] -= x[i][0:]
    m[3:, -1:] -= y[i][:1, :1]
    z[i] = m


def _slice_assign_sum(x, y):
    z = wp.zeros(1, dtype=wp.mat44d)
    wp.launch(_slice_assign, 1, inputs=[wp.array(x, dtype=wp.vec2d), wp.array(y, dtype=mat23)], outputs=[z])
    return z.numpy().sum()


def test_matrix_slice_assignment_drops_the_overwritten_gradient():
    """Test_mat's kernel: x[1] written to m[0, 1] and then overwritten has no influence
    there. d sum(z) / dx = (1, 0); Warp reports (1, 1)."""
    x0, y0 = np.ones((1, 2)), np.ones((1, 2, 3))
    x = wp.array(x0, dtype=wp.vec2d, requires_grad=True)
    y = wp.array(y0, dtype=mat23, requires_grad=True)
    z = wp.zeros(1, dtype=wp.mat44d, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_slice_assign, 1, inputs=[x, y], outputs=[z])
    tape.backward(grads={z: wp.ones_like(z)})
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 0.0]])
    h = 1e-6
    for k in range(2):
        d = np.zeros((1, 2))
        d[0, k] = h
        fd = (_slice_assign_sum(x0 + d, y0) - _slice_assign_sum(x0 - d, y0)) / (2 * h)
        np.testing.assert_allclose(x.grad.numpy()[0, k], fd, atol=1e-8)
    np.testing.assert_array_equal(y.grad.numpy(), [[[1.0, 2.0, 1.0], [2.0, 2.0, 1.0]]])


@wp.kernel
def _index_to_world_sum(volume: wp.uint64, points: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = wp.dot(wp.volume_index_to_world(volume, points[i]), wp.vec3(1.0, 2.0, 3.0))


def test_volume_index_to_world_gradient_is_the_transposed_transform():
    """x = M p + t: d <x, w> / dp = M^T w. Warp's adjoint applies M itself (the direction
    transform), which only agrees for a symmetric M; test_volume's torus has a rotation in
    M and its test_volume_transform_gradient expects M w."""
    m = np.array([[0.1, 0.0, 0.0], [0.0, 0.0, 0.1], [0.0, -0.1, 0.0]], np.float32)
    tiles = wp.array([[0, 0, 0]], dtype=wp.int32)
    vol = wp.Volume.allocate_by_tiles(tiles, transform=m, translation=(1.0, 2.0, 3.0))
    w = np.array([1.0, 2.0, 3.0])
    p0 = np.array([[0.3, -1.2, 2.5]])

    def f(p):
        out = wp.zeros(1, dtype=wp.float32)
        wp.launch(_index_to_world_sum, 1, inputs=[vol.id, wp.array(p, dtype=wp.vec3), out])
        return float(out.numpy()[0])

    p = wp.array(p0, dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_index_to_world_sum, 1, inputs=[vol.id, p, out])
    np.testing.assert_allclose(out.numpy()[0], (m.astype(np.float64) @ p0[0] + [1.0, 2.0, 3.0]) @ w, rtol=1e-6)
    tape.backward(loss=out)
    np.testing.assert_allclose(p.grad.numpy()[0], m.T.astype(np.float64) @ w, rtol=1e-6)
    h = 0.5  # (the map is affine: central differences are exact up to float32 rounding)
    fd = [(f(p0 + h * np.eye(3)[k]) - f(p0 - h * np.eye(3)[k])) / (2 * h) for k in range(3)]
    np.testing.assert_allclose(p.grad.numpy()[0], fd, atol=1e-5)
    assert not np.allclose(m.T @ w, m @ w)  # Warp's value differs here


HORNER_DEGREE = wp.constant(5)


@wp.kernel
def _horner(x: wp.array(dtype=wp.float64), c: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    acc = wp.float64(0.0)
    for k in range(HORNER_DEGREE + 1):  # a bound Warp does not unroll: an expression of a constant
        acc = acc * x[i] + c[HORNER_DEGREE - k]
    y[i] = acc


def _horner_values(x, c):
    y = wp.zeros(len(x), dtype=wp.float64)
    wp.launch(_horner, len(x), inputs=[wp.array(x, dtype=wp.float64), wp.array(c, dtype=wp.float64)], outputs=[y])
    return y.numpy()


def test_loop_carried_overwrite_with_a_constant_expression_bound():
    """Horner's rule `acc = acc * x + c[...]` over `range(DEGREE + 1)` (DEGREE a wp.constant).
    Warp 1.19 unrolls `range(DEGREE)` and `range(wp.static(DEGREE + 1))` but keeps this loop
    dynamic, and its adjoint of a dynamic loop that overwrites a carried local is wrong
    (x = [0.5, -0.3] gives d/dx [0.356, 0.838] instead of [0.406, -0.525]); weft stores
    the carried value per iteration, so the gradient is the polynomial's derivative."""
    x = np.array([0.5, -0.3, 0.9])
    c = np.array([0.5, -1.0, 0.25, 2.0, -0.75, 0.1])
    xa, ca = wp.array(x, dtype=wp.float64, requires_grad=True), wp.array(c, dtype=wp.float64, requires_grad=True)
    y = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_horner, 3, inputs=[xa, ca], outputs=[y])
    tape.backward(grads={y: wp.ones_like(y)})
    np.testing.assert_allclose(y.numpy(), np.polyval(c[::-1], x), rtol=1e-14)
    np.testing.assert_allclose(xa.grad.numpy(), np.polyval(np.polyder(c[::-1]), x), rtol=1e-12)
    np.testing.assert_allclose(ca.grad.numpy(), [np.sum(x**k) for k in range(6)], rtol=1e-12)
    h = 1e-6
    fd = (_horner_values(x + h, c) - _horner_values(x - h, c)) / (2 * h)
    np.testing.assert_allclose(xa.grad.numpy(), fd, rtol=1e-7)


@wp.kernel
def _frac(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = wp.frac(x[i]) * wp.float64(3.0)


def test_frac_gradient_is_one_between_integers():
    """frac(x) = x - trunc(x) has derivative 1 off the integers. Warp 1.19's adj_frac is
    empty (a MISSINGADJOINT note), so Warp reports 0; weft reports 1."""
    x = np.array([-2.7, -0.4, 0.3, 1.5, 4.9])
    xa = wp.array(x, dtype=wp.float64, requires_grad=True)
    y = wp.zeros(5, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_frac, 5, inputs=[xa], outputs=[y])
    tape.backward(grads={y: wp.ones_like(y)})
    np.testing.assert_allclose(y.numpy(), 3.0 * (x - np.trunc(x)), rtol=1e-14)
    np.testing.assert_array_equal(xa.grad.numpy(), np.full(5, 3.0))


@wp.kernel
def _component_overwrite(v: wp.array(dtype=wp.vec3d), t: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    u = v[i]
    u[1] = u[1] + t[i] * u[0]  # a local vector component rewritten from its own old value
    out[i] = wp.dot(u, u)


def test_local_vector_component_rewritten_from_itself():
    """`u[1] = u[1] + t * u[0]` on a local vector: the old u[1] is gone after the write, so
    d(u.u)/dv1 = 2 u1_new. Warp 1.19 keeps the overwritten component's adjoint as well and
    reports twice that (v = (0.5, -0.3, 0.2), t = 0.7: 0.2 where the derivative is 0.1)."""
    v = np.array([[0.5, -0.3, 0.2], [1.0, 2.0, -1.0]])
    t = np.array([0.7, -0.4])
    va, ta = wp.array(v, dtype=wp.vec3d, requires_grad=True), wp.array(t, dtype=wp.float64, requires_grad=True)
    out = wp.zeros(2, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_component_overwrite, 2, inputs=[va, ta], outputs=[out])
    tape.backward(grads={out: wp.ones_like(out)})
    u1 = v[:, 1] + t * v[:, 0]
    np.testing.assert_allclose(out.numpy(), v[:, 0] ** 2 + u1**2 + v[:, 2] ** 2, rtol=1e-14)
    want = np.stack([2 * v[:, 0] + 2 * u1 * t, 2 * u1, 2 * v[:, 2]], axis=1)
    np.testing.assert_allclose(va.grad.numpy(), want, rtol=1e-13)
    np.testing.assert_allclose(ta.grad.numpy(), 2 * u1 * v[:, 0], rtol=1e-13)


@wp.kernel
def _tile_reductions(x: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    t = wp.tile_load(x, shape=8)
    wp.tile_atomic_add(out, wp.tile_reduce(wp.add, t * t) + wp.tile_max(t))


def test_tile_reduce_and_tile_max_pass_gradients():
    """tile_reduce(add, x * x) + tile_max(x) over 8 values: d/dx = 2x plus 1 at the maximum.
    On Warp 1.19's CPU backend the adjoints of tile_reduce and tile_max add nothing (x.grad
    stays 0, while tile_sum of the same tile is differentiated)."""
    x = np.linspace(-1.0, 0.75, 8)
    xa = wp.array(x, dtype=wp.float64, requires_grad=True)
    out = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(_tile_reductions, dim=[1], inputs=[xa], outputs=[out], block_dim=8)
    tape.backward(grads={out: wp.ones_like(out)})
    np.testing.assert_allclose(out.numpy(), [np.sum(x * x) + x.max()], rtol=1e-14)
    want = 2.0 * x
    want[np.argmax(x)] += 1.0
    np.testing.assert_allclose(xa.grad.numpy(), want, rtol=1e-14)


@wp.func
def _bilinear(uv: wp.vec2d, texture: wp.array2d(dtype=wp.float64)):
    x = uv[0] * wp.float64(texture.shape[1] - 1)
    y = uv[1] * wp.float64(texture.shape[0] - 1)
    x0 = int(x)
    y0 = int(y)
    ax = x - wp.float64(x0)
    ay = y - wp.float64(y0)
    lower = (wp.float64(1.0) - ax) * texture[y0, x0] + ax * texture[y0, x0 + 1]
    upper = (wp.float64(1.0) - ax) * texture[y0 + 1, x0] + ax * texture[y0 + 1, x0 + 1]
    return (wp.float64(1.0) - ay) * lower + ay * upper


@wp.kernel
def _shade(uv: wp.array(dtype=wp.vec2d), normals: wp.array(dtype=wp.vec3d), texture: wp.array2d(dtype=wp.float64),
           light_dirs: wp.array(dtype=wp.vec3d), intensities: wp.array(dtype=wp.float64), num_lights: int,
           out: wp.array(dtype=wp.float64)):
    tid = wp.tid()
    color = _bilinear(uv[tid], texture)
    lambert = wp.float64(0.0)
    for i in range(num_lights):  # dynamic: num_lights is a launch argument
        val = intensities[i] * wp.dot(normals[tid], light_dirs[i])
        if val < wp.float64(0.0):
            val = wp.float64(0.0)
        lambert = lambert + val
    out[tid] = lambert * color


def _shade_case(rng):
    n = 6
    normals = rng.normal(size=(n, 3))
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    return dict(uv=rng.uniform(0.1, 0.9, (n, 2)), normals=normals, texture=rng.uniform(0.0, 1.0, (8, 8)),
                light_dirs=np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]),
                intensities=np.array([2.0, 0.5, 1.0]))


_SHADE_TYPES = dict(uv=wp.vec2d, normals=wp.vec3d, texture=wp.float64, light_dirs=wp.vec3d, intensities=wp.float64)


def _shade_sum(case, grad=False):
    arrays = {k: wp.array(v, dtype=_SHADE_TYPES[k], requires_grad=grad) for k, v in case.items()}
    out = wp.zeros(len(case["uv"]), dtype=wp.float64, requires_grad=grad)
    tape = wp.Tape()
    with tape:
        wp.launch(_shade, len(case["uv"]), inputs=[*arrays.values(), 3], outputs=[out])
    return arrays, out, tape


def test_value_accumulated_in_a_dynamic_loop_scales_a_texture_read():
    """The shading of Warp's example_diffray: a bilinear texture read times a Lambert term
    summed over the lights in a dynamic loop. Warp 1.19's adjoint does not replay the loop,
    so `lambert` is 0 when `lambert * color` is differentiated: the texture's and the texture
    coordinates' gradients come out 0 (there, and in that example, whose optimisation of the
    mesh rotation follows a wrong gradient). weft's agree with central differences."""
    case = _shade_case(np.random.default_rng(1))
    arrays, out, tape = _shade_sum(case, grad=True)
    tape.backward(grads={out: wp.ones_like(out)})
    h = 1e-6
    for name in ("texture", "uv", "normals", "intensities"):
        grad = arrays[name].grad.numpy().reshape(-1)
        base = case[name]
        fd = np.empty(base.size)
        for k in range(base.size):
            step = np.zeros(base.size)
            step[k] = h
            plus = dict(case, **{name: base + step.reshape(base.shape)})
            minus = dict(case, **{name: base - step.reshape(base.shape)})
            fd[k] = (_shade_sum(plus)[1].numpy().sum() - _shade_sum(minus)[1].numpy().sum()) / (2 * h)
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8, err_msg=name)
    assert abs(arrays["texture"].grad.numpy().sum()) > 0.1  # where Warp reports 0
