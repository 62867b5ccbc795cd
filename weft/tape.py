"""`weft.Tape`: records forward launches and runs their adjoints in reverse order.

    with weft.Tape() as tape:
        weft.launch(step, dim=n, inputs=[x0], outputs=[x1])
        weft.launch(loss_kernel, dim=n, inputs=[x1], outputs=[loss])
    tape.backward(loss=loss)      # x0.grad now holds d loss / d x0

Adjoint arrays are the arrays' `.grad` (arrays made with `requires_grad=True` have one);
a struct argument's adjoint is a struct of the same type holding the `.grad` of its arrays
(`tape.gradients` maps each argument to its adjoint). Overwrites are safe: when a recorded
launch is about to write an array that an earlier recorded launch (or the launch itself)
read, the tape first copies the array, and those readers' adjoints replay from the copy.
So `a[i] = a[i] * 2`, or reusing an array across steps, gives right gradients; the copies
are the memory price (`tape.reset()` frees them). `config.verify_autograd_array_access`
also reports such overwrites (see `warn_overwrite`).

Launches inside `weft.no_grad()` are not recorded (their writes still protect what was
recorded). Steps with a backward of their own take part like launches: copies,
`record_func`, `weft.autograd.Function` and `weft.checkpoint` (weft/autograd/).
`Tape(memory_budget=bytes)` re-runs segments of launches during backward instead of
keeping every copy (weft/autograd/budget.py); `print(tape)` shows what a Tape holds.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from . import config
from .tape_arguments import (  # noqa: F401 - (budget.py, anomaly.py and others import them from here)
    _argument_array,
    _argument_kinds,
    _arrays_in,
    _key_name,
    _key_order,
    _recording_keys,
    _runtime_modules,
    _value_at,
    _with_field,
    adjoint_struct,
)
from .types import CompositeValue

#: The Tapes inside whose `with` blocks we are, innermost last. A None entry pauses
#: recording (`paused()`: `no_grad`, a Function's forward, a Tape's backward); a Tape may
#: only be entered where none records (one recording Tape at a time, as in Warp).
active_tapes: list[Tape | None] = []
#: Callbacks told of every launch and copy about to run (see `watching`).
_watchers: list = []


def recording_tape() -> Tape | None:
    """The Tape that records launches now, or None."""
    return active_tapes[-1] if active_tapes else None


@contextmanager
def paused():
    """Launches and copies inside are not recorded on any Tape. Writes still protect what
    recorded launches read (the Tapes snapshot it), so their adjoints stay right."""
    active_tapes.append(None)
    try:
        yield
    finally:
        active_tapes.pop()


def no_grad():
    """`with weft.no_grad():` (or as a decorator): launches inside are not recorded on any
    Tape, as in PyTorch (Warp has no such switch)."""
    return paused()


@contextmanager
def recording_on(tape: Tape):
    """Record on `tape` inside, whatever records outside (a private Tape for a replay)."""
    active_tapes.append(tape)
    try:
        yield tape
    finally:
        active_tapes.pop()


@contextmanager
def watching(callback):
    """`callback(kind, detail)` is called before each launch ("launch", (kernel, dims,
    params, device)) and copy ("copy", (dest, src)) inside, recorded or not."""
    _watchers.append(callback)
    try:
        yield
    finally:
        _watchers.remove(callback)


def on_launch(kernel, dims, params, device, record: bool = True, n_inputs: int | None = None):
    """A forward launch is about to run (called by `weft.launch`; the first `n_inputs` of
    `params` were its `inputs`): the recording Tape (if any, and `record`) records it; under
    `paused()`, arrays it writes that recorded launches read are snapshotted first."""
    for watch in list(_watchers):
        watch("launch", (kernel, dims, params, device))
    tape = recording_tape()
    if tape is not None and record:
        tape.add_launch(kernel, dims, params, device, n_inputs)
    elif tape is None and active_tapes:
        writes = kernel.array_effects()[1]
        for key in writes:
            a = _argument_array(params, key)
            if a is not None:
                _protect(a)


def any_watchers() -> bool:
    """Whether something watches launches and copies (`watching`)."""
    return bool(_watchers)


def on_copy(dest, src, dest_offset: int, src_offset: int, count: int):
    """An array copy (`weft.copy`, `assign`) is about to run; see `on_launch`."""
    for watch in list(_watchers):
        watch("copy", (dest, src))
    tape = recording_tape()
    if tape is not None:
        tape.record_copy(dest, src, dest_offset, src_offset, count)
    elif active_tapes:
        _protect(dest)


def protect(a, whole: bool = True):
    """`a` is about to be written in place outside a launch or copy (`fill_`, `zero_`):
    Tapes keep what their recorded launches read of it, and a recording Tape records a fill
    of all of `a` (`whole`; its adjoint: see Tape.record_fill)."""
    if active_tapes:
        _protect(a)
        tape = recording_tape()
        if tape is not None and whole:
            tape.record_fill(a)


def _protect(a):
    """`a` is about to be written without being recorded: every Tape keeps what it read."""
    for tape in active_tapes:
        if tape is not None:
            tape.will_write(a)


@dataclass(eq=False)
class _Recorded:
    """A forward launch: the arguments its adjoint replays with (snapshots where the
    arrays were overwritten later) and the arguments (arrays, structs) whose adjoints are
    its adjoints."""

    kernel: object
    dims: tuple
    params: list
    grad_of: list  # per parameter: the array or struct whose adjoint is its adjoint, or None
    device: object
    segment: object = None  # a budgeted Tape's segment that re-runs this launch (params stay live)
    where: tuple | None = None  # (file, line) of the user's launch, kept under detect_anomaly
    n_inputs: int = 0  # how many of `params` the launch took as `inputs`

    @property
    def name(self) -> str:
        return self.kernel.name

    def __getitem__(self, k):
        """Warp's list form of a recorded launch: [kernel, dim, max_blocks, inputs, outputs,
        device, block_dim, metadata] (tools that walk `tape.launches` index it)."""
        return [self.kernel, self.dims, 0, self.params[:self.n_inputs], self.params[self.n_inputs:],
                self.device, 0, None][k]


@dataclass(eq=False)
class _Func:
    """A recorded step with its own `backward()` (a copy, a fill, `record_func`); callable,
    as the functions Warp's `record_func` puts in `tape.launches` are."""

    backward: object
    arrays: list = field(default_factory=list)

    def __call__(self):
        return self.backward()

    @property
    def name(self) -> str:
        return getattr(self.backward, "__name__", "func")


