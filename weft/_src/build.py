"""Warp's `warp._src.build`: the kernel cache's folder and clearing (`weft.codegen.cache`,
the same module object)."""

import sys

from ..codegen import cache as _cache

sys.modules[__name__] = _cache
