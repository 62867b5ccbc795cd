"""BVH builtins: `bvh_query_aabb`, `bvh_query_ray`, `bvh_query_sphere`, `bvh_query_capsule`,
`bvh_query_next` (and `for index in query:`), `bvh_get_group_root`.

Every query kind is one struct type, `BvhQuery`, holding its kind; `bvh_query_next`
dispatches on it at run time, so a query chosen by a runtime branch, or passed to a func
annotated `wp.BvhQuery`, iterates as the kind it was made as. The traversal (a fixed stack
of STACK_SIZE node indices inside the query, the run of primitives of the leaf being
visited) is written in the kernel language in bvh_funcs.py.
"""

from __future__ import annotations

from ..ir.core import Value
from ..types import Scalar, StructType, Vector, float32, int32, uint64, vec3f
from ..types.composite import vector
from .arguments import as_object_id, kernel_funcs
from .hash_grid import ITERATORS
from .registry import Builtin, builtin, primitive

STACK_SIZE = 64
StackType = vector(length=STACK_SIZE, dtype=int32)
AABB, RAY, SPHERE, CAPSULE = 0, 1, 2, 3


class _BvhQueryFields:
    id: uint64
    kind: int32
    count: int32
    node: int32  # the next node to visit (its box passed the test; -1: pop one from the stack)
    fresh: int32  # 1 until the start node's own box was tested
    cur: int32
    end: int32
    bounds_nr: int32
    a: vec3f
    b: vec3f
    radius: float32
    stack: StackType


_BvhQueryFields.__name__ = _BvhQueryFields.__qualname__ = "BvhQuery"
BvhQuery = StructType(_BvhQueryFields)
ITERATORS[BvhQuery] = ("bvh_query_next", int32)

funcs = kernel_funcs(".bvh_funcs")


def as_id(ctx, x, name):
    return as_object_id(ctx, x, name, "id", "the .id of the object")


def as_scalar(ctx, x, t, what):
    """`x` as a `t` scalar: Values of another numeric scalar type are converted."""
    if isinstance(x, Value):
        if not isinstance(x.type, Scalar) or x.type.name == "bool":
            ctx.error(f"{what} must be a number, got {x.type!r}")
        return x if x.type is t else ctx.b.cast(x, t)
    return ctx.coerce(x, t, what=what)


def as_vec3(ctx, x, what):
    if isinstance(x, Value) and isinstance(x.type, Vector) and x.type.length == 3 and x.type.flavor == "vec":
        if x.type is vec3f:
            return x
        ctx.error(f"{what} must be a vec3 (float32), got {x.type!r}")
    return ctx.coerce(x, vec3f, what=what)


def bind(ctx, name, args, kwargs, names, required):
    """Positional and keyword arguments by name; an error naming the builtin otherwise."""
    if len(args) > len(names) or any(k not in names[len(args):] for k in kwargs):
        ctx.error(f"{name}({', '.join(names)}): unexpected arguments")
    given = dict(zip(names, args), **kwargs)
    missing = [n for n in names[:required] if n not in given]
    if missing:
        ctx.error(f"{name}() needs {', '.join(missing)}")
    return given


def _query(ctx, name, kind, args, kwargs, names):
    given = bind(ctx, name, args, kwargs, names + ("root",), len(names))
    bvh = check_id(ctx, as_id(ctx, given["id"], name), name)
    a = as_vec3(ctx, given[names[1]], f"{name}() {names[1]}")
    if kind == SPHERE:
        b = ctx.b.construct(vec3f, [ctx.b.const(0.0, float32)] * 3)
        r = as_scalar(ctx, given[names[2]], float32, f"{name}() radius")
    else:
        b = as_vec3(ctx, given[names[2]], f"{name}() {names[2]}")
        r = ctx.b.const(0.0, float32)
        if kind == CAPSULE:
            r = as_scalar(ctx, given[names[3]], float32, f"{name}() radius")
    root = as_scalar(ctx, given.get("root", -1), int32, f"{name}() root")
    return funcs().query.emit_call(ctx, [bvh, ctx.b.const(kind, int32), a, b, r, root], {}, None)


@builtin("bvh_query_aabb")
def bvh_query_aabb(ctx, args, kwargs):
    """bvh_query_aabb(id, low, high, root=-1): the boxes overlapping [low, high]."""
    return _query(ctx, "bvh_query_aabb", AABB, args, kwargs, ("id", "low", "high"))


@builtin("bvh_query_ray")
def bvh_query_ray(ctx, args, kwargs):
    """bvh_query_ray(id, start, dir, root=-1): the boxes the ray start + t dir (t >= 0) hits."""
    return _query(ctx, "bvh_query_ray", RAY, args, kwargs, ("id", "start", "dir"))


