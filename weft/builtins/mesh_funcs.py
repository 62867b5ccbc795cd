"""Mesh queries in weft's kernel language (the descriptor of geometry/mesh.py).

The traversals (closest and furthest point, closest ray hit) find a face only: the values
that carry gradients (barycentric coordinates, ray parameter) are then recomputed from that
face outside the loops, by the differentiable funcs `closest_bary` and `ray_triangle`, so
reverse mode differentiates them with respect to the query and the mesh points, as Warp's
adjoints do. Barycentric coordinates follow Warp: a face (i, j, k) at (u, v) is the point
`u p_i + v p_j + (1 - u - v) p_k`.

Imported on first use: kernel-language code needs the frontend, which imports the builtins.
"""

from __future__ import annotations

import weft as wp

from ..geometry.bvh import PTR_WIDE
from ..geometry.mesh import (
    AVG_EDGE,
    LEAF_TRI_WORDS,
    NUM_POINTS,
    NUM_TRIS,
    PTR_INDICES,
    PTR_LEAF_TRIS,
    PTR_POINTS,
    PTR_POINTS_GRAD,
    PTR_VELOCITIES,
    PTR_VELOCITIES_GRAD,
    PTR_WINDING,
    WINDING_WORDS,
)
from .array_ops import array_with_grad
from .bvh import SPHERE, STACK_SIZE, constant_load, prefetch, stack_new, stack_push, stack_read
from .bvh_funcs import (
    box_distance_sq,
    node_box,
    prim_index,
    query,
    query_next,
    ray_box,
    require,
    start_node,
    vec3_at,
    wide_children,
    word,
)
from .hash_grid_funcs import _load
from .mesh import MeshInfo, MeshQuery, MeshQueryPoint, MeshQueryRay
from .triangle_funcs import closest_bary, degenerate, face_normal, ray_triangle


# Mesh data -----------------------------------------------------------------------------------
@wp.func
def points_of(d: wp.uint64):
    return wp.array(ptr=wp.uint64(word(d, PTR_POINTS)), shape=int(word(d, NUM_POINTS)), dtype=wp.vec3)


@wp.func
def indices_of(d: wp.uint64):
    return wp.array(ptr=wp.uint64(word(d, PTR_INDICES)), shape=3 * int(word(d, NUM_TRIS)), dtype=wp.int32)


@wp.func
def point(d: wp.uint64, i: int):
    """Point i of the mesh (a constant of differentiation, as in Warp)."""
    return constant_load(wp.uint64(word(d, PTR_POINTS)), i, wp.vec3)


@wp.func
def tri_points(d: wp.uint64, face: int):
    """The corners of a face, without bounds checks (the traversals' faces are in range)."""
    idx = indices_of(d)
    return point(d, _load(idx, 3 * face)), point(d, _load(idx, 3 * face + 1)), point(d, _load(idx, 3 * face + 2))


@wp.func
def avg_edge(d: wp.uint64):
    return constant_load(d, 2 * AVG_EDGE, wp.float32)


# Traversals ---------------------------------------------------------------------------------
@wp.func
def push_children(stack: wp.uint64, count: int, left: int, right: int, dl: float, dr: float, best: float,
                  nearest: bool):
    """Push the children worth visiting (nearer than best, or further with nearest False),
    the more promising one last, so that it is popped first; returns the new count."""
    visit_l = dl > best
    visit_r = dr > best
    left_first = dl >= dr
    if nearest:
        visit_l = dl < best
        visit_r = dr < best
        left_first = dl <= dr
    first = left
    second = right
    visit_first = visit_l
    visit_second = visit_r
    if left_first:
        first = right
        second = left
        visit_first = visit_r
        visit_second = visit_l
    n = count
    if visit_first and n < STACK_SIZE:
        n = stack_push(stack, n, first)
    if visit_second and n < STACK_SIZE:
        n = stack_push(stack, n, second)
    return n


