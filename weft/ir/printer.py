"""The IR's text form. Values are numbered in print order, so the text is stable."""

from __future__ import annotations

from .core import Block, Function


def format_function(fn: Function, mark=None, locations: bool = False) -> str:
    """`fn` as text. `mark` (an op) is flagged with `<<<`; `locations` appends file:line."""
    names: dict[int, str] = {}

    def name(v) -> str:
        if v.id not in names:
            names[v.id] = f"%{v.hint}{len(names)}" if v.hint else f"%{len(names)}"
        return names[v.id]

    lines: list[str] = []
    bodies: dict[int, int] = {}  # the bodies of kept calls (ir/outline.py): id -> number
    pending = [fn]
    while pending:
        f = pending.pop(0)
        params = ", ".join(f"{name(p)}: {_type_text(p.type)}" for p in f.params)
        ret = f" -> {_type_text(f.ret_type)}" if f.ret_type is not None else ""
        title = f.name if f is fn else f"{f.name}#{bodies[id(f)]}"
        lines.append(f"{f.kind} {title}({params}){ret} {{")
        _format_block(f.body, 1, lines, name, mark, locations, bodies, pending)
        lines.append("}")
    return "\n".join(lines)


def _type_text(t) -> str:
    """A type in the IR text: its descriptive name (`array(dtype=float32, ndim=1)`, not the
    annotation form an array type shows as its repr)."""
    name = getattr(t, "name", None)
    return name if isinstance(name, str) else repr(t)


def _format_attr(value) -> str:
    if hasattr(value, "name") and not isinstance(value, (str, int, float)):
        return str(value.name)
    return repr(value)


def _format_block(block: Block, depth: int, lines, name, mark, locations, bodies, pending):
    """`block`'s ops; the bodies of kept calls are numbered in `bodies` and queued in
    `pending` (printed after the function, each once)."""
    pad = "  " * depth
    for op in block.ops:
        results = ", ".join(f"{name(r)}: {_type_text(r.type)}" for r in op.results)
        head = f"{results} = " if results else ""
        operands = ", ".join(name(v) for v in op.operands)
        body = op.attrs.get("body") if op.name == "call_func" else None
        if body is not None and id(body) not in bodies:
            bodies[id(body)] = len(bodies)
            pending.append(body)
        attrs = ", ".join(f"{k}=#{bodies[id(v)]}" if body is not None and v is body else f"{k}={_format_attr(v)}"
                          for k, v in op.attrs.items())
        text = f"{pad}{head}{op.name} {operands}".rstrip()
        if attrs:
            text += f" {{{attrs}}}"
        if locations and op.loc is not None:
            text += f"  # {op.loc}"
        if op is mark:
            text += "   <<< here"
        if not op.regions:
            lines.append(text)
            continue
        lines.append(text + " (")
        for region in op.regions:
            args = ", ".join(f"{name(a)}: {_type_text(a.type)}" for a in region.args)
            lines.append(f"{pad}  ^({args}):")
            _format_block(region, depth + 2, lines, name, mark, locations, bodies, pending)
        lines.append(f"{pad})")
