"""Vector norms and quaternion helpers written as `@func`s (Warp's `warp.math` module).

They are ordinary funcs: callable from kernels, from other funcs and from Python scope,
and differentiable through the builtins they use. All are also `weft.<name>`.
"""

from __future__ import annotations

from typing import Any

from .builtins import BUILTINS
from .constants import HALF_PI, PI
from .lang.decorators import func
from .types import matrix, quat, transformation, vec3, vector

wp_abs, wp_atan2, wp_asin, wp_clamp = (BUILTINS[n] for n in ("abs", "atan2", "asin", "clamp"))
wp_quat_from_axis_angle = BUILTINS["quat_from_axis_angle"]
wp_dot, wp_length, wp_normalize, wp_sqrt = (BUILTINS[n] for n in ("dot", "length", "normalize", "sqrt"))
wp_cross = BUILTINS["cross"]


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


@func
def _axis_rotation(axis: int, angle: float):
    """The rotation by `angle` about coordinate axis `axis` (0, 1 or 2)."""
    unit = vec3(0.0, 0.0, 0.0)
    unit[axis] = 1.0
    return wp_quat_from_axis_angle(unit, angle)


@func
def quat_from_euler(e: vec3, i: int, j: int, k: int):
    """The rotation by e[i] about axis i, then e[j] about axis j, then e[k] about axis k, all
    about the fixed axes (extrinsic): the product qk * qj * qi. `e` is indexed by axis; for
    a proper Euler sequence (i == k) the first and third rotations both use e[i]."""
    return _axis_rotation(k, e[k]) * _axis_rotation(j, e[j]) * _axis_rotation(i, e[i])


