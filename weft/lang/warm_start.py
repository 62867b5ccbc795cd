"""Warm start: launch a kernel compiled by an earlier process without building its IR.

The disk cache keys object code by the kernel's IR (codegen/cpu.py), so a warm process
used to run the frontend and the pass pipeline for every kernel only to find the key, and
importing the compiler for that was most of a warm start. A kernel whose compiled code
depends only on what this module can describe exactly also gets a *record*, keyed by
what its IR is made from:

- weft itself (each source file's name, size and modification time), Python's version
  and the target the code is compiled for;
- the kernel's source text, file and first line (error messages name lines), its name,
  options and parameter types, its module's options, and the settings in `weft.config`
  that are not about running (thread counts, logging, the cache folder);
- every name its code (and that of each func it refers to, recursively) reads, resolved
  as the frontend resolves it: numbers and strings by value, weft types by their text
  (structs field by field), funcs by their source, modules by the attributes read from
  them; names read from weft itself (`wp.sin`, or bare as Warp allows) count as weft's
  own, which its fingerprint covers, unless the program set them there.

A `static(...)` expression is evaluated from the names it reads, so it keeps the record
where it only combines them with operators and calls functions of their arguments alone
(`math`'s, a few of Python's builtins, weft's types and builtins, funcs): `static(pos == None)`
in a kernel factory, `static(math.cos(tol))`. A kernel referring to anything else (a Python
function called in `static(...)`, an object
of a user's class, a native func) or rewritten by `code_transformers` has no record and is
compiled, or loaded from the cache by its IR, as before: a record is only ever written
where a missed dependency cannot make it stale. The record holds the object code's cache
key and the `KernelFacts` a launch needs (compiled.py); a kernel's array analyses (what
a Tape records of its launches) have a record of their own. The IR is built later only if
something asks for it (a bounds error's message, `detect_anomaly`).
"""

from __future__ import annotations

import ast
import builtins
import enum
import functools
import hashlib
import json
import sys
import types as pytypes

import numpy as np

from .. import config
from ..codegen import cache
from ..types import StructType, Type
from ..types.scalars import SCALAR_VALUES
from .function import GENERIC, Func
from .source import ParsedSource, source_lines

RECORD_SUFFIX = ".warm"

#: Settings that change how a launch runs, never the code it runs.
_RUN_SETTINGS = frozenset({"changes", "num_threads", "parallel_threshold", "kernel_cache_dir", "verbose",
                           "quiet", "print_launches", "log_level", "verbose_warnings", "cache_kernels"})

#: Modules whose attributes are weft's own (covered by its fingerprint) or fixed. Not
#: "warp": where `warp` is weft under another name its modules are weft's (named "weft.*"),
#: and any other module under that name is a program's (Warp's test helpers, `warp.tests.*`).
_FIXED_MODULES = ("weft", "math", "numpy", "builtins", "typing")


class _Opaque(Exception):
    """A referenced value this module cannot describe exactly: the kernel gets no record."""


def kernel_text(kernel) -> str | None:
    """Everything `kernel`'s code is made from, as text (the values its names have now),
    or None if the kernel's code depends on something that cannot be described."""
    if kernel.code_transformers or kernel.lanes is not None or not kernel.source:
        return None
    try:
        return _kernel_text(kernel)
    except Exception:  # noqa: BLE001 - _Opaque, or whatever a value does when described: no text
        return None


def record_key(text: str | None, spec, options: tuple, target: str) -> str | None:
    """The key of a warm-start record for a kernel of this `kernel_text`, specialisation,
    compile options (bounds checks, fast math, mode, thread vectorisation, the adjoint
    variant) and target description; None without a text or with caching off."""
    if text is None or not config.cache_kernels:
        return None
    h = hashlib.sha256(_weft_fingerprint().encode())
    for part in (text, repr(spec), repr(options), target):
        h.update(b"\0")
        h.update(part.encode())
    return h.hexdigest()[:32]


def load(key: str) -> dict | None:
    """The record stored under `key` (a dict with "object" and "facts"), or None."""
    payload = cache.load(key, RECORD_SUFFIX)
    if payload is None:
        return None
    try:
        record = json.loads(payload)
    except ValueError:
        return None
    return record if isinstance(record, dict) and {"object", "facts"} <= record.keys() else None


def store(key: str, object_key: str, facts: dict) -> None:
    """Write the record of a compiled variant: its object code's cache key and the launch
    facts (compiled.KernelFacts)."""
    cache.store(key, json.dumps({"object": object_key, "facts": facts}).encode(), RECORD_SUFFIX)


