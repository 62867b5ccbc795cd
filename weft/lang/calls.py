"""Frontend calls: builtins, funcs, types as constructors, and conversions of values."""

from __future__ import annotations

import ast
import numbers

import numpy as np

from ..builtins import arith, array_ops
from ..builtins.registry import BUILTINS, Builtin
from ..builtins.signatures import misfit, positional
from ..ir.core import Op, Value, constant_value
from ..runtime import array_create
from ..runtime.array import array as runtime_array
from ..types import (
    PYTHON_TYPES,
    ArrayType,
    CompositeValue,
    Matrix,
    Scalar,
    StructType,
    StructValue,
    TileType,
    TupleType,
    Type,
    Vector,
    bool_,
    int32,
)
from ..types.scalars import SCALAR_VALUES
from . import constructors, promotion
from .ast_helpers import (
    _PY_ALIASES,
    _describe,
)
from .native import AddressOf, NativeFunc, address_of
from .static_eval import evaluate_static, static_key

# weft's host allocators, which a kernel cannot call
_ALLOCATORS = (array_create.zeros, array_create.empty, array_create.ones, array_create.full)
# builtins whose state may be an array element (Warp's tests pass `states[tid]`): the
# element is read into a temporary, which the draw advances; the array keeps its value.
# RNG builtins whose state argument may be any expression: an array element or a struct field
# (`states[i]`, `walker.rng`) is advanced in a copy, as in Warp, where it is not updated
_BY_VALUE_STATE = frozenset({"poisson", "sample_cdf", "randf", "randi", "randu", "randn", "sample_triangle",
                             "sample_unit_ring", "sample_unit_disk", "sample_unit_sphere_surface",
                             "sample_unit_sphere", "sample_unit_hemisphere_surface", "sample_unit_hemisphere",
                             "sample_unit_square", "sample_unit_cube"})


