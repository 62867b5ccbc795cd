"""PyTorch interop (`wp.from_torch`, `wp.to_torch` and the dtype/device maps): arrays and
tensors share memory in both directions for every scalar dtype, vector and matrix dtypes map
to trailing dimensions, strided tensors give strided arrays, gradients are the same memory
(a `wp.Tape` fills `tensor.grad`), and clear errors where no view exists."""

import gc

import numpy as np
import pytest

import weft as wp

from .common import COPY, SCALARS, affine, torch_dtype
from .common import other as _other
from .common import values as _values

torch = pytest.importorskip("torch")

@wp.kernel
def copy2d(src: wp.array2d(dtype=float), dst: wp.array2d(dtype=float)):
    i, j = wp.tid()
    dst[i, j] = src[i, j]


@wp.kernel
def shift_vec(a: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a[i] = a[i] * 2.0 + wp.vec3(1.0, 2.0, 3.0)


@wp.kernel
def vec_dot(a: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.dot(a[i], wp.vec3(1.0, 10.0, 100.0))


@wp.kernel
def fill_vec2d(a: wp.array2d(dtype=wp.vec3)):
    i, j = wp.tid()
    a[i, j] = wp.vec3(float(i), float(j), 7.0)


@wp.kernel
def mat_times_vec(m: wp.array(dtype=wp.mat33), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    out[i] = m[i] * wp.vec3(1.0, 2.0, 3.0)


@wp.kernel
def square_sum(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64), loss: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * x[i]
    wp.atomic_add(loss, 0, y[i])


# Scalar dtypes: zero copy in both directions ------------------------------------------------------
@pytest.mark.parametrize("name", SCALARS)
def test_from_torch_shares_memory_for_every_scalar_dtype(name):
    tdt = torch_dtype(name)
    t = torch.from_numpy(_values(name))
    assert t.dtype == tdt
    a = wp.from_torch(t)
    assert a.dtype is getattr(wp, name) and a.shape == (6,) and a.is_contiguous
    assert a.ptr == t.data_ptr()
    np.testing.assert_array_equal(a.numpy(), _values(name))

    new = _other(name)
    t[2] = torch.from_numpy(new[2:3])[0]  # torch in-place write, seen by weft
    assert a.numpy()[2] == new[2]
    a.numpy()[4] = new[4]  # weft (numpy view) write, seen by torch
    assert t.numpy()[4] == new[4]

    # a kernel reads the tensor's memory and writes into another tensor's memory
    out_t = torch.from_numpy(np.zeros(6, dtype=np.dtype(name)))
    wp.launch(COPY[name], 6, inputs=[a, wp.from_torch(out_t)])
    np.testing.assert_array_equal(out_t.numpy(), t.numpy())
    src = wp.array(new)
    wp.launch(COPY[name], 6, inputs=[src, a])
    np.testing.assert_array_equal(t.numpy(), new)


# dtype_to_torch gives torch's signed type of an unsigned one's size (as Warp: most torch ops lack
# uint16..64)
SIGNED_TWIN = {"uint16": "int16", "uint32": "int32", "uint64": "int64"}


@pytest.mark.parametrize("name", SCALARS)
def test_to_torch_shares_memory_for_every_scalar_dtype(name):
    # the tensor has the array's own type, unsigned ones too (as Warp's to_torch: torch.uint32
    # for a uint32 array), although dtype_to_torch names the signed twin
    tname = name
    tdt = torch_dtype(tname)
    a = wp.array(_values(name))
    t = wp.to_torch(a)
    assert t.dtype == tdt and tuple(t.shape) == (6,)
    assert t.data_ptr() == a.ptr
    np.testing.assert_array_equal(t.numpy(), _values(name).view(tname))  # the same bits

    new = _other(name)
    t[1] = torch.from_numpy(new[1:2].view(tname))[0]  # torch in-place write, seen by weft
    assert a.numpy()[1] == new[1]
    wp.launch(COPY[name], 6, inputs=[wp.array(new), a])  # kernel write, seen by torch
    np.testing.assert_array_equal(t.numpy(), new.view(tname))
    assert wp.from_torch(t, dtype=getattr(wp, name)).dtype is getattr(wp, name)  # and back


def test_torch_in_place_ops_on_views_of_weft_memory():
    a = wp.array(np.arange(5, dtype=np.float32))
    t = wp.to_torch(a)
    t.mul_(3.0).add_(1.0)
    np.testing.assert_array_equal(a.numpy(), np.arange(5) * 3.0 + 1.0)
    b = wp.from_torch(t)
    assert b.ptr == a.ptr
    t.zero_()
    assert not b.numpy().any()


@pytest.mark.parametrize("name", SCALARS)
def test_dtype_maps(name):
    tdt = torch_dtype(name)
    assert wp.dtype_from_torch(tdt) is getattr(wp, name)
    assert wp.dtype_to_torch(getattr(wp, name)) == torch_dtype(SIGNED_TWIN.get(name, name))


def test_dtype_maps_of_vectors_and_matrices_give_the_component_type():
    assert wp.dtype_to_torch(wp.vec3) == torch.float32
    assert wp.dtype_to_torch(wp.mat33d) == torch.float64
    assert wp.dtype_to_torch(wp.vec4h) == torch.float16
    assert wp.dtype_to_torch(wp.types.vector(2, wp.int32)) == torch.int32


@pytest.mark.parametrize("tdt", ["complex64", "complex128"])
def test_dtype_from_torch_refuses_types_weft_lacks(tdt):
    with pytest.raises(TypeError, match=tdt):
        wp.dtype_from_torch(getattr(torch, tdt))


@wp.struct
class Pair:
    a: float
    b: int


def test_dtype_to_torch_refuses_structs():
    with pytest.raises(TypeError, match="no torch equivalent"):
        wp.dtype_to_torch(Pair)
    with pytest.raises(TypeError):
        wp.to_torch(wp.zeros(2, dtype=Pair))


def test_device_maps():
    assert wp.device_from_torch(torch.device("cpu")) == "cpu"
    assert wp.device_from_torch("cpu") == wp.get_device("cpu")
    assert wp.device_to_torch() == "cpu"
    assert wp.device_to_torch("cpu") == "cpu"
    assert torch.device(wp.device_to_torch(wp.get_device())) == torch.device("cpu")
    for kind in (ValueError, RuntimeError):  # (RuntimeError: Warp's class)
        with pytest.raises(kind, match="Unsupported Torch device cuda:0"):
            wp.device_from_torch("cuda:0")
    with pytest.raises(ValueError, match="cuda"):
        wp.device_from_torch(torch.device("cuda", 1))


# Vector and matrix dtypes ---------------------------------------------------------------------------
def test_vec3_from_trailing_dimension_and_kernel_writes_the_tensor():
    t = torch.arange(12, dtype=torch.float32).reshape(4, 3)
    before = t.clone()
    a = wp.from_torch(t, dtype=wp.vec3)
    assert a.dtype is wp.vec3 and a.shape == (4,) and a.ndim == 1 and a.strides == (12,)
    assert a.ptr == t.data_ptr()
    np.testing.assert_array_equal(a.numpy(), t.numpy())
    wp.launch(shift_vec, 4, inputs=[a])
    expected = before * 2 + torch.tensor([1.0, 2.0, 3.0])
    assert torch.equal(t, expected)

    out = wp.zeros(4)
    wp.launch(vec_dot, 4, inputs=[a, out])
    np.testing.assert_allclose(out.numpy(), (expected @ torch.tensor([1.0, 10.0, 100.0])).numpy())


def test_mat33_from_trailing_dimensions():
    t = torch.arange(18, dtype=torch.float32).reshape(2, 3, 3)
    m = wp.from_torch(t, dtype=wp.mat33)
    assert m.dtype is wp.mat33 and m.shape == (2,) and m.ptr == t.data_ptr()
    out = wp.zeros(2, dtype=wp.vec3)
    wp.launch(mat_times_vec, 2, inputs=[m, out])
    np.testing.assert_allclose(out.numpy(), (t @ torch.tensor([1.0, 2.0, 3.0])).numpy())
    assert tuple(wp.to_torch(m).shape) == (2, 3, 3)


def test_2d_array_of_vec3_from_3d_tensor():
    t = torch.zeros(2, 5, 3)
    a = wp.from_torch(t, dtype=wp.vec3)
    assert a.shape == (2, 5) and a.ndim == 2 and a.dtype is wp.vec3
    wp.launch(fill_vec2d, a.shape, inputs=[a])
    i, j = torch.meshgrid(torch.arange(2.0), torch.arange(5.0), indexing="ij")
    assert torch.equal(t, torch.stack([i, j, torch.full((2, 5), 7.0)], dim=-1))


def test_to_torch_of_vector_and_matrix_arrays_adds_trailing_dimensions():
    v = wp.array(np.arange(15, dtype=np.float32).reshape(5, 3), dtype=wp.vec3)
    t = wp.to_torch(v)
    assert tuple(t.shape) == (5, 3) and t.dtype == torch.float32 and t.data_ptr() == v.ptr
    t[2] = torch.tensor([-1.0, -2.0, -3.0])
    assert v.numpy()[2].tolist() == [-1.0, -2.0, -3.0]
    m = wp.zeros((2, 4), dtype=wp.mat22d)
    assert tuple(wp.to_torch(m).shape) == (2, 4, 2, 2) and wp.to_torch(m).dtype == torch.float64


def test_vec3_needs_matching_component_type_and_count():
    with pytest.raises(TypeError, match="float64"):
        wp.from_torch(torch.zeros(4, 3, dtype=torch.float64), dtype=wp.vec3)
    with pytest.raises(ValueError, match=r"does not end in \(3,\)"):
        wp.from_torch(torch.zeros(4, 4), dtype=wp.vec3)
    assert wp.from_torch(torch.zeros(4, 3, dtype=torch.float64), dtype=wp.vec3d).dtype is wp.vec3d


# Strided and non-contiguous tensors -----------------------------------------------------------------
def test_transposed_tensor_is_a_strided_view():
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    t = base.t()
    a = wp.from_torch(t)
    assert a.shape == (4, 3) and a.strides == (4, 16) and not a.is_contiguous
    assert a.ptr == t.data_ptr()
    np.testing.assert_array_equal(a.numpy(), t.numpy())
    out = wp.zeros((4, 3))
    wp.launch(copy2d, (4, 3), inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), t.numpy())
    # a kernel writing through the transposed view lands in the right places of the base
    src = wp.array(-np.arange(12, dtype=np.float32).reshape(4, 3))
    wp.launch(copy2d, (4, 3), inputs=[src, a])
    np.testing.assert_array_equal(base.numpy(), -np.arange(12, dtype=np.float32).reshape(4, 3).T)


def test_stepped_slice_is_a_strided_view():
    base = torch.arange(20, dtype=torch.float32)
    t = base[1::3]
    a = wp.from_torch(t)
    assert a.shape == (7,) and a.strides == (12,) and not a.is_contiguous
    assert a.ptr == t.data_ptr()
    out = wp.zeros(7)
    wp.launch(affine, 7, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), np.arange(1, 20, 3) * 2.0 + 1.0)
    wp.launch(affine, 7, inputs=[wp.zeros(7), a])  # writes only at the slice's positions
    expected = np.arange(20, dtype=np.float32)
    expected[1::3] = 1.0
    np.testing.assert_array_equal(base.numpy(), expected)


def test_vec3_with_non_contiguous_components_is_refused():
    t = torch.zeros(3, 6).t()  # (6, 3), but the components of each row are 24 bytes apart
    with pytest.raises(ValueError, match="components of each vec3f are not contiguous"):
        wp.from_torch(t, dtype=wp.vec3)
    assert wp.from_torch(t.contiguous(), dtype=wp.vec3).shape == (6,)


def test_broadcast_components_are_refused_with_a_hint():
    t = torch.tensor(1.0).expand(4, 3)  # strides (0, 0)
    with pytest.raises(ValueError, match="broadcast"):
        wp.from_torch(t, dtype=wp.vec3)


def test_expanded_scalar_tensor_is_viewable():
    t = torch.tensor([2.5]).expand(5)
    a = wp.from_torch(t)
    assert a.shape == (5,) and a.strides == (0,) and a.ptr == t.data_ptr()
    out = wp.zeros(5)
    wp.launch(affine, 5, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), np.full(5, 6.0))


