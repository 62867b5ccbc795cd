"""Values a kernel captures from Python: struct fields through wp.static, attributes that do
not exist, and the module hash following a rebound constant."""

import enum

import numpy as np
import pytest

import weft as wp


@wp.struct
class Flags:
    enabled: wp.bool
    limit: wp.float64


def test_bool_struct_field_set_from_an_int_holds_a_bool():
    params = Flags()
    params.enabled = 1
    params.limit = wp.float64(np.inf)
    assert params.enabled is True

    @wp.kernel(module="unique")
    def read(enabled: wp.array(dtype=wp.bool), limit: wp.array(dtype=wp.float64)):
        enabled[0] = wp.static(params).enabled
        limit[0] = wp.static(params).limit

    enabled, limit = wp.zeros(1, dtype=wp.bool), wp.zeros(1, dtype=wp.float64)
    wp.launch(read, 1, [enabled, limit])
    assert enabled.numpy()[0] and limit.numpy()[0] == np.inf


CAPTURED = wp.vec3(1.0, 2.0, 3.0)


def test_unknown_attribute_of_a_captured_value_is_an_attribute_error():
    @wp.kernel(module="unique")
    def bad(out: wp.array(dtype=float)):
        out[0] = CAPTURED.foo

    with pytest.raises(AttributeError, match="`foo` is not an attribute of"):
        wp.launch(bad, 1, [wp.zeros(1, dtype=float)])


def test_module_hash_follows_a_rebound_constant():
    @wp.kernel
    def write(data: wp.array(dtype=float)):
        data[0] = LEVEL

    LEVEL = wp.constant(1.0)
    module = wp.get_module(write.__module__)
    first = module.hash_module()
    LEVEL = wp.constant(2.0)
    assert module.hash_module() != first
    LEVEL = wp.constant(1.0)  # noqa: F841 - read by the kernel through its closure
    assert module.hash_module() == first


class _Flags(enum.IntFlag):
    A = 1
    B = 2
    C = 4


class _Level(enum.IntEnum):
    LOW = 3


@wp.kernel
def _flag_values(out: wp.array(dtype=int)):
    out[0] = ~_Flags.A  # the integer's complement (-2), as in Warp: not Python's B|C (6)
    out[1] = ~(_Flags.A | _Flags.C)
    out[2] = _Flags.B | _Flags.C
    out[3] = -_Level.LOW + _Flags.C.value


def test_int_enum_and_flag_members_are_plain_ints_in_kernels():
    out = wp.zeros(4, dtype=int)
    wp.launch(_flag_values, 1, inputs=[out])
    assert out.numpy().tolist() == [-2, -6, 6, 1]
