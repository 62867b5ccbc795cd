"""Slices of vectors, quaternions and matrices inside kernels (`v[1:]`, `m[0, :2]`,
`m[:2, 1:] = ...`, `v[::-1] += ...`): values as numpy slices them, gradients against
finite differences, Warp's errors for mismatched assignments."""

import numpy as np
import pytest

import weft as wp

vec0 = wp.types.vector(0, float)
vec3 = wp.types.vector(3, float)
mat23 = wp.types.matrix((2, 3), float)


@wp.kernel
def read_slices(v: wp.array(dtype=wp.vec4), m: wp.array(dtype=wp.mat33), out2: wp.array(dtype=wp.vec2),
                out3: wp.array(dtype=wp.vec3), outm: wp.array(dtype=mat23)):
    x = v[0]
    a = m[0]
    out2[0] = x[1:3]
    out2[1] = x[::-2]
    out3[0] = x[:-1]
    out3[1] = a[:, 2]          # a column
    out2[2] = a[1, 1:]         # part of a row
    outm[0] = a[1:, :]         # rows 1 and 2
    outm[1] = a[::-2, ::1]     # rows 2 and 0, all columns


def test_reading_slices_matches_numpy():
    vn = np.array([[1.0, 2.0, 3.0, 4.0]], dtype=np.float32)
    mn = np.arange(9, dtype=np.float32).reshape(1, 3, 3)
    out2, out3 = wp.zeros(3, dtype=wp.vec2), wp.zeros(2, dtype=wp.vec3)
    outm = wp.zeros(2, dtype=mat23)
    wp.launch(read_slices, dim=1, inputs=[wp.array(vn, dtype=wp.vec4), wp.array(mn, dtype=wp.mat33), out2, out3,
                                          outm])
    x, a = vn[0], mn[0]
    np.testing.assert_array_equal(out2.numpy(), [x[1:3], x[::-2], a[1, 1:]])
    np.testing.assert_array_equal(out3.numpy(), [x[:-1], a[:, 2]])
    np.testing.assert_array_equal(outm.numpy(), [a[1:, :], a[::-2, ::1]])


@wp.kernel
def write_slices(x: wp.array(dtype=wp.vec2), y: wp.array(dtype=mat23), z: wp.array(dtype=wp.mat44),
                 q: wp.array(dtype=wp.quat)):
    i = wp.tid()
    m = z[i]
    m[0, :2] = x[i]
    m[:2, 1:] = y[i]
    m[:2, 3] += x[i][:2]
    m[1:-1, :2] += y[i][::-1, :-1]
    m[2:, 3] -= x[i][0:]
    m[3:, -1:] -= y[i][:1, :1]
    z[i] = m
    r = q[i]
    r[:2] = x[i]
    r[1:-1] += x[i][:2]
    r[3:1:-1] -= x[i][0:]
    q[i] = r


def _write_numpy(x, y, z, q):
    m = z.copy()
    m[0, :2] = x
    m[:2, 1:] = y
    m[:2, 3] += x[:2]
    m[1:-1, :2] += y[::-1, :-1]
    m[2:, 3] -= x[0:]
    m[3:, -1:] -= y[:1, :1]
    r = q.copy()
    r[:2] = x
    r[1:-1] += x[:2]
    r[3:1:-1] -= x[0:]
    return m, r


