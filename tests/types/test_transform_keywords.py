"""Transforms built from keywords in Python scope: `transformf(p=..., q=...)`."""

import numpy as np
import pytest

import weft as wp


def test_transform_from_keywords():
    t = wp.transformf(p=(1.0, 2.0, 3.0), q=(4.0, 3.0, 2.0, 1.0))
    np.testing.assert_array_equal(np.array(t), [1, 2, 3, 4, 3, 2, 1])
    assert t == wp.transform_expand((1.0, 2.0, 3.0, 4.0, 3.0, 2.0, 1.0))
    np.testing.assert_array_equal(np.array(wp.transformd(q=wp.quatd(0.0, 0.0, 0.0, 1.0))), [0, 0, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(np.array(wp.transform((1.0, 2.0, 3.0), q=(0.0, 1.0, 0.0, 0.0))),
                                  [1, 2, 3, 0, 1, 0, 0])
    with pytest.raises(TypeError, match="unexpected keyword argument 'x'"):
        wp.transformf(x=1.0)
    with pytest.raises(TypeError, match="positionally"):
        wp.vec3(x=1.0)
