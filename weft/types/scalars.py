"""Scalar types: bool, signed and unsigned integers, and floats.

Each scalar type is one `Scalar` instance; identity is equality. Calling a scalar type in
Python scope converts a number (`weft.float32(1.5)`); inside a kernel it is a cast.
"""

from __future__ import annotations

import typing

import numpy as np


class Type:
    """Base of every weft value type (scalar, vector, matrix, struct, array, tuple)."""

    __slots__ = ()  # (array annotations are slotted; the other kinds keep a __dict__)

    is_scalar = False
    is_composite = False  # a value made of components: vector, matrix, struct, tuple
    is_array = False

    def __repr__(self) -> str:
        return self.name  # type: ignore[attr-defined]

    # `wp.vec3 | None`, `float | wp.array[float]`: unions for Python-scope annotations (as
    # Warp's types, which are classes, make them)
    def __or__(self, other):
        return typing.Union[self, other]  # noqa: UP007

    def __ror__(self, other):
        return typing.Union[other, self]  # noqa: UP007


class Scalar(Type):
    """A scalar type. `kind` is 'b' (bool), 'i' (signed), 'u' (unsigned) or 'f' (float)."""

    is_scalar = True
    _length_ = 1  # (Warp's scalar classes carry it, as its composite types do)

    def __new__(cls, name, kind, bits=None, np_dtype=None):
        if isinstance(kind, tuple):  # `class MyFloat(weft.float32): ...` names the same type
            if len(kind) != 1 or not isinstance(kind[0], Scalar):
                raise TypeError(f"class {name}: a scalar type derives from exactly one scalar type")
            return kind[0]
        return super().__new__(cls)

    def __init__(self, name: str, kind: str, bits: int = None, np_dtype=None):
        if isinstance(kind, tuple):  # (a class statement, see __new__)
            return
        self.name = name
        self.kind = kind
        self.bits = bits
        self.np_dtype = np.dtype(np_dtype)
        self.size = self.np_dtype.itemsize
        self.__name__ = name
        self._value_class = _value_class(name, self.np_dtype.type)

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in "iu"

    @property
    def is_signed(self) -> bool:
        return self.kind in "if"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def __numpy_dtype__(self) -> np.dtype:
        """numpy's dtype protocol: `np.zeros(3, dtype=weft.float32)`, `np.dtype(weft.int8)`.
        bfloat16 has no numpy dtype of its own (as in Warp)."""
        if self.np_dtype.kind not in "biuf":
            raise AttributeError("__numpy_dtype__")
        return self.np_dtype

    def __call__(self, value=0):
        """Convert a Python number to this type: a numpy scalar of its dtype that also has
        Warp's `.value`, the Python number (bfloat16 is rounded through float32, as Warp and
        kernels convert). An integer outside an integer type's range wraps modulo 2**bits, as
        C's conversions (and Warp's) do: `uint32(-1)` is 0xFFFFFFFF."""
        make = self._value_class
        if self.kind in "iu" and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return make(wrap_int(int(value), self.bits, self.kind == "i"))
        if self.name == "bfloat16" and not isinstance(value, (str, bytes)):
            with np.errstate(invalid="ignore", over="ignore"):
                return make(np.float32(value))
        return make(value)

    @property
    def _type_(self):
        """The ctypes type of one value (Warp's: float16 and bfloat16 as 16-bit unsigned ints)."""
        from .layout import ctype_of
        return ctype_of(self)

    def __reduce__(self):
        return (scalar_by_name, (self.name,))

    def __instancecheck__(self, value) -> bool:
        """`isinstance(x, weft.float32)`: whether `x` is a value of this type (what calling
        the type returns, a numpy scalar of its dtype); Python numbers are not."""
        return isinstance(value, SCALAR_VALUES) and value.dtype == self.np_dtype


def _no_int_pow(a, b):
    names = ", ".join(type(x).__name__ for x in (a, b))
    raise TypeError(f"Couldn't find a function 'pow' compatible with the arguments '{names}' "
                    "(pow takes floats)")


