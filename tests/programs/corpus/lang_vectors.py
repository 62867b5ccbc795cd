"""Vector values in kernels: every constructor form (components, fill, copy/convert, wp.vector
with length/dtype, custom wp.types.vector types), component access .x/.y/.z/.w and indexing,
component assignment, in-place operators, slices, swizzle-free reductions, and float64,
int and float16 vectors; arrays annotated both as wp.array(dtype=...) and wp.array[...]."""

import numpy as np
import warp as wp

vec5 = wp.types.vector(length=5, dtype=wp.float32)
vec2i8 = wp.types.vector(length=2, dtype=wp.int8)


@wp.kernel
def constructors(out3: wp.array[wp.vec3], out4: wp.array(dtype=wp.vec4), out5: wp.array(dtype=vec5),
                 outd: wp.array(dtype=wp.vec3d), outi: wp.array(dtype=wp.vec3i), outh: wp.array(dtype=wp.vec3h)):
    i = wp.tid()
    f = float(i)
    a = wp.vec3(f, 2.0 * f, -f)
    b = wp.vec3(0.5)
    c = wp.vec3()
    d = wp.vector(1.0, 2.0, f, 4.0)
    e = wp.vector(f, length=5)
    g = wp.vector(wp.float64(f), wp.float64(1.0), wp.float64(2.0), dtype=wp.float64)
    h = wp.vec3d(a)
    k = wp.vec3i(i, -i, 7)
    m = wp.vec3i(a)
    n = wp.vec3h(a)
    out3[i] = a + b + c
    out4[i] = d * 2.0
    out5[i] = e + vec5(1.0, 2.0, 3.0, 4.0, 5.0)
    outd[i] = g + h
    outi[i] = k + m * 2
    outh[i] = n * wp.float16(0.5) + wp.vec3h(wp.float16(1.0))


@wp.kernel
def components(src: wp.array(dtype=wp.vec4), out: wp.array(dtype=wp.vec4), s: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    v = src[i]
    s[i, 0] = v.x + 10.0 * v.y
    s[i, 1] = v.z - v.w
    s[i, 2] = v[0] * v[3]
    s[i, 3] = v[-1]
    s[i, 4] = wp.length(v)
    s[i, 5] = wp.length_sq(v)
    s[i, 6] = wp.dot(v, v)
    s[i, 7] = float(wp.argmax(v)) + 10.0 * float(wp.argmin(v))
    s[i, 8] = wp.min(v) + wp.max(v)
    w = v
    w.x = 100.0
    w[2] = -w[2]
    w.y += 1.0
    w[3] *= 2.0
    w /= 2.0
    w -= wp.vec4(1.0, 1.0, 1.0, 1.0)
    out[i] = w


@wp.kernel
def slicing(src: wp.array(dtype=wp.vec4), out3: wp.array(dtype=wp.vec3), out2: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    v = src[i]
    head = v[:3]
    tail = v[2:]
    out3[i] = head * v[3]
    out2[i] = tail + v[::2]


@wp.kernel
def ops(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3, ndim=2)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    out[i, 0] = wp.cross(x, y)
    out[i, 1] = wp.normalize(x)
    out[i, 2] = wp.cw_mul(x, y)
    out[i, 3] = wp.cw_div(x, y + wp.vec3(3.0))
    out[i, 4] = -x + 2.0 * y - y / 4.0
    out[i, 5] = wp.abs(x - y)
    out[i, 6] = wp.min(x, y)
    out[i, 7] = wp.max(x, y)
    out[i, 8] = wp.lerp(x, y, 0.25)
    out[i, 9] = wp.vec3(wp.dot(x, y), wp.length(x - y), wp.norm_l1(x))
    out[i, 10] = wp.sign(x) + wp.vec3(wp.floor(y[0]), wp.ceil(y[1]), wp.round(y[2]))
    out[i, 11] = wp.vec3(wp.clamp(x[0], -0.5, 0.5), wp.clamp(x[1], -0.5, 0.5), wp.clamp(x[2], -0.5, 0.5))


@wp.kernel
def int_vectors(a: wp.array(dtype=wp.vec2i), out: wp.array(dtype=wp.vec2i), small: wp.array(dtype=vec2i8)):
    i = wp.tid()
    v = a[i]
    out[i] = wp.vec2i(v[0] // 3, v[1] % 3) + v * 2 - wp.vec2i(1)
    small[i] = vec2i8(wp.int8(v[0] * 40), wp.int8(v[1]))


@wp.kernel
def loss(a: wp.array(dtype=wp.vec3), b: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    c = wp.cross(x, y)
    v = wp.normalize(x + y) * wp.length(c)
    v = wp.vec3(v.x, v.y * x.z, v.z)  # (not `v.y = v.y * x.z`: Warp drops the old v.y adjoint)
    wp.atomic_add(out, 0, wp.dot(v, wp.vec3(1.0, 2.0, 3.0)) + wp.length_sq(wp.cw_mul(x, y)))


def run():
    n = 8
    rng = np.random.default_rng(11)
    out3 = wp.zeros(n, dtype=wp.vec3)
    out4 = wp.zeros(n, dtype=wp.vec4)
    out5 = wp.zeros(n, dtype=vec5)
    outd = wp.zeros(n, dtype=wp.vec3d)
    outi = wp.zeros(n, dtype=wp.vec3i)
    outh = wp.zeros(n, dtype=wp.vec3h)
    wp.launch(constructors, dim=n, outputs=[out3, out4, out5, outd, outi, outh])

    src = wp.array(rng.uniform(-2.0, 2.0, (n, 4)).astype(np.float32), dtype=wp.vec4)
    comp = wp.zeros(n, dtype=wp.vec4)
    s = wp.zeros((n, 9), dtype=float)
    wp.launch(components, dim=n, inputs=[src], outputs=[comp, s])
    o3 = wp.zeros(n, dtype=wp.vec3)
    o2 = wp.zeros(n, dtype=wp.vec2)
    wp.launch(slicing, dim=n, inputs=[src], outputs=[o3, o2])

    a = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    b = wp.array(rng.uniform(-1.0, 1.0, (n, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    res = wp.zeros((n, 12), dtype=wp.vec3)
    wp.launch(ops, dim=n, inputs=[a, b], outputs=[res])

    ia = wp.array(rng.integers(-9, 9, (n, 2)).astype(np.int32), dtype=wp.vec2i)
    io = wp.zeros(n, dtype=wp.vec2i)
    small = wp.zeros(n, dtype=vec2i8)
    wp.launch(int_vectors, dim=n, inputs=[ia], outputs=[io, small])

    total = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(loss, dim=n, inputs=[a, b], outputs=[total])
    tape.backward(total)
    return {"v3": out3.numpy(), "v4": out4.numpy(), "v5": out5.numpy(), "vd": outd.numpy(), "vi": outi.numpy(),
            "vh": outh.numpy(), "components": comp.numpy(), "scalars": s.numpy(), "head": o3.numpy(),
            "tail": o2.numpy(), "ops": res.numpy(), "ivec": io.numpy(), "i8": small.numpy(), "loss": total.numpy(),
            "grad_a": a.grad.numpy(), "grad_b": b.grad.numpy()}


TOLERANCE = {"loss": (1e-5, 1e-5), "grad_a": (1e-5, 1e-5), "grad_b": (1e-5, 1e-5)}
