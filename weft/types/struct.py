"""User structs: `@weft.struct` over a class with annotated fields.

A `StructType` is both the type kernels see and, called in Python, the constructor of
instances. Instances are objects of a class derived from the user's class (so
`isinstance(s, Foo.cls)` holds) and from `StructValue`, which checks and converts each
field as it is assigned, as Warp does: vectors from sequences, arrays of the right dtype
and dimensions, nested structs copied into place.
"""

from __future__ import annotations

import sys
import typing
import warnings

import numpy as np

from .composite import Composite, CompositeValue, Matrix, Vector, deprecated_fill, fills_with_deprecation
from .scalars import PYTHON_TYPES, SCALAR_VALUES, Scalar, Type


class StructField(typing.NamedTuple):
    """One field of a struct type (`StructType.vars`): its name and type."""

    label: str
    type: object


class NoSuchFieldError(AttributeError, RuntimeError):
    """Setting a field a struct does not have (Warp raises a RuntimeError)."""


class FieldSizeError(TypeError, ValueError):
    """A vector or matrix of the wrong size for a field (Warp raises a ValueError)."""


class StructType(Composite):
    """A struct type: named fields in declaration order, laid out as C would."""

    def __init__(self, cls, *class_statement):
        # `class Child(SomeStruct): ...` calls StructType(name, bases, namespace): a struct
        # type is no class to derive from.
        if class_statement or not isinstance(cls, type):
            raise RuntimeError("a struct cannot derive from another struct: Warp structs must "
                               "be defined as base classes")
        self.cls = cls
        self.name = self.__name__ = cls.__name__  # (Python's names of the class, as Warp's struct has)
        self.__qualname__ = cls.__qualname__
        self.key = f"{cls.__module__}.{cls.__qualname__}"
        self.__doc__ = cls.__doc__
        self.fields: dict[str, Type] = {}
        # Fields whose annotation is no weft type (a name from a module weft lacks): the
        # struct can be defined and instantiated, but not used in kernels or arrays.
        self.invalid_fields: dict[str, str] = {}
        for name, annotation in _class_annotations(cls).items():
            t = PYTHON_TYPES.get(annotation, annotation)
            if isinstance(t, type) and isinstance(getattr(t, "_weft_type", None), StructType):
                t = t._weft_type  # (a class standing for a struct type: wp.Texture2D)
            if not isinstance(t, Type):
                why = (f"struct {self.name}: field '{name}' has annotation {t!r}, which is not a "
                       f"weft type")
                warnings.warn(why + "; the struct cannot be used in kernels", stacklevel=3)
                self.invalid_fields[name] = why
            self.fields[name] = t
        self.field_names = list(self.fields)
        self.instance_type = type(cls.__name__, (cls, StructValue), {
            "__module__": cls.__module__, "__qualname__": cls.__qualname__, "_type": self,
        })

    @property
    def num_components(self) -> int:
        return len(self.fields)

    def field_index(self, name: str) -> int:
        return self.field_names.index(name)

    @property
    def vars(self) -> dict:
        """The fields as Warp lists them: name -> an object with `.label` and `.type`."""
        return {name: StructField(name, t) for name, t in self.fields.items()}

    @property
    def size(self) -> int:
        import ctypes

        from .layout import ctype_of
        return ctypes.sizeof(ctype_of(self))

    def __call__(self, *args, **values):
        """A new instance: fields from positional values in declaration order, then keyword
        values; the others are zero."""
        if len(args) > len(self.field_names):
            raise TypeError(f"struct {self.name} has {len(self.field_names)} field(s), got "
                            f"{len(args)} positional values")
        instance = self.instance_type()
        for name, value in zip(self.field_names, args):
            setattr(instance, name, value)
        for name, value in values.items():
            if name in self.field_names[: len(args)]:
                raise TypeError(f"struct {self.name}: field '{name}' given twice")
            setattr(instance, name, value)
        return instance

    def numpy_dtype(self) -> dict:
        """The numpy structured dtype of one element of an array of this struct (names,
        formats, offsets, itemsize, as `np.dtype(...)` takes it): vectors and matrices as
        subarrays of their shape, nested structs nested, arrays as their descriptor."""
        import ctypes

        from .layout import ctype_of
        ct = ctype_of(self)
        formats = []
        for t in self.fields.values():
            if isinstance(t, StructType):
                formats.append(t.numpy_dtype())
            elif isinstance(t, (Vector, Matrix)):
                formats.append((t.dtype.np_dtype, t.np_shape))
            elif isinstance(t, Scalar):
                formats.append(t.np_dtype)
            else:
                formats.append(np.dtype(ctype_of(t)))
        return {"names": list(self.field_names), "formats": formats,
                "offsets": [getattr(ct, n).offset for n in self.field_names],
                "itemsize": ctypes.sizeof(ct)}

    def signature(self) -> str:
        """The struct's name and its fields' types, nested structs spelled out: equal for
        two definitions with the same layout (content hashes use it, not the object)."""
        parts = [f"{n}:{t.signature() if isinstance(t, StructType) else repr(t)}"
                 for n, t in self.fields.items()]
        return f"{self.cls.__qualname__}{{{','.join(parts)}}}"

    def from_record(self, record):
        """An instance holding the values of one element of a numpy array of this struct
        (array fields come back as None: a record holds only their memory address)."""
        out = self()
        for name, t in self.fields.items():
            value = record[name]
            if isinstance(t, StructType):
                out.__dict__[name].assign(t.from_record(value))
            elif isinstance(t, Scalar):
                if t.is_float and t.bits == 16 and np.asarray(value).dtype == np.uint16:
                    value = np.asarray(value).view(t.np_dtype)[()]  # (raw bits, see layout)
                # a Python number, as Warp's instances read from memory hold
                setattr(out, name, value.item() if isinstance(value, SCALAR_VALUES) else value)
            elif not getattr(t, "is_array", False):
                if isinstance(t, (Vector, Matrix)) and t.dtype.bits == 16 and t.dtype.is_float \
                        and np.asarray(value).dtype == np.uint16:
                    value = np.asarray(value).view(t.dtype.np_dtype)
                setattr(out, name, value)
        return out

    def __hash__(self):
        return id(self)


