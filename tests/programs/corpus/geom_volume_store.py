"""Writable volumes: Volume.allocate (float, vec3 and int backgrounds, world-space bounds),
volume_store / volume_store_f / _v / _i from kernels, read back by lookup and sampling;
allocate_by_tiles from points; an index volume from allocate_by_voxels with volume_lookup_index,
volume_sample_index and volume_sample_grad_index over external per-voxel arrays."""

import numpy as np
import warp as wp


@wp.kernel
def fill(vol: wp.uint64, vvol: wp.uint64, ivol: wp.uint64, origin: wp.vec3i):
    i, j, k = wp.tid()
    x = i + origin[0]
    y = j + origin[1]
    z = k + origin[2]
    p = wp.volume_index_to_world(vol, wp.vec3(float(x), float(y), float(z)))
    wp.volume_store_f(vol, x, y, z, wp.length(p) - 1.0)
    wp.volume_store(vvol, x, y, z, wp.vec3(p[0], p[1] * p[2], 1.0))
    wp.volume_store_i(ivol, x, y, z, (x * 7 + y * 3 - z) % 11)


@wp.kernel
def read(vol: wp.uint64, vvol: wp.uint64, ivol: wp.uint64, pts: wp.array(dtype=wp.vec3),
         f: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), iv: wp.array(dtype=int), look: wp.array(dtype=float)):
    tid = wp.tid()
    uvw = wp.volume_world_to_index(vol, pts[tid])
    f[tid] = wp.volume_sample(vol, uvw, wp.Volume.LINEAR, dtype=float)
    v[tid] = wp.volume_sample(vvol, uvw, wp.Volume.LINEAR, dtype=wp.vec3)
    iv[tid] = wp.volume_sample_i(ivol, uvw)
    c = wp.vec3i(int(wp.floor(uvw[0])), int(wp.floor(uvw[1])), int(wp.floor(uvw[2])))
    look[tid] = wp.volume_lookup(vol, c[0], c[1], c[2], dtype=float)


