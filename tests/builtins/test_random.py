"""Random numbers: the same streams as Warp's rand_init/randf/randi/randn for a seed.

The same kernel source runs under weft and (where installed) under Warp, and the results
are compared bit for bit. Values recorded from Warp 1.19 keep the check when Warp is absent.
"""

import functools

import numpy as np
import pytest

import weft as wp
from weft.builtins.random import pcg_numpy

N = 257
SEEDS = [0, 1, 42, 12345, 2**31 - 1]


@functools.cache
def draw_kernel(lib):
    @lib.kernel
    def draw(seed: int, f: lib.array(dtype=float, ndim=2), k: lib.array(dtype=int, ndim=2)):
        i = lib.tid()
        s = lib.rand_init(seed, i)
        f[i, 0] = lib.randf(s)
        f[i, 1] = lib.randf(s)
        f[i, 2] = lib.randf(s, -2.0, 5.0)
        k[i, 0] = lib.randi(s)
        k[i, 1] = lib.randi(s, -10, 10)
        k[i, 2] = lib.randi(s, 0, 1000)
        f[i, 3] = lib.randf(s)
        s2 = lib.rand_init(seed + i * 7919)
        f[i, 4] = lib.randf(s2)
        k[i, 3] = lib.randi(s2)
        s3 = lib.rand_init(seed, i * 1000003)
        for _j in range(5):
            f[i, 5] = f[i, 5] + lib.randf(s3)
        k[i, 4] = lib.randi(s3, 3, 4)
    return draw


@functools.cache
def normal_kernel(lib):
    @lib.kernel
    def normal(seed: int, f: lib.array(dtype=float, ndim=2)):
        i = lib.tid()
        s = lib.rand_init(seed, i)
        f[i, 0] = lib.randn(s)
        f[i, 1] = lib.randn(s)
        f[i, 2] = lib.randf(s)  # the state advanced by exactly what Warp's randn consumes
    return normal


def launch_draw(lib, seed, **device):
    f = lib.zeros((N, 6), dtype=float, **device)
    k = lib.zeros((N, 5), dtype=int, **device)
    lib.launch(draw_kernel(lib), N, inputs=[seed, f, k], **device)
    return f.numpy(), k.numpy()


def launch_normal(lib, seed, **device):
    f = lib.zeros((N, 3), dtype=float, **device)
    lib.launch(normal_kernel(lib), N, inputs=[seed, f], **device)
    return f.numpy()


@pytest.fixture(scope="module")
def warp():
    warp = pytest.importorskip("warp")
    warp.config.quiet = True
    return warp


@pytest.mark.parametrize("seed", SEEDS)
def test_uniform_streams_match_warp_bitwise(warp, seed):
    f, k = launch_draw(wp, seed)
    wf, wk = launch_draw(warp, seed, device="cpu")
    np.testing.assert_array_equal(f.view(np.uint32), wf.view(np.uint32))
    np.testing.assert_array_equal(k, wk)


@pytest.mark.parametrize("seed", SEEDS)
def test_normal_stream_matches_warp_bitwise(warp, seed):
    f = launch_normal(wp, seed)
    wf = launch_normal(warp, seed, device="cpu")
    np.testing.assert_array_equal(f.view(np.uint32), wf.view(np.uint32))


# Without Warp: values recorded from Warp 1.19 ------------------------------------------------


@wp.kernel
def first_draws(seed: int, offset: int, f: wp.array(dtype=float), k: wp.array(dtype=int)):
    s = wp.rand_init(seed, offset)
    f[0] = wp.randf(s)
    f[1] = wp.randf(s)
    k[0] = wp.randi(s)
    k[1] = wp.randi(s, -5, 5)
    f[2] = wp.randn(s)
    f[3] = wp.randf(s, -2.0, 5.0)
    t = wp.rand_init(seed)
    f[4] = wp.randn(t)


# (seed, offset): the float results as hex, and the int results, from Warp 1.19 on the CPU
RECORDED = {
    (3, 1): (["0x1.0d4014p-1", "0x1.b5c1fcp-2", "0x1.758522p+0", "0x1.17f5d2p+2",
              "0x1.2ff812p-1"], [-345176868, 1]),
    (12345, 678): (["0x1.c069acp-2", "0x1.ba475p-1", "0x1.56e95p-2", "0x1.1f2998p+2",
                    "0x1.4ac12p+0"], [-1549449889, 3]),
}


