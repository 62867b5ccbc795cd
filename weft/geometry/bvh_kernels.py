"""BVH build and refit as weft kernels (loops compiled to native code).

`build_tree` works through a stack of node ranges: each node gets the box of its
primitives and then becomes a leaf (at most `leaf_size` primitives, or at depth `max_depth`
below its group's root) or is split in two, its range of `perm` partitioned in place.
Splits: with groups, a node holding several groups is first cut between groups (`perm` is
sorted by group beforehand, and cuts keep it so); otherwise binned SAH along the widest
axis of the centroids (16 bins; the least `area(L) n(L) + area(R) n(R)` wins; AXES = 3
bins all three), or, for the median constructor, the bin boundary nearest the middle
count. A pair of primitives splits one and one. A split that leaves a side empty falls
back to halving the range. Children are numbered after their parent, so `refit_tree` can
walk the nodes backwards. One launch builds several subtrees at once, one per thread
(bvh_build.build hands the subtrees below a serial top to all threads).

Imported on the first build: kernel-language code needs the frontend.
"""

from __future__ import annotations

import weft as wp

from ..builtins.hash_grid_funcs import _load  # an unchecked read: every index here is in range

BINS = 16
AXES = 1  # binned axes: the widest only (3: all three, a slower build)


@wp.func
def _area(lo: wp.vec3, hi: wp.vec3):
    e = hi - lo
    return e[0] * e[1] + e[1] * e[2] + e[2] * e[0]


@wp.func
def _bin(x: float, lo: float, scale: float):
    """The bin of centroid coordinate x: `scale` = BINS / extent (one multiply per primitive)."""
    b = int((x - lo) * scale)
    return wp.clamp(b, 0, BINS - 1)


@wp.func
def _centroid(lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3), p: int):
    return 0.5 * (_load(lo, p) + _load(hi, p))


@wp.func
def _swap(perm: wp.array(dtype=int), lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3), i: int, j: int):
    """Swaps positions i and j of the permutation and of the boxes kept in its order."""
    p = _load(perm, i)
    perm[i] = perm[j]
    perm[j] = p
    b = _load(lo, i)
    lo[i] = lo[j]
    lo[j] = b
    b = _load(hi, i)
    hi[i] = hi[j]
    hi[j] = b


@wp.func
def _first_at_least(groups: wp.array(dtype=int), perm: wp.array(dtype=int), a: int, b: int, g: int, strict: bool):
    """The first position in [a, b) whose group is >= g (> g if strict), or b."""
    lo = a
    hi = b
    while lo < hi:
        mid = lo + (hi - lo) // 2
        x = groups[perm[mid]]
        if x < g or (strict and x == g):
            lo = mid + 1
        else:
            hi = mid
    return lo


