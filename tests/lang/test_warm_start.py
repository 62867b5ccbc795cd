"""Warm start (lang/warm_start.py): a kernel compiled by an earlier process is launched
from its record without building its IR, and a record is never reused for a kernel whose
code would differ (closure values, funcs, module attributes, structs, settings)."""

import enum
import json
import math
import subprocess
import sys
import textwrap
import types
from typing import Any

import numpy as np
import pytest

import weft as wp
from weft.lang import warm_start
from weft.lang.kernel import Kernel


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))
    return tmp_path


@pytest.fixture
def no_ir(monkeypatch):
    """Within the block, building a kernel's IR fails the test."""
    def refuse(self, mode=None):
        raise AssertionError(f"kernel {self.name}: IR built")

    class Guard:
        def __enter__(self):
            monkeypatch.setattr(Kernel, "ir", refuse)

        def __exit__(self, *exc):
            monkeypatch.undo()

    return Guard()


def _key(kernel, spec, options, target):
    """The record key of `kernel` as its values stand now."""
    return warm_start.record_key(warm_start.kernel_text(kernel), spec, options, target)


def _records(cache) -> list:
    return sorted(cache.rglob(f"*{warm_start.RECORD_SUFFIX}"))


def _scaled(scale):
    """A kernel whose code reads `scale` from its closure (same source and line each time)."""
    def y_is_scaled_x(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i] * scale
    return wp.kernel(y_is_scaled_x)


def _launch(kernel, n=8):
    x = wp.array(np.arange(n, dtype=np.float32))
    y = wp.zeros(n, dtype=float)
    wp.launch(kernel, n, inputs=[x, y])
    return y.numpy()


def test_a_second_kernel_of_the_same_code_loads_without_its_ir(fresh_cache, no_ir):
    np.testing.assert_array_equal(_launch(_scaled(2.0)), 2.0 * np.arange(8))
    assert len(_records(fresh_cache)) == 1
    with no_ir:  # (a new Kernel object: nothing of the first is in memory)
        np.testing.assert_array_equal(_launch(_scaled(2.0)), 2.0 * np.arange(8))


def test_a_closure_value_changes_the_record(fresh_cache):
    np.testing.assert_array_equal(_launch(_scaled(2.0)), 2.0 * np.arange(8))
    np.testing.assert_array_equal(_launch(_scaled(3.0)), 3.0 * np.arange(8))
    np.testing.assert_array_equal(_launch(_scaled(np.float32(0.5))), 0.5 * np.arange(8))
    assert len(_records(fresh_cache)) == 3


