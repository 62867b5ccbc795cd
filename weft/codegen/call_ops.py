"""Kept calls (ir/outline.py): a func that a very large kernel calls from many places, emitted
once as an internal LLVM function that LLVM's inliner inlines where it pays.

The function takes the launch context (where its errors go, as the kernel's do) and the
thread index, then its arguments' scalar leaves; it returns its result's leaves as a
literal struct. Its body is lowered by the same handlers as the kernel's, with the state
they read (builder, values, the function being built) set for it meanwhile.
"""

from __future__ import annotations

import llvmlite.ir as ir

from ..ir.core import Function
from .llvm_types import CTX_TYPE, I32, PTR

# the lowering state a kept call's function has its own of (restored after it)
_STATE = ("func", "builder", "values", "ctx_ptr", "thread_index", "scratch", "active", "tids", "restart",
          "vector_mode", "lane")


class CallOps:
    """Lowers `call_func` ops that carry a body (see the module docstring). `kept`: id of an
    IR body -> the body as codegen lowers it (KernelCodegen.__init__)."""

    kept: dict = {}

    def op_call_func(self, op):
        f = self._kept_function(self.kept[id(op.attrs["body"])])
        b = self.builder
        args = [self.ctx_ptr, self.thread_index]
        args += [leaf for v in op.operands for leaf in self.leaves(self.v(v), v.type)]
        out = b.call(f, args)
        leaves = iter([b.extract_value(out, k) for k in range(len(f.function_type.return_type.elements))])
        return [self.from_leaves(r.type, leaves) for r in op.results]

    def _kept_function(self, body: Function) -> ir.Function:
        functions = self.__dict__.setdefault("_kept_functions", {})
        f = functions.get(id(body))
        if f is not None:
            return f
        ret = body.body.ops[-1]  # (a func's body ends in its one `return`)
        ret_type = ir.LiteralStructType([lt for v in ret.operands for lt in self.leaf_types(v.type)])
        params = [PTR, I32] + [lt for p in body.params for lt in self.leaf_types(p.type)]
        name = "".join(c if c.isalnum() else "_" for c in body.name)
        f = ir.Function(self.module, ir.FunctionType(ret_type, params), f"weft_func_{name}_{len(functions)}")
        f.linkage = "internal"
        functions[id(body)] = f
        saved = {k: getattr(self, k) for k in _STATE}
        try:
            # (the entry block only sets up and branches: allocas go to its top, _entry_alloca,
            # which would move the place of a builder still filling it)
            b = self.builder = ir.IRBuilder(f.append_basic_block("entry"))
            self.func, self.ctx_ptr, self.thread_index = f, f.args[0], f.args[1]
            self.scratch = b.load(b.gep(f.args[0], [I32(0), I32(5)], source_etype=CTX_TYPE), typ=PTR)
            start = f.append_basic_block("body")
            b.branch(start)
            b.position_at_end(start)
            self.active, self.tids, self.restart, self.vector_mode, self.lane = frozenset(), {}, None, False, None
            leaves = iter(f.args[2:])
            self.values = {p.id: self.from_leaves(p.type, leaves) for p in body.params}
            for op in body.body.ops[:-1]:
                self.emit(op)
            out = ir.Constant(ret_type, ir.Undefined)
            flat = [leaf for v in ret.operands for leaf in self.leaves(self.v(v), v.type)]
            for k, leaf in enumerate(flat):
                out = self.builder.insert_value(out, leaf, k)
            self.builder.ret(out)
        finally:
            for k, v in saved.items():
                setattr(self, k, v)
        return f