@wp.func
def leaf_triangle(data: wp.uint64, k: int):
    """(a, b, c, face) at position k of the leaf order (geometry/mesh_kernels.leaf_triangles;
    face < 0 for a face that point queries skip)."""
    w = LEAF_TRI_WORDS * k
    return vec3_at(data, w, 1), vec3_at(data, w + 3, 1), vec3_at(data, w + 6, 1), constant_load(data, w + 9, wp.int32)


@wp.func
def closest_face(d: wp.uint64, p: wp.vec3, max_dist: float):
    """The face closest to p strictly within max_dist (-1 if none). Nodes are visited
    nearest child first; a stack entry holds a node's reference, end and box distance
    (bvh_funcs.wide_children), so a popped node further than the best face so far is
    dropped without reading it, and an inner node's two children are tested from one row."""
    best = max_dist * max_dist
    face = -1
    stack = stack_new(3)
    count = 0
    root = start_node(d, -1)
    if root >= 0:
        lo, hi, left, right = node_box(d, root)
        dist = box_distance_sq(p, lo, hi)
        if dist < best:
            ref = 0
            end = 0
            if left < 0:
                ref = left
                end = right
            count = stack_push(stack, 0, ref, end, dist)
    tris = wp.uint64(word(d, PTR_LEAF_TRIS))
    while count > 0:
        count = count - 1
        if stack_read(stack, 3 * count + 2, wp.float32) < best:
            ref = stack_read(stack, 3 * count)
            if ref < 0:
                for k in range(-ref - 1, stack_read(stack, 3 * count + 1)):
                    a, b, c, f = leaf_triangle(tris, k)
                    if f >= 0:
                        w = closest_bary(p, a, b, c)
                        dd = wp.length_sq(p - (a * w[0] + b * w[1] + c * w[2]))
                        if dd < best:
                            best = dd
                            face = f
            else:
                dl, dr, lref, lend, rref, rend = wide_children(d, ref, p)
                prefetch(child_address(d, tris, lref))
                prefetch(child_address(d, tris, rref))
                count = push_nearest(stack, count, lref, lend, dl, rref, rend, dr, best)
    return face


@wp.func
def child_address(d: wp.uint64, tris: wp.uint64, ref: int):
    """Where the data of a child reference starts: its wide row, or its leaf's triangles."""
    a = wp.uint64(word(d, PTR_WIDE)) + wp.uint64(64 * ref)
    if ref < 0:
        a = tris + wp.uint64(4 * LEAF_TRI_WORDS * (-ref - 1))
    return a


@wp.func
def push_nearest(stack: wp.uint64, count: int, lref: int, lend: int, dl: float, rref: int, rend: int, dr: float,
                 best: float):
    """Push the children nearer than best, the nearer one last (the right one on a tie, as
    Warp's order), so that it is popped first; returns the new count."""
    n = count
    if dl < dr:
        if dr < best and n < STACK_SIZE:
            n = stack_push(stack, n, rref, rend, dr)
        if dl < best and n < STACK_SIZE:
            n = stack_push(stack, n, lref, lend, dl)
    else:
        if dl < best and n < STACK_SIZE:
            n = stack_push(stack, n, lref, lend, dl)
        if dr < best and n < STACK_SIZE:
            n = stack_push(stack, n, rref, rend, dr)
    return n


@wp.func
def box_far_sq(p: wp.vec3, lower: wp.vec3, upper: wp.vec3):
    e = wp.max(wp.abs(p - lower), wp.abs(upper - p))
    return wp.dot(e, e)


@wp.func
def furthest_face(d: wp.uint64, p: wp.vec3, min_dist: float):
    """The face with the point furthest from p, strictly beyond min_dist (-1 if none)."""
    best = min_dist * min_dist
    face = -1
    stack = stack_new()
    count = 0
    root = start_node(d, -1)
    if root >= 0:
        count = stack_push(stack, 0, root)
    while count > 0:
        count = count - 1
        node = stack_read(stack, count)
        lo, hi, left, right = node_box(d, node)
        if box_far_sq(p, lo, hi) > best:
            if left < 0:
                for k in range(-left - 1, right):
                    f = prim_index(d, k)
                    a, b, c = tri_points(d, f)
                    if not degenerate(a, b, c):
                        dd = wp.max(wp.max(wp.length_sq(p - a), wp.length_sq(p - b)), wp.length_sq(p - c))
                        if dd > best:
                            best = dd
                            face = f
            else:
                llo, lhi, _l0, _l1 = node_box(d, left)
                rlo, rhi, _r0, _r1 = node_box(d, right)
                count = push_children(stack, count, left, right, box_far_sq(p, llo, lhi),
                                             box_far_sq(p, rlo, rhi), best, False)
    return face