@func
def quat_to_euler(q: quat, i: int, j: int, k: int):
    """Euler angles of rotation `q` for the extrinsic axis sequence i, j, k (the inverse of
    quat_from_euler for i != k), indexed by axis; for a proper sequence (i == k) the third
    angle is stored at e[3 - i - j]. At gimbal lock the first angle is 0 (Warp's choice).

    The method is the direct one of Bernardes and Viollet (2022, "Quaternion to Euler
    angles conversion: a direct, general and computationally efficient method"): the
    quaternion's components are permuted (and, for Tait-Bryan sequences, mixed) so that
    the second angle and the half sum and half difference of the others are atan2s."""
    proper = i == k
    if proper:
        k = 3 - i - j
    sign = float(((i - j) * (j - k) * (k - i)) // 2)  # the parity of the permutation (i, j, k)
    w = q[3]
    a, b, c, d = w, q[i], q[j], q[k] * sign
    if not proper:
        a, b, c, d = w - q[j], q[i] + q[k] * sign, q[j] + w, q[k] * sign - q[i]
    second = 2.0 * wp_atan2(wp_sqrt(c * c + d * d), wp_sqrt(a * a + b * b))
    half_sum = wp_atan2(b, a)
    half_diff = wp_atan2(d, c)
    first = half_sum - half_diff
    third = half_sum + half_diff
    # at gimbal lock only the sum (or the difference) of the first and third angles is
    # defined: the first is 0 and the third takes it all, as in Warp
    if wp_abs(second) <= 1.0e-6:
        first = 0.0
        third = 2.0 * half_sum
    elif wp_abs(second - PI) <= 1.0e-6:
        first = 0.0
        third = 2.0 * half_diff
    if not proper:
        third = third * sign
        second = second - HALF_PI
    e = vec3(0.0, 0.0, 0.0)
    e[i] = first
    e[j] = second
    e[k] = third
    return e


@func
def quat_between_vectors(a: vec3, b: vec3):
    """The shortest-arc unit quaternion that turns direction `a` onto direction `b` (vec3s of
    any nonzero length), as Warp's: for opposite directions the result is not a rotation
    (use `quat_from_axis_angle` with a perpendicular axis and pi instead). A func: kernels
    call it too."""
    a = wp_normalize(a)
    b = wp_normalize(b)
    c = wp_cross(a, b)
    return wp_normalize(quat(c[0], c[1], c[2], 1.0 + wp_dot(a, b)))


__all__ = ["quat_between_vectors", "norm_l1", "norm_l2", "norm_huber", "norm_pseudo_huber", "smooth_normalize",
           "quat_twist", "quat_twist_angle", "quat_twist_angle_signed", "quat_to_rpy",
           "quat_from_euler", "quat_to_euler", "transform_from_matrix", "transform_to_matrix",
           "transform_compose", "transform_decompose", "transform_twist", "transform_wrench",
           "velocity_at_point"]


# 4x4 matrices and transforms (generic over the float type) -----------------------------------
@func
def transform_from_matrix(mat: Any):
    """The transform of a 4x4 matrix: its translation column and the rotation of its
    top-left 3x3 block (which must be a rotation)."""
    p = vector(mat[0, 3], mat[1, 3], mat[2, 3])
    return transformation(p, BUILTINS["quat_from_matrix"](mat))


@func
def transform_to_matrix(xform: Any):
    """The 4x4 matrix [[R, p], [0, 1]] of a transform (R: its rotation as a matrix)."""
    return transform_compose(BUILTINS["transform_get_translation"](xform),
                             BUILTINS["transform_get_rotation"](xform),
                             vector(type(xform[0])(1.0), type(xform[0])(1.0), type(xform[0])(1.0)))


@func
def transform_compose(position: Any, rotation: Any, scale: Any):
    """The 4x4 matrix [[R diag(scale), position], [0, 1]] (R: the rotation as a matrix)."""
    r = BUILTINS["quat_to_matrix"](rotation)
    zero = type(position[0])(0.0)
    return matrix(scale[0] * r[0, 0], scale[1] * r[0, 1], scale[2] * r[0, 2], position[0],
                  scale[0] * r[1, 0], scale[1] * r[1, 1], scale[2] * r[1, 2], position[1],
                  scale[0] * r[2, 0], scale[1] * r[2, 1], scale[2] * r[2, 2], position[2],
                  zero, zero, zero, type(position[0])(1.0), shape=(4, 4))


@func
def transform_decompose(m: Any):
    """(position, rotation, scale) of a 4x4 matrix [[R diag(scale), position], [0, 1]]:
    the scale is the length of each column of the 3x3 block."""
    c0 = vector(m[0, 0], m[1, 0], m[2, 0])
    c1 = vector(m[0, 1], m[1, 1], m[2, 1])
    c2 = vector(m[0, 2], m[1, 2], m[2, 2])
    s = vector(wp_length(c0), wp_length(c1), wp_length(c2))
    r = BUILTINS["matrix_from_cols"](c0 / s[0], c1 / s[1], c2 / s[2])
    return vector(m[0, 3], m[1, 3], m[2, 3]), BUILTINS["quat_from_matrix"](r), s


# Spatial vectors (angular, linear), as Warp orders them ----------------------------------------
@func
def transform_twist(t: Any, x: Any):
    """Twist `x = (w, v)` moved by transform `t = (p, R)` to the destination frame:
    (R w, R v + p x R w)."""
    q = BUILTINS["transform_get_rotation"](t)
    w = BUILTINS["quat_rotate"](q, BUILTINS["spatial_top"](x))
    v = BUILTINS["quat_rotate"](q, BUILTINS["spatial_bottom"](x))
    v = v + BUILTINS["cross"](BUILTINS["transform_get_translation"](t), w)
    return vector(w[0], w[1], w[2], v[0], v[1], v[2])


@func
def transform_wrench(t: Any, x: Any):
    """Wrench `x = (tau, f)` moved by transform `t = (p, R)` to the destination frame:
    (R tau + p x R f, R f)."""
    q = BUILTINS["transform_get_rotation"](t)
    f = BUILTINS["quat_rotate"](q, BUILTINS["spatial_bottom"](x))
    tau = BUILTINS["quat_rotate"](q, BUILTINS["spatial_top"](x))
    tau = tau + BUILTINS["cross"](BUILTINS["transform_get_translation"](t), f)
    return vector(tau[0], tau[1], tau[2], f[0], f[1], f[2])


@func
def velocity_at_point(qd: Any, r: Any):
    """The linear velocity of a point at offset `r` on a body with spatial velocity
    `qd = (w, v)`: v + w x r."""
    return BUILTINS["spatial_bottom"](qd) + BUILTINS["cross"](BUILTINS["spatial_top"](qd), r)
