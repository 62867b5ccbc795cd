"""Block-cooperative BVH and mesh queries (one thread per CPU block): every overlapping box
or face is handed out once, then tile_query_valid turns false."""

import numpy as np

import weft as wp


@wp.kernel
def count_overlaps(bvh: wp.uint64, lo: wp.vec3, hi: wp.vec3, counts: wp.array[int], steps: wp.array[int]):
    query = wp.tile_bvh_query_aabb(bvh, lo, hi)
    while wp.tile_query_valid(query):
        box = wp.untile(wp.tile_bvh_query_next(query))
        steps[0] += 1
        if box >= 0:
            wp.atomic_add(counts, box, 1)


@wp.kernel
def count_faces(mesh: wp.uint64, lo: wp.vec3, hi: wp.vec3, counts: wp.array[int]):
    query = wp.tile_mesh_query_aabb(mesh, lo, hi)
    while wp.tile_query_valid(query):
        face = wp.tile_mesh_query_aabb_next(query)[0]
        if face >= 0:
            wp.atomic_add(counts, face, 1)


def test_tiled_bvh_query_hands_out_each_overlapping_box_once():
    rng = np.random.default_rng(3)
    lowers = rng.uniform(0, 1, (200, 3)).astype(np.float32)
    uppers = lowers + rng.uniform(0.01, 0.1, (200, 3)).astype(np.float32)
    bvh = wp.Bvh(wp.array(lowers, dtype=wp.vec3), wp.array(uppers, dtype=wp.vec3))
    lo, hi = np.array([0.2, 0.2, 0.2], np.float32), np.array([0.6, 0.7, 0.5], np.float32)
    counts, steps = wp.zeros(200, dtype=int), wp.zeros(1, dtype=int)
    wp.launch_tiled(count_overlaps, dim=[1], inputs=[bvh.id, wp.vec3(*lo), wp.vec3(*hi), counts, steps],
                    block_dim=32)
    want = np.all((lowers <= hi) & (uppers >= lo), axis=1)
    np.testing.assert_array_equal(counts.numpy(), want.astype(int))
    assert steps.numpy()[0] == want.sum() + 1  # one step per box, then one finding none


def test_tiled_mesh_query_hands_out_each_face_once():
    points = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [5, 5, 5], [6, 5, 5], [5, 6, 5]], np.float32)
    mesh = wp.Mesh(wp.array(points, dtype=wp.vec3), wp.array([0, 1, 2, 3, 4, 5], dtype=int))
    counts = wp.zeros(2, dtype=int)
    wp.launch_tiled(count_faces, dim=[1], inputs=[mesh.id, wp.vec3(-1.0, -1.0, -1.0), wp.vec3(2.0, 2.0, 2.0),
                                                  counts], block_dim=8)
    np.testing.assert_array_equal(counts.numpy(), [1, 0])
