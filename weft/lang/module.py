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
        if own is not None and key in own:
            return own[key]
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

    def __init__(self, name: str):
        self.name = name
        self.kernels: dict = {}  # key -> Kernel; a kernel defined again under its key replaces it
        self.options = ModuleOptions(name)

    def register_kernel(self, kernel):
        self.kernels[kernel.key] = kernel

    def find_kernels(self, qualname: str) -> list:
        """The kernels made from functions of this Python qualified name."""
        return [k for k in self.kernels.values() if k.func.__qualname__ == qualname]

    def hash_module(self) -> str:
        """A content hash of the module: its kernels' sources and its options."""
        h = hashlib.sha256(self.name.encode())
        for key in sorted(self.kernels):
            h.update(key.encode())
            h.update(self.kernels[key].source_text.encode())
            h.update(_types_signature(self.kernels[key]).encode())
        h.update(repr(sorted(self.options.items(), key=lambda kv: kv[0])).encode())
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
