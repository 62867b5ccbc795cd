"""wp.indexedarray beyond gathers: 3-D indexed arrays mixing index arrays and None, indexed views of
strided slices, writes and atomics through indexed arrays in kernels (duplicate indices summed by
atomics), shape queries inside kernels, assign from numpy and from an array, zero_/fill_ of vector
element types, list(), wp.copy into and out of indexed arrays, empty index arrays, fill_ of struct elements (a kernel
taking an indexedarray of structs does not compile in Warp 1.19, so none is launched),
and the index arrays Warp refuses (int64, 2-D) by exception type."""

import numpy as np
import warp as wp


@wp.struct
class Cell:
    mass: float
    vel: wp.vec2


@wp.kernel
def scatter_add(src: wp.array(dtype=float), dst: wp.indexedarray(dtype=float)):
    i = wp.tid()
    wp.atomic_add(dst, i % dst.shape[0], src[i])


@wp.kernel
def write3(a: wp.indexedarray3d(dtype=float), out: wp.array(dtype=int)):
    i, j, k = wp.tid()
    a[i, j, k] = float(i * 100 + j * 10 + k)
    if i == 0 and j == 0 and k == 0:
        out[0] = a.shape[0]
        out[1] = a.shape[1]
        out[2] = a.shape[2]


@wp.kernel
def vec_norms(v: wp.indexedarray2d(dtype=wp.vec3), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    out[i, j] = wp.length_sq(v[i, j])


def refused(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "ok"


def ints(*v):
    return wp.array(np.array(v, dtype=np.int32))


def run():
    r = {}
    cube = wp.zeros((3, 4, 5), dtype=float)
    ia3 = wp.indexedarray3d(cube, [ints(2, 0), None, ints(4, 1, 3)])
    shp = wp.zeros(3, dtype=int)
    wp.launch(write3, dim=ia3.shape, inputs=[ia3, shp])
    r["ia3_shape_in_kernel"] = shp.numpy().copy()
    r["cube_after"] = cube.numpy().copy()
    r["ia3_numpy"] = ia3.numpy().copy()
    base = wp.array(np.arange(20, dtype=np.float32))
    strided = base[1::3]
    ia = wp.indexedarray1d(strided, [ints(0, 2, 4, 6)])
    r["strided_indexed"] = ia.numpy().copy()
    wp.launch(scatter_add, dim=10, inputs=[wp.array(np.arange(10, dtype=np.float32)), ia])
    r["base_after_scatter"] = base.numpy().copy()
    dup = wp.indexedarray1d(wp.zeros(4, dtype=float), [ints(1, 1, 3)])
    wp.launch(scatter_add, dim=6, inputs=[wp.array(np.ones(6, dtype=np.float32)), dup])
    r["dup_targets"] = dup.data.numpy().copy()
    r["dup_view"] = dup.numpy().copy()
    dst = wp.zeros(8, dtype=float)
    idst = wp.indexedarray1d(dst, [ints(7, 5, 3)])
    idst.assign(np.array([1.5, 2.5, 3.5], dtype=np.float32))
    r["assign_numpy"] = dst.numpy().copy()
    idst.assign(wp.array(np.array([-1.0, -2.0, -3.0], dtype=np.float32)))
    r["assign_array"] = dst.numpy().copy()
    out = wp.zeros(3, dtype=float)
    wp.copy(out, idst)
    r["copy_out"] = out.numpy().copy()
    wp.copy(idst, wp.array(np.array([10.0, 20.0, 30.0], dtype=np.float32)))
    r["copy_in"] = dst.numpy().copy()
    r["list"] = np.array(idst.list())
    idst.zero_()
    r["zeroed"] = dst.numpy().copy()
    vecs = wp.array(np.arange(24, dtype=np.float32).reshape(4, 2, 3), dtype=wp.vec3)
    iv = wp.indexedarray2d(vecs, [ints(3, 1), None])
    norms = wp.zeros((2, 2), dtype=float)
    wp.launch(vec_norms, dim=iv.shape, inputs=[iv, norms])
    r["vec_norms"] = norms.numpy().copy()
    iv.fill_(wp.vec3(1.0, -1.0, 0.5))
    r["vec_fill"] = vecs.numpy().copy()
    r["vec_list"] = np.array([list(x) for x in iv.list()])
    cells = wp.zeros(5, dtype=Cell)
    ic = wp.indexedarray1d(cells, [ints(4, 0)])
    c0 = Cell()
    c0.mass = 2.0
    c0.vel = wp.vec2(1.0, 0.0)
    ic.fill_(c0)
    r["cells_mass"] = cells.numpy()["mass"].copy()
    r["cells_vel"] = cells.numpy()["vel"].copy()
    empty = wp.indexedarray1d(base, [wp.zeros(0, dtype=wp.int32)])
    r["empty_shape"] = np.array(empty.shape)
    r["empty_numpy_size"] = empty.numpy().size
    empty.fill_(5.0)
    r["empty_fill_noop"] = base.numpy().copy()
    r["int64_indices"] = refused(lambda: wp.indexedarray1d(base, [wp.array(np.array([0, 1], dtype=np.int64))]))
    r["2d_indices"] = refused(lambda: wp.indexedarray1d(base, [wp.zeros((2, 2), dtype=wp.int32)]))
    return r
