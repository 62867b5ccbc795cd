"""`@weft.func_native(snippet, adj_snippet=None, replay_snippet=None)`: Warp's functions
written as C++ snippets, and `wp.address_of(x)`.

The snippet is the body of a C++ function whose parameters are the Python function's (types
as weft_native.h spells them; `wp.ref[T]` parameters are C++ references). weft compiles it
with the system's C++ compiler (codegen/native_cxx.py) once per snippet and argument types,
and the kernel calls it (builtins/native.py). As in Warp:

- `adj_snippet` is the body of the adjoint: it sees the parameters, `adj_<name>` for each
  (a reference: accumulate into it; for a `wp.ref[T]` parameter it holds the adjoint of the
  value the snippet stored, and leaves the adjoint of the value it had before), the
  adjoint arrays of array parameters as `adj_<name>`, and `adj_ret`. Without one, a
  gradient that would flow through the call is a compile error, never a silent zero.
- `replay_snippet` runs instead of the snippet when the adjoint kernel recomputes the
  forward pass (for snippets with side effects, such as counters).
- The module option `extra_build_options` (`wp.ModuleBuildOptions`) gives the snippets'
  compilation its CPU include directories and preamble (code before the snippets).
- `wp.address_of(x)` passed for a `wp.uint64` parameter gives the snippet the address of
  `x` (a local, an array element, a field or a component): what the snippet stores there
  is `x`'s new value.
"""

from __future__ import annotations

import hashlib

from ..ir.builder import Builder
from ..ir.core import Function, Loc
from ..ir.verify import verify
from ..types import Matrix, Scalar, TupleType, Vector
from .errors import CompileError
from .function import Func, FuncInstance, _check_reference_arguments


def address_of(expr):
    """The address of a variable, array element or field as a `wp.uint64`, for a C++
    snippet (`@wp.func_native`) to read or write; only inside kernels and funcs."""
    raise RuntimeError("wp.address_of() can only be called inside a @wp.kernel or @wp.func body")


class AddressOf:
    """`wp.address_of(x)` as a call argument: the value of `x` and its expression."""

    def __init__(self, value, node):
        self.value, self.node = value, node


def func_native(snippet: str, adj_snippet: str | None = None, replay_snippet: str | None = None):
    """Decorator: a function whose body is the C++ `snippet` (see the module docstring)."""
    for what, text in (("snippet", snippet), ("adj_snippet", adj_snippet), ("replay_snippet", replay_snippet)):
        if text is not None and not isinstance(text, str):
            raise TypeError(f"@weft.func_native({what}=...) takes the C++ source as a string, "
                            f"got {type(text).__name__}")

    def wrap(pyfunc):
        return NativeFunc(pyfunc, snippet, adj_snippet, replay_snippet)
    return wrap


class NativeFunc(Func):
    """A C++ snippet function: a func whose instances call the compiled snippet."""

    native = True

    def __init__(self, pyfunc, snippet, adj_snippet=None, replay_snippet=None):
        super().__init__(pyfunc)
        self.snippet, self.adj_snippet, self.replay_snippet = snippet, adj_snippet, replay_snippet

    def emit_call(self, ctx, args, kwargs, node):
        overload = self.overloads[0]
        names = list(overload.params)
        addressed = {names[k]: a for k, a in enumerate(args) if isinstance(a, AddressOf) and k < len(names)}
        addressed.update({k: a for k, a in kwargs.items() if isinstance(a, AddressOf)})
        for name in addressed:
            if getattr(overload.params.get(name), "name", None) != "uint64":
                ctx.error(f"wp.address_of() is passed for parameter '{name}' of func_native {self.name}, "
                          f"which is not a wp.uint64", node)
        placeholder = ctx.b.const(0, overload.params[next(iter(addressed))]) if addressed else None
        bind_args = [placeholder if isinstance(a, AddressOf) else a for a in args]
        bind_kwargs = {k: placeholder if isinstance(a, AddressOf) else a for k, a in kwargs.items()}
        _, (types, values, _functions) = self._resolve(ctx, bind_args, bind_kwargs, node)
        for name, a in addressed.items():
            types[name] = a.value.type
            values[names.index(name)] = a.value
        key = (tuple(types.values()), tuple(sorted(addressed)))
        if key not in self.instances:
            self.instances[key] = NativeInstance(self, overload, types, frozenset(addressed))
        instance = self.instances[key]
        if overload.ref_params:
            _check_reference_arguments(ctx, self, instance, bind_args, bind_kwargs, node)
        return self.call_instance(ctx, instance, values, node, {name: a.node for name, a in addressed.items()})