@wp.func
def ray_face(d: wp.uint64, start: wp.vec3, dir: wp.vec3, max_t: float, root: int, any_hit: bool):
    """The face of the first hit of the ray with 0 <= t < max_t (-1 if none); with any_hit,
    the first face found that is hit within max_t."""
    best = max_t
    face = -1
    stack = stack_new()
    count = 0
    node0 = start_node(d, root)
    if node0 >= 0:
        count = stack_push(stack, 0, node0)
    while count > 0:
        count = count - 1
        node = stack_read(stack, count)
        lo, hi, left, right = node_box(d, node)
        if ray_box(start, dir, lo, hi, best):
            if left < 0:
                for k in range(-left - 1, right):
                    f = prim_index(d, k)
                    a, b, c = tri_points(d, f)
                    hit, t, u, v, _det = ray_triangle(start, dir, a, b, c)
                    if hit and t >= 0.0 and t < best:
                        best = t
                        face = f
                        if any_hit:
                            count = 0
            elif count + 2 <= STACK_SIZE:
                count = stack_push(stack, stack_push(stack, count, right), left)
    return face


@wp.func
def count_hits(d: wp.uint64, start: wp.vec3, dir: wp.vec3, root: int):
    """How many faces the ray start + t dir, t >= 0, crosses."""
    n = 0
    stack = stack_new()
    count = 0
    node0 = start_node(d, root)
    if node0 >= 0:
        count = stack_push(stack, 0, node0)
    while count > 0:
        count = count - 1
        node = stack_read(stack, count)
        lo, hi, left, right = node_box(d, node)
        if ray_box(start, dir, lo, hi, wp.inf):
            if left < 0:
                for k in range(-left - 1, right):
                    a, b, c = tri_points(d, prim_index(d, k))
                    hit, t, u, v, _det = ray_triangle(start, dir, a, b, c)
                    if hit and t >= 0.0:
                        n = n + 1
            elif count + 2 <= STACK_SIZE:
                count = stack_push(stack, stack_push(stack, count, right), left)
    return n


# Signs ----------------------------------------------------------------------------------------
@wp.func
def ray_vote(d: wp.uint64, p: wp.vec3, dir: wp.vec3):
    """1 if the closest face the ray from p hits faces away from it (p is behind it)."""
    vote = 0
    f = ray_face(d, p, dir, wp.inf, -1, False)
    if f >= 0:
        a, b, c = tri_points(d, f)
        hit, t, u, v, det = ray_triangle(p, dir, a, b, c)
        if det < 0.0:
            vote = 1
    return vote


@wp.func
def sign_rays(d: wp.uint64, p: wp.vec3):
    votes = ray_vote(d, p, wp.vec3(1.0, 0.0, 0.0)) + ray_vote(d, p, wp.vec3(0.0, 1.0, 0.0))
    votes = votes + ray_vote(d, p, wp.vec3(0.0, 0.0, 1.0))
    s = 1.0
    if votes >= 2:
        s = -1.0
    return s


@wp.func
def sign_parity(d: wp.uint64, p: wp.vec3, n_sample: int, scale: float):
    """Majority vote of the crossing parities of n_sample rays along (1, 1, 1) perturbed by
    up to `scale` per axis, drawn as Warp draws them (seed 42, x then y then z), so that both
    cast the same rays."""
    state = wp.rand_init(42)
    inside = 0
    for _i in range(n_sample):
        dir = wp.vec3(0.0)
        while wp.length_sq(dir) < 1.0e-8:
            x = wp.randf(state, -scale, scale)
            y = wp.randf(state, -scale, scale)
            z = wp.randf(state, -scale, scale)
            dir = wp.vec3(1.0) + wp.vec3(x, y, z)
        if count_hits(d, p, dir, -1) % 2 == 1:
            inside = inside + 1
    s = 1.0
    if 2 * inside >= n_sample:
        s = -1.0
    return s


