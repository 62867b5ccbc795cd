"""Fabric arrays (`fabricarray`, `indexedfabricarray`, `fabricarrayarray`): arrays over
buckets of memory, made from a Fabric interface dict."""

from typing import Any, Literal

import numpy as np
import pytest

import weft as wp
from weft._src.types import (
    ARRAY_TYPE_FABRIC,
    ARRAY_TYPE_FABRIC_INDEXED,
    array_type_id,
    concrete_array_type,
    get_type_code,
    matches_array_class,
)

_CODES = {wp.float32: "f4", wp.float64: "f8", wp.int32: "i4", wp.uint8: "u1", wp.int64: "i8"}


def interface(buckets, attrib="attr", dtype=wp.float32, count=1, role=""):
    """A Fabric interface whose buckets are the given weft arrays (each its own allocation,
    so the elements are truly spread over separate memory)."""
    info = {"type": (True, _CODES[dtype], count, 0, role), "access": 2,
            "pointers": [int(b.ptr) if b.size else 0 for b in buckets], "counts": [b.size for b in buckets]}
    return {"version": 1, "device": "cpu", "attribs": {attrib: info}, "_keep": buckets}


def buckets_of(values: np.ndarray, sizes, dtype=None):
    out, at = [], 0
    for n in sizes:
        out.append(wp.array(values[at:at + n], dtype=dtype) if n else wp.zeros(0, dtype=dtype or wp.float32))
        at += n
    return out


def array_of_arrays_interface(rows, attrib="attr", bucket_sizes=None, dtype=wp.float32):
    """A Fabric interface of an array attribute: each element is one of `rows`."""
    ptrs = wp.array(np.array([r.ptr for r in rows], dtype=np.uint64), dtype=wp.uint64)
    lens = wp.array(np.array([r.size for r in rows], dtype=np.uint64), dtype=wp.uint64)
    sizes = bucket_sizes or [len(rows)]
    pointers, lengths, at = [], [], 0
    for n in sizes:
        pointers.append(int(ptrs.ptr) + 8 * at)
        lengths.append(int(lens.ptr) + 8 * at)
        at += n
    info = {"type": (True, _CODES[dtype], 1, 1, ""), "access": 2, "pointers": pointers, "counts": sizes,
            "array_lengths": lengths}
    return {"version": 1, "device": "cpu", "attribs": {attrib: info}, "_keep": (rows, ptrs, lens)}


@wp.kernel
def double_plus_one(a: wp.fabricarray[float], expected: wp.array[float], seen: wp.array[float]):
    i = wp.tid()
    seen[i] = a[i]
    a[i] = 2.0 * a[i]
    wp.atomic_add(a, i, 1.0)
    wp.expect_eq(a[i], 2.0 * expected[i] + 1.0)


@wp.kernel
def add_generic(a: Any, b: Any):
    i = wp.tid()
    b[i] = a[i] + a[i]


@wp.kernel
def read_indexed(a: wp.indexedfabricarray[float], out: wp.array[float], size: wp.array[wp.uint64]):
    i = wp.tid()
    out[i] = a[i]
    a[i] = -a[i]
    size[0] = a.size


def test_kernel_reads_writes_and_atomics_across_buckets():
    values = np.arange(10, dtype=np.float32) * 1.5
    parts = buckets_of(values, [3, 1, 0, 6])
    fa = wp.fabricarray(data=interface(parts), attrib="attr")
    assert (fa.dtype, fa.ndim, fa.shape, fa.size, len(fa)) == (wp.float32, 1, (10,), 10, 10)
    np.testing.assert_array_equal(fa.numpy(), values)
    seen = wp.zeros(10)
    wp.launch(double_plus_one, dim=10, inputs=[fa, wp.array(values), seen])
    np.testing.assert_array_equal(seen.numpy(), values)
    np.testing.assert_array_equal(np.concatenate([p.numpy() for p in parts]), 2 * values + 1)


