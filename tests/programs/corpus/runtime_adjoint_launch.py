"""Adjoint launches by hand: wp.launch(adjoint=True) with adj_inputs/adj_outputs (None for non-array and
integer parameters), adjoints of vector arrays and struct-free scalar parameters, and a recorded
adjoint Launch replayed with new adjoint seeds."""

import numpy as np
import warp as wp


@wp.kernel
def spring(x: wp.array(dtype=wp.vec3), rest: float, idx: wp.array(dtype=int), energy: wp.array(dtype=float)):
    i = wp.tid()
    a = x[idx[2 * i]]
    b = x[idx[2 * i + 1]]
    d = wp.length(a - b) - rest
    energy[i] = 0.5 * d * d


@wp.kernel
def scale(x: wp.array(dtype=float), s: float, y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = s * x[i] * x[i]


def run():
    r = {}
    rng = np.random.default_rng(12)
    x = wp.array(rng.standard_normal((4, 3)).astype(np.float32), dtype=wp.vec3)
    idx = wp.array(np.array([0, 1, 1, 2, 2, 3], dtype=np.int32))
    energy = wp.zeros(3, dtype=float)
    wp.launch(spring, dim=3, inputs=[x, 1.0, idx], outputs=[energy])
    r["energy"] = energy.numpy().copy()
    adj_x = wp.zeros(4, dtype=wp.vec3)
    adj_energy = wp.array(np.array([1.0, 0.5, 2.0], dtype=np.float32))
    wp.launch(spring, dim=3, inputs=[x, 1.0, idx], outputs=[energy],
              adj_inputs=[adj_x, 0.0, None], adj_outputs=[adj_energy], adjoint=True)
    r["adj_x"] = adj_x.numpy().copy()
    xs = wp.array(np.array([1.0, -2.0, 0.5], dtype=np.float32))
    ys = wp.zeros(3, dtype=float)
    wp.launch(scale, dim=3, inputs=[xs, 3.0, ys])
    adj_xs = wp.zeros(3, dtype=float)
    adj_ys = wp.ones(3, dtype=float)
    wp.launch(scale, dim=3, inputs=[xs, 3.0, ys], adj_inputs=[adj_xs, 0.0, adj_ys], adjoint=True)
    r["adj_xs"] = adj_xs.numpy().copy()
    wp.launch(scale, dim=3, inputs=[xs, 3.0, ys], adj_inputs=[adj_xs, 0.0, adj_ys], adjoint=True)
    r["adj_xs_accumulated"] = adj_xs.numpy().copy()
    adj_xs.zero_()
    cmd = wp.launch(scale, dim=3, inputs=[xs, 3.0, ys], adj_inputs=[adj_xs, 0.0, adj_ys], adjoint=True,
                    record_cmd=True)
    r["before_replay"] = adj_xs.numpy().copy()
    cmd.launch()
    r["replayed"] = adj_xs.numpy().copy()
    cmd.set_param_at_index(2, wp.array(np.array([0.0, 1.0, -1.0], dtype=np.float32)), adjoint=True)
    cmd.launch()
    r["replayed_new_seed"] = adj_xs.numpy().copy()
    return r


TOLERANCE = {"adj_x": (1e-5, 1e-5)}