@builtin("bvh_query_sphere")
def bvh_query_sphere(ctx, args, kwargs):
    """bvh_query_sphere(id, center, radius, root=-1): the boxes within `radius` of `center`."""
    return _query(ctx, "bvh_query_sphere", SPHERE, args, kwargs, ("id", "center", "radius"))


@builtin("bvh_query_capsule")
def bvh_query_capsule(ctx, args, kwargs):
    """bvh_query_capsule(id, start, dir, radius, root=-1): the boxes within `radius` of the
    segment start + t dir, t in [0, max_dist] (max_dist given to bvh_query_next)."""
    return _query(ctx, "bvh_query_capsule", CAPSULE, args, kwargs, ("id", "start", "dir", "radius"))


def query_next(ctx, name, args, kwargs, struct, with_max_dist=True):
    names = ("query", "index", "max_dist") if with_max_dist else ("query", "index")
    given = bind(ctx, name, args, kwargs, names, 2)
    q, index = given["query"], given["index"]
    if not (isinstance(q, Value) and q.type is struct):
        ctx.error(f"{name}(): the first argument must be a query made by the matching query builtin")
    if not (isinstance(index, Value) and isinstance(index.type, Scalar) and index.type.is_int):
        ctx.error(f"{name}(): the index must be an int variable")
    md = given.get("max_dist", float("inf"))
    max_dist = as_scalar(ctx, md, float32, f"{name}() max_dist")
    result = funcs().query_next.emit_call(ctx, [q, ctx.b.cast(index, int32), max_dist], {}, None)
    b = ctx.b
    out_index = b.extract(result, 2)
    if index.type is not int32:
        out_index = b.cast(out_index, index.type)
    return [b.extract(result, 1), out_index], b.extract(result, 0)


@builtin("bvh_query_next", inout=(0, 1))
def bvh_query_next(ctx, args, kwargs):
    """bvh_query_next(query, index, max_dist=inf): advance the query; True and the next
    box's index in `index`, or False once every box was visited. For ray and capsule
    queries, `max_dist` bounds the ray parameter."""
    return query_next(ctx, "bvh_query_next", args, kwargs, BvhQuery)


@builtin("bvh_get_group_root")
def bvh_get_group_root(ctx, args, kwargs):
    """bvh_get_group_root(id, group): the root node of the subtree of a group's boxes (a
    BVH built with `groups`), or -1 for a group without boxes."""
    given = bind(ctx, "bvh_get_group_root", args, kwargs, ("id", "group"), 2)
    bvh = check_id(ctx, as_id(ctx, given["id"], "bvh_get_group_root"), "bvh_get_group_root")
    group = as_scalar(ctx, given["group"], int32, "bvh_get_group_root() group")
    return funcs().group_root.emit_call(ctx, [bvh, group], {}, None)


# A traversal stack in memory, for traversals that run to completion inside one call (the
# mesh point and ray queries): `traversal_stack(width=1)` is a slot of STACK_SIZE entries of
# `width` 32-bit words on the thread's native stack (one per call site, allocated once per
# kernel invocation); `stack_push(s, k, v0, ..)` writes entry k (int32 or float32 words)
# and returns k + 1; `stack_read(s, word, dtype=int32)` reads one word (entry k's j-th word
# is word width * k + j). A pop is O(1) where a dynamically indexed vector value costs a
# select per slot. Pushes are calls returning the next count, so the IR never drops them
# while the count is used. The stack's loads and stores carry their own type-based alias
# tag (codegen/memory_ops.tbaa), so LLVM knows that they leave the geometry's reads alone
# and keeps those out of the traversal loops. The values read do not carry gradients; a
# reverse-mode recomputation of such a loop may read slots written later, which only
# changes zero adjoints (results that carry gradients are recomputed from the face found,
# outside the loop).
def _lower_stack_new(cg, args, op):
    from llvmlite import ir
    b = cg.builder
    with b.goto_entry_block():
        slot = b.alloca(ir.ArrayType(ir.IntType(32), STACK_SIZE * args[0].constant))
    return b.ptrtoint(slot, ir.IntType(64))


def _slot(cg, base, k):
    from llvmlite import ir
    b = cg.builder
    offset = b.mul(b.sext(k, ir.IntType(64)), ir.Constant(ir.IntType(64), 4))
    return b.inttoptr(b.add(base, offset), ir.PointerType())


def _lower_stack_push(cg, args, op):
    from llvmlite import ir
    base, k, *values = args
    width = ir.Constant(ir.IntType(32), len(values))
    first = cg.builder.mul(k, width) if len(values) > 1 else k
    for j, v in enumerate(values):
        word = cg.builder.add(first, ir.Constant(ir.IntType(32), j)) if j else first
        cg.builder.store(v, _slot(cg, base, word)).set_metadata("tbaa", cg.tbaa("stack"))
    return cg.builder.add(k, ir.Constant(ir.IntType(32), 1))


