"""Assignments to a part of an array element: `v[i][2] = x`, `m[i][1, 1] += x`,
`bodies[i].force.y -= f`, `xs[i].p = p` (a transform's translation).

They write that part alone, as Warp does, so threads writing different parts of one element
do not overwrite each other:
- `=` (and `*=`, `/=`, ... which are not atomic in Warp either) reads the element, puts the
  new part in, and stores the element with the `part` attribute: only that part reaches
  memory (its adjoint consumes only that part's gradient). To the analyses it is a store of
  the element, so a later read of the element in the same thread sees the stored value;
- `+=`, `-=`, `&=`, `|=`, `^=` are atomic updates of the part, as `a[i] += x` is of the
  element: through a `component` view of the array (same shape and strides, the part as its
  dtype). That is, where the function does not also read the array (`Part.reads`): an
  accumulation, whose threads may share elements. A function that reads the array it
  updates this way (`v[i].y += g * dt` then `x[i] += v[i] * dt`) owns the elements it
  updates, as a read of an element other threads update would race in Warp too; there the
  update is the read-modify-write of the part above, which the adjoint can replay (and, in
  a loop, ir/promote.py keeps in a register).
The part is named by constant keys, except that the last may index a vector's or a matrix's
components at run time (a `component` view then, for `=` too; an index out of range is an
IndexError after the launch). This holds for plain and indexed arrays. Anything else (a
slice, a matrix row chosen at run time, half-precision elements, Fabric arrays) is read,
updated and written back whole by the general path.
"""

from __future__ import annotations

import ast

from ..builtins import arith
from ..builtins.arith import SWIZZLE
from ..ir.core import Value, constant_value
from ..ir.parts import extract_path, insert_path
from ..types import ArrayType, Matrix, Scalar, StructType, Vector, int32
from ..types.composite import transform_part_type


class Part:
    """A part of an array element that an assignment target names."""

    def __init__(self, arr, indices, path, part_type, of, dynamic, container, reads=False):
        self.reads = reads  # whether the function reads the array elsewhere (see the module docstring)
        self.arr, self.indices = arr, indices
        self.path = path  # struct field indices, then one flat index into vector/matrix components
        self.type = part_type
        self.of, self.dynamic = of, dynamic  # the vector/matrix run-time indices index, and those
        self.container = container  # the vector or matrix it is a component or row of (None: a field)

    def view(self, fc) -> Value:
        """The `component` view of the array whose elements are this part."""
        kind = type(self.arr.type)  # (a plain or an indexed array)
        view = fc.b.op("component", [self.arr, *self.dynamic], [kind(self.type, self.arr.type.ndim)],
                       {"path": self.path, "of": self.of}).result
        view.hint = self.arr.hint
        return view

    def of_element(self, fc, element: Value) -> Value:
        """This (constant) part of `element`."""
        return extract_path(fc.b, element, list(self.path), self.type)

    def with_value(self, fc, element: Value, x: Value) -> Value:
        """`element` with this (constant) part replaced by `x`."""
        return insert_path(fc.b, element, list(self.path), self.type, x)

    def store(self, fc, x: Value):
        """Write `x` into the part: a `part` store of the element, or through the component
        view for a run-time index."""
        if self.dynamic:
            fc.b.op("store", [self.view(fc), *self.indices, x], [])
            return
        element = arith.load(fc, self.arr, self.indices)
        new = self.with_value(fc, element, x)
        fc.b.op("store", [self.arr, *self.indices, new], [], {"part": (self.path, self.type)})

    def load(self, fc) -> Value:
        """The part's current value (read with its element, so that a store just before in
        this thread is seen by the adjoint's analysis as well)."""
        if self.dynamic:
            return arith.load(fc, self.view(fc), self.indices)
        element = arith.load(fc, self.arr, self.indices)
        return self.of_element(fc, element)


