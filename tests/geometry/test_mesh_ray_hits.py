"""mesh_query_ray's hit record as Warp defines it: `sign` is the watertight test's
determinant (positive on the front side, -dot(cross(b - a, c - a), dir) / |dir| along the
ray's major axis), and a ray through a shared edge or vertex of a closed mesh is never lost
between the faces that share it."""

import numpy as np

import weft as wp


@wp.kernel
def cast(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
         sign: wp.array(dtype=float), t: wp.array(dtype=float), uv: wp.array(dtype=wp.vec2),
         count: wp.array(dtype=int), grouped: bool):
    i = wp.tid()
    root = -1
    if grouped:
        root = wp.mesh_get_group_root(mesh, i)
    r = wp.mesh_query_ray(mesh, starts[i], dirs[i], 1.0e6, root)
    if r.result:
        sign[i] = r.sign
        t[i] = r.t
        uv[i] = wp.vec2(r.u, r.v)
    count[i] = wp.mesh_query_ray_count_intersections(mesh, starts[i], dirs[i], root)


def launch(mesh, starts, dirs, grouped=False):
    n = len(starts)
    out = [wp.zeros(n, dtype=float), wp.zeros(n, dtype=float), wp.zeros(n, dtype=wp.vec2), wp.zeros(n, dtype=int)]
    arrays = [wp.array(starts, dtype=wp.vec3), wp.array(dirs, dtype=wp.vec3)]
    wp.launch(cast, n, inputs=[mesh.id, *arrays], outputs=out + [grouped])
    return [o.numpy() for o in out]


def test_sign_is_the_sheared_determinant_of_either_side():
    rng = np.random.default_rng(0)
    n = 64
    a = rng.normal(size=(n, 3))
    b, c = a + rng.normal(size=(n, 3)), a + rng.normal(size=(n, 3))
    w = rng.dirichlet([2.0, 2.0, 2.0], size=n)
    target = w[:, :1] * a + w[:, 1:2] * b + w[:, 2:] * c
    dirs = rng.normal(size=(n, 3)) * rng.uniform(0.5, 3.0, size=(n, 1))
    starts = target - rng.uniform(0.5, 2.0, size=(n, 1)) * dirs
    pts = np.stack([a, b, c], 1).reshape(-1, 3).astype(np.float32)
    # one triangle per ray, each in its own group: ray i only meets triangle i
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(np.arange(3 * n, dtype=np.int32), dtype=wp.int32),
                   groups=wp.array(np.arange(n, dtype=np.int32), dtype=wp.int32))
    sign, t, uv, count = launch(mesh, starts.astype(np.float32), dirs.astype(np.float32), grouped=True)
    normal2 = np.cross(b - a, c - a)
    expected = -(normal2 * dirs).sum(-1) / np.abs(dirs).max(-1)
    np.testing.assert_allclose(sign, expected, rtol=2e-4, atol=1e-5)
    assert (sign > 0).any() and (sign < 0).any()
    np.testing.assert_allclose(uv, w[:, :2], atol=2e-4)
    np.testing.assert_allclose(t * np.linalg.norm(dirs, axis=1),
                               np.linalg.norm(target - starts, axis=1), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(count, 1)


def test_rays_through_shared_edges_and_vertices_are_not_lost():
    # a bumpy 8 x 8 height field split along diagonals (face normals up), rays straight
    # down through every vertex, every edge midpoint and every diagonal's midpoint
    n = 8
    rng = np.random.default_rng(1)
    xs, ys = np.meshgrid(np.arange(n + 1.0) * 0.13, np.arange(n + 1.0) * 0.17, indexing="ij")
    zs = rng.uniform(-0.05, 0.05, size=xs.shape)
    pts = np.stack([xs, ys, zs], -1).reshape(-1, 3).astype(np.float32)
    tris = []
    for i in range(n):
        for j in range(n):
            p0, p1, p2, p3 = i * (n + 1) + j, (i + 1) * (n + 1) + j, (i + 1) * (n + 1) + j + 1, i * (n + 1) + j + 1
            tris += [p0, p1, p2, p0, p2, p3]
    tris = np.array(tris, dtype=np.int32)
    mesh = wp.Mesh(wp.array(pts, dtype=wp.vec3), wp.array(tris, dtype=wp.int32))
    faces = tris.reshape(-1, 3)
    edges = np.concatenate([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    targets = np.concatenate([pts, 0.5 * (pts[edges[:, 0]] + pts[edges[:, 1]])])
    starts = (targets + np.float32([0.0, 0.0, 1.0])).astype(np.float32)
    dirs = np.tile(np.float32([0.0, 0.0, -1.0]), (len(starts), 1))
    sign, t, _uv, count = launch(mesh, starts, dirs)
    interior = ((targets[:, 0] > 1e-6) & (targets[:, 0] < 0.13 * n - 1e-6)
                & (targets[:, 1] > 1e-6) & (targets[:, 1] < 0.17 * n - 1e-6))
    assert (count[interior] >= 1).all()
    assert (sign[interior] > 0).all()  # the ray meets the faces' front
    np.testing.assert_allclose(t[interior], (starts - targets)[interior, 2], atol=1e-5)