class NativeInstance(FuncInstance):
    """A native func for one tuple of argument types: IR calling the compiled snippet."""

    def __init__(self, func: NativeFunc, overload, param_types: dict, addressed: frozenset):
        from ..builtins.native import ADDRESS, REF, parameter_kind
        super().__init__(func, overload, param_types, {})
        self.kinds = [parameter_kind(n, t, overload.ref_params, addressed) for n, t in param_types.items()]
        self.readback = [k for k, kind in enumerate(self.kinds) if kind in (REF, ADDRESS)]
        self._symbols = None

    # (not None: the reverse pass keeps the call whole and asks grad_ir / replay_ir)
    @property
    def custom_grad(self):
        return True if self.func.adj_snippet is not None else None

    @property
    def custom_replay(self):
        return True if self.func.replay_snippet is not None else None

    @property
    def loc(self) -> Loc:
        code = self.overload.pyfunc.__code__
        return Loc(code.co_filename, code.co_firstlineno, 0)

    def _error(self, message):
        return CompileError(message, self.loc, self.func.name)

    def symbols(self) -> dict:
        """The entry points of the compiled snippets ("fwd", "adj", "replay"), compiling
        and loading them the first time."""
        if self._symbols is None:
            from ..codegen.native_cxx import NativeError, load_library
            options = self.func.module.options.get("extra_build_options")
            signature = options.signature() if options else ""
            try:
                source, symbols = self._translation_unit(options.extra_cpu_preamble if options else "", signature)
                load_library(source, f"func_native {self.func.name}",
                             options.extra_cpu_include_dirs if options else (), signature)
            except NativeError as e:
                raise self._error(str(e)) from None
            self._symbols = symbols
        return self._symbols

    def _translation_unit(self, preamble: str, build_signature: str = ""):
        from ..builtins.native import ADDRESS, REF
        from ..codegen.native_cxx import cxx_type, translation_unit
        func, names = self.func, list(self.param_types)
        structs: dict = {}
        cts = [cxx_type(t, structs) for t in self.param_types.values()]
        ret = self.overload.ret_type
        if ret is not None and not isinstance(ret, (Scalar, Vector, Matrix)):
            raise self._error(f"func_native {func.name} returns {ret!r}: a snippet returns a scalar, "
                              f"vector or matrix")
        ret_ct = "void" if ret is None else cxx_type(ret, structs)
        decls = [f"wp::uint64 {n}" if kind == ADDRESS else f"{ct}& {n}" if kind == REF else f"{ct} {n}"
                 for n, ct, kind in zip(names, cts, self.kinds)]
        adj_decls = [f"wp::uint64& adj_{n}" if kind == ADDRESS else f"{ct}& adj_{n}"
                     for n, ct, kind in zip(names, cts, self.kinds)]
        if ret is not None:
            adj_decls.append(f"{ret_ct} adj_ret")
        # (libraries load into one namespace: the symbol names the func's module and what its
        # code is built with, so that same-named snippets of two modules stay apart)
        digest = hashlib.sha256("\0".join([func.qualified_name, func.key, func.snippet, func.adj_snippet or "",
                                           func.replay_snippet or "", preamble, build_signature, *decls,
                                           ret_ct]).encode()).hexdigest()[:16]
        symbol = f"weft_native_{digest}"
        args = [f"(wp::uint64)a{k}" if kind == ADDRESS else f"*({ct}*)a{k}"
                for k, (ct, kind) in enumerate(zip(cts, self.kinds))]
        pointers = ", ".join(f"void* a{k}" for k in range(len(names)))
        assign = "" if ret is None else f"*({ret_ct}*)result = "
        functions, entries, symbols = [], [], {}
        for part, body in (("fwd", func.snippet), ("replay", func.replay_snippet)):
            if body is not None:
                functions.append((f"{ret_ct} {part}_{digest}({', '.join(decls)})", body, part))
                entries.append(f'extern "C" void {symbol}_{part}({pointers}{", " if pointers else ""}void* result) '
                               f'{{ {assign}wp::{part}_{digest}({", ".join(args)}); }}')
                symbols[part] = f"{symbol}_{part}"
        if func.adj_snippet is not None:
            functions.append((f"void adj_{digest}({', '.join(decls + adj_decls)})", func.adj_snippet, "adj"))
            adj_args = [f"*(wp::uint64*)g{k}" if kind == ADDRESS else f"*({ct}*)g{k}"
                        for k, (ct, kind) in enumerate(zip(cts, self.kinds))]
            if ret is not None:
                adj_args.append(f"*({ret_ct}*)result")
            grads = "".join(f", void* g{k}" for k in range(len(names)))
            entries.append(f'extern "C" void {symbol}_adj({pointers}{grads}{", " if pointers else ""}void* result) '
                           f'{{ wp::adj_{digest}({", ".join(args + adj_args)}); }}')
            symbols["adj"] = f"{symbol}_adj"
        return translation_unit(functions, structs, entries, preamble), symbols

    def _forward_ir(self, part: str) -> Function:
        from ..builtins.native import forward_primitive
        symbol = self.symbols()[part]
        names, types = list(self.param_types), list(self.param_types.values())
        ret = self.overload.ret_type
        fn = Function(self.func.name, "func", names, types, ret, self.loc)
        b = Builder(fn.body, self.loc)
        result_types = ([] if ret is None else [ret]) + [types[k] for k in self.readback]
        prim = forward_primitive(self.func.name, symbol, result_types, self.readback)
        call = b.op("call", fn.params, result_types, {"fn": prim})
        b.op("return", list(call.results))
        fn.tile_writeback = list(self.readback)
        return verify(fn)

    def ir(self):
        if self._ir is None:
            self._ir = self._forward_ir("fwd")
        return self._ir

    def replay_ir(self):
        """The IR the adjoint kernel runs to recompute the call: the replay snippet."""
        return self._forward_ir("replay")

    def grad_ir(self, active: list[str], arrays: list[str]) -> Function:
        """The IR of the adjoint snippet's call, in the form lang/custom_grad.grad_ir gives a
        Python custom grad: the parameters, the adjoints of the results, the adjoint arrays
        of the parameters `arrays`; it returns a tuple of the adjoints of `active`."""
        from ..builtins.native import ARRAY, adjoint_primitive
        names, types = list(self.param_types), list(self.param_types.values())
        ret = self.overload.ret_type
        results = ([] if ret is None else [ret]) + [types[k] for k in self.readback]
        param_names = names + [f"__adj_result{j}" for j in range(len(results))] + [f"__adj_{n}" for n in arrays]
        fn = Function(f"adj_{self.func.name}", "func", param_names,
                      types + results + [self.param_types[n] for n in arrays], None, self.loc)
        b = Builder(fn.body, self.loc)
        params = fn.params
        adj_results = params[len(names):len(names) + len(results)]
        adj_arrays = dict(zip(arrays, params[len(names) + len(results):]))
        ret_adj = [adj_results[0]] if ret is not None else []
        ref_adj = list(adj_results[len(ret_adj):])
        operands = list(params[:len(names)]) + ref_adj + ret_adj
        for n, t, kind in zip(names, types, self.kinds):
            if kind == ARRAY:
                operands.append(adj_arrays[n] if n in adj_arrays else b.op("null_array", [], [t]).result)
        positions = [names.index(n) for n in active]
        prim = adjoint_primitive(self.func.name, self.symbols()["adj"], self.kinds, types, ret, positions)
        grads = b.op("call", operands, [types[k] for k in positions], {"fn": prim}).results
        fn.ret_type = TupleType(tuple(types[k] for k in positions))
        b.op("return", [b.construct(fn.ret_type, list(grads))])
        return verify(fn)

