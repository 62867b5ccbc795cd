"""The solver states of weft.optim.linear (CG, CR, BiCGSTAB, GMRES): buffers allocated once,
`state(A=None, b=None, x=None, M=None)` runs a solve. Vectors are numpy views of the weft
arrays' memory, flattened to scalars; products with A and M go through their operators.

Inside a graph capture, a solve with `check_every=0` (Warp's capturable form) is recorded
whole and runs each time the graph does (its dot products and scalar updates are host
work, which a capture could not record piece by piece); the arrays it returns are the
state's, filled by each replay. A solve that checks the residual on the host
(`check_every > 0`) is refused there: the number of iterations it runs is not known until
the graph runs."""

from __future__ import annotations

import operator as _operator

import numpy as np

from .. import types as _t
from ..lang.kernel import Kernel
from ..runtime import capture
from ..runtime.array import array
from ..runtime.launch import launch
from . import linear as _L


class NonContiguousError(ValueError, RuntimeError):
    """A strided vector given to a solver (Warp's RuntimeError, and a ValueError)."""


def _scalars(a: array) -> np.ndarray:
    """The memory of a contiguous array as a flat numpy view of its scalars."""
    if not a.is_contiguous:
        raise NonContiguousError("linear solvers: vectors must be contiguous arrays (copy a strided one "
                                 "with wp.clone first)")
    return a.numpy().reshape(-1)