class TapeBackwardError(ValueError, RuntimeError):
    """A `Tape.backward` call with a loss it cannot seed (Warp raises RuntimeError)."""


class Tape:
    """Records launches made inside `with Tape():` (unless `record_tape=False`).
    `memory_budget` (bytes): keep about that much for the backward pass, recomputing
    launches instead of keeping every overwritten array (see weft/autograd/budget.py)."""

    def __init__(self, memory_budget: int | None = None):
        from .autograd.budget import BudgetRecorder
        self.memory_budget = memory_budget
        self._budget = None if memory_budget is None else BudgetRecorder(self, memory_budget)
        self.launches: list = []
        #: argument (array or struct) -> its adjoint (`.grad`, or an adjoint struct)
        self.gradients: dict = {}
        #: (launch count, scope name, metadata) at a scope's start; (count, None, None) at its end
        self.scopes: list = []
        self.loss = None
        self._seeded: list = []
        # buffer -> id(array) -> (array, [(recorded launch, parameter key)]): the launches
        # that read the array's current contents (arrays grouped by the memory they view)
        self._readers: dict[int, dict] = {}
        self._written: dict[int, list] = {}  # buffer -> arrays recorded launches and copies wrote

    def __enter__(self):
        if recording_tape() is not None:
            raise RuntimeError("weft: a Tape is already recording; weft records on one Tape at a time "
                               "(as Warp does)")
        active_tapes.append(self)
        return self

    def __exit__(self, *exc):
        if self not in active_tapes:
            raise RuntimeError("Error, ended tape capture, but tape not present")
        active_tapes.remove(self)
        return False

    # Recording ---------------------------------------------------------------------------
    def record_launch(self, kernel, dim, max_blocks=0, inputs=(), outputs=(), device=None, block_dim=0,
                      metadata=None):
        """Record a launch of `kernel` over `dim` with the arguments `inputs + outputs`
        without running it (Warp's signature; `weft.launch` records its launches itself):
        `backward` runs its adjoint. `max_blocks`, `block_dim` and `metadata` are Warp's
        and unused on the CPU."""
        from .runtime.device import get_device
        from .runtime.launch import normalize_dim
        params = [*(inputs or ()), *(outputs or ())]
        if len(params) != len(kernel.arg_names):
            raise TypeError(f"Tape.record_launch: kernel '{kernel.name}' takes {len(kernel.arg_names)} "
                            f"arguments ({', '.join(kernel.arg_names)}), got {len(params)}")
        self.add_launch(kernel, normalize_dim(kernel, dim), params, get_device(device), len(inputs or ()))

    def add_launch(self, kernel, dims, params, device, n_inputs: int | None = None):
        """Record a forward launch about to run (what `weft.launch` calls). Arrays it writes
        that recorded launches (itself included) read are copied first."""
        kinds = _argument_kinds()
        array = kinds[0]
        grad_of = [p if isinstance(p, kinds) else None for p in params]
        entry = _Recorded(kernel, dims, list(params), grad_of, device,
                          where=_caller_outside_weft() if config.anomaly_depth else None,
                          n_inputs=len(params) if n_inputs is None else n_inputs)
        budget = self._budget
        if budget is not None:
            budget.admit(entry)
        if config.verify_autograd_array_access:
            reads, writes = kernel.array_effects()
            self._check_access(kernel, params, reads, writes)
        # the adjoint's replay reads these as they were before this launch (a budgeted Tape's
        # segments re-run their forward launches: they need everything read)
        initial, writes, final = _recording_keys(kernel, entry.segment is not None)
        for key in initial:
            a = params[key] if type(key) is int else _value_at(params, key)
            if isinstance(a, array):
                self._add_reader(a, entry, key)
        for key in writes:
            a = params[key] if type(key) is int else _value_at(params, key)
            if isinstance(a, array):
                self.will_write(a)
                self._note_written(a)
        for key in final:  # read as this launch leaves them
            a = params[key] if type(key) is int else _value_at(params, key)
            if isinstance(a, array):
                self._add_reader(a, entry, key)
        if entry.segment is None:
            self.launches.append(entry)

    def _check_access(self, kernel, params, reads, writes):
        """Warp's overwrite check: warn where this launch writes an array an earlier recorded
        launch read, then mark what it reads."""
        code = kernel.func.__code__
        for key in sorted(writes | reads, key=_key_order):
            a = _argument_array(params, key)
            if a is None:
                continue
            if key in writes:
                a.mark_write(arg_name=_key_name(kernel, key), kernel_name=kernel.name,
                             filename=code.co_filename, lineno=code.co_firstlineno)
            if key in reads:
                a.mark_read()

    def _note_written(self, a):
        self._written.setdefault(_root_id(a), []).append(a)
        if self._budget is not None:
            self._budget.note_written(a)

    def _add_reader(self, a, entry, key):
        if getattr(entry, "segment", None) is not None:
            self._budget.note_read(a)
        by_array = self._readers.get(root := _root_id(a))
        if by_array is None:
            by_array = self._readers[root] = {}
        held = by_array.get(id(a))
        if held is None:
            held = by_array[id(a)] = (a, [])
        held[1].append((entry, key))

    def will_write(self, target):
        """`target` is about to be overwritten: recorded launches that read memory it shares
        (through any view of the same buffer) get a copy of what they read."""
        if self._budget is not None:
            self._budget.log_write(target)
        by_array = self._readers.get(_root_id(target))
        if not by_array:
            return
        for key, (a, readers) in list(by_array.items()):
            if np.may_share_memory(a.numpy(), target.numpy()):
                # (a budgeted Tape's segments re-run from their undo logs instead)
                readers = [(rec, j) for rec, j in readers if getattr(rec, "segment", None) is None]
                snapshot = _snapshot(a) if readers else None
                for rec, j in readers:
                    if isinstance(j, int):
                        rec.params[j] = snapshot
                    else:  # an array in a struct: the launch replays with a struct holding the copy
                        k, path = j
                        rec.params[k] = _with_field(rec.params[k], path, snapshot)
                del by_array[key]

    def record_copy(self, dest, src, dest_offset: int, src_offset: int, count: int):
        """Record `weft.copy` (about to run; `count` 0: the rest of src): its adjoint moves
        dest's gradient of the copied range into src's gradient (dest's is consumed there,
        unless it has `retain_grad`). A copy between different dtypes (a reinterpretation of
        bytes) has no gradient: a nonzero one reaching it is an error.

        A copy of data without gradient into an array nothing recorded wrote before (setting
        an input, `x.assign(v0)`) has no adjoint, as in Warp: dest's gradient is then the
        gradient with respect to the data copied in, which is what the caller reads. `src`
        None stands for such data (`assign` from numpy or a list)."""
        count = count or src.size - src_offset
        if config.verify_autograd_array_access:
            if dest._is_read:
                filename, lineno = _caller_outside_weft()
                dest.mark_write(operation="an array copy", filename=filename, lineno=lineno)
            if src is not None:
                src.mark_read()
        self.will_write(dest)
        overwrites_recorded = any(np.may_share_memory(a.numpy(), dest.numpy())
                                  for a in self._written.get(_root_id(dest), ()))
        self._note_written(dest)
        if dest.grad is None or (getattr(src, "grad", None) is None and not overwrites_recorded):
            return

        def backward():
            if dest.grad is None:  # (taken away since)
                return
            d_index = _flat_index(dest, dest_offset, count)
            d_grad = dest.grad.numpy()
            g = d_grad[d_index].copy()  # before consuming: dest and src may overlap
            if src is not None and dest.dtype is not src.dtype:
                if src.grad is not None and (g.dtype.names or g.dtype.kind == "f") and _nonzero(g):
                    raise RuntimeError(f"Tape.backward: a gradient reaches a copy from {src.dtype!r} to "
                                       f"{dest.dtype!r}, which reinterprets bytes and has no derivative")
                return
            if not dest.retain_grad:
                d_grad[d_index] = 0
            if src is not None and src.grad is not None:
                _accumulate(src.grad.numpy(), _flat_index(src, src_offset, count), g)

        backward.__name__ = "copy"
        self._append_step(_Func(backward, [dest] if src is None else [dest, src]))
        for a in (dest, src):  # listed in `gradients` from the recording on, as Warp's record_func does
            if a is not None and a.grad is not None:
                self.gradients[a] = a.grad

    def record_fill(self, dest):
        """Record `fill_`/`zero_` of `dest` (about to run). The elements it sets no longer
        depend on what they held, so where a recorded launch or copy wrote them before, its
        adjoint consumes dest's gradient there (unless `retain_grad`): an accumulator
        cleared every step inside a Tape passes each step's gradient to that step only.
        The first fill of an array nothing recorded wrote (its initial value) has no adjoint,
        as in Warp, so its gradient stays readable. (`protect` has kept what recorded
        launches read of it.)"""
        overwrites_recorded = any(np.may_share_memory(a.numpy(), dest.numpy())
                                  for a in self._written.get(_root_id(dest), ()))
        self._note_written(dest)
        if dest.grad is None or not overwrites_recorded:
            return

        def backward():
            if dest.grad is not None and not dest.retain_grad:
                dest.grad.numpy()[_flat_index(dest, 0, dest.size)] = 0

        backward.__name__ = "fill"
        self._append_step(_Func(backward, [dest]))
        self.gradients[dest] = dest.grad

    def record_assign(self, dest, src):
        """Record `dest.assign(src)` (about to run) as a copy: from `src` if it is an array of
        dest's dtype and size, else from data that carries no gradient."""
        from .runtime.array import array
        if not (isinstance(src, array) and src.dtype is dest.dtype and src.size == dest.size):
            src = None
        self.record_copy(dest, src, 0, 0, dest.size)

    def record_func(self, backward, arrays):
        """Record a user step: `backward()` runs in its place during `backward`, and the
        `.grad` of `arrays` are cleared by `zero()`."""
        from .runtime.array import array
        for a in arrays:
            if not isinstance(a, array) or a.grad is None:
                raise RuntimeError(f"Tape.record_func: {_describe(a)} is not a weft array with a "
                                   "gradient; create it with requires_grad=True")
            self.gradients[a] = a.grad
        self._append_step(_Func(backward, list(arrays)))

    def record_step(self, step, inputs, outputs, saved=()):
        """Record a step with its own `backward()` (a `weft.autograd.Function`): `.grad` of
        its `inputs` and `outputs` are the Tape's (cleared by `zero()`); `saved` arrays are
        `step.params` (replaced by snapshots if overwritten before backward, as launches')."""
        for a in (*inputs, *outputs):
            if a.grad is not None:
                self.gradients[a] = a.grad
        for j, a in enumerate(saved):
            self._add_reader(a, step, j)
        self._append_step(step)

    def _append_step(self, step):
        if self._budget is not None:
            self._budget.end_segment()
        self.launches.append(step)

    def record_scope_begin(self, scope_name, metadata=None):
        """Open a named scope grouping the launches recorded next (shown by `visualize`)."""
        self.scopes.append((len(self.launches), scope_name, {} if metadata is None else metadata))

    def record_scope_end(self, remove_scope_if_empty=True):
        """Close the innermost open scope; with `remove_scope_if_empty`, a scope in which
        nothing was recorded is dropped."""
        depth = sum(1 if name is not None else -1 for _, name, _ in self.scopes)
        if depth <= 0:
            raise RuntimeError("Tape.record_scope_end: ended tape scope, but scope not present "
                               "(no record_scope_begin is open)")
        start, name, _ = self.scopes[-1]
        if remove_scope_if_empty and name is not None and start == len(self.launches):
            self.scopes.pop()
        else:
            self.scopes.append((len(self.launches), None, None))

    # Adjoints ----------------------------------------------------------------------------
    def get_adjoint(self, a):
        """The adjoint of kernel argument `a`: an array's `.grad`, a struct's adjoint struct
        (the `.grad` of its arrays, nested structs alike), a zero of a vector's or matrix's
        type (as Warp gives), None for other values and for arrays without gradient. Adjoints
        of arrays and structs are kept in `gradients` (cleared by `zero()`)."""
        array, _, StructValue = _argument_kinds()
        if isinstance(a, CompositeValue):
            return a.type()
        if isinstance(a, array):
            if a.grad is None:
                return None
            self.gradients[a] = a.grad
            return a.grad
        if isinstance(a, StructValue):
            adj = adjoint_struct(a)
            if adj is not None:
                self.gradients[a] = adj
                # the arrays inside are keys too: Warp programs read tape.gradients[s.field]
                for field in _arrays_in(a):
                    if field.grad is not None:
                        self.gradients[field] = field.grad
            return adj
        return None

    # Backward ----------------------------------------------------------------------------
    def backward(self, loss=None, grads=None):
        """Run the adjoints of the recorded launches, last first. `loss` (a one-element
        array) is seeded with 1; `grads` maps arrays to seeds copied into their `.grad` for
        this pass."""
        from .runtime.array import array

        if loss is not None:
            if not isinstance(loss, array) or loss.size != 1 or hasattr(loss.dtype, "num_components"):
                raise TapeBackwardError("Tape.backward(loss=...) needs a weft array of one scalar, got "
                                        f"{_describe(loss)}; use grads={{array: seed}} for others")
            if loss.grad is None:
                raise TapeBackwardError("Tape.backward: the loss array has no gradient; create it with "
                                        "requires_grad=True")
            loss.grad.fill_(1.0)
            self.loss = loss
            self._seeded.append(loss)
        for a, seed in (grads or {}).items():
            if not isinstance(a, array):
                raise TypeError(f"Tape.backward(grads=...): keys must be weft arrays, got {_describe(a)}")
            if a.grad is None:
                if (isinstance(seed, array) and seed.dtype is a.dtype and tuple(seed.shape) == tuple(a.shape)
                        and seed.strides == a.strides and seed.device == a.device):
                    a.grad = seed  # the seed itself becomes the gradient, as in Warp
                    self._seeded.append(a)
                    continue
                a.requires_grad = True  # (a zero gradient with a's strides)
            _check_seed(a, seed)
            if isinstance(seed, array) and seed.dtype is a.grad.dtype:
                a.grad.assign(seed)  # (a copy: in a graph capture, of the seed's contents when it runs)
            else:
                a.grad.assign(seed.numpy() if isinstance(seed, array) else seed)
            self._seeded.append(a)
        if self._budget is not None:
            self._budget.before_backward()
        with paused():  # adjoints (and a Function's backward) are not recorded
            for entry in reversed(self.launches):
                self._backward_entry(entry)
        if self._budget is not None:
            self._budget.after_backward()
        if config.verify_autograd_array_access:
            self._clear_read_marks()  # the reads are consumed: later writes cannot harm them

    def _backward_entry(self, entry):
        """Run the adjoint of one recorded entry."""
        capture, launch = _runtime_modules()
        if not isinstance(entry, _Recorded):  # a step with its own backward (copy, Function)
            if not capture.record(entry.backward):  # (in a graph capture: recorded, to run with the graph)
                entry.backward()
            return
        array = _argument_kinds()[0]
        gradients = self.gradients
        adj = []
        for src in entry.grad_of:  # (get_adjoint, inlined for arrays: the backward hot path)
            if type(src) is array:
                g = src.grad
                if g is not None:
                    gradients[src] = g
                adj.append(g)
            else:
                adj.append(self.get_adjoint(src))
        kernel = entry.kernel
        if not kernel.enable_backward:
            if _carries_gradient(kernel, adj):  # gradient reached a kernel that has no adjoint
                _warn_no_adjoint(kernel)
            return
        params = launch.adjoint_arguments(kernel, entry.params, adj)
        # consume: adjoints of overwritten elements must not reach earlier launches
        # (except those of arrays with retain_grad)
        retained = frozenset(k for k, a in enumerate(entry.grad_of) if getattr(a, "retain_grad", False))
        ck = kernel.compiled(kernel.specialization(params, True), adjoint=True, consume=True,
                             retain=retained)
        if config.anomaly_depth or config.verify_fp:  # (weft.autograd.detect_anomaly)
            from .autograd.anomaly import run_checked
            run_checked(kernel, ck, entry.dims, params, True, entry.where)
        else:
            dims = entry.dims
            if not capture.capturing() or not capture.record(  # (inside a graph capture: recorded)
                    lambda: launch.run_compiled(ck, dims, params), ("adjoint", kernel, dims, params, retained)):
                launch.run_compiled(ck, dims, params)

    def zero(self):
        """Zero the gradient of every array the tape touched, seeds included (each once)."""
        seen, grads = set(), []
        for a in self._arrays() + self._seeded:
            g = a.grad
            if g is not None and id(g) not in seen:
                seen.add(id(g))
                grads.append(g)
        for adjoint in self.gradients.values():
            for g in _arrays_in(adjoint):
                if id(g) not in seen:
                    seen.add(id(g))
                    grads.append(g)
        for g in grads:
            if hasattr(g, "zero_"):
                g.zero_()

    def reset(self):
        """Forget the recording (and its snapshots) and zero the gradients."""
        if config.verify_autograd_array_access:
            self._clear_read_marks()
        self.zero()
        self.launches.clear()
        self.scopes.clear()
        self._seeded.clear()
        self._readers.clear()
        self._written.clear()
        if self._budget is not None:
            self._budget.reset()
        self.loss = None

    def _clear_read_marks(self):
        for a in self._arrays():
            while a is not None and hasattr(a, "mark_init"):  # (_ref may be a foreign owner)
                a.mark_init()
                a = a._ref

    def _arrays(self) -> list:
        """The arrays of the recorded launches (in structs too) and of the recorded steps."""
        array = _argument_kinds()[0]
        out = []
        for e in self.launches:
            if type(e) is _Recorded:
                for p in e.grad_of:
                    if type(p) is array:  # (the common case, without a list per argument)
                        out.append(p)
                    elif p is not None:
                        out.extend(_arrays_in(p))
            else:  # a copy, record_func step or Function
                out.extend(e.arrays)
        out.extend(a for a in self.gradients if isinstance(a, array))
        return out

    # Inspection --------------------------------------------------------------------------
    def summary(self) -> str:
        """The recorded launches and steps in order, the arrays each reads and writes, and
        the memory the Tape keeps alive (snapshots, saved arrays, undo copies)."""
        from .autograd.tape_summary import tape_summary
        return tape_summary(self)

    def __str__(self) -> str:
        return self.summary()

    def visualize(self, filename: str | None = None, **options) -> str:
        """The recording as a GraphViz graph (launches as boxes, arrays as ellipses, edges
        for what each launch reads and writes), written to `filename` if given."""
        from .autograd.tape_graph import tape_graph
        text = tape_graph(self, **options)
        if filename is not None:
            with open(filename, "w") as f:
                f.write(text)
        return text


