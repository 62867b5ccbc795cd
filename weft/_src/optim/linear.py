"""Warp's `warp._src.optim.linear`: weft/optim/linear.py (the same module object), for
programs and tests that import its internals (`TiledDot`, `_run_solver_loop`)."""

import sys

from ...optim import linear as _linear

sys.modules[__name__] = _linear
