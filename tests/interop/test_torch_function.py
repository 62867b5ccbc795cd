"""Behaviour 3 of the mission: a kernel inside a hand-written `torch.autograd.Function`.

`forward` views the tensors as weft arrays (`wp.from_torch`, no copy), launches the kernel and
returns its outputs as tensors; `backward` launches the same kernel with `adjoint=True`, the
incoming gradients as `adj_outputs` and fresh zero arrays as `adj_inputs`, with `None` (or
zeros) for the arguments that are not arrays (a `vec3d` gravity, a `float64` time step).
Checked: `torch.autograd.gradcheck` in float64, analytic gradients, the gradient torch passes
in is left intact (also where it reaches two consumers), the broadcast gradient of a `sum`
(a clear error, and `.contiguous()` as the fix), and a 10-step rollout against the same
physics written in pure torch.
"""

import numpy as np
import pytest

import weft as wp

torch = pytest.importorskip("torch")

GRAVITY = (0.0, -9.8, 0.0)
DT = 0.05
DRAG = 0.3
STIFFNESS = 2.0


@wp.kernel
def step(x: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d), gravity: wp.vec3d, dt: wp.float64,
         x_new: wp.array(dtype=wp.vec3d), v_new: wp.array(dtype=wp.vec3d)):
    """Semi-implicit Euler with quadratic drag and a sine spring: nonlinear in x and v."""
    i = wp.tid()
    xi = x[i]
    vi = v[i]
    drag = wp.float64(DRAG) * wp.length(vi) * vi
    spring = wp.float64(STIFFNESS) * wp.vec3d(wp.sin(xi[0]), wp.sin(xi[1]), wp.sin(xi[2]))
    vn = vi + (gravity - drag - spring) * dt
    v_new[i] = vn
    x_new[i] = xi + vn * dt


def torch_step(x, v):
    """The same physics in pure torch (float64)."""
    g = torch.tensor(GRAVITY, dtype=x.dtype)
    drag = DRAG * torch.linalg.vector_norm(v, dim=1, keepdim=True) * v
    vn = v + (g - drag - STIFFNESS * torch.sin(x)) * DT
    return x + vn * DT, vn


def _make_step(adj_spelling="none", contiguous=True):
    """A `torch.autograd.Function` running `step`. `adj_spelling`: what the adjoint launch
    takes for the non-array arguments ("none": None, "zeros": `wp.vec3d()` and 0.0).
    `contiguous=False` passes torch's gradients to `from_torch` as they come."""

    class Step(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, v):
            # views of the tensors' memory, no copies
            ctx.x = wp.from_torch(x, dtype=wp.vec3d)
            ctx.v = wp.from_torch(v, dtype=wp.vec3d)
            ctx.gravity = wp.vec3d(*GRAVITY)
            ctx.dt = DT
            ctx.x_new = wp.zeros(len(ctx.x), dtype=wp.vec3d)
            ctx.v_new = wp.zeros(len(ctx.x), dtype=wp.vec3d)
            wp.launch(step, len(ctx.x), inputs=[ctx.x, ctx.v, ctx.gravity, ctx.dt],
                      outputs=[ctx.x_new, ctx.v_new])
            return wp.to_torch(ctx.x_new), wp.to_torch(ctx.v_new)

        @staticmethod
        def backward(ctx, grad_x_new, grad_v_new):
            if contiguous:
                # the gradient of `out.sum()` is one number broadcast (stride 0): a vec3d
                # array needs each element's three components next to each other
                grad_x_new, grad_v_new = grad_x_new.contiguous(), grad_v_new.contiguous()
            # Fresh zero arrays for the input adjoints (the adjoint launch accumulates into
            # them). Do NOT pass and return `ctx.x.grad` instead: an array made by from_torch
            # of a tensor that requires grad has the tensor's own `.grad` as its `.grad`, and
            # torch would then add the returned gradient to itself (doubling it).
            # (requires_grad=False: zeros_like copies it from ctx.x, and torch.autograd.grad
            # would otherwise return gradients that require grad themselves)
            adj_x = wp.zeros_like(ctx.x, requires_grad=False)
            adj_v = wp.zeros_like(ctx.v, requires_grad=False)
            if adj_spelling == "none":
                adj_args = [None, None]
            else:
                adj_args = [wp.vec3d(), 0.0]
            wp.launch(step, len(ctx.x), inputs=[ctx.x, ctx.v, ctx.gravity, ctx.dt],
                      outputs=[ctx.x_new, ctx.v_new],
                      adj_inputs=[adj_x, adj_v, *adj_args],
                      adj_outputs=[wp.from_torch(grad_x_new, dtype=wp.vec3d),
                                   wp.from_torch(grad_v_new, dtype=wp.vec3d)],
                      adjoint=True)
            return wp.to_torch(adj_x), wp.to_torch(adj_v)

    return Step


Step = _make_step()
StepZeros = _make_step(adj_spelling="zeros")
StepRaw = _make_step(contiguous=False)

