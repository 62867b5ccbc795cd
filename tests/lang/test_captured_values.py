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


# Python functions called in kernels ------------------------------------------------------------
import math  # noqa: E402
import time  # noqa: E402

from weft.lang.errors import CompileError  # noqa: E402


@wp.kernel
def python_math(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    # math and numpy functions of run-time values are Warp's builtins of the same name; of
    # constants, they are folded when the kernel compiles
    y[i] = math.sqrt(x[i]) + np.sin(x[i]) + np.float32(i) + math.sqrt(4.0) + float(math.pi)


def test_math_and_numpy_functions_are_the_builtins_of_their_name():
    x = wp.array(np.arange(1, 5, dtype=np.float32))
    y = wp.zeros(4)
    wp.launch(python_math, 4, inputs=[x, y])
    xs = np.arange(1, 5)
    np.testing.assert_allclose(y.numpy(), np.sqrt(xs) + np.sin(xs) + np.arange(4) + 2.0 + np.pi, rtol=1e-6)


def _log_step():
    return 1.0


@wp.kernel
def calls_a_plain_helper(y: wp.array(dtype=float)):
    y[0] = _log_step()


@wp.kernel
def reads_the_clock(y: wp.array(dtype=float)):
    y[0] = float(time.time())


@wp.kernel
def launches_inside(y: wp.array(dtype=float)):
    wp.launch(calls_a_plain_helper, dim=1, inputs=[y])


@pytest.mark.parametrize("kernel, message", [
    (calls_a_plain_helper, r"'_log_step' is not a weft builtin or @weft.func.*wp.static\(_log_step\(...\)\)"),
    (reads_the_clock, r"'time' is not a weft builtin or @weft.func"),
    (launches_inside, r"'launch' works in Python scope only"),
])
def test_python_functions_with_effects_are_refused_not_run_at_compile_time(kernel, message):
    # (run once when the kernel compiles, their result would be the same in every thread and
    # launch: Warp refuses them too)
    with pytest.raises(CompileError, match=message):
        wp.launch(kernel, dim=1, inputs=[wp.zeros(1)])
