"""Errors users see: compile errors that point at their source line.

`CompileError` is also a `RuntimeError`, and Warp code catches it by Warp's names:
`WarpCodegenError` is `CompileError` itself, and each `WarpCodegen<Kind>Error` is a
`CompileError` that is also the Python exception of that kind (a compile error about a
type is a `TypeError`, an unknown name a `KeyError`, ...), as in Warp.
"""

from __future__ import annotations

import linecache


class WeftError(Exception):
    """Base class of weft's own errors."""


class CompileError(WeftError, RuntimeError):
    """A kernel or func cannot be compiled. The text shows file:line:col, the source line and
    a caret, then the message (`bare_message`); see `format_at`."""

    def __init__(self, message: str, loc=None, function: str | None = None):
        self.bare_message = message
        self.loc = loc
        self.function = function
        self.callers: list = []  # (name, loc) of the calls that led here, innermost first
        super().__init__(format_at(message, loc, function))

    def __str__(self):  # (KeyError would show the repr of the message)
        return self.args[0] if self.args else ""

    def add_caller(self, name: str, loc) -> None:
        """Note that the func this error is in was called from `name` at `loc` (not from
        code weft generated, such as a Python-scope call's kernel)."""
        if self.loc is None or loc is None or str(loc.file).startswith("<weft "):
            return
        self.callers.append((name, loc))
        self.args = (format_at(self.bare_message, self.loc, self.function, self.callers),)


class NotDifferentiableError(CompileError):
    """The adjoint of a kernel cannot be built (a builtin without a derivative rule, ...)."""


class WarpCodegenTypeError(CompileError, TypeError):
    """A compile error about types (an argument, an annotation, a return value)."""


class WarpCodegenValueError(CompileError, ValueError):
    """A compile error about a value (a constant out of range, a bad option)."""


class WarpCodegenKeyError(CompileError, KeyError):
    """A compile error about a name that is not defined."""


class WarpCodegenAttributeError(CompileError, AttributeError):
    """A compile error about an attribute or a function that does not exist."""


class WarpCodegenIndexError(CompileError, IndexError):
    """A compile error about an index (too many indices, a constant index out of range)."""


class WarpRecursionError(CompileError, RecursionError):
    """A func that calls itself (weft inlines funcs; Warp's C++ build raises RecursionError)."""


WarpCodegenError = CompileError

#: How the file names of the sources weft writes itself begin (a Python-scope call of a
#: builtin or func, wp.map): a location there means nothing to the user, so errors leave it out.
GENERATED_SOURCE_PREFIX = "<weft "

KERNEL_RETURN_MESSAGE = ("Warp kernels cannot return values. Write results to output arguments, "
                         "and omit the return annotation or use `-> None`.")

# The compile error to raise for a Python exception kind (FunctionCompiler.error(kind=...)).
ERROR_KINDS = {
    None: CompileError,
    TypeError: WarpCodegenTypeError,
    ValueError: WarpCodegenValueError,
    KeyError: WarpCodegenKeyError,
    AttributeError: WarpCodegenAttributeError,
    IndexError: WarpCodegenIndexError,
}


def format_at(message: str, loc, function: str | None = None, callers=()) -> str:
    """The place first, the message last (as Triton's and Warp's compile errors do):

        file:line:col: in NAME (called from KERNEL at file:line:col):
            the source line
            ^
        message

    The caret is under the column. The message ends the text, so a pattern anchored with
    `$` (as Warp's tests write them) matches it; the place stays on the first line, in the
    `file:line:col` form editors and terminals turn into a link. `callers` are the (name,
    loc) of the calls that led into the func NAME, innermost first."""
    if loc is None:
        return message
    where = f"{loc.file}:{loc.line}:{loc.col + 1}"
    head = f"{where}: in {function}" if function else where
    if callers:
        head += " (" + ", ".join(f"called from {name} at {at.file}:{at.line}:{at.col + 1}"
                                 for name, at in callers) + ")"
    head += ":"
    source = linecache.getline(loc.file, loc.line).rstrip("\n")
    if not source:
        return f"{head}\n{message}"
    stripped = source.lstrip()
    indent = len(source) - len(stripped)
    caret = " " * (4 + max(0, loc.col - indent)) + "^"
    return f"{head}\n    {stripped}\n{caret}\n{message}"


class WarpDeterminismError(CompileError):
    """Deterministic mode (`weft.config.deterministic`, the "deterministic" module option)
    cannot give bit-exact results for this kernel, so refuses it, where Warp does (Warp's
    name): an array that receives order-sensitive atomic updates and is also read or written
    directly, a slot counter (`slot = atomic_add(counter, i, 1)`) used in other ways or
    differentiated automatically, ..."""
