"""Structs inside kernels and funcs: constructors by position and by name, nested structs,
fields of array elements assigned in place, returned from funcs, and clear errors."""

import pytest

import weft as wp


@wp.struct
class Inner:
    data: wp.array(dtype=int)
    z: wp.vec3


@wp.struct
class Outer:
    inner: Inner
    y: float
    n: int


@wp.struct
class Empty:
    pass


@wp.func
def make_outer(data: wp.array(dtype=int), n: int) -> Outer:
    return Outer(Inner(data, wp.vec3(0.0, 0.0, 26.0)), 25.0, n)


@wp.kernel
def construct(data: wp.array(dtype=int), out: wp.array(dtype=float), e: Empty):
    o = make_outer(data, 24)
    k = Outer(y=1.5)  # by name; the rest zero
    k.n = 3
    out[0] = float(o.n) + o.y + o.inner.z[2] + float(o.inner.data[0])
    out[1] = k.y + float(k.n) + float(k.inner.data.shape[0])


def test_constructors_by_position_and_name():
    out = wp.zeros(2)
    wp.launch(construct, 1, inputs=[wp.array([1], dtype=int), out, Empty()])
    assert out.numpy().tolist() == [24 + 25 + 26 + 1, 1.5 + 3 + 0]


@wp.struct
class Pair:
    a: wp.uint32
    v: wp.vec2


@wp.struct
class Holder:
    x: float
    p: Pair


@wp.kernel
def assign_fields_of_elements(items: wp.array(dtype=Holder)):
    i = wp.tid()
    items[i].x += 1.0
    items[i].p.v = wp.vec2(4.0, 5.0)
    items[i].p.v.y = 6.0
    items[i].p.a = wp.uint32(i + 7)


def test_fields_of_array_elements_assigned_in_place():
    items = wp.zeros(2, dtype=Holder)
    wp.launch(assign_fields_of_elements, 2, inputs=[items])
    got = items.list()
    assert [h.x for h in got] == [1.0, 1.0]
    assert [int(h.p.a) for h in got] == [7, 8]
    assert got[1].p.v == wp.vec2(4.0, 6.0)


def test_unknown_field_and_wrong_constructor_arguments_are_compile_errors():
    @wp.kernel
    def unknown_field(o: Outer, out: wp.array(dtype=float)):
        out[0] = o.nonexisting

    with pytest.raises(AttributeError, match=r"`nonexisting` is not an attribute of 'o' \(.*Outer\)"):
        wp.launch(unknown_field, 1, inputs=[Outer(), wp.zeros(1)])

    @wp.kernel
    def too_many(out: wp.array(dtype=float)):
        p = Pair(wp.uint32(1), wp.vec2(), 3.0)
        out[0] = p.v[0]

    with pytest.raises(wp.CompileError, match=r"struct Pair has 2 field\(s\) \(a, v\), got 3 values"):
        wp.launch(too_many, 1, inputs=[wp.zeros(1)])


def test_kernel_key_is_warps():
    assert construct.key == "construct"

    def make():
        @wp.kernel
        def inner(out: wp.array(dtype=float)):
            out[0] = 1.0
        return inner
    assert make().key == "test_kernel_key_is_warps__locals__make__locals__inner"


def test_module_hash_follows_struct_layouts_not_objects():
    def hash_with(field_type):
        @wp.struct
        class Content:
            i: field_type

        @wp.kernel
        def reads(a: wp.array(dtype=Content)):
            pass
        return wp.get_module(reads.__module__).hash_module()

    first, same, other = hash_with(int), hash_with(int), hash_with(float)
    assert first == same and first != other


def test_module_hash_follows_static_values_not_names(tmp_path):
    import importlib.util

    def load(name, value):
        path = tmp_path / f"{name}.py"
        path.write_text("import weft as wp\n\n@wp.func\ndef f():\n    return " + str(value) +
                        "\n\n@wp.kernel\ndef k(out: wp.array(dtype=int)):\n    out[0] = wp.static(f)()\n")
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        path.unlink()  # the kernel's source was read when it was defined
        return wp.get_module(name).hash_module()

    first, other, same = load("hash_a", 17), load("hash_b", 42), load("hash_c", 17)
    assert first == same and first != other
