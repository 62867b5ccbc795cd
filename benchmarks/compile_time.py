"""compile: whole-process time to import, compile and run a module of 5 kernels.

Each measurement is a fresh ``python benchmarks/compile_child.py`` process
timed from spawn to exit. "cold" uses an empty kernel cache directory, "warm"
a second process reusing the same directory. The metric column is the time
spent inside the child after import/init (defining, compiling or loading, and
launching the kernels), which leaves out interpreter and import cost.
Warp is shown with its default settings (it also generates adjoint kernels)
and with ``enable_backward = False``.

Both frameworks import from bytecode: pip compiles an installed package's sources
(Warp's wheel), and this benchmark compiles weft's checkout the same way before
timing (``compileall``), so that an environment with ``PYTHONDONTWRITEBYTECODE=1``
does not time the compilation of weft's Python sources on every start.
"""

import compileall
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import SETTINGS, Report, Row, one_line

NAME = "compile"
ROOT = Path(__file__).resolve().parent.parent
CHILD = Path(__file__).resolve().with_name("compile_child.py")

#: (row label, framework module, extra child arguments)
CONFIGS = (
    ("weft", "weft", []),
    ("warp", "warp", []),
    ("warp -bwd", "warp", ["--no-backward"]),
)


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def spawn(args: list) -> tuple:
    """Run ``python ARGS``; return (wall seconds, completed process)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          env=_env(), cwd=ROOT, timeout=600, check=False)
    return time.perf_counter() - t0, proc


def run_child(framework: str, cache_dir: str, extra: list) -> tuple:
    """One child run: (wall seconds, result dict); raises RuntimeError on failure."""
    wall, proc = spawn([str(CHILD), framework, cache_dir, *extra])
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        err = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"exit {proc.returncode}: {err}")
    return wall, json.loads(lines[-1])


def _rows(label: str, samples: dict) -> list:
    """Cold and warm rows from ``{"cold": [(wall, info)], "warm": [...]}``."""
    rows = []
    for variant, runs in samples.items():
        ok = all(info["ok"] for _, info in runs)
        err = max(info["err"] for _, info in runs)
        rows.append(Row(label, statistics.median(w for w, _ in runs),
                        statistics.median(info["kernels_s"] for _, info in runs),
                        f"{'ok' if ok else 'FAIL'} err {err:.1e}", variant,
                        extra={"reps": len(runs), "best_s": min(w for w, _ in runs),
                               "import_s": statistics.median(info["import_s"] for _, info in runs)}))
    return rows


def measure_configs(reps: int) -> list:
    """Cold and warm rows for every configuration, repetitions interleaved."""
    failed: dict = {}
    for label, framework, _ in CONFIGS:
        if label.split()[0] not in SETTINGS.peers:
            failed[label] = "skipped"
        elif importlib.util.find_spec(framework) is None:
            failed[label] = "not installed"
    samples = {label: {"cold": [], "warm": []} for label, _, _ in CONFIGS}
    for _ in range(reps):
        for label, framework, extra in CONFIGS:
            if label in failed:
                continue
            try:
                with tempfile.TemporaryDirectory(prefix=f"bench-{framework}-cache-") as tmp:
                    for variant in ("cold", "warm"):
                        samples[label][variant].append(run_child(framework, tmp, extra))
            except RuntimeError as exc:  # the child failed: show its last stderr line
                failed[label] = str(exc)[:90]
            except Exception as exc:  # report and continue
                failed[label] = one_line(exc, 90)
    rows = []
    for label, _, _ in CONFIGS:
        if label in failed:
            rows += [Row(label, None, variant=v, note=failed[label]) for v in ("cold", "warm")]
        else:
            rows += _rows(label, samples[label])
    return rows


def precompile() -> None:
    """Compile weft's Python sources to bytecode (as `pip install` does for a package)."""
    compileall.compile_dir(str(ROOT / "weft"), quiet=1)


def run() -> Report:
    """Measure every configuration and return the report."""
    precompile()
    reps = 1 if SETTINGS.quick else 3
    base = [spawn(["-c", "import numpy"])[0] for _ in range(reps)]
    rows = [Row("python", statistics.median(base), variant="baseline",
                note="python -c 'import numpy'", extra={"best_s": min(base)})]
    measured = measure_configs(reps)
    for variant in ("cold", "warm"):
        rows.extend(r for r in measured if r.variant == variant)
    return Report(NAME, f"compile: 5-kernel module, whole process (median of {reps})", rows,
                  "in-proc s", "process",
                  notes=["in-proc s: time after import/init until results are checked",
                         "weft's sources were compiled to bytecode first, as pip does for Warp's"])
