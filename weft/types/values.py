"""Vector, matrix, quaternion and transform values in Python scope.

Calling a composite type in Python scope (`weft.vec3(1, 2, 3)`) builds a `CompositeValue`
backed by a flat numpy array of the component type. Its behaviour follows Warp's Python
scope: `v[i]` is a component, `v[a:b]` a new vector, `m[i]` a copy of row i, `m[i, j]` a
component; arithmetic as in kernels; wrong keys, values and argument counts raise with
Warp's messages.
"""

from __future__ import annotations

import ctypes
import numbers

import numpy as np

from .. import config
from .composite import Matrix, Vector, transform_part_type
from .scalars import SCALAR_VALUES, Scalar, bool_, float32, int32


class ShapeMismatch(ValueError, RuntimeError):
    """Python-scope operands of mismatched shapes (`mat33 * vec2`): Warp's RuntimeError too."""


class CallMismatch(TypeError, RuntimeError):
    """No overload of a builtin or func accepts these argument types (in Python scope: also
    an operator on two vectors/matrices that kernels refuse). A TypeError, as Python reports
    bad argument types; also a RuntimeError, which is what Warp code catches."""


def _mismatch(op: str, a, b):
    return CallMismatch(f"Couldn't find a function '{op}' compatible with the arguments "
                        f"'{_type_name(a)}, {_type_name(b)}'")


# Components of these types read back as Python numbers (as in Warp); others as values of
# the component type (numpy scalars)
_NATIVE = (int32, float32, bool_)


def cast_components(values, dtype: Scalar, wrap: bool = False) -> np.ndarray:
    """`values` (numbers, nested sequences or arrays) as a flat array of `dtype`, refusing
    what would change a value: a non-number (TypeError), a fraction for integer components
    (TypeError), and unless `wrap` an integer outside their range (ValueError). With `wrap`
    (an explicit conversion: a constructor, an assignment) integers wrap modulo 2**bits, as
    C's conversions and Warp's do."""
    try:
        if not isinstance(values, list):
            flat = np.ravel(np.asarray(values))
        elif all(type(v) is float or type(v) is int for v in values):  # (Python numbers: one conversion)
            flat = np.array(values)
        else:
            flat = np.concatenate([np.ravel(np.asarray(v)) for v in values])
    except ValueError:  # ragged nesting
        raise TypeError("not a flat list of numbers") from None
    if flat.dtype.name == "bfloat16":  # (ml_dtypes' type: numpy's kind for it is 'V')
        flat = flat.astype(np.float32)
    if flat.dtype.kind not in "biuf":
        raise TypeError(f"components must be numbers, not {flat.dtype}")
    if dtype.is_int and flat.size and flat.dtype.kind in "iuf":
        if flat.dtype.kind == "f" and not np.array_equal(flat, np.trunc(flat)):
            raise TypeError(f"{dtype!r} components cannot hold the fractions in {flat.tolist()}")
        info = np.iinfo(dtype.np_dtype)
        outside = flat.min() < info.min or flat.max() > info.max
        if outside and (not wrap or (flat.dtype.kind == "f" and np.abs(flat).max() >= 2.0**63)):
            raise ValueError(f"{flat.tolist()} is out of the range of {dtype!r}")
        if outside and flat.dtype.kind == "f":
            flat = flat.astype(np.int64)
    if dtype.name == "bfloat16" and flat.dtype != np.float32:
        flat = flat.astype(np.float32)  # (rounded through float32, as Warp converts)
    return flat.astype(dtype.np_dtype)  # (integer to integer: modulo 2**bits)


_NUMBERS = (numbers.Number, *SCALAR_VALUES)


def is_scalar_value(x) -> bool:
    """A single number: a Python number, a numpy scalar, or a 0-d array or tensor (numpy's,
    PyTorch's, JAX's)."""
    if isinstance(x, _NUMBERS):
        return True
    if isinstance(x, np.ndarray):
        return x.ndim == 0
    return getattr(x, "shape", None) == () and hasattr(x, "__float__")


def _type_name(x) -> str:
    return x.type.name if isinstance(x, CompositeValue) else type(x).__name__


def _as_index(key):
    """`key` as an int if it is one (numpy integers included), else None."""
    return int(key) if isinstance(key, (int, np.integer)) else None


