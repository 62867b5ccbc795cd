"""`weft.torch.wrap`: a kernel as a differentiable PyTorch function in one call.

Gradients pass `torch.autograd.gradcheck` in float64 (one output, two outputs, vec3d arrays,
2-D arrays, outputs shaped by a tuple, an input's name or a callable, outputs the kernel also
reads); integer outputs are not differentiable; `torch.no_grad()` builds no graph; inputs that
do not require grad get none; non-array arguments take numbers, tuples and tensors; clear
errors for kernels that write their inputs, bad output names, wrong dtypes and shapes, and
out-of-bounds accesses; torch's incoming gradients are never changed; calls with changing
tensor layouts and settings never run a stale plan; outputs dropped before backward; tensors
left over from torch.func; second derivatives and torch.func transforms are refused clearly;
a small model trains through a wrapped kernel; wrapped calls are not recorded on a `wp.Tape`.
"""

import numpy as np
import pytest

import weft as wp

torch = pytest.importorskip("torch")

F64 = torch.float64


# Kernels --------------------------------------------------------------------------------------
@wp.kernel
def scale_sin(x: wp.array(dtype=wp.float64), a: wp.float64, y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = a * wp.sin(x[i]) * x[i]


@wp.kernel
def two_outputs(x: wp.array(dtype=wp.float64), w: wp.array(dtype=wp.float64),
                y: wp.array(dtype=wp.float64), z: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * w[i]
    z[i] = wp.exp(x[i]) + w[i] * w[i] * x[i]


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec3d), v: wp.array(dtype=wp.vec3d), gravity: wp.vec3d, dt: wp.float64,
              x_new: wp.array(dtype=wp.vec3d), v_new: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    vi = v[i]
    vn = vi + (gravity - wp.float64(0.3) * wp.length(vi) * vi) * dt
    v_new[i] = vn
    x_new[i] = x[i] + vn * dt + wp.vec3d(wp.sin(x[i][0]), 0.0, 0.0) * dt


@wp.kernel
def grid(a: wp.array2d(dtype=wp.float64), b: wp.array2d(dtype=wp.float64), c: wp.array2d(dtype=wp.float64)):
    i, j = wp.tid()
    c[i, j] = a[i, j] * b[i, j] + wp.sin(a[i, j]) * wp.float64(j + 1)


@wp.kernel
def row_norms(a: wp.array2d(dtype=wp.float64), s: wp.array(dtype=wp.float64)):
    i, j = wp.tid()
    wp.atomic_add(s, i, a[i, j] * a[i, j])


@wp.kernel
def fold(x: wp.array(dtype=wp.float64), w: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    """out[j] = sum over i with i % len(w) == j of x[i] * sin(w[j])."""
    i = wp.tid()
    j = i % w.shape[0]
    wp.atomic_add(out, j, x[i] * wp.sin(w[j]))


@wp.kernel
def square_and_sign(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64),
                    sign: wp.array(dtype=wp.int32)):
    i = wp.tid()
    y[i] = x[i] * x[i]
    if x[i] > wp.float64(0.0):
        sign[i] = 1
    else:
        sign[i] = -1


@wp.kernel
def offset_vec(x: wp.array(dtype=wp.float64), offset: wp.vec3d, scale: wp.float64, y: wp.array(dtype=wp.vec3d)):
    i = wp.tid()
    y[i] = (offset + wp.vec3d(x[i], x[i] * x[i], wp.float64(1.0))) * scale


@wp.kernel
def writes_its_input(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i]
    x[i] = wp.float64(0.0)


@wp.kernel
def accumulate_into_output(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = y[i] + x[i] * x[i]


@wp.kernel
def read_back_output(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64), z: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = wp.sin(x[i])
    z[i] = y[i] * y[i] * wp.float64(2.0)


@wp.kernel
def shifted(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i + 1]


@wp.kernel
def damped_model(t: wp.array(dtype=float), params: wp.array(dtype=float), y: wp.array(dtype=float)):
    """y = amplitude * exp(-decay * t) * cos(3 t): params = (amplitude, decay)."""
    i = wp.tid()
    y[i] = params[0] * wp.exp(-params[1] * t[i]) * wp.cos(3.0 * t[i])


scale_sin_op = wp.torch.wrap(scale_sin, outputs=["y"])
two_outputs_op = wp.torch.wrap(two_outputs, outputs=["y", "z"])
integrate_op = wp.torch.wrap(integrate, outputs=["x_new", "v_new"])
grid_op = wp.torch.wrap(grid, outputs=["c"])
sign_op = wp.torch.wrap(square_and_sign, outputs=["y", "sign"])
offset_op = wp.torch.wrap(offset_vec, outputs=["y"])


def _randn(*shape, seed=0, requires_grad=True):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=F64, generator=gen).requires_grad_(requires_grad)


def _gradcheck(fn, inputs):
    assert torch.autograd.gradcheck(fn, inputs, eps=1e-6, atol=1e-8, rtol=1e-6)


# Gradcheck -------------------------------------------------------------------------------------
def test_single_output_values_and_gradcheck():
    x = _randn(7)
    y = scale_sin_op(x, 1.5)
    assert isinstance(y, torch.Tensor) and y.dtype == F64 and tuple(y.shape) == (7,) and y.requires_grad
    torch.testing.assert_close(y, 1.5 * torch.sin(x) * x, rtol=1e-14, atol=1e-14)
    _gradcheck(lambda x: scale_sin_op(x, 1.5), (x,))
    (g,) = torch.autograd.grad(y.sum(), x)
    torch.testing.assert_close(g, 1.5 * (torch.cos(x) * x + torch.sin(x)), rtol=1e-13, atol=1e-14)


def test_two_outputs_gradcheck():
    x, w = _randn(6, seed=1), _randn(6, seed=2)
    y, z = two_outputs_op(x, w)
    torch.testing.assert_close(y, x * w)
    torch.testing.assert_close(z, torch.exp(x) + w * w * x)
    _gradcheck(two_outputs_op, (x, w))
    # only one output used: the other's gradient is missing, not a problem
    gx, gw = torch.autograd.grad(two_outputs_op(x, w)[1].sum(), (x, w))
    torch.testing.assert_close(gx, torch.exp(x) + w * w)
    torch.testing.assert_close(gw, 2.0 * w * x)


def test_vec3d_arrays_gradcheck_and_match_torch():
    x, v = _randn(4, 3, seed=3), _randn(4, 3, seed=4)
    g = (0.0, -9.8, 0.0)
    x_new, v_new = integrate_op(x, v, g, 0.05)
    assert tuple(x_new.shape) == (4, 3) and tuple(v_new.shape) == (4, 3)

    vn = v + (torch.tensor(g, dtype=F64) - 0.3 * torch.linalg.vector_norm(v, dim=1, keepdim=True) * v) * 0.05
    sx = torch.zeros_like(x)
    sx[:, 0] = torch.sin(x[:, 0]) * 0.05
    torch.testing.assert_close(v_new, vn, rtol=1e-14, atol=1e-14)
    torch.testing.assert_close(x_new, x + vn * 0.05 + sx, rtol=1e-14, atol=1e-14)
    _gradcheck(lambda x, v: integrate_op(x, v, g, 0.05), (x, v))


def test_sum_of_vector_output_broadcast_gradient():
    """`out.sum()` hands backward one number broadcast to (n, 3): the op copes."""
    x, v = _randn(4, 3, seed=5), _randn(4, 3, seed=6)
    x_new, v_new = integrate_op(x, v, (0.0, -9.8, 0.0), 0.05)
    (x_new.sum() + v_new.sum()).backward()
    x2, v2 = x.detach().clone().requires_grad_(), v.detach().clone().requires_grad_()
    a, b = integrate_op(x2, v2, (0.0, -9.8, 0.0), 0.05)
    (a * torch.ones_like(a) + b * torch.ones_like(b)).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad, rtol=0, atol=0)
    torch.testing.assert_close(v.grad, v2.grad, rtol=0, atol=0)


