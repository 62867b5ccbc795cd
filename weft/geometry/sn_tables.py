"""Surface-nets tables (geometry/surface_nets.py), derived here from the cube's geometry.

Numbering (OpenVDB's, which Warp's surface nets uses): corner `c` sits at `CORNER_OFFSETS[c]`
(the y = 0 face, then the y = 1 face) and is bit `c` of a cell's sign code when its value is
below the threshold (inside); edge `e` joins `EDGE_TO_CORNERS[e]`; faces are numbered 1..6 as
-z, +x, +z, -x, -y, +y.

`EDGE_GROUP_TABLE[13 * code]` is the number of surface sheets (vertices) of a cell, and
`EDGE_GROUP_TABLE[13 * code + 1 + e]` the 1-based sheet of edge `e` (0: not crossed), sheets
numbered in the order of their lowest edge. A sheet is a loop of face segments: on each face
the crossed edges are joined pairwise; on a face whose four edges are crossed (diagonal
corners agree) the segments cut off the two outside corners, so the inside corners stay
connected across the face. The two cells sharing a face see the same signs there and cut it
the same way.

One vertex per sheet can still make a non-manifold mesh: when the four crossings of a shared
face belong to a single sheet in both cells (a tube through the face from either side), the
two vertices are joined by four faces. `AMBIGUOUS_FACE[code]` names that face (1..6) for the
36 codes that are such a tube on a face (each on one face only), 0 otherwise; a cell whose
neighbour across that face is a tube on the same face uses the row of its complement code
(which cuts the face the other way and is never a tube), as OpenVDB's mesher does.
"""

from __future__ import annotations

CORNER_OFFSETS = (
    (0, 0, 0), (1, 0, 0), (1, 0, 1), (0, 0, 1),
    (0, 1, 0), (1, 1, 0), (1, 1, 1), (0, 1, 1),
)

EDGE_TO_CORNERS = (
    (0, 1), (1, 2), (3, 2), (0, 3),
    (4, 5), (5, 6), (7, 6), (4, 7),
    (0, 4), (1, 5), (2, 6), (3, 7),
)

# (axis, side) of faces 1..6
_FACE_PLANES = ((2, 0), (0, 1), (2, 1), (0, 0), (1, 0), (1, 1))


def _face_corners(axis: int, side: int):
    """The face's four corners in cyclic order, starting at its lowest node."""
    on = [c for c, p in enumerate(CORNER_OFFSETS) if p[axis] == side]
    u, v = [a for a in range(3) if a != axis]
    by_uv = {(CORNER_OFFSETS[c][u], CORNER_OFFSETS[c][v]): c for c in on}
    return [by_uv[(0, 0)], by_uv[(1, 0)], by_uv[(1, 1)], by_uv[(0, 1)]]


def _edge_of(a: int, b: int) -> int:
    return next(e for e, pair in enumerate(EDGE_TO_CORNERS) if set(pair) == {a, b})


def _row(code: int):
    """(table row, the face the code is a tube on or 0)."""
    inside = [(code >> c) & 1 for c in range(8)]
    crossed = [inside[a] != inside[b] for a, b in EDGE_TO_CORNERS]
    parent = list(range(12))

    def find(e):
        while parent[e] != e:
            parent[e] = parent[parent[e]]
            e = parent[e]
        return e

    ambiguous = []
    for face, (axis, side) in enumerate(_FACE_PLANES, start=1):
        ring = _face_corners(axis, side)
        edges = [_edge_of(ring[i], ring[(i + 1) % 4]) for i in range(4)]  # edges[i] joins ring[i], ring[i+1]
        hit = [e for e in edges if crossed[e]]
        if len(hit) == 2:
            pairs = [hit]
        elif len(hit) == 4:
            ambiguous.append((face, edges))
            # cut off the outside corners: edges[i - 1] and edges[i] meet at ring[i]
            pairs = [(edges[i - 1], edges[i]) for i in range(4) if not inside[ring[i]]]
        else:
            pairs = []
        for a, b in pairs:
            parent[find(a)] = find(b)
    groups: dict[int, int] = {}
    row = [0] * 13
    for e in range(12):
        if crossed[e]:
            root = find(e)
            groups.setdefault(root, len(groups) + 1)
            row[1 + e] = groups[root]
    row[0] = len(groups)
    tubes = [face for face, edges in ambiguous if len({row[1 + e] for e in edges}) == 1]
    assert len(tubes) <= 1, (code, tubes)
    return row, tubes[0] if tubes else 0


def _build():
    table, faces = [], []
    for code in range(256):
        row, face = _row(code)
        table.extend(row)
        faces.append(face)
    return tuple(table), tuple(faces)


EDGE_GROUP_TABLE, AMBIGUOUS_FACE = _build()
