"""Vector and matrix values in Python scope, as Warp programs use them: indexing and slicing,
assignment and its errors, constructors, repr/str, from_ptr, isinstance, derived types."""

import ctypes
import pickle
from typing import Any

import numpy as np
import pytest

import weft as wp


def test_vector_indexing_and_slices():
    v = wp.vec4(1, 2, 3, 4)
    assert v[0] == 1.0 and v[-1] == 4.0 and v.w == 4.0
    part = v[1:3]
    assert isinstance(part, wp.vec2) and list(part) == [2.0, 3.0]
    assert isinstance(v[::2], wp.vec2) and list(v[::2]) == [1.0, 3.0]
    part[0] = 9  # a slice is a new vector
    assert v[1] == 2.0
    five = wp.types.vector(6, wp.float64)(*range(6))[0:5]
    assert five.type is wp.types.vector(5, wp.float64)
    with pytest.raises(KeyError, match="Invalid key None, expected int or slice"):
        v[None]
    with pytest.raises(IndexError):
        v[4]


def test_vector_assignment():
    v = wp.vec4i(1, 2, 3, 4)
    v[np.int64(0)] = 7
    v[1:3] = (-2, -3)
    v[3:] = 5  # a scalar fills the slice
    assert list(v) == [7, -2, -3, 5]
    v.x = 0
    assert v[0] == 0
    with pytest.raises(TypeError, match="Expected to assign a `int32` value but got `str` instead"):
        v[0] = "1"
    with pytest.raises(TypeError, match="sequence of `int32` values but got `vec4i` instead"):
        v[:1] = (v,)
    with pytest.raises(ValueError, match="Can only assign sequence of same size"):
        v[:1] = (1, 2)
    with pytest.raises(TypeError, match="sequence of values but got `object` instead"):
        v[:2] = object()
    with pytest.raises(KeyError, match="expected int or slice"):
        v["x"] = 1
    with pytest.raises(TypeError, match="fractions"):  # weft refuses to truncate a fraction
        v[0] = 1.5
    assert list(v) == [0, -2, -3, 5]


def test_component_read_types():
    assert type(wp.vec3(1, 2, 3)[0]) is float
    assert type(wp.vec3i(1, 2, 3)[0]) is int
    assert type(wp.vec3d(1, 2, 3)[0]) is np.float64
    assert type(wp.mat22h(1, 2, 3, 4)[0, 0]) is np.float16
    wp.config.legacy_scalar_return_types = True
    try:
        assert type(wp.vec3d(1, 2, 3)[0]) is float
        assert type(wp.types.vector(2, wp.int16)(1, 2)[1]) is int
        assert type(wp.mat22d(1, 2, 3, 4)[1, 1]) is float
    finally:
        wp.config.legacy_scalar_return_types = False


def test_matrix_indexing():
    m = wp.mat33(((1, 2, 3), (4, 5, 6), (7, 8, 9)))
    assert m[1, 2] == 6.0 and m[-1, -1] == 9.0 and m[2][0] == 7.0
    row = m[1]
    assert isinstance(row, wp.vec3) and list(row) == [4.0, 5.0, 6.0]
    row[0] = 0  # rows are copies (as in Warp)
    assert m[1, 0] == 4.0
    assert list(m[0, 1:3]) == [2.0, 3.0] and list(m[:, 0]) == [1.0, 4.0, 7.0]
    top = m[0:2]
    assert top.type is wp.types.matrix((2, 3), wp.float32) and top == ((1, 2, 3), (4, 5, 6))
    assert m[1:, 1:] == wp.mat22(5, 6, 8, 9)
    assert list(m.get_col(-1)) == [3.0, 6.0, 9.0]
    with pytest.raises(KeyError, match="Invalid key None, expected int or pair of ints"):
        m[None]
    with pytest.raises(KeyError, match="Invalid key, expected one or two indices, got 3"):
        m[0, 1, 2]
    with pytest.raises(IndexError, match="Invalid row index"):
        m.get_row(3)
    with pytest.raises(IndexError, match="Invalid column index"):
        m.get_col(-4)


