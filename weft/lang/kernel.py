"""`@weft.kernel`: a Kernel holds the Python function, its IR and its compiled variants.

A kernel is compiled once per specialisation (which array parameters are contiguous),
on its first launch with that specialisation. Compiled code comes from the disk cache
when the IR, the options and the host are unchanged; a kernel compiled by an earlier
process is found without building its IR at all, through its warm-start record
(warm_start.py), and launched with what the record says of it (compiled.KernelFacts).
"""

from __future__ import annotations

import copy
import inspect
import time

from .. import config
from ..ir.core import Loc, walk
from ..ir.outline import inline_kept_calls, outline_large_calls
from ..ir.passes import run_pipeline
from ..ir.printer import format_function
from ..types import ArrayType, StructType
from ..types.layout import ctype_of
from . import function, warm_start
from . import overloads as _overloads
from .compiled import CompiledKernel, KernelFacts
from .errors import KERNEL_RETURN_MESSAGE, CompileError, WarpCodegenTypeError
from .function import _annotations, is_generic, signature_types
from .module import compiling_in, compiling_lanes, module_for
from .source import ParsedSource, remember_source, source_lines


def struct_layouts(fn) -> str:
    """Every struct type the kernel touches, with its fields' types and offsets: the IR text
    names structs only, and a changed struct must not reuse cached code."""
    seen: dict = {}

    def visit(t):
        if isinstance(t, StructType) and t.name not in seen:
            ct = ctype_of(t)
            seen[t.name] = [(n, repr(ft), getattr(ct, n).offset) for n, ft in t.fields.items()]
            for ft in t.fields.values():
                visit(ft)
        for inner in getattr(t, "elements", ()):
            visit(inner)
        if isinstance(t, ArrayType):
            visit(t.dtype)

    for p in fn.params:
        visit(p.type)
    for op in walk(fn.body):
        for v in op.results:
            visit(v.type)
    return repr(sorted(seen.items()))


#: Bytes of tile buffers one kernel call may keep on its thread's stack (threads have 8 MiB).
TILE_STACK_LIMIT = 4 << 20


def _warn_unhonored_options(name: str, fn) -> bool:
    """Warp's CUDA-only requests in a kernel compiled for the CPU, said once per compile
    (True if one was)."""
    if any(op.name == "call" and op.attrs.get("precision") == "tf32" for op in walk(fn.body)):
        import warnings
        warnings.warn(f"kernel '{name}': tile_matmul cannot honor precision='tf32' on the CPU; it computes in "
                      "the tiles' float32", UserWarning, stacklevel=3)
        return True
    return False


