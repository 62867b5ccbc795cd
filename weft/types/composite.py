"""Vector, matrix, quaternion, transform and tuple types.

A composite type is a fixed list of scalar components. Inside kernels its values are SSA
values (updated functionally); in Python scope calling the type builds a `CompositeValue`,
a small numpy-backed object that can be passed to kernels or stored in arrays.
Matrices are stored row-major, so a `mat33` is laid out like numpy's `(3, 3)` array.
"""

from __future__ import annotations

import typing

import ml_dtypes
import numpy as np

from .generic import MatrixPattern, TypePattern, VectorPattern, is_any
from .scalars import PYTHON_TYPES, Scalar, Type, float32


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


class Vector(Composite):
    """`length` components of scalar `dtype`. `flavor` is 'vec', 'quat' or 'transform'."""

    _cache: dict = {}

    def __new__(cls, length: int, dtype: Scalar, flavor: str = "vec"):
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

    def __call__(self, *args, **kwargs):
        if kwargs:
            if self.flavor != "transform":
                raise TypeError(f"{self.name}() takes its components positionally, got keyword(s) "
                                f"{', '.join(kwargs)}")
            args = _transform_parts(self.name, args, kwargs)
        return CompositeValue(self, _components(self, args))

    def __reduce__(self):
        return (Vector, (self.length, self.dtype, self.flavor))


def _transform_parts(name: str, args: tuple, kwargs: dict) -> tuple:
    """(p, q) of `transform(p=..., q=...)` (either may be positional, as Warp's), p
    defaulting to zero and q to the identity rotation."""
    import inspect
    signature = inspect.Signature([
        inspect.Parameter("p", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=(0.0, 0.0, 0.0)),
        inspect.Parameter("q", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=(0.0, 0.0, 0.0, 1.0))])
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{name}(): {e}") from None
    bound.apply_defaults()
    return tuple(bound.args)


class Matrix(Composite):
    """A `rows` x `cols` matrix of scalar `dtype`, stored row-major."""

    _cache: dict = {}

    def __new__(cls, shape: tuple, dtype: Scalar):
        dtype = PYTHON_TYPES.get(dtype, dtype)
        if not isinstance(dtype, Scalar):
            raise TypeError(f"matrix components must be a scalar type, got {dtype!r}")
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
    def _wp_type_params_(self) -> list:
        return [self.rows, self.cols, self.dtype]

    def __class_getitem__(cls, params):  # Matrix[wp.float32, Literal[3], Literal[3]]
        return _subscript(cls, params, ("dtype", "rows", "cols"), lambda dtype, r, c: Matrix((r, c), dtype))

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


def _components(t, args) -> np.ndarray:
    """Components of a composite built in Python scope from scalars, sequences or nothing."""
    n = t.num_components
    if len(args) == 0:
        flat = np.zeros(n, dtype=t.dtype.np_dtype)
        if getattr(t, "flavor", None) == "transform":
            flat[6] = 1  # the identity transform, as in Warp
        return flat
    if len(args) == 1 and np.ndim(args[0]) == 0 and n > 1:
        args = args * n  # broadcast a scalar
    flat = cast_components(list(args), t.dtype)
    if flat.size != n:
        raise ValueError(f"{t.name} takes {n} components, got {flat.size}")
    return flat


def cast_components(values, dtype: Scalar) -> np.ndarray:
    """`values` (numbers, nested sequences or arrays) as a flat array of `dtype`, refusing
    what would change a value silently: a non-number (TypeError), a fraction for integer
    components (TypeError), an integer outside their range (ValueError)."""
    try:
        flat = np.concatenate([np.ravel(np.asarray(v)) for v in values]) if isinstance(values, list) \
            else np.ravel(np.asarray(values))
    except ValueError:  # ragged nesting
        raise TypeError("not a flat list of numbers") from None
    if flat.dtype == ml_dtypes.bfloat16:  # (numpy's kind for it is 'V')
        flat = flat.astype(np.float32)
    if flat.dtype.kind not in "biuf":
        raise TypeError(f"components must be numbers, not {flat.dtype}")
    if dtype.is_int and flat.size and flat.dtype.kind in "iuf":
        if flat.dtype.kind == "f" and not np.array_equal(flat, np.trunc(flat)):
            raise TypeError(f"{dtype!r} components cannot hold the fractions in {flat.tolist()}")
        info = np.iinfo(dtype.np_dtype)
        if flat.min() < info.min or flat.max() > info.max:
            raise ValueError(f"{flat.tolist()} is out of the range of {dtype!r}")
    if dtype.np_dtype == ml_dtypes.bfloat16 and flat.dtype != np.float32:
        flat = flat.astype(np.float32)  # (rounded through float32, as Warp converts)
    return flat.astype(dtype.np_dtype)


