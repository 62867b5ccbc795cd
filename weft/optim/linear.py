"""Iterative linear solvers, as Warp's `warp.optim.linear`: `cg`, `cr`, `bicgstab`, `gmres`
over `LinearOperator`s (dense 2-D arrays, 1-D diagonals, `weft.sparse.BsrMatrix`, or a user
`matvec`), with Jacobi preconditioners (`preconditioner`) and batches of independent systems
(`aslinearoperator(A, batch_offsets=...)`).

Operator products run as weft kernels (`bsr_mv` for sparse matrices, the dense and diagonal
kernels below); the vector updates and dot products of the iterations are numpy over the
arrays' host memory (weft's arrays live in host memory), per batch where there are several.
Each batch stops moving once it meets its tolerance `max(tol * |b|, atol)`. Inside a graph
capture, a solve with `check_every=0` is recorded whole (see _solvers.py); one with
`check_every > 0` is refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .. import types as _t
from ..builtins.registry import BUILTINS
from ..lang.decorators import kernel
from ..runtime import capture
from ..runtime.array import array
from ..runtime.array_create import copy
from ..runtime.launch import launch

_tid = BUILTINS["tid"]


class LinearOperator:
    """A linear map `z = alpha * A x + beta * y` given by `matvec(x, y, z, alpha, beta)`.
    `batch_offsets` (B + 1 ints) splits the scalar unknowns into B independent systems."""

    def __init__(self, shape, dtype, device, matvec: Callable, batch_offsets=None, max_batch_length=None):
        if max_batch_length is not None:
            if batch_offsets is None:
                raise ValueError("max_batch_length requires batch_offsets")
            if max_batch_length < 0:
                raise ValueError("max_batch_length must be non-negative")
        self._shape, self._dtype, self._device, self._matvec = shape, dtype, device, matvec
        self._batch_offsets, self._max_batch_length = batch_offsets, max_batch_length

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    device = property(lambda self: self._device)
    matvec = property(lambda self: self._matvec)
    batch_offsets = property(lambda self: self._batch_offsets)
    max_batch_length = property(lambda self: self._max_batch_length)

    @property
    def scalar_type(self):
        return _t.type_scalar_type(self._dtype)

    @property
    def batch_count(self) -> int:
        return 1 if self._batch_offsets is None else self._batch_offsets.shape[0] - 1


_DENSE, _DIAG = {}, {}


def _make_dense(s_t):
    @kernel
    def linear_dense_mv(A: array(dtype=s_t, ndim=2), x: array(dtype=s_t), y: array(dtype=s_t), alpha: s_t,
                        beta: s_t, z: array(dtype=s_t)):
        i = _tid()
        s = s_t(0.0)
        for j in range(A.shape[1]):
            s = s + A[i, j] * x[j]
        if beta == s_t(0.0):
            z[i] = alpha * s
        else:
            z[i] = alpha * s + beta * y[i]

    return linear_dense_mv


def _make_diag(s_t):
    @kernel
    def linear_diag_mv(d: array(dtype=s_t), x: array(dtype=s_t), y: array(dtype=s_t), alpha: s_t, beta: s_t,
                       z: array(dtype=s_t)):
        i = _tid()
        if beta == s_t(0.0):
            z[i] = alpha * d[i] * x[i]
        else:
            z[i] = alpha * d[i] * x[i] + beta * y[i]

    return linear_diag_mv


def _flat(a: array, s_t) -> array:
    n = a.size * (a.dtype.num_components if isinstance(a.dtype, (_t.Vector, _t.Matrix)) else 1)
    return array(ptr=a.ptr, shape=(n,), dtype=s_t, device=a.device, deleter=a)


def aslinearoperator(A, batch_offsets=None, max_batch_length=None) -> LinearOperator | None:
    """`A` as a LinearOperator: a 2-D array (dense), a 1-D array (diagonal), a BsrMatrix (or
    scaled expression), or a LinearOperator (returned as is unless batch offsets are given)."""
    from ..sparse.matrix import BsrMatrix, BsrScaled

    if A is None:
        return None
    if isinstance(A, LinearOperator):
        if batch_offsets is None and max_batch_length is None:
            return A
        return LinearOperator(A.shape, A.dtype, A.device, A.matvec, batch_offsets, max_batch_length)
    if isinstance(A, (BsrMatrix, BsrScaled)):
        from ..sparse.ops import bsr_mv

        def matvec(x, y, z, alpha, beta):
            if beta != 0.0 and z.ptr != y.ptr:
                copy(z, y)  # (recorded in a graph capture, as the product is)
            bsr_mv(A, x, z, alpha, beta)

        return LinearOperator(A.shape, A.dtype, A.device, matvec, batch_offsets, max_batch_length)
    if isinstance(A, array) and A.ndim in (1, 2):
        s_t = _t.type_scalar_type(A.dtype)
        table, make = (_DENSE, _make_dense) if A.ndim == 2 else (_DIAG, _make_diag)
        k = table.get(s_t) or table.setdefault(s_t, make(s_t))
        Af = A if A.ndim == 2 else _flat(A, s_t)

        def matvec(x, y, z, alpha, beta):
            zf = _flat(z, s_t)
            launch(k, dim=zf.shape[0], inputs=[Af, _flat(x, s_t), _flat(y, s_t), s_t(alpha), s_t(beta)],
                   outputs=[zf], device=A.device)

        return LinearOperator(A.shape, A.dtype, A.device, matvec, batch_offsets, max_batch_length)
    raise ValueError(f"Unable to create LinearOperator from {A!r}")


def preconditioner(A, ptype: str = "diag") -> LinearOperator | None:
    """A preconditioner for `A`: "diag" (Jacobi: the inverse of the diagonal), "diag_abs"
    (of its absolute values), "block_jacobi_direct" (QR inverses of the diagonal blocks),
    "block_jacobi_sequential" (LDL^T; symmetric positive definite blocks),
    "block_jacobi_tile" (Cholesky; float32/float64), "fsai" (factorized sparse approximate
    inverse of an SPD matrix), or "id" (None). See weft/optim/_precond.py."""
    from . import _precond

    if ptype == "id":
        return None
    if ptype in ("diag", "diag_abs"):
        return _precond.jacobi(A, use_abs=ptype == "diag_abs")
    if ptype in _precond._BLOCK_JACOBI:
        return _precond.block_jacobi(A, ptype)
    if ptype == "fsai":
        from .fsai import FSAI
        return FSAI(A)
    raise ValueError(f"Unsupported preconditioner type '{ptype}'")


# ---- batches and tolerances -------------------------------------------------------------

class _Batches:
    """Per-batch reductions over flat vectors: `seg[i]` is the batch of unknown i (-1: inactive)."""

    def __init__(self, n: int, offsets):
        if offsets is None:
            self.seg = np.zeros(n, np.int64)
            self.count = 1
        else:
            off = offsets.numpy().astype(np.int64)
            self.count = off.size - 1
            self.seg = np.full(n, -1, np.int64)
            for k in range(self.count):
                self.seg[off[k]: off[k + 1]] = k
        self.active = self.seg >= 0

    def dot(self, u, v):
        w = (np.asarray(u, np.float64) * v)[self.active]
        return np.bincount(self.seg[self.active], weights=w, minlength=self.count)

    def expand(self, s):
        out = np.zeros(self.seg.size)
        out[self.active] = s[self.seg[self.active]]
        return out


def _get_tolerances(dtype, tol, atol):
    eps = 1.0e-16 if dtype == _t.float64 else 1.0e-4 if dtype == _t.float16 else 1.0e-8
    if tol is None and atol is None:
        tol = atol = eps ** 0.75
    elif tol is None:
        tol = atol
    elif atol is None:
        atol = tol
    return tol, max(atol, eps ** 2.25)


def _safe_div(a, b):
    return np.where(b != 0.0, a / np.where(b != 0.0, b, 1.0), 0.0)


def _host(v) -> np.ndarray:
    return np.asarray(v.numpy() if isinstance(v, array) else v, dtype=np.float64).reshape(-1)


def _run_solver_loop(do_cycle: Callable, cycle_size: int, r_norm_sq, maxiter: int, atol_sq, callback=None,
                     check_every: int = 10, use_cuda_graph: bool = False, device=None):
    """Run `do_cycle` (`cycle_size` iterations each) until every batch's squared residual
    (`r_norm_sq`, an array updated by the cycles) is within its `atol_sq` (checked every
    `check_every` iterations) or `maxiter` is reached; returns (iterations, residual norm,
    tolerance), the largest over the batches. `callback(iteration, residual, tolerance)` is
    called at the start, at each check and at the end."""
    atol_sq = _host(atol_sq)
    atol = math.sqrt(float(atol_sq.max()))
    check_every = max(check_every, cycle_size)
    it = 0
    res = _host(r_norm_sq)
    if callback is not None:
        callback(it, math.sqrt(float(res.max())), atol)
    if np.all(res <= atol_sq):
        return it, math.sqrt(float(res.max())), atol
    while True:
        do_cycle()
        it += cycle_size
        if it >= maxiter:
            break
        if it % check_every < cycle_size:
            res = _host(r_norm_sq)
            if np.all(res <= atol_sq):
                break
            if callback is not None:
                callback(it, math.sqrt(float(res.max())), atol)
    err = math.sqrt(float(_host(r_norm_sq).max()))
    if callback is not None:
        callback(it, err, atol)
    return it, err, atol


class TiledDot:
    """Dot products of flat arrays, one per batch of `batch_offsets` (one in all without),
    for up to `max_column_count` pairs at once; `compute(a, b)` then `col(k)` (a weft array
    of the batch count). Sums are taken in float64 per batch, so a batch's result does not
    depend on the other batches. (Warp's CUDA tree reduction and its tiling are not
    reproduced: `tile_size` is accepted and kept for its signature.)"""

    def __init__(self, max_length: int, scalar_type, tile_size=512, device=None, max_column_count: int = 1,
                 batch_offsets=None, max_batch_length=None):
        if max_batch_length is not None:
            if batch_offsets is None:
                raise ValueError("max_batch_length requires batch_offsets")
            if max_batch_length < 0:
                raise ValueError("max_batch_length must be non-negative")
        self.tile_size = tile_size
        self.device = device
        self.max_column_count = max_column_count
        self.batch_offsets = batch_offsets
        self.max_batch_length = max_batch_length
        self.batch_count = 1 if batch_offsets is None else batch_offsets.shape[0] - 1
        self._batches = _Batches(int(max_length), batch_offsets)
        self._output = array(shape=(max_column_count, self.batch_count), dtype=scalar_type, device=device)
        self._output.zero_()

    def compute(self, a: array, b: array, col_offset: int = 0):
        """The dot products of a and b (rows of 2-D arrays: one pair per column) into the
        output from column `col_offset`. Inside a graph capture it is recorded, to run (on
        what a and b hold then) when the graph does."""
        if not capture.record(lambda: self._compute(a, b, col_offset), ("unsaveable", "weft.optim.linear.TiledDot")):
            self._compute(a, b, col_offset)

    def _compute(self, a: array, b: array, col_offset: int):
        av, bv = a.numpy(), b.numpy()
        av = av.reshape(1, -1) if av.ndim == 1 else av.reshape(av.shape[0], -1)
        bv = bv.reshape(1, -1) if bv.ndim == 1 else bv.reshape(bv.shape[0], -1)
        out = self._output.numpy()
        seg = self._batches.seg[: av.shape[1]]
        act = seg >= 0
        for k in range(av.shape[0]):
            w = av[k].astype(np.float64) * bv[k].astype(np.float64)
            out[col_offset + k] = np.bincount(seg[act], weights=w[act], minlength=self.batch_count)

    def col(self, col: int = 0) -> array:
        return self._output[col]

    def cols(self, count: int, start: int = 0) -> array:
        return self._output[start: start + count]


from ._solvers import CG, CR, GMRES, BiCGSTAB, LinearSolverState  # noqa: E402


def cg(A, b, x, tol=None, atol=None, maxiter=0, M=None, callback=None, check_every=10, use_cuda_graph=True,
       run=True, *, restart=None):
    """Preconditioned conjugate gradient for symmetric positive definite `A`; `x` holds the
    initial guess and receives the solution. Returns (iterations, residual norm, tolerance),
    or the reusable `CG` state with `run=False`."""
    state = CG(A, b, x, tol, atol, maxiter, M, callback, check_every, use_cuda_graph, restart=restart)
    return state() if run else state


def cr(A, b, x, tol=None, atol=None, maxiter=0, M=None, callback=None, check_every=10, use_cuda_graph=True,
       run=True, *, restart=None):
    """Preconditioned conjugate residual for symmetric `A` (see `cg` for the arguments)."""
    state = CR(A, b, x, tol, atol, maxiter, M, callback, check_every, use_cuda_graph, restart=restart)
    return state() if run else state


def bicgstab(A, b, x, tol=None, atol=None, maxiter=0, M=None, callback=None, check_every=10, use_cuda_graph=True,
             is_left_preconditioner=False, run=True):
    """Preconditioned BiCGSTAB for general `A` (see `cg` for the arguments)."""
    state = BiCGSTAB(A, b, x, tol, atol, maxiter, M, callback, check_every, use_cuda_graph,
                     is_left_preconditioner=is_left_preconditioner)
    return state() if run else state


def gmres(A, b, x, tol=None, atol=None, restart=31, maxiter=0, M=None, callback=None, check_every=31,
          use_cuda_graph=True, is_left_preconditioner=False, run=True):
    """Restarted GMRES(restart) for general `A` (see `cg` for the arguments)."""
    state = GMRES(A, b, x, tol, atol, restart, maxiter, M, callback, check_every, use_cuda_graph,
                  is_left_preconditioner=is_left_preconditioner)
    return state() if run else state


__all__ = ["BiCGSTAB", "CG", "CR", "GMRES", "LinearOperator", "LinearSolverState", "aslinearoperator",
           "bicgstab", "cg", "cr", "gmres", "preconditioner",
           "FSAI"]  # noqa: F822 - FSAI comes from the module __getattr__


def __getattr__(name):
    if name == "FSAI":  # (weft/optim/fsai.py builds on LinearOperator: imported when first asked for)
        from .fsai import FSAI
        return FSAI
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
