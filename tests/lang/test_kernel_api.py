"""Warp's kernel API: the Kernel constructor, decorator options, modules and their options."""

import ast

import numpy as np
import pytest

import weft as wp


def double_in_place(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * 2.0


def test_kernel_constructor_with_key_and_module():
    k = wp.Kernel(func=double_in_place, key="my_double", module=wp.get_module("kernel_api_tests"))
    assert k.key == "my_double"
    assert k.module is wp.get_module("kernel_api_tests")
    assert k.module.kernels["my_double"] is k
    x = wp.array(np.ones(4, dtype=np.float32))
    wp.launch(k, dim=4, inputs=[x])
    np.testing.assert_array_equal(x.numpy(), 2.0)


class TimesThree(ast.NodeTransformer):
    """Rewrites the constant 2.0 into 3.0."""

    def visit_Constant(self, node):
        return ast.copy_location(ast.Constant(3.0), node) if node.value == 2.0 else node


def test_code_transformers_rewrite_the_ast():
    k = wp.Kernel(func=double_in_place, code_transformers=[TimesThree()])
    x = wp.array(np.ones(3, dtype=np.float32))
    wp.launch(k, dim=3, inputs=[x])
    np.testing.assert_array_equal(x.numpy(), 3.0)


def test_decorator_options_are_kept_and_checked():
    @wp.kernel(launch_bounds=(256, 1), enable_backward=False, name="bounded")
    def bounded(x: wp.array(dtype=float)):
        x[wp.tid()] = 1.0

    assert bounded.key == "bounded"
    assert bounded.options["launch_bounds"] == (256, 1)
    assert not bounded.enable_backward
    x = wp.zeros(8)
    wp.launch(bounded, dim=8, inputs=[x], block_dim=64, max_blocks=2)
    np.testing.assert_array_equal(x.numpy(), 1.0)
    with pytest.raises(ValueError, match="launch_bounds"):
        wp.kernel(launch_bounds=(1, 2, 3))(double_in_place)
    with pytest.raises(ValueError, match="identifier"):
        wp.kernel(name="not valid")(double_in_place)
    with pytest.raises(ValueError, match='requires module="unique"'):
        wp.kernel(module_options={"fast_math": True})(double_in_place)


def test_unique_modules_and_module_options():
    a = wp.kernel(module="unique", module_options={"enable_backward": False})(double_in_place)
    b = wp.kernel(module="unique")(double_in_place)
    assert a.module.name != b.module.name
    assert a.module.options["enable_backward"] is False and not a.enable_backward
    assert b.module.options["enable_backward"] is wp.config.enable_backward  # the global default
    b.module.options["enable_backward"] = False
    assert not b.enable_backward
    with pytest.raises(RuntimeError, match="enable_backward=False"):
        b.adjoint_ir()


def test_module_load_compiles_ahead_and_leaves_errors_to_the_launch():
    module = wp.get_module("kernel_api_load_tests")

    def broken():
        x = undefined_thing  # noqa: F821, F841

    good = wp.Kernel(func=double_in_place, key="good", module=module)
    bad = wp.Kernel(func=broken, key="broken", module=module)
    assert module.load("cpu")
    assert good._compiled  # compiled ahead
    with pytest.raises(wp.WarpCodegenKeyError, match="Referencing undefined symbol: undefined_thing"):
        wp.launch(bad, dim=1)
    assert len(module.hash_module()) == 64


def test_kernels_cannot_return_values():
    @wp.kernel
    def returns_none_annotation(x: float) -> None:
        return

    wp.launch(returns_none_annotation, dim=1, inputs=[1.0])

    @wp.kernel
    def annotated(x: float) -> float:
        return

    with pytest.raises(wp.WarpCodegenTypeError, match="kernels cannot return values"):
        wp.launch(annotated, dim=1, inputs=[1.0])

    @wp.kernel
    def returns_none(x: float):
        return None

    with pytest.raises(TypeError, match="kernels cannot return values"):
        wp.launch(returns_none, dim=1, inputs=[1.0])
