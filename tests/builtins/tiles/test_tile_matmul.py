"""tile_matmul's micro-kernel (weft/builtins/tiles/gemm_kernel.py) against numpy on shapes
that exercise every remainder path (rows past the last register block, columns past the
last pair of vectors, narrow vectors down to one element), both forms (returning and
accumulating), the accumulating form in place in a k loop and copied where its input is
still read, and alpha/beta."""

import functools

import numpy as np
import pytest

import weft as wp
from weft.builtins.tiles import gemm_kernel

SHAPES = [(1, 1, 1), (7, 13, 5), (64, 64, 64), (65, 33, 17), (6, 8, 16), (13, 3, 40), (2, 9, 31),
          (12, 1, 32), (5, 7, 9)]
DTYPES = {"float32": (wp.float32, np.float32, 2e-6), "float64": (wp.float64, np.float64, 1e-13),
          "float16": (wp.float16, np.float16, 2e-2)}


def _make_product_kernel(m, k, n, dt):
    @wp.kernel
    def product(a: wp.array2d(dtype=dt), b: wp.array2d(dtype=dt), c: wp.array2d(dtype=dt),
                plain: wp.array2d(dtype=dt), acc: wp.array2d(dtype=dt)):
        x = wp.tile_load(a, shape=(m, k))
        y = wp.tile_load(b, shape=(k, n))
        z = wp.tile_load(c, shape=(m, n))
        wp.tile_store(plain, wp.tile_matmul(x, y))
        wp.tile_matmul(x, y, z)
        wp.tile_store(acc, z)

    return product


_product_kernel = functools.cache(_make_product_kernel)


def _data(rng, shape, npdt):
    return rng.uniform(-1.0, 1.0, shape).astype(npdt)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_product_matches_numpy(shape, dtype):
    m, k, n = shape
    dt, npdt, tol = DTYPES[dtype]
    rng = np.random.default_rng(m * 10000 + k * 100 + n)
    a, b, c = _data(rng, (m, k), npdt), _data(rng, (k, n), npdt), _data(rng, (m, n), npdt)
    plain, acc = wp.zeros((m, n), dtype=dt), wp.zeros((m, n), dtype=dt)
    wp.launch_tiled(_product_kernel(m, k, n, dt), dim=1,
                    inputs=[wp.array(a, dtype=dt), wp.array(b, dtype=dt), wp.array(c, dtype=dt), plain, acc],
                    block_dim=8)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    scale = tol * max(k, 1)
    np.testing.assert_allclose(plain.numpy(), ref, rtol=0, atol=scale)
    np.testing.assert_allclose(acc.numpy(), ref + c, rtol=0, atol=scale * 2)


