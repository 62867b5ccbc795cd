"""`@weft.func`: device functions, generic over untyped/`Any` parameters, with overloads."""

from __future__ import annotations

import inspect
import re
import types as pytypes
import typing
import weakref

from .. import config
from ..ir.core import Loc, Value
from ..ir.passes import inline_calls
from ..ir.verify import verify
from ..types import ArrayType, FixedArrayType, TupleType, Type, resolve
from ..types.array_type import AnyArray, valid_dtype
from ..types.generic import TuplePattern
from ..types.reference import Reference
from . import promotion
from .errors import CompileError, WarpCodegenTypeError, WarpRecursionError
from .source import ParsedSource, remember_source

GENERIC = object()  # a parameter whose type comes from the call

#: How many times a func has been given another body or overload after it was made (a
#: module reloaded, a notebook cell run again). Kernels compiled before look again at what
#: they were compiled from (Kernel.compiled), and funcs drop their compiled instances.
redefinitions = 0
_ALL_FUNCS: weakref.WeakSet = weakref.WeakSet()


def note_redefinition():
    """A func changed: every func's instances may have inlined its old body."""
    global redefinitions
    redefinitions += 1
    for f in list(_ALL_FUNCS):
        f.instances.clear()
    config.changes += 1  # (launches look their kernel up again: see Kernel.compiled)


class _FunctionParameter:
    """The resolved annotation of a parameter `g: wp.Function`: the call passes a func or a
    builtin, which the callee calls; each function passed compiles its own instance."""

    def __repr__(self):
        return "wp.Function"


FUNCTION = _FunctionParameter()


def resolve_annotation(annotation, where: str):
    """A parameter annotation as a weft type, or GENERIC for Any/TypeVar/missing.
    `tuple[int, float]` (a func returning several values) is a TupleType."""
    if annotation is inspect.Parameter.empty or annotation is typing.Any \
            or isinstance(annotation, typing.TypeVar):
        return GENERIC
    if annotation is Func:
        return FUNCTION
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
        if isinstance(annotation, Reference):
            if kind == "kernel":
                raise WarpCodegenTypeError(
                    f"kernel {pyfunc.__qualname__}: parameter '{name}' is annotated {annotation!r}; "
                    f"wp.ref[T] is for @wp.func parameters: pass the value to a func that takes a reference")
            annotation = annotation.dtype
        if kind == "kernel" and annotation is Func:
            raise WarpCodegenTypeError(f"kernel {pyfunc.__qualname__}: parameter '{name}' is annotated "
                                       f"wp.Function; only a @wp.func can take a function parameter")
        if kind == "kernel" and annotation is inspect.Parameter.empty:
            raise WarpCodegenTypeError(unannotated_message(pyfunc, name))
        out[name] = resolve_annotation(annotation, f"{pyfunc.__qualname__}, parameter '{name}'")
    return out


def warp_key(pyfunc) -> str:
    """Warp's key of a kernel or func: its qualified name as an identifier
    (`outer.<locals>.k` -> `outer__locals__k`)."""
    return re.sub(r"[^0-9a-zA-Z_]+", "", pyfunc.__qualname__.replace(".", "__"))


def unannotated_message(pyfunc, name: str) -> str:
    return (f"kernel {pyfunc.__qualname__}: incomplete argument annotations: parameter '{name}' needs "
            f"a type annotation, e.g. `{name}: weft.array(dtype=float)`")


