"""`weft._src`: the module paths of Warp's internals that Warp programs import from
(`warp._src.utils`, ...), as thin re-exports of weft's own modules. Submodules load on
first use (`wp._src.utils` works after `import weft`)."""

import importlib


def __getattr__(name):
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