@wp.func
def solid_angle(p: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3):
    x = a - p
    y = b - p
    z = c - p
    lx = wp.length(x)
    ly = wp.length(y)
    lz = wp.length(z)
    num = wp.dot(x, wp.cross(y, z))
    den = lx * ly * lz + wp.dot(x, y) * lz + wp.dot(x, z) * ly + wp.dot(y, z) * lx
    return 2.0 * wp.atan2(num, den)


@wp.func
def winding_vec3(data: wp.uint64, k: int):
    return wp.vec3(constant_load(data, k, wp.float32), constant_load(data, k + 1, wp.float32),
                   constant_load(data, k + 2, wp.float32))


@wp.func
def node_solid_angle(data: wp.uint64, k: int, q: wp.vec3, dist: float):
    """The solid angle a far node's faces subtend, seen along q = c - p (their centroid
    less the point): the second-order expansion of geometry/mesh_kernels.py, from the
    node's row at word k."""
    inv2 = 1.0 / (dist * dist)
    inv3 = inv2 / dist
    inv5 = inv3 * inv2
    x, y, z = q[0], q[1], q[2]
    first = wp.dot(winding_vec3(data, k + 4), q) + constant_load(data, k + 7, wp.float32)
    m = winding_vec3(data, k + 8)  # (xx, yy, zz; then xy, xz, yz)
    mo = winding_vec3(data, k + 11)
    qmq = m[0] * x * x + m[1] * y * y + m[2] * z * z + 2.0 * (mo[0] * x * y + mo[1] * x * z + mo[2] * y * z)
    second = 3.0 * qmq + wp.dot(winding_vec3(data, k + 14), q)
    cubes = winding_vec3(data, k + 17)
    mixed_x = winding_vec3(data, k + 20)  # (xxy, xxz, yyz)
    mixed_y = winding_vec3(data, k + 23)  # (yyx, zzx, zzy)
    cubic = cubes[0] * x * x * x + cubes[1] * y * y * y + cubes[2] * z * z * z \
        + x * x * (mixed_x[0] * y + mixed_x[1] * z) + y * y * (mixed_x[2] * z + mixed_y[0] * x) \
        + z * z * (mixed_y[1] * x + mixed_y[2] * y) + constant_load(data, k + 26, wp.float32) * x * y * z
    return first * inv3 - second * inv5 + 7.5 * cubic * inv5 * inv2


@wp.func
def winding_number(d: wp.uint64, p: wp.vec3, accuracy: float):
    """The mesh's generalised winding number at p (the faces' solid angles / 4 pi): exact
    for the faces of nodes within accuracy * (node radius) of p, a second-order expansion
    of each farther node's (node_solid_angle)."""
    data = wp.uint64(word(d, PTR_WINDING))
    total = 0.0
    stack = stack_new()
    count = 0
    root = start_node(d, -1)
    if root >= 0:
        count = stack_push(stack, 0, root)
    while count > 0:
        count = count - 1
        node = stack_read(stack, count)
        k = WINDING_WORDS * node
        c = winding_vec3(data, k)
        r = constant_load(data, k + 3, wp.float32)
        dist = wp.length(c - p)
        if dist > accuracy * r:
            total = total + node_solid_angle(data, k, c - p, dist)
        else:
            lo, hi, left, right = node_box(d, node)
            if left < 0:
                for i in range(-left - 1, right):
                    a, b, cc = tri_points(d, prim_index(d, i))
                    total = total + solid_angle(p, a, b, cc)
            elif count + 2 <= STACK_SIZE:
                count = stack_push(stack, stack_push(stack, count, right), left)
    return total / (4.0 * wp.pi)


