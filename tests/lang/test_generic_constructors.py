"""vector(...), matrix(...), quaternion(...), transformation(...) build values in kernels."""

import linecache

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import CompileError


@wp.kernel
def build(fs: wp.array(dtype=float), vs: wp.array(dtype=wp.vec3), qs: wp.array(dtype=wp.quat),
          t_out: wp.array(dtype=wp.transform), v_out: wp.array(dtype=wp.vec3d), m_out: wp.array(dtype=wp.mat22)):
    t_out[0] = wp.transformation(p=vs[0], q=qs[0])
    v_out[0] = wp.vector(wp.float64(fs[0]), wp.float64(fs[0]), 2.0, dtype=wp.float64)
    m_out[0] = wp.matrix(fs[0], 0.0, 0.0, fs[0], shape=(2, 2))
    wp.expect_eq(wp.quaternion(fs[0], 0.0, 0.0, 1.0), wp.quat(1.0, 0.0, 0.0, 1.0))
    wp.expect_eq(wp.transformation(q=qs[0]), wp.transform(wp.vec3(0.0), qs[0]))


def test_generic_constructors():
    t_out, v_out, m_out = wp.zeros(1, dtype=wp.transform), wp.zeros(1, dtype=wp.vec3d), wp.zeros(1, dtype=wp.mat22)
    wp.launch(build, dim=1, inputs=[wp.array([1.0], dtype=float), wp.array([wp.vec3(2.0, 3.0, 4.0)], dtype=wp.vec3),
                                    wp.array([wp.quat(5.0, 6.0, 7.0, 8.0)], dtype=wp.quat), t_out, v_out, m_out])
    np.testing.assert_array_equal(t_out.numpy()[0], [2, 3, 4, 5, 6, 7, 8])
    np.testing.assert_array_equal(v_out.numpy()[0], [1, 1, 2])
    np.testing.assert_array_equal(m_out.numpy()[0], [[1, 0], [0, 1]])
    assert wp.types.vector(3, float) is wp.vec3  # outside kernels the names still make types


@wp.kernel
def transform_keywords(out: wp.array(dtype=wp.transform), outd: wp.array(dtype=wp.transformd)):
    out[0] = wp.transform(p=wp.vec3(1.0, 2.0, 3.0))  # q: the identity rotation
    out[1] = wp.transform(q=wp.quat(0.0, 1.0, 0.0, 0.0))  # p: the origin
    out[2] = wp.transform(p=wp.vec3(1.0, 2.0, 3.0), q=wp.quat(4.0, 5.0, 6.0, 7.0))
    outd[0] = wp.transformd(p=wp.vec3d(1.0, 2.0, 3.0))


def test_transform_type_takes_p_and_q_keywords():
    out, outd = wp.zeros(3, dtype=wp.transform), wp.zeros(1, dtype=wp.transformd)
    wp.launch(transform_keywords, dim=1, inputs=[out, outd])
    np.testing.assert_array_equal(out.numpy(), [[1, 2, 3, 0, 0, 0, 1], [0, 0, 0, 0, 1, 0, 0], [1, 2, 3, 4, 5, 6, 7]])
    np.testing.assert_array_equal(outd.numpy(), [[1, 2, 3, 0, 0, 0, 1]])


@wp.kernel
def constant_components(vf: wp.array(dtype=wp.vec3), vb: wp.array(dtype=wp.vec3ui), vh: wp.array(dtype=wp.vec3h),
                        m: wp.array(dtype=wp.mat22h), md: wp.array(dtype=wp.types.matrix((3, 2), wp.float64)),
                        bools: wp.array(dtype=wp.bool)):
    vf[0] = wp.types.vector(1.0, 2.0, 3.0, dtype=float)  # all constants: still a value in a kernel
    vf[1] = wp.types.vector(4.0, length=3)  # a fill
    vb[0] = wp.types.vector(vf[0], dtype=wp.uint32)  # a converting copy takes the source's length
    vh[0] = wp.types.vector(vf[0], dtype=wp.float16)
    m[0] = wp.types.matrix(0.0, 1.0, 2.0, 3.0, shape=(2, 2), dtype=wp.float16)
    md[0] = wp.types.matrix((3, 2), wp.float64)(wp.float64(1.0), shape=(3, 2))  # its own shape, said again
    b = wp.types.vector(False, True, False)  # bool numbers: a bool vector
    bools[0] = b[1]
    bools[1] = wp.types.matrix(m[0], dtype=wp.float16)[1, 1] == wp.float16(3.0)  # a copy takes the shape


