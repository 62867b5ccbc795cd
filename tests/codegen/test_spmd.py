"""Threads on SIMD lanes (codegen/spmd.py): a kernel with a loop runs WIDTH threads per
vector; every result must be bit-identical to the one-thread-at-a-time code
(`config.vectorize_threads = False`), for every kind of op, on launches whose size is not a
multiple of WIDTH (the rest runs the scalar body)."""

import importlib.util
import math
import sys

import numpy as np
import pytest

import weft as wp
from tests.autodiff.helpers import check_adjoint
from weft.codegen.spmd import (
    FLAT_ROWS_BELOW,
    MAX_LANEWISE_SHARE,
    MAX_VECTOR_BODY_OPS,
    WIDTH,
    _lanewise_count,
    spmd_plan,
)


def run_both(kernel, dim, make_args, out_index):
    """Launch `kernel` vectorised and scalar on fresh arguments; the outputs (the arguments
    at `out_index`) of both, as numpy arrays."""
    results = []
    saved = wp.config.vectorize_threads
    try:
        for vectorize in (True, False):
            wp.config.vectorize_threads = vectorize
            args = make_args()
            wp.launch(kernel, dim, inputs=args)
            results.append([args[k].numpy() for k in out_index])
    finally:
        wp.config.vectorize_threads = saved
    return results


def assert_bitwise(a, b):
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes(), np.argwhere(x != y)[:5]


@wp.kernel
def nbody(pos: wp.array(dtype=wp.vec3), mass: wp.array(dtype=float), acc: wp.array(dtype=wp.vec3),
          n: int, eps2: float):
    i = wp.tid()
    pi = pos[i]
    a = wp.vec3(0.0, 0.0, 0.0)
    for j in range(n):
        d = pos[j] - pi
        r2 = wp.dot(d, d) + eps2
        inv = 1.0 / wp.sqrt(r2)
        a = a + (mass[j] * inv * inv * inv) * d
    acc[i] = a


def test_nbody_is_vectorised_and_bit_identical():
    assert spmd_plan(nbody.ir()) is not None
    rng = np.random.default_rng(0)
    n = 8 * 37 + 5
    p, m = rng.standard_normal((n, 3)).astype(np.float32), rng.random(n).astype(np.float32)
    a, b = run_both(nbody, n, lambda: [wp.array(p, dtype=wp.vec3), wp.array(m), wp.zeros(n, dtype=wp.vec3),
                                       n, 0.01], [2])
    assert_bitwise(a, b)
    ref = np.zeros((n, 3))
    for i in range(0, n, 50):  # (against float64, loosely)
        d = p.astype(np.float64) - p[i]
        w = m / np.sqrt((d * d).sum(1) + 0.01) ** 3
        ref[i] = (w[:, None] * d).sum(0)
    np.testing.assert_allclose(a[0][::50], ref[::50], rtol=1e-4, atol=1e-3)


@wp.func
def collatz_steps(x: int) -> int:
    steps = 0
    while x != 1 and steps < 100:
        if x % 2 == 0:
            x = x // 2
        else:
            x = 3 * x + 1
        steps += 1
    return steps


