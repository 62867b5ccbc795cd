"""The LLVM IR of the native thread pool (native_pool.py says how it works); built only
when its object code is not in the cache."""

from __future__ import annotations

import llvmlite.ir as ir

from .native_pool import FUTEX_WAIT, FUTEX_WAKE, SPIN, SYS_FUTEX

I32, I64 = ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()

# generation, pending, workers, active threads, total, chunks, kernel, args, ctx, next chunk,
# args stride (chunk k's argument block is at args + k * stride: privatised scatters), and
# what the launching thread measured of the last launch (cycle counter at its start, when
# that thread found no chunk left, at its end; how many chunks that thread ran);
# native_pool.PoolState is this struct on the Python side
POOL_TYPE = ir.LiteralStructType([I32, I32, I32, I32, I32, I32, PTR, PTR, PTR, I32, I32, I64, I64, I64, I32])
(GEN, PENDING, WORKERS, ACTIVE, TOTAL, CHUNKS, KERNEL, ARGS, CTX, NEXT, ARGS_STRIDE,
 T_START, T_CHUNKS, T_END, OWN_CHUNKS) = range(15)
KERNEL_TYPE = ir.FunctionType(ir.VoidType(), [PTR, I32, I32, PTR])


def pool_module() -> ir.Module:
    """The module defining `weft_pool_worker(state, index)`, `weft_pool_run(state)`,
    `weft_pool_solo(state)` and `weft_private_add(job)`."""
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

    def run_chunks(b, fn, pool, count=None):
        """Claim chunks (the NEXT counter) and run them until every chunk is taken (adding
        one to the i32 at `count` for each)."""
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
        if count is not None:
            b.store(b.add(b.load(count, typ=I32), I32(1)), count)
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

    cycles = ir.Function(m, ir.FunctionType(I64, []), "llvm.readcyclecounter")

    # void weft_pool_solo(Pool*): job fields already set; the calling thread runs every chunk
    solo = ir.Function(m, ir.FunctionType(ir.VoidType(), [PTR]), "weft_pool_solo")
    (pool,) = solo.args
    b = ir.IRBuilder(solo.append_basic_block("entry"))
    b.store(b.call(cycles, []), field(b, pool, T_START))
    run_chunks(b, solo, pool)
    b.store(b.call(cycles, []), field(b, pool, T_END))
    b.ret_void()

    # void weft_pool_run(Pool*): job fields already set; runs chunks, waits for the workers
    run = ir.Function(m, ir.FunctionType(ir.VoidType(), [PTR]), "weft_pool_run")
    (pool,) = run.args
    b = ir.IRBuilder(run.append_basic_block("entry"))
    b.store(b.call(cycles, []), field(b, pool, T_START))
    b.store(I32(0), field(b, pool, OWN_CHUNKS))
    workers = b.load(field(b, pool, WORKERS), typ=I32)
    b.atomic_rmw("xchg", field(b, pool, PENDING), workers, "acq_rel")  # (store_atomic needs typed pointers)
    b.atomic_rmw("add", field(b, pool, GEN), I32(1), "acq_rel")
    wake(b, field(b, pool, GEN), 2**31 - 1)
    run_chunks(b, run, pool, field(b, pool, OWN_CHUNKS))
    b.store(b.call(cycles, []), field(b, pool, T_CHUNKS))
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
    b.store(b.call(cycles, []), field(b, pool, T_END))
    b.ret_void()
    private_add_function(m)
    return m


# A privatised scatter's reduction (scatter.py): for each segment (one privatised array,
# contiguous), its `copies` private copies are added into `dest` in copy order and zeroed.
SEGMENT_TYPE = ir.LiteralStructType([I64, I64, PTR, PTR])  # elements, kind, dest, copies
JOB_TYPE = ir.LiteralStructType([I32, I32, PTR])  # segments, copies per segment, the segments
ADD_KINDS = (ir.FloatType(), ir.DoubleType(), I32, I64)  # (kind 0 to 3, as scatter.py numbers them)


def _counted_loop(b, fn, lo, hi, name):
    """Emit `for i in range(lo, hi)` (i64) and leave the builder in its body; returns i and
    `close()`, which the caller calls after emitting the body."""
    pre = b.block
    header = fn.append_basic_block(f"{name}.header")
    body = fn.append_basic_block(f"{name}.body")
    done = fn.append_basic_block(f"{name}.done")
    b.branch(header)
    b.position_at_end(header)
    i = b.phi(I64)
    i.add_incoming(lo, pre)
    b.cbranch(b.icmp_signed("<", i, hi), body, done)
    b.position_at_end(body)

    def close():
        i.add_incoming(b.add(i, I64(1)), b.block)
        b.branch(header)
        b.position_at_end(done)
    return i, close


def private_add_function(m: ir.Module):
    """`void weft_private_add(job*)`."""
    fn = ir.Function(m, ir.FunctionType(ir.VoidType(), [PTR]), "weft_private_add")
    (job,) = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def job_field(k, typ):
        return b.load(b.gep(job, [I32(0), I32(k)], source_etype=JOB_TYPE), typ=typ)
    segments, copies = b.sext(job_field(0, I32), I64), b.sext(job_field(1, I32), I64)
    table = job_field(2, PTR)
    s, close_segments = _counted_loop(b, fn, I64(0), segments, "segment")

    def seg_field(k, typ):
        return b.load(b.gep(table, [s, I32(k)], source_etype=SEGMENT_TYPE), typ=typ)
    count, kind = seg_field(0, I64), b.trunc(seg_field(1, I64), I32)
    dest, copy_table = seg_field(2, PTR), seg_field(3, PTR)
    next_segment = fn.append_basic_block("segment.next")
    switch = b.switch(kind, next_segment)
    for k, typ in enumerate(ADD_KINDS):
        block = fn.append_basic_block(f"kind{k}")
        switch.add_case(I32(k), block)
        b.position_at_end(block)
        c, close_copies = _counted_loop(b, fn, I64(0), copies, f"kind{k}.copy")
        src = b.load(b.gep(copy_table, [c], source_etype=PTR), typ=PTR)
        e, close_elements = _counted_loop(b, fn, I64(0), count, f"kind{k}.element")
        at_dest, at_src = b.gep(dest, [e], source_etype=typ), b.gep(src, [e], source_etype=typ)
        total, value = b.load(at_dest, typ=typ), b.load(at_src, typ=typ)
        is_float = isinstance(typ, (ir.FloatType, ir.DoubleType))
        b.store(b.fadd(total, value) if is_float else b.add(total, value), at_dest)
        b.store(ir.Constant(typ, 0), at_src)
        close_elements()
        close_copies()
        b.branch(next_segment)
    b.position_at_end(next_segment)
    close_segments()
    b.ret_void()