def _integral(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _c_div(a, b, base):
    """`a / b` of two integers as kernels (and Warp's scalar objects) divide them: truncated
    toward zero, in `base`; with a float operand, numpy's true division. Other operands
    (vectors, arrays) are left to their own operators."""
    if not all(isinstance(x, (int, float, np.number)) for x in (a, b)):
        return NotImplemented
    if not (_integral(a) and _integral(b)):
        return np.true_divide(a, b)
    a, b = int(a), int(b)
    if b == 0:
        raise ZeroDivisionError("integer division by zero")
    q = abs(a) // abs(b)
    return np.array(q if (a < 0) == (b < 0) else -q).astype(base)[()]


def _c_mod(a, b, base):
    """`a % b` as kernels compute it (C's remainder: the sign of `a`; fmod for floats)."""
    if not all(isinstance(x, (int, float, np.number)) for x in (a, b)):
        return NotImplemented
    if issubclass(base, np.integer) and _integral(a) and _integral(b):
        a, b = int(a), int(b)
        if b == 0:
            raise ZeroDivisionError("integer modulo by zero")
        r = abs(a) % abs(b)
        return np.array(r if a >= 0 else -r).astype(base)[()]
    if issubclass(base, np.integer):
        return np.remainder(a, b)  # (an int with a float: numpy's, as before)
    return base(np.fmod(base(a), base(b)))


def _wrapping(op):
    """numpy's `op`, without its overflow warning: sums and products wrap (integers) or reach
    inf (floats) silently, as Warp's scalar objects and kernels do."""
    def quiet(*args):
        with np.errstate(over="ignore"):
            return op(*args)
    return quiet


def _value_class(name: str, base: type) -> type:
    """The class of the values `Scalar.__call__` returns: `base` (a numpy scalar class) with
    `.value`, the value as a Python number (what Warp's scalar objects carry); numpy
    arithmetic on them returns plain `base` values. numpy's bool_ (which makes only its two
    singletons) and ml_dtypes' bfloat16 make no instances of a subclass: their values are
    `BoxedScalar`s."""
    attrs = {"__slots__": (), "__repr__": lambda self: repr(base(self)),
             "value": property(lambda self: self.item(), doc="the value as a Python number")}
    if issubclass(base, np.integer):  # pow is a float builtin (as in kernels and Warp)
        attrs["__pow__"] = lambda self, other: _no_int_pow(self, other)
        attrs["__rpow__"] = lambda self, other: _no_int_pow(other, self)
        # / and % as in kernels (Warp's scalar objects compute them with its builtins)
        attrs["__truediv__"] = lambda self, other: _c_div(self, other, base)
        attrs["__rtruediv__"] = lambda self, other: _c_div(other, self, base)
    if issubclass(base, (np.integer, np.floating)):
        for op in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__neg__"):
            attrs[op] = _wrapping(getattr(base, op))
        attrs["__mod__"] = lambda self, other: _c_mod(self, other, base)
        attrs["__rmod__"] = lambda self, other: _c_mod(other, self, base)
    cls = type(name, (base,), attrs)
    return cls if type(cls(0)) is cls else _boxed_class(name, base)


# bool and bfloat16 values ---------------------------------------------------------------------
# numpy's bool_ and ml_dtypes' bfloat16 make no instances of subclasses, so their values are
# boxes: a numpy scalar with Warp's `.value`; numpy reads one through __array__, and weft's
# checks for numpy scalars take them (`SCALAR_VALUES`).
_OPERATORS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "divmod", "and", "or",
              "xor", "lshift", "rshift")
_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")


