"""Vectors and matrices indexed at run time in loops live in a buffer (composite_memory.py):
the same numbers as numpy (forward) and as float64 finite differences (adjoints), index
errors as before, and webs whose values overlap left as values."""

import importlib.util
import sys

import numpy as np
import pytest

import weft as wp
from tests.autodiff.helpers import check_adjoint
from weft.codegen.spmd import spmd_plan
from weft.ir.core import walk
from weft.ir.verify import verify
from weft.transforms.composite_memory import composites_in_memory

vec8d = wp.types.vector(length=8, dtype=wp.float64)
vec16d = wp.types.vector(length=16, dtype=wp.float64)
mat44d = wp.types.matrix(shape=(4, 4), dtype=wp.float64)


@wp.kernel
def online_softmax(q: wp.array2d(dtype=wp.float64), k: wp.array2d(dtype=wp.float64),
                   v: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64)):
    # (attention with a running maximum: the accumulator is rescaled and updated at run-time
    # indices in a loop)
    i = wp.tid()
    acc = vec8d()
    m = wp.float64(-1e30)
    s = wp.float64(0.0)
    for j in range(k.shape[0]):
        dot = wp.float64(0.0)
        for d in range(8):
            dot += q[i, d] * k[j, d]
        mn = wp.max(m, dot)
        c = wp.exp(m - mn)
        p = wp.exp(dot - mn)
        s = s * c + p
        for d in range(8):
            acc[d] = acc[d] * c + p * v[j, d]
        m = mn
    for d in range(8):
        out[i, d] = acc[d] / s


def softmax_attention(q, k, v):
    w = np.exp(q @ k.T - (q @ k.T).max(axis=1, keepdims=True))
    return (w / w.sum(axis=1, keepdims=True)) @ v


def test_attention_accumulator_matches_numpy_and_finite_differences():
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(5, 8)), rng.normal(size=(6, 8)), rng.normal(size=(6, 8))
    out = wp.zeros((5, 8), dtype=wp.float64)
    wp.launch(online_softmax, 5, [wp.array(q, dtype=wp.float64), wp.array(k, dtype=wp.float64),
                                  wp.array(v, dtype=wp.float64), out])
    np.testing.assert_allclose(out.numpy(), softmax_attention(q, k, v), rtol=1e-12)
    check_adjoint(online_softmax, 5, [q, k, v, np.zeros((5, 8))])


@wp.kernel
def histogram_rows(x: wp.array2d(dtype=wp.float64), bins: wp.array2d(dtype=wp.int32),
                   out: wp.array2d(dtype=wp.float64)):
    # updates at data-dependent indices, in a branch, with a static write between them
    i = wp.tid()
    h = vec16d()
    for j in range(x.shape[1]):
        b = bins[i, j]
        if x[i, j] > 0.0:
            h[b] += x[i, j] * x[i, j]
        else:
            h[b] -= 0.5 * x[i, j]
        h[0] = h[0] + 1.0
    for d in range(16):
        out[i, d] = h[d]


def test_data_dependent_updates_in_branches():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(19, 40))
    bins = rng.integers(0, 16, size=(19, 40)).astype(np.int32)
    expected = np.zeros((19, 16))
    for i in range(19):
        for j in range(40):
            v = x[i, j]
            expected[i, bins[i, j]] += v * v if v > 0 else -0.5 * v
            expected[i, 0] += 1.0
    out = wp.zeros((19, 16), dtype=wp.float64)
    wp.launch(histogram_rows, 19, [wp.array(x, dtype=wp.float64), wp.array(bins, dtype=wp.int32), out])
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-13)
    check_adjoint(histogram_rows, 19, [x[:, :12].copy(), bins[:, :12].copy(), np.zeros((19, 16))])


@wp.func
def bubble_pass(v: vec8d, n: int) -> vec8d:
    for d in range(n - 1):
        if v[d] > v[d + 1]:
            t = v[d]
            v[d] = v[d + 1]
            v[d + 1] = t
    return v


@wp.kernel
def sort_rows(x: wp.array(dtype=vec8d), out: wp.array(dtype=vec8d)):
    # a func's argument updated in place, passes repeated in a while loop
    i = wp.tid()
    v = x[i]
    n = 8
    while n > 1:
        v = bubble_pass(v, n)
        n -= 1
    out[i] = v