@wp.kernel
def control_flow(x: wp.array(dtype=float), k: wp.array(dtype=int), out: wp.array2d(dtype=float),
                 counts: wp.array(dtype=int), total: wp.array(dtype=float), m: int):
    i = wp.tid()
    xi = x[i]
    s = 0.0
    for j in range(m):  # uniform loop, varying carried value
        if xi > 0.0:  # varying, pure: both sides, a select
            s += wp.sqrt(xi) * float(j)
        else:
            s -= wp.abs(xi)
    out[i, 0] = s
    t = 0.0
    for j in range(k[i] % 9):  # varying trip count: masked
        if j == 5:
            break
        if j % 2 == 1:
            continue
        t += wp.sin(xi + float(j))
    out[i, 1] = t
    out[i, 2] = float(collatz_steps(k[i] % 50 + 1))  # varying while in a func: masked
    if k[i] % 3 == 0:  # varying condition with a store: lane by lane
        out[i, 3] = xi * 2.0
    wp.atomic_add(counts, k[i] % 7, 1)  # atomics at varying indices
    for _j in range(2):
        wp.atomic_add(total, 0, xi)  # one element for every thread
    v = wp.vec3(xi, float(i), 1.0)
    q = wp.quat_from_axis_angle(wp.normalize(v), xi)
    r = wp.quat_rotate(q, wp.vec3(1.0, 2.0, 3.0))
    out[i, 4] = r[0] + r[1] * r[2]
    out[i, 5] = float(k[i] >> 2) + float(k[i] // 3) + float(k[i] % 5)
    out[i, 6] = float(int(xi * 100.0))


def test_control_flow_atomics_and_funcs():
    n = 8 * 25 + 3
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    k = rng.integers(0, 1000, n).astype(np.int32)
    plan = spmd_plan(control_flow.ir())
    assert plan is not None and plan.lanewise and plan.selected and len(plan.masked) == 2

    def args():
        return [wp.array(x), wp.array(k), wp.zeros((n, 7), dtype=float), wp.zeros(7, dtype=int),
                wp.zeros(1, dtype=float), 4]
    vec, scalar = run_both(control_flow, n, args, [2, 3, 4])
    assert_bitwise(vec[:2], scalar[:2])
    np.testing.assert_allclose(vec[2], scalar[2], rtol=1e-5)  # (atomic order)
    expected_t = [sum(math.sin(float(xi) + j) for j in range(min(kk % 9, 5)) if j % 2 == 0)
                  for xi, kk in zip(x, k)]
    np.testing.assert_allclose(vec[0][:, 1], expected_t, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(vec[1], np.bincount(k % 7, minlength=7))


@wp.kernel
def guarded(x: wp.array(dtype=float), idx: wp.array(dtype=int), out: wp.array(dtype=float), m: int):
    i = wp.tid()
    s = 0.0
    for _j in range(m):
        s += x[idx[i]]
    out[i] = s


def test_out_of_bounds_in_a_vector_body_raises():
    n = 20
    idx = np.arange(n, dtype=np.int32)
    idx[13] = 99
    with pytest.raises(IndexError):
        wp.launch(guarded, n, inputs=[wp.array(np.ones(n, np.float32)), wp.array(idx), wp.zeros(n), 3])


@wp.kernel
def divide(a: wp.array(dtype=int), out: wp.array(dtype=int), m: int):
    i = wp.tid()
    s = 0
    for _j in range(m):
        s += 100 // a[i]
    out[i] = s


def test_integer_division_by_zero_in_a_vector_body_raises():
    a = np.arange(1, 18, dtype=np.int32)
    a[11] = 0
    with pytest.raises(ZeroDivisionError):
        wp.launch(divide, len(a), inputs=[wp.array(a), wp.zeros(len(a), dtype=int), 2])


# Every scalar builtin, on random inputs, vectorised against scalar ------------------------
UNARY = ["sqrt", "abs", "floor", "ceil", "trunc", "round", "rint", "sign", "sin", "cos", "tan", "asin",
         "acos", "atan", "sinh", "cosh", "tanh", "exp", "exp2", "log", "log2", "log10", "cbrt", "erf",
         "erfc", "erfinv", "erfcinv", "isnan", "isinf", "isfinite", "degrees", "radians", "frac"]
BINARY = ["min", "max", "pow", "atan2", "mod", "div", "floordiv"]


def _builtin_kernel(tmp_path, dtype):
    lines = [f"import weft as wp\n\n@wp.kernel\ndef k(x: wp.array(dtype=wp.{dtype}), y: wp.array(dtype=wp.{dtype}),",
             f"      out: wp.array2d(dtype=wp.{dtype}), m: int):",
             "    i = wp.tid()",
             "    for j in range(m):",
             "        a = x[i]",
             "        b = y[i]"]
    for c, name in enumerate(UNARY):
        lines.append(f"        out[i, {c}] = wp.{dtype}(wp.{name}(a))")
    for c, name in enumerate(BINARY, len(UNARY)):
        expr = {"div": "a / b", "floordiv": "a // b", "mod": "a % b"}.get(name, f"wp.{name}(a, b)")
        lines.append(f"        out[i, {c}] = {expr}")
    path = tmp_path / f"spmd_builtins_{dtype}.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module.k


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_scalar_builtin_bit_identical(tmp_path, dtype):
    kernel = _builtin_kernel(tmp_path, dtype)
    n = 8 * 40 + 7
    rng = np.random.default_rng(2)
    np_t = np.dtype(dtype)
    x = np.concatenate([rng.uniform(-3, 3, n - 7), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 0.5]]).astype(np_t)
    y = rng.uniform(-2, 2, n).astype(np_t)
    y[::11] = 0.0
    cols = len(UNARY) + len(BINARY)
    vec, scalar = run_both(kernel, n, lambda: [wp.array(x), wp.array(y), wp.zeros((n, cols), dtype=np_t), 1], [2])
    for c, name in enumerate(UNARY + BINARY):
        assert vec[0][:, c].tobytes() == scalar[0][:, c].tobytes(), name


# Random programs -------------------------------------------------------------------------
def _random_program(rng, index):
    """A kernel of random arithmetic, comparisons, selects and branches inside a loop."""
    names = ["a", "b", "c"]
    lines = []
    for step in range(10):
        x, y = rng.choice(names, 2)
        kind = rng.integers(0, 6)
        new = f"t{step}"
        if kind == 0:
            expr = f"{x} {rng.choice(['+', '-', '*', '/'])} {y}"
        elif kind == 1:
            expr = f"wp.{rng.choice(['min', 'max'])}({x}, {y})"
        elif kind == 2:
            expr = f"wp.{rng.choice(['sqrt', 'sin', 'exp', 'log', 'tanh'])}(wp.abs({x}) + 0.5)"
        elif kind == 3:
            expr = f"wp.select({x} < {y}, {x}, {y} * 0.5)"
        elif kind == 4:
            expr = f"{x} * float(j) + {y}"
        else:
            lines.append(f"        {new} = {x}")
            lines.append(f"        if {x} > {y}:")
            lines.append(f"            {new} = {x} - {y} * 0.25")
            names.append(new)
            continue
        lines.append(f"        {new} = {expr}")
        names.append(new)
    body = "\n".join(lines)
    return f"""import weft as wp

@wp.kernel
def k(x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float), m: int):
    i = wp.tid()
    a = x[i]
    b = y[i]
    c = float(0.0)
    for j in range(m):
{body}
        c = c + {names[-1]} * 0.001
    out[i] = c
"""


@pytest.mark.parametrize("seed", range(6))
def test_random_programs_bit_identical(tmp_path, seed):
    rng = np.random.default_rng(seed)
    path = tmp_path / f"spmd_random_{seed}.py"
    path.write_text(_random_program(rng, seed))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    n = WIDTH * 9 + 1
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    vec, scalar = run_both(module.k, n, lambda: [wp.array(x), wp.array(y), wp.zeros(n), 3], [2])
    assert_bitwise(vec, scalar)


def test_straight_line_kernels_at_thread_indices_stay_scalar():
    """LLVM's loop vectoriser handles these; a gather or a scatter is what needs the lanes."""
    @wp.kernel
    def saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
        i = wp.tid()
        y[i] = a * x[i] + y[i]

    @wp.kernel
    def shifted(x: wp.array(dtype=wp.vec3), y: wp.array(dtype=wp.vec3), k: int):
        i = wp.tid()
        y[i + k] = x[wp.int64(i) + 1] - x[i - k]

    @wp.kernel
    def gathered(x: wp.array(dtype=float), idx: wp.array(dtype=int), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[idx[i]]

    assert spmd_plan(saxpy.ir()) is None
    assert spmd_plan(shifted.ir()) is None
    assert spmd_plan(gathered.ir()) is not None


def test_adjoints_of_a_vectorised_kernel():
    """The gradient of the n-body accelerations' sum w.r.t. the masses, through the tape
    (the adjoint kernel has an AD stack: it stays scalar), against float64 values."""
    n = 19
    rng = np.random.default_rng(3)
    p = rng.standard_normal((n, 3)).astype(np.float32)
    mass = wp.array(rng.random(n).astype(np.float32), requires_grad=True)
    acc = wp.zeros(n, dtype=wp.vec3, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(nbody, n, inputs=[wp.array(p, dtype=wp.vec3), mass, acc, n, 0.01])
    acc.grad = wp.array(np.ones((n, 3), np.float32), dtype=wp.vec3)
    tape.backward()
    d = p[None, :, :].astype(np.float64) - p[:, None, :]
    w = 1.0 / np.sqrt((d * d).sum(2) + 0.01) ** 3
    expected = (w[:, :, None] * d).sum(axis=(0, 2))
    np.testing.assert_allclose(mass.grad.numpy(), expected, rtol=1e-4, atol=1e-4)


@wp.kernel
def carried_into_lanes(x: wp.array(dtype=float), out: wp.array(dtype=float), m: int):
    i = wp.tid()
    s = x[i]
    k = 0
    while k < m:  # uniform condition, varying carried value
        s = s * 0.5 + wp.sin(s)  # (sin runs lane by lane on the carried vector)
        k += 1
    for _j in range(m):
        s = s + wp.cos(s)
    out[i] = s


def test_loop_carried_vectors_read_lane_by_lane():
    n = 8 * 3 + 2
    x = np.linspace(-2, 2, n).astype(np.float32)
    plan = spmd_plan(carried_into_lanes.ir())
    assert plan is not None and plan.lanewise
    vec, scalar = run_both(carried_into_lanes, n, lambda: [wp.array(x), wp.zeros(n), 5], [1])
    assert_bitwise(vec, scalar)


@wp.kernel
def spin_locked(counter: wp.array(dtype=float), lock: wp.array(dtype=wp.int32), m: int):
    for _j in range(m):
        while wp.atomic_cas(lock, 0, 0, 1) == 1:
            pass
        counter[0] = counter[0] + 1.0
        wp.atomic_exch(lock, 0, 0)


def test_kernels_with_locks_stay_scalar():
    """Lane by lane, the second lane would spin for the lock the first still holds."""
    assert spmd_plan(spin_locked.ir()) is None
    counter, lock = wp.zeros(1), wp.zeros(1, dtype=wp.int32)
    wp.launch(spin_locked, 20, inputs=[counter, lock, 3])
    assert counter.numpy()[0] == 60


# Straight-line kernels with gathers and scatters (codegen/spmd_memory.py) ------------------
@wp.kernel
def springs(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), pairs: wp.array(dtype=int),
            rest: wp.array(dtype=float), ke: wp.array(dtype=float), kd: float, f: wp.array(dtype=wp.vec3)):
    s = wp.tid()
    i = pairs[2 * s]
    j = pairs[2 * s + 1]
    d = x[j] - x[i]
    length = wp.length(d)
    u = d / length
    c = ke[s] * (length - rest[s]) + kd * wp.dot(v[j] - v[i], u)
    wp.atomic_add(f, i, c * u)
    wp.atomic_sub(f, j, c * u)


def _spring_problem(n, rng):
    pairs = np.array([(i, i + d) for i in range(n) for d in (1, 2) if i + d < n], np.int32)
    x = (np.arange(n)[:, None] * np.array([0.1, 0.0, 0.0]) + 0.01 * rng.standard_normal((n, 3))).astype(np.float32)
    v = rng.standard_normal((n, 3)).astype(np.float32)
    rest = rng.uniform(0.05, 0.2, len(pairs)).astype(np.float32)
    ke = rng.uniform(1, 2, len(pairs)).astype(np.float32)
    return pairs, x, v, rest, ke


def test_gather_scatter_kernels_are_vectorised_and_bit_identical():
    """The spring kernel of benchmarks/mass_spring.py (gathers at pairs[2 s], contiguous
    reads of rest[s] and ke[s], adds into shared particles) and its adjoint, on one thread,
    against the scalar code: bitwise where each thread owns its element (ke's gradient);
    the float adds into shared particles land op by op across a group of lanes instead of
    thread by thread, an order float atomics never fix, so those agree to rounding."""
    assert spmd_plan(springs.ir()) is not None
    rng = np.random.default_rng(7)
    n = 8 * 9 + 5
    pairs, x, v, rest, ke = _spring_problem(n, rng)
    s = len(pairs)
    seed = rng.standard_normal((n, 3)).astype(np.float32)
    saved, saved_threads = wp.config.vectorize_threads, wp.config.num_threads
    out = []
    try:
        wp.config.num_threads = 1
        for vectorize in (True, False):
            wp.config.vectorize_threads = vectorize
            xa, va = wp.array(x, dtype=wp.vec3, requires_grad=True), wp.array(v, dtype=wp.vec3, requires_grad=True)
            kea, f = wp.array(ke, requires_grad=True), wp.zeros(n, dtype=wp.vec3, requires_grad=True)
            tape = wp.Tape()
            with tape:
                wp.launch(springs, s, inputs=[xa, va, wp.array(pairs.reshape(-1)), wp.array(rest), kea, 0.5, f])
            tape.backward(grads={f: wp.array(seed, dtype=wp.vec3)})
            out.append([f.numpy(), xa.grad.numpy(), va.grad.numpy(), kea.grad.numpy()])
    finally:
        wp.config.vectorize_threads, wp.config.num_threads = saved, saved_threads
    assert_bitwise(out[0][3:], out[1][3:])
    for a, b in zip(out[0][:3], out[1][:3]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5 * np.abs(b).max())
    # and the forces against numpy in float64
    d = x[pairs[:, 1]].astype(np.float64) - x[pairs[:, 0]]
    length = np.linalg.norm(d, axis=1)
    u = d / length[:, None]
    c = ke * (length - rest) + 0.5 * ((v[pairs[:, 1]] - v[pairs[:, 0]]) * u).sum(1)
    expected = np.zeros((n, 3))
    np.add.at(expected, pairs[:, 0], c[:, None] * u)
    np.add.at(expected, pairs[:, 1], -c[:, None] * u)
    np.testing.assert_allclose(out[0][0], expected, rtol=1e-4, atol=1e-4)


@wp.kernel
def shuffles(src: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat22), grid: wp.array2d(dtype=float),
             idx: wp.array(dtype=int), out: wp.array(dtype=wp.vec3), mats: wp.array(dtype=wp.mat22),
             last: wp.array(dtype=float), counts: wp.array(dtype=int)):
    i = wp.tid()
    k = idx[i]
    a = src[k] + src[i + 1]  # a gather and a read side by side, one element further on
    b = m[k] * m[i]
    g = grid[k % 3, i] + grid[i % 3, k]
    out[i] = a * g  # side by side: one vector store
    mats[k] = b  # a scatter: lanes that hit one element leave the later thread's value
    last[k % 5] = float(i)
    wp.atomic_add(counts, k % 4, 1)
    wp.atomic_add(counts, i, 2)


def test_gathers_scatters_views_and_collisions_bit_identical():
    rng = np.random.default_rng(11)
    n = 8 * 5 + 3
    src = rng.standard_normal((n + 1, 3)).astype(np.float32)
    m = rng.standard_normal((n, 2, 2)).astype(np.float32)
    grid = rng.standard_normal((3, 2 * n)).astype(np.float32)
    idx = rng.integers(0, n, n).astype(np.int32)

    def args(view):
        g = wp.array(grid)[:, ::2] if view else wp.array(grid[:, :n].copy())  # strided columns
        return [wp.array(src, dtype=wp.vec3), wp.array(m, dtype=wp.mat22), g, wp.array(idx),
                wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.mat22), wp.zeros(5), wp.zeros(n, dtype=int)]

    for view in (False, True):
        vec, scalar = run_both(shuffles, n, lambda view=view: args(view), [4, 5, 6, 7])
        assert_bitwise(vec, scalar)
    g = grid[:, ::2]
    at = np.arange(n)
    expected = (src[idx] + src[1:n + 1]) * (g[idx % 3, at] + g[at % 3, idx])[:, None]
    np.testing.assert_allclose(vec[0], expected, rtol=1e-5, atol=1e-5)
    expected_last = np.zeros(5, np.float32)
    for i in range(n):
        expected_last[idx[i] % 5] = i
    np.testing.assert_array_equal(vec[2], expected_last)
    np.testing.assert_array_equal(vec[3], 2 + np.bincount(idx % 4, minlength=n))


