"""Privatised scatter-adds at launch (the compiler's side: transforms/scatter.py).

A parallel launch of a kernel that only adds into some array (`ck.scatter_params`) runs one
chunk per thread; chunk 0 adds into the array itself and chunk c > 0 into a private zeroed
copy, all with plain adds (the context's `private_mask` tells the kernel which arrays are
private), and the copies are added into the array afterwards, in chunk order (so the sum
does not depend on timing), by a native loop that also zeroes them for the next launch
(native_pool_ir.private_add_function; numpy where an array is not contiguous). An array is
privatised only when that pays: it holds at most PRIVATE_ELEMENTS_PER_THREAD elements per
launched thread (zeroing and summing a copy costs about as much as a few plain adds per
element, a float atomic several times more), and no other array argument (nor, in a kernel
that reads them, any array's gradient) overlaps its memory (a copy would hide their reads
and writes of it). Otherwise its adds stay atomic.
"""

from __future__ import annotations

import ctypes
import math

import numpy as np

from ..types import ArrayType, Matrix, Scalar, Vector

PRIVATE_ELEMENTS_PER_THREAD = 4


def _element(t):
    """(numpy scalar dtype, component shape, bytes) of an array's element type `t`."""
    if isinstance(t, Vector):
        return t.dtype.np_dtype, (t.length,), t.dtype.size * t.length
    if isinstance(t, Matrix):
        return t.dtype.np_dtype, tuple(t.shape), t.dtype.size * t.num_components
    return t.np_dtype, (), t.size


def _span(desc, itemsize: int):
    """[first byte, last byte + 1) of an array descriptor's elements, or None when its
    strides are not all non-negative (never privatised, never compared)."""
    ndim = len(desc.shape)
    if any(desc.strides[d] < 0 for d in range(ndim)):
        return None
    if any(desc.shape[d] == 0 for d in range(ndim)):
        return (desc.data, desc.data)
    last = sum((desc.shape[d] - 1) * desc.strides[d] for d in range(ndim))
    return (desc.data, desc.data + last + itemsize)


def _overlaps(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def privatised(ck, args, args_ptr: int, total: int):
    """The private-copy launch of `ck` (a `PrivateLaunch`) for a parallel launch of `total`
    threads on the argument block `args` at `args_ptr`, or None when no parameter is worth
    privatising (see the module docstring). Remembered per block contents: a simulation loop
    launches the same kernel on the same arrays again."""
    if ck.private_copies is None:
        ck.private_copies = PrivateCopies(ck)
    memo = ck.private_copies.decisions
    key = (ctypes.string_at(args_ptr, ctypes.sizeof(ck.args_type)), total)
    found = memo.get(key, False)
    if found is False:
        if len(memo) > 4096:
            memo.clear()
        params = _privatised(ck, args, total)
        found = memo[key] = PrivateLaunch(ck.private_copies, params) if params else None
    return found


def _privatised(ck, args, total: int) -> list[int]:
    spans, own, picked = [], {}, []
    for k, t in enumerate(ck.param_types):
        if isinstance(t, (Scalar, Vector, Matrix)):
            continue
        if not isinstance(t, ArrayType) or t.fabric or t.indexed:
            return []  # (memory we cannot see the extent of)
        desc = getattr(args, ck.field_names[k])
        if not isinstance(t.dtype, (Scalar, Vector, Matrix)):
            return []
        if not desc.data:
            continue  # (a null array: no memory)
        span = _span(desc, _element(t.dtype)[2])
        if span is None:
            return []
        spans.append((k, span))
        own[k] = span
        if desc.grad and ck.reads_grad_pointers:
            spans.append((k, (desc.grad, desc.grad + span[1] - span[0])))
        if k in ck.scatter_params and math.prod(desc.shape) <= PRIVATE_ELEMENTS_PER_THREAD * total:
            picked.append(k)
    return [k for k in picked if not any(j != k and _overlaps(own[k], s) for j, s in spans)]


class PrivateCopies:
    """A compiled kernel's private copies of its scatter arrays, kept between launches
    (`ck.private_copies`), and its launches' decisions."""

    def __init__(self, ck):
        self.ck = ck
        self.copies: dict = {}  # (param, chunk, shape) -> numpy array, zero between launches
        self.decisions: dict = {}  # (argument block bytes, threads) -> PrivateLaunch or None
        self.views: dict = {}  # (param, descriptor bytes) -> numpy view of the array

    def view(self, k: int, desc) -> np.ndarray:
        view_key = (k, bytes(desc))
        dest = self.views.get(view_key)
        if dest is None:
            if len(self.views) > 4096:
                self.views.clear()
            dtype, components, itemsize = _element(self.ck.param_types[k].dtype)
            dest = self.views[view_key] = _numpy_view(desc, dtype, components, itemsize)
        return dest

    def copy(self, k: int, chunk: int, dest: np.ndarray) -> np.ndarray:
        key = (k, chunk, dest.shape)
        copy = self.copies.get(key)
        if copy is None:
            copy = self.copies[key] = np.zeros(dest.shape, dest.dtype)
        return copy


class PrivateLaunch:
    """One argument block's parallel launch with private copies of `params`: one chunk per
    thread, chunk c reading its own argument block (where the privatised arrays are chunk
    c's copies; chunk 0 adds into the arrays themselves), then the copies added into the
    arrays in chunk order and zeroed. The blocks are built on the first run (and again if
    the thread count changes)."""

    def __init__(self, owner: PrivateCopies, params: list[int]):
        self.owner, self.params = owner, params
        self.mask = sum(1 << k for k in params)
        self.threads = 0
        self.blocks = self.targets = self.job = None

    def _prepare(self, pool, args, args_ptr: int, threads: int):
        ck, owner = self.owner.ck, self.owner
        self.blocks = blocks = (ck.args_type * threads)()
        stride = ctypes.sizeof(ck.args_type)
        base = ctypes.addressof(blocks)
        for c in range(threads):
            ctypes.memmove(base + c * stride, args_ptr, stride)
        self.targets = []
        for k in self.params:
            desc = getattr(args, ck.field_names[k])
            dest = owner.view(k, desc)
            copies = []
            for c in range(1, threads):
                copy = owner.copy(k, c, dest)
                block_desc = getattr(blocks[c], ck.field_names[k])
                block_desc.data = copy.ctypes.data
                for d in range(len(desc.shape)):
                    block_desc.strides[d] = copy.strides[d]
                copies.append(copy)
            self.targets.append((dest, copies))
        self.threads, self.base, self.stride = threads, base, stride
        self.job = _NativeReduction(self.targets) if hasattr(pool, "add_private") else None

    def run(self, pool, args, ctx, total: int, threads: int, args_ptr: int, ctx_ptr: int):
        threads = max(1, min(threads, pool.size, total))
        if threads != self.threads:
            self._prepare(pool, args, args_ptr, threads)
        ctx.private_mask = self.mask
        try:
            pool.run_kernel(self.owner.ck, self.base, ctx_ptr, total, threads, args_stride=self.stride)
        finally:
            ctx.private_mask = 0
        job = self.job if hasattr(pool, "add_private") else None  # (the pool may have changed since)
        if job is not None:
            pool.add_private(job.address)
        for dest, copies in (self.targets if job is None else job.others):
            for copy in copies:
                np.add(dest, copy, out=dest)
                copy.fill(0)  # (while it is in cache: zero for the next launch)


# element kinds of native_pool_ir.private_add_function
_ADD_KINDS = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.int32): 2,
              np.dtype(np.uint32): 2, np.dtype(np.int64): 3, np.dtype(np.uint64): 3}


