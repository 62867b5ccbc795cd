"""Builtins and funcs called from Python scope give exactly what the same call in a kernel gives."""

import math
from typing import Any

import numpy as np
import pytest

import weft as wp
from weft.lang.pyscope import value_type


# The same call inside a kernel: the arguments are kernel parameters of the same types.
def _kernel(fn, types, result_type):
    out_t = wp.array(dtype=result_type)
    if len(types) == 0:
        def body(out: out_t):
            out[0] = fn()
    elif len(types) == 1:
        t0 = types[0]

        def body(a0: t0, out: out_t):
            out[0] = fn(a0)
    elif len(types) == 2:
        t0, t1 = types

        def body(a0: t0, a1: t1, out: out_t):
            out[0] = fn(a0, a1)
    else:
        t0, t1, t2 = types

        def body(a0: t0, a1: t1, a2: t2, out: out_t):
            out[0] = fn(a0, a1, a2)
    return wp.kernel(body)


def in_kernel(fn, *args, result_type):
    k = _kernel(fn, [value_type(a) for a in args], result_type)
    out = wp.zeros(1, dtype=result_type)
    wp.launch(k, 1, inputs=[*args, out])
    return out.numpy()[0]


def same(py, kernel):
    """Equal bit for bit (NaN equals NaN)."""
    a, b = np.asarray(py), np.asarray(kernel)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


v3 = wp.vec3(1.0, -2.0, 2.5)
w3 = wp.vec3(0.25, 4.0, -1.0)
m33 = wp.mat33(1.0, 2.0, 0.5, -1.0, 3.0, 2.0, 0.0, 1.5, 4.0)
q = wp.quat_from_axis_angle(wp.normalize(wp.vec3(1.0, 2.0, 3.0)), 0.7)
t = wp.transform(wp.vec3(1.0, 2.0, 3.0), q)
f64 = wp.float64

CASES = [
    # (builtin, args, result type)
    (wp.sin, (0.5,), wp.float32),
    (wp.cos, (1.25,), wp.float32),
    (wp.exp, (1.7,), wp.float32),
    (wp.log, (3.0,), wp.float32),
    (wp.sqrt, (2.0,), wp.float32),
    (wp.tanh, (0.3,), wp.float32),
    (wp.acos, (1.0000001,), wp.float32),
    (wp.atan2, (1.0, -2.0), wp.float32),
    (wp.pow, (2.0, 0.5), wp.float32),
    (wp.sin, (f64(0.5),), wp.float64),
    (wp.min, (3, 7), wp.int32),
    (wp.max, (f64(1.5), f64(-2.0)), wp.float64),
    (wp.abs, (-3,), wp.int32),
    (wp.sign, (-2.5,), wp.float32),
    (wp.clamp, (1.5, 0.0, 1.0), wp.float32),
    (wp.lerp, (1.0, 3.0, 0.3), wp.float32),
    (wp.round, (-2.5,), wp.float32),
    (wp.frac, (-1.25,), wp.float32),
    (wp.step, (-0.5,), wp.float32),
    (wp.length, (v3,), wp.float32),
    (wp.length_sq, (v3,), wp.float32),
    (wp.dot, (v3, w3), wp.float32),
    (wp.cross, (v3, w3), wp.vec3),
    (wp.normalize, (v3,), wp.vec3),
    (wp.sin, (v3,), wp.vec3),
    (wp.outer, (v3, w3), wp.mat33),
    (wp.cw_mul, (v3, w3), wp.vec3),
    (wp.determinant, (m33,), wp.float32),
    (wp.inverse, (m33,), wp.mat33),
    (wp.transpose, (m33,), wp.mat33),
    (wp.mul, (m33, v3), wp.vec3),
    (wp.mul, (v3, m33), wp.vec3),
    (wp.mul, (m33, m33), wp.mat33),
    (wp.mul, (v3, 2.5), wp.vec3),
    (wp.mul, (q, q), wp.quat),
    (wp.mul, (t, t), wp.transform),
    (wp.add, (v3, w3), wp.vec3),
    (wp.sub, (m33, m33), wp.mat33),
    (wp.div, (v3, 3.0), wp.vec3),
    (wp.neg, (q,), wp.quat),
    (wp.pos, (v3,), wp.vec3),
    (wp.mod, (wp.vec3(5.5, -7.0, 3.0), wp.vec3(2.0, 2.0, -2.0)), wp.vec3),
    (wp.div, (-7, 2), wp.int32),
    (wp.div_approx, (2.0, w3), wp.vec3),
    (wp.floordiv, (-7, 2), wp.int32),
    (wp.mod, (-7, 2), wp.int32),
    (wp.bit_and, (12, 10), wp.int32),
    (wp.bit_xor, (wp.vec3i(1, 2, 3), wp.vec3i(3, 3, 3)), wp.vec3i),
    (wp.lshift, (3, 4), wp.int32),
    (wp.invert, (wp.uint8(5),), wp.uint8),
    (wp.unot, (0,), wp.bool),
    (wp.quat_rotate, (q, v3), wp.vec3),
    (wp.quat_inverse, (q,), wp.quat),
    (wp.quat_to_matrix, (q,), wp.mat33),
    (wp.transform_point, (t, v3), wp.vec3),
    (wp.transform_vector, (t, v3), wp.vec3),
    (wp.transform_inverse, (t,), wp.transform),
    (wp.quat_identity, (), wp.quat),
    (wp.transform_identity, (), wp.transform),
]


