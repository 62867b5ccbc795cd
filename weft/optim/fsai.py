"""Adaptive factorized sparse approximate inverse (FSAI) preconditioner, Warp's `FSAI`.

For an SPD matrix A (a BsrMatrix, blocks expanded to scalar entries) FSAI builds a lower
triangular G with M = G^T G ~ A^-1. Row i of G lives on a support S (a list of columns,
S[0] = i, the others < i) and is the solution of the local system A[S, S] z = e_0, scaled
so that (G A G^T)_ii = 1: G[i, S] = z / sqrt(z[0]).

The supports are grown greedily on the diagonally equilibrated matrix
Ã = D^-1/2 A D^-1/2: each step takes, among the columns c < i adjacent to the support (in
the rows of S) and not in it, up to `max_step_size` of largest residual |Ã[c, S] z| (ties:
the smaller column; a zero residual is never taken), until the row holds `max_row_size`
entries, no candidate is left, or the relative improvement 1 - z_old[0] / z[0] of the
local energy falls to `kap_tolerance` or below. The local system is factored by bordering
a Cholesky factor of Ã[S, S] one column at a time (in the order the support grew); a pivot
at or below `pivot_floor` stops the row there (`truncated_rows` counts such rows).

`reuse_pattern` keeps the supports (and their growth order) for `update`, which refits the
values on the same supports for a matrix of the same sparsity: the factor arrays are
rewritten in place, so graphs that captured an application see the new factor.
`defer_pattern` builds from the topology alone; the first successful `update` selects the
supports (until then M is the identity).

The factor is computed on the host in float64 and stored in `factor_dtype`; applications
(`matvec`) run as weft kernels accumulating in the matrix scalar type.
"""

import functools
import math

import numpy as np

from .. import types as _t
from ..builtins.registry import BUILTINS
from ..lang.decorators import kernel
from ..runtime import capture
from ..runtime.array import array
from ..runtime.launch import launch
from .linear import LinearOperator, _flat

__all__ = ["FSAI"]

_tid = BUILTINS["tid"]
_PIVOT_FLOOR = {_t.float16: 1.0e-3, _t.float32: 1.0e-6, _t.float64: 1.0e-12}


@functools.cache
def _matvec_kernel(storage_t, s_t):
    """z[i] = alpha * sum_k s_t(values[k]) x[columns[k]] over k in [begin[i], end[i]) + beta * y[i]
    (y unread when beta is 0, x unread when alpha is 0)."""

    @kernel
    def fsai_factor_mv(begin: array(dtype=int), end: array(dtype=int), columns: array(dtype=int),
                       values: array(dtype=storage_t), x: array(dtype=s_t), y: array(dtype=s_t), alpha: s_t,
                       beta: s_t, z: array(dtype=s_t)):
        i = _tid()
        r = s_t(0.0)
        if alpha != s_t(0.0):
            s = s_t(0.0)
            for k in range(begin[i], end[i]):
                s = s + s_t(values[k]) * x[columns[k]]
            r = alpha * s
        if beta != s_t(0.0):
            r = r + beta * y[i]
        z[i] = r

    return fsai_factor_mv


# The matrix on the host -------------------------------------------------------------------

