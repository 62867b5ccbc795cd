"""Gradients of float16/bfloat16 arrays (autodiff/half.py, runtime/half_adjoints.py).

Per-thread adjoint arithmetic is done in the half type, with its rounding; what the adjoint
kernel accumulates into a half array's adjoint (one atomic add per thread that read an
element) is summed in float32 and rounded into the half array once. Each test checks
against analytic gradients evaluated in float64 at the half-rounded inputs, with
tolerances of a few half ulps (float16: 2^-11 relative, bfloat16: 2^-8)."""

import ml_dtypes
import numpy as np
import pytest

import weft as wp

HALVES = [wp.float16, wp.bfloat16]
ULP = {wp.float16: 2.0**-11, wp.bfloat16: 2.0**-8}
ids = lambda t: t.name  # noqa: E731


def exact(values, t) -> np.ndarray:
    """`values` rounded to half type `t`, in float64."""
    return np.asarray(values, np.float32).astype(t.np_dtype).astype(np.float64)


def make_broadcast(t):
    @wp.kernel
    def broadcast(x: wp.array(dtype=t), w: wp.array(dtype=t), loss: wp.array(dtype=wp.float32)):
        i = wp.tid()
        wp.atomic_add(loss, 0, wp.float32(x[0] * w[i]))
    return broadcast


@pytest.mark.parametrize("t", HALVES, ids=ids)
def test_the_adjoint_of_an_element_every_thread_reads_is_summed_in_float32(t):
    # d loss / d x[0] = sum(w): 10^4 contributions. Summed in the half type it would stop
    # at 2048 (float16) or 256 (bfloat16), where adding 1 rounds away.
    n = 10_000
    kernel = make_broadcast(t)
    x = wp.array([0.5], dtype=t, requires_grad=True)
    w = wp.array(np.ones(n), dtype=t, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, n, inputs=[x, w, loss])
    tape.backward(loss)
    assert x.grad.numpy()[0] == exact(n, t)[()]  # 10000 in float16, 9984 in bfloat16
    np.testing.assert_array_equal(w.grad.numpy().astype(np.float64), 0.5)


@pytest.mark.parametrize("t", HALVES, ids=ids)
def test_a_sum_of_random_contributions_is_rounded_once(t):
    n = 20_000
    kernel = make_broadcast(t)
    w_half = exact(np.random.default_rng(0).uniform(0.0, 1.0, n), t)
    x = wp.array([1.0], dtype=t, requires_grad=True)
    x.grad.fill_(3.0)  # accumulated onto what .grad holds
    w = wp.array(w_half, dtype=t, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, n, inputs=[x, w, loss])
    tape.backward(loss)
    want = 3.0 + w_half.sum()
    assert abs(float(x.grad.numpy()[0]) - want) <= ULP[t] * want


