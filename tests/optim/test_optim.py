"""weft.optim: Adam and SGD against numpy references of their update rules, against
torch.optim (float64, where torch is installed), and their errors."""

import numpy as np
import pytest

import weft as wp
import weft.optim


def adam_reference(p, grads, lr, betas, eps):
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads):
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        m_hat, v_hat = m / (1 - betas[0] ** (t + 1)), v / (1 - betas[1] ** (t + 1))
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p


def sgd_reference(p, grads, lr, momentum, dampening, weight_decay, nesterov):
    b = np.zeros_like(p)
    for t, g in enumerate(grads):
        g = g + weight_decay * p
        if momentum:
            b = g if t == 0 else momentum * b + (1 - dampening) * g
            g = g + momentum * b if nesterov else b
        p = p - lr * g
    return p


def _problem(dtype, shape, steps=5, seed=0):
    rng = np.random.default_rng(seed)
    elem = tuple(getattr(dtype, "np_shape", ()))
    scalar = getattr(dtype, "dtype", dtype).np_dtype
    p0 = rng.normal(size=shape + elem).astype(scalar)
    grads = [rng.normal(size=shape + elem).astype(scalar) for _ in range(steps)]
    return p0, grads


@pytest.mark.parametrize("dtype", [wp.float32, wp.float64, wp.vec3, wp.vec3d, wp.mat22d])
def test_adam_matches_reference(dtype):
    p0, grads = _problem(dtype, (7,))
    p = wp.array(p0.copy(), dtype=dtype)
    opt = weft.optim.Adam([p], lr=0.05, betas=(0.8, 0.99), eps=1e-6)
    for g in grads:
        opt.step([wp.array(g, dtype=dtype)])
    want = adam_reference(p0.astype(np.float64), [g.astype(np.float64) for g in grads], 0.05, (0.8, 0.99), 1e-6)
    tol = 1e-12 if p0.dtype == np.float64 else 1e-5
    np.testing.assert_allclose(p.numpy(), want, rtol=tol, atol=tol)
    assert opt.t == len(grads)


def test_adam_float16_rounds_the_step_to_float16_first():
    # Warp's float16 update is p - float16(step): from p = 1 a step of 0.00073223 (float16
    # 0.00073242) gives 0.99902344, where rounding 1 - step once would give 0.99951172
    lr = 0.0007322316
    p = wp.array(np.array([1.0], np.float16), dtype=wp.float16)
    opt = weft.optim.Adam([p], lr=lr, eps=0.0)  # (the first step is lr * g / |g|)
    opt.step([wp.array(np.array([0.5], np.float16), dtype=wp.float16)])
    assert p.numpy()[0] == np.float16(np.float32(1.0) - np.float32(np.float16(np.float32(lr)))) == np.float16(0.999)


def test_adam_float16_keeps_float32_moments():
    p0, grads = _problem(wp.float16, (16,), steps=3)
    p = wp.array(p0.copy(), dtype=wp.float16)
    opt = weft.optim.Adam([p], lr=0.01)
    assert opt.m[0].dtype == wp.float32 and opt.v[0].dtype == wp.float32
    for g in grads:
        opt.step([wp.array(g, dtype=wp.float16)])
    want = adam_reference(p0.astype(np.float64), [g.astype(np.float64) for g in grads], 0.01, (0.9, 0.999), 1e-8)
    np.testing.assert_allclose(p.numpy().astype(np.float64), want, atol=2e-3)


@pytest.mark.parametrize("momentum,dampening,weight_decay,nesterov", [
    (0.0, 0.0, 0.0, False), (0.9, 0.0, 0.0, False), (0.9, 0.1, 0.01, False), (0.9, 0.0, 0.05, True),
    (0.9, 0.1, 0.0, True)])  # (Nesterov with dampening: PyTorch refuses it, Warp applies it)
