"""A native thread pool, generated as LLVM IR and JIT-compiled like a kernel.

Waking a Python thread costs tens of microseconds (a queue, the GIL), which is more than a
mid-sized kernel runs. Here each worker is a Python thread that calls `worker_loop` once
and never returns to Python: it waits natively (spinning briefly, then sleeping on a Linux
futex) for the pool's generation counter to change, runs its chunk of the launch, and
counts down `pending`. The launching thread (in `run`, with the GIL released) publishes the
job, bumps the generation, wakes the sleepers, runs chunks itself and waits for `pending`
to reach zero. A launch is cut into chunks with fixed boundaries, and every thread claims
the next chunk not yet taken (an atomic counter) until none is left: a thread slowed down
by other work on a shared machine takes fewer chunks instead of holding up the launch.
A kernel whose results depend on the order of its atomics gets one chunk per thread (as
many partial sums as before, so its results do not change with the chunking); other
kernels get CHUNKS_PER_THREAD per thread. Which thread runs a chunk never changes a
result.

Each launch still waits until every worker has woken and checked in. On a machine where
another process holds a core, a worker may wait milliseconds for the scheduler, which costs
a short launch far more than it saves. The launching thread reads the cycle counter at
its start, when it found no chunk left, and at its end: where running every chunk itself
would have been faster than the launch was, the pool runs the next launches of that kernel
on the calling thread alone (the same chunks, so results are those of the parallel launch),
and tries the workers again after SOLO_FIRST of them, then after twice as many each time
they lose again (up to SOLO_MAX). The choice is per kernel: a short kernel may lose to a
worker's wake-up where a long one still gains from it.
"""

from __future__ import annotations

import ctypes
import threading

SPIN = 40000  # polls before sleeping (about 1 ms: a step of a simulation loop launches again sooner)
SYS_FUTEX, FUTEX_WAIT, FUTEX_WAKE = 202, 128, 129  # x86-64 Linux, private futexes

CHUNKS_PER_THREAD = 16
SOLO_FIRST, SOLO_MAX = 16, 256  # launches run on the calling thread after the workers lost time
MIN_LOSS = 0.1  # (waiting for the workers must have cost this share of the launch and more)


class PoolState(ctypes.Structure):
    _fields_ = [("generation", ctypes.c_int32), ("pending", ctypes.c_int32),
                ("workers", ctypes.c_int32), ("active", ctypes.c_int32), ("total", ctypes.c_int32),
                ("chunks", ctypes.c_int32), ("kernel", ctypes.c_void_p), ("args", ctypes.c_void_p),
                ("ctx", ctypes.c_void_p), ("next", ctypes.c_int32), ("args_stride", ctypes.c_int32),
                ("t_start", ctypes.c_int64), ("t_chunks", ctypes.c_int64), ("t_end", ctypes.c_int64),
                ("own_chunks", ctypes.c_int32)]


def supported() -> bool:
    from ..codegen.host import is_x86_64_linux
    return is_x86_64_linux()


def chunk_count(ck, total: int, threads: int) -> int:
    """How many chunks a launch of `total` threads of `ck` on `threads` threads is cut into."""
    return threads if ck.order_dependent else min(total, threads * CHUNKS_PER_THREAD)


_LIVE_POOLS: list = []


class NativePool:
    """`size` threads in all: the caller plus `size - 1` native workers."""

    def __init__(self, size: int):
        from ..codegen import cpu

        self.size = size
        # (the compiler's fingerprint covers this file and native_pool_ir.py: the key needs
        # no IR, which a warm process then neither builds nor imports llvmlite.ir for)
        key = cpu.cache_key("weft_pool", f"spin={SPIN}")
        obj = cpu.cached_object(key)
        if obj is None:
            from .native_pool_ir import pool_module
            module = pool_module()
            tm = cpu.target_machine()
            module.triple = tm.triple
            module.data_layout = str(tm.target_data)
            obj = cpu.compile_to_object(str(module))
            cpu.store_object(key, obj)
        worker_addr, run_addr, solo_addr = cpu.load_object(obj, "weft_pool_worker", "weft_pool_run",
                                                           "weft_pool_solo")
        self._run = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(run_addr)  # releases the GIL
        self._solo = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(solo_addr)
        worker = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32)(worker_addr)
        self.state = PoolState(workers=size - 1)
        self._state_ptr = ctypes.addressof(self.state)
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=worker, args=(self._state_ptr, k), daemon=True,
                                          name=f"weft-worker-{k}") for k in range(1, size)]
        for t in self._threads:
            t.start()
        # The workers never return and keep reading the state: it must outlive any
        # reference to the pool (a replaced pool's memory, freed and reused, would look
        # like a new job to them)
        _LIVE_POOLS.append(self)

    def run_kernel(self, ck, args_ptr: int, ctx_ptr: int, total: int, threads: int, args_stride: int = 0):
        """Run compiled kernel `ck` over [0, total) on `threads` threads (at most the pool's
        size), in `threads` chunks for a kernel whose results depend on the order of its
        atomics, else CHUNKS_PER_THREAD times as many. With `args_stride`, one chunk per
        thread, chunk k reading its arguments at `args_ptr + k * args_stride`."""
        threads = max(1, min(threads, self.size, total))
        chunks = threads if args_stride else chunk_count(ck, total, threads)
        with self._lock:  # one launch at a time uses the workers
            s = self.state
            s.kernel, s.args, s.ctx, s.args_stride = ck.address, args_ptr, ctx_ptr, args_stride
            s.total, s.active, s.chunks, s.next = total, threads, chunks, 0
            solo = ck.__dict__.setdefault("solo", [0, SOLO_FIRST, 0])  # left alone, next run alone, losses
            if solo[0] > 0:
                solo[0] -= 1
                self._solo(self._state_ptr)
                return
            self._run(self._state_ptr)
            _judge(s, solo)


def _judge(s: PoolState, solo: list):
    """After a launch with the workers: had the calling thread run every chunk itself (at the
    pace it ran its own), would the launch have ended sooner? After two such launches in a
    row (one can be a passing hiccup) the next `solo[1]` launches of the kernel run alone."""
    own, launch = s.t_chunks - s.t_start, s.t_end - s.t_start
    if s.own_chunks <= 0 or launch <= 0:
        return
    if own * s.chunks / s.own_chunks < launch and launch - own > MIN_LOSS * launch:
        solo[2] += 1
        if solo[2] >= 2:
            solo[0], solo[1] = solo[1], min(2 * solo[1], SOLO_MAX)
    else:
        solo[1], solo[2] = SOLO_FIRST, 0
