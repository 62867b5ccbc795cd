"""A kernel that fails to compile: the error's class, no lingering reference to the failed
definition from a kept error, and how `force_load`/`load_module` go on past a failing
module (`max_workers`, `config.load_module_max_workers`)."""

import os
import tempfile
import uuid
import weakref
from importlib import util

import numpy as np
import pytest

import weft as wp
from weft.lang.errors import CompileError, WarpCodegenTypeError

FAILING = """\
import weft as wp

@wp.kernel
def exercise_kernel(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = None

@wp.kernel
def sibling_kernel(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 7.0
"""

FIXED = """\
@wp.kernel
def exercise_kernel(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 2.0 * float(i)
"""

VALID = """\
import weft as wp

@wp.kernel
def ok_kernel(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.0
"""


def _source_file(code):
    fd, path = tempfile.mkstemp(suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(code)
    return path


def import_code(code):
    path = _source_file(code)
    try:
        spec = util.spec_from_file_location(f"_weft_failing_{uuid.uuid4().hex[:10]}", path)
        module = util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        os.remove(path)
    return module


def redefine(module, code):
    path = _source_file(code)
    try:
        exec(compile(code, path, "exec"), module.__dict__)
    finally:
        os.remove(path)


def keep(error):
    """What an interactive session keeps of an error: it and its frames' locals."""
    frames, tb = [], error.__traceback__
    while tb is not None:
        frames.append(dict(tb.tb_frame.f_locals))
        tb = tb.tb_next
    return error, frames


@pytest.mark.parametrize("how", ["launch", "launch_tiled", "load_module"])
def test_kept_error_does_not_keep_the_failed_kernel(how):
    module = import_code(FAILING)
    a = wp.zeros(4, dtype=float)
    failed = weakref.ref(module.exercise_kernel)
    calls = {"launch": lambda: wp.launch(module.exercise_kernel, dim=4, inputs=[a]),
             "launch_tiled": lambda: wp.launch_tiled(module.exercise_kernel, dim=4, inputs=[a], block_dim=1),
             "load_module": lambda: wp.load_module(module)}
    with pytest.raises(WarpCodegenTypeError, match="not a value") as caught:
        calls[how]()
    kept = keep(caught.value)
    redefine(module, FIXED)
    assert failed() is None
    assert kept[0] is caught.value
    wp.launch(module.exercise_kernel, dim=4, inputs=[a])
    np.testing.assert_array_equal(a.numpy(), [0.0, 2.0, 4.0, 6.0])


def test_error_repeats_on_relaunch():
    module = import_code(FAILING)
    a = wp.zeros(1, dtype=float)
    for _ in range(2):
        with pytest.raises(WarpCodegenTypeError):
            wp.launch(module.exercise_kernel, dim=1, inputs=[a])


@pytest.mark.parametrize("workers", [0, 2, None])
def test_force_load_past_a_failing_module(workers, monkeypatch):
    failing = wp.get_module(import_code(FAILING).__name__)
    valid = wp.get_module(import_code(VALID).__name__)
    if workers is None:
        monkeypatch.setattr(wp.config, "load_module_max_workers", 2)
    with pytest.raises(CompileError):
        wp.force_load(modules=[failing, valid], max_workers=workers)
    # serially the load stops at the failure; as Warp's parallel load, the others load first
    assert bool(valid.execs) == (workers != 0)
    wp.force_load(modules=[valid], max_workers=workers)
    assert valid.execs
    with pytest.raises(ValueError, match="max_workers"):
        wp.force_load(modules=[valid], max_workers=-1)
