"""Kernels of surface-nets extraction (geometry/surface_nets.py): classify the cells, place one
vertex per kept sheet of a cell (differentiable in the field), then stitch one face around each
crossed interior grid edge from the four cells that share it. Tables: sn_tables.py."""

from __future__ import annotations

import weft as wp


@wp.func
def _code(field: wp.array3d(dtype=wp.float32), i: int, j: int, k: int, threshold: float):
    # bit c: corner c (sn_tables.CORNER_OFFSETS, y = 0 face first) is below the threshold
    code = 0
    if field[i, j, k] < threshold:
        code = code | 1
    if field[i + 1, j, k] < threshold:
        code = code | 2
    if field[i + 1, j, k + 1] < threshold:
        code = code | 4
    if field[i, j, k + 1] < threshold:
        code = code | 8
    if field[i, j + 1, k] < threshold:
        code = code | 16
    if field[i + 1, j + 1, k] < threshold:
        code = code | 32
    if field[i + 1, j + 1, k + 1] < threshold:
        code = code | 64
    if field[i, j + 1, k + 1] < threshold:
        code = code | 128
    return code


@wp.func
def _corrected(field: wp.array3d(dtype=wp.float32), i: int, j: int, k: int, threshold: float,
               ambiguous: wp.array(dtype=wp.int32)):
    """The code whose table row the cell uses: its complement when the cell is a tube through
    a face (sn_tables.AMBIGUOUS_FACE) and so is its neighbour across that face."""
    code = _code(field, i, j, k, threshold)
    face = ambiguous[code]
    if face == 0:
        return code
    # faces 1..6: -z, +x, +z, -x, -y, +y; the neighbour sees the face as 3, 4, 1, 2, 6, 5
    di = wp.where(face == 2, 1, wp.where(face == 4, -1, 0))
    dj = wp.where(face == 6, 1, wp.where(face == 5, -1, 0))
    dk = wp.where(face == 3, 1, wp.where(face == 1, -1, 0))
    other = wp.where(face == 5, 6, wp.where(face == 6, 5, (face + 1) % 4 + 1))
    ni = i + di
    nj = j + dj
    nk = k + dk
    if ni < 0 or nj < 0 or nk < 0:
        return code
    if ni >= field.shape[0] - 1 or nj >= field.shape[1] - 1 or nk >= field.shape[2] - 1:
        return code
    if ambiguous[_code(field, ni, nj, nk, threshold)] == other:
        return 255 - code
    return code


@wp.func
def _below(mask: int, group: int):
    # how many kept sheets have a number below `group` (sheet g is bit g - 1 of mask)
    n = 0
    for g in range(1, 5):
        if g < group and (mask & (1 << (g - 1))) != 0:
            n += 1
    return n


@wp.kernel(enable_backward=False)
def classify(field: wp.array3d(dtype=wp.float32), threshold: wp.float32, table: wp.array(dtype=wp.int32),
             ambiguous: wp.array(dtype=wp.int32), edges: wp.array2d(dtype=wp.int32), signs: wp.array(dtype=wp.int32),
             codes: wp.array(dtype=wp.int32), masks: wp.array(dtype=wp.int32), vert_counts: wp.array(dtype=wp.int32),
             face_counts: wp.array(dtype=wp.int32)):
    """signs[cell]: the sign code; codes[cell]: the code whose table row the cell uses;
    masks[cell]: the sheets that have a crossed edge inside the grid (a sheet whose edges
    all lie on the grid's boundary is in no face, so it gets no vertex); vert_counts: their
    number; face_counts: the faces stitched around this cell's x, y and z edges at its
    lowest corner."""
    i, j, k = wp.tid()
    nx, ny, nz = field.shape[0], field.shape[1], field.shape[2]
    cell = (i * (ny - 1) + j) * (nz - 1) + k
    sign = _code(field, i, j, k, threshold)
    code = _corrected(field, i, j, k, threshold, ambiguous)
    mask = 0
    nv = 0
    nf = 0
    if table[code * 13] > 0:
        for e in range(12):
            g = table[code * 13 + 1 + e]
            if g > 0:
                x = i + edges[e, 0]
                y = j + edges[e, 1]
                z = k + edges[e, 2]
                axis = edges[e, 3]
                interior = True
                if axis != 0 and (x == 0 or x == nx - 1):
                    interior = False
                if axis != 1 and (y == 0 or y == ny - 1):
                    interior = False
                if axis != 2 and (z == 0 or z == nz - 1):
                    interior = False
                if interior:
                    mask = mask | (1 << (g - 1))
        for g in range(1, 5):
            if (mask & (1 << (g - 1))) != 0:
                nv += 1
        inside = sign & 1
        if inside != ((sign >> 1) & 1) and j > 0 and k > 0:
            nf += 1
        if inside != ((sign >> 4) & 1) and i > 0 and k > 0:
            nf += 1
        if inside != ((sign >> 3) & 1) and i > 0 and j > 0:
            nf += 1
    signs[cell] = sign
    codes[cell] = code
    masks[cell] = mask
    vert_counts[cell] = nv
    face_counts[cell] = nf


