"""`weft.checkpoint(fn, *args)`: run `fn` without keeping its launches on the Tape; during
`Tape.backward` they are re-run from the saved inputs, then differentiated (as
`torch.utils.checkpoint` does). Memory for time: what a Tape keeps for `fn` is its inputs,
not the snapshots and intermediate arrays of its launches.

    with wp.Tape() as tape:
        for step in range(steps):
            wp.checkpoint(simulate_100_substeps, state)
        wp.launch(loss_kernel, ...)
    tape.backward(loss)

`fn` may take arrays as arguments or reach them through a closure: the arrays its launches
read before writing them are its inputs, found by watching the launches as `fn` runs. The
re-run must do what the first run did (same kernels, same arrays, or new arrays returned
in the same order); the gradients are then identical, bit for bit, to recording `fn`'s
launches directly. Arrays `fn` touches are put back as they were after the re-run.
"""

from __future__ import annotations

import numpy as np

from .. import tape as tape_module
from .problem import _distinct


def checkpoint(fn, *args, **kwargs):
    """Call `fn(*args, **kwargs)`; under a recording Tape, record it as one step that
    re-runs `fn` during backward. Returns what `fn` returns."""
    tape = tape_module.recording_tape()
    if tape is None:
        return fn(*args, **kwargs)
    step = _CheckpointStep(fn, args, kwargs)
    with tape_module.watching(step.observe), tape_module.paused():
        result = fn(*args, **kwargs)
    step.returned = _arrays_of(result)
    tape.record_step(step, step.inputs, step.written, saved=())
    step.arrays = [*step.inputs, *step.written]
    return result


class _CheckpointStep:
    """`fn`'s call as a Tape records it: its inputs (`params`, replaced by the Tape with
    snapshots if overwritten later, `fn`'s own writes included) and the arrays it writes."""

    def __init__(self, fn, args, kwargs):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.inputs: list = []     # arrays read before written, in order met
        self.params: list = []     # their contents at call time (the array, or a snapshot)
        self.written: list = []
        self._seen: set[int] = set()
        self.returned: list = []
        self.arrays: list = []

    @property
    def name(self) -> str:
        return f"checkpoint({getattr(self.fn, '__name__', 'fn')})"

    def observe(self, kind, detail):
        """A launch or copy inside `fn` is about to run: note its inputs and outputs."""
        if kind == "launch":
            kernel, _, params, _ = detail
            reads, writes = kernel.array_effects()
            read = [tape_module._argument_array(params, k) for k in sorted(reads, key=tape_module._key_order)]
            write = [tape_module._argument_array(params, k) for k in sorted(writes, key=tape_module._key_order)]
        else:
            dest, src = detail
            read, write = [src], [dest]
        for a in read:
            if a is not None and id(a) not in self._seen:  # read before written: an input
                self._seen.add(id(a))
                self._track_input(a)
        for a in write:
            if a is not None and all(w is not a for w in self.written):
                self._seen.add(id(a))
                self.written.append(a)

    def _track_input(self, a):
        # registered as a reader now, so that writes inside fn (and after) snapshot it
        tape = next(t for t in reversed(tape_module.active_tapes) if t is not None)
        tape._add_reader(a, self, len(self.params))
        self.inputs.append(a)
        self.params.append(a)

    def backward(self):
        """Re-run `fn` from the saved inputs on a private Tape and run that Tape's backward
        (the adjoints of fn's outputs are their `.grad`, filled by later steps)."""
        touched = _distinct([*self.inputs, *self.written])
        now = [(a, a.numpy().copy()) for a in touched]
        for a, saved in zip(self.inputs, self.params):
            if saved is not a:
                np.copyto(a.numpy(), saved.numpy())
        private = tape_module.Tape()
        with tape_module.recording_on(private):
            result = self.fn(*self.args, **self.kwargs)
        returned = _arrays_of(result)
        if len(returned) != len(self.returned):
            raise RuntimeError(f"{self.name}: the re-run during backward returned {len(returned)} arrays, the "
                               f"first run {len(self.returned)}; fn must do the same work each time")
        moved = [(old, new) for old, new in zip(self.returned, returned) if new is not old and old.grad is not None]
        for old, new in moved:
            if new.grad is None:
                raise RuntimeError(f"{self.name}: the re-run returned an array without a gradient where the "
                                   "first run's has one; create it with requires_grad=True")
            np.copyto(new.grad.numpy(), old.grad.numpy())
        private.backward()
        for old, _ in moved:
            if not old.retain_grad:
                old.grad.zero_()
        for a, contents in now:
            np.copyto(a.numpy(), contents)


def _arrays_of(result) -> list:
    from ..runtime.array import array
    if isinstance(result, array):
        return [result]
    if isinstance(result, (tuple, list)):
        return [r for r in result if isinstance(r, array)]
    return []

