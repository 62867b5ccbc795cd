"""Block sparse matrices with 3x3 blocks: bsr_zeros + bsr_set_from_triplets with mat33 values
(and with a (n, 3, 3) scalar array), products with vec3 arrays, bsr_get_diag, bsr_diag and
bsr_identity, a spring-network stiffness assembled by a kernel."""

import numpy as np
import warp as wp
import warp.sparse as sp


@wp.kernel
def spring_blocks(
    pos: wp.array(dtype=wp.vec3),
    edges: wp.array(dtype=wp.vec2i),
    k: float,
    rows: wp.array(dtype=int),
    cols: wp.array(dtype=int),
    blocks: wp.array(dtype=wp.mat33),
):
    e = wp.tid()
    i = edges[e][0]
    j = edges[e][1]
    d = wp.normalize(pos[j] - pos[i])
    K = k * wp.outer(d, d)
    rows[4 * e + 0] = i
    cols[4 * e + 0] = i
    blocks[4 * e + 0] = K
    rows[4 * e + 1] = j
    cols[4 * e + 1] = j
    blocks[4 * e + 1] = K
    rows[4 * e + 2] = i
    cols[4 * e + 2] = j
    blocks[4 * e + 2] = -K
    rows[4 * e + 3] = j
    cols[4 * e + 3] = i
    blocks[4 * e + 3] = -K


def run():
    pos = wp.array(np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 1]], dtype=np.float32), dtype=wp.vec3)
    edges = wp.array(np.array([[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]], dtype=np.int32), dtype=wp.vec2i)
    ne = 5
    rows = wp.empty(4 * ne, dtype=int)
    cols = wp.empty(4 * ne, dtype=int)
    blocks = wp.empty(4 * ne, dtype=wp.mat33)
    wp.launch(spring_blocks, dim=ne, inputs=[pos, edges, 100.0], outputs=[rows, cols, blocks])

    K = sp.bsr_zeros(4, 4, block_type=wp.mat33)
    sp.bsr_set_from_triplets(K, rows, cols, blocks)
    nnz = K.nnz_sync()

    u = wp.array(np.array([[0.1, 0, 0], [0, 0.2, 0], [0, 0, 0.3], [0.1, 0.1, 0.1]], dtype=np.float32), dtype=wp.vec3)
    f = K @ u
    diag = sp.bsr_get_diag(K)

    # triplets given as a (n, 3, 3) array of scalars
    raw = np.arange(2 * 9, dtype=np.float32).reshape(2, 3, 3)
    M = sp.bsr_from_triplets(2, 3, wp.array([0, 1], dtype=int), wp.array([2, 0], dtype=int),
                             wp.array(raw, dtype=float))
    xm = wp.array(np.arange(9, dtype=np.float32).reshape(3, 3), dtype=wp.vec3)
    ym = sp.bsr_mv(M, xm)

    D = sp.bsr_diag(wp.array(np.stack([np.eye(3) * (i + 1) for i in range(3)]).astype(np.float32), dtype=wp.mat33))
    I4 = sp.bsr_identity(4, block_type=wp.mat33)
    c = wp.mat33(1.0, 2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 3.0)
    C = sp.bsr_diag(c, rows_of_blocks=2, cols_of_blocks=3)
    yc = C @ wp.array(np.ones((3, 3), dtype=np.float32), dtype=wp.vec3)

    return {
        "nnz": nnz,
        "offsets": K.offsets.numpy()[:5],
        "columns": K.columns.numpy()[:nnz],
        "values": K.values.numpy()[:nnz],
        "values_shape": np.array(K.values.numpy()[:nnz].shape),
        "f": f.numpy(),
        "diag": diag.numpy(),
        "ym": ym.numpy(),
        "m_shape": np.array(M.shape),
        "D_values": D.values.numpy()[: D.nnz],
        "D_columns": D.columns.numpy()[: D.nnz],
        "I_nnz": I4.nnz,
        "I_values": I4.values.numpy()[: I4.nnz],
        "C_shape": np.array(C.shape),
        "yc": yc.numpy(),
        "scalar_type": C.scalar_type.__name__,
    }


TOLERANCE = {"f": (1e-5, 1e-5)}
