"""Iso-surfaces of a field computed in a kernel: wp.geometry.IsoSurfaceMarchingCubes (surface()
on a reusable context, the extract() classmethod with lower/upper bounds), the deprecated
wp.MarchingCubes alias, surface nets in triangle and quad topology, the extracted mesh turned into a
wp.Mesh and queried, and vertex gradients flowing back to the field through a Tape."""

import numpy as np
import warp as wp
import warp.geometry


@wp.kernel
def blob_field(field: wp.array3d(dtype=float), centers: wp.array(dtype=wp.vec3), scale: float):
    i, j, k = wp.tid()
    p = wp.vec3(float(i), float(j), float(k)) * scale
    v = float(0.0)
    for c in range(centers.shape[0]):
        d = p - centers[c]
        v += 1.0 / (wp.dot(d, d) + 0.05)
    field[i, j, k] = v


@wp.kernel
def vert_loss(verts: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    tid = wp.tid()
    v = verts[tid]
    wp.atomic_add(loss, 0, v[0] + 2.0 * v[1] - v[2])


@wp.kernel
def ray_mesh(mesh: wp.uint64, out: wp.array(dtype=float)):
    tid = wp.tid()
    start = wp.vec3(-1.0, 0.5 + 0.01 * float(tid), 0.55)
    q = wp.mesh_query_ray(mesh, start, wp.vec3(1.0, 0.0, 0.0), 10.0)
    out[tid] = wp.where(q.result, q.t, -1.0)


def mesh_summary(verts, indices):
    """Vertices, triangle count, area and enclosed volume: marching cubes' case tables may split a
    cell's polygon along other diagonals than Warp's, so the triangles themselves are not compared."""
    v = verts.numpy().astype(np.float64)
    f = indices.numpy().reshape(-1, 3)
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    area = 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1).sum()
    volume = np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0
    return verts.numpy(), len(f), area, volume


def run():
    n = 20
    field = wp.zeros((n, n, n), dtype=float, requires_grad=True)
    centers = wp.array([[0.35, 0.4, 0.5], [0.65, 0.55, 0.45], [0.5, 0.5, 0.75]], dtype=wp.vec3)
    tape = wp.Tape()
    with tape:
        wp.launch(blob_field, dim=field.shape, inputs=[field, centers, 1.0 / (n - 1)])
        mc = wp.geometry.IsoSurfaceMarchingCubes(n, n, n, lower=(0.0, 0.0, 0.0), upper=(1.0, 1.0, 1.0))
        mc.surface(field, 12.0)
        loss = wp.zeros(1, dtype=float, requires_grad=True)
        wp.launch(vert_loss, dim=mc.verts.shape[0], inputs=[mc.verts, loss])
    tape.backward(loss)
    v, nf, area, volume = mesh_summary(mc.verts, mc.indices)
    res = {"mc_verts": v, "mc_tris": nf, "mc_area": area, "mc_volume": volume, "mc_loss": loss.numpy(),
           "field_grad": field.grad.numpy()}

    verts, faces = wp.geometry.IsoSurfaceMarchingCubes.extract(field, threshold=20.0)
    v, nf, area, volume = mesh_summary(verts, faces)
    res.update({"extract_verts": v, "extract_tris": nf, "extract_area": area, "extract_volume": volume})
    old = wp.MarchingCubes(nx=n, ny=n, nz=n)
    old.surface(field=field, threshold=8.0)
    res["old_counts"] = np.array([old.verts.shape[0], old.indices.shape[0]])

    mesh = wp.Mesh(points=mc.verts, indices=mc.indices)
    out = wp.zeros(16, dtype=float)
    wp.launch(ray_mesh, dim=16, inputs=[mesh.id, out])
    res["ray_t"] = out.numpy()

    sv, sf = wp.geometry.IsoSurfaceNets.extract(field, 12.0, lower=(0.0, 0.0, 0.0), upper=(1.0, 1.0, 1.0))
    res["nets_verts"] = sv.numpy()
    res["nets_faces"] = sf.numpy()
    nets = wp.geometry.IsoSurfaceNets(n, n, n, topology="quad")
    nets.surface(field, 12.0)
    res["quad_verts"] = nets.verts.numpy()
    res["quad_faces"] = nets.indices.numpy()
    return res


TOLERANCE = {"mc_loss": (1e-5, 1e-4), "field_grad": (1e-4, 1e-6), "ray_t": (1e-3, 1e-3),
             "mc_area": (2e-3, 0.0), "mc_volume": (2e-3, 0.0), "extract_area": (2e-3, 0.0),
             "extract_volume": (2e-3, 0.0)}
