"""Modules (weft/lang/module.py): what they hold (kernels, funcs, structs), the modules they
depend on, their hash, unloading, and unique kernels declared again."""

import importlib.util
import sys
from typing import Any

import numpy as np

import weft as wp

REFERENCED = """
import weft as wp

@wp.func
def magic():
    return 3.0

@wp.func
def magic(x: float):
    return x

@wp.struct
class Pair:
    a: float
    b: float
"""

DEPENDENT = """
import weft as wp
import {ref} as ref

@wp.kernel
def kern(out: wp.array(dtype=float)):
    f = ref.magic  # bound to a local, then called
    out[0] = f()
"""


def _load(name, text, tmp_path):
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_modules_list_their_funcs_and_structs_and_find_references(tmp_path):
    ref = _load("weft_modtest_ref", REFERENCED, tmp_path)
    dep = _load("weft_modtest_dep", DEPENDENT.format(ref="weft_modtest_ref"), tmp_path)
    ref_module = wp.get_module("weft_modtest_ref")
    assert list(ref_module.functions) == ["magic"]  # (the redefinition replaces it)
    assert list(ref_module.structs) == ["weft_modtest_ref.Pair"]
    assert ref_module.structs["weft_modtest_ref.Pair"] is ref.Pair
    dep.kern.module.get_module_hash()
    assert ref_module in dep.kern.module.references
    assert dep.kern.module in ref_module.dependents
    out = wp.zeros(1)
    wp.launch(dep.kern, 1, inputs=[out])
    assert out.numpy()[0] == 3.0


@wp.kernel
def set_42(a: wp.array(dtype=int)):
    a[0] = 42


def test_unload_drops_compiled_code_and_captured_launches_still_run():
    a = wp.zeros(1, dtype=int)
    wp.launch(set_42, 1, inputs=[a])
    assert set_42._compiled
    with wp.ScopedCapture(force_module_load=False) as capture:
        wp.launch(set_42, 1, inputs=[a])
    set_42.module.unload()
    assert not set_42._compiled
    a.zero_()
    wp.capture_launch(capture.graph)  # (the graph keeps the code it recorded)
    assert a.numpy()[0] == 42
    a.zero_()
    wp.launch(set_42, 1, inputs=[a])  # compiles again
    assert a.numpy()[0] == 42


def test_module_hash_changes_with_each_new_overload_of_a_generic_kernel():
    @wp.kernel(module="unique")
    def twice(x: wp.array(dtype=Any), y: wp.array(dtype=Any)):
        i = wp.tid()
        y[i] = x[i] + x[i]

    hashes = []
    for dtype in (wp.float32, wp.float64, wp.float32, wp.int32):
        x = wp.array([1, 2, 3], dtype=dtype)
        y = wp.zeros(3, dtype=dtype)
        wp.launch(twice, 3, inputs=[x, y])
        np.testing.assert_array_equal(y.numpy(), [2, 4, 6])
        hashes.append(twice.module.get_module_hash())
    assert len(twice.overloads) == 3
    assert hashes[0] != hashes[1] and hashes[1] == hashes[2] and hashes[2] != hashes[3]


def test_the_same_unique_definition_written_twice_is_one_kernel():
    @wp.kernel(module="unique")
    def scale(x: wp.array(dtype=float)):
        x[wp.tid()] = x[wp.tid()] * 2.0

    first = scale

    @wp.kernel(module="unique")
    def scale(x: wp.array(dtype=float)):
        x[wp.tid()] = x[wp.tid()] * 2.0

    assert scale is first and scale.module is first.module

    @wp.kernel(module="unique")
    def scale(x: wp.array(dtype=float)):
        x[wp.tid()] = x[wp.tid()] * 3.0

    assert scale is not first
    a = wp.array([1.0, 2.0], dtype=float)
    wp.launch(scale, 2, inputs=[a])
    wp.launch(first, 2, inputs=[a])
    np.testing.assert_array_equal(a.numpy(), [6.0, 12.0])


def test_get_module_options_is_a_dict():
    options = wp.get_module_options()
    assert type(options) is dict and options["block_dim"] == 256
    assert options["mode"] is None and options["max_unroll"] == wp.config.max_unroll  # (Warp's defaults)


SQUARE = """
import weft as wp

@wp.kernel
def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]
"""


def test_a_module_keeps_the_enable_backward_setting_it_was_made_under(tmp_path, capsys):
    """Warp's rule: a module imported while `config.enable_backward` is False keeps no
    adjoints after the setting changes back (a Tape warns and skips its kernels)."""
    wp.config.enable_backward = False
    try:
        lib = _load("weft_modtest_no_backward", SQUARE, tmp_path)
    finally:
        wp.config.enable_backward = True
    assert wp.get_module_options("weft_modtest_no_backward")["enable_backward"] is False
    x, y = wp.array([1.0, 2.0], dtype=float, requires_grad=True), wp.zeros(2, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(lib.square, 2, inputs=[x, y])
    tape.backward(grads={y: wp.ones(2)})
    assert "enable_backward=False" in capsys.readouterr().err and x.grad.numpy().tolist() == [0.0, 0.0]


def test_load_module_of_weft_own_module_needs_no_kernels():
    import weft.utils
    wp.load_module(weft.utils)
    wp.load_module("weft.utils", recursive=True)


@wp.func
def plus_one(value: int) -> int:
    return value + 1


def test_a_unique_kernel_declared_again_leaves_no_extra_dependents():
    def make():
        @wp.kernel(module="unique", enable_backward=False)
        def uses_plus_one(out: wp.array(dtype=int)):
            out[wp.tid()] = plus_one(out[wp.tid()])
        return uses_plus_one

    before = set(plus_one.module.dependents)
    kernels = [make() for _ in range(4)]
    assert len({id(k) for k in kernels}) == 1
    assert plus_one.module in kernels[0].module.references  # (found at the declaration)
    assert set(plus_one.module.dependents) - before == {kernels[0].module}
    out = wp.array([1], dtype=int)
    wp.launch(kernels[0], 1, inputs=[out])
    assert out.numpy()[0] == 2