def _scalar_in(dtype: Scalar, value):
    """One component value for assignment into a composite of `dtype`."""
    if not is_scalar_value(value):
        raise TypeError(f"Expected to assign a `{dtype.name}` value but got `{_type_name(value)}` instead")
    return cast_components([value], dtype, wrap=True)[0]


def _sequence_in(dtype: Scalar, value, count: int):
    """Components for a slice of `count` components: one scalar (broadcast) or a sequence of
    `count` scalars."""
    if is_scalar_value(value):
        return cast_components([value], dtype, wrap=True)[0]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"Expected to assign a slice from a sequence of values but got "
                        f"`{_type_name(value)}` instead") from None
    for x in items:
        if not is_scalar_value(x):
            raise TypeError(f"Expected to assign a slice from a sequence of `{dtype.name}` values "
                            f"but got `{_type_name(x)}` instead")
    if len(items) != count:
        raise ValueError("Can only assign sequence of same size")
    return cast_components(items, dtype, wrap=True) if items else np.zeros(0, dtype.np_dtype)


# Construction ---------------------------------------------------------------------------------
def _sized(x) -> bool:
    return hasattr(x, "__len__") and not isinstance(x, (str, bytes))


def components(t, args, kwargs=None) -> np.ndarray:
    """The components of a value of composite type `t` built from constructor arguments:
    nothing (zeros; the identity transform), one scalar (broadcast), a value to convert or a
    sequence to expand, every component, or a matrix's rows; a transform also takes (p, q)."""
    n = t.num_components
    if len(args) == n and t.dtype.is_float and t.dtype.name != "bfloat16" and not kwargs \
            and all(type(a) is float or type(a) is int for a in args):  # (the common call, wp.vec3(1.0, 2.0, 3.0))
        return np.array(args, dtype=t.dtype.np_dtype)
    flavor = getattr(t, "flavor", None)
    if kwargs:
        if flavor != "transform":
            raise TypeError(f"{t.name}() takes its components positionally, got keyword(s) {', '.join(kwargs)}")
        return _transform_parts(t, *_bind_pq(args, kwargs))
    if len(args) == 0:
        flat = np.zeros(n, dtype=t.dtype.np_dtype)
        if flavor == "transform":
            flat[6] = 1  # the identity transform, as in Warp
        return flat
    if len(args) == 1:
        (arg,) = args
        if is_scalar_value(arg):
            return np.full(n, cast_components([arg], t.dtype, wrap=True)[0])
        if isinstance(arg, CompositeValue):
            if flavor == "transform" and arg.type.num_components == 3:  # a lone p (a vec3)
                return _transform_parts(t, arg, (0.0, 0.0, 0.0, 1.0))
            if arg.type.num_components != n:
                raise ValueError(f"cannot convert {arg.type.name} to {t.name}: they have "
                                 f"{arg.type.num_components} and {n} components")
            return cast_components(arg._data, t.dtype, wrap=True)
        if isinstance(arg, np.ndarray) and arg.size == n and arg.ndim <= 2 and n > 1:
            return cast_components(arg, t.dtype, wrap=True)
        if _sized(arg):
            if flavor == "transform" and len(arg) == 3:  # a lone p: the rotation stays identity
                return _transform_parts(t, arg, (0.0, 0.0, 0.0, 1.0))
            return components(t, tuple(arg))
        if flavor == "transform":
            raise TypeError(f"Invalid argument in transformation constructor: expected a scalar value, "
                            f"got {type(arg).__name__}")
        raise TypeError(f"Invalid argument in {t.name} constructor: expected a scalar value or a "
                        f"sequence, got {type(arg).__name__}")
    if flavor == "transform" and len(args) == 2:
        return _transform_parts(t, *args)
    if len(args) == n and all(is_scalar_value(a) for a in args):
        return cast_components(list(args), t.dtype, wrap=True)
    if isinstance(t, Matrix) and len(args) == t.rows:
        for row in args:
            if not _sized(row) or len(row) != t.cols:
                raise TypeError(f"Invalid argument in matrix constructor, expected row of length "
                                f"{t.cols}, got {row}")
        return cast_components(list(args), t.dtype, wrap=True)
    if isinstance(t, Vector) and len(args) != n and not any(_sized(a) for a in args):
        raise ValueError(f"{t.name}: Invalid number of arguments in vector constructor, expected {n} "
                         f"elements, got {len(args)}")
    if isinstance(t, Matrix) and not any(_sized(a) for a in args):
        raise ValueError(f"{t.name}: Invalid number of arguments in matrix constructor, expected {n} "
                         f"elements, got {len(args)}")
    # mixed scalars and sequences (weft also takes a matrix's rows as vectors): flattened
    flat = cast_components(list(args), t.dtype, wrap=True)
    if flat.size != n:
        kind = "matrix" if isinstance(t, Matrix) else "vector"
        raise ValueError(f"{t.name}: Invalid number of arguments in {kind} constructor, expected {n} "
                         f"elements, got {flat.size}")
    return flat