@pytest.mark.parametrize("dtype", [wp.float64, wp.vec2d])
def test_sgd_matches_reference(dtype, momentum, dampening, weight_decay, nesterov):
    p0, grads = _problem(dtype, (5, 3))
    p = wp.array(p0.copy(), dtype=dtype)
    opt = weft.optim.SGD([p], lr=0.1, momentum=momentum, dampening=dampening,
                         weight_decay=weight_decay, nesterov=nesterov)
    for g in grads:
        opt.step([wp.array(g, dtype=dtype)])
    want = sgd_reference(p0, grads, 0.1, momentum, dampening, weight_decay, nesterov)
    np.testing.assert_allclose(p.numpy(), want, rtol=1e-12, atol=1e-12)


def test_against_torch_optim():
    torch = pytest.importorskip("torch")
    p0, grads = _problem(wp.float64, (9,), steps=6)
    for make_weft, make_torch in [
        (lambda ps: weft.optim.Adam(ps, lr=0.03, betas=(0.85, 0.995), eps=1e-7),
         lambda ps: torch.optim.Adam(ps, lr=0.03, betas=(0.85, 0.995), eps=1e-7)),
        (lambda ps: weft.optim.SGD(ps, lr=0.03, momentum=0.7, weight_decay=0.02, nesterov=True),
         lambda ps: torch.optim.SGD(ps, lr=0.03, momentum=0.7, weight_decay=0.02, nesterov=True)),
    ]:
        p = wp.array(p0.copy(), dtype=wp.float64)
        tp = torch.tensor(p0.copy(), requires_grad=True)
        wo, to = make_weft([p]), make_torch([tp])
        for g in grads:
            wo.step([wp.array(g, dtype=wp.float64)])
            tp.grad = torch.tensor(g)
            to.step()
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-12, atol=1e-13)


def test_reset_and_set_params():
    p0, grads = _problem(wp.float32, (4,))
    p = wp.array(p0.copy())
    opt = weft.optim.Adam([p], lr=0.1)
    opt.step([wp.array(grads[0])])
    opt.reset_internal_state()
    assert opt.t == 0 and not opt.m[0].numpy().any() and not opt.v[0].numpy().any()
    q = wp.zeros(6)
    opt.set_params([q])
    assert opt.m[0].size == 6
    opt.step([wp.ones(6)])
    np.testing.assert_allclose(q.numpy(), -0.1, rtol=1e-5)  # the first Adam step has size lr


def test_errors():
    p = wp.zeros(3)
    with pytest.raises(RuntimeError, match="parameters must be set before calling step"):
        weft.optim.SGD().step([p])
    with pytest.raises(ValueError, match="shape"):
        weft.optim.SGD([p]).step([wp.zeros(4)])
    with pytest.raises(TypeError, match="float64"):
        weft.optim.Adam([p]).step([wp.zeros(3, dtype=wp.float64)])
    with pytest.raises(TypeError, match="float arrays"):
        weft.optim.Adam([wp.zeros(3, dtype=wp.int32)])
    with pytest.raises(ValueError, match="contiguous"):
        weft.optim.SGD([wp.zeros((4, 4))[:, 1]])


@pytest.mark.parametrize("dtype", [wp.float32, wp.vec3, wp.mat22d])
def test_state_buffers_have_the_parameter_shape_and_dtype(dtype):
    """Momentum and moment buffers are shaped like the parameter (Warp's zeros_like), so a
    user reading opt.b[0] / opt.m[0] of a vec3 array gets an array of vec3, not flat floats."""
    p0, grads = _problem(dtype, (4, 2))
    p = wp.array(p0.copy(), dtype=dtype)
    sgd, adam = weft.optim.SGD([p], lr=0.1, momentum=0.9), weft.optim.Adam([p], lr=0.1)
    for buf in (sgd.b[0], adam.m[0], adam.v[0]):
        assert buf.shape == p.shape and buf.dtype == dtype
    sgd.step([wp.array(grads[0], dtype=dtype)])
    np.testing.assert_allclose(sgd.b[0].numpy(), grads[0], rtol=1e-6)  # first step: b = g
    adam.step([wp.array(grads[1], dtype=dtype)])
    np.testing.assert_allclose(adam.m[0].numpy(), 0.1 * grads[1], rtol=1e-5, atol=1e-7)
    kept = adam.m[0]
    adam.set_params([p])
    assert adam.m[0] is kept  # same shape and dtype: the moments are kept
