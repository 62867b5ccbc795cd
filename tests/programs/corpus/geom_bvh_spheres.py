"""wp.Bvh over sphere bounds: broad-phase overlap pairs with bvh_query_aabb, sphere and capsule
queries, closest sphere hit by rays with a shrinking max_dist in bvh_query_next, refit after the
spheres move, the SAH and median constructors, and grouped trees with bvh_get_group_root."""

import numpy as np
import warp as wp


@wp.kernel
def sphere_bounds(centers: wp.array(dtype=wp.vec3), radii: wp.array(dtype=float),
                  lowers: wp.array(dtype=wp.vec3), uppers: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    r = wp.vec3(radii[tid])
    lowers[tid] = centers[tid] - r
    uppers[tid] = centers[tid] + r


@wp.kernel
def overlaps(bvh: wp.uint64, centers: wp.array(dtype=wp.vec3), radii: wp.array(dtype=float),
             lowers: wp.array(dtype=wp.vec3), uppers: wp.array(dtype=wp.vec3),
             box_count: wp.array(dtype=int), contact: wp.array2d(dtype=wp.int8)):
    i = wp.tid()
    query = wp.bvh_query_aabb(bvh, lowers[i], uppers[i])
    j = int(0)
    n = int(0)
    while wp.bvh_query_next(query, j):
        if j != i:
            n += 1
            if wp.length(centers[i] - centers[j]) < radii[i] + radii[j]:
                contact[i, j] = wp.int8(1)
    box_count[i] = n


@wp.kernel
def cast(bvh: wp.uint64, centers: wp.array(dtype=wp.vec3), radii: wp.array(dtype=float),
         origins: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
         hit_id: wp.array(dtype=int), hit_t: wp.array(dtype=float), candidates: wp.array(dtype=int)):
    tid = wp.tid()
    o = origins[tid]
    d = wp.normalize(dirs[tid])
    query = wp.bvh_query_ray(bvh, o, d)
    best = float(1.0e10)
    best_id = int(-1)
    k = int(0)
    n = int(0)
    while wp.bvh_query_next(query, k, best):
        n += 1
        oc = o - centers[k]
        b = wp.dot(oc, d)
        c = wp.dot(oc, oc) - radii[k] * radii[k]
        disc = b * b - c
        if disc >= 0.0:
            t = -b - wp.sqrt(disc)
            if t > 0.0 and t < best:
                best = t
                best_id = k
    hit_id[tid] = best_id
    hit_t[tid] = best
    candidates[tid] = wp.where(n > 0, 1, 0)


@wp.kernel
def sphere_and_capsule(bvh: wp.uint64, c: wp.vec3, r: float, p0: wp.vec3, p1: wp.vec3,
                       in_sphere: wp.array(dtype=wp.int32), in_capsule: wp.array(dtype=wp.int32)):
    q = wp.bvh_query_sphere(bvh, c, r)
    k = int(0)
    while wp.bvh_query_next(q, k):
        in_sphere[k] = 1
    cq = wp.bvh_query_capsule(bvh, p0, p1 - p0, 0.2)
    while wp.bvh_query_next(cq, k, 1.0):
        in_capsule[k] = 1


@wp.kernel
def group_count(bvh: wp.uint64, lo: wp.vec3, hi: wp.vec3, counts: wp.array(dtype=int)):
    g = wp.tid()
    root = wp.bvh_get_group_root(bvh, g)
    q = wp.bvh_query_aabb(bvh, lo, hi, root)
    k = int(0)
    while wp.bvh_query_next(q, k):
        counts[g] += 1


def run():
    rng = np.random.default_rng(6)
    n = 120
    centers = wp.array(rng.uniform(0.0, 4.0, size=(n, 3)).astype(np.float32), dtype=wp.vec3)
    radii = wp.array(rng.uniform(0.1, 0.35, size=n).astype(np.float32), dtype=float)
    lowers = wp.zeros(n, dtype=wp.vec3)
    uppers = wp.zeros(n, dtype=wp.vec3)
    wp.launch(sphere_bounds, dim=n, inputs=[centers, radii, lowers, uppers])
    res = {}
    m = 40
    origins = wp.array(rng.uniform(-1.0, 0.0, size=(m, 3)).astype(np.float32), dtype=wp.vec3)
    dirs = wp.array(rng.uniform(0.3, 1.0, size=(m, 3)).astype(np.float32), dtype=wp.vec3)
    for ctor in ("sah", "median"):
        bvh = wp.Bvh(lowers, uppers, constructor=ctor)
        box_count = wp.zeros(n, dtype=int)
        contact = wp.zeros((n, n), dtype=wp.int8)
        wp.launch(overlaps, dim=n, inputs=[bvh.id, centers, radii, lowers, uppers, box_count, contact])
        res[f"{ctor}_box_count"] = box_count.numpy()
        res[f"{ctor}_contacts"] = np.argwhere(contact.numpy())
        hit_id = wp.zeros(m, dtype=int)
        hit_t = wp.zeros(m, dtype=float)
        cand = wp.zeros(m, dtype=int)
        wp.launch(cast, dim=m, inputs=[bvh.id, centers, radii, origins, dirs, hit_id, hit_t, cand])
        res[f"{ctor}_hit_id"] = hit_id.numpy()
        res[f"{ctor}_hit_t"] = hit_t.numpy()
        res[f"{ctor}_candidates"] = cand.numpy()

    bvh = wp.Bvh(lowers, uppers)
    in_sphere = wp.zeros(n, dtype=wp.int32)
    in_capsule = wp.zeros(n, dtype=wp.int32)
    wp.launch(sphere_and_capsule, dim=1, inputs=[bvh.id, wp.vec3(2.0, 2.0, 2.0), 0.8, wp.vec3(0.0, 0.0, 0.0),
                                                 wp.vec3(4.0, 4.0, 4.0), in_sphere, in_capsule])
    res["in_sphere"] = in_sphere.numpy()
    res["in_capsule"] = in_capsule.numpy()

    # move the spheres, rewrite the bounds in place and refit
    centers.assign(centers.numpy() * np.float32(0.5) + np.float32(1.0))
    wp.launch(sphere_bounds, dim=n, inputs=[centers, radii, lowers, uppers])
    bvh.refit()
    box_count = wp.zeros(n, dtype=int)
    contact = wp.zeros((n, n), dtype=wp.int8)
    wp.launch(overlaps, dim=n, inputs=[bvh.id, centers, radii, lowers, uppers, box_count, contact])
    res["refit_box_count"] = box_count.numpy()
    res["refit_contacts"] = np.argwhere(contact.numpy())

    groups = wp.array((np.arange(n) % 3).astype(np.int32), dtype=wp.int32)
    gbvh = wp.Bvh(lowers, uppers, groups=groups)
    counts = wp.zeros(4, dtype=int)
    wp.launch(group_count, dim=4, inputs=[gbvh.id, wp.vec3(1.0, 1.0, 1.0), wp.vec3(2.0, 2.5, 3.0), counts])
    res["group_counts"] = counts.numpy()
    return res
