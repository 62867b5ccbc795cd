"""Vector, matrix, quaternion, transform and tuple types.

A composite type is a fixed list of scalar components. Inside kernels its values are SSA
values (updated functionally); in Python scope calling the type builds a `CompositeValue`,
a small numpy-backed object that can be passed to kernels or stored in arrays.
Matrices are stored row-major, so a `mat33` is laid out like numpy's `(3, 3)` array.
"""

from __future__ import annotations

import typing

import numpy as np

from .generic import MatrixPattern, TypePattern, VectorPattern, is_any
from .scalars import PYTHON_TYPES, Scalar, Type, float32, is_weft_scalar


def _subscript_dim(x, what: str) -> int:
    """A dimension given in a type subscript: an int or a one-value `Literal[n]`, positive."""
    if typing.get_origin(x) is typing.Literal:
        values = typing.get_args(x)
        if len(values) != 1:
            raise TypeError(f"Expected a single Literal value for the {what}, got {x!r}")
        x = values[0]
    if isinstance(x, bool) or not isinstance(x, int) or x <= 0:
        raise TypeError(f"the {what} must be a positive integer, got {x!r}")
    return x


def _subscript(cls, params, names: tuple, make):
    """`Vector[dtype, n]`, `Matrix[dtype, rows, cols]`, ... : the concrete type, or with a
    TypeVar among the parameters a generic alias for static typing (as Warp)."""
    params = params if isinstance(params, tuple) else (params,)
    if len(params) != len(names):
        raise TypeError(f"{cls.__name__}[...] requires {len(names)} parameters "
                        f"({', '.join(names)}), got {len(params)}")
    if any(isinstance(p, typing.TypeVar) for p in params):
        import types as pytypes
        return pytypes.GenericAlias(cls, params)
    return make(PYTHON_TYPES.get(params[0], params[0]),
                *(_subscript_dim(p, name) for p, name in zip(params[1:], names[1:])))


class Composite(Type):
    is_composite = True

    # Warp's types are ctypes-array classes; programs read these class attributes of them
    @property
    def _length_(self) -> int:
        return self.num_components

    @property
    def _shape_(self) -> tuple:
        return self.np_shape

    @property
    def _wp_scalar_type_(self):
        return self.dtype

    @property
    def _type_(self):
        from .layout import ctype_of
        return ctype_of(self.dtype)


class _ValueType(Composite):
    """Vectors and matrices (quaternions, transforms): types whose values Python scope builds."""

    def __call__(self, *args, **kwargs):
        """A value of this type in Python scope (see `values.components` for the forms)."""
        fast = _EVERY_COMPONENT.get(self)
        if fast is not None and len(args) == fast[0] and not kwargs:
            for a in args:
                if type(a) is not float and type(a) is not int:
                    break
            else:  # (the common call, wp.vec3(1.0, 2.0, 3.0): every component as a Python number)
                return new_value(fast[2], self, np.array(args, dtype=fast[1]))
        elif fast is None:
            _EVERY_COMPONENT[self] = (self.num_components if self.dtype.is_float and self.dtype.name != "bfloat16"
                                      else -1, self.dtype.np_dtype, value_class(self))
        return CompositeValue(self, components(self, args, kwargs))

    def from_ptr(self, ptr):
        """The value stored at address `ptr` (Warp's `vec3.from_ptr`)."""
        return from_ptr(self, ptr)

    def __instancecheck__(self, value) -> bool:  # isinstance(v, weft.vec3), as with Warp's classes
        return isinstance(value, CompositeValue) and value.type is self

    def __subclasscheck__(self, cls) -> bool:  # issubclass(type(v), weft.vec3)
        return isinstance(cls, type) and issubclass(cls, CompositeValue) and getattr(cls, "_weft_type", None) is self


def _check_rank(shape):
    if len(shape) != 2:
        raise ValueError(f"Matrix shape must have exactly two dimensions, got {len(shape)} "
                         f"dimension{'' if len(shape) == 1 else 's'} in shape {tuple(shape)!r}")


def _derived(name: str, bases: tuple):
    """A class statement deriving from a composite type (Warp programs name types this way:
    `class vec5(wp.types.vector(length=5, dtype=float)): pass`) binds the name to that type."""
    if len(bases) != 1:
        raise TypeError(f"class {name}: a composite type derives from exactly one composite type")
    return bases[0]


