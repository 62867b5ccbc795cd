"""Warp's `warp._src.optim.fsai`: weft/optim/fsai.py (the same module object)."""

import sys

from ...optim import fsai as _fsai

sys.modules[__name__] = _fsai