def _bind_pq(args, kwargs):
    """(p, q) of a transformation from positional and keyword arguments (defaults: the
    origin and the identity rotation)."""
    names = ("p", "q")
    for k in kwargs:
        if k not in names:
            raise TypeError(f"got an unexpected keyword argument '{k}'")
    for k in names[:len(args)]:
        if k in kwargs:
            raise TypeError(f"multiple values for argument '{k}'")
    if len(args) > 2:
        raise TypeError(f"too many positional arguments: a transformation takes (p, q), got {len(args)}")
    bound = {**dict(zip(names, args)), **kwargs}
    return bound.get("p", (0.0, 0.0, 0.0)), bound.get("q", (0.0, 0.0, 0.0, 1.0))


def _transform_parts(t, p, q) -> np.ndarray:
    if isinstance(p, CompositeValue) and isinstance(q, CompositeValue) and p._data.size == 3 \
            and q._data.size == 4 and p._data.dtype == q._data.dtype == t.dtype.np_dtype:
        return np.concatenate([p._data, q._data])  # (the common call: a vector and a quaternion)
    for name, part, size in (("p", p, 3), ("q", q, 4)):
        if not _sized(part):
            raise TypeError(f"Invalid argument '{name}' in transformation constructor: "
                            f"expected a sequence, got {type(part).__name__}")
        if len(part) != size:
            raise ValueError(f"the '{name}' of a transformation has {size} components, got {len(part)}")
    return cast_components([np.asarray(p), np.asarray(q)], t.dtype, wrap=True)


# What a value reads from its type, as instances of Warp's classes do
_TYPE_ATTRIBUTES = frozenset(("_length_", "_shape_", "_type_"))


# Values -----------------------------------------------------------------------------------------
def _plain(x):
    """A composite operand as its numpy components (composites refuse numpy's ufuncs)."""
    return x.numpy() if isinstance(x, CompositeValue) else x


def _numpy_scalar(x) -> bool:
    """A numpy scalar, as a ufunc sees one (numpy passes a scalar it compares as a 0-d array)."""
    return isinstance(x, np.generic) or isinstance(x, np.ndarray) and x.ndim == 0


#: numpy ufuncs that a numpy scalar and a value meet through the value's operators
_SCALAR_OPERATORS = {np.add: ("__add__", "__radd__"), np.subtract: ("__sub__", "__rsub__"),
                     np.multiply: ("__mul__", "__rmul__"), np.true_divide: ("__truediv__", "__rtruediv__"),
                     np.equal: ("__eq__", "__eq__"), np.not_equal: ("__ne__", "__ne__")}


