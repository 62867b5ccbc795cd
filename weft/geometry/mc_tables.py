"""Marching-cubes case tables, derived from the cube's geometry (on first use: a fraction of a
second).

Conventions (Warp's): corner `c` sits at `CUBE_CORNER_OFFSETS[c]` and is bit `c` of a cell's
case code when its value is >= the threshold ("outside" for a signed distance field); edge
`e` joins the corners `EDGE_TO_CORNERS[e]`. The triangles of case `k` are
`TRI_LOCAL_INDICES[CASE_TO_TRI_RANGE[k]:CASE_TO_TRI_RANGE[k + 1]]`, three edge numbers each,
wound counter-clockwise seen from the outside corners.

How the tables are made: on each face of the cube the crossed edges are joined pairwise by
segments; a face whose diagonal corners agree (the ambiguous face) always keeps its outside
corners apart, a rule that depends only on the face's own four corners, so the two cells that
share a face cut it the same way and the surface is watertight. The segments of the six faces,
each directed so the outside corners lie on its left seen from outside the cube, chain into
closed loops; each loop is then split into triangles, with no inner side across a cube face (see
`_triangulate`), choosing the triangulation whose worst triangle has the largest smallest angle.
"""

from __future__ import annotations

import functools
import math

CUBE_CORNER_OFFSETS = (
    (0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0),
    (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1),
)

# bottom face (z=0) edges, top face (z=1) edges, then the vertical edges (corner c to c+4)
EDGE_TO_CORNERS = (
    (0, 1), (1, 2), (3, 2), (0, 3),
    (4, 5), (5, 6), (7, 6), (4, 7),
    (0, 4), (1, 5), (2, 6), (3, 7),
)


def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _faces():
    """The six faces, each as its four corners in counter-clockwise order seen from outside."""
    faces = []
    for axis in range(3):
        for side in (0, 1):
            corners = [c for c in range(8) if CUBE_CORNER_OFFSETS[c][axis] == side]
            normal = [0, 0, 0]
            normal[axis] = 1 if side else -1
            u = [0, 0, 0]
            u[(axis + 1) % 3] = 1
            v = _cross(normal, u)
            centre = [sum(CUBE_CORNER_OFFSETS[c][i] for c in corners) / 4.0 for i in range(3)]

            def angle(c, u=u, v=v, centre=centre):
                d = _sub(CUBE_CORNER_OFFSETS[c], centre)
                return math.atan2(_dot(d, v), _dot(d, u))

            faces.append(sorted(corners, key=angle))
    return faces


_FACES = _faces()
_EDGE_OF = {frozenset(pair): e for e, pair in enumerate(EDGE_TO_CORNERS)}


def _loops(case: int) -> list[list[int]]:
    """The closed loops of crossed edges of `case`, each ordered counter-clockwise seen from
    the outside corners."""
    outside = [(case >> c) & 1 for c in range(8)]
    following = {}
    for corners in _FACES:
        sides = [(corners[i], corners[(i + 1) % 4]) for i in range(4)]
        leaving = [i for i, (a, b) in enumerate(sides) if outside[a] and not outside[b]]
        entering = {i for i, (a, b) in enumerate(sides) if outside[b] and not outside[a]}
        for i in leaving:
            # walk clockwise (backwards) to the nearest side that enters the outside region:
            # the segment then cuts off the outside corner between them
            j = next((i - step) % 4 for step in range(1, 4) if (i - step) % 4 in entering)
            following[_EDGE_OF[frozenset(sides[i])]] = _EDGE_OF[frozenset(sides[j])]
    loops, seen = [], set()
    for start in sorted(following):
        if start in seen:
            continue
        loop, e = [], start
        while e not in seen:
            seen.add(e)
            loop.append(e)
            e = following[e]
        loops.append(loop)
    return loops


def _midpoint(e):
    a, b = EDGE_TO_CORNERS[e]
    pa, pb = CUBE_CORNER_OFFSETS[a], CUBE_CORNER_OFFSETS[b]
    return tuple(0.5 * (pa[i] + pb[i]) for i in range(3))


def _smallest_angle(p, q, r) -> float:
    worst = math.pi
    for a, b, c in ((p, q, r), (q, r, p), (r, p, q)):
        u, v = _sub(b, a), _sub(c, a)
        nu, nv = math.sqrt(_dot(u, u)), math.sqrt(_dot(v, v))
        worst = min(worst, math.acos(max(-1.0, min(1.0, _dot(u, v) / (nu * nv)))))
    return worst


def _triangulations(ring):
    """Every triangulation of the polygon `ring` (as lists of triangles in its winding)."""
    if len(ring) < 3:
        yield []
        return
    a, b = ring[0], ring[-1]
    for k in range(1, len(ring) - 1):  # the triangle on the side (a, b) has its third point at k
        for left in _triangulations(ring[:k + 1]):
            for right in _triangulations(ring[k:]):
                yield [*left, (a, ring[k], b), *right]


def _on_one_face(e0: int, e1: int) -> bool:
    corners = set(EDGE_TO_CORNERS[e0]) | set(EDGE_TO_CORNERS[e1])
    return any(corners <= set(face) for face in _FACES)


@functools.cache
def _triangulate(loop: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """The triangulation whose worst triangle (on the edge midpoints) has the largest smallest
    angle, among those with no inner side joining two points of one cube face: such a side
    would be shared with the neighbouring cell's own segment across that face, and the mesh
    would no longer be a manifold there."""
    n = len(loop)
    sides = {frozenset((loop[i], loop[(i + 1) % n])) for i in range(n)}
    best, best_quality = None, -1.0
    for tris in _triangulations(list(loop)):
        inner = {frozenset(p) for t in tris for p in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0]))} - sides
        if any(_on_one_face(*p) for p in inner):
            continue
        quality = min(_smallest_angle(*(_midpoint(e) for e in t)) for t in tris)
        if quality > best_quality + 1e-9:
            best, best_quality = tris, quality
    if best is None:
        raise AssertionError(f"marching cubes tables: no valid triangulation of the loop {loop}")
    return best


def _build():
    ranges, indices = [0], []
    for case in range(256):
        for loop in _loops(case):
            for tri in _triangulate(tuple(loop)):
                indices.extend(tri)
        ranges.append(len(indices))
    return tuple(ranges), tuple(indices)


_built = None


def __getattr__(name):
    """CASE_TO_TRI_RANGE and TRI_LOCAL_INDICES, built on first use (a fraction of a second)."""
    global _built
    if name in ("CASE_TO_TRI_RANGE", "TRI_LOCAL_INDICES"):
        if _built is None:
            _built = _build()
        return _built[0] if name == "CASE_TO_TRI_RANGE" else _built[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _edge_offsets():
    """Per edge: (dx, dy, dz, axis): the grid edge is the one along `axis` leaving node
    (cell + (dx, dy, dz))."""
    rows = []
    for a, b in EDGE_TO_CORNERS:
        pa, pb = CUBE_CORNER_OFFSETS[a], CUBE_CORNER_OFFSETS[b]
        low = tuple(min(pa[i], pb[i]) for i in range(3))
        axis = next(i for i in range(3) if pa[i] != pb[i])
        rows.append((*low, axis))
    return tuple(rows)


EDGE_OFFSETS = _edge_offsets()