def test_indexed_view_reads_and_writes_only_its_elements():
    values = np.arange(8, dtype=np.float32)
    parts = buckets_of(values, [2, 5, 1])
    fa = wp.fabricarray(interface(parts), "attr")
    picks = np.array([7, 0, 3, 3], dtype=np.int32)
    ifa = fa[wp.array(picks, dtype=wp.int32)]
    assert isinstance(ifa, wp.indexedfabricarray) and ifa.shape == (4,) and ifa.ndim == 1
    np.testing.assert_array_equal(ifa.numpy(), values[picks])
    out, size = wp.zeros(4), wp.zeros(1, dtype=wp.uint64)
    wp.launch(read_indexed, dim=2, inputs=[ifa, out, size])  # (the two distinct picks 7 and 0)
    np.testing.assert_array_equal(out.numpy()[:2], [7.0, 0.0])
    assert size.numpy()[0] == 4
    expected = values.copy()
    expected[[7, 0]] *= -1
    np.testing.assert_array_equal(fa.numpy(), expected)


@pytest.mark.parametrize("dtype", [wp.float32, wp.float64, wp.int32, wp.vec3, wp.mat22d, wp.quat])
def test_generic_kernel_over_fabric_dtypes(dtype):
    scalar = getattr(dtype, "dtype", dtype)
    count = getattr(dtype, "num_components", 1)
    role = {wp.vec3: "vector", wp.mat22d: "matrix", wp.quat: "quat"}.get(dtype, "")
    n = 7
    values = np.arange(n * count, dtype=scalar.np_dtype).reshape((n, *getattr(dtype, "np_shape", ())))
    src = wp.fabricarray(interface(buckets_of(values, [4, 3], dtype), dtype=scalar, count=count, role=role), "attr")
    dst_parts = [wp.zeros(2, dtype=dtype), wp.zeros(5, dtype=dtype)]
    dst = wp.fabricarray(interface(dst_parts, dtype=scalar, count=count, role=role), "attr")
    assert src.dtype is dtype
    wp.launch(add_generic, dim=n, inputs=[src, dst])
    np.testing.assert_array_equal(dst.numpy(), 2 * values)
    picks = wp.array([1, 5], dtype=wp.int32)
    dst.zero_()
    wp.launch(add_generic, dim=2, inputs=[src[picks], dst[picks]])
    expected = np.zeros_like(values)
    expected[[1, 5]] = 2 * values[[1, 5]]
    np.testing.assert_array_equal(dst.numpy(), expected)


def test_host_fill_assign_copy():
    parts = [wp.zeros(3, dtype=wp.vec3), wp.zeros(2, dtype=wp.vec3)]
    fa = wp.fabricarray(interface(parts, count=3, role="vector"), "attr")
    fa.fill_(wp.vec3(1.0, 2.0, 3.0))
    np.testing.assert_array_equal(parts[1].numpy(), [[1, 2, 3]] * 2)
    fa[wp.array([0, 4], dtype=wp.int32)].fill_([7.0, 8.0, 9.0])
    np.testing.assert_array_equal(fa.numpy()[[0, 4]], [[7, 8, 9]] * 2)
    np.testing.assert_array_equal(fa.numpy()[1:4], [[1, 2, 3]] * 3)
    src = wp.array(np.arange(15, dtype=np.float32).reshape(5, 3), dtype=wp.vec3)
    wp.copy(fa, src)
    np.testing.assert_array_equal(parts[0].numpy(), src.numpy()[:3])
    back = wp.zeros_like(fa)
    assert isinstance(back, wp.array) and back.shape == (5,) and back.dtype is wp.vec3
    wp.copy(back, fa)
    np.testing.assert_array_equal(back.numpy(), src.numpy())
    fa.zero_()
    assert not fa.numpy().any()
    fa.assign(np.ones((5, 3), dtype=np.float32))
    np.testing.assert_array_equal(parts[1].numpy(), np.ones((2, 3)))


@wp.kernel
def row_sums(a: wp.fabricarrayarray(dtype=float), sums: wp.array[float], second: wp.array[float]):
    i = wp.tid()
    row = a[i]
    for j in range(row.shape[0]):
        sums[i] = sums[i] + row[j]
    if row.shape[0] > 1:
        second[i] = a[i, 1]
        a[i, 1] = 0.0


