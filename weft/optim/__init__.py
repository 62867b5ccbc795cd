"""Gradient-descent optimizers over weft arrays: `SGD` and `Adam`, with Warp's (and PyTorch's)
update rules and interface (`Optimizer(params, ...)`, `step(grads)`, `set_params`,
`reset_internal_state`). Importable as `weft.optim` (and as `warp.optim` when weft is
imported as warp). `weft.optim.linear` holds the iterative linear solvers; like Warp's,
it is loaded with the package.

Each update is one kernel launch per parameter array, over all of its elements, for any
float dtype (float16 parameters keep float32 moments, as Warp does) and vectors or matrices
of them.
"""

from . import linear
from .adam import Adam
from .sgd import SGD

__all__ = ["Adam", "SGD", "linear"]