def _class_annotations(cls) -> dict:
    """The class's own annotations, strings (`from __future__ import annotations`) evaluated
    in the class's module."""
    raw = dict(cls.__dict__.get("__annotations__", {}))
    module = sys.modules.get(cls.__module__)
    env = dict(vars(module)) if module is not None else {}
    for name, annotation in raw.items():
        if isinstance(annotation, str):
            try:
                raw[name] = eval(annotation, env, dict(vars(cls)))  # noqa: S307 - user's annotation
            except Exception as e:  # noqa: BLE001
                raise TypeError(f"struct {cls.__name__}: cannot evaluate the annotation of "
                                f"field '{name}' ({annotation!r}): {e}") from None
    return raw


class StructValue:
    """An instance of a struct type in Python scope. A field starts at zero (arrays: None),
    as in Warp, which ignores a value the class gives (`x: float = 2.5`) both here and in a
    kernel's `S()`: a Warp program with one computes with zero."""

    _type: StructType  # set on each struct's instance class

    def __init__(self, *args, **kwargs):
        if args or kwargs:  # (the struct type's call takes values; the class itself none)
            raise TypeError(f"create {self._type.name} instances by calling the struct type")
        starts = self._type.__dict__.get("_field_starts")
        if starts is None:
            starts = self._type._field_starts = [(name, _start_value(self._type, name, t))
                                                 for name, t in self._type.fields.items()]
        for name, start in starts:
            object.__setattr__(self, name, start())

    def __setattr__(self, name, value):
        t = self._type.fields.get(name)
        if t is None:
            raise NoSuchFieldError(f"struct {self._type.name} has no field '{name}'")
        if name in self._type.invalid_fields:
            raise TypeError(self._type.invalid_fields[name])
        if isinstance(t, StructType):
            _assign_struct(self, name, t, value)
            return
        if getattr(t, "is_array", False):
            _check_array(name, t, value)
            # the gradient array stays referenced with the struct while the array is there
            grad = getattr(value, "grad", None) if getattr(value, "requires_grad", False) else None
            object.__setattr__(self, f"_{name}_grad", grad)
        elif isinstance(t, (Vector, Matrix)):
            value = _composite_field(name, t, value)
        elif isinstance(t, Scalar):
            value = _scalar_field(name, t, value)
        object.__setattr__(self, name, value)

    def assign(self, other):
        """Copy the field values of another instance of the same struct into this one."""
        if not isinstance(other, StructValue) or other._type is not self._type:
            raise TypeError(f"cannot assign {type(other).__name__} to a {self._type.name}")
        for name in self._type.field_names:
            setattr(self, name, getattr(other, name))

    def to(self, device):
        """A copy whose array fields live on `device` (arrays already there are shared)."""
        out = self._type()
        for name, t in self._type.fields.items():
            value = getattr(self, name)
            if value is not None and (getattr(t, "is_array", False) or isinstance(t, StructType)):
                value = value.to(device)
            setattr(out, name, value)
        return out

    def __ctype__(self):
        """This value packed as kernels receive it (a ctypes structure; Warp's name)."""
        from ..runtime.launch import pack_value  # (the one packing rule, shared with launches)
        return pack_value(None, self._type.name, self._type, self)

    def numpy_dtype(self) -> dict:
        return self._type.numpy_dtype()

    def numpy_value(self) -> tuple:
        """This value as one element of a numpy array of `numpy_dtype()` (arrays: their
        descriptor's fields)."""
        out = []
        for name, t in self._type.fields.items():
            value = getattr(self, name)
            if isinstance(t, StructType):
                out.append(value.numpy_value())
            elif getattr(t, "is_array", False):
                out.append(_array_record(t, value))
            elif isinstance(t, (Vector, Matrix)):
                out.append(np.asarray(value).tolist())
            else:
                # the value as the field stores it (float16 rounded, integers wrapped), as Warp reads it
                out.append(np.asarray(value).astype(t.np_dtype).item())
        return tuple(out)

    def _text(self, depth: int, show) -> str:
        """Warp's layout: one field a line, indented by a tab per nesting level."""
        if not self._type.field_names:
            return f"{self._type.name}()"
        pad = "\t" * (depth + 1)
        lines = [f"{self._type.name}("]
        for n in self._type.field_names:
            value = getattr(self, n)
            text = value._text(depth + 1, show) if isinstance(value, StructValue) else show(value)
            lines.append(f"{pad}{n}={text},")
        lines.append("\t" * depth + ")")
        return "\n".join(lines)

    def __repr__(self):
        return self._text(0, repr)

    def __str__(self):
        return self._text(0, str)


