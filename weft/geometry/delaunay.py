"""Triangle-mesh topology and parallel Delaunay edge flipping (Warp's `warp.geometry`
`tri_tri_adjacency`, `find_triangle_neighbor_edge_index`, `delaunay_edge_flip`).

Adjacency: the half-edges are counting-sorted into buckets by their lower vertex; each
half-edge then scans its own bucket for the other half-edge with the same upper vertex.
Every step is a kernel launch or a recorded array operation, so a graph capture replays it.

Flipping runs in passes. A pass finds every interior edge that fails the Delaunay test
(and whose quad is convex), and each such edge bids for the four triangle rows a flip
rewrites (its two triangles and the two outer neighbours whose links change) with an
`atomic_max` of a priority. An edge flips only if it won all four rows, so the flips of
one pass touch disjoint rows. The priority is the edge's index scrambled by a bijection
(multiplication by an odd constant modulo 2^31), so that winners are spread over the
mesh rather than running along its numbering, which would resolve one row per pass.
Passes repeat under `capture_while` until one flips nothing (or `max_passes`).

The geometric predicates compute in float64: the orientation of float32 points is then
exact, and the in-circle determinant is far less often wrong near cocircularity than in
float32.
"""

from __future__ import annotations

import math

import weft as wp

from ..runtime.algorithms import array_scan
from ..runtime.launch import launch_internal

_MODULE = "weft.geometry"  # (Warp's module: `wp.load_module(wp.geometry)` loads these kernels)


# Predicates ---------------------------------------------------------------------------

@wp.func(module=_MODULE)
def _orient64(a: wp.vec2, b: wp.vec2, c: wp.vec2) -> wp.float64:
    ax = wp.float64(a[0])
    ay = wp.float64(a[1])
    return (wp.float64(b[0]) - ax) * (wp.float64(c[1]) - ay) - (wp.float64(b[1]) - ay) * (wp.float64(c[0]) - ax)


@wp.func(module=_MODULE)
def signed_area(a: wp.vec2, b: wp.vec2, c: wp.vec2) -> float:
    """Signed area of triangle `abc`: positive when counterclockwise."""
    return wp.float32(_orient64(a, b, c) * wp.float64(0.5))


@wp.func(module=_MODULE)
def _in_circle64(a: wp.vec2, b: wp.vec2, c: wp.vec2, d: wp.vec2) -> wp.float64:
    """The in-circle determinant: for counterclockwise `abc`, > 0 when `d` is inside the
    circumcircle, 0 when the four points are cocircular, < 0 outside."""
    dx = wp.float64(d[0])
    dy = wp.float64(d[1])
    ax = wp.float64(a[0]) - dx
    ay = wp.float64(a[1]) - dy
    bx = wp.float64(b[0]) - dx
    by = wp.float64(b[1]) - dy
    cx = wp.float64(c[0]) - dx
    cy = wp.float64(c[1]) - dy
    la = ax * ax + ay * ay
    lb = bx * bx + by * by
    lc = cx * cx + cy * cy
    return la * (bx * cy - by * cx) + lb * (cx * ay - cy * ax) + lc * (ax * by - ay * bx)


@wp.func(module=_MODULE)
def in_circle(a: wp.vec2, b: wp.vec2, c: wp.vec2, d: wp.vec2) -> bool:
    """Whether `d` lies strictly inside the circumcircle of the counterclockwise triangle `abc`."""
    return _in_circle64(a, b, c, d) > wp.float64(0.0)


# Adjacency ----------------------------------------------------------------------------

@wp.func(module=_MODULE)
def find_triangle_neighbor_edge_index(triangle_neighbors: wp.array2d(dtype=wp.int32), triangle: wp.int32,
                                      neighbor: wp.int32) -> wp.int32:
    """The local edge `j` of `triangle` with `triangle_neighbors[triangle, j] == neighbor`, or -1."""
    for j in range(3):
        if triangle_neighbors[triangle, j] == neighbor:
            return wp.int32(j)
    return wp.int32(-1)


