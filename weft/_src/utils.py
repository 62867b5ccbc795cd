"""Warp's `warp._src.utils` is `weft.utils` (the same module object)."""

import sys

from .. import utils as _utils

sys.modules[__name__] = _utils
