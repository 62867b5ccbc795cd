"""vector(...), matrix(...), quaternion(...), transformation(...) build values in kernels."""

import numpy as np
import pytest

import weft as wp


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


@wp.func
def transform_keywords() -> int:
    ok = 0
    t = wp.transform(p=wp.vec3(1.0, 2.0, 3.0))  # q: the identity rotation
    ok += int(t == wp.transform(1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0))
    t = wp.transform(q=wp.quat(0.0, 0.0, 1.0, 0.0))  # p: the origin
    ok += int(t == wp.transform(0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0))
    td = wp.transformd(wp.vec3d(1.0, 2.0, 3.0), q=wp.quatd(0.0, 1.0, 0.0, 0.0))
    ok += int(td[4] == wp.float64(1.0) and td[2] == wp.float64(3.0))
    return ok


@wp.kernel
def run_transform_keywords(out: wp.array(dtype=int)):
    out[0] = transform_keywords()


def test_transform_keywords_in_kernels():
    out = wp.zeros(1, dtype=int)
    wp.launch(run_transform_keywords, 1, inputs=[out])
    assert out.numpy()[0] == 3
    assert transform_keywords() == 3  # and in Python scope


@wp.kernel
def transform_of_two_scalars():
    wp.transform(1.0, 2.0)


def test_transform_with_a_wrong_number_of_values():
    with pytest.raises(wp.CompileError, match=r"incompatible number of values given \(2\) when constructing a "
                                              r"transform; expected 0, 1, or 7"):
        wp.launch(transform_of_two_scalars, 1)