@wp.kernel
def row_sums_indexed(a: wp.indexedfabricarrayarray(dtype=float), sums: wp.array[float]):
    i = wp.tid()
    row = a[i]
    for j in range(row.shape[0]):
        sums[i] += row[j]


def test_array_of_arrays_rows():
    rows = [wp.array(np.arange(1, n + 1, dtype=np.float32)) for n in (1, 3, 2, 4, 1)]
    faa = wp.fabricarrayarray(data=array_of_arrays_interface(rows, bucket_sizes=[2, 3]), attrib="attr")
    assert faa.ndim == 2 and faa.shape == (5,)
    sums, second = wp.zeros(5), wp.zeros(5)
    wp.launch(row_sums, dim=5, inputs=[faa, sums, second])
    np.testing.assert_array_equal(sums.numpy(), [1, 6, 3, 10, 1])
    np.testing.assert_array_equal(second.numpy(), [0, 2, 2, 2, 0])
    np.testing.assert_array_equal(rows[3].numpy(), [1, 0, 3, 4])
    sums = wp.zeros(2)
    wp.launch(row_sums_indexed, dim=2, inputs=[faa[wp.array([3, 1], dtype=wp.int32)], sums])
    np.testing.assert_array_equal(sums.numpy(), [8, 4])
    with pytest.raises(RuntimeError, match="not supported"):
        faa.fill_(1.0)


@wp.kernel
def row_element_past_end(a: wp.fabricarrayarray(dtype=float)):
    a[0, 2] = 1.0


@wp.kernel
def write_at(a: wp.fabricarray[float], i: int):
    a[i] = 1.0


@wp.kernel
def write_indexed_at(a: wp.indexedfabricarray[float], i: int):
    a[i] = 1.0


def test_bad_indices_are_errors_not_crashes():
    parts = [wp.zeros(2), wp.zeros(3)]
    fa = wp.fabricarray(interface(parts), "attr")
    with pytest.raises(IndexError, match="index 5 is out of bounds for array 'a'"):
        wp.launch(write_at, dim=1, inputs=[fa, 5])
    bad = fa[wp.array([0, 9], dtype=wp.int32)]
    with pytest.raises(IndexError, match="index 9"):
        wp.launch(write_indexed_at, dim=1, inputs=[bad, 1])
    with pytest.raises(IndexError, match="out of bounds"):
        bad.numpy()
    rows = [wp.zeros(2)]
    faa = wp.fabricarrayarray(data=array_of_arrays_interface(rows), attrib="attr")
    with pytest.raises(IndexError, match=r"index \(0, 2\) is out of bounds for array .a. with shape \(1, 2\)"):
        wp.launch(row_element_past_end, dim=1, inputs=[faa])
    assert not any(p.numpy().any() for p in parts + rows)


def test_launch_and_interface_errors():
    fa = wp.fabricarray(interface([wp.zeros(2)]), "attr")
    with pytest.raises(TypeError, match="argument 'a'.*fabricarray"):
        wp.launch(write_at, dim=1, inputs=[wp.zeros(2), 0])
    with pytest.raises(TypeError, match="argument 'a'"):
        wp.launch(write_indexed_at, dim=1, inputs=[fa, 0])
    iface = interface([wp.zeros(1)])
    with pytest.raises(ValueError, match="Failed to get attribute 'other'"):
        wp.fabricarray(iface, "other")
    iface["attribs"]["attr"]["type"] = (True, "f4", 1, 0)
    with pytest.raises(ValueError, match="five elements"):
        wp.fabricarray(iface, "attr")
    iface["attribs"]["attr"]["type"] = (True, "f4", 6, 0, "matrix")
    with pytest.raises(ValueError, match="square element count, got 6"):
        wp.fabricarray(iface, "attr")
    with pytest.raises(ValueError, match="index arrays only"):
        fa[0]  # noqa: B018


@wp.kernel
def fabric_ptr(a: wp.fabricarray[float], out: wp.array[wp.uint64]):
    out[0] = a.ptr