@pytest.mark.parametrize("t", HALVES, ids=ids)
def test_elementwise_math_gradient_against_analytic_values(t):
    @wp.kernel
    def f(x: wp.array(dtype=t), y: wp.array(dtype=t)):
        i = wp.tid()
        y[i] = wp.sin(x[i]) * x[i] + x[i] * x[i] * t(0.5)

    xs = exact(np.linspace(-2.0, 2.0, 33), t)
    x = wp.array(xs, dtype=t, requires_grad=True)
    y = wp.zeros(len(xs), dtype=t, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(f, len(xs), inputs=[x, y])
    tape.backward(grads={y: wp.array(np.ones(len(xs)), dtype=t)})
    want = np.cos(xs) * xs + np.sin(xs) + xs
    # a handful of half operations, each rounding: a few ulps of the largest term
    np.testing.assert_allclose(x.grad.numpy().astype(np.float64), want, rtol=0, atol=8 * ULP[t] * 4.0)


@pytest.mark.parametrize("t", HALVES, ids=ids)
def test_vector_arrays_and_views(t):
    vec3 = wp.types.vector(3, dtype=t)

    @wp.kernel
    def f(v: wp.array(dtype=vec3), m: wp.array2d(dtype=t), loss: wp.array(dtype=wp.float32)):
        i = wp.tid()
        row = m[0]  # a view of the first row, read by every thread
        s = wp.dot(v[i], v[i]) * row[i % 2]
        wp.atomic_add(loss, 0, wp.float32(s))

    n = 3000
    rng = np.random.default_rng(1)
    vs = exact(rng.uniform(-1, 1, (n, 3)), t)
    ms = exact([[0.75, -0.5, 9.0], [2.0, 3.0, 4.0]], t)
    v = wp.array(vs, dtype=vec3, requires_grad=True)
    m = wp.array(ms, dtype=t, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(f, n, inputs=[v, m, loss])
    tape.backward(loss)
    sq = (vs * vs).sum(1)  # analytic: d/dm[0, k] = sum of |v_i|^2 over i % 2 == k
    want_m = np.zeros((2, 3))
    want_m[0, 0], want_m[0, 1] = sq[0::2].sum(), sq[1::2].sum()
    got_m = m.grad.numpy().astype(np.float64)
    # the products |v|^2 * 1 are rounded in half per thread; their sum is not
    np.testing.assert_allclose(got_m, want_m, rtol=4 * ULP[t])
    want_v = 2.0 * vs * ms[0, np.arange(n) % 2][:, None]
    np.testing.assert_allclose(v.grad.numpy().astype(np.float64), want_v, rtol=2 * ULP[t], atol=1e-30)


@pytest.mark.parametrize("t", HALVES, ids=ids)
def test_one_array_given_twice_accumulates_both_adjoints(t):
    @wp.kernel
    def f(a: wp.array(dtype=t), b: wp.array(dtype=t), loss: wp.array(dtype=wp.float32)):
        i = wp.tid()
        wp.atomic_add(loss, 0, wp.float32(a[0] * b[i]))

    n = 5000
    xs = exact(np.full(n, 0.25), t)
    xs[0] = 2.0
    x = wp.array(xs, dtype=t, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(f, n, inputs=[x, x, loss])
    tape.backward(loss)
    got = x.grad.numpy().astype(np.float64)
    # loss = x0 * sum(x): d/dx0 = sum(x) + x0, d/dxi = x0
    assert got[0] == exact(xs.sum() + xs[0], t)[()]
    np.testing.assert_array_equal(got[1:], 2.0)


def test_atomic_max_gradient_goes_to_the_winner():
    t = wp.bfloat16  # (atomic_max on float16 is refused, as in Warp)

    @wp.kernel
    def f(x: wp.array(dtype=t), m: wp.array(dtype=t)):
        i = wp.tid()
        wp.atomic_max(m, 0, x[i] * t(2.0))

    xs = exact([0.5, 3.0, -1.0, 2.0], t)
    x = wp.array(xs, dtype=t, requires_grad=True)
    m = wp.array([-100.0], dtype=t, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(f, 4, inputs=[x, m])
    tape.backward(grads={m: wp.array([1.0], dtype=t)})
    np.testing.assert_array_equal(x.grad.numpy().astype(np.float64), [0.0, 2.0, 0.0, 0.0])


@pytest.mark.parametrize("t", HALVES, ids=ids)
def test_an_explicit_adjoint_launch_with_half_adjoint_arrays(t):
    kernel = make_broadcast(t)
    n = 4096
    x, w = wp.array([1.0], dtype=t), wp.array(np.ones(n), dtype=t)
    adj_x, adj_w = wp.zeros(1, dtype=t), wp.zeros(n, dtype=t)
    loss, adj_loss = wp.zeros(1, dtype=wp.float32), wp.array([2.0], dtype=wp.float32)
    wp.launch(kernel, n, inputs=[x, w, loss], adj_inputs=[adj_x, adj_w, adj_loss], adjoint=True)
    assert float(adj_x.numpy()[0]) == 2.0 * n
    np.testing.assert_array_equal(adj_w.numpy().astype(np.float64), 2.0)


def test_arrays_in_structs_get_gradients():
    # the adjoint struct has the primal's layout: its arrays are accumulated in float16, as
    # in Warp (a sum this small stays exact)
    @wp.struct
    class Params:
        w: wp.array(dtype=wp.float16)

    @wp.kernel
    def f(p: Params, loss: wp.array(dtype=wp.float32)):
        wp.atomic_add(loss, 0, wp.float32(p.w[0] * wp.float16(3.0)))

    p = Params()
    p.w = wp.array([1.0], dtype=wp.float16, requires_grad=True)
    loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(f, 100, inputs=[p, loss])
    tape.backward(loss)
    assert float(p.w.grad.numpy()[0]) == 300.0


def test_bfloat16_torch_tensor_gradient_of_a_broadcast():
    torch = pytest.importorskip("torch")
    n = 10_000
    x_t = torch.tensor([0.5], dtype=torch.bfloat16, requires_grad=True)
    w_t = torch.ones(n, dtype=torch.bfloat16, requires_grad=True)
    x, w = wp.from_torch(x_t), wp.from_torch(w_t)
    loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(make_broadcast(wp.bfloat16), n, inputs=[x, w, loss])
    tape.backward(loss)
    assert x_t.grad.item() == float(ml_dtypes.bfloat16(n))


@wp.func
def store_square_h(i: int, xs: wp.array(dtype=wp.float16), ys: wp.array(dtype=wp.float16)):
    ys[i] = xs[i] * xs[i]


@wp.func_grad(store_square_h)
def adj_store_square_h(i: int, xs: wp.array(dtype=wp.float16), ys: wp.array(dtype=wp.float16)):
    wp.adjoint[xs][i] += wp.float16(2.0) * xs[i] * wp.adjoint[ys][i]


@wp.kernel
def use_store_square_h(xs: wp.array(dtype=wp.float16), ys: wp.array(dtype=wp.float16)):
    store_square_h(wp.tid(), xs, ys)


def test_arrays_given_to_a_custom_gradient_keep_their_half_adjoints():
    # the func_grad is written for float16 adjoint arrays: those are not widened
    xs = wp.array([1.0, -2.0, 3.0], dtype=wp.float16, requires_grad=True)
    ys = wp.zeros(3, dtype=wp.float16, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(use_store_square_h, 3, inputs=[xs, ys])
    tape.backward(grads={ys: wp.array([1.0, 2.0, 0.5], dtype=wp.float16)})
    np.testing.assert_array_equal(xs.grad.numpy().astype(np.float64), [2.0, -8.0, 3.0])


@pytest.mark.parametrize("t", HALVES, ids=ids)
def test_overlapping_and_strided_views_share_one_float32_copy(t):
    @wp.kernel
    def f(a: wp.array(dtype=t), b: wp.array(dtype=t), c: wp.array(dtype=t), loss: wp.array(dtype=wp.float32)):
        i = wp.tid()
        wp.atomic_add(loss, 0, wp.float32(a[0] * b[i % 6] + c[i % 3]))

    n = 6000
    x = wp.array(np.ones(12), dtype=t, requires_grad=True)
    a, b, c = x[0:6], x[3:9], x[6:12:2]  # a and b overlap; c is strided and overlaps b
    loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(f, n, inputs=[a, b, c, loss])
    tape.backward(loss)
    # loss = x0 * (n/6) * sum(x[3:9]) + (n/3) * (x6 + x8 + x10)
    want = np.zeros(12)
    want[0] += n / 6 * 6
    want[3:9] += n / 6
    want[[6, 8, 10]] += n / 3
    np.testing.assert_array_equal(x.grad.numpy().astype(np.float64), exact(want, t))


@wp.kernel
def _quat_over_scalar(s: wp.array(dtype=wp.float16), q: wp.array(dtype=wp.quath), r: wp.array(dtype=wp.float16),
                      i: int):
    res = q[0] / s[0]
    r[0] = wp.float16(2.0) * res[i]


def test_composite_over_scalar_divisor_adjoint_rounds_as_warp():
    """d(2 q_i / s) / ds = -2 q_i / s^2, computed as Warp does in float16: -(q_i g) / (s s)
    (test_quat's scalar division: -(g / s) r_i is one float16 ulp off for i = 1)."""
    h = np.float16
    rng = np.random.default_rng(123)
    s0 = rng.standard_normal(size=1).astype(h)
    q0 = rng.standard_normal(size=(1, 4)).astype(h)
    for i in range(4):
        s = wp.array(s0, dtype=wp.float16, requires_grad=True)
        q = wp.array(q0, dtype=wp.quath, requires_grad=True)
        r = wp.zeros(1, dtype=wp.float16, requires_grad=True)
        with wp.Tape() as tape:
            wp.launch(_quat_over_scalar, 1, inputs=[s, q, r, i])
        tape.backward(loss=r)
        expected = h(-2) * q0[0, i] / (s0[0] * s0[0])  # numpy's float16: one rounding per op
        assert s.grad.numpy()[0] == expected
        assert q.grad.numpy()[0, i] == h(2) / s0[0]


@wp.kernel
def _vec_over_scalar(v: wp.array(dtype=wp.vec3d), s: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    w = v[0] / s[0]
    out[0] = w[0] * 1.5 - w[1] * w[2]


def test_composite_over_scalar_divisor_adjoint_float64():
    v0, s0 = np.array([[0.7, -1.3, 2.1]]), np.array([0.9])

    def f(v, s):
        out = wp.zeros(1, dtype=wp.float64)
        wp.launch(_vec_over_scalar, 1, inputs=[wp.array(v, dtype=wp.vec3d), wp.array(s, dtype=wp.float64), out])
        return out.numpy()[0]

    v = wp.array(v0, dtype=wp.vec3d, requires_grad=True)
    s = wp.array(s0, dtype=wp.float64, requires_grad=True)
    out = wp.zeros(1, dtype=wp.float64, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(_vec_over_scalar, 1, inputs=[v, s, out])
    tape.backward(loss=out)
    e = 1e-6
    np.testing.assert_allclose(s.grad.numpy()[0], (f(v0, s0 + e) - f(v0, s0 - e)) / (2 * e), rtol=1e-8)
    for k in range(3):
        d = np.zeros_like(v0)
        d[0, k] = e
        np.testing.assert_allclose(v.grad.numpy()[0, k], (f(v0 + d, s0) - f(v0 - d, s0)) / (2 * e), rtol=1e-8)