class LinearSolverState:
    """Buffers and settings of one solver over a system (A, b, x, M); call it to solve."""

    def __init__(self, A, b, x, tol=None, atol=None, maxiter=0, M=None, callback=None, check_every=10,
                 use_cuda_graph=True):
        self._A = _L.aslinearoperator(A)
        self._M = _L.aslinearoperator(M)
        self._b, self._x = b, x
        self._tol, self._atol = tol, atol
        self._callback = callback
        self._check_every = check_every
        self._use_cuda_graph = use_cuda_graph
        self._device = self._A.device
        self._scalar_type = self._A.scalar_type
        self._batch_count = self._A.batch_count
        n = _scalars(b).size
        if maxiter is None or maxiter == 0:
            maxiter = n // self._batch_count
        self._maxiter = int(maxiter)
        self._n = n
        self._np_t = _t.dtype_to_numpy(self._scalar_type)
        self._batches = _L._Batches(n, self._A.batch_offsets)
        self._rr_buf = np.zeros(self._batches.count)  # squared residual norms, per batch
        self._cur_iter_and_condition = array(np.zeros(2, np.int32), dtype=_t.int32, device=self._device)
        # the squared residual norms and tolerances that check_every=0 returns (one per batch)
        self._residuals_sq = array(np.zeros(self._batches.count, self._np_t), dtype=self._scalar_type,
                                   device=self._device)
        self._tolerances_sq = array(np.zeros(self._batches.count, self._np_t), dtype=self._scalar_type,
                                    device=self._device)
        self._allocate()

    def _vec(self):
        """A work vector: a weft array of b's dtype and shape, and its flat scalar view."""
        v = array(shape=self._b.shape, dtype=self._b.dtype, device=self._device)
        v.zero_()
        return v, _scalars(v)

    def _allocate(self):
        self._r, self._rf = self._vec()
        self._t0, self._t0f = self._vec()

    def _apply(self, op, src: array, dst: array):
        """dst = op @ src (the identity when op is None)."""
        if op is None:
            _scalars(dst)[...] = _scalars(src)
        else:
            op.matvec(src, dst, dst, 1.0, 0.0)

    def _residual(self, A, b, x, out: array):
        """out = b - A x."""
        _scalars(out)[...] = _scalars(b)
        A.matvec(x, out, out, -1.0, 1.0)

    def _tolerances(self, b) -> np.ndarray:
        rtol, atol = _L._get_tolerances(self._scalar_type, self._tol, self._atol)
        bf = _scalars(b).astype(np.float64)
        bnorm = np.sqrt(self._batches.dot(bf, bf))
        return np.maximum(rtol * bnorm, atol) ** 2

    def _check_compatible(self, A, b, x, M):
        if A is not self._A:
            if tuple(A.shape) != tuple(self._A.shape):
                raise ValueError(f"Incompatible A.shape: expected {self._A.shape}, got {A.shape}")
            if not _t.types_equal(A.dtype, self._A.dtype):
                raise ValueError(f"Incompatible A.dtype: expected {self._A.dtype}, got {A.dtype}")
            if A.batch_count != self._A.batch_count:
                raise ValueError(f"Incompatible A.batch_count: expected {self._A.batch_count}, got {A.batch_count}")
            if A.batch_offsets is not self._A.batch_offsets:
                raise ValueError("A.batch_offsets must be the same array as at construction")
            if A.max_batch_length != self._A.max_batch_length:
                raise ValueError("For batched systems, A.max_batch_length must match the value used at construction")
        for name, new, old in (("b", b, self._b), ("x", x, self._x)):
            if new is not old:
                if tuple(new.shape) != tuple(old.shape):
                    raise ValueError(f"Incompatible {name}.shape: expected {old.shape}, got {new.shape}")
                if not _t.types_equal(new.dtype, old.dtype):
                    raise ValueError(f"Incompatible {name}.dtype: expected {old.dtype}, got {new.dtype}")
        if M is not None and self._M is not None and M is not self._M:
            if tuple(M.shape) != tuple(self._M.shape):
                raise ValueError(f"Incompatible M.shape: expected {self._M.shape}, got {M.shape}")
            if not _t.types_equal(M.dtype, self._M.dtype):
                raise ValueError(f"Incompatible M.dtype: expected {self._M.dtype}, got {M.dtype}")

    def __call__(self, A=None, b=None, x=None, M=None):
        A_op = _L.aslinearoperator(A) if A is not None else self._A
        M_op = _L.aslinearoperator(M) if M is not None else self._M
        b = self._b if b is None else b
        x = self._x if x is None else x
        self._check_compatible(A_op, b, x, M_op)
        if capture.capturing():
            return self._record(A_op, b, x, M_op)
        return self._run(A_op, b, x, M_op)

    def _record(self, A, b, x, M):
        """The solve, recorded in the capture under way to run when the graph does."""
        name = type(self).__name__.lower()
        if self._check_every != 0:
            raise RuntimeError(f"{name}: check_every={self._check_every} reads the residual on the host between "
                               f"iterations to decide when to stop, which a graph capture cannot record; pass "
                               f"check_every=0 (the capturable form) or call {name} outside the capture")
        capture.record(lambda: self._run(A, b, x, M), ("unsaveable", f"weft.optim.linear.{name}"))
        return self._cur_iter_and_condition[0:1], self._residuals_sq, self._tolerances_sq

    def _loop(self, atol_sq, do_cycle, cycle_size, r_norm_sq):
        if self._check_every == 0:
            return self._loop_to_arrays(atol_sq, do_cycle, cycle_size, r_norm_sq)
        return _L._run_solver_loop(do_cycle, cycle_size, r_norm_sq, self._maxiter, atol_sq, self._callback,
                                   self._check_every, self._use_cuda_graph, self._device)

    def _loop_to_arrays(self, atol_sq, do_cycle, cycle_size, r_norm_sq):
        """`check_every=0` (Warp's capturable form, as it runs without CUDA graphs): every
        cycle up to `maxiter` runs (converged batches stay as they are in CG, CR and
        BiCGSTAB; GMRES goes on refining, as Warp's), and a callback kernel is launched
        before the first cycle and after each, with (iteration count, squared residual
        norms, squared tolerances) as arrays. Returns those arrays; the count is a
        one-element view of the state's buffer (Warp's `cur_iter_and_condition[0:1]`)."""
        buf = self._cur_iter_and_condition
        cur_iter = buf[0:1]
        residuals, tolerances = self._residuals_sq, self._tolerances_sq
        tolerances.numpy()[:] = atol_sq
        callback = self._callback if isinstance(self._callback, Kernel) else None

        def report(it):
            buf.numpy()[:] = (it, int(it < self._maxiter and not np.all(r_norm_sq <= atol_sq)))
            residuals.numpy()[:] = r_norm_sq
            if callback is not None:
                launch(callback, 1, inputs=[cur_iter, residuals, tolerances], device=self._device)

        report(0)
        for it in range(cycle_size, self._maxiter + cycle_size, cycle_size):
            do_cycle()
            report(it)
        return cur_iter, residuals, tolerances

    def _frozen(self, r_norm_sq, atol_sq):
        """A per-unknown mask: 1 where the batch still iterates, 0 where it has converged."""
        return self._batches.expand((r_norm_sq > atol_sq).astype(np.float64))


