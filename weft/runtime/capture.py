"""Graph capture on the CPU: record the work of a block, replay it later.

Between `capture_begin()` and `capture_end()` (or inside `with ScopedCapture() as c:`),
kernel launches, array fills and copies, and the `weft.utils` algorithms are recorded
instead of run, as a CUDA graph capture does: nothing runs until `capture_launch(graph)`,
which replays the recorded work, in order, with the arguments it was recorded with (the
same arrays, so new contents of those arrays are seen). A launch is recorded as a packed
`Launch`, so a replay costs about what the launch itself costs.

`capture_while` and `capture_if` record loops and branches whose condition is read from an
int32 array when the graph runs. Outside a capture they run their bodies at once.
"""

from __future__ import annotations

import enum
import threading
import weakref

from .device import get_device

#: Live geometry objects (Mesh, Bvh, HashGrid, Volume) by their id, an address in this
#: process: `capture_save` refuses graphs that pass one (it would dangle in another process).
handles: weakref.WeakValueDictionary = weakref.WeakValueDictionary()

#: The list that recorded work goes to (the graph's, or a loop body's), None when not capturing.
recording: list | None = None
_graph: Graph | None = None
_owner: int | None = None  # the thread that captures


class Graph:
    """Recorded work of one capture, run by `capture_launch` (Warp's `Graph`)."""

    def __init__(self, device, ops=None):
        self.device = get_device(device)
        self.ops: list = [] if ops is None else ops  # callables, run in order

    def launch(self):
        for op in self.ops:
            op()

    def __repr__(self):
        return f"<weft Graph on {self.device}: {len(self.ops)} operations>"

    _paused = None  # (recording list, thread) while capture_pause() holds it

    # Parameters of graphs read back by capture_load (see capture_io.LoadedGraph) -----------
    is_loaded = False
    params: dict = {}

    def set_param(self, name: str, arr) -> None:
        raise RuntimeError("set_param() is only supported on loaded APIC graphs (see capture_load)")

    def get_param(self, name: str, arr) -> None:
        raise RuntimeError("get_param() is only supported on loaded APIC graphs (see capture_load)")

    def get_param_ptr(self, name: str):
        raise RuntimeError("get_param_ptr() is only supported on loaded APIC graphs (see capture_load)")


def active_graph(device=None) -> Graph | None:
    """The graph being captured (on `device`, if given), or None."""
    if _graph is None or (device is not None and get_device(device) != _graph.device):
        return None
    return _graph


class Saveable:
    """A recorded operation with the description `capture_io` saves it by (`saved`)."""

    __slots__ = ("op", "saved")

    def __init__(self, op, saved: tuple):
        self.op, self.saved = op, saved

    def __call__(self):
        self.op()


def record(op, saved: tuple | None = None) -> bool:
    """Record `op` (a callable) into the capture if one is under way on this thread; True
    if it was (the caller then does not run it now). Work other threads issue meanwhile
    runs as usual (Warp's default, thread-local capture mode). `saved` describes the work
    for `capture_save` (see capture_io.py); work recorded without one cannot be saved."""
    if recording is None or threading.get_ident() != _owner:
        return False
    recording.append(op if saved is None else Saveable(op, saved))
    return True


class CaptureMode(enum.IntEnum):
    """Warp's CUDA stream capture modes (how strictly CUDA refuses capture-unsafe calls during
    a capture). A CPU capture records Python calls and has nothing to refuse: any mode
    records the same work."""

    GLOBAL = 0
    THREAD_LOCAL = 1
    RELAXED = 2


def capture_begin(device=None, stream=None, force_module_load=None, external: bool = False,
                  apic: bool = False, capture_mode: CaptureMode = CaptureMode.THREAD_LOCAL) -> None:
    """Start recording the work issued on `device` (or `stream`'s device)."""
    if capture_mode is not None and not isinstance(capture_mode, CaptureMode):
        raise TypeError(f"capture_mode must be a weft.CaptureMode, got {capture_mode!r}")
    global _graph, recording, _owner
    if stream is not None:
        device = stream.device
    device = get_device(device)
    if _graph is not None:
        raise RuntimeError("Graph capture already in progress")
    if force_module_load:
        from .. import force_load
        force_load(device)
    _graph = Graph(device)
    _graph.apic = apic  # a saveable capture: work that cannot be serialized refuses it
    recording = _graph.ops
    _owner = threading.get_ident()


def capture_end(device=None, stream=None) -> Graph:
    """Stop recording; the `Graph` of what was recorded."""
    global _graph, recording
    if _graph is None:
        raise RuntimeError("Graph capture is not active")
    graph, _graph, recording = _graph, None, None
    return graph


def capture_pause(device=None, stream=None) -> Graph:
    """Suspend the capture under way: work issued until `capture_resume(graph)` runs at once
    and is not recorded (Warp's `warp._src.context.capture_pause`). Returns the graph."""
    global _graph, recording, _owner
    if not capturing():
        raise RuntimeError("Graph capture is not active")
    graph = _graph
    graph._paused = (recording, _owner)
    _graph, recording, _owner = None, None, None
    return graph


