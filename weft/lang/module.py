"""Modules: the kernels of one Python module (or of one `module="unique"` kernel) and
their options, as Warp groups them (`kernel.module`, `weft.get_module(name)`).

A module's options live in `utils.MODULE_OPTIONS[name]` (what `set_module_options`
writes); `Module.options` reads and writes them there, falling back to the global
settings in `weft.config` for options not set on the module.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import operator
import os
import threading
import warnings
import weakref
from collections.abc import MutableMapping

from .. import config
from ..types.scalars import SCALAR_VALUES
from ..utils import MODULE_OPTIONS

_MODULES: dict[str, Module] = {}
_unique_ids = itertools.count()
# a module's defaults: the global settings
_FROM_CONFIG = ("fast_math", "bounds_checks", "enable_backward", "max_unroll", "deterministic",
                "deterministic_max_records")
# ... of which these are read once, when the module is made (Warp's: a module imported while
# `config.enable_backward` is False keeps no adjoints when the setting changes back)
_CAPTURED = ("enable_backward", "max_unroll", "deterministic", "deterministic_max_records")
# Warp's other module options and their defaults. None: the setting of weft.config applies
# (cpu_compiler_flags and optimization_level choose the compile target, see codegen/cpu.py);
# the others concern CUDA builds or codegen details weft decides itself.
OPTION_DEFAULTS = {"mode": None, "optimization_level": None, "cpu_compiler_flags": None,
                   "lineinfo": None, "fuse_fp": True, "block_dim": 256, "cuda_output": None,
                   "compile_time_trace": False, "strip_hash": False, "enable_mathdx_gemm": None,
                   "enable_mathdx_solver": None, "enable_mathdx_fft": None, "extra_build_options": None,
                   "default_grid_stride": None}
# Global settings that change compiled code: part of a module's hash
_COMPILE_SETTINGS = ("version", "mode", "bounds_checks", "fast_math", "verify_fp", "optimization_level",
                     "cpu_compiler_flags")


class ModuleOptions(MutableMapping):
    """The options of one module: those set on it, else the global defaults of weft.config."""

    def __init__(self, name: str):
        self._name = name

    @property
    def _own(self) -> dict:
        return MODULE_OPTIONS.setdefault(self._name, {})

    def _defaults(self) -> dict:
        return {**OPTION_DEFAULTS, **{key: getattr(config, key) for key in _FROM_CONFIG}}

    def __getitem__(self, key):  # (on the launch path: Kernel.fast_math)
        own = MODULE_OPTIONS.get(self._name)
        if own is not None and key in own and (own[key] is not None or key not in _FROM_CONFIG):
            return own[key]  # (None: the global setting)
        if key in _FROM_CONFIG:
            return getattr(config, key)
        return OPTION_DEFAULTS[key]

    def __setitem__(self, key, value):
        if not _is_option(key):
            # Warp's set_module_options stores any key (programs may set options of other Warp
            # versions); a warning still catches a misspelt option
            warnings.warn(f"module option {key!r} is not one weft knows: it is stored and has no effect "
                          f"(known options: {_known_options()})", UserWarning, stacklevel=3)
        self._own[key] = value
        if self._name in _MODULES:
            _MODULES[self._name].hashers.clear()
        config.changes += 1  # kernels of this module may compile differently now

    def __delitem__(self, key):
        del self._own[key]

    def __iter__(self):
        return iter({**self._defaults(), **MODULE_OPTIONS.get(self._name, {})})

    def __len__(self):
        return len({**self._defaults(), **MODULE_OPTIONS.get(self._name, {})})

    def __repr__(self):
        return repr(dict(self))


def _is_option(key) -> bool:
    return key in _FROM_CONFIG or key in OPTION_DEFAULTS


def _known_options() -> str:
    return ", ".join(sorted((*_FROM_CONFIG, *OPTION_DEFAULTS)))


def check_option_names(options: dict) -> None:
    """Refuse an option name weft does not know, as Warp's `@kernel(module_options=...)` does
    (unlike set_module_options, which stores any)."""
    for key in options:
        if not _is_option(key):
            raise ValueError(f"unknown module option {key!r}. Valid options: {_known_options()}")


def check_deterministic_options(options: dict) -> None:
    """Warp's checks of the deterministic options: `deterministic` a DeterministicMode (not
    a bool or a string), `deterministic_max_records` a non-negative int (made an int here)."""
    config.check_deterministic_mode(options.get("deterministic"))
    records = options.get("deterministic_max_records", 0)
    if isinstance(records, bool):
        raise TypeError("deterministic_max_records must be a non-negative integer, got bool")
    try:
        records = operator.index(records)
    except TypeError:
        raise TypeError("deterministic_max_records must be a non-negative integer, "
                        f"got {type(records).__name__}") from None
    if records < 0:
        raise ValueError(f"deterministic_max_records must be non-negative, got {records}")
    options["deterministic_max_records"] = records


class Module:
    """A named group of kernels with shared options (Warp's `Module`)."""

    def __init__(self, name: str, loader=None):
        self.name = name
        self.loader = loader  # (Warp's: what loaded the Python module; kept, unused)
        self.kernels: dict = {}  # key -> Kernel; a kernel defined again under its key replaces it
        self.functions: dict = {}  # key -> Func
        self.structs: dict = {}  # key -> struct type
        self.options = ModuleOptions(name)
        self.hashers: dict = {}  # cached module hashes (cleared when the module changes)
        #: The loads done (`load`, `load_module`, `force_load`): (None, block_dim) -> True,
        #: None standing for the CPU's context (Warp's `Module.execs`, keyed by CUDA context).
        self.execs: dict = {}
        # the modules whose funcs or structs this one's kernels use, and those using this one's
        # (found when the module is hashed or loaded)
        self.references: set = set()
        self.dependents: set = set()
        # these settings are those of weft.config when the module is made (as Warp's):
        # changing the config later leaves existing modules as they were
        own = MODULE_OPTIONS.setdefault(name, {})
        for key in _CAPTURED:
            if own.get(key) is None:
                own[key] = getattr(config, key)

    def register_kernel(self, kernel):
        self.kernels[kernel.key] = kernel
        self.hashers.clear()
        self.execs.clear()

    def register_function(self, func):
        self.functions[func.key] = func
        self.hashers.clear()

    def register_struct(self, struct):
        self.structs[struct.key] = struct
        self.hashers.clear()

    def find_kernels(self, qualname: str) -> list:
        """The kernels made from functions of this Python qualified name."""
        return [k for k in self.kernels.values() if k.func.__qualname__ == qualname]

    def hash_module(self) -> str:
        """A content hash of the module: its kernels' sources, those of the funcs and the
        struct layouts they use (followed through the names they reference, with the funcs'
        default arguments), the module's options, static values and the global settings that
        change compiled code. Modules with the same content hash alike, whatever their names.
        Computed afresh (a global a kernel names may have changed); `get_module_hash` keeps
        it per value of those settings until the module changes."""
        self.hashers.pop(self._settings_key(), None)
        return self.get_module_hash()

    @staticmethod
    def _settings_key() -> str:
        return repr([getattr(config, name, None) for name in _COMPILE_SETTINGS])

    def get_module_hash(self, block_dim=None) -> str:
        """`hash_module`, cached per value of the compile settings until the module changes."""
        settings = self._settings_key()
        cached = self.hashers.get(settings)
        if cached is not None:
            return cached
        h = hashlib.sha256()
        seen: set = set()
        for key in sorted(self.kernels):
            _hash_kernel_parts(h, self.kernels[key], seen)
        self._hash_options(h, settings)
        self.hashers[settings] = h.hexdigest()
        self._find_references()
        return self.hashers[settings]

    def _find_references(self) -> None:
        """Note in `references` the other modules whose funcs and structs this module's
        kernels and funcs use (by name, through a Python module's attribute, or bound to a
        local: `f = other.g`), and this module in their `dependents`."""
        found: set = set()
        seen: set = set()
        for item in [*self.kernels.values(), *self.functions.values()]:
            pyfuncs = [o.pyfunc for o in item.overloads] if hasattr(item, "qualified_name") else [item.func]
            for pyfunc in pyfuncs:
                _referenced_modules(pyfunc, found, seen)
        found.discard(self)
        for other in self.references - found:
            other.dependents.discard(self)
        self.references = found
        for other in found:
            other.dependents.add(self)

    def unload(self) -> None:
        """Drop the module's compiled code (Warp's `Module.unload`): its kernels compile
        again at their next launch. Launches recorded before (a captured graph) keep the
        code they recorded and still run."""
        for kernel in list(self.kernels.values()):
            kernel.forget_compiled()

    def hash_kernel(self, kernel) -> bytes:
        """A content hash of one kernel (Warp's `Kernel.hash`): what `hash_module` hashes
        of it, with the module's options and the settings; cached like the module's."""
        settings = self._settings_key()
        cache_key = ("kernel", id(kernel), settings)
        cached = self.hashers.get(cache_key)
        if cached is not None and cached[0]() is kernel:
            return cached[1]
        h = hashlib.sha256()
        _hash_kernel_parts(h, kernel, set())
        self._hash_options(h, settings)
        self.hashers[cache_key] = (weakref.ref(kernel), h.digest())
        return h.digest()

    def _hash_options(self, h, settings: str) -> None:
        h.update(repr(sorted(((k, v.signature() if hasattr(v, "signature") else v) for k, v in self.options.items()),
                             key=lambda kv: kv[0])).encode())
        h.update(settings.encode())

    def resolve_options(self, config_module=None, block_dim: int | None = None) -> dict:
        """The module's options with every "None: the global setting" resolved from
        `config_module` (default weft.config), and `block_dim` in place of the module's when
        given: the settings its kernels compile with."""
        cfg = config if config_module is None else config_module
        options = dict(self.options)
        if block_dim is not None:
            options["block_dim"] = block_dim
        for key, value in options.items():
            if value is None and hasattr(cfg, key):
                options[key] = getattr(cfg, key)
        check_deterministic_options(options)
        return options

    def mark_modified(self) -> None:
        """Forget cached hashes and compiled code (the module's kernels, options or the
        constants they name changed): the next launch of each kernel compiles it again."""
        self.hashers.clear()
        self.execs.clear()
        for kernel in self.kernels.values():
            kernel.forget_compiled()

    def load(self, device=None, block_dim=None) -> bool:
        """Compile the module's kernels now, ahead of their first launch (for contiguous
        arrays, the common case). A kernel that does not compile raises its error here, as
        Warp's module load does."""
        from ..runtime.launch import cpu_block_dim
        from .errors import CompileError
        cpu_block_dim(block_dim)  # (more than 1024 threads per block: a ValueError, as a launch's)
        self._find_references()
        for kernel in list(self.kernels.values()):
            if kernel.is_generic:
                continue
            try:
                kernel.compiled(kernel.contiguous_spec())
            except CompileError as err:  # the message points at the user's source
                del kernel  # (a kept error, with its frames' locals, does not keep the kernel alive)
                raise err.with_traceback(None) from None
            except TypeError:
                pass
        self.execs[(None, block_dim if block_dim is not None else self.options.get("block_dim"))] = True
        return True

    def __repr__(self):
        return f"<weft module {self.name!r}>"


_compiling = threading.local()


def compile_mode() -> str:
    """The mode ("release" or "debug") of what is being compiled now: the kernel's module's
    `mode` option while `compiling_in` is active, else `config.mode`."""
    return getattr(_compiling, "mode", None) or config.mode


@contextlib.contextmanager
def compiling_in(mode: str | None):
    """Compile in `mode` inside the block (None: config.mode), on this thread."""
    saved = getattr(_compiling, "mode", None)
    _compiling.mode = mode
    try:
        yield
    finally:
        _compiling.mode = saved


def compile_lanes() -> int:
    """Threads per block of what is being compiled now: 1, or `block_dim` while a kernel is
    compiled for Warp's cooperative CPU blocks (`compiling_lanes`; see transforms/lanes.py)."""
    return getattr(_compiling, "lanes", 1)


@contextlib.contextmanager
def compiling_lanes(lanes: int):
    """Compile for blocks of `lanes` threads inside the block, on this thread."""
    saved = compile_lanes()
    _compiling.lanes = lanes
    try:
        yield
    finally:
        _compiling.lanes = saved


def get_module(name: str) -> Module:
    """The module of this name, created on first use."""
    module = _MODULES.get(name)
    if module is None:
        module = _MODULES[name] = Module(name)
    return module


def discard_module(module: Module) -> None:
    """Forget `module` (a unique module whose kernel failed to declare)."""
    if _MODULES.get(module.name) is module:
        del _MODULES[module.name]


def unique_module(base: str) -> Module:
    """A new module of its own (Warp's `module="unique"`)."""
    return get_module(f"{base}__unique{next(_unique_ids)}")


def _hash_kernel_parts(h, kernel, seen: set) -> None:
    """Feed `h` one kernel's part of a hash: key, source, parameter types, options, the
    funcs and structs it references (those not in `seen`) and its static values."""
    h.update(kernel.key.encode())
    h.update(kernel.source_text.encode())
    h.update(_types_signature(kernel).encode())
    h.update(repr(sorted(kernel.options.items())).encode())
    if kernel.overloads:  # a generic kernel: the overloads made of it so far
        h.update(repr(sorted(repr(list(k)) for k in kernel.overloads)).encode())
    _hash_references(h, kernel.func, seen)
    h.update(_statics_signature(kernel).encode())


def _types_signature(kernel) -> str:
    """The kernel's parameter types, structs by their fields (and arrays of structs), so
    that redefining a struct with other fields changes the hash."""
    from ..types import ArrayType, StructType
    out = []
    try:
        types = list(kernel.params.values())
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: reported at launch
        return "?"
    for t in types:
        inner = t.dtype if isinstance(t, ArrayType) else t
        out.append(inner.signature() if isinstance(inner, StructType) else repr(t))
    return ";".join(out)


def _statics_signature(kernel) -> str:
    """The values of the kernel's `static(...)` expressions evaluated when it was defined
    (a func by its source), so that a kernel whose source is unchanged but whose static
    values differ hashes differently."""
    from .function import Func
    out = []
    for key, value in sorted(getattr(kernel, "_eager_statics", {}).items()):
        if isinstance(value, Func):  # its overloads' Python code (their file may be gone)
            codes = [o.pyfunc.__code__ for o in value.overloads]
            text = value.name + "".join(f":{c.co_code.hex()}:{c.co_consts!r}:{c.co_names!r}"
                                       for c in codes)
        else:
            text = f"{type(value).__name__}:{value!r}"
        out.append(f"{key}={text}")
    return ";".join(out)


def _resolve(module, depth: int) -> Module:
    """The Module for Warp's `module` argument: None (the caller's Python module), a name,
    a Python module or a Module."""
    if isinstance(module, Module):
        return module
    if module is None:
        module = caller_module_name(depth + 2)
    return get_module(module if isinstance(module, str) else module.__name__)


def caller_module_name(stack_level: int = 1) -> str:
    """The name of the Python module whose code runs `stack_level` frames above this
    function (1: its caller), as `@kernel` sees it in `f.__module__`: the frame's
    `__name__` ("__main__" under `runpy.run_module(..., run_name="__main__")`), else the
    `__spec__` runpy sets, else the module `inspect` finds, else the loaded module of the
    frame's file. RuntimeError if none says."""
    import inspect
    import os
    import sys
    frame = sys._getframe(stack_level)
    name = frame.f_globals.get("__name__")
    if name:
        return name
    spec = frame.f_globals.get("__spec__")
    if spec is not None and getattr(spec, "name", None):
        return spec.name
    found = inspect.getmodule(frame)
    if found is not None:
        return found.__name__
    filename = frame.f_code.co_filename
    for loaded in list(sys.modules.values()):
        path = getattr(loaded, "__file__", None)
        if path and filename and os.path.abspath(path) == os.path.abspath(filename):
            return loaded.__name__
    raise RuntimeError(f"Could not determine the calling module (code in {filename!r} has neither __name__ "
                       "nor __spec__ and is not a loaded module); pass the module explicitly")


def load_module(module=None, device=None, recursive: bool = False, block_dim=None, max_workers=None) -> None:
    """Compile a module's kernels now (the caller's module by default; with `recursive`,
    its submodules' too), so that their first launch does not wait for the compiler. A
    package whose kernels all live in submodules (weft's own `weft.geometry`) loads those.
    RuntimeError for a module with no weft kernels, funcs or structs. (`max_workers`:
    Warp's parallel build; weft compiles in this thread.)"""
    if isinstance(module, Module):
        name, targets = module.name, [module]
    else:
        name = caller_module_name(2) if module is None else \
            module if isinstance(module, str) else getattr(module, "__name__", None)
        if not isinstance(name, str):
            raise TypeError(f"load_module takes a module, a module's name or a weft Module, got {module!r}")
        targets = [_MODULES[name]] if name in _MODULES else []
    if recursive or not targets:
        targets += [m for key, m in list(_MODULES.items())
                if isinstance(key, str) and isinstance(name, str) and key.startswith(f"{name}.")]
    if not targets and not _is_weft_module(name, module):  # (weft's own import their kernels when used)
        raise RuntimeError(f"Module '{name}' does not contain any Warp kernels, functions, or structs "
                           f"(or is not imported): nothing to load")
    _load_all(targets, device, block_dim, max_workers)


def _is_weft_module(name: str, module) -> bool:
    """Whether `name` (or the Python module `module`) is one of weft's own modules."""
    import sys
    root_package = sys.modules.get(name.split(".")[0])
    if name.split(".")[0] == "weft" or (root_package is not None and root_package is sys.modules.get("weft")):
        return True  # (also weft imported under another name: `sys.modules["warp"] = weft`)
    if not hasattr(module, "__file__"):
        module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # (weft/)
    return isinstance(path, str) and os.path.abspath(path).startswith(root + os.sep)


def force_load(device=None, modules=None, block_dim=None, max_workers=None) -> None:
    """Compile the kernels of every module (or of `modules`) now (`block_dim`: the block
    size their launches will use; `max_workers`: see `config.load_module_max_workers`)."""
    _load_all(list(_MODULES.values()) if modules is None else [_resolve(m, 1) for m in modules], device,
              block_dim, max_workers)


def _load_all(modules: list, device, block_dim, max_workers) -> None:
    """Load `modules`: serially (max_workers 0) up to the first failure, or, as Warp's
    parallel load (max_workers > 1, several modules), all of them before the first failure
    is raised."""
    if max_workers is None:
        max_workers = config.load_module_max_workers
        if max_workers is None:
            max_workers = min(os.cpu_count() or 1, 4)
    if not isinstance(max_workers, int) or isinstance(max_workers, bool) or max_workers < 0:
        raise ValueError(f"max_workers must be a non-negative int or None, got {max_workers!r}")
    if max_workers <= 1 or len(modules) < 2:
        for m in modules:
            m.load(device, block_dim)
        return
    first = None
    for m in modules:
        try:
            m.load(device, block_dim)
        except Exception as err:  # noqa: BLE001 - raised once the others are loaded
            first = first or err
    if first is not None:
        raise first


def _hash_references(h, pyfunc, seen: set):
    """Add to `h` what `pyfunc` refers to by name: funcs (each overload's source, then what
    it refers to) and struct types (their fields)."""
    from ..types import StructType
    from .function import Func
    from .source import source_lines
    env = dict(pyfunc.__globals__)
    for name, cell in zip(pyfunc.__code__.co_freevars, pyfunc.__closure__ or ()):
        try:
            env[name] = cell.cell_contents
        except ValueError:
            pass
    for name in sorted(_names(pyfunc.__code__)):
        value = env.get(name)
        if id(value) in seen:
            continue
        if isinstance(value, Func):
            seen.add(id(value))
            label = value.key  # (its qualified name in its module, or the key it was given)
            h.update(f"{label}:{value.inline}".encode())
            for overload in value.overloads:
                try:
                    h.update("".join(source_lines(overload.pyfunc)[0]).encode())
                except (OSError, TypeError):
                    h.update(overload.pyfunc.__code__.co_code)
                h.update(repr(sorted((k, _describe(v)) for k, v in overload.defaults.items())).encode())
                _hash_references(h, overload.pyfunc, seen)
        elif isinstance(value, StructType):
            seen.add(id(value))
            h.update(value.signature().encode())
        elif name in env:  # a constant or a builtin the code names (wp.static(C) bakes it in)
            h.update(f"{name}={_describe(value)};".encode())


def _referenced_modules(pyfunc, found: set, seen: set) -> None:
    """Add to `found` the modules of the funcs and structs `pyfunc` names, directly or as an
    attribute of a Python module it names, and of what those funcs name in turn."""
    import types as pytypes

    from ..types import StructType
    from .function import Func
    code = pyfunc.__code__
    env = dict(pyfunc.__globals__)
    for name, cell in zip(code.co_freevars, pyfunc.__closure__ or ()):
        try:
            env[name] = cell.cell_contents
        except ValueError:
            pass
    names = _names(code)
    values = [env[n] for n in sorted(names) if n in env]
    for value in list(values):
        if isinstance(value, pytypes.ModuleType):  # `other.g(...)`, `f = other.g`
            values += [v for v in (getattr(value, n, None) for n in sorted(names)) if isinstance(v, (Func, StructType))]
    for value in values:
        if id(value) in seen:
            continue
        if isinstance(value, Func):
            seen.add(id(value))
            found.add(value.module)
            for overload in value.overloads:
                _referenced_modules(overload.pyfunc, found, seen)
        elif isinstance(value, StructType):
            seen.add(id(value))
            found.update(m for m in list(_MODULES.values()) if m.structs.get(value.key) is value)


def _describe(value) -> str:
    """A deterministic description of a referenced value (no object addresses)."""
    import types as pytypes

    import numpy as np
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, *SCALAR_VALUES)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}({', '.join(_describe(v) for v in value)})"
    if isinstance(value, pytypes.ModuleType):
        return f"module:{value.__name__}"
    data = getattr(value, "_data", None)  # a vector or matrix value
    if isinstance(data, np.ndarray):
        return f"{value!r}"
    name = getattr(value, "key", None) or getattr(value, "name", None) or getattr(value, "__qualname__", None)
    return f"{type(value).__name__}:{name}" if isinstance(name, str) else type(value).__name__


def _names(code) -> set:
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names(const)
    return names


def module_for(module, func, key) -> Module:
    """The module a kernel or func belongs to: its Python module's by default, a new one of
    its own for `"unique"`, else the one named or given."""
    if module is None:
        return get_module(func.__module__)
    if module == "unique":
        return unique_module(key)
    if isinstance(module, str):
        return get_module(module)
    if isinstance(module, Module):
        return module
    raise TypeError(f"{key}: module must be a name, \"unique\" or a module, got {module!r}")
