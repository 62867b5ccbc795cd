"""Sampling shapes: unit sphere/hemisphere (surface and volume), disk, ring, square, cube, triangle,
poisson counts and sample_cdf, used in small Monte Carlo estimators."""

import numpy as np
import warp as wp


@wp.kernel
def shapes(seed: int,
           sphere_s: wp.array(dtype=wp.vec3),
           sphere: wp.array(dtype=wp.vec3),
           hemi_s: wp.array(dtype=wp.vec3),
           hemi: wp.array(dtype=wp.vec3),
           disk: wp.array(dtype=wp.vec2),
           ring: wp.array(dtype=wp.vec2),
           square: wp.array(dtype=wp.vec2),
           cube: wp.array(dtype=wp.vec3),
           tri: wp.array(dtype=wp.vec2)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    sphere_s[tid] = wp.sample_unit_sphere_surface(state)
    sphere[tid] = wp.sample_unit_sphere(state)
    hemi_s[tid] = wp.sample_unit_hemisphere_surface(state)
    hemi[tid] = wp.sample_unit_hemisphere(state)
    disk[tid] = wp.sample_unit_disk(state)
    ring[tid] = wp.sample_unit_ring(state)
    square[tid] = wp.sample_unit_square(state)
    cube[tid] = wp.sample_unit_cube(state)
    tri[tid] = wp.sample_triangle(state)


@wp.kernel
def poisson_counts(seed: int, lams: wp.array(dtype=float), out: wp.array2d(dtype=wp.uint32)):
    i, j = wp.tid()
    state = wp.rand_init(seed, i * out.shape[1] + j)
    out[i, j] = wp.poisson(state, lams[i])


@wp.kernel
def draw_cdf(seed: int, cdf: wp.array(dtype=float), picks: wp.array(dtype=int), counts: wp.array(dtype=int)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    k = wp.sample_cdf(state, cdf)
    picks[tid] = k
    wp.atomic_add(counts, k, 1)


@wp.func
def triangle_point(state: wp.uint32, a: wp.vec3, b: wp.vec3, c: wp.vec3):
    uv = wp.sample_triangle(state)
    return a * uv[0] + b * uv[1] + c * (1.0 - uv[0] - uv[1])


@wp.kernel
def area_estimate(seed: int, hits: wp.array(dtype=int), pts: wp.array(dtype=wp.vec3)):
    tid = wp.tid()
    state = wp.rand_init(seed, tid)
    p = wp.sample_unit_cube(state)
    if wp.length(p) <= 1.0:
        wp.atomic_add(hits, 0, 1)
    pts[tid] = triangle_point(state, wp.vec3(0.0, 0.0, 0.0), wp.vec3(1.0, 0.0, 0.0), wp.vec3(0.0, 2.0, 1.0))


def run():
    n = 200
    types = (wp.vec3, wp.vec3, wp.vec3, wp.vec3, wp.vec2, wp.vec2, wp.vec2, wp.vec3, wp.vec2)
    arrays = [wp.zeros(n, dtype=t) for t in types]
    wp.launch(shapes, dim=n, inputs=[11], outputs=arrays)
    names = ["sphere_surface", "sphere", "hemisphere_surface", "hemisphere", "disk", "ring", "square", "cube",
             "triangle"]
    result = {k: a.numpy() for k, a in zip(names, arrays)}
    lams = wp.array([0.5, 3.0, 12.0, 40.0], dtype=float)
    counts = wp.zeros((4, 64), dtype=wp.uint32)
    wp.launch(poisson_counts, dim=counts.shape, inputs=[5, lams, counts])
    result["poisson"] = counts.numpy()
    result["poisson_mean"] = counts.numpy().astype(np.float64).mean(axis=1)
    pdf = np.array([0.1, 0.4, 0.05, 0.25, 0.2], dtype=np.float32)
    cdf = wp.array(np.cumsum(pdf), dtype=float)
    picks = wp.zeros(300, dtype=int)
    hist = wp.zeros(5, dtype=int)
    wp.launch(draw_cdf, dim=300, inputs=[99, cdf, picks, hist])
    result["cdf_picks"] = picks.numpy()
    result["cdf_hist"] = hist.numpy()
    hits = wp.zeros(1, dtype=int)
    pts = wp.zeros(512, dtype=wp.vec3)
    wp.launch(area_estimate, dim=512, inputs=[3, hits, pts])
    result["ball_hits"] = hits.numpy()
    result["tri_points"] = pts.numpy()
    return result