def test_matrix_assignment():
    m = wp.mat33()
    m[0] = (1, 2, 3)
    m[1, 0] = 4
    m[2] = 9  # a scalar fills the row
    m.set_col(1, (0, 0, 0))
    assert m == ((1, 0, 3), (4, 0, 0), (9, 0, 9))
    m[0:2, 2] = (7, 8)
    m[1:] = 1
    assert m == ((1, 0, 7), (1, 1, 1), (1, 1, 1))
    m.set_row(-1, wp.vec3(5, 6, 7))
    assert list(m[2]) == [5.0, 6.0, 7.0]
    h = wp.mat22h(1, 2, 3, 4)
    with pytest.raises(TypeError, match="Expected to assign a `float16` value but got `str` instead"):
        h[0, 0] = "1"
    with pytest.raises(TypeError, match="sequence of `float16` values but got `mat22h` instead"):
        h[0] = (h,)
    with pytest.raises(ValueError, match="Can only assign sequence of same size"):
        h[0] = (1, 2, 3)
    with pytest.raises(RuntimeError, match="expected to be a scalar"):
        h[0, 0] = (1, 2)
    with pytest.raises(IndexError, match="Invalid row index"):
        h.set_row(2, (0, 0))
    assert h == ((1, 2), (3, 4))