def _warn_no_adjoint(kernel) -> None:
    """Say (as Warp does, in its words) that a recorded kernel built without an adjoint
    contributes nothing to the gradients it should carry."""
    from .logger import log_warning
    if kernel.options.get("enable_backward") is False:
        where = "is configured with the option 'enable_backward=False'"
    else:
        where = "is defined in a module with the option 'enable_backward=False' set"
    log_warning(f"Running the tape backwards may produce incorrect gradients because recorded kernel "
                f"{kernel.key} {where}.")


def _carries_gradient(kernel, adj) -> bool:
    """Whether an adjoint of an array `kernel` writes is nonzero (its adjoint has work)."""
    writes = kernel.array_effects()[1]
    return any(a is not None and a.numpy().any() for k in writes for a in _arrays_in(_value_at(adj, k)))


# Overwrite reports (config.verify_autograd_array_access) -------------------------------------
def warn_overwrite(a, where: dict):
    """Warn (through weft's logger) that array `a`, read by a recorded launch, is being
    overwritten: Warp's message, then what it means on weft."""
    if {"arg_name", "kernel_name", "filename", "lineno"} <= where.keys():
        what = (f"Array {_short(a)} passed to argument {where['arg_name']} in kernel {where['kernel_name']} "
                f"at {where['filename']}:{where['lineno']} is being written to")
    elif {"operation", "filename", "lineno"} <= where.keys() and where["filename"] is not None:
        what = (f"Array {_short(a)} is being written to by {where['operation']} at "
                f"{where['filename']}:{where['lineno']}")
    else:
        what = f"Array {_short(a)} is being written to"
    message = (f"{what} but has already been read from in a previous launch. This may corrupt "
               "gradient computation in the backward pass. (weft's Tape keeps a copy of the old "
               "contents for the recorded kernel launches, so their adjoints stay right; steps "
               "recorded with record_func see the new contents.)")
    from .logger import log_warning
    log_warning(message, UserWarning)