# Field conversions ---------------------------------------------------------------------------
def _start_value(struct: StructType, name: str, t):
    """What makes a field's starting value (what assigning None gives: zero, a fresh nested
    instance, no array), without the checks of an assignment."""
    if name in struct.invalid_fields or getattr(t, "is_array", False):
        return lambda: None  # (no array: nothing to keep alive beside it, see __setattr__)
    if isinstance(t, Scalar):
        zero = _scalar_field(name, t, None)  # (immutable: one object for every instance)
        return lambda: zero
    if isinstance(t, (Vector, Matrix)):
        return lambda: _composite_field(name, t, None)
    return t  # a nested struct: a fresh instance


def _assign_struct(inst, name, t: StructType, value):
    """Nested structs are values: assignment copies into this instance's own nested one."""
    if value is None:
        object.__setattr__(inst, name, t())
        return
    if getattr(t, "is_texture", False) and isinstance(value, StructValue) and value._type is t:
        object.__setattr__(inst, name, value)  # a texture: a handle, held as it is
        return
    if not isinstance(value, StructValue) or value._type is not t:
        raise TypeError(f"Struct field '{name}' expects struct {t.name}, got "
                        f"{type(value).__name__}")
    current = inst.__dict__.get(name)
    if current is None or current is value:
        current = t()
        object.__setattr__(inst, name, current)
    current.assign(value)