N = 5


def _state(seed=0, n=N):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, dtype=torch.float64, generator=gen)
    v = torch.randn(n, 3, dtype=torch.float64, generator=gen) * 2.0
    return x.requires_grad_(True), v.requires_grad_(True)


def _analytic(x, v, wx, wv):
    """d/dx and d/dv of sum(wx * x_new) + sum(wv * v_new), per particle (numpy)."""
    gx, gv = np.zeros_like(x), np.zeros_like(v)
    for i in range(len(x)):
        s = np.linalg.norm(v[i])
        d_vn_dv = np.eye(3) - DT * DRAG * (s * np.eye(3) + np.outer(v[i], v[i]) / s)
        d_vn_dx = -DT * STIFFNESS * np.diag(np.cos(x[i]))
        seed_vn = wv[i] + DT * wx[i]  # x_new = x + vn * dt
        gx[i] = wx[i] + d_vn_dx.T @ seed_vn
        gv[i] = d_vn_dv.T @ seed_vn
    return gx, gv


# Forward -------------------------------------------------------------------------------------
def test_forward_matches_torch_and_does_not_change_its_inputs():
    x, v = _state()
    x0, v0 = x.detach().clone(), v.detach().clone()
    x_new, v_new = Step.apply(x, v)
    ref_x, ref_v = torch_step(x.detach(), v.detach())
    torch.testing.assert_close(x_new, ref_x, rtol=1e-13, atol=1e-13)
    torch.testing.assert_close(v_new, ref_v, rtol=1e-13, atol=1e-13)
    assert x_new.requires_grad and v_new.requires_grad
    assert x_new.dtype == torch.float64 and tuple(x_new.shape) == (N, 3)
    assert torch.equal(x.detach(), x0) and torch.equal(v.detach(), v0)


# Gradients -------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [Step, StepZeros], ids=["none", "zeros"])
def test_gradcheck_float64(fn):
    x, v = _state(1)
    assert torch.autograd.gradcheck(fn.apply, (x, v), eps=1e-6, atol=1e-8, rtol=1e-6)


@pytest.mark.parametrize("fn", [Step, StepZeros], ids=["none", "zeros"])
def test_gradients_match_analytic_values(fn):
    x, v = _state(2)
    gen = torch.Generator().manual_seed(3)
    wx = torch.randn(N, 3, dtype=torch.float64, generator=gen)
    wv = torch.randn(N, 3, dtype=torch.float64, generator=gen)
    x_new, v_new = fn.apply(x, v)
    gx, gv = torch.autograd.grad((x_new * wx).sum() + (v_new * wv).sum(), (x, v))
    ex, ev = _analytic(x.detach().numpy(), v.detach().numpy(), wx.numpy(), wv.numpy())
    np.testing.assert_allclose(gx.numpy(), ex, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gv.numpy(), ev, rtol=1e-12, atol=1e-14)


def test_backward_fills_leaf_grads_once():
    """`.backward()` accumulates into `x.grad` exactly once (no doubling through shared
    memory), and a second backward adds the same amount again."""
    x, v = _state(4)
    wx = torch.linspace(-1.0, 1.0, 3 * N, dtype=torch.float64).reshape(N, 3)
    ex, ev = _analytic(x.detach().numpy(), v.detach().numpy(), wx.numpy(), np.zeros((N, 3)))
    for k in (1, 2):
        x_new, _ = Step.apply(x, v)
        (x_new * wx).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), k * ex, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(v.grad.numpy(), k * ev, rtol=1e-12, atol=1e-14)


def test_incoming_gradients_are_not_modified():
    x, v = _state(5)
    x_new, v_new = Step.apply(x, v)
    gen = torch.Generator().manual_seed(6)
    grad_x = torch.randn(N, 3, dtype=torch.float64, generator=gen)
    grad_v = torch.randn(N, 3, dtype=torch.float64, generator=gen)
    before_x, before_v = grad_x.clone(), grad_v.clone()
    gx, gv = torch.autograd.grad((x_new, v_new), (x, v), grad_outputs=(grad_x, grad_v))
    assert torch.equal(grad_x, before_x) and torch.equal(grad_v, before_v)
    ex, ev = _analytic(x.detach().numpy(), v.detach().numpy(), before_x.numpy(), before_v.numpy())
    np.testing.assert_allclose(gx.numpy(), ex, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gv.numpy(), ev, rtol=1e-12, atol=1e-14)


def test_incoming_gradient_seen_in_backward_is_left_intact():
    """The very tensor torch hands to backward, compared before and after the adjoint launch."""
    seen = []

    class Spy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, v):
            return Step.forward(ctx, x, v)

        @staticmethod
        def backward(ctx, grad_x_new, grad_v_new):
            grad_x_new, grad_v_new = grad_x_new.contiguous(), grad_v_new.contiguous()
            before = grad_x_new.clone(), grad_v_new.clone()
            result = Step.backward(ctx, grad_x_new, grad_v_new)
            seen.append((torch.equal(grad_x_new, before[0]), torch.equal(grad_v_new, before[1])))
            return result

    x, v = _state(7)
    x_new, v_new = Spy.apply(x, v)
    (x_new * 3.0 + v_new * v_new).sum().backward()
    assert seen == [(True, True)]


