"""`@weft.func`: device functions, generic over untyped/`Any` parameters, with overloads."""

from __future__ import annotations

import inspect
import types as pytypes
import typing

from ..ir.core import Value
from ..ir.passes import inline_calls
from ..ir.verify import verify
from ..types import ArrayType, FixedArrayType, TupleType, Type, resolve
from ..types.array_type import AnyArray, valid_dtype
from ..types.generic import TuplePattern
from . import promotion
from .errors import CompileError, WarpCodegenTypeError
from .source import ParsedSource, remember_source

GENERIC = object()  # a parameter whose type comes from the call


def resolve_annotation(annotation, where: str):
    """A parameter annotation as a weft type, or GENERIC for Any/TypeVar/missing.
    `tuple[int, float]` (a func returning several values) is a TupleType."""
    if annotation is inspect.Parameter.empty or annotation is typing.Any \
            or isinstance(annotation, typing.TypeVar):
        return GENERIC
    if isinstance(annotation, AnyArray) and not valid_dtype(annotation.dtype):
        raise WarpCodegenTypeError(f"{where}: {annotation!r}: array dtype must be a weft scalar, vector, "
                                   f"matrix or struct type, got {annotation.dtype!r}")
    if isinstance(annotation, AnyArray) or getattr(annotation, "is_generic", False):
        return annotation
    if typing.get_origin(annotation) is tuple:
        parts = typing.get_args(annotation)
        variadic = len(parts) == 2 and parts[1] is Ellipsis
        if variadic:
            parts = parts[:1]
        if not parts or Ellipsis in parts:
            raise TypeError(f"{where}: a tuple annotation lists the type of each element, "
                            f"e.g. tuple[int, float], or one type for any length: tuple[int, ...]")
        elements = [resolve_annotation(p, where) for p in parts]
        if variadic or any(is_generic(e) for e in elements):
            # (an element left open by Any is typing.Any in the pattern: it matches anything)
            return TuplePattern(tuple(typing.Any if e is GENERIC else e for e in elements), variadic)
        return TupleType(tuple(elements))
    if typing.get_origin(annotation) in (typing.Union, pytypes.UnionType):
        raise WarpCodegenTypeError(f"{where}: {annotation!r}: Union type annotations are only supported at "
                        f"Python scope; a kernel or func parameter has one type (or Any)")
    t = resolve(annotation)
    if t is None:
        raise TypeError(f"{where}: {annotation!r} is not a weft type")
    return t


def is_generic(t) -> bool:
    """Whether a resolved annotation leaves the type open (filled in per call or launch)."""
    return t is GENERIC or isinstance(t, AnyArray) or bool(getattr(t, "is_generic", False))


def signature_types(pyfunc, kind: str) -> dict:
    """Parameter name -> weft type (or GENERIC), from the annotations. A kernel's parameters
    must all be annotated (`Any` makes the kernel generic)."""
    hints = _annotations(pyfunc)
    out = {}
    for name, param in inspect.signature(pyfunc).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"{pyfunc.__qualname__}: *args/**kwargs parameters are not supported")
        annotation = hints.get(name, inspect.Parameter.empty)
        if kind == "kernel" and annotation is inspect.Parameter.empty:
            raise TypeError(f"kernel {pyfunc.__qualname__}: parameter '{name}' needs a type "
                            f"annotation, e.g. `{name}: weft.array(dtype=float)`")
        out[name] = resolve_annotation(annotation, f"{pyfunc.__qualname__}, parameter '{name}'")
    return out


def _annotations(pyfunc) -> dict:
    raw = dict(getattr(pyfunc, "__annotations__", {}))
    # (the function's closure too: `x: dtype` where dtype is a variable of the enclosing function)
    cells = dict(zip(pyfunc.__code__.co_freevars, pyfunc.__closure__ or ()))
    closure = {}
    for name, cell in cells.items():
        try:
            closure[name] = cell.cell_contents
        except ValueError:  # a cell not filled yet
            pass
    for k, v in raw.items():
        if isinstance(v, str):  # from __future__ import annotations
            try:
                raw[k] = eval(v, pyfunc.__globals__, closure)  # noqa: S307 - the user's own annotation
            except Exception as e:  # noqa: BLE001
                raise TypeError(f"{pyfunc.__qualname__}: cannot evaluate annotation {v!r}: {e}") from None
    return raw


def _signature(types) -> str:
    return ", ".join(t.name if isinstance(getattr(t, "name", None), str) else repr(t) for t in types)