def test_constructor_forms_and_errors():
    assert wp.mat22((1, 2), (3, 4)) == wp.mat22(1, 2, 3, 4) == wp.mat22([[1, 2], [3, 4]])
    assert wp.mat22(np.eye(2)) == wp.mat22(1, 0, 0, 1)
    assert wp.mat22(wp.mat22d(1, 2, 3, 4)).type is wp.mat22
    copy = wp.vec3(wp.vec3(1, 2, 3))
    assert copy == (1, 2, 3)
    assert wp.transform(p=(1, 2, 3)) == wp.transform((1, 2, 3), (0, 0, 0, 1)) == wp.transform((1, 2, 3))
    assert wp.transform(q=(0, 0, 1, 0)).q == wp.quat(0, 0, 1, 0)
    with pytest.raises(ValueError, match="expected 3 elements, got 2$"):
        wp.vec3(1, 2)
    with pytest.raises(ValueError, match="in matrix constructor, expected 4 elements, got 3$"):
        wp.mat22(1, 2, 3)
    with pytest.raises(TypeError, match=r"expected row of length 2, got \(1, 2, 3\)$"):
        wp.mat22((1, 2, 3), (3, 4, 5))
    with pytest.raises(TypeError, match="Invalid argument 'q' in transformation constructor"):
        wp.transform((1, 2, 3), 1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'r'"):
        wp.transform(r=1)
    with pytest.raises(TypeError, match="takes its components positionally, got keyword"):
        wp.vec3(x=1)


def test_repr_and_str():
    assert repr(wp.vec2i(1, 2)) == "vec2i([1, 2])"
    assert repr(wp.vec2d(1, 2)) == "vec2d([float64(1.0), float64(2.0)])"
    assert repr(wp.mat22(1, 2, 3, 4)) == "mat22f([[1.0, 2.0], [3.0, 4.0]])"
    assert str(wp.vec3(1, 2, 3)) == "[1.0, 2.0, 3.0]"
    assert str(wp.mat22(1, 2, 3, 4)) == "[[1.0, 2.0],\n [3.0, 4.0]]"
    # components print as the Python numbers they hold, as Warp's: float16 and float32 exactly
    assert str(wp.vec2h(0.1, 0.2)) == "[0.0999755859375, 0.199951171875]"
    assert str(wp.vec2(0.1, 1.0)) == "[0.10000000149011612, 1.0]"
    assert str(wp.mat22h(0.1, 0, 0, 1)) == "[[0.0999755859375, 0.0],\n [0.0, 1.0]]"
    # bfloat16 components print as their own str, so str(v) is the join of str(x) for x in v
    # (Warp's test_types checks exactly that)
    v = wp.vector(3, wp.bfloat16)(2, 4, 6)
    assert str(v) == "[" + ", ".join(str(x) for x in v) + "]" == "[2, 4, 6]"


def test_equality():
    assert wp.vec3(1, 2, 3) == [1, 2, 3] and wp.vec3(1, 2, 3) != (1, 2)
    assert wp.vec3(1, 2, 3) != "abc" and wp.vec3(1, 2, 3) != None  # noqa: E711
    assert wp.mat22(1, 2, 3, 4) != wp.mat22(1, 2, 3, 5)


def test_from_ptr():
    data = np.array([1.5, 2.5, 3.5], dtype=np.float32)
    v = wp.vec3.from_ptr(data.ctypes.data)
    assert v == (1.5, 2.5, 3.5)
    data[0] = 0  # a copy
    assert v[0] == 1.5
    m = wp.mat22d.from_ptr(np.arange(4.0).ctypes.data)
    assert m == ((0, 1), (2, 3))
    with pytest.raises(RuntimeError, match="NULL pointer exception"):
        wp.vec3.from_ptr(0)
    with pytest.raises(RuntimeError, match="NULL pointer exception"):
        wp.mat22.from_ptr(None)


def test_types_as_classes():
    v = wp.vec3(1, 2, 3)
    assert isinstance(v, wp.vec3) and not isinstance(v, wp.vec3d) and not isinstance(v, wp.mat33)
    assert not isinstance((1, 2, 3), wp.vec3)
    assert v._length_ == 3 and v._shape_ == (3,) and v._wp_scalar_type_ is wp.float32
    assert wp.mat22(1, 2, 3, 4)._shape_ == (2, 2)
    assert v._type_ is ctypes.c_float

    class vec5(wp.types.vector(length=5, dtype=float)):
        pass

    assert vec5 is wp.types.vector(5, wp.float32) and vec5(1, 2, 3, 4, 5)[4] == 5.0

    class mat23(wp.types.matrix(shape=(2, 3), dtype=wp.float64)):
        pass

    assert mat23 is wp.types.matrix((2, 3), wp.float64)

    class MyFloat(wp.float32):
        pass

    assert MyFloat is wp.float32
    assert pickle.loads(pickle.dumps(vec5(1, 2, 3, 4, 5))) == (1, 2, 3, 4, 5)


def test_scalar_types_and_numpy():
    assert wp.int8._type_ is ctypes.c_int8 and wp.float64._type_ is ctypes.c_double and wp.int8._length_ == 1
    assert wp.uint8._type_(-1).value == 255
    for t in (wp.bool, wp.int8, wp.uint16, wp.int64, wp.float16, wp.float32, wp.float64):
        assert np.dtype(t) == t.np_dtype
        assert np.zeros(3, dtype=t).dtype == t.np_dtype
        assert np.dtype([("a", t), ("b", np.uint8)]) == np.dtype([("a", t.np_dtype), ("b", np.uint8)])
        assert np.arange(3).astype(t).dtype == t.np_dtype
    assert not hasattr(wp.bfloat16, "__numpy_dtype__") and not hasattr(wp.float32, "dtype")
    assert wp.dtype_from_numpy(np.dtype(wp.uint32)) is wp.uint32


def test_numpy_functions_of_values_give_arrays_and_scalars_keep_values():
    v, m = wp.vec3(1.0, -2.0, 3.0), wp.mat22(1.0, 2.0, 3.0, 4.0)
    # (Warp's values are ctypes arrays: numpy sees their components)
    assert np.sum(v) == 2.0 and np.max(m) == 4.0 and np.isfinite(v).all()
    np.testing.assert_array_equal(np.abs(v), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.maximum(v, 0.0), [1.0, 0.0, 3.0])
    sum64 = np.array([1.0, 1.0, 1.0]) + v
    assert type(sum64) is np.ndarray and sum64.dtype == np.float64
    np.testing.assert_array_equal(np.matmul(m, m), [[7.0, 10.0], [15.0, 22.0]])
    # weft's scalars are numpy scalars: arithmetic with them keeps the vector or matrix
    for value in (wp.float32(2.0) * v, v * np.float32(2.0), np.float32(6.0) / v - np.float32(0.0)):
        assert type(value) is type(v)
    assert wp.float32(2.0) * v == wp.vec3(2.0, -4.0, 6.0) and np.float32(6.0) / v == wp.vec3(6.0, -3.0, 2.0)
    assert np.float32(2.0) * m == wp.mat22(2.0, 4.0, 6.0, 8.0)
    assert (np.float32(1.0) == v) is False and (np.float32(1.0) != v) is True  # (the value's ==, as before)


def test_constant_accepts_values_only():
    assert wp.constant(wp.vec3i(1, 2, 3)) == wp.vec3i(1, 2, 3)
    assert wp.constant(wp.float16(1.25)) == 1.25 and wp.constant(True) is True
    with pytest.raises(TypeError, match="Invalid constant type: <class 'tuple'>"):
        wp.constant((1, 2, 3))
    with pytest.raises(TypeError, match="Invalid constant type"):
        wp.constant("text")


def test_array_introspection():
    T = wp.types
    assert T.type_is_array(wp.array) and T.type_is_array(wp.indexedarray)
    assert not T.type_is_array(wp.array(dtype=float)) and T.is_array(wp.array(dtype=float))
    assert T.is_array(wp.zeros(2)) and not T.type_is_array(wp.zeros(2))
    assert not T.is_array(np.zeros(2)) and not T.type_is_array(np.ndarray)
    assert wp.array(dtype=Any, ndim=4).dtype is Any and wp.array(dtype=Any, ndim=4).ndim == 4


def test_type_of_a_value_stands_for_its_type():
    v = wp.vec3(1, 2, 3)
    T = type(v)
    assert T.__name__ == "vec3f" and isinstance(v, T) and type(wp.vec3()) is T
    assert T(4, 5, 6) == wp.vec3(4, 5, 6) and type(T(4, 5, 6)) is T
    assert wp.types.types_equal(T, wp.vec3) and wp.types.type_is_vector(T) and not wp.types.type_is_vector(v)
    assert wp.types.type_size_in_bytes(T) == 12 and wp.types.type_length(T) == 3
    M = type(wp.mat22d())
    assert wp.types.type_is_matrix(M) and wp.types.types_equal(M, wp.mat22d) and M(1, 2, 3, 4)[1, 1] == 4
    t = wp.transform_identity()
    assert wp.types.types_equal(type(t), wp.transformf) and wp.types.type_is_transformation(type(t))
    assert wp.types.resolve(T) is wp.vec3


def test_type_of_a_value_compares_and_hashes_as_its_type():
    """Warp's composite types are classes, so Warp programs compare and key by `type(v)`."""
    v, q = wp.vec3(1.0, 2.0, 3.0), wp.quat_identity()
    assert type(v) == wp.vec3 and wp.vec3 == type(v) and type(v) != wp.vec3d and not (type(v) != wp.vec3)  # noqa: E721 - (the comparison under test)
    assert {wp.vec3: "v", wp.quat: "q"}[type(v)] == "v" and {wp.vec3: "v", wp.quat: "q"}[type(q)] == "q"
    assert type(v) in {wp.vec3} and hash(type(v)) == hash(wp.vec3)
    assert issubclass(type(v), wp.vec3) and not issubclass(type(v), wp.vec3d) and not issubclass(int, wp.vec3)
    assert type(v)._length_ == 3 and type(wp.mat22d())._shape_ == (2, 2)
    assert type(v)._wp_scalar_type_ is wp.float32
    with pytest.raises(AttributeError):
        type(v).no_such_attribute  # noqa: B018

    class Derived(type(v)):  # (a subclass of a value class still stands for the type)
        pass

    assert Derived == wp.vec3 and Derived._length_ == 3 and (Derived != 3) is True


def test_empty_slices_compare_equal_whatever_their_shape():
    m = wp.matrix_from_cols(wp.vec2(1.0, 2.0), wp.vec2(3.0, 4.0))
    assert m[5:] == wp.types.matrix((0, 0), float)() and not (m[1:] == wp.types.matrix((0, 0), float)())


def test_transformation_constructor_forms():
    parts = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    for T in (wp.transformh, wp.transformf, wp.transformd):
        assert list(T(np.float32(1.5))) == [1.5] * 7 and list(T(True)) == [1.0] * 7
        assert list(T(wp.transformd(*parts))) == parts
        assert list(T(wp.vec3d(1.0, 2.0, 3.0))) == [1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0]  # a lone p, as in Warp
        with pytest.raises(TypeError, match="expected a scalar value, got object"):
            T(object())
        with pytest.raises(TypeError, match="Invalid argument 'p' in transformation constructor: expected a sequence"):
            T(1.5, 2.5)
        with pytest.raises(TypeError, match="^multiple values for argument 'q'$"):
            T(*parts, q=(0, 0, 0, 1))
        with pytest.raises(TypeError, match="^got an unexpected keyword argument 'pos'$"):
            T(*parts, pos=(1, 2, 3))


def test_isinstance_of_scalar_types():
    assert isinstance(wp.float32(1), wp.float32) and not isinstance(wp.float64(1), wp.float32)
    assert isinstance(wp.uint8(3), wp.uint8) and isinstance(wp.bool(True), wp.bool)
    assert not isinstance(1.5, wp.float32) and not isinstance(3, wp.int32)  # Python numbers are not
    assert isinstance(wp.vec3d(1, 2, 3)[0], wp.float64)


def test_type_helpers_as_warp_spells_them():
    T = wp.types
    assert [T.type_repr(t) for t in (wp.vec3, wp.vec2ub, wp.quatd, wp.transformh, wp.mat44d)] == \
        ["vec3f", "vec2ub", "quatd", "transformh", "mat44d"]
    assert T.type_repr(wp.types.vector(5, wp.float64)) == "vector(length=5, dtype=float64)"
    assert T.type_repr(wp.types.matrix((2, 3), wp.float32)) == "mat23f"
    assert T.type_repr(wp.spatial_matrix) == "matrix(shape=(6, 6), dtype=float32)"
    assert T.type_repr(float) == "float" and T.type_repr(wp.float16) == "float16"
    assert T.type_repr(wp.array(dtype=float)) == "array(ndim=1, dtype=float32)"
    assert T.type_repr(wp.array(dtype=float, ndim=Any)) == "array(ndim=Any, dtype=float32)"
    assert T.type_repr(wp.zeros((2, 3), dtype=wp.vec3)) == "array(shape=(2, 3), dtype=vec3f)"
    assert wp._src.types.scalar_short_name(wp.uint16) == "us" and wp._src.types.scalar_short_name(wp.vec3) is None
    assert T.type_size(wp.vec3(1, 2, 3)) == 3 and T.type_size(wp.mat22()) == 4
    assert T.type_size_in_bytes(wp.int8(3)) == 1 and T.type_size_in_bytes(wp.transformd()) == 56
    assert T.types_equal(wp.zeros(3), wp.zeros(5)) and not T.types_equal(wp.zeros(3), wp.zeros(3, dtype=int))
    assert not T.types_equal(wp.zeros(3), wp.zeros((3, 1)))


def test_values_from_tensors():
    torch = pytest.importorskip("torch")
    v = wp.vec4()
    v[1:] = torch.tensor([1.0, 2.0, 3.0])  # 0-d tensors are scalars
    v[0] = torch.tensor(9.0)
    assert list(v) == [9.0, 1.0, 2.0, 3.0]
    assert wp.mat22(torch.tensor([1.0, 2.0, 3.0, 4.0])) == ((1, 2), (3, 4))
    t = wp.transform(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0, 5.0, 6.0, 7.0]))
    assert list(t) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]


