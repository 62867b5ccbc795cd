"""Operators redefined by a @func named like the operator's builtin (Warp's dispatch): used
where an overload takes the operands' types exactly, the builtin elsewhere."""

import numpy as np

import weft as wp


@wp.struct
class Complex:
    real: float
    imag: float


@wp.func
def add(a: Complex, b: Complex) -> Complex:
    return Complex(a.real + b.real, a.imag + b.imag)  # (float + float: the builtin)


@wp.func
def mul(x: wp.float64, y: wp.float64) -> wp.float64:
    return x * y + wp.float64(1.0)  # inside its own definition, `*` is the builtin


@wp.func
def sub(x: wp.float32, y: wp.float32) -> wp.float32:
    return wp.mul(x, y)


@wp.kernel
def _uses_operators(v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.float64), f: wp.array(dtype=float)):
    c = Complex(1.0, 2.0) + Complex(3.0, 4.0)
    f[0] = c.real
    f[1] = c.imag
    out[0] = wp.float64(2.0) * wp.float64(3.0)
    out[1] = wp.mul(wp.float64(2.0), wp.float64(3.0))  # wp.mul names the builtin
    v[0].z -= 4.0  # float32 `-`: the user's sub
    v[0][1] -= 4.0
    v[0].x += 4.0  # no user add for float32: the builtin


def test_user_functions_redefine_operators_for_their_types():
    v = wp.array([wp.vec3(3.0)], dtype=wp.vec3)
    out = wp.zeros(2, dtype=wp.float64)
    f = wp.zeros(2, dtype=float)
    wp.launch(_uses_operators, 1, inputs=[v, out, f])
    np.testing.assert_array_equal(f.numpy(), [4.0, 6.0])
    np.testing.assert_array_equal(out.numpy(), [7.0, 6.0])
    np.testing.assert_array_equal(v.numpy(), [[7.0, 12.0, 12.0]])