def test_func_argument_and_while_loop():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(19, 8))
    out = wp.zeros(19, dtype=vec8d)
    wp.launch(sort_rows, 19, [wp.array(x, dtype=vec8d), out])
    np.testing.assert_array_equal(out.numpy(), np.sort(x, axis=1))
    # (a permutation of the inputs: each output's gradient is the seed of where it went)
    check_adjoint(sort_rows, 19, [(x, vec8d), (np.zeros((19, 8)), vec8d)])


@wp.kernel
def matrix_power_steps(a: wp.array(dtype=mat44d), steps: int, out: wp.array(dtype=mat44d)):
    # a matrix indexed by (row, column) at run time; `p` and `q` swap roles each step
    i = wp.tid()
    p = mat44d()
    for r in range(4):
        p[r, r] = wp.float64(1.0)
    for _ in range(steps):
        q = mat44d()
        for r in range(4):
            for c in range(4):
                for k in range(4):
                    q[r, c] += p[r, k] * a[i][k, c]
        p = q
    out[i] = p


def test_matrix_indices_and_two_variables():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 4, 4)) * 0.5
    out = wp.zeros(3, dtype=mat44d)
    wp.launch(matrix_power_steps, 3, [wp.array(a, dtype=mat44d), 3, out])
    np.testing.assert_allclose(out.numpy(), np.stack([np.linalg.matrix_power(m, 3) for m in a]), rtol=1e-12)
    check_adjoint(matrix_power_steps, 3, [(a, mat44d), 3, (np.zeros((3, 4, 4)), mat44d)])


@wp.kernel
def prefix_with_old_reads(x: wp.array(dtype=vec8d), out: wp.array(dtype=vec8d)):
    # `old` is read after `new` (its own web) is written, and `new` starts as a copy of `old`:
    # the copy must not share old's buffer
    i = wp.tid()
    old = x[i]
    new = old
    for d in range(1, 8):
        new[d] = new[d - 1] + old[d]
    out[i] = new - old


def test_copies_keep_their_own_values():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(5, 8))
    out = wp.zeros(5, dtype=vec8d)
    wp.launch(prefix_with_old_reads, 5, [wp.array(x, dtype=vec8d), out])
    np.testing.assert_allclose(out.numpy(), np.cumsum(x, axis=1) - x, rtol=1e-12, atol=1e-15)


