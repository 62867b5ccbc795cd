"""Vector, matrix, quaternion, transform and tuple types.

A composite type is a fixed list of scalar components. Inside kernels its values are SSA
values (updated functionally); in Python scope calling the type builds a `CompositeValue`,
a small numpy-backed object that can be passed to kernels or stored in arrays.
Matrices are stored row-major, so a `mat33` is laid out like numpy's `(3, 3)` array.
"""

from __future__ import annotations

import numpy as np

from .scalars import PYTHON_TYPES, Scalar, Type, float16, float32, float64, int32


class Composite(Type):
    is_composite = True


class Vector(Composite):
    """`length` components of scalar `dtype`. `flavor` is 'vec', 'quat' or 'transform'."""

    _cache: dict = {}

    def __new__(cls, length: int, dtype: Scalar, flavor: str = "vec"):
        dtype = PYTHON_TYPES.get(dtype, dtype)
        if not isinstance(dtype, Scalar):
            raise TypeError(f"vector components must be a scalar type, got {dtype!r}")
        key = (int(length), dtype, flavor)
        if key not in cls._cache:
            self = super().__new__(cls)
            self.length, self.dtype, self.flavor = key
            self.name = _vector_name(*key)
            self.size = self.length * dtype.size
            self.shape = (self.length,)
            cls._cache[key] = self
        return cls._cache[key]

    def __init__(self, *args, **kwargs):
        pass

    @property
    def num_components(self) -> int:
        return self.length

    @property
    def np_shape(self) -> tuple:
        return (self.length,)

    def __call__(self, *args):
        return CompositeValue(self, _components(self, args))

    def __reduce__(self):
        return (Vector, (self.length, self.dtype, self.flavor))


class Matrix(Composite):
    """A `rows` x `cols` matrix of scalar `dtype`, stored row-major."""

    _cache: dict = {}

    def __new__(cls, shape: tuple, dtype: Scalar):
        dtype = PYTHON_TYPES.get(dtype, dtype)
        if not isinstance(dtype, Scalar):
            raise TypeError(f"matrix components must be a scalar type, got {dtype!r}")
        rows, cols = (int(shape[0]), int(shape[1]))
        key = (rows, cols, dtype)
        if key not in cls._cache:
            self = super().__new__(cls)
            self.rows, self.cols, self.dtype = key
            suffix = {float32: "f", float64: "d", float16: "h"}.get(dtype)
            self.name = f"mat{rows}{cols}{suffix}" if suffix and rows == cols else \
                f"matrix(({rows}, {cols}), {dtype.name})"
            self.size = rows * cols * dtype.size
            self.shape = (rows, cols)
            cls._cache[key] = self
        return cls._cache[key]

    def __init__(self, *args, **kwargs):
        pass

    @property
    def num_components(self) -> int:
        return self.rows * self.cols

    @property
    def np_shape(self) -> tuple:
        return (self.rows, self.cols)

    def row_type(self) -> Vector:
        return Vector(self.cols, self.dtype)

    def __call__(self, *args):
        return CompositeValue(self, _components(self, args))

    def __reduce__(self):
        return (Matrix, ((self.rows, self.cols), self.dtype))


class TupleType(Composite):
    """The type of a tuple returned by a `@func` (`return a, b`). Kernel-internal only."""

    _cache: dict = {}

    def __new__(cls, elements: tuple):
        key = tuple(elements)
        if key not in cls._cache:
            self = super().__new__(cls)
            self.elements = key
            self.name = "tuple(" + ", ".join(map(repr, key)) + ")"
            cls._cache[key] = self
        return cls._cache[key]

    def __init__(self, *args, **kwargs):
        pass

    @property
    def num_components(self) -> int:
        return len(self.elements)


def _vector_name(length: int, dtype: Scalar, flavor: str) -> str:
    suffix = {float32: "f", float64: "d", float16: "h", int32: "i"}.get(dtype)
    if flavor == "vec":
        return f"vec{length}{suffix}" if suffix else f"vector({length}, {dtype.name})"
    return flavor + ("" if dtype is float32 else suffix or f"_{dtype.name}")


def _components(t, args) -> np.ndarray:
    """Components of a composite built in Python scope from scalars, sequences or nothing."""
    n = t.num_components
    if len(args) == 0:
        flat = np.zeros(n, dtype=t.dtype.np_dtype)
    elif len(args) == 1 and np.ndim(args[0]) == 0 and n > 1:
        flat = np.full(n, args[0], dtype=t.dtype.np_dtype)  # broadcast a scalar
    else:
        flat = np.concatenate([np.ravel(np.asarray(a)) for a in args]).astype(t.dtype.np_dtype)
    if flat.size != n:
        raise ValueError(f"{t.name} takes {n} components, got {flat.size}")
    return flat


class CompositeValue:
    """A vector/matrix value in Python scope, backed by a flat numpy array."""

    __slots__ = ("type", "_data")

    def __init__(self, type_: Composite, flat: np.ndarray):
        self.type = type_
        self._data = flat

    def numpy(self) -> np.ndarray:
        return self._data.reshape(self.type.np_shape)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __len__(self):
        return self.type.np_shape[0]

    def __getitem__(self, i):
        return self.numpy()[i]

    def __setitem__(self, i, v):
        self.numpy()[i] = v

    def __iter__(self):
        return iter(self.numpy())

    def __getattr__(self, name):
        index = "xyzw".find(name)
        if len(name) == 1 and index >= 0 and isinstance(self.type, Vector):
            return self._data[index]
        raise AttributeError(name)

    def _wrap(self, result):
        return CompositeValue(self.type, np.ascontiguousarray(result, self.type.dtype.np_dtype).ravel())

    def __add__(self, other):
        return self._wrap(self.numpy() + np.asarray(other))

    def __sub__(self, other):
        return self._wrap(self.numpy() - np.asarray(other))

    def __mul__(self, other):
        if isinstance(other, CompositeValue):
            raise TypeError("use weft.dot / weft.cw_mul for products of two composites")
        return self._wrap(self.numpy() * other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self._wrap(self.numpy() / other)

    def __neg__(self):
        return self._wrap(-self.numpy())

    def __eq__(self, other):
        return bool(np.array_equal(self.numpy(), np.asarray(other)))

    def __hash__(self):
        return hash((self.type, self._data.tobytes()))

    def __repr__(self):
        return f"{self.type.name}({', '.join(repr(v.item()) for v in self._data)})"


def vector(length: int, dtype=float32) -> Vector:
    """The vector type of `length` components of `dtype` (Warp's `wp.vec(length, dtype)`)."""
    return Vector(length, dtype)


def matrix(shape: tuple, dtype=float32) -> Matrix:
    """The matrix type of `shape = (rows, cols)` (Warp's `wp.mat(shape, dtype)`)."""
    return Matrix(shape, dtype)


def quaternion(dtype=float32) -> Vector:
    return Vector(4, dtype, "quat")


def transformation(dtype=float32) -> Vector:
    """A rigid transform: position (3) then rotation quaternion (4), as Warp lays it out."""
    return Vector(7, dtype, "transform")
