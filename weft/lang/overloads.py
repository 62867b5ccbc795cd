"""Overloads of generic kernels: a kernel whose parameters are `Any`, typevars or
`array(dtype=Any)` is compiled once per tuple of concrete parameter types.

`weft.overload(kernel, [types])` or `weft.overload(kernel, {name: type})` makes one ahead of
time and returns it (it can be launched itself); `@weft.overload` on a stub function with
the concrete annotations does the same and returns the generic kernel. A launch of the
generic kernel infers the types from its arguments and reuses or makes the overload.
"""

from __future__ import annotations

import ast
import copy
import inspect
import textwrap
import types as pytypes

import numpy as np

from ..types import ArrayType, CompositeValue, IndexedArrayType, StructValue, bool_, float32, int32, scalar_from_numpy
from ..types.array_type import AnyArray
from ..types.introspect import array_classes
from ..types.scalars import SCALAR_VALUES
from .function import GENERIC, _annotations, is_generic, resolve_annotation


def add(kernel, arg_types):
    """The overload of generic `kernel` for `arg_types` (a list in parameter order, or a
    dict of parameter name -> type), made on first request."""
    if not kernel.is_generic:
        raise RuntimeError(f"Only generic kernels can be overloaded. Kernel {kernel.key} is not generic")
    template = kernel.params
    if isinstance(arg_types, dict):
        given = dict(template)
        for name, t in arg_types.items():
            if name not in given:
                raise RuntimeError(f"Invalid argument name '{name}' in overload of kernel {kernel.key}")
            given[name] = t
    elif isinstance(arg_types, (list, tuple)):
        if len(arg_types) != len(template):
            raise RuntimeError(f"Invalid number of arguments for kernel {kernel.key}: it takes "
                               f"{len(template)}, the overload gives {len(arg_types)}")
        given = dict(zip(template, arg_types))
    else:
        raise TypeError("Kernel overload types must be given in a list or dict")
    concrete = {}
    for name, t in given.items():
        where = f"kernel {kernel.key}, parameter '{name}'"
        if isinstance(t, array_classes()):  # (Warp takes an array for its type: `wp.overload(k, [a, b])`)
            t = type_of_value(t)
        resolved = t if t is template[name] else resolve_annotation(t, where)
        if is_generic(resolved):
            raise TypeError(f"{where}: an overload needs a concrete type, got {t!r}")
        _check_fits(template[name], resolved, where)
        concrete[name] = resolved
    return _instance(kernel, concrete)


def for_arguments(kernel, args):
    """The overload of generic `kernel` for the values of a launch."""
    template = kernel.params
    if len(args) != len(template):
        raise TypeError(f"kernel '{kernel.name}' takes {len(template)} arguments "
                        f"({', '.join(template)}), got {len(args)}")
    concrete = {}
    for (name, want), value in zip(template.items(), args):
        if not is_generic(want):
            concrete[name] = want
            continue
        t = type_of_value(value)
        where = f"kernel '{kernel.name}', argument '{name}'"
        if t is None:
            raise TypeError(f"{where}: cannot infer a weft type from {type(value).__name__} "
                            f"for the generic parameter")
        _check_fits(want, t, where)
        concrete[name] = t
    return _instance(kernel, concrete)


def _instance(kernel, concrete: dict):
    key = tuple(concrete.values())
    found = kernel.overloads.get(key)
    if found is None:
        found = copy.copy(kernel)  # same function, module and options; its own caches
        found._params, found._generic = concrete, False
        found._arg_names = found._array_params = found._adjoint_params = None
        found._ir, found._compiled, found._recent, found.overloads = {}, {}, {}, {}
        found.generic_parent = kernel
        kernel.overloads[key] = found
        kernel.module.hashers.clear()  # (the module's hash names its kernels' overloads)
    return found


def _check_fits(template, t, where: str):
    if template is GENERIC:
        return
    if isinstance(template, AnyArray):
        if not template.matches(t):
            raise TypeError(f"{where}: expected {template.describe()}, got {t!r}")
        return
    matches = getattr(template, "matches", None)
    if is_generic(template) and matches is not None:
        if not matches(t):
            raise TypeError(f"{where}: expected {template!r}, got {t!r}")
        return
    if not is_generic(template) and template is not t:
        raise TypeError(f"{where}: expected {template!r}, got {t!r}")


def type_of_value(value):
    """The weft type a launch argument gives a generic parameter (None if there is none)."""
    from ..runtime.array import array
    from ..runtime.indexed_array import indexedarray
    if isinstance(value, array):
        return ArrayType(value.dtype, value.ndim)
    if isinstance(value, indexedarray):
        return IndexedArrayType(value.dtype, value.ndim)
    if isinstance(getattr(value, "_type", None), ArrayType) and value._type.fabric:  # (Fabric arrays)
        return value._type
    if isinstance(value, StructValue):
        return value._type
    if isinstance(value, CompositeValue):
        return value.type
    if isinstance(value, (bool, np.bool_)):
        return bool_
    if isinstance(value, SCALAR_VALUES):  # (before float: numpy's float64 is a Python float)
        return scalar_from_numpy(value.dtype)
    if isinstance(value, int):
        return int32
    if isinstance(value, float):
        return float32
    return None


def overload_decorator(fn):
    """`@weft.overload` on a stub `def k(x: float): ...` named like a generic kernel of the
    same module: adds the overload for the stub's annotations; returns the generic kernel."""
    from .module import get_module
    candidates = [k for k in get_module(fn.__module__).find_kernels(fn.__qualname__)
                  if k.generic_parent is None]
    if not candidates:
        raise RuntimeError(f"Failed to find a kernel named '{fn.__name__}' in module {fn.__module__}")
    if len({k.key for k in candidates}) > 1:
        raise RuntimeError(f"Ambiguous kernel lookup for overload '{fn.__qualname__}': kernels "
                           f"{', '.join(sorted(k.key for k in candidates))} share its name")
    kernel = candidates[-1]
    _check_stub(fn)
    hints = _annotations(fn)
    ret = hints.pop("return", None)
    if ret is not None and ret is not pytypes.NoneType:
        raise TypeError("Return annotations are not allowed on @wp.overload stubs; "
                        "omit the return annotation or use `-> None`.")
    names = list(inspect.signature(fn).parameters)
    if any(n not in hints for n in names):
        raise RuntimeError(f"Incomplete argument annotations on kernel overload {fn.__name__}")
    add(kernel, [hints[n] for n in names])
    return kernel


def _check_stub(fn):
    """An overload stub has no body: only `...`, `pass` or a docstring."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.FunctionDef) else None
    if body is None:
        raise RuntimeError(f"Kernel overload '{fn.__name__}' must be a function definition")
    for node in body:
        if isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                                          and (node.value.value is ... or isinstance(node.value.value, str))):
            continue
        raise RuntimeError("Illegal statement in kernel overload definition. Only pass, ellipsis (...), "
                           "comments, or docstrings are allowed")