class CompositeValue:
    """A vector/matrix value in Python scope, backed by a flat numpy array.

    `CompositeValue(t, flat)` makes a value of type `t` around `flat`. Its class is the one
    `value_class(t)` gives (a `VectorValue` or `MatrixValue` named after `t`), so that
    `type(v)` stands for `t` as Warp's classes do: `type(v)(1, 2, 3)` builds another value,
    and `weft.types` helpers read `type(v)` as `t`."""

    __slots__ = ("type", "_data", "__dict__")  # (other attributes may be set, as in Warp)

    def __new__(cls, *args, **kwargs):
        t = getattr(cls, "_weft_type", None)
        if t is None:  # CompositeValue(t, flat)
            t, flat = args
            cls = value_class(t)
        else:  # type(v)(...): the constructor of its type
            flat = components(t, args, kwargs)
        self = object.__new__(cls)
        object.__setattr__(self, "type", t)
        object.__setattr__(self, "_data", flat)
        return self

    def __init__(self, *args, **kwargs):
        pass  # (made by __new__)

    def numpy(self) -> np.ndarray:
        return self._data.reshape(self.type.np_shape)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy() if dtype is None else self.numpy().astype(dtype)
        return a.copy() if copy and a.base is not None else a

    def _element(self, raw):
        """A component as Python scope reads it (see `_NATIVE`)."""
        if config.legacy_scalar_return_types or self.type.dtype in _NATIVE:
            return raw.item()
        return raw

    def _element_repr(self, raw) -> str:
        if self.type.dtype in _NATIVE:
            return repr(raw.item())
        return f"{self.type.dtype.name}({raw.item()!r})"

    def __reduce__(self):  # copies and pickles own their components
        return (CompositeValue, (self.type, self._data.copy()))

    def __getattr__(self, name):
        if name.startswith("__") or name in CompositeValue.__slots__:
            raise AttributeError(name)  # (`type` may be unset yet, during unpickling)
        if name in _TYPE_ATTRIBUTES or name.startswith("_wp_"):  # Warp's class attributes
            return getattr(self.type, name)
        index = _component_index(self.type, name)
        if index is None:
            raise AttributeError(f"'{self.type!r}' object has no attribute '{name}'")
        if isinstance(index, slice):  # a transform's p / q
            return CompositeValue(transform_part_type(self.type, name), self._data[index].copy())
        return self._element(self._data[index])

    def __setattr__(self, name, value):
        if name in CompositeValue.__slots__:
            object.__setattr__(self, name, value)
            return
        index = _component_index(self.type, name)
        if index is None:
            if isinstance(self.type, Vector) and name and not name.strip("xyzw"):
                # a swizzle or a component the vector lacks: no attribute to assign
                raise AttributeError(f"'{self.type!r}' object has no attribute '{name}'")
            object.__setattr__(self, name, value)
        elif isinstance(index, slice):
            self._data[index] = _sequence_in(self.type.dtype, value, index.stop - index.start)
        else:
            self._data[index] = _scalar_in(self.type.dtype, value)

    def _wrap(self, result):
        return CompositeValue(self.type, np.ascontiguousarray(result, self.type.dtype.np_dtype).ravel())

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """numpy functions of values (`np.sin(v)`, `np.sum(v)`, `np.isfinite(v)`, `array + v`)
        see each value as its array of components and give arrays, as Warp's values (ctypes
        arrays) do; arithmetic with a numpy scalar keeps the value (`wp.float32(2) * v` is a
        vector: weft's scalars are numpy scalars), and `==`/`!=` with one is the value's bool."""
        names = _SCALAR_OPERATORS.get(ufunc)
        if names is not None and method == "__call__" and not kwargs and len(inputs) == 2:
            a, b = inputs
            if a is self and _numpy_scalar(b):
                return getattr(self, names[0])(b)
            if b is self and _numpy_scalar(a):
                return getattr(self, names[1])(a)

        if "out" in kwargs:
            kwargs["out"] = tuple(_plain(x) for x in kwargs["out"])
        return getattr(ufunc, method)(*(_plain(x) for x in inputs), **kwargs)

    def _same_type(self, op: str, other):
        """Kernels add/subtract only values of one type (vec3f + vec3d is refused)."""
        if isinstance(other, CompositeValue) and other.type is not self.type:
            raise _mismatch(op, self, other)

    def __add__(self, other):
        self._same_type("add", other)
        return self._wrap(self.numpy() + np.asarray(other))

    def __radd__(self, other):
        return self.__add__(other)

    def __sub__(self, other):
        self._same_type("sub", other)
        return self._wrap(self.numpy() - np.asarray(other))

    def __rsub__(self, other):
        return self._wrap(np.asarray(other) - self.numpy())

    def _scalar_kind(self, op: str, other):
        """An integer composite scales by integers only, as in kernels (truncating a float
        scale would be a silent wrong answer)."""
        if isinstance(other, (float, np.floating)) and not getattr(self.type.dtype, "is_float", True):
            raise TypeError(f"Couldn't find a function '{op}' compatible with the arguments "
                            f"'{self.type!r}, float': scale an integer {self.type!r} by an integer, or "
                            "convert it to a float type first")

    def __mul__(self, other):
        if isinstance(other, CompositeValue):
            return _product(self, other, "*")
        self._scalar_kind("mul", other)
        return self._wrap(self.numpy() * other)

    def __rmul__(self, other):
        self._scalar_kind("mul", other)
        return self._wrap(other * self.numpy())

    def __matmul__(self, other):
        return _product(self, other, "@") if isinstance(other, CompositeValue) else NotImplemented

    def __truediv__(self, other):
        self._scalar_kind("div", other)
        return self._wrap(self.numpy() / _plain(other))

    def __rtruediv__(self, other):
        self._scalar_kind("div", other)
        return self._wrap(_plain(other) / self.numpy())

    def __mod__(self, other):
        self._same_type("mod", other)
        return self._wrap(np.fmod(self.numpy(), _plain(other)))  # C's sign rule, as in kernels

    def __rmod__(self, other):
        return self._wrap(np.fmod(_plain(other), self.numpy()))

    def __pos__(self):
        return self._wrap(self.numpy())

    def __neg__(self):
        return self._wrap(-self.numpy())

    def __eq__(self, other):
        try:
            other = np.asarray(other)
        except (TypeError, ValueError):
            return False
        if other.dtype == object:
            return False
        if self._data.size == 0 and other.size == 0:  # (empty slices of any shape, as in kernels and Warp)
            return True
        return bool(np.array_equal(self.numpy(), other))

    def __ne__(self, other):
        return not self.__eq__(other)

    def __bytes__(self):
        """The components' bytes, as the value is laid out in an array."""
        return self._data.tobytes()

    def __hash__(self):
        return hash((self.type, self._data.tobytes()))


