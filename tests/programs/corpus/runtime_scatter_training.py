"""Large launches that scatter into small arrays, inside a training loop: a histogram with
int32 / int64 / uint32 counts, float64 per-bin sums of vec3 values, and a taped model whose
gathers by index send their gradients back as scatters, with `tape.zero()` between steps.
(In Warp 1.19, `wp.float64(BINS)` in a kernel makes later uses of the constant `BINS` in that
kernel float64, hence the literal 64.0 below.)"""

import numpy as np
import warp as wp

N = 300_000  # threads: large enough for a CPU backend to split the launch over its cores
BINS = 64


@wp.kernel
def histogram(x: wp.array(dtype=wp.vec3d), counts: wp.array(dtype=wp.int32), wide: wp.array(dtype=wp.int64),
              flags: wp.array(dtype=wp.uint32), sums: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    v = x[i]
    b = wp.int32(wp.abs(v[0]) * wp.float64(64.0)) % BINS  # (64.0: BINS as a float)
    wp.atomic_add(counts, b, 1)
    wp.atomic_add(wide, b, wp.int64(i))
    wp.atomic_add(flags, b, wp.uint32(3))
    wp.atomic_add(sums, b, v)


@wp.kernel
def predict(table: wp.array(dtype=float), index: wp.array(dtype=wp.int32), target: wp.array(dtype=float),
            loss: wp.array(dtype=float)):
    i = wp.tid()
    d = table[index[i]] - target[i]
    wp.atomic_add(loss, 0, d * d)


@wp.kernel
def sgd(table: wp.array(dtype=float), grad: wp.array(dtype=float), rate: float):
    j = wp.tid()
    table[j] = table[j] - rate * grad[j]


def run():
    rng = np.random.default_rng(41)
    x = rng.standard_normal((N, 3))
    xw = wp.array(x, dtype=wp.vec3d)
    counts = wp.zeros(BINS, dtype=wp.int32)
    wide = wp.zeros(BINS, dtype=wp.int64)
    flags = wp.zeros(BINS, dtype=wp.uint32)
    sums = wp.zeros(BINS, dtype=wp.vec3d)
    for _ in range(3):  # the same arrays again: each launch adds to what the last left
        wp.launch(histogram, dim=N, inputs=[xw, counts, wide, flags, sums])

    index = wp.array(rng.integers(0, BINS, N).astype(np.int32), dtype=wp.int32)
    target = wp.array((rng.standard_normal(N) * 0.1 + np.arange(N) % 7 * 0.01).astype(np.float32), dtype=float)
    table = wp.zeros(BINS, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    losses, first_grad = [], None
    tape = wp.Tape()
    for step in range(4):
        with tape:
            wp.launch(predict, dim=N, inputs=[table, index, target, loss])
        tape.backward(loss=loss)
        if step == 0:
            first_grad = table.grad.numpy().copy()
        losses.append(float(loss.numpy()[0]))
        wp.launch(sgd, dim=BINS, inputs=[table, table.grad, 0.5 / N])
        tape.zero()
        tape.reset()
        loss.zero_()
    return {
        "counts": counts.numpy(), "wide": wide.numpy(), "flags": flags.numpy(), "sums": sums.numpy(),
        "losses": np.array(losses), "first_grad": first_grad, "table": table.numpy(),
        "grad_after_zero": table.grad.numpy(),
    }


# float sums of 300,000 terms in another order than Warp's one CPU thread
TOLERANCE = {"sums": (1e-9, 1e-9), "losses": (1e-4, 1e-6), "first_grad": (1e-4, 1e-4),
             "table": (1e-4, 1e-6)}