def test_expanded_rows_of_vec3_are_viewable():
    row = torch.tensor([1.0, 2.0, 3.0])
    a = wp.from_torch(row.expand(4, 3), dtype=wp.vec3)
    assert a.shape == (4,) and a.strides == (0,)
    out = wp.zeros(4)
    wp.launch(vec_dot, 4, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), np.full(4, 321.0))


def test_reversed_weft_view_cannot_be_a_tensor():
    a = wp.array(np.arange(5, dtype=np.float32))
    with pytest.raises(ValueError, match="negative strides"):
        wp.to_torch(a[::-1])
    t = wp.to_torch(a[::-1].contiguous())
    assert t.tolist() == [4.0, 3.0, 2.0, 1.0, 0.0]


def test_strided_weft_view_gives_a_strided_tensor():
    a = wp.array(np.arange(10, dtype=np.float32))
    t = wp.to_torch(a[1::2])
    assert t.stride() == (2,) and t.data_ptr() == a.ptr + 4
    t.fill_(-1.0)
    assert a.numpy().tolist() == [0, -1, 2, -1, 4, -1, 6, -1, 8, -1]


# Errors ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("tdt", ["complex64", "float8_e4m3fn"])
def test_tensors_of_dtypes_weft_lacks_are_refused(tdt):
    with pytest.raises(TypeError, match=tdt):
        wp.from_torch(torch.zeros(3, dtype=getattr(torch, tdt)))