def check_kernel_annotations(pyfunc) -> None:
    """A kernel parameter without an annotation is an error when the kernel is defined, as in
    Warp (WarpCodegenTypeError: Warp's RuntimeError and weft's TypeError)."""
    annotated = getattr(pyfunc, "__annotations__", {})
    for name, param in inspect.signature(pyfunc).parameters.items():
        if name not in annotated and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise WarpCodegenTypeError(unannotated_message(pyfunc, name))


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

    def __init__(self, func: Func, overload, param_types: dict, functions: dict):
        self.func = func
        self.overload = overload
        self.param_types = param_types  # (the IR's parameters: all but the function ones)
        self.functions = functions  # `wp.Function` parameter name -> the func or builtin passed
        shown = [*map(repr, param_types.values()), *(f"{k}={_function_name(f)}" for k, f in functions.items())]
        self.name = f"{func.name}({', '.join(shown)})"
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

    def grad_ir(self, active: list[str], arrays: list[str]):
        """The IR of the custom grad (see lang/custom_grad.grad_ir)."""
        from .custom_grad import grad_ir
        return grad_ir(self, active, arrays)

    def replay_ir(self):
        """The IR of the custom replay (see lang/custom_grad.replay_ir)."""
        from .custom_grad import replay_ir
        return replay_ir(self)

    def ir(self):
        from .module import compile_lanes, compile_mode
        mode = (compile_mode(), compile_lanes())  # (tile(x) and block_dim() depend on the lanes)
        if self._ir is None or self._ir_mode != mode:  # ("debug" compiles asserts)
            if self._compiling:
                src = self.overload.source
                raise WarpRecursionError(f"func {self.func.name} calls itself; recursion is not supported",
                                         Loc(src.file, src.tree.lineno, src.tree.col_offset + src.col_offset),
                                         self.func.name)
            self._compiling = True
            try:
                from .frontend import FunctionCompiler
                ret = self.overload.ret_type
                open_ret = ret if is_generic(ret) else None  # `-> wp.Float`: inferred, then checked
                fc = FunctionCompiler(self.overload.source, "func", self.func.name, self.param_types,
                                      None if open_ret is not None else ret, constants=self.functions)
                fc.ref_params = self.overload.ref_params
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

    def ir_with_calls(self):
        """The func's IR as the frontend makes it, its own calls not inlined (ir/outline.py
        decides which to keep); built anew at each call."""
        from .frontend import FunctionCompiler
        self.ir()  # (compiled and checked once: errors are reported there)
        ret = self.overload.ret_type
        fc = FunctionCompiler(self.overload.source, "func", self.func.name, self.param_types,
                              None if is_generic(ret) else ret, constants=self.functions)
        fc.ref_params = self.overload.ref_params
        return verify(fc.compile())


class Overload:
    def __init__(self, pyfunc, source: str | None = None):
        self.pyfunc = pyfunc
        self.source_text = source  # the function's text, if not the one in its file
        self.params = signature_types(pyfunc, "func")
        hints = _annotations(pyfunc)
        self.ref_params = frozenset(n for n in self.params if isinstance(hints.get(n), Reference))
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
        # (evaluated now, as a kernel's: a func made in a loop keeps its loop variable's value)
        from .static_eval import statics_at_definition
        self.eager_statics = statics_at_definition(pyfunc, lambda: self.source)
        if self._source is not None:
            self._source.eager_statics = self.eager_statics

    @property
    def source(self) -> ParsedSource:
        if self._source is None:
            self._source = ParsedSource(self.pyfunc, source=self.source_text)
            self._source.eager_statics = getattr(self, "eager_statics", {})
        return self._source


