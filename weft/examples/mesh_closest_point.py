"""Closest points on a mesh, and a gradient through them.

Run: python -m weft.examples.mesh_closest_point [--queries N]

A torus mesh is queried with `mesh_query_point_no_sign` for random points around it. The
example checks the distances against a brute-force float64 computation over every triangle
(numpy), and, when warp-lang is installed, against Warp's CPU running the same kernel
source in a separate process (the same numbers, to float32 rounding). It then
checks the gradient of the squared distance, which weft differentiates through the query,
against its closed form 2 (p - q).
"""

import argparse

import numpy as np

import weft as wp
from weft.examples.warp_peer import run_in_warp


@wp.kernel
def closest(mesh: wp.uint64, queries: wp.array(dtype=wp.vec3), dist: wp.array(dtype=float)):
    tid = wp.tid()
    p = queries[tid]
    q = wp.mesh_query_point_no_sign(mesh, p, 1.0e6)
    dist[tid] = wp.length(p - wp.mesh_eval_position(mesh, q.face, q.u, q.v))


@wp.kernel
def closest_point(mesh: wp.uint64, points: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    q = wp.mesh_query_point_no_sign(mesh, points[tid], 1.0e6)
    out[tid] = wp.mesh_eval_position(mesh, q.face, q.u, q.v)


@wp.kernel
def squared_distance(mesh: wp.uint64, points: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    tid = wp.tid()
    p = points[tid]
    q = wp.mesh_query_point_no_sign(mesh, p, 1.0e6)
    d = p - wp.mesh_eval_position(mesh, q.face, q.u, q.v)
    wp.atomic_add(loss, 0, wp.dot(d, d))


def torus(n=24, m=12):
    u = np.linspace(0, 2 * np.pi, n, endpoint=False)[:, None]
    v = np.linspace(0, 2 * np.pi, m, endpoint=False)[None, :]
    pts = np.stack([(1 + 0.35 * np.cos(v)) * np.cos(u), (1 + 0.35 * np.cos(v)) * np.sin(u),
                    0.35 * np.sin(v) * np.ones_like(u)], -1).reshape(-1, 3)
    i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    a, b = i * m + j, ((i + 1) % n) * m + j
    c, d = ((i + 1) % n) * m + (j + 1) % m, i * m + (j + 1) % m
    idx = np.stack([np.stack([a, b, c], -1), np.stack([a, c, d], -1)], 2).reshape(-1)
    return pts.astype(np.float32), idx.astype(np.int32)


def brute_force(points, tris, queries):
    """Distance from each query to the closest of the triangles, in float64."""
    a, b, c = (points[tris[:, k]].astype(np.float64) for k in range(3))
    best = np.full(len(queries), np.inf)
    for p_index in range(0, len(queries), 256):
        p = queries[p_index:p_index + 256, None, :].astype(np.float64)
        best[p_index:p_index + 256] = np.sqrt(_segment_free_distance2(p, a[None], b[None], c[None]).min(1))
    return best


def _segment_free_distance2(p, a, b, c):
    """Squared distance from points p to triangles (a, b, c), by the region test of Ericson,
    Real-Time Collision Detection 5.1.5, vectorised."""
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = (ab * ap).sum(-1), (ac * ap).sum(-1)
    bp, cp = p - b, p - c
    d3, d4 = (ab * bp).sum(-1), (ac * bp).sum(-1)
    d5, d6 = (ab * cp).sum(-1), (ac * cp).sum(-1)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    denom = va + vb + vc
    with np.errstate(divide="ignore", invalid="ignore"):
        v = vb / denom
        w = vc / denom
        q = a + ab * v[..., None] + ac * w[..., None]  # inside the face
        t = np.clip(d1 / (d1 - d3), 0, 1)
        q = np.where(((vc <= 0) & (d1 >= 0) & (d3 <= 0))[..., None], a + ab * t[..., None], q)
        t = np.clip(d2 / (d2 - d6), 0, 1)
        q = np.where(((vb <= 0) & (d2 >= 0) & (d6 <= 0))[..., None], a + ac * t[..., None], q)
        t = np.clip((d4 - d3) / ((d4 - d3) + (d5 - d6)), 0, 1)
        q = np.where(((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0))[..., None], b + (c - b) * t[..., None], q)
    q = np.where(((d1 <= 0) & (d2 <= 0))[..., None], a, q)
    q = np.where(((d3 >= 0) & (d4 <= d3))[..., None], b, q)
    q = np.where(((d6 >= 0) & (d5 <= d6))[..., None], c, q)
    return ((p - q) ** 2).sum(-1)


WARP_DRIVER = """
mesh = wp.Mesh(wp.array(np.array(data["points"], np.float32), dtype=wp.vec3),
               wp.array(np.array(data["indices"], np.int32), dtype=int))
q = wp.array(np.array(data["queries"], np.float32), dtype=wp.vec3)
dist = wp.zeros(len(q), dtype=float)
wp.launch(k.closest, dim=len(q), inputs=[mesh.id, q, dist])
out["dist"] = dist.numpy().tolist()
"""


def warp_distances(points, indices, queries):
    """Warp's answer for the same kernel, or None when warp-lang is not installed."""
    out = run_in_warp([closest], WARP_DRIVER, points=points, indices=indices, queries=queries)
    return None if out is None else np.array(out["dist"])


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--no-warp", action="store_true", help="skip the comparison with Warp")
    args = parser.parse_args(argv)
    points, indices = torus()
    rng = np.random.default_rng(0)
    queries = (rng.random((args.queries, 3)) * [3.0, 3.0, 1.4] - [1.5, 1.5, 0.7]).astype(np.float32)
    mesh = wp.Mesh(wp.array(points, dtype=wp.vec3), wp.array(indices, dtype=int))
    dist = wp.zeros(len(queries), dtype=float)
    wp.launch(closest, dim=len(queries), inputs=[mesh.id, wp.array(queries, dtype=wp.vec3), dist])
    ours = dist.numpy().astype(np.float64)
    exact = brute_force(points, indices.reshape(-1, 3), queries)
    brute_error = float(np.abs(ours - exact).max())
    print(f"{len(queries)} closest-point queries on a {len(indices) // 3}-triangle torus: largest difference "
          f"from brute force (float64) {brute_error:.2e}")
    warp_error = None
    if not args.no_warp:
        theirs = warp_distances(points, indices, queries)
        if theirs is None:
            print("warp-lang is not installed (or failed): no comparison with Warp")
        else:
            warp_error = float(np.abs(ours - theirs).max())
            print(f"largest difference from Warp's CPU, same kernel: {warp_error:.2e}")

    # The gradient of the summed squared distances, through the query: |p - q(p)|^2 has the
    # gradient 2 (p - q) (the closest point q moves along the surface, orthogonally to p - q).
    x = wp.array(queries[:64], dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(squared_distance, dim=len(x), inputs=[mesh.id, x, loss])
    tape.backward(loss=loss)
    nearest = wp.zeros(len(x), dtype=wp.vec3)
    wp.launch(closest_point, dim=len(x), inputs=[mesh.id, x, nearest])
    expected = 2.0 * (queries[:64] - nearest.numpy())
    grad_error = float(np.abs(x.grad.numpy() - expected).max() / np.abs(expected).max())
    print(f"gradient of the squared distances through the query: largest relative difference from 2 (p - q) "
          f"{grad_error:.1e}")
    return {"brute_error": brute_error, "warp_error": warp_error, "gradient_error": grad_error}


if __name__ == "__main__":
    main()
