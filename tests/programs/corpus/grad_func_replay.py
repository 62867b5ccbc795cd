"""@wp.func_replay: a compacting counter whose atomic increment must not be re-run in the
backward pass; the replay reads the slot each thread recorded, so the gradient lands on the
element the forward pass wrote."""

import numpy as np
import warp as wp


@wp.func
def claim_slot(counter: wp.array(dtype=int), slots: wp.array(dtype=int), tid: int):
    s = wp.atomic_add(counter, 0, 1)
    slots[tid] = s
    return s


@wp.func_replay(claim_slot)
def replay_claim_slot(counter: wp.array(dtype=int), slots: wp.array(dtype=int), tid: int):
    return slots[tid]


@wp.kernel
def compact_positive(
    x: wp.array(dtype=float),
    counter: wp.array(dtype=int),
    slots: wp.array(dtype=int),
    out: wp.array(dtype=float),
):
    tid = wp.tid()
    v = x[tid]
    if v > 0.0:
        s = claim_slot(counter, slots, tid)
        out[s] = v * v + 1.0


@wp.kernel
def weighted_sum(out: wp.array(dtype=float), count: wp.array(dtype=int), loss: wp.array(dtype=float)):
    i = wp.tid()
    if i < count[0]:
        wp.atomic_add(loss, 0, out[i])


def run():
    n = 32
    rng = np.random.default_rng(9)
    x = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32), requires_grad=True)
    counter = wp.zeros(1, dtype=int)
    slots = wp.full(n, -1, dtype=int)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(compact_positive, dim=n, inputs=[x, counter, slots], outputs=[out])
        wp.launch(weighted_sum, dim=n, inputs=[out, counter], outputs=[loss])
    tape.backward(loss)
    return {
        "count": counter.numpy().copy(),
        "loss": loss.numpy().copy(),
        "x_grad": x.grad.numpy().copy(),
        "counter_after_backward": counter.numpy().copy(),
        "sorted_out": np.sort(out.numpy().copy()),
    }


TOLERANCE = {"loss": (1e-5, 1e-5)}
