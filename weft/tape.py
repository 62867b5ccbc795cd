"""`weft.Tape`: records forward launches and runs their adjoints in reverse order.

    with weft.Tape() as tape:
        weft.launch(step, dim=n, inputs=[x0], outputs=[x1])
        weft.launch(loss_kernel, dim=n, inputs=[x1], outputs=[loss])
    tape.backward(loss=loss)      # x0.grad now holds d loss / d x0

Adjoint arrays are the arrays' `.grad` (arrays made with `requires_grad=True` have one).
Overwrites are safe: when a recorded launch is about to write an array that an earlier
recorded launch (or the launch itself) read, the tape first copies the array, and those
readers' adjoints replay from the copy. So `a[i] = a[i] * 2`, or reusing an array across
steps, gives right gradients; the copies are the memory price (`tape.reset()` frees them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Tapes inside whose `with` block we are (innermost last); launches record on the last.
active_tapes: list[Tape] = []


@dataclass(eq=False)
class _Recorded:
    """A forward launch: the arguments its adjoint replays with (snapshots where the
    arrays were overwritten later) and the arrays whose `.grad` are its adjoints."""

    kernel: object
    dims: tuple
    params: list
    grad_of: list  # per parameter: the array whose .grad is its adjoint, or None
    device: object

    @property
    def name(self) -> str:
        return self.kernel.name


@dataclass(eq=False)
class _Func:
    backward: object
    arrays: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return getattr(self.backward, "__name__", "func")


class Tape:
    """Records launches made inside `with Tape():` (unless `record_tape=False`)."""

    def __init__(self):
        self.launches: list = []
        self._seeded: list = []
        # buffer -> id(array) -> (array, [(recorded launch, parameter index)]): the launches
        # that read the array's current contents (arrays grouped by the memory they view)
        self._readers: dict[int, dict] = {}
        self.loss = None

    def __enter__(self):
        active_tapes.append(self)
        return self

    def __exit__(self, *exc):
        active_tapes.remove(self)
        return False

    # Recording ---------------------------------------------------------------------------
    def record_launch(self, kernel, dims, params, device):
        """Record a forward launch about to run. Arrays it writes that recorded launches
        (itself included) read are copied first."""
        from .runtime.array import array

        reads, writes = kernel.array_effects()
        entry = _Recorded(kernel, dims, list(params), [p if isinstance(p, array) else None for p in params],
                          device)
        for k in reads:
            if isinstance(params[k], array):
                self._add_reader(params[k], entry, k)
        for k in writes:
            if isinstance(params[k], array):
                self.will_write(params[k])
        for k in kernel.array_final_reads():  # read as this launch leaves them
            if isinstance(params[k], array):
                self._add_reader(params[k], entry, k)
        self.launches.append(entry)

    def _add_reader(self, a, entry, k):
        self._readers.setdefault(_root_id(a), {}).setdefault(id(a), (a, []))[1].append((entry, k))

    def will_write(self, target):
        """`target` is about to be overwritten: recorded launches that read memory it shares
        (through any view of the same buffer) get a copy of what they read."""
        by_array = self._readers.get(_root_id(target))
        if not by_array:
            return
        for key, (a, readers) in list(by_array.items()):
            if np.may_share_memory(a.numpy(), target.numpy()):
                snapshot = _snapshot(a)
                for rec, j in readers:
                    rec.params[j] = snapshot
                del by_array[key]

    def record_copy(self, dest, src, dest_offset: int, src_offset: int, count: int):
        """Record `weft.copy` (about to run): its adjoint moves dest's gradient of the copied
        range into src's gradient."""
        from .runtime.array import elements

        self.will_write(dest)

        def backward():
            if dest.grad is None:
                return
            d = elements(dest.grad)[dest_offset:dest_offset + count]
            if src.grad is not None:
                elements(src.grad)[src_offset:src_offset + count] += d
            d[...] = 0

        backward.__name__ = "copy"
        self.launches.append(_Func(backward, [dest, src]))

    def record_func(self, backward, arrays):
        """Record a user step: `backward()` runs in its place during `backward`, and the
        `.grad` of `arrays` are cleared by `zero()`."""
        self.launches.append(_Func(backward, list(arrays)))

    # Backward ----------------------------------------------------------------------------
    def backward(self, loss=None, grads=None):
        """Run the adjoints of the recorded launches, last first. `loss` (a one-element
        array) is seeded with 1; `grads` maps arrays to seeds copied into their `.grad` for
        this pass."""
        from .runtime.array import array
        from .runtime.launch import adjoint_arguments, run_compiled

        if loss is not None:
            if not isinstance(loss, array) or loss.size != 1:
                raise ValueError("Tape.backward(loss=...) needs a weft array with one element, got "
                                 f"{_describe(loss)}; use grads={{array: seed}} for others")
            if loss.grad is None:
                raise ValueError("Tape.backward: the loss array has no gradient; create it with "
                                 "requires_grad=True")
            loss.grad.fill_(1.0)
            self.loss = loss
            self._seeded.append(loss)
        for a, seed in (grads or {}).items():
            if not isinstance(a, array):
                raise TypeError(f"Tape.backward(grads=...): keys must be weft arrays, got {_describe(a)}")
            if a.grad is None:
                a.grad = type(a)(shape=a.shape, dtype=a.dtype, device=a.device)
            a.grad.assign(seed)
            self._seeded.append(a)
        for entry in reversed(self.launches):
            if isinstance(entry, _Func):
                entry.backward()
                continue
            adj = [None if src is None else src.grad for src in entry.grad_of]
            # consume: adjoints of overwritten elements must not reach earlier launches
            kernel = entry.kernel
            params = adjoint_arguments(kernel, entry.params, adj)
            retain = frozenset(k for k, a in enumerate(entry.grad_of)
                               if a is not None and getattr(a, "retain_grad", False))
            ck = kernel.compiled(kernel.specialization(params, True), adjoint=True, consume=True,
                                 retain=retain)
            run_compiled(ck, entry.dims, params)

    def zero(self):
        """Zero the gradient of every array the tape touched, seeds included."""
        for a in self._touched():
            if a.grad is not None:
                a.grad.zero_()

    def reset(self):
        """Forget the recording (and its snapshots) and zero the gradients."""
        self.zero()
        self.launches.clear()
        self._seeded.clear()
        self._readers.clear()
        self.loss = None

    def _touched(self) -> list:
        seen, out = set(), []
        arrays = [a for e in self.launches for a in (e.grad_of if isinstance(e, _Recorded) else e.arrays)]
        for a in arrays + self._seeded:
            if a is not None and id(a) not in seen:
                seen.add(id(a))
                out.append(a)
        return out

    # Inspection --------------------------------------------------------------------------
    def visualize(self, filename: str = "tape.dot") -> str:
        """Write the recording as a GraphViz graph (launches as boxes, arrays as ellipses,
        edges for what each launch reads and writes); returns the text."""
        lines = ["digraph tape {", "  rankdir=LR;", '  node [fontname="Helvetica"];']
        names: dict[int, str] = {}

        def node(a) -> str:
            if id(a) not in names:
                names[id(a)] = f"a{len(names)}"
                label = f"{tuple(a.shape)} {a.dtype!r}"
                lines.append(f'  {names[id(a)]} [label="{label}", shape=ellipse];')
            return names[id(a)]

        for k, e in enumerate(self.launches):
            lines.append(f'  l{k} [label="{k}: {e.name}", shape=box, style=filled, fillcolor=lightblue];')
            if isinstance(e, _Func):
                for a in e.arrays:
                    lines.append(f"  {node(a)} -> l{k} [style=dashed];")
                continue
            reads, writes = e.kernel.array_effects()
            for j, a in enumerate(e.grad_of):
                if a is None:
                    continue
                arg = e.kernel.arg_names[j]
                if j in reads:
                    lines.append(f'  {node(a)} -> l{k} [label="{arg}"];')
                if j in writes:
                    lines.append(f'  l{k} -> {node(a)} [label="{arg}"];')
        lines.append("}")
        text = "\n".join(lines) + "\n"
        with open(filename, "w") as f:
            f.write(text)
        return text


def _root_id(a) -> int:
    """An id of the memory block array `a` views (shared by all views of one allocation)."""
    data = a.numpy()
    while isinstance(data.base, np.ndarray):
        data = data.base
    return id(data)


def _snapshot(a):
    """A gradient-less copy of array `a` (same shape and dtype)."""
    copy = type(a)(shape=a.shape, dtype=a.dtype, device=a.device)
    np.copyto(copy.numpy(), a.numpy())
    return copy


def _describe(x) -> str:
    return f"{type(x).__name__} {x!r}" if np.ndim(x) == 0 else type(x).__name__
