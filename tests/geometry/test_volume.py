"""Volume: NanoVDB files read (Warp's test assets where present) and written (weft's own
writer), lookups, sampling and its gradients against float64 references, index grids,
allocation, stores, save/load round trips, and bad input (corrupt files, unknown grid types,
destroyed volumes)."""

import os
import struct

import numpy as np
import pytest

import weft as wp
from weft.geometry import nanovdb as nv

ASSETS = "/tmp/warpsrc/warp/tests/assets"
needs_assets = pytest.mark.skipif(not os.path.isdir(ASSETS), reason="Warp's test assets are not unpacked")


def asset(name):
    with open(os.path.join(ASSETS, name), "rb") as f:
        return f.read()


def field(ijk):
    """The test field: v(i, j, k) = i*j + 2k - 3 (not multilinear, so trilinear sampling differs from it)."""
    ijk = np.asarray(ijk, np.float64)
    return ijk[..., 0] * ijk[..., 1] + 2.0 * ijk[..., 2] - 3.0


def field_volume(bg=-7.0, matrix=None, translation=(0.0, 0.0, 0.0)):
    """A float volume of 2 x 2 x 2 tiles over [-8, 8) holding `field`, built with weft's writer."""
    origins = np.array([[i, j, k] for i in (-8, 0) for j in (-8, 0) for k in (-8, 0)], np.int32)
    ijk = origins[:, None, :] + nv.local_coords()[None]
    m = np.diag([0.5, 0.5, 0.5]) if matrix is None else np.asarray(matrix)
    grid = nv.build_grid(origins, 1, np.float32(bg).tobytes(), m, translation,
                         values=field(ijk).astype(np.float32))
    return wp.Volume(wp.array(np.frombuffer(bytes(grid), np.uint8), dtype=wp.uint8))


def ref_value(p, bg=-7.0):
    """float64 trilinear sample of `field` stored on [-8, 8)^3 (background outside)."""
    p = np.asarray(p, np.float64)
    b = np.floor(p)
    f = p - b
    total = 0.0
    for dx in (0, 1):
        for dy in (0, 1):
            for dz in (0, 1):
                c = b + (dx, dy, dz)
                v = field(c) if np.all((c >= -8) & (c < 8)) else bg
                w = (f[0] if dx else 1 - f[0]) * (f[1] if dy else 1 - f[1]) * (f[2] if dz else 1 - f[2])
                total += w * v
    return total


@wp.kernel
def sample_kernel(vol: wp.uint64, pts: wp.array(dtype=wp.vec3), mode: int, out: wp.array(dtype=float),
                  grads: wp.array(dtype=wp.vec3), g_out: wp.array(dtype=float)):
    t = wp.tid()
    out[t] = wp.volume_sample_f(vol, pts[t], mode)
    g = wp.vec3()
    g_out[t] = wp.volume_sample_grad(vol, pts[t], mode, g, dtype=float)
    grads[t] = g