@pytest.mark.parametrize("value", [np.zeros(3, np.float32), [1.0, 2.0], 3.0])
def test_from_torch_needs_a_tensor(value):
    with pytest.raises(TypeError, match="expected a torch.Tensor"):
        wp.from_torch(value)


def test_to_torch_needs_a_weft_array():
    with pytest.raises(TypeError, match="expected a weft array"):
        wp.to_torch(torch.zeros(3))


def test_tensors_without_a_strided_view_are_refused():
    with pytest.raises(ValueError, match="cannot be viewed without a copy"):
        wp.from_torch(torch.eye(3).to_sparse())
    if hasattr(torch, "_neg_view"):
        with pytest.raises(ValueError, match="cannot be viewed without a copy"):
            wp.from_torch(torch._neg_view(torch.ones(3)))


def test_integer_tensors_may_have_gradients_as_in_warp():
    # Warp gives an integer tensor asked for requires_grad a shared zero gradient (torch takes
    # an integer .grad); a program passing requires_grad=True to every from_torch runs
    t = torch.arange(3, dtype=torch.int32)
    a = wp.from_torch(t, requires_grad=True)
    assert a.requires_grad and a.grad.dtype is wp.int32 and not a.grad.numpy().any()
    assert t.grad is not None and t.grad.data_ptr() == a.grad.ptr


