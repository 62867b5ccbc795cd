"""Vector, matrix, quaternion and transform types: names and spellings, Python-scope values
and their arithmetic, and every kind through a kernel (checked against numpy)."""

import copy
import pickle

import numpy as np
import pytest

import weft as wp
from weft.types import CompositeValue, Matrix, Vector

F16, F32, F64, I32 = wp.float16, wp.float32, wp.float64, wp.int32

# name -> (kind, length or shape, component type)
NAMED = {
    "vec2": ("vec", 2, F32), "vec3": ("vec", 3, F32), "vec4": ("vec", 4, F32),
    "vec2f": ("vec", 2, F32), "vec3f": ("vec", 3, F32), "vec4f": ("vec", 4, F32),
    "vec2d": ("vec", 2, F64), "vec3d": ("vec", 3, F64), "vec4d": ("vec", 4, F64),
    "vec2h": ("vec", 2, F16), "vec3h": ("vec", 3, F16), "vec4h": ("vec", 4, F16),
    "vec2i": ("vec", 2, I32), "vec3i": ("vec", 3, I32), "vec4i": ("vec", 4, I32),
    "mat22": ("mat", (2, 2), F32), "mat33": ("mat", (3, 3), F32), "mat44": ("mat", (4, 4), F32),
    "mat22f": ("mat", (2, 2), F32), "mat33f": ("mat", (3, 3), F32), "mat44f": ("mat", (4, 4), F32),
    "mat22d": ("mat", (2, 2), F64), "mat33d": ("mat", (3, 3), F64), "mat44d": ("mat", (4, 4), F64),
    "mat22h": ("mat", (2, 2), F16), "mat33h": ("mat", (3, 3), F16), "mat44h": ("mat", (4, 4), F16),
    "quat": ("quat", 4, F32), "quatf": ("quat", 4, F32), "quatd": ("quat", 4, F64), "quath": ("quat", 4, F16),
    "transform": ("transform", 7, F32), "transformf": ("transform", 7, F32),
    "transformd": ("transform", 7, F64), "transformh": ("transform", 7, F16),
}


@pytest.mark.parametrize("name", NAMED)
def test_named_types(name):
    kind, size, dtype = NAMED[name]
    t = getattr(wp, name)
    assert t is getattr(wp.types, name)
    assert t.dtype is dtype
    if kind == "mat":
        assert isinstance(t, Matrix) and t.shape == size and t is wp.mat(size, dtype)
        assert t.num_components == size[0] * size[1]
    else:
        assert isinstance(t, Vector) and t.length == size and t.flavor == kind
        assert t.num_components == size
        if kind == "vec":
            assert t is wp.vec(size, dtype)
    assert t.size == t.num_components * dtype.size


def test_vector_and_matrix_spellings_are_one_type():
    assert wp.vec(3, float) is wp.vec3 is wp.types.vector(3, wp.float32)
    assert wp.types.vector(length=3, dtype=wp.float64) is wp.vec3d
    assert wp.vec(length=2, dtype=int) is wp.vec2i
    assert wp.types.matrix(shape=(3, 3), dtype=float) is wp.mat33
    assert wp.mat((4, 4), wp.float64) is wp.mat44d
    assert wp.types.quaternion(wp.float64) is wp.quatd
    assert wp.types.transformation(wp.float16) is wp.transformh
    assert wp.vec3 is not wp.vec3d and wp.quat is not wp.vec4


def test_non_square_and_unusual_types():
    m23 = wp.mat((2, 3), float)
    assert m23.shape == (2, 3) and m23.num_components == 6
    assert m23.row_type() is wp.vec3
    v5 = wp.vec(5, wp.uint8)
    assert v5.length == 5 and v5.dtype is wp.uint8
    with pytest.raises(TypeError):
        wp.vec(3, wp.vec3)
    with pytest.raises(TypeError):
        wp.mat((2, 2), "float")
    with pytest.raises(ValueError, match="0 or more"):
        wp.vec(-1, float)
    with pytest.raises(ValueError, match="cannot be negative"):
        wp.mat((-1, 3), float)
    # empty vectors exist, as in Warp (the type of an empty slice of a vector)
    assert wp.vec(0, float).length == 0 and wp.vec(0, float)().numpy().shape == (0,)