def _calling(f):
    def y_is_f_of_x(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = f(x[i])
    return wp.kernel(y_is_f_of_x)


@wp.func
def _plus_one(v: float):
    return v + 1.0


@wp.func
def _times_ten(v: float):
    return v * 10.0


def test_the_funcs_a_kernel_calls_are_part_of_its_record(fresh_cache, no_ir):
    np.testing.assert_array_equal(_launch(_calling(_plus_one)), np.arange(8) + 1.0)
    np.testing.assert_array_equal(_launch(_calling(_times_ten)), np.arange(8) * 10.0)
    with no_ir:
        np.testing.assert_array_equal(_launch(_calling(_plus_one)), np.arange(8) + 1.0)


@pytest.mark.parametrize("module_name", ["helpers", "warp.tests.helpers_of_this_test"])
def test_attributes_read_from_a_user_module_are_part_of_its_record(fresh_cache, module_name):
    """(Where `warp` is weft under another name, a program's own modules may live under it:
    Warp's test helpers are `warp.tests.*`; their attributes are the program's too.)"""
    helpers = types.ModuleType(module_name)

    def make():
        def y_is_offset_x(x: wp.array(dtype=float), y: wp.array(dtype=float)):
            i = wp.tid()
            y[i] = x[i] + helpers.OFFSET
        return wp.kernel(y_is_offset_x)

    helpers.OFFSET = 1.0
    np.testing.assert_array_equal(_launch(make()), np.arange(8) + 1.0)
    helpers.OFFSET = 5.0
    np.testing.assert_array_equal(_launch(make()), np.arange(8) + 5.0)


def _struct_kernel(struct):
    def read_a(s: struct, y: wp.array(dtype=float)):
        y[wp.tid()] = s.a
    return wp.kernel(read_a)


def test_structs_are_described_field_by_field(fresh_cache):
    def first():
        @wp.struct
        class Params:
            a: float
        return Params

    def second():
        @wp.struct
        class Params:  # (same name, another layout)
            b: wp.vec3
            a: float
        return Params

    keys = set()
    for make in (first, second):
        kernel = _struct_kernel(make())
        keys.add(_key(kernel, (False, True), ("opts",), "target"))
    assert None not in keys and len(keys) == 2


def test_settings_and_specialisations_change_the_record(fresh_cache):
    kernel = _scaled(2.0)
    base = _key(kernel, (True, True), (True, False, "release", True), "t")
    assert base is not None
    assert _key(kernel, (False, True), (True, False, "release", True), "t") != base
    assert _key(kernel, (True, True), (False, False, "release", True), "t") != base
    assert _key(kernel, (True, True), (True, False, "release", True), "u") != base
    wp.config.max_unroll, saved = 3, wp.config.max_unroll
    try:
        assert _key(kernel, (True, True), (True, False, "release", True), "t") != base
    finally:
        wp.config.max_unroll = saved
    wp.set_module_options({"fast_math": True}, module=kernel.module.name)
    try:
        assert _key(kernel, (True, True), (True, False, "release", True), "t") != base
    finally:
        wp.set_module_options({"fast_math": None}, module=kernel.module.name)


class _Opaque:
    factor = 2.0


def test_kernels_reading_what_cannot_be_described_get_no_record(fresh_cache):
    holder = _Opaque()

    def reads_an_object(x: wp.array(dtype=float)):
        x[wp.tid()] = holder.factor

    def factor():
        return 2.0

    def static_calls_a_python_function(x: wp.array(dtype=float)):
        x[wp.tid()] = wp.static(factor())

    def static_draws_a_random_number(x: wp.array(dtype=float)):
        x[wp.tid()] = wp.static(np.random.rand())

    scale = 2.0

    def static_reads_an_attribute_of_a_number(x: wp.array(dtype=float)):
        x[wp.tid()] = wp.static(scale.real)

    for f in (reads_an_object, static_calls_a_python_function, static_draws_a_random_number,
              static_reads_an_attribute_of_a_number):
        assert _key(wp.kernel(f), (True,), (), "t") is None, f.__name__


@wp.func
def _twice(v: float) -> float:
    return 2.0 * v


@wp.func
def _thrice(v: float) -> float:
    return 3.0 * v


_twice.variant = _thrice  # (a func hung on another, as newton's factories hang `solve.core`)


@wp.func
def _generic_half(v: Any):
    return v * 0.5


def test_a_kernel_calling_a_generic_func_gets_a_record(fresh_cache, no_ir):
    """A func with `Any` parameters is described by its source like any other."""
    def make():
        def halves(x: wp.array(dtype=float)):
            x[wp.tid()] = _generic_half(x[wp.tid()])
        return wp.kernel(halves)

    assert warm_start.kernel_text(make()) is not None
    x = wp.array(np.arange(4, dtype=np.float32))
    wp.launch(make(), 4, inputs=[x])
    with no_ir:
        wp.launch(make(), 4, inputs=[x])  # (a new kernel object, from the record)
    np.testing.assert_allclose(x.numpy(), np.arange(4) * 0.25)


class _Shape(enum.IntEnum):
    NONE = 0
    BOX = 1


def _factory(offset, scale):
    """A kernel factory whose `static(...)` expressions compute from its closure values alone."""
    @wp.kernel(module="unique")
    def shifted(x: wp.array(dtype=float)):
        i = wp.tid()
        if wp.static(offset is None):
            x[i] = wp.static(_twice.variant)(x[i]) * wp.static(math.cos(0.0) * scale)
        else:
            x[i] = x[i] + wp.static(float(offset) * scale) + float(_Shape.BOX - _Shape.BOX)
    return shifted


def test_a_factory_kernel_with_pure_static_expressions_starts_warm(fresh_cache, no_ir):
    """`static(pos is None)`, `static(math.cos(tol))`, `static(f.variant)`: the values come from the
    names the expressions read, which the record's text describes (a closure value that
    changes makes another record); an IntEnum class is described by its members."""
    for offset, scale, expected in ((None, 3.0, 9.0 * np.arange(4)), (1.5, 2.0, np.arange(4) + 3.0)):
        assert warm_start.kernel_text(_factory(offset, scale)) is not None
        x = wp.array(np.arange(4, dtype=np.float32))
        wp.launch(_factory(offset, scale), 4, inputs=[x])
        np.testing.assert_allclose(x.numpy(), expected)
    assert warm_start.kernel_text(_factory(None, 3.0)) != warm_start.kernel_text(_factory(None, 2.0))
    before = warm_start.kernel_text(_factory(None, 3.0))
    _twice.variant = _twice
    try:
        assert warm_start.kernel_text(_factory(None, 3.0)) != before  # (the attribute is part of the text)
    finally:
        _twice.variant = _thrice
    with no_ir:
        kernel = _factory(1.5, 2.0)  # (a new kernel object, as in a new process)
        x = wp.array(np.arange(4, dtype=np.float32))
        wp.launch(kernel, 4, inputs=[x])
    np.testing.assert_allclose(x.numpy(), np.arange(4) + 3.0)


def test_errors_of_a_kernel_loaded_from_its_record_name_the_line(fresh_cache, no_ir):
    def make():
        def reads_past_the_end(x: wp.array(dtype=float), y: wp.array(dtype=float)):
            i = wp.tid()
            y[i] = x[i + 1]
        return wp.kernel(reads_past_the_end)

    with pytest.raises(IndexError, match="out of bounds"):
        _launch(make())
    with no_ir:
        loaded = make()
        loaded.compiled(loaded.contiguous_spec())  # (from the record: no IR)
    with pytest.raises(IndexError, match=r"test_warm_start\.py:\d+") as err:
        _launch(loaded)  # (the message builds the IR now)
    assert "x[i + 1]" in str(err.value)


_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import weft as wp
    wp.config.kernel_cache_dir = sys.argv[1]

    @wp.kernel
    def axpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float):
        i = wp.tid()
        y[i] = a * x[i] + y[i]

    x = wp.array(np.arange(16, dtype=np.float32), requires_grad=True)
    y = wp.ones(16, dtype=float, requires_grad=True)
    with wp.Tape() as tape:
        wp.launch(axpy, 16, inputs=[x, y, 3.0])
    y_after = y.numpy().tolist()
    tape.backward(grads={y: wp.full(16, 2.0, dtype=float)})
    loaded = sorted(m for m in sys.modules if m.startswith(("weft.builtins", "weft.lang.frontend",
                                                            "weft.codegen.llvm", "weft.autodiff.reverse",
                                                            "llvmlite.binding")))
    print(json.dumps({"y": y_after, "x_grad": x.grad.numpy().tolist(), "compiler_modules": loaded}))
