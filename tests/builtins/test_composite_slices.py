"""Slices of vectors and matrices inside kernels (`v[1:]`, `m[0, :2]`, `m[1:, 1:] = ...`):
values built from the selected components, assignments that insert them, and gradients."""

import numpy as np
import pytest

import weft as wp

vec0 = wp.types.vector(0, float)
vec1 = wp.types.vector(1, float)
vec2 = wp.types.vector(2, float)
vec3 = wp.types.vector(3, float)
mat23 = wp.types.matrix((2, 3), float)


@wp.func
def slice_reads(v: wp.vec4, m: wp.mat33) -> int:
    ok = int(v[1:] == vec3(v[1], v[2], v[3]))
    ok += int(v[::-1] == wp.vec4(v[3], v[2], v[1], v[0]))
    ok += int(v[1::-2] == vec1(v[1]))
    ok += int(v[10:] == vec0())
    ok += int(m[0, :2] == vec2(m[0, 0], m[0, 1]))
    ok += int(m[:, 1] == vec3(m[0, 1], m[1, 1], m[2, 1]))
    ok += int(m[1:] == mat23(m[1, 0], m[1, 1], m[1, 2], m[2, 0], m[2, 1], m[2, 2]))
    return ok


@wp.kernel
def read_slices(vs: wp.array(dtype=wp.vec4), ms: wp.array(dtype=wp.mat33), out: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = slice_reads(vs[i], ms[i])


def test_slice_reads_select_components():
    rng = np.random.default_rng(1)
    vs = wp.array(rng.normal(size=(3, 4)), dtype=wp.vec4)
    ms = wp.array(rng.normal(size=(3, 3, 3)), dtype=wp.mat33)
    out = wp.zeros(3, dtype=int)
    wp.launch(read_slices, 3, inputs=[vs, ms, out])
    assert out.numpy().tolist() == [7, 7, 7]
    assert slice_reads(wp.vec4(1, 2, 3, 4), wp.mat33(*range(9))) == 7  # the func in Python scope


@wp.kernel
def write_slices(out: wp.array(dtype=wp.vec4), mats: wp.array(dtype=wp.mat33)):
    v = wp.vec4(1.0, 2.0, 3.0, 4.0)
    v[1:] = vec3(5.0, 6.0, 7.0)
    v[::-2] = vec2(23.0, 24.0)
    v[1:] += vec3(1.0, 1.0, 1.0)
    out[0] = v
    m = wp.mat33()
    m[1:, 1:] = wp.mat22(1.0, 2.0, 3.0, 4.0)
    r = wp.tid()
    m[r, :2] = vec2(-1.0, -2.0)  # a runtime row, a constant slice
    m[:, 2] += vec3(10.0, 20.0, 30.0)
    mats[0] = m


def test_slice_assignments_insert_components():
    out = wp.zeros(1, dtype=wp.vec4)
    mats = wp.zeros(1, dtype=wp.mat33)
    wp.launch(write_slices, 1, inputs=[out, mats])
    assert out.numpy()[0].tolist() == [1.0, 25.0, 7.0, 24.0]
    assert mats.numpy()[0].tolist() == [[-1.0, -2.0, 10.0], [0.0, 1.0, 22.0], [0.0, 3.0, 34.0]]


@wp.kernel
def slice_chain(xs: wp.array(dtype=wp.vec2), ys: wp.array(dtype=wp.vec4)):
    i = wp.tid()
    y = ys[i]
    y[:2] = xs[i] * 2.0
    y[1:-1] += xs[i][::-1]
    y[3:1:-1] -= xs[i]
    ys[i] = y


def test_slice_gradients():
    # y = [2 x0, 2 x1 + x1, x0 - x1, -x0]: dL/dx for L = sum(w * y) is analytic
    x = wp.array([[0.5, -1.5]], dtype=wp.vec2, requires_grad=True)
    y = wp.zeros(1, dtype=wp.vec4, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(slice_chain, 1, inputs=[x], outputs=[y])
    assert y.numpy()[0].tolist() == [1.0, -4.5, 2.0, -0.5]
    w = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    y.grad = wp.array([w], dtype=wp.vec4)
    tape.backward()
    expected = [2 * w[0] + w[2] - w[3], 3 * w[1] - w[2]]
    np.testing.assert_allclose(x.grad.numpy()[0], expected)


def _kernel_with(body: str):
    src = f"def k():\n    v = wp.vec4(1.0, 2.0, 3.0, 4.0)\n    {body}\n"
    import linecache
    name = f"<slice test {abs(hash(body))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"wp": wp}
    exec(compile(src, name, "exec"), ns)  # noqa: S102 - a kernel made from a test's source line
    return wp.kernel(ns["k"], module="unique")


@pytest.mark.parametrize("body,message", [
    ("v[1:] = wp.vec3d(5.0, 6.0, 7.0)", "The provided vector is expected to be of length 3 with dtype float32"),
    ("v[1:] = wp.float64(5.0)", "expected to be a vector of length 3, with dtype float32"),
    ("v[1:] = wp.mat22(1.0, 2.0, 3.0, 4.0)", "expected to be a vector of length 3, with dtype float32"),
    ("v[1:] = wp.vec2(5.0, 6.0)", r"The length of the provided vector \(2\) isn't compatible with the given slice"),
    ("v[::0] = wp.vec2(5.0, 6.0)", "slice step cannot be zero"),
])
def test_slice_assignment_errors(body, message):
    with pytest.raises(ValueError, match=message):
        wp.launch(_kernel_with(body), 1)


mat23f = wp.types.matrix((2, 3), float)


@wp.kernel
def overwrite_through_slices(xs: wp.array(dtype=wp.vec2), ys: wp.array(dtype=mat23f), zs: wp.array(dtype=wp.mat44)):
    i = wp.tid()
    z = zs[i]
    z[0, :2] = xs[i]  # z01 = x1 ...
    z[:2, 1:] = ys[i]  # ... is overwritten here: x1 no longer reaches z through z01
    z[:2, 3] += xs[i][:2]
    z[1:-1, :2] += ys[i][::-1, :-1]
    z[2:, 3] -= xs[i][0:]
    z[3:, -1:] -= ys[i][:1, :1]
    zs[i] = z


def test_slice_gradients_after_an_overwrite():
    # Warp's own test (test_mat_slicing_assign_backward) expects x.grad = (1, 1); with x1
    # overwritten in z01, sum(z) = x0 + (x0 + y02) + ... depends on x1 only through
    # z13 (+x1) and z33 (-x1), so d sum(z) / d x1 = 0: weft's (1, 0) is the right value.
    x = wp.ones(1, dtype=wp.vec2, requires_grad=True)
    y = wp.ones(1, dtype=mat23f, requires_grad=True)
    z = wp.zeros(1, dtype=wp.mat44, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(overwrite_through_slices, 1, inputs=[x, y], outputs=[z])
    expected_z = [[1, 1, 1, 2], [1, 2, 1, 2], [1, 1, 0, -1], [0, 0, 0, -2]]
    assert z.numpy()[0].tolist() == expected_z
    z.grad = wp.ones_like(z)
    tape.backward()
    np.testing.assert_array_equal(x.grad.numpy()[0], [1.0, 0.0])
    np.testing.assert_array_equal(y.grad.numpy()[0], [[1.0, 2.0, 1.0], [2.0, 2.0, 1.0]])
    # the same derivative by finite differences of the forward map (exact: it is linear)
    def total(xv):
        zz = wp.zeros(1, dtype=wp.mat44)
        wp.launch(overwrite_through_slices, 1, inputs=[wp.array([xv], dtype=wp.vec2), y, zz])
        return float(zz.numpy().sum())
    assert total([1.0, 2.0]) - total([1.0, 1.0]) == 0.0
    assert total([2.0, 1.0]) - total([1.0, 1.0]) == 1.0
