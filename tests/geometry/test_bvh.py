"""Bvh: the tree itself (every primitive in one leaf, boxes enclosing their contents, group
subtrees), queries of every kind against brute force (both loop forms, refit, rebuild,
runtime kind choice, erased func parameters), and errors and stale ids."""

import ctypes

import numpy as np
import pytest

import weft as wp
from weft.geometry import bvh_build


@wp.kernel
def query_aabb(bvh: wp.uint64, lower: wp.vec3, upper: wp.vec3, hits: wp.array(dtype=int)):
    q = wp.bvh_query_aabb(bvh, lower, upper)
    i = 0
    while wp.bvh_query_next(q, i):
        hits[i] += 1


@wp.kernel
def query_ray(bvh: wp.uint64, start: wp.vec3, d: wp.vec3, max_t: float, hits: wp.array(dtype=int)):
    for i in wp.bvh_query_ray(bvh, start, d):  # (the for form ignores max_t; see query_ray_bounded)
        hits[i] += 1


@wp.kernel
def query_ray_bounded(bvh: wp.uint64, start: wp.vec3, d: wp.vec3, max_t: float, hits: wp.array(dtype=int)):
    q = wp.bvh_query_ray(bvh, start, d)
    i = 0
    while wp.bvh_query_next(q, i, max_t):
        hits[i] += 1


@wp.kernel
def query_sphere(bvh: wp.uint64, center: wp.vec3, radius: float, hits: wp.array(dtype=int)):
    for i in wp.bvh_query_sphere(bvh, center, radius):
        hits[i] += 1


@wp.kernel
def query_capsule(bvh: wp.uint64, p0: wp.vec3, p1: wp.vec3, radius: float, hits: wp.array(dtype=int)):
    q = wp.bvh_query_capsule(bvh, p0, p1 - p0, radius)
    i = 0
    while wp.bvh_query_next(q, i, 1.0):
        hits[i] += 1


@wp.func
def collect(q: wp.BvhQuery, hits: wp.array(dtype=int)):
    i = 0
    while wp.bvh_query_next(q, i):
        hits[i] += 1


@wp.kernel
def query_runtime_kind(bvh: wp.uint64, use_ray: bool, lower: wp.vec3, upper: wp.vec3, start: wp.vec3, d: wp.vec3,
                       hits: wp.array(dtype=int)):
    if use_ray:
        q = wp.bvh_query_ray(bvh, start, d)
    else:
        q = wp.bvh_query_aabb(bvh, lower, upper)
    collect(q, hits)


@wp.kernel
def query_groups(bvh: wp.uint64, lower: wp.vec3, upper: wp.vec3, hits: wp.array2d(dtype=int)):
    g = wp.tid()
    root = wp.bvh_get_group_root(bvh, g)
    q = wp.bvh_query_aabb(bvh, lower, upper, root)
    i = 0
    while wp.bvh_query_next(q, i):
        hits[g, i] += 1


def boxes(n, seed=0, scale=5.0):
    rng = np.random.default_rng(seed)
    lo = rng.random((n, 3)) * scale
    return lo.astype(np.float32), (lo + rng.random((n, 3)) * scale * 0.3).astype(np.float32)


def ray_hits(lo, hi, start, d, max_t=np.inf):
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = (lo - start) / d
        t2 = (hi - start) / d
    tmin = np.where(d == 0, -np.inf, np.minimum(t1, t2)).max(1)
    tmax = np.where(d == 0, np.inf, np.maximum(t1, t2)).min(1)
    inside = np.where(d == 0, (start >= lo) & (start <= hi), True).all(1)
    return inside & (tmax >= 0) & (tmax >= tmin) & (tmin <= max_t)


def sphere_hits(lo, hi, c, r):
    q = np.clip(c, lo, hi)
    return ((q - c) ** 2).sum(1) <= r * r


def run(kernel, bvh, n, *args):
    hits = wp.zeros(n, dtype=int)
    wp.launch(kernel, 1, inputs=[bvh.id, *args, hits])
    return hits.numpy()


