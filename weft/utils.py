"""Small utilities from Warp's API that ported programs use."""

from __future__ import annotations

import sys
import time

# array reductions (owned by the arrays runtime; kept in their own module)
from .runtime.reduce import array_inner, array_sum  # noqa: F401


class ScopedTimer:
    """`with ScopedTimer("step"):` prints the elapsed wall time of the block in ms.
    `elapsed` holds it afterwards (ms); `print=False` keeps quiet."""

    def __init__(self, name: str = "", active: bool = True, print: bool = True, dict=None, **_ignored):  # noqa: A002
        self.name = name
        self.active = active
        self.print = print
        self.dict = dict
        self.elapsed = 0.0

    def __enter__(self):
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.elapsed = (time.perf_counter() - self._start) * 1e3
        if self.dict is not None:
            self.dict.setdefault(self.name, []).append(self.elapsed)
        if self.active and self.print:
            import builtins
            builtins.print(f"{self.name} took {self.elapsed:.2f} ms")
        return False


MODULE_OPTIONS: dict[str, dict] = {}
_KNOWN = ("fast_math", "enable_backward")
_IGNORED = ("max_unroll", "lineinfo", "cuda_output", "block_dim", "mode")


def _module_name(module, depth: int) -> str:
    if module is None:
        return sys._getframe(depth + 1).f_globals.get("__name__", "__main__")
    return module if isinstance(module, str) else module.__name__


def set_module_options(options: dict, module=None) -> None:
    """Options for the kernels of one Python module (the caller's by default), as Warp's:
    `fast_math` lets LLVM reassociate float math there; `enable_backward` as in Warp."""
    for key in options:
        if key not in _KNOWN + _IGNORED:
            raise ValueError(f"unknown module option {key!r}; known: {', '.join(_KNOWN)}")
    from . import config
    MODULE_OPTIONS.setdefault(_module_name(module, 1), {}).update(
        {k: v for k, v in options.items() if k in _KNOWN})
    config.changes += 1  # kernels of that module may compile differently now


def get_module_options(module=None) -> dict:
    from . import config
    options = {"fast_math": config.fast_math, "enable_backward": config.enable_backward}
    options.update(MODULE_OPTIONS.get(_module_name(module, 1), {}))
    return options