# Python-scope values ---------------------------------------------------------------------------
def test_vector_constructors():
    assert wp.vec3(1, 2, 3).numpy().tolist() == [1.0, 2.0, 3.0]
    assert wp.vec3(2.5).numpy().tolist() == [2.5] * 3  # a scalar fills every component
    assert wp.vec3().numpy().tolist() == [0.0] * 3
    assert wp.vec3([4, 5, 6]) == wp.vec3(4, 5, 6)
    assert wp.vec3(np.array([4.0, 5.0, 6.0])) == wp.vec3(4, 5, 6)
    assert wp.vec3(wp.vec3d(1, 2, 3)).type is wp.vec3
    assert wp.vec3i(1, 2, 3).numpy().dtype == np.int32
    assert wp.vec4h(1, 2, 3, 4).numpy().dtype == np.float16
    with pytest.raises(ValueError, match="vec3f: Invalid number of arguments in vector constructor, "
                                         "expected 3 elements, got 2"):
        wp.vec3(1, 2)
    with pytest.raises(ValueError):
        wp.vec2(1, 2, 3)


def test_constructors_refuse_to_change_values():
    assert wp.vec3i(1.0, 2.0, 3.0) == wp.vec3i(1, 2, 3)  # exact floats are fine
    with pytest.raises(TypeError, match="int32 components cannot hold the fractions"):
        wp.vec3i(1.7, 2, 3)
    with pytest.raises(TypeError, match="fractions"):
        wp.vec2i(0.5)
    u8 = wp.vec(2, wp.uint8)
    assert u8(255, 0).numpy().tolist() == [255, 0]
    # integers outside the range wrap modulo 2**bits, as C's conversions and Warp's do
    assert u8(256, -1).numpy().tolist() == [0, 255]
    assert wp.vec2b(200, -129).numpy().tolist() == [-56, 127]
    assert wp.uint32(-1) == 0xFFFFFFFF and wp.int8(200) == -56 and wp.uint64(-1) == 2**64 - 1
    with pytest.raises(ValueError, match="out of the range of uint8"):
        u8(2.0**70)
    with pytest.raises(TypeError, match="components must be numbers"):
        wp.vec2("a", "b")


def test_matrix_quat_transform_constructors():
    m = wp.mat22(1, 2, 3, 4)
    np.testing.assert_array_equal(m.numpy(), [[1, 2], [3, 4]])
    assert wp.mat22(wp.vec2(1, 2), wp.vec2(3, 4)) == m  # from rows
    assert wp.mat22(np.array([[1, 2], [3, 4]])) == m
    np.testing.assert_array_equal(wp.mat33().numpy(), np.zeros((3, 3)))
    np.testing.assert_array_equal(wp.mat22(1.0).numpy(), np.ones((2, 2)))
    assert wp.quat(0, 0, 0, 1).numpy().tolist() == [0, 0, 0, 1]
    t = wp.transform(wp.vec3(1, 2, 3), wp.quat(0, 0, 0, 1))
    assert t.numpy().tolist() == [1, 2, 3, 0, 0, 0, 1]
    assert wp.transform().numpy().tolist() == [0, 0, 0, 0, 0, 0, 1]  # identity, as in Warp
    assert wp.transformd().numpy().tolist() == [0, 0, 0, 0, 0, 0, 1]