@pytest.mark.parametrize("leaf_size", [1, 2, 4, 9])
@pytest.mark.parametrize("constructor", ["sah", "median"])
def test_queries_match_brute_force(leaf_size, constructor):
    lo, hi = boxes(300)
    bvh = wp.Bvh(wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3), constructor=constructor,
                 leaf_size=leaf_size)
    a, b = np.float32([1.5, 2.0, 1.0]), np.float32([3.0, 4.5, 2.5])
    expected = ~((lo > b).any(1) | (hi < a).any(1))
    assert expected.sum() > 5
    np.testing.assert_array_equal(run(query_aabb, bvh, 300, wp.vec3(*a), wp.vec3(*b)), expected)
    start, d = np.float32([-1.0, 0.5, 0.2]), np.float32([1.0, 0.6, 0.5])
    got = run(query_ray, bvh, 300, wp.vec3(*start), wp.vec3(*d), 0.0)
    np.testing.assert_array_equal(got, ray_hits(lo, hi, start, d))
    got = run(query_ray_bounded, bvh, 300, wp.vec3(*start), wp.vec3(*d), 3.0)
    np.testing.assert_array_equal(got, ray_hits(lo, hi, start, d, 3.0))
    c = np.float32([2.5, 2.5, 2.5])
    np.testing.assert_array_equal(run(query_sphere, bvh, 300, wp.vec3(*c), 1.2), sphere_hits(lo, hi, c, 1.2))


def test_ray_parallel_to_an_axis():
    lo = np.float32([[0.5, -1.0, -1.0], [2.0, 2.0, 2.0]])
    hi = np.float32([[1.0, 1.0, 1.0], [3.0, 3.0, 3.0]])
    bvh = wp.Bvh(wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3))
    for x in (0.0, 0.75):  # start outside, then inside, the first box
        got = run(query_ray, bvh, 2, wp.vec3(x, 0.0, 0.0), wp.vec3(1.0, 0.0, 0.0), 0.0)
        np.testing.assert_array_equal(got, [1, 0])
    got = run(query_ray, bvh, 2, wp.vec3(0.0, 1.5, 0.0), wp.vec3(1.0, 0.0, 0.0), 0.0)  # beside both
    np.testing.assert_array_equal(got, [0, 0])


def test_capsule_is_conservative_and_bounded():
    lo, hi = boxes(200, seed=3)
    bvh = wp.Bvh(wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3), leaf_size=2)
    p0, p1, r = np.float32([0.0, 0.0, 0.0]), np.float32([4.0, 3.0, 2.0]), 0.5
    got = run(query_capsule, bvh, 200, wp.vec3(*p0), wp.vec3(*p1), r).astype(bool)
    # boxes grown by r against the segment p0..p1 (t in [0, 1])
    d = p1 - p0
    with np.errstate(divide="ignore"):
        t1, t2 = (lo - r - p0) / d, (hi + r - p0) / d
    expected = (np.maximum(np.minimum(t1, t2).max(1), 0) <= np.minimum(np.maximum(t1, t2).min(1), 1))
    np.testing.assert_array_equal(got, expected)
    assert 0 < got.sum() < 200


def test_refit_and_rebuild_follow_moved_boxes():
    lo, hi = boxes(100, seed=1)
    lowers, uppers = wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3)
    bvh = wp.Bvh(lowers, uppers)
    c = np.float32([2.5, 2.5, 2.5])
    for step, update in enumerate((bvh.refit, bvh.rebuild)):
        lo, hi = boxes(100, seed=10 + step)
        lowers.assign(lo)
        uppers.assign(hi)
        update()
        np.testing.assert_array_equal(run(query_sphere, bvh, 100, wp.vec3(*c), 1.5), sphere_hits(lo, hi, c, 1.5))


def test_runtime_kind_and_erased_parameter():
    lo, hi = boxes(100, seed=2)
    bvh = wp.Bvh(wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3))
    a, b = wp.vec3(1.0, 1.0, 1.0), wp.vec3(3.0, 3.0, 3.0)
    s, d = wp.vec3(0.0, 0.0, 0.0), wp.vec3(1.0, 1.0, 1.0)
    ray = run(query_runtime_kind, bvh, 100, True, a, b, s, d)
    box = run(query_runtime_kind, bvh, 100, False, a, b, s, d)
    np.testing.assert_array_equal(ray, ray_hits(lo, hi, np.float32(s), np.float32(d)))
    np.testing.assert_array_equal(box, ~((lo > 3.0).any(1) | (hi < 1.0).any(1)))


def test_groups_get_their_own_subtrees():
    lo, hi = boxes(120, seed=4)
    groups = np.random.default_rng(4).integers(0, 5, 120).astype(np.int32)
    bvh = wp.Bvh(wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3), groups=wp.array(groups, dtype=wp.int32))
    hits = wp.zeros((5, 120), dtype=int)
    wp.launch(query_groups, 5, inputs=[bvh.id, wp.vec3(-1.0), wp.vec3(10.0), hits])
    np.testing.assert_array_equal(hits.numpy(), (np.arange(5)[:, None] == groups[None, :]).astype(int))


