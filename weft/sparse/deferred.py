"""Sparse operations inside a graph capture: recorded whole, run when the graph runs.

A sparse operation reads its operands' topology on the host (sparse/assemble.py), so inside
a capture, where the kernels that fill those operands are recorded rather than run, it
cannot be split into "topology now, values at replay" as an eager call is. Instead the
whole call is recorded (as Warp's CPU capture records its topology operations) and runs,
topology and values, each time the graph does, seeing what the earlier recorded work
wrote. What must exist when the call is made is made then, as Warp allocates at capture
time: an output the call would create (`bsr_mm(x, y)`'s matrix, `bsr_mv`'s vector), the
destination's shape, and storage for the upper bound of its blocks, so that the replay
writes into the same arrays the rest of the graph (and `capture_save`'s parameters) refer
to. A padded destination's row capacities are restored from their values at capture time
before each replay (a replay after its `offsets` were overwritten rebuilds them).

Within a capture the destination's topology is that of the last replay (none yet at
capture time): `BsrMatrix.nnz_sync()` refuses to read one recorded in the running capture,
`status_sync()` refuses to read any (both `NotImplementedError`, as Warp's).

Work recorded while a Tape records is left as it was (topology at capture time, values
recorded): the Tape needs the launches when the call is made to differentiate them.
"""

from __future__ import annotations

import functools
import inspect
import weakref

import numpy as np

from ..runtime import capture

#: The public operations that record themselves: name -> prepare(arguments) (see `deferrable`).
DEFERRED: dict = {}


def deferring() -> bool:
    """Whether a sparse call now should be recorded whole (a capture, and no Tape recording)."""
    if not capture.capturing():
        return False
    from ..tape import recording_tape
    return recording_tape() is None


def deferrable(prepare):
    """Decorator: inside a capture, `prepare(args)` (the call's bound arguments, a dict it
    may complete: an output to create, a pre-sized destination) returns (result, the
    matrices whose topology the call sets), and the call is recorded to run at replay."""
    def wrap(impl):
        signature = inspect.signature(impl)
        name = impl.__name__

        @functools.wraps(impl)
        def public(*args, **kwargs):
            if not deferring():
                return impl(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = dict(bound.arguments)
            result, dests = prepare(arguments)
            graph = capture.active_graph()
            for d in dests:
                _restore_capacity(d)
                d._deferred_in = weakref.ref(graph)

            def run():
                impl(**arguments)
            capture.record(run, ("call", f"weft.sparse.{name}", (), arguments))
            return result
        DEFERRED[name] = prepare
        return public
    return wrap


def recorded_in_capture(A) -> bool:
    """Whether a topology update of `A` was recorded in the capture under way."""
    ref = getattr(A, "_deferred_in", None)
    graph = ref() if ref is not None else None
    return graph is not None and graph is capture.active_graph()


def _restore_capacity(A) -> None:
    """A padded matrix's row capacities (its `offsets`), written back by the graph before the
    recorded call, so a replay does not depend on what `offsets` holds by then."""
    if A.row_counts is None:
        return
    from ..runtime.array import array
    from ..runtime.array_create import copy
    snapshot = array(A.offsets.numpy().copy(), dtype=A.offsets.dtype, device=A.device)
    copy(A.offsets, snapshot)  # (recorded: the capture is on)


# Shapes and storage made at capture time ---------------------------------------------------

def storage(A) -> int:
    """Blocks `A` can store (an upper bound of those it holds, now or after a replay)."""
    return int(max(A.columns.shape[0], A.nnz))


def presize(A, nrow: int | None = None, ncol: int | None = None, blocks: int | None = None,
            requires_grad: bool = False) -> None:
    """Give `A` its new shape now and, with `blocks`, storage for that many blocks (a
    compact matrix's `nnz` becomes that bound, as Warp's), so that the replayed call writes
    into these arrays."""
    from .assemble import iarray
    from .matrix import ensure_capacity, write_offsets
    if nrow is not None:
        A.nrow = int(nrow)
    if ncol is not None:
        A.ncol = int(ncol)
    if A.offsets.shape[0] < A.nrow + 1:
        write_offsets(A, np.zeros(A.nrow + 1, np.int32))
    if A.row_counts is not None and A.row_counts.shape[0] < A.nrow:
        A.row_counts = iarray(np.zeros(A.nrow), A.device)
    if blocks is not None and A.row_counts is None:
        A.nnz = int(blocks)
    ensure_capacity(A, max(int(blocks or 0), int(A.nnz)), requires_grad)