def test_component_access():
    v = wp.vec4(1, 2, 3, 4)
    assert (v.x, v.y, v.z, v.w) == (1, 2, 3, 4)
    assert v[0] == 1 and v[-1] == 4 and len(v) == 4
    assert [float(c) for c in v] == [1, 2, 3, 4]
    v.y = 7.0
    v[2] = 8.0
    assert v == wp.vec4(1, 7, 8, 4)
    with pytest.raises(AttributeError):
        wp.vec2(1, 2).z  # noqa: B018
    m = wp.mat22(1, 2, 3, 4)
    assert m[1, 0] == 3 and list(m[0]) == [1, 2] and len(m) == 2
    m[1, 1] = 9
    assert m == wp.mat22(1, 2, 3, 9)
    with pytest.raises(AttributeError):
        m.x  # noqa: B018


def test_transform_parts():
    t = wp.transform(wp.vec3(1, 2, 3), wp.quat(0, 0, 0, 1))
    assert t.p == wp.vec3(1, 2, 3) and t.p.type is wp.vec3
    assert t.q == wp.quat(0, 0, 0, 1) and t.q.type is wp.quat
    t.p = wp.vec3(4, 5, 6)
    assert t.numpy().tolist() == [4, 5, 6, 0, 0, 0, 1]
    assert wp.transformd().p.type is wp.vec3d


def test_vector_arithmetic_matches_numpy():
    a, b = wp.vec3(1, 2, 3), wp.vec3(4, -5, 6)
    na, nb = a.numpy(), b.numpy()
    for result, expected in [(a + b, na + nb), (a - b, na - nb), (-a, -na), (+a, na),
                             (a * 2.0, na * 2), (2.0 * a, na * 2), (a / 2.0, na / 2),
                             (2.0 / a, 2 / na), (a + 1.0, na + 1), (1.0 - a, 1 - na),
                             (a * np.float32(3), na * 3), (np.float32(3) * a, na * 3),
                             (np.float64(3) * a, na * 3)]:
        assert isinstance(result, CompositeValue) and result.type is wp.vec3
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)
    assert type(np.ones(3) + a) is np.ndarray  # (an array and a value: an array, as in Warp)


def test_integer_vector_arithmetic_truncates_like_c():
    v = wp.vec4i(7, -7, 7, -7)
    assert (v / 2).numpy().tolist() == [3, -3, 3, -3]
    assert (v % 3).numpy().tolist() == [1, -1, 1, -1]
    assert (v / 2).type is wp.vec4i


def test_matrix_products_match_numpy():
    rng = np.random.default_rng(1)
    m = wp.mat33(*rng.standard_normal(9))
    n = wp.mat33(*rng.standard_normal(9))
    v = wp.vec3(*rng.standard_normal(3))
    for result, expected, t in [(m @ v, m.numpy() @ v.numpy(), wp.vec3),
                                (m * v, m.numpy() @ v.numpy(), wp.vec3),
                                (v @ m, v.numpy() @ m.numpy(), wp.vec3),
                                (v * m, v.numpy() @ m.numpy(), wp.vec3),
                                (m @ n, m.numpy() @ n.numpy(), wp.mat33),
                                (m * n, m.numpy() @ n.numpy(), wp.mat33),
                                (m * 2.0, m.numpy() * 2, wp.mat33), (m + n, m.numpy() + n.numpy(), wp.mat33)]:
        assert result.type is t
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-5, atol=1e-6)
    m23 = wp.mat((2, 3), float)(*range(6))
    r = m23 @ v
    assert r.type is wp.vec2
    np.testing.assert_allclose(r.numpy(), m23.numpy() @ v.numpy(), rtol=1e-6)
    assert (m23 @ m).type is m23.type