def test_sum_loss_gives_broadcast_gradient_clear_error_then_contiguous_fix():
    x, v = _state(8)
    x_new, v_new = StepRaw.apply(x, v)
    # torch passes the gradient of a sum as one number broadcast to the shape (stride 0)
    with pytest.raises(ValueError, match="contiguous") as info:
        (x_new.sum() + v_new.sum()).backward()
    message = str(info.value)
    assert "vec3d" in message and "broadcast" in message
    # with .contiguous() in backward it works
    x, v = _state(8)
    x_new, v_new = Step.apply(x, v)
    (x_new.sum() + v_new.sum()).backward()
    ex, ev = _analytic(x.detach().numpy(), v.detach().numpy(), np.ones((N, 3)), np.ones((N, 3)))
    np.testing.assert_allclose(x.grad.numpy(), ex, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(v.grad.numpy(), ev, rtol=1e-12, atol=1e-14)


def test_unused_output_gets_zero_gradient():
    x, v = _state(9)
    x_new, _ = Step.apply(x, v)
    x_new.sum().backward()  # torch materialises zeros for v_new's gradient
    ex, ev = _analytic(x.detach().numpy(), v.detach().numpy(), np.ones((N, 3)), np.zeros((N, 3)))
    np.testing.assert_allclose(x.grad.numpy(), ex, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(v.grad.numpy(), ev, rtol=1e-12, atol=1e-14)


def test_only_one_input_requires_grad():
    x, v = _state(10)
    x = x.detach()
    x_new, v_new = Step.apply(x, v)
    (x_new.sum() + v_new.sum()).backward()
    assert x.grad is None
    _, ev = _analytic(x.numpy(), v.detach().numpy(), np.ones((N, 3)), np.ones((N, 3)))
    np.testing.assert_allclose(v.grad.numpy(), ev, rtol=1e-12, atol=1e-14)


# Graphs --------------------------------------------------------------------------------------
def test_residual_graph_shares_one_gradient_between_two_consumers():
    """out = x + Step(x, v)[0]: the add hands the same gradient tensor to x and to Step's
    backward; if the adjoint launch changed it, x's direct gradient would be wrong."""
    w = torch.linspace(-2.0, 2.0, 3 * N, dtype=torch.float64).reshape(N, 3)
    x, v = _state(11)
    out = x + Step.apply(x, v)[0]
    (out * w).sum().backward()
    xr, vr = _state(11)
    ref = xr + torch_step(xr, vr)[0]
    (ref * w).sum().backward()
    torch.testing.assert_close(out, ref, rtol=1e-13, atol=1e-13)
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-12, atol=1e-13)
    torch.testing.assert_close(v.grad, vr.grad, rtol=1e-12, atol=1e-13)

    # the same with the broadcast gradient of a sum, made contiguous in backward
    x, v = _state(12)
    (x + Step.apply(x, v)[0]).sum().backward()
    xr, vr = _state(12)
    (xr + torch_step(xr, vr)[0]).sum().backward()
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-12, atol=1e-13)
    torch.testing.assert_close(v.grad, vr.grad, rtol=1e-12, atol=1e-13)


def test_residual_graph_gradcheck():
    def f(x, v):
        x_new, v_new = Step.apply(x, v)
        return x + x_new, v_new * v

    x, v = _state(13, n=3)
    assert torch.autograd.gradcheck(f, (x, v), eps=1e-6, atol=1e-8, rtol=1e-6)


def _rollout(fn, x, v, steps=10):
    for _ in range(steps):
        x, v = fn(x, v)
    return x, v


def test_ten_step_rollout_matches_pure_torch():
    target = torch.tensor([0.5, -1.0, 0.25], dtype=torch.float64)
    x, v = _state(14)
    xs, vs = _rollout(Step.apply, x, v)
    loss = ((xs - target) ** 2).sum() + 0.1 * (vs**2).sum()
    loss.backward()

    xr, vr = _state(14)
    xs_ref, vs_ref = _rollout(torch_step, xr, vr)
    loss_ref = ((xs_ref - target) ** 2).sum() + 0.1 * (vs_ref**2).sum()
    loss_ref.backward()

    torch.testing.assert_close(xs, xs_ref, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(vs, vs_ref, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(loss, loss_ref, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(x.grad, xr.grad, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(v.grad, vr.grad, rtol=1e-10, atol=1e-12)
    assert x.grad.abs().max() > 1e-3 and v.grad.abs().max() > 1e-3


def test_ten_step_rollout_gradcheck():
    x, v = _state(15, n=2)
    assert torch.autograd.gradcheck(lambda x, v: _rollout(Step.apply, x, v), (x, v), eps=1e-6, atol=1e-7,
                                    rtol=1e-6)