def array_part(fc, target) -> Part | None:
    """The part of an array element that assignment target `target` names, or None."""
    steps = []
    node = target
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and _plain_reference(node.value):
            break
        steps.append(node)
        node = node.value
    if not steps or not isinstance(node, ast.Subscript) or not _plain_reference(node.value):
        return None
    arr = fc.expr(node.value)
    if not isinstance(arr, Value) or not isinstance(arr.type, ArrayType) or arr.type.fabric \
            or _has_half(arr.type.dtype):
        return None
    keys = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if len(keys) != arr.type.ndim or any(isinstance(k, ast.Slice) for k in keys):
        return None  # (a view of the array, `a[s:e][i].x`, or a row `a[i][j].x`: the general path)
    found = _part_path(fc, arr.type.dtype, list(reversed(steps)))
    if found is None:
        return None
    indices = fc.indices(node.slice, arr.type.ndim, node, write=True)
    if len(indices) != arr.type.ndim:
        return None
    return Part(arr, indices, *found, reads=_reads(fc, ast.unparse(node.value)))


def _reads(fc, root: str) -> bool:
    """Whether the function's source reads the array `root` names (`v`, `state.x`) other
    than in the targets of its assignments."""
    cache = fc.__dict__.setdefault("_array_reads", {})
    if root not in cache:
        tree = fc.src.tree
        targets = {id(m) for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                   for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) for m in ast.walk(t)}
        cache[root] = any(id(n) not in targets and isinstance(n, (ast.Name, ast.Attribute)) and
                          isinstance(n.ctx, ast.Load) and ast.unparse(n) == root for n in ast.walk(tree))
    return cache[root]


def _plain_reference(node) -> bool:
    """A name or a chain of attributes of a name (`x`, `state.x`): no subscripts in it."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _part_path(fc, t, steps) -> tuple | None:
    """(the path into an element of type `t`: struct field indices, then one flat index into a
    vector's or matrix's components; the type of the part `steps` name; the vector or matrix
    type its run-time indices index, or None; those indices; the vector or matrix the part
    is a component or row of, or None), or None if the steps name no part this way."""
    path, flat, container = [], None, None
    for n, step in enumerate(steps):
        if isinstance(step, ast.Attribute):
            name = step.attr
            if isinstance(t, StructType) and flat is None and name in t.fields:
                path.append(t.field_index(name))
                t, container = t.fields[name], None
            elif isinstance(t, Vector) and t.flavor == "transform" and name in ("p", "q"):
                flat = (flat or 0) + (0 if name == "p" else 3)
                t, container = transform_part_type(t, name), None
            elif isinstance(t, Vector) and len(name) == 1 and name in SWIZZLE[:min(t.length, 4)]:
                flat = (flat or 0) + SWIZZLE.index(name)
                t, container = t.dtype, t
            else:
                return None
            continue
        key = fc.subscript_key(step.slice)
        if any(isinstance(k, slice) for k in key):
            return None
        keys = [_constant_int(k) for k in key]
        shape = (t.length,) if isinstance(t, Vector) else (t.rows, t.cols) if isinstance(t, Matrix) else ()
        if len(keys) != len(shape) and not (isinstance(t, Matrix) and len(keys) == 1):
            return None
        if any(k is None for k in keys):  # run-time indices: only of the last step's components
            if n != len(steps) - 1 or len(keys) != len(shape) or \
                    not all(isinstance(k, Value) and k.type.is_int or _constant_int(k) is not None for k in key):
                return None
            dynamic = [k if isinstance(k, Value) else fc.b.const(k, int32) for k in key]
            path.append(flat or 0)
            return tuple(path), t.dtype, t, dynamic, t
        if not all(-e <= k < e for k, e in zip(keys, shape)):
            return None  # (the general path reports the bad index)
        keys = [k % e for k, e in zip(keys, shape)]
        container = t
        if isinstance(t, Vector):
            flat = (flat or 0) + keys[0]
            t = t.dtype
        elif len(keys) == 2:
            flat = (flat or 0) + keys[0] * t.cols + keys[1]
            t = t.dtype
        else:
            flat = (flat or 0) + keys[0] * t.cols
            t = t.row_type()
    if flat is not None:
        path.append(flat)
    return tuple(path), t, None, [], container


def _constant_int(k):
    if isinstance(k, Value):
        k = constant_value(k)
    return k if isinstance(k, int) and not isinstance(k, bool) else None


def _has_half(t) -> bool:
    """Whether a type holds 16-bit floats (their adjoints are float32 arrays, laid out
    differently)."""
    if isinstance(t, Scalar):
        return t.is_float and t.bits == 16
    if isinstance(t, (Vector, Matrix)):
        return _has_half(t.dtype)
    if isinstance(t, StructType):
        return any(_has_half(f) for f in t.fields.values())
    return False
