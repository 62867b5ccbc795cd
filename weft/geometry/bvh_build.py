"""Host side of BVH construction and refit (the work is done by the kernels of
bvh_kernels.py, which also describes the splits).

Node layout (the descriptor points at these arrays): `lowers[i] = (x, y, z, left)`,
`uppers[i] = (x, y, z, right)` as float32, with the int32 bits of left/right in the fourth
slot. An inner node stores its children (numbered after it); a leaf stores
`left = -(start + 1)`, `right = end`: its primitives are `primitive_indices[start:end]`.
A node at depth MAX_DEPTH below its group's root (the tree's root without groups) is a
leaf whatever its size, as in Warp, so a traversal pushing both children of every inner
node needs at most MAX_DEPTH + 1 stack slots.
"""

from __future__ import annotations

import numpy as np

MAX_DEPTH = 31


class Tree:
    """The arrays of a built tree (numpy, owned here; the descriptor points at them)."""

    def __init__(self, lowers, uppers, children, parents, prims, leaves, group_roots, max_depth):
        self.lowers = lowers          # (n, 4) float32
        self.uppers = uppers          # (n, 4) float32
        self.children = children      # (n, 2) int32 view of the fourth slots (left, right)
        self.parents = parents        # (n,) int32, -1 at the root
        self.prims = prims            # (items,) int32
        self.leaves = leaves          # (leaf ids, starts, ends)
        self.group_roots = group_roots
        self.max_depth = max_depth
        self.wide = None              # (inner nodes, 16) float32, see _pack_wide
        self.inner_nodes = None       # the node index of each row of `wide`
        self.inner_kids = None        # their children (rows, 2)
        self.pack_arrays = None       # weft arrays over inner_kids, lowers, uppers, wide (see _pack)
        self.refit_ranges = None      # node ranges refit walks backwards: the subtrees', then the top's


#: A build over at least this many primitives splits its top levels on one thread and
#: hands the subtrees below them to all threads.
PARALLEL_MIN = 8192
#: Subtrees handed to the threads per thread (more: better balance, a deeper serial top).
TASKS_PER_THREAD = 16
TASK_FIELDS = 8  # start, end, node, parent, rel, fresh, first new node, first work row


def build(item_lo, item_hi, leaf_size=1, groups=None, sah=True) -> Tree:
    """The tree over boxes `item_lo`/`item_hi` ((n, 3) float32 numpy arrays, n >= 1);
    `groups` (n non-negative ints) gives each group a subtree; `sah` False: median splits.
    Large builds split their top levels on one thread, then build the subtrees below them
    on all threads, each into its own range of node numbers (see _number_subtrees)."""
    from ..runtime.array import array, empty, full
    from ..runtime.threads import thread_count
    from ..types import int32, vec3f
    n = item_lo.shape[0]
    if groups is not None:  # (ids may be sparse, up to 2^31 - 1: the kernel sees them numbered densely)
        ids, dense = np.unique(np.asarray(groups, np.int64), return_inverse=True)
        g = np.ascontiguousarray(dense, np.int32)
        perm_np = np.argsort(g, kind="stable").astype(np.int32)
        roots = full(len(ids), -1, dtype=int32)
    else:
        g = np.zeros(1, np.int32)
        perm_np = np.arange(n, dtype=np.int32)
        roots = full(1, -1, dtype=int32)
    lo = array(np.ascontiguousarray(np.asarray(item_lo, np.float32)[perm_np]), dtype=vec3f)  # in perm's order
    hi = array(np.ascontiguousarray(np.asarray(item_hi, np.float32)[perm_np]), dtype=vec3f)
    cap = max(1, 2 * n - 1)
    threads = thread_count()
    hand_off = n // (TASKS_PER_THREAD * threads) if threads > 1 and n >= PARALLEL_MIN else 0
    b = _Build(lo, hi, array(g, dtype=int32), int(groups is not None), int(leaf_size), int(sah),
               array(perm_np, dtype=int32), empty((cap, 2), dtype=vec3f), empty((cap, 2), dtype=int32),
               full(cap, -1, dtype=int32), roots, empty((n + 2, 6), dtype=int32))
    top = np.array([[0, n, 0, -1, 0, 1, 1, 0]], np.int32)
    info, handed = b.run(top, hand_off)
    count, max_rel = int(info[0, 0]), int(info[0, 1])
    top_count, subtrees = count, np.zeros((0, 2), np.int64)  # (the node ranges refit walks)
    if len(handed):
        tasks, node_ends = _number_subtrees(handed, count)
        info, _ = b.run(tasks, 0)
        max_rel = max(max_rel, int(info[:, 1].max()))
        count, subtrees = _compact(b, count, tasks[:, 6], info[:, 0], node_ends)
    ch = b.children.numpy()[:count].copy()
    lowers = np.zeros((count, 4), np.float32)
    uppers = np.zeros((count, 4), np.float32)
    tree = Tree(lowers, uppers, ch, b.parents.numpy()[:count].copy(), b.perm.numpy().copy(), None, {}, max_rel)
    if groups is not None:
        tree.group_roots = {int(ids[i]): int(r) for i, r in enumerate(roots.numpy()) if r >= 0}
    is_leaf = ch[:, 0] < 0
    leaf_ids = np.nonzero(is_leaf)[0]
    tree.leaves = (leaf_ids, -ch[leaf_ids, 0].astype(np.int64) - 1, ch[leaf_ids, 1].astype(np.int64))
    tree.native = (b.boxes[:count], b.children[:count], b.perm)
    tree.refit_ranges = [array(subtrees.astype(np.int32), dtype=int32), array([[0, top_count]], dtype=int32)]
    _pack(tree)
    return tree


