"""Modules: the kernels of one Python module (or of one `module="unique"` kernel) and
their options, as Warp groups them (`kernel.module`, `weft.get_module(name)`).

A module's options live in `utils.MODULE_OPTIONS[name]` (what `set_module_options`
writes); `Module.options` reads and writes them there, falling back to the global
settings in `weft.config` for options not set on the module.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import MutableMapping

from .. import config
from ..utils import MODULE_OPTIONS

_MODULES: dict[str, Module] = {}
_unique_ids = itertools.count()
_FROM_CONFIG = ("fast_math", "enable_backward", "mode")  # a module's defaults: the global settings
# Global settings that change compiled code, so a module's hash
_COMPILE_SETTINGS = ("mode", "bounds_checks", "fast_math", "verify_fp", "optimization_level")


class ModuleOptions(MutableMapping):
    """The options of one module: those set on it, else the global defaults of weft.config."""

    def __init__(self, name: str):
        self._name = name

    @property
    def _own(self) -> dict:
        return MODULE_OPTIONS.setdefault(self._name, {})

    def _defaults(self) -> dict:
        return {key: getattr(config, key) for key in _FROM_CONFIG}

    def __getitem__(self, key):  # (on the launch path: Kernel.fast_math)
        own = MODULE_OPTIONS.get(self._name)
        if own is not None and key in own and (own[key] is not None or key not in _FROM_CONFIG):
            return own[key]  # (None: the global setting)
        if key in _FROM_CONFIG:
            return getattr(config, key)
        raise KeyError(key)

    def __setitem__(self, key, value):
        self._own[key] = value
        config.changes += 1  # kernels of this module may compile differently now

    def __delitem__(self, key):
        del self._own[key]

    def __iter__(self):
        return iter({**self._defaults(), **MODULE_OPTIONS.get(self._name, {})})

    def __len__(self):
        return len({**self._defaults(), **MODULE_OPTIONS.get(self._name, {})})

    def __repr__(self):
        return repr(dict(self))


class Module:
    """A named group of kernels with shared options (Warp's `Module`)."""

    def __init__(self, name: str, loader=None):
        self.name = name
        self.loader = loader  # (Warp's: what loaded the Python module; kept, unused)
        self.kernels: dict = {}  # key -> Kernel; a kernel defined again under its key replaces it
        self.options = ModuleOptions(name)

    def register_kernel(self, kernel):
        self.kernels[kernel.key] = kernel

    def find_kernels(self, qualname: str) -> list:
        """The kernels made from functions of this Python qualified name."""
        return [k for k in self.kernels.values() if k.func.__qualname__ == qualname]

    def hash_module(self) -> str:
        """A content hash of the module: its kernels' sources, those of the funcs and the
        struct layouts they use (followed through the names they reference), and the
        module's options. Modules with the same content hash alike, whatever their names."""
        h = hashlib.sha256()
        seen: set = set()
        for key in sorted(self.kernels):
            kernel = self.kernels[key]
            h.update(key.encode())
            h.update(kernel.source_text.encode())
            h.update(repr(sorted(kernel.options.items())).encode())
            _hash_references(h, kernel.func, seen)
        h.update(repr(sorted(self.options.items(), key=lambda kv: kv[0])).encode())
        h.update(repr([getattr(config, name, None) for name in _COMPILE_SETTINGS]).encode())
        return h.hexdigest()

    get_module_hash = hash_module

    def load(self, device=None, block_dim=None) -> bool:
        """Compile the module's kernels now, ahead of their first launch (for contiguous
        arrays, the common case). A kernel that does not compile is skipped here: it reports
        its error where it is launched, as weft compiles each kernel on its own."""
        from .errors import CompileError
        for kernel in list(self.kernels.values()):
            if kernel.is_generic:
                continue
            try:
                kernel.compiled(kernel.contiguous_spec())
            except (CompileError, TypeError):
                pass
        return True

    def __repr__(self):
        return f"<weft module {self.name!r}>"


def get_module(name: str) -> Module:
    """The module of this name, created on first use."""
    module = _MODULES.get(name)
    if module is None:
        module = _MODULES[name] = Module(name)
    return module


def unique_module(base: str) -> Module:
    """A new module of its own (Warp's `module="unique"`)."""
    return get_module(f"{base}__unique{next(_unique_ids)}")


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
            for overload in value.overloads:
                try:
                    h.update("".join(source_lines(overload.pyfunc)[0]).encode())
                except (OSError, TypeError):
                    h.update(overload.pyfunc.__code__.co_code)
                _hash_references(h, overload.pyfunc, seen)
        elif isinstance(value, StructType):
            seen.add(id(value))
            h.update(repr([(n, repr(t)) for n, t in value.fields.items()]).encode())


def _names(code) -> set:
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names(const)
    return names