@functools.cache
def _gemm_kernel(tm, tn, tk, dt):
    @wp.kernel
    def gemm(a: wp.array2d(dtype=dt), b: wp.array2d(dtype=dt), c: wp.array2d(dtype=dt)):
        i, j = wp.tid()
        s = wp.tile_zeros(shape=(tm, tn), dtype=dt)
        count = int(a.shape[1] / tk)
        for k in range(0, count):
            x = wp.tile_load(a, shape=(tm, tk), offset=(i * tm, k * tk))
            y = wp.tile_load(b, shape=(tk, tn), offset=(k * tk, j * tn))
            wp.tile_matmul(x, y, s)
        wp.tile_store(c, s, offset=(i * tm, j * tn))

    return gemm


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("tiles", [(16, 16, 8), (7, 9, 5)], ids=lambda t: "x".join(map(str, t)))
def test_tiled_gemm_over_k_steps(tiles, dtype):
    """Warp's example_tile_matmul: the accumulating form in a loop (updated in place), over
    a grid of blocks whose edge tiles are partly outside the matrices (padded loads,
    clipped stores)."""
    tm, tn, tk = tiles
    dt, npdt, tol = DTYPES[dtype]
    m, k, n = 3 * tm + 2, 4 * tk, 2 * tn + 1
    rng = np.random.default_rng(7)
    a, b = _data(rng, (m, k), npdt), _data(rng, (k, n), npdt)
    c = wp.full((m, n), 5.0, dtype=dt)  # overwritten by the store
    grid = (-(-m // tm), -(-n // tn))
    wp.launch_tiled(_gemm_kernel(tm, tn, tk, dt), dim=grid,
                    inputs=[wp.array(a, dtype=dt), wp.array(b, dtype=dt), c], block_dim=8)
    np.testing.assert_allclose(c.numpy(), a.astype(np.float64) @ b, rtol=0, atol=tol * k * 2)


@wp.kernel
def accumulate_keeps_input(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), out: wp.array3d(dtype=float)):
    x = wp.tile_load(a, shape=(5, 3))
    y = wp.tile_load(b, shape=(3, 17))
    s = wp.tile_ones(shape=(5, 17), dtype=float)
    before = s
    wp.tile_matmul(x, y, s)  # `before` is read below: s's old buffer must not be written
    wp.tile_matmul(x, y, s)
    wp.tile_store(out[0], before)
    wp.tile_store(out[1], s)


def test_accumulate_copies_an_input_still_read():
    rng = np.random.default_rng(3)
    a, b = _data(rng, (5, 3), np.float32), _data(rng, (3, 17), np.float32)
    out = wp.zeros((2, 5, 17), dtype=float)
    wp.launch_tiled(accumulate_keeps_input, dim=1, inputs=[wp.array(a), wp.array(b), out], block_dim=8)
    np.testing.assert_array_equal(out.numpy()[0], np.ones((5, 17)))
    np.testing.assert_allclose(out.numpy()[1], 1.0 + 2.0 * (a.astype(np.float64) @ b), atol=1e-5)


@wp.kernel
def scaled_forms(a: wp.array2d(dtype=wp.float64), b: wp.array2d(dtype=wp.float64), out: wp.array3d(dtype=wp.float64)):
    x = wp.tile_load(a, shape=(9, 4))
    y = wp.tile_load(b, shape=(4, 18))
    s = wp.tile_ones(shape=(9, 18), dtype=wp.float64)
    wp.tile_matmul(x, y, s, alpha=0.5, beta=3.0)
    t = wp.tile_ones(shape=(9, 18), dtype=wp.float64)
    wp.tile_matmul(x, y, t, alpha=2.0)
    wp.tile_store(out[0], s)
    wp.tile_store(out[1], t)
    wp.tile_store(out[2], wp.tile_matmul(x, y, alpha=-1.0))


def test_alpha_and_beta():
    rng = np.random.default_rng(4)
    a, b = rng.uniform(-1, 1, (9, 4)), rng.uniform(-1, 1, (4, 18))
    out = wp.zeros((3, 9, 18), dtype=wp.float64)
    wp.launch_tiled(scaled_forms, dim=1, inputs=[wp.array(a, dtype=wp.float64), wp.array(b, dtype=wp.float64), out],
                    block_dim=8)
    p = a @ b
    np.testing.assert_allclose(out.numpy()[0], 0.5 * p + 3.0, atol=1e-13)
    np.testing.assert_allclose(out.numpy()[1], 2.0 * p + 1.0, atol=1e-13)
    np.testing.assert_allclose(out.numpy()[2], -p, atol=1e-13)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 64, 70])
@pytest.mark.parametrize("vw", [4, 8, 16])
def test_column_segments_cover_each_column_once(n, vw):
    segs = gemm_kernel.column_segments(n, vw)
    cols = [j0 + c for j0, widths in segs for c in range(sum(widths))]
    assert cols == list(range(n))
    for _, widths in segs:
        assert all(w >= 1 and w & (w - 1) == 0 and w <= vw for w in widths)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bits", [128, 256])
