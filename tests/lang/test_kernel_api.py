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


def test_module_load_compiles_ahead_and_raises_compile_errors():
    """As Warp's module load: the module's kernels compile now, and one that does not
    compile raises its error here (and again where it is launched)."""
    module = wp.get_module("kernel_api_load_tests")

    def broken():
        x = undefined_thing  # noqa: F821, F841

    good = wp.Kernel(func=double_in_place, key="good", module=module)
    bad = wp.Kernel(func=broken, key="broken", module=module)
    with pytest.raises(wp.WarpCodegenKeyError, match="Referencing undefined symbol: undefined_thing$"):
        module.load("cpu")
    assert good._compiled  # compiled ahead
    with pytest.raises(wp.WarpCodegenKeyError, match="Referencing undefined symbol: undefined_thing$"):
        wp.launch(bad, dim=1)
    assert len(module.hash_module()) == 64
    del module.kernels[next(k for k, v in module.kernels.items() if v is bad)]
    assert module.load("cpu")


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


def test_unique_kernels_declared_again_unchanged_are_reused():
    def make(v, dtype):
        @wp.kernel(module="unique")
        def fill(a: wp.array(dtype=dtype)):
            a[wp.tid()] = dtype(wp.static(v * 2.0))

        return fill

    k1, k2, k3 = make(1.0, float), make(2.0, float), make(1.0, wp.float64)
    assert len({id(k1), id(k2), id(k3)}) == 3
    assert make(1.0, float) is k1
    a = wp.zeros(2)
    wp.launch(k2, dim=2, inputs=[a])
    np.testing.assert_array_equal(a.numpy(), 4.0)


MODULE_TEXT = """
import weft as wp

@wp.func
def helper(x: float):
    return x * {factor}

@wp.kernel
def k(a: wp.array(dtype=float)):
    a[wp.tid()] = helper(2.0)
"""


def _module_from_text(text, name, tmp_path):
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path.unlink()  # the source file is gone before the first launch
    return module


def test_source_is_read_when_decorated_and_modules_hash_their_content(tmp_path):
    m1 = _module_from_text(MODULE_TEXT.format(factor="3.0"), "weft_hash_a", tmp_path)
    m2 = _module_from_text(MODULE_TEXT.format(factor="3.0"), "weft_hash_b", tmp_path)
    m3 = _module_from_text(MODULE_TEXT.format(factor="4.0"), "weft_hash_c", tmp_path)
    a = wp.zeros(1)
    wp.launch(m3.k, dim=1, inputs=[a])  # compiles although its file was deleted
    assert a.numpy()[0] == 8.0
    h1, h2, h3 = (wp.get_module(m.__name__).hash_module() for m in (m1, m2, m3))
    assert h1 == h2  # same content, other names
    assert h1 != h3  # a func they call differs
    before = wp.config.mode
    try:
        wp.config.mode = "debug" if before != "debug" else "release"
        module = wp.get_module("weft_hash_a")
        module.mark_modified()  # (hashes are cached until then, as Warp's)
        assert module.hash_module() != h1  # compile settings count
    finally:
        wp.config.mode = before


def test_kernel_hash_and_mangled_name(tmp_path):
    """`Kernel.hash` is a content hash of the kernel (a func it calls counts, its name
    does not); `get_mangled_name()` is Warp's `<key>_<8 hex digits of the hash>`, the key
    alone under the module option strip_hash, and follows a hash set on the kernel."""
    m1 = _module_from_text(MODULE_TEXT.format(factor="3.0"), "weft_kernel_hash_a", tmp_path)
    m2 = _module_from_text(MODULE_TEXT.format(factor="3.0"), "weft_kernel_hash_b", tmp_path)
    m3 = _module_from_text(MODULE_TEXT.format(factor="4.0"), "weft_kernel_hash_c", tmp_path)
    k1, k2, k3 = m1.k, m2.k, m3.k
    assert isinstance(k1.hash, bytes) and len(k1.hash) == 32
    assert k1.hash == k2.hash != k3.hash
    assert k1.get_mangled_name() == f"k_{k1.hash.hex()[:8]}" != k3.get_mangled_name()
    assert k1.get_mangled_name() is k1.get_mangled_name()  # kept while nothing changes

    k1.hash = bytes.fromhex("01234567" + "00" * 28)
    assert k1.get_mangled_name() == "k_01234567"
    assert k1.get_mangled_name(kernel_hash=bytes.fromhex("89abcdef" + "00" * 28)) == "k_89abcdef"
    assert k1.get_mangled_name() == "k_01234567"  # (an explicit hash leaves the kept name)
    wp.set_module_options({"strip_hash": True}, module="weft_kernel_hash_a")
    try:
        assert k1.get_mangled_name() == "k"
    finally:
        wp.set_module_options({"strip_hash": False}, module="weft_kernel_hash_a")
    assert k1.get_mangled_name() == "k_01234567"
    k1.hash = None  # the content hash again
    assert k1.hash == k2.hash and k1.get_mangled_name() == k2.get_mangled_name()
    before, hash_before = wp.config.mode, k2.hash
    try:
        wp.config.mode = "debug" if before != "debug" else "release"
        assert k2.hash != hash_before  # compile settings count
    finally:
        wp.config.mode = before
    assert k2.hash == hash_before


def test_equal_code_compiled_after_its_file_changed_reads_the_file_again(tmp_path):
    # Compiling the old text again (a stale .pyc) gives a code object equal to the first
    # one; the kernel declared from it must read its file as it is now, and launch that.
    path = tmp_path / "rewritten_kernel.py"
    v1 = "import weft as wp\n\ndef kf(a: wp.array(dtype=float)):\n    a[wp.tid()] = 1.0\n"

    def declare():
        ns = {}
        exec(compile(v1, str(path), "exec"), ns)
        return ns["kf"], wp.kernel(ns["kf"], module="unique")

    path.write_text(v1)
    f_a, k_a = declare()
    path.write_text(v1.replace("1.0", "42.25"))
    f_b, k_b = declare()
    assert f_a.__code__ == f_b.__code__ and f_a.__code__ is not f_b.__code__
    assert k_b is not k_a and "42.25" in k_b.adj.source and "1.0" in k_a.adj.source
    a = wp.zeros(1)
    wp.launch(k_b, dim=1, inputs=[a])
    assert a.numpy()[0] == 42.25
    wp.launch(k_a, dim=1, inputs=[a])
    assert a.numpy()[0] == 1.0


def test_func_options():
    @wp.func(name="twice_named", module="unique", inline=False)
    def twice(x: float):
        return 2.0 * x

    assert twice.key == "twice_named" and twice.inline is False
    assert twice.module.name != wp.get_module(__name__).name

    @wp.kernel
    def use(out: wp.array(dtype=float)):
        out[0] = twice(1.5)

    out = wp.zeros(1)
    wp.launch(use, dim=1, inputs=[out])
    assert out.numpy()[0] == 3.0
    with pytest.raises(TypeError, match="inline must be a bool"):
        wp.func(inline="yes")


def test_load_module_without_weft_content_is_an_error():
    import unittest
    for module in ("no_such_module_anywhere", unittest):
        with pytest.raises(RuntimeError, match="does not contain any Warp kernels, functions, or structs"):
            wp.load_module(module)
