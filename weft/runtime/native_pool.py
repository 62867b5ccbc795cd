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
"""

from __future__ import annotations

import ctypes
import platform
import threading

import llvmlite.ir as ir

I32, I64 = ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()
SPIN = 40000  # polls before sleeping (about 1 ms: a step of a simulation loop launches again sooner)
SYS_FUTEX, FUTEX_WAIT, FUTEX_WAKE = 202, 128, 129  # x86-64 Linux, private futexes

CHUNKS_PER_THREAD = 16
# generation, pending, workers, active threads, total, chunks, kernel, args, ctx, next chunk,
# args stride (chunk k's argument block is at args + k * stride: privatised scatters)
POOL_TYPE = ir.LiteralStructType([I32, I32, I32, I32, I32, I32, PTR, PTR, PTR, I32, I32])
GEN, PENDING, WORKERS, ACTIVE, TOTAL, CHUNKS, KERNEL, ARGS, CTX, NEXT, ARGS_STRIDE = range(11)
KERNEL_TYPE = ir.FunctionType(ir.VoidType(), [PTR, I32, I32, PTR])


class PoolState(ctypes.Structure):
    _fields_ = [("generation", ctypes.c_int32), ("pending", ctypes.c_int32),
                ("workers", ctypes.c_int32), ("active", ctypes.c_int32), ("total", ctypes.c_int32),
                ("chunks", ctypes.c_int32), ("kernel", ctypes.c_void_p), ("args", ctypes.c_void_p),
                ("ctx", ctypes.c_void_p), ("next", ctypes.c_int32), ("args_stride", ctypes.c_int32)]


def supported() -> bool:
    return platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")


def _module() -> ir.Module:
    m = ir.Module(name="weft_pool")
    syscall = ir.Function(m, ir.FunctionType(I64, [I64], var_arg=True), "syscall")
    pause = ir.Function(m, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse2.pause")

    def field(b, pool, k):
        return b.gep(pool, [I32(0), I32(k)], source_etype=POOL_TYPE)

    def load_atomic(b, ptr):
        return b.load_atomic(ptr, "acquire", 4, typ=I32)

    def chunk_bounds(b, pool, index):
        """[total * index / chunks, total * (index + 1) / chunks) in 64-bit arithmetic."""
        total = b.sext(b.load(field(b, pool, TOTAL), typ=I32), I64)
        chunks = b.sext(b.load(field(b, pool, CHUNKS), typ=I32), I64)
        i = b.sext(index, I64)
        lo = b.sdiv(b.mul(total, i), chunks)
        hi = b.sdiv(b.mul(total, b.add(i, I64(1))), chunks)
        return b.trunc(lo, I32), b.trunc(hi, I32)

    def run_chunks(b, fn, pool):
        """Claim chunks (the NEXT counter) and run them until every chunk is taken."""
        header = fn.append_basic_block("chunks.claim")
        body = fn.append_basic_block("chunks.run")
        done = fn.append_basic_block("chunks.done")
        b.branch(header)
        b.position_at_end(header)
        index = b.atomic_rmw("add", field(b, pool, NEXT), I32(1), "monotonic")
        chunks = b.load(field(b, pool, CHUNKS), typ=I32)
        b.cbranch(b.icmp_signed("<", index, chunks), body, done)
        b.position_at_end(body)
        lo, hi = chunk_bounds(b, pool, index)
        call_kernel(b, pool, index, lo, hi)
        b.branch(header)
        b.position_at_end(done)

    def call_kernel(b, pool, index, lo, hi):
        # typed as a pointer to the kernel's function type: llvmlite takes the call's type from it
        fn = b.load(field(b, pool, KERNEL), typ=KERNEL_TYPE.as_pointer())
        stride = b.sext(b.load(field(b, pool, ARGS_STRIDE), typ=I32), I64)
        args = b.gep(b.load(field(b, pool, ARGS), typ=PTR), [b.mul(b.sext(index, I64), stride)],
                     source_etype=ir.IntType(8))
        ctx = b.load(field(b, pool, CTX), typ=PTR)
        b.call(fn, [args, lo, hi, ctx])

    def wait_change(b, fn, ptr, old):
        """Return once *ptr != old: spin SPIN polls, then sleep on the futex (repeatedly)."""
        header = fn.append_basic_block("wait.header")
        spin = fn.append_basic_block("wait.spin")
        sleep = fn.append_basic_block("wait.sleep")
        done = fn.append_basic_block("wait.done")
        pre = b.block
        b.branch(header)
        b.position_at_end(header)
        k = b.phi(I32)
        k.add_incoming(I32(0), pre)
        changed = b.icmp_signed("!=", load_atomic(b, ptr), old)
        b.cbranch(changed, done, spin)
        b.position_at_end(spin)
        b.call(pause, [])
        more = b.icmp_signed("<", k, I32(SPIN))
        k.add_incoming(b.add(k, I32(1)), spin)
        b.cbranch(more, header, sleep)
        b.position_at_end(sleep)
        b.call(syscall, [I64(SYS_FUTEX), ptr, I32(FUTEX_WAIT), old, ir.Constant(PTR, None)])
        k.add_incoming(I32(SPIN), sleep)
        b.branch(header)
        b.position_at_end(done)

    def wake(b, ptr, count):
        b.call(syscall, [I64(SYS_FUTEX), ptr, I32(FUTEX_WAKE), I32(count)])

    # void weft_pool_worker(Pool*, i32 index): never returns
    worker = ir.Function(m, ir.FunctionType(ir.VoidType(), [PTR, I32]), "weft_pool_worker")
    pool, index = worker.args
    b = ir.IRBuilder(worker.append_basic_block("entry"))
    seen0 = I32(0)  # the generation starts at 0: a worker that starts late still sees job 1
    entry = b.block
    loop = worker.append_basic_block("loop")
    b.branch(loop)
    b.position_at_end(loop)
    seen = b.phi(I32)
    seen.add_incoming(seen0, entry)
    wait_change(b, worker, field(b, pool, GEN), seen)
    now = load_atomic(b, field(b, pool, GEN))
    active = b.load(field(b, pool, ACTIVE), typ=I32)
    with b.if_then(b.icmp_signed("<", index, active)):
        run_chunks(b, worker, pool)
    left = b.atomic_rmw("sub", field(b, pool, PENDING), I32(1), "acq_rel")
    with b.if_then(b.icmp_signed("==", left, I32(1))):
        wake(b, field(b, pool, PENDING), 1)
    seen.add_incoming(now, b.block)
    b.branch(loop)

    # void weft_pool_run(Pool*): job fields already set; runs chunk 0, waits for the rest
    run = ir.Function(m, ir.FunctionType(ir.VoidType(), [PTR]), "weft_pool_run")
    (pool,) = run.args
    b = ir.IRBuilder(run.append_basic_block("entry"))
    workers = b.load(field(b, pool, WORKERS), typ=I32)
    b.atomic_rmw("xchg", field(b, pool, PENDING), workers, "acq_rel")  # (store_atomic needs typed pointers)
    b.atomic_rmw("add", field(b, pool, GEN), I32(1), "acq_rel")
    wake(b, field(b, pool, GEN), 2**31 - 1)
    run_chunks(b, run, pool)
    header = run.append_basic_block("join")
    done = run.append_basic_block("done")
    b.branch(header)
    b.position_at_end(header)
    pending = load_atomic(b, field(b, pool, PENDING))
    body = run.append_basic_block("join.wait")
    b.cbranch(b.icmp_signed("==", pending, I32(0)), done, body)
    b.position_at_end(body)
    wait_change(b, run, field(b, pool, PENDING), pending)
    b.branch(header)
    b.position_at_end(done)
    b.ret_void()
    return m


def chunk_count(ck, total: int, threads: int) -> int:
    """How many chunks a launch of `total` threads of `ck` on `threads` threads is cut into."""
    return threads if ck.order_dependent else min(total, threads * CHUNKS_PER_THREAD)


_LIVE_POOLS: list = []


class NativePool:
    """`size` threads in all: the caller plus `size - 1` native workers."""

    def __init__(self, size: int):
        from ..codegen import cpu

        self.size = size
        module = _module()
        tm = cpu.target_machine()
        module.triple = tm.triple
        module.data_layout = str(tm.target_data)
        key = cpu.cache_key(str(module))
        obj = cpu.cached_object(key)
        if obj is None:
            obj = cpu.compile_to_object(str(module))
            cpu.store_object(key, obj)
        worker_addr, run_addr = cpu.load_object(obj, "weft_pool_worker", "weft_pool_run")
        self._run = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(run_addr)  # releases the GIL
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
            self._run(self._state_ptr)
