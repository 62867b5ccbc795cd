"""A small MLP in tiles, trained through weft's gradients: it learns a 2D image.

Run: python -m weft.examples.tile_mlp [--iters N] [--out tile_mlp.png]

Each block of a tiled launch evaluates the network on a batch of pixels with tile ops, as
Warp's tile examples do: Fourier features of the pixel position, two hidden layers of
`tile_matmul` + bias + `tanh` (`tile_map`), a linear output, and the squared error to the
target summed over the batch (`tile_sum`) into the loss (`tile_atomic_add`). The Tape
differentiates the whole kernel (matrix products, broadcasts, elementwise maps, the
reduction) and Adam updates the weights. Before training, the example checks the weight
gradients of the kernel against float64 central differences of the loss; after training,
it prints the loss drop and the error of the fitted image, and writes a plot of the target,
the fit and the loss curve (with matplotlib).
"""

import argparse
import math

import numpy as np

import weft as wp
from weft.optim import Adam

FEATURES = 16  # Fourier features: sin and cos of 8 frequencies x positions
HIDDEN = 32
BATCH = 64  # pixels per block
RES = 32  # image resolution (RES x RES pixels)


def target_image(res: int = RES) -> np.ndarray:
    """A smooth test pattern in [0, 1]: two blobs and a ring."""
    y, x = np.mgrid[0:res, 0:res] / (res - 1) * 2.0 - 1.0
    r = np.hypot(x, y)
    img = 0.6 * np.exp(-((x - 0.4) ** 2 + (y - 0.3) ** 2) / 0.05)
    img += 0.5 * np.exp(-((x + 0.35) ** 2 + (y + 0.4) ** 2) / 0.08)
    img += 0.4 * np.exp(-((r - 0.75) ** 2) / 0.005)
    return img