class VectorValue(CompositeValue):
    """A vector, quaternion or transform value: `v[i]`, `v[a:b]` (a new vector), `v.x`."""

    __slots__ = ()

    def __len__(self):
        return self.type.length

    def __iter__(self):
        return (self._element(x) for x in self._data)

    def __getitem__(self, key):
        i = _as_index(key)
        if i is not None:
            return self._element(self._data[i])
        if isinstance(key, slice):
            part = self._data[key]
            return CompositeValue(Vector(len(part), self.type.dtype), part.copy())
        raise KeyError(f"Invalid key {key}, expected int or slice")

    def __setitem__(self, key, value):
        i = _as_index(key)
        if i is not None:
            self._data[i] = _scalar_in(self.type.dtype, value)
        elif isinstance(key, slice):
            count = len(range(*key.indices(self.type.length)))
            self._data[key] = _sequence_in(self.type.dtype, value, count)
        else:
            raise KeyError(f"Invalid key {key}, expected int or slice")

    def __str__(self):
        return "[" + ", ".join(_component_text(x) for x in self._data) + "]"

    def __repr__(self):
        return f"{self.type.name}([{', '.join(self._element_repr(x) for x in self._data)}])"


class MatrixValue(CompositeValue):
    """A matrix value: `m[i]` (a copy of row i, as a vector), `m[i, j]`, `m[a:b]`,
    `m[i, a:b]`; `get_row`/`set_row`/`get_col`/`set_col`."""

    __slots__ = ()

    def __len__(self):
        return self.type.rows

    def __iter__(self):
        return (self.get_row(r) for r in range(self.type.rows))

    def _row_index(self, r, what="row"):
        n = self.type.rows if what == "row" else self.type.cols
        r = _as_index(r)
        if r is None or not -n <= r < n:
            raise IndexError(f"Invalid {what} index")
        return r + n if r < 0 else r

    def get_row(self, r) -> CompositeValue:
        """Row `r` (negative counts from the end) as a new vector."""
        return CompositeValue(self.type.row_type(), self.numpy()[self._row_index(r)].copy())

    def get_col(self, c) -> CompositeValue:
        """Column `c` (negative counts from the end) as a new vector."""
        return CompositeValue(Vector(self.type.rows, self.type.dtype),
                              self.numpy()[:, self._row_index(c, "column")].copy())

    def set_row(self, r, v):
        """Set row `r` to `v`: one scalar for every element or one value per column."""
        self.numpy()[self._row_index(r)] = _sequence_in(self.type.dtype, v, self.type.cols)

    def set_col(self, c, v):
        """Set column `c` to `v`: one scalar for every element or one value per row."""
        self.numpy()[:, self._row_index(c, "column")] = _sequence_in(self.type.dtype, v, self.type.rows)

    def _key(self, key):
        if isinstance(key, tuple):
            if len(key) != 2:
                raise KeyError(f"Invalid key, expected one or two indices, got {len(key)}")
            return tuple(k if isinstance(k, slice) else self._checked(k, axis) for axis, k in enumerate(key))
        if _as_index(key) is not None or isinstance(key, slice):
            return key
        raise KeyError(f"Invalid key {key}, expected int or pair of ints")

    def _checked(self, k, axis):
        i = _as_index(k)
        if i is None:
            raise KeyError(f"Invalid key {k}, expected int or slice")
        n = self.type.np_shape[axis]
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range for a matrix dimension of {n}")
        return i

    def __getitem__(self, key):
        key = self._key(key)
        if not isinstance(key, tuple):
            if isinstance(key, slice):
                rows = self.numpy()[key]
                return CompositeValue(Matrix(rows.shape, self.type.dtype), rows.ravel().copy())
            return self.get_row(key)
        part = self.numpy()[key]
        if part.ndim == 0:
            return self._element(part[()])
        if part.ndim == 1:
            return CompositeValue(Vector(part.size, self.type.dtype), part.copy())
        return CompositeValue(Matrix(part.shape, self.type.dtype), part.ravel().copy())

    def __setitem__(self, key, value):
        key = self._key(key)
        if not isinstance(key, tuple):
            if isinstance(key, slice):
                rows = self.numpy()[key]
                self.numpy()[key] = _block_in(self.type.dtype, value, rows.shape)
            else:
                self.set_row(key, value)
            return
        target = self.numpy()[key]
        if target.ndim == 0:
            if not is_scalar_value(value) and np.ndim(value) > 0:
                raise RuntimeError(f"The provided value is expected to be a scalar but got an object "
                                   f"of shape {np.shape(value)} instead")
            self.numpy()[key] = _scalar_in(self.type.dtype, value)
        else:
            self.numpy()[key] = _block_in(self.type.dtype, value, target.shape)

    def __str__(self):
        rows = ("[" + ", ".join(_component_text(x) for x in row) + "]" for row in self.numpy())
        return "[" + ",\n ".join(rows) + "]"

    def __repr__(self):
        rows = ("[" + ", ".join(self._element_repr(x) for x in row) + "]" for row in self.numpy())
        return f"{self.type.name}([{', '.join(rows)}])"


