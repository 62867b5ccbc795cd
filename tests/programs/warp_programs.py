"""Programs written as Warp users write them: `import ... as wp`, kernels at module level, an
`Example` class with `step()`, a Tape, an optimizer from `wp.optim`, `ScopedTimer`, graph
capture. test_programs.py runs this file as it is (on weft) and, where Warp is installed, a
copy whose only change is the import line, and compares the numbers."""

import numpy as np

import weft as wp
import weft.optim

# ---------------------------------------------------------------------------------------------
# 1. Aim a ball through drag to a target: Tape + Adam over a multi-step simulation.


@wp.kernel
def ballistic_step(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), drag: float, dt: float,
                   x_new: wp.array(dtype=wp.vec3), v_new: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    gravity = wp.vec3(0.0, -9.8, 0.0)
    a = gravity - drag * wp.length(v[i]) * v[i]
    v_new[i] = v[i] + a * dt
    x_new[i] = x[i] + v_new[i] * dt


@wp.kernel
def distance_loss(x: wp.array(dtype=wp.vec3), target: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    i = wp.tid()
    d = x[i] - target[i]
    wp.atomic_add(loss, 0, wp.dot(d, d))


class BallisticExample:
    def __init__(self, num_balls=4, num_steps=40, dt=1.0 / 30.0, drag=0.05, lr=0.5):
        self.num_steps, self.dt, self.drag = num_steps, dt, drag
        rng = np.random.default_rng(42)
        self.target = wp.array(rng.uniform([3.0, 0.0, -1.0], [6.0, 2.0, 1.0], (num_balls, 3)), dtype=wp.vec3)
        self.velocity = wp.array(np.tile([3.0, 3.0, 0.0], (num_balls, 1)), dtype=wp.vec3, requires_grad=True)
        self.x = [wp.zeros(num_balls, dtype=wp.vec3, requires_grad=True) for _ in range(num_steps + 1)]
        self.v = [wp.zeros(num_balls, dtype=wp.vec3, requires_grad=True) for _ in range(num_steps + 1)]
        self.v[0] = self.velocity
        self.loss = wp.zeros(1, dtype=float, requires_grad=True)
        self.optimizer = wp.optim.Adam([self.velocity], lr=lr)
        self.timings = {}
        self.losses = []

    def forward(self):
        for k in range(self.num_steps):
            wp.launch(ballistic_step, dim=len(self.velocity),
                      inputs=[self.x[k], self.v[k], self.drag, self.dt], outputs=[self.x[k + 1], self.v[k + 1]])
        wp.launch(distance_loss, dim=len(self.velocity), inputs=[self.x[-1], self.target], outputs=[self.loss])

    def compute_loss(self):
        self.loss.zero_()
        self.forward()
        return float(self.loss.numpy()[0])

    def step(self):
        with wp.ScopedTimer("step", print=False, dict=self.timings):
            tape = wp.Tape()
            self.loss.zero_()
            with tape:
                self.forward()
            tape.backward(self.loss)
            self.losses.append(float(self.loss.numpy()[0]))
            self.optimizer.step([self.velocity.grad])
            tape.zero()


# ---------------------------------------------------------------------------------------------
# 2. Heat diffusion on a grid, the steps recorded once with ScopedCapture and replayed.


@wp.kernel
def diffuse(u: wp.array2d(dtype=float), k: float, u_new: wp.array2d(dtype=float)):
    i, j = wp.tid()
    n, m = u.shape[0], u.shape[1]
    center = u[i, j]
    if i == 0 or j == 0 or i == n - 1 or j == m - 1:
        u_new[i, j] = center  # fixed boundary
        return
    lap = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * center
    u_new[i, j] = center + k * lap


class HeatExample:
    def __init__(self, n=24, k=0.2, substeps=8):
        self.k, self.substeps = k, substeps
        u0 = np.zeros((n, n), dtype=np.float32)
        u0[n // 3: 2 * n // 3, n // 3: 2 * n // 3] = 1.0
        u0[0, :] = 0.5
        self.u = [wp.array(u0), wp.zeros((n, n), dtype=float)]
        with wp.ScopedCapture() as capture:
            self.simulate()
        self.graph = capture.graph

    def simulate(self):
        for _ in range(self.substeps):
            wp.launch(diffuse, dim=self.u[0].shape, inputs=[self.u[0], self.k], outputs=[self.u[1]])
            self.u = [self.u[1], self.u[0]]

    def step(self):
        wp.capture_launch(self.graph)


def heat_reference(u, k, steps):
    u = np.array(u, dtype=np.float32)
    for _ in range(steps):
        lap = np.zeros_like(u)
        lap[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
        u = u + np.float32(k) * lap
    return u


# ---------------------------------------------------------------------------------------------
# 3. Springs with parameters in a struct: fit the rest length by SGD.


@wp.struct
class SpringParams:
    stiffness: float
    rest_length: float
    damping: float


@wp.kernel
def spring_energy(x: wp.array(dtype=wp.vec2), springs: wp.array(dtype=wp.vec2i),
                  rest: wp.array(dtype=float), params: SpringParams, energy: wp.array(dtype=float)):
    s = wp.tid()
    a = springs[s][0]
    b = springs[s][1]
    stretch = wp.length(x[a] - x[b]) - rest[0] * params.rest_length
    wp.atomic_add(energy, 0, 0.5 * params.stiffness * stretch * stretch)


class SpringFitExample:
    def __init__(self, lr=0.02):
        angles = np.linspace(0.0, 2.0 * np.pi, 7)[:-1]
        self.x = wp.array(np.stack([np.cos(angles), np.sin(angles)], 1) * 1.5, dtype=wp.vec2)
        self.springs = wp.array([[k, (k + 1) % 6] for k in range(6)], dtype=wp.vec2i)
        self.params = SpringParams()
        self.params.stiffness = 10.0
        self.params.rest_length = 1.0
        self.params.damping = 0.1
        self.rest = wp.array([0.5], dtype=float, requires_grad=True)
        self.energy = wp.zeros(1, dtype=float, requires_grad=True)
        self.optimizer = wp.optim.SGD([self.rest], lr=lr, momentum=0.5)

    def step(self):
        tape = wp.Tape()
        self.energy.zero_()
        with tape:
            wp.launch(spring_energy, dim=len(self.springs),
                      inputs=[self.x, self.springs, self.rest, self.params], outputs=[self.energy])
        tape.backward(loss=self.energy)
        self.optimizer.step([self.rest.grad])
        tape.zero()
        return float(self.energy.numpy()[0])
