"""Values a kernel captures from Python: struct fields through wp.static, attributes that do
not exist, and the module hash following a rebound constant."""

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