_VALUE_CLASSES: dict = {}


class _ValueClass(type):
    """The metaclass of the value classes: `type(v)` stands for `v`'s weft type, as Warp's
    vector and matrix classes are its types: `type(v) == wp.vec3`, `{wp.vec3: ...}[type(v)]`
    and `type(v)._length_` work (`type(v) is wp.vec3` does not: weft's types are not classes)."""

    def _weft_type_of(cls):
        return next((k.__dict__["_weft_type"] for k in cls.__mro__ if "_weft_type" in k.__dict__), None)

    def __eq__(cls, other):
        t = _ValueClass._weft_type_of(cls)
        if t is None:
            return type.__eq__(cls, other)
        return other is t or (isinstance(other, _ValueClass) and _ValueClass._weft_type_of(other) is t)

    def __ne__(cls, other):
        equal = _ValueClass.__eq__(cls, other)
        return equal if equal is NotImplemented else not equal

    def __hash__(cls):
        t = _ValueClass._weft_type_of(cls)
        return hash(t) if t is not None else type.__hash__(cls)

    def __getattr__(cls, name):  # (Warp's class attributes: _length_, _shape_, _wp_scalar_type_, ...)
        t = _ValueClass._weft_type_of(cls)
        if t is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(t, name)


def new_value(cls, t, flat: np.ndarray):
    """A value of class `cls` (value_class(t)) holding components `flat`, made directly."""
    self = object.__new__(cls)
    object.__setattr__(self, "type", t)
    object.__setattr__(self, "_data", flat)
    return self


def value_class(t) -> type:
    """The class of Python-scope values of composite type `t` (one per type)."""
    cls = _VALUE_CLASSES.get(t)
    if cls is None:
        base = MatrixValue if isinstance(t, Matrix) else VectorValue
        cls = _ValueClass(t.name, (base,), {"__slots__": (), "_weft_type": t, "__module__": __name__,
                                            "__qualname__": t.name, "__doc__": f"A value of type {t.name}."})
        _VALUE_CLASSES[t] = cls
    return cls


