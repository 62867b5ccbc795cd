"""tile_map with non-tile arguments broadcast over the tile (scalars, vectors, matrices, structs,
runtime and constant) and the adjoints of those arguments: the sum over the mapped tile."""

import numpy as np
import warp as wp


@wp.struct
class Affine:
    scale: float
    shift: wp.vec3


@wp.func
def apply_affine(v: wp.vec3, a: Affine) -> wp.vec3:
    return v * a.scale + a.shift


@wp.func
def blend(a: float, b: float, w: float) -> float:
    return a * w + b * (1.0 - w)


@wp.func
def quad(x: float, c0: float, c1: float, c2: float) -> float:
    return c0 + x * (c1 + x * c2)


@wp.kernel(enable_backward=False)
def broadcast_args(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), m: wp.mat33, a: Affine, w: float,
                   out_f: wp.array2d(dtype=float), out_v: wp.array2d(dtype=wp.vec3)):
    t = wp.tile_load(x, shape=12)
    wp.tile_store(out_f[0], wp.tile_map(wp.max, t, 0.25))
    wp.tile_store(out_f[1], wp.tile_map(blend, t, wp.tile_ones(12, dtype=float), w))
    wp.tile_store(out_f[2], wp.tile_map(quad, t, 1.0, -2.0, w))
    wp.tile_store(out_f[3], wp.tile_map(wp.pow, wp.tile_map(wp.abs, t), 1.5))
    tv = wp.tile_load(v, shape=12)
    wp.tile_store(out_v[0], wp.tile_map(apply_affine, tv, a))
    wp.tile_store(out_v[1], wp.tile_map(wp.cross, tv, wp.vec3(0.0, 0.0, 1.0)))
    wp.tile_store(out_v[2], wp.tile_map(wp.mul, tv, 2.0))
    wp.tile_store(out_v[3], wp.tile_map(wp.mul, tv, m))


@wp.func
def scaled_sq(x: float, s: float) -> float:
    return s * x * x


@wp.kernel
def param_grad(x: wp.array(dtype=float), s: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile_load(x, shape=8, offset=8 * i)
    k = s[0]
    y = wp.tile_map(scaled_sq, t, k)
    z = wp.tile_map(quad, t, s[1], k, k * 0.5)
    wp.tile_atomic_add(loss, wp.tile_sum(y) + wp.tile_sum(z))


def run():
    rng = np.random.default_rng(71)
    x = wp.array(rng.uniform(-1, 1, 12).astype(np.float32))
    v = wp.array(rng.uniform(-1, 1, (12, 3)).astype(np.float32), dtype=wp.vec3)
    a = Affine()
    a.scale = 1.5
    a.shift = wp.vec3(0.1, -0.2, 0.3)
    out_f = wp.zeros((4, 12), dtype=float)
    out_v = wp.zeros((4, 12), dtype=wp.vec3)
    m = wp.mat33(1.0, 2.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0)
    wp.launch_tiled(broadcast_args, dim=1, inputs=[x, v, m, a, 0.3, out_f, out_v], block_dim=64)

    xs = wp.array(rng.uniform(-1, 1, 32).astype(np.float32), requires_grad=True)
    s = wp.array(np.array([0.7, -0.4], dtype=np.float32), requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(param_grad, dim=4, inputs=[xs, s], outputs=[loss], block_dim=32)
    tape.backward(loss)
    return {"f": out_f.numpy(), "v": out_v.numpy(), "loss": loss.numpy(), "dx": xs.grad.numpy(),
            "ds": s.grad.numpy()}


TOLERANCE = {"loss": (1e-5, 1e-5), "ds": (1e-5, 1e-5), "f": (1e-5, 1e-6)}
