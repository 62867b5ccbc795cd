"""Geometry helpers on their own: closest_point_edge_edge for skew, parallel, touching and
degenerate segments (with its gradient through a Tape), intersect_tri_tri in float32 and float64
over random, touching and coplanar triangle pairs, and a brute-force triangle-soup collision count."""

import numpy as np
import warp as wp


@wp.kernel
def edge_pairs(p1: wp.array(dtype=wp.vec3), q1: wp.array(dtype=wp.vec3), p2: wp.array(dtype=wp.vec3),
               q2: wp.array(dtype=wp.vec3), eps: float, st: wp.array(dtype=wp.vec3), gap: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    r = wp.closest_point_edge_edge(p1[tid], q1[tid], p2[tid], q2[tid], eps)
    st[tid] = r
    a = p1[tid] + r[0] * (q1[tid] - p1[tid])
    b = p2[tid] + r[1] * (q2[tid] - p2[tid])
    gap[tid] = b - a


@wp.kernel
def edge_distance_loss(p1: wp.array(dtype=wp.vec3), q1: wp.array(dtype=wp.vec3), p2: wp.array(dtype=wp.vec3),
                       q2: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    tid = wp.tid()
    r = wp.closest_point_edge_edge(p1[tid], q1[tid], p2[tid], q2[tid], 1.0e-6)
    wp.atomic_add(loss, 0, r[2] + 0.3 * r[0] - 0.2 * r[1])


@wp.kernel
def tri_pairs(a: wp.array2d(dtype=wp.vec3), b: wp.array2d(dtype=wp.vec3), out: wp.array(dtype=wp.int32),
              ad: wp.array2d(dtype=wp.vec3d), bd: wp.array2d(dtype=wp.vec3d), out_d: wp.array(dtype=wp.int32)):
    tid = wp.tid()
    out[tid] = wp.intersect_tri_tri(a[tid, 0], a[tid, 1], a[tid, 2], b[tid, 0], b[tid, 1], b[tid, 2])
    out_d[tid] = wp.intersect_tri_tri(ad[tid, 0], ad[tid, 1], ad[tid, 2], bd[tid, 0], bd[tid, 1], bd[tid, 2])


@wp.kernel
def soup_collisions(tris: wp.array2d(dtype=wp.vec3), count: wp.array(dtype=int), hits: wp.array2d(dtype=wp.int8)):
    i, j = wp.tid()
    if j <= i:
        return
    if wp.intersect_tri_tri(tris[i, 0], tris[i, 1], tris[i, 2], tris[j, 0], tris[j, 1], tris[j, 2]) != 0:
        wp.atomic_add(count, 0, 1)
        hits[i, j] = wp.int8(1)


def run():
    rng = np.random.default_rng(13)
    n = 64
    e = rng.normal(size=(4, n, 3)).astype(np.float32)
    # special cases: parallel, collinear overlapping, touching at endpoints, a degenerate edge, both degenerate
    e[:, 0] = [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]
    e[:, 1] = [[0, 0, 0], [2, 0, 0], [1, 0, 0], [3, 0, 0]]
    e[:, 2] = [[0, 0, 0], [1, 0, 0], [1, 0, 0], [1, 1, 1]]
    e[:, 3] = [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0, 0, 0], [1, 0, 0]]
    e[:, 4] = [[0.2, 0.1, 0], [0.2, 0.1, 0], [1, 1, 1], [1, 1, 1]]
    e[:, 5] = [[0, 0, 0], [1, 0, 0], [0.5, -1, 0], [0.5, 1, 0]]
    arrs = [wp.array(e[k], dtype=wp.vec3) for k in range(4)]
    st = wp.zeros(n, dtype=wp.vec3)
    gap = wp.zeros(n, dtype=wp.vec3)
    wp.launch(edge_pairs, dim=n, inputs=[*arrs, 1.0e-6, st, gap])
    res = {"edge_st": st.numpy(), "edge_gap": gap.numpy()}

    grads = [wp.array(e[k, 6:], dtype=wp.vec3, requires_grad=True) for k in range(4)]
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(edge_distance_loss, dim=n - 6, inputs=[*grads, loss])
    tape.backward(loss)
    res["edge_loss"] = loss.numpy()
    for k, name in enumerate(["p1", "q1", "p2", "q2"]):
        res[f"edge_grad_{name}"] = grads[k].grad.numpy()

    m = 200
    ta = rng.uniform(-1.0, 1.0, size=(m, 3, 3))
    tb = ta[:, :1, :] + rng.uniform(-1.0, 1.0, size=(m, 3, 3)) * 0.9
    # touching at a shared vertex, coplanar overlapping, coplanar apart, one inside the other's plane
    ta[0] = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    tb[0] = [[1, 0, 0], [2, 0, 1], [2, 1, 0]]
    ta[1] = [[0, 0, 0], [2, 0, 0], [0, 2, 0]]
    tb[1] = [[0.5, 0.5, 0], [3, 0.5, 0], [0.5, 3, 0]]
    ta[2] = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]
    tb[2] = [[2, 2, 0], [3, 2, 0], [2, 3, 0]]
    ta[3] = [[0, 0, 0], [2, 0, 0], [0, 2, 0]]
    tb[3] = [[0.2, 0.2, 0], [0.5, 0.2, 0], [0.2, 0.5, 0]]
    out = wp.zeros(m, dtype=wp.int32)
    out_d = wp.zeros(m, dtype=wp.int32)
    wp.launch(tri_pairs, dim=m, inputs=[wp.array(ta.astype(np.float32), dtype=wp.vec3),
                                        wp.array(tb.astype(np.float32), dtype=wp.vec3), out,
                                        wp.array(ta, dtype=wp.vec3d), wp.array(tb, dtype=wp.vec3d), out_d])
    res["tri_tri"] = out.numpy()
    res["tri_tri_f64"] = out_d.numpy()

    soup = wp.array(rng.uniform(0.0, 2.0, size=(40, 3, 3)).astype(np.float32), dtype=wp.vec3)
    count = wp.zeros(1, dtype=int)
    hits = wp.zeros((40, 40), dtype=wp.int8)
    wp.launch(soup_collisions, dim=(40, 40), inputs=[soup, count, hits])
    res["soup_count"] = count.numpy()
    res["soup_pairs"] = np.argwhere(hits.numpy())
    return res


TOLERANCE = {"edge_grad_p1": (1e-4, 1e-5), "edge_grad_q1": (1e-4, 1e-5), "edge_grad_p2": (1e-4, 1e-5),
             "edge_grad_q2": (1e-4, 1e-5), "edge_loss": (1e-5, 1e-5)}
