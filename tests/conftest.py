"""Shared test setup: a private kernel cache per session, and a launch helper."""

import numpy as np
import pytest

import weft


@pytest.fixture(scope="session", autouse=True)
def _verify_ir_after_every_pass():
    """weft's own tests check the IR after every pass, so that a pass that breaks it is named."""
    saved = weft.config.verify_ir
    weft.config.verify_ir = True
    yield
    weft.config.verify_ir = saved


@pytest.fixture(scope="session", autouse=True)
def _private_kernel_cache(tmp_path_factory):
    saved = weft.config.kernel_cache_dir
    weft.config.kernel_cache_dir = str(tmp_path_factory.mktemp("weft-cache"))
    yield
    weft.config.kernel_cache_dir = saved


def _run(kernel, dim, *args):
    """Launch `kernel` over `dim` threads; numpy arguments become weft arrays of their dtype
    (a `(numpy array, weft dtype)` pair for vector/matrix arrays). Returns the contents of
    every array argument after the launch, as numpy arrays, in order."""
    converted = []
    for a in args:
        if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], np.ndarray):
            a = weft.array(a[0], dtype=a[1])
        elif isinstance(a, np.ndarray):
            a = weft.array(a)
        converted.append(a)
    weft.launch(kernel, dim, inputs=converted)
    return [a.numpy().copy() for a in converted if isinstance(a, weft.array)]


@pytest.fixture
def run():
    return _run