@pytest.mark.parametrize("seed,offset", list(RECORDED))
def test_recorded_warp_values(run, seed, offset):
    f, k = run(first_draws, 1, seed, offset, np.zeros(5, np.float32), np.zeros(2, np.int32))
    floats, ints = RECORDED[seed, offset]
    assert [float(x).hex() for x in f] == [float.fromhex(h).hex() for h in floats]
    assert k.tolist() == ints


def test_pcg_matches_the_python_reference(run):
    f, _ = run(first_draws, 1, 3, 1, np.zeros(5, np.float32), np.zeros(2, np.int32))
    s = pcg_numpy(pcg_numpy((3 + pcg_numpy(1)) & 0xFFFFFFFF))
    assert f[0] == np.float32((s >> 8) / 16777216.0)


def test_randf_is_in_range_and_uniform(run):
    f, _ = launch_draw(wp, 7)
    assert np.all((f[:, [0, 1, 3, 4]] >= 0.0) & (f[:, [0, 1, 3, 4]] < 1.0))
    assert np.all((f[:, 2] >= -2.0) & (f[:, 2] < 5.0))
    assert abs(f[:, [0, 1, 3, 4]].mean() - 0.5) < 0.03


def test_randi_ranges(run):
    _, k = launch_draw(wp, 9)
    assert np.all((k[:, 1] >= -10) & (k[:, 1] < 10))
    assert np.all((k[:, 2] >= 0) & (k[:, 2] < 1000))
    assert np.all(k[:, 4] == 3)
    assert len(np.unique(k[:, 0])) == N  # any int32, all different here


def test_randn_moments():
    big = 20000

    @wp.kernel
    def normals(seed: int, out: wp.array(dtype=float)):
        i = wp.tid()
        s = wp.rand_init(seed, i)
        out[i] = wp.randn(s)

    out = wp.zeros(big, dtype=float)
    wp.launch(normals, big, inputs=[5, out])
    x = out.numpy()
    assert abs(x.mean()) < 0.03 and abs(x.std() - 1.0) < 0.03
    assert np.all(np.isfinite(x))


def test_different_seeds_and_offsets_differ():
    f0, _ = launch_draw(wp, 0)
    f1, _ = launch_draw(wp, 1)
    assert not np.array_equal(f0[:, 0], f1[:, 0])
    assert len(np.unique(f0[:, 0])) > N - 3  # offsets (thread ids) give different streams


def test_in_place_update_of_a_temporary_is_refused_unless_it_is_a_random_state():
    """randf(rand_init(1)) draws from a dropped copy as in Warp (test_random_more); a
    builtin whose point is the update (transform_set_translation) needs a variable."""
    @wp.kernel
    def bad(out: wp.array(dtype=float)):
        wp.transform_set_translation(wp.transform_identity(), wp.vec3(1.0, 2.0, 3.0))
        out[0] = wp.randf(wp.rand_init(1))

    with pytest.raises(wp.CompileError, match="transform_set_translation: argument 1 must be a local variable"):
        wp.launch(bad, 1, inputs=[wp.zeros(1)])


def test_randu_bounds_and_the_stream():
    @wp.kernel
    def draws(seed: int, out: wp.array2d(dtype=wp.uint32)):
        i = wp.tid()
        s = wp.rand_init(seed, i)
        out[i, 0] = wp.randu(s)
        out[i, 1] = wp.randu(s, wp.uint32(0), wp.uint32(100))
        out[i, 2] = wp.randu(s, wp.uint32(7), wp.uint32(9))

    n = 64
    out = wp.zeros((n, 3), dtype=wp.uint32)
    wp.launch(draws, n, inputs=[11, out])
    u = out.numpy().astype(np.int64)
    for i in range(n):  # Warp's rule: the next hash, then state % (high - low) + low
        s = pcg_numpy((11 + pcg_numpy(i)) & 0xFFFFFFFF)
        expected = []
        for lo, hi in ((None, None), (0, 100), (7, 9)):
            s = pcg_numpy(s)
            expected.append(s if lo is None else s % (hi - lo) + lo)
        assert u[i].tolist() == expected


def test_extra_arguments_are_errors_not_ignored():
    @wp.kernel
    def too_many(out: wp.array(dtype=float)):
        s = wp.rand_init(1)
        out[0] = wp.randn(s, 2.0)

    with pytest.raises(wp.CompileError, match=r"randn\(state\) takes the random state only$"):
        wp.launch(too_many, 1, inputs=[wp.zeros(1)])
