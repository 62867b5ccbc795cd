"""Kernels declared with `module="unique"` are reused when declared again unchanged.

A kernel factory (`def make(v): @wp.kernel(module="unique") def k(...): ...`) declares the
same code again on each call; Warp returns the kernel made the first time when nothing it
depends on changed, so factories do not recompile, and a definition written again with the
same text gives the same kernel. The key here: the function's code (its bytecode, names and
constants, not its line numbers) and its source text as its file reads now (a file rewritten since makes equal code
objects of other source), the values of its closure and of the globals it names, its annotations and
defaults, and the decorator's arguments. A value weft cannot compare (an arbitrary object) is compared by identity, so
a kernel is only reused when it would compile to the same code.
"""

from __future__ import annotations

import types as pytypes

import numpy as np

from ..types.scalars import SCALAR_VALUES
from .source import source_lines

_DECLARED: dict = {}
_held: list = []  # objects whose identity is part of a declaration key


def declaration_key(pyfunc, arguments) -> tuple | None:
    """What a `module="unique"` declaration depends on, or None if it cannot be compared."""
    try:
        closure = tuple(_frozen(cell.cell_contents) for cell in pyfunc.__closure__ or ())
    except ValueError:  # a cell not filled yet: the kernel may see another value later
        return None
    names = _global_names(pyfunc.__code__)
    env = pyfunc.__globals__
    globals_ = tuple((n, _frozen(env[n])) for n in sorted(names) if n in env)
    annotations = _frozen(dict(getattr(pyfunc, "__annotations__", {})))
    try:
        source = "".join(source_lines(pyfunc)[0])
    except (OSError, TypeError):
        source = None  # (reported when the kernel is compiled)
    return (_code_key(pyfunc.__code__), source, closure, globals_, annotations, _frozen(pyfunc.__defaults__),
            _frozen(arguments))


def _code_key(code) -> tuple:
    """What a function's code does, without where it stands: two declarations of the same
    text (a factory's, or the same definition written twice) give equal keys, as Warp hashes
    a unique kernel by its content."""
    consts = tuple(_code_key(c) if isinstance(c, pytypes.CodeType) else (type(c), c) for c in code.co_consts)
    return (code.co_qualname, code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars,
            code.co_cellvars, code.co_argcount, code.co_kwonlyargcount, code.co_flags)


def reuse(key, make):
    """The kernel declared before under `key`, else `make()` (remembered under `key`)."""
    if key is None:
        return make()
    kernel = _DECLARED.get(key)
    if kernel is None:
        kernel = _DECLARED[key] = make()
    return kernel


def _global_names(code) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _global_names(const)
    return names


def _frozen(value):
    """A hashable stand-in for `value`: the value itself for numbers, strings and tuples of
    them; the contents of numpy scalars and composite values; else the object's identity."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return (type(value), value)
    if isinstance(value, SCALAR_VALUES):
        return (type(value), value.item())
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(_frozen(v) for v in value))
    if isinstance(value, dict):
        return (dict, tuple(sorted(((repr(k), _frozen(v)) for k, v in value.items()), key=lambda kv: kv[0])))
    data = getattr(value, "_data", None)  # a vector or matrix value
    if isinstance(data, np.ndarray) and hasattr(value, "type"):
        return (id(value.type), data.tobytes())
    _held.append(value)  # (kept alive, so that its id is not reused by another object)
    return ("id", id(value))