class Func:
    """A `@weft.func`: callable from kernels and other funcs; inlined at each call."""

    def __init__(self, pyfunc, key: str | None = None, source: str | None = None, module=None):
        from .module import module_for
        self.name = pyfunc.__name__
        self.qualified_name = f"{pyfunc.__module__}.{pyfunc.__qualname__}"  # (overloads share it)
        self.key = key or warp_key(pyfunc)  # (the module tells same-named funcs apart)
        self.module = module_for(module, pyfunc, self.key)
        self.module.register_function(self)
        self.inline = None  # Warp's CUDA hint (see weft.func)
        self.overloads = [Overload(pyfunc, source)]
        self.instances: dict = {}
        self.__doc__ = pyfunc.__doc__
        self.__wrapped__ = pyfunc
        _ALL_FUNCS.add(self)

    @property
    def func(self):
        """The Python function of the first overload (Warp's `Function.func`)."""
        return self.overloads[0].pyfunc

    @property
    def defaults(self) -> dict:
        """The first overload's default arguments, by parameter name (Warp's
        `Function.defaults`; changing an entry changes what calls that omit it pass)."""
        return self.overloads[0].defaults

    @defaults.setter
    def defaults(self, value: dict):
        self.overloads[0].defaults = dict(value)
        note_redefinition()

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
        self.include(Overload(pyfunc))

    def include(self, new: Overload):
        """Add the overload `new` (replacing one with the same parameter types): the func's
        compiled instances and the kernels that inlined them look again (a redefinition)."""
        same = [k for k, o in enumerate(self.overloads) if list(o.params.values()) == list(new.params.values())]
        if same and self.overloads[same[0]].ref_params != new.ref_params:
            raise RuntimeError(f"func {self.name}: overloads cannot differ only in which parameters are "
                               f"wp.ref[T]; a call could not tell them apart")
        if same:
            self.overloads[same[0]] = new
        else:
            self.overloads.append(new)
        note_redefinition()

    def __call__(self, *args, **kwargs):
        """From Python scope: the overload these arguments select runs its Python body, as in
        Warp (lang/pyscope.py)."""
        from .pyscope import call_func
        return call_func(self, args, kwargs)

    def instance_for(self, ctx, args, kwargs, node):
        """The instance a call with these arguments compiles to, and the argument values."""
        overload, (types, values, functions) = self._resolve(ctx, args, kwargs, node)
        key = (id(overload), tuple(types.values()), tuple((k, id(f)) for k, f in functions.items()))
        if key not in self.instances:
            self.instances[key] = FuncInstance(self, overload, types, functions)
        return self.instances[key], values

    def emit_call(self, ctx, args, kwargs, node):
        instance, values = self.instance_for(ctx, args, kwargs, node)
        if instance.overload.ref_params:
            _check_reference_arguments(ctx, self, instance, args, kwargs, node)
        return self.call_instance(ctx, instance, values, node)

    def call_instance(self, ctx, instance, values, node, addressed=None):
        """The `call_func` op of `instance` with argument `values`, and the write-back of what
        the func updated. `addressed`: parameter name -> the expression whose storage the
        argument's address pointed to (a C++ snippet's `wp.address_of`), stored there."""
        try:
            callee = instance.ir()
        except CompileError as err:  # an error in the func's body: say where it was called
            err.add_caller(ctx.name, ctx.loc(node) if node is not None else ctx.b.loc)
            raise
        result_types = [] if callee.ret_type is None else [callee.ret_type]
        writeback = getattr(callee, "tile_writeback", ())
        op = ctx.b.op("call_func", values, result_types + [callee.params[k].type for k in writeback],
                      {"func": instance})
        names = list(instance.param_types)
        for k, new in zip(writeback, op.results[len(result_types):]):
            self._write_back(ctx, node, names[k], values[k], new, instance.overload, addressed or {})
        return op.results[0] if result_types else None

    def _write_back(self, ctx, node, name, old, new, overload, addressed):
        """The caller's argument for parameter `name` (`old`) takes the value the func left in
        it (`new`): a `wp.ref[T]` argument or an addressed one (a variable, array element,
        field or component: stored there), or a tile (passed by reference in Warp: a view
        passes the update to its source; another argument that is not a variable is a
        temporary)."""
        import ast
        arg = addressed[name] if name in addressed else _argument_node(node, overload, name)
        if name in overload.ref_params or name in addressed:
            ctx.assign(arg, new)
            root = _root_name(arg)
            if isinstance(ctx.scope.get(root), Value):  # (a variable a loop must now carry)
                ctx.rebind(root, ctx.scope[root], f"func {self.name} updates its argument '{root}'")
            return
        from ..builtins.tiles.core import write_through
        if isinstance(arg, ast.Name) and arg.id in ctx.scope:
            old = ctx.scope[arg.id]
            ctx.rebind(arg.id, new, f"func {self.name} updates its tile argument '{arg.id}'")
            ctx.scope[arg.id] = write_through(ctx, old, new, f"func {self.name}")
        elif isinstance(old, Value) and old.id in ctx.__dict__.get("_tile_views", {}):
            write_through(ctx, old, new, f"func {self.name}")  # `f(t[1])`: the row of t

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
        types, values, functions = {}, [], {}
        for name, want in overload.params.items():
            if name not in given:
                if name not in overload.defaults:
                    errors.append(f"missing argument '{name}'")
                    return None
                given[name] = overload.defaults[name]
            arg = given[name]
            if want is FUNCTION:
                if not is_callable_function(arg):
                    errors.append(f"'{name}' expects a function (a @wp.func or a builtin), got {arg!r}")
                    return None
                functions[name] = arg
                continue
            if is_callable_function(arg):
                errors.append(f"'{name}' is not a wp.Function parameter, got the function {_function_name(arg)}")
                return None
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
        return types, values, functions