class FuncInstance:
    """One func compiled for one tuple of argument types."""

    def __init__(self, func: Func, overload, param_types: dict):
        self.func = func
        self.overload = overload
        self.param_types = param_types
        self.name = f"{func.name}({', '.join(map(repr, param_types.values()))})"
        self._ir = None
        self._ir_mode = None
        self._compiling = False

    @property
    def custom_grad(self):
        """The @func_grad function of this instance's overload, or None."""
        return self.overload.custom_grad

    @property
    def custom_replay(self):
        """The @func_replay function of this instance's overload, or None."""
        return self.overload.custom_replay

    def ir(self):
        from .module import compile_lanes, compile_mode
        mode = (compile_mode(), compile_lanes())  # (tile(x) and block_dim() depend on the lanes)
        if self._ir is None or self._ir_mode != mode:  # ("debug" compiles asserts)
            if self._compiling:
                raise CompileError(f"func {self.func.name} calls itself; recursion is not supported")
            self._compiling = True
            try:
                from .frontend import FunctionCompiler
                ret = self.overload.ret_type
                open_ret = ret if is_generic(ret) else None  # `-> wp.Float`: inferred, then checked
                fc = FunctionCompiler(self.overload.source, "func", self.func.name, self.param_types,
                                      None if open_ret is not None else ret)
                fn = fc.compile()
                if open_ret is not None and not (fn.ret_type is not None and open_ret.matches(fn.ret_type)):
                    raise WarpCodegenTypeError(
                        f"The function `{self.func.name}` has its return type annotated as `{open_ret!r}` "
                        f"but the code returns a value of type `{fn.ret_type!r}`.", fn.loc, self.func.name)
                self._ir = inline_calls(verify(fn))
                self._ir_mode = mode
            finally:
                self._compiling = False
        return self._ir


class Overload:
    def __init__(self, pyfunc, source: str | None = None):
        self.pyfunc = pyfunc
        self.source_text = source  # the function's text, if not the one in its file
        self.params = signature_types(pyfunc, "func")
        hints = _annotations(pyfunc)
        ret = hints.get("return")
        self.ret_type = None if ret is None else resolve_annotation(ret, f"{pyfunc.__qualname__} return")
        if isinstance(self.ret_type, FixedArrayType):  # (a local array: an array value; see lang/returns.py)
            self.ret_type = ArrayType(self.ret_type.dtype, self.ret_type.ndim)
        if self.ret_type is GENERIC:
            self.ret_type = None
        self.defaults = {n: p.default for n, p in inspect.signature(pyfunc).parameters.items()
                         if p.default is not inspect.Parameter.empty}
        self._source = None
        remember_source(pyfunc)
        self.custom_grad = None    # set by @weft.func_grad(f)
        self.custom_replay = None  # set by @weft.func_replay(f)

    @property
    def source(self) -> ParsedSource:
        if self._source is None:
            self._source = ParsedSource(self.pyfunc, source=self.source_text)
        return self._source