@wp.kernel
def splat(vol: wp.uint64, pts: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    uvw = wp.volume_world_to_index(vol, pts[tid])
    wp.volume_store_f(vol, int(uvw[0]), int(uvw[1]), int(uvw[2]), float(tid + 1))


@wp.kernel
def splat_read(vol: wp.uint64, pts: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    tid = wp.tid()
    uvw = wp.volume_world_to_index(vol, pts[tid])
    out[tid] = wp.volume_lookup_f(vol, int(uvw[0]), int(uvw[1]), int(uvw[2]))


@wp.kernel
def fill_index(vol: wp.uint64, data: wp.array(dtype=float), vdata: wp.array(dtype=wp.vec3),
               active: wp.array(dtype=int)):
    i, j, k = wp.tid()
    idx = wp.volume_lookup_index(vol, i, j, k)
    if idx >= 0:
        data[idx] = float(i) + 0.5 * float(j) - 0.25 * float(k)
        vdata[idx] = wp.vec3(float(i), float(j), float(k))
        wp.atomic_add(active, 0, 1)


@wp.kernel
def sample_index(vol: wp.uint64, data: wp.array(dtype=float), vdata: wp.array(dtype=wp.vec3),
                 uvws: wp.array(dtype=wp.vec3), out: wp.array(dtype=float), grads: wp.array(dtype=wp.vec3),
                 vout: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    uvw = uvws[tid]
    out[tid] = wp.volume_sample_index(vol, uvw, wp.Volume.LINEAR, data, -1.0)
    g = wp.vec3()
    wp.volume_sample_grad_index(vol, uvw, wp.Volume.LINEAR, data, -1.0, g)
    grads[tid] = g
    vout[tid] = wp.volume_sample_index(vol, uvw, wp.Volume.CLOSEST, vdata, wp.vec3(-1.0, -1.0, -1.0))


def run():
    vs = 0.125
    vol = wp.Volume.allocate(min=[-12, -12, -12], max=[11, 11, 11], voxel_size=vs, bg_value=0.0)
    vvol = wp.Volume.allocate(min=[-12, -12, -12], max=[11, 11, 11], voxel_size=vs, bg_value=wp.vec3(0.0, 0.0, 0.0))
    ivol = wp.Volume.allocate(min=[-12, -12, -12], max=[11, 11, 11], voxel_size=vs, bg_value=0)
    wp.launch(fill, dim=(24, 24, 24), inputs=[vol.id, vvol.id, ivol.id, wp.vec3i(-12, -12, -12)])
    rng = np.random.default_rng(21)
    m = 60
    pts = wp.array(rng.uniform(-1.4, 1.3, size=(m, 3)).astype(np.float32), dtype=wp.vec3)
    f = wp.zeros(m, dtype=float)
    v = wp.zeros(m, dtype=wp.vec3)
    iv = wp.zeros(m, dtype=int)
    look = wp.zeros(m, dtype=float)
    wp.launch(read, dim=m, inputs=[vol.id, vvol.id, ivol.id, pts, f, v, iv, look])
    res = {"sdf": f.numpy(), "vec": v.numpy(), "ints": iv.numpy(), "lookup": look.numpy(),
           "voxels": vol.get_voxel_count(),
           "dtypes": f"{vol.dtype.__name__} {vvol.dtype.__name__} {ivol.dtype.__name__}"}

    world = wp.Volume.allocate(min=[-1.0, -0.5, 0.0], max=[1.0, 0.5, 2.0], voxel_size=0.25, bg_value=-1.0,
                               points_in_world_space=True, translation=(0.1, 0.0, -0.2))
    res["world_tiles"] = world.get_tile_count()
    sp = wp.array(np.array([[0.0, 0.0, 0.5], [0.9, 0.4, 1.8], [-0.9, -0.4, 0.1], [0.5, 0.2, 1.0]], dtype=np.float32),
                  dtype=wp.vec3)
    wp.launch(splat, dim=4, inputs=[world.id, sp])
    back = wp.zeros(4, dtype=float)
    wp.launch(splat_read, dim=4, inputs=[world.id, sp, back])
    res["splat"] = back.numpy()

    cloud = wp.array(rng.uniform(0.0, 3.0, size=(30, 3)).astype(np.float32), dtype=wp.vec3)
    tiled = wp.Volume.allocate_by_tiles(cloud, voxel_size=0.2, bg_value=5.0)
    res["tiled_count"] = tiled.get_tile_count()
    tiles = tiled.get_tiles().numpy().reshape(-1, 3)
    res["tiled_tiles"] = tiles[np.lexsort(tiles.T[::-1])]
    wp.launch(splat, dim=30, inputs=[tiled.id, cloud])
    out = wp.zeros(30, dtype=float)
    wp.launch(splat_read, dim=30, inputs=[tiled.id, cloud, out])
    res["tiled_splat_nonzero"] = int((out.numpy() > 0).sum())

    voxels = np.array([[i, j, k] for i in range(6) for j in range(5) for k in range(4) if (i + j + k) % 5 != 0],
                      dtype=np.int32)
    ivox = wp.Volume.allocate_by_voxels(wp.array(voxels, dtype=wp.vec3i), voxel_size=0.5)
    count = ivox.get_voxel_count()
    data = wp.zeros(count, dtype=float)
    vdata = wp.zeros(count, dtype=wp.vec3)
    active = wp.zeros(1, dtype=int)
    wp.launch(fill_index, dim=(8, 8, 8), inputs=[ivox.id, data, vdata, active])
    uvws = wp.array(rng.uniform(-0.5, 6.0, size=(40, 3)).astype(np.float32), dtype=wp.vec3)
    so = wp.zeros(40, dtype=float)
    sg = wp.zeros(40, dtype=wp.vec3)
    sv = wp.zeros(40, dtype=wp.vec3)
    wp.launch(sample_index, dim=40, inputs=[ivox.id, data, vdata, uvws, so, sg, sv])
    res.update({"index_count": count, "index_active": active.numpy(), "index_is_index": ivox.is_index,
                "index_sample": so.numpy(), "index_grad": sg.numpy(), "index_closest": sv.numpy()})
    return res


TOLERANCE = {"index_grad": (1e-5, 1e-5)}
