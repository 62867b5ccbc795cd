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


@wp.kernel
def read_two_elements(x: wp.array2d[wp.float64], loss: wp.array[wp.float64]):
    t = wp.tile_load(x, shape=(4, 6))
    top = wp.tile_view(t, offset=(0, 0), shape=(2, 6))
    corner = t[3, 5] * t[0, 1]
    wp.tile_atomic_add(loss, wp.tile_sum(top) + wp.tile_full(1, corner, dtype=wp.float64))


def test_element_reads_carry_their_adjoints_beside_a_view():
    # Warp 1.19 (CPU) loses t[3, 5]'s contribution to x.grad[0, 1] in this kernel (tests/programs/
    # corpus/tile_grad_views.py keeps the element read out for that reason); the analytic adjoint is
    # 1 on the top rows plus t[3, 5] at (0, 1) and t[0, 1] at (3, 5)
    xn = np.random.default_rng(1).standard_normal((4, 6))
    x = wp.array(xn, dtype=wp.float64, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(read_two_elements, dim=1, inputs=[x, loss], block_dim=64)
    tape.backward(loss)
    expected = np.zeros((4, 6))
    expected[:2] = 1.0
    expected[0, 1] += xn[3, 5]
    expected[3, 5] += xn[0, 1]
    np.testing.assert_allclose(loss.numpy(), [xn[:2].sum() + xn[3, 5] * xn[0, 1]], rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)
