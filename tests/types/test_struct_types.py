"""`@wp.struct`: instances in Python scope (defaults, nesting, array fields), struct
parameters and arrays of structs in kernels, and their memory layout."""

import ctypes

import numpy as np
import pytest

import weft as wp
from weft.types import StructType
from weft.types.layout import ctype_of


@wp.struct
class Inner:
    a: float
    b: wp.vec2


@wp.struct
class Outer:
    n: int
    inner: Inner
    m: wp.mat22
    arr: wp.array(dtype=float)
    h: wp.float16
    flag: wp.bool
    u8: wp.uint8
    d: wp.float64


@wp.struct
class WithDefaults:
    x: float = 2.5
    v: wp.vec3 = wp.vec3(1.0, 2.0, 3.0)
    n: int


def test_struct_type():
    assert isinstance(Outer, StructType)
    assert Outer.field_names == ["n", "inner", "m", "arr", "h", "flag", "u8", "d"]
    assert Outer.fields["n"] is wp.int32 and Outer.fields["inner"] is Inner
    assert Outer.fields["arr"] is wp.array(dtype=float)
    assert Outer.field_index("m") == 2
    assert (Outer.__name__, Outer.__qualname__) == ("Outer", "Outer")  # (as a class has them)

    @wp.struct
    class Empty:
        pass
    assert Empty.fields == {} and isinstance(Empty(), Empty.cls)
    with pytest.raises(RuntimeError, match="must be defined as base classes"):
        @wp.struct
        class Derived(Inner):
            c: int


def test_instances_start_at_zero():
    o = Outer()
    assert o.n == 0 and o.inner.a == 0 and o.inner.b == wp.vec2(0, 0)
    assert o.m == wp.mat22() and o.arr is None and o.h == 0 and not o.flag and o.d == 0
    assert isinstance(o.n, np.int32) and isinstance(o.h, np.float16)
    assert repr(o).startswith("Outer(\n\tn=") and "\tinner=Inner(\n\t\ta=" in repr(o)


def test_instances_do_not_share_nested_values():
    a, b = Outer(), Outer()
    a.inner.a = 5.0
    a.m[0, 0] = 3.0
    assert b.inner.a == 0 and b.m[0, 0] == 0


@wp.kernel
def read_defaults(out: wp.array(dtype=float)):
    d = WithDefaults()
    out[0] = d.x + d.v[2] + float(d.n)


def test_class_values_are_ignored_as_in_warp():
    """Warp 1.19 starts every field at zero, in Python scope and in a kernel, whatever value
    the class body gives it (its fem Sample struct has such values): so does weft."""
    d = WithDefaults()
    assert d.x == 0 and d.v == wp.vec3(0, 0, 0) and d.n == 0
    d.v[0] = 9.0
    assert WithDefaults().v == wp.vec3(0, 0, 0)
    assert WithDefaults(x=1.5).x == np.float32(1.5)
    out = wp.full(1, 7.0)
    wp.launch(read_defaults, 1, inputs=[out])
    assert out.numpy()[0] == 0.0


def test_keyword_constructor_and_unknown_fields():
    o = Outer(n=3, d=0.5)
    assert o.n == 3 and o.d == 0.5
    for kind in (AttributeError, RuntimeError):  # (RuntimeError: Warp's class)
        with pytest.raises(kind, match="no field 'nope'"):
            o.nope = 1
    with pytest.raises(AttributeError):
        Outer(nope=1)


def test_layout_matches_c():
    @wp.struct
    class Padded:
        a: wp.int8
        b: wp.float64
        c: wp.int16

    class C(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int8), ("b", ctypes.c_double), ("c", ctypes.c_int16)]

    assert Padded.size == ctypes.sizeof(C) == 24
    ct = ctype_of(Padded)
    assert [(name, ctypes.sizeof(t)) for name, t in ct._fields_] == [("a", 1), ("b", 8), ("c", 2)]
    assert ct.b.offset == 8 and ct.c.offset == 16


# Struct parameters ------------------------------------------------------------------------------
@wp.kernel
def read_struct(s: Outer, out: wp.array(dtype=float)):
    i = wp.tid()
    v = s.arr[i] * float(s.n) + s.inner.a + s.inner.b[1] + s.m[1, 0] + float(s.h) + float(s.d)
    if s.flag:
        v = v + 1000.0
    out[i] = v + float(s.u8)


