"""Assignments to a part of an array element (weft/lang/array_parts.py): `v[i][c] = x` writes
that component alone, and `v[i][c] += x` is an atomic update of it, as in Warp, so threads
that share an element do not lose each other's writes; gradients flow through both."""

import numpy as np
import pytest

import weft as wp


@wp.struct
class Body:
    mass: float
    force: wp.vec3
    pose: wp.transform


@wp.kernel
def _shared_element_updates(v: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22), b: wp.array(dtype=Body),
                            q: wp.array(dtype=wp.quat), bits: wp.array(dtype=wp.vec2i)):
    i = wp.tid()
    v[i % 2][2] += 1.0
    v[2].x += float(i)
    m[i % 2][1, 1] += 1.0
    m[i % 2][0] -= wp.vec2(1.0, 2.0)  # a matrix row
    b[i % 2].mass += 1.0
    b[i % 2].force[1] -= 1.0
    b[i % 2].pose.p[0] += 0.5  # a transform's translation
    q[0][3] += 1.0
    bits[0][i % 2] |= 1 << (i % 31)


def test_updates_of_parts_of_one_element_are_atomic():
    n = 2000  # enough threads for both workers to share elements
    v, m = wp.zeros(3, dtype=wp.vec3), wp.zeros(2, dtype=wp.mat22)
    b, q, bits = wp.zeros(2, dtype=Body), wp.zeros(1, dtype=wp.quat), wp.zeros(1, dtype=wp.vec2i)
    wp.launch(_shared_element_updates, n, inputs=[v, m, b, q, bits])
    half = n / 2
    np.testing.assert_array_equal(v.numpy()[:2, 2], [half, half])
    assert v.numpy()[2, 0] == n * (n - 1) / 2
    np.testing.assert_array_equal(m.numpy()[:, 1, 1], [half, half])
    np.testing.assert_array_equal(m.numpy()[:, 0], [[-half, -n], [-half, -n]])
    records = b.numpy()
    np.testing.assert_array_equal(records["mass"], [half, half])
    np.testing.assert_array_equal(np.array(records["force"].tolist())[:, 1], [-half, -half])
    np.testing.assert_array_equal(np.array(records["pose"].tolist())[:, 0], [half / 2, half / 2])
    assert q.numpy()[0, 3] == n
    np.testing.assert_array_equal(bits.numpy()[0], [2**31 - 1, 2**31 - 1])  # every bit i % 31 on each


