"""Sparse matrix algebra: bsr_mm with alpha/beta into an existing result, bsr_transposed and
`.transpose()`, bsr_axpy, bsr_scale, and the operator forms users write (A @ B, A + B,
2.0 * A, A - B, A.transpose() @ x, -A, A / 2, x @ A, in-place `+=` and `*=`)."""

import numpy as np
import warp as wp
import warp.sparse as sp


def dense(A):
    """Dense numpy copy of a scalar-block matrix from its CSR arrays."""
    nnz = A.nnz_sync()
    off = A.offsets.numpy()
    col = A.columns.numpy()[:nnz]
    val = A.values.numpy()[:nnz]
    out = np.zeros(A.shape, dtype=val.dtype)
    for r in range(A.nrow):
        for k in range(off[r], off[r + 1]):
            out[r, col[k]] += val[k]
    return out


def random_csr(rng, n, m, density, dtype):
    mask = rng.random((n, m)) < density
    r, c = np.nonzero(mask)
    v = rng.uniform(-1.0, 1.0, r.size)
    return sp.bsr_from_triplets(n, m, wp.array(r.astype(np.int32), dtype=int), wp.array(c.astype(np.int32), dtype=int),
                                wp.array(v.astype(dtype), dtype=wp.dtype_from_numpy(np.dtype(dtype))))


def run():
    rng = np.random.default_rng(5)
    A = random_csr(rng, 6, 5, 0.4, np.float64)
    B = random_csr(rng, 5, 7, 0.4, np.float64)
    C = random_csr(rng, 6, 7, 0.3, np.float64)

    AB = sp.bsr_mm(A, B)
    C2 = sp.bsr_copy(C)
    sp.bsr_mm(A, B, C2, alpha=2.0, beta=-1.0)
    At = sp.bsr_transposed(A)
    AtA = At @ A
    S = A + 2.0 * A
    D = C - AB
    E = sp.bsr_axpy(C, sp.bsr_copy(AB), alpha=0.5, beta=3.0)
    F = sp.bsr_copy(C)
    sp.bsr_scale(F, -4.0)
    G = sp.bsr_copy(A)
    G += A
    G *= 0.25
    x = wp.array(np.linspace(-1.0, 1.0, 6), dtype=wp.float64)
    atx = A.transpose() @ x
    neg = sp.bsr_copy(-A)  # -A and A / 2 are lazy scaling expressions
    half = sp.bsr_copy(A / 2.0)
    xa = x @ A  # a row vector times A: A^T x
    y = wp.array(np.arange(7, dtype=np.float64), dtype=wp.float64)
    aby = (A @ B) @ y

    return {
        "AB": dense(AB),
        "C2": dense(C2),
        "At": dense(At),
        "At_shape": np.array(At.shape),
        "AtA": dense(AtA),
        "S": dense(S),
        "D": dense(D),
        "E": dense(E),
        "F": dense(F),
        "G": dense(G),
        "atx": atx.numpy(),
        "neg": dense(neg),
        "half": dense(half),
        "xa": xa.numpy(),
        "aby": aby.numpy(),
        "A_dense": dense(A),
        "B_dense": dense(B),
        "C_dense": dense(C),
    }
