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
a short launch far more than it saves. So each kernel keeps two running estimates of its
cost per thread of a launch (the cycle counter, read by the launching thread): with the
workers, and on the calling thread alone (measured when it runs alone, else estimated from
the pace at which it ran its own chunks). Where alone is the cheaper, the kernel's next
launches run on the calling thread (the same chunks, so results are those of the parallel
launch), trying the workers again after SOLO_FIRST launches, then after twice as many each
time they lose again (up to SOLO_MAX). Per kernel: a short kernel may lose to a worker's
wake-up where a long one still gains from it.
"""

from __future__ import annotations

import ctypes
import threading

SPIN = 40000  # polls before sleeping (about 1 ms: a step of a simulation loop launches again sooner)
SYS_FUTEX, FUTEX_WAIT, FUTEX_WAKE = 202, 128, 129  # x86-64 Linux, private futexes

CHUNKS_PER_THREAD = 16
SOLO_FIRST, SOLO_MAX = 16, 256  # launches run on the calling thread after the workers lost time
MARGIN = 0.1  # alone must be this much cheaper than with the workers


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
        worker_addr, run_addr, solo_addr, add_addr = cpu.load_object(
            obj, "weft_pool_worker", "weft_pool_run", "weft_pool_solo", "weft_private_add")
        self._private_add = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(add_addr)
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
            choice = ck.__dict__.get("pool_choice") or ck.__dict__.setdefault("pool_choice", Choice())
            if choice.alone_now():
                self._solo(self._state_ptr)
                choice.ran_alone(s)
            else:
                self._run(self._state_ptr)
                choice.ran_parallel(s)

    def add_private(self, job_ptr: int):
        """Run a privatised scatter's reduction (native_pool_ir.private_add_function) on the
        job at `job_ptr`, on the calling thread (measured: with the workers, the copies move
        between the cores' caches and it gains nothing at the sizes where privatising pays)."""
        self._private_add(job_ptr)


def _mix(average, sample, weight=0.1, clip=4.0):
    """A running average that one outlier (an interrupt, a page fault) moves little."""
    if average is None:
        return sample
    return (1 - weight) * average + weight * min(sample, clip * average)


class Choice:
    """Whether a kernel's launches run with the workers or on the calling thread alone (see
    the module docstring): running costs in cycles per thread of a launch."""

    __slots__ = ("parallel", "alone", "left", "probe", "probing")

    def __init__(self):
        self.parallel = self.alone = None
        self.left = 0  # launches to run alone before trying the workers again
        self.probe = SOLO_FIRST
        self.probing = False  # the next launch with the workers follows a stretch alone

    def alone_now(self) -> bool:
        if self.left > 0:
            self.left -= 1
            self.probing = self.left == 0
            return True
        return False

    def ran_alone(self, s: PoolState):
        if s.total > 0 and s.t_end > s.t_start:
            self.alone = _mix(self.alone, (s.t_end - s.t_start) / s.total)

    def ran_parallel(self, s: PoolState):
        if s.total <= 0 or s.t_end <= s.t_start:
            return
        # (a probe after a stretch alone is the only news of the workers: it replaces the
        # estimate, so that a passing slowdown does not keep the kernel alone for long)
        self.parallel = _mix(self.parallel, (s.t_end - s.t_start) / s.total, 1.0 if self.probing else 0.1)
        self.probing = False
        if s.own_chunks > 0:  # (the pace of its own chunks, as if it had run them all)
            self.alone = _mix(self.alone, (s.t_chunks - s.t_start) * s.chunks / s.own_chunks / s.total)
        if self.alone is not None and self.alone < (1 - MARGIN) * self.parallel:
            self.left, self.probe = self.probe, min(2 * self.probe, SOLO_MAX)
        else:
            self.probe = SOLO_FIRST
