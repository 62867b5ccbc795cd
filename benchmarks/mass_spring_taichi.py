"""Taichi's version of the `mass_spring` workload (benchmarks/mass_spring.py).

The same chain, springs, steps and loss, written the way Taichi's differentiable
simulation examples write it: fields with a leading time axis (`x[t, i]`, shape (T + 1, N))
so that no step overwrites another, one `ti.kernel` per launch of the weft / Warp version
(`spring_forces(t)`, `integrate(t)`, `loss_kernel()`), and the backward pass as the kernels'
adjoints (`kernel.grad(...)`) in reverse order, which is what `ti.ad.Tape` runs. Forward,
backward and zeroing are timed the same way as the other peers' (`Sim`'s interface).
"""

import numpy as np

from benchmarks.mass_spring import DT, GRAVITY, KD


class TaichiSim:
    """Fields, kernels and passes of one Taichi simulation (float32)."""

    def __init__(self, ti, prob: dict, steps: int):
        self.ti, self.steps = ti, steps
        n, s = prob["x0"].shape[0], prob["pairs"].shape[0]
        self.n, self.s = n, s
        vec = ti.math.vec3
        x = self.x = ti.Vector.field(3, ti.f32, shape=(steps + 1, n), needs_grad=True)
        v = self.v = ti.Vector.field(3, ti.f32, shape=(steps + 1, n), needs_grad=True)
        f = self.f = ti.Vector.field(3, ti.f32, shape=(steps, n), needs_grad=True)
        pairs = self.pairs = ti.field(ti.i32, shape=(s, 2))
        rest = self.rest = ti.field(ti.f32, shape=s)
        ke = self.ke = ti.field(ti.f32, shape=s, needs_grad=True)
        inv_mass = self.inv_mass = ti.field(ti.f32, shape=n)
        target = self.target = ti.Vector.field(3, ti.f32, shape=n)
        loss = self.loss = ti.field(ti.f32, shape=(), needs_grad=True)

        start = np.zeros((steps + 1, n, 3), np.float32)
        start[0] = prob["x0"]
        x.from_numpy(start)
        start[0] = prob["v0"]
        v.from_numpy(start)
        pairs.from_numpy(prob["pairs"].astype(np.int32))
        rest.from_numpy(prob["rest"].astype(np.float32))
        ke.from_numpy(prob["ke"].astype(np.float32))
        inv_mass.from_numpy(prob["inv_mass"].astype(np.float32))
        target.from_numpy(prob["target"].astype(np.float32))
        gravity = vec(*GRAVITY)

        @ti.kernel
        def spring_forces(t: ti.i32):
            for k in range(s):
                i, j = pairs[k, 0], pairs[k, 1]
                d = x[t, j] - x[t, i]
                length = d.norm()
                u = d / length
                c = ke[k] * (length - rest[k]) + KD * (v[t, j] - v[t, i]).dot(u)
                f[t, i] += c * u
                f[t, j] -= c * u

        @ti.kernel
        def integrate(t: ti.i32):
            for i in range(n):
                w = inv_mass[i]
                v1 = v[t, i]
                if w > 0.0:
                    v1 = v1 + (f[t, i] * w + gravity) * DT
                x[t + 1, i] = x[t, i] + v1 * DT
                v[t + 1, i] = v1

        @ti.kernel
        def loss_kernel():
            for i in range(n):
                d = x[steps, i] - target[i]
                loss[None] += d.dot(d)

        self.spring_forces, self.integrate, self.loss_kernel = spring_forces, integrate, loss_kernel

    def simulate(self):
        self.f.fill(0.0)
        self.loss.fill(0.0)
        for t in range(self.steps):
            self.spring_forces(t)
            self.integrate(t)
        self.loss_kernel()

    def forward(self):
        self.simulate()

    def backward(self):
        """The adjoints in reverse order, seeded with d loss = 1 (what `ti.ad.Tape` runs)."""
        self.loss.grad.fill(1.0)
        self.loss_kernel.grad()
        for t in reversed(range(self.steps)):
            self.integrate.grad(t)
            self.spring_forces.grad(t)

    def zero(self):
        for field in (self.x, self.v, self.f, self.ke, self.loss):
            field.grad.fill(0.0)

    def sync(self):
        self.ti.sync()

    def grads(self) -> np.ndarray:
        """d loss / d (initial velocities, stiffnesses), as in `Sim.grads`."""
        return np.concatenate([self.v.grad.to_numpy()[0].reshape(-1),
                               self.ke.grad.to_numpy()]).astype(np.float64)

    def loss_value(self) -> float:
        return float(self.loss.to_numpy())