@wp.kernel(module=_MODULE)
def _max_vertex(tri: wp.array2d(dtype=wp.int32), out: wp.array(dtype=wp.int32)):
    t = wp.tid()
    wp.atomic_max(out, 0, wp.max(tri[t, 0], wp.max(tri[t, 1], tri[t, 2])))


@wp.func(module=_MODULE)
def _low_vertex(tri: wp.array2d(dtype=wp.int32), t: int, j: int, vertex_count: int) -> int:
    """The lower vertex of half-edge `j` of `t`, or -1 when an index lies outside [0, vertex_count)
    (such an edge is left out: never an access out of bounds)."""
    u = tri[t, (j + 1) % 3]
    v = tri[t, (j + 2) % 3]
    if wp.min(u, v) < 0 or wp.max(u, v) >= vertex_count:
        return -1
    return wp.min(u, v)


@wp.kernel(module=_MODULE)
def _count_low(tri: wp.array2d(dtype=wp.int32), vertex_count: int, counts: wp.array(dtype=wp.int32)):
    h = wp.tid()
    lo = _low_vertex(tri, h // 3, h % 3, vertex_count)
    if lo >= 0:
        wp.atomic_add(counts, lo, 1)


@wp.kernel(module=_MODULE)
def _bucket_low(tri: wp.array2d(dtype=wp.int32), vertex_count: int, starts: wp.array(dtype=wp.int32),
                fill: wp.array(dtype=wp.int32), bucket: wp.array(dtype=wp.int32)):
    h = wp.tid()
    lo = _low_vertex(tri, h // 3, h % 3, vertex_count)
    if lo >= 0:
        bucket[starts[lo] + wp.atomic_add(fill, lo, 1)] = h


@wp.kernel(module=_MODULE)
def _pair_half_edges(tri: wp.array2d(dtype=wp.int32), vertex_count: int, starts: wp.array(dtype=wp.int32),
                     counts: wp.array(dtype=wp.int32), bucket: wp.array(dtype=wp.int32),
                     neighbors: wp.array2d(dtype=wp.int32), edges: wp.array2d(dtype=wp.int32),
                     with_edges: wp.int32):
    h = wp.tid()
    t = h // 3
    j = h % 3
    lo = _low_vertex(tri, t, j, vertex_count)
    if lo < 0:
        return
    hi = wp.max(tri[t, (j + 1) % 3], tri[t, (j + 2) % 3])
    begin = starts[lo]
    for k in range(begin, begin + counts[lo]):
        g = bucket[k]
        if g != h:
            s = g // 3
            i = g % 3
            if wp.max(tri[s, (i + 1) % 3], tri[s, (i + 2) % 3]) == hi:
                neighbors[t, j] = s
                if with_edges != 0:
                    edges[t, j] = i
                return


def _check_indices(indices, what: str):
    if getattr(indices, "ndim", None) != 2 or indices.shape[1] != 3:
        shape = getattr(indices, "shape", None)
        raise ValueError(f"{what}: indices must be a (num_tris, 3) array of triangle vertex indices, got shape {shape}")
    if indices.dtype is not wp.int32:
        raise ValueError(f"{what}: indices must be an int32 array, got {indices.dtype!r}")


def _check_range(indices, vertex_count: int, what: str, bound: str):
    """Vertex indices outside [0, vertex_count) are a ValueError (checked on the host, except
    during a graph capture, where the kernels leave such edges out instead)."""
    if indices.device.is_capturing or indices.shape[0] == 0:
        return
    tri = indices.numpy()
    low, high = int(tri.min()), int(tri.max())
    if low < 0 or high >= vertex_count:
        raise ValueError(f"{what}: triangle vertex indices must lie in [0, {vertex_count}) ({bound}), "
                         f"got indices from {low} to {high}")


def tri_tri_adjacency(indices, vertex_count: int | None = None, return_neighbor_edge_indices: bool = True):
    """Triangle-triangle adjacency of an edge-manifold triangle mesh (boundaries allowed).

    `triangle_neighbors[t, j]` is the triangle across the edge of `t` opposite its local
    vertex `j` (the edge of local vertices `(j+1)%3` and `(j+2)%3`), or -1 on a boundary;
    `neighbor_edge_indices[t, j]` is that edge's local index in the neighbour.
    `vertex_count` defaults to one more than the largest index (a host read, so it must be
    given during a graph capture). Returns `(triangle_neighbors, neighbor_edge_indices)`,
    or only `triangle_neighbors` when `return_neighbor_edge_indices` is False."""
    _check_indices(indices, "tri_tri_adjacency")
    device = indices.device
    num_tris = indices.shape[0]
    neighbors = wp.empty((num_tris, 3), dtype=wp.int32, device=device)
    edges = wp.empty((num_tris, 3), dtype=wp.int32, device=device) if return_neighbor_edge_indices else neighbors
    neighbors.fill_(-1)
    edges.fill_(-1)
    if num_tris > 0:
        if vertex_count is None:
            if device.is_capturing:
                raise RuntimeError("tri_tri_adjacency: vertex_count must be given during a graph capture "
                                   "(inferring it reads the indices back to the host)")
            top = wp.full(1, -1, dtype=wp.int32, device=device)
            launch_internal(_max_vertex, dim=num_tris, inputs=[indices, top], device=device)
            vertex_count = int(top.numpy()[0]) + 1
        vertex_count = int(vertex_count)
        if vertex_count < 1:
            raise ValueError(f"tri_tri_adjacency: vertex_count must be positive, got {vertex_count}")
        _check_range(indices, vertex_count, "tri_tri_adjacency", "vertex_count")
        counts = wp.empty(vertex_count, dtype=wp.int32, device=device)
        starts = wp.empty(vertex_count, dtype=wp.int32, device=device)
        fill = wp.empty(vertex_count, dtype=wp.int32, device=device)
        bucket = wp.empty(3 * num_tris, dtype=wp.int32, device=device)
        counts.zero_()
        fill.zero_()
        launch_internal(_count_low, dim=3 * num_tris, inputs=[indices, vertex_count, counts], device=device)
        array_scan(counts, starts, inclusive=False)
        launch_internal(_bucket_low, dim=3 * num_tris, inputs=[indices, vertex_count, starts, fill, bucket],
                        device=device)
        launch_internal(_pair_half_edges, dim=3 * num_tris,
                        inputs=[indices, vertex_count, starts, counts, bucket, neighbors, edges,
                                int(return_neighbor_edge_indices)], device=device)
    return (neighbors, edges) if return_neighbor_edge_indices else neighbors


# Edge flipping ------------------------------------------------------------------------

@wp.func(module=_MODULE)
def _priority(t: wp.int32, j: wp.int32) -> wp.int32:
    """A nonzero priority, distinct for each edge (an odd multiplier is a bijection mod 2^31)."""
    key = wp.int64(t) * wp.int64(3) + wp.int64(j) + wp.int64(1)
    return wp.int32((key * wp.int64(0x2545F491)) & wp.int64(0x7FFFFFFF))


@wp.func(module=_MODULE)
def _should_flip(tri: wp.array2d(dtype=wp.int32), pos: wp.array(dtype=wp.vec2), ref: wp.array(dtype=wp.vec2),
                 has_ref: wp.int32, area_eps: float, ref_eps: float, t: wp.int32, j: wp.int32, n: wp.int32,
                 jn: wp.int32) -> bool:
    # t = (c, a, b) from slot j; n = (d, b, a) from slot jn; the flip makes (c, a, d), (d, b, c)
    c = tri[t, j]
    a = tri[t, (j + 1) % 3]
    b = tri[t, (j + 2) % 3]
    d = tri[n, jn]
    if tri[n, (jn + 1) % 3] != b or tri[n, (jn + 2) % 3] != a:
        return False  # (the two triangles disagree on orientation)
    if wp.min(wp.min(a, b), wp.min(c, d)) < 0 or wp.max(wp.max(a, b), wp.max(c, d)) >= pos.shape[0]:
        return False  # (indices past the positions: only reachable in a captured graph)
    pa = pos[a]
    pb = pos[b]
    pc = pos[c]
    pd = pos[d]
    eps = wp.float64(area_eps) * wp.float64(2.0)
    if _orient64(pc, pa, pd) <= eps or _orient64(pd, pb, pc) <= eps:
        return False  # the quad is not strictly convex: flipping would invert a triangle
    if _in_circle64(pc, pa, pb, pd) <= wp.float64(0.0):
        return False
    if has_ref != 0:
        reps = wp.float64(ref_eps) * wp.float64(2.0)
        if wp.abs(_orient64(ref[c], ref[a], ref[d])) <= reps:
            return False
        if wp.abs(_orient64(ref[d], ref[b], ref[c])) <= reps:
            return False
    return True


@wp.func(module=_MODULE)
def _bid(claim: wp.array(dtype=wp.int32), row: wp.int32, prio: wp.int32):
    if row >= 0:
        wp.atomic_max(claim, row, prio)


@wp.kernel(module=_MODULE)
def _bid_for_flips(tri: wp.array2d(dtype=wp.int32), nbr: wp.array2d(dtype=wp.int32), pos: wp.array(dtype=wp.vec2),
                   ref: wp.array(dtype=wp.vec2), has_ref: wp.int32, area_eps: float, ref_eps: float,
                   claim: wp.array(dtype=wp.int32)):
    t = wp.tid()
    for j in range(3):
        n = nbr[t, j]
        if n > t:  # (each interior edge once, from its lower triangle)
            jn = find_triangle_neighbor_edge_index(nbr, n, t)
            if jn >= 0 and _should_flip(tri, pos, ref, has_ref, area_eps, ref_eps, t, j, n, jn):
                prio = _priority(t, j)
                _bid(claim, t, prio)
                _bid(claim, n, prio)
                _bid(claim, nbr[t, (j + 1) % 3], prio)  # across b-c: will border n
                _bid(claim, nbr[n, (jn + 1) % 3], prio)  # across a-d: will border t


@wp.kernel(module=_MODULE)
def _flip_winners(tri: wp.array2d(dtype=wp.int32), nbr: wp.array2d(dtype=wp.int32),
                  claim: wp.array(dtype=wp.int32), flips: wp.array(dtype=wp.int32)):
    t = wp.tid()
    for j in range(3):
        prio = _priority(t, j)
        if claim[t] == prio:  # (t's row is ours: nothing else rewrites it this pass)
            n = nbr[t, j]
            if n > t and claim[n] == prio:
                jn = find_triangle_neighbor_edge_index(nbr, n, t)
                n_bc = nbr[t, (j + 1) % 3]
                n_ad = nbr[n, (jn + 1) % 3]
                won = jn >= 0
                if n_bc >= 0 and claim[n_bc] != prio:
                    won = False
                if n_ad >= 0 and claim[n_ad] != prio:
                    won = False
                if won:
                    # the outer links to re-point, found before any row changes
                    k_ad = -1
                    k_bc = -1
                    if n_ad >= 0:
                        k_ad = find_triangle_neighbor_edge_index(nbr, n_ad, n)
                    if n_bc >= 0:
                        k_bc = find_triangle_neighbor_edge_index(nbr, n_bc, t)
                    # t = (c, a, b) becomes (c, a, d) and n = (d, b, a) becomes (d, b, c), each
                    # in place (Warp's corner slots): only slots j + 2 and jn + 2 change vertex
                    c = tri[t, j]
                    d = tri[n, jn]
                    tri[t, (j + 2) % 3] = d
                    tri[n, (jn + 2) % 3] = c
                    nbr[t, j] = n_ad  # opposite c: edge a-d, n's before
                    nbr[t, (j + 1) % 3] = n  # opposite a: the new diagonal d-c
                    nbr[n, jn] = n_bc  # opposite d: edge b-c, t's before
                    nbr[n, (jn + 1) % 3] = t  # opposite b: the new diagonal c-d
                    if k_ad >= 0:
                        nbr[n_ad, k_ad] = t
                    if k_bc >= 0:
                        nbr[n_bc, k_bc] = n
                    wp.atomic_add(flips, 0, 1)
                    return


@wp.kernel(module=_MODULE)
def _end_pass(flips: wp.array(dtype=wp.int32), max_passes: wp.int32, total: wp.array(dtype=wp.int32),
              passes: wp.array(dtype=wp.int32), again: wp.array(dtype=wp.int32)):
    total[0] = total[0] + flips[0]
    passes[0] = passes[0] + 1
    if flips[0] > 0 and passes[0] < max_passes:
        again[0] = 1
    else:
        again[0] = 0


def _check_epsilon(value, name: str) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"delaunay_edge_flip: {name} must be a finite, non-negative number, got {value!r}") from None
    if not math.isfinite(value) or value < 0.0:
        raise ValueError(f"delaunay_edge_flip: {name} must be a finite, non-negative number, got {value!r}")
    return value


def delaunay_edge_flip(positions, indices, ref_positions=None, max_passes: int = 1000, area_epsilon: float = 0.0,
                       ref_area_epsilon: float = 1.0e-10):
    """Flip the non-Delaunay interior edges of a counterclockwise triangle mesh in place
    until none is left or `max_passes` passes have run; `positions` is not changed.

    A flip happens only where both new triangles have signed area above `area_epsilon`
    and, with `ref_positions`, neither is degenerate there (|area| above `ref_area_epsilon`).
    Returns a one-element int32 array on the indices' device: the number of flips (under a
    graph capture, read it after launching the graph)."""
    _check_indices(indices, "delaunay_edge_flip")
    device = indices.device
    if positions.device != device:
        raise ValueError("delaunay_edge_flip: positions and indices must be on the same device")
    if ref_positions is not None and ref_positions.device != device:
        raise ValueError("delaunay_edge_flip: ref_positions and indices must be on the same device")
    if isinstance(max_passes, bool) or int(max_passes) != max_passes or max_passes < 1:
        raise ValueError(f"delaunay_edge_flip: max_passes must be an integer of at least 1, got {max_passes!r}")
    area_epsilon = _check_epsilon(area_epsilon, "area_epsilon")
    ref_area_epsilon = _check_epsilon(ref_area_epsilon, "ref_area_epsilon")
    if ref_positions is not None and ref_positions.shape[0] != positions.shape[0]:
        raise ValueError(f"delaunay_edge_flip: ref_positions has {ref_positions.shape[0]} points, positions "
                         f"{positions.shape[0]}")

    _check_range(indices, positions.shape[0], "delaunay_edge_flip", "the number of positions")
    total = wp.empty(1, dtype=wp.int32, device=device)
    total.zero_()
    num_tris = indices.shape[0]
    if num_tris == 0:
        return total

    nbr = tri_tri_adjacency(indices, vertex_count=positions.shape[0], return_neighbor_edge_indices=False)
    has_ref = 1 if ref_positions is not None else 0
    ref = ref_positions if ref_positions is not None else positions
    claim = wp.empty(num_tris, dtype=wp.int32, device=device)
    flips = wp.empty(1, dtype=wp.int32, device=device)
    passes = wp.empty(1, dtype=wp.int32, device=device)
    again = wp.empty(1, dtype=wp.int32, device=device)
    passes.zero_()
    again.fill_(1)

    def one_pass():
        claim.zero_()
        flips.zero_()
        launch_internal(_bid_for_flips, dim=num_tris,
                        inputs=[indices, nbr, positions, ref, has_ref, area_epsilon, ref_area_epsilon, claim],
                        device=device)
        launch_internal(_flip_winners, dim=num_tris, inputs=[indices, nbr, claim, flips], device=device)
        launch_internal(_end_pass, dim=1, inputs=[flips, int(max_passes), total, passes, again], device=device)

    wp.capture_while(again, one_pass)
    return total
