"""Redefining a @func: overloads made in a closure factory, an alias keeping the earlier func,
replacing one overload, and Module.mark_modified recompiling with rebound constants."""

from typing import Any

import numpy as np

import weft as wp


def make_scaled(value: int):
    @wp.func
    def f():
        return value

    @wp.func
    def f(x: int):  # noqa: F811 - an overload of the local f
        return f() * x

    return f


scaled_2 = make_scaled(2)
scaled_3 = make_scaled(3)


@wp.kernel
def call_closures(a: wp.array(dtype=int)):
    a[0] = scaled_2()
    a[1] = scaled_2(5)
    a[2] = scaled_3()
    a[3] = scaled_3(5)


def test_overloads_defined_in_a_closure_factory_stay_per_call():
    a = wp.zeros(4, dtype=int)
    wp.launch(call_closures, 1, [a])
    np.testing.assert_array_equal(a.numpy(), [2, 10, 3, 15])


@wp.func
def level():
    return 17


level_old = level


@wp.func
def level():  # noqa: F811 - a redefinition
    return 42


@wp.func
def square(x: int):
    return x * x


@wp.func
def square(x: float):  # noqa: F811 - an overload
    return x * x


@wp.func
def square(x: int):  # noqa: F811 - replaces the int overload only
    return x * x * x


@wp.kernel
def call_redefined(a: wp.array(dtype=float)):
    a[0] = float(level())
    a[1] = float(level_old())
    a[2] = float(square(2))
    a[3] = square(2.0)


def test_redefinition_makes_a_new_func_and_an_alias_keeps_the_old():
    a = wp.zeros(4, dtype=float)
    wp.launch(call_redefined, 1, [a])
    np.testing.assert_array_equal(a.numpy(), [42, 17, 8, 4])


def test_loop_made_closures_do_not_change_earlier_ones():
    made = []
    for _ in range(3):
        @wp.func
        def g():
            return 1

        made.append(g)
    assert len({id(g) for g in made}) == 3  # each a func of its own, with its one overload
    assert [len(g.overloads) for g in made] == [1, 1, 1]
    assert made[0].overloads[0].pyfunc is not made[2].overloads[0].pyfunc


def test_mark_modified_recompiles_with_rebound_constants():
    @wp.kernel
    def read(out: wp.array(dtype=int)):
        out[0] = C

    C = 17
    out = wp.zeros(1, dtype=int)
    wp.launch(read, 1, [out])
    assert out.numpy()[0] == 17
    C = 42  # noqa: F841 - read by the kernel through its closure
    read.module.mark_modified()
    wp.launch(read, 1, [out])
    assert out.numpy()[0] == 42


@wp.struct
class _Point:
    x: float


@wp.struct
class _Pair:
    y: float
    z: float


class _module_a:  # stands in for one module defining `value`
    def value(s: _Point) -> float:
        return s.x


class _module_b:  # and another, for another struct
    def value(s: _Pair) -> float:
        return s.y * s.z


value = None
for _source in (_module_a, _module_b):  # a library registering one func name per struct type
    value = wp.func(_source.value, module=__name__)


@wp.kernel
def _value_of(s: Any, out: wp.array(dtype=float)):
    out[0] = value(s)


def test_funcs_of_one_name_made_in_a_loop_are_overloads():
    # Warp looks the name up where wp.func is called: the second becomes an overload
    point, pair = _Point(), _Pair()
    point.x, pair.y, pair.z = 2.0, 3.0, 4.0
    out = wp.zeros(1, dtype=float)
    wp.launch(_value_of, 1, [point, out])
    assert out.numpy()[0] == 2.0
    wp.launch(_value_of, 1, [pair, out])
    assert out.numpy()[0] == 12.0
