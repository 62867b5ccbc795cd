"""The builtin a `@weft.func_native` C++ snippet becomes (see lang/native.py)."""

from __future__ import annotations

from .registry import Builtin


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
