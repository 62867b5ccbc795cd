"""Builtins called with keyword arguments, by the parameter names of Warp's reference
(clamp(x, low=, high=), atan2(y=, x=), pow(x=, y=), min/max(a=, b=), lerp(a=, b=, t=),
smoothstep(a=, b=, x=), where(cond=, value_if_true=, value_if_false=), rand_init(seed=,
offset=), randf(state, low=, high=) on a temporary state, quat_from_axis_angle(axis=,
angle=), quat_rotate(quat=, vec=), transformation(p=, q=), transform_point(xform=, point=),
transform_vector(xform=, vec=), cross/dot/length/normalize(a=...), vector(..., length=,
dtype=), identity(n=, dtype=), matrix(..., shape=), quat_slerp(a=, b=, t=), outer(a=, b=))."""

import numpy as np
import warp as wp


@wp.kernel
def keywords(xs: wp.array(dtype=float), out: wp.array(dtype=float, ndim=2), vs: wp.array(dtype=wp.vec3, ndim=2),
             ms: wp.array(dtype=wp.mat22, ndim=2), qs: wp.array(dtype=wp.quat)):
    i = wp.tid()
    x = xs[i]
    out[i, 0] = wp.clamp(x, low=-0.5, high=0.5)
    out[i, 1] = wp.clamp(x=x, low=0.0, high=1.0)
    out[i, 2] = wp.atan2(y=x, x=1.0)
    out[i, 3] = wp.pow(x=wp.abs(x), y=1.5)
    out[i, 4] = wp.min(a=x, b=0.0) + wp.max(x, b=0.1)
    out[i, 5] = wp.sin(x=x) + wp.abs(x=x) + wp.sign(x=x) + wp.floor(x=x)
    out[i, 6] = wp.dot(a=wp.vec3(x), b=wp.vec3(1.0, 2.0, 3.0))
    out[i, 7] = wp.length(a=wp.vec2(x, 1.0))
    out[i, 8] = wp.randf(wp.rand_init(seed=42, offset=i), low=-1.0, high=1.0)
    out[i, 9] = wp.lerp(a=0.0, b=10.0, t=x)
    out[i, 10] = wp.smoothstep(a=-1.0, b=1.0, x=x)
    out[i, 11] = wp.where(cond=x > 0.0, value_if_true=1.0, value_if_false=-1.0)
    q = wp.quat_from_axis_angle(axis=wp.vec3(0.0, 0.0, 1.0), angle=x)
    vs[i, 0] = wp.quat_rotate(quat=q, vec=wp.vec3(1.0, 0.0, 0.0))
    t = wp.transformation(p=wp.vec3(1.0, 2.0, 3.0), q=q)
    vs[i, 1] = wp.transform_point(xform=t, point=wp.vec3(x))
    vs[i, 2] = wp.transform_vector(xform=t, vec=wp.vec3(x))
    vs[i, 3] = wp.cross(a=wp.vec3(x, 1.0, 0.0), b=wp.vec3(0.0, 0.0, 1.0))
    vs[i, 4] = wp.normalize(a=wp.vec3(x, 1.0, 2.0))
    vs[i, 5] = wp.vector(x, 2.0, 3.0, length=3, dtype=float)
    ms[i, 0] = wp.identity(n=2, dtype=float) * x
    ms[i, 1] = wp.matrix(x, 1.0, 2.0, 3.0, shape=(2, 2))
    ms[i, 2] = wp.outer(a=wp.vec2(x, 1.0), b=wp.vec2(2.0, x))
    qs[i] = wp.quat_slerp(a=q, b=wp.quat_identity(), t=0.5)


def run():
    xs = wp.array(np.linspace(-1.5, 1.5, 5, dtype=np.float32))
    out = wp.zeros((5, 12), dtype=float)
    vs = wp.zeros((5, 6), dtype=wp.vec3)
    ms = wp.zeros((5, 3), dtype=wp.mat22)
    qs = wp.zeros(5, dtype=wp.quat)
    wp.launch(keywords, dim=5, inputs=[xs], outputs=[out, vs, ms, qs])
    return {"scalars": out.numpy(), "vectors": vs.numpy(), "matrices": ms.numpy(), "quats": qs.numpy()}
