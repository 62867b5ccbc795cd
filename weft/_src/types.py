"""`warp._src.types` as Warp programs and tests import from it: weft's types and Warp's
type helpers (thin re-exports)."""

from ..runtime.array import array  # noqa: F401
from ..types import *  # noqa: F401,F403
from ..types.composite import Matrix, Vector  # noqa: F401
from ..types.introspect import *  # noqa: F401,F403
from ..types.scalars import AnyScalar as Scalar  # noqa: F401
from ..types.scalars import Float, Int  # noqa: F401