def _check_restart(restart):
    if restart is None:
        return None
    if isinstance(restart, bool):
        raise TypeError("restart must be an integer or None")
    try:
        restart = _operator.index(restart)
    except TypeError as error:
        raise TypeError("restart must be an integer or None") from error
    if restart < 1:
        raise ValueError("restart must be positive")
    return restart


class _Conjugate(LinearSolverState):
    """CG and CR: optional restarts (every `restart` iterations the residual is recomputed
    from scratch, and the search direction reset)."""

    def __init__(self, *args, restart=None, **kwargs):
        self._restart = _check_restart(restart)
        super().__init__(*args, **kwargs)

    def _run(self, A, b, x, M):
        atol_sq = self._tolerances(b)
        self._start(A, b, x, M)
        steps = self._restart or 1

        def cycle():
            for _ in range(steps):
                self._step(A, x, M, atol_sq)
            if self._restart is not None:
                self._start(A, b, x, M)

        return self._loop(atol_sq, cycle, steps, self._rr_buf)


class CG(_Conjugate):
    """Preconditioned conjugate gradient state (see `weft.optim.linear.cg`)."""

    def _allocate(self):
        super()._allocate()
        self._z, self._zf = self._vec()
        self._p, self._pf = self._vec()
        self._q, self._qf = self._vec()

    def _start(self, A, b, x, M):
        B = self._batches
        self._residual(A, b, x, self._r)
        self._apply(M, self._r, self._z)
        self._pf[...] = self._zf
        self._rz = B.dot(self._rf, self._zf)
        self._rr_buf[:] = B.dot(self._rf, self._rf)

    def _step(self, A, x, M, atol_sq):
        B = self._batches
        A.matvec(self._p, self._q, self._q, 1.0, 0.0)
        live = B.expand((self._rr_buf > atol_sq).astype(np.float64))
        alpha = B.expand(_L._safe_div(self._rz, B.dot(self._pf, self._qf))) * live
        xf = _scalars(x)
        xf += (alpha * self._pf).astype(xf.dtype)
        self._rf -= (alpha * self._qf).astype(self._rf.dtype)
        self._apply(M, self._r, self._z)
        rz = B.dot(self._rf, self._zf)
        beta = B.expand(_L._safe_div(rz, self._rz))
        self._pf[...] = self._zf + beta * self._pf
        self._rz = rz
        self._rr_buf[:] = B.dot(self._rf, self._rf)


