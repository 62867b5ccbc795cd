"""Bvh: a bounding volume hierarchy over boxes, that kernels query by id.

`Bvh(lowers, uppers)` builds a binary tree over the boxes (bvh_kernels.py: binned SAH, or
median splits). Kernels see it through `id`, the address of a descriptor whose first words
have the layout of Warp's host BVH header (node lowers, node uppers, parents, counts,
primitive indices, then max_depth, max_nodes and num_nodes as int32), followed by weft's
own words: the primitives' boxes, their count, the group roots, and the inner nodes'
rows of both children's boxes (bvh_build._pack_wide). builtins/bvh_funcs.py
reads it. The descriptor lives for the whole process: a deleted Bvh leaves a descriptor
with no nodes behind, so a kernel handed a stale id finds nothing instead of reading freed
memory.

Mesh (mesh.py) uses the same tree and descriptor, over its triangles' boxes.
"""

from __future__ import annotations

import enum

import numpy as np

from ..runtime import capture
from ..types import int32, vec3f
from . import bvh_build

# Descriptor words (int64 each); builtins/bvh_funcs.py reads them by these indices.
PTR_NODE_LOWERS, PTR_NODE_UPPERS, PTR_PARENTS, PTR_COUNTS, PTR_PRIMS = 0, 1, 2, 3, 4
DEPTH_AND_MAX_NODES, NUM_NODES = 5, 6  # int32 pairs: (max_depth, max_nodes), (num_nodes, 0)
PTR_ITEM_LOWERS, PTR_ITEM_UPPERS, NUM_ITEMS, PTR_GROUP_ROOTS, NUM_GROUPS = 7, 8, 9, 10, 11
STATE = 12  # ALIVE while the object lives; zero once it was deleted (queries then raise)
PTR_WIDE = 13  # the inner nodes' children's boxes, one 64-byte row per node (bvh_build._pack_wide)
WORDS = 14
ALIVE = 0x5745465447454F4D

_DESCRIPTORS: list[np.ndarray] = []  # never freed: an id stays readable for the process


class BvhConstructor(enum.IntEnum):
    SAH = 0
    MEDIAN = 1
    LBVH = 2
    CUBQL = 3

    @classmethod
    def from_str(cls, name):
        try:
            return cls[str(name).upper()]
        except KeyError:
            raise ValueError(f"Unknown BVH constructor {name!r}: expected 'sah', 'median', 'lbvh' or 'cubql'") from None


def is_cubql_available() -> bool:
    return False


def resolve_constructor(constructor, groups=None, winding=False):
    if constructor is None:
        constructor = BvhConstructor.SAH
    if not isinstance(constructor, BvhConstructor):
        constructor = BvhConstructor.from_str(constructor)
    if constructor == BvhConstructor.CUBQL:
        if groups is not None:
            raise RuntimeError("Grouped BVHs are not supported with constructor='cubql'")
        if winding:
            raise RuntimeError("Winding number support is not available with the cuBQL constructor")
        raise RuntimeError("The cuBQL BVH constructor is not available in weft")
    if constructor == BvhConstructor.LBVH:  # a GPU constructor: CPU trees use SAH (as Warp)
        constructor = BvhConstructor.SAH
    return constructor


def new_descriptor() -> np.ndarray:
    d = np.zeros(WORDS, np.int64)
    _DESCRIPTORS.append(d)
    return d


def publish(desc: np.ndarray, tree, item_lowers_ptr: int, item_uppers_ptr: int, num_items: int, groups_ptr: int,
            num_groups: int):
    """Point the descriptor at a built tree (or at nothing: tree None)."""
    desc[STATE] = ALIVE
    if tree is None:
        desc[:STATE] = 0
        desc[PTR_WIDE] = 0
        return
    desc[PTR_NODE_LOWERS] = tree.lowers.ctypes.data
    desc[PTR_NODE_UPPERS] = tree.uppers.ctypes.data
    desc[PTR_PARENTS] = tree.parents.ctypes.data
    desc[PTR_COUNTS] = 0
    desc[PTR_PRIMS] = tree.prims.ctypes.data
    pairs = desc.view(np.int32).reshape(-1, 2)
    pairs[DEPTH_AND_MAX_NODES] = (tree.max_depth, tree.lowers.shape[0])
    pairs[NUM_NODES] = (tree.lowers.shape[0], 0)
    desc[PTR_ITEM_LOWERS] = item_lowers_ptr
    desc[PTR_ITEM_UPPERS] = item_uppers_ptr
    desc[NUM_ITEMS] = num_items
    desc[PTR_GROUP_ROOTS] = groups_ptr
    desc[NUM_GROUPS] = num_groups
    desc[PTR_WIDE] = tree.wide.ctypes.data