def _argument_node(node, overload, name):
    """The source expression of a call's argument for parameter `name` (None if defaulted)."""
    if node is None:
        return None
    k = list(overload.params).index(name)
    if k < len(node.args):
        return node.args[k]
    return next((kw.value for kw in node.keywords if kw.arg == name), None)


def is_callable_function(x) -> bool:
    """A value a `wp.Function` parameter takes: a @wp.func or a builtin."""
    from ..builtins.registry import Builtin
    return isinstance(x, (Func, Builtin))


def _function_name(f) -> str:
    return getattr(f, "name", None) or repr(f)


def _root_name(target):
    """The variable an assignment target stores into (`v` of `v.x[i]`); None if none."""
    import ast
    while isinstance(target, (ast.Attribute, ast.Subscript)):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def _check_reference_arguments(ctx, func, instance, args, kwargs, node):
    """Each `wp.ref[T]` argument is storage of type T the caller can write: a variable, an
    array element, a struct field or a component of one (never a literal, a temporary or a
    call's result), and no two of them are the same expression (the stores would race)."""
    import ast
    overload = instance.overload
    names = list(overload.params)
    given = {**dict(zip(names, args)), **kwargs}
    seen = {}
    for name in names:
        if name not in overload.ref_params:
            continue
        arg = _argument_node(node, overload, name)
        where = f"argument '{name}' of func {func.name} is a {overload.params[name]!r} parameter"
        want = instance.param_types[name]
        if arg is None:
            ctx.error(f"{where}: it needs a variable to update, not a default value", node)
        root = _root_name(arg)
        value = given.get(name)
        if root is None or root not in ctx.scope:
            ctx.error(f"{where}: pass a variable, an array element or a field to update, not "
                      f"`{ast.unparse(arg)}` (a temporary)", arg)
        if not isinstance(value, Value):
            hint = f"`{root} = wp.{getattr(want, '__name__', want)}({value!r})`" if root == getattr(arg, "id", None) \
                else "a variable"
            ctx.error(f"{where}: `{ast.unparse(arg)}` is a compile-time constant, which has no storage to "
                      f"update; declare it with its type, e.g. {hint}", arg)
        if value.type is not want:
            ctx.error(f"{where}: `{ast.unparse(arg)}` has type {value.type!r}, expected {want!r}", arg)
        text = ast.dump(arg)
        if text in seen:
            ctx.error(f"func {func.name}: `{ast.unparse(arg)}` is passed to two wp.ref parameters "
                      f"('{seen[text]}' and '{name}'); each reference needs its own storage", arg)
        seen[text] = name