@wp.kernel
def sample_world(vol: wp.uint64, pts: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    t = wp.tid()
    out[t] = wp.volume_sample_f(vol, wp.volume_world_to_index(vol, pts[t]), wp.Volume.LINEAR)


def points(n=40, lo=-9.0, hi=8.5, seed=3):
    return np.random.default_rng(seed).uniform(lo, hi, size=(n, 3)).astype(np.float32)


# reading -----------------------------------------------------------------------------------------
@needs_assets
def test_assets_read():
    expect = {"test_grid.nvdb": (wp.float32, "float"), "test_int32_grid.nvdb": (wp.int32, "int32"),
              "test_vec_grid.nvdb": (wp.vec3f, "Vec3f"), "torus.nvdb": (wp.float32, "float")}
    for name, (dtype, type_str) in expect.items():
        v = wp.Volume.load_from_nvdb(asset(name))
        assert v.dtype is dtype and v.get_grid_info().type_str == type_str
        tiles = v.get_tiles().numpy()
        assert (tiles % 8 == 0).all() and len(np.unique(tiles, axis=0)) == v.get_tile_count()
        vox = v.get_voxels().numpy()
        assert vox.shape == (v.get_tile_count() * 512, 3) and len(np.unique(vox, axis=0)) == len(vox)
    v = wp.Volume.load_from_nvdb(asset("test_grid.nvdb"))
    assert v.get_voxel_size() == (0.25, 0.25, 0.25)
    torus = wp.Volume.load_from_nvdb(asset("torus.nvdb")).get_grid_info()
    assert torus.name == "surface" and list(torus.translation) == [1.0, 2.0, 3.0]


@needs_assets
def test_asset_values_and_index_grid():
    @wp.kernel
    def lookups(vf: wp.uint64, vv: wp.uint64, vi: wp.uint64, ijk: wp.array(dtype=wp.vec3i),
                f: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), i: wp.array(dtype=int)):
        t = wp.tid()
        c = ijk[t]
        f[t] = wp.volume_lookup_f(vf, c[0], c[1], c[2])
        v[t] = wp.volume_lookup(vv, c[0], c[1], c[2], dtype=wp.vec3)
        i[t] = wp.volume_lookup_i(vi, c[0], c[1], c[2])

    vf, vv, vi = (wp.Volume.load_from_nvdb(asset(n)) for n in ("test_grid.nvdb", "test_vec_grid.nvdb",
                                                                 "test_int32_grid.nvdb"))
    c = np.random.default_rng(0).integers(-14, 14, size=(200, 3)).astype(np.int32)
    f, v, i = wp.zeros(200, dtype=float), wp.zeros(200, dtype=wp.vec3), wp.zeros(200, dtype=int)
    wp.launch(lookups, 200, inputs=[vf.id, vv.id, vi.id, wp.array(c, dtype=wp.vec3i), f, v, i])
    inside = np.all(np.abs(c) <= 10, axis=1)
    prod = c.prod(axis=1)
    np.testing.assert_array_equal(f.numpy(), np.where(inside, prod, 10).astype(np.float32))
    np.testing.assert_array_equal(i.numpy(), np.where(inside, prod, 10))
    lin = c @ np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], np.float32).T
    np.testing.assert_allclose(v.numpy()[inside], lin[inside])

    index = wp.Volume.load_from_nvdb(asset("test_index_grid.nvdb"))
    nxt = index.load_next_grid()
    assert index.is_index and index.dtype is None and nxt.get_grid_info().grid_index == 1
    assert nxt.load_next_grid() is None and index.get_voxel_count() != nxt.get_voxel_count()
    assert index.get_feature_array_count() == 1
    head = index.feature_array(0, dtype=wp.uint64).numpy()[:4]
    assert list(head) == [3, index.get_voxel_count(), 2, 3]


# sampling and gradients ---------------------------------------------------------------------------
def test_sampling_against_float64_reference():
    v = field_volume()
    p = points()
    p[:4] = [[0.5, 0.5, 0.5], [-3.5, 2.25, 6.5], [20.0, 0.0, 0.0], [-8.5, 1.25, 2.75]]
    n = len(p)
    out, g, go = wp.zeros(n, dtype=float), wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=float)
    wp.launch(sample_kernel, n, inputs=[v.id, wp.array(p, dtype=wp.vec3), wp.Volume.LINEAR, out, g, go])
    ref = np.array([ref_value(q) for q in p])
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(out.numpy(), go.numpy())
    h = 1e-4
    fd = np.array([[(ref_value(q + h * e) - ref_value(q - h * e)) / (2 * h) for e in np.eye(3)] for q in p])
    np.testing.assert_allclose(g.numpy(), fd, rtol=1e-4, atol=2e-3)
    wp.launch(sample_kernel, n, inputs=[v.id, wp.array(p, dtype=wp.vec3), wp.Volume.CLOSEST, out, g, go])
    r = np.sign(p) * np.floor(np.abs(p) + 0.5)  # round half away from zero
    near = np.where(np.all((r >= -8) & (r < 8), axis=1), field(r), -7.0)
    np.testing.assert_array_equal(out.numpy(), near.astype(np.float32))
    assert not g.numpy().any()