class _Entries:
    """A's scalar entries, row by row: `cols[r]` (sorted column list) and `eq[r]` (column ->
    Ã[r, c], equilibrated, float64), with the diagonal scaling D^-1/2 (`scale`, 0 where the
    diagonal is not finite and positive: `valid`)."""

    def __init__(self, A):
        R = A.block_shape[0]
        self.n = n = A.nrow * R
        r, c, p = _active(A)
        self.topology = (r, c)
        vals = A.values.numpy()[p].astype(np.float64).reshape(p.size, R, R)
        sub = np.arange(R)
        rows = (r[:, None, None] * R + sub[None, :, None] + 0 * sub[None, None, :]).reshape(-1)
        cols = (c[:, None, None] * R + sub[None, None, :] + 0 * sub[None, :, None]).reshape(-1)
        order = np.lexsort((cols, rows))
        rows, cols, vals = rows[order], cols[order], vals.reshape(-1)[order]
        diag = np.zeros(n)
        on = rows == cols
        diag[rows[on]] = vals[on]
        with np.errstate(all="ignore"):
            self.valid = np.isfinite(diag) & (diag > 0.0)
            self.scale = np.where(self.valid, 1.0 / np.sqrt(np.where(self.valid, diag, 1.0)), 0.0)
            scaled = vals * self.scale[rows] * self.scale[cols]
        bounds = np.searchsorted(rows, np.arange(n + 1)).tolist()
        cols_list, scaled_list = cols.tolist(), scaled.tolist()
        self.cols = [cols_list[bounds[i]:bounds[i + 1]] for i in range(n)]
        self.eq = [dict(zip(self.cols[i], scaled_list[bounds[i]:bounds[i + 1]], strict=True)) for i in range(n)]


class _LocalFactor:
    """The Cholesky factor L of Ã[S, S] (rows of Python floats), grown by bordering, and
    v = L^-1 e_0 (the sizes are at most 64: plain loops beat numpy calls)."""

    def __init__(self, i: int):
        self.support = [i]
        self.L = [[1.0]]
        self.v = [1.0]

    def border(self, a: list, floor: float, regularize: bool) -> str:
        """Add the column whose entries against the support are `a`: "ok", "regularized"
        (pivot raised to the floor), "floor" (pivot at or below it) or "bad" (not finite)."""
        w = []
        for p, row in enumerate(self.L):
            t = a[p]
            for q in range(p):
                t -= row[q] * w[q]
            w.append(t / row[p])
        pivot = 1.0 - sum(x * x for x in w)
        if not math.isfinite(pivot):
            return "bad"
        outcome = "ok"
        if pivot <= floor:
            if not regularize:
                return "floor"
            pivot, outcome = floor, "regularized"
        d = math.sqrt(pivot)
        self.v.append(-sum(x * y for x, y in zip(w, self.v, strict=True)) / d)
        self.L.append([*w, d])
        return outcome

    def solve(self) -> list:
        """z with Ã[S, S] z = e_0."""
        L, size = self.L, len(self.L)
        z = [0.0] * size
        for p in range(size - 1, -1, -1):
            t = self.v[p]
            for q in range(p + 1, size):
                t -= L[q][p] * z[q]
            z[p] = t / L[p][p]
        return z


def _row_values(entries: _Entries, support, z) -> np.ndarray | None:
    """G[i, S] = z / sqrt(z[0]) D^-1/2, or None when not finite with a positive diagonal."""
    with np.errstate(all="ignore"):
        g = np.asarray(z) / np.sqrt(z[0]) * entries.scale[np.asarray(support)]
    return g if np.all(np.isfinite(g)) and g[0] > 0.0 else None


def _select_row(entries: _Entries, i: int, width: int, step: int, tolerance: float, floor: float):
    """The support of row i in growth order, its factor row, and whether a pivot stopped it."""
    f = _LocalFactor(i)
    z = [1.0]
    truncated = False
    eq, cols = entries.eq, entries.cols
    while len(f.support) < width:
        inside = set(f.support)
        frontier = {c for j in f.support for c in cols[j] if c < i and c not in inside}
        scored = []
        for c in frontier:
            row = eq[c]
            score = abs(sum(row.get(j, 0.0) * zq for j, zq in zip(f.support, z, strict=True)))
            if score > 0.0:
                scored.append((-score, c))
        if not scored:
            break
        scored.sort()
        old = z[0]
        stopped = False
        for _score, c in scored[: min(step, width - len(f.support))]:
            row = eq[c]
            if f.border([row.get(j, 0.0) for j in f.support], floor, False) != "ok":
                truncated = stopped = True
                break
            f.support.append(c)
        z = f.solve()
        if stopped or (tolerance > 0.0 and 1.0 - old / z[0] <= tolerance):
            break
    return f.support, z, truncated


