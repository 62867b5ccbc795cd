"""Sparse arithmetic: copies and conversions, transposes, diagonals, `alpha * x + beta * y`,
scaling, matrix-matrix and matrix-vector products."""

from __future__ import annotations

import numpy as np

from .. import types as _t
from ..runtime.array import array
from ..runtime.array_create import clone
from ..runtime.launch import launch
from . import kernels as K
from .assemble import Plan, assemble, default_topology, iarray, stage
from .deferred import deferrable, presize, recorded_in_capture, storage
from .matrix import (
    BsrMatrix,
    BsrScaled,
    block_shape_of,
    bsr_zeros,
    ensure_capacity,
    make_block_type,
    matrix_and_scale,
    resolve_block_type,
    types_equal,
)


class bsr_axpy_work_arrays:  # noqa: N801 - Warp's name
    """Accepted for Warp's signature; weft's axpy keeps no state between calls."""


class bsr_mm_work_arrays:  # noqa: N801 - Warp's name
    """Accepted for Warp's signature; weft's products keep no state between calls."""


def _finish(dest: BsrMatrix, plan: Plan, staged: array | None):
    ensure_capacity(dest, int(plan.pos.max()) + 1 if plan.pos.size else 0,
                    staged is not None and staged.requires_grad)
    if staged is not None:
        plan.write(staged, dest.values)


