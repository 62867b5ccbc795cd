"""`@weft.func_native(snippet, adj_snippet=None, replay_snippet=None)`: Warp's functions
written as C++ snippets.

weft compiles Python to LLVM IR and has no C++ compiler in its pipeline, so a snippet
cannot run. The decorator is accepted, so that modules defining such functions import and
their other kernels work; calling one (in a kernel, or from Python) is a clear error.
"""

from __future__ import annotations

from ..builtins.registry import Builtin


def func_native(snippet: str, adj_snippet: str | None = None, replay_snippet: str | None = None):
    """Decorator: a function whose body is the C++ `snippet` (see the module docstring)."""
    if not isinstance(snippet, str):
        raise TypeError(f"@weft.func_native(snippet) takes the C++ source as a string, got {type(snippet).__name__}")

    def wrap(pyfunc):
        return NativeFunc(pyfunc, snippet, adj_snippet, replay_snippet)
    return wrap


class NativeFunc(Builtin):
    """A C++ snippet function: kept with its sources, refused where it is called."""

    def __init__(self, pyfunc, snippet, adj_snippet, replay_snippet):
        super().__init__(pyfunc.__name__, self._refuse, None, (pyfunc.__doc__ or "").strip())
        self.func = pyfunc
        self.__doc__ = pyfunc.__doc__
        self.__wrapped__ = pyfunc
        self.snippet, self.adj_snippet, self.replay_snippet = snippet, adj_snippet, replay_snippet

    def message(self) -> str:
        return (f"@func_native '{self.name}' is a C++ snippet, and weft compiles no C++: write it as a "
                "@weft.func in Python (with a @weft.func_grad for its adjoint snippet)")

    def _refuse(self, ctx, args, kwargs):
        ctx.error(self.message())

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(self.message())

    def __repr__(self):
        return f"<weft func_native {self.name}>"
