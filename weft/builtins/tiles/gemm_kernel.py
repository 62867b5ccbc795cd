"""The LLVM code of a tile product, C (+)= A @ B, for float32 and float64 tiles.

Tiles are small, static and packed row-major on the stack (A is m x k, B is k x n, C is
m x n), so all three sit in the L1 cache and no packing is needed: the product is a
register-blocked micro-kernel. A and B may also be views of the arrays they were loaded
from (codegen/tile_views.py): A at any row and column strides, B at any row stride with
its rows contiguous; the kernel reads them through those strides. C is cut into blocks of `MR` rows by `NR` columns (two
vectors of the target's widest registers: with AVX-512, 32 float32 or 16 float64; with
AVX, half that); each block is held in MR x 2 vector accumulators over the whole k loop,
where each step loads the block's row of B as vectors, broadcasts one element of A per
row and adds the products with `llvm.fmuladd` (a fused multiply-add where the CPU has
one). The block is then stored once. Column blocks are the outer loop and row blocks the
inner one, so the k x NR panel of B is loop-invariant and LLVM keeps it in registers
(2k vectors: 16 for the k = 8 of Warp's example) while the rows stream past; a larger MR
measured no faster and spills on CPUs with 16 vector registers. Rows past the last
whole block (m mod MR) get a block of fewer rows; columns past the last whole block are
covered by narrower vectors (widths halving down to one element), so every shape is
exact and no element is read or written outside its tile.

Each element of C is still its k products added in k order (one fused multiply-add per
product), onto the starting value of C when accumulating.
"""

from __future__ import annotations

import llvmlite.ir as ir

MR = 4  # rows of a register block
VECTOR_BITS = 0  # vector width in bits; 0: the widest the target CPU has (see vector_bits)

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def supported(dtype) -> bool:
    """Whether the micro-kernel handles tiles of `dtype` (float32 and float64)."""
    return getattr(dtype, "kind", None) == "f" and getattr(dtype, "bits", 0) in (32, 64)


def column_segments(n: int, vw: int):
    """[(first column, widths of its vectors)] covering columns 0..n: blocks of two
    `vw`-wide vectors, then the remainder in vectors of halving widths."""
    segs = []
    j = 0
    while j + 2 * vw <= n:
        segs.append((j, (vw, vw)))
        j += 2 * vw
    rest = []
    w = vw
    while j < n:
        while w > n - j:
            w //= 2
        rest.append(w)
        j += w
    if rest:
        segs.append((n - sum(rest), tuple(rest)))
    return segs