def _outer():
    o = Outer()
    o.n = 2
    o.inner.a = 0.5
    o.inner.b = wp.vec2(0.0, 10.0)
    o.m = wp.mat22(0.0, 0.0, 100.0, 0.0)
    o.arr = wp.array(np.arange(4, dtype=np.float32))
    o.h, o.d, o.u8, o.flag = 0.25, 0.125, 200, True
    return o


def test_every_field_reaches_the_kernel():
    o = _outer()
    out = wp.zeros(4)
    wp.launch(read_struct, 4, inputs=[o, out])
    expected = np.arange(4) * 2 + 0.5 + 10 + 100 + 0.25 + 0.125 + 1000 + 200
    np.testing.assert_allclose(out.numpy(), expected)
    o.flag = False  # a struct is repacked on every launch
    o.inner.a = 1.5
    wp.launch(read_struct, 4, inputs=[o, out])
    np.testing.assert_allclose(out.numpy(), expected - 1000 + 1)


def test_strided_array_field():
    o = _outer()
    o.arr = wp.array(np.arange(8, dtype=np.float32))[::2]  # 0, 2, 4, 6
    out = wp.zeros(4)
    wp.launch(read_struct, 4, inputs=[o, out])
    np.testing.assert_allclose(out.numpy(), np.arange(0, 8, 2) * 2 + 0.5 + 10 + 100 + 0.25 + 0.125 + 1000 + 200)


def test_plain_sequences_in_vector_fields():
    o = _outer()
    o.inner.b = (0.0, 20.0)
    out = wp.zeros(4)
    wp.launch(read_struct, 4, inputs=[o, out])
    assert out.numpy()[0] == 0.5 + 20 + 100 + 0.25 + 0.125 + 1000 + 200


def test_a_vector_of_the_wrong_size_for_a_field_is_a_value_error_too():  # (Warp's class)
    o = _outer()
    for kind in (TypeError, ValueError):
        with pytest.raises(kind, match=r"field 'b' expects vec2f \(2 components\), got 3 values"):
            o.inner.b = wp.vec3(1.0, 2.0, 3.0)


def test_struct_argument_errors():
    out = wp.zeros(4).fill_(-1.0)
    with pytest.raises(TypeError) as e:
        wp.launch(read_struct, 4, inputs=[Inner(), out])
    assert "kernel 'read_struct'" in str(e.value) and "'s'" in str(e.value)
    assert "struct Outer" in str(e.value) and "Inner" in str(e.value)
    o = _outer()
    with pytest.raises(TypeError, match=r"Struct field 'n' expects an integer \(int32\), got float 1.5"):
        o.n = 1.5
    with pytest.raises(TypeError, match=r"Struct field 'arr' expects dtype float32, got int32"):
        o.arr = wp.zeros(4, dtype=int)
    with pytest.raises(TypeError, match=r"Struct field 'arr' expects a Warp array, got ndarray"):
        o.arr = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match=r"Struct field 'arr' expects an array with 1 dimension\(s\), got 2"):
        o.arr = wp.zeros((2, 2), dtype=float)
    with pytest.raises(TypeError, match=r"Struct field 'm' expects mat22f but got a single value"):
        o.m = 1.5
    with pytest.raises(TypeError, match=r"Struct field 'm' expects mat22f but got a single value"):
        o.m = wp.float32(1.5)  # weft's own scalars are refused as Warp's are
    with pytest.raises(TypeError, match=r"Struct field 'inner' expects struct Inner, got Outer"):
        o.inner = _outer()
    assert (out.numpy() == -1).all()


# Arrays of structs ------------------------------------------------------------------------------
@wp.kernel
def read_struct_array(sa: wp.array(dtype=Inner), out: wp.array(dtype=float)):
    i = wp.tid()
    s = sa[i]
    out[i] = s.a + s.b[0]


@wp.kernel
def write_struct_array(sa: wp.array(dtype=Inner)):
    i = wp.tid()
    s = Inner()
    s.a = float(i)
    s.b = wp.vec2(float(i) * 2.0, 7.0)
    sa[i] = s


@wp.kernel
def write_struct_field(sa: wp.array(dtype=Inner), value: float):
    i = wp.tid()
    sa[i].a = value


def test_struct_array_storage_is_a_numpy_record_view():
    sa = wp.zeros(3, dtype=Inner)
    assert sa.dtype is Inner and sa.shape == (3,)
    rec = sa.numpy()
    assert rec.dtype.names == ("a", "b") and rec.dtype.itemsize == Inner.size
    rec["a"] = [1, 2, 3]
    rec["b"][:, 0] = [10, 20, 30]
    out = wp.zeros(3)
    wp.launch(read_struct_array, 3, inputs=[sa, out])
    np.testing.assert_array_equal(out.numpy(), [11, 22, 33])


