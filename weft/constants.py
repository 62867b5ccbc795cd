"""Math constants, under Warp's names (`weft.pi`, `weft.HALF_PI`, ...): Python floats, so
that inside kernels they are weak constants taking the precision of the values they meet."""

import math

E = e = math.e
LOG2E = log2e = 1.4426950408889634     # 1 / ln 2
LOG10E = log10e = 0.4342944819032518   # 1 / ln 10
LN2 = ln2 = 0.6931471805599453
LN10 = ln10 = 2.302585092994046
PHI = phi = 1.618033988749895        # (1 + sqrt 5) / 2
PI = pi = math.pi
HALF_PI = half_pi = math.pi / 2.0
TAU = tau = math.tau
INF = inf = math.inf
NAN = nan = math.nan

__all__ = ["E", "e", "LOG2E", "log2e", "LOG10E", "log10e", "LN2", "ln2", "LN10", "ln10", "PHI", "phi",
           "PI", "pi", "HALF_PI", "half_pi", "TAU", "tau", "INF", "inf", "NAN", "nan"]
