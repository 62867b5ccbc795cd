"""A compiled kernel: its entry point, what launching it needs to know, and its packing.

`KernelFacts` are the few things a launch reads from a kernel's IR (how many `tid()`
indices it unpacks, how much work a thread does, which arrays it only adds into, ...).
They are computed from the IR when the kernel is compiled, and kept beside its object code
in the cache, so that a warm process launches the kernel without building its IR
(lang/warm_start.py); the IR and the error sites are then built only when asked for.
"""

from __future__ import annotations

import ctypes
import math
import threading
import typing
import weakref

import numpy as np

from ..ir.core import constant_value, walk
from ..runtime.array import array
from ..transforms.scatter import scatter_params
from ..types import ArrayType
from ..types.layout import ctype_of

# Argument types whose packed form cannot change while the object lives (an array's
# pointer, shape and strides are fixed; structs and vectors are mutable and always repacked).
_UNCHANGING = frozenset(map(id, (array, int, float, bool)))  # (ids: a value class's == is slow)
_NUMPY_SCALAR = np.number  # (not np.bool_: its two singletons go through the deprecation path)


ENTRY_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p)


def _has_float(t) -> bool:
    from ..autodiff.active import active_types
    return bool(active_types(t))


class KernelFacts(typing.NamedTuple):
    """What a launch needs to know of a compiled kernel's IR (JSON-friendly: stored in its
    warm-start record)."""

    entry: str  # the entry point's symbol
    scratch_size: int  # bytes of scratch memory an access out of bounds may touch
    param_names: tuple
    tid_arities: tuple  # the numbers of indices `tid()` is unpacked into (1: `i = tid()`)
    has_print: bool
    has_stack: bool  # whether it pushes onto an AD stack
    # float atomics: the result depends on the order of threads (see config.DeterministicMode)
    order_dependent: bool
    # work per thread, roughly (decides whether a launch is worth spreading over cores)
    cost_weight: int
    # arrays only added into: private copies in a parallel launch (runtime/scatter.py)
    scatter_params: tuple
    # (an adjoint kernel's gradient arrays are parameters; only `array_grad` reads the
    # gradient pointers of array descriptors, so only then do they count as its memory)
    reads_grad_pointers: bool
    # launches of several dimensions whose last one is shorter run a variant of their own
    # (for_dims; 0: none)
    short_rows_below: int = 0

    @classmethod
    def of(cls, fn, entry: str, scratch_size: int, short_rows_below: int = 0) -> KernelFacts:
        """The facts of IR function `fn`, compiled with this entry symbol and scratch size."""
        ops = list(walk(fn.body))
        return cls(entry, scratch_size, tuple(fn.param_names),
                   tuple(sorted({op.attrs["of"] for op in ops if op.name == "tid"})),
                   any(op.name == "print" for op in ops),
                   any(op.name == "push" for op in ops),
                   any(op.name == "atomic" and not op.attrs.get("private") and _has_float(op.operands[-1].type)
                       for op in ops),
                   work_per_thread(fn.body),
                   tuple(scatter_params(fn)),
                   any(op.name == "array_grad" for op in ops),
                   short_rows_below)

    @classmethod
    def from_json(cls, data: dict) -> KernelFacts:
        """Facts read back from a record (lists become tuples again)."""
        return cls(**{name: tuple(v) if isinstance(v, list) else v for name, v in data.items()})