def _refit_row(entries: _Entries, support, floor: float, regularize: bool):
    """z on a fixed support (bordered in its growth order) and the outcome: "ok",
    "regularized" or "failed"."""
    f = _LocalFactor(support[0])
    outcome = "ok"
    for c in support[1:]:
        row = entries.eq[c]
        step = f.border([row.get(j, 0.0) for j in f.support], floor, regularize)
        if step in ("floor", "bad"):
            return None, "failed"
        if step == "regularized":
            outcome = "regularized"
        f.support.append(c)
    return f.solve(), outcome


# The preconditioner -------------------------------------------------------------------------

class FSAI(LinearOperator):
    """M = G^T G, an adaptive factorized sparse approximate inverse of an SPD BsrMatrix `A`
    (see the module docstring); pass it as `M` to `cg` or `cr`. Attributes: `G` (the
    lower triangular scalar factor, a BsrMatrix), `GT` (its stored transpose),
    `truncated_rows`, `source` (the matrix of the last construction or update),
    `update_status` (with `reuse_pattern`: an int array of 4 counts from the last update:
    topology mismatch, invalid diagonals, failed rows, regularized rows), `pattern_ready`
    and `pattern_status` (with `defer_pattern`)."""

    def __init__(self, A, max_row_size: int = 8, kap_tolerance: float = 1.0e-3, pivot_floor: float | None = None,
                 factor_dtype=None, reuse_pattern: bool = False, max_step_size: int = 1,
                 regularize_refit: bool = False, validate_topology: bool = True, defer_pattern: bool = False):
        from ..sparse.matrix import BsrMatrix
        if not isinstance(A, BsrMatrix) or A.shape[0] != A.shape[1] or A.block_shape[0] != A.block_shape[1]:
            raise ValueError("FSAI requires a square BSR matrix with square blocks")
        s_t = A.scalar_type
        if s_t not in _PIVOT_FLOOR:
            raise TypeError(f"FSAI supports float16, float32 and float64 matrices, got {s_t!r}")
        for name, value in (("max_row_size", max_row_size), ("max_step_size", max_step_size)):
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 64:
                raise ValueError(f"{name} must be an integer in [1, 64], got {value!r}")
        if not 0 <= kap_tolerance < 1:
            raise ValueError(f"kap_tolerance must be in [0, 1), got {kap_tolerance!r}")
        pivot_floor = _PIVOT_FLOOR[s_t] if pivot_floor is None else pivot_floor
        if not 0 < pivot_floor < 1:
            raise ValueError(f"pivot_floor must be in (0, 1), got {pivot_floor!r}")
        factor_dtype = s_t if factor_dtype is None else factor_dtype
        if factor_dtype is not s_t and not (s_t is _t.float64 and factor_dtype is _t.float32):
            raise ValueError("factor_dtype must be the matrix scalar type, or float32 for a float64 matrix")
        if reuse_pattern and A.row_counts is not None:
            raise ValueError("reuse_pattern requires compact BSR storage; compact the matrix with "
                             "bsr_compress(A, prune_numerical_zeros=False)")
        if defer_pattern and not reuse_pattern:
            raise ValueError("defer_pattern requires reuse_pattern")
        self.max_row_size, self.max_step_size, self.kap_tolerance = max_row_size, max_step_size, kap_tolerance
        self.pivot_floor, self.factor_dtype = float(pivot_floor), factor_dtype
        self.regularize_refit, self.validate_topology = regularize_refit, validate_topology
        self.source = A
        n = A.shape[0]
        dev = A.device
        self.truncated_rows = None
        self.pattern_ready = self.pattern_status = self.update_status = None
        self._refit = None
        if defer_pattern:
            self._refit = _Plan(self, A, None)
            self.pattern_ready = array(np.zeros(1, np.int32), dtype=_t.int32, device=dev)
            self.pattern_status = array(np.zeros(3, np.int32), dtype=_t.int32, device=dev)
            self._make_storage(n, [[i] for i in range(n)], [np.ones(1) for _ in range(n)], padded=True)
        else:
            entries = _Entries(A)
            if not entries.valid.all():
                raise ValueError(f"FSAI requires finite positive diagonals ({int((~entries.valid).sum())} "
                                 "invalid rows)")
            supports, rows, truncated = self._select(entries)
            if any(g is None for g in rows):
                raise ValueError("FSAI factor lost finite entries or a positive diagonal")
            self.truncated_rows = truncated
            self._make_storage(n, supports, rows, padded=False)
            if self._lost_in_storage(range(n)):
                raise ValueError("factor_dtype conversion lost finite entries or a positive diagonal")
            if reuse_pattern:
                self._refit = _Plan(self, A, supports)
        if reuse_pattern:
            self.update_status = array(np.zeros(4, np.int32), dtype=_t.int32, device=dev)
        self._tmp = array(shape=(n,), dtype=s_t, device=dev)
        super().__init__(A.shape, A.dtype, dev, self._apply)

    # Factor storage ----------------------------------------------------------------------

    def _select(self, entries: _Entries):
        supports, rows, truncated = [], [], 0
        for i in range(entries.n):
            support, z, stopped = _select_row(entries, i, self.max_row_size, self.max_step_size,
                                              self.kap_tolerance, self.pivot_floor)
            supports.append(support)
            rows.append(_row_values(entries, support, z))
            truncated += int(stopped)
        return supports, rows, truncated

    def _make_storage(self, n: int, supports, rows, padded: bool):
        """G (compact, or padded with `max_row_size` slots per row) and GT (compact, with room
        for every row's slots) holding the factor rows on their supports."""
        from ..sparse.matrix import BsrMatrix
        dev, f_t = self.source.device, self.factor_dtype
        self.G = BsrMatrix(n, n, f_t, dev)
        self.GT = BsrMatrix(n, n, f_t, dev)
        width = self.max_row_size
        if padded:
            self.G.offsets = _ints(np.arange(n + 1) * width, dev)
            self.G.row_counts = _ints(np.zeros(n), dev)
            capacity = n * width
        else:
            capacity = sum(len(s) for s in supports)
            self.G.offsets = _ints(np.concatenate(([0], np.cumsum([len(s) for s in supports]))), dev)
        for M in (self.G, self.GT):
            M.columns = _ints(np.full(capacity, -1), dev)
            M.values = array(np.zeros(capacity, _t.dtype_to_numpy(f_t)), dtype=f_t, device=dev)
            M.nnz = capacity
        self._g_range = (_ints(np.zeros(n), dev), _ints(np.zeros(n), dev))
        self._gt_range = (_ints(np.zeros(n), dev), _ints(np.zeros(n), dev))
        self._publish(supports, rows)

    def _publish(self, supports, rows):
        """Write the factor rows (sorted by column) and the transpose's topology."""
        G, GT = self.G, self.GT
        n = G.nrow
        begin = G.offsets.numpy()[:n].astype(np.int64)
        counts = np.array([len(s) for s in supports], np.int64)
        cols = G.columns.numpy()
        cols[:] = -1
        order_in_row = []
        for i, s in enumerate(supports):
            order = np.argsort(s, kind="stable")
            cols[begin[i]: begin[i] + len(s)] = np.asarray(s)[order]
            order_in_row.append(order)
        self._order = order_in_row
        if G.row_counts is not None:
            G.row_counts.numpy()[:] = counts
        else:
            G.nnz = int(counts.sum())
        self._g_range[0].numpy()[:] = begin
        self._g_range[1].numpy()[:] = begin + counts
        pos = np.concatenate([begin[i] + np.arange(counts[i]) for i in range(n)]) if n else np.zeros(0, np.int64)
        r = np.repeat(np.arange(n), counts)
        c = cols[pos].astype(np.int64)
        t = np.lexsort((r, c))
        self._transpose = pos[t]  # GT.values[k] = G.values[self._transpose[k]]
        gt_off = np.concatenate(([0], np.cumsum(np.bincount(c, minlength=n)))).astype(np.int32)
        GT.offsets = _ints(gt_off, G.device) if GT.offsets.shape[0] != n + 1 else GT.offsets
        GT.offsets.numpy()[:] = gt_off
        GT.columns.numpy()[:] = -1
        GT.columns.numpy()[: t.size] = r[t]
        GT.nnz = int(t.size)
        self._gt_range[0].numpy()[:] = gt_off[:-1]
        self._gt_range[1].numpy()[:] = gt_off[1:]
        self._write_values(range(n), rows)

    def _write_values(self, which, rows):
        """Store the values of rows `which` (each in its support's growth order) and refresh GT."""
        vals = self.G.values.numpy()
        begin = self.G.offsets.numpy()
        for i, g in zip(which, rows, strict=True):
            vals[begin[i]: begin[i] + len(g)] = np.asarray(g)[self._order[i]]
        self.GT.values.numpy()[: self._transpose.size] = vals[self._transpose]

    def _lost_in_storage(self, which) -> list:
        """Rows whose stored (rounded) values are not finite or have no positive diagonal."""
        vals = self.G.values.numpy().astype(np.float64)
        begin = self.G.offsets.numpy()
        end = self._g_range[1].numpy()
        cols = self.G.columns.numpy()
        lost = []
        for i in which:
            row = slice(begin[i], end[i])
            diag = vals[row][cols[row] == i]
            if not np.all(np.isfinite(vals[row])) or diag.size != 1 or diag[0] <= 0.0:
                lost.append(i)
        return lost

    # Application ---------------------------------------------------------------------------

    def _apply(self, x, y, z, alpha, beta):
        s_t = self.scalar_type
        x, y, z = _flat(x, s_t), _flat(y, s_t), _flat(z, s_t)
        n = self.G.nrow
        if not n:
            return
        dev = self.device
        k = _matvec_kernel(self.factor_dtype, s_t)
        if alpha != 0.0:  # (x is read into the scratch vector before z is written)
            launch(k, dim=n, inputs=[*self._g_range, self.G.columns, self.G.values, x, self._tmp, s_t(1.0), s_t(0.0)],
                   outputs=[self._tmp], device=dev)
        launch(k, dim=n, inputs=[*self._gt_range, self.GT.columns, self.GT.values, self._tmp, y, s_t(alpha),
                                 s_t(beta)], outputs=[z], device=dev)

    # Updates -------------------------------------------------------------------------------

    def update(self, A=None) -> "FSAI":
        """Refit the factor on the supports of construction (the first update of a deferred
        pattern selects them) for `A` (default: `source`), a matrix of the same sparsity.
        A failed update raises ValueError and leaves the factor as it was (with
        `regularize_refit`, only a sparsity mismatch fails). Inside a graph capture the
        update is recorded and runs when the graph does."""
        from ..sparse.matrix import BsrMatrix
        if self._refit is None:
            raise ValueError("FSAI.update needs a preconditioner constructed with reuse_pattern=True")
        A = self.source if A is None else A
        if not isinstance(A, BsrMatrix):
            raise ValueError(f"FSAI.update requires a weft BSR matrix, got {type(A).__name__}")
        self._refit.prepare(A)
        if not capture.record(lambda: self._refit.update(A)):
            self._refit.update(A)
        self.source = A
        return self