def load_analyses(key: str) -> dict | None:
    """A kernel's array analyses (Kernel._array_analyses) stored under `key`, or None."""
    payload = cache.load(key, RECORD_SUFFIX)
    try:
        data = json.loads(payload) if payload is not None else None
        return {"effects": (_decode_keys(data["reads"]), _decode_keys(data["writes"])),
                "initial": _decode_keys(data["initial"]), "final": _decode_keys(data["final"])}
    except (TypeError, ValueError, KeyError, IndexError):  # (no record, or one of another layout)
        return None


def store_analyses(key: str, analyses: dict) -> None:
    reads, writes = analyses["effects"]
    data = {"reads": _encode_keys(reads), "writes": _encode_keys(writes),
            "initial": _encode_keys(analyses["initial"]), "final": _encode_keys(analyses["final"])}
    cache.store(key, json.dumps(data).encode(), RECORD_SUFFIX)


def load_keys(key: str) -> frozenset | None:
    """A set of array keys (Kernel.array_adjoint_reads) stored under `key`, or None."""
    payload = cache.load(key, RECORD_SUFFIX)
    try:
        return _decode_keys(json.loads(payload)["keys"]) if payload is not None else None
    except (TypeError, ValueError, KeyError, IndexError):
        return None


def store_keys(key: str, keys) -> None:
    cache.store(key, json.dumps({"keys": _encode_keys(keys)}).encode(), RECORD_SUFFIX)


def _encode_keys(keys) -> list:
    """Array keys (a parameter index, or (index, field path)) as JSON values."""
    return sorted(([k[0], list(k[1])] if isinstance(k, tuple) else k for k in keys), key=repr)


def _decode_keys(values) -> frozenset:
    return frozenset((int(v[0]), tuple(v[1])) if isinstance(v, list) else int(v) for v in values)


@functools.cache
def _weft_fingerprint() -> str:
    """weft's version and sources (cache.source_stats), Python's and numpy's versions."""
    h = hashlib.sha256(f"{config.version}|{sys.version}|{np.__version__}".encode())
    for path, size, mtime in cache.source_stats():
        h.update(f"{path}|{size}|{mtime}\0".encode())
    return h.hexdigest()


def _kernel_text(kernel) -> str:
    """Everything `kernel`'s compiled code is made from, as text; raises _Opaque."""
    func = kernel.func
    code = func.__code__
    parts = [
        f"kernel {kernel.key} {kernel.name} {code.co_filename}:{code.co_firstlineno}",
        kernel.source,
        "params " + ";".join(f"{n}:{_type_text(t)}" for n, t in kernel.params.items()),
        "options " + _mapping_text(kernel.options),
        "module " + _mapping_text(dict(kernel.module.options)),
        "config " + _mapping_text({name: value for name, value in vars(config).items()
                                   if not name.startswith("_") and name not in _RUN_SETTINGS
                                   and isinstance(value, (type(None), bool, int, float, str))}),
    ]
    parts += _references(func, set())
    return "\n".join(parts)


def _mapping_text(mapping: dict) -> str:
    return ";".join(f"{k}={_describe(v, set())}" for k, v in sorted(mapping.items()))


def _names(code) -> set:
    names = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _names(const)
    return names


