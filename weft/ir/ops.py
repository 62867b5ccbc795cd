"""The op kinds of the IR, declared in one table.

Each `OpSpec` lists the operands, results and regions an op has; the verifier checks those
generically and calls the op's own `check` for the rules that are particular to it.
`n_operands=None` means variadic; `n_results=None` means the op decides (its check does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..types import ArrayType, Composite, Matrix, Scalar, StructType, TileType, TupleType, Vector, bool_, int32


@dataclass(frozen=True)
class OpSpec:
    name: str
    n_operands: int | None
    n_results: int | None
    regions: tuple[str, ...] = ()
    attrs: tuple[str, ...] = ()
    effects: bool = False  # writes memory or prints: never removed, never reordered
    terminator: bool = False
    check: Callable | None = None
    doc: str = ""


BINARY_OPS = ("add", "sub", "mul", "div", "floordiv", "mod", "pow",
              "bitand", "bitor", "bitxor", "shl", "shr")
INT_ONLY_BINARY = ("bitand", "bitor", "bitxor", "shl", "shr")
UNARY_OPS = ("neg", "invert", "not")
CMP_PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")
ATOMIC_OPS = ("add", "sub", "min", "max", "and", "or", "xor", "exch", "cas", "claim")  # claim: adjoints only


def component_type(t, index: int):
    """The type of component `index` of composite type `t` (a matrix's components are scalars)."""
    if isinstance(t, (Vector, Matrix)):
        return t.dtype
    if isinstance(t, StructType):
        return t.fields[t.field_names[index]]
    if isinstance(t, TupleType):
        return t.elements[index]
    raise TypeError(f"{t!r} has no components")


def _require(cond: bool, message: str):
    if not cond:
        raise VerifyError(message)


class VerifyError(Exception):
    pass


def _check_binary(op):
    a, b = op.operands
    _require(isinstance(a.type, Scalar) and a.type is b.type, "binary operands must be one scalar type")
    _require(op.attrs["op"] in BINARY_OPS, f"unknown binary op {op.attrs['op']}")
    _require(op.result.type is a.type, "binary result type must equal operand type")
    if op.attrs["op"] in INT_ONLY_BINARY:
        logical = a.type.is_bool and op.attrs["op"] in ("bitand", "bitor", "bitxor")
        _require(a.type.is_int or logical, f"{op.attrs['op']} needs integer (or, for &|^, bool) operands")


def _check_unary(op):
    (a,) = op.operands
    _require(isinstance(a.type, Scalar) and op.result.type is a.type, "unary keeps its scalar type")


def _check_cmp(op):
    a, b = op.operands
    _require(a.type is b.type and isinstance(a.type, Scalar), "cmp operands must be one scalar type")
    _require(op.result.type is bool_, "cmp gives bool")


def _check_select(op):
    c, a, b = op.operands
    _require(c.type is bool_ and a.type is b.type is op.result.type, "select(bool, T, T) -> T")


def _check_construct(op):
    t = op.result.type
    _require(isinstance(t, Composite), "construct builds a composite")
    _require(len(op.operands) == t.num_components, "construct needs one operand per component")
    for i, v in enumerate(op.operands):
        _require(v.type is component_type(t, i), f"construct operand {i} has the wrong type")


def _check_extract(op):
    (agg,) = op.operands
    _require(op.result.type is component_type(agg.type, op.attrs["index"]), "extract type")


def _check_insert(op):
    agg, v = op.operands
    _require(v.type is component_type(agg.type, op.attrs["index"]), "insert value type")
    _require(op.result.type is agg.type, "insert returns the aggregate type")


def _check_dynamic_index(agg, indices):
    """A vector takes one index, a matrix two (row, column); all integers."""
    _require(isinstance(agg.type, (Vector, Matrix)), "dynamic index needs a vector or matrix")
    _require(len(indices) == len(agg.type.shape), f"{agg.type!r} takes {len(agg.type.shape)} index(es)")
    _require(all(isinstance(i.type, Scalar) and i.type.is_int for i in indices), "indices are integers")


def _check_extract_dyn(op):
    agg, *indices = op.operands
    _check_dynamic_index(agg, indices)
    _require(op.result.type is agg.type.dtype, "extract_dyn gives the component type")


def _check_insert_dyn(op):
    agg, *indices, v = op.operands
    _check_dynamic_index(agg, indices)
    _require(v.type is agg.type.dtype and op.result.type is agg.type, "insert_dyn types")


def _check_local_array(op):
    t, shape = op.result.type, op.attrs["shape"]
    _require(isinstance(t, ArrayType) and not (t.indexed or t.fabric) and t.ndim == len(shape)
             and all(isinstance(n, int) and n >= 0 for n in shape), "local_array: an array type of its shape")


def _check_memory(op):
    arr = op.operands[0]
    _require(isinstance(arr.type, ArrayType), f"{op.name} needs an array operand")
    n_idx = arr.type.ndim
    idx = op.operands[1:1 + n_idx]
    _require(len(idx) == n_idx, f"{op.name} needs {n_idx} indices")
    _require(all(isinstance(i.type, Scalar) and i.type.is_int for i in idx), "indices are ints")
    if op.name in ("store", "atomic"):
        _require(len(op.operands) == n_idx + 2, f"{op.name} takes array, indices, value")
        want = arr.type.dtype
        if op.name == "atomic" and op.attrs.get("op") == "cas":  # (compare, value)
            want = TupleType((want, want))
        _require(op.operands[-1].type is want, f"{op.name} value type must be the dtype")
    else:
        _require(len(op.operands) == n_idx + 1, "load takes array and indices")
        _require(op.result.type is arr.type.dtype, "load gives the array dtype")


def _check_slice(op):
    arr, *vals = op.operands
    keys = op.attrs["keys"]
    _require(isinstance(arr.type, ArrayType) and len(keys) <= arr.type.ndim, "slice keys")
    given = sum(1 if k == "i" else sum(k) for k in keys)
    _require(len(vals) == given and all(isinstance(v.type, Scalar) and v.type.is_int for v in vals),
             "slice takes one int per index and per given slice bound")
    out = arr.type.ndim - sum(k == "i" for k in keys)
    _require(op.result.type is ArrayType(arr.type.dtype, out), "slice type")


def _check_make_array(op):
    ptr, *extents = op.operands
    if op.attrs.get("grad"):  # (address, gradient address, *extents)
        grad, *extents = extents
        _require(grad.type.is_int, "make_array's gradient address is an int")
    _require(isinstance(op.result.type, ArrayType) and len(extents) == op.result.type.ndim,
             "make_array takes one extent per dimension")
    _require(ptr.type.is_int and all(e.type.is_int for e in extents), "make_array operands are ints")


def _check_array_grad(op):
    (arr,) = op.operands
    _require(isinstance(arr.type, ArrayType) and not arr.type.indexed and op.result.type is arr.type,
             "array_grad takes an array (not indexed) and gives one of its type")


def _check_view(op):
    arr, *idx = op.operands
    _require(isinstance(arr.type, ArrayType) and 0 < len(idx) < arr.type.ndim, "view indices")
    family = type(arr.type) if arr.type.indexed and not arr.type.fabric else ArrayType
    _require(op.result.type is family(arr.type.dtype, arr.type.ndim - len(idx)), "view type")


def _check_component(op):
    arr, *dynamic = op.operands
    out, of = op.result.type, op.attrs["of"]
    _require(isinstance(arr.type, ArrayType) and not arr.type.fabric and type(out) is type(arr.type)
             and out.ndim == arr.type.ndim, "component view of a plain or indexed array, of its kind")
    t, path = arr.type.dtype, list(op.attrs["path"])
    while path and isinstance(t, StructType):
        k = path.pop(0)
        _require(0 <= k < len(t.fields), "component field index")
        t = list(t.fields.values())[k]
    if of is not None:  # run-time (row[, column]) indices of vector or matrix `of`
        _require(len(path) == 1 and isinstance(t, (Vector, Matrix)) and isinstance(of, (Vector, Matrix))
                 and len(dynamic) == len(of.shape) and all(isinstance(d.type, Scalar) and d.type.is_int
                                                          for d in dynamic), "component indices")
        _require(out.dtype is of.dtype and path[0] + of.num_components <= t.num_components, "component type")
    elif path:  # one flat index into a vector's or matrix's components
        _require(len(path) == 1 and isinstance(t, (Vector, Matrix)) and not dynamic, "component path")
        n = out.dtype.num_components if isinstance(out.dtype, Vector) else 1
        _require(out.dtype is t.dtype or isinstance(out.dtype, Vector) and out.dtype.dtype is t.dtype,
                 "component type")
        _require(0 <= path[0] and path[0] + n <= t.num_components, "component index")
    else:
        _require(out.dtype is t and not dynamic, "component type")


def _check_if(op):
    (cond,) = op.operands
    _require(cond.type is bool_, "if condition must be bool")
    for region in op.regions:
        _require(not region.args, "if regions take no arguments")
        _check_yield(region, [r.type for r in op.results])


def _check_for(op):
    start, stop, step, *inits = op.operands
    _require(start.type is stop.type is step.type and start.type.is_int, "for bounds: one int type")
    (body,) = op.regions
    _require([a.type for a in body.args] == [start.type] + [v.type for v in inits],
             "for body args are (iv, *carried)")
    _require([r.type for r in op.results] == [v.type for v in inits], "for results = carried")
    _check_yield(body, [v.type for v in inits])


def _check_while(op):
    cond, body = op.regions
    types = [v.type for v in op.operands]
    _require([a.type for a in cond.args] == types and [a.type for a in body.args] == types,
             "while regions take the carried values")
    _check_yield(cond, [bool_])
    _check_yield(body, types)
    _require([r.type for r in op.results] == types, "while results = carried")


def _check_func_region(op):
    (body,) = op.regions
    _require([a.type for a in body.args] == [v.type for v in op.operands], "func_region args = operands")
    _check_yield(body, [r.type for r in op.results])


def _check_tile_map(op):
    n_in, n_out, n_sums = op.attrs["n_inputs"], op.attrs["n_out"], op.attrs["n_sums"]
    shape = tuple(op.attrs["shape"])
    inputs, states = op.operands[:n_in], op.operands[n_in:]
    _require(all(isinstance(x.type, TileType) and x.type.shape == shape for x in inputs),
             f"tile_map inputs must be tiles of shape {shape}")
    (body,) = op.regions
    want_args = [int32] * len(shape) + [x.type.dtype for x in inputs] + [x.type for x in states]
    _require([a.type for a in body.args] == want_args, "tile_map body args are (*coords, *elements, *states)")
    term = body.terminator
    _require(term is not None and term.name == "yield", "region must end in yield")
    yielded = [v.type for v in term.operands]
    _require(len(yielded) == n_out + n_sums + len(states), "tile_map yields (*elements, *sums, *states)")
    results = [r.type for r in op.results]
    _require(results[:n_out] == [TileType(t, shape) for t in yielded[:n_out]], "tile_map outputs are tiles")
    _require(results[n_out:] == yielded[n_out:], "tile_map sums and states keep their types")
    _require(yielded[n_out + n_sums:] == [x.type for x in states], "tile_map states keep their types")


def _check_stack(op):
    values = op.operands if op.name == "push" else op.results
    _require(all(not isinstance(v.type, ArrayType) for v in values), f"{op.name} cannot hold arrays")


def _check_yield(block, types):
    term = block.terminator
    _require(term is not None and term.name == "yield", "region must end in yield")
    _require([v.type for v in term.operands] == list(types), "yield types do not match")


SPECS: dict[str, OpSpec] = {s.name: s for s in [
    OpSpec("const", 0, 1, attrs=("value",), doc="a compile-time scalar"),
    OpSpec("binary", 2, 1, attrs=("op",), check=_check_binary),
    OpSpec("unary", 1, 1, attrs=("op",), check=_check_unary),
    OpSpec("cmp", 2, 1, attrs=("pred",), check=_check_cmp),
    OpSpec("cast", 1, 1, doc="scalar conversion to the result type"),
    OpSpec("select", 3, 1, check=_check_select),
    OpSpec("call", None, None, attrs=("fn",), doc="a primitive builtin (see weft.builtins)"),
    OpSpec("construct", None, 1, check=_check_construct),
    OpSpec("extract", 1, 1, attrs=("index",), check=_check_extract),
    OpSpec("insert", 2, 1, attrs=("index",), check=_check_insert),
    OpSpec("extract_dyn", None, 1, check=_check_extract_dyn, doc="(aggregate, *indices)"),
    OpSpec("insert_dyn", None, 1, check=_check_insert_dyn, doc="(aggregate, *indices, value)"),
    OpSpec("tid", 0, 1, attrs=("dim",), doc="thread index along dim (-1: linear)"),
    OpSpec("load", None, 1, check=_check_memory),
    OpSpec("store", None, 0, effects=True, check=_check_memory),
    OpSpec("atomic", None, 1, attrs=("op",), effects=True, check=_check_memory),
    OpSpec("view", None, 1, check=_check_view),
    OpSpec("component", None, 1, attrs=("path", "of"), check=_check_component,
           doc="(array, *indices) the array of one part of its elements (same shape and strides): "
               "`path` is struct field indices, then one flat index into a vector's or matrix's "
               "components, to which, when `of` (that vector or matrix type) is given, the run-time "
               "(row[, column]) indices add; the result's dtype is the part's type"),
    OpSpec("array_shape", 1, 1, attrs=("dim",)),
    OpSpec("array_ptr", 1, 1, doc="address of an array's first element (uint64)"),
    OpSpec("slice", None, 1, attrs=("keys",), check=_check_slice,
           doc="(array, *ints) a view: per leading dim an index ('i') or a slice whose "
               "(start, stop, step) flags say which operands are given"),
    OpSpec("make_array", None, 1, check=_check_make_array,
           doc="(address, *extents) a C-ordered array over raw memory; with attribute grad, "
               "(address, gradient address, *extents): reverse mode accumulates into the gradient "
               "memory (none where that address is 0)"),
    OpSpec("null_array", 0, 1, doc="an array with no elements (a struct's unset array field)"),
    OpSpec("local_array", 0, 1, attrs=("shape",), effects=True, check=_check_local_array,
           doc="a fresh zero-filled C-ordered array of constant shape in the thread's own (stack) "
               "memory: `wp.zeros(shape, dtype)` in a kernel (Warp's fixedarray)"),
    OpSpec("array_grad", 1, 1, check=_check_array_grad,
           doc="(array) the array over its gradient memory (same shape and strides; no elements "
               "where it has no gradient): adjoints of arrays held in structs in memory"),
    OpSpec("if", 1, None, regions=("then", "else"), check=_check_if),
    OpSpec("for", None, None, regions=("body",), check=_check_for),
    OpSpec("while", None, None, regions=("cond", "body"), check=_check_while),
    OpSpec("yield", None, 0, terminator=True),
    OpSpec("return", None, 0, terminator=True),
    OpSpec("call_func", None, None, attrs=("func",), doc="a @func call; removed by inlining"),
    OpSpec("func_region", None, None, regions=("body",), attrs=("func",), check=_check_func_region,
           doc="the inlined body of a @func with a custom grad or replay, run once"),
    OpSpec("tile_map", None, None, regions=("body",), attrs=("shape", "n_inputs", "n_out", "n_sums"),
           check=_check_tile_map,
           doc="(*tiles, *states) run the body once per element (row-major) with the element's "
               "coordinates, the inputs' elements and the states; it yields output elements, "
               "contributions summed over the elements, and the new states"),
    OpSpec("push", None, 0, effects=True, check=_check_stack,
           doc="save values on the thread's AD stack (adjoint kernels: a loop's carried values)"),
    OpSpec("pop", 0, None, effects=True, check=_check_stack,
           doc="take back the values of the matching push, last pushed first"),
    OpSpec("unavailable", 0, 1, attrs=("message",),
           doc="a value an adjoint replay cannot recompute (what an atomic returned): it must be "
               "dead once the adjoint is built (autodiff/reverse.py reports the message if not)"),
    OpSpec("print", None, 0, attrs=("fmt",), effects=True),
    OpSpec("assert", 1, 0, attrs=("message",), effects=True),
]}
