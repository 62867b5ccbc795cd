"""Privatised scatter-adds (transforms/scatter.py, runtime/scatter.py): an array a kernel
only adds into gets a private copy per chunk of a parallel launch, summed afterwards. The
results are those of the atomic and the serial launch; arrays that are read too, aliased,
or much larger than the launch keep their atomics."""

import numpy as np
import pytest

import weft as wp
from weft.runtime import scatter, threads
from weft.transforms.scatter import scatter_params


@pytest.fixture(params=["native pool", "python pool"])
def two_threads(request):
    saved = wp.config.num_threads, wp.config.parallel_threshold, threads._pool
    wp.config.num_threads, wp.config.parallel_threshold = 2, 1
    if request.param == "python pool":
        threads._pool = threads.ThreadPool(2)
    try:
        yield
    finally:
        wp.config.num_threads, wp.config.parallel_threshold, threads._pool = saved


@wp.func
def push(f: wp.array(dtype=wp.vec3), i: int, x: wp.vec3):
    wp.atomic_add(f, i, x)


@wp.kernel
def springs(x: wp.array(dtype=wp.vec3), pairs: wp.array(dtype=int), f: wp.array(dtype=wp.vec3),
            counts: wp.array(dtype=int)):
    s = wp.tid()
    i = pairs[2 * s]
    j = pairs[2 * s + 1]
    d = x[j] - x[i]
    push(f, i, d)  # (through a func's argument)
    wp.atomic_sub(f, j, d)
    wp.atomic_add(counts, i, 1)


@wp.kernel
def add_and_read(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    if i >= 5:  # (with out = a: no thread reads an element that the others add into)
        wp.atomic_add(out, i % 5, a[i])


@wp.kernel
def reads_its_target(out: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, i % 5, out[0] * 0.0 + 1.0)


@wp.kernel
def uses_the_old_value(out: wp.array(dtype=int), old: wp.array(dtype=int)):
    i = wp.tid()
    old[i] = wp.atomic_add(out, 0, 1)


@wp.kernel
def adds_into_parts(f: wp.array(dtype=wp.vec3), w: wp.array(dtype=float)):
    i = wp.tid()
    f[i % 7].y += w[i]  # (an atomic add into a `component` view of f)
    f[i % 5][2] -= 1.0


@wp.kernel
def adds_into_own_parts(f: wp.array(dtype=wp.vec3), w: wp.array(dtype=float)):
    i = wp.tid()
    f[i].y += w[i]  # (each thread's own element: uncontended atomics beat the copies here)


def test_which_parameters_are_only_added_into():
    assert scatter_params(springs.ir()) == (2, 3)  # f (also through the func), counts
    assert scatter_params(adds_into_parts.ir()) == (0,)
    assert scatter_params(adds_into_own_parts.ir()) == ()
    assert scatter_params(add_and_read.ir()) == (1,)
    assert scatter_params(reads_its_target.ir()) == ()
    assert scatter_params(uses_the_old_value.ir()) == ()  # (its result is read)


def _problem(n_particles, n_springs, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_particles, 3)).astype(np.float32)
    pairs = rng.integers(0, n_particles, (n_springs, 2)).astype(np.int32)
    return x, pairs


def _expected(x, pairs):
    d = (x[pairs[:, 1]].astype(np.float64) - x[pairs[:, 0]])
    f = np.zeros(x.shape)
    np.add.at(f, pairs[:, 0], d)
    np.add.at(f, pairs[:, 1], -d)
    return f, np.bincount(pairs[:, 0], minlength=len(x))