def _references(pyfunc, seen: set) -> list:
    """Descriptions of the values the names in `pyfunc`'s code resolve to (as
    source.ParsedSource.lookup resolves them: closure, globals, Python's builtins, weft)."""
    code = pyfunc.__code__
    names = _names(code)
    closure = {}
    for name, cell in zip(code.co_freevars, pyfunc.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:
            closure[name] = None  # (an empty cell: the frontend reports it)
    env = pyfunc.__globals__
    out = []
    if "static" in names:  # (its expressions may evaluate anything; see static_eval.py)
        out += _static_attributes(pyfunc, seen)
    for name in sorted(names):
        if name in closure:
            value = closure[name]
        elif name in env:
            value = env[name]
        elif hasattr(builtins, name):
            out.append(f"{name}=builtins")
            continue
        else:  # (a bare weft name, `expect_eq`; or only an attribute's name)
            out.append(f"{name}={_weft_attribute(name, seen, names)}")
            continue
        out.append(f"{name}={_describe(value, seen, names)}")
    return out


#: Python builtins that a `static(...)` expression may call: functions of their arguments
_PURE_BUILTINS = frozenset({"abs", "bool", "complex", "divmod", "float", "int", "len", "max", "min", "pow",
                            "range", "round", "str", "sum", "tuple"})
#: the syntax a `static(...)` expression may use besides calls: names, attributes of modules,
#: constants, operators, conditional expressions, tuples and lists, subscripts
_PURE_NODES = (ast.Name, ast.Load, ast.Attribute, ast.Constant, ast.BinOp, ast.UnaryOp, ast.BoolOp,
               ast.Compare, ast.IfExp, ast.Tuple, ast.List, ast.Subscript, ast.Slice, ast.keyword,
               ast.operator, ast.unaryop, ast.boolop, ast.cmpop, ast.Call)


def _static_attributes(pyfunc, seen: set) -> list:
    """Descriptions of the funcs' attributes that `static(...)` expressions in `pyfunc` read
    (newton's `static(solve.core)`: a func a factory hung on another); raises _Opaque
    unless every such expression computes its value from the names it reads alone (which
    _references describes) and those attributes, with _PURE_NODES syntax and calls of pure
    functions (_pure_callable)."""
    try:
        src = ParsedSource(pyfunc)  # (its tree, and its `lookup`: names resolved as the frontend does)
    except (TypeError, SyntaxError):
        raise _Opaque("static") from None
    out = []
    for node in ast.walk(src.tree):
        if isinstance(node, ast.Call) and _named(node.func, "static"):
            for part in (n for arg in (*node.args, *node.keywords) for n in ast.walk(arg)):
                if not isinstance(part, _PURE_NODES):
                    raise _Opaque(f"static: {type(part).__name__}")
                if isinstance(part, ast.Attribute):
                    base = _resolve(part.value, src)
                    if isinstance(base, Func):
                        out.append(f"{ast.unparse(part)}={_describe(getattr(base, part.attr, None), seen)}")
                    elif not isinstance(base, pytypes.ModuleType):
                        raise _Opaque("static: an attribute of a value")  # (its value is not described)
                if isinstance(part, ast.Call) and not _pure_callable(_resolve(part.func, src)):
                    raise _Opaque("static: a call")
    return out


def _named(node, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name or isinstance(node, ast.Attribute) and node.attr == name


def _resolve(node, src: ParsedSource):
    """The value a name, a module's attribute or a func's attribute in `src`'s function
    stands for (a name as the frontend resolves it: ParsedSource.lookup); raises _Opaque."""
    if isinstance(node, ast.Name):
        found, value = src.lookup(node.id)
        if found:
            return value
    elif isinstance(node, ast.Attribute):
        base = _resolve(node.value, src)
        if isinstance(base, (pytypes.ModuleType, Func)) and hasattr(base, node.attr):
            return getattr(base, node.attr)
    raise _Opaque("static: a name")


def _pure_callable(f) -> bool:
    """Whether calling `f` gives a value that depends on its arguments alone."""
    if isinstance(f, (pytypes.BuiltinFunctionType, pytypes.FunctionType)) and getattr(f, "__module__", None) == "math":
        return True
    if getattr(builtins, getattr(f, "__name__", ""), None) is f:
        return f.__name__ in _PURE_BUILTINS
    if isinstance(f, (Type, Func)) or type(f).__module__ == "weft.builtins.registry":
        return True  # (weft's types, builtins and funcs evaluated in Python)
    return isinstance(f, type) and (issubclass(f, np.generic) or (f.__module__ or "").startswith("weft.types"))


def _describe(value, seen: set, names: frozenset = frozenset()) -> str:
    """An exact text for a value a kernel's code reads; raises _Opaque.
    `names`: the names the code reads (the attributes it may read from a module)."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, SCALAR_VALUES):
        return f"np:{value.dtype.str}:{value.tobytes().hex()}"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}({','.join(_describe(v, seen) for v in value)})"
    if isinstance(value, Type):
        return _type_text(value)
    if isinstance(value, pytypes.ModuleType):
        return _module_text(value, seen, names)
    if value is getattr(builtins, getattr(value, "__name__", ""), None):
        return f"builtins.{value.__name__}"
    kind = type(value).__module__ or ""
    data = getattr(value, "_data", None)
    if kind.startswith("weft.types") and isinstance(data, np.ndarray):  # a vector or matrix value
        return f"{type(value).__qualname__}:{data.dtype.str}:{data.shape}:{data.tobytes().hex()}"
    if kind == "weft.builtins.registry":
        return f"builtin:{value.name}"
    if isinstance(value, Func):
        return _func_text(value, seen)
    if isinstance(value, type) and (value.__module__ or "").startswith("weft."):
        return f"weft-class:{value.__module__}.{value.__qualname__}"
    if isinstance(value, type) and issubclass(value, enum.Enum):  # (`GeomType.BOX`: its members' values)
        members = ";".join(f"{m.name}={_describe(m.value, seen)}" for m in value)
        return f"enum:{value.__module__}.{value.__qualname__}{{{members}}}"
    if isinstance(value, enum.Enum):
        return f"enum-member:{type(value).__qualname__}.{value.name}={_describe(value.value, seen)}"
    raise _Opaque(type(value).__qualname__)


def _module_text(module, seen: set, names) -> str:
    name = module.__name__
    if module is sys.modules.get("weft"):  # (`wp.` names: weft's own, or set on it by the program)
        return "module:weft{" + ";".join(f"{a}={_weft_attribute(a, seen, names)}" for a in sorted(names)) + "}"
    if name.split(".")[0] in _FIXED_MODULES:
        return f"module:{name}"
    if id(module) in seen:
        return f"module:{name}"
    seen.add(id(module))
    attrs = [f"{a}={_describe(getattr(module, a), seen, names)}" for a in sorted(names) if hasattr(module, a)]
    return f"module:{name}{{{';'.join(attrs)}}}"


def _weft_attribute(name: str, seen: set, names) -> str:
    """What `weft.<name>` is: "weft" for weft's own objects (its fingerprint covers them;
    the builtins among them are imported only when first read, so absent and present must
    read alike), else the description of what the program set there. Read from the
    module's namespace: getattr would import the builtins."""
    value = vars(sys.modules["weft"]).get(name, _ABSENT)
    if value is _ABSENT:
        return "weft"
    if isinstance(value, Func):
        own = value.qualified_name.startswith("weft.")
    else:
        owner = getattr(value, "__module__", None)
        owner = owner if isinstance(owner, str) else type(value).__module__
        own = owner.split(".")[0] == "weft"
    return "weft" if own else _describe(value, seen, names)


_ABSENT = object()


def _func_text(func, seen: set) -> str:
    """A func by its overloads' sources, signatures, custom gradients and references."""
    if getattr(func, "native", False):
        raise _Opaque("native func")  # (its C++ library is loaded when its IR is built)
    if func.qualified_name.startswith("weft."):
        return f"weft-func:{func.qualified_name}"  # (weft's own: its fingerprint covers it)
    if id(func) in seen:
        return f"func:{func.key}"
    seen.add(id(func))
    parts = [f"func {func.key} {func.name}"]
    for overload in func.overloads:
        parts.append(_function_text(overload.pyfunc, seen, overload.source_text))
        parts.append(";".join(f"{n}:{'any' if t is GENERIC else _type_text(t)}" for n, t in overload.params.items()))
        parts.append("returns " + ("?" if overload.ret_type is None else _type_text(overload.ret_type)))
        parts.append(_mapping_text(overload.defaults))
        for hook in (overload.custom_grad, overload.custom_replay):
            parts.append("-" if hook is None else _function_text(hook, seen))
    return "{" + "\n".join(parts) + "}"


def _function_text(pyfunc, seen: set, source: str | None = None) -> str:
    """A Python function (a func's overload, a custom gradient) by its source and what
    the names in it refer to."""
    if not isinstance(pyfunc, pytypes.FunctionType):
        raise _Opaque("native func")
    try:
        text = source or "".join(source_lines(pyfunc)[0])
    except (OSError, TypeError):
        raise _Opaque("a function without source") from None
    code = pyfunc.__code__
    return "\n".join([f"{code.co_filename}:{code.co_firstlineno}", text, *_references(pyfunc, seen)])


def _type_text(t) -> str:
    """A weft type's text with every struct in it spelled out field by field."""
    if not isinstance(t, Type):
        return _describe(t, set())
    structs: dict = {}

    def visit(u):
        if not isinstance(u, Type):
            raise _Opaque(type(u).__qualname__)  # (a struct field of no weft type)
        if isinstance(u, StructType) and id(u) not in structs:
            structs[id(u)] = None
            structs[id(u)] = f"{u.cls.__module__}.{u.cls.__qualname__}{{" + ",".join(
                f"{n}:{repr(ft)}" for n, ft in u.fields.items()) + "}"
            for ft in u.fields.values():
                visit(ft)
        for inner in (getattr(u, "dtype", None), *getattr(u, "elements", ())):
            if isinstance(inner, Type):
                visit(inner)

    visit(t)
    return f"{type(t).__name__}:{t!r}" + "".join(f"|{s}" for s in structs.values())