class _Plan:
    """What `FSAI.update` refits: the supports in growth order (None until a deferred
    pattern is selected) and the matrix's topology, shape, type and device."""

    def __init__(self, owner: "FSAI", A, supports):
        self.owner = owner
        self.supports = supports
        self.shape, self.dtype, self.device = A.shape, A.dtype, A.device
        self.topology = _topology(A) if owner.validate_topology else None

    @property
    def published(self) -> bool:
        return self.supports is not None

    def prepare(self, A):
        from ..types import types_equal
        if A.shape != self.shape or not types_equal(A.dtype, self.dtype) or A.device != self.device:
            raise ValueError("FSAI update requires the original shape, dtype, device and topology "
                             f"(shape {self.shape}, blocks {self.dtype!r} on {self.device})")

    def select(self, entries: _Entries):
        """The deferred pattern: supports selected on `entries` (rows with an invalid diagonal
        keep the diagonal alone when regularizing)."""
        owner = self.owner
        supports, rows, truncated = owner._select(entries)
        failed = [i for i, g in enumerate(rows) if g is None or not entries.valid[i]]
        owner.pattern_status.numpy()[:] = [0, truncated, len(failed)]
        return supports, rows, failed

    def update(self, A):
        owner = self.owner
        entries = _Entries(A)
        status = np.zeros(4, np.int32)
        if self.topology is not None and not _same_topology(self.topology, entries.topology):
            status[0] = 1
            owner.update_status.numpy()[:] = status
            raise ValueError("FSAI update requires identical sparsity; rebuild the preconditioner to change it")
        status[1] = int((~entries.valid).sum())
        if not self.published:
            if status[1] and not owner.regularize_refit:
                owner.update_status.numpy()[:] = status
                raise ValueError(f"FSAI requires finite positive diagonals ({status[1]} invalid rows)")
            supports, rows, failed = self.select(entries)
            if failed and not owner.regularize_refit:
                owner.update_status.numpy()[:] = status
                raise ValueError("FSAI factor lost finite entries or a positive diagonal")
            for i in failed:
                supports[i], rows[i] = [i], _fallback(entries, i)
            owner._publish(supports, rows)
            lost = owner._lost_in_storage(range(entries.n))
            if lost and not owner.regularize_refit:
                owner._publish([[i] for i in range(entries.n)], [np.ones(1)] * entries.n)
                owner.update_status.numpy()[:] = status
                raise ValueError("factor_dtype conversion lost finite entries or a positive diagonal")
            self.supports = supports
            owner.pattern_ready.numpy()[0] = 1
            owner.update_status.numpy()[:] = status
            return
        rows, failed = [], 0
        for i, support in enumerate(self.supports):
            z, outcome = _refit_row(entries, support, owner.pivot_floor, owner.regularize_refit)
            g = None if z is None or not entries.valid[i] else _row_values(entries, support, z)
            if g is None:
                failed += 1
                g = np.zeros(len(support))
                g[0] = _fallback(entries, i)[0]
            status[3] += outcome == "regularized"
            rows.append(g)
        status[2] = failed
        if failed and not owner.regularize_refit:
            owner.update_status.numpy()[:] = status
            raise ValueError("FSAI refit requires finite positive diagonals and SPD local supports")
        n = len(rows)
        old_g, old_gt = owner.G.values.numpy().copy(), owner.GT.values.numpy().copy()
        owner._write_values(range(n), rows)
        lost = owner._lost_in_storage(range(n))
        if lost:
            status[2] += len(lost)
            if not owner.regularize_refit:
                owner.G.values.numpy()[:], owner.GT.values.numpy()[:] = old_g, old_gt
                owner.update_status.numpy()[:] = status
                raise ValueError("factor_dtype conversion lost finite entries or a positive diagonal")
            for i in lost:
                g = np.zeros(len(self.supports[i]))
                g[0] = 1.0
                rows[i] = g
            owner._write_values(lost, [rows[i] for i in lost])
        owner.update_status.numpy()[:] = status


def _fallback(entries: _Entries, i: int) -> np.ndarray:
    """The diagonal row that replaces a failed one: D^-1/2, or 1 for an invalid diagonal."""
    return np.array([entries.scale[i] if entries.valid[i] else 1.0])


def _active(A):
    """(block row, block column, storage position) of A's stored blocks in range."""
    r, c, p = A._active()
    keep = (c >= 0) & (c < A.ncol)
    return r[keep], c[keep], p[keep]


def _topology(A):
    r, c, _p = _active(A)
    return r, c


def _same_topology(a, b) -> bool:
    return all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def _ints(values, device) -> array:
    return array(np.ascontiguousarray(values, dtype=np.int32), dtype=_t.int32, device=device)