class CompiledKernel:
    """A native kernel: its entry point, argument layout and bounds-check sites."""

    def __init__(self, kernel, address, facts: KernelFacts, fn=None, sites=(), adjoint=False, rebuild=None,
                 param_types=None):
        """`fn` and `sites`: its IR and bounds-check sites; or None, `rebuild`, a function
        returning both on first use, and `param_types` (a kernel loaded by its warm-start
        record)."""
        self.kernel = kernel
        self.label = f"{kernel.name} (adjoint)" if adjoint else kernel.name  # for error messages
        self.subject = f"kernel '{self.label}'"  # what a run-time error names
        self.facts = facts
        self.scratch_size = facts.scratch_size
        self.address = address
        self.entry = ENTRY_TYPE(address)
        self._fn, self._sites, self._rebuild = fn, {s.id: s for s in sites}, rebuild
        self.param_names = list(facts.param_names)
        self.param_types = [p.type for p in fn.params] if fn is not None else list(param_types)
        fields = [(f"p{k}", ctype_of(t)) for k, t in enumerate(self.param_types)]
        self.args_type = type(f"Args_{kernel.name}", (ctypes.Structure,), {"_fields_": fields})
        self.tid_arities = set(facts.tid_arities)
        # launches with this many dimensions need neither padding nor a variant (for_dims)
        self._plain_rank = max(self.tid_arities) if len(self.tid_arities) == 1 else None
        self.has_print = facts.has_print
        self.has_stack = facts.has_stack
        self.order_dependent = facts.order_dependent
        self.cost_weight = facts.cost_weight
        self.scatter_params = facts.scatter_params
        self.reads_grad_pointers = facts.reads_grad_pointers
        self.private_copies = None
        # (spec, adjoint, consume, retain, grid): set by Kernel.compiled, for for_dims
        self.variant = None
        self._grids = {}  # launch dimensions -> the variant for_dims compiled for them
        self.short_rows_below = facts.short_rows_below
        self._short_rows = None  # the variant for short rows, once compiled
        from ..runtime.launch import LaunchContext, make_packer
        # adjoints of half arrays: float32 in the kernel, the .grad arrays' own type outside
        # (see autodiff/half.py; runtime/half_adjoints.py swaps them around each run)
        self.widened = {}
        if adjoint:
            from ..autodiff.half import is_half
            n = len(kernel.params)
            primal = list(kernel.params.values())
            for j, k in enumerate(kernel.adjoint_param_indices):
                if isinstance(primal[k], ArrayType) and is_half(primal[k].dtype) \
                        and self.param_types[n + j] is not primal[k]:
                    self.widened[n + j] = primal[k]
        packed_types = [self.widened.get(k, t) for k, t in enumerate(self.param_types)]
        self.packers = [make_packer(kernel, n, t) for n, t in zip(self.param_names, packed_types)]
        self.args = self.args_type()
        self.ctx = LaunchContext.for_kernel(self)
        self.lock = threading.Lock()

        self.args_ptr = ctypes.addressof(self.args)
        self.ctx_ptr = ctypes.addressof(self.ctx)
        self.field_names = [f"p{k}" for k in range(len(self.param_types))]
        self.last_dims = None
        self.last_values = [None] * len(self.param_types)

    @property
    def fn(self):
        """Its IR (weft.autograd.detect_anomaly compiles a checked variant of it)."""
        if self._fn is None:
            fn, sites = self._rebuild()
            self._fn, self._sites = fn, {s.id: s for s in sites}
        return self._fn

    @property
    def sites(self) -> dict:
        """Bounds-check (and other error) sites by id: what an error record refers to."""
        if self._fn is None:
            self.fn  # noqa: B018 - builds them
        return self._sites

    def pack_cached(self, values):
        """Pack into the kernel's own block, skipping arguments identical to the last launch
        (arrays never change pointer or shape, so identity is enough). Arrays are held by
        weak reference: a launch does not keep its arrays alive."""
        last = self.last_values
        args = self.args
        for k, value in enumerate(values):
            held = last[k]
            if type(value) is array:
                if type(held) is weakref.ref and held() is value:
                    continue
                setattr(args, self.field_names[k], self.packers[k](value))
                last[k] = weakref.ref(value)  # (only once packed: a refused value is checked again)
            elif value is held and (id(type(value)) in _UNCHANGING or isinstance(value, _NUMPY_SCALAR)):
                continue  # (numbers and numpy scalars, weft's scalar values among them, never change)
            else:
                setattr(args, self.field_names[k], self.packers[k](value))
                last[k] = value

    def pack(self, values, into=None):
        """The argument block for `values` (written into `into` if given)."""
        args = self.args_type() if into is None else into
        for name, packer, value in zip(self.field_names, self.packers, values):
            setattr(args, name, packer(value))
        return args

    def check_dims(self, dims):
        """`dims` as the kernel sees them (returned): as in Warp, a launch with fewer
        dimensions than `tid()` unpacks is padded with 1s, and trailing 1s beyond them are
        dropped (`launch_tiled`'s block dimension, 1 on the CPU)."""
        n = max(self.tid_arities, default=0)
        if n:
            dims = tuple(dims) + (1,) * (n - len(dims))
            while len(dims) > n and dims[-1] == 1:
                dims = dims[:-1]
        return tuple(dims)

    def for_dims(self, dims) -> tuple[CompiledKernel, tuple]:
        """(the kernel to run, `dims` as it sees them) for a launch of shape `dims`: this
        one, or where `tid()` unpacks fewer indices than the launch has dimensions (it then
        reads the leading ones, as in Warp), the variant compiled for that many; for a launch
        of several dimensions whose last one is short, that one's short-rows variant."""
        if len(dims) == self._plain_rank or not self.tid_arities:  # (the launch hot path)
            return self._for_rows(tuple(dims))
        dims = self.check_dims(dims)
        if all(n == len(dims) for n in self.tid_arities) or getattr(self.kernel, "lanes", None) is not None \
                or self.variant is None:
            return self._for_rows(dims)
        variant = self._grids.get(len(dims))
        if variant is None:
            spec, adjoint, consume, retain, _ = self.variant
            variant = self._grids[len(dims)] = self.kernel.compiled(spec, adjoint, consume, retain, grid=len(dims))
        return variant._for_rows(dims)

    def _for_rows(self, dims: tuple) -> tuple[CompiledKernel, tuple]:
        """This kernel, or for short rows (which its SIMD lanes would leave to scalar code) its
        variant whose lanes run along the linear thread index, compiled on first use."""
        if len(dims) < 2 or dims[-1] >= self.short_rows_below or self.variant is None:
            return self, dims
        if self._short_rows is None:
            self._short_rows = self.kernel.compiled(*self.variant, short_rows=True)
        return self._short_rows, dims


