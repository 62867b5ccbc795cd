"""Vector builtins whose Warp signatures take any scalar type: integer vectors too."""

import numpy as np

import weft as wp

mat33i = wp.types.matrix((3, 3), wp.int32)
mat23s = wp.types.matrix((2, 3), wp.int16)


@wp.kernel
def int_vector_ops(a: wp.array(dtype=wp.vec3i), m: wp.array(dtype=mat33i), s: wp.array(dtype=int),
                   c: wp.array(dtype=wp.vec3i), o: wp.array(dtype=mat23s), v2: wp.array(dtype=wp.vec2s),
                   v3: wp.array(dtype=wp.vec3s)):
    m[0] = wp.outer(a[0], a[1])
    m[1] = wp.skew(a[0])
    m[2] = wp.diag(a[1])
    s[0] = wp.length_sq(a[0])
    c[0] = wp.cross(a[0], a[1])
    o[0] = wp.outer(v2[0], v3[0])


def test_integer_vectors_in_outer_cross_skew_diag_length_sq():
    av = np.array([[1, -2, 3], [4, 5, -6]], np.int32)
    m, s, c = wp.zeros(3, dtype=mat33i), wp.zeros(1, dtype=int), wp.zeros(1, dtype=wp.vec3i)
    o = wp.zeros(1, dtype=mat23s)
    wp.launch(int_vector_ops, 1, [wp.array(av, dtype=wp.vec3i), m, s, c, o,
                                  wp.array([[2, -3]], dtype=wp.vec2s), wp.array([[1, 2, 3]], dtype=wp.vec3s)])
    r = m.numpy()
    np.testing.assert_array_equal(r[0], np.outer(av[0], av[1]))
    x = np.array([7, 8, 9])
    np.testing.assert_array_equal(r[1] @ x, np.cross(av[0], x))
    np.testing.assert_array_equal(r[2], np.diag(av[1]))
    assert s.numpy()[0] == (av[0] ** 2).sum()
    np.testing.assert_array_equal(c.numpy()[0], np.cross(av[0], av[1]))
    np.testing.assert_array_equal(o.numpy()[0], np.outer([2, -3], [1, 2, 3]))
