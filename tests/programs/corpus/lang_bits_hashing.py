"""Integer bit manipulation as users write it for hashing and spatial keys: xorshift32 and a
murmur-style mixer on uint32 (multiplication that wraps), 3D Morton codes by bit
interleaving with masks and shifts on uint32 and uint64, bit_count, bitwise operators on
integer vectors and matrices (&, |, ^, ~, <<, >>), and the named operator builtins
(wp.add, wp.mul, wp.bit_and, wp.lshift, wp.invert, wp.neg, wp.mod, wp.floordiv, ...)."""

import numpy as np
import warp as wp

mat22i = wp.types.matrix(shape=(2, 2), dtype=wp.int32)


@wp.func
def xorshift32(x: wp.uint32):
    x = x ^ (x << wp.uint32(13))
    x = x ^ (x >> wp.uint32(17))
    x = x ^ (x << wp.uint32(5))
    return x


@wp.func
def mix32(h: wp.uint32):
    h = h ^ (h >> wp.uint32(16))
    h = h * wp.uint32(0x85EBCA6B)
    h = h ^ (h >> wp.uint32(13))
    h = h * wp.uint32(0xC2B2AE35)
    return h ^ (h >> wp.uint32(16))


@wp.func
def spread_bits(v: wp.uint32):
    v = (v * wp.uint32(0x00010001)) & wp.uint32(0xFF0000FF)
    v = (v * wp.uint32(0x00000101)) & wp.uint32(0x0F00F00F)
    v = (v * wp.uint32(0x00000011)) & wp.uint32(0xC30C30C3)
    v = (v * wp.uint32(0x00000005)) & wp.uint32(0x49249249)
    return v


@wp.func
def spread_bits64(v: wp.uint64):
    v = v & wp.uint64(0x1FFFFF)
    v = (v | (v << wp.uint64(32))) & wp.uint64(0x1F00000000FFFF)
    v = (v | (v << wp.uint64(16))) & wp.uint64(0x1F0000FF0000FF)
    v = (v | (v << wp.uint64(8))) & wp.uint64(0x100F00F00F00F00F)
    v = (v | (v << wp.uint64(4))) & wp.uint64(0x10C30C30C30C30C3)
    v = (v | (v << wp.uint64(2))) & wp.uint64(0x1249249249249249)
    return v


@wp.kernel
def hashes(points: wp.array(dtype=wp.vec3), seeds: wp.array(dtype=wp.uint32), out: wp.array(dtype=wp.uint32, ndim=2),
           keys64: wp.array(dtype=wp.uint64), counts: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    s = seeds[i]
    out[i, 0] = xorshift32(s)
    out[i, 1] = mix32(s + wp.uint32(i))
    p = points[i]
    cx = wp.uint32(wp.clamp(p[0], 0.0, 1.0) * 1023.0)
    cy = wp.uint32(wp.clamp(p[1], 0.0, 1.0) * 1023.0)
    cz = wp.uint32(wp.clamp(p[2], 0.0, 1.0) * 1023.0)
    out[i, 2] = spread_bits(cx) | (spread_bits(cy) << wp.uint32(1)) | (spread_bits(cz) << wp.uint32(2))
    qx = wp.uint64(wp.clamp(p[0], 0.0, 1.0) * 2097151.0)
    qy = wp.uint64(wp.clamp(p[1], 0.0, 1.0) * 2097151.0)
    qz = wp.uint64(wp.clamp(p[2], 0.0, 1.0) * 2097151.0)
    keys64[i] = spread_bits64(qx) | (spread_bits64(qy) << wp.uint64(1)) | (spread_bits64(qz) << wp.uint64(2))
    counts[i, 0] = wp.bit_count(s)
    counts[i, 1] = wp.bit_count(wp.int64(i) - wp.int64(3))
    counts[i, 2] = wp.bit_count(wp.uint8(s))
    bucket = int(mix32(s) % wp.uint32(16))
    counts[i, 3] = bucket


@wp.kernel
def vector_bits(a: wp.array(dtype=wp.vec3i), b: wp.array(dtype=wp.vec3i), out: wp.array(dtype=wp.vec3i, ndim=2),
                mats: wp.array(dtype=mat22i, ndim=2)):
    i = wp.tid()
    x = a[i]
    y = b[i]
    out[i, 0] = x & y
    out[i, 1] = x | y
    out[i, 2] = x ^ y
    out[i, 3] = ~x
    out[i, 4] = x << wp.vec3i(1, 2, 3)
    out[i, 5] = x >> wp.vec3i(1, 1, 2)
    out[i, 6] = wp.bit_and(x, y) + wp.bit_or(x, y) - wp.bit_xor(x, y)
    out[i, 7] = wp.lshift(x, wp.vec3i(2)) + wp.rshift(y, wp.vec3i(1)) + wp.invert(y)
    out[i, 8] = wp.add(x, y) + wp.mul(x, 3) - wp.sub(y, x) + wp.neg(y) + wp.pos(x)
    out[i, 9] = wp.vec3i(wp.mod(x[0], 7), wp.floordiv(x[1], 4), wp.div(x[2], -3))
    m = mat22i(x[0], x[1], y[0], y[1])
    mats[i, 0] = m & mat22i(0xF0, 0x0F, 0xFF, 0x3)
    mats[i, 1] = ~m


def run():
    n = 16
    rng = np.random.default_rng(77)
    points = wp.array(rng.uniform(-0.1, 1.1, (n, 3)).astype(np.float32), dtype=wp.vec3)
    seeds = wp.array(rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32), dtype=wp.uint32)
    out = wp.zeros((n, 3), dtype=wp.uint32)
    keys64 = wp.zeros(n, dtype=wp.uint64)
    counts = wp.zeros((n, 4), dtype=int)
    wp.launch(hashes, dim=n, inputs=[points, seeds], outputs=[out, keys64, counts])
    a = wp.array(rng.integers(-1000, 1000, (n, 3)).astype(np.int32), dtype=wp.vec3i)
    b = wp.array(rng.integers(-1000, 1000, (n, 3)).astype(np.int32), dtype=wp.vec3i)
    vb = wp.zeros((n, 10), dtype=wp.vec3i)
    mats = wp.zeros((n, 2), dtype=mat22i)
    wp.launch(vector_bits, dim=n, inputs=[a, b], outputs=[vb, mats])
    return {"hashes": out.numpy(), "morton64": keys64.numpy(), "counts": counts.numpy(), "vector_bits": vb.numpy(),
            "matrix_bits": mats.numpy()}
