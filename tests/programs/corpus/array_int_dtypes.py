"""All integer array dtypes plus bool and float16/64: stores wrap, casts truncate, numpy dtypes match."""

import numpy as np
import warp as wp


@wp.kernel
def int8_ops(a: wp.array(dtype=wp.int8), b: wp.array(dtype=wp.uint8), out8: wp.array(dtype=wp.int8),
             outu: wp.array(dtype=wp.uint8)):
    i = wp.tid()
    out8[i] = a[i] + wp.int8(100)
    outu[i] = b[i] * wp.uint8(3)


@wp.kernel
def int16_ops(a: wp.array(dtype=wp.int16), b: wp.array(dtype=wp.uint16), out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    out[i] = wp.int32(a[i]) * 2 + wp.int32(b[i])


@wp.kernel
def int64_ops(a: wp.array(dtype=wp.int64), b: wp.array(dtype=wp.uint32), out: wp.array(dtype=wp.int64),
              outu: wp.array(dtype=wp.uint64)):
    i = wp.tid()
    out[i] = a[i] * wp.int64(1000000007) // wp.int64(3)
    outu[i] = wp.uint64(b[i]) << wp.uint64(20)


@wp.kernel
def divmod_signs(a: wp.array(dtype=int), b: wp.array(dtype=int), q: wp.array(dtype=int), m: wp.array(dtype=int)):
    i = wp.tid()
    q[i] = a[i] / b[i]
    m[i] = a[i] % b[i]


@wp.kernel
def to_bool(a: wp.array(dtype=float), out: wp.array(dtype=wp.bool), back: wp.array(dtype=int)):
    i = wp.tid()
    out[i] = a[i] > 0.5
    if out[i]:
        back[i] = 1
    else:
        back[i] = -1


@wp.kernel
def casts(a: wp.array(dtype=wp.float64), f16: wp.array(dtype=wp.float16), f32: wp.array(dtype=wp.float32),
          i32: wp.array(dtype=wp.int32), u32: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    f16[i] = wp.float16(a[i])
    f32[i] = wp.float32(a[i])
    i32[i] = wp.int32(a[i])
    u32[i] = wp.uint32(wp.abs(a[i]))


def run():
    r = {}
    a8 = wp.array(np.array([-100, 20, 50, 127], dtype=np.int8))
    u8 = wp.array(np.array([1, 85, 90, 255], dtype=np.uint8))
    o8 = wp.zeros(4, dtype=wp.int8)
    ou = wp.zeros(4, dtype=wp.uint8)
    wp.launch(int8_ops, dim=4, inputs=[a8, u8, o8, ou])
    r["o8"] = o8.numpy().copy()
    r["ou"] = ou.numpy().copy()
    a16 = wp.array(np.array([-32768, 1000, 32767], dtype=np.int16))
    b16 = wp.array(np.array([65535, 0, 1], dtype=np.uint16))
    o32 = wp.zeros(3, dtype=wp.int32)
    wp.launch(int16_ops, dim=3, inputs=[a16, b16, o32])
    r["o16"] = o32.numpy().copy()
    a64 = wp.array(np.array([5, -7, 123456789], dtype=np.int64))
    b32 = wp.array(np.array([1, 4095, 4294967295], dtype=np.uint32))
    o64 = wp.zeros(3, dtype=wp.int64)
    ou64 = wp.zeros(3, dtype=wp.uint64)
    wp.launch(int64_ops, dim=3, inputs=[a64, b32, o64, ou64])
    r["o64"] = o64.numpy().copy()
    r["ou64"] = ou64.numpy().copy()
    na = np.array([7, -7, 7, -7, 0, 9], dtype=np.int32)
    nb = np.array([2, 2, -2, -2, 3, -4], dtype=np.int32)
    q = wp.zeros(6, dtype=int)
    m = wp.zeros(6, dtype=int)
    wp.launch(divmod_signs, dim=6, inputs=[wp.array(na), wp.array(nb), q, m])
    r["q"] = q.numpy().copy()
    r["m"] = m.numpy().copy()
    fa = wp.array(np.array([0.1, 0.7, 0.5, 2.0], dtype=np.float32))
    ob = wp.zeros(4, dtype=wp.bool)
    back = wp.zeros(4, dtype=int)
    wp.launch(to_bool, dim=4, inputs=[fa, ob, back])
    r["bool"] = ob.numpy().copy()
    r["back"] = back.numpy().copy()
    src = wp.array(np.array([1.5, -2.7, 70000.25, 3.999], dtype=np.float64))
    f16 = wp.zeros(4, dtype=wp.float16)
    f32 = wp.zeros(4, dtype=wp.float32)
    i32 = wp.zeros(4, dtype=wp.int32)
    u32 = wp.zeros(4, dtype=wp.uint32)
    wp.launch(casts, dim=4, inputs=[src, f16, f32, i32, u32])
    r["f16"] = f16.numpy().copy()
    r["f32"] = f32.numpy().copy()
    r["i32"] = i32.numpy().copy()
    r["u32"] = u32.numpy().copy()
    for t in (wp.int8, wp.uint8, wp.int16, wp.uint16, wp.int32, wp.uint32, wp.int64, wp.uint64,
              wp.float16, wp.float32, wp.float64, wp.bool):
        arr = wp.zeros(2, dtype=t)
        r["np_" + t.__name__] = str(arr.numpy().dtype)
        r["size_" + t.__name__] = wp.types.type_size_in_bytes(t)
    return r