def _short(a) -> str:
    return f"(shape={a.shape}, dtype={a.dtype!r})"


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _caller_outside_weft() -> tuple:
    """(file, line) of the innermost frame outside the weft package: the user's call."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
    return (None, None) if frame is None else (frame.f_code.co_filename, frame.f_lineno)


# Helpers ---------------------------------------------------------------------------------------
def _flat_index(a, offset: int, count: int) -> tuple:
    """Numpy indices of elements offset .. offset + count of `a` in row-major order (works
    for strided views, where a flat reshape would copy)."""
    return np.unravel_index(np.arange(offset, offset + count), a.shape)


def _accumulate(storage: np.ndarray, index, g: np.ndarray):
    """storage[index] += g for the float parts of the elements (struct records field by
    field; integer and bool parts carry no gradient)."""
    if g.dtype.names:
        records = storage[index]  # (a copy: `index` is a fancy index)
        _add_floats(records, g)
        storage[index] = records
    elif g.dtype.kind == "f":
        storage[index] += g


def _add_floats(target: np.ndarray, g: np.ndarray):
    if g.dtype.names:
        for name in g.dtype.names:
            _add_floats(target[name], g[name])
    elif g.dtype.kind == "f":
        target += g


def _nonzero(g: np.ndarray) -> bool:
    if g.dtype.names:
        return any(_nonzero(g[name]) for name in g.dtype.names)
    return bool(np.any(g))


def _root(a) -> np.ndarray:
    """The numpy array owning the memory that array `a` views (one for all its views)."""
    data = a.numpy()
    while isinstance(data.base, np.ndarray):
        data = data.base
    return data


def _root_id(a) -> int:
    """An id of the memory block array `a` views (shared by all views of one allocation;
    kept on the array: its memory never changes, and it keeps the block alive)."""
    root = getattr(a, "_tape_root_id", None)
    if root is None:
        root = id(_root(a))
        try:
            a._tape_root_id = root
        except AttributeError:  # (an array type with slots)
            pass
    return root


def _snapshot(a):
    """A gradient-less copy of array `a` (same shape and dtype); inside a graph capture, the
    copy is made each time the graph runs (the contents are not there yet)."""
    copy = type(a)(shape=a.shape, dtype=a.dtype, device=a.device)
    target, source = copy.numpy(), a.numpy()
    capture = _runtime_modules()[0]
    if not capture.capturing() or not capture.record(lambda: np.copyto(target, source)):
        np.copyto(target, source)
    return copy


def _describe(x) -> str:
    return f"{type(x).__name__} {x!r}" if np.ndim(x) == 0 else type(x).__name__


def _check_seed(a, seed) -> None:
    """A seed gives every element of array `a`'s gradient a value (a shorter one would leave
    the rest at zero, silently)."""
    from .runtime.array import array
    same = isinstance(seed, array) and seed.dtype is a.grad.dtype
    given = seed.size if same else int(np.size(seed.numpy() if isinstance(seed, array) else seed))
    needed = a.size if same else a.grad.numpy().size
    if given != needed:
        raise TapeBackwardError(f"Tape.backward(grads=...): the seed for an array of shape {a.shape} and dtype "
                                f"{a.dtype!r} has {given} values; it needs {needed}")