""")


def test_a_warm_process_neither_builds_ir_nor_imports_the_compiler(tmp_path):
    """Forward and backward (a Tape) in a second process: both from their records, loaded
    without LLVM (codegen/elf_loader.py) where the platform allows."""
    script = tmp_path / "warm_script.py"
    script.write_text(_SCRIPT)
    cache = tmp_path / "cache"
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, str(script), str(cache)], capture_output=True, text=True,
                              timeout=300, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    expected = (3.0 * np.arange(16) + 1.0).tolist()
    assert runs[0]["y"] == expected and runs[1]["y"] == expected
    assert runs[0]["x_grad"] == runs[1]["x_grad"] == [6.0] * 16  # (d(3x + y)/dx times 2)
    assert runs[0]["compiler_modules"]  # (the first process compiled the kernel)
    from weft.codegen import elf_loader
    expected_modules = [] if elf_loader.supported() else ["llvmlite.binding"]
    assert [m for m in runs[1]["compiler_modules"] if not m.startswith("llvmlite.binding.")] == expected_modules


class _Raises:
    """An object whose every attribute raises (as the stand-ins of missing APIs do)."""

    def __getattr__(self, name):
        raise RuntimeError(f"no {name}")


def test_describing_a_value_never_breaks_a_compile(fresh_cache):
    weird = _Raises()

    def reads_it(x: wp.array(dtype=float)):
        x[wp.tid()] = weird.value

    assert _key(wp.kernel(reads_it), (True,), (), "t") is None


def test_a_bare_name_the_program_set_on_weft_is_part_of_the_record(fresh_cache, monkeypatch):
    """Kernels may call weft's names without `wp.` (Warp resolves `expect_eq` so); a value
    a program set on the module under such a name is described like any other."""
    def make():
        def y_is_offset_x(x: wp.array(dtype=float), y: wp.array(dtype=float)):
            i = wp.tid()
            y[i] = x[i] + weft_test_offset  # noqa: F821 - resolved on the weft module
        return wp.kernel(y_is_offset_x)

    monkeypatch.setattr(wp, "weft_test_offset", 1.0, raising=False)
    np.testing.assert_array_equal(_launch(make()), np.arange(8) + 1.0)
    monkeypatch.setattr(wp, "weft_test_offset", 4.0, raising=False)
    np.testing.assert_array_equal(_launch(make()), np.arange(8) + 4.0)


def test_weft_names_keep_their_records(fresh_cache):
    """weft's own names in a kernel (builtins, types, `wp.vector`) are weft's: a record."""
    def uses_weft_names(x: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        x[i] = wp.vector(wp.sin(1.0), float(i), wp.float32(2.0)) + wp.vec3(1.0, 0.0, 0.0)

    assert _key(wp.kernel(uses_weft_names), (True,), (), "t") is not None


def _rescalable():
    """A kernel reading `scale` from its closure, and a function that rebinds it."""
    scale = 2.0

    def y_is_scaled_x(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i] * scale

    def set_scale(value):
        nonlocal scale
        scale = value

    return wp.kernel(y_is_scaled_x), set_scale


def test_a_record_describes_the_values_its_code_was_built_from(fresh_cache):
    """A kernel keeps the IR of its first compile; a value changed after it must not name
    a record of code built before the change."""
    kernel, set_scale = _rescalable()
    x = wp.array(np.arange(8, dtype=np.float32))
    y = wp.zeros(8, dtype=float)
    wp.launch(kernel, 8, inputs=[x, y])  # (contiguous: compiles with scale 2)
    set_scale(3.0)
    strided_x, strided_y = wp.zeros(16)[::2], wp.zeros(16)[::2]
    strided_x.assign(np.arange(8, dtype=np.float32))
    wp.launch(kernel, 8, inputs=[strided_x, strided_y])  # (another variant of the same IR)
    np.testing.assert_array_equal(strided_y.numpy(), 2.0 * np.arange(8))
    fresh, set_fresh = _rescalable()  # (as a later process, where scale is 3 from the start)
    set_fresh(3.0)
    wp.launch(fresh, 8, inputs=[strided_x, strided_y])
    np.testing.assert_array_equal(strided_y.numpy(), 3.0 * np.arange(8))
