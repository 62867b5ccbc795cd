"""Shared helpers: peer loading, timing, result validation and table printing.

Every workload module builds, for each peer, a :class:`Case` (a zero-argument
``run`` callable, an optional ``sync`` and a ``check``) and hands them to
:func:`measure_all`, which validates one run of each against numpy before
timing anything, so a framework that computes garbage cannot look fast.
"""

import contextlib
import importlib
import io
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Peers in table order. "weft" is the project under test, "warp" the reference API.
PEERS = ("weft", "warp", "numpy", "torch", "jax", "taichi")

#: Device string passed to Warp-style ``launch``/``array`` calls.
DEVICE = "cpu"

# Quiet peers before anything imports them (peer_versions() imports them all).
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "False")


# --------------------------------------------------------------------------- #
# Settings shared by all workloads (the runner may change them).
# --------------------------------------------------------------------------- #
@dataclass
class Settings:
    """Global knobs for a benchmark run."""

    quick: bool = False  # smaller problem sizes, shorter time budget
    budget_s: float = 1.0  # target wall time spent timing one case
    min_reps: int = 3
    max_reps: int = 50
    peers: tuple = PEERS  # peers to run (others print "skipped")


SETTINGS = Settings()


# --------------------------------------------------------------------------- #
# Peer loading
# --------------------------------------------------------------------------- #
def _load_weft():
    import weft

    cfg = getattr(weft, "config", None)
    if cfg is not None:
        try:
            cfg.quiet = True
        except Exception:  # a read-only config is fine
            pass
    init = getattr(weft, "init", None)
    if callable(init):
        init()
    return weft


def _load_warp():
    import warp

    warp.config.quiet = True  # Warp < 1.10
    if hasattr(warp, "LOG_WARNING"):
        warp.config.log_level = warp.LOG_WARNING  # Warp >= 1.10
    # Adjoint kernels are never launched here; skipping them only speeds up loads.
    warp.config.enable_backward = False
    warp.init()
    return warp


def _load_torch():
    import torch

    return torch


def _load_jax():
    import jax

    return jax


def _load_taichi():
    import taichi as ti

    with contextlib.redirect_stdout(io.StringIO()):  # "[Taichi] Starting on arch=x64"
        ti.init(arch=ti.cpu, log_level=ti.WARN)
    return ti


_LOADERS = {
    "weft": _load_weft,
    "warp": _load_warp,
    "numpy": lambda: np,
    "torch": _load_torch,
    "jax": _load_jax,
    "taichi": _load_taichi,
}
_LOADED: dict = {}


def one_line(exc: BaseException, limit: int = 70) -> str:
    """Format an exception as a short single line for a table cell."""
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def get_peer(name: str):
    """Return ``(module, reason)``; ``module`` is None when the peer is unavailable."""
    if name not in SETTINGS.peers:
        return None, "skipped"
    if name not in _LOADED:
        try:
            _LOADED[name] = (_LOADERS[name](), "")
        except Exception as exc:  # any failure means "not available"
            _LOADED[name] = (None, one_line(exc))
    return _LOADED[name]


def peer_versions() -> dict:
    """Versions of Python, numpy and every importable peer (``None`` if missing)."""
    out = {
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "cpus": os.cpu_count(),
        "numpy": np.__version__,
    }
    for name, mod_name in (("weft", "weft"), ("warp", "warp"), ("torch", "torch"),
                           ("jax", "jax"), ("jaxlib", "jaxlib"), ("taichi", "taichi"),
                           ("llvmlite", "llvmlite")):
        if name in ("weft", "warp", "torch", "jax", "taichi") and name not in SETTINGS.peers:
            out[name] = None
            continue
        try:
            mod = sys.modules.get(mod_name) or importlib.import_module(mod_name)
        except Exception:
            out[name] = None
            continue
        ver = getattr(mod, "__version__", None)
        if isinstance(ver, (tuple, list)):
            ver = ".".join(str(v) for v in ver)
        out[name] = str(ver) if ver is not None else "?"
    torch = sys.modules.get("torch")
    if torch is not None:
        out["torch_threads"] = torch.get_num_threads()
    return out