@wp.func
def corner_angle(q: wp.vec3, a: wp.vec3, b: wp.vec3, c: wp.vec3, tol: float):
    """The face's angle at the corner q sits on, or 1 where q is on no corner."""
    w = 1.0
    if wp.length_sq(q - a) <= tol * tol:
        w = wp.acos(wp.clamp(wp.dot(wp.normalize(b - a), wp.normalize(c - a)), -1.0, 1.0))
    elif wp.length_sq(q - b) <= tol * tol:
        w = wp.acos(wp.clamp(wp.dot(wp.normalize(a - b), wp.normalize(c - b)), -1.0, 1.0))
    elif wp.length_sq(q - c) <= tol * tol:
        w = wp.acos(wp.clamp(wp.dot(wp.normalize(a - c), wp.normalize(b - c)), -1.0, 1.0))
    return w


@wp.func
def sign_normal(d: wp.uint64, p: wp.vec3, face: int, epsilon: float):
    """Side of the angle-weighted pseudo-normal at the closest point q: the normals of every
    face whose closest point to p is within epsilon * (mean edge length) of q, each weighted
    by its angle at q where q is a corner."""
    a, b, c = tri_points(d, face)
    w = closest_bary(p, a, b, c)
    q = a * w[0] + b * w[1] + c * w[2]
    tol = epsilon * avg_edge(d)
    n = wp.vec3(0.0)
    qry = query(d, SPHERE, q, wp.vec3(0.0), tol, -1)
    f = 0
    searching = True
    while searching:
        found, qry, f = query_next(qry, f, wp.inf)
        if found:
            fa, fb, fc = tri_points(d, f)
            if not degenerate(fa, fb, fc):
                fw = closest_bary(p, fa, fb, fc)
                fq = fa * fw[0] + fb * fw[1] + fc * fw[2]
                if wp.length_sq(fq - q) <= tol * tol:
                    n = n + corner_angle(q, fa, fb, fc, tol) * face_normal(fa, fb, fc)
        else:
            searching = False
    if wp.length_sq(n) == 0.0:
        n = wp.cross(b - a, c - a)
    s = -1.0  # inside unless strictly on the normal's side: a point on the surface is inside (Warp)
    if wp.dot(p - q, n) > 0.0:
        s = 1.0
    return s


# The searches return faces and signs: no gradient flows through them (the differentiable
# values are recomputed from the face found). Empty custom adjoints keep reverse mode from
# replaying their loops with recorded state and walking them backwards.
@wp.func_grad(closest_face)
def _closest_face_grad(d: wp.uint64, p: wp.vec3, max_dist: float, adj_ret: int):
    pass


@wp.func_grad(furthest_face)
def _furthest_face_grad(d: wp.uint64, p: wp.vec3, min_dist: float, adj_ret: int):
    pass


@wp.func_grad(ray_face)
def _ray_face_grad(d: wp.uint64, start: wp.vec3, dir: wp.vec3, max_t: float, root: int, any_hit: bool,
                   adj_ret: int):
    pass


@wp.func_grad(count_hits)
def _count_hits_grad(d: wp.uint64, start: wp.vec3, dir: wp.vec3, root: int, adj_ret: int):
    pass


@wp.func_grad(sign_rays)
def _sign_rays_grad(d: wp.uint64, p: wp.vec3, adj_ret: float):
    pass


@wp.func_grad(sign_parity)
def _sign_parity_grad(d: wp.uint64, p: wp.vec3, n_sample: int, scale: float, adj_ret: float):
    pass


@wp.func_grad(winding_number)
def _winding_number_grad(d: wp.uint64, p: wp.vec3, accuracy: float, adj_ret: float):
    pass


@wp.func_grad(sign_normal)
def _sign_normal_grad(d: wp.uint64, p: wp.vec3, face: int, epsilon: float, adj_ret: float):
    pass


# Queries --------------------------------------------------------------------------------------
@wp.func
def query_point(d: wp.uint64, p: wp.vec3, max_dist: float):
    """The closest point, without a sign (each sign method is its own func below, so a
    kernel compiles only the method it calls)."""
    r = MeshQueryPoint()
    face = -1
    if require(d):
        face = closest_face(d, p, max_dist)
    if face >= 0:  # (no hit: every field stays zero, face too, as in Warp)
        r.face = face
        a, b, c = tri_points(d, face)
        w = closest_bary(p, a, b, c)
        r.result = True
        r.u = w[0]
        r.v = w[1]
    return r


