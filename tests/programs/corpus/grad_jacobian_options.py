"""warp.autograd options: jacobian with max_outputs_per_var (rows left out are NaN),
input_output_mask by index and by name, a non-differentiable input array and a scalar
input, jacobian_fd with max_inputs_per_var, and gradcheck_tape over a recorded tape."""

import numpy as np
import warp as wp
import warp.autograd


@wp.kernel
def features(x: wp.array(dtype=wp.vec3), c: wp.array(dtype=float), s: float,
             y: wp.array(dtype=float), z: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    y[i] = wp.length(x[i]) * c[i] * s
    z[i] = wp.vec2(x[i][0] * x[i][1], c[i] * c[i])


@wp.kernel
def squash(y: wp.array(dtype=float), w: wp.array(dtype=float)):
    i = wp.tid()
    w[i] = wp.exp(y[i]) * 0.1


def run():
    rng = np.random.default_rng(3)
    x = wp.array(rng.normal(size=(3, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    c = wp.array(rng.normal(size=3).astype(np.float32))
    y = wp.zeros(3, dtype=float, requires_grad=True)
    z = wp.zeros(3, dtype=wp.vec2, requires_grad=True)
    out = {}
    jac = warp.autograd.jacobian(features, dim=3, inputs=[x, c, 2.0], outputs=[y, z], max_outputs_per_var=2)
    out["keys_limited"] = np.array(sorted(jac), dtype=np.int64)
    for (i, o), j in sorted(jac.items()):
        out[f"limited_{i}_{o}"] = j.numpy().copy()
    masked = warp.autograd.jacobian(features, dim=3, inputs=[x, c, 2.0], outputs=[y, z],
                                    input_output_mask=[(0, 1), ("x", "y")])
    out["keys_masked"] = np.array(sorted(masked), dtype=np.int64)
    jfd = warp.autograd.jacobian_fd(features, dim=3, inputs=[x, c, 2.0], outputs=[y, z],
                                    max_inputs_per_var=4, eps=1e-3)
    for (i, o), j in sorted(jfd.items()):
        out[f"fd_{i}_{o}"] = j.numpy().copy()

    w = wp.zeros(3, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(features, dim=3, inputs=[x, c, 2.0], outputs=[y, z])
        wp.launch(squash, dim=3, inputs=[y], outputs=[w])
    out["gradcheck_tape"] = warp.autograd.gradcheck_tape(tape, show_summary=False, raise_exception=False)
    out["x_after"] = x.numpy().copy()
    return out


TOLERANCE = {"fd_0_0": (1e-3, 1e-3), "fd_0_1": (1e-3, 1e-3)}
