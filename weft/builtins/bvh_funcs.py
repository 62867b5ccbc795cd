"""BVH traversal in weft's kernel language (the descriptor of geometry/bvh.py).

Node i's box is `node_lowers[4 i : 4 i + 3]` .. `node_uppers[4 i : 4 i + 3]` (float32); the
fourth slots hold int32 bits: the children of an inner node, or `-(start + 1)` and `end`
of a leaf's run of `primitive_indices`. A query keeps the next node to visit, a stack of
nodes still to visit (a value inside the query, so that copies of a query and reverse-mode
replays see the same state), and the part of the current leaf's run not yet tested; every
primitive in a leaf is tested against its own box, so a query yields exactly the
primitives whose boxes pass its test. Node and primitive data are read with
`constant_load`: the geometry is a constant of differentiation, as in Warp.

Imported on first use: kernel-language code needs the frontend, which imports the builtins.
"""

from __future__ import annotations

import weft as wp

from ..geometry.bvh import (
    ALIVE,
    NUM_GROUPS,
    NUM_ITEMS,
    NUM_NODES,
    PTR_GROUP_ROOTS,
    PTR_ITEM_LOWERS,
    PTR_ITEM_UPPERS,
    PTR_NODE_LOWERS,
    PTR_NODE_UPPERS,
    PTR_PRIMS,
    PTR_WIDE,
    STATE,
    WORDS,
)
from .bvh import AABB, CAPSULE, RAY, SPHERE, STACK_SIZE, BvhQuery, constant_load
from .hash_grid_funcs import _load


@wp.func
def word(d: wp.uint64, k: int):
    return _load(wp.array(ptr=d, shape=WORDS, dtype=wp.int64), k)


@wp.func
def alive(d: wp.uint64):
    ok = False
    if d != wp.uint64(0):
        ok = word(d, STATE) == wp.int64(ALIVE)
    return ok


@wp.func
def require(d: wp.uint64):
    """Whether `d` is alive: the builtins check it at the call site (bvh.check_id) and
    the funcs read nothing from a dead id (the kernel goes on until the launch ends and
    raises)."""
    return alive(d)


@wp.func
def num_nodes(d: wp.uint64):
    return _load(wp.array(ptr=d, shape=2 * WORDS, dtype=wp.int32), 2 * NUM_NODES)


@wp.func
def node_box(d: wp.uint64, node: int):
    """(lower, upper, left, right) of a node."""
    lo = wp.uint64(word(d, PTR_NODE_LOWERS))
    hi = wp.uint64(word(d, PTR_NODE_UPPERS))
    k = 4 * node
    lower = wp.vec3(constant_load(lo, k, wp.float32), constant_load(lo, k + 1, wp.float32),
                    constant_load(lo, k + 2, wp.float32))
    upper = wp.vec3(constant_load(hi, k, wp.float32), constant_load(hi, k + 1, wp.float32),
                    constant_load(hi, k + 2, wp.float32))
    return lower, upper, constant_load(lo, k + 3, wp.int32), constant_load(hi, k + 3, wp.int32)


@wp.func
def vec3_at(words: wp.uint64, k: int, step: int):
    """The vec3 of float32s at positions k, k + step, k + 2 step of a float32 table."""
    return wp.vec3(constant_load(words, k, wp.float32), constant_load(words, k + step, wp.float32),
                   constant_load(words, k + 2 * step, wp.float32))


@wp.func
def wide_children(d: wp.uint64, row: int, p: wp.vec3):
    """(left distance, right distance, left reference, left end, right reference, right
    end) of the children of the inner node at `row` of the wide table (bvh_build._pack_wide),
    the distances being box_distance_sq of p to their boxes."""
    w = wp.uint64(word(d, PTR_WIDE))
    k = 16 * row
    llo = vec3_at(w, k, 2)  # (the two children's coordinates interleave)
    rlo = vec3_at(w, k + 1, 2)
    lhi = vec3_at(w, k + 6, 2)
    rhi = vec3_at(w, k + 7, 2)
    return (box_distance_sq(p, llo, lhi), box_distance_sq(p, rlo, rhi), constant_load(w, k + 12, wp.int32),
            constant_load(w, k + 14, wp.int32), constant_load(w, k + 13, wp.int32), constant_load(w, k + 15, wp.int32))