@wp.kernel
def out_of_range(x: wp.array(dtype=vec8d), k: int, out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    v = x[i]
    s = wp.float64(0.0)
    for j in range(3):
        v[j + k] = wp.float64(j)
        s += v[j + k]
    out[i] = s


@wp.kernel
def out_of_range_per_thread(x: wp.array(dtype=vec8d), k: wp.array(dtype=int), out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    v = x[i]
    s = wp.float64(0.0)
    for j in range(3):
        v[j + k[i]] = wp.float64(j)
        s += v[j + k[i]]
    out[i] = s


@pytest.mark.parametrize("n", [2, 21])  # (the scalar body only; the vector body too)
def test_index_errors_name_the_component(n):
    x = wp.zeros(n, dtype=vec8d)
    out = wp.zeros(n, dtype=wp.float64)
    wp.launch(out_of_range, n, [x, 5, out])
    np.testing.assert_array_equal(out.numpy(), [3.0] * n)
    with pytest.raises(IndexError, match="index 8 is out of bounds for .*component"):
        wp.launch(out_of_range, n, [x, 6, out])
    ks = np.arange(n, dtype=np.int32) % 6
    wp.launch(out_of_range_per_thread, n, [x, wp.array(ks, dtype=int), out])
    np.testing.assert_array_equal(out.numpy(), [3.0] * n)
    ks[n // 2] = 7
    with pytest.raises(IndexError, match="index (8|9) is out of bounds for .*component"):
        wp.launch(out_of_range_per_thread, n, [x, wp.array(ks, dtype=int), out])


def moved_ops(kernel, adjoint=False):
    fn = kernel.adjoint_ir(frozenset()) if adjoint else kernel.ir()
    moved = composites_in_memory(fn)
    verify(moved)
    return [op.name for op in walk(moved.body)], moved is fn


@pytest.mark.parametrize("kernel", [online_softmax, histogram_rows, sort_rows, matrix_power_steps])
def test_webs_move_in_forward_and_adjoint_kernels(kernel):
    for adjoint in (False, True):
        names, unchanged = moved_ops(kernel, adjoint)
        assert not unchanged and "local_array" in names and "insert_dyn" not in names, (kernel.key, adjoint)


def test_values_live_at_once_get_buffers_of_their_own():
    # old and new are live at once: two buffers, new's a copy of old's
    names, _ = moved_ops(prefix_with_old_reads)
    assert names.count("local_array") == 2 and "insert_dyn" not in names
    # p and q (matrix_power_steps): the loop's p is q's copy, not q's buffer
    names, _ = moved_ops(matrix_power_steps)
    assert names.count("local_array") == 2


@wp.kernel
def loop_free_or_read_once(x: wp.array(dtype=wp.mat33), y: wp.array(dtype=vec8d), k: wp.array(dtype=int),
                           out: wp.array(dtype=float)):
    i = wp.tid()
    b = y[i]
    b[k[i]] = wp.float64(2.0)  # (no loop)
    t = float(b[k[i] + 1])
    for r in range(3):
        t += x[i][r, r]  # (read once where it is loaded)
    out[i] = t


def test_loop_free_or_read_once_webs_unchanged():
    names, unchanged = moved_ops(loop_free_or_read_once)
    assert unchanged and names.count("insert_dyn") == 1 and names.count("extract_dyn") == 2


# Differential checks: the same kernels compiled with the pass off give the same bits -------
@wp.func
def scaled_prefix(v: vec8d, upto: int) -> vec8d:
    for d in range(1, 8):
        if d > upto:
            return v
        v[d] = v[d] + 0.5 * v[d - 1]
    return v


@wp.kernel
def control_flow_mix(x: wp.array(dtype=vec8d), k: wp.array(dtype=wp.int32), out: wp.array(dtype=vec8d),
                     count: wp.array(dtype=wp.float64)):
    i = wp.tid()
    a = x[i]
    b = vec8d()
    steps = wp.float64(0.0)
    for j in range(12):
        d = (j * 3 + k[i]) % 8
        if a[d] < -1.0:
            continue
        if a[d] > 2.5:
            break
        if j % 4 == 3:
            a, b = b, a  # (two variables trade buffers)
        elif j % 5 == 4:
            b = vec8d()  # (a reset while a is live)
        a[d] = a[d] * 0.75 + b[(d + 1) % 8]
        b[d] += a[(d + 3) % 8]
        steps += 1.0
    n = int(0)  # noqa: UP018 - a variable, as Warp requires
    while n < 8 and a[n] < 3.0:
        a[n] += 0.25 * wp.float64(n)
        n += 1
    a = scaled_prefix(a, k[i])
    out[i] = a + b
    count[i] = steps + wp.float64(n)


def _run_both(kernel, make_args, dim, monkeypatch, seed_index=None):
    """Launch `kernel` with the pass on, then off (fresh arguments, no kernel cache); each
    time the final arrays, and with `seed_index` also the gradients of every float array
    from a Tape whose seed is ones on that argument."""
    from weft.codegen.llvm import KernelCodegen
    results = []
    monkeypatch.setattr(wp.config, "cache_kernels", False)
    for keep in (True, False):
        monkeypatch.setattr(KernelCodegen, "keep_indexed_composites_in_memory", keep)
        kernel.forget_compiled()
        args = make_args()
        if seed_index is None:
            wp.launch(kernel, dim, args)
            results.append([a.numpy().copy() for a in args if isinstance(a, wp.array)])
            continue
        floats = [a for a in args if isinstance(a, wp.array) and a.dtype != wp.int32]
        for a in floats:
            a.requires_grad = True
        with wp.Tape() as tape:
            wp.launch(kernel, dim, args)
        tape.backward(grads={args[seed_index]: wp.array(np.ones(args[seed_index].shape + (8,)),
                                                        dtype=args[seed_index].dtype)})
        results.append([a.numpy().copy() for a in floats] + [a.grad.numpy().copy() for a in floats])
    kernel.forget_compiled()
    return results


def test_control_flow_same_bits_as_values(monkeypatch):
    rng = np.random.default_rng(5)
    xs = rng.normal(size=(64, 8)) * 1.5
    ks = rng.integers(0, 8, size=64).astype(np.int32)

    def make_args():
        return [wp.array(xs, dtype=vec8d), wp.array(ks, dtype=wp.int32), wp.zeros(64, dtype=vec8d),
                wp.zeros(64, dtype=wp.float64)]
    moved, values = _run_both(control_flow_mix, make_args, 64, monkeypatch)
    for m, v in zip(moved, values):
        np.testing.assert_array_equal(m, v)
    names, unchanged = moved_ops(control_flow_mix)
    assert not unchanged and "insert_dyn" not in names


def test_control_flow_gradients():
    rng = np.random.default_rng(6)
    xs = rng.normal(size=(17, 8)) * 1.5
    ks = rng.integers(0, 8, size=17).astype(np.int32)
    check_adjoint(control_flow_mix, 17, [(xs, vec8d), ks, (np.zeros((17, 8)), vec8d), np.zeros(17)])


@pytest.mark.parametrize("kernel", [online_softmax, histogram_rows, control_flow_mix, out_of_range_per_thread])
def test_buffers_run_in_the_vector_body(kernel):
    # (spmd_buffers.py: the threads run on SIMD lanes, each lane's values in the buffer)
    plan = spmd_plan(composites_in_memory(kernel.ir()))
    assert plan is not None and plan.buffer_ops


# Random programs: the same bits with the pass on and off ------------------------------------
def _vector_program(rng) -> str:
    """A kernel over three vec8d locals updated at run-time indices in a loop: copies,
    swaps, resets, branches on lane-varying values, an inner loop, a while loop, a func
    that updates its argument, whole-vector arithmetic, and an occasional break."""
    names = ["a", "b", "c"]
    indices = ["j % 8", "(j + 3) % 8", "7 - j % 8", "k[i] % 8", "(k[i] + j) % 8",
               "int(wp.abs({v}[j % 8]) * 3.0) % 8"]
    lines = []
    for _ in range(int(rng.integers(4, 9))):
        v, w = rng.choice(names), rng.choice(names)
        p, q = (str(rng.choice(indices)).format(v=rng.choice(names)) for _ in range(2))
        kind = int(rng.integers(0, 11))
        if kind == 0:
            lines.append(f"{v}[{p}] = {w}[{q}] * 0.5 + 1.0")
        elif kind == 1:
            lines.append(f"{v}[{p}] += {w}[{q}]")
        elif kind == 2 and v != w:
            lines.append(f"{v} = {w}")
        elif kind == 3 and v != w:
            lines.append(f"{v}, {w} = {w}, {v}")
        elif kind == 4:
            lines.append(f"{v} = vec8d()")
        elif kind == 5:
            lines += [f"if {v}[{p}] > {w}[{q}]:", f"    {v}[{p}] = {v}[{p}] - 0.25 * {w}[{q}]",
                      "else:", f"    {w}[{q}] -= 1.0"]
        elif kind == 6:
            lines.append(f"{v} = {v} * wp.float64(0.9) + {w} * wp.float64(0.1)")
        elif kind == 7:
            lines += ["for t in range(3):", f"    {v}[(t + j) % 8] += {w}[t] * wp.float64(0.5)"]
        elif kind == 8:
            lines += [f"if {v}[{p}] > 40.0:", "    break"]
        elif kind == 9:
            lines.append(f"{v} = shifted({w}, {p})")
        else:
            lines += ["n = int(j % 3)", f"while n < 8 and {v}[n] < 2.0:", f"    {v}[n] += {w}[7 - n]", "    n += 2"]
    body = "\n".join("        " + line for line in lines)
    return f"""import weft as wp

vec8d = wp.types.vector(length=8, dtype=wp.float64)


@wp.func
def shifted(v: vec8d, s: int) -> vec8d:
    for d in range(s % 4):
        v[(d + s) % 8] = v[d] * wp.float64(0.75)
    return v


@wp.kernel
def k_random(x: wp.array(dtype=vec8d), y: wp.array(dtype=vec8d), k: wp.array(dtype=int), m: int,
             out: wp.array(dtype=vec8d)):
    i = wp.tid()
    a = x[i]
    b = y[i]
    c = vec8d()
    for j in range(m):
{body}
    out[i] = a + b * wp.float64(2.0) + c * wp.float64(3.0)
"""


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_same_bits_as_values(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    source = _vector_program(rng)
    path = tmp_path / f"composite_memory_random_{seed}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    n = 21
    xs, ys = rng.normal(size=(n, 8)), rng.normal(size=(n, 8))
    ks = rng.integers(0, 100, size=n).astype(np.int32)

    def make_args():
        return [wp.array(xs, dtype=vec8d), wp.array(ys, dtype=vec8d), wp.array(ks, dtype=int), 11,
                wp.zeros(n, dtype=vec8d)]
    moved, values = _run_both(module.k_random, make_args, n, monkeypatch)
    np.testing.assert_array_equal(moved[-1], values[-1], err_msg=source)
    moved, values = _run_both(module.k_random, make_args, n, monkeypatch, seed_index=4)
    for m, v in zip(moved, values):  # (the outputs, then the gradients of x, y and out)
        np.testing.assert_array_equal(m, v, err_msg=source)
