"""`wp.ref[T]`: the annotation of a func parameter passed by reference.

A func whose parameter is annotated `x: wp.ref[wp.float32]` updates the caller's storage
when it assigns to `x`: a local variable, an array element, a struct field or a component
of a vector or matrix. weft compiles the parameter as an ordinary local whose final value
the call returns, and the caller stores that value back into the argument (lang/function.py),
so a reference is plain dataflow to the rest of the compiler, gradients included.
"""

from __future__ import annotations


class Reference:
    """The type `wp.ref[dtype]` stands for; equal to another with the same dtype."""

    def __init__(self, dtype):
        self.dtype = dtype

    @property
    def value_type(self):
        """The type of the value referred to (the same as `dtype`)."""
        return self.dtype

    def __eq__(self, other):
        return isinstance(other, Reference) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("wp.ref", self.dtype))

    def __repr__(self):
        return f"wp.ref[{getattr(self.dtype, '__name__', repr(self.dtype))}]"


class ref:  # noqa: N801 - Warp's name
    """`wp.ref[T]`: annotate a `@wp.func` parameter to pass it by reference (see Reference)."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("wp.ref is an annotation: write `x: wp.ref[wp.float32]` in a func's signature")

    def __class_getitem__(cls, dtype) -> Reference:
        if isinstance(dtype, tuple):
            raise TypeError(f"wp.ref[...] takes one type, got {dtype!r}")
        return Reference(dtype)