@pytest.mark.parametrize("fn,args,result_type", CASES,
                         ids=[f"{c[0].name}-{i}" for i, c in enumerate(CASES)])
def test_builtin_matches_kernel(fn, args, result_type):
    py = fn(*args)
    expected = in_kernel(fn, *args, result_type=result_type)
    assert same(np.asarray(py, dtype=expected.dtype), expected), (py, expected)
    if result_type in (wp.float32, wp.int32, wp.bool):
        assert type(py) is {wp.float32: float, wp.int32: int, wp.bool: bool}[result_type]
    elif isinstance(result_type, wp.types.Scalar):
        assert type(py) is type(result_type(0))  # a weft scalar, as calling the type gives
        assert isinstance(py, result_type.np_dtype.type)
    else:
        assert py.type is result_type


def test_compile_time_keyword_arguments():
    assert wp.identity(n=3, dtype=wp.float64) == wp.mat33d(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    assert wp.identity(n=2, dtype=wp.float32).type is wp.mat22


def test_integer_semantics_are_the_kernels():
    assert wp.div(-7, 2) == -3        # truncates, as C does
    assert wp.floordiv(-7, 2) == -4
    assert wp.mod(-7, 2) == -1        # the sign of the dividend
    assert wp.add(wp.int8(100), wp.int8(100)) == -56  # wraps around
    with pytest.raises(ZeroDivisionError, match=r"^div\(\) \(called from Python scope\): integer division by zero$"):
        wp.div(1, 0)  # (no location in the source weft writes for the call)


def test_float32_rounding():
    # 0.1 + 0.2 in float32, not in Python's float64
    assert wp.add(0.1, 0.2) == float(np.float32(0.1) + np.float32(0.2))
    assert wp.sin(math.pi) != math.sin(math.pi)


@wp.func
def scale(x: float, k: float = 2.0) -> float:
    return x * k


@wp.func
def divmod_int(a: int, b: int):
    return a // b, a % b


@wp.func
def generic_twice(x: Any):
    return x + x


@wp.func
def over(x: int):
    return x + 1


@wp.func
def over(x: float):  # noqa: F811 - an overload
    return x + 0.5


@wp.func
def fill(a: wp.array(dtype=float), value: float):
    for i in range(len(a)):
        a[i] = value


@wp.struct
class Body:
    pos: wp.vec3
    mass: float


@wp.func
def make_body(p: wp.vec3, m: float):
    b = Body()
    b.pos = p
    b.mass = m
    return b


def test_funcs():
    assert scale(1.5) == 3.0 and type(scale(1.5)) is float
    assert scale(1.5, k=3.0) == 4.5
    assert divmod_int(-7, 2) == (-4, 1)  # (Python's floor division and modulo: the body runs in Python)
    assert generic_twice(wp.vec3(1.0, 2.0, 3.0)) == wp.vec3(2.0, 4.0, 6.0)
    assert generic_twice(f64(0.25)) == 0.5 and isinstance(generic_twice(f64(0.25)), np.float64)
    assert over(1) == 2 and over(1.0) == 1.5
    a = wp.zeros(4)
    assert fill(a, 7.0) is None
    assert a.numpy().tolist() == [7.0] * 4
    b = make_body(wp.vec3(1.0, 2.0, 3.0), 5.0)
    assert b.pos == wp.vec3(1.0, 2.0, 3.0) and b.mass == 5.0


def test_funcs_inside_static():
    @wp.kernel
    def k(out: wp.array(dtype=float), vs: wp.array(dtype=wp.vec3)):
        out[0] = wp.static(scale(4.0) + 1.0)
        vs[0] = wp.static(wp.normalize(wp.vec3(0.0, 3.0, 4.0)))

    out, vs = wp.zeros(1), wp.zeros(1, dtype=wp.vec3)
    wp.launch(k, 1, inputs=[out, vs])
    assert out.numpy()[0] == 9.0
    assert vs.numpy()[0].tolist() == [0.0, np.float32(0.6), np.float32(0.8)]

    @wp.kernel
    def struct_k(bodies: wp.array(dtype=Body)):
        bodies[0] = wp.static(make_body(wp.vec3(1.0, 0.0, 0.0), 2.0))

    bodies = wp.zeros(1, dtype=Body)
    wp.launch(struct_k, 1, inputs=[bodies])
    assert bodies.numpy()[0]["mass"] == 2.0


def test_random_state_argument():
    state = wp.rand_init(42)
    x = wp.randf(state)
    assert 0.0 <= x < 1.0 and x == wp.randf(state)  # the caller's state is not advanced


def test_no_matching_overload_names_builtin_and_types():
    with pytest.raises(TypeError, match=r"function 'sin' compatible with the arguments 'vec3i'") as info:
        wp.sin(wp.vec3i(1, 2, 3))
    assert "expects 1 float argument" in str(info.value.__cause__)  # the compiler's reason
    with pytest.raises(RuntimeError, match=r"'mul' compatible with the arguments 'mat22f, mat22d'"):
        wp.mul(wp.mat22f(), wp.mat22d())
    with pytest.raises(TypeError, match=r"'mul' compatible with the arguments 'float64, int'"):
        wp.mul(f64(2.0), 3)  # Python numbers are int32 / float32, as in Warp


def test_func_mismatch():
    with pytest.raises(TypeError, match=r"Error calling function 'scale', no overload found for arguments"):
        scale(f64(1.0))
    with pytest.raises(RuntimeError, match="no overload found"):
        over(wp.vec3())


@wp.func
def thread_offset(x: int):
    return x + wp.tid()


@wp.func
def first_row(a: wp.array2d(dtype=float)):
    return a[0]


def test_bad_values():
    with pytest.raises(RuntimeError, match=r"tid\(\) can only be called inside a kernel"):
        wp.tid()
    with pytest.raises(RuntimeError, match=r"tid\(\) can only be called inside a kernel"):
        thread_offset(1)
    with pytest.raises(ValueError, match="does not fit int32"):
        wp.abs(2**40)
    for sequence in ([1.0, 2.0, 3.0], (1.0, 2.0, 3.0), np.ones(3, dtype=np.float32)):
        with pytest.raises(TypeError, match="lists, tuples or numpy arrays"):
            wp.length(sequence)
    row = first_row(wp.array(np.arange(4.0).reshape(2, 2), dtype=float))  # (a view, as Python indexes it)
    assert isinstance(row, wp.array) and row.numpy().tolist() == [0.0, 1.0]


def test_overload_added_after_a_call():
    @wp.func
    def late(x: int):
        return x * 2

    assert late(3) == 6
    with pytest.raises(TypeError):
        late(3.0)
    late.add_overload(lambda_free_overload)
    assert late(3.0) == 1.0


def lambda_free_overload(x: float):
    return x - 2.0


def test_cached_per_argument_types():
    wp.length(wp.vec2(3.0, 4.0))
    entries = wp.length.__dict__["_pyscope_entries"][1]
    n = len(entries)
    assert wp.length(wp.vec2(6.0, 8.0)) == 10.0
    assert len(entries) == n
    assert wp.length(wp.vec2d(6.0, 8.0)) == 10.0
    assert len(entries) == n + 1


@wp.func
def divide_by_zero(x: float):
    return x / 0.0


@wp.func
def third(x: float):
    return x / 3.0


def test_funcs_run_their_python_body_as_in_warp():
    """Called from Python, a func runs its Python body (Warp's rule): Python floats compute
    in float64 and dividing one by zero raises; inside a kernel the same func computes in
    float32 and gives inf."""
    with pytest.raises(ZeroDivisionError):
        divide_by_zero(1.0)
    assert third(1.0) == 1.0 / 3.0
    assert in_kernel(third, 1.0, result_type=wp.float32) == float(np.float32(1.0) / np.float32(3.0))
    assert in_kernel(divide_by_zero, 1.0, result_type=wp.float32) == math.inf


@wp.func
def element(a: wp.array(dtype=float), i: int):
    return a[i]


def test_array_reads_in_a_func_body_are_checked():
    a = wp.array(np.arange(3, dtype=np.float32))
    assert element(a, 2) == 2.0
    with pytest.raises(IndexError):
        element(a, 3)


def test_settings_apply_to_later_calls():
    v = wp.vec3(1.0, 2.0, 3.0)
    assert wp.length(v) == wp.length(v)
    saved = wp.config.bounds_checks
    try:
        wp.config.bounds_checks = not saved
        assert wp.length(v) == float(np.float32(np.sqrt(np.float32(14.0))))
        entry = wp.length.__dict__["_pyscope_entries"][1][((wp.vec3,), (), False)]
        assert entry.last[0] == wp.config.changes  # the kernel of the new settings
    finally:
        wp.config.bounds_checks = saved


def test_inout_builtins_update_the_callers_value():
    t = wp.transform_identity()
    assert wp.transform_set_translation(t, wp.vec3(1.0, 2.0, 3.0)) is None
    wp.transform_set_rotation(t, wp.quat(0.0, 0.0, 0.6, 0.8))
    assert t == wp.transform(wp.vec3(1.0, 2.0, 3.0), wp.quat(0.0, 0.0, 0.6, 0.8))
    state = wp.rand_init(3)
    wp.randf(state)  # a Python int cannot be updated in place: the state stays as it was
    assert state == wp.rand_init(3)


@wp.func
def first_of(q: Any, qd: Any):
    return q[0] == 0.0 and qd[1] > q[1]


@wp.func
def first_of_vec(q: wp.vec2):
    return q[0]


def test_generic_func_with_python_sequences_runs_its_python_body():
    """Warp runs a func that has no concrete signature as Python when it is called from
    Python scope: tuples, lists and numpy arrays (which no kernel parameter takes) are
    indexed as Python does. A typed argument still compiles; a concrete func still refuses
    a tuple."""
    assert first_of((0.0, 1.0), [5.0, 2.0]) is True
    assert not first_of((0.0, 3.0), np.array([5.0, 2.0]))  # (numpy: a numpy bool)
    assert first_of((1.0, 1.0), (0.0, 2.0)) is False
    assert first_of(wp.vec2(0.0, 1.0), wp.vec2(5.0, 2.0)) is True  # (compiled: a bool comes back)
    created, _ = wp.utils.create_warp_function(lambda q, qd: (
        q[0] == 0.0
        and qd[0] == 0.0
    ))
    assert created((0.0, 0.0), (0.0, 0.0)) is True and created((0.0, 0.0), (1.0, 0.0)) is False
    with pytest.raises(TypeError, match="not lists, tuples or numpy arrays"):
        first_of_vec((1.0, 2.0))


def test_legacy_scalar_return_types_setting_applies_to_each_call():
    assert isinstance(wp.sin(wp.float16(1.0)), wp.float16)
    old = wp.config.legacy_scalar_return_types
    try:
        wp.config.legacy_scalar_return_types = True
        assert type(wp.sin(wp.float16(1.0))) is float
        assert type(wp.sin(wp.float64(1.0))) is float
        assert type(wp.invert(wp.int16(-123))) is int and wp.invert(wp.int16(-123)) == 122
    finally:
        wp.config.legacy_scalar_return_types = old
    assert isinstance(wp.sin(wp.float16(1.0)), wp.float16)


def test_bytes_of_a_composite_value_are_its_array_layout():
    q = wp.quat_identity(dtype=wp.float16)
    assert bytes(q) == np.array([0, 0, 0, 1], np.float16).tobytes()
    assert bytes(wp.vec3d(1.0, 2.0, 3.0)) == np.array([1, 2, 3], np.float64).tobytes()


def test_identity_builtins_take_dtype_none_as_float32_and_have_warps_key():
    for kwargs in ({}, {"dtype": None}, {"dtype": float}):
        assert wp.quat_identity(**kwargs)._wp_scalar_type_ is wp.float32
        assert wp.transform_identity(**kwargs)._wp_scalar_type_ is wp.float32
    assert wp.quat_identity(wp.float64)._wp_scalar_type_ is wp.float64
    assert wp.quat_identity.key == "quat_identity"


def test_a_list_argument_is_a_call_mismatch_naming_the_builtin():
    with pytest.raises(RuntimeError, match=r"^Couldn't find a function 'quat_identity' compatible with the "
                                           r"arguments 'list': .*cannot be called with lists"):
        wp.quat_identity(dtype=[wp.float64])
    with pytest.raises(TypeError, match="cannot be called with lists"):
        wp.sin([1.0])


@wp.func
def length_of(x: wp.array(dtype=Any)):
    return x.shape[0]


def test_a_generic_func_called_from_python_gets_an_instance_for_the_types():
    """As in Warp, a call from Python scope adds the generic func's instance for those types
    (`user_overloads`), once, and keeps no reference to the arguments."""
    import gc
    import weakref
    before = len(length_of.user_overloads)
    a = wp.empty(2, dtype=wp.int32)
    held = weakref.ref(a)
    assert length_of(a) == 2 and len(length_of.user_overloads) == before + 1
    del a
    gc.collect()
    assert held() is None
    assert length_of(wp.empty(3, dtype=wp.int32)) == 3 and len(length_of.user_overloads) == before + 1
