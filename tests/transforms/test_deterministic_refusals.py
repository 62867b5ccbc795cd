"""Deterministic mode's refusals (transforms/deterministic.py): kernels Warp's deterministic
mode cannot keep bit-exact raise WarpDeterminismError when they compile or when their
adjoint is built; the same kernels compile under NOT_GUARANTEED."""

import numpy as np
import pytest

import weft as wp

RUN_TO_RUN = wp.DeterministicMode.RUN_TO_RUN
DETERMINISTIC = {"deterministic": RUN_TO_RUN}


@wp.func
def _store_zero(a: wp.array(dtype=wp.int32), i: int):
    a[i] = 0


@wp.kernel(module="unique", module_options=DETERMINISTIC)
def scatter_then_read(out: wp.array2d(dtype=float), seen: wp.array(dtype=float)):
    wp.atomic_add(out, 0, 0, 1.0)
    row = out[1]
    seen[0] = row[0]


@wp.kernel(module="unique", module_options=DETERMINISTIC)
def store_then_scatter(out: wp.array(dtype=float)):
    out[1] = 5.0
    out[0] += 1.0


@wp.kernel(module="unique", module_options=DETERMINISTIC)
def counter_written_by_helper(counter: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.int32)):
    slot = wp.atomic_add(counter, 0, 1)
    _store_zero(counter, 0)
    out[slot] = slot


@wp.kernel(module="unique", module_options=DETERMINISTIC)
def counter_and_int_atomic(counter: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.int32)):
    slot = wp.atomic_add(counter, 0, 1)
    wp.atomic_add(counter, 1, 1)
    out[slot] = slot


