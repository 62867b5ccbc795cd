"""Warp's `warp._src.deterministic`: the names Warp programs and tests reach there. weft's
deterministic mode needs no scatter buffers or GPU sort on the CPU (see
weft/transforms/deterministic.py for what it refuses, and runtime/launch.py for how it runs)."""

import numpy as np

from ..config import DeterministicMode
from ..lang.errors import WarpDeterminismError  # noqa: F401

DETERMINISTIC_NOT_GUARANTEED = DeterministicMode.NOT_GUARANTEED
DETERMINISTIC_RUN_TO_RUN = DeterministicMode.RUN_TO_RUN
DETERMINISTIC_GPU_TO_GPU = DeterministicMode.GPU_TO_GPU

# Warp's reduction kinds of its scatter records (add and sub share one)
REDUCE_OP_ADD = 0
REDUCE_OP_MIN = 1
REDUCE_OP_MAX = 2


def _deterministic_arrays_overlap(array_a, array_b) -> bool:
    """Whether two arrays share any element's memory (exactly: two disjoint column blocks of
    one matrix do not, though their address ranges interleave)."""
    return bool(np.shares_memory(array_a.numpy(), array_b.numpy()))