@wp.kernel
def query_group_ids(bvh: wp.uint64, ids: wp.array(dtype=int), lower: wp.vec3, upper: wp.vec3,
                    hits: wp.array2d(dtype=int)):
    k = wp.tid()
    root = wp.bvh_get_group_root(bvh, ids[k])
    if root >= 0:
        q = wp.bvh_query_aabb(bvh, lower, upper, root)
        i = 0
        while wp.bvh_query_next(q, i):
            hits[k, i] += 1


def test_sparse_group_ids_up_to_int32_max_take_no_table_of_their_size():
    lo, hi = boxes(60, seed=6)
    big = np.iinfo(np.int32).max
    choices = np.array([7, 1000, big], np.int32)
    groups = choices[np.random.default_rng(6).integers(0, 3, 60)]
    bvh = wp.Bvh(wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3), groups=wp.array(groups, dtype=wp.int32))
    asked = np.array([7, 1000, big, 0, 8, -1], np.int32)  # (the last three have no boxes)
    hits = wp.zeros((6, 60), dtype=int)
    wp.launch(query_group_ids, 6, inputs=[bvh.id, wp.array(asked, dtype=int), wp.vec3(-1.0), wp.vec3(10.0), hits])
    np.testing.assert_array_equal(hits.numpy(), (asked[:, None] == groups[None, :]).astype(int))


def check_tree(tree, lo, hi, leaf_size):
    """Every primitive in one leaf of at most `leaf_size`, boxes nested, parents consistent,
    children numbered after their parents (refit walks the nodes backwards)."""
    assert sorted(tree.prims.tolist()) == list(range(len(lo)))
    ids, starts, ends = tree.leaves
    assert ((ends - starts) <= leaf_size).all()
    assert (ends - starts).sum() == len(lo)
    for i, s, e in zip(ids, starts, ends):
        p = tree.prims[s:e]
        assert (tree.lowers[i, :3] <= lo[p]).all() and (tree.uppers[i, :3] >= hi[p]).all()
    inner = np.nonzero(tree.children[:, 0] >= 0)[0]
    assert tree.parents[0] == -1 and len(inner) + len(ids) == len(tree.children)
    for side in (0, 1):
        child = tree.children[inner, side]
        assert (child > inner).all()
        assert (tree.parents[child] == inner).all()
        assert (tree.lowers[inner, :3] <= tree.lowers[child, :3]).all()
        assert (tree.uppers[inner, :3] >= tree.uppers[child, :3]).all()


def test_tree_invariants_and_header():
    lo, hi = boxes(500, seed=5)
    bvh = wp.Bvh(wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3), leaf_size=3)
    tree = bvh._tree
    check_tree(tree, lo, hi, 3)
    # the id is a header with Warp's host layout: five pointers, then max_depth, max_nodes, num_nodes
    words = (ctypes.c_int64 * 7).from_address(bvh.id)
    ints = (ctypes.c_int32 * 14).from_address(bvh.id)
    assert words[2] == tree.parents.ctypes.data
    assert ints[10] == tree.max_depth and ints[12] == tree.lowers.shape[0]


@pytest.fixture
def parallel_build(monkeypatch):
    """Small builds take the parallel path: a serial top, then subtrees on two threads."""
    monkeypatch.setattr(bvh_build, "PARALLEL_MIN", 64)
    monkeypatch.setattr(wp.config, "num_threads", 2)


@pytest.mark.parametrize("leaf_size", [1, 3])
@pytest.mark.parametrize("grouped", [False, True])
def test_parallel_build_gives_a_sound_tree(parallel_build, leaf_size, grouped):
    n = 3000
    lo, hi = boxes(n, seed=7, scale=20.0)
    groups = np.random.default_rng(7).integers(0, 4, n).astype(np.int32) * 9 if grouped else None
    args = {} if groups is None else {"groups": wp.array(groups, dtype=wp.int32)}
    lowers, uppers = wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3)
    bvh = wp.Bvh(lowers, uppers, leaf_size=leaf_size, **args)
    check_tree(bvh._tree, lo, hi, leaf_size)
    a, b = np.float32([5.0, 6.0, 4.0]), np.float32([9.0, 11.0, 8.0])
    expected = ~((lo > b).any(1) | (hi < a).any(1))
    assert expected.sum() > 20
    np.testing.assert_array_equal(run(query_aabb, bvh, n, wp.vec3(*a), wp.vec3(*b)), expected)
    if grouped:
        hits = wp.zeros((4, n), dtype=int)
        ids = wp.array(np.arange(4, dtype=np.int32) * 9, dtype=int)
        wp.launch(query_group_ids, 4, inputs=[bvh.id, ids, wp.vec3(-1.0), wp.vec3(100.0), hits])
        np.testing.assert_array_equal(hits.numpy(), (np.arange(4)[:, None] * 9 == groups[None, :]).astype(int))
    # refit (a backward walk over the node numbers) after every box moved
    lo2, hi2 = lo[::-1] + 1.0, hi[::-1] + 1.0
    lowers.assign(lo2)
    uppers.assign(hi2)
    bvh.refit()
    check_tree(bvh._tree, lo2, hi2, leaf_size)
    expected = ~((lo2 > b).any(1) | (hi2 < a).any(1))
    np.testing.assert_array_equal(run(query_aabb, bvh, n, wp.vec3(*a), wp.vec3(*b)), expected)


