"""Errors users see: compile errors that point at their source line."""

from __future__ import annotations

import linecache


class WeftError(Exception):
    """Base class of weft's own errors."""


class CompileError(WeftError):
    """A kernel or func cannot be compiled. The message shows file:line:col and the line."""

    def __init__(self, message: str, loc=None, function: str | None = None):
        self.bare_message = message
        self.loc = loc
        self.function = function
        super().__init__(format_at(message, loc, function))


class NotDifferentiableError(CompileError):
    """The adjoint of a kernel cannot be built (a builtin without a derivative rule, ...)."""


def format_at(message: str, loc, function: str | None = None) -> str:
    """`file:line:col: in NAME: message`, then the source line and a caret under the column."""
    if loc is None:
        return message
    where = f"{loc.file}:{loc.line}:{loc.col + 1}"
    head = f"{where}: in {function}: {message}" if function else f"{where}: {message}"
    source = linecache.getline(loc.file, loc.line).rstrip("\n")
    if not source:
        return head
    stripped = source.lstrip()
    indent = len(source) - len(stripped)
    caret = " " * (4 + max(0, loc.col - indent)) + "^"
    return f"{head}\n    {stripped}\n{caret}"