class CallsMixin:
    """Call handling of `FunctionCompiler`: dispatch to builtins, funcs and types; value coercion."""

    def expr_Call(self, node):
        if static_key(node) in (getattr(self.src, "eager_statics", None) or {}):
            return evaluate_static(self, node)  # (evaluated at definition, through any alias of static)
        func = self.callee(node.func)
        if func is arith.STATIC:
            if len(node.args) != 1 or node.keywords:
                self.error("static() takes one expression", node)
            return evaluate_static(self, node)
        if func is address_of:
            self._address_of(node)  # (a constant's error first: its message says what to write)
            self.error("wp.address_of(x) is an argument of a C++ snippet (@wp.func_native) call in weft: "
                       "pass it for the snippet's wp.uint64 parameter", node)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.starred_items(a.value))
            else:
                args.append(self._argument(a, func))
        kwargs = {k.arg: self._argument(k.value, func) for k in node.keywords}
        if None in kwargs:
            self.error("**kwargs in calls is not supported", node)
        return self.call(func, args, kwargs, node)

    def _argument(self, node, func):
        """A call argument's value; `wp.address_of(x)` passed to a C++ snippet: x and where it is."""
        if isinstance(node, ast.Call) and isinstance(func, NativeFunc) \
                and self.py_eval_or_none(node.func) is address_of:
            return self._address_of(node)
        return self.expr(node)

    def _address_of(self, node) -> AddressOf:
        """`wp.address_of(x)`: x must be storage (a variable, an element, a field), not a constant."""
        if len(node.args) != 1 or node.keywords:
            self.error("wp.address_of() takes exactly one positional argument", node)
        target = node.args[0]
        if not isinstance(target, (ast.Name, ast.Attribute, ast.Subscript)):
            self.error(f"wp.address_of({ast.unparse(target)}): pass a variable, an array element or a "
                       f"field, which has storage (a literal or a call's result has none)", target)
        value = self.expr(target)
        literal = isinstance(value, Value) and isinstance(value.owner, Op) and value.owner.attrs.get("literal")
        if not isinstance(value, Value) or literal:
            hint = "a variable"
            if isinstance(target, ast.Name) and literal:
                hint = f"`{target.id} = wp.{value.type.name}({constant_value(value)!r})`"
            elif isinstance(target, ast.Name) and promotion.is_weak(value):
                hint = f"`{target.id} = wp.{promotion.default_type(value).name}({value!r})`"
            self.error(f"wp.address_of({ast.unparse(target)}): a compile-time constant has no storage; "
                       f"declare it with its type, e.g. {hint}", target)
        return AddressOf(value, target)

    def starred_items(self, node):
        """The values `*x` passes to a call: the elements of a tuple, the components of a
        vector or quaternion, the rows of a matrix, or the elements `a[i:j:k]` of a 1-D array
        slice with constant bounds (the number of arguments is fixed when compiling)."""
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            base = self.expr(node.value)
            if isinstance(base, Value) and isinstance(base.type, ArrayType):
                return self._starred_array_slice(base, node.slice)
        x = self.expr(node)
        if isinstance(x, tuple):
            return list(x)
        if isinstance(x, Value):
            t = x.type
            if isinstance(t, Matrix):
                return [arith.get_item(self, x, (r,)) for r in range(t.rows)]
            if isinstance(t, (Vector, TupleType)):
                return [self.b.extract(x, i) for i in range(t.num_components)]
        what = repr(x.type) if isinstance(x, Value) else type(x).__name__
        self.error(f"Starred expressions are only supported for tuples, vectors, quaternions, matrices "
                   f"and 1-D array slices with constant bounds, got {what}", node, kind=TypeError)

    def _starred_array_slice(self, arr: Value, key: ast.Slice):
        if arr.type.ndim != 1:
            self.error(f"*a[i:j] unpacks 1-D arrays only, got a {arr.type.ndim}-D array", key, kind=TypeError)
        bounds = []
        for n in (key.lower, key.upper, key.step):
            v = None if n is None else self.expr(n)
            if isinstance(v, Value):
                v = constant_value(v)
                if v is None:
                    self.error("Slice component must be a compile-time constant when unpacking an array "
                               "(the number of arguments is fixed when compiling)", n, kind=ValueError)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer))):
                self.error(f"slice bounds must be integers, got {v!r}", n, kind=TypeError)
            bounds.append(None if v is None else int(v))
        start, stop, step = bounds
        if stop is None:
            self.error("unpacking an array slice requires explicit upper bound (an array's length is "
                       "only known at launch)", key, kind=ValueError)
        if step is not None and step <= 0:
            self.error("when unpacking an array slice, the step cannot be negative or zero", key, kind=ValueError)
        if (start or 0) < 0 or stop < 0:
            self.error("slice bounds cannot be negative for arrays when unpacking (the array's length "
                       "is only known at launch)", key, kind=ValueError)
        return [arith.load(self, arr, [self.b.const(i, int32)]) for i in range(start or 0, stop, step or 1)]

    def callee(self, func_node):
        """What a call calls; a function missing from a module is reported as such."""
        if isinstance(func_node, ast.Attribute):
            base = self.expr(func_node.value)
            if isinstance(base, Value):
                return arith.get_attr(self, base, func_node.attr)
            if not hasattr(base, func_node.attr):
                self.error(f"Could not find function {ast.unparse(func_node)}", func_node, kind=AttributeError)
            return getattr(base, func_node.attr)
        return self.expr(func_node)

    def call(self, func, args, kwargs, node):
        from .function import Func
        from .grad import GradOf

        if isinstance(func, Builtin) or (callable(func) and func in _PY_ALIASES):
            builtin = func if isinstance(func, Builtin) else BUILTINS[_PY_ALIASES[func]]
            given = (args, kwargs)
            if kwargs and (ordered := positional(builtin.name, args, kwargs)) is not None:
                args, kwargs = ordered, {}  # keyword arguments by Warp's parameter names
            result = builtin.expand(self, args, kwargs)
            # (after the builtin's own checks, whose messages say more: what it did not use)
            if (problem := misfit(builtin.name, *given)) is not None:
                self.error(problem, node, kind=TypeError)
            if builtin.inout:
                result = self._rebind_inout(builtin, node, result, args)
            return result
        if constructors.builds_value(func, args, kwargs):  # wp.vector(x, y, z), wp.transformation(p, q)
            return constructors.construct(self, func, args, kwargs, node)
        if func is type and len(args) == 1 and not kwargs and isinstance(args[0], Value):
            return args[0].type  # a weft type: callable as a constructor or cast
        if isinstance(func, (Func, GradOf)):
            return func.emit_call(self, args, kwargs, node)
        if func is runtime_array:  # weft.array(ptr=..., shape=..., dtype=...)
            return array_ops.array_from_ptr(self, args, kwargs)
        if func in PYTHON_TYPES:
            func = PYTHON_TYPES[func]
        elif isinstance(func, type) and issubclass(func, np.number):  # np.float32(x): Warp's float32
            from ..types.introspect import dtype_from_numpy
            func = dtype_from_numpy(func)
        if isinstance(func, StructType):
            return self.construct_struct(func, args, kwargs, node)
        if isinstance(func, Type):
            return arith.construct(self, func, args, kwargs)
        if func in (range,):
            self.error("range(...) can only be used in a for loop", node)
        if func is slice:  # slice(start, stop, step): a key for tiles (its bounds checked where used)
            return slice(*args)
        if func is array_create.zeros:  # a fixed-size array in the thread's own memory
            return array_ops.local_array(self, args, kwargs)
        if func in _ALLOCATORS:
            self.error(f"{func.__name__}() inside a kernel: only zeros(shape, dtype) makes a (fixed-size, "
                       "zero-filled) array inside a kernel; fill it there, or pass an array in", node)
        constant_args = all(not isinstance(a, Value) for a in [*args, *kwargs.values()])
        if constant_args and _pure(func):
            try:
                return func(*args, **kwargs)  # a pure function of constants (math.sqrt(2.0)): fold it
            except Exception as e:  # noqa: BLE001
                self.error(f"calling {_describe(func)} at compile time failed: {e}", node)
        name = getattr(func, "__name__", None)
        if _math_module(func) and name in BUILTINS:  # math.sqrt(x), np.sin(x): Warp's builtins by name
            return self.call(BUILTINS[name], args, kwargs, node)
        if callable(func) and (getattr(func, "__module__", None) or "").startswith("weft."):
            self.error(f"'{_describe(func)}' works in Python scope only; it cannot be called inside a kernel",
                       node)
        if callable(func) and not isinstance(func, type) and name is not None:
            call = f"{ast.unparse(node.func)}(...)" if isinstance(node, ast.Call) else f"{name}(...)"
            self.error(f"'{_describe(func)}' is not a weft builtin or @weft.func, so it cannot be called "
                       f"inside a kernel: mark it @weft.func, or write wp.static({call}) to call it once "
                       "when the kernel compiles", node)
        self.error(f"'{_describe(func)}' cannot be called inside a kernel (not a weft builtin, "
                   f"@weft.func or type)", node)

    def construct_struct(self, t: StructType, args, kwargs, node):
        """`S(...)` in a kernel: field values by position (declaration order), then by
        name; fields not given are zero (arrays: an empty array)."""
        if t.invalid_fields:
            self.error(next(iter(t.invalid_fields.values())), node)
        if len(args) > len(t.field_names):
            self.error(f"struct {t.name} has {len(t.field_names)} field(s) "
                       f"({', '.join(t.field_names)}), got {len(args)} values", node)
        given = dict(zip(t.field_names, args))
        for name, value in kwargs.items():
            if name not in t.fields:
                self.error(f"struct {t.name} has no field '{name}'", node)
            if name in given:
                self.error(f"struct {t.name}: field '{name}' given twice", node)
            given[name] = value
        fields = [self.coerce(given[name], ft, node, what=f"field '{name}' of {t.name}")
                  if name in given else arith.zero(self, ft)
                  for name, ft in t.fields.items()]
        return self.b.construct(t, fields)

    def rebind(self, name: str, value, what: str):
        """Give variable `name` a new value that no assignment in the source names (a tile
        view's source, a tile a func updated): inside a loop, only a variable the loop
        already carries (or one defined in it) may change this way."""
        from .ast_helpers import NeedLoopCarry
        for loop in self.loops:
            carried = loop.get("carried")
            if carried is not None and name not in carried and name in loop["outer"]:
                raise NeedLoopCarry(loop["key"], name)  # compiled again, the loop carrying it
        self.scope[name] = value

    def _rebind_inout(self, builtin, node, result, args):
        new_states, value = result
        for pos, new_state in zip(builtin.inout, new_states):
            if new_state is None:
                continue  # this call's form updates nothing (tile_matmul(a, b) returns its product)
            arg = node.args[pos] if pos < len(node.args) else None
            if builtin.name in _BY_VALUE_STATE and arg is not None and not isinstance(arg, ast.Name):
                # an array element, a struct field or a temporary (randf(rand_init(seed, i))):
                # advanced in a copy, as in Warp (the array or struct is unchanged)
                continue
            given = args[pos] if pos < len(args) else None
            if not isinstance(arg, ast.Name) and isinstance(given, Value) and \
                    given.id in self.__dict__.get("_tile_views", {}):
                from ..builtins.tiles.core import write_through  # `tile_assign(t[1], ...)`: into t
                write_through(self, given, new_state, builtin.name)
                continue
            if not isinstance(arg, ast.Name) or arg.id not in self.scope:
                self.error(f"{builtin.name}: argument {pos + 1} must be a local variable "
                           f"(it is updated in place)", node)
            old = self.scope[arg.id]
            self.scope[arg.id] = new_state
            if isinstance(old, Value) and isinstance(old.type, TileType):
                from ..builtins.tiles.core import write_through
                self.scope[arg.id] = write_through(self, old, new_state, builtin.name)
        return value

    def _is_tid(self, func_node) -> bool:
        f = self.py_eval_or_none(func_node)
        return isinstance(f, Builtin) and f.name == "tid"

    # Helpers used by builtins --------------------------------------------------------------
    def materialize(self, x) -> Value:
        """A Value for `x`: Values pass through; weak constants get their default type."""
        if isinstance(x, Value):
            return x
        if isinstance(x, tuple):
            parts = [self.materialize(p) for p in x]
            return self.b.construct(TupleType(tuple(p.type for p in parts)), parts)
        if promotion.is_weak(x):
            t = promotion.default_type(x)
            if not promotion.fits(x, t):
                self.error(f"the constant {x!r} does not fit {t!r}; give it a type, e.g. "
                           f"int64({x!r})")
            value = self.b.const(x.item() if isinstance(x, SCALAR_VALUES) else x, t)
            if isinstance(x, (int, float)) and not isinstance(x, bool):  # (see arith.literal_of)
                value.owner.attrs["literal"] = True
            return value
        if isinstance(x, CompositeValue):
            return self.b.construct(x.type, [self.b.const(c, x.type.dtype) for c in x._data])
        if isinstance(x, StructValue):  # a struct from Python (static, a global): its values
            return self.b.construct(x._type, [
                arith.zero(self, ft) if getattr(x, name) is None
                else self.coerce(getattr(x, name), ft, what=f"field '{name}' of {x._type.name}")
                for name, ft in x._type.fields.items()])
        self.error(f"{_describe(x)} is not a value", kind=TypeError)

    def tuple_value(self, items: tuple, old=None):
        """A tuple bound to a name, as Warp has it: one value (a TupleType) when it holds a
        run-time value, so that branches and loops can rebind it; a variable that is one
        already keeps its element types (constants convert to them). A tuple of constants,
        or one holding arrays, tiles or functions, stays a Python tuple (a shape, say)."""
        def plain(x):
            return promotion.is_weak(x) or isinstance(x, Value) and (
                isinstance(x.type, (Scalar, StructType)) or x.type.is_composite and not isinstance(x.type, TileType))
        keep = isinstance(old, Value) and isinstance(old.type, TupleType) and len(old.type.elements) == len(items)
        if not all(plain(x) for x in items) or not (keep or any(isinstance(x, Value) for x in items)):
            return items
        if keep:
            parts = [self.coerce(x, t, what=f"element {k} of the tuple")
                     for k, (x, t) in enumerate(zip(items, old.type.elements))]
        else:
            parts = [self.materialize(x) for x in items]
        return self.b.construct(TupleType(tuple(p.type for p in parts)), parts)

    def coerce(self, x, want, node=None, what="value", bit_patterns=False):
        """`x` as a Value of type `want`: weak constants convert if they fit; else an error.
        `bit_patterns` (stores and assignments): an int literal that is a bit pattern of an
        integer `want` wraps to it (promotion.bit_pattern)."""
        if isinstance(x, Value):
            if x.type is want:
                return x
            self.error(f"{what} has type {x.type!r} but {want!r} is expected"
                       + (f"; convert it with {want!r}(...)" if isinstance(want, Scalar) else ""),
                       node, kind=TypeError)
        if promotion.is_weak(x):
            target = want if isinstance(want, Scalar) else None
            if target is not None:
                if bit_patterns:
                    x = promotion.bit_pattern(x, target)
                if not promotion.fits(x, target):  # (a float for an int is Warp's TypeError)
                    self.error(f"{what}: the constant {x!r} does not fit {want!r}", node,
                               kind=TypeError if target.is_int and not isinstance(x, numbers.Integral) else None)
                return self.b.const(x.item() if isinstance(x, SCALAR_VALUES) else x, target)
            if isinstance(want, (Vector, Matrix)):
                self.error(f"{what}: expected {want!r}, got the number {x!r}", node, kind=TypeError)
        v = self.materialize(x)
        return self.coerce(v, want, node, what)

    def condition(self, node):
        c = self.expr(node)
        return self.truth(c)

    def truth(self, c):
        if not isinstance(c, Value):
            return bool(c)
        if c.type is bool_:
            return c
        if isinstance(c.type, Scalar):
            return self.b.cmp("ne", c, self.b.const(0, c.type))
        if isinstance(c.type, ArrayType):  # as in Warp: an array is true unless it is null
            return array_ops.is_not_null(self, c)
        self.error(f"a {c.type!r} cannot be used as a condition")