@wp.func
def query_point_rays(d: wp.uint64, p: wp.vec3, max_dist: float):
    r = query_point(d, p, max_dist)
    if r.result:
        r.sign = sign_rays(d, p)
    return r


@wp.func
def query_point_normal(d: wp.uint64, p: wp.vec3, max_dist: float, epsilon: float):
    r = query_point(d, p, max_dist)
    if r.result:
        r.sign = sign_normal(d, p, r.face, epsilon)
    return r


@wp.func
def query_point_winding(d: wp.uint64, p: wp.vec3, max_dist: float, accuracy: float, threshold: float):
    """Without winding-number data (support_winding_number=False), Warp's fallback: the
    three-ray vote of mesh_query_point."""
    r = query_point(d, p, max_dist)
    if r.result:
        if word(d, PTR_WINDING) != wp.int64(0):
            r.sign = 1.0
            if winding_number(d, p, accuracy) > threshold:
                r.sign = -1.0
        else:
            r.sign = sign_rays(d, p)
    return r


@wp.func
def query_point_parity(d: wp.uint64, p: wp.vec3, max_dist: float, n_sample: int, scale: float):
    r = query_point(d, p, max_dist)
    if r.result:
        r.sign = sign_parity(d, p, n_sample, scale)
    return r


@wp.func
def query_furthest(d: wp.uint64, p: wp.vec3, min_dist: float):
    r = MeshQueryPoint()
    face = -1
    if require(d):
        face = furthest_face(d, p, min_dist)
    if face >= 0:  # (no hit: every field stays zero, face too, as in Warp)
        r.face = face
        a, b, c = tri_points(d, face)
        da = wp.length_sq(p - a)
        db = wp.length_sq(p - b)
        dc = wp.length_sq(p - c)
        r.result = True
        if da > db and da > dc:  # a tie goes to the later corner (Warp's rule)
            r.u = 1.0
        elif db > dc:
            r.v = 1.0
    return r


@wp.func
def query_ray(d: wp.uint64, start: wp.vec3, dir: wp.vec3, max_t: float, root: int):
    r = MeshQueryRay()
    face = -1
    if require(d):
        face = ray_face(d, start, dir, max_t, root, False)
    if face >= 0:  # (no hit: every field stays zero, face too, as in Warp)
        r.face = face
        a, b, c = tri_points(d, face)
        hit, t, u, v, det = ray_triangle(start, dir, a, b, c)
        r.result = True
        r.t = t
        r.u = u
        r.v = v
        r.normal = face_normal(a, b, c)
        r.sign = det
    return r


@wp.func
def ray_anyhit(d: wp.uint64, start: wp.vec3, dir: wp.vec3, max_t: float, root: int):
    hit = False
    if require(d):
        hit = ray_face(d, start, dir, max_t, root, True) >= 0
    return hit


@wp.func
def count_hits_checked(d: wp.uint64, start: wp.vec3, dir: wp.vec3, root: int):
    n = 0
    if require(d):
        n = count_hits(d, start, dir, root)
    return n


@wp.func
def mesh_query(d: wp.uint64, kind: int, a: wp.vec3, b: wp.vec3, radius: float):
    q = MeshQuery()
    q.bvh = query(d, kind, a, b, radius, -1)
    return q


@wp.func
def mesh_query_next(q: MeshQuery, index: int):
    """Advance a mesh AABB query (faces whose boxes overlap) or sphere query (faces within
    the radius)."""
    d = q.bvh.id
    out = index
    found = False
    searching = True
    b = q.bvh
    while searching:
        f = 0
        ok, b, f = query_next(b, f, wp.inf)
        if not ok:
            searching = False
        elif b.kind != SPHERE:
            found = True
            out = f
            searching = False
        else:
            ta, tb, tc = tri_points(d, f)
            w = closest_bary(b.a, ta, tb, tc)
            r = wp.max(b.radius, 0.0)  # (a negative radius is 0, as Warp documents)
            if wp.length_sq(b.a - (ta * w[0] + tb * w[1] + tc * w[2])) <= r * r:
                found = True
                out = f
                searching = False
    q.bvh = b
    return found, q, out