def test_sample_adjoint_against_finite_differences():
    """d(sample)/d(point) through the tape, in index space and through a non-symmetric world map."""
    rot = np.array([[0.0, -0.5, 0.0], [0.25, 0.0, 0.0], [0.0, 0.1, 0.75]])
    v = field_volume(matrix=rot, translation=(1.0, -2.0, 0.5))
    p_index = points(12, -7.0, 6.0, seed=11).astype(np.float64)
    # keep each point and its shifted copies inside one trilinear cell
    p_index = np.floor(p_index) + np.clip(p_index - np.floor(p_index), 0.2, 0.8)
    world = p_index @ rot.T + np.array([1.0, -2.0, 0.5])
    pts = wp.array(world.astype(np.float32), dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(len(world), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(sample_world, len(world), inputs=[v.id, pts, out])
    tape.backward(grads={out: wp.array(np.ones(len(world), np.float32), dtype=float)})
    inv = np.linalg.inv(rot)

    def f(x):
        return ref_value(inv @ (x - np.array([1.0, -2.0, 0.5])))

    h = 1e-4
    fd = np.array([[(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(3)] for x in world])
    np.testing.assert_allclose(pts.grad.numpy(), fd, rtol=2e-3, atol=2e-3)


def test_transforms_and_their_adjoints():
    rot = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    v = wp.Volume.allocate_by_voxels(wp.array([[-1.0, 1.0, 4.0]], dtype=wp.vec3), transform=rot)
    assert v.get_voxels().numpy().tolist() == [[1, 1, 2]]
    assert v.get_voxel_size() == (-1.0, 1.0, 2.0)

    @wp.kernel
    def to_world(vol: wp.uint64, p: wp.array(dtype=wp.vec3), c: wp.vec3, out: wp.array(dtype=float),
                 dirs: wp.array(dtype=wp.vec3), pd: wp.array(dtype=wp.vec3d)):
        q = wp.volume_index_to_world(vol, p[0])
        out[0] = wp.dot(q, c)
        dirs[0] = wp.volume_index_to_world_dir(vol, c)
        dirs[1] = wp.volume_world_to_index(vol, q)
        dirs[2] = wp.volume_world_to_index_dir(vol, c)
        pd[0] = wp.volume_index_to_world(vol, wp.vec3d(p[0]))

    p = wp.array([[1.0, 2.0, 3.0]], dtype=wp.vec3, requires_grad=True)
    out, dirs = wp.zeros(1, dtype=float, requires_grad=True), wp.zeros(3, dtype=wp.vec3)
    pd = wp.zeros(1, dtype=wp.vec3d)
    c = np.array([0.3, -0.7, 1.1])
    tape = wp.Tape()
    with tape:
        wp.launch(to_world, 1, inputs=[v.id, p, wp.vec3(*c), out, dirs, pd])
    tape.backward(out)
    np.testing.assert_allclose(out.numpy()[0], (rot @ [1, 2, 3]) @ c, rtol=1e-6)
    np.testing.assert_allclose(p.grad.numpy()[0], rot.T @ c, rtol=1e-6)  # d(c . M p)/dp = M^T c
    np.testing.assert_allclose(dirs.numpy(), [rot @ c, [1, 2, 3], np.linalg.inv(rot) @ c], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(pd.numpy()[0], rot @ [1, 2, 3])


def test_vec4_gradient_shapes_and_type_errors():
    tiles = wp.array(np.array([[0, 0, 0]], np.int32), dtype=wp.int32)
    v = wp.Volume.allocate_by_tiles(tiles, voxel_size=1.0, bg_value=wp.vec4d(1.0, 2.0, 3.0, 4.0))
    assert v.dtype is wp.vec4d
    mat34 = wp.types.matrix((3, 4), wp.float64)

    @wp.kernel(module="unique")
    def bad(vol: wp.uint64, out: wp.array(dtype=wp.vec4d)):
        g = mat34()
        out[0] = wp.volume_sample_grad(vol, wp.vec3(1.0), wp.Volume.LINEAR, g, dtype=wp.vec4d)

    with pytest.raises(RuntimeError, match="Incompatible gradient type, expected mat43d, got mat34d"):
        wp.launch(bad, 1, inputs=[v.id, wp.zeros(1, dtype=wp.vec4d)])

    @wp.kernel(module="unique")
    def wrong_type(vol: wp.uint64, out: wp.array(dtype=float)):
        out[0] = wp.volume_lookup_f(vol, 1, 1, 1)  # a vec4d grid: zero, as Warp

    o = wp.array([5.0], dtype=float)
    wp.launch(wrong_type, 1, inputs=[v.id, o])
    assert o.numpy()[0] == 0.0


# index grids ----------------------------------------------------------------------------------
def test_index_grid_sampling_and_adjoints():
    value = field_volume()
    index = wp.Volume.allocate_by_tiles(value.get_tiles(), voxel_size=0.5, bg_value=None)
    assert index.is_index and index.get_voxel_count() == value.get_voxel_count()
    ijk = index.get_voxels().numpy()
    data = wp.array(field(ijk).astype(np.float32), dtype=float, requires_grad=True)
    bg = wp.array([-7.0], dtype=float, requires_grad=True)

    @wp.kernel
    def sample_both(vi: wp.uint64, vv: wp.uint64, pts: wp.array(dtype=wp.vec3), data: wp.array(dtype=float),
                    bg: wp.array(dtype=float), out: wp.array(dtype=float), ref: wp.array(dtype=float),
                    idx: wp.array(dtype=int), ijk: wp.array(dtype=wp.vec3i)):
        t = wp.tid()
        g = wp.vec3()
        out[t] = wp.volume_sample_grad_index(vi, pts[t], wp.Volume.LINEAR, data, bg[0], g)
        ref[t] = wp.volume_sample(vv, pts[t], wp.Volume.LINEAR, dtype=float)
        c = ijk[t]
        idx[t] = wp.volume_lookup_index(vi, c[0], c[1], c[2])

    p = points(len(ijk) // 64)
    n = len(p)
    out, ref = wp.zeros(n, dtype=float, requires_grad=True), wp.zeros(n, dtype=float)
    idx = wp.zeros(n, dtype=int)
    probe = np.concatenate([ijk[:n - 2], [[100, 0, 0], [-9, 0, 0]]]).astype(np.int32)
    tape = wp.Tape()
    with tape:
        wp.launch(sample_both, n, inputs=[index.id, value.id, wp.array(p, dtype=wp.vec3), data, bg, out, ref,
                                          idx, wp.array(probe, dtype=wp.vec3i)])
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(idx.numpy(), list(range(n - 2)) + [-1, -1])
    tape.backward(grads={out: wp.array(np.ones(n, np.float32), dtype=float)})
    # the sample is linear in (data, bg): <adjoint, (data, bg)> reproduces the sum of the samples
    total = (data.grad.numpy().astype(np.float64) @ data.numpy()) + bg.grad.numpy()[0] * bg.numpy()[0]
    np.testing.assert_allclose(total, out.numpy().sum(dtype=np.float64), rtol=1e-4)


def test_allocate_by_voxels_numbering():
    pts = np.array([[0, 0, 0], [3, 1, 2], [9, 0, 0], [3, 1, 2], [-1, -1, -1]], np.int32)
    v = wp.Volume.allocate_by_voxels(wp.array(pts, dtype=wp.int32), voxel_size=1.0)
    assert v.get_voxel_count() == 4 and v.get_tile_count() == 3
    vox = v.get_voxels().numpy()
    assert sorted(map(tuple, vox)) == sorted({tuple(p) for p in pts})

    @wp.kernel
    def numbering(vol: wp.uint64, ijk: wp.array(dtype=wp.vec3i), out: wp.array(dtype=int)):
        t = wp.tid()
        out[t] = wp.volume_lookup_index(vol, ijk[t][0], ijk[t][1], ijk[t][2])
        if t == 0:
            out[ijk.shape[0]] = wp.volume_voxel_count(vol)

    probe = np.concatenate([vox, [[1, 0, 0]]]).astype(np.int32)
    out = wp.zeros(len(probe) + 1, dtype=int)
    wp.launch(numbering, len(probe), inputs=[v.id, wp.array(probe, dtype=wp.vec3i), out])
    assert out.numpy().tolist() == [0, 1, 2, 3, -1, 4]


# allocation, stores, numpy, files --------------------------------------------------------------
@wp.kernel
def store_lookup(vol: wp.uint64, ijk: wp.array(dtype=wp.vec3i), out: wp.array(dtype=wp.vec4d)):
    t = wp.tid()
    c = ijk[t]
    wp.volume_store(vol, c[0], c[1], c[2], wp.vec4d(wp.float64(c[0]), wp.float64(c[1]), wp.float64(c[2]), 7.0))
    out[t] = wp.volume_lookup(vol, c[0], c[1], c[2], dtype=wp.vec4d)


def test_allocate_store_background():
    v = wp.Volume.allocate(min=[-11, -11, -11], max=[11, 11, 11], voxel_size=0.1,
                           bg_value=wp.vec4d(-1.0, 2.0, -3.0, 5.0))
    assert v.get_tile_count() == 4 ** 3
    c = np.array([[0, 0, 0], [-11, 5, 11], [8096, 0, 0], [16, 0, 0], [200, 200, 200]], np.int32)
    out = wp.zeros(len(c), dtype=wp.vec4d)
    wp.launch(store_lookup, len(c), inputs=[v.id, wp.array(c, dtype=wp.vec3i), out])
    o = out.numpy()
    np.testing.assert_array_equal(o[:2], [[0, 0, 0, 7], [-11, 5, 11, 7]])
    np.testing.assert_array_equal(o[2:], [[-1, 2, -3, 5]] * 3)  # background: outside, and a lower tile


def test_load_from_numpy_and_voxel_size_errors():
    data = np.arange(10 * 9 * 17, dtype=np.float32).reshape(10, 9, 17)
    v = wp.Volume.load_from_numpy(data, (-1.0, 0.0, 2.0), (0.5, 0.25, 1.0), bg_value=-1.0)
    info = v.get_grid_info()
    np.testing.assert_allclose(np.array(info.transform_matrix).reshape(3, 3), np.diag([0.5, 0.25, 1.0]))
    np.testing.assert_allclose(list(info.translation), [-1.0, 0.0, 2.0])

    @wp.kernel
    def read(vol: wp.uint64, ijk: wp.array(dtype=wp.vec3i), out: wp.array(dtype=float)):
        t = wp.tid()
        out[t] = wp.volume_lookup_f(vol, ijk[t][0], ijk[t][1], ijk[t][2])

    c = np.array([[0, 0, 0], [9, 8, 16], [3, 4, 5], [10, 0, 0], [-1, 0, 0]], np.int32)
    out = wp.zeros(len(c), dtype=float)
    wp.launch(read, len(c), inputs=[v.id, wp.array(c, dtype=wp.vec3i), out])
    assert out.numpy().tolist() == [data[0, 0, 0], data[9, 8, 16], data[3, 4, 5], -1.0, -1.0]
    for bad, kind in ((0.0, ValueError), (-1.0, ValueError), ((0.1, 0.2), ValueError), (float("inf"), ValueError),
                      (None, TypeError), ("0.5", TypeError)):
        with pytest.raises(kind):
            wp.Volume.load_from_numpy(data, (0, 0, 0), voxel_size=bad)
    with pytest.raises(TypeError, match="Unsupported bg_value"):
        wp.Volume.allocate(min=[0, 0, 0], max=[1, 1, 1], voxel_size=1.0, bg_value="x")


@wp.kernel
def dense_lookup_f(vol: wp.uint64, out: wp.array3d(dtype=float)):
    i, j, k = wp.tid()
    out[i, j, k] = wp.volume_lookup_f(vol, i, j, k)


@wp.kernel
def dense_lookup_v(vol: wp.uint64, out: wp.array3d(dtype=wp.vec3)):
    i, j, k = wp.tid()
    out[i, j, k] = wp.volume_lookup_v(vol, i, j, k)


@pytest.mark.parametrize("shape, bg", [((13, 9, 20), 0.5), ((16, 16, 8), -1.0), ((5, 7, 3, 3), (1.0, -2.0, 3.0))])
def test_load_from_numpy_holds_every_voxel_and_the_background_around(shape, bg):
    """Each leaf takes its 8x8x8 block of the data (padded to whole leaves with the
    background): every voxel of the data, and the background in the padding and beyond."""
    data = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    v = wp.Volume.load_from_numpy(data, (1.0, -2.0, 0.5), 0.5, bg_value=bg)
    around = tuple(n + 9 for n in shape[:3])
    vector = len(shape) == 4
    out = wp.zeros(around, dtype=wp.vec3 if vector else float)
    wp.launch(dense_lookup_v if vector else dense_lookup_f, around, inputs=[v.id, out])
    got = out.numpy()
    np.testing.assert_array_equal(got[:shape[0], :shape[1], :shape[2]], data)
    outside = np.ones(around, bool)
    outside[:shape[0], :shape[1], :shape[2]] = False
    np.testing.assert_array_equal(got[outside], np.broadcast_to(np.asarray(bg, np.float32), got[outside].shape))


@pytest.mark.parametrize("codec", ["none", "zip"])
def test_save_load_round_trip(tmp_path, codec):
    v = field_volume()
    path = str(tmp_path / "v.nvdb")
    v.save_to_nvdb(path, codec=codec)
    with open(path, "rb") as f:
        w = wp.Volume.load_from_nvdb(f)
    np.testing.assert_array_equal(v.array().numpy(), w.array().numpy())
    assert v.array().deleter is None
    with pytest.raises(RuntimeError, match="Unsupported codec"):
        v.save_to_nvdb(path, codec="lz4")


# bad input -----------------------------------------------------------------------------------
def _file(grid: bytes, codec="none", tmp=None):
    path = os.path.join(tmp, "f.nvdb")
    v = wp.Volume(wp.array(np.frombuffer(grid, np.uint8), dtype=wp.uint8))
    v.save_to_nvdb(path, codec=codec)
    with open(path, "rb") as f:
        return f.read()


def test_corrupt_files_raise(tmp_path):
    good = bytes(nv.build_grid([[0, 0, 0], [8, 0, 0]], 1, np.float32(0).tobytes(), np.eye(3), (0, 0, 0)))
    data = _file(good, tmp=str(tmp_path))
    wp.Volume.load_from_nvdb(data)
    with pytest.raises(RuntimeError, match="signature"):
        wp.Volume.load_from_nvdb(b"NotNanoVDBatall" + data[15:])
    for cut in (3, 20, 200, len(data) // 2, len(data) - 1):
        with pytest.raises(RuntimeError, match="truncated|too short"):
            wp.Volume.load_from_nvdb(data[:cut])
    zipped = _file(good, "zip", str(tmp_path))
    with pytest.raises(RuntimeError, match="corrupt zip|truncated"):
        wp.Volume.load_from_nvdb(zipped[:-40] + bytes(40))
    blosc = bytearray(zipped)
    struct.pack_into("<H", blosc, 14, 2)
    try:
        import blosc as _  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="blosc"):
            wp.Volume.load_from_nvdb(bytes(blosc))
    # a leaf link pointing outside the grid, an unknown grid type, a grid claiming more bytes than there are
    h = nv.grid_header(good)
    bad_link = bytearray(good)
    lower = nv.GRID_SIZE + struct.unpack_from("<Q", good, nv.GRID_SIZE + 8)[0]
    entry = lower + nv.LAYOUT[1].lower_off_table  # lower table entry 0: the first leaf
    struct.pack_into("<q", bad_link, entry, 10 ** 9)
    with pytest.raises(RuntimeError, match="Invalid NanoVDB grid structure: an? lower node links"):
        wp.Volume(wp.array(np.frombuffer(bytes(bad_link), np.uint8), dtype=wp.uint8))
    fp4 = bytearray(good)
    struct.pack_into("<I", fp4, 636, 13)
    with pytest.raises(RuntimeError, match="Unsupported NanoVDB grid type Float4"):
        wp.Volume(wp.array(np.frombuffer(bytes(fp4), np.uint8), dtype=wp.uint8))
    with pytest.raises(RuntimeError, match="truncated"):
        wp.Volume(wp.array(np.frombuffer(good[:h.grid_size - 100], np.uint8), dtype=wp.uint8))
    with pytest.raises(TypeError):
        wp.Volume.load_from_nvdb(12)


def test_destroyed_volume():
    v = field_volume()
    vid = v.id
    out, g, go = wp.zeros(1, dtype=float), wp.zeros(1, dtype=wp.vec3), wp.zeros(1, dtype=float)
    pts = wp.array([[0.5, 0.5, 0.5]], dtype=wp.vec3)
    wp.launch(sample_kernel, 1, inputs=[vid, pts, wp.Volume.LINEAR, out, g, go])
    assert out.numpy()[0] != 0.0
    v.__del__()
    with pytest.raises(RuntimeError, match="Invalid Volume"):
        v.get_voxels()
    wp.launch(sample_kernel, 1, inputs=[vid, pts, wp.Volume.LINEAR, out, g, go])  # a stale id reads zeros
    assert out.numpy()[0] == 0.0 and not g.numpy().any()
    wp.Volume.__new__(wp.Volume).__del__()


@pytest.mark.parametrize("dtype,bg", [(wp.float64, wp.float64(-2.5)), (wp.int64, np.int64(-3)),
                                      (wp.uint32, np.uint32(9)), (wp.vec3d, wp.vec3d(1.0, -2.0, 3.0)),
                                      (wp.vec4f, (1.0, 2.0, 3.0, 4.0)), (wp.int32, 7), (wp.vec3f, (0.5, 0.25, 2.0))])
def test_allocation_types_store_and_lookup(dtype, bg):
    v = wp.Volume.allocate(min=[0, 0, 0], max=[9, 9, 9], voxel_size=1.0, bg_value=bg)
    assert v.dtype is dtype

    @wp.kernel(module="unique")
    def k(vol: wp.uint64, out: wp.array(dtype=dtype)):
        wp.volume_store(vol, 3, 4, 5, dtype(2))
        out[0] = wp.volume_lookup(vol, 3, 4, 5, dtype=dtype)
        out[1] = wp.volume_lookup(vol, 2, 4, 5, dtype=dtype)
        out[2] = wp.volume_lookup(vol, -30, 4, 5, dtype=dtype)
        out[3] = wp.volume_sample(vol, wp.vec3(3.0, 4.0, 5.0), wp.Volume.CLOSEST, dtype=dtype)

    out = wp.zeros(4, dtype=dtype)
    wp.launch(k, 1, inputs=[v.id, out])
    o = out.numpy()
    bg_np = np.asarray(tuple(bg) if hasattr(bg, "__len__") else bg, dtype=o.dtype)
    np.testing.assert_array_equal(o[0], o[3])
    np.testing.assert_array_equal(o[0], np.full_like(o[0], 2))
    np.testing.assert_array_equal(o[1], bg_np)
    np.testing.assert_array_equal(o[2], bg_np)


def test_volume_from_raw_grid_bytes():
    grid = bytes(nv.build_grid([[0, 0, 0]], 4, np.int32(-1).tobytes(), np.eye(3), (0, 0, 0)))
    v = wp.Volume(grid)
    assert v.dtype is wp.int32 and v.get_voxel_count() == 512 and v.get_tiles().numpy().tolist() == [[0, 0, 0]]
    np.testing.assert_array_equal(v.array().numpy(), np.frombuffer(grid, np.uint8))
    with pytest.raises(TypeError, match="uint8 array"):
        wp.Volume([1, 2, 3])


def test_load_from_address_aliases_once():
    v = field_volume()
    with pytest.raises(RuntimeError, match="already been created"):
        wp.Volume.load_from_address(v.array().ptr)
    grid = np.frombuffer(bytes(nv.build_grid([[0, 0, 0]], 1, np.float32(2).tobytes(), np.eye(3), (0, 0, 0))),
                         np.uint8).copy()
    alias = wp.Volume.load_from_address(grid.ctypes.data)
    assert alias.get_voxel_count() == 512 and alias.array().ptr == grid.ctypes.data
    with pytest.raises(RuntimeError, match="Invalid grid buffer pointer"):
        wp.Volume.load_from_address(0)


def test_vec3_sample_gradients_against_finite_differences():
    """volume_sample_v / volume_sample_grad(dtype=vec3): the tape's d(c . v(p))/dp and the
    returned 3x3 Jacobian against float64 central differences of a per-component reference."""
    origins = np.array([[i, j, k] for i in (-8, 0) for j in (-8, 0) for k in (-8, 0)], np.int32)
    ijk = origins[:, None, :] + nv.local_coords()[None]
    comps = np.stack([field(ijk), field(ijk[..., [1, 2, 0]]), field(ijk[..., [2, 0, 1]])], axis=-1)
    grid = nv.build_grid(origins, 6, np.zeros(3, np.float32).tobytes(), np.eye(3), (0, 0, 0),
                         values=comps.astype(np.float32))
    v = wp.Volume(bytes(grid))

    @wp.kernel
    def k(vol: wp.uint64, p: wp.array(dtype=wp.vec3), c: wp.vec3, out: wp.array(dtype=float),
          jac: wp.array(dtype=wp.mat33)):
        t = wp.tid()
        out[t] = wp.dot(wp.volume_sample_v(vol, p[t], wp.Volume.LINEAR), c)
        g = wp.mat33()
        wp.volume_sample_grad(vol, p[t], wp.Volume.LINEAR, g, dtype=wp.vec3)
        jac[t] = g

    p = points(10, -6.0, 6.0, seed=5).astype(np.float64)
    p = np.floor(p) + np.clip(p - np.floor(p), 0.2, 0.8)
    c = np.array([0.7, -1.3, 0.4])
    pts = wp.array(p.astype(np.float32), dtype=wp.vec3, requires_grad=True)
    out, jac = wp.zeros(len(p), dtype=float, requires_grad=True), wp.zeros(len(p), dtype=wp.mat33)
    tape = wp.Tape()
    with tape:
        wp.launch(k, len(p), inputs=[v.id, pts, wp.vec3(*c), out, jac])
    tape.backward(grads={out: wp.array(np.ones(len(p), np.float32), dtype=float)})

    def comp(q, a):  # component a of the trilinear sample: the same field with axes rotated
        return ref_value(np.roll(q, -a), bg=0.0)

    h = 1e-4
    fd = np.array([[[(comp(q + h * e, a) - comp(q - h * e, a)) / (2 * h) for e in np.eye(3)] for a in range(3)]
                   for q in p])
    np.testing.assert_allclose(jac.numpy(), fd, rtol=1e-4, atol=2e-3)
    np.testing.assert_allclose(pts.grad.numpy(), np.einsum("nij,i->nj", fd, c), rtol=1e-4, atol=2e-3)


# Rebuildable volumes (the expected values are Warp 1.19's for the same calls) ----------------
@wp.kernel
def store_values(vol: wp.uint64, q: wp.array(dtype=wp.vec3i), vals: wp.array(dtype=float)):
    i = wp.tid()
    wp.volume_store_f(vol, q[i][0], q[i][1], q[i][2], vals[i])


@wp.kernel
def read_values(vol: wp.uint64, q: wp.array(dtype=wp.vec3i), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.volume_lookup_f(vol, q[i][0], q[i][1], q[i][2])


def ivec3s(rows):
    return wp.array(np.array(rows, dtype=np.int32), dtype=wp.vec3i)


def test_a_rebuild_replaces_the_topology_in_place_within_the_capacities():
    status = wp.zeros(1, dtype=wp.uint32)
    vol = wp.Volume.allocate_by_tiles(ivec3s([[0, 0, 0], [9, 1, 2], [100, 3, 4]]), voxel_size=0.5, bg_value=-1.0,
                                      rebuildable=True, status=status, max_tiles=4)
    assert vol.is_rebuildable and vol.get_rebuild_info() == ("tiles", 2048, 4, 4, 4)
    assert status.numpy()[0] == wp.Volume.REBUILD_SUCCESS and tuple(vol.get_active_stats()) == (1536, 3, 1, 1)
    q = ivec3s([[1, 1, 1], [9, 1, 2], [100, 3, 4], [300, 0, 0]])
    out = wp.zeros(4)
    wp.launch(store_values, 4, inputs=[vol.id, q, wp.array([1.0, 2.0, 3.0, 4.0], dtype=float)])
    wp.launch(read_values, 4, inputs=[vol.id, q, out])
    assert out.numpy().tolist() == [1.0, 2.0, 3.0, -1.0]
    vid = vol.id

    six_tiles = ivec3s([[16 * k, 0, 0] for k in range(6)])  # beyond max_tiles: nothing changes
    assert vol.rebuild(six_tiles, status=status) is status
    assert status.numpy()[0] == wp.Volume.REBUILD_LEAF_CAPACITY_EXCEEDED | wp.Volume.REBUILD_VOXEL_CAPACITY_EXCEEDED
    wp.launch(read_values, 4, inputs=[vol.id, q, out])
    assert tuple(vol.get_active_stats()) == (1536, 3, 1, 1) and out.numpy().tolist() == [1.0, 2.0, 3.0, -1.0]

    vol.rebuild(ivec3s([[300, 0, 0], [0, 0, 0], [50, 50, 50]]), status=status,
                point_mask=wp.array([1, 0, 1], dtype=wp.int32))
    assert status.numpy()[0] == 0 and vol.id == vid and tuple(vol.get_active_stats()) == (1024, 2, 2, 1)
    wp.launch(read_values, 4, inputs=[vol.id, q, out])  # values start at the background again
    assert out.numpy().tolist() == [-1.0] * 4
    wp.launch(store_values, 4, inputs=[vol.id, q, wp.array([1.0, 2.0, 3.0, 4.0], dtype=float)])
    wp.launch(read_values, 4, inputs=[vol.id, q, out])
    assert out.numpy().tolist() == [-1.0, -1.0, -1.0, 4.0]
    # counts and listings report the capacity, the rows not in use zero (Warp's: uninitialised)
    assert vol.get_tile_count() == 4 and vol.get_voxel_count() == 2048
    tiles = vol.get_tiles().numpy()
    assert sorted(map(tuple, tiles[:2])) == [(48, 48, 48), (296, 0, 0)] and not tiles[2:].any()

    vol.rebuild(wp.array(np.array([[0.2, 0.2, 0.2], [30.0, 1.0, 1.0]], np.float32), dtype=wp.vec3), status=status)
    assert sorted(map(tuple, vol.get_tiles().numpy()[:2])) == [(0, 0, 0), (56, 0, 0)]  # (world space)


def test_rebuildable_allocations_check_their_capacity_and_inputs():
    status = wp.zeros(1, dtype=wp.uint32)
    points = ivec3s([[16 * k, 0, 0] for k in range(6)])
    vol = wp.Volume.allocate_by_voxels(points, voxel_size=1.0, max_active_voxels=2, status=status)
    assert status.numpy()[0] == 9 and tuple(vol.get_active_stats()) == (0, 0, 0, 0)  # (leaves and voxels: empty)
    assert vol.get_rebuild_info() == ("voxels", 2, 2, 2, 2)
    vol.rebuild(points[:2], status=status)
    assert status.numpy()[0] == 0 and tuple(vol.get_active_stats()) == (2, 2, 1, 1)
    vol.rebuild(wp.zeros(0, dtype=wp.vec3i), status=status)  # no points: invalid, nothing changes
    assert status.numpy()[0] == wp.Volume.REBUILD_INVALID_INPUT and tuple(vol.get_active_stats()) == (2, 2, 1, 1)
    vol.rebuild(points, status=status, point_mask=wp.zeros(6, dtype=wp.int32))  # all masked out: empty
    assert status.numpy()[0] == 0 and tuple(vol.get_active_stats()) == (0, 0, 0, 0)
    with pytest.raises(RuntimeError, match="Failed to create volume"):
        wp.Volume.allocate_by_tiles(wp.zeros(0, dtype=wp.vec3i), voxel_size=1.0)
    with pytest.raises(RuntimeError, match="not rebuildable"):
        wp.Volume.allocate_by_tiles(points, voxel_size=1.0).rebuild(points)
    with pytest.raises(RuntimeError, match="uint32"):
        vol.rebuild(points, status=wp.zeros(1, dtype=int))
    with pytest.raises(ValueError, match="max_tiles must be positive"):
        wp.Volume.allocate_by_tiles(points, voxel_size=1.0, max_tiles=0)
