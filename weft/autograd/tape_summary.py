"""`Tape.summary()` / `print(tape)`: what a Tape holds, readable.

    Tape: 4 entries, keeps 80 B alive (1 snapshot 40 B, 1 saved array 40 B)
      0  launch   scale  dim (5,)  reads x=A1  writes y=A2
      1  Function Cube  reads A2  writes A3  keeps A4 (a snapshot)
      2  launch   total  dim (5,)  reads x=A3  writes loss=A5  (x=A3 from a snapshot)
      3  launch   scale  dim (5,)  reads x=A1  writes y=A3
      arrays: A1 float64[5], A2 float64[5], A3 float64[5], A4 float64[5], A5 float64[1]

Arrays are labelled A1, A2, ... in the order they first appear, so the flow from one entry
to the next can be followed; each label's shape and dtype are listed at the end.
"""

from __future__ import annotations


def tape_summary(tape) -> str:
    from ..tape import _Recorded
    labels: dict[int, str] = {}
    described: list = []

    def label(a) -> str:
        if id(a) not in labels:
            labels[id(a)] = f"A{len(labels) + 1}"
            described.append(a)
        return labels[id(a)]

    lines, kept = [], {"snapshot": [], "saved array": [], "undo copy": []}
    for index, entry in enumerate(tape.launches):
        if isinstance(entry, _Recorded):
            lines.append(f"  {index:<3}{_launch_line(entry, label, kept)}")
        elif hasattr(entry, "undo"):  # a budgeted Tape's segment
            nbytes = entry.undo_bytes
            kept["undo copy"].extend([nbytes] * len(entry.undo))
            names = _names([e.kernel.name for e in entry.entries])
            copies = f"{len(entry.undo)} buffer cop{'y' if len(entry.undo) == 1 else 'ies'}"
            lines.append(f"  {index:<3}segment  {len(entry.entries)} launches ({names}), re-run in backward; "
                         f"keeps {copies} ({_bytes(nbytes)})")
        else:
            lines.append(f"  {index:<3}{_step_line(entry, label, kept)}")
    total = sum(sum(v) for v in kept.values())
    plural = {"snapshot": "snapshots", "saved array": "saved arrays", "undo copy": "undo copies"}
    parts = [f"{len(v)} {k if len(v) == 1 else plural[k]} {_bytes(sum(v))}" for k, v in kept.items() if v]
    head = f"Tape: {len(tape.launches)} entries, keeps {_bytes(total)} alive"
    head += f" ({', '.join(parts)})" if parts else ""
    if tape.memory_budget is not None:
        head += f"; memory budget {_bytes(tape.memory_budget)}"
    out = [head, *lines]
    if described:
        out.append("  arrays: " + ", ".join(f"{labels[id(a)]} {a.dtype!r}{list(a.shape)}" for a in described))
    return "\n".join(out)


def _launch_line(entry, label, kept) -> str:
    kernel = entry.kernel
    reads, writes = kernel.array_effects()
    names = kernel.arg_names

    def side(keys) -> str:
        parts = []
        for key in sorted((k for k in keys if isinstance(k, int)), key=int):
            original = entry.grad_of[key]
            if original is not None and hasattr(original, "numpy"):
                parts.append(f"{names[key]}={label(original)}")
        return " ".join(parts) or "-"

    text = f"launch   {kernel.name}  dim {tuple(entry.dims)}  reads {side(reads)}  writes {side(writes)}"
    snapshots = [k for k, p in enumerate(entry.params)
                 if p is not entry.grad_of[k] and hasattr(p, "numpy") and entry.grad_of[k] is not None]
    if snapshots:
        text += "  (" + ", ".join(f"{names[k]}={label(entry.grad_of[k])} from a snapshot" for k in snapshots) + ")"
        kept["snapshot"].extend(entry.params[k].numpy().nbytes for k in snapshots)
    return text


def _step_line(entry, label, kept) -> str:
    """A Function, checkpoint, copy or record_func step."""
    if hasattr(entry, "function"):
        kind, reads, writes = "Function", entry.inputs, entry.outputs
    elif hasattr(entry, "fn"):
        kind, reads, writes = "checkpoint", entry.inputs, entry.written
    else:
        kind, reads, writes = "step", (), entry.arrays
    text = f"{kind:<9}{entry.name}"
    if reads:
        text += "  reads " + " ".join(label(a) for a in reads)
    if writes:
        text += f"  {'writes' if reads else 'arrays'} " + " ".join(label(a) for a in writes)
    mine = {id(a) for a in (*reads, *writes)}
    saved = [a for a in getattr(entry, "params", ()) if hasattr(a, "numpy")]
    if saved:
        text += "  keeps " + " ".join(label(a) + ("" if id(a) in mine else " (a snapshot)") for a in saved)
        kept["saved array"].extend(a.numpy().nbytes for a in saved if id(a) not in mine)
    return text


def _names(names: list) -> str:
    distinct = list(dict.fromkeys(names))
    return ", ".join(distinct[:3]) + (", ..." if len(distinct) > 3 else "")


def _bytes(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"