class _Segment(ctypes.Structure):
    _fields_ = [("count", ctypes.c_int64), ("kind", ctypes.c_int64), ("dest", ctypes.c_void_p),
                ("copies", ctypes.c_void_p)]


class _Job(ctypes.Structure):
    _fields_ = [("segments", ctypes.c_int32), ("copies", ctypes.c_int32), ("table", ctypes.c_void_p)]


class _NativeReduction:
    """The pool's reduction job (native_pool_ir.private_add_function) for a launch's (dest,
    copies) targets, each with a copy per chunk but the first: the contiguous arrays of the
    kinds it adds (float32/64, 32/64-bit integers, as numpy adds them); numpy adds the rest
    (`others`)."""

    def __init__(self, targets):
        native, self.others = [], []
        for t in targets:
            (native if t[0].dtype in _ADD_KINDS and t[0].flags.c_contiguous else self.others).append(t)
        self.segments = (_Segment * max(len(native), 1))()
        self.tables = []  # (kept alive: the job points at them)
        for k, (dest, copies) in enumerate(native):
            table = (ctypes.c_void_p * len(copies))(*(c.ctypes.data for c in copies))
            self.tables.append(table)
            self.segments[k] = _Segment(dest.size, _ADD_KINDS[dest.dtype], dest.ctypes.data,
                                        ctypes.addressof(table))
        copies = len(targets[0][1]) if targets else 0
        self.job = _Job(len(native), copies, ctypes.addressof(self.segments))
        self.address = ctypes.addressof(self.job)


def _numpy_view(desc, dtype: np.dtype, components: tuple, itemsize: int) -> np.ndarray:
    """The array a descriptor describes (elements of `itemsize` bytes: `components` values
    of `dtype`), as a numpy view of its memory."""
    shape, strides = tuple(desc.shape), tuple(desc.strides)
    inner = tuple(int(np.prod(components[d + 1:], dtype=np.int64)) * dtype.itemsize
                  for d in range(len(components)))
    span = _span(desc, itemsize)
    buf = (ctypes.c_char * max(span[1] - span[0], 1)).from_address(desc.data)
    return np.ndarray(shape + components, dtype, buffer=buf, strides=strides + inner)
