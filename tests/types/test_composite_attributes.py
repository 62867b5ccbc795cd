"""Attributes of vector values in Python scope: components, swizzles that are refused with
Warp's message, and other attributes a user may attach."""

import pytest

import weft as wp


def test_missing_components_and_swizzles_are_attribute_errors():
    v = wp.vec3(1.0, 2.0, 3.0)
    with pytest.raises(AttributeError, match=r"'vec3f' object has no attribute 'foo'$"):
        v.foo  # noqa: B018
    for name in ("xy", "zw", "xyz"):
        with pytest.raises(AttributeError, match=rf"no attribute '{name}'$"):
            getattr(v, name)
        with pytest.raises(AttributeError, match=rf"no attribute '{name}'$"):
            setattr(v, name, 1.0)
    v2 = wp.vec2(1.0, 2.0)
    assert not hasattr(v2, "z")
    with pytest.raises(AttributeError, match=r"no attribute 'w'$"):
        v2.w = 1.0
    assert list(v2) == [1.0, 2.0]


def test_components_and_other_attributes_can_be_set():
    v = wp.vec3(1.0, 2.0, 3.0)
    v.y = 5.0
    v.tag = "kept"
    assert list(v) == [1.0, 5.0, 3.0] and v.tag == "kept"
