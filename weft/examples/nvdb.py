"""Particles falling onto a signed-distance volume (a NanoVDB grid), collisions by sampling it.

Run: python -m weft.examples.nvdb [--volume rocks.nvdb] [--particles N] [--steps K]

Each step moves the particles under gravity, samples the signed distance d and its gradient
n at the predicted position (`volume_sample_grad_f` in index space, after
`volume_world_to_index`), and where d is below a margin pushes the particle out along
n / |n| (a position-based projection), then derives the velocity from the displacement.
With `--volume` the SDF comes from a .nvdb file (Warp's example uses rocks.nvdb); without it
the example builds a sphere SDF with `Volume.load_from_numpy` and first checks the sampled
distance and gradient against the analytic sphere in float64, and at the end that no
particle has sunk into it. When warp-lang is installed it runs the same kernels on the same
volume under Warp's CPU and prints how far Warp's samples and final positions are from weft's.
"""

from __future__ import annotations

import argparse

import numpy as np

import weft as wp
from weft.examples.warp_peer import run_in_warp


@wp.kernel
def simulate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), volume: wp.uint64, margin: float,
             dt: float):
    t = wp.tid()
    p = x[t]
    vel = v[t] + wp.vec3(0.0, -9.8, 0.0) * dt - v[t] * (0.1 * dt)
    q = p + vel * dt
    n = wp.vec3()
    d = wp.volume_sample_grad_f(volume, wp.volume_world_to_index(volume, q), wp.Volume.LINEAR, n)
    if d < margin and wp.length(n) > 0.0:
        q = q - wp.normalize(n) * (d - margin)
    if q[1] < 0.0:  # the ground
        q = wp.vec3(q[0], 0.0, q[2])
    v[t] = (q - p) / dt
    x[t] = q


@wp.kernel
def probe(volume: wp.uint64, x: wp.array(dtype=wp.vec3), d: wp.array(dtype=float), n: wp.array(dtype=wp.vec3)):
    t = wp.tid()
    g = wp.vec3()
    d[t] = wp.volume_sample_grad_f(volume, wp.volume_world_to_index(volume, x[t]), wp.Volume.LINEAR, g)
    n[t] = g


CENTER = np.array([0.0, 3.0, 0.0])
RADIUS = 2.5
VOXEL = 0.1


def sphere_sdf():
    """The sphere's signed distance on an 80^3 grid of VOXEL spacing, and its lower corner."""
    lo = CENTER - 4.0
    ijk = np.stack(np.meshgrid(*[np.arange(80)] * 3, indexing="ij"), -1)
    return (np.linalg.norm(lo + VOXEL * ijk - CENTER, axis=-1) - RADIUS).astype(np.float32), lo


def sphere_volume():
    sdf, lo = sphere_sdf()
    return wp.Volume.load_from_numpy(sdf, lo, VOXEL, bg_value=4.0)


WARP_DRIVER = """
if data["path"]:
    with open(data["path"], "rb") as f:
        volume = wp.Volume.load_from_nvdb(f)
else:
    volume = wp.Volume.load_from_numpy(np.array(data["sdf"], np.float32), data["lo"], data["voxel"], bg_value=4.0)
probe = wp.array(np.array(data["probe"], np.float32), dtype=wp.vec3)
d, n = wp.zeros(len(probe), dtype=float), wp.zeros(len(probe), dtype=wp.vec3)
wp.launch(k.probe, len(probe), inputs=[volume.id, probe, d, n])
x = wp.array(np.array(data["x0"], np.float32), dtype=wp.vec3)
v = wp.zeros(len(x), dtype=wp.vec3)
for _ in range(data["steps"]):
    wp.launch(k.simulate, len(x), inputs=[x, v, volume.id, data["margin"], 1.0 / 180.0])
out["d"], out["n"], out["x"] = d.numpy().tolist(), n.numpy().tolist(), x.numpy().tolist()
"""