class Kernel:
    """A kernel: its Python function, IR and compiled variants. `@weft.kernel` makes one;
    `Kernel(func=f, key=..., module=..., options=..., code_transformers=[...])` is Warp's
    constructor (`code_transformers`: `ast.NodeTransformer`s applied to the function's AST
    before it is compiled). A kernel with `Any` (or typevar) parameters is generic: each
    launch compiles it for its arguments' types (see `overload`)."""

    lanes = None  # a LaneSpec when this is a kernel's block program (see `cooperative`)
    _hash = None  # a hash set on the kernel (see `hash`)
    _mangled = (None, None, None)  # (strip_hash, hash, name) of the last get_mangled_name()

    def __init__(self, func, key=None, module=None, options=None, code_transformers=None,
                 source=None, enable_backward=None):
        function.check_kernel_annotations(func)
        self.func = func
        self.name = func.__name__
        self.key = key or function.warp_key(func)
        self.options = dict(options or {})
        if enable_backward is not None:
            self.options["enable_backward"] = enable_backward
        self.code_transformers = list(code_transformers or ())
        self.source = source  # the function's source text, if not the one in its file
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__  # (as Warp's: `wp.get_module(k.__module__)`)
        self.__wrapped__ = func
        self.overloads: dict = {}  # argument types -> concrete Kernel (generic kernels)
        self.generic_parent = None
        self._params = None
        self._generic = None
        self._arg_names = None
        self._array_params = None
        self._adjoint_params = None
        self._ir: dict = {}
        self._compiled: dict = {}
        self._recent: dict = {}  # (spec, adjoint, consume, retain) -> (config.changes, compiled kernel)
        self._seen_redefinitions = function.redefinitions
        self.module = module_for(module, func, self.key)
        self.module.register_kernel(self)
        remember_source(func)
        if self.source is None:  # read now, as Warp does: the file may change or go away
            try:
                self.source = "".join(source_lines(func)[0])
            except (OSError, TypeError):
                pass  # (reported when the kernel is compiled)
        self._eager_statics = self._evaluate_statics_now()

    def _evaluate_statics_now(self) -> dict:
        """`static(...)` expressions that need nothing of the kernel's own, evaluated now
        (as Warp does when a kernel is defined; see static_eval.eager_static_values)."""
        if self.code_transformers:
            return {}
        from .static_eval import statics_at_definition
        return statics_at_definition(self.func, lambda: ParsedSource(self.func, (), self.source))

    @property
    def adj(self):
        """Warp's view of the kernel's code generator, read-only (see kernel_view.py)."""
        from .kernel_view import KernelView
        return KernelView(self)

    def parsed_source(self) -> ParsedSource:
        src = ParsedSource(self.func, self.code_transformers, self.source)
        src.eager_statics = self._eager_statics
        return src

    @property
    def source_text(self) -> str:
        return self.parsed_source().text

    @property
    def is_generic(self) -> bool:
        """Whether a parameter's type is left open (`Any`, a typevar, `array(dtype=Any)`)."""
        if self._generic is None:
            self._generic = any(is_generic(t) for t in self.params.values())
        return self._generic

    def overload(self, arg_types) -> Kernel:
        """The kernel compiled for these concrete parameter types (a list in parameter
        order, or a dict naming the generic parameters to fix)."""
        return _overloads.add(self, arg_types)

    add_overload = overload  # Warp's name (`kernel.add_overload([wp.array[T], ...])`)

    def specialize(self, args) -> Kernel:
        """The concrete kernel for the values a launch passes (a generic kernel's overload
        for their types; the kernel itself if it is not generic)."""
        return _overloads.for_arguments(self, args) if self.is_generic else self

    @property
    def params(self) -> dict:
        """Parameter name -> weft type, from the annotations (or the overload's types);
        generic parameters are `function.GENERIC` or an open array type."""
        if self._params is None:
            self._params = signature_types(self.func, "kernel")
        return self._params

    @property
    def arg_types(self) -> list:
        return list(self.params.values())

    @property
    def deterministic(self) -> bool:
        """Whether the kernel's module (or `config.deterministic`) asks for bit-exact results."""
        mode = config.check_deterministic_mode(self.module.options["deterministic"],
                                               f"kernel '{self.name}': deterministic")
        return mode != config.DeterministicMode.NOT_GUARANTEED

    @property
    def fast_math(self) -> bool:
        """`set_module_options({"fast_math": ...})` of the kernel's module, else the config."""
        return self.module.options["fast_math"]

    @property
    def bounds_checks(self) -> bool:
        """`set_module_options({"bounds_checks": ...})` of the kernel's module (weft's: its
        library kernels whose indices are correct by construction turn them off), else the
        config."""
        return self.module.options["bounds_checks"]

    @property
    def arg_names(self) -> list[str]:
        if self._arg_names is None:
            self._arg_names = list(self.params)
            self._array_params = [k for k, t in enumerate(self.params.values()) if isinstance(t, ArrayType)]
        return self._arg_names

    def ir(self, mode: str | None = None, grid: int = 0):
        """The kernel's IR after the pass pipeline (built once per mode, `self.mode` unless
        given, which decides whether asserts are compiled). `grid`: for a launch of that many
        dimensions where `tid()` unpacks fewer (transforms/launch_grid.py); 0: as many."""
        mode = mode or self.mode
        if grid:
            ir = self._ir.get((mode, "grid", grid))
            if ir is None:
                from ..transforms.launch_grid import on_grid
                ir = self._ir[(mode, "grid", grid)] = on_grid(self.ir(mode), grid)
            return ir
        ir = self._ir.get(mode)
        if ir is None:
            from .frontend import FunctionCompiler
            self._check_concrete()
            fc = FunctionCompiler(self.parsed_source(), "kernel", self.name, self.params)
            fc.enable_backward = self.enable_backward  # (builtins that Warp refuses in differentiable kernels)
            with compiling_in(mode), compiling_lanes(self.lanes.block_dim if self.lanes else 1):
                ir = fc.compile()
                if self.lanes is None:
                    ir = outline_large_calls(ir)  # (very large kernels keep large funcs as calls)
                ir = run_pipeline(ir, check=True)
            if self.lanes is not None:
                from ..transforms.lanes import lower_lanes
                ir = run_pipeline(lower_lanes(ir, self.lanes), check=True)
            self._ir[mode] = ir
            # the warm-start text must describe what this IR was built from: taken now if
            # not yet, and dropped (no records) if a value it names changed since
            text = warm_start.kernel_text(self)
            if self._ir.setdefault(("warm text", mode), text) != text:
                self._ir[("warm text", mode)] = None
        return ir

    def _warm_text(self, mode: str) -> str | None:
        """warm_start.kernel_text for `mode`, taken once per kernel: when first asked for or
        when the IR is built, whichever comes first (a kernel keeps the IR of its first
        compile, so its records must describe the values of that moment)."""
        key = ("warm text", mode)
        if key not in self._ir:
            self._ir[key] = warm_start.kernel_text(self)
        return self._ir[key]

    def forget_compiled(self) -> None:
        """Drop this kernel's IR and compiled code (and its overloads'), so that the next
        launch compiles it again with what its source names now (Module.mark_modified)."""
        self._ir, self._compiled, self._recent = {}, {}, {}
        self.__dict__.pop("_lane_variants", None)
        for instance in getattr(self, "overloads", {}).values():
            instance.forget_compiled()

    def cooperative(self, spec) -> Kernel:
        """This (concrete) kernel as the block program of Warp's cooperative CPU blocks for
        launches like `spec` (a transforms.lanes.LaneSpec): one CPU thread runs a block's
        `spec.block_dim` threads together (compiled once per spec)."""
        variants = self.__dict__.setdefault("_lane_variants", {})
        program = variants.get(spec)
        if program is None:
            program = copy.copy(self)
            program._ir, program._compiled, program._recent, program._lane_variants = {}, {}, {}, {}
            program.lanes = spec
            variants[spec] = program
        return program

    @property
    def mode(self) -> str:
        """"release" or "debug" (asserts compiled): the module's `mode` option, else config's."""
        return self.module.options["mode"] or config.mode

    def _check_concrete(self):
        loc = Loc(inspect.getsourcefile(self.func) or "<unknown>", self.func.__code__.co_firstlineno, 0)
        if self.is_generic:
            open_params = [n for n, t in self.params.items() if is_generic(t)]
            raise CompileError(f"kernel {self.name} is generic (parameters {', '.join(open_params)}): "
                               "launch it, or make an overload with weft.overload(kernel, [types])", loc)
        ret = _annotations(self.func).get("return", None)
        if ret is not None and ret is not type(None):
            raise WarpCodegenTypeError(KERNEL_RETURN_MESSAGE, loc, self.name)

    @property
    def enable_backward(self) -> bool:
        """The kernel's own option, else its module's, else `config.enable_backward`."""
        own = self.options.get("enable_backward")
        if own is not None:
            return own
        return self.module.options["enable_backward"]

    def adjoint_ir(self, absent: frozenset = frozenset(), consume: bool = True, retain: frozenset = frozenset(),
                   grid: int = 0):
        """The adjoint kernel's IR: primal parameters, then `adj_<name>` for each array of
        floats (see autodiff/reverse.py). `absent`: parameter indices whose adjoint array
        is not given (None): the variant neither reads nor writes it. `consume=False`: the
        adjoints of arrays the kernel only writes are read and left as they were (what a
        user's adjoint launch wants: a PyTorch grad_output must not be changed); a Tape
        consumes them, since an earlier launch may have written the same elements, except
        those of the parameters in `retain` (arrays with `retain_grad`). `grid`: as for ir()."""
        if not self.enable_backward:
            raise RuntimeError(f"kernel '{self.name}' was built with enable_backward=False: it has "
                               "no adjoint (set it to True on the kernel or its module)")
        keep = (frozenset() if consume else self.write_only_params) | retain
        key = ("adjoint", self.mode, absent, keep, grid)
        ir = self._ir.get(key)
        if ir is None:
            from ..autodiff.reverse import adjoint_function
            from ..ir.passes import dead_code
            from ..ir.verify import verify
            try:
                fn = adjoint_function(inline_kept_calls(self.ir(grid=grid)), self.name, absent, keep)
                ir = self._ir[key] = verify(dead_code(verify(fn)))
            except CompileError as err:
                raise err.with_traceback(None) from None
        return ir

    @property
    def write_only_params(self) -> frozenset:
        """The float arrays the kernel writes and never reads (as in `array_effects`); once
        per mode (each adjoint launch asks)."""
        key = ("write only", self.mode)
        found = self._ir.get(key)
        if found is None:
            from ..autodiff.active import has_adjoint_array
            reads, writes = self.array_effects()
            found = self._ir[key] = frozenset(k for k in writes if k not in reads and
                                              has_adjoint_array(self.array_type_at(k)))
        return found

    def array_effects(self) -> tuple[frozenset, frozenset]:
        """The arrays the kernel reads and those it writes: parameter indices, and
        (index, field path) for arrays held in struct parameters."""
        return self._array_analyses()["effects"]

    def array_initial_reads(self) -> frozenset:
        """The arrays (keys as in `array_effects`) whose contents before the launch its
        adjoint reads: those read before the kernel writes them, or never written."""
        return self._array_analyses()["initial"]

    def array_adjoint_reads(self) -> frozenset:
        """The arrays of `array_initial_reads` whose contents the adjoint actually uses (what
        a Tape must keep of them when a later launch overwrites them): not those whose loads
        feed only linear operations that the adjoint's dead-code removal drops (the update
        `x[i] = x[i] + v[i] * dt` never needs x's old value). All of them for a kernel
        without an adjoint (its backward pass reports why). Built from the adjoint's IR
        once per mode, and kept with the warm-start records."""
        key = ("adjoint reads", self.mode)
        found = self._ir.get(key)
        if found is not None:
            return found
        initial = self.array_initial_reads()
        record = warm_start.record_key(self._warm_text(self.mode), "adjoint reads", (self.mode,), "")
        found = warm_start.load_keys(record) if record is not None else None
        if found is None:
            from ..autodiff.arrays import primal_arrays_read
            try:
                adjoint = self.adjoint_ir()
            except (CompileError, RuntimeError, TypeError, ValueError):
                found = initial
            else:
                found = initial & primal_arrays_read(adjoint, len(self.params))
                if record is not None and self._warm_text(self.mode) is not None:
                    warm_start.store_keys(record, found)
        self._ir[key] = found
        return found

    def array_final_reads(self) -> frozenset:
        """Indices of the array parameters whose contents after the launch its adjoint reads
        (the targets of float atomic_min/max)."""
        return self._array_analyses()["final"]

    def _array_analyses(self) -> dict:
        """What the IR says of the kernel's arrays (what a Tape records of a launch, which
        adjoint variant runs): from the kernel's warm-start record of them if there is one,
        else from its IR (then recorded for the next process); once per mode."""
        key = ("array analyses", self.mode)
        found = self._ir.get(key)
        if found is not None:
            return found
        record = warm_start.record_key(self._warm_text(self.mode), "array analyses", (self.mode,), "")
        found = warm_start.load_analyses(record) if record is not None else None
        if found is None:
            from ..autodiff.arrays import array_final_reads, array_initial_reads
            from ..autodiff.reverse import array_effects
            fn = self.ir()
            position = {p.id: k for k, p in enumerate(fn.params)}

            def keys(found_keys):
                return frozenset(position[pid] if not path else (position[pid], path)
                                 for pid, path in found_keys if pid in position)

            reads, writes = array_effects(fn)
            final_ids = array_final_reads(fn)
            found = {"effects": (keys(reads), keys(writes)), "initial": keys(array_initial_reads(fn)),
                     "final": frozenset(k for k, p in enumerate(fn.params) if p.id in final_ids)}
            if record is not None and self._warm_text(self.mode) is not None:  # (see `ir`)
                warm_start.store_analyses(record, found)
        self._ir[key] = found
        return found

    def array_type_at(self, key):
        """The type of the array `key` names (a parameter index or (index, field path))."""
        k, path = (key, ()) if isinstance(key, int) else key
        t = list(self.params.values())[k]
        for index in path:
            t = list(t.fields.values())[index]
        return t

    def specialization(self, args, adjoint: bool = False) -> tuple:
        """Which arguments are contiguous arrays (a compiled variant per pattern); for an
        adjoint launch `args` also holds the adjoint arrays."""
        spec = [False] * len(args)
        arrays = self._array_params if self._array_params is not None else self._init_params()
        for k in arrays:
            spec[k] = getattr(args[k], "is_contiguous", False) is True  # (torch: a method)
        if adjoint:  # None marks an adjoint array not given: a variant without it
            n = len(self._arg_names)
            for k in range(n, len(args)):
                spec[k] = None if args[k] is None else getattr(args[k], "is_contiguous", False) is True
        return tuple(spec)

    def _absent(self, spec) -> frozenset:
        """Parameters whose adjoint array an adjoint specialisation leaves out."""
        n = len(self.arg_names)
        return frozenset(k for k, s in zip(self.adjoint_param_indices, spec[n:]) if s is None)

    @property
    def adjoint_param_indices(self) -> list[int]:
        """Positions of the parameters that have an adjoint array in the adjoint kernel: the
        arrays of float values (integer arrays carry no gradient)."""
        if self._adjoint_params is None:
            from ..autodiff.active import has_adjoint_array
            self._adjoint_params = [k for k, t in enumerate(self.params.values()) if has_adjoint_array(t)]
        return self._adjoint_params

    def _init_params(self):
        self.arg_names  # noqa: B018 - fills _array_params
        return self._array_params

    def contiguous_spec(self) -> tuple:
        """The specialisation of a launch whose arrays are all contiguous."""
        return tuple(isinstance(t, ArrayType) for t in self.params.values())

    @property
    def target(self) -> tuple:
        """The module's (cpu_compiler_flags, optimization_level); None: weft.config's."""
        options = self.module.options
        return options["cpu_compiler_flags"], options["optimization_level"]

    def compiled(self, spec: tuple, adjoint: bool = False, consume: bool = False,
                 retain: frozenset = frozenset(), grid: int = 0, short_rows: bool = False) -> CompiledKernel:
        """The native kernel (or its adjoint) for `spec` under the current settings
        (compiled on first use). An adjoint's `spec` covers its adjoint arrays too;
        `consume` and `retain` are adjoint_ir's (one variant where the kernel has no
        write-only arrays); `grid` is ir()'s and `short_rows` KernelCodegen's
        (CompiledKernel.for_dims asks for them)."""
        # (the launch hot path: the settings the full key reads change only with config.changes)
        memo = (spec, adjoint, consume, retain, grid, short_rows)
        recent = self._recent.get(memo)
        if recent is not None and recent[0] == config.changes:
            return recent[1]
        changes = config.changes
        self.check_redefinitions()
        consume = adjoint and consume and bool(self.write_only_params)
        retain = retain if adjoint else frozenset()
        if self.deterministic and not (self.module.name or "").startswith("weft."):
            self._check_deterministic(spec, adjoint, consume, retain)
        target = self.target
        key = (spec, self.bounds_checks, self.fast_math, self.mode, adjoint, consume, retain, target,
               config.vectorize_threads, grid, short_rows)
        ck = self._compiled.get(key)
        if ck is None:
            if self.options.get("entry_point_abi", "warp") != "warp":
                raise CompileError(f"Kernel '{self.key}' uses entry_point_abi='{self.options['entry_point_abi']}', "
                                   "a CUDA entry point, which the CPU backend does not support")
            from ..codegen import cpu
            try:
                with cpu.target(*target):
                    ck = self._compiled[key] = self._compile(spec, adjoint, consume, retain, grid, short_rows)
                ck.variant = (spec, adjoint, consume, retain, grid)
            except CompileError as err:
                # The user's error is in their source, which the message shows: drop the
                # compiler's frames (and any exception it was handling) from the traceback.
                raise err.with_traceback(None) from None
        if len(self._recent) > 64:
            self._recent.clear()
        self._recent[memo] = (changes, ck)
        return ck

    def _check_deterministic(self, spec, adjoint, consume, retain) -> None:
        """Refuse what Warp's deterministic mode refuses (transforms/deterministic.py), once
        per variant (the IR is built for it: deterministic kernels skip warm starts' savings)."""
        from ..transforms import deterministic
        done = self._ir.setdefault(("deterministic checked", self.mode), set())
        variant = (spec, adjoint, consume, retain)
        if variant in done:
            return
        try:
            deterministic.check_forward(self.ir(), self.name)
            if adjoint:
                deterministic.check_adjoint(self.ir(), lambda: self.adjoint_ir(self._absent(spec), consume, retain),
                                            self.name)
        except CompileError as err:
            raise err.with_traceback(None) from None
        done.add(variant)

    def check_redefinitions(self):
        """Drop what this kernel built from funcs redefined (or given a custom grad) since
        (see `_forget_if_sources_changed`): before anything cached is used, its compiled code
        and the analyses a Tape records by alike."""
        if self._seen_redefinitions != function.redefinitions:
            self._forget_if_sources_changed()

    def _forget_if_sources_changed(self):
        """A func was redefined since this kernel compiled: if what the kernel's code names
        now differs from what it was compiled from (or cannot be described), drop every IR
        and compiled variant, so that the next launch compiles the new code, as Warp
        rebuilds a module whose dependencies changed."""
        self._seen_redefinitions = function.redefinitions
        texts = [(key, text) for key, text in self._ir.items() if isinstance(key, tuple) and key[0] == "warm text"]
        if not texts and not self._compiled:
            return
        if not texts or any(text is None or text != warm_start.kernel_text(self) for _, text in texts):
            self.forget_compiled()

    def _compile(self, spec, adjoint=False, consume=False, retain=frozenset(), grid=0,
                 short_rows=False) -> CompiledKernel:
        from ..codegen import cpu

        start = time.perf_counter()
        options = (self.bounds_checks, self.fast_math, self.mode, config.vectorize_threads)
        variant = (*options, adjoint, consume, sorted(map(repr, retain))) + ((grid,) if grid else ()) + \
            (("short rows",) if short_rows else ())
        record = warm_start.record_key(self._warm_text(self.mode), spec, variant, cpu.target_description())
        if record is not None:
            ck = self._load_warm(record, spec, options, adjoint, consume, retain, grid)
            if ck is not None:
                if config.verbose:
                    print(f"weft: {ck.label} loaded from its warm-start record "
                          f"in {1e3 * (time.perf_counter() - start):.1f} ms")
                return ck

        from ..codegen.llvm import KernelCodegen
        fn = self.adjoint_ir(self._absent(spec), consume, retain, grid) if adjoint else self.ir(grid=grid)
        warned = _warn_unhonored_options(self.name, fn)
        key = cpu.cache_key(format_function(fn, locations=True), struct_layouts(fn), repr(spec), repr(options),
                            "short rows" if short_rows else "")
        cg = KernelCodegen(fn, spec, bounds_checks=self.bounds_checks, fast_math=self.fast_math,
                           short_rows=short_rows)
        cg.entry_suffix = key[:16]  # (a name of its own in the shared JIT engine)
        obj = cpu.cached_object(key)
        hit = obj is not None
        if obj is None:
            tm = cpu.target_machine()
            cg.module.triple = tm.triple
            cg.module.data_layout = str(tm.target_data)
            llvm_ir = str(cg.generate())
            if cg.tile_stack_bytes > TILE_STACK_LIMIT:  # (a thread's stack would overflow)
                raise CompileError(
                    f"kernel '{self.name}'{' (adjoint)' if adjoint else ''}: its tiles need "
                    f"{cg.tile_stack_bytes:,} bytes of the thread's stack, more than weft allows "
                    f"({TILE_STACK_LIMIT:,}); use smaller tiles, or fewer tile values at once", fn.loc, self.name)
            obj = cpu.compile_to_object(llvm_ir, vectorize=not cg.wide_elements)
            cpu.store_object(key, obj)
        address = cpu.load_object(obj, cg.entry_name, shared=True)
        facts = KernelFacts.of(fn, cg.entry_name, cg.scratch_size, cg.short_rows_below)
        # (a record only where a warm launch would see the very parameter types this one
        # does, nothing is said at compile time that a warm load would leave unsaid, and the
        # IR was built from the values the record's key describes)
        if record is not None and not warned and self._warm_text(self.mode) is not None and \
                all(p.type is t for p, t in zip(fn.params, self._launch_param_types(adjoint), strict=True)):
            warm_start.store(record, key, facts._asdict())
        if config.verbose:
            print(f"weft: {fn.name} {'loaded from cache' if hit else 'compiled'} "
                  f"in {1e3 * (time.perf_counter() - start):.1f} ms")
        return CompiledKernel(self, address, facts, fn=fn, sites=cg.sites, adjoint=adjoint)

    def _launch_param_types(self, adjoint: bool) -> list:
        """The compiled kernel's parameter types as known without its IR: the parameters',
        then for an adjoint each adjoint array's (its array's type; half arrays, whose
        adjoints are widened, get no warm-start record)."""
        primal = list(self.params.values())
        return primal + [primal[k] for k in self.adjoint_param_indices] if adjoint else primal

    def _load_warm(self, record, spec, options, adjoint, consume, retain, grid=0) -> CompiledKernel | None:
        """The kernel (or adjoint) from its warm-start record and cached object code, or None
        (either is missing): no IR is built (see warm_start.py)."""
        from ..codegen import cpu
        found = warm_start.load(record)
        obj = cpu.cached_object(found["object"]) if found is not None else None
        if obj is None:
            return None
        try:
            facts = KernelFacts.from_json(found["facts"])
        except TypeError:  # (a record of another layout)
            return None
        address = cpu.load_object(obj, facts.entry, shared=True)
        bounds_checks, fast_math, mode = options[:3]

        def rebuild():  # (the IR and error sites, as the compile would have made them)
            from ..codegen.llvm import KernelCodegen
            fn = self.adjoint_ir(self._absent(spec), consume, retain, grid) if adjoint else self.ir(mode, grid)
            return fn, KernelCodegen(fn, spec, bounds_checks=bounds_checks, fast_math=fast_math).sites

        return CompiledKernel(self, address, facts, adjoint=adjoint, rebuild=rebuild,
                              param_types=self._launch_param_types(adjoint))

    def llvm_ir(self, spec=None, optimized=False, adjoint=False) -> str:
        """The LLVM IR of this kernel or its adjoint (for inspection), optionally optimised."""
        from ..codegen import cpu
        from ..codegen.llvm import KernelCodegen
        fn = self.adjoint_ir(self._absent(spec) if spec else frozenset()) if adjoint else self.ir()
        spec = spec or tuple(isinstance(p.type, ArrayType) for p in fn.params)
        cg = KernelCodegen(fn, spec, bounds_checks=self.bounds_checks, fast_math=self.fast_math)
        tm = cpu.target_machine()
        cg.module.triple = tm.triple
        cg.module.data_layout = str(tm.target_data)
        text = str(cg.generate())
        return cpu.optimized_ir(text, vectorize=not cg.wide_elements) if optimized else text

    @property
    def hash(self) -> bytes:
        """The kernel's content hash (Warp's `Kernel.hash`): its source, parameter types,
        options, the funcs and structs it uses, its module's options and the settings that
        change compiled code (`Module.hash_kernel`). A value set here is used instead until
        it is set to None."""
        return self._hash if self._hash is not None else self.module.hash_kernel(self)

    @hash.setter
    def hash(self, value: bytes | None) -> None:
        self._hash = value

    def get_mangled_name(self, *, kernel_hash: bytes | None = None) -> str:
        """Warp's symbol name for the kernel: `<key>_<first 8 hex digits of its hash>`, or
        the key alone where the module option `strip_hash` is set. (weft's compiled code is
        found by content hash in its cache; this name identifies the kernel's version.) The
        name is kept while the hash and the option stay the same; `kernel_hash` names that
        hash's version instead, without touching what is kept."""
        strip = bool(self.module.options["strip_hash"])
        h = self.hash if kernel_hash is None else kernel_hash
        kept_strip, kept_hash, kept = self._mangled
        if kernel_hash is None and kept is not None and kept_strip == strip and (strip or kept_hash == h):
            return kept
        name = self.key if strip else f"{self.key}_{h.hex()[:8]}"
        if kernel_hash is None:
            self._mangled = (strip, h, name)  # (one tuple: a reader sees all of it or none)
        return name

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"kernel {self.name} is launched with weft.launch(kernel, dim, inputs=...)")

    def __repr__(self):
        return f"<weft kernel {self.key}>"
