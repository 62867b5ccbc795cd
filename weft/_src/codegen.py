"""`warp._src.codegen`: the compile-error classes Warp programs catch by this path (no logic
here; weft's code generation is not Warp's and none of its internals are reproduced)."""

from ..lang.errors import (  # noqa: F401
    CompileError,
    WarpCodegenAttributeError,
    WarpCodegenError,
    WarpCodegenIndexError,
    WarpCodegenKeyError,
    WarpCodegenTypeError,
    WarpCodegenValueError,
)
