"""weft.logger: ScopedLogger (swap and restore, also on an exception and for a saved logger
that no longer validates), the Logger protocol, verbose_warnings' file:line, and the
deprecated wp.from_ptr's warning."""

import ctypes
import inspect

import numpy as np
import pytest

import weft as wp
from weft import logger as logger_module


class Recorder:
    def __init__(self):
        self.messages = []

    def debug(self, message):
        self.messages.append(("debug", message))

    def info(self, message):
        self.messages.append(("info", message))

    def warning(self, message, category=None, stacklevel=1):
        self.messages.append(("warning", message))

    def error(self, message):
        self.messages.append(("error", message))


def test_scoped_logger_swaps_and_restores():
    original = wp.get_logger()
    recorder = Recorder()
    with wp.ScopedLogger(recorder) as scope:
        assert scope.logger is recorder and wp.get_logger() is recorder
        logger_module.log_error("inside")
    assert wp.get_logger() is original and recorder.messages == [("error", "inside")]
    with pytest.raises(RuntimeError, match="boom"):
        with wp.ScopedLogger(Recorder()):
            raise RuntimeError("boom")
    assert wp.get_logger() is original


def test_scoped_logger_none_uses_the_default_and_bad_loggers_are_refused():
    original = wp.get_logger()
    wp.set_logger(Recorder())
    try:
        with wp.ScopedLogger(None):
            assert isinstance(wp.get_logger(), logger_module.LoggerBasic)
    finally:
        wp.set_logger(original)
    with pytest.raises(TypeError, match="lacks warning"):
        wp.ScopedLogger(type("Partial", (), {"debug": print, "info": print, "error": print})())


def test_scoped_logger_restores_a_saved_logger_that_no_longer_validates():
    original = wp.get_logger()
    outer = Recorder()
    wp.set_logger(outer)
    try:
        with wp.ScopedLogger(Recorder()):
            outer.debug = None
        assert wp.get_logger() is outer
    finally:
        wp.set_logger(original)


def test_logger_is_a_protocol():
    with pytest.raises(TypeError):
        wp.Logger()
    assert isinstance(Recorder(), wp.Logger) and not isinstance(object(), wp.Logger)


def an_api(message):
    logger_module.log_warning(message)  # (weft's stacklevel=1: the api's caller)


def test_verbose_warnings_name_the_callers_line(capsys, monkeypatch):
    monkeypatch.setattr(wp.config, "verbose_warnings", True)
    line = inspect.currentframe().f_lineno + 1
    an_api("look here")
    err = capsys.readouterr().err
    assert f"Warp UserWarning: look here ({__file__}:{line})" in err
    assert 'an_api("look here")' in err
    monkeypatch.setattr(wp.config, "verbose_warnings", False)
    an_api("plain")
    assert capsys.readouterr().err == "Warp UserWarning: plain\n"


def test_from_ptr_warns_and_wraps_the_memory(capsys):
    logger_module._warnings_seen.clear()
    values = (ctypes.c_float * 3)(1.0, 2.0, 3.0)
    pointer = ctypes.c_size_t(ctypes.addressof(values))
    a = wp.from_ptr(ctypes.addressof(pointer), 3, dtype=wp.float32)
    assert "Warp DeprecationWarning: This version of wp.from_ptr() is deprecated" in capsys.readouterr().err
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0, 3.0])
    values[1] = 7.0
    assert a.numpy()[1] == 7.0  # a view, not a copy
