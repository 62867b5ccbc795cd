"""Warp's deterministic mode: which kernels it refuses.

Under `weft.config.deterministic` (or the "deterministic" module option) other than
NOT_GUARANTEED, Warp makes atomics bit-exact on the GPU by rewriting them: an atomic whose
result is unused (`wp.atomic_add(out, i, v)`, `out[i] += v`) on an array of floats becomes a
record, reduced after the kernel in a fixed order (a *scatter target*); an `atomic_add` on an
int32 array whose result is used (`slot = wp.atomic_add(counter, 0, 1)`) becomes a two-pass
slot assignment (a *counter target*). Programs those rewrites cannot keep exact are refused,
on every device, with `WarpDeterminismError`; weft refuses the same programs, so that a
program accepted here is accepted by Warp too.

weft's CPU needs no rewrite: a kernel whose result depends on the order of its threads runs
them one at a time, in order, in deterministic mode (runtime/launch.py). So this module only
checks. The rules, as Warp's (the whole kernel, funcs inlined; order in the source does not
matter, indices are run-time values so any access to the array counts):

- a scatter or counter target may not also be read or written directly (through views too);
- a counter target may not also receive another atomic, nor be a scatter target;
- one scatter target takes one family of atomics (add and sub, or min, or max);
- a used atomic result is a slot only from `atomic_add` on an int32 array;
- an adjoint cannot replay a counter (unless the func holding it has a `func_replay`), and a
  custom grad (`func_grad`) may not assign slots itself.

Kernels of weft's own modules are not checked: their determinism on the CPU is weft's own.
"""

from __future__ import annotations

from ..autodiff.arrays import array_origin
from ..ir.core import Function, Op, walk
from ..lang.errors import WarpDeterminismError
from ..types import ArrayType, Matrix, Scalar, StructType, Vector, int32

_FAMILY = {"add": "add", "sub": "add", "min": "min", "max": "max"}


def _scalar(dtype):
    if isinstance(dtype, (Vector, Matrix)):
        return dtype.dtype
    return dtype if isinstance(dtype, Scalar) else None


def _label(fn: Function, arr) -> str | None:
    """The kernel's name for the memory `arr` reaches (`output`, `holder.values`), or None
    (a kernel-local array, memory the kernel made)."""
    origin, path = array_origin(arr)
    names = {p.id: name for p, name in zip(fn.params, fn.param_names, strict=True)}
    name = names.get(origin.id)
    if name is None:
        return None
    t = origin.type
    for k in path:
        if not isinstance(t, StructType):
            return None
        field = t.field_names[k]
        name, t = f"{name}.{field}", t.fields[field]
    return name


def _uses(fn: Function) -> set:
    return {v.id for op in walk(fn.body) for v in op.operands}


def _refuse(message: str, op: Op | None, kernel: str) -> WarpDeterminismError:
    return WarpDeterminismError(f"Deterministic mode cannot compile this kernel. Cause: {message}",
                                op.loc if op is not None else None, kernel)


