"""Reverse-mode gradients through geometry queries, compared with Warp's adjoints: ray parameter,
barycentrics and normal of mesh_query_ray with respect to the ray's start and direction;
the closest point of mesh_query_point_no_sign; mesh_eval_velocity along the barycentrics;
trilinear volume samples with respect to the sample point; volume_sample_index with respect to
the point, the per-voxel data and the background."""

import numpy as np
import warp as wp


def wavy_sheet(n=9):
    xs = np.linspace(-1.0, 1.0, n)
    x, y = np.meshgrid(xs, xs, indexing="ij")
    z = 0.2 * np.sin(2.0 * x) * np.cos(1.5 * y)
    pts = np.stack([x, y, z], -1).reshape(-1, 3).astype(np.float32)
    idx = []
    for i in range(n - 1):
        for j in range(n - 1):
            a, b, c, d = i * n + j, (i + 1) * n + j, (i + 1) * n + j + 1, i * n + j + 1
            idx += [a, b, c, a, c, d]
    return pts, np.array(idx, dtype=np.int32)


@wp.kernel
def ray_loss(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
             loss: wp.array(dtype=float)):
    tid = wp.tid()
    q = wp.mesh_query_ray(mesh, starts[tid], dirs[tid], 100.0)
    if q.result:
        wp.atomic_add(loss, 0, q.t + 0.3 * q.u - 0.7 * q.v + wp.dot(q.normal, wp.vec3(0.1, 0.2, 0.3)))


@wp.kernel
def point_loss(mesh: wp.uint64, pts: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    tid = wp.tid()
    q = wp.mesh_query_point_no_sign(mesh, pts[tid], 10.0)
    if q.result:
        # position and velocity of the closest point, not its (u, v): a point nearest to an edge
        # has the same closest point on both faces but other barycentrics on each
        cp = wp.mesh_eval_position(mesh, q.face, q.u, q.v)
        v = wp.mesh_eval_velocity(mesh, q.face, q.u, q.v)
        wp.atomic_add(loss, 0, wp.dot(cp, wp.vec3(0.3, -0.2, 0.5)) + wp.length(v))


@wp.kernel
def volume_loss(vol: wp.uint64, pts: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    tid = wp.tid()
    uvw = wp.volume_world_to_index(vol, pts[tid])
    s = wp.volume_sample(vol, uvw, wp.Volume.LINEAR, dtype=float)
    wp.atomic_add(loss, 0, wp.sin(s))


@wp.kernel
def index_loss(vol: wp.uint64, pts: wp.array(dtype=wp.vec3), data: wp.array(dtype=float),
               bg: wp.array(dtype=float), loss: wp.array(dtype=float)):
    tid = wp.tid()
    s = wp.volume_sample_index(vol, pts[tid], wp.Volume.LINEAR, data, bg[0])
    wp.atomic_add(loss, 0, s * s)


def run():
    pts, idx = wavy_sheet()
    vel = np.stack([pts[:, 1], -pts[:, 0], pts[:, 2] * 2.0 + 0.5], -1).astype(np.float32)
    mesh = wp.Mesh(points=wp.array(pts, dtype=wp.vec3), indices=wp.array(idx, dtype=wp.int32),
                   velocities=wp.array(vel, dtype=wp.vec3))
    rng = np.random.default_rng(23)
    m = 32
    starts = np.concatenate([rng.uniform(-0.8, 0.8, (m, 2)), np.full((m, 1), 2.0)], 1).astype(np.float32)
    dirs = np.concatenate([rng.uniform(-0.2, 0.2, (m, 2)), -rng.uniform(0.5, 1.5, (m, 1))], 1).astype(np.float32)
    s = wp.array(starts, dtype=wp.vec3, requires_grad=True)
    d = wp.array(dirs, dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(ray_loss, dim=m, inputs=[mesh.id, s, d, loss])
    tape.backward(loss)
    res = {"ray_loss": loss.numpy(), "ray_start_grad": s.grad.numpy(), "ray_dir_grad": d.grad.numpy()}

    q = wp.array(np.concatenate([rng.uniform(-0.9, 0.9, (m, 2)), rng.uniform(-0.5, 0.5, (m, 1))], 1).astype(np.float32),
                 dtype=wp.vec3, requires_grad=True)
    loss2 = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(point_loss, dim=m, inputs=[mesh.id, q, loss2])
    tape.backward(loss2)
    res.update({"point_loss": loss2.numpy(), "point_grad": q.grad.numpy()})

    n = 12
    g = np.arange(n, dtype=np.float32)
    field = np.sin(0.5 * g)[:, None, None] * np.cos(0.3 * g)[None, :, None] + 0.1 * g[None, None, :]
    field = field.astype(np.float32)
    vol = wp.Volume.load_from_numpy(field, min_world=(-0.5, -0.5, -0.5), voxel_size=0.1)
    vp = wp.array(rng.uniform(-0.4, 0.5, (m, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    loss3 = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(volume_loss, dim=m, inputs=[vol.id, vp, loss3])
    tape.backward(loss3)
    res.update({"volume_loss": loss3.numpy(), "volume_grad": vp.grad.numpy()})

    voxels = np.array([[i, j, k] for i in range(5) for j in range(5) for k in range(5) if (i * j + k) % 4 != 1],
                      dtype=np.int32)
    ivol = wp.Volume.allocate_by_voxels(wp.array(voxels, dtype=wp.vec3i), voxel_size=1.0)
    count = ivol.get_voxel_count()
    data = wp.array(np.linspace(-1.0, 1.0, count).astype(np.float32), dtype=float, requires_grad=True)
    bg = wp.array([0.25], dtype=float, requires_grad=True)
    ip = wp.array(rng.uniform(0.0, 4.0, (m, 3)).astype(np.float32), dtype=wp.vec3, requires_grad=True)
    loss4 = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(index_loss, dim=m, inputs=[ivol.id, ip, data, bg, loss4])
    tape.backward(loss4)
    res.update({"index_loss": loss4.numpy(), "index_point_grad": ip.grad.numpy(),
                "index_data_grad_sum": float(data.grad.numpy().sum()),
                "index_data_grad_sorted": np.sort(data.grad.numpy()), "index_bg_grad": bg.grad.numpy()})
    return res


TOLERANCE = {"ray_loss": (1e-5, 1e-5), "ray_start_grad": (1e-4, 1e-4), "ray_dir_grad": (1e-4, 1e-4),
             "point_loss": (1e-5, 1e-5), "point_grad": (1e-4, 1e-4), "volume_loss": (1e-5, 1e-5),
             "volume_grad": (1e-4, 1e-4), "index_loss": (1e-5, 1e-5), "index_point_grad": (1e-4, 1e-4),
             "index_data_grad_sum": (1e-5, 1e-5), "index_data_grad_sorted": (1e-5, 1e-5),
             "index_bg_grad": (1e-5, 1e-5)}