# Evaluation -----------------------------------------------------------------------------------
# The accessors read the points and velocities through arrays that differentiate into
# their gradients (mesh_get's), so a loss built on mesh_eval_position or mesh_get_point has
# its gradient with respect to the mesh's points (Warp's are zero). The queries keep their
# faces and coordinates constants of differentiation, as Warp's do.
@wp.func
def points_array(d: wp.uint64):
    return array_with_grad(wp.uint64(word(d, PTR_POINTS)), wp.uint64(word(d, PTR_POINTS_GRAD)),
                           int(word(d, NUM_POINTS)), wp.vec3)


@wp.func
def velocities_array(d: wp.uint64):
    """The velocities (no elements for a mesh without them)."""
    velocities = wp.uint64(word(d, PTR_VELOCITIES))
    n = 0
    if velocities != wp.uint64(0):
        n = int(word(d, NUM_POINTS))
    return array_with_grad(velocities, wp.uint64(word(d, PTR_VELOCITIES_GRAD)), n, wp.vec3)


@wp.func
def eval_position(d: wp.uint64, face: int, u: float, v: float):
    r = wp.vec3(0.0)
    if require(d):
        idx = indices_of(d)
        points = points_array(d)
        r = points[idx[3 * face]] * u + points[idx[3 * face + 1]] * v + points[idx[3 * face + 2]] * (1.0 - u - v)
    return r


@wp.func
def eval_velocity(d: wp.uint64, face: int, u: float, v: float):
    r = wp.vec3(0.0)
    if require(d):
        idx = indices_of(d)
        i, j, k = idx[3 * face], idx[3 * face + 1], idx[3 * face + 2]
        velocities = velocities_array(d)
        if velocities.shape[0] > 0:
            r = velocities[i] * u + velocities[j] * v + velocities[k] * (1.0 - u - v)
    return r


@wp.func
def eval_face_normal(d: wp.uint64, face: int):
    r = wp.vec3(0.0)
    if require(d):
        idx = indices_of(d)
        points = points_array(d)
        r = face_normal(points[idx[3 * face]], points[idx[3 * face + 1]], points[idx[3 * face + 2]])
    return r


@wp.func
def get_point(d: wp.uint64, index: int):
    r = wp.vec3(0.0)
    if require(d):
        r = points_array(d)[indices_of(d)[index]]
    return r


@wp.func
def get_velocity(d: wp.uint64, index: int):
    r = wp.vec3(0.0)
    if require(d):
        i = indices_of(d)[index]
        velocities = velocities_array(d)
        if velocities.shape[0] > 0:
            r = velocities[i]
    return r


@wp.func
def get_index(d: wp.uint64, index: int):
    r = -1
    if require(d):
        r = indices_of(d)[index]
    return r


@wp.func
def mesh_info(d: wp.uint64):
    """The mesh's arrays; its points and velocities differentiate into their gradients."""
    points, points_grad, velocities, velocities_grad, indices = wp.uint64(0), wp.uint64(0), wp.uint64(0), \
        wp.uint64(0), wp.uint64(0)
    n, n_velocities, n_indices = 0, 0, 0
    if require(d):
        points, points_grad = wp.uint64(word(d, PTR_POINTS)), wp.uint64(word(d, PTR_POINTS_GRAD))
        velocities, velocities_grad = wp.uint64(word(d, PTR_VELOCITIES)), wp.uint64(word(d, PTR_VELOCITIES_GRAD))
        indices = wp.uint64(word(d, PTR_INDICES))
        n = int(word(d, NUM_POINTS))
        n_indices = 3 * int(word(d, NUM_TRIS))
        if velocities != wp.uint64(0):
            n_velocities = n
    m = MeshInfo()
    m.points = array_with_grad(points, points_grad, n, wp.vec3)
    m.velocities = array_with_grad(velocities, velocities_grad, n_velocities, wp.vec3)
    m.indices = wp.array(ptr=indices, shape=n_indices, dtype=wp.int32)
    return m
