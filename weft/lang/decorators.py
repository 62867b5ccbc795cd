"""The decorators users write: @kernel, @func, @struct, @overload; and constant()."""

from __future__ import annotations

import re
import sys
import types as pytypes
import typing
from collections.abc import Callable

from .. import config
from ..types import StructType
from . import overloads
from .errors import CompileError
from .function import Func
from .kernel import Kernel
from .module import check_deterministic_options, check_option_names, discard_module, unique_module
from .unique import declaration_key, reuse

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

# Options of Warp's CUDA code generation: kept on the kernel (`kernel.options`), without
# effect on the CPU, where there are no thread blocks or registers to bound.
_CUDA_OPTIONS = ("launch_bounds", "cuda_max_registers", "enable_cuda_smem_spilling", "cluster_dim",
                 "grid_stride")


def kernel(f=None, *, name=None, enable_backward=None, launch_bounds=None, cuda_max_registers=None,
           enable_cuda_smem_spilling=None, cluster_dim=None, module=None, module_options=None,
           entry_point_abi=None, grid_stride=None):
    """Make a kernel from a type-annotated Python function (launch it with `weft.launch`).

    `name`: the kernel's key (a C identifier). `enable_backward=False`: no adjoint.
    `module`: a module name, a `Module`, or `"unique"` (a module of its own, whose options
    `module_options` may set). `launch_bounds`, `cuda_max_registers`, `cluster_dim`,
    `grid_stride`, `enable_cuda_smem_spilling` are CUDA settings: checked and kept in
    `kernel.options`, without effect on the CPU."""
    options = {}
    if name is not None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name)}")
        if not _IDENTIFIER.match(name):
            raise ValueError("name must be a non-empty valid C++ identifier matching [A-Za-z_][A-Za-z0-9_]*")
    if enable_backward is not None:
        options["enable_backward"] = bool(enable_backward)
    if launch_bounds is not None:
        options["launch_bounds"] = _check_launch_bounds(launch_bounds)
    if cuda_max_registers is not None:
        if launch_bounds is not None:
            raise ValueError("cuda_max_registers and launch_bounds cannot be specified together")
        options["cuda_max_registers"] = _positive_int(cuda_max_registers, "cuda_max_registers")
    if cluster_dim is not None:
        options["cluster_dim"] = _positive_int(cluster_dim, "cluster_dim")
    if grid_stride is not None:
        options["grid_stride"] = bool(grid_stride)
    if enable_cuda_smem_spilling:
        options["enable_cuda_smem_spilling"] = True
    if entry_point_abi is not None and entry_point_abi != "warp":
        if entry_point_abi != "external_constant_params":
            raise ValueError(f"entry_point_abi must be 'warp' or 'external_constant_params', "
                             f"got {entry_point_abi!r}")
        if enable_backward is not False:
            raise ValueError("entry_point_abi='external_constant_params' requires enable_backward=False")
        options["entry_point_abi"] = entry_point_abi  # (a CUDA entry point: refused when compiled)
    if module_options is not None:
        if not isinstance(module_options, dict):
            raise TypeError(f"module_options must be a dict, got {type(module_options).__name__}")
        if module != "unique":
            raise ValueError('module_options requires module="unique"; use weft.set_module_options() '
                             "for the options of a shared module")
        check_option_names(module_options)
        if "deterministic" in module_options or "deterministic_max_records" in module_options:
            check_deterministic_options({"deterministic": config.deterministic, **module_options})  # (as Warp's)

    def make(pyfunc):
        base = name or f"{pyfunc.__module__}.{pyfunc.__qualname__}"
        target = unique_module(base) if module == "unique" else module
        if module_options:
            target.options.update(module_options)
        return Kernel(pyfunc, key=name, module=target, options=options)  # (no name: Warp's key)

    def make_unique(pyfunc):
        kernel = make(pyfunc)
        try:
            resolve_statics_now(kernel)
        except CompileError:
            discard_module(kernel.module)  # (as if never declared: loading all modules skips it)
            raise
        kernel.module._find_references()  # (as Warp's, which hashes it now)
        return kernel

    def wrap(pyfunc):
        if module != "unique":
            return make(pyfunc)
        key = declaration_key(pyfunc, (name, options, module_options))
        return reuse(key, lambda: make_unique(pyfunc))  # the same declaration again: the same kernel
    return wrap(f) if f is not None else wrap