def sync_device(wp) -> None:
    """Wait for pending work of a Warp-like module on the CPU device (if it can)."""
    fn = getattr(wp, "synchronize_device", None)
    if fn is not None:
        fn(DEVICE)
        return
    fn = getattr(wp, "synchronize", None)
    if fn is not None:
        fn()


# --------------------------------------------------------------------------- #
# Validation
# --------------------------------------------------------------------------- #
@dataclass
class Check:
    """Outcome of comparing a peer's output with the numpy reference."""

    ok: bool
    text: str


def compare(out, ref, tol: float, *, relative: bool = False, label: str = "err") -> Check:
    """Max abs (or max-abs-relative-to-max|ref|) difference, compared with ``tol``."""
    out = np.asarray(out, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if out.shape != ref.shape:
        return Check(False, f"FAIL shape {out.shape} != {ref.shape}")
    err = float(np.max(np.abs(out - ref))) if out.size else 0.0
    if relative:
        err /= max(float(np.max(np.abs(ref))), 1e-30)
    ok = bool(np.isfinite(err) and err <= tol)
    return Check(ok, f"{'ok' if ok else 'FAIL'} {label} {err:.1e}")


# --------------------------------------------------------------------------- #
# Cases and rows
# --------------------------------------------------------------------------- #
@dataclass
class Case:
    """One peer's prepared workload: ``run`` is timed, ``check`` validates."""

    run: Callable[[], Any]
    sync: Callable[[], Any] | None = None
    check: Callable[[], Check] | None = None
    per_call: int = 1  # time per row = time of one run / per_call

    def once(self) -> float:
        """Seconds for one ``run(); sync()``."""
        t0 = time.perf_counter()
        self.run()
        if self.sync is not None:
            self.sync()
        return time.perf_counter() - t0


@dataclass
class Row:
    """One line of a result table."""

    peer: str
    seconds: float | None  # median time, None when not measured
    metric: float | None = None
    check: str = ""
    variant: str = ""
    note: str = ""
    extra: dict = field(default_factory=dict)


@dataclass
class Spec:
    """What to measure: a peer name, a builder ``build(module) -> Case``, a variant."""

    peer: str
    build: Callable[[Any], Case] | None
    variant: str = ""


def _prepare(spec: Spec) -> tuple:
    """Build the case, run it once and validate; returns (case, check) or (None, note)."""
    if spec.build is None:
        return None, "not implemented for this peer"
    mod, reason = get_peer(spec.peer)
    if mod is None:
        return None, reason
    try:
        case = spec.build(mod)
        case.once()  # first call: compiles / warms caches
        chk = case.check() if case.check is not None else Check(True, "")
    except Exception as exc:  # report and keep going
        return None, one_line(exc)
    return case, chk


def measure_all(specs: list, metric: Callable[[float], float] | None = None, *,
                rounds: int = 8) -> list:
    """Validate, then time all specs interleaved; returns one Row per spec.

    Every case is built and checked first. Timing then runs in ``rounds``
    rounds that each give every case a share of its repetitions, so slow
    phases of a noisy (shared, virtualised) machine hit all peers alike.
    Each case gets ``budget_s`` seconds of samples, clamped to
    ``[min_reps, max_reps]`` samples, and reports the median.
    """
    prepared = [_prepare(spec) for spec in specs]
    samples: dict = {}
    notes: dict = {}
    plan: dict = {}
    for i, (case, _) in enumerate(prepared):
        if case is None:
            continue
        try:
            case.once()  # warm-up
            first = case.once()
        except Exception as exc:
            notes[i] = one_line(exc)
            continue
        reps = math.ceil(SETTINGS.budget_s / max(first, 1e-9))
        reps = max(SETTINGS.min_reps, min(SETTINGS.max_reps, reps))
        samples[i] = [first]
        # spread the remaining reps - 1 samples evenly over the rounds
        plan[i] = [(r + 1) * (reps - 1) // rounds - r * (reps - 1) // rounds
                   for r in range(rounds)]
    for r in range(rounds):
        for i in list(samples):
            try:
                samples[i].extend(prepared[i][0].once() for _ in range(plan[i][r]))
            except Exception as exc:
                notes[i] = one_line(exc)
                del samples[i]
    rows = []
    for i, spec in enumerate(specs):
        case, info = prepared[i]
        if case is None or i in notes:
            rows.append(Row(spec.peer, None, variant=spec.variant, note=notes.get(i, info)))
            continue
        secs = statistics.median(samples[i]) / case.per_call
        rows.append(Row(spec.peer, secs, metric(secs) if metric else None, info.text,
                        spec.variant, extra={"reps": len(samples[i]),
                                             "best_s": min(samples[i]) / case.per_call}))
    return rows


# --------------------------------------------------------------------------- #
# Output
# --------------------------------------------------------------------------- #
def fmt_time(secs: float | None) -> str:
    """Human-readable duration."""
    if secs is None:
        return "n/a"
    if secs >= 1.0:
        return f"{secs:.3f} s"
    if secs >= 1e-3:
        return f"{secs * 1e3:.2f} ms"
    return f"{secs * 1e6:.2f} us"


def fmt_num(x: float | None) -> str:
    """Compact number (3 significant digits) for metric and ratio columns."""
    if x is None:
        return "-"
    if abs(x) >= 1000:
        return f"{x:.0f}"
    return f"{x:.3g}"


def fmt_ratio(x: float | None) -> str:
    """Ratio with two decimals (three significant digits when tiny)."""
    if x is None:
        return "-"
    if x >= 100:
        return f"{x:.0f}"
    return f"{x:.2f}" if x >= 0.01 else f"{x:.2g}"


def _ratio(row: Row, rows: list, base: str) -> float | None:
    ref = next((r for r in rows if r.peer == base and r.variant == row.variant), None)
    if ref is None:  # (a variant only one peer has, as torch.compile: against the plain case)
        ref = next((r for r in rows if r.peer == base and not r.variant), None)
    if ref is None or ref.seconds is None or row.seconds is None or ref.seconds <= 0:
        return None
    return row.seconds / ref.seconds


def print_table(title: str, rows: list, metric_name: str | None = None,
                time_name: str = "time", file=None) -> None:
    """Print rows with ratios ``time / weft time`` and ``time / warp time``."""
    file = file or sys.stdout
    rows = [r for r in rows if r.note != "skipped"]  # peers left out with --peers
    has_variant = any(r.variant for r in rows)
    head = (["case"] if has_variant else []) + ["peer", time_name, "best"]
    head += [metric_name] if metric_name else []
    head += ["x weft", "x warp", "check / note"]
    body = []
    for r in rows:
        best = r.extra.get("best_s") if r.seconds is not None else None
        line = ([r.variant] if has_variant else []) + [r.peer, fmt_time(r.seconds),
                                                       fmt_time(best) if best else "-"]
        line += [fmt_num(r.metric)] if metric_name else []
        line += [fmt_ratio(_ratio(r, rows, "weft")), fmt_ratio(_ratio(r, rows, "warp"))]
        line.append(" ".join(t for t in (r.check, r.note) if t))
        body.append(line)
    widths = [max(len(str(x[i])) for x in [head] + body) for i in range(len(head))]
    print(f"\n== {title} ==", file=file)
    for line in [head] + body:
        cells = [str(c).ljust(w) if i in (0, len(head) - 1) or (has_variant and i == 1)
                 else str(c).rjust(w) for i, (c, w) in enumerate(zip(line, widths))]
        print("  ".join(cells).rstrip(), file=file)
    print(f"{time_name} = median, best = fastest sample; "
          "x weft = time / weft time (> 1: weft faster), x warp likewise", file=file)
    file.flush()


@dataclass
class Report:
    """Everything a workload returns to the runner."""

    name: str
    title: str
    rows: list
    metric_name: str | None = None
    time_name: str = "time"
    notes: list = field(default_factory=list)

    def print(self, file=None) -> None:
        """Print the table followed by the notes."""
        file = file or sys.stdout
        print_table(self.title, self.rows, self.metric_name, self.time_name, file=file)
        for note in self.notes:
            print(note, file=file)
        file.flush()


def row_dicts(rows: list) -> list:
    """Rows as JSON-serialisable dicts."""
    return [{"peer": r.peer, "variant": r.variant, "seconds": r.seconds, "metric": r.metric,
             "check": r.check, "note": r.note, **r.extra} for r in rows]
