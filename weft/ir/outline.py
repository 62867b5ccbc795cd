"""Large funcs kept as calls in very large kernels.

weft inlines every `@func` call (passes.inline_calls): a kernel is one body, which is what
its analyses and its reverse pass need. Real collision code calls the same large funcs from
many places: mujoco_warp's GJK/EPA kernel is 58,000 ops once inlined, 6.5 copies of its 39
funcs' 8,900 ops, and LLVM's time grows faster than the code (70 s to compile where Warp,
whose C++ keeps calls, takes 13).

So a kernel whose inlined body would pass OUTLINE_KERNEL_OPS keeps its calls to funcs that
compute values only (`outlinable`: no arrays, memory, tiles, prints or thread indices, at
least OUTLINE_FUNC_OPS ops inlined): such a `call_func` gets the callee's body as its
attribute `body` (a Function whose own large calls are kept the same way), which codegen
emits once as an LLVM function (codegen/call_ops.py) and LLVM's inliner then inlines where
it pays. Every other call is inlined as before, from the callee's body with its kept calls.
Nothing changes for kernels below the size: their IR is the same as without this pass.

A body computes from its arguments alone, so the passes that follow (which move array
elements and remove dead code) see a kept call as one pure op. Whatever needs whole bodies
(the reverse pass, the checked variant of `detect_anomaly`) takes `inline_kept_calls(fn)`.
"""

from __future__ import annotations

import copy

from .core import Block, Function, rename_uses, walk
from .passes import clone_block, clone_op, dead_code, inline_calls
from .verify import verify

#: kernels whose body, every call inlined, would have more ops than this keep large calls.
#: Kept calls cost run time where LLVM does not inline them back: newton's MPR + GJK kernel
#: (38,000 ops) compiled in 17 s instead of 20 but ran 16% slower; mujoco_warp's GJK/EPA
#: kernel (58,000) compiles in 47 s instead of 70.
OUTLINE_KERNEL_OPS = 40_000
#: the fewest ops (inlined) a func needs to be kept as a call
OUTLINE_FUNC_OPS = 150

# the ops a kept func's body may hold (values only: no memory, effects, tiles or tid)
_VALUE_OPS = frozenset(("const", "binary", "unary", "cmp", "cast", "select", "call", "construct", "extract",
                        "insert", "extract_dyn", "insert_dyn", "if", "for", "while", "yield", "return"))


def outline_large_calls(fn: Function) -> Function:
    """`fn` (a kernel's IR from the frontend, calls not inlined) with its calls expanded as
    the module docstring says, in place, if its inlined body would pass OUTLINE_KERNEL_OPS;
    else `fn` unchanged (inline_calls inlines it)."""
    if _inlined_size(fn) <= OUTLINE_KERNEL_OPS:
        return fn
    _expand(fn.body, {})
    return fn


def inline_kept_calls(fn: Function) -> Function:
    """A copy of `fn` with every kept call inlined (`fn` itself if it has none)."""
    if not any(op.name == "call_func" for op in walk(fn.body)):
        return fn
    out = copy.copy(fn)
    out.body = clone_block(fn.body, {})
    _strip_bodies(out.body)
    return inline_calls(out)


def kept_bodies(fn: Function) -> list[Function]:
    """The bodies of `fn`'s kept calls, and theirs, each once, callees first."""
    seen: dict[int, Function] = {}

    def visit(f):
        for op in walk(f.body):
            body = op.attrs.get("body") if op.name == "call_func" else None
            if body is not None and id(body) not in seen:
                visit(body)
                seen[id(body)] = body
    visit(fn)
    return list(seen.values())


def _strip_bodies(block: Block):
    """Drop the `body` of the calls in `block` (cloned ops: their attrs are their own), so
    that inline_calls inlines them."""
    for op in walk(block):
        if op.name == "call_func" and "body" in op.attrs:
            op.attrs = {k: v for k, v in op.attrs.items() if k != "body"}


