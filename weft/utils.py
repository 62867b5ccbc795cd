"""Small utilities from Warp's API that ported programs use."""

from __future__ import annotations

import time


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


def set_module_options(options: dict, module=None) -> None:
    """Warp's per-module options; weft applies the ones it knows globally (`weft.config`)."""
    from . import config
    for key, value in options.items():
        if key in ("fast_math", "mode"):
            setattr(config, key, value)
        elif key == "enable_backward":
            config.enable_backward = bool(value)
        elif key not in ("max_unroll", "lineinfo", "cuda_output", "block_dim"):
            raise ValueError(f"unknown module option {key!r}")


def get_module_options(module=None) -> dict:
    from . import config
    return {"fast_math": config.fast_math, "mode": config.mode,
            "enable_backward": getattr(config, "enable_backward", True)}
