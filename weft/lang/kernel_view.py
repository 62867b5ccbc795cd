"""`kernel.adj`: what Warp programs read off a kernel's code generator (Warp's `Adjoint`),
answered from weft's own view of the kernel. Read-only: the parsed function (`tree`,
`source`), its arguments with whether the kernel reads or writes them (`args`), and the
`wp.static` expressions evaluated when the kernel was defined.

weft has no generated C++ (`blocks`, `body_forward`): code that inspects it checks
`hasattr(kernel.adj, "blocks")` first, as Warp's own tests do.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass
class KernelArg:
    """One kernel argument as Warp's `Var` shows it."""

    label: str
    type: object
    is_read: bool = False
    is_write: bool = False

    @property
    def ctype(self) -> str:
        return getattr(self.type, "__name__", repr(self.type))


class KernelView:
    """`kernel.adj` (see the module docstring)."""

    def __init__(self, kernel):
        self._kernel = kernel
        self._parsed = None

    @property
    def fun_name(self) -> str:
        return self._kernel.func.__name__

    @property
    def filename(self) -> str:
        return self._source().file

    @property
    def source(self) -> str:
        return self._source().text

    @property
    def tree(self) -> ast.FunctionDef:
        return self._source().tree

    @property
    def args(self) -> list[KernelArg]:
        """The arguments in order; arrays the kernel reads or writes (atomics included) say so."""
        kernel = self._kernel
        params = kernel.params
        reads, writes = kernel.array_effects() if not kernel.is_generic else (frozenset(), frozenset())
        return [KernelArg(name, params[name], is_read=k in reads, is_write=k in writes)
                for k, name in enumerate(kernel.arg_names)]

    @property
    def resolved_static_expressions(self) -> dict:
        """`wp.static(...)` expressions evaluated when the kernel was defined: source text -> value."""
        tree = self.tree
        calls = {(n.lineno, n.col_offset, n.end_lineno, n.end_col_offset): n for n in ast.walk(tree)
                 if isinstance(n, ast.Call)}
        return {ast.unparse(calls[key]) if key in calls else str(key): value
                for key, value in self._kernel._eager_statics.items()}

    @property
    def has_unresolved_static_expressions(self) -> bool:
        """Whether some `wp.static(...)` waits for the compiler (it reads a local name)."""
        from .static_eval import _outermost_static_calls
        src = self._source()
        calls = list(_outermost_static_calls(src.tree, {**src.globals, **src.closure}))
        return len(calls) > len(self._kernel._eager_statics)

    def get_references(self) -> tuple[dict, dict, dict]:
        """What the kernel's code names from outside it (Warp's `Adjoint.get_references`):
        (constants: name -> value for the numbers, vectors and matrices it reads; types:
        struct type -> the name it is read under; functions: weft func -> the name it is
        called under). Names the kernel assigns are its own locals and not included."""
        from ..types import StructType
        from ..types.introspect import is_value
        from .function import Func
        src = self._source()
        env = {**src.globals, **src.closure}
        local = {a.arg for a in ast.walk(src.tree) if isinstance(a, ast.arg)}
        local |= {n.id for n in ast.walk(src.tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        constants, types, functions = {}, {}, {}
        for node in ast.walk(src.tree):
            if not isinstance(node, ast.Name) or node.id in local or node.id not in env:
                continue
            value = env[node.id]
            if isinstance(value, StructType):
                types[value] = node.id
            elif isinstance(value, Func):
                functions[value] = node.id
            elif is_value(value):
                constants[node.id] = value
        return constants, types, functions

    def _source(self):
        if self._parsed is None:
            self._parsed = self._kernel.parsed_source()
        return self._parsed