def _inlined_size(fn: Function) -> int:
    """How many ops `fn` would have with every call inlined."""
    sizes: dict[int, int] = {}
    total = 0
    for op in walk(fn.body):
        total += 1
        if op.name == "call_func":
            instance = op.attrs["func"]
            if id(instance) not in sizes:
                sizes[id(instance)] = sum(1 for _ in walk(instance.ir().body))
            total += sizes[id(instance)]
    return total


def outlinable(instance) -> bool:
    """Whether calls of `instance` (a FunctionInstance) may be kept: a func of values (its
    parameters and result scalars, vectors, matrices, or structs and tuples of them) whose
    inlined body only computes (_VALUE_OPS, builtins without effects) and is not small."""
    if not _expandable(instance):
        return False
    full = instance.ir()
    if getattr(full, "tile_writeback", ()) or full.ret_type is None:
        return False
    if not all(_plain(t) for t in (*(p.type for p in full.params), full.ret_type)):
        return False
    count = 0
    for op in walk(full.body):
        count += 1
        if op.name not in _VALUE_OPS:
            return False
        if op.name == "call":
            f = op.attrs["fn"]
            if getattr(f, "effects", True) or getattr(f, "native", True) or getattr(f, "inout", True):
                return False
        if not all(_plain(v.type) for v in (*op.operands, *op.results)):
            return False
    return count >= OUTLINE_FUNC_OPS


def _plain(t) -> bool:
    """A value type that a kept call passes as its scalar leaves."""
    from ..types import Matrix, Scalar, StructType, TupleType, Vector
    if isinstance(t, Scalar):
        return True
    if isinstance(t, (Vector, Matrix)):
        return isinstance(t.dtype, Scalar)
    if isinstance(t, StructType):
        return all(_plain(ft) for ft in t.fields.values())
    if isinstance(t, TupleType):
        return all(_plain(e) for e in t.elements)
    return False


def _expand(block: Block, bodies: dict):
    """Give the calls in `block` that are kept their body; inline the others from their
    bodies (func_region calls, of custom gradients, are left to inline_calls)."""
    out, mapping = [], {}
    for op in block.ops:
        rename_uses(op, mapping)
        for region in op.regions:
            _expand(region, bodies)
        instance = op.attrs.get("func") if op.name == "call_func" and "body" not in op.attrs else None
        if instance is None or not _expandable(instance):
            out.append(op)  # (inline_calls inlines it as before)
            continue
        body = _body(instance, bodies)
        if outlinable(instance):
            op.attrs = {**op.attrs, "body": body}
            out.append(op)
            continue
        inner = dict(zip((p.id for p in body.params), op.operands))
        cloned = [clone_op(o, inner) for o in body.body.ops]
        out.extend(cloned[:-1])  # (ops keep the callee's locations: errors point into it)
        for r, v in zip(op.results, cloned[-1].operands):
            mapping[r.id] = v
    block.ops = out


def _expandable(instance) -> bool:
    """Whether this pass expands calls of `instance` (else inline_calls does): not funcs with
    custom gradients (kept whole as func regions), C++ snippets or `wp.ref` parameters."""
    overload = getattr(instance, "overload", None)  # (None: another kind of call, `wp.grad(f)`'s)
    return overload is not None and not (getattr(instance, "custom_grad", None) or getattr(
        instance, "custom_replay", None) or getattr(instance.func, "native", False) or overload.ref_params)


def _body(instance, bodies: dict) -> Function:
    """`instance`'s IR with its own calls expanded (_expand), built once per kernel IR."""
    body = bodies.get(id(instance))
    if body is None:
        body = instance.ir_with_calls()
        _expand(body.body, bodies)
        body = verify(dead_code(inline_calls(body)))  # (the calls _expand leaves: `wp.grad(f)`'s)
        bodies[id(instance)] = body
    return body
