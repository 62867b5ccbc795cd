"""What `weft.autograd` differentiates: one kernel launch, or a Python function that
launches kernels, seen as differentiable input arrays (the Jacobian's columns) and output
arrays (its rows), each flattened to its float scalars in C order, components last (an
array of `vec3d` of shape `(n,)` has `3 n` scalars: element 0's x, y, z, then element 1's).

A problem is evaluated at the contents its arrays have when it is made. `restore` puts
that state back (outputs included, so a kernel that accumulates into its outputs gives the
same result on every run), and leaving the `with` block restores it for the caller.
Adjoints go to private arrays for kernels; a function's tape needs the arrays' `.grad`,
whose contents are saved and put back.
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager

import numpy as np

from .. import tape as tape_module
from ..lang.kernel import Kernel
from ..runtime.array import array
from ..runtime.launch import launch
from ..types import Matrix, Scalar, Vector


# Arrays as flat vectors of float scalars ----------------------------------------------------
def is_float_array(a) -> bool:
    """Whether `a` is a weft array of float scalars, vectors or matrices (what has gradients)."""
    if not isinstance(a, array):
        return False
    t = a.dtype.dtype if isinstance(a.dtype, (Vector, Matrix)) else a.dtype
    return isinstance(t, Scalar) and t.is_float


def scalar_count(a: array) -> int:
    """How many float scalars `a` holds (elements times components)."""
    return int(a.numpy().size)


def read_flat(a: array) -> np.ndarray:
    """The scalars of `a` as a new float64 vector of length `scalar_count(a)`."""
    return np.array(a.numpy(), dtype=np.float64).reshape(-1)


def set_scalar(a: array, k: int, value: float):
    storage = a.numpy()
    storage[np.unravel_index(k, storage.shape)] = value


def nudge(a: array, k: int, delta: float) -> float:
    """Add `delta` to scalar `k` of `a`; return the change actually stored (rounded to the
    array's precision, which finite differences should divide by)."""
    storage = a.numpy()
    at = np.unravel_index(k, storage.shape)
    old = float(storage[at])
    storage[at] = old + delta
    return float(storage[at]) - old


def element_name(label: str, a: array, k: int) -> str:
    """Scalar `k` of array `a` as source would index it: `x[3]`, `x[1, 2]`, `v[3][1]`
    (component 1 of a vector), `m[0][1, 2]` (a matrix entry)."""
    per = max(scalar_count(a) // max(a.size, 1), 1)
    index, component = divmod(k, per)
    text = f"{label}[{', '.join(str(int(i)) for i in np.unravel_index(index, a.shape))}]"
    if isinstance(a.dtype, Vector):
        text += f"[{component}]"
    elif isinstance(a.dtype, Matrix):
        text += "[{}, {}]".format(*divmod(component, a.dtype.np_shape[1]))
    return text


class _Saved:
    """The contents of some arrays (each distinct array once), to be put back."""

    def __init__(self, arrays):
        self.items = [(a, a.numpy().copy()) for a in _distinct(arrays)]

    def restore(self):
        for a, contents in self.items:
            np.copyto(a.numpy(), contents)


def _distinct(values) -> list:
    seen, out = set(), []
    for v in values:
        if isinstance(v, array) and id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    return out


@contextmanager
def _no_tape():
    """Run without recording on the caller's tapes (finite-difference runs are not theirs)."""
    saved = list(tape_module.active_tapes)
    tape_module.active_tapes.clear()
    try:
        yield
    finally:
        tape_module.active_tapes[:] = saved


# Problems -------------------------------------------------------------------------------------
class Problem:
    """Inputs and outputs by index (`in_labels[i]`, `out_labels[j]` name every slot); the
    differentiable ones are `inputs[i]` / `outputs[j]` (arrays). Subclasses run it."""

    name: str  # as messages name it: "kernel 'k'", "function 'f'"
    key: str  # the bare name plots use (Warp's metadata key)
    in_labels: list
    out_labels: list
    inputs: dict
    outputs: dict

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def pairs(self, mask=None) -> list[tuple[int, int]]:
        """The (input, output) index pairs to differentiate: all differentiable pairs, or
        those `mask` names (by index or argument name); a named pair must be differentiable."""
        if not mask:
            return [(i, j) for i in self.inputs for j in self.outputs]
        out = []
        for entry in mask:
            if not isinstance(entry, (tuple, list)) or len(entry) != 2:
                raise ValueError(f"{self.name}: input_output_mask entries are (input, output) pairs, got {entry!r}")
            i = self._resolve(entry[0], self.in_labels, self.inputs, "input")
            j = self._resolve(entry[1], self.out_labels, self.outputs, "output")
            if (i, j) not in out:
                out.append((i, j))
        return out

    def _resolve(self, key, labels, differentiable, role) -> int:
        if isinstance(key, str):
            if key not in labels:
                raise ValueError(f"{self.name}: input_output_mask names {role} '{key}', which is not one "
                                 f"of its {role}s ({', '.join(map(str, labels)) or 'none'})")
            index = labels.index(key)
        elif isinstance(key, (int, np.integer)) and not isinstance(key, bool) and 0 <= key < len(labels):
            index = int(key)
        else:
            raise ValueError(f"{self.name}: input_output_mask {role} {key!r} is neither a name nor an "
                             f"index below {len(labels)}")
        if index not in differentiable:
            names = ", ".join(f"'{labels[k]}'" for k in differentiable) or "none"
            raise ValueError(f"{self.name}: input_output_mask asks for {role} '{labels[index]}', which "
                             f"has no gradient (differentiable {role}s, float arrays with "
                             f"requires_grad=True{self.role_note(role)}: {names})")
        return index

    def role_note(self, role) -> str:
        return ""

    def restore(self):
        """Put every array back as it was when the problem was made."""
        raise NotImplementedError

    def check_backward(self):
        """Raise a clear error if the adjoint cannot be run (a kernel without backward)."""

    def forward(self, wanted) -> dict:
        """Run once from the arrays' current contents; {j: output j's scalars (float64)}."""
        raise NotImplementedError

    def backward(self, j: int, r: int, wanted) -> dict:
        """Adjoints of the inputs `wanted` for a unit seed on scalar `r` of output `j`:
        {i: float64 vector of input i's scalars}, i.e. row `r` of each Jacobian."""
        raise NotImplementedError

    def close(self):
        self.restore()


class KernelProblem(Problem):
    """One launch of `kernel` with `args` (inputs and outputs in one list). `in_pos[i]` /
    `out_pos[j]` give the argument position of differentiable input i / output j."""

    def __init__(self, name, kernel, dims, args, in_labels, out_labels, in_pos, out_pos, device=None,
                 max_blocks=0, block_dim=None):
        self.name, self.kernel, self.dims, self.args = name, kernel, dims, list(args)
        self.key = kernel.key
        self.in_labels, self.out_labels = list(in_labels), list(out_labels)
        self.inputs = {i: self.args[k] for i, k in in_pos.items()}
        self.outputs = {j: self.args[k] for j, k in out_pos.items()}
        self.options = {"device": device, "max_blocks": max_blocks, "block_dim": block_dim}
        self.saved = _Saved(self.args)
        self._forward = self._adjoint = None
        self._adj_of: dict[int, array] = {}

    def restore(self):
        self.saved.restore()

    def slot_values(self) -> tuple[list, list]:
        """The values in the input slots and in the output slots (all arguments in both, for a
        recorded launch)."""
        return self.args[:len(self.in_labels)], self.args[len(self.args) - len(self.out_labels):]

    def check_backward(self):
        if not self.kernel.enable_backward:
            raise no_backward_error(self.name)

    def forward(self, wanted) -> dict:
        if self._forward is None:
            self._forward = launch(self.kernel, self.dims, inputs=self.args, record_tape=False, record_cmd=True,
                                   **self.options)
        self._forward.launch()
        return {j: read_flat(self.outputs[j]) for j in wanted}

    def backward(self, j, r, wanted) -> dict:
        if self._adjoint is None:
            self._make_adjoint()
        for adj in self._adj_of.values():
            adj.zero_()
        set_scalar(self._adj_of[id(self.outputs[j])], r, 1.0)
        self._adjoint.launch()
        return {i: read_flat(self._adj_of[id(self.inputs[i])]) for i in wanted}

    def _make_adjoint(self):
        if not self.kernel.enable_backward:
            raise no_backward_error(self.name)
        # one private adjoint array per distinct array, so that aliased arguments share it
        adjs = []
        for a in self.args:
            if isinstance(a, array):
                if id(a) not in self._adj_of:
                    self._adj_of[id(a)] = array(shape=a.shape, dtype=a.dtype, device=a.device)
                adjs.append(self._adj_of[id(a)])
            else:
                adjs.append(None)
        self._adjoint = launch(self.kernel, self.dims, inputs=self.args, adj_inputs=adjs, adjoint=True,
                               record_tape=False, record_cmd=True, **self.options)


class RecordedProblem(KernelProblem):
    """A launch recorded on a Tape. Weft records inputs and outputs as one list, so inputs
    and outputs are both indexed by argument position: the inputs are the differentiable
    arrays the kernel reads, the outputs those it writes (an array it reads and writes is
    both: its Jacobian is d new / d old)."""

    def role_note(self, role) -> str:
        return " that the kernel reads" if role == "input" else " that the kernel writes"


def no_backward_error(name: str) -> ValueError:
    return ValueError(f"{name}: Kernel must have backward pass enabled to compute Jacobians (it was built "
                      "with enable_backward=False, on the kernel or its module)")


class FunctionProblem(Problem):
    """A Python function `function(*inputs)` that launches kernels and returns an array or a
    list of arrays (the outputs). Adjoints replay a Tape of one recorded call, with the
    inputs as that call left them (what its recording refers to); finite differences run
    the function again from the inputs as given. With `restore_inputs=False` (Warp's
    option) the inputs are never put back, so a function that changes its inputs is
    evaluated from wherever its previous run left them."""

    def __init__(self, function, inputs, restore_inputs=True):
        self.function = function
        self.args = list(inputs)
        self.key = getattr(function, "__name__", type(function).__name__)
        self.name = f"function '{self.key}'"
        self.in_labels = _parameter_names(function, len(self.args))
        self.restore_inputs = restore_inputs
        self.before = _Saved(self.args)
        self.read_marks = [(a, a._is_read) for a in _distinct(self.args)]
        try:
            with _no_tape(), tape_module.Tape() as tape:  # (a tape of its own, beside the caller's)
                returned = self._outputs(function(*self.args))
        except BaseException:
            self.close()
            raise
        self.after = _Saved(self.args)
        self.recorded_state = True  # the inputs hold what the recorded call left
        self.tape, self.returned = tape, returned
        self.out_labels = [f"output_{j}" for j in range(len(returned))]
        self.inputs = {i: a for i, a in enumerate(self.args) if is_float_array(a) and a.requires_grad}
        self.outputs = {j: a for j, a in enumerate(returned) if is_float_array(a) and a.requires_grad}
        recorded = [a for e in tape.launches for a in (getattr(e, "grad_of", None) or getattr(e, "arrays", []))]
        self.with_grad = [a for a in _distinct(recorded + self.args + returned) if a.grad is not None]
        self.saved_grads = _Saved([a.grad for a in self.with_grad])

    def _outputs(self, returned) -> list:
        outs = [returned] if isinstance(returned, array) else returned
        if not isinstance(outs, (list, tuple)) or not all(isinstance(a, array) for a in outs):
            raise TypeError(f"{self.name} must return a weft array or a list of them, got "
                            f"{type(returned).__name__}")
        return list(outs)

    def restore(self):
        if self.restore_inputs:
            self.before.restore()
            self.recorded_state = False

    def slot_values(self) -> tuple[list, list]:
        return list(self.args), list(self.returned)

    def forward(self, wanted) -> dict:
        self.recorded_state = False
        with _no_tape():
            outs = self._outputs(self.function(*self.args))
        if len(outs) != len(self.returned):
            raise ValueError(f"{self.name} returned {len(outs)} arrays, then {len(self.returned)}")
        for j in wanted:
            if outs[j].shape != self.returned[j].shape or outs[j].dtype is not self.returned[j].dtype:
                raise ValueError(f"{self.name}: output {j} changed shape or dtype between calls")
        return {j: read_flat(outs[j]) for j in wanted}

    def check_backward(self):
        """Raise the clear error where a recorded kernel has no adjoint (as Warp does)."""
        for e in self.tape.launches:
            kernel = getattr(e, "kernel", None)
            if kernel is not None and not kernel.enable_backward:
                raise no_backward_error(f"{self.name}, kernel '{kernel.name}'")

    def backward(self, j, r, wanted) -> dict:
        if not self.recorded_state:
            self.after.restore()
            self.recorded_state = True
        for a in self.with_grad:
            a.grad.zero_()
        set_scalar(self.outputs[j].grad, r, 1.0)
        self.tape.backward()
        return {i: read_flat(self.inputs[i].grad) for i in wanted}

    def close(self):
        if self.restore_inputs:
            self.before.restore()
        if hasattr(self, "saved_grads"):
            self.saved_grads.restore()
        self._restore_read_marks()

    def _restore_read_marks(self):
        """The overwrite checks' marks as the caller had them (this problem's own tape and its
        backward passes must not add or clear any)."""
        for a, was_read in self.read_marks:
            a._is_read = was_read


def _parameter_names(function, n: int) -> list[str]:
    try:
        params = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [names[i] if i < len(names) else f"input_{i}" for i in range(n)]


# Making problems --------------------------------------------------------------------------------
def make_problem(function, dim, inputs, outputs, device=None, max_blocks=0, block_dim=None,
                 restore_inputs=True) -> Problem:
    """The problem for the public functions' arguments: a kernel launch (`dim`, `inputs`,
    `outputs` as for `weft.launch`) or a Python function called as `function(*inputs)`."""
    if inputs is None:
        raise ValueError("weft.autograd: the inputs must be given")
    if not isinstance(function, Kernel):
        if not callable(function):
            raise TypeError(f"weft.autograd: expected a @weft.kernel or a Python function, got "
                            f"{type(function).__name__}")
        return FunctionProblem(function, inputs, restore_inputs)
    name = f"kernel '{function.name}'"
    if dim is None:
        raise ValueError(f"{name}: the launch dimension `dim` must be given")
    if not outputs:
        raise ValueError(f"{name}: list the output arrays in `outputs` (the arguments after the inputs); "
                         "Jacobians are taken from inputs to outputs")
    inputs, outputs = list(inputs), list(outputs)
    names = function.arg_names
    if len(inputs) + len(outputs) != len(names):
        raise TypeError(f"{name} takes {len(names)} arguments ({', '.join(names)}), got "
                        f"{len(inputs)} inputs and {len(outputs)} outputs")
    n = len(inputs)
    in_pos = {i: i for i, a in enumerate(inputs) if is_float_array(a) and a.requires_grad}
    out_pos = {j: n + j for j, a in enumerate(outputs) if is_float_array(a) and a.requires_grad}
    return KernelProblem(name, function, dim, inputs + outputs, names[:n], names[n:], in_pos, out_pos,
                         device, max_blocks, block_dim)


def recorded_problem(entry, index: int) -> RecordedProblem:
    """The problem for launch number `index` of a Tape (a `weft.tape._Recorded`): its
    arguments as recorded (copies where later launches overwrote them), and gradients
    wanted where the original array has requires_grad."""
    kernel = entry.kernel
    reads, writes = kernel.array_effects()

    def wanted(k):
        original = entry.grad_of[k]
        return original is not None and original.requires_grad and is_float_array(entry.params[k])

    # (arrays held in structs are left out: a problem's inputs are the launch's arguments)
    in_pos = {k: k for k in sorted(k for k in reads if isinstance(k, int)) if wanted(k)}
    out_pos = {k: k for k in sorted(k for k in writes if isinstance(k, int)) if wanted(k)}
    names = kernel.arg_names
    return RecordedProblem(f"kernel '{kernel.name}' (tape launch {index})", kernel, entry.dims, entry.params,
                           names, names, in_pos, out_pos, entry.device)