def test_writing_slices_matches_numpy_and_its_gradient_finite_differences():
    rng = np.random.default_rng(1)
    xn, yn = rng.normal(size=(1, 2)), rng.normal(size=(1, 2, 3))
    zn, qn = rng.normal(size=(1, 4, 4)), rng.normal(size=(1, 4))
    x = wp.array(xn, dtype=wp.vec2, requires_grad=True)
    y = wp.array(yn, dtype=mat23, requires_grad=True)
    z = wp.array(zn, dtype=wp.mat44, requires_grad=True)
    q = wp.array(qn, dtype=wp.quat, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(write_slices, dim=1, inputs=[x, y, z, q])
    m, r = _write_numpy(xn[0].astype(np.float32), yn[0].astype(np.float32), zn[0].astype(np.float32),
                        qn[0].astype(np.float32))
    np.testing.assert_allclose(z.numpy()[0], m, rtol=1e-6)
    np.testing.assert_allclose(q.numpy()[0], r, rtol=1e-6)
    # d(sum of all outputs)/dx and /dy, against finite differences of the numpy model in float64
    z.grad = wp.ones_like(z)
    q.grad = wp.ones_like(q)
    tape.backward()

    def total(xv, yv):
        a, b = _write_numpy(xv, yv, zn[0], qn[0])
        return a.sum() + b.sum()

    eps = 1e-6
    for name, base, grad in (("x", xn[0], x.grad.numpy()[0]), ("y", yn[0], y.grad.numpy()[0])):
        fd = np.zeros_like(base)
        for k in np.ndindex(base.shape):
            up, down = base.copy(), base.copy()
            up[k] += eps
            down[k] -= eps
            args_up = (up, yn[0]) if name == "x" else (xn[0], up)
            args_down = (down, yn[0]) if name == "x" else (xn[0], down)
            fd[k] = (total(*args_up) - total(*args_down)) / (2 * eps)
        np.testing.assert_allclose(grad, fd, atol=1e-5, err_msg=name)


def test_empty_and_clamped_slices():
    @wp.kernel
    def k(out: wp.array(dtype=int)):
        v = wp.vec4(1.0, 2.0, 3.0, 4.0)
        out[0] = int(v[123:] == vec0())
        out[1] = int(v[-123:123] == v)
        out[2] = int(v[::123][0] == 1.0)

    out = wp.zeros(3, dtype=int)
    wp.launch(k, dim=1, inputs=[out])
    np.testing.assert_array_equal(out.numpy(), [1, 1, 1])


@pytest.mark.parametrize("rhs, message", [
    ("wp.vec3d(5.0, 6.0, 7.0)", r"The provided vector is expected to be of length 3 with dtype float32\."),
    ("wp.float64(5.0)", r"The provided value is expected to be a vector of length 3, with dtype float32\."),
    ("wp.vec2(5.0, 6.0)", r"The length of the provided vector \(2\) isn't compatible with the given slice "
                          r"\(expected 3\)\."),
])
def test_mismatched_slice_assignment_is_a_value_error(rhs, message, tmp_path):
    source = ("import warp as wp\n\n@wp.kernel\ndef k():\n    v = wp.vec4(1.0, 2.0, 3.0, 4.0)\n"
              f"    v[1:] = {rhs}\n")
    path = tmp_path / "slice_error.py"
    path.write_text(source.replace("import warp as wp", "import weft as wp"))
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(ValueError, match=message):
        wp.launch(namespace["k"], dim=1)


def test_dynamic_slice_bounds_are_a_clear_error():
    @wp.kernel
    def k(n: int, out: wp.array(dtype=wp.vec2)):
        v = wp.vec4(1.0, 2.0, 3.0, 4.0)
        out[0] = v[n:]

    with pytest.raises(Exception, match="compile-time integer constants"):
        wp.launch(k, dim=1, inputs=[2, wp.zeros(1, dtype=wp.vec2)])


def test_keyword_vector_and_matrix_calls_are_zero_values_in_kernels():
    @wp.kernel
    def k(out: wp.array(dtype=vec3), outm: wp.array(dtype=mat23)):
        v = wp.types.vector(length=3, dtype=float)
        v[1] = 2.0
        out[0] = v
        m = wp.types.matrix(shape=(2, 3), dtype=float)
        m[1, 2] = 5.0
        outm[0] = m

    out, outm = wp.zeros(1, dtype=vec3), wp.zeros(1, dtype=mat23)
    wp.launch(k, dim=1, inputs=[out, outm])
    np.testing.assert_array_equal(out.numpy(), [[0.0, 2.0, 0.0]])
    np.testing.assert_array_equal(outm.numpy()[0], [[0, 0, 0], [0, 0, 5.0]])
