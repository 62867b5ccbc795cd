"""`@weft.func_native(snippet, adj_snippet=None, replay_snippet=None)`: Warp's functions
written as C++ snippets.

weft compiles Python to LLVM IR and has no C++ compiler in its pipeline, so a snippet
cannot run. The decorator is accepted, so that modules defining such functions import and
their other kernels work; calling one (in a kernel, or from Python) is a clear error.
"""

from __future__ import annotations


def func_native(snippet: str, adj_snippet: str | None = None, replay_snippet: str | None = None):
    """Decorator: a function whose body is the C++ `snippet` (see the module docstring)."""
    if not isinstance(snippet, str):
        raise TypeError(f"@weft.func_native(snippet) takes the C++ source as a string, got {type(snippet).__name__}")

    def wrap(pyfunc):
        from ..builtins.native import NativeFunc  # (here: `import weft` does not import the builtins)
        return NativeFunc(pyfunc, snippet, adj_snippet, replay_snippet)
    return wrap
