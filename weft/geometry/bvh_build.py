"""Host-side BVH construction and refit, vectorised with numpy over whole tree levels.

A build works breadth first: every node of one level is split at once. Per node and axis
the primitive centroids fall into `_BINS` bins; the split between bins with the least
surface-area cost `area(L) * n(L) + area(R) * n(R)` wins (binned SAH), or, where every
centroid coincides (`"median"` constructor as well), the node is cut in half at the
median centroid of its widest axis. Nodes of at most `leaf_size` primitives become leaves.
A node at depth MAX_DEPTH (counted from its group's root in a grouped tree) becomes a leaf
whatever its size, as in Warp, so that a traversal that pushes both children of every inner
node never needs more than MAX_DEPTH + 1 stack slots.

With groups, a node holding primitives of more than one group is first cut between groups
(primitives are kept sorted by group), so each group's primitives form one subtree, whose
root is recorded: a query can start there (`bvh_get_group_root`).

Node layout (numbered breadth first, root 0): `lowers[i] = (x, y, z, left)`,
`uppers[i] = (x, y, z, right)` as float32 with the int32 bits of left/right in the fourth
slot. An inner node stores its children; a leaf stores `left = -(start + 1)`, `right = end`:
its primitives are `primitive_indices[start:end]`.
"""

from __future__ import annotations

import numpy as np

_BINS = 16
MAX_DEPTH = 31


class Tree:
    """The arrays of a built tree (numpy, owned here; the descriptor points at them)."""

    def __init__(self, lowers, uppers, children, parents, prims, levels, leaves, group_roots, max_depth):
        self.lowers = lowers          # (n, 4) float32
        self.uppers = uppers          # (n, 4) float32
        self.children = children      # (n, 2) int32 view of the fourth slots (left, right)
        self.parents = parents        # (n,) int32, -1 at the root
        self.prims = prims            # (items,) int32
        self.levels = levels          # node ids per depth, for refit
        self.leaves = leaves          # (leaf ids, starts, ends)
        self.group_roots = group_roots
        self.max_depth = max_depth


def _seg_reduce(ufunc, values, starts):
    return ufunc.reduceat(values, starts, axis=0)


def _area(lo, hi):
    e = np.maximum(hi - lo, 0.0)
    return e[..., 0] * e[..., 1] + e[..., 1] * e[..., 2] + e[..., 2] * e[..., 0]


