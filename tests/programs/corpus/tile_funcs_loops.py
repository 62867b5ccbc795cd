"""Tiles passed to @wp.func (returned, updated in place), tiles carried through loops and
branches, `+=` on tiles, a Jacobi smoother on a block with tile_view neighbours."""

import numpy as np
import warp as wp

M = 6
N = 8


@wp.func
def normalize_rows(t: wp.tile[float, M, N]):
    s = wp.tile_sum(wp.tile_map(wp.abs, t), axis=1)
    inv = wp.tile_map(wp.div, wp.tile_ones(M, dtype=float), s)
    return t * 1.0, inv


@wp.func
def add_in_place(a: wp.tile[float, M, N], b: wp.tile[float, M, N]):
    a += b


@wp.func
def block_energy(t: wp.tile[float, M, N]) -> float:
    return wp.tile_sum(wp.tile_map(wp.mul, t, t))[0] * 0.5


@wp.kernel
def funcs(x: wp.array2d(dtype=float), out: wp.array2d(dtype=float), inv: wp.array(dtype=float),
          e: wp.array(dtype=float)):
    t = wp.tile_load(x, shape=(M, N))
    u, r = normalize_rows(t)
    add_in_place(u, wp.tile_full((M, N), 0.25, dtype=float))
    wp.tile_store(out, u)
    wp.tile_store(inv, r)
    e[0] = block_energy(u)


@wp.kernel
def loops(x: wp.array(dtype=float), steps: int, out: wp.array2d(dtype=float)):
    t = wp.tile_load(x, shape=16)
    acc = wp.tile_zeros(16, dtype=float)
    for k in range(steps):
        if k % 2 == 0:
            acc += t * float(k)
        else:
            acc -= wp.tile_map(wp.sqrt, wp.tile_map(wp.abs, t))
        t = t * 0.5
    wp.tile_store(out[0], acc)
    wp.tile_store(out[1], t)
    n = int(0)  # noqa: UP018 (a Warp kernel variable updated in a loop is declared typed)
    s = wp.tile_zeros(16, dtype=float)
    while n < steps * 3:
        s = s + wp.tile_ones(16, dtype=float)
        n += 2
    wp.tile_store(out[2], s)


@wp.kernel
def jacobi(u: wp.array2d(dtype=float), f: wp.array2d(dtype=float), iters: int, out: wp.array2d(dtype=float)):
    cur = wp.tile_load(u, shape=(M, N))
    rhs = wp.tile_load(f, shape=(M, N))
    for _ in range(iters):
        nxt = cur * 1.0
        for i in range(1, M - 1):
            for j in range(1, N - 1):
                nxt[i, j] = 0.25 * (cur[i - 1, j] + cur[i + 1, j] + cur[i, j - 1] + cur[i, j + 1] - rhs[i, j])
        cur = nxt
    wp.tile_store(out, cur)


def run():
    rng = np.random.default_rng(59)
    x = wp.array(rng.standard_normal((M, N)).astype(np.float32))
    out = wp.zeros((M, N), dtype=float)
    inv = wp.zeros(M, dtype=float)
    e = wp.zeros(1, dtype=float)
    wp.launch_tiled(funcs, dim=1, inputs=[x, out, inv, e], block_dim=64)
    xl = wp.array(rng.uniform(-2, 2, 16).astype(np.float32))
    ol = wp.zeros((3, 16), dtype=float)
    wp.launch_tiled(loops, dim=1, inputs=[xl, 5, ol], block_dim=32)
    u0 = np.zeros((M, N), dtype=np.float32)
    u0[0, :] = 1.0
    u0[:, -1] = np.linspace(0, 1, M)
    fj = wp.array(np.full((M, N), 0.05, dtype=np.float32))
    oj = wp.zeros((M, N), dtype=float)
    wp.launch_tiled(jacobi, dim=1, inputs=[wp.array(u0), fj, 20, oj], block_dim=256)
    return {"out": out.numpy(), "inv": inv.numpy(), "energy": e.numpy(), "loops": ol.numpy(), "jacobi": oj.numpy()}


TOLERANCE = {"energy": (1e-5, 1e-6), "jacobi": (1e-5, 1e-6)}