def test_2d_arrays_dim_defaults_to_first_input_shape():
    a, b = _randn(3, 5, seed=7), _randn(3, 5, seed=8)
    c = grid_op(a, b)
    assert tuple(c.shape) == (3, 5)
    cols = torch.arange(1, 6, dtype=F64)
    torch.testing.assert_close(c, a * b + torch.sin(a) * cols, rtol=1e-14, atol=1e-14)
    _gradcheck(grid_op, (a, b))


def test_output_shape_as_tuple():
    op = wp.torch.wrap(row_norms, outputs={"s": (3,)})
    a = _randn(3, 4, seed=9)
    s = op(a)
    torch.testing.assert_close(s, (a * a).sum(dim=1))
    _gradcheck(op, (a,))


def test_output_shape_as_input_name_and_callable():
    x, w = _randn(10, seed=10), _randn(4, seed=11)
    expected = torch.zeros(4, dtype=F64)
    for i in range(10):
        expected[i % 4] += x[i].detach() * torch.sin(w[i % 4].detach())
    for outputs in ({"out": "w"}, {"out": lambda x, w: (w.shape[0],)}, {"out": lambda x, w: w.shape[0]}):
        op = wp.torch.wrap(fold, outputs=outputs)
        out = op(x, w)
        assert tuple(out.shape) == (4,)
        torch.testing.assert_close(out.detach(), expected, rtol=1e-14, atol=1e-14)
        _gradcheck(op, (x, w))


