"""Every tile builtin's derivative against central finite differences, in float64.

The tile counterpart of tests/builtins/test_derivatives.py (which leaves the builtins of
weft.builtins.tiles to this file): each tile builtin has a case below (a tiled kernel from
float64 arrays to a float64 array, through the builtin) or an entry in `EXCLUDED` with the
reason; each tile primitive appears in the IR of some case or in `EXCLUDED_PRIMITIVES`. A
tile builtin added without either fails `test_tile_registry_is_covered`.

The check is the VJP identity on random directions: the Tape's adjoint, seeded with a
random cotangent `c`, gives `g = J^T c`; for a random direction `t`, `<t, g>` must equal
`<(f(x + h t) - f(x - h t)) / 2h, c>`.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pytest

import weft as wp
from weft.builtins.registry import BUILTINS, PRIMITIVES
from weft.ir.core import walk

H = 1e-6
RTOL, ATOL = 1e-7, 1e-9
F64 = wp.float64

TILE_BUILTINS = {n for n, b in BUILTINS.items() if b.expand.__module__.startswith("weft.builtins.tiles")}
TILE_PRIMITIVES = {n for n, p in PRIMITIVES.items() if p.lower.__module__.startswith("weft.builtins.tiles")}


@dataclass
class Case:
    id: str
    builtins: tuple[str, ...]  # the tile builtins it exercises
    kernel: object
    inputs: tuple[tuple[int, ...], ...]  # shapes of the float64 input arrays
    output: tuple[int, ...]


@wp.kernel
def k_load_store(a: wp.array2d[F64], out: wp.array2d[F64]):
    t = wp.tile_load(a, shape=(3, 4))
    wp.tile_store(out, t)


@wp.kernel
def k_elementwise(a: wp.array2d[F64], b: wp.array2d[F64], out: wp.array2d[F64]):
    x = wp.tile_load(a, shape=(3, 4))
    y = wp.tile_load(b, shape=(3, 4))
    z = wp.tile_map(wp.sin, x) * y - x / (y * y + 1.0) + 2.0 * -x
    wp.tile_store(out, wp.tile_map(wp.mul, z, wp.tile_astype(y, F64)))


@wp.kernel
def k_assign_loop(a: wp.array2d[F64], n: int, out: wp.array2d[F64]):
    x = wp.tile_load(a, shape=(1, 8))
    t = wp.tile_zeros(shape=(1, 8), dtype=F64)
    for j in range(n):  # behaviour 2: element writes in a dynamic loop and a branch, read back
        t[0, j] = x[0, j] * x[0, j]
        if j > 0:
            t[0, j] += t[0, j - 1] * 0.5
    wp.tile_store(out, t)


@wp.kernel
def k_reductions(a: wp.array2d[F64], out: wp.array2d[F64]):
    x = wp.tile_load(a, shape=(3, 4))
    s = wp.tile_sum(x)
    m = wp.tile_max(x)
    lo = wp.tile_min(x)
    d = wp.tile_dot(x, x)
    r = wp.tile_reduce(wp.add, x * x)
    cols = wp.tile_sum(x, axis=0)
    rows = wp.tile_reduce(wp.mul, x, axis=1)
    out[0, 0] = s[0] + 2.0 * m[0] + 3.0 * lo[0] + d[0] + r[0] + cols[1] + rows[2]


@wp.kernel
def k_shape(a: wp.array2d[F64], out: wp.array2d[F64]):
    x = wp.tile_load(a, shape=(3, 4))
    t = wp.tile_transpose(x)  # (4, 3)
    col = wp.tile_view(x, offset=(0, 1), shape=(3, 1))
    b = wp.tile_broadcast(col, shape=(3, 4))
    r = wp.tile_reshape(x, shape=(4, 3))
    sq = wp.tile_squeeze(wp.tile_reshape(x, shape=(1, 12)))
    y = t + r
    z = wp.tile_zeros(shape=(4, 3), dtype=F64)
    wp.tile_assign(z, y[1:3], offset=(1, 0))
    z[0] = sq[3:6]
    w = wp.tile_diag_add(wp.tile_transpose(z)[:, 0:3], wp.tile_extract(b, 2, 3) * wp.tile_ones(shape=3, dtype=F64))
    wp.tile_store(out, w)


@wp.kernel
def k_matmul(a: wp.array2d[F64], b: wp.array2d[F64], out: wp.array2d[F64]):
    x = wp.tile_load(a, shape=(3, 4))
    y = wp.tile_load(b, shape=(4, 2))
    c = wp.tile_matmul(x, y, alpha=0.5)
    wp.tile_matmul(x, y, c, beta=2.0)
    e = wp.tile_full(shape=(3, 2), value=wp.float64(1.5), dtype=F64)
    wp.tile_axpy(wp.float64(3.0), c, e)
    wp.tile_store(out, e)


@wp.kernel
def k_matmul_loop(a: wp.array2d[F64], b: wp.array2d[F64], out: wp.array2d[F64]):
    # Warp's example_tile_matmul: out += a_k @ b_k over k steps (the accumulating form,
    # updated in place in the loop), then a nonlinear use of the sum
    s = wp.tile_zeros(shape=(3, 2), dtype=F64)
    for k in range(2):
        x = wp.tile_load(a, shape=(3, 2), offset=(0, k * 2))
        y = wp.tile_load(b, shape=(2, 2), offset=(k * 2, 0))
        wp.tile_matmul(x, y, s)
    wp.tile_store(out, s * s)


@wp.kernel
def k_atomic(a: wp.array2d[F64], out: wp.array2d[F64]):
    x = wp.tile_load(a, shape=(3, 4))
    wp.tile_atomic_add(out, x * x)


@wp.kernel
def k_thread_values(a: wp.array2d[F64], out: wp.array2d[F64]):
    i = wp.tid()
    v = wp.vec3d(a[i, 0], a[i, 1], a[i, 2])
    t = wp.tile(v * 2.0)  # (3, 1) on the CPU
    u = wp.untile(t)
    s = wp.tile_from_thread(shape=(2,), value=a[i, 3])
    out[i, 0] = wp.length(u) + s[1]


@wp.kernel
def k_solves(a: wp.array2d[F64], y: wp.array2d[F64], out: wp.array2d[F64]):
    m = wp.tile_load(a, shape=(4, 4))
    spd = wp.tile_diag_add(wp.tile_matmul(m, wp.tile_transpose(m)), wp.tile_full(shape=4, value=wp.float64(4.0),
                                                                                   dtype=F64))
    rhs = wp.tile_load(y, shape=(4, 1))
    low = wp.tile_cholesky(spd)
    up = wp.tile_cholesky(spd, fill_mode="upper")
    x = wp.tile_cholesky_solve(low, rhs)
    z = wp.tile_lower_solve(low, rhs * 2.0)
    u = wp.tile_upper_solve(up, rhs)
    wp.tile_store(out, x + z + u + wp.tile_cholesky_solve(up, rhs, fill_mode="upper"))


@wp.kernel
def k_solves_inplace(a: wp.array2d[F64], y: wp.array2d[F64], out: wp.array2d[F64]):
    m = wp.tile_load(a, shape=(4, 4))
    spd = wp.tile_diag_add(wp.tile_matmul(m, wp.tile_transpose(m)), wp.tile_full(shape=4, value=wp.float64(4.0),
                                                                                   dtype=F64))
    low = spd
    wp.tile_cholesky_inplace(low)
    up = spd
    wp.tile_cholesky_inplace(up, fill_mode="upper")
    x = wp.tile_load(y, shape=(4, 1))
    wp.tile_cholesky_solve_inplace(low, x)
    z = wp.tile_load(y, shape=(4, 1)) * 2.0
    wp.tile_lower_solve_inplace(low, z)
    u = wp.tile_load(y, shape=(4, 1))
    wp.tile_upper_solve_inplace(up, u)
    w = wp.tile_load(y, shape=(4, 1))
    wp.tile_cholesky_solve_inplace(up, w, fill_mode="upper")
    wp.tile_store(out, x + z + u + w)


@wp.func
def complex_from(re: wp.float64, im: wp.float64):
    return wp.vec2d(re, im)


@wp.func
def mix_parts(v: wp.vec2d):
    return v[0] + 2.0 * v[1]


@wp.kernel
def k_fft(re: wp.array2d[F64], im: wp.array2d[F64], out: wp.array2d[F64]):
    t = wp.tile_map(complex_from, wp.tile_load(re, shape=(2, 8)), wp.tile_load(im, shape=(2, 8)))
    wp.tile_fft(t)
    u = wp.tile_map(complex_from, wp.tile_load(re, shape=(2, 8)), wp.tile_load(re, shape=(2, 8)))
    wp.tile_ifft(u)
    wp.tile_store(out, wp.tile_map(mix_parts, t) + wp.tile_map(mix_parts, u))


@wp.kernel
def k_scans(a: wp.array2d[F64], out: wp.array2d[F64]):
    x = wp.tile_load(a, shape=(2, 4))
    y = wp.tile_scan_inclusive(x) + 2.0 * wp.tile_scan_exclusive(x * x)
    wp.tile_store(out, y + wp.tile_scan_max_inclusive(x) - 3.0 * wp.tile_scan_min_inclusive(x))


@wp.kernel
def k_sort(a: wp.array2d[F64], b: wp.array2d[F64], out: wp.array2d[F64]):
    keys = wp.tile_load(a, shape=(1, 8))
    prod = wp.tile_load(b, shape=(1, 8)) * keys
    k1 = wp.tile_reshape(keys, shape=(8,))
    v1 = wp.tile_reshape(prod, shape=(8,))
    wp.tile_sort(k1, v1)  # (the views write the sorted values back into keys and prod)
    wp.tile_store(out, keys + 2.0 * prod)


@wp.kernel
def k_indexed(a: wp.array2d[F64], out: wp.array2d[F64]):
    idx = wp.tile_arange(3, -1, -1, dtype=int)  # rows 3, 2, 1, 0
    rows = wp.tile_load_indexed(a, indices=idx, shape=(4, 3), axis=0)
    t = wp.tile_load(a, shape=(4, 3))
    picked = wp.tile_slice_indexed(t, (wp.tile_arange(0, 4, 2, dtype=int), slice(None)))
    wp.tile_store_indexed(out, wp.tile_arange(1, 3, dtype=int), picked * rows[0:2], axis=0)
    wp.tile_atomic_add_indexed(out, idx, rows * rows, axis=0)
    u = wp.tile_zeros(shape=(4,), dtype=F64)
    wp.tile_scatter_add(u, 1, t[2, 1], True)
    wp.tile_scatter_masked(u, 3, t[0, 0] * 2.0, True)
    wp.tile_atomic_add(out, wp.tile_reshape(u, shape=(4, 1)))


@wp.kernel
def k_broadcast_write(a: wp.array2d[F64], b: wp.array2d[F64], out: wp.array2d[F64]):
    bias = wp.tile_load(a, shape=(1, 4))
    dest = wp.tile_broadcast(bias, shape=(3, 4))  # Warp's writes through it reach bias
    wp.tile_axpy(F64(2.0), wp.tile_load(b, shape=(3, 4)) * wp.tile_load(b, shape=(3, 4)), dest)
    dest[1, 2] = dest[0, 1] * F64(3.0)
    wp.tile_store(out, dest * wp.tile_broadcast(bias, shape=(3, 4)))


@wp.kernel
def k_view_writes_in_loops(a: wp.array2d[F64], b: wp.array2d[F64], out: wp.array2d[F64]):
    t = wp.tile_load(b, shape=(3, 4))
    row = t[1]  # writes through it in the loop reach t
    for i in range(3):
        row[i] = row[i] * t[0, i] + wp.sin(row[i + 1])
    dest = wp.tile_broadcast(wp.tile_load(a, shape=(1, 4)), shape=(3, 4))
    for _ in range(2):
        wp.tile_axpy(F64(0.5), t * t, dest)
    wp.tile_store(out, dest * t)


CASES = [
    Case("load_store", ("tile_load", "tile_store"), k_load_store, ((3, 4),), (3, 4)),
    Case("elementwise", ("tile_map", "tile_astype"), k_elementwise, ((3, 4), (3, 4)), (3, 4)),
    Case("assign_loop", ("tile_zeros",), k_assign_loop, ((1, 8),), (1, 8)),
    Case("reductions", ("tile_sum", "tile_max", "tile_min", "tile_dot", "tile_reduce"), k_reductions,
         ((3, 4),), (1, 1)),
    Case("shape", ("tile_transpose", "tile_view", "tile_broadcast", "tile_reshape", "tile_squeeze",
                   "tile_assign", "tile_diag_add", "tile_extract", "tile_ones"), k_shape, ((3, 4),), (3, 3)),
    Case("matmul", ("tile_matmul", "tile_full", "tile_axpy"), k_matmul, ((3, 4), (4, 2)), (3, 2)),
    Case("broadcast_write", ("tile_broadcast", "tile_axpy"), k_broadcast_write, ((1, 4), (3, 4)), (3, 4)),
    Case("view_writes_in_loops", ("tile_broadcast", "tile_axpy"), k_view_writes_in_loops, ((1, 4), (3, 4)),
         (3, 4)),
    Case("matmul_loop", ("tile_matmul",), k_matmul_loop, ((3, 4), (4, 2)), (3, 2)),
    Case("atomic", ("tile_atomic_add",), k_atomic, ((3, 4),), (3, 4)),
    Case("thread_values", ("tile", "untile", "tile_from_thread"), k_thread_values, ((3, 4),), (3, 1)),
    Case("solves", ("tile_cholesky", "tile_cholesky_solve", "tile_lower_solve", "tile_upper_solve"), k_solves,
         ((4, 4), (4, 1)), (4, 1)),
    Case("solves_inplace", ("tile_cholesky_inplace", "tile_cholesky_solve_inplace", "tile_lower_solve_inplace",
                            "tile_upper_solve_inplace"), k_solves_inplace, ((4, 4), (4, 1)), (4, 1)),
    Case("fft", ("tile_fft", "tile_ifft"), k_fft, ((2, 8), (2, 8)), (2, 8)),
    Case("scans", ("tile_scan_inclusive", "tile_scan_exclusive", "tile_scan_max_inclusive",
                   "tile_scan_min_inclusive"), k_scans, ((2, 4),), (2, 4)),
    Case("sort", ("tile_sort",), k_sort, ((1, 8), (1, 8)), (1, 8)),
    Case("indexed", ("tile_load_indexed", "tile_slice_indexed", "tile_store_indexed", "tile_atomic_add_indexed",
                     "tile_scatter_add", "tile_scatter_masked"), k_indexed, ((4, 3),), (4, 3)),
]

EXCLUDED = {
    "tile_empty": "its elements are unset (zeros in weft): nothing to differentiate",
    "tile_arange": "compile-time constants",
    "tile_argmin": "integer result", "tile_argmax": "integer result",
    "block_dim": "an integer constant",
    "tile_randf": "its input is the integer random state", "tile_randi": "integer result",
    **{n: "a query object or integer results (geometry as a constant, as in Warp)" for n in (
        "tile_bvh_query_aabb", "tile_bvh_query_ray", "tile_mesh_query_aabb", "tile_bvh_query_next",
        "tile_mesh_query_aabb_next", "tile_query_valid", "bvh_query_aabb_tiled", "bvh_query_ray_tiled",
        "mesh_query_aabb_tiled", "bvh_query_next_tiled", "mesh_query_aabb_next_tiled")},
    **{n: "a stack of values: a gradient reaching a popped value is refused (tests/builtins/tiles/test_stack.py)"
       for n in ("tile_stack", "tile_stack_push", "tile_stack_pop", "tile_stack_clear", "tile_stack_count")},
}
EXCLUDED_PRIMITIVES = {n: "tile stacks (EXCLUDED above)" for n in PRIMITIVES if n.startswith("tile_stack_")}
# cooperative blocks: replaced by the block program (its gradients: tests/transforms/test_lanes.py)
EXCLUDED_PRIMITIVES.update({"lanes_tile": "cooperative blocks only", "lane_index": "cooperative blocks only",
                            "lanes_active": "cooperative blocks only"})


def _launch(case, arrays, n=None):
    out = wp.zeros(case.output, dtype=F64, requires_grad=True)
    extra = [n] if case.kernel is k_assign_loop else []
    grid = [case.output[0]] if case.kernel is k_thread_values else [1]
    wp.launch_tiled(case.kernel, dim=grid, inputs=[*arrays[:1], *extra, *arrays[1:], out] if extra
                    else [*arrays, out], block_dim=16)
    return out


def _forward(case, xs):
    return _launch(case, [wp.array(x, dtype=F64) for x in xs], 8).numpy()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_tile_adjoint_matches_finite_differences(case):
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    xs = [rng.uniform(-1.5, 1.5, s) for s in case.inputs]
    arrays = [wp.array(x, dtype=F64, requires_grad=True) for x in xs]
    cot = rng.standard_normal(case.output)
    with wp.Tape() as tape:
        out = _launch(case, arrays, 8)
    out.grad = wp.array(cot, dtype=F64)
    tape.backward()
    grads = [a.grad.numpy() for a in arrays]
    for k, x in enumerate(xs):
        t = rng.standard_normal(x.shape)
        step = H * (1 + np.abs(x).max())
        plus = [y + step * t if j == k else y for j, y in enumerate(xs)]
        minus = [y - step * t if j == k else y for j, y in enumerate(xs)]
        fd = float(np.sum((_forward(case, plus) - _forward(case, minus)) / (2 * step) * cot))
        vjp = float(np.sum(t * grads[k]))
        assert abs(vjp - fd) <= RTOL * (abs(fd) + np.linalg.norm(t) * np.linalg.norm(cot)) + ATOL, \
            f"{case.id}: d/d(input {k}): <t, adjoint> = {vjp!r}, finite differences {fd!r}"


def test_tile_registry_is_covered():
    """Each tile builtin has a case or an exclusion, and each tile primitive is called by
    some case's kernels (forward or adjoint) or excluded."""
    covered = {n for c in CASES for n in c.builtins}
    assert not covered & set(EXCLUDED), f"both covered and excluded: {sorted(covered & set(EXCLUDED))}"
    missing = TILE_BUILTINS - covered - set(EXCLUDED)
    assert not missing, f"tile builtins with no derivative case and no exclusion: {sorted(missing)}"
    stale = (covered | set(EXCLUDED)) - TILE_BUILTINS
    assert not stale, f"cases or exclusions for tile builtins that do not exist: {sorted(stale)}"
    called = set()
    for c in CASES:
        for fn in (c.kernel.ir(), c.kernel.adjoint_ir(frozenset(), False, frozenset())):
            called |= {op.attrs["fn"].name for op in walk(fn.body) if op.name == "call"}
    missing = TILE_PRIMITIVES - called - set(EXCLUDED_PRIMITIVES)
    assert not missing, f"tile primitives no case calls and not excluded: {sorted(missing)}"
