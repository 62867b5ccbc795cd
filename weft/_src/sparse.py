"""Warp's `warp._src.sparse`: the module holding BsrMatrix (weft/sparse/matrix.py, the same
module object), for programs and tests that reach its internals (`log_warning`, `wp`)."""

import sys

from ..sparse import matrix as _matrix

sys.modules[__name__] = _matrix
