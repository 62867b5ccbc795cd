"""Array type descriptors, as written in kernel annotations: `array(dtype=float, ndim=2)`."""

from __future__ import annotations

import typing

from .scalars import PYTHON_TYPES, Type

MAX_DIMS = 4


class AnyArray:
    """A generic array annotation: `array(dtype=Any, ndim=n)`, `array[float, Any]`,
    `array(dtype=vector(3, Any))`. It takes the arrays whose dtype matches `dtype` (Any, a
    TypeVar, a generic pattern or a concrete type) and whose ndim is `ndim` (any, for Any);
    a func or kernel is compiled per concrete array type. A light object, as Warp's
    annotations are (no instance __dict__)."""

    __slots__ = ("ndim", "dtype", "indexed", "fabric")
    _cache: dict = {}

    def __new__(cls, ndim=1, dtype=typing.Any, indexed: bool = False, fabric: bool = False):
        if ndim is not typing.Any:
            ndim = int(ndim)
        key = (ndim, dtype, bool(indexed), bool(fabric))
        if key not in cls._cache:
            self = super().__new__(cls)
            self.ndim, self.dtype, self.indexed, self.fabric = key
            cls._cache[key] = self
        return cls._cache[key]

    @property
    def family(self) -> str:
        """The array family's public name: array, indexedarray, fabricarray, indexedfabricarray."""
        return family_name(self.indexed, self.fabric)

    def matches(self, t) -> bool:
        """Whether the concrete array type `t` fits this annotation (of the same family: an
        indexed array for `indexedarray[...]`, a Fabric array for `fabricarray[...]`)."""
        from .generic import dtype_matches
        return isinstance(t, ArrayType) and t.indexed == self.indexed and t.fabric == self.fabric \
            and (self.ndim is typing.Any or t.ndim == self.ndim) and dtype_matches(self.dtype, t.dtype)

    def describe(self) -> str:
        """What this annotation takes, in words (for errors)."""
        dims = "any number of dimensions" if self.ndim is typing.Any else f"{self.ndim} dimension(s)"
        kind = f"an {self.family}" if self.family[0] in "ai" else f"a {self.family}"
        return f"{kind} of {dims}" + ("" if self.dtype is typing.Any else f" with dtype {self.dtype!r}")

    def __or__(self, other):  # `array[Any] | None`: a Python-scope annotation
        return typing.Union[self, other]  # noqa: UP007

    def __ror__(self, other):
        return typing.Union[other, self]  # noqa: UP007

    @property
    def vars(self) -> dict:
        """As ArrayType.vars (`shape` only where ndim is known)."""
        return member_types(self)

    def __reduce__(self):
        return (AnyArray, (self.ndim, self.dtype, self.indexed, self.fabric))

    def __repr__(self):
        return annotation_repr(self.family, self.dtype, self.ndim)


def family_name(indexed: bool, fabric: bool) -> str:
    return ("indexed" if indexed else "") + ("fabricarray" if fabric else "array")


_MEMBERS: dict = {}


def member_types(t) -> dict:
    """ArrayType.vars of `t` (computed once per annotation)."""
    if t not in _MEMBERS:
        from .composite import TupleType
        from .scalars import int32 as i32
        from .scalars import uint64 as u64
        out = {}
        if t.ndim is not typing.Any and not (t.fabric and t.ndim > 1):
            out["shape"] = TupleType((i32,) * (1 if t.fabric else t.ndim))
        out.update({"size": u64} if t.fabric else {"ptr": u64})
        _MEMBERS[t] = out
    return _MEMBERS[t]


class _AnnotationMeta(type):
    """`isinstance(x, ArrayAnnotation)`: whether `x` is an array annotation (an ArrayType or
    a generic AnyArray) of the class's family."""

    def __instancecheck__(cls, x):
        if not isinstance(x, (ArrayType, AnyArray)):
            return False
        return cls.flags is None or (x.indexed, x.fabric) == cls.flags


class ArrayAnnotationBase(metaclass=_AnnotationMeta):
    """The array annotations of every family; `ArrayAnnotation(dtype, ndim)` (and its
    siblings) make one, as `array[dtype, ndim]` does."""

    flags = None  # (indexed, fabric) of the family; None: any

    def __new__(cls, dtype=typing.Any, ndim=1):
        if cls.flags is None:
            raise TypeError("ArrayAnnotationBase stands for every array family; use ArrayAnnotation, "
                            "IndexedArrayAnnotation, FabricArrayAnnotation or IndexedFabricArrayAnnotation")
        family = {(False, False): ArrayType, (True, False): IndexedArrayType,
                  (False, True): FabricArrayType, (True, True): IndexedFabricArrayType}[cls.flags]
        return subscript_type(family, (dtype, ndim))


class ArrayAnnotation(ArrayAnnotationBase):
    flags = (False, False)


