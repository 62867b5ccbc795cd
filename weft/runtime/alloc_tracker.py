"""The allocation tracker behind `weft.ScopedMemoryTracker`, `weft.print_memory_report` and
`weft.config.track_memory`.

While tracking is on, every array allocation (`array_memory.allocate`, the one place weft
allocates array memory) is recorded with its size, the scope it was made in (the names of
the trackers open on its thread, joined by "/"), and a tag naming where it came from: for
a program's array, `array[float32, 32] : file.py:12 : func()`; for memory a weft object
allocates for itself, the object's subsystem (`(native:hashgrid)`, `(native:bvh)`,
`(native:mesh)`) and the program line that made it. An allocation stays live until its
memory is freed (the last array viewing it is collected). Totals, peak and live bytes are
global; scope stacks are per thread. When tracking is off, `allocate` reads one module
attribute (`enabled`) and does nothing more.
"""

from __future__ import annotations

import itertools
import os
import sys
import threading
import weakref
from dataclasses import dataclass

from .. import config

#: True while allocations are recorded (read by array_memory.allocate on every allocation).
enabled = False


@dataclass
class _Record:
    seq: int
    size: int
    tag: str
    scope: str


_lock = threading.Lock()
_local = threading.local()  # .scopes: this thread's open tracker names
_seq = itertools.count()
_live: dict[int, _Record] = {}
_total_count = 0
_total_bytes = 0
_current_bytes = 0
_peak_bytes = 0
_scope_totals: dict[str, list] = {}  # scope path -> [count, bytes]
_global_scope = False  # tracking was turned on by config.track_memory


# weft modules whose allocations belong to a native-like subsystem, by module name prefix
_SUBSYSTEMS = (
    ("weft.geometry.hash_grid", "hashgrid"),
    ("weft.geometry.mesh", "mesh"),
    ("weft.geometry.bvh", "bvh"),
    ("weft.geometry.volume", "volume"),
    ("weft.geometry.nanovdb", "volume"),
    ("weft.geometry.marching_cubes", "marching_cubes"),
    ("weft.geometry.iso_surface", "marching_cubes"),
    ("weft.sparse", "sparse"),
)


def _scopes() -> list:
    scopes = getattr(_local, "scopes", None)
    if scopes is None:
        scopes = _local.scopes = []
    return scopes


def push_scope(name: str) -> None:
    _scopes().append(str(name))


def pop_scope() -> None:
    scopes = _scopes()
    if scopes:
        scopes.pop()


def enable(flag: bool) -> None:
    global enabled
    enabled = bool(flag)


def is_enabled() -> bool:
    return enabled


def reset() -> None:
    """Forget every record and total (memory allocated before stays unrecorded)."""
    global _total_count, _total_bytes, _current_bytes, _peak_bytes
    with _lock:
        _live.clear()
        _scope_totals.clear()
        _total_count = _total_bytes = _current_bytes = _peak_bytes = 0


def array_info(dtype, shape: tuple) -> str:
    """`array[float32, 32]`, `array[vec3f, (4, 5)]`: what an allocation was for."""
    from ..types.introspect import type_repr
    try:
        name = type_repr(dtype)
    except Exception:  # noqa: BLE001 - a tag is best effort
        name = getattr(dtype, "__name__", repr(dtype))
    return f"array[{name}, {shape[0]}]" if len(shape) == 1 else f"array[{name}, {tuple(shape)}]"


def call_site(info: str = "", depth: int = 1) -> str:
    """The tag of an allocation made now (`info`: what it is for): walks out of weft's
    frames to the program's, noting the weft subsystem that allocated, if any."""
    try:
        frame = sys._getframe(depth)
    except ValueError:
        return "(python)"
    subsystem = None
    while frame is not None:
        module = frame.f_globals.get("__name__") or ""
        if module != "weft" and not module.startswith("weft.") or module.startswith("weft.examples"):
            parts = [f"(native:{subsystem})"] if subsystem else ([info] if info else [])
            parts.append(f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}")
            parts.append(f"{frame.f_code.co_name}()")
            return " : ".join(parts)
        for prefix, name in _SUBSYSTEMS:
            if module.startswith(prefix):
                subsystem = name  # the outermost one wins (a Mesh's BVH is the mesh's)
                break
        frame = frame.f_back
    return f"(native:{subsystem})" if subsystem else (info or "(python)")


def record(memory, size: int, dtype, shape: tuple) -> None:
    """Record an allocation of `size` bytes for an array of `dtype` and `shape`, held by
    `memory` (a numpy array: the record lives until `memory` is freed)."""
    global _total_count, _total_bytes, _current_bytes, _peak_bytes
    tag = call_site(array_info(dtype, shape))
    scope = "/".join(_scopes()) or "(no scope)"
    with _lock:
        seq = next(_seq)
        _live[seq] = _Record(seq, size, tag, scope)
        _total_count += 1
        _total_bytes += size
        _current_bytes += size
        _peak_bytes = max(_peak_bytes, _current_bytes)
        totals = _scope_totals.setdefault(scope, [0, 0])
        totals[0] += 1
        totals[1] += size
    weakref.finalize(memory, _release, seq)