def test_fabric_arrays_have_no_ptr():
    fa = wp.fabricarray(interface([wp.zeros(1)]), "attr")
    with pytest.raises(wp.WarpCodegenError, match="use a.size"):
        wp.launch(fabric_ptr, dim=1, inputs=[fa, wp.zeros(1, dtype=wp.uint64)])


@wp.struct
class Holder:
    values: wp.fabricarray[float]
    picked: wp.indexedfabricarray[float]


@wp.kernel
def bump_struct(h: Holder):
    i = wp.tid()
    h.values[i] = h.values[i] + 1.0
    h.picked[i] = h.picked[i] + 10.0


def test_fabric_arrays_in_structs():
    a_parts, b_parts = [wp.zeros(2), wp.zeros(2)], [wp.zeros(3)]
    h = Holder()
    h.values = wp.fabricarray(interface(a_parts), "attr")
    h.picked = wp.fabricarray(interface(b_parts), "attr")[wp.array([2, 0], dtype=wp.int32)]
    wp.launch(bump_struct, dim=2, inputs=[h])
    np.testing.assert_array_equal(h.values.numpy(), [1, 1, 0, 0])
    np.testing.assert_array_equal(b_parts[0].numpy(), [10, 0, 10])
    with pytest.raises(TypeError, match="expects a Warp Fabric array, got list"):
        h.values = [1.0]
    with pytest.raises(TypeError, match="expects a Warp indexed Fabric array"):
        h.picked = h.values
    assert h.to("cpu").values is h.values


@wp.kernel
def scaled(fa: wp.fabricarray[float], x: wp.array[float], y: wp.array[float]):
    i = wp.tid()
    y[i] = fa[i] * x[i] * x[i]


def test_gradients_flow_around_fabric_arrays():
    """Fabric arrays carry no gradient (as in Warp); the others' gradients are exact."""
    fa = wp.fabricarray(interface([wp.array([1.0, 2.0], dtype=float), wp.array([3.0], dtype=float)]), "attr")
    x = wp.array([1.0, 2.0, 3.0], dtype=float, requires_grad=True)
    y = wp.zeros(3, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scaled, dim=3, inputs=[fa, x, y])
    tape.backward(grads={y: wp.ones(3)})
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1.0, 2.0, 3.0]) * np.array([1.0, 2.0, 3.0]))
    assert fa.grad is None and not fa.requires_grad


def test_annotations():
    assert wp.fabricarray[float].dtype is wp.float32 and wp.fabricarray[float].ndim == 1
    assert wp.fabricarray[wp.float64, Literal[2]].ndim == 2 and wp.fabricarray[wp.float32, 2].ndim == 2
    assert wp.fabricarray[wp.float64, Any].ndim is Any and wp.indexedfabricarray[Any].dtype is Any
    assert wp.fabricarray(dtype=wp.float32) is wp.fabricarray[wp.float32]
    assert wp.fabricarrayarray(dtype=float) is wp.fabricarray[float, 2]
    assert repr(wp.indexedfabricarray[wp.float32, Literal[2]]) == "wp.indexedfabricarray[wp.float32, Literal[2]]"
    assert array_type_id(wp.fabricarray[float]) == ARRAY_TYPE_FABRIC
    assert array_type_id(wp.indexedfabricarray[float]) == ARRAY_TYPE_FABRIC_INDEXED
    assert get_type_code(wp.fabricarray(dtype=wp.float32)) == "fa1f4"
    assert get_type_code(wp.indexedfabricarray[wp.float64]) == "ifa1f8"
    assert concrete_array_type(wp.indexedfabricarray[float]) is wp.indexedfabricarray
    assert matches_array_class(wp.fabricarray[float], wp.fabricarray)
    assert not matches_array_class(wp.fabricarray[float], wp.array)
    assert wp.types.is_array(wp.fabricarray[float]) and wp.types.type_is_array(wp.fabricarray)
    with pytest.raises(ValueError, match="1 to 2 dimensions"):
        wp.fabricarray[float, 3]  # noqa: B018