# Gradients ------------------------------------------------------------------------------------------
def test_tensor_requiring_grad_shares_its_grad():
    t = torch.arange(3.0, requires_grad=True)
    assert t.grad is None
    a = wp.from_torch(t)
    assert a.requires_grad
    assert t.grad is not None and torch.equal(t.grad, torch.zeros(3))  # created as zeros
    assert a.grad.ptr == t.grad.data_ptr() and a.grad.shape == a.shape
    a.grad.numpy()[1] = 5.0
    assert t.grad.tolist() == [0.0, 5.0, 0.0]


def test_a_strided_tensor_gets_a_gradient_laid_out_as_it_is():
    """As Warp: the gradient allocated for a view with gaps (a column) has the view's
    strides, so kernels write it where they write the array; torch's .grad shares it. An
    incompatible gradient (a broadcast one, strides 0) is refused, as by Warp's setter."""
    x = torch.arange(12.0, dtype=torch.float64).reshape(4, 3)[:3, 1].detach()
    a = wp.from_torch(x, requires_grad=True)
    assert a.grad.strides == a.strides == (24,)
    assert x.grad is not None and x.grad.stride() == x.stride() and x.grad.data_ptr() == a.grad.ptr
    with pytest.raises(ValueError, match="expected strides"):
        wp.zeros(8).grad = wp.from_torch(torch.ones(1).expand(8))


