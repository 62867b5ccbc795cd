"""What a CPU-only Warp presents around launches: the cpu device's properties, nested ScopedDevice
blocks, set_device, synchronize_device, CUDA-only objects (streams, events, mempools) refused by
exception type; ScopedTimer structure (dict keys created by inactive timers, one entry per active
exit, entries recorded when the block raises, the ScopedTimer.enabled switch, tape scopes named
after timers unless skip_tape); and a capture whose replays see changed array contents, a changed
struct field and a recorded Launch with a replaced parameter."""

import numpy as np
import warp as wp


@wp.struct
class Params:
    gain: float
    bias: float


@wp.kernel
def affine(x: wp.array(dtype=float), p: Params, y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = p.gain * x[i] + p.bias


@wp.kernel
def accumulate(y: wp.array(dtype=float), acc: wp.array(dtype=float)):
    i = wp.tid()
    acc[i] = acc[i] + y[i]


def refused(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "ok"


def run():
    r = {}
    cpu = wp.get_device("cpu")
    r["props"] = np.array([cpu.ordinal, int(cpu.is_uva), int(cpu.is_mempool_supported), int(cpu.is_capturing),
                           cpu.arch, cpu.sm_count])
    r["devices"] = ",".join(str(d) for d in wp.get_devices())
    r["cuda_devices"] = len(wp.get_cuda_devices())
    r["mempool"] = np.array([wp.is_mempool_enabled("cpu"), wp.is_mempool_access_supported("cpu", "cpu"),
                             wp.is_peer_access_supported("cpu", "cpu")])
    with wp.ScopedDevice("cpu"):
        with wp.ScopedDevice(None):
            r["nested_none"] = str(wp.get_device())
        with wp.ScopedDevice(cpu):
            r["nested_obj"] = str(wp.get_device())
    wp.set_device("cpu")
    wp.synchronize_device("cpu")
    wp.synchronize_device()
    wp.synchronize()
    r["stream_refused"] = refused(lambda: wp.get_stream("cpu"))
    r["event_refused"] = refused(lambda: wp.Event("cpu"))
    r["new_stream_refused"] = refused(lambda: wp.Stream("cpu"))
    timings = {}
    with wp.ScopedTimer("never", dict=timings, active=False, print=False):
        pass
    for _ in range(3):
        with wp.ScopedTimer("loop", dict=timings, print=False):
            pass
    try:
        with wp.ScopedTimer("raises", dict=timings, print=False):
            raise KeyError("inside")
    except KeyError:
        pass
    wp.ScopedTimer.enabled = False
    with wp.ScopedTimer("disabled", dict=timings, print=False) as off:
        pass
    wp.ScopedTimer.enabled = True
    r["timer_keys"] = ",".join(sorted(timings))
    r["timer_lengths"] = np.array([len(timings[k]) for k in sorted(timings)])
    r["disabled_active"] = off.active
    r["disabled_elapsed"] = off.elapsed
    x = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    p = Params()
    p.gain = 2.0
    p.bias = 1.0
    tape = wp.Tape()
    with tape:
        with wp.ScopedTimer("forward", print=False):
            wp.launch(affine, dim=3, inputs=[x, p], outputs=[y])
        with wp.ScopedTimer("hidden", print=False, skip_tape=True):
            wp.launch(affine, dim=3, inputs=[x, p], outputs=[y])
        with wp.ScopedTimer("empty", print=False):
            pass
    r["tape_scopes"] = ",".join(str(s[1]) for s in tape.scopes)
    r["tape_scope_starts"] = np.array([s[0] for s in tape.scopes])
    acc = wp.zeros(3, dtype=float)
    xs = wp.array(np.array([1.0, 1.0, 1.0], dtype=np.float32))
    ys = wp.zeros(3, dtype=float)
    cmd = wp.launch(accumulate, dim=3, inputs=[ys, acc], record_cmd=True)
    with wp.ScopedCapture() as cap:
        wp.launch(affine, dim=3, inputs=[xs, p], outputs=[ys])
        cmd.launch()
    r["acc_captured"] = acc.numpy().copy()
    wp.capture_launch(cap.graph)
    r["acc_1"] = acc.numpy().copy()
    xs.assign(np.array([0.0, 10.0, -1.0], dtype=np.float32))
    wp.capture_launch(cap.graph)
    r["acc_new_x"] = acc.numpy().copy()
    p.gain = -1.0
    wp.capture_launch(cap.graph)
    r["acc_struct_changed_after_capture"] = acc.numpy().copy()
    with wp.ScopedCapture() as cap2:
        wp.launch(affine, dim=3, inputs=[xs, p], outputs=[ys])
        cmd.launch()
    acc2 = wp.zeros(3, dtype=float)
    cmd.set_param_at_index(1, acc2)
    wp.capture_launch(cap2.graph)
    r["acc_old_target"] = acc.numpy().copy()
    r["acc2_new_target"] = acc2.numpy().copy()
    return r