class CR(_Conjugate):
    """Preconditioned conjugate residual state (see `weft.optim.linear.cr`)."""

    def _allocate(self):
        super()._allocate()
        for name in ("z", "p", "Az", "Ap", "y"):
            v, f = self._vec()
            setattr(self, "_" + name, v)
            setattr(self, "_" + name + "f", f)

    def _start(self, A, b, x, M):
        B = self._batches
        self._residual(A, b, x, self._r)
        self._apply(M, self._r, self._z)
        A.matvec(self._z, self._Az, self._Az, 1.0, 0.0)
        self._pf[...] = self._zf
        self._Apf[...] = self._Azf
        self._zAz = B.dot(self._zf, self._Azf)
        self._rr_buf[:] = B.dot(self._rf, self._rf)

    def _step(self, A, x, M, atol_sq):
        B = self._batches
        self._apply(M, self._Ap, self._y)
        live = B.expand((self._rr_buf > atol_sq).astype(np.float64))
        alpha = B.expand(_L._safe_div(self._zAz, B.dot(self._Apf, self._yf))) * live
        xf = _scalars(x)
        xf += (alpha * self._pf).astype(xf.dtype)
        self._rf -= (alpha * self._Apf).astype(self._rf.dtype)
        self._zf -= (alpha * self._yf).astype(self._zf.dtype)
        A.matvec(self._z, self._Az, self._Az, 1.0, 0.0)
        zAz = B.dot(self._zf, self._Azf)
        beta = B.expand(_L._safe_div(zAz, self._zAz))
        self._pf[...] = self._zf + beta * self._pf
        self._Apf[...] = self._Azf + beta * self._Apf
        self._zAz = zAz
        self._rr_buf[:] = B.dot(self._rf, self._rf)


class BiCGSTAB(LinearSolverState):
    """Preconditioned BiCGSTAB state (see `weft.optim.linear.bicgstab`): right
    preconditioning (`x += alpha M p + omega M s`); with `is_left_preconditioner` the
    stabilising step `omega` minimises the preconditioned residual |M (s - omega t)| instead.
    Convergence is judged on the recurrence residual, as Warp does."""

    def __init__(self, *args, is_left_preconditioner=False, **kwargs):
        self._left = bool(is_left_preconditioner)
        super().__init__(*args, **kwargs)

    def _check_compatible(self, A, b, x, M):
        if (M is None) != (self._M is None):
            raise ValueError("BiCGSTAB: the preconditioner must be given (or not) as at construction")
        super()._check_compatible(A, b, x, M)

    def _allocate(self):
        super()._allocate()
        for name in ("r0", "p", "v", "y", "z", "t", "Mt"):
            v, f = self._vec()
            setattr(self, "_" + name, v)
            setattr(self, "_" + name + "f", f)

    def _run(self, A, b, x, M):
        B = self._batches
        atol_sq = self._tolerances(b)
        rr = self._rr_buf
        self._residual(A, b, x, self._r)
        rr[:] = B.dot(self._rf, self._rf)
        self._pf[...] = self._rf
        self._r0f[...] = self._rf
        self._rho = rr.copy()
        self._vf[...] = 0.0
        self._tf[...] = 0.0

        def iteration():
            xf, rf = _scalars(x), self._rf
            self._apply(M, self._p, self._y)
            A.matvec(self._y, self._v, self._v, 1.0, 0.0)
            r0v = B.dot(self._r0f, self._vf)
            alpha = B.expand(_L._safe_div(self._rho, r0v) * (rr > atol_sq))
            xf += (alpha * self._yf).astype(xf.dtype)
            rf -= (alpha * self._vf).astype(rf.dtype)
            rr[:] = B.dot(rf, rf)
            self._apply(M, self._r, self._z)
            A.matvec(self._z, self._t, self._t, 1.0, 0.0)
            if M is not None and self._left:
                self._apply(M, self._t, self._Mt)
                st, tt = B.dot(self._zf, self._Mtf), B.dot(self._Mtf, self._Mtf)
            else:
                st, tt = B.dot(rf, self._tf), B.dot(self._tf, self._tf)
            omega = B.expand(_L._safe_div(st, tt) * (rr > atol_sq))
            xf += (omega * self._zf).astype(xf.dtype)
            rf -= (omega * self._tf).astype(rf.dtype)
            rr_new = B.dot(rf, rf)
            rho = B.dot(self._r0f, rf)
            live = rr_new > atol_sq
            beta = B.expand(_L._safe_div(rho * tt, r0v * st) * live)
            beta_omega = B.expand(_L._safe_div(rho, r0v) * live)
            self._pf[...] = rf + beta * self._pf - beta_omega * self._vf
            rr[:] = rr_new
            self._rho = rho

        return self._loop(atol_sq, iteration, 1, rr)