class IndexedArrayAnnotation(ArrayAnnotationBase):
    flags = (True, False)


class FabricArrayAnnotation(ArrayAnnotationBase):
    flags = (False, True)


class IndexedFabricArrayAnnotation(ArrayAnnotationBase):
    flags = (True, True)


class ArrayType(Type):
    """An array parameter type: element `dtype` and number of dimensions `ndim` (1 to 4).
    What `array[float]` gives: a light annotation object (slots, no instance __dict__, as
    Warp's), never an array."""

    __slots__ = ("dtype", "ndim", "name")

    is_array = True
    indexed = False  # see IndexedArrayType
    fabric = False  # see FabricArrayType
    max_dims = MAX_DIMS
    _cache: dict = {}

    def __new__(cls, dtype, ndim: int = 1):
        generic = dtype is typing.Any or isinstance(dtype, typing.TypeVar) or getattr(dtype, "is_generic", False)
        if not generic:
            dtype = _class_type(PYTHON_TYPES.get(dtype, dtype))
            if not isinstance(dtype, Type) or dtype.is_array:
                raise TypeError(f"array dtype must be a weft scalar, vector, matrix or struct type, "
                                f"got {dtype!r}")
        if ndim is not typing.Any and not 1 <= int(ndim) <= cls.max_dims:
            raise ValueError(f"{family_name(cls.indexed, cls.fabric)}s have 1 to {cls.max_dims} dimensions "
                             f"(ndim must be between 1 and {cls.max_dims}), got ndim={ndim}")
        if generic or ndim is typing.Any:
            return AnyArray(ndim, dtype, cls.indexed, cls.fabric)  # (generic: checked at the call)
        key = (dtype, int(ndim))
        if key not in cls._cache:
            self = super().__new__(cls)
            self.dtype, self.ndim = key
            self.name = f"array(dtype={dtype!r}, ndim={self.ndim})"
            cls._cache[key] = self
        return cls._cache[key]

    def __reduce__(self):
        return (ArrayType, (self.dtype, self.ndim))

    @property
    def family(self) -> str:
        return family_name(self.indexed, self.fabric)

    @property
    def vars(self) -> dict:
        """The members a kernel reads from an array of this type, name -> weft type (Warp's
        `vars`): `shape` (a tuple of int32) and `ptr` (uint64); a Fabric array has `size`
        (uint64) and, for one dimension, `shape`."""
        return member_types(self)

    def __ctype__(self):
        """The packed (ctypes) value of an absent array of this type: no elements."""
        from .layout import ctype_of
        return ctype_of(self)()

    def __repr__(self):  # (`name` keeps the descriptive form, for the IR text)
        return annotation_repr(self.family, self.dtype, self.ndim)


def annotation_repr(family: str, dtype, ndim) -> str:
    """An array annotation as it is written, Warp's form: `wp.array[wp.float32]`,
    `wp.array3d[wp.vec3f]`, `wp.array[wp.float32, Any]`, `wp.indexedarray[wp.float32, Literal[2]]`.
    A dtype with a public weft name is spelled `wp.<name>`; a struct by its name; another
    vector or matrix in words (`vector(length=5, dtype=float32)`)."""
    from . import NAMED_COMPOSITES, SCALARS
    from .introspect import type_repr
    if dtype is typing.Any:
        text = "Any"
    elif isinstance(dtype, Type):
        text = type_repr(dtype)
        public = NAMED_COMPOSITES.get(text) is dtype or any(s is dtype and s.name == text for s in SCALARS)
        text = f"wp.{text}" if public else text
    else:  # a TypeVar, a pattern, or a class not (yet) known to be a weft type
        text = getattr(dtype, "__qualname__", None) or getattr(dtype, "__name__", None) or repr(dtype)
    if ndim is typing.Any:
        return f"wp.{family}[{text}, Any]"
    if ndim == 1:
        return f"wp.{family}[{text}]"
    if family == "array":
        return f"wp.array{ndim}d[{text}]"
    return f"wp.{family}[{text}, Literal[{ndim}]]"


def subscript_args(key) -> tuple:
    """(dtype, ndim) of an array annotation subscript: `array[float]`, `array[float, 2]` or
    `array[float, Literal[2]]`."""
    if not isinstance(key, tuple):
        return key, 1
    if len(key) != 2:
        raise TypeError(f"array annotations take a dtype and optionally a dimension count, got {key!r}")
    dtype, ndim = key
    if typing.get_origin(ndim) is typing.Literal:
        if len(typing.get_args(ndim)) != 1:
            raise TypeError(f"Expected a single Literal value for the dimension count, got {ndim!r}")
        (ndim,) = typing.get_args(ndim)
    if ndim is typing.Any:
        return dtype, ndim
    if isinstance(ndim, bool) or not isinstance(ndim, int):
        raise TypeError(f"the dimension count of an array annotation is an int, Literal[int] or Any, "
                        f"got {ndim!r}")
    return dtype, ndim