@wp.kernel
def _component_per_thread(v: wp.array(dtype=wp.vec4), m: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    v[i // 4][i % 4] = float(i)  # threads write different components of one element
    m[i // 9][(i % 9) // 3, i % 3] = float(i)


@wp.kernel
def _named_part_per_thread(v: wp.array(dtype=wp.vec3), b: wp.array(dtype=Body)):
    i = wp.tid()
    k = i % 3
    if k == 0:  # constant parts, one per thread
        v[i // 3].x = float(i)
        b[i // 3].mass = float(i)
    elif k == 1:
        v[i // 3][1] = float(i)
        b[i // 3].force = wp.vec3(float(i))
    else:
        v[i // 3].z = float(i)
        b[i // 3].pose.p[2] = float(i)


def test_threads_writing_different_components_of_one_element_keep_every_write():
    n = 36 * 10000
    v, m = wp.zeros(n // 4, dtype=wp.vec4), wp.zeros(n // 9, dtype=wp.mat33)
    v3, b = wp.zeros(n // 3, dtype=wp.vec3), wp.zeros(n // 3, dtype=Body)
    for _ in range(3):
        wp.launch(_component_per_thread, n, inputs=[v, m])
        np.testing.assert_array_equal(v.numpy().reshape(-1), np.arange(n))
        np.testing.assert_array_equal(m.numpy().reshape(-1), np.arange(n))
        wp.launch(_named_part_per_thread, n, inputs=[v3, b])
        np.testing.assert_array_equal(v3.numpy().reshape(-1), np.arange(n))
        records = b.numpy()
        np.testing.assert_array_equal(records["mass"], np.arange(0, n, 3))
        forces = np.array(records["force"].tolist())
        np.testing.assert_array_equal(forces, np.repeat(np.arange(1, n, 3), 3).reshape(-1, 3))
        np.testing.assert_array_equal(np.array(records["pose"].tolist())[:, 2], np.arange(2, n, 3))


@wp.kernel
def _shared_parts_of_outputs(x: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    k = i % 3
    if k == 0:  # threads i, i + 1, i + 2 write the three components of one element
        v[i // 3].x = x[i] * x[i]
    elif k == 1:
        v[i // 3][1] = wp.sin(x[i])
    else:
        v[i // 3].z = wp.float64(2.0) * x[i]


def test_gradients_of_parts_written_by_different_threads():
    n = 3 * 20000  # both workers share elements; the adjoint consumes each part's gradient only
    x = np.linspace(-1.0, 1.0, n)
    xa = wp.array(x, dtype=wp.float64, requires_grad=True)
    v = wp.zeros(n // 3, dtype=wp.vec3d, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_shared_parts_of_outputs, n, inputs=[xa, v])
    seed = np.tile([1.0, 2.0, 3.0], (n // 3, 1))
    tape.backward(grads={v: wp.array(seed, dtype=wp.vec3d)})
    want = np.where(np.arange(n) % 3 == 0, 2.0 * x, np.where(np.arange(n) % 3 == 1, 2.0 * np.cos(x), 6.0))
    np.testing.assert_allclose(xa.grad.numpy(), want, rtol=1e-13)
    assert not v.grad.numpy().any()  # every part was overwritten: its gradient consumed


@wp.kernel
def _run_time_component(v: wp.array(dtype=wp.vec3), c: int):
    i = wp.tid()
    v[i][c] = 1.0


def test_a_run_time_component_index_is_checked():
    v = wp.zeros(2, dtype=wp.vec3)
    wp.launch(_run_time_component, 2, inputs=[v, 2])
    np.testing.assert_array_equal(v.numpy(), [[0, 0, 1], [0, 0, 1]])
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for vec3f component with shape \(3,\)"):
        wp.launch(_run_time_component, 2, inputs=[v, 3])


@wp.kernel
def _parts_of_outputs(x: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec3d), m: wp.array(dtype=wp.mat22d),
                      c: int):
    i = wp.tid()
    v[i % 2][1] += x[i] * x[i]  # atomic, from several threads
    v[i % 2][c] -= wp.float64(3.0) * x[i]  # a run-time component
    m[i][0, 1] = wp.sin(x[i])  # a plain write of one component
    m[i][1] = wp.vec2d(x[i], wp.float64(2.0) * x[i])  # a row


def _parts_loss(x, c):
    v = wp.zeros(2, dtype=wp.vec3d)
    m = wp.zeros(len(x), dtype=wp.mat22d)
    wp.launch(_parts_of_outputs, len(x), inputs=[wp.array(x, dtype=wp.float64), v, m, c])
    return (v.numpy() ** 2).sum() + (m.numpy() * np.arange(1.0, 5.0).reshape(2, 2)).sum()


@pytest.mark.parametrize("c", [0, 1, 2])
def test_gradients_through_parts_match_finite_differences(c):
    x = np.array([0.3, -1.2, 0.7, 2.0, -0.4])
    xa = wp.array(x, dtype=wp.float64, requires_grad=True)
    v = wp.zeros(2, dtype=wp.vec3d, requires_grad=True)
    m = wp.zeros(len(x), dtype=wp.mat22d, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_parts_of_outputs, len(x), inputs=[xa, v, m, c])
    v.grad = wp.array(2.0 * v.numpy(), dtype=wp.vec3d)
    m.grad = wp.array(np.tile(np.arange(1.0, 5.0).reshape(2, 2), (len(x), 1, 1)), dtype=wp.mat22d)
    tape.backward()
    h = 1e-6
    fd = [(_parts_loss(x + h * e, c) - _parts_loss(x - h * e, c)) / (2 * h) for e in np.eye(len(x))]
    np.testing.assert_allclose(xa.grad.numpy(), fd, rtol=1e-7, atol=1e-7)


@wp.kernel
def _overwrite_a_component(x: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    v[i][0] = x[i]
    v[i][0] = wp.float64(2.0) * x[i]  # the first write is overwritten: its gradient is gone


def test_an_overwritten_component_passes_no_gradient():
    xa = wp.array([1.0, 2.0], dtype=wp.float64, requires_grad=True)
    v = wp.zeros(2, dtype=wp.vec2d, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_overwrite_a_component, 2, inputs=[xa, v])
    tape.backward(grads={v: wp.array([[1.0, 5.0], [1.0, 5.0]], dtype=wp.vec2d)})
    np.testing.assert_array_equal(v.numpy(), [[2.0, 0.0], [4.0, 0.0]])
    np.testing.assert_array_equal(xa.grad.numpy(), [2.0, 2.0])


@wp.kernel
def _parts_through_views(v: wp.array(dtype=wp.vec3), g: wp.array2d(dtype=wp.vec2), start: int):
    i = wp.tid()
    v[start::2][i].x = float(i + 1)  # an element of a view: the general path
    v[start::2][i][1] += 10.0
    g[i][1].y = float(i)  # a row of a 2-d array, then its element


def test_parts_of_elements_of_views_and_rows():
    v, g = wp.zeros(4, dtype=wp.vec3), wp.zeros((2, 2), dtype=wp.vec2)
    wp.launch(_parts_through_views, 2, inputs=[v, g, 1])
    np.testing.assert_array_equal(v.numpy(), [[0, 0, 0], [1, 10, 0], [0, 0, 0], [2, 10, 0]])
    np.testing.assert_array_equal(g.numpy()[:, 1, 1], [0, 1])


@wp.kernel
def _substeps(s: wp.array(dtype=wp.float64), v: wp.array(dtype=wp.vec3d), x: wp.array(dtype=wp.vec3d), n: int):
    i = wp.tid()
    for _ in range(n):  # the kernel reads v and x: its part updates are the thread's own
        v[i].x = v[i].x * s[i]
        v[i][1] += s[i]
        x[i].z += v[i].y * wp.float64(0.5)


def _substeps_loss(s, v0, x0, n=3):
    v, x = wp.array(v0, dtype=wp.vec3d), wp.array(x0, dtype=wp.vec3d)
    wp.launch(_substeps, len(s), inputs=[wp.array(s, dtype=wp.float64), v, x, n])
    return v.numpy().sum() + (x.numpy() ** 2).sum()


def test_part_updates_in_a_loop_that_reads_them_are_differentiable():
    """Updates of parts of elements the kernel also reads, in a dynamic loop: carried in
    registers by ir/promote.py (stored back as parts after the loop), reversed exactly."""
    s, v0, x0 = np.array([1.5, 0.5, -1.2]), np.ones((3, 3)), np.full((3, 3), 0.25)
    sa = wp.array(s, dtype=wp.float64, requires_grad=True)
    v = wp.array(v0, dtype=wp.vec3d, requires_grad=True)
    x = wp.array(x0, dtype=wp.vec3d, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_substeps, 3, inputs=[sa, v, x, 3])
    np.testing.assert_allclose(v.numpy()[:, :2], np.stack([s**3, 1 + 3 * s], axis=1), rtol=1e-14)
    tape.backward(grads={v: wp.array(np.ones((3, 3)), dtype=wp.vec3d), x: wp.array(2.0 * x.numpy(), dtype=wp.vec3d)})
    h = 1e-6
    fd = [(_substeps_loss(s + h * e, v0, x0) - _substeps_loss(s - h * e, v0, x0)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(sa.grad.numpy(), fd, rtol=1e-7)


@wp.kernel
def _indexed_parts(v: wp.indexedarray(dtype=wp.vec3), m: wp.indexedarray(dtype=wp.mat22)):
    i = wp.tid()
    v[i % 2][2] += 1.0  # atomic, as on a plain array
    v[i % 2].x -= 2.0
    m[0][i % 2, 1] += 1.0
    m[1][(i // 2) % 2, i % 2] = float(i % 4)  # threads write different components of element 1


def test_parts_of_indexed_array_elements_are_written_alone():
    n = 100000  # (fewer threads lost no updates in the old whole-element write often enough)
    data_v, data_m = wp.zeros(5, dtype=wp.vec3), wp.zeros(4, dtype=wp.mat22)
    v = wp.indexedarray(data_v, [wp.array([3, 1], dtype=wp.int32)])
    m = wp.indexedarray(data_m, [wp.array([2, 0], dtype=wp.int32)])
    wp.launch(_indexed_parts, n, inputs=[v, m])
    expected_v = np.zeros((5, 3), np.float32)
    expected_v[[3, 1], 2] = n / 2
    expected_v[[3, 1], 0] = -n
    np.testing.assert_array_equal(data_v.numpy(), expected_v)
    expected_m = np.zeros((4, 2, 2), np.float32)
    expected_m[2, :, 1] = n / 2
    expected_m[0] = [[0, 1], [2, 3]]
    np.testing.assert_array_equal(data_m.numpy(), expected_m)
