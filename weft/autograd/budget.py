"""A Tape with a memory budget: `weft.Tape(memory_budget=bytes)`.

A simulation that overwrites its state arrays step after step makes an unbounded Tape keep
a copy of the state per step (the overwritten values its adjoints read). With a budget,
the Tape keeps checkpoints instead and recomputes: consecutive kernel launches form
*segments*; for each segment the Tape keeps an undo log, the contents at the segment's
start of the buffers written from then until the next segment starts (only buffers that a
segment's launch has read: no other old value is ever needed). During backward, segments
are taken last first: the undo log puts the state back to the segment's start, the
segment's launches are re-run on a private Tape (itself budgeted, so long segments are
split again) whose backward is run, and the undo log is applied once more. The adjoint
launches are the same, with the same values, as an unbounded Tape's: the gradients are
identical, bit for bit. After backward, every array holds what the forward left.

Segments start one launch long. When the undo logs held pass half the budget, adjacent
segments are merged pairwise (the merged log keeps the earlier of two copies of a buffer)
and new segments are made twice as long: the number of segments stays within the budget
as the recording grows, and each level of nesting re-runs the forward once (in the manner
of Revolve's binomial checkpointing, with bisection in place of the optimal schedule).

Kernel launches are re-run; other steps (copies, `record_func`, Functions, checkpoints)
end a segment and keep the snapshots an unbounded Tape keeps.
"""

from __future__ import annotations

import numpy as np

from .. import tape as tape_module
from ..tape import _argument_array, _arrays_in, _root, _root_id


class Segment:
    """Consecutive launches re-run during backward, and the undo log of its span (root
    buffer id -> (buffer, contents at the span's start))."""

    def __init__(self, budget: BudgetRecorder):
        self.budget = budget
        self.entries: list = []
        self.undo: dict[int, tuple] = {}
        self.closed = False

    @property
    def name(self) -> str:
        return f"segment of {len(self.entries)} launches"

    @property
    def arrays(self) -> list:
        return [a for e in self.entries for p in e.grad_of if p is not None for a in _arrays_in(p)]

    @property
    def undo_bytes(self) -> int:
        return sum(contents.nbytes for _, contents in self.undo.values())

    def replay_bytes(self) -> int:
        """At most what an unbounded Tape keeps for these launches: what they write."""
        total = 0
        for e in self.entries:
            for key in e.kernel.array_effects()[1]:
                a = _argument_array(e.params, key)
                total += a.numpy().nbytes if a is not None else 0
        return total

    def restore(self):
        for buffer, contents in self.undo.values():
            np.copyto(buffer, contents)

    def backward(self):
        """Re-run the launches from the segment's start on a private budgeted Tape and run
        its backward; leave the state as it was at the segment's start."""
        from ..runtime.launch import launch
        self.restore()
        remaining = max(self.budget.limit - self.budget.held_bytes(), 1)
        private = tape_module.Tape()
        if len(self.entries) > 1 and self.replay_bytes() > remaining:
            # split again: segments at most half as long, so this ends
            private.memory_budget = remaining
            private._budget = BudgetRecorder(private, remaining, max_length=len(self.entries) // 2)
        with tape_module.recording_on(private):
            for e in self.entries:
                launch(e.kernel, e.dims, inputs=e.params, device=e.device)
        private.backward()
        _release(private)  # now, not when the garbage collector finds the cycles
        self.restore()


class BudgetRecorder:
    """The segment bookkeeping of a budgeted Tape (see the module docstring)."""

    def __init__(self, tape, limit: int, max_length: float = float("inf")):
        if not isinstance(limit, (int, float, np.integer, np.floating)) or isinstance(limit, bool) \
                or not limit > 0 or limit == float("inf"):
            raise ValueError(f"Tape(memory_budget=...): expected a positive number of bytes, got {limit!r}")
        self.tape = tape
        self.limit = int(limit)
        self.segment_length = 1
        self.max_length = max_length  # of a segment (a re-run splits its segment in shorter ones)
        self.current: Segment | None = None  # the segment whose span we are in
        self.needed: set[int] = set()        # root buffers some segment launch read
        self.written: dict[int, np.ndarray] = {}  # root buffers segment launches wrote
        self._end_state: list = []

    # Recording -------------------------------------------------------------------------
    def admit(self, entry):
        """A kernel launch is being recorded: it joins the open segment (or starts one)."""
        seg = self.current
        if seg is None or seg.closed or len(seg.entries) >= self.segment_length:
            if seg is not None and not seg.closed:
                seg.closed = True
            seg = self.current = Segment(self)
            self.tape.launches.append(seg)
        seg.entries.append(entry)
        entry.segment = seg

    def end_segment(self):
        """A step that is not re-run (a copy, a Function) is recorded: no launch joins the
        open segment any more (its span goes on to the next segment)."""
        if self.current is not None:
            self.current.closed = True

    def note_read(self, a):
        self.needed.add(_root_id(a))

    def note_written(self, a):
        root = _root(a)
        self.written.setdefault(id(root), root)

    def log_write(self, target):
        """`target` is about to be written: the span we are in keeps its buffer's contents
        if a segment launch read it and the span has no copy yet."""
        root = _root(target)
        seg = self.current
        if seg is None or id(root) not in self.needed or id(root) in seg.undo:
            return
        seg.undo[id(root)] = (root, root.copy())
        if self.held_bytes() > self.limit // 2:
            self._merge()

    def held_bytes(self) -> int:
        """Bytes of the undo logs, and during backward of the forward's end state."""
        return (sum(e.undo_bytes for e in self.tape.launches if isinstance(e, Segment))
                + sum(contents.nbytes for _, contents in self._end_state))

    def _merge(self):
        """Merge adjacent segments pairwise (the later one's copies of buffers the earlier
        one also copied are dropped) and make new segments twice as long."""
        merged, pending = [], None
        for e in self.tape.launches:
            if isinstance(e, Segment) and e is not self.current:
                if pending is None or len(pending.entries) + len(e.entries) > self.max_length:
                    pending = e
                    merged.append(e)
                    continue
                pending.entries.extend(e.entries)
                for entry in e.entries:
                    entry.segment = pending
                for key, value in e.undo.items():
                    pending.undo.setdefault(key, value)
                pending = None
                continue
            pending = None
            merged.append(e)
        self.tape.launches[:] = merged
        self.segment_length = min(2 * self.segment_length, self.max_length)

    # Backward --------------------------------------------------------------------------
    def before_backward(self):
        """Keep what the forward left in the buffers segments write (put back afterwards)."""
        self._end_state = [(buffer, buffer.copy()) for buffer in self.written.values()]

    def after_backward(self):
        for buffer, contents in self._end_state:
            np.copyto(buffer, contents)
        self._end_state = []

    def reset(self):
        self.current = None
        self.needed.clear()
        self.written.clear()
        self.segment_length = 1


def _release(tape):
    """Drop what a private Tape holds (its segments and entries refer to each other)."""
    for e in tape.launches:
        if isinstance(e, Segment):
            e.undo.clear()
            e.entries.clear()
    tape.launches.clear()
    tape._readers.clear()
    tape._written.clear()
    tape.gradients.clear()