def subscript_type(cls, key):
    """The annotation `array[key]` (`cls`: ArrayType or IndexedArrayType). As in Warp, a dtype
    that is no weft type is kept as written (an annotation may be a plain Python type hint);
    a kernel or func with such a parameter is refused when it is declared."""
    dtype, ndim = subscript_args(key)
    dtype = _class_type(dtype)
    known = dtype is typing.Any or isinstance(dtype, typing.TypeVar) or getattr(dtype, "is_generic", False) \
        or isinstance(PYTHON_TYPES.get(dtype, dtype), Type)
    if known:
        return cls(dtype, ndim)
    cls(PYTHON_TYPES[float], ndim)  # (checks ndim)
    return AnyArray(ndim, dtype, cls.indexed, cls.fabric)


def _class_type(dtype):
    """The weft type a class stands for (`wp.Texture2D`: its kernel struct), else `dtype`."""
    t = getattr(dtype, "_weft_type", None) if isinstance(dtype, type) else None
    return t if isinstance(t, Type) else dtype


def valid_dtype(dtype) -> bool:
    """Whether `dtype` (of an array annotation) is a weft element type or a generic one."""
    dtype = _class_type(dtype)
    return dtype is typing.Any or isinstance(dtype, typing.TypeVar) or getattr(dtype, "is_generic", False) \
        or (isinstance(dtype, Type) and not dtype.is_array)


class IndexedArrayType(ArrayType):
    """An indexed array parameter (`indexedarray(dtype=float, ndim=2)`): an array read and
    written through one int32 index array (or none) per dimension. Kernels index it like
    an array; views and slices of it are not supported."""

    __slots__ = ()

    _cache: dict = {}
    indexed = True

    def __new__(cls, dtype, ndim: int = 1):
        self = super().__new__(cls, dtype, ndim)
        if isinstance(self, IndexedArrayType):
            self.name = f"indexedarray(dtype={self.dtype!r}, ndim={self.ndim})"
        return self

    def __reduce__(self):
        return (IndexedArrayType, (self.dtype, self.ndim))


class FabricArrayType(ArrayType):
    """A Fabric array parameter (`fabricarray(dtype=float)`, `fabricarray[float]`): the
    elements of an attribute stored across buckets of memory (Omniverse Fabric), indexed
    like a 1-d array. With `ndim=2` (`fabricarrayarray`), each element is itself an array
    of its own length: `a[i]` is that array, `a[i, j]` its element."""

    __slots__ = ()

    _cache: dict = {}
    fabric = True
    max_dims = 2

    def __new__(cls, dtype, ndim: int = 1):
        self = super().__new__(cls, dtype, ndim)
        if isinstance(self, FabricArrayType):
            self.name = f"{self.family}(dtype={self.dtype!r}, ndim={self.ndim})"
        return self

    def __reduce__(self):
        return (type(self), (self.dtype, self.ndim))


class IndexedFabricArrayType(FabricArrayType):
    """A Fabric array seen through an int32 index array (`indexedfabricarray[float]`)."""

    __slots__ = ()

    _cache: dict = {}
    indexed = True


class FixedArrayType(ArrayType):
    """`fixedarray(dtype=int, shape=(2, 3))`: the annotation of a fixed-size array made in
    a kernel (`zeros(shape, dtype)`), as a func's return annotation says it returns one. As
    a value it is an array of its dtype and ndim (funcs taking `array[...]` take it)."""

    __slots__ = ("shape",)

    _cache: dict = {}

    def __new__(cls, dtype=typing.Any, shape=None):
        dims = None if shape is None else tuple(int(n) for n in ((shape,) if isinstance(shape, int) else shape))
        ndim = 1 if dims is None else len(dims)
        dtype = PYTHON_TYPES.get(dtype, dtype)
        key = (dtype, dims)
        if key not in cls._cache:
            if dtype is typing.Any or not isinstance(dtype, Type) or dtype.is_array:
                raise TypeError(f"fixedarray dtype must be a weft scalar, vector, matrix or struct type, got {dtype!r}")
            if not 1 <= ndim <= MAX_DIMS or any(n < 0 for n in dims or ()):
                raise ValueError(f"fixedarray: a shape of 1 to {MAX_DIMS} non-negative extents, got {shape!r}")
            self = Type.__new__(cls)
            self.dtype, self.ndim, self.shape = dtype, ndim, dims
            self.name = f"fixedarray(dtype={dtype!r}, shape={dims})"
            cls._cache[key] = self
        return cls._cache[key]

    def __reduce__(self):
        return (FixedArrayType, (self.dtype, self.shape))

    def __repr__(self):
        from .introspect import type_repr
        return f"wp.fixedarray(dtype={type_repr(self.dtype)}, shape={self.shape})"