def _release(seq: int) -> None:
    global _current_bytes
    with _lock:
        rec = _live.pop(seq, None)
        if rec is not None:
            _current_bytes -= rec.size


def total_alloc_count() -> int:
    return _total_count


def total_alloc_bytes() -> int:
    return _total_bytes


def live_count() -> int:
    return len(_live)


def current_bytes() -> int:
    return _current_bytes


def peak_bytes() -> int:
    return _peak_bytes


def format_bytes(n: int) -> str:
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.2f} {unit}"
    return f"{n} B"


def report_text(sort_order: int = 0, max_items: int = 10) -> str:
    """The report: totals, peak, live allocations, per-scope totals, then the largest
    (`sort_order` 0) or oldest (1) live allocations, at most `max_items` of them."""
    with _lock:
        live = list(_live.values())
        scopes = {k: tuple(v) for k, v in _scope_totals.items()}
        total_count, total_bytes, peak, current = _total_count, _total_bytes, _peak_bytes, _current_bytes
    lines = ["Allocation Tracking Report",
             "  Total allocations:", f"    cpu              {total_count} ({format_bytes(total_bytes)})",
             "  Peak usage:", f"    cpu              {format_bytes(peak)}",
             "  Live allocations:"]
    lines.append(f"    cpu              {len(live)} ({format_bytes(current)})" if live else "    (none)")
    if scopes:
        lines += ["", "  Scope breakdown:"]
        for scope, (count, nbytes) in sorted(scopes.items()):
            lines += [f"    {scope}:", f"      cpu: {count} allocs, {format_bytes(nbytes)}"]
    if live:
        if sort_order == 1:
            live.sort(key=lambda r: r.seq)
            order = "chronological"
        else:
            live.sort(key=lambda r: (-r.size, r.seq))
            order = "by size (largest first)"
        shown = live[:max(0, int(max_items))]
        lines += ["", f"  Live cpu allocations {order} (up to {max_items}):"]
        lines += [f"    {format_bytes(r.size)} : cpu : {r.tag} [{r.scope}]" for r in shown]
        if len(live) > len(shown):
            lines.append(f"    ... and {len(live) - len(shown)} more")
    return "\n".join(lines) + "\n"


def check_sort(sort: str) -> int:
    if sort not in ("size", "chronological"):
        raise ValueError(f"Invalid sort order {sort!r}; expected 'size' or 'chronological'")
    return 1 if sort == "chronological" else 0


def print_memory_report(file=None, sort: str = "size", max_items: int = 10) -> None:
    """Print the report of the allocations tracked so far (`sort`: "size" or
    "chronological"). RuntimeError when no tracking is on: use `ScopedMemoryTracker`, or
    set `weft.config.track_memory = True`."""
    order = check_sort(sort)
    if not enabled:
        raise RuntimeError("Allocation tracking is not active. Set weft.config.track_memory = True, "
                           "or use weft.ScopedMemoryTracker as a context manager.")
    print(report_text(order, max_items), file=file or sys.stdout, end="")


def track_memory_changed(value) -> None:
    """`config.track_memory` was set: tracking under a "global" scope starts (True) or stops
    (False, when the setting started it)."""
    global _global_scope
    if value and not enabled:
        push_scope("global")
        enable(True)
        _global_scope = True
    elif not value and _global_scope:
        pop_scope()
        enable(False)
        _global_scope = False


config._watchers["track_memory"] = track_memory_changed
if config.track_memory:
    track_memory_changed(True)


class ScopedMemoryTracker:
    """`with ScopedMemoryTracker("name"):` records the arrays allocated inside the block
    (nested trackers make scopes like "outer/inner"), and prints a report on exit
    (`print=False`: no report; `report_func`: a function given the report text instead).
    `active=False` makes it do nothing. `report()` can be called inside or after the block;
    `clear()` forgets what was recorded so far."""

    def __init__(self, name: str = "root", active: bool = True, print: bool = True,  # noqa: A002 - Warp's name
                 report_func=None):
        self.name = name
        self.active = active
        self.print = print
        self.report_func = report_func
        self._did_enable = False

    def __enter__(self):
        if self.active:
            push_scope(self.name)
            if not enabled:
                enable(True)
                self._did_enable = True
        return self

    def __exit__(self, *exc_info):
        if not self.active:
            return
        pop_scope()
        try:
            if self.print:
                self.report()
        finally:
            if self._did_enable:
                enable(False)
                self._did_enable = False

    def report(self, file=None, sort: str = "size", max_items: int = 10) -> None:
        text = report_text(check_sort(sort), max_items)
        if self.report_func is not None:
            self.report_func(text)
        else:
            print(text, file=file or sys.stdout, end="")

    def clear(self) -> None:
        reset()