class _Build:
    """The arrays one build's launches of `build_tree` share."""

    def __init__(self, lo, hi, groups, grouped, leaf_size, sah, perm, boxes, children, parents, roots, work):
        self.lo, self.hi, self.groups, self.grouped = lo, hi, groups, grouped
        self.leaf_size, self.sah, self.perm = leaf_size, sah, perm
        self.boxes, self.children, self.parents, self.roots, self.work = boxes, children, parents, roots, work

    def run(self, tasks, hand_off):
        """Builds the subtrees `tasks` ((T, TASK_FIELDS) int32) in one launch; returns each
        task's (next node number, deepest rel, handed-off count) and the handed-off nodes."""
        from ..runtime.array import array, empty
        from ..runtime.launch import launch_internal
        from ..types import int32, vec3f
        from . import bvh_kernels as k
        t = len(tasks)
        n = self.perm.shape[0]
        handed = empty((n if hand_off else 1, 6), dtype=int32)
        info = empty((t, 3), dtype=int32)
        launch_internal(k.build_tree, t, inputs=[
            self.lo, self.hi, self.groups, self.grouped, self.leaf_size, self.sah, MAX_DEPTH, self.perm,
            self.boxes, self.children, self.parents, self.roots, array(tasks, dtype=int32), self.work,
            empty((3 * t, k.BINS), dtype=vec3f), empty((3 * t, k.BINS), dtype=vec3f),
            empty((3 * t, k.BINS), dtype=int32), empty((t, k.BINS), dtype=float), empty((t, k.BINS), dtype=int32),
            int(hand_off), handed, info])
        info = info.numpy()
        return info, handed.numpy()[:int(info[:, 2].sum())]  # (none without hand_off)


def _number_subtrees(handed, first):
    """Tasks for the subtrees handed off by the serial top: sorted by first primitive, each
    with its own node numbers after the top's (`first` on; m primitives need at most
    2 m - 2 below their root, which the top numbered) and its own rows of the work stack
    (the rows of its primitives: its stack holds disjoint non-empty ranges of them, so at
    most m rows). Also the end of each node range."""
    handed = handed[np.argsort(handed[:, 0], kind="stable")]
    sizes = (handed[:, 1] - handed[:, 0]).astype(np.int64)
    span = 2 * sizes - 2
    ends = first + np.cumsum(span)
    tasks = np.zeros((len(handed), TASK_FIELDS), np.int32)
    tasks[:, :6] = handed
    tasks[:, 6] = ends - span
    tasks[:, 7] = handed[:, 0]
    return tasks, ends