@wp.kernel
def gather_one(x: wp.array(dtype=wp.vec3), idx: wp.array(dtype=int), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = x[idx[i]] + x[i + 1]


def test_out_of_bounds_gather_in_a_straight_line_kernel_raises():
    n = 21
    x = wp.array(np.ones((n + 1, 3), np.float32), dtype=wp.vec3)
    idx = np.arange(n, dtype=np.int32)
    idx[13] = n + 7
    with pytest.raises(IndexError, match=str(n + 7)):
        wp.launch(gather_one, n, inputs=[x, wp.array(idx), wp.zeros(n, dtype=wp.vec3)])
    short = wp.array(np.ones((n, 3), np.float32), dtype=wp.vec3)  # x[i + 1] runs off the end
    with pytest.raises(IndexError, match=str(n)):
        wp.launch(gather_one, n, inputs=[short, wp.array(np.zeros(n, np.int32)), wp.zeros(n, dtype=wp.vec3)])


# Adjoints with AD stacks in the vector body ---------------------------------------------------
@wp.kernel
def recurrence(x: wp.array(dtype=wp.float64), k: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64),
               m: int):
    i = wp.tid()
    s = x[i]
    for j in range(m):  # (each step's s is pushed on the AD stack: the adjoint needs it)
        s = wp.sin(s) * k[j] + s * s * wp.float64(0.1)
    out[i] = s


