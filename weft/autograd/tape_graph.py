"""`Tape.visualize`: the recording as a GraphViz graph.

Launches are boxes, arrays ellipses (green where they have a gradient); an edge goes from
each array a launch reads to the launch, and from the launch to each array it writes.
Scopes (`Tape.record_scope_begin/end`) become clusters. With `simplify_graph`, a sequence
of launches repeated back to back (a time-stepping loop) is drawn once, labelled
"repeated Nx".
"""

from __future__ import annotations

from ..runtime.array import array


def tape_graph(tape, simplify_graph: bool = True, hide_readonly_arrays: bool = False, array_labels=None,
               ignore_graph_scopes: bool = False, track_inputs=(), track_outputs=(), track_input_names=(),
               track_output_names=(), graph_direction: str = "LR") -> str:
    """The GraphViz text of `tape`'s recording (see the module docstring). `array_labels`
    maps arrays to names; `track_inputs`/`track_outputs` (with `track_*_names`) name arrays
    that stay shown even with `hide_readonly_arrays`."""
    labels = {id(a): name for a, name in (array_labels or {}).items()}
    for arrays, names in ((track_inputs, track_input_names), (track_outputs, track_output_names)):
        for k, a in enumerate(arrays or ()):
            labels.setdefault(id(a), names[k] if names and k < len(names) else f"{a.dtype!r}{tuple(a.shape)}")
    tracked = {id(a) for a in list(track_inputs or ()) + list(track_outputs or ())}
    graph = _Graph(labels, tracked)
    signatures = [_signature(e) for e in tape.launches]
    for kind, item in _segments(tape, ignore_graph_scopes):
        if kind == "open":
            graph.open_scope(item)
        elif kind == "close":
            graph.close_scope()
        else:
            for start, period, times in _runs(item, signatures, simplify_graph):
                graph.launch_group(tape.launches[start:start + period], times)
    return graph.text(hide_readonly_arrays, graph_direction)


def _segments(tape, ignore_scopes: bool) -> list:
    """The recording as ("open", name) / ("close", None) / ("launches", [indices]) items."""
    events = [] if ignore_scopes else sorted(
        ((at, order, name) for order, (at, name, _) in enumerate(tape.scopes)), key=lambda e: (e[0], e[1]))
    out, position = [], 0
    for at, _, name in events:
        if at > position:
            out.append(("launches", list(range(position, at))))
            position = at
        out.append(("open", name) if name is not None else ("close", None))
    if position < len(tape.launches):
        out.append(("launches", list(range(position, len(tape.launches)))))
    return out


def _signature(entry) -> tuple:
    kernel = getattr(entry, "kernel", None)
    args = tuple(id(a) for a in (getattr(entry, "grad_of", None) or getattr(entry, "arrays", ())))
    return (id(kernel) if kernel is not None else getattr(entry, "name", repr(entry)), args)


def _runs(indices: list, signatures: list, simplify: bool) -> list:
    """(start, period, times) covering `indices` in order: with `simplify`, the longest
    stretch of a sequence repeated back to back at each point (by kernel and arguments)."""
    if not simplify:
        return [(i, 1, 1) for i in indices]
    out, k = [], 0
    while k < len(indices):
        best = (1, 1)
        for period in range(1, (len(indices) - k) // 2 + 1):
            times = 1
            while k + (times + 1) * period <= len(indices) and all(
                    signatures[indices[k + times * period + j]] == signatures[indices[k + j]]
                    for j in range(period)):
                times += 1
            if times > 1 and period * times > best[0] * best[1]:
                best = (period, times)
        out.append((indices[k], best[0], best[1]))
        k += best[0] * best[1]
    return out


class _Graph:
    def __init__(self, labels: dict, tracked: set):
        self.labels = labels
        self.tracked = tracked
        self.body: list[str] = []
        self.arrays: dict[int, tuple] = {}  # id -> (node name, array)
        self.written: set = set()
        self.edges: list[str] = []
        self.depth = 1
        self.launch_count = 0
        self.scope_count = 0

    def line(self, text: str):
        self.body.append("  " * self.depth + text)

    def open_scope(self, name: str):
        self.line(f"subgraph cluster_{self.scope_count} {{")
        self.scope_count += 1
        self.depth += 1
        self.line(f'label="{_escape(name)}"; style="rounded,filled"; fillcolor="#eef6e0";')

    def close_scope(self):
        if self.depth > 1:
            self.depth -= 1
            self.line("}")

    def array_node(self, a) -> str:
        if id(a) not in self.arrays:
            self.arrays[id(a)] = (f"a{len(self.arrays)}", a)
        return self.arrays[id(a)][0]

    def launch_group(self, entries: list, times: int):
        node = f"l{self.launch_count}"
        self.launch_count += 1
        names = " / ".join(e.name for e in entries)
        label = names if times == 1 else f"{names} (repeated {times}x)"
        self.line(f'{node} [label="{_escape(label)}", shape=box, style=filled, fillcolor=lightblue];')
        seen = set()
        for e in entries:
            for text in self._edges_of(e, node):
                if text not in seen:
                    seen.add(text)
                    self.edges.append(text)

    def _edges_of(self, e, node: str) -> list[str]:
        kernel = getattr(e, "kernel", None)
        if kernel is None:  # a recorded step (copy, record_func): dashed, direction unknown
            return [f"{self.array_node(a)} -> {node} [style=dashed];" for a in getattr(e, "arrays", ())
                    if isinstance(a, array)]
        reads, writes = kernel.array_effects()
        out = []
        for j, a in enumerate(e.grad_of):
            if not isinstance(a, array):
                continue
            arg = _escape(kernel.arg_names[j])
            if j in reads or j not in writes:
                out.append(f'{self.array_node(a)} -> {node} [label="{arg}", tooltip="array: dtype={a.dtype!r}"];')
            if j in writes:
                self.written.add(id(a))
                out.append(f'{node} -> {self.array_node(a)} [label="{arg}", tooltip="array: dtype={a.dtype!r}"];')
        return out

    def text(self, hide_readonly: bool, direction: str) -> str:
        lines = ["digraph tape {", f"  rankdir={direction};", '  node [fontname="Helvetica"];']
        lines += self.body
        hidden = set()
        for key, (name, a) in self.arrays.items():
            if hide_readonly and key not in self.written and key not in self.tracked:
                hidden.add(name)
                continue
            label = self.labels.get(key, f"{a.dtype!r}{tuple(a.shape)}")
            color = "#76B900" if a.grad is not None else "lightgray"
            lines.append(f'  {name} [label="{_escape(label)}", shape=ellipse, style=filled, fillcolor="{color}", '
                         f'tooltip="array: dtype={a.dtype!r}, shape={tuple(a.shape)}"];')
        lines += ["  " + e for e in self.edges if not any(_mentions(e, h) for h in hidden)]
        lines.append("}")
        return "\n".join(lines) + "\n"


def _mentions(edge: str, node: str) -> bool:
    return edge.startswith(node + " ") or f"-> {node} " in edge or edge.endswith(f"-> {node};")


def _escape(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace('"', '\\"')