@wp.kernel(module="unique", module_options=DETERMINISTIC)
def add_and_max(out: wp.array(dtype=float), x: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(out, 0, x[i])
    wp.atomic_max(out, 1, x[i])


@wp.kernel(module="unique", module_options=DETERMINISTIC)
def float_slot(counter: wp.array(dtype=float), out: wp.array(dtype=float)):
    slot = wp.atomic_add(counter, 0, 1.0)
    out[int(slot)] = 1.0


@wp.kernel(module="unique", module_options=DETERMINISTIC)
def min_slot(counter: wp.array(dtype=wp.int32), out: wp.array(dtype=wp.int32)):
    slot = wp.atomic_min(counter, 0, wp.tid())
    out[wp.tid()] = slot


@pytest.mark.parametrize("kernel, words", [
    (scatter_then_read, "array 'out' receives deterministic atomic updates and is also read directly"),
    (store_then_scatter, "array 'out' receives deterministic atomic updates and is also written directly"),
    (counter_written_by_helper, "array 'counter' receives deterministic atomic updates and is also written"),
    (counter_and_int_atomic, "used both to assign slots"),
    (add_and_max, "receives both 'add' and 'max' atomic operations"),
    (float_slot, "not an int32 array"),
    (min_slot, "return value of atomic_add"),
])
def test_refused_kernels_name_the_array_and_line(kernel, words):
    with pytest.raises(wp.WarpDeterminismError, match=words) as err:
        wp.load_module(module=kernel.module)
    assert "test_deterministic_refusals.py:" in str(err.value)  # the offending line of the kernel
    assert isinstance(err.value, RuntimeError)  # (Warp's base class)


def test_refused_kernels_compile_without_deterministic_mode():
    wp.set_module_options({"deterministic": wp.DeterministicMode.NOT_GUARANTEED}, module=scatter_then_read.module)
    try:
        out, seen = wp.zeros((2, 2)), wp.zeros(1)
        out.fill_(3.0)
        wp.launch(scatter_then_read, 1, [out, seen])
        assert out.numpy()[0, 0] == 4.0 and seen.numpy()[0] == 3.0
    finally:
        wp.set_module_options(DETERMINISTIC, module=scatter_then_read.module)


@wp.kernel(module="unique", module_options=DETERMINISTIC)
def compact(data: wp.array(dtype=float), counter: wp.array(dtype=wp.int32), out: wp.array(dtype=float),
            hist: wp.array(dtype=float), counts: wp.array(dtype=wp.int32)):
    i = wp.tid()
    if data[i] > 0.0:
        slot = wp.atomic_add(counter, 0, 1)
        out[slot] = data[i]
    hist[i % 4] += data[i]
    wp.atomic_add(counts, i % 4, 1)  # (an int atomic on an array that is not a counter)


def test_accepted_kernel_is_bit_exact_and_in_thread_order():
    rng = np.random.default_rng(7)
    data_np = rng.standard_normal(4096).astype(np.float32)
    data = wp.array(data_np)
    results = []
    for _ in range(3):
        counter, out = wp.zeros(1, dtype=wp.int32), wp.zeros(4096)
        hist, counts = wp.zeros(4), wp.zeros(4, dtype=wp.int32)
        wp.launch(compact, data.size, [data, counter, out, hist, counts])
        results.append((out.numpy().copy(), hist.numpy().copy()))
        n = int(counter.numpy()[0])
        np.testing.assert_array_equal(out.numpy()[:n], data_np[data_np > 0])  # slots in thread order
        np.testing.assert_array_equal(counts.numpy(), [1024] * 4)
    for out_np, hist_np in results[1:]:
        assert out_np.tobytes() == results[0][0].tobytes() and hist_np.tobytes() == results[0][1].tobytes()
    expected = [np.cumsum(data_np[k::4], dtype=np.float32)[-1] for k in range(4)]
    np.testing.assert_array_equal(results[0][1], expected)  # accumulated in thread order


@wp.kernel(module="unique", module_options=DETERMINISTIC)
def counter_square(data: wp.array(dtype=float), counter: wp.array(dtype=wp.int32), out: wp.array(dtype=float)):
    i = wp.tid()
    slot = wp.atomic_add(counter, 0, 1)
    out[slot] = data[i] * data[i]


def test_adjoint_of_a_slot_counter_is_refused_naming_the_kernel():
    data = wp.array(np.arange(8, dtype=np.float32), requires_grad=True)
    counter, out = wp.zeros(1, dtype=wp.int32), wp.zeros(8, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(counter_square, 8, [data, counter, out])
    np.testing.assert_array_equal(out.numpy(), np.arange(8) ** 2)  # the forward runs
    with pytest.raises(wp.WarpDeterminismError, match="cannot differentiate kernel 'counter_square' automatically"):
        tape.backward(grads={out: wp.ones(8)})
    with pytest.raises(wp.WarpDeterminismError, match="automatically"):  # a user's adjoint launch too
        wp.launch(counter_square, 8, [data, counter, out], adj_inputs=[data.grad, None, wp.ones(8)],
                  adj_outputs=[], adjoint=True)


@wp.func
def _reserve(counter: wp.array(dtype=wp.int32), slots: wp.array(dtype=wp.int32), i: int):
    slot = wp.atomic_add(counter, 0, 1)
    slots[i] = slot
    return slot


@wp.func_replay(_reserve)
def _replay_reserve(counter: wp.array(dtype=wp.int32), slots: wp.array(dtype=wp.int32), i: int):
    return slots[i]


@wp.kernel(module="unique", module_options=DETERMINISTIC)
def counter_with_replay(data: wp.array(dtype=float), counter: wp.array(dtype=wp.int32),
                        slots: wp.array(dtype=wp.int32), out: wp.array(dtype=float)):
    i = wp.tid()
    out[_reserve(counter, slots, i)] = data[i] * data[i]


def test_a_counter_in_a_func_with_a_replay_differentiates():
    x = np.linspace(0.5, 2.0, 16).astype(np.float32)
    data = wp.array(x, requires_grad=True)
    counter, slots = wp.zeros(1, dtype=wp.int32), wp.zeros(16, dtype=wp.int32)
    out = wp.zeros(16, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(counter_with_replay, 16, [data, counter, slots, out])
    seed = np.arange(1, 17, dtype=np.float32)
    tape.backward(grads={out: wp.array(seed)})
    order = slots.numpy()
    np.testing.assert_allclose(data.grad.numpy(), 2.0 * x * seed[order], rtol=1e-6)


@wp.func
def _plain(values: wp.array(dtype=float), counter: wp.array(dtype=wp.int32), i: int) -> float:
    return values[i]


@wp.func_grad(_plain)
def _adj_plain(values: wp.array(dtype=float), counter: wp.array(dtype=wp.int32), i: int, adj_ret: float):
    slot = wp.atomic_add(counter, 0, 1)
    wp.adjoint[values][slot] += adj_ret


@wp.kernel(module="unique", module_options=DETERMINISTIC)
def custom_grad_assigns_slots(values: wp.array(dtype=float), counter: wp.array(dtype=wp.int32),
                              out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = _plain(values, counter, i)


def test_a_custom_grad_that_assigns_slots_is_refused():
    values, counter = wp.ones(4, requires_grad=True), wp.zeros(1, dtype=wp.int32)
    out = wp.zeros(4, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(custom_grad_assigns_slots, 4, [values, counter, out])
    with pytest.raises(wp.WarpDeterminismError, match="cannot differentiate this kernel automatically"):
        tape.backward(grads={out: wp.ones(4)})


# Options ------------------------------------------------------------------------------------

def test_config_deterministic_takes_only_the_enum():
    saved = wp.config.deterministic
    try:
        for bad in (True, "run_to_run", 1):
            with pytest.raises(ValueError, match="DeterministicMode"):
                wp.config.deterministic = bad
        assert wp.config.deterministic is saved
        wp.config.deterministic = wp.DeterministicMode.GPU_TO_GPU
        assert wp.config.deterministic is wp.DeterministicMode.GPU_TO_GPU
    finally:
        wp.config.deterministic = saved


def test_module_options_are_checked_when_declared():
    """As Warp's (which hashes a unique module when it is declared): bad determinism options
    of `module_options` are refused by the declaration."""
    for value in (True, "run_to_run"):
        with pytest.raises(ValueError, match="DeterministicMode"):
            @wp.kernel(module="unique", module_options={"deterministic": value})
            def bad_mode(out: wp.array(dtype=float)):
                out[0] = 1.0
    for value, error in ((True, TypeError), (1.5, TypeError), ("3", TypeError), (-1, ValueError)):
        with pytest.raises(error, match="deterministic_max_records"):
            @wp.kernel(module="unique", module_options={"deterministic_max_records": value})
            def bad_records(out: wp.array(dtype=float)):
                out[0] = 1.0


def test_module_options_set_later_are_checked_when_resolved():
    @wp.kernel(module="unique")
    def later(out: wp.array(dtype=float)):
        out[0] = 1.0
    later.module.options["deterministic"] = True
    with pytest.raises(ValueError, match="DeterministicMode"):
        later.module.resolve_options(wp.config)
    with pytest.raises(ValueError, match="DeterministicMode"):
        wp.launch(later, 1, [wp.zeros(1)])
    later.module.options["deterministic"] = wp.DeterministicMode.NOT_GUARANTEED
    later.module.options["deterministic_max_records"] = -1
    with pytest.raises(ValueError, match="deterministic_max_records"):
        later.module.resolve_options(wp.config)


def test_max_records_follows_config_unless_set_on_the_module():
    saved = wp.config.deterministic_max_records
    try:
        wp.config.deterministic_max_records = 7

        @wp.kernel(module="unique")
        def inherits(out: wp.array(dtype=float)):
            out[0] = 1.0

        @wp.kernel(module="unique", module_options={"deterministic_max_records": np.int64(3)})
        def own(out: wp.array(dtype=float)):
            out[0] = 1.0
        assert inherits.module.resolve_options(wp.config)["deterministic_max_records"] == 7
        resolved = own.module.resolve_options(wp.config)["deterministic_max_records"]
        assert resolved == 3 and type(resolved) is int
    finally:
        wp.config.deterministic_max_records = saved


def test_overlap_of_views_is_exact():
    from weft._src.deterministic import _deterministic_arrays_overlap
    base = wp.zeros((2, 4))
    assert not _deterministic_arrays_overlap(base[:, :2], base[:, 2:])  # interleaved, disjoint
    assert _deterministic_arrays_overlap(base[:, :3], base[:, 2:])
