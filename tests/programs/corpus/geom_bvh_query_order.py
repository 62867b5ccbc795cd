"""The order in which bvh_query_next hands out boxes (Warp visits a node's right child
first), which a loop that keeps the first hit and breaks sees; and a negative radius in
bvh_query_sphere, bvh_query_capsule and mesh_query_sphere, which Warp documents as 0."""

import numpy as np
import warp as wp


@wp.kernel
def order(bvh: wp.uint64, out: wp.array(dtype=int)):
    q = wp.bvh_query_aabb(bvh, wp.vec3(-100.0), wp.vec3(100.0))
    i = int(0)
    n = int(0)
    while wp.bvh_query_next(q, i):
        out[n] = i
        n += 1


@wp.kernel
def first_containing(bvh: wp.uint64, p: wp.vec3, out: wp.array(dtype=int)):
    q = wp.bvh_query_aabb(bvh, p, p)
    i = int(0)
    out[0] = -1
    while wp.bvh_query_next(q, i):
        out[0] = i
        break


@wp.kernel
def radius_hits(bvh: wp.uint64, mesh: wp.uint64, p: wp.vec3, r: float, out: wp.array(dtype=int)):
    q = wp.bvh_query_sphere(bvh, p, r)
    b = int(0)
    while wp.bvh_query_next(q, b):
        out[0] += 1
    capsule = wp.bvh_query_capsule(bvh, p, wp.vec3(0.5, 0.0, 0.0), r)
    while wp.bvh_query_next(capsule, b, 1.0):
        out[1] += 1
    for _face in wp.mesh_query_sphere(mesh, p, r):
        out[2] += 1


def run():
    rng = np.random.default_rng(0)
    corners = rng.uniform(0, 10, size=(20, 3)).astype(np.float32)
    results = {}
    for constructor in ("sah", "median"):
        bvh = wp.Bvh(wp.array(corners, dtype=wp.vec3), wp.array(corners + 0.1, dtype=wp.vec3), constructor=constructor)
        out = wp.zeros(20, dtype=int)
        wp.launch(order, dim=1, inputs=[bvh.id, out])
        results[f"order_{constructor}"] = out.numpy()
    nested = wp.Bvh(wp.array(np.zeros((8, 3), np.float32), dtype=wp.vec3),
                    wp.array(np.arange(1, 9, dtype=np.float32)[:, None] * np.ones(3, np.float32), dtype=wp.vec3))
    out = wp.zeros(1, dtype=int)
    wp.launch(first_containing, dim=1, inputs=[nested.id, wp.vec3(0.5), out])
    results["first_containing"] = out.numpy()
    boxes = wp.Bvh(wp.array([[0, 0, 0], [1.05, 0, 0]], dtype=wp.vec3), wp.array([[1, 1, 1], [2, 1, 1]], dtype=wp.vec3))
    mesh = wp.Mesh(points=wp.array([[0, 0, 1.05], [1, 0, 1.05], [0, 1, 1.05]], dtype=wp.vec3),
                   indices=wp.array([0, 1, 2], dtype=wp.int32))
    for name, p, r in (("zero", (0.5, 0.5, 1.0), 0.0), ("negative", (0.5, 0.5, 1.0), -0.1),
                       ("negative_at_gap", (1.0, 0.5, 0.5), -0.1)):
        out = wp.zeros(3, dtype=int)
        wp.launch(radius_hits, dim=1, inputs=[boxes.id, mesh.id, wp.vec3(*p), r, out])
        results[f"hits_{name}"] = out.numpy()  # (bvh sphere, bvh capsule, mesh sphere)
    return results