def test_existing_tensor_grad_is_reused():
    t = torch.arange(3.0, requires_grad=True)
    (t * 4.0).sum().backward()
    g = t.grad
    a = wp.from_torch(t)
    assert t.grad is g and a.grad.ptr == g.data_ptr()
    assert a.grad.numpy().tolist() == [4.0, 4.0, 4.0]


def test_requires_grad_false_gives_no_grad():
    t = torch.arange(3.0, requires_grad=True)
    a = wp.from_torch(t, requires_grad=False)
    assert not a.requires_grad and a.grad is None and t.grad is None


def test_requires_grad_true_on_a_plain_tensor():
    t = torch.arange(3.0)
    a = wp.from_torch(t, requires_grad=True)
    assert a.requires_grad and a.grad.ptr == t.grad.data_ptr()


def test_explicit_grad_tensor_is_used():
    t = torch.arange(3.0, requires_grad=True)
    g = torch.full((3,), 7.0)
    a = wp.from_torch(t, grad=g)
    assert a.requires_grad and a.grad.ptr == g.data_ptr()
    assert a.grad.numpy().tolist() == [7.0, 7.0, 7.0]


def test_explicit_grad_of_another_shape_is_refused():
    with pytest.raises(ValueError, match=r"its gradient has shape \(4,\)"):
        wp.from_torch(torch.zeros(3, requires_grad=True), grad=torch.zeros(4))


def test_explicit_grad_of_another_dtype_is_refused():
    with pytest.raises((TypeError, ValueError)):
        wp.from_torch(torch.zeros(3, requires_grad=True), grad=torch.zeros(3, dtype=torch.float64))


def test_grad_of_vec3_tensor_is_a_vec3_array():
    t = torch.zeros(4, 3, requires_grad=True)
    a = wp.from_torch(t, dtype=wp.vec3)
    assert a.grad.dtype is wp.vec3 and a.grad.shape == (4,) and a.grad.ptr == t.grad.data_ptr()


def test_to_torch_of_array_requiring_grad_shares_the_grad():
    a = wp.array(np.arange(4, dtype=np.float32), requires_grad=True)
    t = wp.to_torch(a)
    assert t.requires_grad and t.is_leaf
    assert t.grad.data_ptr() == a.grad.ptr
    (t * 3.0).sum().backward()  # torch accumulates into the shared .grad in place
    assert a.grad.numpy().tolist() == [3.0, 3.0, 3.0, 3.0]
    plain = wp.to_torch(a, requires_grad=False)
    assert not plain.requires_grad and plain.grad is None and plain.data_ptr() == a.ptr


def test_tape_backward_fills_the_tensor_grad():
    x_values = np.array([0.5, -1.25, 2.0, 3.0], np.float64)
    x_t = torch.tensor(x_values, requires_grad=True)
    y_t = torch.zeros(4, dtype=torch.float64, requires_grad=True)
    loss_t = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    x, y, loss = wp.from_torch(x_t), wp.from_torch(y_t), wp.from_torch(loss_t)
    tape = wp.Tape()
    with tape:
        wp.launch(square_sum, 4, inputs=[x], outputs=[y, loss])
    assert loss_t.item() == pytest.approx(np.sum(x_values ** 2))
    np.testing.assert_array_equal(y_t.detach().numpy(), x_values ** 2)
    tape.backward(loss=loss)
    np.testing.assert_allclose(x_t.grad.numpy(), 2.0 * x_values, rtol=1e-15)
    assert loss_t.grad.tolist() == [1.0]  # the seed, written into the tensor's .grad
    tape.zero()
    assert not x_t.grad.numpy().any()


def test_to_torch_of_a_from_torch_array_is_a_new_leaf_over_the_same_memory():
    """As Warp: a new tensor made from the array (its dtype and shape), not the source."""
    x = torch.ones(2, requires_grad=True)
    y = x * 2  # a non-leaf: none of its graph follows into the new tensor
    z = wp.to_torch(wp.from_torch(y))
    assert z is not y and z.is_leaf and z.grad_fn is None and z.requires_grad
    assert z.data_ptr() == y.data_ptr()
    z.sum().backward()
    assert x.grad is None
    t = torch.zeros(3)
    back = wp.to_torch(wp.from_torch(t))
    back.requires_grad_(True)  # (changes the new tensor only)
    assert not t.requires_grad
    back.detach()[1] = 5.0  # writes through either are seen by the other
    t[2] = 7.0
    assert t.tolist() == [0.0, 5.0, 7.0] and back.tolist() == [0.0, 5.0, 7.0]