def test_invalid_products_raise():
    v = wp.vec3(1, 2, 3)
    with pytest.raises(TypeError, match="dot"):
        v * v  # noqa: B018 - ambiguous: dot or component-wise
    with pytest.raises(TypeError, match="dot"):
        v @ v  # noqa: B018
    with pytest.raises(TypeError, match="Couldn't find a function 'mul' compatible with the arguments 'mat33d, vec3f'"):
        wp.mat33d() @ v  # noqa: B018
    with pytest.raises(RuntimeError, match="'add' compatible with the arguments 'vec3f, vec3d'"):
        v + wp.vec3d()  # noqa: B018 - kernels refuse mixed component types too
    with pytest.raises(TypeError, match="'sub' compatible with the arguments 'vec3f, vec2f'"):
        v - wp.vec2()  # noqa: B018
    for kind in (ValueError, RuntimeError):  # (RuntimeError: Warp's class)
        with pytest.raises(kind, match="shapes do not match"):
            wp.mat22() @ v  # noqa: B018
    with pytest.raises(RuntimeError, match="'normalize' compatible with the arguments 'vec3i'"):
        wp.normalize(wp.vec3i(1, 2, 3))


def test_quaternion_and_transform_products():
    # values produced by Warp 1.19 for the same inputs
    q1, q2 = wp.quat(0.1, 0.2, 0.3, 0.9), wp.quat(-0.4, 0.5, 0.2, 0.7)
    np.testing.assert_allclose((q1 * q2).numpy(), [-0.4, 0.45, 0.52, 0.51], rtol=1e-6)
    assert (wp.quat(0, 0, 0, 1) * q1) == q1
    t1 = wp.transform(wp.vec3(1.0, 2.0, 3.0), q1)
    t2 = wp.transform(wp.vec3(-1.0, 0.5, 2.0), q2)
    np.testing.assert_allclose((t1 * t2).numpy(), [0.95, 1.65, 5.05, -0.4, 0.45, 0.52, 0.51], rtol=1e-5)
    assert (t1 * t2).type is wp.transform


def test_vector_builtins_in_python_scope():
    assert wp.dot(wp.vec3(1, 2, 3), wp.vec3(1, 1, 1)) == 6
    assert wp.cross(wp.vec3(1, 0, 0), wp.vec3(0, 1, 0)) == wp.vec3(0, 0, 1)
    assert wp.length(wp.vec2(3, 4)) == 5
    np.testing.assert_allclose(np.asarray(wp.normalize(wp.vec2(3, 4))), [0.6, 0.8], rtol=1e-6)
    assert wp.quat_identity() == wp.quat(0, 0, 0, 1)
    assert wp.transform_identity() == wp.transform()
    q = wp.quat_from_axis_angle(wp.vec3(0, 0, 1), np.pi / 2)
    np.testing.assert_allclose(q.numpy(), [0, 0, np.sqrt(0.5), np.sqrt(0.5)], rtol=1e-6)


def test_copy_and_pickle_own_their_components():
    v = wp.vec3(1, 2, 3)
    for dup in (copy.copy(v), copy.deepcopy(v), pickle.loads(pickle.dumps(v))):
        assert dup == v and dup.type is wp.vec3
        dup[0] = 9
        assert v[0] == 1
    t = copy.deepcopy(wp.transformd())
    assert t.type is wp.transformd and t.q == wp.quatd(0, 0, 0, 1)
    assert pickle.loads(pickle.dumps(wp.mat22(1, 2, 3, 4))) == wp.mat22(1, 2, 3, 4)


def test_equality_hash_repr_and_numpy():
    a = wp.vec3(1, 2, 3)
    assert a == wp.vec3(1, 2, 3) and a != wp.vec3(1, 2, 4) and a == [1, 2, 3]
    assert hash(a) == hash(wp.vec3(1, 2, 3))
    assert repr(a) == "vec3f([1.0, 2.0, 3.0])"
    assert repr(wp.mat22(1, 2, 3, 4)) == "mat22f([[1.0, 2.0], [3.0, 4.0]])"
    arr = np.asarray(a)
    assert arr.dtype == np.float32 and arr.shape == (3,)
    assert np.asarray(wp.mat33d()).shape == (3, 3) and np.asarray(wp.mat33d()).dtype == np.float64
    copied = np.array(a)  # numpy's copy really copies
    copied[0] = 9
    assert a == wp.vec3(1, 2, 3)