def _defer_assign(a: dict):
    dest = a["dest"]
    A, _scale = matrix_and_scale(a["src"])
    topology = default_topology(dest, a["topology"])
    (R, C), (R2, C2) = A.block_shape, dest.block_shape
    if (R, C) == (R2, C2):
        nrow, ncol, blocks = A.nrow, A.ncol, storage(A)
    else:
        _check_reblocking(A, R2, C2)
        nrow, ncol = A.nrow * R // R2, A.ncol * C // C2
        blocks = min(storage(A) * max(1, R // R2) * max(1, C // C2), nrow * ncol)
    presize(dest, nrow, ncol, blocks if topology == "compact" else None, A.requires_grad)
    return dest, [dest]


def _check_reblocking(A, R2, C2):
    (R, C) = A.block_shape
    if (R % R2 and R2 % R) or (C % C2 and C2 % C):
        raise ValueError(f"Incompatible dest and src block shapes: {(R2, C2)} and {(R, C)}")
    if (A.nrow * R) % R2 or (A.ncol * C) % C2:
        raise ValueError(f"The requested block shape {(R2, C2)} does not evenly divide the source matrix of "
                         f"total size {(A.nrow * R, A.ncol * C)}")


@deferrable(_defer_assign)
def bsr_assign(dest: BsrMatrix, src, structure_only: bool = False, topology=None):
    """Copy `src` (a matrix or scaled expression) into `dest`, converting the scalar type
    and re-blocking to `dest`'s block shape where they differ."""
    A, scale = matrix_and_scale(src)
    topology = default_topology(dest, topology)
    if dest is A and topology != "masked" and scale == 1.0:
        return dest
    r, c, p = A._active()
    if A.block_shape != dest.block_shape:
        return _assign_reblocked(dest, A, scale, r, c, p, structure_only, topology)
    dest.nrow, dest.ncol = A.nrow, A.ncol
    staged = None
    if not structure_only:
        src_vals, p = _values_of_scalar(A, p, dest.scalar_type)
        staged = stage([(src_vals, p, scale, False)], dest.dtype, dest.device, A.requires_grad)
    _copy_padded_capacity(dest, A, topology)
    plan = assemble(dest, r, c, topology)
    _finish(dest, plan, staged)
    return dest


def _values_of_scalar(A: BsrMatrix, p: np.ndarray, scalar) -> tuple[array, np.ndarray]:
    """A's blocks at storage positions `p` in scalar type `scalar`, as (values, positions in
    them): A's own values where the type is A's, else converted copies by a kernel."""
    if types_equal(A.scalar_type, scalar):
        return A.values, p
    out = array(shape=(p.size,), dtype=make_block_type(A.block_shape, scalar, A.dtype), device=A.device,
                requires_grad=A.requires_grad)
    if p.size:
        launch(K.convert_kernel(A.scalar_type, scalar), dim=(p.size, K.entries(A.dtype)),
               inputs=[K.scalar_rows(A.values), iarray(p, A.device)], outputs=[K.scalar_rows(out)], device=A.device)
    return out, np.arange(p.size)


def _assign_reblocked(dest: BsrMatrix, A: BsrMatrix, scale, r, c, p, structure_only: bool, topology: str):
    """bsr_assign into another block shape: every scalar entry of A is a contribution to
    one entry of a destination block, which the regrouping kernel sums (so a Tape records
    it, as it records the other assignments)."""
    (R, C), (R2, C2) = A.block_shape, dest.block_shape
    _check_reblocking(A, R2, C2)
    dest.nrow, dest.ncol = A.nrow * R // R2, A.ncol * C // C2
    _copy_padded_capacity(dest, A, topology)
    keep = (c >= 0) & (c < A.ncol)
    r, c, p = r[keep], c[keep], p[keep]
    ii = np.repeat(r * R, R * C) + np.tile(np.repeat(np.arange(R), C), r.size)  # (entry (a, b) of a block: a*C + b)
    jj = np.repeat(c * C, R * C) + np.tile(np.arange(C), R * r.size)
    plan = assemble(dest, ii // R2, jj // C2, topology)
    ensure_capacity(dest, int(plan.pos.max()) + 1 if plan.pos.size else 0, A.requires_grad and not structure_only)
    if structure_only or not plan.pos.size:
        return dest
    src_vals, p = _values_of_scalar(A, p, dest.scalar_type)
    entry = (p[:, None] * (R * C) + np.arange(R * C)).reshape(-1)
    dev, s_t = dest.device, dest.scalar_type
    launch(K.regroup_kernel(s_t), dim=(int(plan.pos.size), R2 * C2),
           inputs=[K.scalars(src_vals), iarray(entry, dev), iarray((ii % R2) * C2 + jj % C2, dev),
                   iarray(plan.idx, dev), iarray(plan.begin, dev), iarray(plan.end, dev), iarray(plan.pos, dev),
                   s_t(scale)], outputs=[K.scalar_rows(dest.values)], device=dev)
    return dest


def _copy_padded_capacity(dest: BsrMatrix, src: BsrMatrix, topology: str):
    """A padded destination without row capacities takes the source's (re-blocked: a row
    takes those of the source rows it overlaps, times the pieces a source block's columns
    split into, as Warp's)."""
    if topology == "padded" and dest.row_counts is None:
        begin, end = src._row_ranges()
        if src.row_counts is not None:
            off = src._host_offsets()
            end = off[1:]
        caps = end - begin
        (R, C), (R2, C2) = src.block_shape, dest.block_shape
        if (R, C) != (R2, C2):
            rows = np.arange(dest.nrow + 1)
            total = np.concatenate(([0], np.cumsum(caps)))
            first, last = np.minimum(rows[:-1] * R2 // R, src.nrow), np.minimum(-(-rows[1:] * R2 // R), src.nrow)
            caps = (total[last] - total[first]) * max(1, C // C2)
        dest.offsets = iarray(np.concatenate(([0], np.cumsum(caps))), dest.device)
        dest.row_counts = iarray(np.zeros(dest.nrow), dest.device)


def bsr_copy(A, scalar_type=None, block_shape=None, structure_only: bool = False, topology="compact"):
    """A copy of `A` (a matrix or scaled expression), optionally with another scalar type or
    block shape, compact or padded."""
    M, _scale = matrix_and_scale(A)
    scalar = M.scalar_type if scalar_type is None else resolve_block_type(scalar_type)
    shape = M.block_shape if block_shape is None else tuple(block_shape)
    like = M.dtype if block_shape is None else None
    nrow, ncol = M.nrow, M.ncol
    if shape != M.block_shape:
        _check_reblocking(M, *shape)
        nrow, ncol = M.nrow * M.block_shape[0] // shape[0], M.ncol * M.block_shape[1] // shape[1]
    dest = BsrMatrix(nrow, ncol, make_block_type(shape, scalar, like), M.device)
    dest.values.requires_grad = M.requires_grad  # (Warp's rule, also for structure_only)
    if topology == "padded":
        _copy_padded_capacity(dest, M, "padded")
        dest._ensure_status()
    bsr_assign(dest, A, structure_only=structure_only, topology=topology)
    return dest


def _check_transpose(dest, A):
    R, C = A.block_shape
    if dest.block_shape != (C, R):
        raise ValueError(f"Destination block shape must be {(C, R)}, got {dest.block_shape}")


def _defer_transpose(a: dict):
    dest = a["dest"]
    A, _scale = matrix_and_scale(a["src"])
    _check_transpose(dest, A)
    topology = default_topology(dest, a["topology"])
    if topology != "masked":
        presize(dest, A.ncol, A.nrow, storage(A) if topology == "compact" else None, A.requires_grad)
    return dest, [dest]


@deferrable(_defer_transpose)
def bsr_set_transpose(dest: BsrMatrix, src, topology=None):
    """dest = src^T (src a matrix or scaled expression)."""
    A, scale = matrix_and_scale(src)
    _check_transpose(dest, A)
    topology = default_topology(dest, topology)
    r, c, p = A._active()
    valid = (c >= 0) & (c < A.ncol)
    r, c, p = r[valid], c[valid], p[valid]
    staged = stage([(A.values, p, scale, True)], dest.dtype, dest.device, A.requires_grad)
    if topology != "masked":
        dest.nrow, dest.ncol = A.ncol, A.nrow
    plan = assemble(dest, c, r, topology)
    _finish(dest, plan, staged)
    return dest


def bsr_transposed(A):
    """A new matrix, the transpose of `A`."""
    M, _ = matrix_and_scale(A)
    R, C = M.block_shape
    dest = BsrMatrix(M.ncol, M.nrow, make_block_type((C, R), M.scalar_type, M.dtype), M.device)
    dest.values.requires_grad = M.requires_grad
    return bsr_set_transpose(dest, A)


def _diag_out(M) -> array:
    return array(shape=(min(M.nrow, M.ncol),), dtype=M.dtype, device=M.device, requires_grad=M.requires_grad)


def _defer_get_diag(a: dict):
    if a["out"] is None:
        a["out"] = _diag_out(matrix_and_scale(a["A"])[0])
    return a["out"], []


@deferrable(_defer_get_diag)
def bsr_get_diag(A, out: array | None = None) -> array:
    """The diagonal blocks of `A` (zero where a row has none), an array of its block type."""
    M, scale = matrix_and_scale(A)
    n = min(M.nrow, M.ncol)
    if out is None:
        out = _diag_out(M)
    r, c, p = M._active()
    on = r == c
    staged = stage([(M.values, p[on], scale, False)], M.dtype, M.device, M.requires_grad)
    Plan(r[on], np.arange(n)).write(staged, out)
    return out


def _block_value(value):
    """A block value (scalar, weft matrix value, or nested sequence) as numpy."""
    if hasattr(value, "numpy") and callable(value.numpy):
        return value.numpy()
    if hasattr(value, "_data"):
        return np.asarray(value._data)
    return np.asarray(value, dtype=np.float64)


def _diag_shape(A, diag, rows_of_blocks, cols_of_blocks) -> tuple[int, int]:
    nrow = A.nrow if rows_of_blocks is None else int(rows_of_blocks)
    ncol = A.ncol if cols_of_blocks is None else int(cols_of_blocks)
    if isinstance(diag, array):
        if rows_of_blocks is None:
            nrow = diag.shape[0]
        if cols_of_blocks is None:
            ncol = nrow
    return nrow, ncol


def _defer_set_diag(a: dict):
    A, diag = a["A"], a["diag"]
    nrow, ncol = _diag_shape(A, diag, a["rows_of_blocks"], a["cols_of_blocks"])
    A.row_counts = None  # (the result is compact)
    presize(A, nrow, ncol, min(nrow, ncol), isinstance(diag, array) and diag.requires_grad)
    return A, [A]


@deferrable(_defer_set_diag)
def bsr_set_diag(A: BsrMatrix, diag, rows_of_blocks: int | None = None, cols_of_blocks: int | None = None):
    """Make `A` block diagonal: the blocks of the array `diag`, or one block value repeated."""
    A.nrow, A.ncol = _diag_shape(A, diag, rows_of_blocks, cols_of_blocks)
    n = min(A.nrow, A.ncol)
    plan = assemble(A, np.arange(n), np.arange(n), "compact")
    ensure_capacity(A, n, isinstance(diag, array) and diag.requires_grad)
    dev = A.device
    if isinstance(diag, array):
        plan.write(diag, A.values)
    elif n:
        value = np.asarray(_block_value(diag), dtype=np.float64).reshape(-1)
        if value.size == 1:
            value = np.full(K.entries(A.dtype), value[0])
        s_t = A.scalar_type
        launch(K.fill_kernel(s_t), dim=(n, K.entries(A.dtype)),
               inputs=[iarray(np.arange(n), dev), array(value.astype(_t.dtype_to_numpy(s_t)), dtype=s_t, device=dev)],
               outputs=[K.scalar_rows(A.values)], device=dev)
    return A


def _type_of_value(v):
    if type(v) in (float, int):  # a Python number (weft's float64(2.5) is a float too: its own type)
        return _t.float32
    if isinstance(v, _t.SCALAR_VALUES):  # wp.float64(2.5), np.float32(1.0): the value's scalar type
        return _t.scalar_from_numpy(v.dtype) or _t.float32
    t = getattr(v, "_weft_type", None)
    if t is None:
        t = resolve_block_type(type(v))
    block_shape_of(t)  # (raises for vectors and other types)
    return t


def bsr_diag(diag=None, rows_of_blocks: int | None = None, cols_of_blocks: int | None = None,
             block_type=None, device=None) -> BsrMatrix:
    """A new block diagonal matrix (see `bsr_set_diag`); zero blocks of `block_type` when
    `diag` is None."""
    if isinstance(diag, array):
        block_t, device = diag.dtype, diag.device
    elif diag is not None:
        block_t = _type_of_value(diag)
    else:
        block_t = resolve_block_type(block_type)
        diag = 0.0
    if rows_of_blocks is None and not isinstance(diag, array):
        raise ValueError("bsr_diag: rows_of_blocks is needed when diag is not an array")
    A = BsrMatrix(rows_of_blocks or 0, cols_of_blocks or rows_of_blocks or 0, block_t, device)
    return bsr_set_diag(A, diag, rows_of_blocks, cols_of_blocks)


def bsr_set_identity(A: BsrMatrix, rows_of_blocks: int | None = None):
    R, C = A.block_shape
    if R != C:
        raise ValueError("bsr_set_identity: blocks must be square")
    value = A.dtype(1.0) if R == 1 and not isinstance(A.dtype, _t.Matrix) else _identity_block(A.dtype)
    n = A.nrow if rows_of_blocks is None else rows_of_blocks
    return bsr_set_diag(A, value, n, n)


def _identity_block(block_t):
    return np.eye(block_shape_of(block_t)[0])


def bsr_identity(rows_of_blocks: int, block_type, device=None) -> BsrMatrix:
    """The identity with `rows_of_blocks` square blocks of `block_type`."""
    A = BsrMatrix(rows_of_blocks, rows_of_blocks, block_type, device)
    return bsr_set_identity(A)


@deferrable(lambda a: (matrix_and_scale(a["x"])[0], []))
def bsr_scale(x, alpha):
    """x *= alpha, in place; returns x."""
    M, scale = matrix_and_scale(x)
    _r, _c, p = M._active()
    if p.size:
        launch(K.scale_kernel(M.scalar_type), dim=(p.size, K.entries(M.dtype)),
               inputs=[iarray(p, M.device), M.scalar_type(alpha * scale)],
               outputs=[K.scalar_rows(M.values)], device=M.device)
    return M


def _check_axpy(X, y):
    if X.nrow != y.nrow or X.ncol != y.ncol:
        raise ValueError("Matrices must have the same number of rows and columns")
    if not types_equal(X.dtype, y.dtype):
        raise ValueError(f"Matrices must have the same block type, got {X.dtype!r} and {y.dtype!r}")


def _defer_axpy(a: dict):
    X, _xs = matrix_and_scale(a["x"])
    if a["y"] is None:
        a["y"], a["beta"] = bsr_zeros(X.nrow, X.ncol, X.dtype, X.device), 0.0
    y = a["y"]
    _check_axpy(X, y)
    a["work_arrays"] = None
    if default_topology(y, a["topology"]) == "compact":
        presize(y, blocks=min(storage(X) + storage(y), y.nrow * y.ncol), requires_grad=X.requires_grad)
    return y, [y]


@deferrable(_defer_axpy)
def bsr_axpy(x, y: BsrMatrix | None = None, alpha=1.0, beta=1.0, work_arrays=None, topology=None):
    """y = alpha * x + beta * y (x a matrix or scaled expression); returns y."""
    X, xs = matrix_and_scale(x)
    if y is None:
        y = bsr_zeros(X.nrow, X.ncol, X.dtype, X.device)
        beta = 0.0
    topology = default_topology(y, topology)
    if topology == "compact" and (beta == 0.0 or y.nnz == 0) and \
            ((X.nrow, X.ncol) != (y.nrow, y.ncol) or not types_equal(X.dtype, y.dtype)):
        # (as Warp: y's old contents do not count, so y becomes alpha * x, of x's shape)
        return bsr_scale(bsr_assign(y, x, topology=topology), alpha)
    _check_axpy(X, y)
    xr, xc, xp = X._active()
    yr, yc, yp = y._active()
    staged = stage([(X.values, xp, alpha * xs, False), (y.values, yp, beta, False)], y.dtype, y.device,
                   X.requires_grad or y.requires_grad)
    plan = assemble(y, np.concatenate((xr, yr)), np.concatenate((xc, yc)), topology)
    _finish(y, plan, staged)
    return y


def _mm_operands(x, y, z):
    """The matrices of `x @ y` (checked), and `z` (a new zero matrix when None)."""
    X, Y = matrix_and_scale(x)[0], matrix_and_scale(y)[0]
    if X.block_shape[1] != Y.block_shape[0]:
        raise ValueError(f"Incompatible block sizes for matrix multiplication: {X.block_shape} and {Y.block_shape}")
    if X.ncol != Y.nrow:
        raise ValueError(f"Incompatible number of rows/columns for matrix multiplication: {X.shape} @ {Y.shape}")
    if X.scalar_type is not Y.scalar_type or (z is not None and z.scalar_type is not X.scalar_type):
        scalars = (X.scalar_type, Y.scalar_type) + (() if z is None else (z.scalar_type,))
        raise ValueError(f"Matrices must have the same scalar type, got {', '.join(t.name for t in scalars)}")
    zshape = (X.block_shape[0], Y.block_shape[1])
    if z is None:
        like = X.dtype if isinstance(X.dtype, _t.Matrix) else Y.dtype
        z = bsr_zeros(X.nrow, Y.ncol, make_block_type(zshape, X.scalar_type, like), X.device)
        z.values.requires_grad = X.requires_grad or Y.requires_grad
    if z.nrow != X.nrow or z.ncol != Y.ncol:
        raise ValueError(f"Incompatible number of rows/columns for the result: {z.shape}")
    if z.block_shape != zshape:
        raise ValueError(f"Incompatible block sizes for the result: {z.block_shape}, expected {zshape}")
    return X, Y, z


def _defer_mm(a: dict):
    if a["z"] is None:
        a["beta"] = 0.0
    X, Y, z = _mm_operands(a["x"], a["y"], a["z"])
    a["z"] = z
    a["work_arrays"] = None
    if default_topology(z, a["topology"]) == "compact":
        if recorded_in_capture(X) or recorded_in_capture(Y):  # (their topology is not known yet)
            pairs = storage(X) * min(Y.ncol, storage(Y))
        else:
            xc = X._active()[1]
            counts = np.bincount(Y._active()[0], minlength=Y.nrow)
            pairs = int(counts[xc[(xc >= 0) & (xc < Y.nrow)]].sum())
        if a["beta"] != 0.0:
            pairs += storage(z)
        presize(z, blocks=min(pairs, z.nrow * z.ncol), requires_grad=X.requires_grad or Y.requires_grad)
    return z, [z]


@deferrable(_defer_mm)
def bsr_mm(x, y, z: BsrMatrix | None = None, alpha=1.0, beta=0.0, work_arrays=None, reuse_topology=False,
           tile_size=0, max_new_nnz=None, topology=None):
    """z = alpha * x @ y + beta * z; returns z (a new matrix when None)."""
    X, xs = matrix_and_scale(x)
    Y, ys = matrix_and_scale(y)
    if z is None:
        beta = 0.0
    X, Y, z = _mm_operands(x, y, z)
    topology = default_topology(z, topology)
    xr, xc, xp = X._active()
    yr, yc, yp = Y._active()
    order = np.argsort(yr, kind="stable")
    yr, yc, yp = yr[order], yc[order], yp[order]
    first = np.searchsorted(yr, np.arange(Y.nrow + 1))
    cnt = (first[1:] - first[:-1])[xc] if xc.size else np.zeros(0, np.int64)
    xk = np.repeat(np.arange(xc.size), cnt)
    starts = np.repeat(first[:-1][xc] - np.concatenate(([0], np.cumsum(cnt)[:-1])), cnt) if xc.size else xk
    yk = np.arange(xk.size) + starts
    rows, cols = xr[xk], yc[yk]
    parts = [("product", X.values, xp[xk], Y.values, yp[yk], alpha * xs * ys)]
    if beta != 0.0:
        zr, zc, zp = z._active()
        parts.append((z.values, zp, beta, False))
        rows, cols = np.concatenate((rows, zr)), np.concatenate((cols, zc))
    staged = stage(parts, z.dtype, z.device, X.requires_grad or Y.requires_grad or z.requires_grad)
    max_blocks = None
    if max_new_nnz is not None and topology == "compact":
        n_new = np.unique(rows * max(z.ncol, 1) + cols).size
        if n_new > max_new_nnz:
            # (to stdout, where Warp's warning goes and Warp programs look for it)
            print(f"Warning: bsr_mm: the product has {n_new} blocks, which exceeded max_new_nnz={max_new_nnz}; "
                  "the result keeps the first ones")
            max_blocks = int(max_new_nnz)
    plan = assemble(z, rows, cols, topology, max_blocks=max_blocks)
    _finish(z, plan, staged)
    return z


def _scalar_view(v: array, scalar) -> array:
    """`v` as a 1-D array of its scalars (strided where `v` is a strided 1-D array of scalars,
    as a slice `x[::3]` or a column `M[:, 1]` is)."""
    composite = isinstance(v.dtype, (_t.Vector, _t.Matrix))
    if composite and not types_equal(v.dtype.dtype, scalar) or not composite and not types_equal(v.dtype, scalar):
        raise ValueError(f"bsr_mv: vector of {v.dtype!r} does not match the matrix scalar type {scalar!r}")
    strides = None
    if not v.is_contiguous:
        if composite or v.ndim != 1:
            raise ValueError("bsr_mv: vectors of vectors must be contiguous arrays")
        strides = v.strides
    n = v.size * v.dtype.num_components if composite else v.size
    grad = None if v.grad is None else _scalar_view(v.grad, scalar)
    return array(ptr=v.ptr, shape=(n,), strides=strides, dtype=scalar, device=v.device, deleter=v, grad=grad)


def _mv_vectors(M, x, y, transpose):
    """(rows, block rows) of the product and `y` (checked; new when None)."""
    R, C = M.block_shape
    if transpose:
        R, C = C, R
    nrow, ncol = (M.ncol, M.nrow) if transpose else (M.nrow, M.ncol)
    s_t = M.scalar_type
    x_len = x.size * (x.dtype.num_components if isinstance(x.dtype, _t.Vector) else 1)
    if x_len != ncol * C:
        raise ValueError(f"Incompatible 'x': {x_len} scalars for a matrix with {ncol * C} columns")
    if y is None:
        y = array(shape=(nrow,), dtype=s_t if R == 1 else _t.vector(length=R, dtype=s_t), device=M.device,
                  requires_grad=x.requires_grad or M.requires_grad)  # (Warp's follows x alone: a
        # gradient to A's values would be lost where x has none)
    y_len = y.size * (y.dtype.num_components if isinstance(y.dtype, _t.Vector) else 1)
    if y_len != nrow * R:
        raise ValueError(f"Incompatible 'y': {y_len} scalars for a matrix with {nrow * R} rows")
    _scalar_view(x, s_t), _scalar_view(y, s_t)  # (their checks)
    return nrow, R, y


def _defer_mv(a: dict):
    if a["y"] is None:
        a["beta"] = 0.0
    a["y"] = _mv_vectors(matrix_and_scale(a["A"])[0], a["x"], a["y"], a["transpose"])[2]
    a["work_buffer"] = None
    return a["y"], []


@deferrable(_defer_mv)
def bsr_mv(A, x: array, y: array | None = None, alpha=1.0, beta=0.0, transpose: bool = False,
           work_buffer: array | None = None, tile_size=0) -> array:
    """y = alpha * A x + beta * y (A^T x with `transpose`); returns y (new when None)."""
    M, scale = matrix_and_scale(A)
    alpha = alpha * scale
    if y is None:
        beta = 0.0
    nrow, R, y = _mv_vectors(M, x, y, transpose)
    s_t = M.scalar_type
    xs, ys = _scalar_view(x, s_t), _scalar_view(y, s_t)
    if np.may_share_memory(x.numpy(), y.numpy()):  # (y is written while x is read: x is copied first,
        xs = clone(xs)                                # a copy the Tape records, so gradients reach x)
    dev = M.device
    if not transpose:  # (the kernel walks the topology: nothing to prepare on the host)
        if nrow * R:
            counted = M.row_counts is not None
            launch(K.mv_rows_kernel(s_t, counted), dim=nrow * R,
                   inputs=[M.scalar_values, M.offsets, M.row_counts if counted else M.offsets, M.columns,
                           M.ncol, xs, s_t(alpha), s_t(beta)], outputs=[ys], device=dev)
        return y
    # the transposed product: the blocks by column, in a host-built order
    begin, end, order, rows = _by_column(M)
    if nrow * R:
        launch(K.mv_transposed_kernel(s_t), dim=nrow * R,
               inputs=[M.scalar_values, begin, end, order, rows, xs, s_t(alpha), s_t(beta)], outputs=[ys], device=dev)
    return y


def _by_column(M: BsrMatrix) -> tuple[array, array, array, array]:
    """M's blocks in column order for the transposed product: (begin, end) of each block
    column's run, and per block of the run its storage position and row. Kept on M and
    reused while M's topology (shape, offsets, row counts and columns, compared in full) is
    the one it was built from; the arrays are never written after, so a Tape or graph that
    holds them stays valid when a change of topology builds new ones."""
    off = M.offsets.numpy()[: M.nrow + 1]
    counts = None if M.row_counts is None else M.row_counts.numpy()[: M.nrow]
    cols = M.columns.numpy()[: int(off[-1])] if off.size else M.columns.numpy()[:0]
    key = (M.nrow, M.ncol, M.device)
    cached = getattr(M, "_by_column_cache", None)
    if cached is not None and cached[0] == key and np.array_equal(cached[1], off) and \
            np.array_equal(cached[2], counts) and np.array_equal(cached[3], cols):  # (None equals None only)
        return cached[4]
    r, c, p = M._active()
    keep = (c >= 0) & (c < M.ncol)
    r, c, p = r[keep], c[keep], p[keep]
    order = np.argsort(c, kind="stable")
    first = np.searchsorted(c[order], np.arange(M.ncol + 1))
    dev = M.device
    arrays = (iarray(first[:-1], dev), iarray(first[1:], dev), iarray(p[order], dev), iarray(r[order], dev))
    M._by_column_cache = (key, off.copy(), None if counts is None else counts.copy(), cols.copy(), arrays)
    return arrays


__all__ = ["BsrScaled"]
