"""The examples' projectile physics in float64 numpy: their kernels are checked against it."""

from __future__ import annotations

import numpy as np


def numpy_flight(v0: np.ndarray, steps: int, dt: float, gravity, wind, drag: float) -> np.ndarray:
    """Positions of projectiles launched from the origin with velocities `v0` (n, 2) in m/s,
    under `gravity` (m/s^2) and quadratic drag against `wind` (m/s): the drag acceleration is
    drag * |v - wind| * (v - wind). Semi-implicit Euler with step `dt` (s), as the kernels.
    Returns (steps + 1, n, 2) in m."""
    g, wind = np.array(gravity), np.array(wind)
    x, v = np.zeros_like(v0, dtype=np.float64), v0.astype(np.float64)
    path = [x]
    for _ in range(steps):
        rel = v - wind
        v = v + (g - drag * np.linalg.norm(rel, axis=1, keepdims=True) * rel) * dt
        x = x + v * dt
        path.append(x)
    return np.stack(path)