def group_root_table(tree, groups_np):
    """int32 (2, n): the group ids that have primitives, ascending, and their subtrees' roots
    (bvh_funcs.group_root searches it: ids may be sparse, up to 2^31 - 1)."""
    if groups_np is None or not tree.group_roots:
        return None
    ids = sorted(tree.group_roots)
    return np.array([ids, [tree.group_roots[g] for g in ids]], np.int32)


def check_groups(groups):
    g = groups.numpy()
    if g.size and g.min() < 0:
        raise ValueError(f"group ids must be non-negative, got groups[{int(np.argmin(g))}] = {int(g.min())}")


def _check_boxes(lowers, uppers):
    if lowers is None or uppers is None:
        raise RuntimeError("Bvh needs lowers and uppers arrays of wp.vec3")
    if len(lowers) != len(uppers):
        raise RuntimeError("The same number of lower and upper bounds must be provided")
    if lowers.device != uppers.device:
        raise RuntimeError("Lower and upper bounds must live on the same device")
    for name, a in (("lowers", lowers), ("uppers", uppers)):
        if a.dtype is not vec3f or a.ndim != 1 or not a.is_contiguous:
            raise RuntimeError(f"{name} should be a contiguous array of type wp.vec3")


class Bvh:
    """A BVH over the boxes [lowers[i], uppers[i]] (arrays of wp.vec3). `refit()` after
    changing the boxes in place (same tree, new bounds); `rebuild()` for a new tree."""

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        self.id = 0
        self._desc = None
        return self

    def __init__(self, lowers, uppers, constructor=None, groups=None, leaf_size=1):
        _check_boxes(lowers, uppers)
        if groups is not None:
            if groups.dtype is not int32 or groups.ndim != 1 or not groups.is_contiguous:
                raise RuntimeError("groups should be a contiguous array of type wp.int32")
            if groups.device != lowers.device:
                raise RuntimeError("groups must live on the same device as lowers/uppers")
            if len(groups) != len(lowers):
                raise RuntimeError("groups must have the same length as lowers/uppers")
            check_groups(groups)
        constructor = resolve_constructor(constructor, groups)
        if int(leaf_size) < 1:
            raise ValueError(f"leaf_size must be greater than or equal to 1, current value: {leaf_size}")
        self.device = lowers.device
        self.lowers, self.uppers, self.groups = lowers, uppers, groups
        self._constructor = constructor
        self._leaf_size = int(leaf_size)
        self._desc = new_descriptor()
        self.id = int(self._desc.ctypes.data)
        capture.handles[self.id] = self
        self._build()

    def _build(self):
        lo = self.lowers.numpy().reshape(-1, 3)
        hi = self.uppers.numpy().reshape(-1, 3)
        g = None if self.groups is None else self.groups.numpy().astype(np.int64)
        if lo.shape[0] == 0:
            self._tree = None
            publish(self._desc, None, 0, 0, 0, 0, 0)
            return
        self._tree = bvh_build.build(lo, hi, self._leaf_size, g, self._constructor == BvhConstructor.SAH)
        self._group_roots = group_root_table(self._tree, g)
        table = self._group_roots
        publish(self._desc, self._tree, self.lowers.ptr, self.uppers.ptr, lo.shape[0],
                0 if table is None else table.ctypes.data, 0 if table is None else table.shape[1])

    def refit(self):
        """Recompute the node bounds from the current `lowers`/`uppers` (same topology)."""
        self._check_live("refit")
        work = lambda: self._tree is not None and bvh_build.refit(self._tree, self.lowers, self.uppers)  # noqa: E731
        if not capture.record(work, ("unsaveable", "wp.Bvh.refit()")):
            work()

    def rebuild(self, constructor=None):
        """Build a new tree from the current `lowers`/`uppers`."""
        self._check_live("rebuild")
        if constructor is not None:
            self._constructor = resolve_constructor(constructor, self.groups)
        work = self._build
        if not capture.record(work, ("unsaveable", "wp.Bvh.rebuild()")):
            work()

    def _check_live(self, what):
        if self._desc is None:
            raise RuntimeError(f"Bvh.{what}(): this BVH was not initialised or was destroyed")

    def __del__(self):
        desc = getattr(self, "_desc", None)
        if desc is None:
            return
        desc[:] = 0  # a stale id now names an empty tree
        self._desc = None