class BoxedScalar:
    """A bool or bfloat16 value (what calling `weft.bool` or `weft.bfloat16` gives): the
    numpy scalar `unbox()` with Warp's `.value`. Arithmetic and comparisons are the numpy
    scalar's (results are plain numpy values); a Python int too large for ml_dtypes meets a
    bfloat16 as a float, so one beyond the float range raises OverflowError (as it does for
    the other float types) instead of ml_dtypes' TypeError."""

    __slots__ = ("_v",)
    _base: type = None  # the numpy scalar class (set per subclass)

    def __init__(self, value=0):
        object.__setattr__(self, "_v", value if type(value) is self._base else self._base(value))

    @property
    def value(self):
        """The value as a Python number."""
        return self._v.item()

    def unbox(self):
        """The numpy scalar."""
        return self._v

    def __getattr__(self, name):  # dtype, item(), tobytes(), astype(), ...
        if name.startswith("__"):  # (numpy reads the value through __array__, not its scalar's protocols)
            raise AttributeError(name)
        return getattr(self._v, name)

    def __setattr__(self, name, value):
        raise AttributeError(f"'{self._base.__name__}' values are immutable")

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self._v)
        return a if dtype is None else a.astype(dtype)

    def __repr__(self):
        return repr(self._v)

    def __str__(self):
        return str(self._v)

    def __format__(self, spec):
        return format(self._v, spec)

    def __hash__(self):
        return hash(self._v)

    def __bool__(self):
        return bool(self._v)

    def __int__(self):
        return int(self._v)

    def __float__(self):
        return float(self._v)

    def __complex__(self):
        return complex(self._v)

    def __neg__(self):
        return -self._v

    def __pos__(self):
        return +self._v

    def __abs__(self):
        return abs(self._v)

    def __invert__(self):
        return ~self._v

    def __reduce__(self):
        return (_rebox, (self._scalar_name, self.value))


def _rebox(name: str, value):
    return scalar_by_name(name)(value)


def _forward(name: str):
    def method(self, other):
        f = getattr(self._v, name, None)  # (ml_dtypes' bfloat16 lacks some)
        if f is None:
            return NotImplemented
        if isinstance(other, BoxedScalar):
            other = other._v
        try:
            return f(other)
        except TypeError:  # ml_dtypes takes no int beyond int64: as a float (OverflowError past its range)
            if type(other) is not int or self._base is np.bool_:
                raise
            return f(float(other))
    method.__name__ = name
    return method


for _op in _OPERATORS:
    setattr(BoxedScalar, f"__{_op}__", _forward(f"__{_op}__"))
    setattr(BoxedScalar, f"__r{_op}__", _forward(f"__r{_op}__"))
for _op in _COMPARISONS:
    setattr(BoxedScalar, f"__{_op}__", _forward(f"__{_op}__"))


def _numpy_class(self):
    return self._base


def _boxed_class(name: str, base: type) -> type:
    attrs = {"__slots__": (), "_base": base, "_scalar_name": name, "__module__": __name__, "__qualname__": name}
    if base is np.bool_:
        # a bool value passes isinstance(x, np.bool_) as np.True_ does (as weakref.proxy's
        # objects pass for theirs); numpy's own checks are by C type, so they are not misled.
        # (Not for bfloat16: ml_dtypes would read such a value's memory as its own scalar's.)
        attrs["__class__"] = property(_numpy_class)
    return type(name, (BoxedScalar,), attrs)


#: What weft takes as a numpy scalar value: numpy's and the boxed ones
SCALAR_VALUES = (np.generic, BoxedScalar)


class _DeferredScalar(Scalar):
    """A scalar type whose numpy dtype comes from another package, imported when the dtype
    is first needed: bfloat16's from ml_dtypes (importing it costs `import weft` about 5 ms,
    and most programs never use bfloat16)."""

    def __init__(self, name: str, kind: str, bits: int, load_dtype):
        self.name, self.kind, self.bits, self.size = name, kind, bits, bits // 8
        self.__name__ = name
        self._load_dtype = load_dtype
        self._resolved = None

    def _resolve(self) -> tuple:
        if self._resolved is None:
            np_dtype = np.dtype(self._load_dtype())
            self._resolved = (np_dtype, _value_class(self.name, np_dtype.type))
            _BY_NP[np_dtype] = self
            for hook in _ON_RESOLVE:
                hook(self)
        return self._resolved

    @property
    def np_dtype(self) -> np.dtype:
        return self._resolve()[0]

    @property
    def _value_class(self) -> type:
        return self._resolve()[1]


