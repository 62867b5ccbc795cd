"""Generic type annotations of funcs: `Int`, `Float`, `Scalar`, `vector(length=Any, ...)`.

A func parameter annotated with a pattern takes any argument whose type matches it; the func
is compiled once per concrete argument type, as for `Any`.
"""

from __future__ import annotations

import typing


def is_any(x) -> bool:
    return x is typing.Any or isinstance(x, typing.TypeVar)


class TypePattern:
    """A set of weft types, described by a predicate; instances are cached by `key`."""

    is_generic = True  # (lang/function.py, lang/overloads.py: specialised per argument type)
    _cache: dict = {}

    def __new__(cls, *key):
        full = (cls, *key)
        if full not in TypePattern._cache:
            self = super().__new__(cls)
            self.key = key
            TypePattern._cache[full] = self
        return TypePattern._cache[full]

    def matches(self, t) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def __reduce__(self):
        return (type(self), self.key)


def dtype_matches(want, dtype) -> bool:
    """Whether component type `dtype` satisfies `want` (Any, a scalar pattern or a scalar)."""
    if is_any(want):
        return want is typing.Any or not want.__constraints__ or \
            ScalarPattern(want.__name__, want.__constraints__).matches(dtype)
    if isinstance(want, TypePattern):
        return want.matches(dtype)
    return want is dtype


class ScalarPattern(TypePattern):
    """One of a set of scalar types (Warp's `Int`, `Float`, `Scalar` annotations)."""

    def __init__(self, name, members):
        from .scalars import PYTHON_TYPES
        self.__name__ = name
        self.members = frozenset(PYTHON_TYPES.get(m, m) for m in members)

    def matches(self, t) -> bool:
        return t in self.members

    def __repr__(self):
        return self.__name__


class VectorPattern(TypePattern):
    """Vectors (or quaternions, transforms) of a given or any length and component type."""

    def __init__(self, length, dtype, flavor):
        self.length, self.dtype, self.flavor = length, dtype, flavor

    def matches(self, t) -> bool:
        from .composite import Vector
        if not isinstance(t, Vector) or t.flavor != self.flavor:
            return False
        return (is_any(self.length) or t.length == self.length) and dtype_matches(self.dtype, t.dtype)

    def __repr__(self):
        dtype = getattr(self.dtype, "__name__", repr(self.dtype))
        if self.flavor == "vec":
            return f"vector(length={getattr(self.length, '__name__', self.length)}, dtype={dtype})"
        return f"{'quaternion' if self.flavor == 'quat' else 'transformation'}(dtype={dtype})"


class MatrixPattern(TypePattern):
    """Matrices of a given or any shape and component type."""

    def __init__(self, rows, cols, dtype):
        self.rows, self.cols, self.dtype = rows, cols, dtype

    def matches(self, t) -> bool:
        from .composite import Matrix
        if not isinstance(t, Matrix):
            return False
        return (is_any(self.rows) or t.rows == self.rows) and (is_any(self.cols) or t.cols == self.cols) \
            and dtype_matches(self.dtype, t.dtype)

    def __repr__(self):
        shape = ", ".join(str(getattr(d, "__name__", d)) for d in (self.rows, self.cols))
        return f"matrix(shape=({shape}), dtype={getattr(self.dtype, '__name__', self.dtype)})"


class TuplePattern(TypePattern):
    """Tuples whose elements match `elements` in turn; `tuple[T, ...]` (variadic) is any
    length with every element matching the one pattern given."""

    def __init__(self, elements, variadic):
        self.elements, self.variadic = tuple(elements), variadic

    def matches(self, t) -> bool:
        from .composite import TupleType
        if not isinstance(t, TupleType):
            return False
        wants = self.elements * len(t.elements) if self.variadic else self.elements
        return len(wants) == len(t.elements) and all(_element_matches(w, e) for w, e in zip(wants, t.elements))

    def __repr__(self):
        names = [getattr(e, "__name__", None) or repr(e) for e in self.elements]
        return f"tuple[{', '.join(names)}{', ...' if self.variadic else ''}]"


def _element_matches(want, t) -> bool:
    if is_any(want):
        return dtype_matches(want, t)
    if isinstance(want, TypePattern) or getattr(want, "is_generic", False):
        return want.matches(t)
    return want is t
