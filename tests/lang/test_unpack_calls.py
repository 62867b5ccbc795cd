"""`*x` in kernel calls: tuples, vectors, quaternions, matrix rows and constant 1-D array
slices spread into positional arguments; anything else is a clear compile error."""

import numpy as np
import pytest

import weft as wp


def _run(kernel, *inputs, n=1):
    wp.launch(kernel, dim=n, inputs=list(inputs))


def test_vectors_quats_matrices_and_tuples_spread():
    @wp.kernel(module="unique")
    def k(out: wp.array(dtype=float)):
        v3 = wp.vec3(1.0, 2.0, 3.0)
        q = wp.quat(5.0, 6.0, 7.0, 8.0)
        m = wp.mat22(1.0, 2.0, 3.0, 4.0)
        t = (10.0, 20.0)
        a = wp.vec4(*v3, 4.0)
        b = wp.vec3(*q[1:])  # a slice of a quaternion: (6, 7, 8)
        c = wp.matrix_from_rows(*m)
        d = wp.vec2(*t)
        e = wp.vec4(0.5, *v3[-2:], *t[1:])
        out[0] = wp.dot(a, wp.vec4(1.0, 10.0, 100.0, 1000.0))
        out[1] = b[0] + b[1] + b[2]
        out[2] = c[1, 0]
        out[3] = wp.max(*d)
        out[4] = e[0] + e[1] * 10.0 + e[2] * 100.0 + e[3] * 1000.0

    out = wp.zeros(5, dtype=float)
    _run(k, out)
    np.testing.assert_allclose(out.numpy(), [4321.0, 21.0, 3.0, 20.0, 0.5 + 20.0 + 300.0 + 20000.0])


def test_array_slice_with_constant_bounds():
    @wp.kernel(module="unique")
    def k(arr: wp.array(dtype=int), out: wp.array(dtype=wp.vec3i)):
        out[0] = wp.vec3i(*arr[2:5])
        out[1] = wp.vec3i(*arr[1:7:2])
        out[2] = wp.vec3i(wp.max(*arr[:2]), *arr[7:9])

    arr = wp.array(np.arange(10, 20), dtype=int)
    out = wp.zeros(3, dtype=wp.vec3i)
    _run(k, arr, out)
    np.testing.assert_array_equal(out.numpy(), [[12, 13, 14], [11, 13, 15], [11, 17, 18]])


def test_array_slice_is_bounds_checked():
    @wp.kernel(module="unique")
    def k(arr: wp.array(dtype=int), out: wp.array(dtype=wp.vec3i)):
        out[0] = wp.vec3i(*arr[0:3])

    with pytest.raises(IndexError):
        _run(k, wp.zeros(2, dtype=int), wp.zeros(1, dtype=wp.vec3i))


@pytest.mark.parametrize("body, error, pattern", [
    ("v = wp.vec3i(*arr[:n])", wp.WarpCodegenValueError, "Slice component must be a compile-time constant"),
    ("v = wp.vec3i(*arr[0:])", wp.WarpCodegenValueError, "requires explicit upper bound"),
    ("v = wp.vec3i(*arr[:-3])", wp.WarpCodegenValueError, "cannot be negative for arrays"),
    ("v = wp.vec3i(*arr[5:2:-1])", wp.WarpCodegenValueError, "step cannot be negative"),
    ("x = 42\n    v = wp.vec3i(*x)", wp.WarpCodegenTypeError, "Starred expressions are only supported for"),
])
def test_errors(tmp_path, body, error, pattern):
    src = ("import weft as wp\n\n"
           "@wp.kernel(module='unique')\n"
           "def k(arr: wp.array(dtype=int), n: int):\n"
           f"    {body}\n")
    path = tmp_path / "unpack_case.py"
    path.write_text(src)
    scope = {}
    exec(compile(src, str(path), "exec"), scope)
    with pytest.raises(error, match=pattern) as info:
        _run(scope["k"], wp.zeros(10, dtype=int), 3)
    assert f"unpack_case.py:{5 + body.count(chr(10))}:" in str(info.value)
