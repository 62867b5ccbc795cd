"""Warnings and messages weft prints, through a replaceable logger (Warp's `set_logger`).

Warnings are printed to stderr as `Warp <Category>: <message>` (the prefix Warp programs and
their tests look for) through `warnings.warn`, so Python's warning filters apply.
`once=True` (and every DeprecationWarning) prints a message once per process.
"""

from __future__ import annotations

import sys
import warnings
from typing import Protocol, runtime_checkable

LOG_DEBUG = 10
LOG_INFO = 20
LOG_WARNING = 30
LOG_ERROR = 40

_REQUIRED = ("debug", "info", "warning", "error")


@runtime_checkable
class Logger(Protocol):
    """What a logger provides (any object with these four methods will do; the protocol
    itself cannot be instantiated)."""

    def debug(self, message: str) -> None: ...
    def info(self, message: str) -> None: ...
    def warning(self, message: str, category=None, stacklevel: int = 1) -> None: ...
    def error(self, message: str) -> None: ...


def _show_on_stderr(message, category, filename, lineno, file=None, line=None):
    """`Warp <Category>: <message>`; with `config.verbose_warnings`, also the file and line
    the warning points at, and that line's source."""
    from . import config
    text = f"Warp {category.__name__}: {message}"
    if config.verbose_warnings:
        text += f" ({filename}:{lineno})"
        if line is None:
            import linecache
            line = linecache.getline(filename, lineno)
        if line and line.strip():
            text += f"\n  {line.strip()}"
    sys.stderr.write(text + "\n")


class LoggerBasic(Logger):
    """The default: debug and info to stdout, warnings and errors to stderr."""

    def debug(self, message: str) -> None:
        sys.stdout.write(message + "\n")

    def info(self, message: str) -> None:
        sys.stdout.write(message + "\n")

    def warning(self, message: str, category=None, stacklevel: int = 1) -> None:
        with warnings.catch_warnings():
            warnings.showwarning = _show_on_stderr
            warnings.warn(message, category or UserWarning, stacklevel=stacklevel + 1)

    def error(self, message: str) -> None:
        sys.stderr.write("Warp Error: " + message + "\n")


_active_logger: Logger = LoggerBasic()
_warnings_seen: set = set()


def set_logger(logger: Logger | None) -> None:
    """Route weft's messages to `logger` (None: back to the default)."""
    global _active_logger
    if logger is None:
        _active_logger = LoggerBasic()
        return
    _check_logger(logger)
    _active_logger = logger


def _check_logger(logger) -> None:
    missing = [m for m in _REQUIRED if not callable(getattr(logger, m, None))]
    if missing:
        raise TypeError(f"logger must have the methods debug, info, warning and error; "
                        f"{type(logger).__name__} lacks {', '.join(missing)}")


def get_logger() -> Logger:
    return _active_logger


class ScopedLogger:
    """`with ScopedLogger(logger):` routes weft's messages to `logger` inside the block (None:
    to the default logger), then back to the logger active before."""

    def __init__(self, logger: Logger | None):
        if logger is not None:
            _check_logger(logger)
        self.logger = logger

    def __enter__(self):
        global _active_logger
        self.saved = _active_logger
        set_logger(self.logger)
        return self

    def __exit__(self, *exc_info):
        global _active_logger
        _active_logger = self.saved  # (no validation: a mutated saved logger is put back as it is)
        return False


def _level() -> int:
    from . import config
    return config.log_level


def log_debug(message: str) -> None:
    if _level() <= LOG_DEBUG:
        _active_logger.debug(message)


def log_info(message: str) -> None:
    if _level() <= LOG_INFO:
        _active_logger.info(message)


def log_warning(message: str, category=None, stacklevel: int = 1, once: bool = False) -> None:
    """Print a warning (unless `config.log_level` is above LOG_WARNING); with `once`, or for
    a DeprecationWarning, only the first time this (category, message) is seen."""
    if _level() > LOG_WARNING:
        return
    dedup = once or category is DeprecationWarning
    if dedup and (category, message) in _warnings_seen:
        return
    _active_logger.warning(message, category=category, stacklevel=stacklevel + 2)
    if dedup:
        _warnings_seen.add((category, message))


def log_error(message: str) -> None:
    _active_logger.error(message)


def warn(message: str, category=None, stacklevel: int = 1, once: bool = False) -> None:
    """`weft.utils.warn`: a warning through the active logger."""
    log_warning(message, category, stacklevel + 1, once)
