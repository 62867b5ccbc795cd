"""Struct instances built in Python: default field values, nested struct fields assigned by value
(a copy, not an alias), assign() between instances, array fields swapped between launches, vector,
matrix, float16 and bool fields, numpy_dtype()/numpy_value() of a flat struct (Warp's numpy_value()
fails on a nested struct field, so rows are filled field by field), and struct arrays written by a
kernel read back with numpy() and list(); str() and repr() of instances."""

import numpy as np
import warp as wp


@wp.struct
class Material:
    density: float
    tint: wp.vec3
    flags: wp.int32
    soft: wp.bool
    weight: wp.float16


@wp.struct
class Body:
    mat: Material
    frame: wp.mat22
    ids: wp.vec2i
    mass: wp.float64


@wp.struct
class Buffers:
    src: wp.array(dtype=float)
    dst: wp.array(dtype=float)
    gain: float


@wp.kernel
def apply(buf: Buffers):
    i = wp.tid()
    buf.dst[i] = buf.dst[i] + buf.gain * buf.src[i]


@wp.kernel
def read_body(b: Body, out: wp.array(dtype=float)):
    out[0] = b.mat.density
    out[1] = b.mat.tint[1]
    out[2] = float(b.mat.flags)
    out[3] = wp.where(b.mat.soft, 1.0, 0.0)
    out[4] = float(b.mat.weight)
    out[5] = b.frame[1, 0]
    out[6] = float(b.ids[0] - b.ids[1])
    out[7] = float(b.mass)


@wp.kernel
def write_bodies(bodies: wp.array(dtype=Body)):
    i = wp.tid()
    b = bodies[i]
    b.mat.density = b.mat.density * 2.0
    b.ids = wp.vec2i(b.ids[1], b.ids[0] + i)
    b.mass = b.mass + wp.float64(0.25)
    bodies[i] = b


def body_row(b):
    return np.array([b.mat.density, b.mat.tint[0], b.mat.tint[2], b.mat.flags, float(b.mat.soft),
                     float(b.mat.weight), b.frame[0, 1], b.ids[0], b.ids[1], b.mass], dtype=np.float64)


def run():
    r = {}
    default = Body()
    r["defaults"] = body_row(default)
    m = Material()
    m.density = 2.5
    m.tint = wp.vec3(0.1, 0.2, 0.3)
    m.flags = -7
    m.soft = True
    m.weight = 0.333
    b = Body()
    b.mat = m
    m.density = 99.0
    r["nested_is_copy"] = b.mat.density
    b.frame = wp.mat22(1.0, 2.0, 3.0, 4.0)
    b.ids = wp.vec2i(9, 4)
    b.mass = 1.0 / 3.0
    out = wp.zeros(8, dtype=float)
    wp.launch(read_body, dim=1, inputs=[b, out])
    r["read_body"] = out.numpy().copy()
    b.mat.tint = wp.vec3(5.0, 6.0, 7.0)
    b.mat.soft = False
    wp.launch(read_body, dim=1, inputs=[b, out])
    r["read_body_changed"] = out.numpy().copy()
    c = Body()
    c.assign(b)
    b.mass = 0.0
    r["assigned"] = body_row(c)
    dt = Material.numpy_dtype()
    r["mat_dtype_names"] = ",".join(dt["names"])
    r["mat_dtype_itemsize"] = dt["itemsize"]
    r["mat_dtype_offsets"] = np.array(dt["offsets"])
    r["mat_numpy_value"] = np.array(m.numpy_value()[0:1] + tuple(m.numpy_value()[1]) + m.numpy_value()[2:],
                                    dtype=np.float64)
    rows = np.zeros(3, dtype=Body.numpy_dtype())
    for i in range(3):
        bi = Body()
        bi.mat.density = float(i + 1)
        bi.mat.flags = i * 3
        bi.ids = wp.vec2i(i, -i)
        bi.mass = 0.5 * i
        bi.frame = wp.mat22(float(i), 1.0, 2.0, 3.0)
        rows[i]["mat"] = bi.mat.numpy_value()
        rows[i]["frame"] = np.array(bi.frame).reshape(2, 2)
        rows[i]["ids"] = np.array(bi.ids)
        rows[i]["mass"] = bi.mass
    bodies = wp.array(rows, dtype=Body)
    wp.launch(write_bodies, dim=3, inputs=[bodies])
    back = bodies.numpy()
    r["bodies_density"] = back["mat"]["density"].copy()
    r["bodies_ids"] = back["ids"].copy()
    r["bodies_mass"] = back["mass"].copy()
    r["bodies_frame"] = back["frame"].copy()
    listed = bodies.list()
    r["listed"] = np.stack([body_row(x) for x in listed])
    buf = Buffers()
    r["null_array_field"] = buf.src is None
    a = wp.array(np.arange(5, dtype=np.float32))
    d1 = wp.zeros(5, dtype=float)
    d2 = wp.ones(5, dtype=float)
    buf.src = a
    buf.dst = d1
    buf.gain = 2.0
    wp.launch(apply, dim=5, inputs=[buf])
    buf.dst = d2
    buf.gain = -1.0
    wp.launch(apply, dim=5, inputs=[buf])
    wp.launch(apply, dim=3, inputs=[buf])
    r["d1"] = d1.numpy().copy()
    r["d2"] = d2.numpy().copy()
    r["field_is_same_array"] = buf.dst is d2
    r["str_flat"] = str(m)
    r["repr_flat"] = repr(m)
    r["str_nested"] = str(c)
    return r