def build(item_lo, item_hi, leaf_size=1, groups=None, sah=True) -> Tree:
    """Build a tree over boxes `item_lo`/`item_hi` ((n, 3) float arrays)."""
    n = item_lo.shape[0]
    lo64 = item_lo.astype(np.float64)
    hi64 = item_hi.astype(np.float64)
    cen = 0.5 * (lo64 + hi64)
    leaf_size = max(1, int(leaf_size))
    if groups is not None:
        perm = np.argsort(groups, kind="stable").astype(np.int64)
        gsorted = groups[perm]
    else:
        perm = np.arange(n, dtype=np.int64)
        gsorted = None
    cap = max(1, 2 * n - 1)
    lowers = np.zeros((cap, 4), np.float32)
    uppers = np.zeros((cap, 4), np.float32)
    children = np.zeros((cap, 2), np.int32)
    parents = np.full(cap, -1, np.int32)
    group_roots = {}
    levels, leaf_ids, leaf_starts, leaf_ends = [], [], [], []
    # the active level: node ids, [start, end) into perm, whether the node is the first of its group
    ids = np.zeros(1, np.int64)
    starts = np.zeros(1, np.int64)
    ends = np.full(1, n, np.int64)
    fresh = np.ones(1, bool)
    rel = np.zeros(1, np.int64)  # depth below the node's group root (below the root without groups)
    max_rel = 0
    count = 1
    while ids.size:
        levels.append(ids.astype(np.int32))
        sizes = ends - starts
        pos = perm[_ranges(starts, sizes)]
        offsets = np.r_[0, np.cumsum(sizes)[:-1]]
        box_lo = _seg_reduce(np.minimum, lo64[pos], offsets)
        box_hi = _seg_reduce(np.maximum, hi64[pos], offsets)
        lowers[ids, :3] = box_lo
        uppers[ids, :3] = box_hi
        if gsorted is not None:
            single = gsorted[starts] == gsorted[ends - 1]
            newly = single & fresh
            rel = np.where(newly, 0, rel)
            for i in np.nonzero(newly)[0]:
                group_roots[int(gsorted[starts[i]])] = int(ids[i])
            fresh = ~single
        else:
            single = np.ones(ids.size, bool)
        max_rel = max(max_rel, int(rel[single].max(initial=0)))
        leaf = ((sizes <= leaf_size) | (rel >= MAX_DEPTH)) & single
        if leaf.any():
            leaf_ids.append(ids[leaf])
            leaf_starts.append(starts[leaf])
            leaf_ends.append(ends[leaf])
        split = ~leaf
        if not split.any():
            break
        s_ids, s_start, s_end = ids[split], starts[split], ends[split]
        s_single = single[split]
        mid = np.empty(s_ids.size, np.int64)
        # cuts between groups
        grouped = ~s_single
        if grouped.any():
            st, en = s_start[grouped], s_end[grouped]
            gmid = gsorted[(st + en) // 2]
            cut = np.searchsorted(gsorted, gmid, "left")
            at_start = cut <= st
            cut[at_start] = np.searchsorted(gsorted, gsorted[st[at_start]], "right")
            mid[grouped] = cut
        plain = np.nonzero(s_single)[0]
        if plain.size:
            mid[plain] = _split_level(perm, cen, lo64, hi64, s_start[plain], s_end[plain],
                                      sah)
        # children
        k = s_ids.size
        left = count + 2 * np.arange(k)
        right = left + 1
        count += 2 * k
        children[s_ids, 0] = left
        children[s_ids, 1] = right
        parents[left] = s_ids
        parents[right] = s_ids
        ids = np.empty(2 * k, np.int64)
        ids[0::2], ids[1::2] = left, right
        starts = np.empty(2 * k, np.int64)
        starts[0::2], starts[1::2] = s_start, mid
        ends = np.empty(2 * k, np.int64)
        ends[0::2], ends[1::2] = mid, s_end
        if gsorted is not None:
            fresh = np.repeat(grouped, 2)
        rel = np.repeat(rel[split] + 1, 2)
    leaf_ids = np.concatenate(leaf_ids) if leaf_ids else np.zeros(0, np.int64)
    leaf_starts = np.concatenate(leaf_starts) if leaf_starts else np.zeros(0, np.int64)
    leaf_ends = np.concatenate(leaf_ends) if leaf_ends else np.zeros(0, np.int64)
    children[leaf_ids, 0] = -(leaf_starts + 1)
    children[leaf_ids, 1] = leaf_ends
    lowers = lowers[:count].copy()
    uppers = uppers[:count].copy()
    children = children[:count].copy()
    lowers[:, 3] = children[:, 0].view(np.float32)
    uppers[:, 3] = children[:, 1].view(np.float32)
    return Tree(lowers, uppers, children, parents[:count].copy(), perm.astype(np.int32), levels,
                (leaf_ids, leaf_starts, leaf_ends), group_roots, max_rel)


def _split_level(perm, cen, lo, hi, starts, ends, sah):
    """Split positions for nodes [starts, ends) of perm (all of more than one primitive);
    reorders perm in place so that each node's left part comes first."""
    k = starts.size
    sizes = ends - starts
    seg = np.repeat(np.arange(k), sizes)
    pos = _ranges(starts, sizes)
    prim = perm[pos]
    c = cen[prim]
    cmin = np.minimum.reduceat(c, np.r_[0, np.cumsum(sizes)[:-1]], axis=0)
    cmax = np.maximum.reduceat(c, np.r_[0, np.cumsum(sizes)[:-1]], axis=0)
    extent = cmax - cmin
    best_cost = np.full(k, np.inf)
    best_axis = np.zeros(k, np.int64)
    best_bin = np.zeros(k, np.int64)
    bins = np.zeros((prim.size, 3), np.int64)
    if sah:
        plo, phi = lo[prim], hi[prim]
        for a in range(3):
            ext = extent[:, a]
            scale = np.where(ext > 0, _BINS / np.where(ext > 0, ext, 1.0), 0.0)
            b = ((c[:, a] - cmin[seg, a]) * scale[seg]).astype(np.int64)
            np.clip(b, 0, _BINS - 1, out=b)
            bins[:, a] = b
            key = seg * _BINS + b
            cnt = np.bincount(key, minlength=k * _BINS).reshape(k, _BINS)
            blo = np.full((k * _BINS, 3), np.inf)
            bhi = np.full((k * _BINS, 3), -np.inf)
            for d in range(3):
                np.minimum.at(blo[:, d], key, plo[:, d])
                np.maximum.at(bhi[:, d], key, phi[:, d])
            blo = blo.reshape(k, _BINS, 3)
            bhi = bhi.reshape(k, _BINS, 3)
            l_lo = np.minimum.accumulate(blo, axis=1)[:, :-1]
            l_hi = np.maximum.accumulate(bhi, axis=1)[:, :-1]
            r_lo = np.minimum.accumulate(blo[:, ::-1], axis=1)[:, ::-1][:, 1:]
            r_hi = np.maximum.accumulate(bhi[:, ::-1], axis=1)[:, ::-1][:, 1:]
            l_n = np.cumsum(cnt, axis=1)[:, :-1]
            r_n = sizes[:, None] - l_n
            with np.errstate(invalid="ignore"):
                cost = np.where((l_n > 0) & (r_n > 0), _area(l_lo, l_hi) * l_n + _area(r_lo, r_hi) * r_n, np.inf)
            cost[ext <= 0] = np.inf
            j = np.argmin(cost, axis=1)
            cj = cost[np.arange(k), j]
            better = cj < best_cost
            best_cost[better] = cj[better]
            best_axis[better] = a
            best_bin[better] = j[better] + 1  # bins < best_bin go left
    use_sah = np.isfinite(best_cost)
    mid = starts + sizes // 2
    rows = np.arange(prim.size)
    sah_prim = use_sah[seg]
    new_pos = pos.copy()
    if use_sah.any():
        # SAH nodes: a stable partition, bins below the best split first
        left = sah_prim & (bins[rows, best_axis[seg]] < best_bin[seg])
        right = sah_prim & ~left
        offsets = np.r_[0, np.cumsum(sizes)[:-1]]
        left_before = np.cumsum(left) - left  # left primitives before each one, all nodes
        right_before = np.cumsum(right) - right
        left_n = np.bincount(seg, weights=left, minlength=k).astype(np.int64)
        seg_left0 = left_before[offsets]  # left primitives before each node's first
        seg_right0 = right_before[offsets]
        new_pos = np.where(left, starts[seg] + left_before - seg_left0[seg],
                           np.where(right, starts[seg] + left_n[seg] + right_before - seg_right0[seg], pos))
        mid[use_sah] = (starts + left_n)[use_sah]
    if not use_sah.all():
        # the others: halves at the median centroid of the widest axis
        axis = np.argmax(extent, axis=1)
        sub = np.nonzero(~sah_prim)[0]
        key = c[sub, axis[seg[sub]]]
        order = np.lexsort((pos[sub], key, seg[sub]))
        new_pos[sub] = pos[sub][np.argsort(order, kind="stable")]
    perm[new_pos] = prim
    return mid


def _ranges(starts, sizes):
    total = int(sizes.sum())
    out = np.ones(total, np.int64)
    out[0] = starts[0]
    if starts.size > 1:
        idx = np.cumsum(sizes)[:-1]
        out[idx] = starts[1:] - (starts[:-1] + sizes[:-1] - 1)
    return np.cumsum(out)


def refit(tree: Tree, item_lo, item_hi):
    """Recompute every node's box from new primitive boxes (same topology)."""
    leaf_ids, leaf_starts, _ = tree.leaves
    if leaf_ids.size:
        order = np.argsort(leaf_starts)
        ids, st = leaf_ids[order], leaf_starts[order]
        p_lo = item_lo[tree.prims]
        p_hi = item_hi[tree.prims]
        tree.lowers[ids, :3] = np.minimum.reduceat(p_lo, st, axis=0)
        tree.uppers[ids, :3] = np.maximum.reduceat(p_hi, st, axis=0)
    is_leaf = tree.children[:, 0] < 0
    for level in reversed(tree.levels):
        inner = level[~is_leaf[level]]
        if inner.size:
            left, right = tree.children[inner, 0], tree.children[inner, 1]
            tree.lowers[inner, :3] = np.minimum(tree.lowers[left, :3], tree.lowers[right, :3])
            tree.uppers[inner, :3] = np.maximum(tree.uppers[left, :3], tree.uppers[right, :3])
