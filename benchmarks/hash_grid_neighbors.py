"""HashGrid neighbour counts: build and query time, weft against Warp's CPU and scipy.

    python -m benchmarks.hash_grid_neighbors [N] [--peers weft,warp,scipy] [--threads T]

N points (default 200000) uniform in a cube at ~10 points per unit volume; each point
counts its neighbours within r = 0.6 (grid cells 0.6 wide, 128^3 cells). weft and Warp run
the same kernel source; scipy builds a cKDTree and calls query_ball_point(...,
return_length=True) with workers=-1. Each peer runs in its own process (Warp and weft
both answer to `wp`); the counts are checked against each other before any time is shown.
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

RADIUS = 0.6
REPS = 5

KERNEL = '''
@wp.kernel
def count_neighbors(grid: wp.uint64, radius: float, points: wp.array(dtype=wp.vec3), counts: wp.array(dtype=int)):
    tid = wp.tid()
    i = wp.hash_grid_point_id(grid, tid)
    p = points[i]
    count = int(0)
    for index in wp.hash_grid_query(grid, p, radius):
        if wp.length(p - points[index]) <= radius:
            count += 1
    counts[i] = count
'''


def points(n):
    side = (n / 10.0) ** (1.0 / 3.0)
    return (np.random.default_rng(0).random((n, 3)) * side).astype(np.float32)


def _kernel_module(peer):
    """KERNEL as a module importing `peer` as wp (kernels need a source file)."""
    import importlib.util
    import tempfile
    path = tempfile.NamedTemporaryFile("w", suffix=f"_{peer}_hash_grid.py", delete=False)
    path.write(f"import {peer} as wp\n" + KERNEL)
    path.close()
    spec = importlib.util.spec_from_file_location(f"hash_grid_kernel_{peer}", path.name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_wp(peer, n, threads):
    if peer == "warp":
        import warp as wp
        wp.config.quiet = True
    else:
        import weft as wp
        if threads:
            wp.config.num_threads = threads
    wp.init()
    kernel = _kernel_module(peer).count_neighbors
    pts = wp.array(points(n), dtype=wp.vec3)
    counts = wp.zeros(n, dtype=int)
    grid = wp.HashGrid(128, 128, 128)
    build, query, cpu = [], [], []
    for _ in range(REPS + 1):
        t0 = time.perf_counter()
        grid.build(pts, RADIUS)
        wp.synchronize()
        t1, c1 = time.perf_counter(), time.process_time()
        wp.launch(kernel, n, inputs=[wp.uint64(grid.id), RADIUS, pts, counts])
        wp.synchronize()
        t2, c2 = time.perf_counter(), time.process_time()
        build.append(t1 - t0)
        query.append(t2 - t1)
        cpu.append(c2 - c1)
    return min(build[1:]), min(query[1:]), statistics.median(cpu[1:]), counts.numpy()


def run_scipy(n, threads):
    from scipy.spatial import cKDTree
    pts = points(n)
    build, query, cpu = [], [], []
    for _ in range(REPS):
        t0 = time.perf_counter()
        tree = cKDTree(pts)
        t1, c1 = time.perf_counter(), time.process_time()
        counts = tree.query_ball_point(pts, RADIUS, return_length=True, workers=threads or -1)
        t2, c2 = time.perf_counter(), time.process_time()
        build.append(t1 - t0)
        query.append(t2 - t1)
        cpu.append(c2 - c1)
    return min(build), min(query), statistics.median(cpu), np.asarray(counts)


def child(peer, n, threads):
    b, q, c, counts = run_scipy(n, threads) if peer == "scipy" else run_wp(peer, n, threads)
    print(json.dumps({"build": b, "query": q, "cpu": c, "sum": int(counts.sum()), "hash": int(
        (counts.astype(np.int64) * np.arange(1, n + 1)).sum() % 1000003)}))


def main(argv):
    n, peers, threads = 200_000, ["weft", "warp", "scipy"], 0
    args = iter(argv)
    for a in args:
        if a == "--peers":
            peers = next(args).split(",")
        elif a == "--threads":
            threads = int(next(args))
        else:
            n = int(a)
    results = {}
    for peer in peers:
        out = subprocess.run([sys.executable, "-m", "benchmarks.hash_grid_neighbors", "--child", peer, str(n),
                              str(threads)], capture_output=True, text=True)
        line = out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout.strip() else None
        results[peer] = json.loads(line) if line else {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    sums = {r.get("hash") for r in results.values() if "hash" in r}
    print(f"HashGrid neighbour count, N = {n}, r = {RADIUS}" + (f", weft threads = {threads}" if threads else ""))
    print(f"{'peer':8s} {'build ms':>10s} {'query ms':>10s} {'query cpu':>10s}")
    for peer, r in results.items():
        if "error" in r:
            print(f"{peer:8s} n/a ({r['error'][:70]})")
        else:
            print(f"{peer:8s} {r['build'] * 1e3:10.1f} {r['query'] * 1e3:10.1f} {r['cpu'] * 1e3:10.1f}")
    print("counts agree" if len(sums) == 1 else f"COUNTS DIFFER between peers: {results}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        main(sys.argv[1:])