class CompositeValue:
    """A vector/matrix value in Python scope, backed by a flat numpy array."""

    __slots__ = ("type", "_data", "__dict__")  # (other attributes may be set, as in Warp)

    def __init__(self, type_: Composite, flat: np.ndarray):
        self.type = type_
        self._data = flat

    def numpy(self) -> np.ndarray:
        return self._data.reshape(self.type.np_shape)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy() if dtype is None else self.numpy().astype(dtype)
        return a.copy() if copy and a.base is not None else a

    def __len__(self):
        return self.type.np_shape[0]

    def __getitem__(self, i):
        return self.numpy()[i]

    def __setitem__(self, i, v):
        self.numpy()[i] = v

    def __iter__(self):
        return iter(self.numpy())

    def __reduce__(self):  # copies and pickles own their components
        return (CompositeValue, (self.type, self._data.copy()))

    def __getattr__(self, name):
        if name.startswith("__") or name in CompositeValue.__slots__:
            raise AttributeError(name)  # (`type` may be unset yet, during unpickling)
        index = _component_index(self.type, name)
        if index is None:
            raise AttributeError(f"'{self.type!r}' object has no attribute '{name}'")
        if isinstance(index, slice):  # a transform's p / q
            return CompositeValue(_part_type(self.type, name), self._data[index].copy())
        return self._data[index]

    def __setattr__(self, name, value):
        if name in CompositeValue.__slots__:
            object.__setattr__(self, name, value)
            return
        index = _component_index(self.type, name)
        if index is None:
            if isinstance(self.type, Vector) and set(name) <= set("xyzw"):
                # a swizzle or a component the vector lacks: no attribute to assign
                raise AttributeError(f"'{self.type!r}' object has no attribute '{name}'")
            object.__setattr__(self, name, value)
        else:
            self._data[index] = np.ravel(value) if isinstance(index, slice) else value

    def _wrap(self, result):
        return CompositeValue(self.type, np.ascontiguousarray(result, self.type.dtype.np_dtype).ravel())

    # numpy scalars and arrays defer to these operators (`wp.float32(2) * v` is a vector)
    __array_ufunc__ = None

    def __add__(self, other):
        return self._wrap(self.numpy() + np.asarray(other))

    __radd__ = __add__

    def __sub__(self, other):
        return self._wrap(self.numpy() - np.asarray(other))

    def __rsub__(self, other):
        return self._wrap(np.asarray(other) - self.numpy())

    def __mul__(self, other):
        if isinstance(other, CompositeValue):
            return _product(self, other, "*")
        return self._wrap(self.numpy() * other)

    def __rmul__(self, other):
        return self._wrap(other * self.numpy())

    def __matmul__(self, other):
        return _product(self, other, "@") if isinstance(other, CompositeValue) else NotImplemented

    def __truediv__(self, other):
        return self._wrap(self.numpy() / other)

    def __rtruediv__(self, other):
        return self._wrap(other / self.numpy())

    def __mod__(self, other):
        return self._wrap(np.fmod(self.numpy(), other))  # C's sign rule, as in kernels

    def __pos__(self):
        return self._wrap(self.numpy())

    def __neg__(self):
        return self._wrap(-self.numpy())

    def __eq__(self, other):
        return bool(np.array_equal(self.numpy(), np.asarray(other)))

    def __hash__(self):
        return hash((self.type, self._data.tobytes()))

    def __repr__(self):
        return f"{self.type.name}({', '.join(repr(v.item()) for v in self._data)})"


