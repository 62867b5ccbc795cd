"""Mesh closest-point queries: build and query time, weft against Warp's CPU and open3d.

    python -m benchmarks.mesh_closest_point [Q] [--tris T] [--peers weft,warp,open3d,trimesh] [--threads N]

A torus of about T triangles (default 100,000) and Q query points (default 1,000,000)
uniform in a box around it; each query finds the closest point on the mesh
(`mesh_query_point_no_sign` with an unbounded max_dist). weft and Warp run the same kernel
source; open3d uses RaycastingScene.compute_closest_points, trimesh
`closest_point` (pure Python and numpy: only a slice of the queries, scaled up). Peers that
are not installed are reported as such (neither is a weft dependency). Each peer runs in
its own process; the distances are compared with weft's before any time is shown.
Times: the best of the runs' wall times, and the median of their query's process CPU time
(all threads together: with --threads 1 the cost per core, which a loaded machine
disturbs less than wall time). Standalone, not part of benchmarks.run.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

import numpy as np

REPS = 3
TRIMESH_SLICE = 20_000

KERNEL = '''
@wp.kernel
def closest(mesh: wp.uint64, queries: wp.array(dtype=wp.vec3), dist: wp.array(dtype=float)):
    tid = wp.tid()
    p = queries[tid]
    q = wp.mesh_query_point_no_sign(mesh, p, 1.0e6)
    if q.result:
        dist[tid] = wp.length(p - wp.mesh_eval_position(mesh, q.face, q.u, q.v))
    else:
        dist[tid] = -1.0
'''


def torus(tris):
    """Points and indices of a torus (radii 1 and 0.35) with about `tris` triangles."""
    n = max(3, int(round((tris / 2) ** 0.5)))
    m = max(3, int(round(tris / (2 * n))))
    u = np.linspace(0, 2 * np.pi, n, endpoint=False)[:, None]
    v = np.linspace(0, 2 * np.pi, m, endpoint=False)[None, :]
    x = (1 + 0.35 * np.cos(v)) * np.cos(u)
    y = (1 + 0.35 * np.cos(v)) * np.sin(u)
    z = 0.35 * np.sin(v) * np.ones_like(u)
    pts = np.stack([x, y, z], -1).reshape(-1, 3).astype(np.float32)
    i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    a = i * m + j
    b = ((i + 1) % n) * m + j
    c = ((i + 1) % n) * m + (j + 1) % m
    d = i * m + (j + 1) % m
    idx = np.stack([np.stack([a, b, c], -1), np.stack([a, c, d], -1)], 2).reshape(-1).astype(np.int32)
    return pts, idx


def queries(q):
    return (np.random.default_rng(0).random((q, 3)) * np.array([3.0, 3.0, 1.4]) - np.array([1.5, 1.5, 0.7])).astype(
        np.float32)


def _kernel_module(peer):
    import importlib.util
    import tempfile
    path = tempfile.NamedTemporaryFile("w", suffix=f"_{peer}_mesh_cp.py", delete=False)
    path.write(f"import {peer} as wp\n" + KERNEL)
    path.close()
    spec = importlib.util.spec_from_file_location(f"mesh_cp_kernel_{peer}", path.name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_wp(peer, q, tris, threads):
    if peer == "warp":
        import warp as wp
        wp.config.quiet = True
    else:
        import weft as wp
        if threads:
            wp.config.num_threads = threads
    wp.init()
    kernel = _kernel_module(peer).closest
    pts, idx = torus(tris)
    points = wp.array(pts, dtype=wp.vec3, device="cpu")
    indices = wp.array(idx, dtype=wp.int32, device="cpu")
    qs = wp.array(queries(q), dtype=wp.vec3, device="cpu")
    dist = wp.zeros(q, dtype=float, device="cpu")
    build, query, cpu = [], [], []
    for _ in range(REPS + 1):
        t0 = time.perf_counter()
        mesh = wp.Mesh(points=points, indices=indices)
        wp.synchronize()
        t1, c1 = time.perf_counter(), time.process_time()
        wp.launch(kernel, q, inputs=[mesh.id, qs, dist], device="cpu")
        wp.synchronize()
        t2, c2 = time.perf_counter(), time.process_time()
        build.append(t1 - t0)
        query.append(t2 - t1)
        cpu.append(c2 - c1)
    return min(build[1:]), min(query[1:]), statistics.median(cpu[1:]), dist.numpy()


def run_open3d(q, tris, threads):
    import open3d as o3d
    pts, idx = torus(tris)
    qs = queries(q)
    build, query = [], []
    for _ in range(REPS):
        t0 = time.perf_counter()
        scene = o3d.t.geometry.RaycastingScene()
        scene.add_triangles(o3d.core.Tensor(pts), o3d.core.Tensor(idx.reshape(-1, 3).astype(np.uint32)))
        t1 = time.perf_counter()
        res = scene.compute_closest_points(o3d.core.Tensor(qs))
        cp = res["points"].numpy()
        t2 = time.perf_counter()
        build.append(t1 - t0)
        query.append(t2 - t1)
    return min(build), min(query), np.linalg.norm(cp - qs, axis=1)


def run_trimesh(q, tris, threads):
    import trimesh
    pts, idx = torus(tris)
    qs = queries(q)[:TRIMESH_SLICE]
    t0 = time.perf_counter()
    mesh = trimesh.Trimesh(pts, idx.reshape(-1, 3), process=False)
    t1 = time.perf_counter()
    _, dist, _ = trimesh.proximity.closest_point(mesh, qs)
    t2 = time.perf_counter()
    full = np.full(q, np.nan)
    full[:TRIMESH_SLICE] = dist
    return t1 - t0, (t2 - t1) * q / TRIMESH_SLICE, full


def child(peer, q, tris, threads):
    runner = {"open3d": run_open3d, "trimesh": run_trimesh}.get(peer)
    if runner:
        b, t, dist = runner(q, tris, threads)
        c = None
    else:
        b, t, c, dist = run_wp(peer, q, tris, threads)
    np.save(f"/tmp/mesh_cp_{peer}.npy", np.asarray(dist, np.float32))
    print(json.dumps({"build": b, "query": t, "cpu": c}))


def main(argv):
    q, tris, peers, threads = 1_000_000, 100_000, ["weft", "warp", "open3d", "trimesh"], 0
    args = iter(argv)
    for a in args:
        if a == "--peers":
            peers = next(args).split(",")
        elif a == "--threads":
            threads = int(next(args))
        elif a == "--tris":
            tris = int(next(args))
        else:
            q = int(a)
    results = {}
    for peer in peers:
        out = subprocess.run([sys.executable, "-m", "benchmarks.mesh_closest_point", "--child", peer, str(q),
                              str(tris), str(threads)], capture_output=True, text=True)
        line = out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout.strip() else None
        results[peer] = json.loads(line) if line else {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    print(f"Mesh closest point: {len(torus(tris)[1]) // 3} triangles, {q} queries"
          + (f", weft threads = {threads}" if threads else ""))
    ref = results.get("weft", {})
    print(f"{'peer':8s} {'build ms':>10s} {'query ms':>10s} {'query cpu':>10s} {'build/weft':>11s} {'query/weft':>11s}"
          "  max |dist - weft's|")
    base = np.load("/tmp/mesh_cp_weft.npy") if "build" in ref else None
    for peer, r in results.items():
        if "error" in r:
            print(f"{peer:8s} n/a ({r['error'][:70]})")
            continue
        ratio_b = r["build"] / ref["build"] if "build" in ref else float("nan")
        ratio_q = r["query"] / ref["query"] if "query" in ref else float("nan")
        diff = ""
        if base is not None:
            d = np.load(f"/tmp/mesh_cp_{peer}.npy")
            ok = ~np.isnan(d)
            diff = f"{np.abs(d[ok] - base[ok]).max():.2e}"
        cpu = f"{r['cpu'] * 1e3:10.1f}" if r.get("cpu") is not None else f"{'-':>10s}"
        times = f"{r['build'] * 1e3:10.1f} {r['query'] * 1e3:10.1f} {cpu}"
        print(f"{peer:8s} {times} {ratio_b:11.2f} {ratio_q:11.2f}  {diff}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
    else:
        main(sys.argv[1:])
