"""Warp's own example programs, as shipped in the warp-lang wheel, run unchanged on weft.

    python tests/programs/warp_examples.py [NAME ...] [--all]

Each example runs in its own process with `warp` meaning weft (an import hook maps `warp`
and `warp.X` to `weft` and `weft.X`; `warp.examples`, which holds the examples' assets,
stays Warp's), headless, on the CPU, for a few frames or iterations, and must exit with
status 0. CUDA-only examples are listed but not run; those that read USD files run where
usd-core (`pxr`) is installed.
test_warp_examples.py runs the quick ones when warp-lang is installed.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time

#: (example, its arguments): headless, a few frames. The last field: True for the quick ones
#: that the test suite runs.
EXAMPLES = [
    ("core/example_wave", ["--num-frames", "3"], True),
    ("core/example_fluid", ["--num-frames", "3"], True),
    ("core/example_nvdb", ["--num-frames", "3"], True),
    ("core/example_sample_mesh", ["--num-frames", "3"], True),
    ("core/example_graph_capture", ["--num-frames", "3"], True),
    ("core/example_torch", ["--num-frames", "3", "--train-iters", "3"], True),
    ("optim/example_particle_repulsion", ["--num-frames", "3"], True),
    ("optim/example_fluid_checkpoint", ["--train-iters", "2"], False),  # (1,000 steps a pass: minutes)
    ("optim/example_navier_stokes_perturbation", ["--spin-up-steps", "10", "--train-iters", "2"], False),
    ("tile/example_tile_matmul", [], True),
    ("tile/example_tile_cholesky", [], True),
    ("tile/example_tile_block_cholesky", [], True),
    ("tile/example_tile_nbody", ["--num-frames", "3"], True),
    ("tile/example_tile_mcgp", ["--slices", "4"], False),
    ("interop/example_jax_kernel", [], False),
    ("interop/example_jax_callable", [], False),
    ("core/example_dem", ["--num-frames", "1"], False),
    ("core/example_sph", ["--num-frames", "1"], False),
    ("core/example_fdtd_3d", ["--resolution", "48", "--num-steps", "100"], True),  # (energies match Warp's to 5e-5)
    ("core/example_fft_poisson_navier_stokes_2d", ["--num-steps", "20", "--sim-substeps", "10"], False),
    ("core/example_raymarch", ["--width", "256", "--height", "128"], True),
    ("core/example_alloc_tracker", [], True),  # (Warp 1.19's own CPU run fails: "Failed to allocate")
    ("geometry/example_isosurface", ["--num-frames", "3"], True),
    ("geometry/example_isosurface", ["--num-frames", "3", "--method", "surface_nets", "--topology", "quad"], False),
    ("optim/example_fluid_checkpoint_custom_backward",  # (loss 0.519223 vs Warp's 0.519232 after 20 frames)
     ["--num-frames", "20", "--train-iters", "2", "--pressure-iterations", "5"], False),
    # These read USD assets: they run where usd-core (`pxr`) is installed, and are skipped elsewhere.
    ("core/example_mesh", ["--num-frames", "3"], True),
    ("core/example_raycast", [], True),
    ("core/example_mesh_intersect", [], True),
    # (weft's rotation gradient differs from Warp's: Warp's adjoint drops the Lambert sum of a
    # dynamic loop; see test_warp_gradient_differences.py)
    ("optim/example_diffray", ["--train-iters", "2", "--height", "128"], True),
    ("geometry/example_sparse_marching_cubes", ["--num-frames", "2"], False),
    ("geometry/example_swept_volume", ["--num-samples", "100"], False),
]
#: Examples that import a module weft does not need: skipped when it is missing.
NEEDS = {name: "pxr" for name in ("core/example_mesh", "core/example_raycast", "core/example_mesh_intersect",
                                  "optim/example_diffray", "geometry/example_sparse_marching_cubes",
                                  "geometry/example_swept_volume")}
COMMON = ["--headless", "--stage-path", "None", "--device", "cpu"]

#: Not run: what they need that weft or this machine does not have.
NOT_RUN = {
    "tile/example_tile_convolution": "CUDA", "tile/example_tile_fft": "CUDA", "tile/example_tile_filtering": "CUDA",
    "tile/example_tile_mlp": "CUDA", "tile/example_tile_stream_compaction": "CUDA",
    "core/example_custom_allocator": "CUDA (Warp refuses custom allocators on the CPU)",
    "core/example_cupy": "CuPy (CUDA)", "core/example_render_opengl": "an OpenGL window",
    "distributed/*": "MPI, NCCL or NVSHMEM on GPUs", "fem/*": "warp.fem (not in weft)",
    "core/example_spin_lock": "CUDA (and warp.tests.unittest_utils)",
    "core/example_work_queue": "CUDA (and warp.tests.unittest_utils)",
}

# Runs in the example's process: `warp` and `warp.X` are weft and weft.X.
ALIAS = r'''
import importlib, importlib.abc, importlib.util, os, runpy, sys
examples_dir = sys.argv[1]

class WarpIsWeft(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name == "warp.examples":  # (Warp's package, for get_asset_directory())
            return importlib.util.spec_from_file_location(
                name, os.path.join(examples_dir, "__init__.py"), submodule_search_locations=[examples_dir])
        if name == "warp" or (name.startswith("warp.") and not name.startswith("warp.examples.")):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("weft" + spec.name[4:])

    def exec_module(self, module):
        pass

sys.meta_path.insert(0, WarpIsWeft())
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
'''


def examples_dir() -> str | None:
    """The `warp/examples` folder of the installed warp-lang, or None."""
    spec = importlib.util.find_spec("warp")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "examples")
    return path if os.path.isdir(path) else None


def missing_module(name: str) -> str | None:
    """The module that example `name` needs and this Python lacks, or None."""
    needed = NEEDS.get(name)
    return needed if needed and importlib.util.find_spec(needed) is None else None


def run_example(name: str, args: list[str], timeout: float = 600) -> tuple[bool, str, float]:
    """(exited with 0, the end of its output, seconds) for Warp's example `name` on weft."""
    folder = examples_dir()
    script = os.path.join(folder, name + ".py")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", ALIAS, folder, script, *COMMON, *args], capture_output=True,
                              text=True, timeout=timeout, env=env, cwd=os.path.dirname(script))
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:.0f} s", time.perf_counter() - start
    output = (done.stdout + done.stderr).strip()
    return done.returncode == 0, output[-600:], time.perf_counter() - start


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if examples_dir() is None:
        print("warp-lang is not installed: its examples are not available")
        return 1
    chosen = [e for e in EXAMPLES if e[0] in argv or os.path.basename(e[0]) in argv] or \
        [e for e in EXAMPLES if "--all" in argv or e[2]]
    failures = skipped = 0
    for name, args, _quick in chosen:
        if missing_module(name):
            print(f"skipped {name} (needs {missing_module(name)})")
            skipped += 1
            continue
        ok, tail, seconds = run_example(name, args)
        failures += not ok
        print(f"{'ran   ' if ok else 'FAILED'} {name} ({seconds:.1f} s)")
        if not ok:
            print("    " + tail.replace("\n", "\n    "))
    print(f"{len(chosen) - failures - skipped} of {len(chosen) - skipped} ran; not run: " +
          "; ".join(f"{k} ({v})" for k, v in NOT_RUN.items()))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