def _lower_stack_read(cg, args, op):
    from ..codegen.llvm_types import llvm_type
    base, k = args
    value = cg.builder.load(_slot(cg, base, k), typ=llvm_type(op.results[0].type))
    value.set_metadata("tbaa", cg.tbaa("stack"))
    return value


def _no_stack_rule(ts):
    raise TypeError("traversal_stack_read takes its result type from the call")


_STACK_NEW = primitive("traversal_stack", lambda ts: [uint64], _lower_stack_new,
                       doc="a per-call traversal stack of 32-bit words on the native stack")
_STACK_PUSH = primitive("traversal_stack_push", lambda ts: [int32], _lower_stack_push,
                        doc="write entry k of a traversal stack; returns k + 1")
_STACK_READ = primitive("traversal_stack_read", _no_stack_rule, _lower_stack_read,
                        doc="read a word of a traversal stack")


def _expand_stack_new(ctx, args, kwargs):
    width = args[0] if args else 1
    if not isinstance(width, int) or width < 1:
        ctx.error("traversal_stack(width): the width must be a positive int literal")
    return ctx.b.call(_STACK_NEW, [ctx.b.const(width, int32)])


def _word(ctx, v):
    if isinstance(v, Value) and v.type is float32:
        return v
    return ctx.coerce(v, int32)


def _expand_stack_push(ctx, args, kwargs):
    s, k, *values = args
    return ctx.b.call(_STACK_PUSH, [s, ctx.coerce(k, int32), *(_word(ctx, v) for v in values)])


def _expand_stack_read(ctx, args, kwargs):
    s, k, *dtype = args
    t = dtype[0] if dtype else int32
    if t not in (int32, float32):
        ctx.error("traversal_stack_read(): the type must be int32 or float32")
    return ctx.b.call(_STACK_READ, [s, ctx.coerce(k, int32)], [t])


def _lower_prefetch(cg, args, op):
    from llvmlite import ir
    name = "llvm.prefetch.p0"
    fn = cg.module.globals.get(name)
    if fn is None:
        i32 = ir.IntType(32)
        fn = ir.Function(cg.module, ir.FunctionType(ir.VoidType(), [ir.PointerType(), i32, i32, i32]), name)
    b = cg.builder
    b.call(fn, [b.inttoptr(args[0], ir.PointerType()), ir.Constant(ir.IntType(32), 0),
                ir.Constant(ir.IntType(32), 3), ir.Constant(ir.IntType(32), 1)])
    return []


_PREFETCH = primitive("prefetch", lambda ts: [], _lower_prefetch,
                      doc="a hint to bring the cache line at an address in (for reading)")
_PREFETCH.effects = True


def _expand_prefetch(ctx, args, kwargs):
    ctx.b.call(_PREFETCH, [ctx.coerce(args[0], uint64)])


prefetch = Builtin("prefetch", _expand_prefetch, doc="a cache hint (a traversal's next nodes)")
stack_new = Builtin("traversal_stack", _expand_stack_new, doc="a traversal stack (see above)")
stack_push = Builtin("traversal_stack_push", _expand_stack_push, doc="push on a traversal stack")
stack_read = Builtin("traversal_stack_read", _expand_stack_read, doc="read a traversal stack word")


# `constant_load(base, k, dtype)`: element k of the `dtype` items at address `base`, read as a
# constant of the differentiation: geometry the kernels query (mesh points, velocities) has
# no adjoint array, so, as in Warp, gradients flow to the query and not into the mesh.
def _lower_constant_load(cg, args, op):
    import ctypes

    from llvmlite import ir

    from ..types.layout import ctype_of
    base, k = args
    t = op.results[0].type
    b = cg.builder
    offset = b.mul(b.sext(k, ir.IntType(64)), ir.Constant(ir.IntType(64), ctypes.sizeof(ctype_of(t))))
    return cg.load_value(b.inttoptr(b.add(base, offset), ir.PointerType()), t, "data")


def _no_rule(ts):
    raise TypeError("constant_load takes its result type from the call")


_CONSTANT_LOAD = primitive("constant_load", _no_rule, _lower_constant_load,
                           doc="read an element of geometry data as a constant (no adjoint)")


def _expand_constant_load(ctx, args, kwargs):
    base, k, dtype = args
    return ctx.b.call(_CONSTANT_LOAD, [ctx.coerce(base, uint64), ctx.coerce(k, int32)], [dtype])


constant_load = Builtin("constant_load", _expand_constant_load, doc="a geometry read without adjoint")


def check_id(ctx, d, name, what="BVH"):
    """At the call site of builtin `name`: a launch error (AssertionError) where the id `d`
    is 0 or names a deleted object; unlike the `assert` statement, also outside debug mode."""
    ok = funcs().alive.emit_call(ctx, [d], {}, None)
    ctx.b.op("assert", [ok], [], {"message": f"{name}(): the {what} id is 0 or names a {what} that was deleted"})
    return d