def test_to_torch_of_a_from_torch_array_has_the_arrays_dtype_and_shape():
    au = wp.from_torch(torch.tensor([-1, 2], dtype=torch.int32), dtype=wp.uint32)
    tu = wp.to_torch(au)
    assert tu.dtype == torch.uint32 and tu.data_ptr() == au.ptr
    assert wp.to_torch(wp.from_torch(torch.tensor([True, False]), dtype=wp.uint8)).dtype == torch.uint8
    av = wp.from_torch(torch.tensor([1.0, 2.0, 3.0]), dtype=wp.vec3)
    assert av.shape == (1,) and wp.to_torch(av).shape == (1, 3)
    t2 = torch.arange(6, dtype=torch.float32)
    assert wp.to_torch(wp.from_torch(t2).reshape((2, 3))).shape == (2, 3)


def test_to_torch_of_a_from_torch_array_shares_the_grad():
    t = torch.zeros(3, requires_grad=True)
    a = wp.from_torch(t)
    back = wp.to_torch(a)
    assert back is not t and back.is_leaf and back.requires_grad
    assert back.grad.data_ptr() == t.grad.data_ptr() == a.grad.ptr
    (back * 2.0).sum().backward()  # accumulates in place into the shared gradient memory
    assert t.grad.tolist() == [2.0, 2.0, 2.0] and a.grad.numpy().tolist() == [2.0, 2.0, 2.0]
    assert not wp.to_torch(a, requires_grad=False).requires_grad


# Empty tensors --------------------------------------------------------------------------------------
@wp.kernel
def vec_length(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.length(v[i])


def test_empty_tensors_as_vector_and_matrix_arrays():
    """torch gives an empty tensor's numpy() zero strides: they mean nothing for no elements."""
    t = torch.zeros(0, 3, requires_grad=True)
    assert t.numpy(force=True).strides == (0, 0)
    a = wp.from_torch(t, dtype=wp.vec3)
    assert a.shape == (0,) and a.dtype is wp.vec3 and a.is_contiguous and a.grad.shape == (0,)
    wp.launch(vec_length, dim=a.shape, inputs=[a, wp.zeros(0)])
    assert wp.to_torch(a).shape == (0, 3)
    desc = wp.from_torch(t, dtype=wp.vec3, return_ctype=True)
    assert desc.ndim == 1 and desc.shape[0] == 0 and desc.data == 0
    wp.launch(vec_length, dim=0, inputs=[desc, wp.zeros(0)])
    m = wp.from_torch(torch.zeros(2, 0, 2, 2), dtype=wp.mat22)
    assert m.shape == (2, 0) and m.dtype is wp.mat22
    assert wp.from_torch(torch.zeros(0, 2, 3)[:, ::2], dtype=wp.vec3).shape == (0, 1)


# Round trips, zero-dim tensors, lifetime ------------------------------------------------------------
def test_round_trips():
    t = torch.arange(4.0)
    back = wp.to_torch(wp.from_torch(t))
    assert back is not t and back.data_ptr() == t.data_ptr() and back.shape == t.shape
    tv = torch.zeros(4, 3)
    back = wp.to_torch(wp.from_torch(tv, dtype=wp.vec3))
    assert back.data_ptr() == tv.data_ptr() and back.shape == (4, 3) and back.stride() == (3, 1)
    a = wp.zeros(4)
    b = wp.from_torch(wp.to_torch(a))
    assert b.ptr == a.ptr and b.shape == a.shape and b.dtype is a.dtype
    v = wp.zeros(4, dtype=wp.vec3)
    assert wp.from_torch(wp.to_torch(v), dtype=wp.vec3).ptr == v.ptr


def test_zero_dim_tensor_gives_a_one_element_array():
    t = torch.tensor(3.0)
    a = wp.from_torch(t)
    assert a.shape == (1,) and a.ptr == t.data_ptr()
    assert a.numpy().tolist() == [3.0]
    out = wp.zeros(1)
    wp.launch(affine, 1, inputs=[a, out])
    assert out.numpy().tolist() == [7.0]
    wp.launch(affine, 1, inputs=[out, a])
    assert t.item() == 15.0


def test_array_keeps_the_tensor_memory_alive():
    t = torch.arange(1000, dtype=torch.float32)
    a = wp.from_torch(t)
    del t
    gc.collect()
    junk = [torch.full((1000,), -9.0) for _ in range(20)]  # reuse any freed memory
    np.testing.assert_array_equal(a.numpy(), np.arange(1000, dtype=np.float32))
    out = wp.zeros(1000)
    wp.launch(affine, 1000, inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), np.arange(1000) * 2.0 + 1.0)
    del junk