@pytest.mark.parametrize("quat, transform", [(wp.quat, wp.transform), (wp.quatd, wp.transformd)])
def test_quaternion_and_transform_products_in_python_scope_are_exact(quat, transform):
    """q1 * q2 and t1 * t2 compute Hamilton's product and the composition with the same float
    operations, in the same order, as numpy's cross product would: bit for bit."""
    rng = np.random.default_rng(12)
    dtype = quat(0.0, 0.0, 0.0, 1.0).numpy().dtype

    def reference_mul(a, b):
        v1, w1, v2, w2 = a[:3], a[3], b[:3], b[3]
        return np.concatenate([w1 * v2 + w2 * v1 + np.cross(v1, v2), [w1 * w2 - v1 @ v2]]).astype(dtype)

    for _ in range(20):
        a, b = rng.standard_normal(4).astype(dtype), rng.standard_normal(4).astype(dtype)
        assert (quat(*a) * quat(*b)).numpy().tobytes() == reference_mul(a, b).tobytes()
        p1, p2 = rng.standard_normal(3).astype(dtype), rng.standard_normal(3).astype(dtype)
        t = transform(p1, quat(*a)) * transform(p2, quat(*b))
        u, w = a[:3], a[3]
        rotated = p2 * (2 * w * w - 1) + 2 * w * np.cross(u, p2) + 2 * u * (u @ p2)
        expected = np.concatenate([p1 + rotated, reference_mul(a, b)]).astype(dtype)
        assert t.numpy().tobytes() == expected.tobytes()


def test_integer_composites_scale_by_integers_only():
    # as in kernels: truncating a float scale would silently change the answer
    v = wp.vec3i(1, 2, 3)
    assert list(v * 2) == [2, 4, 6] and list(2 * v) == [2, 4, 6] and list(v / 2) == [0, 1, 1]
    for scale in (lambda: v * 2.5, lambda: 2.5 * v, lambda: v / 2.5, lambda: v * np.float32(2.0)):
        with pytest.raises(TypeError, match="compatible with the arguments 'vec3i, float'"):
            scale()
    assert list(wp.vec3h(1.0, 2.0, 3.0) * 2.5) == [2.5, 5.0, 7.5]