def test_explicit_dim_int_tuple_and_callable():
    x, w = _randn(10, seed=12), _randn(4, seed=13)
    for dim in (6, (6,), lambda x, w: 6):
        op = wp.torch.wrap(fold, outputs={"out": "w"}, dim=dim)
        out = op(x, w)
        expected = torch.zeros(4, dtype=F64)
        for i in range(6):
            expected[i % 4] += x[i].detach() * torch.sin(w[i % 4].detach())
        torch.testing.assert_close(out.detach(), expected, rtol=1e-14, atol=1e-14)
    _gradcheck(op, (x, w))


def test_strided_and_broadcast_inputs_gradcheck():
    a = _randn(5, 3, seed=40)
    b = _randn(3, 5, seed=41)
    _gradcheck(lambda a, b: grid_op(a.t(), b), (a, b))  # a transposed view
    c = grid_op(a.t(), b)
    torch.testing.assert_close(c, a.t() * b + torch.sin(a.t()) * torch.arange(1, 6, dtype=F64))
    x = _randn(12, seed=42)
    _gradcheck(lambda x: scale_sin_op(x[::3], 0.5), (x,))  # every third element
    # vec3d rows: a column slice of a wider tensor, and one row broadcast to all (stride 0)
    wide, v0 = _randn(4, 5, seed=43), _randn(1, 3, seed=44)
    _gradcheck(lambda wide, v0: integrate_op(wide[:, 1:4], v0.expand(4, 3), (0.0, -1.0, 0.0), 0.1), (wide, v0))


def test_same_tensor_as_two_inputs():
    x = _randn(6, seed=45)
    _gradcheck(lambda x: two_outputs_op(x, x), (x,))
    y, z = two_outputs_op(x, x)
    (y + z).sum().backward()
    xd = x.detach()
    torch.testing.assert_close(x.grad, 2.0 * xd + torch.exp(xd) + 3.0 * xd * xd)