class Vector(_ValueType):
    """`length` components of scalar `dtype`. `flavor` is 'vec', 'quat' or 'transform'."""

    _cache: dict = {}

    def __new__(cls, length: int, dtype: Scalar, flavor: str = "vec"):
        if isinstance(length, str) and isinstance(dtype, tuple):  # `class vec5(vector(5, float))`
            return _derived(length, dtype)
        dtype = PYTHON_TYPES.get(dtype, dtype)
        if not isinstance(dtype, Scalar):
            raise TypeError(f"vector components must be a scalar type, got {dtype!r}")
        key = (int(length), dtype, flavor)
        if key[0] < 0:
            raise ValueError(f"a vector has a length of 0 or more, got length={length}")
        if key not in cls._cache:
            self = super().__new__(cls)
            self.length, self.dtype, self.flavor = key
            self.name = self.__name__ = _vector_name(*key)
            self.size = self.length * dtype.size
            self.shape = (self.length,)
            cls._cache[key] = self
        return cls._cache[key]

    def __init__(self, *args, **kwargs):
        pass

    def __class_getitem__(cls, params):  # Vector[wp.float32, Literal[3]] (Warp's subscript form)
        return _subscript(cls, params, ("dtype", "length"), lambda dtype, n: Vector(n, dtype))

    @property
    def num_components(self) -> int:
        return self.length

    @property
    def np_shape(self) -> tuple:
        return (self.length,)

    @property
    def _wp_generic_type_str_(self) -> str:
        return {"vec": "vec_t", "quat": "quat_t", "transform": "transform_t"}[self.flavor]

    @property
    def _wp_type_params_(self) -> list:
        return [self.length, self.dtype] if self.flavor == "vec" else [self.dtype]

    @property
    def _wp_generic_type_hint_(self):
        """The generic family this type belongs to (`Vector`, `Quaternion`, `Transformation`):
        `Vector[float32, Literal[3]]` names this type again."""
        return {"vec": Vector, "quat": Quaternion, "transform": Transformation}[self.flavor]

    def __reduce__(self):
        return (Vector, (self.length, self.dtype, self.flavor))


class Matrix(_ValueType):
    """A `rows` x `cols` matrix of scalar `dtype`, stored row-major."""

    _cache: dict = {}

    def __new__(cls, shape: tuple, dtype: Scalar, *namespace):
        if isinstance(shape, str) and isinstance(dtype, tuple):  # `class m(matrix((2, 3), float))`
            return _derived(shape, dtype)
        dtype = PYTHON_TYPES.get(dtype, dtype)
        if not isinstance(dtype, Scalar):
            raise TypeError(f"matrix components must be a scalar type, got {dtype!r}")
        _check_rank(shape)
        rows, cols = (int(shape[0]), int(shape[1]))
        if rows < 0 or cols < 0:
            raise ValueError(f"a matrix shape cannot be negative, got shape={tuple(shape)}")
        key = (rows, cols, dtype)
        if key not in cls._cache:
            self = super().__new__(cls)
            self.rows, self.cols, self.dtype = key
            self.name = self.__name__ = _matrix_name(rows, cols, dtype)
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

    _wp_generic_type_str_ = "mat_t"

    @property
    def _wp_generic_type_hint_(self):
        return Matrix

    @property
    def _wp_type_params_(self) -> list:
        return [self.rows, self.cols, self.dtype]

    def __class_getitem__(cls, params):  # Matrix[wp.float32, Literal[3], Literal[3]]
        return _subscript(cls, params, ("dtype", "rows", "cols"), lambda dtype, r, c: Matrix((r, c), dtype))

    def row_type(self) -> Vector:
        return Vector(self.cols, self.dtype)

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


_SUFFIX = {"int8": "b", "uint8": "ub", "int16": "s", "uint16": "us", "int32": "i", "uint32": "ui",
           "int64": "l", "uint64": "ul", "float16": "h", "float32": "f", "float64": "d"}


def _vector_name(length: int, dtype: Scalar, flavor: str) -> str:
    suffix = _SUFFIX.get(dtype.name)
    if flavor == "vec":
        if length == 6 and dtype.is_float and suffix:
            return "spatial_vector" + suffix
        return f"vec{length}{suffix}" if suffix and length in (2, 3, 4) else f"vector({length}, {dtype.name})"
    return flavor + (suffix or f"_{dtype.name}")