def _component_index(t, name):
    """Where attribute `name` lives in a value of type `t`: x/y/z/w of a vector, p/q of a
    transform (a slice), or None."""
    if not isinstance(t, Vector) or len(name) != 1:
        return None
    if t.flavor == "transform" and name in "pq":
        return slice(0, 3) if name == "p" else slice(3, 7)
    index = "xyzw".find(name)
    return index if 0 <= index < t.length else None


def _part_type(t: Vector, name: str) -> Vector:
    return Vector(3, t.dtype) if name == "p" else Vector(4, t.dtype, "quat")


def _product(a: CompositeValue, b, op: str) -> CompositeValue:
    """`a * b` / `a @ b` of two composites as Warp reads them: matrix products (a vector on
    the left is a row), the quaternion product, the composition of transforms."""
    ta, tb = a.type, b.type
    if tb.dtype is not ta.dtype:
        raise TypeError(f"cannot multiply {ta!r} by {tb!r} (component types differ)")
    if isinstance(ta, Matrix) or isinstance(tb, Matrix):
        if getattr(ta, "flavor", "vec") != "vec" or getattr(tb, "flavor", "vec") != "vec":
            raise TypeError(f"cannot multiply {ta!r} by {tb!r}")
        try:
            out = a.numpy() @ b.numpy()
        except ValueError:
            raise ValueError(f"shapes do not match: {ta!r} {op} {tb!r}") from None
        t = Matrix(out.shape, ta.dtype) if out.ndim == 2 else Vector(out.shape[0], ta.dtype)
        return CompositeValue(t, np.ascontiguousarray(out, ta.dtype.np_dtype).ravel())
    if op == "*" and ta is tb and ta.flavor == "quat":
        return CompositeValue(ta, _quat_mul(a._data, b._data).astype(ta.dtype.np_dtype))
    if op == "*" and ta is tb and ta.flavor == "transform":
        p1, q1, p2, q2 = a._data[:3], a._data[3:], b._data[:3], b._data[3:]
        flat = np.concatenate([p1 + _quat_rotate(q1, p2), _quat_mul(q1, q2)])
        return CompositeValue(ta, flat.astype(ta.dtype.np_dtype))
    raise TypeError(f"cannot multiply {ta!r} {op} {tb!r}; use weft.dot or weft.cw_mul for "
                    f"products of two vectors")


def _quat_mul(q1, q2):
    """The Hamilton product of quaternions stored (x, y, z, w)."""
    v1, w1, v2, w2 = q1[:3], q1[3], q2[:3], q2[3]
    return np.concatenate([w1 * v2 + w2 * v1 + np.cross(v1, v2), [w1 * w2 - v1 @ v2]])


def _quat_rotate(q, v):
    u, w = q[:3], q[3]
    return v * (2 * w * w - 1) + 2 * w * np.cross(u, v) + 2 * u * (u @ v)


def vector(length, dtype=float32):
    """The vector type of `length` components of `dtype` (Warp's `wp.vec(length, dtype)`).
    With `Any` (or `Int`/`Float`/`Scalar`) for either, a generic func annotation."""
    if is_any(length) or is_any(dtype) or isinstance(dtype, TypePattern):
        return VectorPattern(length, dtype, "vec")
    return Vector(length, dtype)


def matrix(shape=(typing.Any, typing.Any), dtype=float32):
    """The matrix type of `shape = (rows, cols)` (Warp's `wp.mat(shape, dtype)`), or a
    generic func annotation where a dimension or the dtype is `Any`."""
    rows, cols = shape
    if is_any(rows) or is_any(cols) or is_any(dtype) or isinstance(dtype, TypePattern):
        return MatrixPattern(rows, cols, dtype)
    return Matrix(shape, dtype)


def quaternion(dtype=typing.Any):
    """The quaternion type of `dtype` components (x, y, z, w); `Any`: a generic annotation."""
    if is_any(dtype) or isinstance(dtype, TypePattern):
        return VectorPattern(4, dtype, "quat")
    return Vector(4, dtype, "quat")


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