def test_privatised_scatter_gives_the_sums(two_threads):
    x, pairs = _problem(1000, 50_000)
    f = wp.zeros(1000, dtype=wp.vec3)
    counts = wp.zeros(1000, dtype=int)
    args = [wp.array(x, dtype=wp.vec3), wp.array(pairs.reshape(-1)), f, counts]
    calls = []
    original = scatter.PrivateLaunch.run
    scatter.PrivateLaunch.run = lambda self, *a: (calls.append(self.params), original(self, *a))[1]
    try:
        for _ in range(3):  # (the copies are reused: each launch starts them from zero)
            wp.launch(springs, len(pairs), inputs=args)
    finally:
        scatter.PrivateLaunch.run = original
    assert calls == [[2, 3]] * 3 and threads.get_pool().size >= 2
    ef, ec = _expected(x, pairs)
    np.testing.assert_allclose(f.numpy(), 3 * ef, rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(counts.numpy(), 3 * ec)


def test_privatised_adds_into_parts_of_elements(two_threads):
    n = 50_000
    f = wp.zeros(7, dtype=wp.vec3)
    for _ in range(3):
        wp.launch(adds_into_parts, n, inputs=[f, wp.ones(n, dtype=float)])
    expected = np.zeros((7, 3))
    expected[:, 1] = 3 * np.bincount(np.arange(n) % 7)
    expected[:5, 2] = -3 * np.bincount(np.arange(n) % 5)
    np.testing.assert_array_equal(f.numpy(), expected)


def test_privatised_into_a_strided_view(two_threads):
    x, pairs = _problem(500, 20_000, seed=1)
    f = wp.zeros((500, 2), dtype=wp.vec3)
    counts = wp.zeros(1000, dtype=int)
    column = f[:, 1]
    wp.launch(springs, len(pairs), inputs=[wp.array(x, dtype=wp.vec3), wp.array(pairs.reshape(-1)),
                                           column, counts[::2]])
    ef, ec = _expected(x, pairs)
    np.testing.assert_allclose(f.numpy()[:, 1], ef, rtol=1e-4, atol=1e-3)
    assert not f.numpy()[:, 0].any()
    np.testing.assert_array_equal(counts.numpy()[::2], ec)
    assert not counts.numpy()[1::2].any()


@wp.kernel
def scatter_kinds(idx: wp.array(dtype=int), w: wp.array(dtype=wp.float64), f: wp.array(dtype=wp.vec3d),
                  n: wp.array(dtype=wp.int64), u: wp.array(dtype=wp.uint32), h: wp.array(dtype=wp.float32)):
    t = wp.tid()
    i = idx[t]
    wp.atomic_add(f, i, wp.vec3d(w[t], 2.0 * w[t], -w[t]))
    wp.atomic_add(n, i, wp.int64(t))
    wp.atomic_add(u, i, wp.uint32(3))
    wp.atomic_add(h, i, wp.float32(w[t]))


def test_native_reduction_adds_as_numpy_does(two_threads, monkeypatch):
    """The copies are added by a native loop (float32/64, 32/64-bit integers, contiguous;
    numpy for the rest, here a strided view): bit for bit what numpy's adds give."""
    rng = np.random.default_rng(3)
    idx = wp.array(rng.integers(0, 800, 6000).astype(np.int32))
    w = wp.array(rng.standard_normal(6000))
    by_numpy = []
    original = scatter.PrivateLaunch.run

    def run(self, pool, *args):
        original(self, pool, *args)
        by_numpy.append([d.dtype for d, _ in (self.targets if self.job is None else self.job.others)])
    monkeypatch.setattr(scatter.PrivateLaunch, "run", run)
    results = []
    for native_kinds in (scatter._ADD_KINDS, {}):  # (no kinds: numpy adds every copy)
        monkeypatch.setattr(scatter, "_ADD_KINDS", native_kinds)
        out = [wp.zeros(800, dtype=wp.vec3d), wp.zeros(800, dtype=wp.int64), wp.zeros(800, dtype=wp.uint32),
               wp.zeros(1600, dtype=wp.float32)[::2]]
        for _ in range(2):  # (the second launch finds the copies zeroed by the first)
            wp.launch(scatter_kinds, 6000, inputs=[idx, w, *out])
        results.append([a.numpy() for a in out])
        scatter_kinds.forget_compiled()  # (a new compiled kernel: new decisions and jobs)
    if threads.get_pool().__class__.__name__ == "NativePool":
        assert by_numpy[:2] == [[np.float32]] * 2
    assert len(by_numpy[-1]) == 4
    for native, numpy_sum in zip(*results):
        np.testing.assert_array_equal(native, numpy_sum)
    np.testing.assert_array_equal(results[0][2], 2 * 3 * np.bincount(idx.numpy(), minlength=800))


def test_aliased_or_large_targets_stay_atomic(two_threads):
    a = wp.array(np.ones(10_000, np.float32))
    out = wp.zeros(5, dtype=float)
    ck = add_and_read.compiled((True, True))
    assert scatter._privatised(ck, ck.pack([a, out]), 10_000) == [1]
    assert scatter._privatised(ck, ck.pack([a, a]), 10_000) == []  # (out is a)
    big = wp.zeros(100_000, dtype=float)
    assert scatter._privatised(ck, ck.pack([a, big]), 10_000) == []  # (10x the launch)
    # aliased: atomics, the serial result
    wp.launch(add_and_read, 10_000, inputs=[a, a])
    np.testing.assert_allclose(a.numpy()[:5], 1 + 1999, rtol=0)


def test_null_arrays_and_gradients_in_the_overlap_check(two_threads):
    a = wp.array(np.ones(10_000, np.float32), requires_grad=True)
    out = wp.zeros(5, dtype=float)
    ck = add_and_read.compiled((True, True))
    assert scatter._privatised(ck, ck.pack([a, out]), 10_000) == [1]
    # a kernel that never reads gradients through descriptors (no array_grad: every kernel
    # but adjoints of arrays held in structs) touches no gradient memory: it does not count
    assert not ck.reads_grad_pointers
    assert scatter._privatised(ck, ck.pack([a, a.grad[:5]]), 10_000) == [1]
    ck.reads_grad_pointers = True  # (as such an adjoint would): then it does
    try:
        assert scatter._privatised(ck, ck.pack([a, a.grad[:5]]), 10_000) == []  # (a's gradient)
    finally:
        ck.reads_grad_pointers = False
    assert scatter._privatised(ck, ck.pack([None, out]), 10_000) == [1]  # (a null array)