@wp.func
def prim_index(d: wp.uint64, k: int):
    n = int(word(d, NUM_ITEMS))
    return _load(wp.array(ptr=wp.uint64(word(d, PTR_PRIMS)), shape=n, dtype=wp.int32), k)


@wp.func
def item_box(d: wp.uint64, i: int):
    lo = constant_load(wp.uint64(word(d, PTR_ITEM_LOWERS)), i, wp.vec3)
    hi = constant_load(wp.uint64(word(d, PTR_ITEM_UPPERS)), i, wp.vec3)
    return lo, hi


@wp.func
def _slab(start: wp.vec3, dir: wp.vec3, lower: wp.vec3, upper: wp.vec3, t0: float, t1: float):
    """The part [t0, t1] of start + t dir that lies in the box (slabs; an axis the ray is
    parallel to needs the start inside that slab): (hit, t0, t1), empty when t0 > t1."""
    hit = True
    for i in range(3):
        if dir[i] != 0.0:
            inv = 1.0 / dir[i]
            a = (lower[i] - start[i]) * inv
            b = (upper[i] - start[i]) * inv
            t0 = wp.max(t0, wp.min(a, b))
            t1 = wp.min(t1, wp.max(a, b))
        elif start[i] < lower[i] or start[i] > upper[i]:
            hit = False
    return hit, t0, t1


@wp.func
def ray_box(start: wp.vec3, dir: wp.vec3, lower: wp.vec3, upper: wp.vec3, t_max: float):
    """Whether start + t dir meets the box for some t in [0, t_max] (the whole line's slab
    interval, then clipped)."""
    hit, t0, t1 = _slab(start, dir, lower, upper, float(-wp.inf), float(wp.inf))
    return hit and t1 >= 0.0 and t1 >= t0 and t0 <= t_max


@wp.func
def ray_box_query(start: wp.vec3, dir: wp.vec3, lower: wp.vec3, upper: wp.vec3, max_dist: float):
    """bvh_query_ray's box test, Warp's to the letter: slabs through the reciprocal direction
    (infinite for a zero component), entry t = the slabs' lower end, hit while t < max_dist. A
    ray parallel to an axis that lies exactly in a face plane of a box gets 0 * inf = NaN for
    that face, which min/max drop, and so misses the box, as in Warp."""
    rcp = wp.vec3(1.0 / dir[0], 1.0 / dir[1], 1.0 / dir[2])
    a = (lower[0] - start[0]) * rcp[0]
    b = (upper[0] - start[0]) * rcp[0]
    lmin = wp.min(a, b)
    lmax = wp.max(a, b)
    for i in range(1, 3):
        a = (lower[i] - start[i]) * rcp[i]
        b = (upper[i] - start[i]) * rcp[i]
        lmin = wp.max(wp.min(a, b), lmin)
        lmax = wp.min(wp.max(a, b), lmax)
    return lmax >= 0.0 and lmax >= lmin and not (lmin >= max_dist)


@wp.func
def segment_box(start: wp.vec3, dir: wp.vec3, lower: wp.vec3, upper: wp.vec3, t_max: float):
    """Whether start + t dir meets the box for some t in [0, t_max]."""
    hit, t0, t1 = _slab(start, dir, lower, upper, 0.0, t_max)
    return hit and t0 <= t1


@wp.func
def box_distance_sq(p: wp.vec3, lower: wp.vec3, upper: wp.vec3):
    d = wp.max(wp.max(lower - p, p - upper), wp.vec3(0.0))
    return wp.dot(d, d)


