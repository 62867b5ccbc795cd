"""Generic kernels (`Any` parameters) and their overloads (weft.overload)."""

from typing import Any

import numpy as np
import pytest

import weft as wp


@wp.func
def twice(a: Any):
    return a + a


@wp.kernel
def generic_fill(a: wp.array(dtype=Any), value: Any):
    a[wp.tid()] = twice(value)


@wp.kernel
def generic_scale(a: Any, s: Any):
    i = wp.tid()
    a[i] = a[i] * type(a[i])(s)


def test_launch_compiles_an_overload_per_argument_types():
    ai, af, av = wp.zeros(3, dtype=int), wp.zeros(3), wp.zeros(3, dtype=wp.vec3)
    wp.launch(generic_fill, dim=3, inputs=[ai, 21])
    wp.launch(generic_fill, dim=3, inputs=[af, 1.5])
    wp.launch(generic_fill, dim=3, inputs=[av, wp.vec3(1.0, 2.0, 3.0)])
    np.testing.assert_array_equal(ai.numpy(), 42)
    np.testing.assert_array_equal(af.numpy(), 3.0)
    np.testing.assert_array_equal(av.numpy(), [[2.0, 4.0, 6.0]] * 3)
    assert len(generic_fill.overloads) == 3
    wp.launch(generic_fill, dim=3, inputs=[ai, 1])
    assert len(generic_fill.overloads) == 3  # reused


def test_explicit_overloads_by_list_and_by_name():
    fill_f64 = wp.overload(generic_fill, [wp.array(dtype=wp.float64), wp.float64])
    a = wp.zeros(2, dtype=wp.float64)
    wp.launch(fill_f64, dim=2, inputs=[a, 0.25])
    np.testing.assert_array_equal(a.numpy(), 0.5)
    assert not fill_f64.is_generic and fill_f64.generic_parent is generic_fill
    scale = wp.overload(generic_scale, {"a": wp.array(dtype=float), "s": int})
    b = wp.full(2, 1.5)
    wp.launch(scale, dim=2, inputs=[b, 2])
    np.testing.assert_array_equal(b.numpy(), 3.0)
    assert wp.overload(generic_scale, {"a": wp.array(dtype=float), "s": int}) is scale


@wp.kernel
def stub_target(x: Any, out: wp.array(dtype=float)):
    out[0] = float(x) * 2.0


@wp.overload
def stub_target(x: wp.float64, out: wp.array(dtype=float)):  # noqa: F811
    ...


def test_overload_decorator_on_a_stub():
    assert isinstance(stub_target, wp.Kernel) and len(stub_target.overloads) == 1
    out = wp.zeros(1)
    wp.launch(stub_target, dim=1, inputs=[np.float64(1.25), out])
    np.testing.assert_array_equal(out.numpy(), 2.5)


def test_overload_errors():
    @wp.kernel
    def concrete(x: float):
        pass

    with pytest.raises(RuntimeError, match="Only generic kernels"):
        wp.overload(concrete, [float])
    with pytest.raises(RuntimeError, match="Invalid argument name 'b'"):
        wp.overload(generic_fill, {"b": int})
    with pytest.raises(TypeError, match="array of 1 dimension"):
        wp.overload(generic_fill, [wp.array2d(dtype=float), float])
    with pytest.raises(TypeError, match="concrete type"):
        wp.overload(generic_fill, {"value": int})  # `a` is still generic
    with pytest.raises(TypeError, match="cannot infer"):
        wp.launch(generic_fill, dim=1, inputs=[wp.zeros(1), "text"])


@wp.func
def first(a: wp.array(dtype=Any)):
    return a[0]


@wp.func
def first(a: wp.array(dtype=wp.float64)):  # noqa: F811 - a concrete overload
    return a[0] * 2.0


@wp.kernel
def use_first(a: wp.array(dtype=float), b: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64)):
    out[0] = wp.float64(first(a)) + first(b)


def test_user_overloads_lists_concrete_overloads_and_generic_instances():
    out = wp.zeros(1, dtype=wp.float64)
    wp.launch(use_first, dim=1, inputs=[wp.ones(1), wp.ones(1, dtype=wp.float64), out])
    assert out.numpy()[0] == 3.0
    signatures = set(first.user_overloads)
    assert signatures == {"array(dtype=float64, ndim=1)", "array(dtype=float32, ndim=1)"}


@wp.func
def component_sum(v: wp.types.vector(3, wp.Int)) -> wp.Int:
    return v[0] + v[1] + v[2]


@wp.func
def as_float(x: wp.Float) -> wp.Int:
    return x


def test_generic_return_annotations_are_inferred_then_checked():
    @wp.kernel
    def sums(out: wp.array(dtype=wp.int16)):
        out[0] = component_sum(wp.vec3s(1, 2, 3))

    out = wp.zeros(1, dtype=wp.int16)
    wp.launch(sums, dim=1, inputs=[out])
    assert out.numpy()[0] == 6

    @wp.kernel
    def wrong():
        as_float(1.0)

    with pytest.raises(wp.WarpCodegenTypeError, match="annotated as `Int` but the code returns a value of type"):
        wp.launch(wrong, dim=1)
