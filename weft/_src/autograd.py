"""Warp's `warp._src.autograd` (where its `FunctionMetadata` lives) is `weft.autograd`
(the same module object)."""

import sys

from .. import autograd as _autograd

sys.modules[__name__] = _autograd
