"""weft.torch.wrap of a weft.autograd.Function: called from PyTorch, checked with
torch.autograd.gradcheck (float64 finite differences)."""

import numpy as np
import pytest
from autograd.kernels import Cube

import weft as wp

torch = pytest.importorskip("torch")


@wp.kernel
def spring(p: wp.array(dtype=wp.vec3d), k: wp.float64, f: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    f[i] = -k * p[i] * wp.length(p[i])


class Spring(wp.autograd.Function):
    """Its backward differentiates its own kernel with a Tape (a Function may)."""

    @staticmethod
    def forward(ctx, p, k):
        f = wp.zeros(p.shape, dtype=wp.vec3d, requires_grad=True)
        p_copy = wp.clone(p, requires_grad=True)
        with wp.Tape() as inner:
            wp.launch(spring, dim=p.shape, inputs=[p_copy, k], outputs=[f])
        ctx.inner, ctx.p, ctx.f = inner, p_copy, f
        return wp.clone(f)

    @staticmethod
    def backward(ctx, adj_f):
        ctx.inner.zero()  # (torch may call backward more than once)
        ctx.inner.backward(grads={ctx.f: adj_f})
        return wp.clone(ctx.p.grad), None


def test_wrapped_function_passes_torch_gradcheck():
    op = wp.torch.wrap(Cube)
    x = torch.linspace(-1, 1, 7, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(op, (x,))
    y = op(x)
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy() ** 3)
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy() ** 5, rtol=1e-12)


def test_wrapped_function_with_vector_dtype_and_non_tensor_argument():
    op = wp.torch.wrap(Spring, dtypes=[wp.vec3d])
    p = torch.tensor(np.random.default_rng(0).normal(size=(4, 3)), dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda q: op(q, 2.5), (p,))


def test_wrap_of_a_non_function_class_is_an_error():
    with pytest.raises(TypeError, match="weft.autograd.Function subclass"):
        wp.torch.wrap(int)