#: Functions called with a deferred scalar type once its dtype is known (tables keyed by
#: numpy dtypes add it then: introspect.py's).
_ON_RESOLVE: list = []


def _ml_dtypes_bfloat16():
    import ml_dtypes
    return ml_dtypes.bfloat16


def is_weft_scalar(value) -> bool:
    """Whether `value` was made by calling a weft scalar type (`weft.float32(1.5)`), not a
    plain numpy scalar (bool and bfloat16 values: their `BoxedScalar`s)."""
    t = _BY_NP.get(getattr(value, "dtype", None)) if isinstance(value, SCALAR_VALUES) else None
    return t is not None and type(value) is t._value_class and t._value_class is not t.np_dtype.type


def wrap_int(value: int, bits: int, signed: bool) -> int:
    """`value` reduced modulo 2**bits into the range of a `bits`-bit integer."""
    value %= 1 << bits
    return value - (1 << bits) if signed and value >= 1 << (bits - 1) else value


bool_ = Scalar("bool", "b", 8, np.bool_)
int8 = Scalar("int8", "i", 8, np.int8)
int16 = Scalar("int16", "i", 16, np.int16)
int32 = Scalar("int32", "i", 32, np.int32)
int64 = Scalar("int64", "i", 64, np.int64)
uint8 = Scalar("uint8", "u", 8, np.uint8)
uint16 = Scalar("uint16", "u", 16, np.uint16)
uint32 = Scalar("uint32", "u", 32, np.uint32)
uint64 = Scalar("uint64", "u", 64, np.uint64)
float16 = Scalar("float16", "f", 16, np.float16)
float32 = Scalar("float32", "f", 32, np.float32)
float64 = Scalar("float64", "f", 64, np.float64)
# bfloat16: numpy has no such dtype; ml_dtypes (a dependency of jax) provides it
bfloat16 = _DeferredScalar("bfloat16", "f", 16, _ml_dtypes_bfloat16)

SCALARS = (bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
           float16, bfloat16, float32, float64)
_BY_NAME = {s.name: s for s in SCALARS}
_BY_NP = {s.np_dtype: s for s in SCALARS if s is not bfloat16}  # (bfloat16's: when it is known)


def scalar_by_name(name: str) -> Scalar:
    return _BY_NAME[name]


def scalar_from_numpy(dtype) -> Scalar | None:
    dtype = np.dtype(dtype)
    found = _BY_NP.get(dtype)
    if found is None and dtype.name == "bfloat16":  # (an ml_dtypes array: the program imported it)
        bfloat16.np_dtype  # noqa: B018 - resolves it
        found = _BY_NP.get(dtype)
    return found


# bfloat16 as bits ---------------------------------------------------------------------------
# bfloat16 is the top half of a float32: the same sign and exponent, 7 mantissa bits. Kernels
# keep it in registers as a float32 rounded to bfloat16 after each operation and store the
# 16 bits (codegen/scalar_ops.py); on the host numpy holds it as ml_dtypes.bfloat16.

def np_float32_to_bfloat16_bits(values) -> np.ndarray:
    """float32 values (any array-like) as bfloat16 bit patterns (uint16), rounded to the
    nearest, ties to even; NaNs stay NaN (quiet), infinities and signed zeros are kept."""
    f32 = np.asarray(values, dtype=np.float32)
    with np.errstate(invalid="ignore"):  # (numpy warns of NaNs cast; they stay NaN)
        return f32.astype(bfloat16.np_dtype).view(np.uint16)


def np_bfloat16_bits_to_float32(bits) -> np.ndarray:
    """bfloat16 bit patterns (uint16, any array-like) as float32 values (exact)."""
    u16 = np.asarray(bits, dtype=np.uint16)
    return (u16.astype(np.uint32) << np.uint32(16)).view(np.float32)


def round_to_bfloat16(values) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 (ties to even), as float32."""
    return np_bfloat16_bits_to_float32(np_float32_to_bfloat16_bits(values))


# Python's own types as Warp reads them: float is float32, int is int32.
PYTHON_TYPES = {float: float32, int: int32, bool: bool_}