def _block_in(dtype: Scalar, value, shape: tuple) -> np.ndarray:
    """Components for a block of a matrix of `shape`: one scalar or a value of that shape."""
    if is_scalar_value(value):
        return cast_components([value], dtype, wrap=True)[0]
    try:
        block = np.asarray(value)
    except ValueError:  # ragged
        block = None
    if block is None or block.size != int(np.prod(shape)) or (block.ndim > 1 and block.shape != shape):
        raise RuntimeError(f"The shape of the provided value ({np.shape(value) if block is not None else '?'}) "
                           f"isn't compatible with the given slice (expected {shape})")
    return cast_components(block, dtype, wrap=True).reshape(shape)


def from_ptr(t, ptr) -> CompositeValue:
    """A value of composite type `t` read from the memory at address `ptr` (Warp's
    `vec3.from_ptr`)."""
    if not ptr:
        raise RuntimeError("NULL pointer exception")
    raw = ctypes.string_at(ptr, t.size)
    return CompositeValue(t, np.frombuffer(raw, dtype=t.dtype.np_dtype).copy())


def _component_index(t, name):
    """Where attribute `name` lives in a value of type `t`: x/y/z/w of a vector, p/q of a
    transform (a slice), or None."""
    if not isinstance(t, Vector) or len(name) != 1:
        return None
    if t.flavor == "transform" and name in "pq":
        return slice(0, 3) if name == "p" else slice(3, 7)
    index = "xyzw".find(name)
    return index if 0 <= index < t.length else None


def _product(a: CompositeValue, b, op: str) -> CompositeValue:
    """`a * b` / `a @ b` of two composites as Warp reads them: matrix products (a vector on
    the left is a row), the quaternion product, the composition of transforms."""
    ta, tb = a.type, b.type
    if tb.dtype is not ta.dtype:
        raise _mismatch("mul", a, b)
    if isinstance(ta, Matrix) or isinstance(tb, Matrix):
        if getattr(ta, "flavor", "vec") != "vec" or getattr(tb, "flavor", "vec") != "vec":
            raise _mismatch("mul", a, b)
        try:
            out = a.numpy() @ b.numpy()
        except ValueError:
            raise ShapeMismatch(f"shapes do not match: {ta!r} {op} {tb!r}") from None
        t = Matrix(out.shape, ta.dtype) if out.ndim == 2 else Vector(out.shape[0], ta.dtype)
        return CompositeValue(t, np.ascontiguousarray(out, ta.dtype.np_dtype).ravel())
    if op == "*" and ta is tb and ta.flavor == "quat":
        return CompositeValue(ta, _quat_mul(a._data, b._data).astype(ta.dtype.np_dtype))
    if op == "*" and ta is tb and ta.flavor == "transform":
        p1, q1, p2, q2 = a._data[:3], a._data[3:], b._data[:3], b._data[3:]
        flat = np.concatenate([p1 + _quat_rotate(q1, p2), _quat_mul(q1, q2)])
        return CompositeValue(ta, flat.astype(ta.dtype.np_dtype))
    raise CallMismatch(f"Couldn't find a function 'mul' compatible with the arguments '{ta!r}, {tb!r}'; "
                       f"use weft.dot or weft.cw_mul for products of two vectors")


def _cross(a, b) -> np.ndarray:
    """np.cross of two 3-vectors, the same products in the same order (np.cross costs 25 us
    of axis handling)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _quat_mul(q1, q2):
    """The Hamilton product of quaternions stored (x, y, z, w)."""
    v1, w1, v2, w2 = q1[:3], q1[3], q2[:3], q2[3]
    return np.concatenate([w1 * v2 + w2 * v1 + _cross(v1, v2), [w1 * w2 - v1 @ v2]])


def _quat_rotate(q, v):
    u, w = q[:3], q[3]
    return v * (2 * w * w - 1) + 2 * w * _cross(u, v) + 2 * u * (u @ v)


def _component_text(x) -> str:
    """A component as str() shows it: as a Python number, as Warp prints it (a float16
    exactly: 0.0999755859375); bfloat16 as its own str, which is how its components print."""
    return str(x) if x.dtype.name == "bfloat16" else str(x.item())