def _recurrence_grads(x, k, m, vectorize):
    saved = wp.config.vectorize_threads
    wp.config.vectorize_threads = vectorize
    try:
        xa, ka = wp.array(x, requires_grad=True), wp.array(k, requires_grad=True)
        out = wp.zeros(len(x), dtype=wp.float64, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(recurrence, len(x), inputs=[xa, ka, out, m])
        tape.backward(grads={out: wp.array(np.ones(len(x)))})
        return out.numpy(), xa.grad.numpy(), ka.grad.numpy()
    finally:
        wp.config.vectorize_threads = saved


def test_adjoint_with_an_ad_stack_is_vectorised():
    """The adjoint of a loop kernel pushes each step's value (a vector of the lanes' values)
    and pops it in the reverse loop: the same gradients as the scalar adjoint (bitwise for
    x, each thread's own; k's are added into by every thread, in another order), and as
    central differences in float64."""
    assert spmd_plan(recurrence.adjoint_ir()) is not None
    rng = np.random.default_rng(5)
    n, m = 8 * 4 + 3, 6
    x, k = rng.uniform(-1, 1, n), rng.uniform(0.5, 1.5, m)
    vec = _recurrence_grads(x, k, m, True)
    scalar = _recurrence_grads(x, k, m, False)
    assert_bitwise(vec[:2], scalar[:2])
    np.testing.assert_allclose(vec[2], scalar[2], rtol=1e-12)

    def total(xv, kv):
        s = xv.copy()
        for j in range(m):
            s = np.sin(s) * kv[j] + s * s * 0.1
        return s.sum()

    eps = 1e-6
    for i in (0, 9, n - 1):
        d = np.zeros(n)
        d[i] = eps
        fd = (total(x + d, k) - total(x - d, k)) / (2 * eps)
        np.testing.assert_allclose(vec[1][i], fd, rtol=1e-6)
    for j in range(m):
        d = np.zeros(m)
        d[j] = eps
        fd = (total(x, k + d) - total(x, k - d)) / (2 * eps)
        np.testing.assert_allclose(vec[2][j], fd, rtol=1e-6)


# Loops whose trip count differs between lanes, masked (codegen/spmd_masked.py) ---------------------
@wp.kernel
def ragged(x: wp.array(dtype=float), start: wp.array(dtype=int), count: wp.array(dtype=int),
           out: wp.array(dtype=float), hits: wp.array(dtype=int), last: wp.array(dtype=float)):
    i = wp.tid()
    s = 0.0
    j = start[i]
    while j < start[i] + count[i]:  # reads past a lane's own range would be out of bounds
        v = x[j]
        if v > 0.5:
            wp.atomic_add(hits, j % 4, 1)
        k = 0
        while k < j % 3:  # nested, varying
            s += v * float(k + 1)
            k += 1
        last[j % 7] = v  # a store from a live lane only
        j += 1
    for m in range(count[i], 0, -2):  # varying bounds, negative step
        s -= float(m) * 0.25
    out[i] = s


def test_masked_loops_touch_only_the_live_lanes_memory():
    """Each thread loops over its own slice of x (a ragged array), some slices end at x's
    last element: a lane that has left its loop must not read further (no IndexError), and
    its stores and atomics must not happen. Bitwise against the scalar code."""
    assert spmd_plan(ragged.ir()).masked
    rng = np.random.default_rng(8)
    n = 8 * 6 + 5
    count = rng.integers(0, 9, n).astype(np.int32)
    start = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int32)
    x = rng.random(int(count.sum())).astype(np.float32)

    def args():
        return [wp.array(x), wp.array(start), wp.array(count), wp.zeros(n), wp.zeros(4, dtype=int), wp.zeros(7)]
    vec, scalar = run_both(ragged, n, args, [3, 4, 5])
    assert_bitwise(vec, scalar)
    expected = np.zeros(n)
    for i in range(n):
        for j in range(start[i], start[i] + count[i]):
            expected[i] += x[j] * sum(k + 1 for k in range(j % 3))
        expected[i] -= sum(m * 0.25 for m in range(count[i], 0, -2))
    np.testing.assert_allclose(vec[0], expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(vec[1], np.bincount(np.arange(len(x))[x > 0.5] % 4, minlength=4))


def test_out_of_bounds_in_a_masked_loop_raises_for_a_live_lane():
    n = 19
    count = np.full(n, 2, np.int32)
    start = (2 * np.arange(n)).astype(np.int32)
    count[13] = 3  # runs one past x's end... of its own slice only: x is one short at the end
    x = np.ones(2 * n, np.float32)
    start[13] = 2 * n - 2
    with pytest.raises(IndexError, match=str(2 * n)):
        wp.launch(ragged, n, inputs=[wp.array(x), wp.array(start), wp.array(count), wp.zeros(n),
                                     wp.zeros(4, dtype=int), wp.zeros(7)])


@wp.kernel
def triangles(tri: wp.array(dtype=int), x: wp.array(dtype=wp.vec2), w: wp.array(dtype=wp.vec2),
              area: wp.array(dtype=float)):
    t = wp.tid()
    a = x[tri[3 * t]]  # (index loads 3 elements apart: one wide load where all fit)
    b = x[tri[3 * t + 1]]
    c = x[tri[t * 3 + 2]]
    e = b - a
    f = c - a
    area[t] = 0.5 * (e[0] * f[1] - e[1] * f[0]) + w[2 * t][0] - w[2 * t + 1][1]  # (vec2s 2 apart)


def test_strided_loads_bit_identical_up_to_the_arrays_end():
    """Loads at k * tid() + c (k = 2, 3) read k * WIDTH elements as one vector when they lie in
    the array, element by element for the last groups (whose wide read would pass its end)."""
    plan = spmd_plan(triangles.ir())
    assert plan is not None and sorted(set(plan.lane_step.values())) == [1, 2, 3]
    rng = np.random.default_rng(4)
    n_tri, n_pts = 8 * 5 + 3, 50
    tri = rng.integers(0, n_pts, 3 * n_tri).astype(np.int32)  # (exactly 3 per triangle)
    x = rng.standard_normal((n_pts, 2)).astype(np.float32)
    w = rng.standard_normal((2 * n_tri, 2)).astype(np.float32)

    def args():
        return [wp.array(tri), wp.array(x, dtype=wp.vec2), wp.array(w, dtype=wp.vec2), wp.zeros(n_tri)]
    vec, scalar = run_both(triangles, n_tri, args, [3])
    assert_bitwise(vec, scalar)
    a, b, c = x[tri[0::3]], x[tri[1::3]], x[tri[2::3]]
    e, f = b - a, c - a
    expected = 0.5 * (e[:, 0] * f[:, 1] - e[:, 1] * f[:, 0]) + w[0::2, 0] - w[1::2, 1]
    np.testing.assert_allclose(vec[0], expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(IndexError, match=str(3 * n_tri - 1)):  # (one short: the last triangle's third)
        wp.launch(triangles, n_tri, inputs=[wp.array(tri[:-1]), wp.array(x, dtype=wp.vec2),
                                            wp.array(w, dtype=wp.vec2), wp.zeros(n_tri)])


def test_a_kernel_run_mostly_lane_by_lane_stays_scalar():
    """A stack per thread and branches that store at varying places: the vector body would be
    WIDTH copies of the scalar code (a BVH build's was 38,000 lines of LLVM IR)."""
    @wp.kernel
    def walk_stack(start: wp.array(dtype=int), next_: wp.array(dtype=int), out: wp.array(dtype=int)):
        i = wp.tid()
        if start[i] >= 0:  # (a varying branch that stores: run lane by lane, loop and all)
            node = start[i]
            steps = 0
            while node >= 0:
                if node % 2 == 0:
                    out[node] = out[node] + i
                else:
                    out[node] = out[node] - 1
                node = next_[node]
                steps += 1
            out[i] = out[i] + steps

    @wp.kernel
    def gathered(x: wp.array(dtype=float), idx: wp.array(dtype=int), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[idx[i]]

    lanewise, total = _lanewise_count(spmd_plan(gathered.ir()), gathered.ir().body)
    assert lanewise < MAX_LANEWISE_SHARE * total
    assert spmd_plan(walk_stack.ir()) is None


def test_a_kernel_whose_vector_body_would_be_large_stays_scalar(monkeypatch):
    """The vector body is (ops run once) + WIDTH x (ops run lane by lane); above
    MAX_VECTOR_BODY_OPS the kernel keeps the scalar body (a 14,000-op collision kernel's
    vector body took LLVM 10x the scalar compile time and ran slower)."""
    from weft.codegen import spmd
    fn = stencil_2d.ir()
    lanewise, total = _lanewise_count(spmd_plan(fn), fn.body)
    size = total - lanewise + WIDTH * lanewise
    assert 0 < lanewise and size <= MAX_VECTOR_BODY_OPS
    monkeypatch.setattr(spmd, "MAX_VECTOR_BODY_OPS", size)
    assert spmd_plan(fn) is not None
    monkeypatch.setattr(spmd, "MAX_VECTOR_BODY_OPS", size - 1)
    assert spmd_plan(fn) is None


@wp.kernel
def stencil_2d(img: wp.array2d(dtype=float), r: int, out: wp.array2d(dtype=float), hits: wp.array(dtype=int)):
    i, j = wp.tid()
    h, w = img.shape[0], img.shape[1]
    s = float(0.0)  # noqa: UP018 - a variable, as Warp requires
    for k in range(-r, r + 1):
        s += img[i, wp.clamp(j + k, 0, w - 1)] * wp.exp(-float(k * k)) + img[wp.clamp(i + k, 0, h - 1), j]
    if s > 3.0:
        wp.atomic_add(hits, 0, 1)
    out[i, j] = s


@wp.kernel
def rolled_3d(x: wp.array3d(dtype=wp.float64), n: int, out: wp.array3d(dtype=wp.float64)):
    i, j, k = wp.tid()
    acc = wp.float64(0.0)
    for m in range(n):
        acc += x[i, j, (k + m) % x.shape[2]] * wp.float64(i + 2 * j + 1)
    out[i, j, k] = wp.sin(acc)


def test_launches_of_several_dimensions_run_along_their_rows_in_lanes():
    # lanes run along the last dimension, the other coordinates the same in all of them; rows
    # of 37 and 19 leave a rest for the scalar loop in each row
    assert spmd_plan(stencil_2d.ir()) is not None and spmd_plan(rolled_3d.ir()) is not None
    rng = np.random.default_rng(7)
    img = rng.random((5, 37)).astype(np.float32)

    def stencil_args():
        return [wp.array(img, dtype=float), 2, wp.zeros((5, 37), dtype=float), wp.zeros(1, dtype=int)]
    vector, scalar = run_both(stencil_2d, (5, 37), stencil_args, [2, 3])
    assert_bitwise(vector, scalar)
    rows = np.clip(np.arange(5)[:, None] + np.arange(-2, 3)[None, :], 0, 4)
    cols = np.clip(np.arange(37)[:, None] + np.arange(-2, 3)[None, :], 0, 36)
    expected = (img[:, cols] * np.exp(-np.arange(-2, 3) ** 2.0)).sum(-1) + img[rows].sum(axis=1)
    np.testing.assert_allclose(vector[0], expected, rtol=1e-5)
    assert vector[1][0] == np.count_nonzero(vector[0] > 3.0)
    x = rng.random((3, 4, 19))

    def rolled_args():
        return [wp.array(x, dtype=wp.float64), 5, wp.zeros((3, 4, 19), dtype=wp.float64)]
    vector, scalar = run_both(rolled_3d, (3, 4, 19), rolled_args, [2])
    assert_bitwise(vector, scalar)
    scale = (np.arange(3)[:, None, None] + 2 * np.arange(4)[None, :, None] + 1.0)
    rolled = sum(np.roll(x, -m, axis=2) for m in range(5))
    np.testing.assert_allclose(vector[0], np.sin(rolled * scale), rtol=1e-13)
    check_adjoint(rolled_3d, (3, 4, 19), [x, 5, np.zeros((3, 4, 19))])


@wp.kernel
def channels_3d(img: wp.array3d(dtype=float), out: wp.array3d(dtype=float), hist: wp.array(dtype=int)):
    y, x, c = wp.tid()
    acc = float(0.0)  # noqa: UP018 - a variable, as Warp requires
    for dy in range(-1, 2):
        acc += img[wp.clamp(y + dy, 0, img.shape[0] - 1), x, c] * float(c + 1)
    if acc > 1.5:
        wp.atomic_add(hist, c, 1)
    out[y, x, c] = acc


@wp.kernel
def per_row_scale(a: wp.array2d(dtype=wp.vec3), s: wp.array(dtype=float), out: wp.array2d(dtype=wp.vec3)):
    i, j = wp.tid()  # (straight-line: LLVM vectorises long rows, the flat body short ones)
    out[i, j] = a[i, j] * s[i] + wp.vec3(float(j), 0.0, 1.0)


@pytest.mark.parametrize("shape", [(37, 3), (9, 1), (5, 7), (4, 15), (3, 16), (6, 5, 3), (2, 3, 1, 5)])
def test_launches_with_short_rows_run_lanes_along_the_linear_index(shape):
    """Rows shorter than FLAT_ROWS_BELOW: every coordinate varies between the lanes (the flat
    vector body), on arrays shaped like the launch (consecutive elements: one vector access
    in most groups) and on strided views and gathers (lane by lane); bit-identical to the
    scalar code, the launch size not a multiple of WIDTH."""
    assert spmd_plan(per_row_scale.ir(), flat=True) is not None and spmd_plan(per_row_scale.ir()) is None
    rng = np.random.default_rng(len(shape))
    if len(shape) == 3:
        img = rng.random(shape).astype(np.float32)
        for source in (img, np.ascontiguousarray(np.pad(img, ((0, 0), (0, 0), (0, 2))))[:, :, :shape[2]]):
            def args(source=source):
                return [wp.array(source, dtype=float), wp.zeros(shape, dtype=float), wp.zeros(shape[2], dtype=int)]
            vector, scalar = run_both(channels_3d, shape, args, [1, 2])
            assert_bitwise(vector, scalar)
            rows = np.clip(np.arange(shape[0])[:, None] + np.arange(-1, 2)[None, :], 0, shape[0] - 1)
            expected = img[rows].sum(axis=1) * (np.arange(shape[2]) + 1.0)
            np.testing.assert_allclose(vector[0], expected, rtol=1e-6)
            assert list(vector[1]) == list((expected > 1.5).sum(axis=(0, 1)))
        return
    if len(shape) == 4:
        @wp.kernel
        def four(x: wp.array4d(dtype=float), out: wp.array4d(dtype=float)):
            i, j, k, m = wp.tid()
            s = float(0.0)  # noqa: UP018
            for r in range(i + 1):  # (a trip count that varies between lanes: a masked loop)
                s += x[i, j, k, m] * float(r + j - k + m)
            out[i, j, k, m] = s
        x = rng.random(shape).astype(np.float32)
        vector, scalar = run_both(four, shape, lambda: [wp.array(x), wp.zeros(shape, dtype=float)], [1])
        assert_bitwise(vector, scalar)
        i, j, k, m = np.indices(shape)
        expected = x * ((i + 1) * (j - k + m) + i * (i + 1) / 2)
        np.testing.assert_allclose(vector[0], expected, rtol=1e-5)
        return
    a = rng.random((*shape, 3)).astype(np.float32)
    s = rng.random(shape[0]).astype(np.float32)
    padded = np.zeros((shape[0], shape[1] + 3, 3), np.float32)
    padded[:, :shape[1]] = a
    for make in (lambda: wp.array(a, dtype=wp.vec3), lambda: wp.array(padded, dtype=wp.vec3)[:, :shape[1]]):
        def args(make=make):
            return [make(), wp.array(s), wp.zeros(shape, dtype=wp.vec3)]
        vector, scalar = run_both(per_row_scale, shape, args, [2])
        assert_bitwise(vector, scalar)
        columns = np.broadcast_to(np.arange(shape[1]), shape)
        expected = a * s[:, None, None] + np.stack([columns, np.zeros(shape), np.ones(shape)], -1)
        np.testing.assert_allclose(vector[0], expected, rtol=1e-6)
    check_adjoint(rolled_3d, (3, 4, shape[1]), [rng.random((3, 4, shape[1])), 2, np.zeros((3, 4, shape[1]))])


def test_out_of_bounds_in_the_flat_vector_body_raises():
    """Indices no launch-shape guard proves (the checked flat body): the first thread out of
    bounds is reported, as in the scalar code."""
    @wp.kernel
    def shifted_rows(a: wp.array2d(dtype=float), shift: int, out: wp.array2d(dtype=float)):
        i, j = wp.tid()
        s = float(0.0)  # noqa: UP018
        for k in range(shift + 1):
            s += a[i + k, j]
        out[i + shift - shift, j] = s

    assert spmd_plan(shifted_rows.ir(), flat=True) is not None
    out = wp.zeros((6, 3), dtype=float)
    wp.launch(shifted_rows, (4, 3), [wp.ones((6, 3), dtype=float), 2, out])
    assert out.numpy()[:4].tolist() == [[3.0] * 3] * 4
    with pytest.raises(IndexError, match=r"index \(6, 0\) is out of bounds for array 'a' with shape \(6, 3\)"):
        wp.launch(shifted_rows, (6, 3), [wp.ones((6, 3), dtype=float), 2, out])


def test_the_short_rows_variant_is_compiled_for_the_first_launch_with_short_rows():
    @wp.kernel
    def offset_rows(a: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
        i, j = wp.tid()
        out[i, j] = a[i, j] + float(i)

    def args(shape):
        return [wp.ones(shape, dtype=float), wp.zeros(shape, dtype=float)]
    wp.launch(offset_rows, (2, 40), args((2, 40)))
    ck = offset_rows.compiled(offset_rows.specialization(args((2, 40))))
    assert ck.short_rows_below == FLAT_ROWS_BELOW and ck._short_rows is None
    short = args((40, 2))
    wp.launch(offset_rows, (40, 2), short)
    assert ck._short_rows is not None and ck._short_rows.short_rows_below == 0
    assert short[1].numpy()[:, 1].tolist() == [i + 1.0 for i in range(40)]
    # a recorded launch goes back to the kernel itself for long rows again
    cmd = wp.launch(offset_rows, (40, 2), short, record_cmd=True)
    assert cmd.compiled is ck._short_rows
    cmd.set_dim((2, 40))
    assert cmd.compiled is ck


@wp.kernel
def spatial_products(inertia: wp.array(dtype=wp.spatial_matrix), q: wp.array(dtype=wp.spatial_vector),
                     out: wp.array(dtype=wp.spatial_vector)):
    i = wp.tid()
    out[i] = inertia[i] * q[i]


def test_elements_wider_than_a_cache_line_keep_threads_off_lanes():
    """A 6x6 matrix per thread (144 bytes) would be gathered at that stride by SIMD lanes or
    LLVM's vectorised thread loop, several times slower than one thread after another: such
    kernels run scalar, and their optimised code has no gathers."""
    from weft.codegen.llvm import KernelCodegen
    assert KernelCodegen(spatial_products.ir(), (True, True, True)).wide_elements
    assert not KernelCodegen(nbody.ir(), (True, True, True, True)).wide_elements
    assert "gather" not in spatial_products.llvm_ir(optimized=True)
    rng = np.random.default_rng(7)
    m, v = rng.random((1000, 6, 6)).astype(np.float32), rng.random((1000, 6)).astype(np.float32)
    out = wp.zeros(1000, dtype=wp.spatial_vector)
    wp.launch(spatial_products, 1000, inputs=[wp.array(m, dtype=wp.spatial_matrix),
                                            wp.array(v, dtype=wp.spatial_vector), out])
    np.testing.assert_allclose(out.numpy(), np.einsum("nij,nj->ni", m, v), rtol=1e-5)


@wp.struct
class Body:
    x: wp.vec3
    v: wp.vec3
    m: float
    flags: int


@wp.kernel
def body_step(bodies: wp.array(dtype=Body), g: wp.vec3, dt: float):
    i = wp.tid()
    bodies[i].v = bodies[i].v + g * dt
    bodies[i].x = bodies[i].x + bodies[i].v * dt


@wp.kernel
def body_energy(bodies: wp.array(dtype=Body), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = 0.5 * bodies[i].m * wp.dot(bodies[i].v, bodies[i].v)


def test_stores_into_arrays_of_structs_keep_threads_off_lanes():
    """LLVM's vectoriser turns stores into the fields of a 32-byte struct into masked
    scatters (twice slower than scalar code): such kernels run scalar. Kernels that only
    read such structs keep the vectoriser."""
    from weft.codegen.llvm import KernelCodegen
    assert KernelCodegen(body_step.ir(), (True, True, True)).wide_elements
    assert not KernelCodegen(body_energy.ir(), (True, True)).wide_elements
    rng = np.random.default_rng(9)
    n = 1000
    records = np.zeros(n, dtype=wp.zeros(1, dtype=Body).numpy().dtype)
    records["x"], records["v"], records["m"] = rng.random((n, 3)), rng.random((n, 3)), rng.random(n)
    bodies = wp.array(records, dtype=Body)
    wp.launch(body_step, n, inputs=[bodies, wp.vec3(0.0, -9.8, 0.0), 0.01])
    v = records["v"] + np.float32(-9.8 * 0.01) * np.array([0, 1, 0], np.float32)
    np.testing.assert_allclose(bodies.numpy()["v"], v, rtol=1e-6)
    np.testing.assert_allclose(bodies.numpy()["x"], records["x"] + v * np.float32(0.01), rtol=1e-6)
    np.testing.assert_array_equal(bodies.numpy()["m"], records["m"])


# Integer division by constants and shifts run on the lanes ---------------------------------
@wp.kernel
def int_arithmetic(a: wp.array(dtype=wp.int64), b: wp.array(dtype=wp.int32), u: wp.array(dtype=wp.uint32),
                   out: wp.array2d(dtype=wp.int64), m: int):
    i = wp.tid()
    for j in range(m):
        x = a[i] + wp.int64(j)
        y = b[i] - j
        z = u[i] + wp.uint32(j)
        k = wp.int64(i % 70)  # (shifts by the width or more are defined: 0, or the sign)
        out[i, 0] = x / wp.int64(3) + x % wp.int64(-5) + x // wp.int64(7) + x // wp.int64(-2)
        out[i, 1] = wp.int64(y / 4 + y % 3 + y // -3 + y % -7)
        out[i, 2] = wp.int64(z / wp.uint32(5) + z % wp.uint32(9) + z // wp.uint32(2))
        out[i, 3] = (x >> k) + (x << k) + wp.int64((z >> wp.uint32(i % 40)) + (z << wp.uint32(3)))
        out[i, 4] = wp.int64(y >> (i % 35)) + wp.int64(-y << 2)


def test_integer_division_by_constants_and_shifts_run_on_lanes_bit_identical():
    plan = spmd_plan(int_arithmetic.ir())
    binaries = [op for op in wp.ir.walk(int_arithmetic.ir().body)
                if op.name == "binary" and op.attrs["op"] in ("div", "floordiv", "mod", "shl", "shr")]
    assert len(binaries) > 15 and not any(id(op) in plan.lanewise for op in binaries)
    rng = np.random.default_rng(4)
    n = WIDTH * 11 + 3
    a = np.concatenate([rng.integers(-2**62, 2**62, n - 3), [-2**63, 2**63 - 8, -1]]).astype(np.int64)
    b = np.concatenate([rng.integers(-2**31 + 1, 2**31 - 3, n - 3), [-2**31 + 1, -1, 0]]).astype(np.int32)
    u = rng.integers(0, 2**32 - 3, n, dtype=np.uint32)
    vec, scalar = run_both(int_arithmetic, n, lambda: [wp.array(a), wp.array(b), wp.array(u),
                                                        wp.zeros((n, 5), dtype=wp.int64), 2], [3])
    assert_bitwise(vec, scalar)
    y = b.astype(np.int64) - 1  # (the last iteration's, in C semantics)
    c_div = np.sign(y) * (np.abs(y) // 4)
    c_mod = np.sign(y) * (np.abs(y) % 3)
    np.testing.assert_array_equal(vec[0][:, 1] - (y // -3) - np.fmod(y, -7), c_div + c_mod)


# A divergent while loop: the last lanes finish in scalar code ------------------------------
@wp.kernel
def collatz(start: wp.array(dtype=wp.int64), steps: wp.array(dtype=int), peak: wp.array(dtype=wp.vec2),
            trace: wp.array(dtype=wp.int64)):
    i = wp.tid()
    n = start[i]
    count = 0
    high = wp.vec2(0.0, 0.0)
    while n != wp.int64(1):
        if n % wp.int64(2) == wp.int64(0):
            n = n / wp.int64(2)
        else:
            n = wp.int64(3) * n + wp.int64(1)
        count += 1
        high = wp.max(high, wp.vec2(float(n), float(count)))
        trace[i] = n * wp.int64(1000) + wp.int64(count)  # (a store in the body: live lanes only)
    steps[i] = count
    peak[i] = high


@wp.kernel
def newton_sqrt(x: wp.array(dtype=float), out: wp.array(dtype=float), iterations: wp.array(dtype=int)):
    i = wp.tid()
    a = x[i]
    y = a  # (the loop starts from a value its body also reads)
    it = 0
    while wp.abs(y * y - a) > 1.0e-5 * a and it < 60:
        y = 0.5 * (y + a / y)
        it += 1
    out[i] = y
    iterations[i] = it


@wp.kernel
def ticket_loop(limit: wp.array(dtype=int), tickets: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    total = 0
    while wp.atomic_add(tickets, i, 1) < limit[i]:  # (a condition with effects: never run twice)
        total += tickets[i]
    out[i] = total


def _collatz_steps(n):
    count = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        count += 1
    return count


def test_divergent_while_loops_finish_their_last_lanes_in_scalar_code_bit_identical():
    from weft.codegen.spmd_masked import has_scalar_tail
    for kernel in (collatz, newton_sqrt, ticket_loop):
        plan = spmd_plan(kernel.ir())
        assert plan is not None and plan.masked
    loops = {k.key: next(op for op in wp.ir.walk(k.ir().body) if op.name == "while")
             for k in (collatz, newton_sqrt, ticket_loop)}
    assert has_scalar_tail(loops[collatz.key], frozenset()) and has_scalar_tail(loops[newton_sqrt.key], frozenset())
    assert not has_scalar_tail(loops[ticket_loop.key], frozenset())

    n = WIDTH * 40 + 5
    start = np.arange(1, n + 1, dtype=np.int64) * 7 + 3  # (trip counts from 5 to about 250)

    def args():
        return [wp.array(start), wp.zeros(n, dtype=int), wp.zeros(n, dtype=wp.vec2), wp.zeros(n, dtype=wp.int64)]
    vec, scalar = run_both(collatz, n, args, [1, 2, 3])
    assert_bitwise(vec, scalar)
    assert vec[0].tolist() == [_collatz_steps(int(s)) for s in start]
    assert (vec[2] % 1000 == vec[0]).all() and (vec[2] // 1000 == 1).all()

    x = np.random.default_rng(5).uniform(0.01, 1e4, n).astype(np.float32)
    vec, scalar = run_both(newton_sqrt, n, lambda: [wp.array(x), wp.zeros(n), wp.zeros(n, dtype=int)], [1, 2])
    assert_bitwise(vec, scalar)
    np.testing.assert_allclose(vec[0], np.sqrt(x), rtol=2e-5)

    limit = (np.arange(n) * 37 % 29).astype(np.int32)
    vec, scalar = run_both(ticket_loop, n, lambda: [wp.array(limit), wp.zeros(n, dtype=int), wp.zeros(n, dtype=int)],
                           [1, 2])
    assert_bitwise(vec, scalar)
    np.testing.assert_array_equal(vec[0], limit + 1)
    np.testing.assert_array_equal(vec[1], limit * (limit + 1) // 2)