def test_constant_component_constructors_build_values():
    vf, vb, vh = wp.zeros(2, dtype=wp.vec3), wp.zeros(1, dtype=wp.vec3ui), wp.zeros(1, dtype=wp.vec3h)
    m, md = wp.zeros(1, dtype=wp.mat22h), wp.zeros(1, dtype=wp.types.matrix((3, 2), wp.float64))
    bools = wp.zeros(2, dtype=wp.bool)
    wp.launch(constant_components, 1, [vf, vb, vh, m, md, bools])
    np.testing.assert_array_equal(vf.numpy(), [[1, 2, 3], [4, 4, 4]])
    np.testing.assert_array_equal(vb.numpy(), [[1, 2, 3]])
    assert vh.numpy().dtype == np.float16 and list(vh.numpy()[0]) == [1, 2, 3]
    np.testing.assert_array_equal(m.numpy()[0], [[0, 1], [2, 3]])
    np.testing.assert_array_equal(md.numpy()[0], np.ones((3, 2)))
    assert list(bools.numpy()) == [True, True]


def _compile_error(body: str, match: str):
    src = "def k(x: wp.array(dtype=wp.float64)):\n    y = x[0]\n    z = wp.float32(y)\n" + body
    ns = {"wp": wp}
    name = f"<constructor error {abs(hash(body))}>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    exec(compile(src, name, "exec"), ns)
    kernel = wp.kernel(ns["k"], module="unique")
    with pytest.raises(Exception, match=match):
        wp.launch(kernel, 1, [wp.zeros(1, dtype=wp.float64)])


def test_constructor_errors_use_warps_words():
    _compile_error("    wp.types.vector()\n",
                   "the `length` argument must be specified when zero-initializing a vector$")
    _compile_error("    wp.types.vector(1.0, 2)\n",
                   "all values given when constructing a vector must have the same type$")
    _compile_error("    wp.types.vector(1.0, 2.0, length=5)\n",
                   r"incompatible number of values given \(2\) when constructing a vector of length 5$")
    _compile_error("    wp.types.matrix(1.0, 2.0, 3.0)\n",
                   "the `shape` argument must be specified when initializing a matrix by value$")
    _compile_error("    wp.vec3(wp.vec2(1.0, 2.0))\n", "the lengths differ")
    _compile_error("    wp.mat33(wp.mat22(1.0, 2.0, 3.0, 4.0))\n", "the shapes differ")
    _compile_error("    wp.vec2(y, y)\n",
                   "all values used to initialize this vector are expected to be of the type `float32`$")
    _compile_error("    wp.mat22(y, y, y, y)\n", "this matrix are expected to be of the type `float32`$")
    _compile_error("    wp.mat22h(z)\n", "the value used to fill this matrix is expected to be of the type `float16`$")


@wp.kernel
def literal_names(values: wp.array(dtype=wp.float64), counts: wp.array(dtype=int)):
    x = 0.1
    n = 3
    d = wp.vec3d(x, 0.0, 0.0)  # a name bound to a literal is taken as the literal
    m = wp.mat22d(x, 1.0, 2.0, x)
    values[0] = d[0]
    values[1] = m[1, 1]
    values[2] = wp.float64(x)  # a conversion too converts the literal
    counts[0] = n
    counts[1] = int(wp.vec3(4.0, 5.0, 6.0)[0:n][2])
    y = x * wp.float32(2.0)  # elsewhere the name is a float32
    values[3] = wp.float64(y)


def test_typed_constructors_take_names_bound_to_literals():
    values, counts = wp.zeros(4, dtype=wp.float64), wp.zeros(2, dtype=int)
    wp.launch(literal_names, 1, inputs=[values, counts])
    np.testing.assert_array_equal(values.numpy(), [0.1, 0.1, 0.1, np.float64(np.float32(0.1) * np.float32(2.0))])
    np.testing.assert_array_equal(counts.numpy(), [3, 6])
    # a typed value is not a literal
    _compile_error("    t = wp.float32(0.1)\n    wp.vec3d(t, 0.0, 0.0)\n",
                   "all values used to initialize this vector are expected to be of the type `float64`$")


def _sized_by_a_static_local(n: int):
    @wp.kernel
    def kernel(out: wp.array(dtype=float)):
        size = wp.static(n)  # (a local holding a constant sizes a vector, as in Warp)
        v = wp.vector(dtype=float, length=size)
        m = wp.matrix(dtype=float, shape=(size, 2))
        for d in range(size):
            v[d] = float(d)
            m[d, 1] = 1.0
        out[0] = wp.length_sq(v) + m[size - 1, 1]
    return kernel


@wp.kernel
def _sized_at_run_time(out: wp.array(dtype=float), n: int):
    v = wp.vector(dtype=float, length=n)
    out[0] = v[0]


def test_vector_and_matrix_sizes_from_constant_locals():
    out = wp.zeros(1, dtype=float)
    wp.launch(_sized_by_a_static_local(4), 1, inputs=[out])
    assert out.numpy()[0] == 14.0 + 1.0
    with pytest.raises(CompileError, match="must be known when the kernel compiles"):
        wp.launch(_sized_at_run_time, 1, inputs=[out, 3])
