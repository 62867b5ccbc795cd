"""tile_extract and element access of tiles of vectors and matrices (builtins/tiles/elements.py)."""

import numpy as np

import weft as wp

mat23 = wp.types.matrix(shape=(2, 3), dtype=wp.float32)


@wp.kernel
def extract_components(v: wp.array2d[wp.vec3], m: wp.array[mat23], out: wp.array[float],
                       rows: wp.array[wp.vec3]):
    tv = wp.tile_load(v, shape=(2, 3))
    tm = wp.tile_load(m, shape=4)
    out[0] = wp.tile_extract(tv, 1, 2, 0)  # component 0 of the vector at (1, 2)
    out[1] = wp.tile_extract(tm, 3, 1, 2)  # entry (1, 2) of the matrix at 3
    out[2] = wp.tile_extract(tm, 2, 0, 1)
    rows[0] = wp.tile_extract(tm, 1, 1)  # row 1 of the matrix at 1
    rows[1] = wp.tile_extract(tv, 0, 1)  # the vector at (0, 1)


def test_extract_reaches_into_vector_and_matrix_elements():
    rng = np.random.default_rng(0)
    vn = rng.standard_normal((2, 3, 3)).astype(np.float32)
    mn = rng.standard_normal((4, 2, 3)).astype(np.float32)
    out = wp.zeros(3, dtype=float)
    rows = wp.zeros(2, dtype=wp.vec3)
    wp.launch_tiled(extract_components, dim=1, block_dim=32,
                    inputs=[wp.array(vn, dtype=wp.vec3), wp.array(mn, dtype=mat23), out, rows])
    np.testing.assert_array_equal(out.numpy(), [vn[1, 2, 0], mn[3, 1, 2], mn[2, 0, 1]])
    np.testing.assert_array_equal(rows.numpy(), [mn[1, 1], vn[0, 1]])
