"""Child process of the ``compile`` benchmark (run as a script, not imported).

``python benchmarks/compile_child.py FRAMEWORK CACHE_DIR [--no-backward]``
imports FRAMEWORK ("warp" or "weft"), points its kernel cache at CACHE_DIR,
defines five small kernels, launches each once, checks the results against
numpy and prints one JSON line: ``{"import_s", "kernels_s", "ok", "err"}``.
The parent times the whole process from start to exit.
"""

import json
import sys
import time

T0 = time.perf_counter()

N = 1024
WINDOW = 8


def make_kernels(wp):
    """Five small, different kernels in one module."""

    @wp.kernel
    def k_saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
        i = wp.tid()
        y[i] = a * x[i] + y[i]

    @wp.kernel
    def k_math(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        v = x[i]
        y[i] = wp.sin(v) * wp.exp(-v * v) + wp.sqrt(wp.abs(v))

    @wp.kernel
    def k_cross(u: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3),
                out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = wp.length(wp.cross(u[i], v[i]))

    @wp.kernel
    def k_window(x: wp.array(dtype=float), y: wp.array(dtype=float), n: int, width: int):
        i = wp.tid()
        s = float(0.0)  # noqa: UP018 - Warp wants a typed (non-constant) loop variable
        for j in range(width):
            s = s + x[(i + j) % n]
        y[i] = s

    @wp.kernel
    def k_collatz(a: wp.array(dtype=int), b: wp.array(dtype=int)):
        i = wp.tid()
        v = a[i]
        if v % 2 == 0:
            b[i] = v // 2
        else:
            b[i] = 3 * v + 1

    return k_saxpy, k_math, k_cross, k_window, k_collatz


def load(framework: str, cache_dir: str, backward: bool):
    """Import and configure the framework with a private kernel cache."""
    if framework == "warp":
        import warp as wp

        wp.config.quiet = True
        if hasattr(wp, "LOG_WARNING"):
            wp.config.log_level = wp.LOG_WARNING
        if not backward:
            wp.config.enable_backward = False
    else:
        import weft as wp
    wp.config.kernel_cache_dir = cache_dir
    init = getattr(wp, "init", None)
    if callable(init):
        init()
    return wp


def run_kernels(wp) -> float:
    """Launch each kernel once; return the max error against numpy."""
    import numpy as np

    k_saxpy, k_math, k_cross, k_window, k_collatz = make_kernels(wp)
    rng = np.random.default_rng(0)
    x = rng.uniform(-2.0, 2.0, N).astype(np.float32)
    u = rng.standard_normal((N, 3)).astype(np.float32)
    v = rng.standard_normal((N, 3)).astype(np.float32)
    ints = rng.integers(1, 1000, N).astype(np.int32)

    dev = "cpu"
    xa = wp.array(x, dtype=wp.float32, device=dev)
    ya = wp.array(np.ones(N, np.float32), dtype=wp.float32, device=dev)
    za = wp.zeros(N, dtype=wp.float32, device=dev)
    ua = wp.array(u, dtype=wp.vec3, device=dev)
    va = wp.array(v, dtype=wp.vec3, device=dev)
    ca = wp.zeros(N, dtype=wp.float32, device=dev)
    wa = wp.zeros(N, dtype=wp.float32, device=dev)
    ia = wp.array(ints, dtype=wp.int32, device=dev)
    ib = wp.zeros(N, dtype=wp.int32, device=dev)

    wp.launch(k_saxpy, dim=N, inputs=[xa, ya, 2.0], device=dev)
    wp.launch(k_math, dim=N, inputs=[xa, za], device=dev)
    wp.launch(k_cross, dim=N, inputs=[ua, va, ca], device=dev)
    wp.launch(k_window, dim=N, inputs=[xa, wa, N, WINDOW], device=dev)
    wp.launch(k_collatz, dim=N, inputs=[ia, ib], device=dev)
    sync = getattr(wp, "synchronize_device", None)
    if sync is not None:
        sync(dev)

    x64 = x.astype(np.float64)
    window = sum(np.roll(x64, -j) for j in range(WINDOW))
    collatz = np.where(ints % 2 == 0, ints // 2, 3 * ints + 1)
    pairs = [
        (ya.numpy(), 2.0 * x64 + 1.0),
        (za.numpy(), np.sin(x64) * np.exp(-x64 * x64) + np.sqrt(np.abs(x64))),
        (ca.numpy(), np.linalg.norm(np.cross(u.astype(np.float64), v), axis=1)),
        (wa.numpy(), window),
        (ib.numpy(), collatz),
    ]
    return max(float(np.max(np.abs(out - ref) / (1.0 + np.abs(ref)))) for out, ref in pairs)


def main() -> None:
    """Parse argv, run, print the JSON result line."""
    framework, cache_dir = sys.argv[1], sys.argv[2]
    backward = "--no-backward" not in sys.argv[3:]
    wp = load(framework, cache_dir, backward)
    t_import = time.perf_counter()
    err = run_kernels(wp)
    t_end = time.perf_counter()
    print(json.dumps({"import_s": t_import - T0, "kernels_s": t_end - t_import,
                      "ok": bool(err < 1e-4), "err": err}))


if __name__ == "__main__":
    main()