def test_tensor_keeps_the_array_memory_alive():
    a = wp.array(np.arange(1000, dtype=np.float32))
    t = wp.to_torch(a)
    del a
    gc.collect()
    junk = [wp.full(1000, -9.0) for _ in range(20)]
    np.testing.assert_array_equal(t.numpy(), np.arange(1000, dtype=np.float32))
    del junk


def test_grad_memory_outlives_the_tensor():
    t = torch.arange(100, dtype=torch.float32, requires_grad=True)
    a = wp.from_torch(t)
    a.grad.numpy()[:] = 2.0
    del t
    gc.collect()
    np.testing.assert_array_equal(a.grad.numpy(), np.full(100, 2.0))


# Warp's from_torch options ---------------------------------------------------------------------------
@pytest.mark.parametrize("tname,wname", [("int32", "uint32"), ("int64", "uint64"), ("int16", "uint16"),
                                         ("uint8", "int8"), ("bool", "uint8"), ("bool", "int8")])
def test_from_torch_reinterprets_integers_of_the_same_size(tname, wname):
    t = torch.tensor([0, 1, 1, 0], dtype=getattr(torch, tname))
    a = wp.from_torch(t, dtype=getattr(wp, wname))
    assert a.dtype is getattr(wp, wname) and a.ptr == t.data_ptr()
    np.testing.assert_array_equal(a.numpy(), [0, 1, 1, 0])


def test_from_torch_refuses_other_dtype_changes():
    with pytest.raises(TypeError, match="Incompatible data types"):
        wp.from_torch(torch.zeros(3, dtype=torch.bool), dtype=wp.float32)
    with pytest.raises(RuntimeError, match="Incompatible data types"):  # Warp's exception type, too
        wp.from_torch(torch.zeros(3, dtype=torch.float32), dtype=wp.int32)


def test_from_torch_shape_errors_are_also_runtime_errors():
    # Warp raises RuntimeError where the tensor's trailing dimensions are not the vector's
    for shape in [(2, 4), (6,)]:
        with pytest.raises(ValueError, match="does not end in"):
            wp.from_torch(torch.zeros(shape), dtype=wp.vec3)
        with pytest.raises(RuntimeError, match="does not end in"):
            wp.from_torch(torch.zeros(shape), dtype=wp.vec3)


def test_from_torch_return_ctype_describes_the_memory():
    t = torch.zeros((10, 3), dtype=torch.float32)
    d = wp.from_torch(t, dtype=wp.vec3, return_ctype=True)
    assert (d.data, d.grad, d.ndim, d.shape[0], d.strides[0]) == (t.data_ptr(), 0, 1, 10, 12)
    g = torch.zeros_like(t)
    assert wp.from_torch(t, dtype=wp.vec3, grad=g, return_ctype=True).grad == g.data_ptr()
    d = wp.from_torch(t, dtype=wp.vec3, requires_grad=True, return_ctype=True)
    assert d.grad == t.grad.data_ptr()
    s = wp.from_torch(torch.zeros((4, 6))[:, ::2], return_ctype=True)
    assert (s.ndim, tuple(s.shape[:2]), tuple(s.strides[:2])) == (2, (4, 3), (24, 8))


@wp.kernel
def _saxpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


