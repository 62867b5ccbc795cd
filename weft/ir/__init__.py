"""The IR: core data structures, op declarations, printer, verifier and passes."""

from .core import Block, Function, Loc, Op, Value, walk
from .printer import format_function
from .verify import VerifyError, verify

__all__ = ["Block", "Function", "Loc", "Op", "Value", "walk", "format_function", "VerifyError", "verify"]