@wp.kernel(enable_backward=False)
def build_tree(lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3), groups: wp.array(dtype=int), grouped: int,
               leaf_size: int, sah: int, max_depth: int, perm: wp.array(dtype=int),
               boxes: wp.array2d(dtype=wp.vec3), children: wp.array2d(dtype=int), parents: wp.array(dtype=int),
               group_roots: wp.array(dtype=int), tasks: wp.array2d(dtype=int), work: wp.array2d(dtype=int),
               bin_lo: wp.array2d(dtype=wp.vec3), bin_hi: wp.array2d(dtype=wp.vec3), bin_n: wp.array2d(dtype=int),
               r_area: wp.array2d(dtype=float), r_n: wp.array2d(dtype=int), hand_off: int,
               handed: wp.array2d(dtype=int), info: wp.array2d(dtype=int)):
    """Builds the subtree of task `t = tid()`: `tasks[t]` = (start, end, node, parent, rel,
    fresh, first new node number, first row of `work` it may use). `lo`/`hi` hold the
    primitives' boxes in the order of `perm` (position i: primitive perm[i]'s box), and every
    partition keeps them so, so that each pass over a node's range reads memory in order.
    With `hand_off` > 0 (the serial top of a build), a node of at most `hand_off` primitives
    is not built but listed in `handed` (its first six task fields) for a later launch.
    `info[t]` = (next node number, deepest rel, nodes handed off)."""
    t = wp.tid()
    w0 = tasks[t, 7]
    for f in range(6):
        work[w0, f] = tasks[t, f]
    top = 1
    count = tasks[t, 6]
    max_rel = 0
    n_handed = 0
    while top > 0:
        top -= 1
        row = w0 + top
        start = work[row, 0]
        end = work[row, 1]
        node = work[row, 2]
        rel = work[row, 4]
        fresh = work[row, 5]
        if hand_off > 0 and end - start <= hand_off:
            for f in range(6):
                handed[n_handed, f] = work[row, f]
            n_handed += 1
            continue
        parents[node] = work[row, 3]
        p0 = perm[start]
        blo = lo[start]
        bhi = hi[start]
        clo = _centroid(lo, hi, start)
        chi = clo
        for i in range(start + 1, end):
            blo = wp.min(blo, _load(lo, i))
            bhi = wp.max(bhi, _load(hi, i))
            c = _centroid(lo, hi, i)
            clo = wp.min(clo, c)
            chi = wp.max(chi, c)
        boxes[node, 0] = blo
        boxes[node, 1] = bhi
        single = True
        if grouped != 0:
            single = groups[p0] == groups[perm[end - 1]]
            if single and fresh != 0:
                group_roots[groups[p0]] = node
                rel = 0
        if single:
            max_rel = wp.max(max_rel, rel)
        if single and (end - start <= leaf_size or rel >= max_depth):
            children[node, 0] = -(start + 1)
            children[node, 1] = end
            continue
        mid = start
        if not single:
            g = groups[perm[(start + end) // 2]]
            mid = _first_at_least(groups, perm, start, end, g, False)
            if mid <= start:
                mid = _first_at_least(groups, perm, start, end, groups[p0], True)
        else:
            widest = 0
            if chi[1] - clo[1] > chi[widest] - clo[widest]:
                widest = 1
            if chi[2] - clo[2] > chi[widest] - clo[widest]:
                widest = 2
            if end - start == 2:  # a pair splits one and one: the lower centroid on the widest axis left
                if _centroid(lo, hi, start)[widest] > _centroid(lo, hi, start + 1)[widest]:
                    _swap(perm, lo, hi, start, start + 1)
                mid = start + 1
            else:
                best_cost = float(wp.inf)
                best_axis = -1
                best_bin = 0
                ext3 = chi - clo
                scale3 = wp.vec3(0.0)
                for a in range(3):
                    if ext3[a] > 0.0:
                        scale3[a] = float(BINS) / ext3[a]
                for a in range(3):
                    if not (a == widest or AXES == 3):
                        continue
                    for b in range(BINS):
                        bin_lo[3 * t + a, b] = wp.vec3(wp.inf)
                        bin_hi[3 * t + a, b] = wp.vec3(-wp.inf)
                        bin_n[3 * t + a, b] = 0
                for i in range(start, end):  # one pass bins the centroids along all three axes
                    plo = _load(lo, i)
                    phi = _load(hi, i)
                    c = 0.5 * (plo + phi)
                    for a in range(3):
                        if ext3[a] > 0.0 and (a == widest or AXES == 3):
                            b = _bin(c[a], clo[a], scale3[a])
                            bin_lo[3 * t + a, b] = wp.min(bin_lo[3 * t + a, b], plo)
                            bin_hi[3 * t + a, b] = wp.max(bin_hi[3 * t + a, b], phi)
                            bin_n[3 * t + a, b] = bin_n[3 * t + a, b] + 1
                for a in range(3):
                    ext = ext3[a]
                    if ext > 0.0 and (a == widest or (AXES == 3 and sah != 0)):
                        # right side of the boundary before bin b: bins b .. BINS-1
                        rlo = wp.vec3(wp.inf)
                        rhi = wp.vec3(-wp.inf)
                        rn = 0
                        for k in range(BINS - 1):
                            b = BINS - 1 - k
                            rlo = wp.min(rlo, bin_lo[3 * t + a, b])
                            rhi = wp.max(rhi, bin_hi[3 * t + a, b])
                            rn = rn + bin_n[3 * t + a, b]
                            r_area[t, b] = _area(rlo, rhi)
                            r_n[t, b] = rn
                        llo = wp.vec3(wp.inf)
                        lhi = wp.vec3(-wp.inf)
                        ln = 0
                        for b in range(1, BINS):
                            llo = wp.min(llo, bin_lo[3 * t + a, b - 1])
                            lhi = wp.max(lhi, bin_hi[3 * t + a, b - 1])
                            ln = ln + bin_n[3 * t + a, b - 1]
                            if ln > 0 and r_n[t, b] > 0:
                                cost = 0.0
                                if sah != 0:
                                    cost = _area(llo, lhi) * float(ln) + r_area[t, b] * float(r_n[t, b])
                                else:
                                    cost = float(wp.abs(2 * ln - (end - start)))
                                if cost < best_cost:
                                    best_cost = cost
                                    best_axis = a
                                    best_bin = b
                if best_axis >= 0:
                    i = start
                    j = end - 1
                    while i <= j:
                        if _bin(_centroid(lo, hi, i)[best_axis], clo[best_axis], scale3[best_axis]) < best_bin:
                            i += 1
                        else:
                            _swap(perm, lo, hi, i, j)
                            j -= 1
                    mid = i
        if mid <= start or mid >= end:
            mid = (start + end) // 2
        left = count
        right = count + 1
        count += 2
        children[node, 0] = left
        children[node, 1] = right
        nf = 0
        if not single:
            nf = 1
        work[row, 0] = mid
        work[row, 1] = end
        work[row, 2] = right
        work[row, 3] = node
        work[row, 4] = rel + 1
        work[row, 5] = nf
        work[row + 1, 0] = start
        work[row + 1, 1] = mid
        work[row + 1, 2] = left
        work[row + 1, 3] = node
        work[row + 1, 4] = rel + 1
        work[row + 1, 5] = nf
        top += 2
    info[t, 0] = count
    info[t, 1] = max_rel
    info[t, 2] = n_handed


@wp.kernel(enable_backward=False)
def refit_tree(lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3), perm: wp.array(dtype=int),
               boxes: wp.array2d(dtype=wp.vec3), children: wp.array2d(dtype=int), ranges: wp.array2d(dtype=int)):
    """Recomputes the boxes of nodes ranges[t, 0] .. ranges[t, 1] - 1, last first: children
    come after their parents, and a subtree's nodes are one range (its root is in the top's)."""
    first = ranges[wp.tid(), 0]
    end = ranges[wp.tid(), 1]
    for k in range(end - first):
        node = end - 1 - k
        a = children[node, 0]
        b = children[node, 1]
        if a < 0:
            p = perm[-a - 1]
            blo = lo[p]
            bhi = hi[p]
            for i in range(-a, b):
                blo = wp.min(blo, lo[perm[i]])
                bhi = wp.max(bhi, hi[perm[i]])
            boxes[node, 0] = blo
            boxes[node, 1] = bhi
        else:
            boxes[node, 0] = wp.min(boxes[a, 0], boxes[b, 0])
            boxes[node, 1] = wp.max(boxes[a, 1], boxes[b, 1])


@wp.kernel(enable_backward=False)
def pack_boxes(boxes: wp.array2d(dtype=wp.vec3), kids: wp.array2d(dtype=int), lowers: wp.array2d(dtype=float),
               uppers: wp.array2d(dtype=float), wide: wp.array2d(dtype=float)):
    """Copies node i's box into `lowers[i]`/`uppers[i]` (columns 0-2) and, for the i-th inner
    node, both its children's boxes into `wide[i]` (bvh_build._pack_wide's columns 0-11)."""
    i = wp.tid()
    lo = boxes[i, 0]
    hi = boxes[i, 1]
    for c in range(3):
        lowers[i, c] = lo[c]
        uppers[i, c] = hi[c]
    if i < kids.shape[0]:
        left = kids[i, 0]
        right = kids[i, 1]
        for side in range(2):
            for c in range(3):
                wide[i, 6 * side + 2 * c] = boxes[left, side][c]
                wide[i, 6 * side + 2 * c + 1] = boxes[right, side][c]