def _matrix_name(rows: int, cols: int, dtype: Scalar) -> str:
    suffix = _SUFFIX.get(dtype.name) if dtype.is_float else None
    if suffix and rows == cols == 6:
        return "spatial_matrix" + suffix
    if suffix and rows == cols and rows in (2, 3, 4):
        return f"mat{rows}{cols}{suffix}"
    return f"matrix(({rows}, {cols}), {dtype.name})"


def vector(length, dtype=float32):
    """The vector type of `length` components of `dtype` (Warp's `wp.vec(length, dtype)`).
    With `Any` (or `Int`/`Float`/`Scalar`) for either, a generic func annotation."""
    dtype = PYTHON_TYPES.get(dtype, dtype) if isinstance(dtype, type) else dtype
    if is_any(length) or is_any(dtype) or isinstance(dtype, TypePattern):
        return VectorPattern(length, dtype, "vec")
    return Vector(length, dtype)


def matrix(shape=(typing.Any, typing.Any), dtype=float32):
    """The matrix type of `shape = (rows, cols)` (Warp's `wp.mat(shape, dtype)`), or a
    generic func annotation where a dimension or the dtype is `Any`."""
    _check_rank(shape)
    rows, cols = shape
    dtype = PYTHON_TYPES.get(dtype, dtype) if isinstance(dtype, type) else dtype
    if is_any(rows) or is_any(cols) or is_any(dtype) or isinstance(dtype, TypePattern):
        return MatrixPattern(rows, cols, dtype)
    return Matrix(shape, dtype)


def quaternion(dtype=typing.Any):
    """The quaternion type of `dtype` components (x, y, z, w); `Any`: a generic annotation."""
    if is_any(dtype) or isinstance(dtype, TypePattern):
        return VectorPattern(4, dtype, "quat")
    return Vector(4, dtype, "quat")


def transform_part_type(t: Vector, name: str) -> Vector:
    """The type of part `name` of transform type `t`: 'p' its translation (a vec3), 'q' its
    rotation (a quaternion)."""
    return Vector(3, t.dtype) if name == "p" else Vector(4, t.dtype, "quat")


def transformation(dtype=typing.Any):
    """A rigid transform: position (3) then rotation quaternion (4), as Warp lays it out."""
    if is_any(dtype) or isinstance(dtype, TypePattern):
        return VectorPattern(7, dtype, "transform")
    return Vector(7, dtype, "transform")


class Quaternion:
    """`Quaternion[dtype]`: Warp's subscript form of `quaternion(dtype)`."""

    def __class_getitem__(cls, params):
        return _subscript(cls, params, ("dtype",), quaternion)


class Transformation:
    """`Transformation[dtype]`: Warp's subscript form of `transformation(dtype)`."""

    def __class_getitem__(cls, params):
        return _subscript(cls, params, ("dtype",), transformation)


from .values import (  # noqa: E402, F401 - (they use the types above)
    CompositeValue,
    cast_components,
    components,
    from_ptr,
    new_value,
    value_class,
)

#: composite type -> (components taken one by one as Python numbers, or -1; numpy dtype;
#: value class): the fast path of a constructor call
_EVERY_COMPONENT: dict = {}


def fills_with_deprecation(value) -> bool:
    """Whether one `value` still fills every component of a composite (with a deprecation
    warning), as in Warp: a bool (Python's, numpy's, weft's) or a numpy number that is not
    one of weft's own scalars (`weft.float32(1.5)`, refused as Warp refuses its own)."""
    if isinstance(value, (bool, np.bool_)):
        return True
    return isinstance(value, (np.integer, np.floating)) and not is_weft_scalar(value)


def deprecated_fill(value, t, what: str) -> np.ndarray:
    """The components of composite type `t` all set to one bool or numpy number (see
    `fills_with_deprecation`), with Warp's deprecation warning (`what`: "kernel parameter
    'v'", "struct field 'v'")."""
    from ..logger import log_warning
    log_warning(f"Implicit conversion from a value of type `{type(value).__name__}` to the composite type "
                f"`{t!r}` for {what} is deprecated. Construct the value explicitly, e.g.: `{t!r}(...)`.",
                category=DeprecationWarning, stacklevel=4)
    return np.full(t.num_components, value, dtype=t.dtype.np_dtype)
