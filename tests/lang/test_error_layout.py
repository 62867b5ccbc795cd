"""The layout of weft's errors that point at source: the place first (`file:line:col: in
NAME:`, the source line, a caret), the message last. The message ending the text is what
lets Warp programs and tests match it with patterns anchored by `$`; the exception types
are Warp's (RuntimeError for a compile error, TypeError/AttributeError/... where Warp
raises those)."""

import re
from types import SimpleNamespace

import pytest

import weft as wp
from weft.lang.errors import CompileError, format_at


def launch_error(kernel, *inputs):
    with pytest.raises(Exception) as info:
        wp.launch(kernel, 1, inputs=list(inputs))
    return info.value


def lines_of(err):
    return str(err).splitlines()


@wp.kernel
def vec3_from_two(a: wp.array(dtype=float)):
    a[0] = wp.vec3(1.0, 2.0)[0]


@wp.kernel
def transform_from_two(a: wp.array(dtype=float)):
    t = wp.transform(1.0, 2.0)
    a[0] = t.p[0]


@wp.kernel
def compares_vec3_with_vec2(a: wp.array(dtype=float)):
    wp.expect_neq(wp.vec3(0.0, 0.0, 0.0), wp.vec2(0.0, 0.0))


@wp.kernel
def slot_gets_vector(a: wp.array(dtype=wp.vec3)):
    a[0].y = a[0]


@wp.kernel
def slot_write_float_index(a: wp.array(dtype=wp.vec3), idx: wp.array(dtype=float)):
    a[idx[0]].x += 1.0


@wp.struct
class Foo:
    x: float


@wp.kernel
def reads_missing_field(a: wp.array(dtype=float)):
    foo = Foo()
    a[0] = foo.nonexisting


def test_place_first_then_message():
    err = launch_error(vec3_from_two, wp.zeros(1))
    head, shown, caret, *rest = lines_of(err)
    line = vec3_from_two.__wrapped__.__code__.co_firstlineno + 2
    assert re.fullmatch(rf"{re.escape(__file__)}:{line}:\d+: in vec3_from_two:", head), head
    assert shown == "    a[0] = wp.vec3(1.0, 2.0)[0]"
    assert caret == " " * (4 + shown.strip().index("wp.vec3")) + "^"
    assert rest == [err.bare_message]


# Warp's own patterns (from its tests), anchored at the end of the text, match weft's errors.
@pytest.mark.parametrize("kernel,exc,pattern", [
    (vec3_from_two, RuntimeError,
     r"incompatible number of values given \(2\) when constructing a vector of length 3$"),
    (transform_from_two, RuntimeError,
     r"incompatible number of values given \(2\) when constructing a transform; expected 0, 1, or 7$"),
    (compares_vec3_with_vec2, RuntimeError, r"Can't test equality for objects with different types$"),
    (slot_gets_vector, TypeError, r"Composite slot assignment expects value of type float32, got vec3f$"),
    (slot_write_float_index, TypeError, r"Array slot write indices must be integers, got float32$"),
    (reads_missing_field, AttributeError, r"`nonexisting` is not an attribute of 'foo' \([\w.]+\.Foo\)$"),
], ids=lambda x: getattr(x, "name", None))
def test_warp_patterns_anchored_at_the_end_match(kernel, exc, pattern):
    arrays = {slot_gets_vector: [wp.zeros(1, dtype=wp.vec3)],
              slot_write_float_index: [wp.zeros(1, dtype=wp.vec3), wp.zeros(1)]}
    err = launch_error(kernel, *arrays.get(kernel, [wp.zeros(1)]))
    assert isinstance(err, exc) and isinstance(err, wp.WarpCodegenError)
    assert re.search(pattern, str(err)), str(err)
    assert str(err).startswith(f"{__file__}:")  # and the place is still there, first


def test_the_message_is_warps():
    err = launch_error(compares_vec3_with_vec2, wp.zeros(1))
    assert err.bare_message == "Can't test equality for objects with different types"  # (Warp's words)


def test_format_without_a_place_or_a_source_line():
    assert format_at("plain message", None) == "plain message"
    nowhere = SimpleNamespace(file="<no such file>", line=3, col=4)
    assert format_at("two\nlines", nowhere, "k") == "<no such file>:3:5: in k:\ntwo\nlines"
    err = CompileError("the message", nowhere)
    assert str(err) == "<no such file>:3:5:\nthe message" and err.bare_message == "the message"


def test_transform_copy_needs_matching_dtypes_while_vectors_convert():
    @wp.kernel
    def copies_transform(a: wp.array(dtype=float)):
        t = wp.transformd(wp.transform(1.0))
        a[0] = float(t.p[0])

    @wp.kernel
    def converts_matrix(a: wp.array(dtype=float)):
        m = wp.mat22d(wp.mat22(1.0, 2.0, 3.0, 4.0))
        a[0] = float(m[1, 0] + wp.vec3d(wp.vec3(1.0, 2.0, 3.0))[2])

    with pytest.raises(RuntimeError, match=r"copy constructing a transform requires matching source and "
                                           r"target dtypes, got `float32` and `float64`$"):
        wp.launch(copies_transform, 1, inputs=[wp.zeros(1)])
    a = wp.zeros(1)
    wp.launch(converts_matrix, 1, inputs=[a])
    assert a.numpy()[0] == 6.0
