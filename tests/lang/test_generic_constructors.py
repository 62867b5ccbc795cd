"""vector(...), matrix(...), quaternion(...), transformation(...) build values in kernels."""

import numpy as np

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
