"""A mesh query that finds nothing returns Warp's all-zero record: result False and face 0
(not -1), sign, barycentrics, t and normal 0, for every point, furthest-point and ray query."""

import numpy as np

import weft as wp


@wp.kernel
def misses(mesh: wp.uint64, out: wp.array(dtype=wp.vec4)):
    p = wp.vec3(0.3, 0.3, 5.0)
    qs = wp.vec4()
    q = wp.mesh_query_point(mesh, p, 1.0)
    out[0] = wp.vec4(float(q.face), q.sign, q.u, q.v)
    q = wp.mesh_query_point_no_sign(mesh, p, 1.0)
    out[1] = wp.vec4(float(q.face), q.sign, q.u, q.v)
    q = wp.mesh_query_point_sign_normal(mesh, p, 1.0)
    out[2] = wp.vec4(float(q.face), q.sign, q.u, q.v)
    q = wp.mesh_query_point_sign_winding_number(mesh, p, 1.0)
    out[3] = wp.vec4(float(q.face), q.sign, q.u, q.v)
    q = wp.mesh_query_point_sign_parity(mesh, p, 1.0)
    out[4] = wp.vec4(float(q.face), q.sign, q.u, q.v)
    q = wp.mesh_query_furthest_point_no_sign(mesh, p, 100.0)
    out[5] = wp.vec4(float(q.face), q.sign, q.u, q.v)
    r = wp.mesh_query_ray(mesh, p, wp.vec3(0.0, 0.0, 1.0), 100.0)
    out[6] = wp.vec4(float(r.face), r.sign, r.u, r.v)
    out[7] = wp.vec4(r.normal[0], r.normal[1], r.normal[2], r.t)
    found = int(q.result) + int(r.result)
    out[8] = qs + wp.vec4(float(found))


def test_a_query_that_finds_nothing_is_all_zero():
    pts = np.float32([[0, 0, 0], [1, 0, 0], [0, 1, 0], [3, 0, 0], [4, 0, 0], [3, 1, 0]])
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(np.arange(6, dtype=np.int32), dtype=wp.int32),
                   support_winding_number=True)
    out = wp.full(9, wp.vec4(7.0, 7.0, 7.0, 7.0), dtype=wp.vec4)
    wp.launch(misses, 1, inputs=[mesh.id, out])
    np.testing.assert_array_equal(out.numpy(), np.zeros((9, 4), np.float32))


@wp.kernel
def furthest_uv(mesh: wp.uint64, pts: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    q = wp.mesh_query_furthest_point_no_sign(mesh, pts[i], 0.0)
    out[i] = wp.vec2(q.u, q.v)


def test_furthest_corner_ties_go_to_the_later_corner():
    # one triangle a=(0,0,0), b=(1,0,0), c=(0,1,0); (u, v) = (1, 0) is a, (0, 1) is b, (0, 0) is c
    mesh = wp.Mesh(wp.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=wp.vec3), wp.array([0, 1, 2], dtype=wp.int32))
    pts = np.float32([[0.5, 3.0, 0.0],    # a and b equally far, c nearer: b
                      [3.0, 0.5, 0.0],    # a and c equally far, b nearer: c
                      [-2.0, -2.0, 0.0],  # b and c equally far, a nearer: c
                      [3.0, 3.0, 0.0],    # a strictly furthest
                      [0.5, 0.5, 9.0]])   # all three equally far: c
    out = wp.zeros(len(pts), dtype=wp.vec2)
    wp.launch(furthest_uv, len(pts), inputs=[mesh.id, wp.array(pts, dtype=wp.vec3), out])
    np.testing.assert_array_equal(out.numpy(), [[0, 1], [0, 0], [0, 0], [1, 0], [0, 0]])