# Every composite kind through a kernel ---------------------------------------------------------
KERNEL_TYPES = ["vec2", "vec3", "vec3d", "vec4h", "vec3i", "mat22", "mat33d", "mat44h", "quat", "quatd",
                "transform", "transformd"]
EXTRA_TYPES = {"vec5d": wp.vec(5, wp.float64), "mat23": wp.mat((2, 3), float),
               "vec2_int64": wp.types.vector(2, wp.int64), "vec3_uint8": wp.vec(3, wp.uint8)}
ALL_KERNEL_TYPES = {**{n: getattr(wp, n) for n in KERNEL_TYPES}, **EXTRA_TYPES}


def _shift_kernel(t):
    @wp.kernel
    def shift(a: wp.array(dtype=t), s: t, out: wp.array(dtype=t)):
        i = wp.tid()
        out[i] = a[i] + s

    return shift


SHIFT = {name: _shift_kernel(t) for name, t in ALL_KERNEL_TYPES.items()}


@pytest.mark.parametrize("name", list(ALL_KERNEL_TYPES))
def test_composite_kernel_roundtrip(name):
    t = ALL_KERNEL_TYPES[name]
    shape = t.np_shape
    src = np.arange(4 * t.num_components).reshape((4, *shape)).astype(t.dtype.np_dtype)
    a = wp.array(src, dtype=t)
    out = wp.zeros(4, dtype=t)
    assert a.shape == (4,) and a.numpy().shape == (4, *shape)
    s = t(*range(1, t.num_components + 1))
    wp.launch(SHIFT[name], 4, inputs=[a, s, out])
    np.testing.assert_array_equal(out.numpy(), src + s.numpy())


@pytest.mark.parametrize("value", [(1, 2, 3), [1.0, 2.0, 3.0], np.array([1.0, 2.0, 3.0]), wp.vec3(1, 2, 3)],
                         ids=["tuple", "list", "ndarray", "vec3"])
def test_vector_parameter_accepts_sequences(value):
    a, out = wp.zeros(2, dtype=wp.vec3), wp.zeros(2, dtype=wp.vec3)
    wp.launch(SHIFT["vec3"], 2, inputs=[a, value, out])
    np.testing.assert_array_equal(out.numpy(), [[1, 2, 3], [1, 2, 3]])


def test_matrix_parameter_accepts_nested_sequences():
    a, out = wp.zeros(1, dtype=wp.mat22), wp.zeros(1, dtype=wp.mat22)
    wp.launch(SHIFT["mat22"], 1, inputs=[a, [[1, 2], [3, 4]], out])
    np.testing.assert_array_equal(out.numpy()[0], [[1, 2], [3, 4]])


@wp.kernel
def vec_ops(v: wp.vec3, m: wp.mat33, out: wp.array(dtype=wp.vec3), s: wp.array(dtype=float)):
    out[0] = m * v
    out[1] = wp.cross(v, out[0])
    s[0] = wp.dot(v, out[0])
    s[1] = v.x + v.y * 10.0 + v.z * 100.0


def test_vector_and_matrix_values_reach_the_kernel_in_order():
    rng = np.random.default_rng(2)
    v, m = rng.standard_normal(3).astype(np.float32), rng.standard_normal((3, 3)).astype(np.float32)
    out, s = wp.zeros(2, dtype=wp.vec3), wp.zeros(2)
    wp.launch(vec_ops, 1, inputs=[wp.vec3(v), wp.mat33(m), out, s])
    mv = m @ v
    np.testing.assert_allclose(out.numpy()[0], mv, rtol=1e-5)
    np.testing.assert_allclose(out.numpy()[1], np.cross(v, mv), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(s.numpy(), [v @ mv, v[0] + 10 * v[1] + 100 * v[2]], rtol=1e-5)