def compare_with_warp(path, probe_pts, d, n, x0, final, args):
    """Largest differences of Warp's samples (distance, gradient) at `probe_pts` and of its final
    positions from weft's, or None without Warp."""
    sdf, lo = (None, None) if path else sphere_sdf()
    out = run_in_warp([simulate, probe], WARP_DRIVER, path=path, sdf=sdf, lo=lo, voxel=VOXEL,
                      probe=probe_pts.astype(np.float32), x0=x0.astype(np.float32), steps=args.steps,
                      margin=args.margin)
    if out is None:
        return None
    return tuple(float(np.abs(np.array(out[key]) - ours).max()) for key, ours in (("d", d), ("n", n), ("x", final)))


def sample(volume, pts):
    d, n = wp.zeros(len(pts), dtype=float), wp.zeros(len(pts), dtype=wp.vec3)
    wp.launch(probe, len(pts), inputs=[volume.id, wp.array(pts.astype(np.float32), dtype=wp.vec3), d, n])
    return d.numpy().astype(np.float64), n.numpy().astype(np.float64)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--volume", help="a .nvdb file holding a float SDF (default: a sphere)")
    parser.add_argument("--particles", type=int, default=4000)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--margin", type=float, default=0.15)
    parser.add_argument("--no-warp", action="store_true", help="skip the comparison with Warp")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(42)
    result = {}
    if args.volume:
        with open(args.volume, "rb") as f:
            volume = wp.Volume.load_from_nvdb(f)
        x0 = rng.uniform(-10.0, 10.0, (args.particles, 3)) + (0.0, 30.0, 0.0)
    else:
        volume = sphere_volume()
        # the sampled SDF near the surface against the analytic sphere (trilinear error ~ voxel^2 / R)
        dirs = rng.normal(size=(500, 3))
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
        pts = CENTER + dirs * rng.uniform(RADIUS - 0.5, RADIUS + 0.5, (500, 1))
        d, n = sample(volume, pts)
        exact = np.linalg.norm(pts - CENTER, axis=1) - RADIUS
        normal = n / VOXEL  # index-space gradient -> world units
        result["sdf_error"] = float(np.abs(d - exact).max())
        result["normal_error"] = float(np.abs(normal - dirs).max())
        print(f"sampled SDF against the analytic sphere: max |d - d*| {result['sdf_error']:.2e}, "
              f"max |grad - n*| {result['normal_error']:.2e}")
        x0 = CENTER + (0.0, RADIUS + 3.0, 0.0) + rng.uniform(-1.5, 1.5, (args.particles, 3))
    print(f"volume: {volume.get_grid_info().type_str} grid, {volume.get_tile_count()} tiles, "
          f"voxel size {volume.get_voxel_size()[0]:.3g}")
    x = wp.array(x0.astype(np.float32), dtype=wp.vec3)
    v = wp.zeros(len(x0), dtype=wp.vec3)
    for _ in range(args.steps):
        wp.launch(simulate, len(x0), inputs=[x, v, volume.id, args.margin, 1.0 / 180.0])
    final = x.numpy().astype(np.float64)
    d, _ = sample(volume, final)
    result["min_distance"] = float(d.min())
    result["mean_height"] = (float(x0[:, 1].mean()), float(final[:, 1].mean()))
    result["resting_speed"] = float(np.linalg.norm(v.numpy(), axis=1).mean())
    probe_pts = x0[:200].astype(np.float32).astype(np.float64)  # (in the volume; the sphere's also above it)
    if not args.volume:
        probe_pts = np.concatenate([probe_pts, pts])
    d_probe, n_probe = sample(volume, probe_pts)
    print(f"after {args.steps} steps: mean height {result['mean_height'][0]:.3f} -> {result['mean_height'][1]:.3f}, "
          f"smallest distance to the surface {result['min_distance']:.4f} (margin {args.margin}), "
          f"mean speed {result['resting_speed']:.3f}")
    result["warp"] = None if args.no_warp else compare_with_warp(args.volume, probe_pts, d_probe, n_probe, x0, final,
                                                                   args)
    if result["warp"] is not None:
        print("the same kernels under Warp's CPU: max difference of the sampled distance {:.1e}, of its gradient "
              "{:.1e}, of the final positions {:.1e}".format(*result["warp"]))
    elif not args.no_warp:
        print("warp-lang is not installed (or failed): no comparison with Warp")
    return result


if __name__ == "__main__":
    main()