def _compact(b, top_count, firsts, used_ends, ends):
    """Closes the gaps between the subtrees' node ranges (a subtree with leaves of several
    primitives uses fewer than its range holds), keeping the nodes' order, so children stay
    numbered after their parents; returns the node count and each subtree's nodes below its
    root as (first, end) rows. (`firsts` are increasing: the tasks are sorted.)"""
    used = (used_ends - firsts).astype(np.int64)
    starts = top_count + np.concatenate([[0], np.cumsum(used)[:-1]])  # each range's first node, compacted
    subtrees = np.stack([starts, starts + used], 1)
    count = int(top_count + used.sum())
    if count == int(ends[-1]):
        return count, subtrees

    def renumbered(ids):  # (nodes of the top keep their numbers; a range's move down together)
        t = np.maximum(np.searchsorted(firsts, ids, side="right") - 1, 0)
        return np.where(ids < top_count, ids, ids - firsts[t] + starts[t])

    pieces = [slice(0, top_count)] + [slice(f, f + u) for f, u in zip(firsts.tolist(), used.tolist()) if u]
    boxes, children, parents = b.boxes.numpy(), b.children.numpy(), b.parents.numpy()
    ch = np.concatenate([children[p] for p in pieces])
    inner = ch[:, 0] >= 0
    ch[inner] = renumbered(ch[inner])
    par = np.concatenate([parents[p] for p in pieces])
    par[par >= 0] = renumbered(par[par >= 0])
    boxes[:count] = np.concatenate([boxes[p] for p in pieces])
    children[:count] = ch
    parents[:count] = par
    roots = b.roots.numpy()
    roots[roots >= 0] = renumbered(roots[roots >= 0])
    return count, subtrees


def _pack(tree):
    """Copies the node boxes (`tree.native`) into the node arrays queries read: `lowers`,
    `uppers` and `wide` (see _pack_wide); the first call also writes their topology."""
    from ..runtime.array import array
    from ..runtime.launch import launch_internal
    from ..types import float32, int32
    from . import bvh_kernels as k
    if tree.wide is None:
        tree.lowers[:, 3] = tree.children[:, 0].view(np.float32)
        tree.uppers[:, 3] = tree.children[:, 1].view(np.float32)
        _pack_wide(tree)
        tree.pack_arrays = [array(tree.inner_kids, dtype=int32)] + \
            [array(a, dtype=float32, copy=False) for a in (tree.lowers, tree.uppers, tree.wide)]
    boxes = tree.native[0]
    launch_internal(k.pack_boxes, boxes.shape[0], inputs=[boxes, *tree.pack_arrays])


def refit(tree: Tree, item_lo, item_hi):
    """Recompute the node boxes from new primitive boxes (same topology): weft arrays of
    vec3 or (n, 3) float32 numpy arrays."""
    from ..runtime.array import array
    from ..runtime.launch import launch_internal
    from ..types import vec3f
    from . import bvh_kernels as k
    if isinstance(item_lo, np.ndarray):
        item_lo = array(np.ascontiguousarray(item_lo, np.float32), dtype=vec3f)
        item_hi = array(np.ascontiguousarray(item_hi, np.float32), dtype=vec3f)
    boxes, children, perm = tree.native
    subtrees, top = tree.refit_ranges  # the subtrees built in parallel, then the nodes above them
    if subtrees.shape[0]:
        launch_internal(k.refit_tree, subtrees.shape[0], inputs=[item_lo, item_hi, perm, boxes, children, subtrees])
    launch_internal(k.refit_tree, 1, inputs=[item_lo, item_hi, perm, boxes, children, top])
    _pack(tree)


def aligned_empty(shape, dtype, align=64):
    """An uninitialised numpy array whose data starts on an `align`-byte boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    buf = np.empty(nbytes + align, np.uint8)
    offset = (-buf.ctypes.data) % align
    return buf[offset:offset + nbytes].view(dtype).reshape(shape)


def _pack_wide(tree):
    """Makes `tree.wide`: one 64-byte row per inner node (in node order, the root's first) with
    both children's boxes and references, so that a closest-point traversal tests the two
    children of a node with one cache line: float32 columns 0-5 the lower x, y, z of the
    (left, right) children pairwise (left x, right x, left y, ...), 6-11 their upper
    corners (both written by `pack_boxes`), then as int32 bits (12, 13) their references and
    (14, 15) their ends. A child's reference is its row if it is an inner node, or
    `-(start + 1)` with its end if it is a leaf (its primitives are positions start .. end - 1)."""
    ch = tree.children
    inner = ch[:, 0] >= 0
    rows = np.cumsum(inner, dtype=np.int64) - 1
    tree.inner_nodes = np.nonzero(inner)[0]
    tree.wide = aligned_empty((len(tree.inner_nodes), 16), np.float32)
    refs = np.where(inner, rows, ch[:, 0]).astype(np.int32)
    ends = np.where(inner, 0, ch[:, 1]).astype(np.int32)
    kids = np.ascontiguousarray(ch[tree.inner_nodes])
    ints = tree.wide.view(np.int32)
    ints[:, 12], ints[:, 13] = refs[kids[:, 0]], refs[kids[:, 1]]
    ints[:, 14], ints[:, 15] = ends[kids[:, 0]], ends[kids[:, 1]]
    tree.inner_kids = kids
