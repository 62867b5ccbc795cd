"""A 3x3-block elasticity-like system solved with cg over vec3 arrays and the block
preconditioners of warp.optim.linear (diag, block_jacobi_direct, block_jacobi_sequential,
block_jacobi_tile), and in float64 with fsai; iteration counts and solutions compared."""

import numpy as np
import warp as wp
import warp.optim.linear as linear
import warp.sparse as sp


@wp.kernel
def chain_blocks(n: int, rows: wp.array(dtype=int), cols: wp.array(dtype=int), blocks: wp.array(dtype=wp.mat33)):
    i = wp.tid()
    s = 1.0 + 0.1 * float(i)
    d = wp.normalize(wp.vec3(1.0, 0.3 * float(i % 3), 0.2))
    K = s * wp.outer(d, d) + wp.diag(wp.vec3(0.5, 0.7, 0.9))
    rows[3 * i] = i
    cols[3 * i] = i
    blocks[3 * i] = 4.0 * K + wp.identity(n=3, dtype=float)
    j = (i + 1) % n
    rows[3 * i + 1] = i
    cols[3 * i + 1] = j
    blocks[3 * i + 1] = -K
    rows[3 * i + 2] = j
    cols[3 * i + 2] = i
    blocks[3 * i + 2] = -wp.transpose(K)


def run():
    n = 10
    rows = wp.empty(3 * n, dtype=int)
    cols = wp.empty(3 * n, dtype=int)
    blocks = wp.empty(3 * n, dtype=wp.mat33)
    wp.launch(chain_blocks, dim=n, inputs=[n, rows, cols, blocks])
    A = sp.bsr_zeros(n, n, block_type=wp.mat33)
    sp.bsr_set_from_triplets(A, rows, cols, blocks)
    b = wp.array(np.sin(np.arange(3 * n, dtype=np.float32)).reshape(n, 3), dtype=wp.vec3)

    out = {}
    for ptype in ("id", "diag", "block_jacobi_direct", "block_jacobi_sequential", "block_jacobi_tile"):
        M = linear.preconditioner(A, ptype=ptype)
        x = wp.zeros_like(b)
        iters, _, _ = linear.cg(A, b, x, tol=1e-6, M=M, check_every=1)
        out[f"{ptype}_iters"] = iters
        out[f"{ptype}_x"] = x.numpy()
        x3 = wp.zeros_like(b)
        linear.cg(A, b, x3, tol=0.0, maxiter=3, M=M, check_every=0)
        out[f"{ptype}_x3"] = x3.numpy()
    out["M_is_none"] = linear.preconditioner(A, ptype="id") is None

    # the same system in float64, with the factorized sparse approximate inverse
    A64 = sp.bsr_copy(A, scalar_type=wp.float64)
    b64 = wp.array(b.numpy().astype(np.float64), dtype=wp.vec3d)
    x64 = wp.zeros_like(b64)
    out["fsai_iters"], _, _ = linear.cg(A64, b64, x64, tol=1e-10, M=linear.preconditioner(A64, "fsai"),
                                        check_every=1)
    out["fsai_x"] = x64.numpy()
    x64 = wp.zeros_like(b64)
    linear.cr(A64, b64, x64, tol=0.0, maxiter=3, M=linear.preconditioner(A64, "block_jacobi_direct"),
              check_every=0)
    out["cr_block_x3"] = x64.numpy()
    return out


TOLERANCE = {
    "id_x": (1e-4, 1e-5), "diag_x": (1e-4, 1e-5), "block_jacobi_direct_x": (1e-4, 1e-5),
    "block_jacobi_sequential_x": (1e-4, 1e-5), "block_jacobi_tile_x": (1e-4, 1e-5),
    "id_x3": (1e-4, 1e-6), "diag_x3": (1e-4, 1e-6), "block_jacobi_direct_x3": (1e-4, 1e-6),
    "block_jacobi_sequential_x3": (1e-4, 1e-6), "block_jacobi_tile_x3": (1e-4, 1e-6),
    "fsai_x": (1e-8, 1e-10), "cr_block_x3": (1e-8, 1e-10),
}
