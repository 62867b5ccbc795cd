"""wp.Volume from dense NumPy data (load_from_numpy): float, vec3 and int volumes, world/index
transforms (isotropic and anisotropic voxels), CLOSEST and LINEAR sampling, volume_sample_grad,
volume_lookup inside and outside the active tiles, and the gradient of a sampled SDF through a Tape."""

import numpy as np
import warp as wp


@wp.kernel
def sample_sdf(vol: wp.uint64, pts: wp.array(dtype=wp.vec3),
               closest: wp.array(dtype=float), linear: wp.array(dtype=float),
               grad_val: wp.array(dtype=float), grad: wp.array(dtype=wp.vec3),
               generic: wp.array(dtype=float), uvw_out: wp.array(dtype=wp.vec3), back: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    uvw = wp.volume_world_to_index(vol, pts[tid])
    uvw_out[tid] = uvw
    back[tid] = wp.volume_index_to_world(vol, uvw)
    closest[tid] = wp.volume_sample_f(vol, uvw, wp.Volume.CLOSEST)
    linear[tid] = wp.volume_sample_f(vol, uvw, wp.Volume.LINEAR)
    g = wp.vec3()
    grad_val[tid] = wp.volume_sample_grad_f(vol, uvw, wp.Volume.LINEAR, g)
    grad[tid] = g
    generic[tid] = wp.volume_sample(vol, uvw, wp.Volume.LINEAR, dtype=float)


@wp.kernel
def lookups(vol: wp.uint64, ijk: wp.array(dtype=wp.vec3i), out: wp.array(dtype=float), out_i: wp.array(dtype=int),
            ivol: wp.uint64):
    tid = wp.tid()
    c = ijk[tid]
    out[tid] = wp.volume_lookup_f(vol, c[0], c[1], c[2])
    out_i[tid] = wp.volume_lookup(ivol, c[0], c[1], c[2], dtype=int)


@wp.kernel
def sample_vec(vol: wp.uint64, pts: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3),
               out_c: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    uvw = wp.volume_world_to_index(vol, pts[tid])
    out[tid] = wp.volume_sample_v(vol, uvw, wp.Volume.LINEAR)
    out_c[tid] = wp.volume_sample(vol, uvw, wp.Volume.CLOSEST, dtype=wp.vec3)
    dirs[tid] = wp.volume_index_to_world_dir(vol, wp.volume_world_to_index_dir(vol, wp.vec3(1.0, 2.0, 3.0)))


@wp.kernel
def sdf_loss(vol: wp.uint64, pts: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    tid = wp.tid()
    d = wp.volume_sample(vol, wp.volume_world_to_index(vol, pts[tid]), wp.Volume.LINEAR, dtype=float)
    wp.atomic_add(loss, 0, d * d)


def run():
    n = 24
    h = 0.1
    lo = np.array([-1.2, -1.2, -1.2])
    idx = np.arange(n)
    x, y, z = np.meshgrid(lo[0] + idx * h, lo[1] + idx * h, lo[2] + idx * h, indexing="ij")
    sdf = (np.sqrt(x * x + 0.8 * y * y + z * z) - 0.7).astype(np.float32)
    vol = wp.Volume.load_from_numpy(sdf, min_world=tuple(lo), voxel_size=h, bg_value=1.0)
    rng = np.random.default_rng(9)
    m = 80
    pts_np = rng.uniform(-1.0, 1.1, size=(m, 3)).astype(np.float32)
    pts_np[:4] = [[-1.2, -1.2, -1.2], [0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [-1.25, 0.3, 0.3]]
    pts = wp.array(pts_np, dtype=wp.vec3)
    outs = [wp.zeros(m, dtype=float), wp.zeros(m, dtype=float), wp.zeros(m, dtype=float), wp.zeros(m, dtype=wp.vec3),
            wp.zeros(m, dtype=float), wp.zeros(m, dtype=wp.vec3), wp.zeros(m, dtype=wp.vec3)]
    wp.launch(sample_sdf, dim=m, inputs=[vol.id, pts], outputs=outs)
    res = {k: o.numpy() for k, o in zip(["closest", "linear", "grad_val", "grad", "generic", "uvw", "back"], outs)}

    ivals = (np.arange(n ** 3).reshape(n, n, n) % 97 - 40).astype(np.int32)
    ivol = wp.Volume.load_from_numpy(ivals, bg_value=-7)
    ijk = wp.array(np.array([[0, 0, 0], [3, 4, 5], [23, 23, 23], [24, 0, 0], [-1, 2, 2], [7, 8, 9], [100, 3, 3]],
                            dtype=np.int32), dtype=wp.vec3i)
    out = wp.zeros(7, dtype=float)
    out_i = wp.zeros(7, dtype=int)
    wp.launch(lookups, dim=7, inputs=[vol.id, ijk, out, out_i, ivol.id])
    res["lookup"] = out.numpy()
    res["lookup_int"] = out_i.numpy()

    field = np.stack([np.sin(x), y * z, np.cos(2 * z)], axis=-1).astype(np.float32)
    vvol = wp.Volume.load_from_numpy(field, min_world=(-1.2, -1.0, -0.8), voxel_size=(0.1, 0.08, 0.12),
                                     bg_value=(0.0, 0.0, 0.0))
    v = wp.zeros(m, dtype=wp.vec3)
    vc = wp.zeros(m, dtype=wp.vec3)
    dirs = wp.zeros(m, dtype=wp.vec3)
    wp.launch(sample_vec, dim=m, inputs=[vvol.id, pts, v, vc, dirs])
    res["vec_linear"] = v.numpy()
    res["vec_closest"] = vc.numpy()
    res["dir_roundtrip"] = dirs.numpy()[:1]
    res["voxel_size"] = np.array(vvol.get_voxel_size())
    res["voxel_count"] = vol.get_voxel_count()
    tiles = vol.get_tiles().numpy().reshape(-1, 3)
    res["tiles"] = tiles[np.lexsort(tiles.T[::-1])]

    p = wp.array(pts_np[4:24], dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(sdf_loss, dim=20, inputs=[vol.id, p, loss])
    tape.backward(loss)
    res["loss"] = loss.numpy()
    res["loss_grad"] = p.grad.numpy()
    return res


TOLERANCE = {"loss": (1e-5, 1e-5), "grad": (1e-4, 1e-4), "loss_grad": (1e-4, 1e-5), "back": (1e-5, 1e-5),
             "uvw": (1e-5, 1e-5)}
