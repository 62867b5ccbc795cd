"""Array creation: from numpy, lists, tuples, with inferred and explicit dtypes; zeros/ones/full/empty and *_like."""

import numpy as np
import warp as wp


@wp.kernel
def scale_add(a: wp.array(dtype=float), b: wp.array(dtype=float), s: float, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a[i] * s + b[i]


def run():
    r = {}
    a = wp.array(np.arange(6, dtype=np.float32))
    r["a_dtype"] = str(a.dtype.__name__)
    b = wp.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=wp.float32)
    out = wp.zeros_like(a)
    wp.launch(scale_add, dim=6, inputs=[a, b, 2.0], outputs=[out])
    r["out"] = out.numpy().copy()
    li = wp.array([1, 2, 3], dtype=wp.int32)
    r["li"] = li.numpy().copy()
    tup = wp.array((1.5, 2.5), dtype=wp.float64)
    r["tup"] = tup.numpy().copy()
    f64 = wp.array(np.linspace(0, 1, 5))
    r["f64_dtype"] = str(f64.dtype.__name__)
    r["f64"] = f64.numpy().copy()
    i64 = wp.array(np.array([1, -2, 3], dtype=np.int64))
    r["i64_dtype"] = str(i64.dtype.__name__)
    conv = wp.array(np.array([1.7, -2.2, 3.9]), dtype=wp.int32)
    r["conv"] = conv.numpy().copy()
    ones = wp.ones((2, 3), dtype=wp.int16)
    r["ones"] = ones.numpy().copy()
    r["ones_shape"] = np.array(ones.shape)
    full = wp.full(4, 7.5, dtype=wp.float64)
    r["full"] = full.numpy().copy()
    fullv = wp.full(3, wp.vec3(1.0, 2.0, 3.0), dtype=wp.vec3)
    r["fullv"] = fullv.numpy().copy()
    fullt = wp.full(2, (1.0, 2.0, 3.0))
    r["fullt"] = fullt.numpy().copy()
    fullm = wp.full(2, ((1, 2), (3, 4)))
    r["fullm"] = fullm.numpy().copy()
    fulli = wp.full((2, 2), 3)
    r["fulli"] = fulli.numpy().copy()
    r["fulli_dtype"] = str(fulli.dtype.__name__)
    fullf = wp.full(3, 2.5)
    r["fullf_dtype"] = str(fullf.dtype.__name__)
    e = wp.empty(5, dtype=wp.uint8)
    r["empty_shape"] = np.array(e.shape)
    r["empty_size"] = e.size
    el = wp.empty_like(full)
    r["el_dtype"] = str(el.dtype.__name__)
    fl = wp.full_like(li, 9)
    r["full_like"] = fl.numpy().copy()
    ol = wp.ones_like(full)
    r["ones_like"] = ol.numpy().copy()
    c = wp.clone(out)
    out.zero_()
    r["clone"] = c.numpy().copy()
    r["zeroed"] = out.numpy().copy()
    lv = wp.array([wp.vec2(1.0, 2.0), wp.vec2(3.0, 4.0), wp.vec2(5.0, 6.0)])
    r["lv_shape"] = np.array(lv.shape)
    r["lv_dtype"] = str(lv.dtype.__name__)
    sh = wp.zeros(shape=(2, 3, 4), dtype=wp.float32)
    r["sh_ndim"] = sh.ndim
    r["sh_shape"] = np.array(sh.shape)
    r["sh_strides"] = np.array(sh.strides)
    r["sh_capacity"] = sh.capacity
    z2 = wp.zeros((3, 2), dtype=wp.vec2)
    r["z2_shape"] = np.array(z2.numpy().shape)
    b1 = wp.array([True, False, True], dtype=wp.bool)
    r["bool"] = b1.numpy().copy()
    u = wp.array([250, 3], dtype=wp.uint8)
    r["u8"] = u.numpy().copy()
    return r
