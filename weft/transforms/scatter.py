"""Arrays a kernel only adds into: candidates for privatised scatter-adds.

A kernel that scatters forces (`atomic_add(f, spring.i, force)`) or an adjoint kernel that
accumulates the gradients of gathered values updates memory through float atomics, which
x86 only has as compare-and-swap loops: on two threads such a kernel runs slower than on
one thread with plain adds. When a parameter array is used for nothing but adds and
subtracts whose results nobody reads, every chunk of a parallel launch may add into a
private zeroed copy of it instead, with plain adds, and the copies are summed into the
array afterwards (runtime/scatter.py decides per launch, and passes the decision to the
kernel in the launch context's `private_mask`). That is Kokkos' duplicated ScatterView and
Dr.Jit's local reduction, chosen by the compiler.
"""

from __future__ import annotations

from ..autodiff.arrays import indexed_by_thread
from ..ir.core import Function, operand_uses, walk
from ..types import ArrayType, Matrix, Scalar, Vector

#: params past this index are never privatised (the mask is 64 bits)
MAX_PARAMS = 64


def scatter_params(fn: Function) -> tuple[int, ...]:
    """Indices of `fn`'s array parameters used only as the target of `atomic` adds and
    subtracts whose results are unused (directly or through a func region's argument)."""
    ops = list(walk(fn.body))
    if not any(op.name == "atomic" for op in ops):
        return ()  # (and no use lists to build: a kernel of 60,000 ops spent 0.3 s on them)
    used = {v.id for op in ops for v in op.operands}
    uses = operand_uses(fn.body)

    def only_added_into(value, part=False) -> bool:
        for op, pos in uses.get(value.id, ()):
            if op.name == "atomic" and pos == 0:
                if op.attrs.get("op") not in ("add", "sub") or op.result.id in used:
                    return False
                if op.attrs.get("private"):
                    return False  # (each thread adds into its own elements: nothing to gain)
                if part and indexed_by_thread(op.operands[1:-1]):
                    return False  # (nor for a part of the thread's own element: the kernel stays scalar)
            elif op.name == "func_region":
                if not only_added_into(op.regions[0].args[pos], part):
                    return False
            elif op.name == "component" and pos == 0:  # (`f[i].y += x`: adds into a part)
                if not only_added_into(op.result, True):
                    return False
            elif op.name != "array_shape":
                return False
        return True

    out = []
    for k, p in enumerate(fn.params[:MAX_PARAMS]):
        t = p.type
        if not isinstance(t, ArrayType) or t.fabric or t.indexed or p.id not in used:
            continue
        dtype = t.dtype.dtype if isinstance(t.dtype, (Vector, Matrix)) else t.dtype
        if not isinstance(dtype, Scalar) or dtype.bits < 32 or dtype.is_bool:
            continue  # (half types add through their own compare-and-swap loops)
        if only_added_into(p):
            out.append(k)
    return tuple(out)
