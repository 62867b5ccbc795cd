"""numpy dtype mapping: wp.dtype_from_numpy / wp.dtype_to_numpy, arrays of small ints, float16,
bools, uint64, matrices from (N, 2, 2) arrays and slices with strides."""

import numpy as np
import warp as wp


@wp.kernel
def widen(a: wp.array(dtype=wp.int8), b: wp.array(dtype=wp.uint8), out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    out[i] = wp.int32(a[i]) * 1000 + wp.int32(b[i])


@wp.kernel
def half_ops(h: wp.array(dtype=wp.float16), out: wp.array(dtype=wp.float16)):
    i = wp.tid()
    out[i] = h[i] * wp.float16(3.0) + wp.float16(0.5)


@wp.kernel
def flags(x: wp.array(dtype=float), mask: wp.array(dtype=wp.bool), count: wp.array(dtype=wp.uint64)):
    i = wp.tid()
    if mask[i]:
        wp.atomic_add(count, 0, wp.uint64(1))
        if x[i] > 0.0:
            wp.atomic_add(count, 1, wp.uint64(i))


@wp.kernel
def det2(m: wp.array(dtype=wp.mat22), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.determinant(m[i]) + m[i][0, 1]


@wp.kernel
def strided_double(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = 2.0 * a[i]


def run():
    names = [str(np.dtype(wp.dtype_to_numpy(t))) for t in (wp.float16, wp.float32, wp.float64, wp.int8, wp.uint8,
                                                          wp.int16, wp.int32, wp.int64, wp.uint32, wp.uint64, wp.bool)]
    back = [wp.dtype_from_numpy(np.dtype(n)).__name__ for n in ("float32", "int64", "uint16", "float64")]

    a = wp.array(np.array([-3, -1, 0, 5, 127], dtype=np.int8))
    b = wp.array(np.array([255, 1, 2, 3, 4], dtype=np.uint8))
    out = wp.empty(5, dtype=wp.int32)
    wp.launch(widen, dim=5, inputs=[a, b], outputs=[out])

    h = wp.array(np.array([0.1, 1.5, -2.25, 1000.0], dtype=np.float16))
    hout = wp.empty_like(h)
    wp.launch(half_ops, dim=4, inputs=[h], outputs=[hout])

    x = wp.array(np.linspace(-1.0, 1.0, 9, dtype=np.float32))
    mask = wp.array(np.array([True, False, True, True, False, True, True, False, True]))
    count = wp.zeros(2, dtype=wp.uint64)
    wp.launch(flags, dim=9, inputs=[x, mask], outputs=[count])

    mats = np.arange(16, dtype=np.float32).reshape(4, 2, 2) - 5.0
    m = wp.array(mats, dtype=wp.mat22)
    dets = wp.zeros(4, dtype=float)
    wp.launch(det2, dim=4, inputs=[m], outputs=[dets])

    base = wp.array(np.arange(10, dtype=np.float32))
    every_other = base[1::2]
    doubled = wp.zeros(every_other.shape[0], dtype=float)
    wp.launch(strided_double, dim=every_other.shape[0], inputs=[every_other], outputs=[doubled])

    return {
        "numpy_names": np.array(names),
        "warp_names": np.array(back),
        "widened": out.numpy(),
        "half": hout.numpy(),
        "half_dtype": str(hout.numpy().dtype),
        "count": count.numpy(),
        "dets": dets.numpy(),
        "mat_numpy_shape": np.array(m.numpy().shape),
        "every_other": every_other.numpy(),
        "every_other_strides": np.array(every_other.strides),
        "every_other_contiguous": every_other.is_contiguous,
        "doubled": doubled.numpy(),
        "bool_dtype": str(mask.numpy().dtype),
    }