#: Iterations assumed for a loop whose trip count is only known at run time.
DYNAMIC_TRIPS = 256


def work_per_thread(block, scale: int = 1) -> int:
    """Ops one thread runs, roughly: each op once, a loop's body times its trip count (the
    count of a `for` over constant bounds, else DYNAMIC_TRIPS), nested loops multiplied. A
    `tile_map`'s body runs once per element of its shape, and a primitive with loops of its
    own (`tile_matmul`) counts what it says it costs, so that a tiled launch of a few blocks
    with heavy tiles is split over the threads."""
    total = 0
    for op in block.ops:
        total += scale * _tile_work(op)
        if not op.regions:
            continue
        trips = _trip_count(op) if op.name in ("for", "while") else \
            math.prod(op.attrs["shape"]) if op.name == "tile_map" else 1
        for region in op.regions:
            total += work_per_thread(region, scale * trips)
    return total


def _tile_work(op) -> int:
    """1, or for a `call` of a primitive that estimates its work (`Primitive.work`), that."""
    work = getattr(op.attrs.get("fn"), "work", None) if op.name == "call" else None
    if work is None:
        return 1
    return max(int(work([v.type for v in op.operands], [r.type for r in op.results])), 1)


def _trip_count(op) -> int:
    if op.name == "for":
        bounds = [constant_value(v) for v in op.operands[:3]]
        if None not in bounds and bounds[2] != 0:
            return max(len(range(*(int(b) for b in bounds))), 1)
    return DYNAMIC_TRIPS