def test_kernel_writes_structs_and_fields():
    sa = wp.zeros(3, dtype=Inner)
    wp.launch(write_struct_array, 3, inputs=[sa])
    np.testing.assert_array_equal(sa.numpy()["a"], [0, 1, 2])
    np.testing.assert_array_equal(sa.numpy()["b"], [[0, 7], [2, 7], [4, 7]])
    wp.launch(write_struct_field, 3, inputs=[sa, 5.0])
    np.testing.assert_array_equal(sa.numpy()["a"], [5, 5, 5])
    np.testing.assert_array_equal(sa.numpy()["b"][:, 1], [7, 7, 7])  # the rest untouched


def test_struct_array_from_values_and_fill():
    values = [Inner(a=1.0, b=wp.vec2(2, 3)), Inner(a=4.0, b=(5, 6))]
    sa = wp.array(values, dtype=Inner)
    assert sa.shape == (2,)
    np.testing.assert_array_equal(sa.numpy()["a"], [1, 4])
    np.testing.assert_array_equal(sa.numpy()["b"], [[2, 3], [5, 6]])
    sa.fill_(Inner(a=7.0, b=(8.0, 9.0)))
    np.testing.assert_array_equal(sa.numpy()["a"], [7, 7])
    np.testing.assert_array_equal(sa.numpy()["b"], [[8, 9], [8, 9]])
    with pytest.raises(ValueError, match="struct Inner"):
        sa.fill_(1.0)
    with pytest.raises(TypeError, match="struct arrays need numpy data"):
        wp.array(np.zeros(2, np.float32), dtype=Inner)


def test_array_list_gives_struct_instances_and_vectors():
    a = wp.zeros(2, dtype=Inner)
    a.fill_(Inner(a=1.5, b=wp.vec2(1.0, 2.0)))
    items = a.list()
    assert len(items) == 2 and isinstance(items[0], Inner.cls)
    assert items[1].a == 1.5 and items[1].b == wp.vec2(1.0, 2.0)
    o = wp.zeros(1, dtype=Outer).list()[0]
    assert o.arr is None and o.h == 0 and isinstance(o.inner, Inner.cls)
    m = wp.zeros((2, 2), dtype=wp.vec3).list()
    assert len(m) == 4 and m[0] == wp.vec3(0.0, 0.0, 0.0)
    assert wp.array([[1, 2], [3, 4]], dtype=int).list() == [1, 2, 3, 4]


def test_numpy_view_of_struct_arrays_has_component_shapes():
    @wp.struct
    class Shaped:
        m: wp.mat33
        h: wp.float16
        v: wp.vec2

    s = Shaped()
    s.m = np.arange(9.0)
    s.h = 1.5
    s.v = (1, 2)
    a = wp.zeros(2, dtype=Shaped).fill_(s)
    n = a.numpy()
    assert n["m"].shape == (2, 3, 3) and n["m"][1, 2, 0] == 6.0
    assert n["h"].dtype == np.float16 and n["h"][0] == 1.5
    assert n["v"].shape == (2, 2)
    assert a.list()[1].h == 1.5


def test_ctype_of_an_instance_is_its_packed_form():
    o = Outer(n=7, d=0.25)
    packed = o.__ctype__()
    assert isinstance(packed, ctypes.Structure) and ctypes.sizeof(packed) == Outer.size
    assert packed.n == 7 and packed.d == 0.25


def test_a_field_that_is_no_weft_type_is_reported_where_the_struct_is_used():
    class NotAType:
        pass

    with pytest.warns(UserWarning, match="field 'odd' has annotation"):
        @wp.struct
        class Odd:
            odd: NotAType()
            n: int
    o = Odd()  # instances can be made (the field stays None) ...
    assert o.odd is None and o.n == 0
    with pytest.raises(TypeError, match="field 'odd' has annotation"):
        o.odd = 1
    with pytest.raises(TypeError, match="has no memory layout"):
        Odd.size  # noqa: B018 - ... but the struct cannot reach a kernel or an array


@wp.struct
class _Composites:
    v: wp.vec3
    t: wp.transform


