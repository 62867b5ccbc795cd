"""Literals and named constants: integer literals in / // % with negative operands (folded
at compile time and computed at run time), float literals in // and %, module constants
in expressions, math.pi and Warp's named constants (wp.pi, wp.e, wp.tau, wp.half_pi,
wp.phi, wp.ln2, wp.log10e, wp.inf, wp.nan), unary minus/plus on vectors, == between
vectors and matrices, len() of arrays and vectors."""

import math

import numpy as np
import warp as wp

C = 7


@wp.kernel
def integer_literals(ns: wp.array(dtype=int), out: wp.array(dtype=int, ndim=2), fo: wp.array(dtype=float, ndim=2)):
    i = wp.tid()
    n = ns[i]
    out[i, 0] = 7 / 2
    out[i, 1] = -7 / 2
    out[i, 2] = -7 // 2
    out[i, 3] = -7 % 2
    out[i, 4] = n / 2
    out[i, 5] = C / n if n != 0 else 0
    out[i, 6] = -C // 2
    out[i, 7] = (-C) % 3
    out[i, 8] = -(C % 3)
    fo[i, 0] = 7.0 / 2.0
    fo[i, 1] = -7.0 // 2.0
    fo[i, 2] = -7.0 % 2.0
    fo[i, 3] = float(n) % -3.0
    fo[i, 4] = float(n) // -3.0
    fo[i, 5] = float(7 / 2)
    fo[i, 6] = 1.0e-3 * 1000.0
    fo[i, 7] = float(n) // 2.5 + float(n) % 2.5


@wp.kernel
def named(vs: wp.array(dtype=wp.vec3), a2: wp.array2d(dtype=float), out: wp.array(dtype=float, ndim=2),
          iout: wp.array(dtype=int, ndim=2)):
    i = wp.tid()
    v = vs[i]
    out[i, 0] = math.pi + wp.pi + wp.e + wp.tau
    out[i, 1] = wp.half_pi + wp.phi + wp.ln2 + wp.log10e
    out[i, 2] = float(wp.isinf(wp.inf)) + float(wp.isnan(wp.nan)) + float(wp.inf > 1.0e38)
    w = -v
    out[i, 3] = w[0] + (+v)[1]
    out[i, 4] = wp.sin(wp.pi / 6.0) + wp.cos(wp.tau)
    iout[i, 0] = int(v == wp.vec3(0.0))
    iout[i, 1] = int(v == vs[0])
    iout[i, 2] = len(a2) * 100 + a2.shape[1] * 10 + len(v)
    m = wp.mat22(1.0, 2.0, 3.0, float(i))
    iout[i, 3] = int(m == wp.mat22(1.0, 2.0, 3.0, 1.0)) + 2 * int(m == wp.mat22(0.0))


def run():
    ns = wp.array(np.array([-7, -4, -1, 1, 3, 8], dtype=np.int32))
    out = wp.zeros((6, 9), dtype=int)
    fo = wp.zeros((6, 8), dtype=float)
    wp.launch(integer_literals, dim=6, inputs=[ns], outputs=[out, fo])
    vs = wp.array(np.array([[0, 0, 0], [1, 2, 3], [0, 0, 0]], dtype=np.float32), dtype=wp.vec3)
    a2 = wp.zeros((5, 4), dtype=float)
    nf = wp.zeros((3, 5), dtype=float)
    ni = wp.zeros((3, 4), dtype=int)
    wp.launch(named, dim=3, inputs=[vs, a2], outputs=[nf, ni])
    return {"ints": out.numpy(), "floats": fo.numpy(), "named": nf.numpy(), "named_ints": ni.numpy()}