@wp.kernel
def place_vertices(field: wp.array3d(dtype=wp.float32), threshold: wp.float32, lower: wp.vec3, delta: wp.vec3,
                   table: wp.array(dtype=wp.int32), corners: wp.array2d(dtype=wp.int32),
                   edge_corners: wp.array2d(dtype=wp.int32), codes: wp.array(dtype=wp.int32),
                   masks: wp.array(dtype=wp.int32), vert_ends: wp.array(dtype=wp.int32),
                   verts: wp.array(dtype=wp.vec3)):
    """Each kept sheet's vertex: the mean of the points where the field, interpolated linearly
    along the sheet's edges, meets the threshold. Differentiable in `field`."""
    i, j, k = wp.tid()
    ny, nz = field.shape[1], field.shape[2]
    cell = (i * (ny - 1) + j) * (nz - 1) + k
    mask = masks[cell]
    code = codes[cell]
    slot = vert_ends[cell]
    for g in range(4, 0, -1):
        if (mask & (1 << (g - 1))) != 0:
            slot -= 1
            total = wp.vec3(0.0, 0.0, 0.0)
            n = 0.0
            for e in range(12):
                if table[code * 13 + 1 + e] == g:
                    a = edge_corners[e, 0]
                    b = edge_corners[e, 1]
                    pa = wp.vec3(float(corners[a, 0]), float(corners[a, 1]), float(corners[a, 2]))
                    pb = wp.vec3(float(corners[b, 0]), float(corners[b, 1]), float(corners[b, 2]))
                    va = field[i + corners[a, 0], j + corners[a, 1], k + corners[a, 2]]
                    vb = field[i + corners[b, 0], j + corners[b, 1], k + corners[b, 2]]
                    t = (threshold - va) / (vb - va)
                    total = total + pa + t * (pb - pa)
                    n = n + 1.0
            p = wp.vec3(float(i), float(j), float(k)) + total / n
            verts[slot] = lower + wp.cw_mul(p, delta)


@wp.func
def _vertex(c: int, column: int, table: wp.array(dtype=wp.int32), codes: wp.array(dtype=wp.int32),
            masks: wp.array(dtype=wp.int32), vert_ends: wp.array(dtype=wp.int32),
            vert_counts: wp.array(dtype=wp.int32)):
    # the vertex of cell c's sheet through its edge column - 1
    g = table[codes[c] * 13 + column]
    return vert_ends[c] - vert_counts[c] + _below(masks[c], g)


@wp.func
def _emit(indices: wp.array(dtype=wp.int32), at: int, per_face: int, a: int, b: int, c: int, d: int, flip: bool):
    # the quad (a, b, c, d), or (d, c, b, a) when flipped; triangles (0, 1, 2), (0, 2, 3) of it
    q0 = wp.where(flip, d, a)
    q1 = wp.where(flip, c, b)
    q2 = wp.where(flip, b, c)
    q3 = wp.where(flip, a, d)
    if per_face == 4:
        indices[at] = q0
        indices[at + 1] = q1
        indices[at + 2] = q2
        indices[at + 3] = q3
    else:
        indices[at] = q0
        indices[at + 1] = q1
        indices[at + 2] = q2
        indices[at + 3] = q0
        indices[at + 4] = q2
        indices[at + 5] = q3


@wp.kernel(enable_backward=False)
def stitch(ny: int, nz: int, table: wp.array(dtype=wp.int32), signs: wp.array(dtype=wp.int32),
           codes: wp.array(dtype=wp.int32),
           masks: wp.array(dtype=wp.int32), vert_ends: wp.array(dtype=wp.int32),
           vert_counts: wp.array(dtype=wp.int32), face_ends: wp.array(dtype=wp.int32),
           face_counts: wp.array(dtype=wp.int32), per_face: int, indices: wp.array(dtype=wp.int32)):
    """The faces around the crossed x, y, z edges at the cell's lowest corner, each joining
    the vertices of the four cells around the edge, wound counter-clockwise seen from the
    side where the field is above the threshold."""
    i, j, k = wp.tid()
    cy = ny - 1
    cz = nz - 1
    cell = (i * cy + j) * cz + k
    if face_counts[cell] == 0:
        return
    code = signs[cell]
    inside = code & 1
    at = per_face * (face_ends[cell] - face_counts[cell])
    if inside != ((code >> 1) & 1) and j > 0 and k > 0:
        _emit(indices, at, per_face, _vertex(cell, 1, table, codes, masks, vert_ends, vert_counts),
              _vertex(cell - cz, 5, table, codes, masks, vert_ends, vert_counts),
              _vertex(cell - cz - 1, 7, table, codes, masks, vert_ends, vert_counts),
              _vertex(cell - 1, 3, table, codes, masks, vert_ends, vert_counts), inside == 0)
        at += per_face
    if inside != ((code >> 4) & 1) and i > 0 and k > 0:
        _emit(indices, at, per_face, _vertex(cell, 9, table, codes, masks, vert_ends, vert_counts),
              _vertex(cell - 1, 12, table, codes, masks, vert_ends, vert_counts),
              _vertex(cell - cy * cz - 1, 11, table, codes, masks, vert_ends, vert_counts),
              _vertex(cell - cy * cz, 10, table, codes, masks, vert_ends, vert_counts), inside == 0)
        at += per_face
    if inside != ((code >> 3) & 1) and i > 0 and j > 0:
        _emit(indices, at, per_face, _vertex(cell, 4, table, codes, masks, vert_ends, vert_counts),
              _vertex(cell - cz, 8, table, codes, masks, vert_ends, vert_counts),
              _vertex(cell - cy * cz - cz, 6, table, codes, masks, vert_ends, vert_counts),
              _vertex(cell - cy * cz, 2, table, codes, masks, vert_ends, vert_counts), inside != 0)
