"""`weft.autograd.detect_anomaly()`: find where a NaN or Inf was born, forward or backward.

    with weft.autograd.detect_anomaly():
        with weft.Tape() as tape:
            weft.launch(step, dim=n, inputs=[x], outputs=[y])
        tape.backward(loss=loss)

Inside the block every launch, and every adjoint launch `Tape.backward` runs, is checked
after it runs: if it left a non-finite value in an array it writes (an element that was
finite before the launch), `AnomalyError` (a FloatingPointError) is raised, naming

- the kernel, and whether it was the forward kernel or its adjoint;
- the array by parameter name (adjoints: `adj_x`, the gradient of `x`), the first bad
  element (multi-index, flat index, component or struct field) and its value;
- the user's line that launched it (for an adjoint: the line of the forward launch the
  Tape recorded, kept when the recording happens inside a detect_anomaly block);
- the first operation that made a non-finite value from finite inputs: the builtin (`sqrt`,
  `log`, `div`, ...), the thread and the operand values, and the kernel source line (for an
  adjoint, the line of the forward operation whose adjoint code it is).

The last item comes from a checked variant of the kernel (codegen/fp_checks.py), compiled
only when a launch is found bad and run, on one thread, on copies of the arrays the launch
wrote as they were before it: the user's arrays stay as the failed launch left them.

The price, paid only inside the block: each checked launch copies the arrays it writes
before it runs and scans them after. Outside the block a launch does one extra test of
`config.anomaly_depth`. Blocks nest (`detect_anomaly(check_nan=False)` inside one turns the
checks off for its extent, as PyTorch's does). `Launch` objects (`record_cmd=True`) are
checked when they run inside a block; launches replayed by a captured graph are not.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys

import numpy as np

from .. import config
from ..ir.core import walk
from ..runtime import diagnostics
from ..runtime.array import array
from ..runtime.launch import LaunchContext, run_compiled, set_launch_shape
from ..tape import _caller_outside_weft, _value_at, _with_field
from ..types import StructType


class AnomalyError(FloatingPointError):
    """A launch left NaN or Inf in an array it writes. Attributes: `kernel` (name),
    `adjoint` (bool), `array` (parameter name, `adj_x` for a gradient), `index` (the
    element's multi-index), `flat_index`, `value`, `launched_at` ((file, line) or None),
    `operation` (the builtin that first made a non-finite value, or None), `op_location`
    (its weft.ir Loc: file, line, col), `called` (the function the source calls there, as
    written: `wp.length`, or None), `forward_operation` (adjoints: the forward builtin
    whose adjoint code it is) and `thread` (linear thread index, or None)."""

    def __init__(self, message, **details):
        super().__init__(message)
        self.operation = self.op_location = self.thread = self.called = self.forward_operation = None
        for name, value in details.items():
            setattr(self, name, value)


class set_detect_anomaly:  # noqa: N801 - PyTorch's name
    """Switch anomaly detection on (`mode=True`) or off until the object is closed (as a
    context manager) or for good (called as a function): PyTorch's form."""

    def __init__(self, mode: bool = True, check_nan: bool = True):
        self._saved = config.anomaly_depth
        config.anomaly_depth = self._saved + 1 if (mode and check_nan) else 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        config.anomaly_depth = self._saved
        return False


class detect_anomaly:  # noqa: N801 - PyTorch's name
    """Check every launch (forward and adjoint) made inside the block for NaN and Inf in
    the arrays it writes; see the module's docstring. Also a decorator."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self._saved: list[int] = []  # (a stack: one object may be entered again inside itself)

    def __enter__(self):
        self._saved.append(config.anomaly_depth)
        config.anomaly_depth = self._saved[-1] + 1 if self.check_nan else 0
        return self

    def __exit__(self, *exc):
        config.anomaly_depth = self._saved.pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def checked(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return checked


def is_anomaly_enabled() -> bool:
    """Whether launches are checked now (inside a detect_anomaly block)."""
    return config.anomaly_depth > 0


# Checked launches ------------------------------------------------------------------------------
_CALLER = object()


def run_checked(kernel, ck, dims, params, adjoint: bool, where=_CALLER, run=None):
    """Run compiled kernel `ck` (of `kernel`; its adjoint if `adjoint`) with `params` over
    `dims` (`run_compiled`, or `run()` if given: a `Launch`'s own argument block). With
    anomaly detection on, raise AnomalyError if it leaves a new non-finite value in an
    array it writes; `where` is the (file, line) to name, None if unknown (default: the
    caller's line). With only `config.verify_fp` on, print Warp's report instead."""
    if run is None:
        def run():
            run_compiled(ck, dims, params)
    if not config.anomaly_depth:
        run()
        if config.verify_fp:
            diagnostics.verify_fp(ck.label, ck.param_names, params)
        return
    if where is _CALLER:
        where = _caller_outside_weft()
    written = _written(ck, params)
    before = {key: (a, a.numpy().copy()) for key, a in written.items() if isinstance(a, array)}
    run()
    for key, (a, old) in before.items():
        found = diagnostics.first_nonfinite(a.numpy(), a.ndim, diagnostics.nonfinite_masks(old))
        if found is not None:
            _report(kernel, ck, dims, params, adjoint, where, key, a, found, written, before)


def _written(ck, params) -> dict:
    """Key (parameter index, or (index, field path)) -> value of each array `ck` writes."""
    keys = getattr(ck, "written_keys", None)
    if keys is None:
        from ..autodiff.arrays import array_effects
        position = {p.id: k for k, p in enumerate(ck.fn.params)}
        keys = [position[pid] if not path else (position[pid], path)
                for pid, path in array_effects(ck.fn)[1] if pid in position]
        keys = ck.written_keys = sorted(keys, key=lambda k: (k, ()) if isinstance(k, int) else k)
    out = {}
    for key in keys:
        value = _value_at(params, key)
        if value is not None:
            out[key] = value
    return out


def _key_name(ck, key) -> str:
    """The parameter (and struct field) a key names: `y`, `adj_x`, `state.pos`."""
    k, path = (key, ()) if isinstance(key, int) else key
    parts, t = [ck.param_names[k]], ck.param_types[k]
    for index in path:
        name = list(t.fields)[index]
        parts.append(name)
        t = t.fields[name]
    return ".".join(parts)


def _report(kernel, ck, dims, params, adjoint, where, key, a, found, written, before):
    element, component, path, value = found
    name = _key_name(ck, key)
    flat = int(np.ravel_multi_index(element, a.shape)) if element else 0
    shown = diagnostics.describe_element(name, element, component, path)
    who = f"the adjoint of kernel '{kernel.name}'" if adjoint else f"kernel '{kernel.name}'"
    what = f"array '{name}'"
    if adjoint and name.startswith("adj_"):
        what = f"'{name}' (the gradient of '{name[4:]}')"
    lines = [f"weft.autograd.detect_anomaly: {who} left a non-finite value in {what}: "
             f"{shown} = {value} (flat index {flat})"]
    if where is not None and where[0] is not None:
        verb = "the forward launch was recorded at" if adjoint else "launched at"
        lines.append(f"  {verb} {where[0]}:{where[1]}")
    elif adjoint:
        lines.append("  (the forward launch was recorded outside detect_anomaly: its line is unknown)")
    details = dict(kernel=kernel.name, adjoint=adjoint, array=name, index=element + component,
                   flat_index=flat, value=value, launched_at=where)
    if all(isinstance(v, array) for v in written.values()):
        origin = _find_origin(kernel, ck, dims, params, adjoint, before)
        lines.extend(origin.pop("lines"))
        details.update(origin)
    else:
        lines.append("  (the operation was not searched for: the launch writes an indexed array)")
    raise AnomalyError("\n".join(lines), **details).with_traceback(None) from None


# The first bad operation ------------------------------------------------------------------------
def _find_origin(kernel, ck, dims, params, adjoint, before) -> dict:
    """Run checked variants of `ck` on copies of the written arrays as they were before the
    launch; describe the first operation that made a non-finite value from finite ones."""
    from ..codegen.fp_checks import FPSite
    for check_loads in (False, True):
        copies, run_params = {}, list(params)
        for key, (a, old) in before.items():
            if id(a) not in copies:
                c = type(a)(shape=a.shape, dtype=a.dtype, device=a.device)
                np.copyto(c.numpy(), old)
                copies[id(a)] = c
            run_params = _replaced(run_params, key, copies[id(a)])
        # an array passed twice (read through one parameter, written through another) is
        # one copy (views of one buffer through different array objects are not matched)
        run_params = [copies.get(id(p), p) if isinstance(p, array) else p for p in run_params]
        try:
            checked = _compile_checked(kernel, ck, run_params, adjoint, check_loads)
        except Exception as e:  # noqa: BLE001 - a failure here must not hide the report
            return {"lines": [f"  (the checked variant of the kernel could not be built: {e})"]}
        ctx = _run_serial(checked, dims, run_params)
        site = checked.sites.get(ctx.error_site)
        if isinstance(site, FPSite) and (site.kind != "write" or check_loads):
            return _describe_site(kernel, adjoint, dims, site, FPSite.decode(ctx))
    return {"lines": ["  (no single operation of the kernel made it: see the arrays it read)"]}


def _replaced(params, key, value):
    out = list(params)
    if isinstance(key, int):
        out[key] = value
    else:
        k, path = key
        out[k] = _with_field(out[k], path, value)
    return out


def _compile_checked(kernel, ck, params, adjoint, check_loads):
    from ..codegen import cpu
    from ..codegen.fp_checks import FPCheckCodegen
    from ..ir.outline import inline_kept_calls
    from ..lang.compiled import CompiledKernel, KernelFacts
    spec = kernel.specialization(params, adjoint)
    with cpu.target(*kernel.target):
        # (its checks follow values through one body: kept calls inlined, ir/outline.py)
        cg = FPCheckCodegen(inline_kept_calls(ck.fn), spec, check_loads=check_loads, bounds_checks=True,
                            fast_math=kernel.fast_math)
        tm = cpu.target_machine()
        cg.module.triple = tm.triple
        cg.module.data_layout = str(tm.target_data)
        address = cpu.load_object(cpu.compile_to_object(str(cg.generate()), vectorize=not cg.wide_elements),
                                  cg.entry_name)
    facts = KernelFacts.of(ck.fn, cg.entry_name, cg.scratch_size)
    return CompiledKernel(kernel, address, facts, fn=ck.fn, sites=cg.all_sites, adjoint=adjoint)


def _run_serial(ck, dims, params):
    """Run `ck` on one thread, in thread order (so the first report is the first thread's);
    what it prints is dropped (the launch printed it already)."""
    args = ck.pack(params)
    ctx = LaunchContext.for_kernel(ck)
    total = set_launch_shape(ctx, dims)
    ctx.error_site = 0
    ctx.adstack_limit = config.adstack_limit
    with _silenced() if ck.has_print else contextlib.nullcontext():
        ck.entry(ctypes.addressof(args), 0, total, ctypes.addressof(ctx))
    return ctx


@contextlib.contextmanager
def _silenced():
    from ..runtime.launch import _flush_c_stdout
    sys.stdout.flush()
    _flush_c_stdout()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        yield
    finally:
        _flush_c_stdout()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def _describe_site(kernel, adjoint, dims, site, data) -> dict:
    from ..lang.errors import format_at
    thread = data["thread"]
    tid = tuple(int(i) for i in np.unravel_index(thread, dims)) if len(dims) > 1 else thread
    op, loc = site.op, site.op.loc
    if site.kind == "load":
        text = f"read a non-finite value ({data['result']}) from array '{op.operands[0].hint}'"
        lines = [f"  the kernel's input was not finite: thread {tid} {text}"]
        return {"lines": lines + ["  " + format_at("read here", loc).replace("\n", "\n  ")],
                "operation": "load", "op_location": loc, "thread": thread}
    if site.kind == "write":
        lines = [f"  thread {tid} wrote a non-finite value ({data['result']}) that no operation of "
                 "the kernel made (it came from the arguments)"]
        return {"lines": lines + ["  " + format_at("written here", loc).replace("\n", "\n  ")],
                "operation": site.what, "op_location": loc, "thread": thread}
    show = functools.partial(_show, _float_type(op))
    name = site.what.removeprefix("cast to ")  # (a cast reads as `float32(1e+300)`)
    call = f"{name}({', '.join(show(v) for v in data['operands'])})" if data["operands"] else site.what
    result = show(data["result"])
    if _composite(op):
        result = f"{result} (component {data['component']})"
    written = _called_at(loc)  # what the user wrote there, if a builtin expanded into this op
    inside = f" inside `{written}`" if written and written.rsplit(".", 1)[-1] != site.what else ""
    message = f"first non-finite operation: `{site.what}`{inside}, in thread {tid}: {call} = {result}"
    if adjoint:
        forward = _forward_op(kernel, op)
        of = f"`{forward}`" if forward else "the forward code"
        if written and forward and written.rsplit(".", 1)[-1] != forward:
            of += f" inside `{written}`"
        message = (f"first non-finite operation of the adjoint: `{site.what}`, in the adjoint code of "
                   f"{of} at this line, in thread {tid}: {call} = {result}")
    text = format_at(message, loc)
    return {"lines": ["  " + text.replace("\n", "\n  ")], "operation": site.what,
            "op_location": loc, "thread": thread,
            "forward_operation": _forward_op(kernel, op) if adjoint else None, "called": written}


def _called_at(loc) -> str | None:
    """The function called at source location `loc` (`wp.normalize`), if a call starts there."""
    import linecache
    import re
    text = linecache.getline(loc.file, loc.line)[loc.col:]
    match = re.match(r"([A-Za-z_][\w.]*)\s*\(", text)
    return match.group(1) if match else None


def _float_type(op):
    """The float type an op computes in (its array's, for an atomic)."""
    from ..types import Matrix, Scalar, Vector
    types = [op.operands[0].type.dtype] if op.name == "atomic" else [v.type for v in op.operands + op.results]
    for t in types:
        t = t.dtype if isinstance(t, (Vector, Matrix)) else t
        if isinstance(t, Scalar) and t.is_float:
            return t
    return None


def _show(t, value: float) -> str:
    """`value` as a number of weft type `t` prints (3e+38 for a float32, not its float64 digits)."""
    return str(t.np_dtype.type(value)) if t is not None and t.bits < 64 else repr(value)


def _composite(op) -> bool:
    from ..types import Matrix, Vector
    return any(isinstance(r.type, (Vector, Matrix, StructType)) for r in op.results)


def _forward_op(kernel, adj_op) -> str | None:
    """The builtin of the forward kernel at `adj_op`'s source location (the adjoint's ops
    carry the location of the forward op they differentiate): a call if there is one
    (`sqrt`), else an arithmetic op of the same kind."""
    from ..codegen.fp_checks import op_name
    from ..ir.outline import inline_kept_calls
    candidates = [op for op in walk(inline_kept_calls(kernel.ir()).body) if op.loc == adj_op.loc and op_name(op)]
    calls = [op for op in candidates if op.name == "call"]
    same = [op for op in candidates if op.name == adj_op.name and op.attrs == adj_op.attrs]
    pick = calls or same or candidates
    return op_name(pick[0]) if pick else None
