"""Vector norms and quaternion helpers written as `@func`s (Warp's `warp.math` module).

They are ordinary funcs: callable from kernels, from other funcs and from Python scope,
and differentiable through the builtins they use. All are also `weft.<name>`.
"""

from __future__ import annotations

from typing import Any

from .builtins import BUILTINS
from .lang.decorators import func
from .types import quat, vec3

wp_abs, wp_atan2, wp_asin, wp_clamp = (BUILTINS[n] for n in ("abs", "atan2", "asin", "clamp"))
wp_dot, wp_length, wp_normalize, wp_sqrt = (BUILTINS[n] for n in ("dot", "length", "normalize", "sqrt"))


@func
def norm_l1(v: Any):
    """The L1 norm of vector `v`: the sum of the components' magnitudes."""
    n = wp_abs(v[0])
    for i in range(1, len(v)):
        n += wp_abs(v[i])
    return n


@func
def norm_l2(v: Any):
    """The L2 (Euclidean) norm of vector `v`."""
    return wp_length(v)


@func
def norm_huber(v: Any, delta: float = 1.0):
    """The Huber norm of `v`: |v|^2 / 2 up to |v| = delta, then delta * (|v| - delta / 2)."""
    sq = wp_dot(v, v)
    if sq <= delta * delta:
        return 0.5 * sq
    return delta * (wp_sqrt(sq) - 0.5 * delta)


@func
def norm_pseudo_huber(v: Any, delta: float = 1.0):
    """The pseudo-Huber norm of `v`: delta * sqrt(1 + |v|^2 / delta^2), smooth everywhere."""
    return delta * wp_sqrt(1.0 + wp_dot(v, v) / (delta * delta))


@func
def smooth_normalize(v: Any, delta: float = 1.0):
    """`v` divided by its pseudo-Huber norm: a normalisation that is smooth at zero."""
    return v / norm_pseudo_huber(v, delta)


@func
def quat_twist(axis: vec3, q: quat):
    """The twist part of rotation `q` about unit vector `axis` (swing-twist decomposition):
    the vector part of `q` projected on `axis`, with `q`'s scalar part, normalised."""
    along = wp_dot(vec3(q[0], q[1], q[2]), axis) * axis
    return wp_normalize(quat(along[0], along[1], along[2], q[3]))


@func
def quat_twist_angle(axis: vec3, q: quat):
    """The magnitude in radians of the twist of `q` about unit vector `axis` (its sign
    dropped: in [0, pi] when q[3] >= 0)."""
    return 2.0 * wp_atan2(wp_abs(wp_dot(axis, vec3(q[0], q[1], q[2]))), q[3])


@func
def quat_twist_angle_signed(axis: vec3, q: quat):
    """The twist of `q` about unit vector `axis` in radians, positive by the right-hand rule."""
    return 2.0 * wp_atan2(wp_dot(axis, vec3(q[0], q[1], q[2])), q[3])


@func
def quat_to_rpy(q: quat):
    """(roll, pitch, yaw) of unit quaternion `q`, the inverse of `quat_rpy`; pitch in
    [-pi/2, pi/2] (roll and yaw are inaccurate near pitch = +-pi/2)."""
    x, y, z, w = q[0], q[1], q[2], q[3]
    roll = wp_atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = wp_asin(wp_clamp(2.0 * (w * y - z * x), -1.0, 1.0))
    yaw = wp_atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return vec3(roll, pitch, yaw)


__all__ = ["norm_l1", "norm_l2", "norm_huber", "norm_pseudo_huber", "smooth_normalize",
           "quat_twist", "quat_twist_angle", "quat_twist_angle_signed", "quat_to_rpy"]