class GMRES(LinearSolverState):
    """Restarted GMRES(restart) state (see `weft.optim.linear.gmres`): each cycle builds a
    Krylov basis of up to `restart` vectors (Arnoldi, modified Gram-Schmidt) and takes the
    least-squares step; the residual checked between cycles is the true b - A x."""

    def __init__(self, A, b, x, tol=None, atol=None, restart=31, maxiter=0, M=None, callback=None,
                 check_every=31, use_cuda_graph=True, is_left_preconditioner=False):
        self._left = bool(is_left_preconditioner)
        self._restart = max(1, int(restart))
        super().__init__(A, b, x, tol, atol, maxiter, M, callback, check_every, use_cuda_graph)

    def _allocate(self):
        # as Warp: a cycle is at most maxiter long (so maxiter < restart stops after maxiter
        # Arnoldi steps), and the residual is checked at most once per cycle
        self._restart = max(1, min(self._restart, self._maxiter))
        if self._check_every > 0:
            self._check_every = max(self._restart, self._check_every)
        super()._allocate()
        self._V = np.zeros((self._restart + 1, self._n), dtype=np.float64)
        self._w, self._wf = self._vec()
        self._u, self._uf = self._vec()
        self._tr, self._trf = self._vec()

    def _op(self, A, M, vec: np.ndarray, out: array):
        self._uf[...] = vec
        if self._left:
            A.matvec(self._u, self._tr, self._tr, 1.0, 0.0)
            self._apply(M, self._tr, out)
        else:
            self._apply(M, self._u, self._tr)
            A.matvec(self._tr, out, out, 1.0, 0.0)

    def _run(self, A, b, x, M):
        B = self._batches
        atol_sq = self._tolerances(b)
        m = self._restart
        nb = B.count

        def true_rr():
            self._residual(A, b, x, self._tr)
            return B.dot(self._trf, self._trf)

        self._rr_buf[:] = true_rr()

        def cycle():  # (every batch, converged or not: Warp's GMRES keeps refining)
            self._residual(A, b, x, self._r)
            if self._left:
                self._apply(M, self._r, self._w)
                r = self._wf.astype(np.float64)
            else:
                r = self._rf.astype(np.float64)
            beta = np.sqrt(B.dot(r, r))
            V = self._V
            V[0] = r * B.expand(_L._safe_div(np.ones(nb), beta))
            H = np.zeros((nb, m + 1, m))
            k_used = 0
            for j in range(m):
                self._op(A, M, V[j], self._w)
                w = self._wf.astype(np.float64)
                for i in range(j + 1):
                    h = B.dot(w, V[i])
                    H[:, i, j] = h
                    w = w - B.expand(h) * V[i]
                hn = np.sqrt(B.dot(w, w))
                H[:, j + 1, j] = hn
                V[j + 1] = w * B.expand(_L._safe_div(np.ones(nb), hn))
                k_used = j + 1
                if np.all(hn <= 1.0e-300):
                    break
            y = np.zeros((nb, k_used))
            for k in range(nb):
                if beta[k] == 0.0:
                    continue
                rhs = np.zeros(k_used + 1)
                rhs[0] = beta[k]
                y[k] = np.linalg.lstsq(H[k, : k_used + 1, :k_used], rhs, rcond=None)[0]
            dx = np.zeros(self._n)
            for j in range(k_used):
                dx += B.expand(y[:, j]) * V[j]
            xf = _scalars(x)
            if self._left:
                xf += dx.astype(xf.dtype)
            else:
                self._uf[...] = dx
                self._apply(M, self._u, self._w)
                xf += self._wf
            self._rr_buf[:] = true_rr()

        return self._loop(atol_sq, cycle, m, self._rr_buf)
