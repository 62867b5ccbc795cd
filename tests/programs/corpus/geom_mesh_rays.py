"""Ray casting against wp.Mesh: a pinhole camera over a height-field terrain (depth, normals, face,
barycentrics, hit side), any-hit shadow rays, intersection counts through a closed box, and a mesh
with triangle groups queried from a group root."""

import numpy as np
import warp as wp


def terrain(n, size):
    xs = np.linspace(-size, size, n)
    x, z = np.meshgrid(xs, xs, indexing="ij")
    y = 0.3 * np.sin(1.3 * x) * np.cos(0.9 * z) + 0.05 * x
    pts = np.stack([x, y, z], axis=-1).reshape(-1, 3).astype(np.float32)
    tris = []
    for i in range(n - 1):
        for j in range(n - 1):
            a, b, c, d = i * n + j, i * n + j + 1, (i + 1) * n + j, (i + 1) * n + j + 1
            tris += [a, b, d, a, d, c]
    return pts, np.array(tris, dtype=np.int32)


@wp.kernel
def render(mesh: wp.uint64, cam: wp.vec3, width: int, height: int,
           depth: wp.array2d(dtype=float), normal: wp.array2d(dtype=wp.vec3),
           bary: wp.array2d(dtype=wp.vec2), side: wp.array2d(dtype=float), shadow: wp.array2d(dtype=wp.int32)):
    i, j = wp.tid()
    u = (float(j) + 0.37) / float(width) * 2.0 - 1.0
    v = (float(i) + 0.61) / float(height) * 2.0 - 1.0
    d = wp.normalize(wp.vec3(u, -0.6 + 0.5 * v, 1.0))
    q = wp.mesh_query_ray(mesh, cam, d, 100.0)
    if q.result:
        depth[i, j] = q.t
        normal[i, j] = q.normal
        bary[i, j] = wp.vec2(q.u, q.v)
        side[i, j] = q.sign
        hit = cam + q.t * d
        light = wp.normalize(wp.vec3(0.4, 1.0, -0.3))
        if wp.mesh_query_ray_anyhit(mesh, hit + light * 1.0e-3, light, 50.0):
            shadow[i, j] = 1
    else:
        depth[i, j] = -1.0


@wp.kernel
def crossings(mesh: wp.uint64, starts: wp.array(dtype=wp.vec3), dirs: wp.array(dtype=wp.vec3),
              counts: wp.array(dtype=wp.int32), first_t: wp.array(dtype=float), faces: wp.array(dtype=wp.int32)):
    tid = wp.tid()
    counts[tid] = wp.mesh_query_ray_count_intersections(mesh, starts[tid], dirs[tid])
    q = wp.mesh_query_ray(mesh, starts[tid], dirs[tid], 1.0e6)
    if q.result:
        first_t[tid] = q.t
        faces[tid] = q.face
    else:
        faces[tid] = -1


@wp.kernel
def grouped(mesh: wp.uint64, group: int, start: wp.vec3, dirs: wp.array(dtype=wp.vec3), out: wp.array(dtype=float),
            roots: wp.array(dtype=int)):
    tid = wp.tid()
    root = wp.mesh_get_group_root(mesh, group)
    if tid == 0:
        roots[0] = root
    q = wp.mesh_query_ray(mesh, start, dirs[tid], 1.0e6, root)
    if q.result:
        out[tid] = q.t
    else:
        out[tid] = -1.0


def box_mesh():
    pts = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                    [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=np.float32)
    idx = np.array([0, 3, 2, 0, 2, 1, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
                    2, 3, 7, 2, 7, 6, 0, 4, 7, 0, 7, 3, 1, 2, 6, 1, 6, 5], dtype=np.int32)
    return pts, idx


def run():
    pts, idx = terrain(17, 3.0)
    mesh = wp.Mesh(points=wp.array(pts, dtype=wp.vec3), indices=wp.array(idx, dtype=wp.int32))
    w, h = 24, 16
    depth = wp.zeros((h, w), dtype=float)
    normal = wp.zeros((h, w), dtype=wp.vec3)
    bary = wp.zeros((h, w), dtype=wp.vec2)
    side = wp.zeros((h, w), dtype=float)
    shadow = wp.zeros((h, w), dtype=wp.int32)
    wp.launch(render, dim=(h, w), inputs=[mesh.id, wp.vec3(0.1, 1.5, -4.0), w, h],
              outputs=[depth, normal, bary, side, shadow])

    bp, bi = box_mesh()
    box = wp.Mesh(points=wp.array(bp * 2.0 - 0.5, dtype=wp.vec3), indices=wp.array(bi, dtype=wp.int32))
    rng = np.random.default_rng(2)
    m = 48
    starts = rng.uniform(-1.5, 2.5, size=(m, 3)).astype(np.float32)
    dirs = rng.normal(size=(m, 3)).astype(np.float32)
    counts = wp.zeros(m, dtype=wp.int32)
    first_t = wp.zeros(m, dtype=float)
    faces = wp.zeros(m, dtype=wp.int32)
    wp.launch(crossings, dim=m, inputs=[box.id, wp.array(starts, dtype=wp.vec3), wp.array(dirs, dtype=wp.vec3)],
              outputs=[counts, first_t, faces])

    # two stacked quads in groups 0 and 1, a third quad in group 2
    gp = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], dtype=np.float32)
    allp = np.concatenate([gp, gp + [0, 0, 2], gp + [0, 0, 4]]).astype(np.float32)
    quad = np.array([0, 1, 3, 0, 3, 2], dtype=np.int32)
    gidx = np.concatenate([quad, quad + 4, quad + 8]).astype(np.int32)
    groups = wp.array([0, 0, 1, 1, 2, 2], dtype=wp.int32)
    gmesh = wp.Mesh(points=wp.array(allp, dtype=wp.vec3), indices=wp.array(gidx, dtype=wp.int32), groups=groups)
    gdirs = wp.array([[0.01, 0.02, 1.0], [0.1, 0.05, 1.0], [0.3, 0.1, 1.0], [0.0, 0.0, -1.0]], dtype=wp.vec3)
    res = {}
    for g in (0, 1, 2, 7):
        out = wp.zeros(4, dtype=float)
        roots = wp.zeros(1, dtype=int)
        wp.launch(grouped, dim=4, inputs=[gmesh.id, g, wp.vec3(0.2, 0.3, -1.0), gdirs, out, roots])
        res[f"group{g}_t"] = out.numpy()
        res[f"group{g}_root_is_global"] = bool(roots.numpy()[0] == -1)
    res.update({
        "depth": depth.numpy(),
        "normal": normal.numpy(),
        "bary": bary.numpy(),
        "side": side.numpy(),
        "shadow": shadow.numpy(),
        "box_counts": counts.numpy(),
        "box_first_t": first_t.numpy(),
        "box_faces": faces.numpy(),
    })
    return res


TOLERANCE = {"depth": (1e-5, 1e-5), "bary": (1e-4, 1e-5), "box_first_t": (1e-5, 1e-5)}