def test_a_bool_or_numpy_number_fills_a_composite_field_with_warps_deprecation_warning():
    import contextlib
    import io

    from weft import logger
    for value in (True, np.bool_(True), np.float32(1.5), np.int64(3)):
        s = _Composites()
        for field, type_name in (("v", "vec3f"), ("t", "transformf")):
            logger._warnings_seen.clear()
            with contextlib.redirect_stderr(io.StringIO()) as stderr:
                setattr(s, field, value)
            assert (f"type `{type(value).__name__}` to the composite type `{type_name}` for struct field "
                    f"'{field}' is deprecated") in stderr.getvalue()
            np.testing.assert_array_equal(np.array(getattr(s, field)).reshape(-1), float(value))


def test_numpy_value_gives_scalar_fields_as_they_are_stored():
    # Warp reads numpy_value() from the packed struct: float16 and float32 rounded, small ints wrapped,
    # while the attribute itself keeps the Python number it was given.
    s = Outer()
    s.h = 0.333
    s.d = 0.1
    s.u8 = 300
    s.inner.a = 0.1
    value = s.numpy_value()
    row = dict(zip(["n", "inner", "m", "arr", "h", "flag", "u8", "d"], value))
    assert row["h"] == float(np.float16(0.333)) and s.h == 0.333
    assert row["u8"] == 44
    assert row["d"] == 0.1
    assert row["inner"][0] == float(np.float32(0.1))


def test_str_of_an_instance_is_warps_one_field_a_line_layout():
    o = Outer()
    o.inner.a = 2.5
    o.h = 0.5
    text = str(o)
    assert text.startswith("Outer(\n\tn=0,\n\tinner=Inner(\n\t\ta=2.5,\n\t\tb=[0.0, 0.0],\n\t),\n\tm=")
    assert "\n\tarr=None,\n\th=0.5,\n" in text and text.endswith("\n)")


def test_instances_read_from_an_array_hold_python_numbers():
    # as Warp's: list() of a struct array gives instances whose scalar fields are Python numbers
    arr = wp.zeros(1, dtype=Outer)
    got = arr.list()[0]
    assert type(got.n) is int and type(got.h) is float and type(got.flag) is bool
    assert type(got.u8) is int and type(got.d) is float and type(got.inner.a) is float


@wp.struct
class Gain:
    gain: float
    offset: wp.vec2


@wp.kernel
def apply_gain(x: wp.array(dtype=float), s: Gain):
    i = wp.tid()
    x[i] = x[i] * s.gain + s.offset[1]


def _gain_struct(offset_type):
    """`Gain` defined again, as a re-run notebook cell or a reloaded module defines it."""
    @wp.struct
    class Gain:
        gain: float
        offset: offset_type

    Gain.key = globals()["Gain"].key  # (what the same cell or module gives it; here the qualnames differ)
    return Gain


def test_a_struct_defined_again_alike_is_taken_for_it():
    """Instances of a new definition with the same key and fields pass to kernels annotated
    with the old one (Warp packs any struct; another layout under the key is refused)."""
    again = _gain_struct(wp.vec2)
    s = again()
    s.gain, s.offset = 2.0, wp.vec2(0.0, 1.0)
    x = wp.array([1.0, 2.0], dtype=float)
    wp.launch(apply_gain, 2, inputs=[x, s])
    assert x.numpy().tolist() == [3.0, 5.0]
    with pytest.raises(TypeError, match="an instance of struct Gain"):
        wp.launch(apply_gain, 2, inputs=[x, _gain_struct(wp.vec3)()])


def _holder_structs():
    @wp.struct
    class Item:
        s: float

    @wp.struct
    class Holder:
        a: float
        items: wp.array(dtype=Item)

    return Item, Holder


_Item, _Holder = _holder_structs()


@wp.kernel
def read_holder(h: _Holder, out: wp.array(dtype=float)):
    out[0] = h.a + h.items[0].s


def test_a_struct_holding_arrays_of_a_struct_defined_again_is_taken_for_it():
    item, holder = _holder_structs()  # (the same cell run again: both defined anew)
    h = holder()
    h.a = 1.0
    h.items = wp.array([item()], dtype=item)
    h.items.numpy()["s"] = 2.5
    out = wp.zeros(1)
    wp.launch(read_holder, 1, inputs=[h, out])
    assert out.numpy().tolist() == [3.5]


@wp.struct
class _Compared:
    a: float


def test_struct_instances_compare_by_identity_as_warps():
    # Warp's instances have no __eq__: two with equal fields are different objects (and
    # equality agrees with the identity hash)
    s, t = _Compared(), _Compared()
    s.a = t.a = 1.5
    assert s != t and not (s == t) and t not in [s] and s == s and len({s, t}) == 2
