"""Devices and scopes: get_device, ScopedDevice('cpu'), synchronize, ScopedTimer(print=False),
ScopedCapture on CPU replayed with capture_launch."""

import numpy as np
import warp as wp


@wp.kernel
def step(x: wp.array(dtype=float), v: wp.array(dtype=float), dt: float):
    i = wp.tid()
    v[i] = v[i] - x[i] * dt
    x[i] = x[i] + v[i] * dt


@wp.kernel
def count(c: wp.array(dtype=wp.int32)):
    wp.atomic_add(c, 0, 1)


def run():
    r = {}
    dev = wp.get_device("cpu")
    r["is_cpu"] = dev.is_cpu
    r["is_cuda"] = dev.is_cuda
    r["alias"] = dev.alias
    r["str"] = str(dev)
    r["eq"] = dev == "cpu"
    r["repr"] = repr(dev)
    try:
        r["fallback"] = wp.get_device("cuda").alias
    except RuntimeError:
        r["fallback"] = "cpu"
    timings = {}
    with wp.ScopedTimer("outer", dict=timings, print=False):
        for _ in range(2):
            with wp.ScopedTimer("inner", dict=timings, print=False):
                pass
    r["timer_keys"] = ",".join(sorted(timings))
    r["timer_counts"] = np.array([len(timings[k]) for k in sorted(timings)])
    with wp.ScopedTimer("off", active=False) as off:
        pass
    r["inactive_elapsed"] = off.elapsed
    with wp.ScopedDevice("cpu"):
        inner = wp.get_device()
        r["scoped_alias"] = inner.alias
        x = wp.array(np.linspace(0.0, 1.0, 16, dtype=np.float32))
        v = wp.zeros(16, dtype=float)
        r["x_device"] = str(x.device)
        with wp.ScopedTimer("steps", print=False) as timer:
            for _ in range(10):
                wp.launch(step, dim=16, inputs=[x, v, 0.1])
            wp.synchronize()
        r["timer_elapsed_nonneg"] = timer.elapsed >= 0.0
        r["x10"] = x.numpy().copy()
        with wp.ScopedCapture() as capture:
            wp.launch(step, dim=16, inputs=[x, v, 0.1])
            wp.launch(step, dim=16, inputs=[x, v, 0.1])
        r["x_after_capture"] = x.numpy().copy()
        for _ in range(5):
            wp.capture_launch(capture.graph)
        wp.synchronize_device("cpu")
        r["x_after_replay"] = x.numpy().copy()
        r["v_after_replay"] = v.numpy().copy()
        c = wp.zeros(1, dtype=wp.int32)
        wp.capture_begin()
        wp.launch(count, dim=7, inputs=[c])
        graph = wp.capture_end()
        wp.capture_launch(graph)
        wp.capture_launch(graph)
        r["count"] = c.numpy().copy()
    r["preferred_is_str"] = isinstance(wp.get_preferred_device().alias, str)
    r["cuda_count_ok"] = wp.get_cuda_device_count() >= 0
    r["is_cpu_available"] = wp.is_cpu_available()
    return r