class _Emitter:
    def __init__(self, cg, a_buf, b_buf, c_buf, m, k_dim, n, ft, size, accumulate, a_strides, b_row_stride):
        self.cg, self.bld = cg, cg.builder
        self.a_strides, self.b_row_stride = a_strides, b_row_stride
        self.a, self.b, self.c = a_buf, b_buf, c_buf
        self.m, self.k_dim, self.n = m, k_dim, n
        self.ft, self.size, self.accumulate = ft, size, accumulate
        self.fmuladd = {}

    # Helpers ------------------------------------------------------------------------------
    def _vt(self, w):
        return self.ft if w == 1 else ir.VectorType(self.ft, w)

    def _ptr(self, buf, flat):
        """Address of element `flat` (an i64) of a packed tile."""
        bld = self.bld
        return bld.gep(buf, [bld.mul(flat, _I64(self.size), flags=("nsw",))], source_etype=ir.IntType(8),
                       inbounds=True)

    def _load(self, buf, flat, w):
        return self.bld.load(self._ptr(buf, flat), typ=self._vt(w), align=self.size)

    def _store(self, value, buf, flat):
        self.bld.store(value, self._ptr(buf, flat), align=self.size)

    def _fma(self, x, y, acc):
        t = acc.type
        fn = self.fmuladd.get(str(t))
        if fn is None:
            scalar = t.element if isinstance(t, ir.VectorType) else t
            suffix = "f32" if isinstance(scalar, ir.FloatType) else "f64"
            if isinstance(t, ir.VectorType):
                suffix = f"v{t.count}{suffix}"
            name = f"llvm.fmuladd.{suffix}"
            module = self.cg.module
            fn = module.globals.get(name) or ir.Function(module, ir.FunctionType(t, [t, t, t]), name=name)
            self.fmuladd[str(t)] = fn
        return self.bld.call(fn, [x, y, acc])

    def _splat(self, x, w):
        if w == 1:
            return x
        bld = self.bld
        vt = self._vt(w)
        v = bld.insert_element(ir.Constant(vt, ir.Undefined), x, _I32(0))
        return bld.shuffle_vector(v, ir.Constant(vt, ir.Undefined), ir.Constant(ir.VectorType(_I32, w), [0] * w))

    def _loop(self, start, stop, step, name, carried, body):
        """`for i in range(start, stop, step)` (i64) carrying LLVM values; `body(i, values)`
        returns the next values; returns the values after the loop."""
        bld, func = self.bld, self.cg.func
        pre = bld.block
        header = func.append_basic_block(f"{name}.header")
        loop_body = func.append_basic_block(f"{name}.body")
        exit_ = func.append_basic_block(f"{name}.exit")
        bld.branch(header)
        bld.position_at_end(header)
        i = bld.phi(_I64, name)
        i.add_incoming(_I64(start), pre)
        phis = []
        for v in carried:
            p = bld.phi(v.type)
            p.add_incoming(v, pre)
            phis.append(p)
        bld.cbranch(bld.icmp_signed("<", i, _I64(stop)), loop_body, exit_)
        bld.position_at_end(loop_body)
        nxt = body(i, phis)
        end = bld.block
        i.add_incoming(bld.add(i, _I64(step), flags=("nsw",)), end)
        for p, v in zip(phis, nxt):
            p.add_incoming(v, end)
        bld.branch(header)
        bld.position_at_end(exit_)
        return phis

    # The product ---------------------------------------------------------------------------
    def block(self, i0, rows: int, j0, widths):
        """C[i0:i0+rows, j0:j0+sum(widths)] (+)= A[i0:i0+rows, :] @ B[:, j0:...]."""
        bld = self.bld
        offs = [sum(widths[:s]) for s in range(len(widths))]
        row_flat = [bld.add(i0, _I64(r)) for r in range(rows)]
        c_flat = [[bld.add(bld.mul(row_flat[r], _I64(self.n)), bld.add(j0, _I64(o))) for o in offs]
                  for r in range(rows)]
        if self.accumulate:
            init = [self._load(self.c, c_flat[r][s], w) for r in range(rows) for s, w in enumerate(widths)]
        else:
            init = [ir.Constant(self._vt(w), None) for _ in range(rows) for w in widths]
        row_stride, col_stride = self.a_strides
        a_rows = [bld.gep(self.a, [bld.mul(row_flat[r], row_stride)], source_etype=ir.IntType(8))
                  for r in range(rows)]

        def step(k, accs):
            b_row = bld.gep(self.b, [bld.mul(k, self.b_row_stride)], source_etype=ir.IntType(8))
            bv = [self._load(b_row, bld.add(j0, _I64(o)), w) for o, w in zip(offs, widths)]
            out = []
            a_col = bld.mul(k, col_stride)
            for r in range(rows):
                a = bld.load(bld.gep(a_rows[r], [a_col], source_etype=ir.IntType(8)), typ=self.ft,
                             align=self.size)
                for s, w in enumerate(widths):
                    out.append(self._fma(self._splat(a, w), bv[s], accs[r * len(widths) + s]))
            return out

        accs = self._loop(0, self.k_dim, 1, "mm.k", init, step)
        for r in range(rows):
            for s in range(len(widths)):
                self._store(accs[r * len(widths) + s], self.c, c_flat[r][s])

    def emit(self, vector_bits: int):
        vw = max(vector_bits // (8 * self.size), 1)
        segs = column_segments(self.n, vw)
        full = [s for s in segs if s[1] == (vw, vw)]
        rest = [s for s in segs if s[1] != (vw, vw)]
        n_full = len(full) * 2 * vw
        m_full = self.m - self.m % MR

        def column_block(j0, widths):
            # rows inside: B's k x NR panel is the same for every row block, so LLVM keeps
            # it in registers across them
            if m_full:
                self._loop(0, m_full, MR, "mm.i", [], lambda i, _: self.block(i, MR, j0, widths) or [])
            if self.m % MR:
                self.block(_I64(m_full), self.m % MR, j0, widths)

        if full:
            self._loop(0, n_full, 2 * vw, "mm.j", [], lambda j, _: column_block(j, (vw, vw)) or [])
        for j0, widths in rest:
            column_block(_I64(j0), widths)


def vector_bits() -> int:
    """The widest vector registers of the CPU kernels are compiled for (512 bits with
    AVX-512, 256 with AVX, else 128)."""
    if VECTOR_BITS:
        return VECTOR_BITS
    from ...codegen.cpu import target_cpu
    features = set(target_cpu()[1].split(","))
    return 512 if "+avx512f" in features else 256 if "+avx" in features else 128


def emit_product(cg, a_buf, b_buf, c_buf, m: int, k_dim: int, n: int, dtype, accumulate: bool, a_strides=None,
                 b_row_stride=None):
    """Emit C (+)= A @ B at the current position (float32 or float64 tiles; C packed, A
    packed or at the (row, column) byte strides `a_strides`, B packed or with its rows
    `b_row_stride` bytes apart (its elements adjacent in a row); the strides are i64
    values; C must not share memory with A or B)."""
    ft = ir.FloatType() if dtype.bits == 32 else ir.DoubleType()
    size = dtype.bits // 8
    a_strides = a_strides or (_I64(k_dim * size), _I64(size))
    b_row_stride = b_row_stride or _I64(n * size)
    _Emitter(cg, a_buf, b_buf, c_buf, m, k_dim, n, ft, size, accumulate, a_strides, b_row_stride).emit(vector_bits())