def test_gradient_accumulated_over_many_threads():
    """A small array read by every thread of a large (multi-threaded) launch: its gradient
    sums the contributions of all threads."""
    saved = wp.config.parallel_threshold
    wp.config.parallel_threshold = 1024
    try:
        op = wp.torch.wrap(fold, outputs={"out": "w"})
        x, w = _randn(200_003, seed=46), _randn(7, seed=47)
        out = op(x, w)
        gen = torch.Generator().manual_seed(48)
        seed = torch.randn(7, dtype=F64, generator=gen)
        gx, gw = torch.autograd.grad(out, (x, w), grad_outputs=seed)
    finally:
        wp.config.parallel_threshold = saved
    xd, wd = x.detach(), w.detach()
    j = torch.arange(len(xd)) % 7
    expected = torch.zeros(7, dtype=F64).index_add_(0, j, xd * torch.sin(wd[j]))
    torch.testing.assert_close(out.detach(), expected, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(gx, seed[j] * torch.sin(wd[j]), rtol=1e-14, atol=1e-14)
    gw_expected = torch.zeros(7, dtype=F64).index_add_(0, j, xd) * torch.cos(wd) * seed
    torch.testing.assert_close(gw, gw_expected, rtol=1e-10, atol=1e-10)


def test_output_shape_of_wrong_rank_is_refused():
    op = wp.torch.wrap(row_norms, outputs=["s"])  # default shape: the 2-D launch shape
    with pytest.raises(ValueError, match="'s'"):
        op(_randn(3, 4))


def test_outputs_the_kernel_also_reads_gradcheck():
    acc = wp.torch.wrap(accumulate_into_output, outputs=["y"])
    x = _randn(5, seed=14)
    torch.testing.assert_close(acc(x), x * x)
    _gradcheck(acc, (x,))

    back = wp.torch.wrap(read_back_output, outputs=["y", "z"])
    y, z = back(x)
    torch.testing.assert_close(y, torch.sin(x))
    torch.testing.assert_close(z, 2.0 * torch.sin(x) ** 2)
    _gradcheck(back, (x,))
    (g,) = torch.autograd.grad(z.sum(), x)
    torch.testing.assert_close(g, 4.0 * torch.sin(x) * torch.cos(x), rtol=1e-13, atol=1e-14)


# Gradients torch passes in ---------------------------------------------------------------------
@pytest.mark.parametrize("kernel,outputs", [(two_outputs, ["y", "z"]), (read_back_output, ["y", "z"])],
                         ids=["write-only", "read-back"])
def test_incoming_gradients_are_never_modified(kernel, outputs):
    op = wp.torch.wrap(kernel, outputs=outputs)
    x = _randn(5, seed=15)
    args = (x, _randn(5, seed=16)) if kernel is two_outputs else (x,)
    y, z = op(*args)
    gy, gz = _randn(5, seed=17, requires_grad=False), _randn(5, seed=18, requires_grad=False)
    before = gy.clone(), gz.clone()
    first = torch.autograd.grad((y, z), args, grad_outputs=(gy, gz), retain_graph=True)
    assert torch.equal(gy, before[0]) and torch.equal(gz, before[1])
    again = torch.autograd.grad((y, z), args, grad_outputs=(gy, gz))
    for a, b in zip(first, again):
        assert torch.equal(a, b)


def test_gradient_reaching_two_consumers_is_left_intact():
    """out = y + x: the add gives the same gradient tensor to x and to the op's backward,
    and a hook sees it unchanged after the op's backward ran."""
    back = wp.torch.wrap(read_back_output, outputs=["y", "z"])
    x = _randn(5, seed=19)
    seen = []
    _, z = back(x)
    out = z + x
    out.register_hook(lambda g: seen.append(g.clone()) or None)
    w = _randn(5, seed=20, requires_grad=False)
    (out * w).sum().backward()
    assert torch.equal(seen[0], w)
    torch.testing.assert_close(x.grad, w * (1.0 + 4.0 * torch.sin(x.detach()) * torch.cos(x.detach())),
                               rtol=1e-13, atol=1e-14)


# Integer outputs, no_grad, inputs without gradients ------------------------------------------------
def test_integer_output_is_not_differentiable():
    x = _randn(6, seed=21)
    y, sign = sign_op(x)
    assert sign.dtype == torch.int32 and not sign.requires_grad
    assert torch.equal(sign, torch.where(x.detach() > 0, 1, -1).to(torch.int32))
    assert y.requires_grad
    y.sum().backward()
    torch.testing.assert_close(x.grad, 2.0 * x.detach())
    _gradcheck(lambda x: sign_op(x)[0], (x,))


def test_no_grad_builds_no_graph():
    x = _randn(5, seed=22)
    with torch.no_grad():
        y = scale_sin_op(x, 2.0)
        y2, z2 = two_outputs_op(x, x)
    for t in (y, y2, z2):
        assert not t.requires_grad and t.grad_fn is None
    torch.testing.assert_close(y, 2.0 * torch.sin(x.detach()) * x.detach())
    # nothing requires grad: no graph either
    y = scale_sin_op(x.detach(), 2.0)
    assert not y.requires_grad and y.grad_fn is None


def test_inputs_that_do_not_require_grad_get_none():
    x, w = _randn(6, seed=23), _randn(6, seed=24, requires_grad=False)
    y, z = two_outputs_op(x, w)
    (y + z).sum().backward()
    assert w.grad is None
    torch.testing.assert_close(x.grad, w + torch.exp(x.detach()) + w * w)
    # asked for explicitly, the op still computes only what is needed
    x2, w2 = _randn(6, seed=23, requires_grad=False), _randn(6, seed=24)
    _, z = two_outputs_op(x2, w2)
    (gw,) = torch.autograd.grad(z.sum(), w2)
    torch.testing.assert_close(gw, 2.0 * w2.detach() * x2)
    assert x2.grad is None


# Non-array arguments ----------------------------------------------------------------------------
def test_non_array_arguments_as_numbers_tuples_and_tensors():
    x = _randn(4, seed=25)
    expected = (torch.stack([x * 0 + 1.0, x * 0 - 2.0, x * 0 + 0.5], dim=1)
                + torch.stack([x, x * x, torch.ones_like(x)], dim=1)) * 1.5
    variants = [((1.0, -2.0, 0.5), 1.5),
                ([1.0, -2.0, 0.5], 1.5),
                (wp.vec3d(1.0, -2.0, 0.5), 1.5),
                (torch.tensor([1.0, -2.0, 0.5], dtype=F64), torch.tensor(1.5, dtype=F64)),
                (torch.tensor([1.0, -2.0, 0.5]), np.float64(1.5))]
    for offset, scale in variants:
        y = offset_op(x, offset, scale)
        assert tuple(y.shape) == (4, 3)
        torch.testing.assert_close(y, expected, rtol=1e-14, atol=1e-14)
    _gradcheck(lambda x: offset_op(x, (1.0, -2.0, 0.5), 1.5), (x,))


def test_non_array_tensor_arguments_get_no_gradient():
    x = _randn(4, seed=26)
    offset = torch.tensor([1.0, -2.0, 0.5], dtype=F64, requires_grad=True)
    scale = torch.tensor(1.5, dtype=F64, requires_grad=True)
    y = offset_op(x, offset, scale)
    y.sum().backward()
    assert offset.grad is None and scale.grad is None
    torch.testing.assert_close(x.grad, 1.5 * (1.0 + 2.0 * x.detach()))


def test_keyword_arguments():
    x = _randn(4, seed=27)
    y1 = offset_op(x, scale=2.0, offset=(0.0, 1.0, 2.0))
    y2 = offset_op(x=x, offset=(0.0, 1.0, 2.0), scale=2.0)
    torch.testing.assert_close(y1, y2, rtol=0, atol=0)
    with pytest.raises(TypeError, match="missing"):
        offset_op(x, scale=2.0)
    with pytest.raises(TypeError, match="twice"):
        offset_op(x, (0.0, 1.0, 2.0), 2.0, x=x)
    with pytest.raises(TypeError, match="no input 'bogus'"):
        offset_op(x, (0.0, 1.0, 2.0), 2.0, bogus=1)
    with pytest.raises(TypeError, match="takes 3 inputs"):
        offset_op(x, (0.0, 1.0, 2.0), 2.0, 3.0)


def test_repr_and_name():
    assert offset_op.__name__ == "offset_vec"
    r = repr(integrate_op)
    assert "integrate" in r and "x_new" in r and "gravity" in r


# Errors ------------------------------------------------------------------------------------------
def test_kernel_writing_an_input_is_refused_at_wrap_time():
    with pytest.raises(ValueError, match="writes 'x'"):
        wp.torch.wrap(writes_its_input, outputs=["y"])
    wp.torch.wrap(writes_its_input, outputs=["x", "y"])  # both outputs: fine


def test_bad_outputs_are_refused():
    with pytest.raises(ValueError, match="no parameter 'w'"):
        wp.torch.wrap(scale_sin, outputs=["w"])
    with pytest.raises(ValueError, match="no parameter 'nope'"):
        wp.torch.wrap(scale_sin, outputs={"nope": (3,)})
    with pytest.raises(TypeError, match="'a'"):
        wp.torch.wrap(scale_sin, outputs=["y", "a"])  # a float, not an array
    with pytest.raises(ValueError, match="at least one output"):
        wp.torch.wrap(scale_sin, outputs=[])
    with pytest.raises(TypeError, match="kernel"):
        wp.torch.wrap(lambda x: x, outputs=["y"])


def test_wrong_dtype_is_refused():
    with pytest.raises(TypeError, match="float32"):
        scale_sin_op(torch.randn(5, dtype=torch.float32), 1.0)
    with pytest.raises(TypeError, match="float32"):
        integrate_op(torch.zeros(4, 3, dtype=F64), torch.zeros(4, 3), (0.0, 0.0, 0.0), 0.1)


def test_wrong_ndim_and_non_tensors_are_refused():
    with pytest.raises(ValueError, match="op 'scale_sin', input 'x'"):
        scale_sin_op(torch.zeros(2, 3, dtype=F64), 1.0)
    with pytest.raises(ValueError):  # vec3d: the components are a trailing dimension of 3
        integrate_op(torch.zeros(4, dtype=F64), torch.zeros(4, 3, dtype=F64), (0.0, 0.0, 0.0), 0.1)
    with pytest.raises(ValueError):
        integrate_op(torch.zeros(4, 2, dtype=F64), torch.zeros(4, 2, dtype=F64), (0.0, 0.0, 0.0), 0.1)
    with pytest.raises(TypeError, match="op 'scale_sin', input 'x'.*torch.Tensor"):
        scale_sin_op(np.zeros(3), 1.0)


BAD_TENSORS = {
    "dtype": (TypeError, lambda: scale_sin_op(torch.randn(5, dtype=torch.float32), 1.0), "scale_sin", "x"),
    "vec-dtype": (TypeError, lambda: integrate_op(torch.zeros(4, 3, dtype=F64), torch.zeros(4, 3),
                                                 (0.0, 0.0, 0.0), 0.1), "integrate", "v"),
    "vec-shape": (ValueError, lambda: integrate_op(torch.zeros(4, 3, dtype=F64), torch.zeros(4, dtype=F64),
                                                  (0.0, 0.0, 0.0), 0.1), "integrate", "v"),
}


@pytest.mark.parametrize("case", list(BAD_TENSORS))
def test_bad_tensor_errors_name_the_op_and_the_input(case):
    exc, call, op_name, input_name = BAD_TENSORS[case]
    with pytest.raises(exc) as info:
        call()
    assert f"op '{op_name}', input '{input_name}'" in str(info.value)


def test_out_of_bounds_access_raises_index_error():
    op = wp.torch.wrap(shifted, outputs=["y"])
    x = _randn(5, seed=28)
    with pytest.raises(IndexError):
        op(x)
    with torch.no_grad(), pytest.raises(IndexError):
        op(x)
    # the op is still usable after the error
    op_ok = wp.torch.wrap(shifted, outputs=["y"], dim=4)
    y = op_ok(x)
    torch.testing.assert_close(y, x[1:])
    _gradcheck(op_ok, (x,))


def test_second_derivatives_are_refused():
    """The adjoint is not itself differentiable: asking for a second derivative is an error,
    while create_graph=True alone still gives the gradient. Both with a constant incoming
    gradient (of a sum), and one that depends on x (of a square)."""
    x = _randn(5, seed=37)
    expected = 2.0 * (torch.cos(x) * x + torch.sin(x)).detach()
    (g,) = torch.autograd.grad(scale_sin_op(x, 2.0).sum(), x, create_graph=True)
    torch.testing.assert_close(g, expected)
    with pytest.raises(RuntimeError, match="op 'scale_sin': second derivatives are not supported"):
        torch.autograd.grad(g.sum() + (x * x).sum(), x)
    y = scale_sin_op(x, 2.0)
    (g,) = torch.autograd.grad((y * y).sum(), x, create_graph=True)
    torch.testing.assert_close(g, 2.0 * y.detach() * expected)
    with pytest.raises(RuntimeError, match="second derivatives are not supported"):
        torch.autograd.grad(g.sum(), x)
    # through the incoming gradient only: d/dw of d/dx sum(w * y)
    w = _randn(5, seed=38)
    (g,) = torch.autograd.grad((w * scale_sin_op(x, 2.0)).sum(), x, create_graph=True)
    torch.testing.assert_close(g, w.detach() * expected)
    with pytest.raises(RuntimeError, match="second derivatives are not supported"):
        torch.autograd.grad(g.sum(), w)


def test_input_changed_in_place_before_backward_is_detected():
    x = _randn(5, seed=29)
    y = x * 1.0
    out = scale_sin_op(y, 1.0)
    with torch.no_grad():
        y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


# Calls with changing layouts and settings ------------------------------------------------------
# Calls with the same tensor layouts share a plan (an argument block with shapes and strides
# written, and the compiled kernel); these check that a call never runs on a stale one.
@wp.kernel
def checked_sqrt(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    assert x[i] >= wp.float64(0.0)
    y[i] = wp.sqrt(wp.abs(x[i]))


def _scale_sin(x, a):
    return a * torch.sin(x) * x


def test_changing_layouts_between_calls():
    base = _randn(16, seed=31)
    calls = [base[:8], base[::2], base[3:8], base[:8], base[1::3], base.detach()[:8].clone(), base[::2]]
    for x in calls:
        torch.testing.assert_close(scale_sin_op(x, 0.5), _scale_sin(x, 0.5), rtol=1e-14, atol=1e-14)
    (g,) = torch.autograd.grad(scale_sin_op(base[1::3], 2.0).sum(), base)
    (expected,) = torch.autograd.grad(_scale_sin(base[1::3], 2.0).sum(), base)
    torch.testing.assert_close(g, expected, rtol=1e-14, atol=1e-14)
    # more layouts than one op keeps plans for
    for n in range(1, 80):
        x = base.detach()[:n % 16 + 1] if n < 40 else base.detach()[::n % 4 + 1]
        torch.testing.assert_close(scale_sin_op(x, 1.5), _scale_sin(x, 1.5), rtol=1e-14, atol=1e-14)


def test_changing_settings_between_calls_recompiles():
    op = wp.torch.wrap(checked_sqrt, outputs=["y"])
    x = torch.tensor([4.0, -1.0, 9.0], dtype=F64)
    saved = wp.config.mode
    try:
        wp.config.mode = "release"  # asserts are not compiled
        torch.testing.assert_close(op(x), torch.tensor([2.0, 1.0, 3.0], dtype=F64))
        wp.config.mode = "debug"
        with pytest.raises(AssertionError, match="checked_sqrt"):
            op(x)
        wp.config.mode = "release"
        torch.testing.assert_close(op(x), torch.tensor([2.0, 1.0, 3.0], dtype=F64))
    finally:
        wp.config.mode = saved


def test_module_options_count_as_a_settings_change():
    before = wp.config.changes
    wp.set_module_options({"fast_math": False})
    assert wp.config.changes > before


def test_outputs_dropped_before_backward():
    """The adjoint needs the inputs, not the outputs: an output the caller dropped (its
    memory freed) takes no part in backward."""
    x, w = _randn(6, seed=32), _randn(6, seed=33)
    y, z = two_outputs_op(x, w)
    del z
    y.sum().backward()
    torch.testing.assert_close(x.grad, w.detach())
    torch.testing.assert_close(w.grad, x.detach())

    back = wp.torch.wrap(read_back_output, outputs=["y", "z"])
    x = _randn(6, seed=34)
    y, z = back(x)
    del y
    (g,) = torch.autograd.grad(z.sum(), x)
    torch.testing.assert_close(g, 4.0 * torch.sin(x) * torch.cos(x), rtol=1e-13, atol=1e-14)


def test_tensor_left_over_from_a_torch_func_transform():
    """A tensor that escaped `torch.func.grad` is unwrapped, as torch.autograd.Function does."""
    leaked = []

    def f(t):
        leaked.append(t)
        return (t * t).sum()

    inner = _randn(5, seed=35, requires_grad=False)
    torch.func.grad(f)(inner)
    (dead,) = leaked
    assert torch._C._functorch.is_dead_tensor_wrapper(dead)
    x = _randn(5, seed=36)
    y, z = two_outputs_op(x, dead)
    torch.testing.assert_close(y, x * inner)
    y.sum().backward()
    torch.testing.assert_close(x.grad, inner)
    with torch.no_grad():
        torch.testing.assert_close(scale_sin_op(dead, 2.0), _scale_sin(inner, 2.0))


def test_torch_func_transforms_are_refused_clearly():
    x = _randn(3, 5, seed=39, requires_grad=False)
    with pytest.raises(TypeError, match="op 'scale_sin', input 'x': torch.func transforms"):
        torch.func.vmap(lambda row: scale_sin_op(row, 2.0))(x)
    with pytest.raises(RuntimeError, match="functorch transforms"):  # torch's own message
        torch.func.grad(lambda row: scale_sin_op(row, 2.0).sum())(x[0])


# Training and tapes ------------------------------------------------------------------------------
class DampedOscillator(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.params = torch.nn.Parameter(torch.tensor([0.5, 0.1]))  # amplitude, decay
        self.op = wp.torch.wrap(damped_model, outputs=["y"])

    def forward(self, t):
        return self.op(t, self.params)


def test_training_a_module_through_a_wrapped_kernel():
    true = torch.tensor([2.0, 0.7])
    t = torch.linspace(0.0, 3.0, 64)
    target = true[0] * torch.exp(-true[1] * t) * torch.cos(3.0 * t)
    model = DampedOscillator()
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    losses = []
    for _ in range(100):
        opt.zero_grad()
        loss = ((model(t) - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0] * 1e-4
    torch.testing.assert_close(model.params.detach(), true, rtol=1e-2, atol=1e-2)


def test_wrapped_calls_are_not_recorded_on_a_tape():
    x = _randn(5, seed=30)
    with wp.Tape() as tape:
        y = scale_sin_op(x, 1.0)
    assert tape.launches == []
    y.sum().backward()
    torch.testing.assert_close(x.grad, torch.cos(x.detach()) * x.detach() + torch.sin(x.detach()))
