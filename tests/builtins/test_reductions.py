"""ddot, get_diag, argmin and argmax, in kernels and from Python."""

import numpy as np

import weft as wp


def test_ddot_and_get_diag():
    a = wp.mat33(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)
    assert wp.ddot(a, a) == float(np.sum(np.asarray(a) ** 2))
    assert wp.ddot(wp.identity(n=3, dtype=float), wp.identity(n=3, dtype=float)) == 3.0
    assert wp.get_diag(a) == wp.vec3(1.0, 5.0, 9.0)


def test_argmin_argmax():
    v = wp.vec4(3.0, -1.0, 7.0, -1.0)
    assert wp.argmin(v) == 1 and wp.argmax(v) == 2  # the first on ties
    assert type(wp.argmin(v)) is type(wp.uint32())
    nan = float("nan")
    assert wp.argmin(wp.vec3(nan, 2.0, 1.0)) == 2 and wp.argmax(wp.vec3(nan, 2.0, 1.0)) == 1
    assert wp.argmax(wp.vec3(nan, nan, nan)) == 0
    assert wp.argmax(wp.vec3i(4, 9, 9)) == 1


def test_in_kernel():
    @wp.kernel
    def k(vs: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.uint32)):
        i = wp.tid()
        out[2 * i] = wp.argmin(vs[i])
        out[2 * i + 1] = wp.argmax(vs[i])

    vs = wp.array([[1.0, 0.0, 2.0], [5.0, 6.0, -3.0]], dtype=wp.vec3)
    out = wp.zeros(4, dtype=wp.uint32)
    wp.launch(k, 2, inputs=[vs, out])
    assert out.numpy().tolist() == [1, 2, 2, 1]
