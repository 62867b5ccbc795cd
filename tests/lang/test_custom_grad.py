"""@weft.func_grad and @weft.func_replay replace a func's adjoint and its replay."""

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import CompileError


@wp.func
def safe_sqrt(x: float):
    return wp.sqrt(x)


@wp.func_grad(safe_sqrt)
def adj_safe_sqrt(x: float, adj_ret: float):
    if x > 0.0:
        wp.adjoint[x] += adj_ret / (2.0 * wp.sqrt(x))


@wp.kernel
def sqrt_twice(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = safe_sqrt(x[i]) * 2.0


def _grad(kernel, x_values, seed, *extra):
    x = wp.array(np.asarray(x_values, np.float32), requires_grad=True)
    y = wp.zeros(len(x_values), requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(kernel, len(x_values), inputs=[x, *extra], outputs=[y])
    tape.backward(grads={y: np.asarray(seed, np.float32)})
    return x.grad.numpy()


def test_custom_grad_replaces_the_derivative():
    # d/dx 2 sqrt(x) = 1/sqrt(x); the custom rule gives 0 at x = 0 instead of inf
    np.testing.assert_allclose(_grad(sqrt_twice, [0.0, 1.0, 4.0], [1, 1, 1]), [0.0, 1.0, 0.5])


@wp.func
def scaled(v: wp.vec3, s: float):
    return v * s


@wp.func_grad(scaled)
def adj_scaled(v: wp.vec3, s: float, adj_ret: wp.vec3):
    # deliberately not the true derivative, so the test sees which rule ran
    wp.adjoint[v] += adj_ret * 10.0
    wp.adjoint[s] += 1.0


@wp.kernel
def use_scaled(x: wp.array(dtype=wp.vec3), s: wp.array(dtype=float), y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = scaled(x[i], s[i])


def test_custom_grad_with_vector_arguments_reaches_every_argument():
    x = wp.array(np.ones((2, 3), np.float32), dtype=wp.vec3, requires_grad=True)
    s = wp.array(np.ones(2, np.float32), requires_grad=True)
    y = wp.zeros(2, dtype=wp.vec3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(use_scaled, 2, inputs=[x, s], outputs=[y])
    tape.backward(grads={y: np.full((2, 3), 2.0, np.float32)})
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 20.0))
    np.testing.assert_allclose(s.grad.numpy(), [1.0, 1.0])


@wp.func
def reserve(counter: wp.array(dtype=int), slots: wp.array(dtype=int), tid: int):
    s = wp.atomic_add(counter, 0, 1)
    slots[tid] = s
    return s


@wp.func_replay(reserve)
def replay_reserve(counter: wp.array(dtype=int), slots: wp.array(dtype=int), tid: int):
    return slots[tid]


@wp.kernel
def compact(x: wp.array(dtype=float), counter: wp.array(dtype=int), slots: wp.array(dtype=int),
            out: wp.array(dtype=float)):
    i = wp.tid()
    s = reserve(counter, slots, i)
    out[s] = x[i] * x[i]


def test_replay_recovers_the_slot_an_atomic_handed_out():
    n = 64
    x_values = np.linspace(0.5, 2.0, n).astype(np.float32)
    counter, slots = wp.zeros(1, dtype=int), wp.zeros(n, dtype=int)
    seed = np.arange(1, n + 1, dtype=np.float32)
    grad = _grad(compact, x_values, seed, counter, slots)
    order = slots.numpy()
    assert sorted(order) == list(range(n))
    np.testing.assert_allclose(grad, 2 * x_values * seed[order], rtol=1e-6)


@wp.func
def cube_cached(x: float, cache: wp.array(dtype=float), tid: int):
    y = x * x * x
    cache[tid] = y
    return y


@wp.func_replay(cube_cached)
def replay_cube_cached(x: float, cache: wp.array(dtype=float), tid: int):
    return cache[tid]  # (what the forward pass computed, read back instead of recomputed)


@wp.kernel
def uses_cube_cached(x: wp.array(dtype=float), cache: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = cube_cached(x[i], cache, i) * 2.0


def test_the_gradient_comes_from_the_body_and_the_values_from_the_replay():
    # (Warp's rule: the replay stands in for the func in the backward pass's forward part;
    # the adjoint is the body's, so d/dx 2 x^3 = 6 x^2 although the replay reads memory)
    xs = np.array([0.5, 1.0, 1.5, 2.0], np.float32)
    np.testing.assert_allclose(_grad(uses_cube_cached, xs, np.ones(4), wp.zeros(4)), 6 * xs**2, rtol=1e-6)


@wp.func
def recount(counter: wp.array(dtype=int), x: float):
    return wp.atomic_add(counter, 0, 1)


@wp.func_replay(recount)
def replay_recount(counter: wp.array(dtype=int), x: float):
    return wp.atomic_add(counter, 1, 1)  # (a second counter hands out the slots again)


@wp.kernel
def counts_and_scales(x: wp.array(dtype=float), counter: wp.array(dtype=int), y: wp.array(dtype=float)):
    i = wp.tid()
    s = recount(counter, x[i])
    y[i] = x[i] * 3.0 + float(s - s)


def test_a_replay_runs_as_written_once_in_the_backward_pass():
    counter = wp.zeros(2, dtype=int)
    grad = _grad(counts_and_scales, np.ones(8), np.ones(8), counter)
    np.testing.assert_allclose(grad, np.full(8, 3.0))
    assert counter.numpy().tolist() == [8, 8]  # the body's atomic once, the replay's once


@wp.func
def push_value(buf: wp.array(dtype=float), counter: wp.array(dtype=int), v: float):
    s = wp.atomic_add(counter, 0, 1)
    buf[s] = v


@wp.func_replay(push_value)
def replay_push_value(buf: wp.array(dtype=float), counter: wp.array(dtype=int), v: float):
    pass


@wp.kernel
def pushes(x: wp.array(dtype=float), buf: wp.array(dtype=float), counter: wp.array(dtype=int)):
    i = wp.tid()
    push_value(buf, counter, x[i] * 2.0)


def test_a_replay_that_does_not_return_the_slot_the_adjoint_needs_is_refused():
    # the adjoint of `buf[s] = v` needs s, which only the atomic knew (Warp gives a gradient
    # to one thread only)
    with pytest.raises(CompileError, match=r"atomic_add\(\) is used where the adjoint needs it"):
        pushes.adjoint_ir()


@wp.kernel
def compact_without_replay(x: wp.array(dtype=float), counter: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    s = wp.atomic_add(counter, 0, 1)
    out[s] = x[i]


def test_used_atomic_result_without_replay_is_refused():
    with pytest.raises(CompileError, match="atomic_add"):
        compact_without_replay.adjoint_ir()


def test_grad_with_the_wrong_parameter_count_is_a_clear_error():
    @wp.func
    def twice(x: float):
        return 2.0 * x

    @wp.func_grad(twice)
    def adj_twice(x: float):
        wp.adjoint[x] += 2.0

    @wp.kernel
    def k(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = twice(x[i])

    with pytest.raises(CompileError, match=r"adjoints of its 1 result\(s\)"):
        k.adjoint_ir()


def test_func_grad_needs_a_func():
    with pytest.raises(TypeError, match="needs a @weft.func"):
        wp.func_grad(lambda x: x)


# Several results, adjoint arrays, struct fields, overloads -----------------------------------
@wp.func
def two_results(x: float, y: float):
    return x * y, x + y


@wp.func_grad(two_results)
def adj_two_results(x: float, y: float, adj_product: float, adj_sum: float):
    wp.adjoint[x] += 10.0 * (y * adj_product + adj_sum)  # 10x the true gradient: visibly the custom one
    wp.adjoint[y] += 10.0 * (x * adj_product + adj_sum)


@wp.kernel
def use_two_results(x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    p, s = two_results(x[i], y[i])
    out[i] = p + 2.0 * s


def test_grad_of_a_func_with_several_results_takes_one_adjoint_each():
    x = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True)
    y = wp.array(np.array([3.0, -1.0], np.float32), requires_grad=True)
    out = wp.zeros(2, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(use_two_results, 2, inputs=[x, y, out])
    tape.backward(grads={out: np.ones(2, np.float32)})
    np.testing.assert_allclose(x.grad.numpy(), 10.0 * (y.numpy() + 2.0))
    np.testing.assert_allclose(y.grad.numpy(), 10.0 * (x.numpy() + 2.0))


@wp.func
def store_square(i: int, xs: wp.array(dtype=float), ys: wp.array(dtype=float)):
    ys[i] = xs[i] * xs[i]


@wp.func_grad(store_square)
def adj_store_square(i: int, xs: wp.array(dtype=float), ys: wp.array(dtype=float)):
    wp.adjoint[xs][i] += 2.0 * xs[i] * wp.adjoint[ys][i]  # the adjoint arrays of the array parameters


@wp.kernel
def use_store_square(xs: wp.array(dtype=float), ys: wp.array(dtype=float)):
    store_square(wp.tid(), xs, ys)


def test_grad_writes_the_adjoint_arrays_of_array_parameters():
    xs = wp.array(np.array([1.0, -2.0, 3.0], np.float32), requires_grad=True)
    ys = wp.zeros(3, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(use_store_square, 3, inputs=[xs, ys])
    tape.backward(grads={ys: np.array([1.0, 2.0, 0.5], np.float32)})
    np.testing.assert_allclose(xs.grad.numpy(), 2.0 * xs.numpy() * [1.0, 2.0, 0.5])


@wp.struct
class Weighted:
    w: float
    v: wp.vec3


@wp.func
def weighted_sum(s: Weighted):
    return s.w * (s.v[0] + s.v[1] + s.v[2])


@wp.func_grad(weighted_sum)
def adj_weighted_sum(s: Weighted, adj_ret: float):
    wp.adjoint[s.w] += 100.0 * adj_ret  # custom (not the true gradient), to tell it apart
    wp.adjoint[s.v][1] += 7.0 * adj_ret


@wp.kernel
def use_weighted_sum(w: wp.array(dtype=float), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = weighted_sum(Weighted(w=w[i], v=v[i]))


def test_grad_of_struct_fields_and_vector_components():
    w = wp.array(np.array([2.0], np.float32), requires_grad=True)
    v = wp.array(np.array([[1.0, 2.0, 3.0]], np.float32), dtype=wp.vec3, requires_grad=True)
    out = wp.zeros(1, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(use_weighted_sum, 1, inputs=[w, v, out])
    tape.backward(grads={out: np.ones(1, np.float32)})
    assert w.grad.numpy().tolist() == [100.0]
    assert v.grad.numpy().tolist() == [[0.0, 7.0, 0.0]]


@wp.func
def doubled(x: float):
    return 2.0 * x


@wp.func_grad(doubled)
def adj_doubled_float(x: float, adj_ret: float):
    wp.adjoint[x] += 3.0 * adj_ret


@wp.func
def doubled(x: wp.vec2):  # noqa: F811 - an overload of doubled
    return 2.0 * x


@wp.func_grad(doubled)
def adj_doubled_vec2(x: wp.vec2, adj_ret: wp.vec2):
    wp.adjoint[x] += 5.0 * adj_ret


@wp.kernel
def use_doubled(x: wp.array(dtype=float), v: wp.array(dtype=wp.vec2), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = doubled(x[i]) + wp.dot(doubled(v[i]), wp.vec2(1.0, 1.0))


def test_each_overload_has_its_own_grad():
    x = wp.array(np.array([1.0], np.float32), requires_grad=True)
    v = wp.array(np.array([[1.0, 2.0]], np.float32), dtype=wp.vec2, requires_grad=True)
    out = wp.zeros(1, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(use_doubled, 1, inputs=[x, v, out])
    tape.backward(grads={out: np.ones(1, np.float32)})
    assert x.grad.numpy().tolist() == [3.0]
    assert v.grad.numpy().tolist() == [[5.0, 5.0]]


def test_grad_matching_no_overload_is_a_clear_error():
    with pytest.raises(TypeError, match="no overload of doubled"):
        @wp.func_grad(doubled)
        def adj_doubled_int(x: int, adj_ret: int):
            pass


# A func returning an integer, with a custom (empty) adjoint ------------------------------------
@wp.func
def first_above(x: wp.array(dtype=float), t: float):
    k = -1
    i = 0
    while k < 0 and i < x.shape[0]:
        if x[i] > t:
            k = i
        i += 1
    return k


@wp.func_grad(first_above)
def adj_first_above(x: wp.array(dtype=float), t: float, adj_ret: int):
    pass  # an index: no gradient, and reverse mode need not walk the search backwards


@wp.kernel
def scaled_first(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    k = first_above(x, 0.5)
    out[0] = 3.0 * x[k]


def test_func_grad_of_a_func_returning_an_int():
    x = wp.array(np.float32([0.1, 0.7, 0.9]), requires_grad=True)
    out = wp.zeros(1, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scaled_first, 1, inputs=[x, out])
    tape.backward(out)
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 3.0, 0.0])


@wp.func
def late_root(x: float):
    return wp.sqrt(x)


@wp.kernel
def late_root_kernel(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = late_root(x[i])


def test_a_grad_registered_after_the_kernel_first_ran_is_used():
    """As Warp rebuilds the module: the kernel's adjoint, compiled with sqrt's own derivative
    (infinite at 0) before the grad existed, is compiled again with the grad."""
    x = wp.array([0.0, 4.0], dtype=float, requires_grad=True)
    y = wp.zeros(2, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(late_root_kernel, 2, inputs=[x, y])
    tape.backward(grads={y: wp.ones(2, dtype=float)})
    assert x.grad.numpy()[0] == np.inf and x.grad.numpy()[1] == 0.25

    @wp.func_grad(late_root)
    def adj_late_root(x: float, adj_ret: float):
        wp.adjoint[x] += 7.0 * adj_ret

    x.grad.zero_()
    with wp.Tape() as tape:
        wp.launch(late_root_kernel, 2, inputs=[x, y])
    tape.backward(grads={y: wp.ones(2, dtype=float)})
    assert x.grad.numpy().tolist() == [7.0, 7.0]


@wp.func
def late_triple(a: wp.float64):
    return a * wp.float64(3.0)


@wp.kernel
def accumulate_triple(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = y[i] + late_triple(x[i])


@wp.kernel
def shift_in_place(x: wp.array(dtype=wp.float64)):
    i = wp.tid()
    x[i] = x[i] + wp.float64(0.25)


def _triple_then_shift_gradient(x0):
    x = wp.array(x0, dtype=wp.float64, requires_grad=True)
    y = wp.zeros(3, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        for _ in range(3):
            wp.launch(accumulate_triple, 3, inputs=[x, y])
            wp.launch(shift_in_place, 3, inputs=[x])
    tape.backward(grads={y: wp.ones(3, dtype=wp.float64)})
    return x.grad.numpy()


def test_a_late_grad_that_reads_the_primal_makes_the_tape_keep_copies():
    """The automatic adjoint of 3a never reads a, so a Tape keeps no copy of x before the
    in-place shift; a grad registered later that reads a needs them from the next launch on
    (the analyses the Tape records by are made again, as the compiled code is)."""
    x0 = np.array([0.5, -1.0, 2.0])
    np.testing.assert_array_equal(_triple_then_shift_gradient(x0), [9.0, 9.0, 9.0])

    @wp.func_grad(late_triple)
    def adj_late_triple(a: wp.float64, adj_ret: wp.float64):
        wp.adjoint[a] += adj_ret * a

    # d/dx0 of sum over k of (x0 + 0.25 k) for k = 0, 1, 2, through the custom grad
    np.testing.assert_allclose(_triple_then_shift_gradient(x0), 3 * x0 + 0.75, rtol=1e-15)


@wp.func
def _prefix_sum_in_place(n: int, b: wp.array(dtype=float), x: wp.array(dtype=float)):
    x[0] = b[0]
    for i in range(1, n):
        x[i] = b[i] + x[i - 1]  # reads back what it wrote: only its custom grad is differentiated


@wp.func_grad(_prefix_sum_in_place)
def _adj_prefix_sum_in_place(n: int, b: wp.array(dtype=float), x: wp.array(dtype=float)):
    s = 0.0
    for r in range(n):
        i = n - 1 - r
        s += wp.adjoint[x][i]
        wp.adjoint[b][i] += s


@wp.kernel
def _prefix_sum_kernel(n: int, b: wp.array(dtype=float), x: wp.array(dtype=float)):
    _prefix_sum_in_place(n, b, x)


@wp.kernel
def _weighted_sum(x: wp.array(dtype=float), w: wp.array(dtype=float), loss: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(loss, 0, x[i] * w[i])


def test_a_custom_grad_func_whose_body_reads_back_its_stores():
    # newton's featherstone dense_solve: the body substitutes in place; Warp differentiates
    # the kernel with the custom grad and never the body, so weft must not refuse the body
    b = wp.array(np.array([1.0, 2.0, 3.0, 4.0], np.float32), requires_grad=True)
    w = wp.array(np.array([1.0, 10.0, 100.0, 1000.0], np.float32))
    x = wp.zeros(4, dtype=float, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_prefix_sum_kernel, 1, [4, b, x])
        wp.launch(_weighted_sum, 4, [x, w, loss])
    tape.backward(loss)
    np.testing.assert_array_equal(x.numpy(), [1.0, 3.0, 6.0, 10.0])
    np.testing.assert_allclose(b.grad.numpy(), [1111.0, 1110.0, 1100.0, 1000.0])