def capture_resume(graph: Graph, device=None, stream=None) -> None:
    """Go on recording into `graph`, paused by `capture_pause`."""
    global _graph, recording, _owner
    if not isinstance(graph, Graph):
        raise TypeError(f"capture_resume expects a Graph, got {type(graph).__name__}")
    paused = getattr(graph, "_paused", None)
    if paused is None:
        raise RuntimeError("CPU graph capture is not paused (capture_resume takes the graph capture_pause returned)")
    if _graph is not None:
        raise RuntimeError("Graph capture already in progress")
    _graph, (recording, _owner) = graph, paused
    graph._paused = None


class paused:
    """`with capture.paused():` runs its block at once even during a capture (reads that
    must see the memory now, such as `BsrMatrix.nnz_sync`)."""

    def __enter__(self):
        self.graph = capture_pause() if capturing() else None

    def __exit__(self, *exc_info):
        if self.graph is not None:
            capture_resume(self.graph)


def capture_launch(graph: Graph, stream=None) -> None:
    """Run the work recorded in `graph`."""
    if not isinstance(graph, Graph):
        raise TypeError(f"capture_launch expects a Graph, got {type(graph).__name__}")
    if not record(graph.launch, ("graph", graph)):  # (a graph launched inside a capture becomes part of it)
        graph.launch()


def capture_debug_dot_print(graph: Graph, path: str, verbose: bool = True) -> None:
    """Warp writes a CUDA graph as a DOT file; a CPU graph has no CUDA graph, and Warp raises
    RuntimeError for one, as weft does (every weft graph is a CPU graph)."""
    if not isinstance(graph, Graph):
        raise TypeError(f"capture_debug_dot_print expects a Graph, got {type(graph).__name__}")
    raise RuntimeError("Graph debug dot print error: a CPU graph has no CUDA graph to print "
                       f"(its {len(graph.ops)} recorded operations run from Python)")


class ScopedCapture:
    """`with ScopedCapture() as capture: ...` records the block; `capture.graph` holds it."""

    def __init__(self, device=None, stream=None, force_module_load=None, external: bool = False,
                 apic: bool = False, capture_mode: CaptureMode = CaptureMode.THREAD_LOCAL):
        self.device = device
        self.stream = stream
        self.force_module_load = force_module_load
        self.external = external
        self.apic = apic
        self.capture_mode = capture_mode
        self.graph: Graph | None = None
        self.active = False

    def __enter__(self):
        capture_begin(self.device, self.stream, self.force_module_load, self.external, self.apic, self.capture_mode)
        self.active = True
        return self

    def __exit__(self, *exc_info):
        if self.active:
            self.graph = capture_end(self.device, self.stream)
            self.active = False


def capturing() -> bool:
    """Whether this thread is capturing."""
    return recording is not None and threading.get_ident() == _owner


def _condition_value(condition) -> int:
    return int(condition.numpy().reshape(-1)[0])


def _check_condition(condition):
    from ..types import int32
    from .array import array
    if not isinstance(condition, array) or condition.dtype is not int32:
        raise TypeError("Condition must be a Warp array of int32 with a single element")


def _body_ops(body, kwargs) -> list:
    """The work `body(**kwargs)` issues, recorded into a list of its own."""
    global recording
    if isinstance(body, Graph):
        return [Saveable(body.launch, ("graph", body))]
    outer, recording = recording, []
    try:
        body(**kwargs)
        return recording
    finally:
        recording = outer


def _run(ops):
    for op in ops:
        op()


def capture_while(condition, while_body, stream=None, **kwargs) -> None:
    """Run `while_body(**kwargs)` while `condition[0]` is nonzero (a recorded loop during a
    capture: the condition is read each time the graph runs)."""
    _check_condition(condition)
    if not capturing():
        while _condition_value(condition):
            while_body.launch() if isinstance(while_body, Graph) else while_body(**kwargs)
        return
    ops = _body_ops(while_body, kwargs)

    def run_loop():
        while _condition_value(condition):
            _run(ops)
    recording.append(Saveable(run_loop, ("while", condition, ops)))


def capture_if(condition, on_true=None, on_false=None, stream=None, **kwargs) -> None:
    """Run `on_true(**kwargs)` if `condition[0]` is nonzero, else `on_false(**kwargs)` (a
    recorded branch during a capture)."""
    if on_true is None and on_false is None:
        return
    _check_condition(condition)
    if not capturing():
        body = on_true if _condition_value(condition) else on_false
        if body is not None:
            body.launch() if isinstance(body, Graph) else body(**kwargs)
        return
    true_ops = _body_ops(on_true, kwargs) if on_true is not None else []
    false_ops = _body_ops(on_false, kwargs) if on_false is not None else []

    def run_branch():
        _run(true_ops if _condition_value(condition) else false_ops)
    recording.append(Saveable(run_branch, ("if", condition, true_ops, false_ops)))


def is_conditional_graph_supported() -> bool:
    """Whether graphs can hold loops and branches (`capture_while`, `capture_if`): yes."""
    return True