@wp.func
def overlaps(q: BvhQuery, lower: wp.vec3, upper: wp.vec3, max_dist: float):
    hit = False
    if q.kind == AABB:
        hit = not (q.a[0] > upper[0] or q.a[1] > upper[1] or q.a[2] > upper[2]
                   or q.b[0] < lower[0] or q.b[1] < lower[1] or q.b[2] < lower[2])
    elif q.kind == RAY:
        hit = ray_box_query(q.a, q.b, lower, upper, max_dist)
    elif q.kind == SPHERE:  # (a negative radius is 0, as Warp documents)
        radius = wp.max(q.radius, 0.0)
        hit = box_distance_sq(q.a, lower, upper) <= radius * radius
    elif q.kind == CAPSULE:
        grow = wp.vec3(wp.max(q.radius, 0.0))
        hit = segment_box(q.a, q.b, lower - grow, upper + grow, max_dist)
    return hit


@wp.func
def start_node(d: wp.uint64, root: int):
    """The node a query starts at: `root` (a group's subtree) or the tree's root; -1 for
    an empty tree or a root out of range."""
    n = 0
    if d != wp.uint64(0):
        n = num_nodes(d)
    start = -1
    if n > 0:
        start = 0
        if root >= 0:
            start = root
            if root >= n:
                start = -1
    return start


@wp.func
def query(d: wp.uint64, kind: int, a: wp.vec3, b: wp.vec3, radius: float, root: int):
    ok = require(d)
    q = BvhQuery()
    q.id = d
    q.kind = kind
    q.a = a
    q.b = b
    q.radius = radius
    q.cur = 0
    q.end = 0
    q.bounds_nr = -1
    q.count = 0
    q.node = -1
    q.fresh = 0
    node = start_node(d, root)
    if ok and node >= 0:
        q.node = node
        q.fresh = 1
    return q


@wp.func
def query_next(q: BvhQuery, index: int, max_dist: float):
    """(found, the advanced query, the next primitive's index or `index` unchanged).
    Children are tested before they are pushed, and the traversal goes on with one that
    passed without touching the stack, so the stack holds only nodes still worth visiting
    (inner nodes whose both children pass push one)."""
    d = q.id
    found = False
    out = index
    searching = q.node >= 0 or q.count > 0 or q.cur < q.end
    while searching:
        if q.cur < q.end:
            prim = prim_index(d, q.cur)
            q.cur = q.cur + 1
            lo, hi = item_box(d, prim)
            if overlaps(q, lo, hi, max_dist):
                found = True
                out = prim
                searching = False
        elif q.node >= 0:
            lo, hi, left, right = node_box(d, q.node)
            if q.fresh != 0:
                q.fresh = 0
                if not overlaps(q, lo, hi, max_dist):
                    left = -1
                    right = -1
            if left < 0:
                q.cur = -left - 1
                q.end = right
                q.node = -1
            else:
                llo, lhi, _l0, _l1 = node_box(d, left)
                rlo, rhi, _r0, _r1 = node_box(d, right)
                go_left = overlaps(q, llo, lhi, max_dist)
                go_right = overlaps(q, rlo, rhi, max_dist)
                q.node = -1
                if go_right:  # (the right child first, then the left: Warp's order of items)
                    q.node = right
                    if go_left and q.count < STACK_SIZE:
                        q.stack[q.count] = left
                        q.count = q.count + 1
                elif go_left:
                    q.node = left
        elif q.count > 0:
            q.count = q.count - 1
            q.node = q.stack[q.count]
        else:
            searching = False
    if found:
        q.bounds_nr = out
    return found, q, out


@wp.func
def group_root(d: wp.uint64, group: int):
    """The root of a group's subtree (-1 if it has no primitives): a binary search of the
    (ids, roots) table of geometry/bvh.py's group_root_table."""
    root = -1
    if require(d):
        n = int(word(d, NUM_GROUPS))
        table = wp.array(ptr=wp.uint64(word(d, PTR_GROUP_ROOTS)), shape=2 * n, dtype=wp.int32)
        lo = 0
        hi = n
        while lo < hi:
            mid = (lo + hi) // 2
            if _load(table, mid) < group:
                lo = mid + 1
            else:
                hi = mid
        if lo < n and _load(table, lo) == group:
            root = _load(table, n + lo)
    return root
