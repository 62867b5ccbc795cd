"""Launch arguments as the Tape sees them: keys naming an array argument or an array held
in a struct argument (`k` or `(k, field path)`), the arrays a value holds, and adjoint
structs (a struct of the `.grad` of a struct's arrays)."""

from __future__ import annotations

import copy as _copy

from . import config
from .types import StructValue


def adjoint_struct(value):
    """A struct of `value`'s type whose arrays are the `.grad` of `value`'s arrays (None
    where an array has none; nested structs alike); None if no array in it has one."""
    from .runtime.array import array
    from .types import ArrayType, StructType, StructValue
    t = value._type
    out, found = t(), False
    for name, ft in t.fields.items():
        f = getattr(value, name)
        if isinstance(ft, ArrayType):
            grad = f.grad if isinstance(f, array) else None
            setattr(out, name, grad)
            found = found or grad is not None
        elif isinstance(ft, StructType) and isinstance(f, StructValue):
            inner = adjoint_struct(f)
            if inner is not None:
                setattr(out, name, inner)
                found = True
    return out if found else None


_KINDS = None


def _argument_kinds() -> tuple:
    """(array, indexedarray, StructValue), imported once (runtime.array imports this module)."""
    global _KINDS
    if _KINDS is None:
        from .runtime.array import array
        from .runtime.indexed_array import indexedarray
        from .types import StructValue
        _KINDS = (array, indexedarray, StructValue)
    return _KINDS


_RUNTIME = None


def _runtime_modules() -> tuple:
    """(runtime.capture, runtime.launch), imported once (they import this module)."""
    global _RUNTIME
    if _RUNTIME is None:
        from .runtime import capture, launch
        _RUNTIME = (capture, launch)
    return _RUNTIME


def _recording_keys(kernel, segmented: bool) -> tuple:
    """(the keys of the arrays whose contents before the launch the adjoint reads, those the
    launch writes, those whose contents after it the adjoint reads), for `kernel` under the
    current mode; a budgeted Tape's segments need every array read before the launch."""
    kernel.check_redefinitions()  # (a func_grad registered since changes what the adjoint reads)
    key = ("tape keys", segmented, kernel.mode, config.mode)
    keys = kernel._ir.get(key)
    if keys is None:
        reads, writes = kernel.array_effects()
        initial = reads if segmented else kernel.array_adjoint_reads()
        keys = kernel._ir[key] = (tuple(sorted(initial, key=_key_order)), tuple(sorted(writes, key=_key_order)),
                                  tuple(sorted(kernel.array_final_reads(), key=_key_order)))
    return keys


_array_class = None  # runtime.array.array, once imported (that module imports this one)


def _arrays_in(value) -> list:
    """`value` if it is an array; the arrays a struct holds (nested structs included)."""
    global _array_class
    if _array_class is None:
        from .runtime.array import array
        _array_class = array
    if isinstance(value, _array_class):
        return [value]
    if isinstance(value, StructValue):
        return [a for name in value._type.field_names for a in _arrays_in(getattr(value, name))]
    return []


def _value_at(values, key):
    """values[k] for a key k; for (k, path), the field of struct values[k] the path leads to."""
    if isinstance(key, int):
        return values[key]
    value = values[key[0]]
    for index in key[1]:
        value = getattr(value, value._type.field_names[index], None) if value is not None else None
    return value


def _argument_array(params, key):
    """The array a launch argument key names (see `_value_at`), or None."""
    from .runtime.array import array
    value = _value_at(params, key)
    return value if isinstance(value, array) else None


def _with_field(struct, path, new):
    """A shallow copy of `struct` with the field at `path` (nested structs copied) set to `new`."""
    out = _copy.copy(struct)
    name = struct._type.field_names[path[0]]
    inner = new if len(path) == 1 else _with_field(getattr(struct, name), path[1:], new)
    object.__setattr__(out, name, inner)
    return out


def _key_order(key):
    return (key, ()) if isinstance(key, int) else key


def _key_name(kernel, key) -> str:
    if isinstance(key, int):
        return kernel.arg_names[key]
    k, path = key
    t, parts = kernel.params[kernel.arg_names[k]], [kernel.arg_names[k]]
    for index in path:
        parts.append(t.field_names[index])
        t = t.fields[t.field_names[index]]
    return ".".join(parts)