def test_narrower_vector_registers(bits, dtype, monkeypatch, tmp_path):
    """The micro-kernel for CPUs without AVX-512 (AVX: 256-bit vectors, SSE: 128), compiled
    here by overriding the width (a fresh kernel and cache, so no AVX-512 code is reused)."""
    monkeypatch.setattr(gemm_kernel, "VECTOR_BITS", bits)
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))
    dt, npdt, tol = DTYPES[dtype]
    m, k, n = 13, 9, 37
    kernel = _make_product_kernel(m, k, n, dt)
    lanes = bits // (8 * np.dtype(npdt).itemsize)
    assert f"<{lanes} x {'float' if dtype == 'float32' else 'double'}>" in kernel.llvm_ir()
    rng = np.random.default_rng(bits)
    a, b, c = _data(rng, (m, k), npdt), _data(rng, (k, n), npdt), _data(rng, (m, n), npdt)
    plain, acc = wp.zeros((m, n), dtype=dt), wp.zeros((m, n), dtype=dt)
    wp.launch_tiled(kernel, dim=1,
                    inputs=[wp.array(a, dtype=dt), wp.array(b, dtype=dt), wp.array(c, dtype=dt), plain, acc],
                    block_dim=8)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(plain.numpy(), ref, rtol=0, atol=tol * k)
    np.testing.assert_allclose(acc.numpy(), ref + c, rtol=0, atol=tol * k * 2)


def _bf16_operand_kernel(enable_backward):
    @wp.kernel(enable_backward=enable_backward, module="unique")
    def bf16_a(a: wp.array2d(dtype=wp.bfloat16), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
        x = wp.tile_load(a, shape=(2, 3))
        y = wp.tile_load(b, shape=(3, 2))
        z = wp.tile_zeros(shape=(2, 2), dtype=float)
        wp.tile_matmul(x, y, z)
        wp.tile_store(c, z)
    return bf16_a


def test_bf16_operands_are_refused_in_a_differentiable_kernel_and_multiplied_otherwise():
    a = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]], dtype=np.float32)  # exact in bfloat16
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    a_bf16 = wp.array(a, dtype=wp.bfloat16)
    c = wp.zeros((2, 2), dtype=float)
    with pytest.raises(TypeError, match="bfloat16 'a' or 'b' tiles when the backward pass is enabled"):
        wp.launch_tiled(_bf16_operand_kernel(True), dim=[1], inputs=[a_bf16, wp.array(b), c], block_dim=16)
    wp.launch_tiled(_bf16_operand_kernel(False), dim=[1], inputs=[a_bf16, wp.array(b), c], block_dim=16)
    np.testing.assert_array_equal(c.numpy(), a @ b)


@wp.kernel
def accumulate_then_reuse_a(A: wp.array2d(dtype=wp.float64), B: wp.array2d(dtype=wp.float64),
                            C: wp.array2d(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    a = wp.tile_load(A, shape=(6, 5))
    b = wp.tile_load(B, shape=(5, 3))
    c = wp.tile_load(C, shape=(6, 3))
    wp.tile_matmul(a, b, c)
    d = wp.tile_matmul(wp.tile_transpose(a), c)
    wp.tile_store(out, wp.tile_sum(wp.tile_map(wp.sin, d)))


def test_gradient_of_an_accumulated_product_whose_left_operand_is_reused():
    # Warp 1.19 (CPU) returns twice the true dB here; weft's adjoints match the analytic ones:
    # c = C + A B, d = A^T c, out = sum(sin d): dc = A cos(d), dB = A^T dc, dA = dc B^T + c cos(d)^T
    rng = np.random.default_rng(8)
    an, bn, cn = rng.standard_normal((6, 5)), rng.standard_normal((5, 3)), rng.standard_normal((6, 3))
    A, B, C = (wp.array(x, dtype=wp.float64, requires_grad=True) for x in (an, bn, cn))
    out = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(accumulate_then_reuse_a, dim=1, inputs=[A, B, C, out], block_dim=32)
    tape.backward(out)
    c = cn + an @ bn
    g = np.cos(an.T @ c)
    dc = an @ g
    np.testing.assert_allclose(B.grad.numpy(), an.T @ dc, rtol=1e-12)
    np.testing.assert_allclose(C.grad.numpy(), dc, rtol=1e-12)
    np.testing.assert_allclose(A.grad.numpy(), dc @ bn.T + c @ g.T, rtol=1e-12)