def resolve_statics_now(kernel) -> None:
    """A `module="unique"` kernel with `wp.static(...)` expressions that its definition did
    not evaluate (they read local names, or failed) is compiled now, as Warp does to name
    its module by content: an error in them (or anywhere in the kernel) is raised by the
    declaration. (Generic kernels wait for their argument types.)"""
    if "static" not in kernel.func.__code__.co_names:
        return  # (no static(...) call: nothing to parse)
    try:
        if kernel.is_generic or not kernel.adj.has_unresolved_static_expressions:
            return
    except Exception:  # noqa: BLE001 - an annotation or source that does not resolve: reported at launch
        return
    try:
        kernel.ir()
    except CompileError as err:
        raise err.with_traceback(None) from None


def _check_launch_bounds(bounds):
    values = (bounds,) if isinstance(bounds, int) else tuple(bounds) if isinstance(bounds, (tuple, list)) else None
    if not values or len(values) > 2 or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                                for v in values):
        raise ValueError(f"launch_bounds must be a positive int or a tuple of 1 or 2 positive ints, "
                         f"got {bounds!r}")
    return bounds


def _positive_int(value, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{what} must be a positive int, got {value!r}")
    return value


_Params = typing.ParamSpec("_Params")
_Return = typing.TypeVar("_Return")


@typing.overload
def func(f: Callable[_Params, _Return]) -> Callable[_Params, _Return]: ...


@typing.overload
def func(f: None = None, *, name: str | None = None, module=None,
         inline: bool | None = None) -> Callable[[Callable[_Params, _Return]], Callable[_Params, _Return]]: ...


def func(f=None, *, name=None, module=None, inline=None):
    """Make a device function callable from kernels. Parameters annotated `Any` (or not at
    all) are generic: the func is compiled per argument type. A second @func of the same
    name in the same scope (module or enclosing function) makes a func with the earlier
    one's overloads plus this one, which replaces one with the same parameter types; an
    alias of the earlier func keeps the earlier overloads.

    `name`: the func's key. `module`: a module name, a `Module` or `"unique"` (as for
    kernels). `inline`: Warp's hint for CUDA code size; weft always inlines funcs into the
    kernel's IR (its passes and the reverse transform work on the whole kernel), so the
    hint is checked and kept (`func.inline`) but changes nothing."""
    if inline is not None and not isinstance(inline, bool):
        raise TypeError(f"inline must be a bool or None, got {type(inline).__name__}: {inline!r}")
    if name is not None and (not isinstance(name, str) or not _IDENTIFIER.match(name)):
        raise ValueError("name must be a non-empty valid C++ identifier matching [A-Za-z_][A-Za-z0-9_]*")

    # where the func is defined (the decorator's caller: a module, class body or function):
    # a Func already bound to its name there gets this one as an overload (Warp's rule, which
    # also serves `f = wp.func(g, ...)` calls made in a loop over functions of one name)
    scope = sys._getframe(1).f_locals

    def wrap(pyfunc):
        existing = scope.get(pyfunc.__name__)
        made = Func(pyfunc, key=name, module=module)
        made.inline = inline
        if isinstance(existing, Func):
            # a new func with the earlier overloads and this one (replacing one of the same
            # parameter types); an alias of the earlier func (`old = f`) keeps the earlier
            own = made.overloads[0]
            made.overloads = list(existing.overloads)
            made.include(own)
            made.inline = inline if inline is not None else existing.inline
        return made
    return wrap(f) if f is not None else wrap


def overload(kernel_or_stub, arg_types=None):
    """An overload of a generic kernel for concrete types: `overload(kernel, [types])` or
    `overload(kernel, {name: type})` returns it (launch it like any kernel); as a decorator
    on a stub `def kernel_name(x: float): ...` it adds one and returns the generic kernel."""
    if isinstance(kernel_or_stub, Kernel):
        if arg_types is None:
            arg_types = []
        return overloads.add(kernel_or_stub, arg_types)
    if isinstance(kernel_or_stub, pytypes.FunctionType):
        return overloads.overload_decorator(kernel_or_stub)
    raise RuntimeError("weft.overload() takes a generic kernel (and types) or a stub function")


def struct(cls=None, *, module=None):
    """Make a struct type from a class with annotated fields (listed in `structs` of the
    module of its Python module). `@struct(module=...)` is Warp's form; weft accepts and
    ignores the module (a struct's layout does not depend on one)."""
    if cls is None:
        return struct
    from .module import get_module
    t = StructType(cls)
    get_module(cls.__module__).register_struct(t)
    return t


def constant(value):
    """Mark a global as a compile-time constant (any global number already is one): a number,
    a value of a weft scalar type, or a vector/matrix/quaternion/transform value."""
    from ..types.introspect import is_value
    if not is_value(value):
        raise TypeError(f"Invalid constant type: {type(value)}")
    return value
