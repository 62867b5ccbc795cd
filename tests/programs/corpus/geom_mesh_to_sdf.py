"""Mesh to signed-distance volume, the way the docs chain the geometry types: a closed torus mesh
is sampled into a Volume.allocate'd grid with mesh_query_point_sign_winding_number and
volume_store, sampled back with trilinear interpolation and gradients, then an open mesh (the torus
with a band of faces removed) is classified by winding number with several thresholds and by
parity with several ray counts."""

import numpy as np
import warp as wp


def torus(n=32, m=16, r=0.6, s=0.25):
    u = np.linspace(0, 2 * np.pi, n, endpoint=False)[:, None]
    v = np.linspace(0, 2 * np.pi, m, endpoint=False)[None, :]
    pts = np.stack([(r + s * np.cos(v)) * np.cos(u), (r + s * np.cos(v)) * np.sin(u), s * np.sin(v) + 0 * u], -1)
    i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    a, b = i * m + j, ((i + 1) % n) * m + j
    c, d = ((i + 1) % n) * m + (j + 1) % m, i * m + (j + 1) % m
    idx = np.stack([np.stack([a, b, c], -1), np.stack([a, c, d], -1)], 2).reshape(-1)
    return pts.reshape(-1, 3).astype(np.float32), idx.astype(np.int32)


@wp.kernel
def bake(mesh: wp.uint64, vol: wp.uint64, lo: wp.vec3i):
    i, j, k = wp.tid()
    x = i + lo[0]
    y = j + lo[1]
    z = k + lo[2]
    p = wp.volume_index_to_world(vol, wp.vec3(float(x), float(y), float(z)))
    q = wp.mesh_query_point_sign_winding_number(mesh, p, 10.0)
    d = 10.0
    if q.result:
        d = q.sign * wp.length(wp.mesh_eval_position(mesh, q.face, q.u, q.v) - p)
    wp.volume_store(vol, x, y, z, d)


@wp.kernel
def probe(vol: wp.uint64, pts: wp.array(dtype=wp.vec3), d: wp.array(dtype=float), n: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    uvw = wp.volume_world_to_index(vol, pts[tid])
    g = wp.vec3()
    d[tid] = wp.volume_sample_grad(vol, uvw, wp.Volume.LINEAR, g, dtype=float)
    n[tid] = wp.normalize(wp.volume_index_to_world_dir(vol, g))


@wp.kernel
def classify(mesh: wp.uint64, pts: wp.array(dtype=wp.vec3), signs: wp.array2d(dtype=float)):
    tid = wp.tid()
    p = pts[tid]
    signs[tid, 0] = wp.mesh_query_point_sign_winding_number(mesh, p, 5.0).sign
    signs[tid, 1] = wp.mesh_query_point_sign_winding_number(mesh, p, 5.0, 2.0, 0.3).sign
    signs[tid, 2] = wp.mesh_query_point_sign_winding_number(mesh, p, 5.0, accuracy=3.0, threshold=0.7).sign
    signs[tid, 3] = wp.mesh_query_point_sign_parity(mesh, p, 5.0).sign
    signs[tid, 4] = wp.mesh_query_point_sign_parity(mesh, p, 5.0, 5).sign
    signs[tid, 5] = wp.mesh_query_point_sign_parity(mesh, p, 5.0, n_sample=9, perturbation_scale=0.3).sign
    signs[tid, 6] = wp.mesh_query_point_sign_normal(mesh, p, 5.0, 0.01).sign


def run():
    pts, idx = torus()
    mesh = wp.Mesh(points=wp.array(pts, dtype=wp.vec3), indices=wp.array(idx, dtype=wp.int32),
                   support_winding_number=True)
    vs = 0.05
    vol = wp.Volume.allocate(min=[-20, -20, -8], max=[19, 19, 7], voxel_size=vs, bg_value=1.0)
    wp.launch(bake, dim=(40, 40, 16), inputs=[mesh.id, vol.id, wp.vec3i(-20, -20, -8)])
    rng = np.random.default_rng(17)
    m = 64
    ang = rng.uniform(0, 2 * np.pi, m)
    rad = rng.uniform(0.3, 0.9, m)
    probes = np.stack([rad * np.cos(ang), rad * np.sin(ang), rng.uniform(-0.3, 0.3, m)], -1).astype(np.float32)
    pa = wp.array(probes, dtype=wp.vec3)
    d = wp.zeros(m, dtype=float)
    nrm = wp.zeros(m, dtype=wp.vec3)
    wp.launch(probe, dim=m, inputs=[vol.id, pa, d, nrm])
    res = {"sdf": d.numpy(), "normal": nrm.numpy()}

    # open the torus: drop the faces of a band of the tube
    tris = idx.reshape(-1, 3)
    keep = ~np.all(pts[tris][:, :, 0] > 0.55, axis=1)
    open_mesh = wp.Mesh(points=wp.array(pts, dtype=wp.vec3), indices=wp.array(tris[keep].ravel(), dtype=wp.int32),
                        support_winding_number=True)
    res["open_faces"] = int(keep.sum())
    signs = wp.zeros((m, 7), dtype=float)
    wp.launch(classify, dim=m, inputs=[open_mesh.id, pa, signs])
    res["open_signs"] = signs.numpy()
    closed = wp.zeros((m, 7), dtype=float)
    wp.launch(classify, dim=m, inputs=[mesh.id, pa, closed])
    res["closed_signs"] = closed.numpy()
    return res


TOLERANCE = {"sdf": (1e-5, 1e-5), "normal": (1e-4, 1e-4)}
