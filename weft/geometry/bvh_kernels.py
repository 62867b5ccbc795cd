"""BVH build and refit as weft kernels (single-threaded loops compiled to native code).

`build_tree` works through a stack of node ranges: each node gets the box of its
primitives and then becomes a leaf (at most `leaf_size` primitives, or at depth `max_depth`
below its group's root) or is split in two, its range of `perm` partitioned in place.
Splits: with groups, a node holding several groups is first cut between groups (`perm` is
sorted by group beforehand, and cuts keep it so); otherwise binned SAH over all three axes
(16 bins of the centroids' extent per axis; the least `area(L) n(L) + area(R) n(R)` wins),
or, for the median constructor, the bin boundary nearest the middle count on the widest
axis. A split that leaves a side empty falls back to halving the range. Children are
numbered after their parent, so `refit_tree` can walk the nodes backwards.

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
def _bin(x: float, lo: float, ext: float):
    b = int(float(BINS) * (x - lo) / ext)
    return wp.clamp(b, 0, BINS - 1)


@wp.func
def _centroid(lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3), p: int):
    return 0.5 * (_load(lo, p) + _load(hi, p))


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
               group_roots: wp.array(dtype=int), work: wp.array2d(dtype=int), bin_lo: wp.array2d(dtype=wp.vec3),
               bin_hi: wp.array2d(dtype=wp.vec3), bin_n: wp.array2d(dtype=int), r_area: wp.array(dtype=float),
               r_n: wp.array(dtype=int), info: wp.array(dtype=int)):
    n = perm.shape[0]
    work[0, 0] = 0
    work[0, 1] = n
    work[0, 2] = 0
    work[0, 3] = -1
    work[0, 4] = 0
    work[0, 5] = 1
    top = 1
    count = 1
    max_rel = 0
    while top > 0:
        top -= 1
        start = work[top, 0]
        end = work[top, 1]
        node = work[top, 2]
        rel = work[top, 4]
        fresh = work[top, 5]
        parents[node] = work[top, 3]
        p0 = perm[start]
        blo = lo[p0]
        bhi = hi[p0]
        clo = _centroid(lo, hi, p0)
        chi = clo
        for i in range(start + 1, end):
            p = _load(perm, i)
            blo = wp.min(blo, _load(lo, p))
            bhi = wp.max(bhi, _load(hi, p))
            c = _centroid(lo, hi, p)
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
            best_cost = float(wp.inf)
            best_axis = -1
            best_bin = 0
            widest = 0
            if chi[1] - clo[1] > chi[widest] - clo[widest]:
                widest = 1
            if chi[2] - clo[2] > chi[widest] - clo[widest]:
                widest = 2
            ext3 = chi - clo
            for a in range(3):
                for b in range(BINS):
                    bin_lo[a, b] = wp.vec3(wp.inf)
                    bin_hi[a, b] = wp.vec3(-wp.inf)
                    bin_n[a, b] = 0
            for i in range(start, end):  # one pass bins the centroids along all three axes
                p = _load(perm, i)
                plo = _load(lo, p)
                phi = _load(hi, p)
                c = 0.5 * (plo + phi)
                for a in range(3):
                    if ext3[a] > 0.0 and (a == widest or AXES == 3):
                        b = _bin(c[a], clo[a], ext3[a])
                        bin_lo[a, b] = wp.min(bin_lo[a, b], plo)
                        bin_hi[a, b] = wp.max(bin_hi[a, b], phi)
                        bin_n[a, b] = bin_n[a, b] + 1
            for a in range(3):
                ext = ext3[a]
                if ext > 0.0 and (a == widest or (AXES == 3 and sah != 0)):
                    # right side of the boundary before bin b: bins b .. BINS-1
                    rlo = wp.vec3(wp.inf)
                    rhi = wp.vec3(-wp.inf)
                    rn = 0
                    for k in range(BINS - 1):
                        b = BINS - 1 - k
                        rlo = wp.min(rlo, bin_lo[a, b])
                        rhi = wp.max(rhi, bin_hi[a, b])
                        rn = rn + bin_n[a, b]
                        r_area[b] = _area(rlo, rhi)
                        r_n[b] = rn
                    llo = wp.vec3(wp.inf)
                    lhi = wp.vec3(-wp.inf)
                    ln = 0
                    for b in range(1, BINS):
                        llo = wp.min(llo, bin_lo[a, b - 1])
                        lhi = wp.max(lhi, bin_hi[a, b - 1])
                        ln = ln + bin_n[a, b - 1]
                        if ln > 0 and r_n[b] > 0:
                            cost = 0.0
                            if sah != 0:
                                cost = _area(llo, lhi) * float(ln) + r_area[b] * float(r_n[b])
                            else:
                                cost = float(wp.abs(2 * ln - (end - start)))
                            if cost < best_cost:
                                best_cost = cost
                                best_axis = a
                                best_bin = b
            if best_axis >= 0:
                ext = chi[best_axis] - clo[best_axis]
                i = start
                j = end - 1
                while i <= j:
                    p = _load(perm, i)
                    if _bin(_centroid(lo, hi, p)[best_axis], clo[best_axis], ext) < best_bin:
                        i += 1
                    else:
                        perm[i] = perm[j]
                        perm[j] = p
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
        work[top, 0] = mid
        work[top, 1] = end
        work[top, 2] = right
        work[top, 3] = node
        work[top, 4] = rel + 1
        work[top, 5] = nf
        work[top + 1, 0] = start
        work[top + 1, 1] = mid
        work[top + 1, 2] = left
        work[top + 1, 3] = node
        work[top + 1, 4] = rel + 1
        work[top + 1, 5] = nf
        top += 2
    info[0] = count
    info[1] = max_rel


@wp.kernel(enable_backward=False)
def refit_tree(lo: wp.array(dtype=wp.vec3), hi: wp.array(dtype=wp.vec3), perm: wp.array(dtype=int),
               boxes: wp.array2d(dtype=wp.vec3), children: wp.array2d(dtype=int)):
    n = children.shape[0]
    for k in range(n):
        node = n - 1 - k  # children come after their parents
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