def fourier_features(res: int = RES, rng=None) -> np.ndarray:
    """(FEATURES, res * res): sin/cos of random projections of the pixel positions."""
    rng = rng or np.random.default_rng(7)
    y, x = np.mgrid[0:res, 0:res] / (res - 1) * 2.0 - 1.0
    pos = np.stack([x.ravel(), y.ravel()])  # (2, P)
    freqs = rng.normal(0.0, 3.0, (FEATURES // 2, 2))
    proj = freqs @ pos
    return np.concatenate([np.sin(math.pi * proj), np.cos(math.pi * proj)])


def make_kernel(dtype):
    @wp.kernel(module="unique")
    def mlp_loss(features: wp.array2d[dtype], target: wp.array2d[dtype],
                 w1: wp.array2d[dtype], b1: wp.array2d[dtype], w2: wp.array2d[dtype], b2: wp.array2d[dtype],
                 w3: wp.array2d[dtype], b3: wp.array2d[dtype], pred: wp.array2d[dtype], loss: wp.array1d[dtype]):
        i = wp.tid()
        x = wp.tile_load(features, shape=(FEATURES, BATCH), offset=(0, i * BATCH))
        h1 = wp.tile_map(wp.tanh, wp.tile_matmul(wp.tile_load(w1, shape=(HIDDEN, FEATURES)), x)
                         + wp.tile_broadcast(wp.tile_load(b1, shape=(HIDDEN, 1)), shape=(HIDDEN, BATCH)))
        h2 = wp.tile_map(wp.tanh, wp.tile_matmul(wp.tile_load(w2, shape=(HIDDEN, HIDDEN)), h1)
                         + wp.tile_broadcast(wp.tile_load(b2, shape=(HIDDEN, 1)), shape=(HIDDEN, BATCH)))
        y = wp.tile_matmul(wp.tile_load(w3, shape=(1, HIDDEN)), h2) + wp.tile_broadcast(
            wp.tile_load(b3, shape=(1, 1)), shape=(1, BATCH))
        wp.tile_store(pred, y, offset=(0, i * BATCH))
        err = y - wp.tile_load(target, shape=(1, BATCH), offset=(0, i * BATCH))
        wp.tile_atomic_add(loss, wp.tile_sum(err * err))
    return mlp_loss


def init_weights(rng, dtype):
    shapes = [(HIDDEN, FEATURES), (HIDDEN, 1), (HIDDEN, HIDDEN), (HIDDEN, 1), (1, HIDDEN), (1, 1)]
    weights = []
    for s in shapes:
        scale = 0.0 if s[1] == 1 else 1.0 / math.sqrt(s[1])
        weights.append(wp.array(rng.normal(0.0, 1.0, s) * scale, dtype=dtype, requires_grad=True))
    return weights


def run_loss(kernel, features, target, weights, dtype, tape=None):
    n = features.shape[1]
    pred = wp.zeros((1, n), dtype=dtype, requires_grad=True)
    loss = wp.zeros(1, dtype=dtype, requires_grad=True)
    wp.launch_tiled(kernel, dim=[n // BATCH], inputs=[features, target, *weights, pred, loss], block_dim=64)
    return pred, loss


def check_gradients(rng) -> float:
    """Largest relative error of the weight gradients against central differences (float64)."""
    kernel = make_kernel(wp.float64)
    feats = wp.array(fourier_features(8, rng)[:, :BATCH * 1], dtype=wp.float64)
    target = wp.array(rng.uniform(0, 1, (1, BATCH)), dtype=wp.float64)
    weights = init_weights(rng, wp.float64)
    for w in weights:  # nonzero biases, so that their gradients are tested too
        w.assign(w.numpy() + rng.normal(0.0, 0.1, w.shape))
    with wp.Tape() as tape:
        _, loss = run_loss(kernel, feats, target, weights, wp.float64)
    tape.backward(loss=loss)
    worst = 0.0
    for w in weights:
        direction = rng.normal(size=w.shape)
        base = w.numpy().copy()
        h = 1e-6
        values = []
        for sign in (1.0, -1.0):
            w.assign(base + sign * h * direction)
            values.append(float(run_loss(kernel, feats, target, weights, wp.float64)[1].numpy()[0]))
        w.assign(base)
        fd = (values[0] - values[1]) / (2 * h)
        ad = float(np.sum(w.grad.numpy() * direction))
        worst = max(worst, abs(ad - fd) / max(abs(fd), 1e-8))
    return worst


def train(iters: int, lr: float, rng):
    kernel = make_kernel(wp.float32)
    img = target_image()
    feats = wp.array(fourier_features(RES, rng), dtype=wp.float32)
    target = wp.array(img.reshape(1, -1), dtype=wp.float32)
    weights = init_weights(rng, wp.float32)
    opt = Adam(weights, lr=lr)
    losses = []
    for _ in range(iters):
        tape = wp.Tape()
        with tape:
            pred, loss = run_loss(kernel, feats, target, weights, wp.float32)
        tape.backward(loss=loss)
        opt.step([w.grad for w in weights])
        losses.append(float(loss.numpy()[0]) / img.size)
        tape.zero()
    pred, _ = run_loss(kernel, feats, target, weights, wp.float32)
    return img, pred.numpy().reshape(RES, RES), losses


def plot(img, fit, losses, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: pip install 'weft-lang[examples]' for the plot")
        return
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    axes[0].imshow(img, vmin=0, vmax=1)
    axes[0].set_title("target")
    axes[1].imshow(fit, vmin=0, vmax=1)
    axes[1].set_title("MLP (tiles)")
    axes[2].semilogy(losses)
    axes[2].set_xlabel("iteration")
    axes[2].set_title("mean squared error")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    print(f"wrote {out}")


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=300)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--out", default="tile_mlp.png")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    grad_error = check_gradients(rng)
    print(f"weight gradients against float64 central differences: largest relative error {grad_error:.2e}")
    img, fit, losses = train(args.iters, args.lr, rng)
    fit_error = float(np.sqrt(np.mean((fit - img) ** 2)))
    print(f"{args.iters}/{args.iters} Adam steps: mean squared error {losses[0]:.4f} -> {losses[-1]:.5f}; "
          f"RMS error of the fitted image {fit_error:.4f}")
    plot(img, fit, losses, args.out)
    return {"gradient_error": grad_error, "first_loss": losses[0], "final_loss": losses[-1],
            "rms_error": fit_error}


if __name__ == "__main__":
    main()
