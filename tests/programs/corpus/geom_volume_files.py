"""Volumes written and read back: save_to_nvdb / load_from_nvdb round trips (file object and
bytes, "none" and "zip" codecs) of float, vec3 and int grids, vec3 sampling with its 3x3 Jacobian
from volume_sample_grad, and CLOSEST-mode gradients (zero)."""

import os
import tempfile

import numpy as np
import warp as wp


@wp.kernel
def sample_all(f: wp.uint64, v: wp.uint64, i: wp.uint64, pts: wp.array(dtype=wp.vec3),
               fo: wp.array(dtype=float), vo: wp.array(dtype=wp.vec3), jac: wp.array(dtype=wp.mat33),
               io: wp.array(dtype=int), closest_grad: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    uvw = pts[tid]
    fo[tid] = wp.volume_sample(f, uvw, wp.Volume.LINEAR, dtype=float)
    J = wp.mat33()
    vo[tid] = wp.volume_sample_grad(v, uvw, wp.Volume.LINEAR, J, dtype=wp.vec3)
    jac[tid] = J
    io[tid] = wp.volume_sample(i, uvw, wp.Volume.CLOSEST, dtype=int)
    g = wp.vec3(1.0, 1.0, 1.0)
    wp.volume_sample_grad(f, uvw, wp.Volume.CLOSEST, g, dtype=float)
    closest_grad[tid] = g


def sample(vf, vv, vi, pts):
    m = pts.shape[0]
    outs = [wp.zeros(m, dtype=float), wp.zeros(m, dtype=wp.vec3), wp.zeros(m, dtype=wp.mat33),
            wp.zeros(m, dtype=int), wp.zeros(m, dtype=wp.vec3)]
    wp.launch(sample_all, dim=m, inputs=[vf.id, vv.id, vi.id, pts], outputs=outs)
    return [o.numpy() for o in outs]


def run():
    n = 10
    g = np.arange(n, dtype=np.float32)
    x, y, z = np.meshgrid(g, g, g, indexing="ij")
    vf = wp.Volume.load_from_numpy((x * 0.5 - y * y * 0.1 + np.sin(z)).astype(np.float32), voxel_size=0.2,
                                   bg_value=-3.0)
    vv = wp.Volume.load_from_numpy(np.stack([x * y * 0.1, np.cos(y), z - x], -1).astype(np.float32), voxel_size=0.2,
                                   bg_value=(0.0, 0.0, 0.0))
    vi = wp.Volume.load_from_numpy(((x * 3 + y * 5 + z * 7) % 13).astype(np.int32), bg_value=-1)
    rng = np.random.default_rng(2)
    pts = wp.array(rng.uniform(-1.0, 10.5, (48, 3)).astype(np.float32), dtype=wp.vec3)
    res = {}
    for k, a in zip(["f", "v", "jac", "i", "closest_grad"], sample(vf, vv, vi, pts)):
        res[f"orig_{k}"] = a

    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, vol, codec in (("f", vf, "none"), ("v", vv, "zip"), ("i", vi, "none")):
            paths[name] = os.path.join(tmp, f"{name}.nvdb")
            vol.save_to_nvdb(paths[name], codec=codec)
        with open(paths["f"], "rb") as fh:
            lf = wp.Volume.load_from_nvdb(fh)
        with open(paths["v"], "rb") as fh:
            lv = wp.Volume.load_from_nvdb(fh)
        with open(paths["i"], "rb") as fh:
            li = wp.Volume.load_from_nvdb(fh.read())
    for k, a in zip(["f", "v", "jac", "i", "closest_grad"], sample(lf, lv, li, pts)):
        res[f"file_{k}"] = a
    res["file_voxel_size"] = np.array(lv.get_voxel_size())
    res["file_dtypes"] = f"{lf.dtype.__name__} {lv.dtype.__name__} {li.dtype.__name__}"
    res["file_voxels"] = np.array([lf.get_voxel_count(), lv.get_voxel_count(), li.get_voxel_count()])
    return res


TOLERANCE = {"orig_jac": (1e-5, 1e-5), "file_jac": (1e-5, 1e-5)}
