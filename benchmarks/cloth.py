"""cloth: Warp's own cloth benchmark program (``warp/examples/benchmarks/benchmark_cloth.py``),
run unchanged on Warp and, with ``import weft as wp``, on weft.

The program files are read at run time from the installed ``warp-lang`` package (nothing of
Warp's is stored here). ``benchmark_cloth.py`` is a script: it builds a cloth (a DIM x DIM grid
of particles with stretch, shear and bend springs, two pinned corners) for DIM = 32, 64 and
128, simulates 60 frames of 16 substeps each with the integrator named on its command line
(``warp_cpu``: ``benchmark_cloth_warp.py``, which calls ``wp.clear_kernel_cache()`` at import,
``wp.ScopedDevice``, ``wp.from_numpy(..., dtype=wp.vec3)`` and launches a spring kernel with
atomics and an integration kernel), times each frame with ``wp.ScopedTimer(dict=...)`` and
appends the averages to ``benchmark.csv``. Each peer runs the script in its own process in a
temporary directory; for weft both files are copied with their ``import warp as wp`` line
changed to ``import weft as wp`` and nothing else. The script imports USD (``pxr``) for
rendering, which it never does here: a placeholder module stands in when USD is missing.

Checked first, in this process: the positions after one frame of each peer's integrator
(``benchmark_cloth_warp.WpIntegrator``) against Warp's numpy integrator of the same program
(``benchmark_cloth_numpy.py``), on a 16 x 16 cloth built by the program's own ``Cloth`` class.
"""

import ast
import importlib.util
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

from benchmarks.common import DEVICE, Check, Report, Row, compare, get_peer, one_line

NAME = "cloth"
PEERS = ("weft", "warp")
DIMS = (32, 64, 128)  # fixed by the program
SUBSTEPS, DT = 16, 1.0 / 60.0
TOL = 1e-3  # positions (metres, O(1)) after one frame; float32 atomics add in any order
IMPORT_LINE = "import warp as wp\n"


def _program_dir() -> pathlib.Path:
    warp, reason = get_peer("warp")
    if warp is None:
        raise RuntimeError(f"needs Warp's benchmark program from warp-lang ({reason})")
    return pathlib.Path(warp.__file__).parent / "examples" / "benchmarks"


def _copy_program(peer: str) -> pathlib.Path:
    """A temp dir with the program, ported to `peer` by its import line only."""
    work = pathlib.Path(tempfile.mkdtemp(prefix=f"cloth_{peer}_"))
    for name in ("benchmark_cloth.py", "benchmark_cloth_warp.py"):
        text = (_program_dir() / name).read_text()
        if IMPORT_LINE not in text:
            raise RuntimeError(f"{name} does not `import warp as wp`")
        if peer == "weft":
            text = text.replace(IMPORT_LINE, "import weft as wp\n", 1)
        (work / name).write_text(text)
    if importlib.util.find_spec("pxr") is None:
        (work / "pxr.py").write_text("Usd = UsdGeom = None  # the benchmark renders nothing\n")
    return work


def _load(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _cloth_class():
    """The program's `Cloth` class alone (its module is a script that runs the benchmark)."""
    path = _program_dir() / "benchmark_cloth.py"
    tree = ast.parse(path.read_text())
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Cloth")
    namespace = {"np": np}
    exec(compile(ast.Module([node], []), str(path), "exec"), namespace)
    return namespace["Cloth"]


def _make_cloth(dim):
    return _cloth_class()(lower=(0.0, 0.0, 0.0), dx=dim, dy=dim, radius=0.1, stretch_stiffness=1000.0,
                          bend_stiffness=1000.0, shear_stiffness=1000.0, mass=0.1, fix_corners=True)


def check(peer: str, dim: int = 16) -> Check:
    """One frame of `peer`'s integrator against the program's numpy integrator."""
    numpy_module = _load(_program_dir() / "benchmark_cloth_numpy.py", "benchmark_cloth_numpy")
    want = np.array(numpy_module.NpIntegrator(_make_cloth(dim)).simulate(DT, SUBSTEPS))
    integrator_module = _load(_copy_program(peer) / "benchmark_cloth_warp.py", f"benchmark_cloth_{peer}")
    got = integrator_module.WpIntegrator(_make_cloth(dim), DEVICE).simulate(DT, SUBSTEPS)
    return compare(np.array(got), want, TOL, label="vs numpy")


def time_program(peer: str) -> dict:
    """Run the unchanged script for `peer`; returns {timer: (min, avg) milliseconds} from the
    summary lines it prints (`NAME min: X max: Y avg: Z`)."""
    work = _copy_program(peer)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(work), *sys.path]))
    proc = subprocess.run([sys.executable, "benchmark_cloth.py", "warp_cpu"], cwd=work, env=env,
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed")
    times = {}
    for line in proc.stdout.splitlines():
        name, sep, rest = line.partition(" min: ")
        if sep:
            fields = rest.split()  # X max: Y avg: Z
            times[name.strip()] = (float(fields[0]), float(fields[-1]))
    return times


def run() -> Report:
    rows = []
    for peer in PEERS:
        try:
            chk = check(peer)
            times = time_program(peer)
        except Exception as exc:  # report and keep going
            rows.extend(Row(peer, None, variant=f"{d}^2", note=one_line(exc)) for d in DIMS)
            continue
        for d in DIMS:
            best, mean = times[f"Dim ({d}^2)"]
            extra = {"best_s": best / 1e3, "mean_s": mean / 1e3, "init_s": times["Initialization"][1] / 1e3}
            rows.append(Row(peer, best / 1e3, 1e3 / best, chk.text, f"{d}^2", note=f"mean {mean:.2f} ms",
                            extra=extra))
    return Report(NAME, "cloth: Warp's benchmark_cloth.py, unchanged (weft: its import line), "
                        "time per frame of 16 substeps", rows, "frames/s",
                  notes=["time = the fastest of the program's 60 frames (its ScopedTimer dict); its mean, which "
                         "includes compiling in the first frame after clear_kernel_cache(), is in the note"])