def check_forward(fn: Function, kernel: str) -> None:
    """Refuse kernel IR `fn` where Warp's deterministic mode would (see the module doc)."""
    used = _uses(fn)
    scatter: dict = {}  # label -> (family, op)
    counter: dict = {}  # label -> op
    other_atomics: dict = {}  # label -> op: atomics deterministic mode leaves alone (int, result unused)
    reads: dict = {}
    writes: dict = {}
    for op in walk(fn.body):
        if op.name not in ("load", "store", "atomic"):
            continue
        label = _label(fn, op.operands[0])
        if label is None:
            continue
        if op.name == "load":
            reads.setdefault(label, op)
            continue
        if op.name == "store":
            writes.setdefault(label, op)
            continue
        kind, scalar = op.attrs["op"], _scalar(op.operands[0].type.dtype)
        if op.result.id in used:
            if kind not in _FAMILY:
                continue  # (Warp leaves a used bitwise, cas or exch result to the hardware)
            if kind != "add":
                raise _refuse(f"the kernel uses the value returned by atomic_{kind}(), but stable slot "
                              "assignment supports only the return value of atomic_add(). Fix: do not use "
                              "this atomic return value, or disable deterministic mode for this kernel.",
                              op, kernel)
            if scalar is not int32:
                raise _refuse("the kernel uses the return value of atomic_add() as a slot, but the counter "
                              f"{label!r} is not an int32 array. Fix: use an int32 counter, do not use the "
                              "atomic return value, or disable deterministic mode for this kernel.", op, kernel)
            counter.setdefault(label, op)
        elif kind in _FAMILY and scalar is not None and scalar.is_float:
            family = _FAMILY[kind]
            seen = scatter.setdefault(label, (family, op))
            if seen[0] != family:
                raise _refuse(f"array {label!r} receives both {seen[0]!r} and {family!r} atomic operations. "
                              "Fix: write each operation to a separate array, or split them into separate "
                              "kernel launches.", op, kernel)
        else:
            other_atomics.setdefault(label, op)
    for label, op in counter.items():
        if label in scatter:
            raise _refuse(f"array {label!r} is used both for deterministic accumulation and for "
                          "atomic_add() slot assignment. Fix: use separate arrays or split the operations "
                          "into separate kernel launches.", op, kernel)
        if label in other_atomics:
            raise _refuse(f"array {label!r} is used both to assign slots from the return value of "
                          "atomic_add() and by another atomic operation. Fix: use separate arrays or split "
                          "the operations into separate kernel launches.", other_atomics[label], kernel)
    for label in (*counter, *scatter):
        for accesses, operation in ((reads, "read directly"), (writes, "written directly")):
            if label in accesses:
                raise _refuse(f"array {label!r} receives deterministic atomic updates and is also {operation}. "
                              "Warp would change the operation order. Fix: use separate input and output "
                              "arrays, or split the direct access and atomic update into separate kernel "
                              "launches.", accesses[label], kernel)


def _replayed_counters(block, used: set):
    """The slot counters an adjoint would replay: used atomic_add results outside funcs that
    have a custom replay."""
    for op in block.ops:
        if op.name == "func_region" and getattr(op.attrs["func"], "custom_replay", None) is not None:
            continue
        if op.name == "atomic" and op.attrs["op"] == "add" and op.result.id in used:
            yield op
        for region in op.regions:
            yield from _replayed_counters(region, used)


def check_adjoint(forward: Function, build_adjoint, kernel: str) -> None:
    """Refuse the adjoint of kernel IR `forward` where Warp does: a slot counter its replay
    would run again, or (in the adjoint kernel's IR, which `build_adjoint()` returns) a
    custom grad that assigns slots (a used atomic_add result)."""
    for op in _replayed_counters(forward.body, _uses(forward)):
        if _label(forward, op.operands[0]) is not None:
            raise WarpDeterminismError(
                f"Deterministic mode cannot differentiate kernel {kernel!r} automatically. Cause: the forward "
                "kernel uses the value returned by atomic_add() as a slot, but the counter has changed by the "
                "time the backward kernel runs. Fix: save the forward slot mapping and return it from "
                "@wp.func_replay, set enable_backward=False when the kernel is not differentiable, or disable "
                "deterministic mode for this kernel.", op.loc, kernel)
    adjoint = build_adjoint()
    used = _uses(adjoint)
    for op in walk(adjoint.body):
        if op.name == "atomic" and op.attrs["op"] == "add" and op.result.id in used and \
                isinstance(op.operands[0].type, ArrayType) and _scalar(op.operands[0].type.dtype) is int32:
            raise WarpDeterminismError(
                "Deterministic mode cannot differentiate this kernel automatically. Cause: a custom adjoint "
                "(@wp.func_grad) uses the value returned by atomic_add() as a slot. Fix: assign the slots in "
                "the forward pass, or disable deterministic mode for this kernel.", op.loc, kernel)
