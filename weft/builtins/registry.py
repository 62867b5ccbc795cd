"""The builtin registry.

Two kinds of builtin:

- `Primitive`: a scalar operation that appears in the IR as a `call` op. It is defined
  once, with everything about it side by side: its type rule, its LLVM lowering, its
  derivative rule (`vjp`: adjoints of the arguments from the adjoint of the result) and an
  optional Python implementation for calls from Python scope. A primitive without `vjp`
  is not differentiable; the reverse pass reports it by name.
- `Builtin`: a name users call (`weft.sin`, `weft.dot`, `weft.atomic_add`). Its `expand`
  function emits IR (primitives, arithmetic, composite ops) for the given arguments, so
  derived builtins such as `dot` or `normalize` need no derivative rule of their own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(eq=False)
class Primitive:
    name: str
    type_rule: Callable          # (arg_types) -> list of result types; raises TypeError
    lower: Callable              # (cg, llvm_args, op) -> llvm value or list of values
    vjp: Callable | None = None  # (b, args, results, adjoints of results) -> arg adjoints
    doc: str = ""
    # argument positions that are updated in place (random state): the call returns the
    # new value of each as extra leading results and the frontend rebinds the variable.
    inout: tuple[int, ...] = ()
    # writes memory the IR does not see as a value (a tile stack): never removed as dead
    effects: bool = False
    # rough count of the scalar operations one call runs, from its argument and result
    # types (None: one); it decides whether a launch is split over threads.
    work: Callable | None = None
    # calls a C++ snippet (builtins/native.py): reads and writes the arrays it is passed
    native: bool = False

    def result_types(self, arg_types):
        return self.type_rule(list(arg_types))

    def __repr__(self):
        return f"<primitive {self.name}>"


@dataclass(eq=False)
class Builtin:
    name: str
    expand: Callable             # (ctx, args, kwargs) -> Value | python constant | None
    py_impl: Callable | None = None
    doc: str = ""
    inout: tuple[int, ...] = ()  # as for Primitive: these arguments must be local variables
    extra: dict = field(default_factory=dict)

    def __call__(self, *args, **kwargs):
        """Python scope: `py_impl` where one is given, else the builtin compiled for these
        argument types, so that the result is what a kernel computes (lang/pyscope.py)."""
        if self.py_impl is not None:
            return self.py_impl(*args, **kwargs)
        return _pyscope().call_builtin(self, args, kwargs)

    @property
    def key(self) -> str:
        """The builtin's name (Warp's `Function.key`)."""
        return self.name

    def __repr__(self):
        return f"<weft builtin {self.name}>"


def _pyscope():
    """lang/pyscope.py, imported on first use (the frontend imports this module)."""
    global _PYSCOPE
    if _PYSCOPE is None:
        from ..lang import pyscope
        _PYSCOPE = pyscope
    return _PYSCOPE


_PYSCOPE = None
PRIMITIVES: dict[str, Primitive] = {}
BUILTINS: dict[str, Builtin] = {}


def primitive(name, type_rule, lower, vjp=None, doc="", inout=(), work=None) -> Primitive:
    if name in PRIMITIVES:
        raise ValueError(f"primitive {name} defined twice")
    p = Primitive(name, type_rule, lower, vjp, doc, inout, work=work)
    PRIMITIVES[name] = p
    return p


def builtin(name: str, py_impl=None, inout=(), aliases=()):
    """Decorator registering `expand(ctx, args, kwargs)` as the builtin `name`."""
    def register(expand):
        b = Builtin(name, expand, py_impl, (expand.__doc__ or "").strip(), inout)
        for n in (name, *aliases):
            if n in BUILTINS:
                raise ValueError(f"builtin {n} defined twice")
            BUILTINS[n] = b
        return b
    return register