# Python functions a kernel may call with constant arguments, folded when it compiles: those
# of these modules, which compute without effects. Any other (random.random, time.time, a
# helper not marked @func) is refused, as Warp refuses it: folding would run it once, at
# compile time, and bake its result into every thread and launch.
_PURE_MODULES = ("math", "cmath", "operator", "_operator", "numpy", "weft.types", "weft.linalg",
                 "weft.lang", "weft.math", "weft.constants")
_PURE_BUILTINS = {abs, min, max, round, pow, divmod, int, float, bool, complex, sum, any, all, len,
                  isinstance, issubclass, getattr, hasattr, type, ord, chr, str, repr, tuple, sorted}


def _pure(func) -> bool:
    """Whether calling `func` with constants may be done once, when the kernel compiles."""
    if func in _PURE_BUILTINS:
        return True
    owner = getattr(func, "__self__", None)
    if owner is not None and not isinstance(owner, type(np)):
        return isinstance(owner, (str, bytes, numbers.Number, tuple))  # 'abc'.upper, (2.0).__mul__
    module = getattr(func, "__module__", None) or ""
    return any(module == m or module.startswith(m + ".") for m in _PURE_MODULES) and \
        not module.startswith("numpy.random")


def _math_module(func) -> bool:
    module = getattr(func, "__module__", None) or ""
    return module in ("math", "cmath", "numpy") or isinstance(func, np.ufunc)