def test_a_launch_takes_return_ctype_descriptors():
    # Warp's documented fast path: descriptors made once per tensor, passed to launches
    for n in (1, 3):
        x, y = torch.arange(n, dtype=torch.float32), torch.ones(n, dtype=torch.float32)
        xd, yd = wp.from_torch(x, return_ctype=True), wp.from_torch(y, return_ctype=True)
        wp.launch(_saxpy, dim=n, inputs=[xd, yd, 2.0])
        assert y.tolist() == [2.0 * k + 1.0 for k in range(n)]
    with pytest.raises(TypeError, match="argument 'x'"):  # (of another dtype: the usual error)
        wp.launch(_saxpy, dim=2, inputs=[wp.from_torch(torch.zeros(2, dtype=torch.float64), return_ctype=True),
                                         yd, 1.0])


def test_from_torch_grad_may_be_a_weft_array_and_retain_grad_is_kept():
    t = torch.zeros((5, 2), dtype=torch.float32)
    g = wp.zeros(5, dtype=wp.vec2)
    a = wp.from_torch(t, dtype=wp.vec2, grad=g)
    assert a.requires_grad and a.grad is g
    with pytest.raises(ValueError, match="grad= must be an array of vec2f with shape"):
        wp.from_torch(t, dtype=wp.vec2, grad=wp.zeros(4, dtype=wp.vec2))
    assert wp.from_torch(t, requires_grad=True, retain_grad=True).retain_grad
    assert not wp.from_torch(t, requires_grad=True).retain_grad


def test_torch_streams_are_cuda_only():
    with pytest.raises(RuntimeError, match="CUDA devices only"):
        wp.stream_from_torch(torch.device("cpu"))
    with pytest.raises(RuntimeError, match="CUDA devices only"):
        wp.stream_to_torch("cpu")


@wp.kernel
def inc_vec3(a: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a[i] = a[i] + wp.vec3(1.0)


def test_launch_takes_tensors_and_numpy_arrays_as_views():
    """Warp's rule: an array argument may be any object showing its CPU memory through
    __array_interface__ or __array__() (a torch tensor, a numpy array); the kernel works on
    that memory (strided views included)."""
    s = torch.arange(6, dtype=torch.float32)
    wp.launch(affine, 6, inputs=[s, s])
    np.testing.assert_array_equal(s.numpy(), np.arange(6) * 2.0 + 1.0)
    v = torch.zeros((4, 3))
    wp.launch(inc_vec3, 4, inputs=[v])
    assert (v == 1.0).all()
    strided, n = torch.zeros(8)[::2], np.zeros(4, np.float32)
    wp.launch(affine, 4, inputs=[n, strided])
    assert strided.tolist() == [1.0] * 4
    with pytest.raises(TypeError, match="argument 'a'.*holds float64 values"):
        wp.launch(affine, 4, inputs=[torch.zeros(4, dtype=torch.float64), strided])


def test_from_torch_capacity_is_the_storage_left_from_the_view():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    assert wp.from_torch(base[1:3, 2:5]).capacity == (24 - 8) * 4
    assert wp.from_torch(base[2:, 1::2]).capacity == (24 - 13) * 4
    assert wp.from_torch(torch.zeros(0)).capacity == 0


def test_bfloat16_tensors_and_arrays_share_memory():
    """torch gives numpy no bfloat16: weft views the bits (int16) and labels them bfloat16."""
    t = torch.tensor([1.0, 2.5, -3.0], dtype=torch.bfloat16)
    a = wp.from_torch(t)
    assert a.dtype is wp.bfloat16 and a.ptr == t.data_ptr()
    np.testing.assert_array_equal(a.numpy().astype(np.float32), [1.0, 2.5, -3.0])
    assert wp.dtype_from_torch(torch.bfloat16) is wp.bfloat16 and wp.dtype_to_torch(wp.bfloat16) == torch.bfloat16
    back = wp.to_torch(wp.array(np.array([[1.0, 2.0, 3.0]], np.float32), dtype=wp.types.vector(3, wp.bfloat16)))
    assert back.dtype == torch.bfloat16 and back.shape == (1, 3)
    assert back.float().tolist() == [[1.0, 2.0, 3.0]]