def test_sah_beats_median_on_clustered_boxes():
    rng = np.random.default_rng(6)
    centers = np.concatenate([rng.normal(0, 0.1, (500, 3)), rng.normal(10, 3.0, (50, 3))])
    lo = centers - 0.05
    hi = centers + 0.05

    def cost(tree):  # expected node visits for a random ray ~ total inner surface area
        e = tree.uppers[:, :3] - tree.lowers[:, :3]
        return (e[:, 0] * e[:, 1] + e[:, 1] * e[:, 2] + e[:, 0] * e[:, 2]).sum()

    assert cost(bvh_build.build(lo, hi, 1, sah=True)) < cost(bvh_build.build(lo, hi, 1, sah=False))


def test_errors():
    lo, hi = boxes(4)
    lowers, uppers = wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3)
    with pytest.raises(RuntimeError, match="same number"):
        wp.Bvh(lowers, wp.array(hi[:3], dtype=wp.vec3))
    with pytest.raises(RuntimeError, match="wp.vec3"):
        wp.Bvh(wp.array(lo, dtype=wp.vec3d), wp.array(hi, dtype=wp.vec3d))
    with pytest.raises(ValueError, match="leaf_size"):
        wp.Bvh(lowers, uppers, leaf_size=0)
    with pytest.raises(ValueError, match="Unknown BVH constructor"):
        wp.Bvh(lowers, uppers, constructor="octree")
    with pytest.raises(RuntimeError, match="Grouped BVHs"):
        wp.Bvh(lowers, uppers, constructor="cubql", groups=wp.zeros(4, dtype=wp.int32))
    with pytest.raises(RuntimeError, match="groups must have the same length"):
        wp.Bvh(lowers, uppers, groups=wp.zeros(3, dtype=wp.int32))


def test_empty_trees_find_nothing_and_stale_ids_raise():
    empty = wp.Bvh(wp.zeros(0, dtype=wp.vec3), wp.zeros(0, dtype=wp.vec3))
    assert run(query_sphere, empty, 1, wp.vec3(0.0), 100.0).sum() == 0
    lo, hi = boxes(10)
    bvh = wp.Bvh(wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3))
    stale = bvh.id
    del bvh
    hits = wp.zeros(10, dtype=int)
    with pytest.raises(AssertionError, match=r"bvh_query_sphere\(\): the BVH id is 0 or names a BVH that was deleted"):
        wp.launch(query_sphere, 1, inputs=[stale, wp.vec3(2.0), 100.0, hits])
    assert hits.numpy().sum() == 0
    unbuilt = wp.Bvh.__new__(wp.Bvh)
    unbuilt.__del__()
    with pytest.raises(RuntimeError, match="destroyed"):
        unbuilt.refit()


def test_depth_is_capped_for_the_query_stack():
    # geometrically spread boxes make SAH peel off one box per level: the cap turns the
    # node at depth 31 into a leaf of everything left, and queries still see every box
    x = np.exp(np.linspace(-70.0, 0.0, 300)).astype(np.float32)
    lo = np.zeros((300, 3), np.float32)
    hi = np.ones((300, 3), np.float32)
    lo[:, 0], hi[:, 0] = x, x * np.float32(1.001)
    bvh = wp.Bvh(wp.array(lo, dtype=wp.vec3), wp.array(hi, dtype=wp.vec3))
    assert bvh._tree.max_depth == bvh_build.MAX_DEPTH
    np.testing.assert_array_equal(run(query_aabb, bvh, 300, wp.vec3(-2.0, -1.0, -1.0), wp.vec3(2.0)), np.ones(300))
