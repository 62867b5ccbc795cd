"""bvh_query_ray's box test at its edges, as Warp's slab test decides them: the bound is
half-open (a box entered exactly at max_dist is not reported), and a ray parallel to an axis that
lies exactly in a face plane of a box misses it (0 * inf is NaN there, which min/max drop)."""

import numpy as np

import weft as wp


@wp.kernel
def ray_hits(bvh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
             max_dist: wp.array(dtype=float), hits: wp.array2d(dtype=int)):
    i = wp.tid()
    q = wp.bvh_query_ray(bvh, starts[i], dirs[i])
    b = 0
    while wp.bvh_query_next(q, b, max_dist[i]):
        hits[i, b] = 1


def test_ray_box_edges():
    lowers = np.float32([[-3, -0.5, -0.5], [-0.5, -0.5, -0.5], [2, -0.5, -0.5], [5, 0.5, -0.5]])
    uppers = np.float32([[-2, 0.5, 0.5], [0.5, 0.5, 0.5], [3, 0.5, 0.5], [6, 1.5, 0.5]])
    bvh = wp.Bvh(wp.array(lowers, dtype=wp.vec3), wp.array(uppers, dtype=wp.vec3))
    cases = [  # start, dir, max_dist, boxes reported
        ([0, 0, 0], [1, 0, 0], 1e9, [1, 2]),            # behind the start: not reported; inside: reported
        ([0, 0, 0], [2, 0, 0], 1.0, [1]),               # box 2 entered at t = 1.0 = max_dist: not reported
        ([0, 0, 0], [2, 0, 0], 1.0001, [1, 2]),
        ([0, 0.5, 0], [1, 0, 0], 1e9, []),              # in the plane y = 0.5 of boxes 1, 2 and 3
        ([0, 0.49, 0], [1, 0, 0], 1e9, [1, 2]),
        ([0, 0.51, 0], [1, 0, 0], 1e9, [3]),
        ([0, 0.5, 0], [1, 1e-6, 0], 1e9, [1, 3]),        # not parallel: leaves box 1 upwards, misses 2
    ]
    n = len(cases)
    hits = wp.zeros((n, 4), dtype=int)
    wp.launch(ray_hits, n, inputs=[bvh.id, wp.array([c[0] for c in cases], dtype=wp.vec3),
                                   wp.array([c[1] for c in cases], dtype=wp.vec3),
                                   wp.array([c[2] for c in cases], dtype=float), hits])
    for (start, d, md, expected), row in zip(cases, hits.numpy()):
        assert list(np.nonzero(row)[0]) == expected, (start, d, md)
