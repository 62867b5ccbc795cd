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


def build(item_lo, item_hi, leaf_size=1, groups=None, sah=True) -> Tree:
    """The tree over boxes `item_lo`/`item_hi` ((n, 3) float32 numpy arrays, n >= 1);
    `groups` (n non-negative ints) gives each group a subtree; `sah` False: median splits."""
    from ..runtime.array import array, empty, full
    from ..runtime.launch import launch
    from ..types import int32, vec3f
    from . import bvh_kernels as k
    n = item_lo.shape[0]
    lo = array(np.ascontiguousarray(item_lo, np.float32), dtype=vec3f)
    hi = array(np.ascontiguousarray(item_hi, np.float32), dtype=vec3f)
    if groups is not None:  # (ids may be sparse, up to 2^31 - 1: the kernel sees them numbered densely)
        ids, dense = np.unique(np.asarray(groups, np.int64), return_inverse=True)
        g = np.ascontiguousarray(dense, np.int32)
        perm_np = np.argsort(g, kind="stable").astype(np.int32)
        roots = full(len(ids), -1, dtype=int32)
    else:
        g = np.zeros(1, np.int32)
        perm_np = np.arange(n, dtype=np.int32)
        roots = full(1, -1, dtype=int32)
    perm = array(perm_np, dtype=int32)
    cap = max(1, 2 * n - 1)
    boxes = empty((cap, 2), dtype=vec3f)
    children = empty((cap, 2), dtype=int32)
    parents = full(cap, -1, dtype=int32)
    info = full(2, 0, dtype=int32)
    launch(k.build_tree, 1, inputs=[lo, hi, array(g, dtype=int32), int(groups is not None), int(leaf_size), int(sah),
                                    MAX_DEPTH, perm, boxes, children, parents, roots, empty((n + 2, 6), dtype=int32),
                                    empty((3, k.BINS), dtype=vec3f), empty((3, k.BINS), dtype=vec3f),
                                    empty((3, k.BINS), dtype=int32), empty(k.BINS, dtype=float),
                                    empty(k.BINS, dtype=int32), info])
    count, max_rel = (int(x) for x in info.numpy())
    ch = children.numpy()[:count].copy()
    lowers = np.zeros((count, 4), np.float32)
    uppers = np.zeros((count, 4), np.float32)
    tree = Tree(lowers, uppers, ch, parents.numpy()[:count].copy(), perm.numpy().copy(), None, {}, max_rel)
    if groups is not None:
        tree.group_roots = {int(ids[i]): int(r) for i, r in enumerate(roots.numpy()) if r >= 0}
    is_leaf = ch[:, 0] < 0
    ids = np.nonzero(is_leaf)[0]
    tree.leaves = (ids, -ch[ids, 0].astype(np.int64) - 1, ch[ids, 1].astype(np.int64))
    tree.native = (boxes[:count], children[:count], perm)
    _pack(tree, boxes.numpy()[:count])
    return tree


def _pack(tree, boxes):
    tree.lowers[:, :3] = boxes[:, 0]
    tree.uppers[:, :3] = boxes[:, 1]
    tree.lowers[:, 3] = tree.children[:, 0].view(np.float32)
    tree.uppers[:, 3] = tree.children[:, 1].view(np.float32)
    _pack_wide(tree, boxes)



def refit(tree: Tree, item_lo, item_hi):
    """Recompute the node boxes from new primitive boxes (same topology): weft arrays of
    vec3 or (n, 3) float32 numpy arrays."""
    from ..runtime.array import array
    from ..runtime.launch import launch
    from ..types import vec3f
    from . import bvh_kernels as k
    if isinstance(item_lo, np.ndarray):
        item_lo = array(np.ascontiguousarray(item_lo, np.float32), dtype=vec3f)
        item_hi = array(np.ascontiguousarray(item_hi, np.float32), dtype=vec3f)
    boxes, children, perm = tree.native
    launch(k.refit_tree, 1, inputs=[item_lo, item_hi, perm, boxes, children])
    _pack(tree, boxes.numpy())


def aligned_empty(shape, dtype, align=64):
    """An uninitialised numpy array whose data starts on an `align`-byte boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    buf = np.empty(nbytes + align, np.uint8)
    offset = (-buf.ctypes.data) % align
    return buf[offset:offset + nbytes].view(dtype).reshape(shape)


def _pack_wide(tree, boxes):
    """`tree.wide`: one 64-byte row per inner node (in node order, the root's first) with
    both children's boxes and references, so that a closest-point traversal tests the two
    children of a node with one cache line: float32 columns 0-5 the lower x, y, z of the
    (left, right) children pairwise (left x, right x, left y, ...), 6-11 their upper
    corners, then as int32 bits (12, 13) their references and (14, 15) their ends. A
    child's reference is its row if it is an inner node, or `-(start + 1)` with its end
    if it is a leaf (its primitives are positions start .. end - 1)."""
    ch = tree.children
    inner = ch[:, 0] >= 0
    if getattr(tree, "wide", None) is None:
        rows = np.cumsum(inner, dtype=np.int64) - 1
        tree.inner_nodes = np.nonzero(inner)[0]
        tree.wide = aligned_empty((len(tree.inner_nodes), 16), np.float32)
        refs = np.where(inner, rows, ch[:, 0]).astype(np.int32)
        ends = np.where(inner, 0, ch[:, 1]).astype(np.int32)
        kids = ch[tree.inner_nodes]
        ints = tree.wide.view(np.int32)
        ints[:, 12], ints[:, 13] = refs[kids[:, 0]], refs[kids[:, 1]]
        ints[:, 14], ints[:, 15] = ends[kids[:, 0]], ends[kids[:, 1]]
        tree.inner_kids = kids
    b = boxes[tree.inner_kids]  # (rows, child, lower/upper, xyz)
    tree.wide[:, :12] = b.transpose(0, 2, 3, 1).reshape(-1, 12)

