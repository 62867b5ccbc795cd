"""Manual adjoint launches: wp.launch(..., adjoint=True, adj_inputs=..., adj_outputs=...)
with user-owned adjoint buffers, for scalar and vector arrays and a scalar parameter."""

import numpy as np
import warp as wp


@wp.kernel
def saxpy_sq(x: wp.array(dtype=float), y: wp.array(dtype=float), alpha: float, z: wp.array(dtype=float)):
    i = wp.tid()
    z[i] = alpha * x[i] * x[i] + wp.cos(y[i])


@wp.kernel
def spring_force(p: wp.array(dtype=wp.vec3), rest: float, f: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    d = p[i]
    L = wp.length(d)
    f[i] = (L - rest) * d / L


def run():
    n = 8
    rng = np.random.default_rng(2)
    x = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32))
    y = wp.array(rng.uniform(-1.0, 1.0, n).astype(np.float32))
    z = wp.zeros(n, dtype=float)
    wp.launch(saxpy_sq, dim=n, inputs=[x, y, 3.0], outputs=[z])
    adj_x = wp.zeros(n, dtype=float)
    adj_y = wp.zeros(n, dtype=float)
    adj_z = wp.array(np.linspace(0.5, 2.0, n).astype(np.float32))
    wp.launch(saxpy_sq, dim=n, inputs=[x, y, 3.0], outputs=[z],
              adj_inputs=[adj_x, adj_y, 0.0], adj_outputs=[adj_z], adjoint=True)
    out = {"z": z.numpy().copy(), "adj_x": adj_x.numpy().copy(), "adj_y": adj_y.numpy().copy()}

    p = wp.array(rng.uniform(-2.0, 2.0, (n, 3)).astype(np.float32), dtype=wp.vec3)
    f = wp.zeros(n, dtype=wp.vec3)
    wp.launch(spring_force, dim=n, inputs=[p, 1.0], outputs=[f])
    adj_p = wp.zeros_like(p)
    adj_f = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3)
    wp.launch(spring_force, dim=n, inputs=[p, 1.0], outputs=[f], adj_inputs=[adj_p, 0.0],
              adj_outputs=[adj_f], adjoint=True)
    out["f"] = f.numpy().copy()
    out["adj_p"] = adj_p.numpy().copy()
    # adjoints accumulate: a second adjoint launch adds the same again
    wp.launch(spring_force, dim=n, inputs=[p, 1.0], outputs=[f], adj_inputs=[adj_p, 0.0],
              adj_outputs=[adj_f], adjoint=True)
    out["adj_p_twice"] = adj_p.numpy().copy()
    out["adj_f_after"] = adj_f.numpy().copy()
    return out
