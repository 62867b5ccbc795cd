"""Arrays of custom vector/matrix types (wp.types.vector/matrix of any length and scalar type) and of
structs: numpy structured data, lists of struct values, assign, fill_, full, field writes in kernels."""

import numpy as np
import warp as wp

vec5 = wp.types.vector(length=5, dtype=wp.float32)
mat23d = wp.types.matrix(shape=(2, 3), dtype=wp.float64)
vec2ub = wp.types.vector(length=2, dtype=wp.uint8)


@wp.struct
class Body:
    mass: float
    vel: wp.vec3
    flags: wp.int16
    inertia: wp.mat22


@wp.kernel
def custom(a: wp.array(dtype=vec5), m: wp.array(dtype=mat23d), c: wp.array(dtype=vec2ub),
           dots: wp.array(dtype=float), prods: wp.array(dtype=wp.vec2d)):
    i = wp.tid()
    dots[i] = wp.dot(a[i], a[i]) + float(c[i][0]) - float(c[i][1])
    prods[i] = m[i] * wp.vec3d(wp.float64(1.0), wp.float64(2.0), wp.float64(3.0))
    a[i][4] = -1.0
    c[i] = c[i] + vec2ub(wp.uint8(250), wp.uint8(1))


@wp.kernel
def bodies(b: wp.array(dtype=Body), energy: wp.array(dtype=float)):
    i = wp.tid()
    body = b[i]
    energy[i] = 0.5 * body.mass * wp.dot(body.vel, body.vel) + float(body.flags) + body.inertia[1, 0]
    b[i].flags = wp.int16(-5 - i)
    b[i].vel.y = 0.0


def run():
    r = {}
    a = wp.array(np.arange(10, dtype=np.float32).reshape(2, 5), dtype=vec5)
    m = wp.array(np.arange(12, dtype=np.float64).reshape(2, 2, 3), dtype=mat23d)
    c = wp.array([[10, 2], [255, 3]], dtype=vec2ub)
    dots = wp.zeros(2, dtype=float)
    prods = wp.zeros(2, dtype=wp.vec2d)
    wp.launch(custom, dim=2, inputs=[a, m, c, dots, prods])
    r["dots"] = dots.numpy().copy()
    r["prods"] = prods.numpy().copy()
    r["a"] = a.numpy().copy()
    r["c"] = c.numpy().copy()
    r["m_shape"] = np.array(m.numpy().shape)
    rng = np.random.default_rng(4)
    host = []
    for i in range(4):
        body = Body()
        body.mass = float(i + 1)
        body.vel = wp.vec3(*rng.uniform(-1.0, 1.0, 3))
        body.flags = wp.int16(i)
        body.inertia = wp.mat22(1.0, 0.0, float(i), 1.0)
        host.append(body)
    arr = wp.array(host, dtype=Body)
    energy = wp.zeros(4, dtype=float)
    wp.launch(bodies, dim=4, inputs=[arr, energy])
    r["energy"] = energy.numpy().copy()
    data = arr.numpy()
    r["names"] = ",".join(data.dtype.names)
    r["flags"] = data["flags"]
    r["vel"] = data["vel"]
    r["inertia"] = data["inertia"]
    listed = arr.list()
    r["listed_mass"] = np.array([float(b.mass) for b in listed])
    r["listed_vel"] = np.array([list(b.vel) for b in listed])
    other = wp.zeros(4, dtype=Body)
    other.assign(host)
    r["assigned_mass"] = other.numpy()["mass"].copy()
    proto = Body()
    proto.mass = 9.0
    proto.flags = wp.int16(3)
    other.fill_(proto)
    r["filled"] = other.numpy()["mass"].copy()
    r["filled_flags"] = other.numpy()["flags"].copy()
    full = wp.full(3, proto, dtype=Body)
    r["full_mass"] = full.numpy()["mass"].copy()
    records = np.zeros(2, dtype=data.dtype)
    records["mass"] = [3.0, 4.0]
    records["vel"] = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    from_np = wp.array(records, dtype=Body)
    e2 = wp.zeros(2, dtype=float)
    wp.launch(bodies, dim=2, inputs=[from_np, e2])
    r["from_np_energy"] = e2.numpy().copy()
    view = from_np.numpy()
    view["mass"] = [10.0, 20.0]
    r["numpy_aliases"] = from_np.numpy()["mass"].copy()
    return r
