"""User structs: `@weft.struct` over a class with annotated fields."""

from __future__ import annotations

from .composite import Composite
from .scalars import PYTHON_TYPES


class StructType(Composite):
    """A struct type: named fields in declaration order, laid out as C would."""

    def __init__(self, cls):
        self.cls = cls
        self.name = cls.__name__
        self.fields: dict[str, object] = {}
        for name, annotation in getattr(cls, "__annotations__", {}).items():
            self.fields[name] = PYTHON_TYPES.get(annotation, annotation)
        if not self.fields:
            raise TypeError(f"struct {self.name} has no annotated fields")
        self.field_names = list(self.fields)
        self.__doc__ = cls.__doc__

    @property
    def num_components(self) -> int:
        return len(self.fields)

    def field_index(self, name: str) -> int:
        return self.field_names.index(name)

    @property
    def size(self) -> int:
        import ctypes

        from .layout import ctype_of
        return ctypes.sizeof(ctype_of(self))

    def __call__(self, **values):
        instance = StructValue(self)
        for name, value in values.items():
            setattr(instance, name, value)
        return instance

    def __hash__(self):
        return id(self)


class StructValue:
    """An instance of a struct type in Python scope. A field starts at the default its class
    gives (`x: float = 2.5`), else zero (arrays: None)."""

    def __init__(self, struct_type: StructType):
        object.__setattr__(self, "_type", struct_type)
        for name, t in struct_type.fields.items():
            if name in vars(struct_type.cls):
                default = vars(struct_type.cls)[name]
                if getattr(t, "is_scalar", False) or hasattr(t, "np_shape"):
                    default = t(default)  # a converted copy: instances share no vector
            else:
                default = None if getattr(t, "is_array", False) else _zero(t)
            object.__setattr__(self, name, default)

    def __setattr__(self, name, value):
        if name not in self._type.fields:
            raise AttributeError(f"struct {self._type.name} has no field '{name}'")
        object.__setattr__(self, name, value)

    def __repr__(self):
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._type.field_names)
        return f"{self._type.name}({inner})"


def _zero(t):
    if getattr(t, "is_scalar", False):
        return t(0)
    if isinstance(t, StructType):
        return StructValue(t)
    return t()