class Func:
    """A `@weft.func`: callable from kernels and other funcs; inlined at each call."""

    def __init__(self, pyfunc, key: str | None = None, source: str | None = None, module=None):
        from .module import module_for
        self.name = pyfunc.__name__
        self.qualified_name = f"{pyfunc.__module__}.{pyfunc.__qualname__}"  # (overloads share it)
        self.key = key or self.qualified_name
        self.module = module_for(module, pyfunc, self.key)
        self.inline = None  # Warp's CUDA hint (see weft.func)
        self.overloads = [Overload(pyfunc, source)]
        self.instances: dict = {}
        self.__doc__ = pyfunc.__doc__
        self.__wrapped__ = pyfunc

    @property
    def user_overloads(self) -> dict:
        """Warp's view of the overloads: a signature (its parameter types) -> the overload,
        for each overload written with concrete types and each instance of a generic one
        (compiled for the types of a call)."""
        out = {}
        for overload in self.overloads:
            if not any(is_generic(t) for t in overload.params.values()):
                out[_signature(overload.params.values())] = overload
        for instance in self.instances.values():
            out.setdefault(_signature(instance.param_types.values()), instance)
        return out

    def add_overload(self, pyfunc):
        """Add an overload; one with the same parameter types replaces the earlier one."""
        new = Overload(pyfunc)
        same = [k for k, o in enumerate(self.overloads) if list(o.params.values()) == list(new.params.values())]
        if same:
            self.overloads[same[0]] = new
        else:
            self.overloads.append(new)
        self.instances.clear()

    def __call__(self, *args, **kwargs):
        """From Python scope: the func compiled for these argument types and run once, so
        that the result is what a kernel computes (lang/pyscope.py)."""
        from .pyscope import call_func
        return call_func(self, args, kwargs)

    def instance_for(self, ctx, args, kwargs, node):
        """The instance a call with these arguments compiles to, and the argument values."""
        overload, (types, values) = self._resolve(ctx, args, kwargs, node)
        key = (id(overload), tuple(types.values()))
        if key not in self.instances:
            self.instances[key] = FuncInstance(self, overload, types)
        return self.instances[key], values

    def emit_call(self, ctx, args, kwargs, node):
        instance, values = self.instance_for(ctx, args, kwargs, node)
        try:
            callee = instance.ir()
        except CompileError as err:  # an error in the func's body: say where it was called
            err.add_caller(ctx.name, ctx.loc(node) if node is not None else ctx.b.loc)
            raise
        result_types = [] if callee.ret_type is None else [callee.ret_type]
        writeback = getattr(callee, "tile_writeback", ())
        op = ctx.b.op("call_func", values, result_types + [callee.params[k].type for k in writeback],
                      {"func": instance})
        for k, new in zip(writeback, op.results[len(result_types):]):
            self._write_back(ctx, node, k, new)
        return op.results[0] if result_types else None

    def _write_back(self, ctx, node, k, new):
        """The caller's tile argument `k` takes the value the func left in it (tiles are
        passed by reference in Warp); an argument that is not a variable is a temporary."""
        import ast
        arg = node.args[k] if node is not None and k < len(node.args) else None
        if arg is None and node is not None:
            name = list(self.overloads[0].params)[k] if self.overloads else None
            arg = next((kw.value for kw in node.keywords if kw.arg == name), None)
        if isinstance(arg, ast.Name) and arg.id in ctx.scope:
            old = ctx.scope[arg.id]
            ctx.rebind(arg.id, new, f"func {self.name} updates its tile argument '{arg.id}'")
            from ..builtins.tiles.core import write_through
            ctx.scope[arg.id] = write_through(ctx, old, new, f"func {self.name}")

    def _resolve(self, ctx, args, kwargs, node):
        """The first overload whose parameter types the arguments have exactly (a literal
        has its default type: `f(1)` picks an `int` overload over a `float` one), concrete
        overloads before generic ones; failing that, the first one they convert to."""
        errors = []
        if len(self.overloads) == 1:
            passes = [(False, self.overloads)]
        else:
            concrete = [o for o in self.overloads if not any(is_generic(t) for t in o.params.values())]
            passes = [(True, concrete), (True, self.overloads), (False, self.overloads)]
        for exact, overloads in passes:
            errors.clear()
            for overload in overloads:
                bound = self._bind(ctx, overload, args, kwargs, errors, exact)
                if bound is not None:
                    return overload, bound
        ctx.error(f"no overload of func {self.name} matches these arguments: "
                  + "; ".join(errors), node)

    def _bind(self, ctx, overload, args, kwargs, errors, exact=False):
        names = list(overload.params)
        if len(args) > len(names):
            errors.append(f"takes {len(names)} arguments, got {len(args)}")
            return None
        given = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in overload.params or k in given:
                errors.append(f"unexpected or repeated argument '{k}'")
                return None
            given[k] = v
        types, values = {}, []
        for name, want in overload.params.items():
            if name not in given:
                if name not in overload.defaults:
                    errors.append(f"missing argument '{name}'")
                    return None
                given[name] = overload.defaults[name]
            arg = given[name]
            if exact and isinstance(want, Type) and promotion.is_weak(arg) \
                    and promotion.default_type(arg) is not want:
                errors.append(f"'{name}' expects {want!r}, got {arg!r}")
                return None
            if isinstance(want, AnyArray):
                if not (isinstance(arg, Value) and want.matches(arg.type)):
                    errors.append(f"'{name}' expects {want.describe()}")
                    return None
                v = arg
            elif want is GENERIC:
                v = ctx.materialize(arg)
            elif is_generic(want):  # an open vector/matrix/scalar annotation: check what it allows
                v = ctx.materialize(arg)
                if not want.matches(v.type):
                    errors.append(f"'{name}' expects {want!r}, got {v.type!r}")
                    return None
            elif isinstance(arg, Value) and arg.type is not want:
                if isinstance(want, ArrayType) or len(self.overloads) > 1 or not isinstance(want, Type):
                    errors.append(f"'{name}' expects {want!r}, got {arg.type!r}")
                    return None
                v = ctx.coerce(arg, want, what=f"argument '{name}' of {self.name}")
            else:
                v = ctx.coerce(arg, want, what=f"argument '{name}' of {self.name}")
            types[name] = v.type
            values.append(v)
        return types, values
