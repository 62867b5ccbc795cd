"""Warp's `warp._src.logger` is `weft.logger` (the same module object, so patching a
function here patches what weft calls)."""

import sys

from .. import logger as _logger

sys.modules[__name__] = _logger
