"""The decorators users write: @kernel, @func, @struct; and constant()."""

from __future__ import annotations

from ..types import StructType
from .function import Func
from .kernel import Kernel


def kernel(f=None, *, enable_backward=None, module=None):
    """Make a kernel from a type-annotated Python function (launch it with `weft.launch`)."""
    def wrap(pyfunc):
        return Kernel(pyfunc, enable_backward=enable_backward, module=module)
    return wrap(f) if f is not None else wrap


def func(f=None, **options):
    """Make a device function callable from kernels. Parameters annotated `Any` (or not at
    all) are generic: the func is compiled per argument type. A second @func of the same
    name in the same module adds an overload."""
    def wrap(pyfunc):
        existing = pyfunc.__globals__.get(pyfunc.__name__)
        if isinstance(existing, Func) and existing.key == f"{pyfunc.__module__}.{pyfunc.__qualname__}":
            existing.add_overload(pyfunc)
            return existing
        return Func(pyfunc)
    return wrap(f) if f is not None else wrap


def struct(cls):
    """Make a struct type from a class with annotated fields."""
    return StructType(cls)


def constant(value):
    """Mark a global as a compile-time constant (any global number already is one)."""
    return value
