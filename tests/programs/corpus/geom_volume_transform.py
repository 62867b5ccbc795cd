"""Volumes with a general index-to-world transform: allocate_by_tiles from world points with a
rotation+scale matrix and translation, float64 and vec4 grids, index<->world for points and
directions in float32 and float64, a world-space gradient from volume_sample_grad, and
get_grid_info's metadata."""

import math

import numpy as np
import warp as wp


@wp.kernel
def fill(vol: wp.uint64, dvol: wp.uint64, v4: wp.uint64, tiles: wp.array2d(dtype=wp.int32)):
    t, l = wp.tid()
    i = tiles[t, 0] + l % 8
    j = tiles[t, 1] + (l // 8) % 8
    k = tiles[t, 2] + l // 64
    p = wp.volume_index_to_world(vol, wp.vec3(float(i), float(j), float(k)))
    wp.volume_store(vol, i, j, k, p[0] * p[0] + 2.0 * p[1] - p[2])
    wp.volume_store(dvol, i, j, k, wp.float64(p[0]) * wp.float64(0.5) + wp.float64(k))
    wp.volume_store(v4, i, j, k, wp.vec4(p[0], p[1], p[2], 1.0))


@wp.kernel
def query(vol: wp.uint64, dvol: wp.uint64, v4: wp.uint64, pts: wp.array(dtype=wp.vec3),
          value: wp.array(dtype=float), grad_index: wp.array(dtype=wp.vec3), dval: wp.array(dtype=wp.float64),
          v4val: wp.array(dtype=wp.vec4), uvw_out: wp.array(dtype=wp.vec3), dir_out: wp.array(dtype=wp.vec3),
          uvw_d: wp.array(dtype=wp.vec3d)):
    tid = wp.tid()
    p = pts[tid]
    uvw = wp.volume_world_to_index(vol, p)
    uvw_out[tid] = uvw
    g = wp.vec3()
    value[tid] = wp.volume_sample_grad(vol, uvw, wp.Volume.LINEAR, g, dtype=float)
    grad_index[tid] = g
    dval[tid] = wp.volume_sample(dvol, uvw, wp.Volume.CLOSEST, dtype=wp.float64)
    v4val[tid] = wp.volume_sample(v4, uvw, wp.Volume.LINEAR, dtype=wp.vec4)
    dir_out[tid] = wp.volume_index_to_world_dir(vol, wp.vec3(1.0, 1.0, 0.0))
    pd = wp.vec3d(wp.float64(p[0]), wp.float64(p[1]), wp.float64(p[2]))
    uvw_d[tid] = wp.volume_index_to_world(vol, wp.volume_world_to_index(vol, pd))


def run():
    c, s = math.cos(0.5), math.sin(0.5)
    xform = wp.mat33(0.1 * c, -0.1 * s, 0.0, 0.1 * s, 0.1 * c, 0.0, 0.0, 0.0, 0.15)
    rng = np.random.default_rng(31)
    cloud = wp.array(rng.uniform(-1.0, 1.0, size=(40, 3)).astype(np.float32), dtype=wp.vec3)
    kw = {"transform": xform, "translation": (0.2, -0.1, 0.3)}
    vol = wp.Volume.allocate_by_tiles(cloud, bg_value=0.0, **kw)
    dvol = wp.Volume.allocate_by_tiles(cloud, bg_value=wp.float64(-1.0), **kw)
    v4 = wp.Volume.allocate_by_tiles(cloud, bg_value=wp.vec4(0.0, 0.0, 0.0, 0.0), **kw)
    tiles = vol.get_tiles()
    wp.launch(fill, dim=(tiles.shape[0], 512), inputs=[vol.id, dvol.id, v4.id, tiles])
    m = 50
    pts = wp.array(rng.uniform(-0.6, 0.6, size=(m, 3)).astype(np.float32), dtype=wp.vec3)
    outs = [wp.zeros(m, dtype=float), wp.zeros(m, dtype=wp.vec3), wp.zeros(m, dtype=wp.float64),
            wp.zeros(m, dtype=wp.vec4), wp.zeros(m, dtype=wp.vec3), wp.zeros(m, dtype=wp.vec3),
            wp.zeros(m, dtype=wp.vec3d)]
    wp.launch(query, dim=m, inputs=[vol.id, dvol.id, v4.id, pts], outputs=outs)
    names = ["value", "grad_index", "double", "vec4", "uvw", "dir", "roundtrip_f64"]
    res = {k: o.numpy() for k, o in zip(names, outs)}
    info = vol.get_grid_info()
    res["info_translation"] = np.array(info.translation)
    res["info_transform"] = np.array(info.transform_matrix).reshape(3, 3)
    res["info_type"] = info.type_str
    res["dtypes"] = f"{dvol.dtype.__name__} {v4.dtype.__name__}"
    res["voxel_size"] = np.array(vol.get_voxel_size())
    # the world-space gradient: the index-space one times the inverse transform, transposed
    inv = np.linalg.inv(np.array(info.transform_matrix, dtype=np.float64).reshape(3, 3))
    res["grad_world"] = res["grad_index"].astype(np.float64) @ inv
    res["tile_count"] = vol.get_tile_count()
    return res


TOLERANCE = {"value": (1e-4, 1e-5), "grad_index": (1e-4, 1e-5), "vec4": (1e-5, 1e-5), "uvw": (1e-5, 1e-4),
             "roundtrip_f64": (1e-6, 1e-7), "voxel_size": (1e-6, 1e-7)}