def _check_array(name, t, value):
    if value is None:
        return
    indexed, fabric = getattr(t, "indexed", False), getattr(t, "fabric", False)
    what = "a Warp " + ("indexed " if indexed else "") + ("Fabric array" if fabric else "array")
    value_type = getattr(value, "_type", None)
    if not (hasattr(value, "dtype") and hasattr(value, "ndim") and hasattr(value, "descriptor")) \
            or getattr(value_type, "indexed", False) != indexed or getattr(value_type, "fabric", False) != fabric:
        raise TypeError(f"Struct field '{name}' expects {what}, got {type(value).__name__}")
    if value.dtype is not t.dtype:
        raise TypeError(f"Struct field '{name}' expects dtype {t.dtype!r}, got {value.dtype!r}")
    if value.ndim != t.ndim:
        raise TypeError(f"Struct field '{name}' expects an array with {t.ndim} dimension(s), got "
                        f"{value.ndim} dimension(s)")


def _composite_field(name, t, value) -> CompositeValue:
    """A vector or matrix field's value: a copy of `value` (a value of the type, a flat or
    nested sequence, a numpy array); None is zero."""
    if value is None:
        return CompositeValue(t, np.zeros(t.num_components, dtype=t.dtype.np_dtype))
    if isinstance(value, CompositeValue) and value.type is t:
        return CompositeValue(t, value._data.copy())
    # One bool or numpy number fills every component, with Warp's deprecation warning; a
    # Python number or a weft scalar is refused, as in Warp
    if fills_with_deprecation(value):
        return CompositeValue(t, deprecated_fill(value, t, f"struct field '{name}'"))
    if not hasattr(value, "__len__") or (isinstance(value, np.ndarray) and value.ndim == 0):
        raise TypeError(f"Struct field '{name}' expects {t!r} but got a single value of type "
                        f"{type(value).__name__}. Construct the value explicitly, e.g.: {t!r}(...).")
    try:
        flat = np.asarray(value, dtype=t.dtype.np_dtype).reshape(-1)
    except (TypeError, ValueError) as e:
        raise TypeError(f"Struct field '{name}' expects {t!r}: {e}") from None
    if flat.size != t.num_components:
        raise FieldSizeError(f"Struct field '{name}' expects {t!r} ({t.num_components} components), "
                             f"got {flat.size} values")
    return CompositeValue(t, flat.copy())


def _scalar_field(name, t: Scalar, value):
    """A scalar field keeps a weft (numpy) scalar as the field's type and a Python number as
    it is; None is zero."""
    if value is None:
        return t(0)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, SCALAR_VALUES):
        return t(value.item())
    import numbers
    kind = numbers.Integral if t.is_int or t.is_bool else numbers.Real
    if not isinstance(value, kind):
        raise TypeError(f"Struct field '{name}' expects {'an integer' if kind is numbers.Integral else 'a number'} "
                        f"({t!r}), got {type(value).__name__} {value!r}")
    return bool(value) if t.is_bool else value  # (a bool field set to 1 holds True)


def _array_record(t, value) -> tuple:
    from .layout import ctype_of
    ct = ctype_of(t)
    desc = ct() if value is None else value.descriptor()
    return tuple(np.frombuffer(bytes(desc), dtype=np.dtype(ct))[0].tolist())
