"""The inside/outside rules of the signed mesh queries where they meet a tie, as Warp has them:
the pseudo-normal sign calls a point on the surface (or level with it) inside, and the parity
sign casts its rays along (1, 1, 1) plus the perturbation drawn x, y, z from rand_init(42)."""

import numpy as np

import weft as wp


@wp.kernel
def normal_signs(mesh: wp.uint64, pts: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    q = wp.mesh_query_point_sign_normal(mesh, pts[i], 10.0)
    out[i] = q.sign


def test_normal_sign_of_points_on_and_level_with_the_surface_is_inside():
    mesh = wp.Mesh(wp.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=wp.vec3), wp.array([0, 1, 2], dtype=wp.int32))
    pts = np.float32([[0.25, 0.25, 0.0], [0.0, 0.0, 0.0], [0.5, 0.5, 0.0],  # on the face, a vertex, an edge
                      [2.5, 0.0, 0.0], [-1.0, -1.0, 0.0],                    # in the plane, off the triangle
                      [0.25, 0.25, 1e-3], [0.25, 0.25, -1e-3], [2.5, 0.0, 0.1]])
    out = wp.zeros(len(pts), dtype=float)
    wp.launch(normal_signs, len(pts), inputs=[mesh.id, wp.array(pts, dtype=wp.vec3), out])
    np.testing.assert_array_equal(out.numpy(), [-1, -1, -1, -1, -1, 1, -1, 1])


@wp.kernel
def draws(scale: float, out: wp.array(dtype=float)):
    s = wp.rand_init(42)
    for i in range(3):
        out[i] = wp.randf(s, -scale, scale)


@wp.kernel
def parity_sign(mesh: wp.uint64, scale: float, out: wp.array(dtype=float)):
    out[0] = wp.mesh_query_point_sign_parity(mesh, wp.vec3(0.0, 0.0, 0.0), 100.0, 1, scale).sign


def small_triangle_on(d):
    """A triangle of radius 0.02 across the ray from the origin along d, at 3 d."""
    d = np.asarray(d, np.float64)
    u = np.cross(d, [0.0, 0.0, 1.0])
    u /= np.linalg.norm(u)
    v = np.cross(d, u)
    v /= np.linalg.norm(v)
    c, r = 3.0 * d, 0.02
    return np.float32([c + r * u, c - 0.5 * r * u + 0.87 * r * v, c - 0.5 * r * u - 0.87 * r * v])


def test_parity_rays_are_drawn_x_y_z_from_seed_42():
    scale = 0.5
    d = wp.zeros(3, dtype=float)
    wp.launch(draws, 1, inputs=[scale, d])
    xyz = d.numpy()
    assert abs(xyz[0] - xyz[2]) > 0.01  # the two orders below are different rays
    signs = []
    for perturbation in (xyz, xyz[::-1]):
        mesh = wp.Mesh(wp.array(small_triangle_on(1.0 + perturbation), dtype=wp.vec3),
                       wp.array([0, 1, 2], dtype=wp.int32))
        out = wp.zeros(1, dtype=float)
        wp.launch(parity_sign, 1, inputs=[mesh.id, scale, out])
        signs.append(out.numpy()[0])
    assert signs == [-1.0, 1.0]  # one crossing on the ray drawn x, y, z: odd, inside
