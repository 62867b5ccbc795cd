"""Saved graphs: `capture_save`, `capture_load`, `capture_load_from_bytes` (Warp's names).

A graph captured with `apic=True` keeps, beside each recorded operation, a description
that names what it does in terms that survive the process (`capture.record(op, saved=...)`):

- a kernel launch (a Tape's adjoint launches too): the kernel by its module's name and key
  (and its Python module and qualified name, to import it in a new process), the launch
  dimensions and its arguments (numbers, vectors, matrices, structs, arrays);
- a call of a public function on arrays (`weft.copy`, `weft.utils.array_scan`, the sorts,
  `array_sum`, ...): the function by its dotted name and its arguments;
- a fill of an array (`fill_`, `zero_`);
- `capture_while` / `capture_if` (the condition array and the recorded bodies) and graphs
  launched inside the capture (their operations).

Work on objects that live only in this process (a Bvh's refit, a Mesh's, a HashGrid build,
or an argument holding the id of such an object) is refused by `capture_save`, by name.

Arrays are saved by reference to their memory: the byte ranges of all arrays the graph
touches are merged into *regions* (views of one allocation, or arrays over overlapping
memory, fall into one region, so aliasing survives the round trip), each region is saved
with the contents it has when the graph is saved, and an array becomes (region, byte
offset, shape, strides, dtype). The loaded graph allocates its own copy of each region;
the `inputs` and `outputs` named at save time name regions, which `Graph.set_param` and
`Graph.get_param` copy arrays of the same byte size into and out of.

The file (`<path>.wrp`) is a zip archive: `graph.json` (the operations, regions and
parameter names, JSON only: loading runs no pickled code) and one `regions/<k>.bin` per
region. Kernels are compiled from their source in the loading process (the disk cache
makes that quick): where Warp's companion `<stem>_modules/` directory holds the modules'
binaries, weft's holds one JSON file per module listing its kernels with a digest of the
source each was saved with. The loader needs those files, as Warp's does, and refuses a
kernel whose source changed since the save (it may take other arguments now).
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import os
import zipfile

import numpy as np
from numpy.lib.array_utils import byte_bounds

from ..types import (
    ArrayType,
    CompositeValue,
    Matrix,
    Scalar,
    StructType,
    StructValue,
    Vector,
    scalar_from_numpy,
    uint64,
)
from ..types.scalars import SCALAR_VALUES
from . import capture
from .array import array
from .device import get_device
from .indexed_array import indexedarray

FORMAT = "weft-graph"
MODULE_FORMAT = "weft-graph-module"
VERSION = 1


# Descriptions ----------------------------------------------------------------------------------

def _dtype_desc(t):
    if isinstance(t, Scalar):
        return t.name
    if isinstance(t, Vector):
        return ["vector", t.length, t.dtype.name, t.flavor]
    if isinstance(t, Matrix):
        return ["matrix", t.rows, t.cols, t.dtype.name]
    if isinstance(t, StructType) and not _holds_arrays(t):  # (its records are plain bytes)
        return ["struct", t.cls.__module__, t.cls.__qualname__]
    raise _unsaveable(f"values of type {t!r}")


def _holds_arrays(t: StructType) -> bool:
    return any(isinstance(f, ArrayType) or (isinstance(f, StructType) and _holds_arrays(f)) for f in t.fields.values())


def _dtype_of(desc):
    from .. import types
    if isinstance(desc, str):
        return getattr(types, desc)
    if desc[0] == "vector":
        return Vector(desc[1], getattr(types, desc[2]), desc[3])
    if desc[0] == "struct":
        return _struct_type(desc[1], desc[2])
    return Matrix((desc[1], desc[2]), getattr(types, desc[3]))


def _unsaveable(what: str) -> RuntimeError:
    return RuntimeError(f"capture_save: the graph holds {what}, which weft cannot save")


def _span(a: array) -> tuple[int, int]:
    """[first byte, last byte + 1) of `a`'s memory, widened to the numpy allocation it views."""
    root = a.numpy()
    while isinstance(root.base, np.ndarray):
        root = root.base
    lo, hi = byte_bounds(a.numpy())
    rlo, rhi = byte_bounds(root)
    return min(lo, rlo), max(hi, rhi)


def _uint64_fields(dtype: np.dtype, path=()):
    """The paths of the uint64 fields of a (structured) numpy dtype: () for uint64 itself."""
    if dtype.names is None:
        if dtype == np.uint64:
            yield path
        return
    for name in dtype.names:
        yield from _uint64_fields(dtype.fields[name][0], (*path, name))


class _Saver:
    """Turns operation descriptions into JSON, collecting the arrays' memory into regions."""

    def __init__(self):
        self.arrays: list[array] = []
        self.live = dict(capture.handles.items())  # id -> live geometry object
        self.meshes: list = []  # the Meshes whose ids the graph passes, saved with it
        self.objects: list = []  # objects passed whole (sparse matrices): {"type", "state"}
        self._object_index: dict = {}  # id(object) -> its index in objects (kept alive by `_kept`)
        self._kept: list = []

    def handle(self, v: int, refuse: bool = True):
        """{"mesh": k} for the id of a live Mesh (rebuilt by the loader, which passes the new
        mesh's id); for the id of another live object a refusal (`refuse`: a kernel argument,
        surely used as a handle) or None (an array element, which, as in Warp, is kept as it
        is: the graph may overwrite it); None for other integers."""
        obj = self.live.get(v)
        if obj is None:
            return None
        from ..geometry.mesh import Mesh
        if not isinstance(obj, Mesh):
            if not refuse:
                return None
            raise _unsaveable(f"the id of a live {type(obj).__name__}, an address valid in this process only "
                              "(meshes are saved with the graph; other geometry objects are not)")
        if obj not in self.meshes:
            self.meshes.append(obj)
        return {"mesh": self.meshes.index(obj)}

    def mesh_patches(self) -> list:
        """[array index, flat element, field path, mesh index] for each mesh id held in a saved
        uint64 array or in a uint64 field of a saved array of structs."""
        out = []
        for k, a in enumerate(self.arrays):
            if not a.size:
                continue
            flat = np.ascontiguousarray(a.numpy()).reshape(-1) if a.dtype is uint64 or \
                isinstance(a.dtype, StructType) else None
            for path in _uint64_fields(flat.dtype) if flat is not None else ():
                column = flat
                for name in path:
                    column = column[name]
                for e, v in enumerate(column.tolist()):
                    found = self.handle(v, refuse=False)
                    if found is not None:
                        out.append([k, e, list(path), found["mesh"]])
        return out

    def describe_meshes(self) -> list:
        out = []
        for m in self.meshes:  # (describing one may add arrays, never meshes)
            out.append({"points": self.value(m.points), "indices": self.value(m.indices),
                        "velocities": self.value(m.velocities), "groups": self.value(m.groups),
                        "winding": m.support_winding_number, "constructor": m._constructor.name,
                        "leaf_size": m._leaf_size})
        return out

    def value(self, v):
        if isinstance(v, array):
            if v.__class__ is not array:
                raise _unsaveable(f"an array of type {type(v).__name__} of {v.dtype!r}")
            _dtype_desc(v.dtype)  # (refuses what cannot be saved)
            self.arrays.append(v)
            return {"array": len(self.arrays) - 1}
        if isinstance(v, int) and not isinstance(v, bool) and (found := self.handle(v)) is not None:
            return found
        if v is None or isinstance(v, (bool, int, float, str)):
            return v
        if getattr(type(v), "_capture_state", None) is not None:
            return {"object": self.obj(v)}
        if isinstance(v, (list, tuple)):
            return {"list": [self.value(x) for x in v], "tuple": isinstance(v, tuple)}
        if isinstance(v, np.integer) and (found := self.handle(int(v))) is not None:
            return {"scalar": _dtype_desc(scalar_from_numpy(v.dtype)), "value": found}
        if isinstance(v, SCALAR_VALUES):
            return {"scalar": _dtype_desc(scalar_from_numpy(v.dtype)), "value": v.item()}
        if isinstance(v, np.ndarray):
            return {"ndarray": v.tolist(), "dtype": v.dtype.str}
        if isinstance(v, CompositeValue):
            return {"composite": _dtype_desc(v.type), "values": np.asarray(v).reshape(-1).tolist()}
        if isinstance(v, indexedarray):
            return {"indexed": self.value(v.data), "indices": [self.value(i) for i in v.indices]}
        if isinstance(v, StructValue):
            t = v._type
            return {"struct": [t.cls.__module__, t.cls.__qualname__],
                    "fields": {name: self.value(getattr(v, name)) for name in t.field_names}}
        raise _unsaveable(f"an argument of type {type(v).__name__}")

    def obj(self, v) -> int:
        """The index of an object that describes itself (`_capture_state(value)`, rebuilt by
        its class's `_capture_rebuild(state, value)`): a sparse matrix. Each object is saved
        once, so calls that share it share it in the loaded graph too."""
        k = self._object_index.get(id(v))
        if k is None:
            k = self._object_index[id(v)] = len(self.objects)
            self._kept.append(v)
            self.objects.append(None)
            cls = type(v)
            self.objects[k] = {"type": f"{cls.__module__}.{cls.__qualname__}", "state": v._capture_state(self.value)}
        return k

    def regions(self) -> tuple[list, list]:
        """Merged [lo, hi) byte ranges, and per collected array its (region, offset)."""
        spans = [_span(a) if a.capacity else (0, 0) for a in self.arrays]
        order = sorted(s for s in spans if s[1] > s[0])
        merged: list = []
        for lo, hi in order:
            if merged and lo < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], hi)
            else:
                merged.append([lo, hi])
        where = []
        for a in self.arrays:
            if not a.capacity:
                where.append((None, 0))
                continue
            k = next(i for i, (lo, hi) in enumerate(merged) if lo <= a.ptr < hi)
            where.append((k, a.ptr - merged[k][0]))
        return merged, where


def _kernel_desc(k) -> dict:
    return {"module": k.module.name, "key": k.key, "py_module": k.func.__module__, "qualname": k.func.__qualname__,
            "module_file": _module_file(k.module.name), "source": _source_digest(k)}


def _module_file(name: str) -> str:
    """The file in `<stem>_modules/` that lists the kernels of weft module `name`."""
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)[:80]
    return f"{safe}-{hashlib.sha256(name.encode()).hexdigest()[:8]}.json"


def _source_digest(kernel) -> str:
    return hashlib.sha256(kernel.source_text.encode()).hexdigest()


def _kernel_ops(ops: list):
    """The launch and adjoint descriptions among `ops`, nested ones included."""
    for op in ops:
        if op["op"] in ("launch", "adjoint"):
            yield op
        for key in ("ops", "body", "then", "else"):
            yield from _kernel_ops(op.get(key, ()))


def _describe(op, saver: _Saver):
    saved = getattr(op, "saved", None)
    if saved is None:
        raise _unsaveable(f"an operation that cannot be saved ({getattr(op, '__qualname__', op)!r}); "
                          "it was recorded by code that does not describe its work for saving")
    kind, *rest = saved
    if kind == "unsaveable":  # (work on process-local objects: a BVH's tree, a mesh's)
        raise _unsaveable(f"a call of {rest[0]}, which works on objects of this process only")
    if kind == "launch":
        launch = rest[0]
        return {"op": "launch", **_kernel_desc(launch.kernel), "dims": list(launch.dims),
                "adjoint": bool(launch.adjoint), "params": saver.value(list(launch.arguments))}
    if kind == "adjoint":  # a Tape's adjoint launch (adjoints of overwritten elements consumed)
        k, dims, params, retained = rest
        return {"op": "adjoint", **_kernel_desc(k), "dims": list(dims), "params": saver.value(list(params)),
                "retain": sorted(retained)}
    if kind == "graph":  # a graph launched inside the capture
        return {"op": "sequence", "ops": [_describe(o, saver) for o in rest[0].ops]}
    if kind == "while":
        condition, body = rest
        return {"op": "while", "condition": saver.value(condition), "body": [_describe(o, saver) for o in body]}
    if kind == "if":
        condition, then, otherwise = rest
        return {"op": "if", "condition": saver.value(condition), "then": [_describe(o, saver) for o in then],
                "else": [_describe(o, saver) for o in otherwise]}
    if kind == "call":
        name, args, kwargs = rest
        return {"op": "call", "func": name, "args": saver.value(list(args)),
                "kwargs": {key: saver.value(v) for key, v in kwargs.items()}}
    if kind == "fill":
        arr, value = rest
        return {"op": "fill", "array": saver.value(arr), "value": saver.value(value)}
    raise _unsaveable(f"an operation of kind {kind!r}")


def capture_save(graph, path: str, inputs: dict | None = None, outputs: dict | None = None,
                 source_fallback: bool = False) -> None:
    """Write `graph` (captured with `apic=True`) to `<path>.wrp` (and `<stem>_modules/`), for
    `capture_load` in this or another process. `inputs` and `outputs` name arrays whose
    memory the loaded graph exposes through `set_param`/`get_param`."""
    if not isinstance(graph, capture.Graph):
        raise TypeError(f"capture_save expects a Graph, got {type(graph).__name__}")
    if not getattr(graph, "apic", False):
        raise RuntimeError("Graph was not captured with apic=True. Pass apic=True to capture_begin() or "
                           "ScopedCapture().")
    saver = _Saver()
    ops = [_describe(op, saver) for op in graph.ops]
    named = {}
    for group in (inputs or {}, outputs or {}):
        for name, a in group.items():
            if not isinstance(name, str) or not isinstance(a, array):
                raise TypeError(f"capture_save: parameter {name!r} must name a weft array, got {type(a).__name__}")
            named[name] = saver.value(a)["array"]
    patches = saver.mesh_patches()
    meshes = saver.describe_meshes()
    regions, where = saver.regions()
    described = [{"region": k, "offset": off, "shape": list(a.shape), "strides": list(a.strides),
                  "dtype": _dtype_desc(a.dtype)} for a, (k, off) in zip(saver.arrays, where, strict=True)]
    params = {}
    for name, index in named.items():
        k = where[index][0]
        if k is None:
            raise ValueError(f"capture_save: parameter {name!r} is an array without memory")
        params[name] = k
    header = {"format": FORMAT, "version": VERSION, "device": "cpu", "ops": ops, "objects": saver.objects,
              "arrays": described,
              "regions": [hi - lo for lo, hi in regions], "params": params, "meshes": meshes,
              "mesh_patches": patches}
    wrp = path if path.endswith(".wrp") else path + ".wrp"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("graph.json", json.dumps(header))
        for k, (lo, hi) in enumerate(regions):
            z.writestr(f"regions/{k}.bin", (np.ctypeslib.as_array((np.ctypeslib.ctypes.c_ubyte * (hi - lo))
                                                                   .from_address(lo))).tobytes())
    with open(wrp, "wb") as f:
        f.write(buffer.getvalue())
    modules_dir = wrp[:-4] + "_modules"
    os.makedirs(modules_dir, exist_ok=True)
    files: dict = {}
    for op in _kernel_ops(ops):
        entry = files.setdefault(op["module_file"], {"format": MODULE_FORMAT, "module": op["module"], "kernels": {}})
        entry["kernels"][op["key"]] = op["source"]
    for name, entry in files.items():
        with open(os.path.join(modules_dir, name), "w") as f:
            json.dump(entry, f)


# Loading -----------------------------------------------------------------------------------

def _find_kernel(desc: dict):
    from ..lang.module import _MODULES
    module = _MODULES.get(desc["module"])
    kernel = module.kernels.get(desc["key"]) if module is not None else None
    if kernel is None:
        try:
            importlib.import_module(desc["py_module"])
        except ImportError as err:
            raise RuntimeError(f"capture_load: kernel '{desc['key']}' of module '{desc['module']}' is not "
                               f"defined, and its Python module {desc['py_module']!r} cannot be imported "
                               f"({err})") from None
        module = _MODULES.get(desc["module"])
        kernel = module.kernels.get(desc["key"]) if module is not None else None
        if kernel is None:  # (a "unique" module: its name differs per process)
            found = [k for m in list(_MODULES.values()) for k in m.kernels.values()
                     if k.func.__module__ == desc["py_module"] and k.func.__qualname__ == desc["qualname"]]
            kernel = found[-1] if found else None
    if kernel is None:
        raise RuntimeError(f"capture_load: kernel '{desc['key']}' of module '{desc['module']}' is not defined "
                           "in this process")
    return kernel


def _struct_type(module: str, qualname: str):
    """The struct type defined as `qualname` in Python module `module`."""
    found = importlib.import_module(module)
    try:
        for part in qualname.split("."):
            found = getattr(found, part)
    except AttributeError:
        raise RuntimeError(f"capture_load: struct {qualname} of module {module} cannot be found (a struct "
                           "defined inside a function cannot be loaded)") from None
    if not isinstance(found, StructType):
        raise RuntimeError(f"capture_load: {module}.{qualname} is not a weft struct")
    return found


def _weft_attribute(dotted: str, what: str):
    """A function or class of weft named in a graph file (only weft's: a file names no other code)."""
    module_name, _, name = str(dotted).rpartition(".")
    if module_name != "weft" and not module_name.startswith("weft."):
        raise RuntimeError(f"capture_load: the graph names {what} {dotted!r}, which is not part of weft")
    try:
        return getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError):
        raise RuntimeError(f"capture_load: the graph names {what} {dotted!r}, which this weft does not have "
                           "(a file of another version?)") from None


class _Loader:
    def __init__(self, header: dict, blobs: list, device):
        self.device = device
        self.buffers = []
        for size, blob in zip(header["regions"], blobs, strict=True):
            raw = np.empty(size + 64, dtype=np.uint8)
            start = -raw.ctypes.data % 64
            buf = raw[start:start + size]
            buf[:] = np.frombuffer(blob, dtype=np.uint8, count=size)
            self.buffers.append(buf)
        self.arrays = [self._array(d) for d in header["arrays"]]
        self.object_descs = header.get("objects", [])
        self.objects: dict = {}
        self.meshes = [self._mesh(d) for d in header.get("meshes", ())]
        for k, element, path, m in header.get("mesh_patches", ()):  # the new meshes' ids for the old ones
            column = self.arrays[k].numpy()
            for name in path:
                column = column[name]  # (a field of the records: a view)
            column[np.unravel_index(element, column.shape)] = self.meshes[m].id

    def _mesh(self, d: dict):
        from ..geometry.mesh import Mesh
        return Mesh(self.value(d["points"]), self.value(d["indices"]), velocities=self.value(d["velocities"]),
                    support_winding_number=d["winding"], bvh_constructor=d["constructor"].lower(),
                    bvh_leaf_size=d["leaf_size"], groups=self.value(d["groups"]))

    def _array(self, d: dict) -> array:
        t = _dtype_of(d["dtype"])
        if d["region"] is None:
            return array(shape=tuple(d["shape"]), dtype=t, device=self.device)
        buf = self.buffers[d["region"]]
        return array(ptr=buf.ctypes.data + d["offset"], shape=tuple(d["shape"]), strides=tuple(d["strides"]),
                     dtype=t, device=self.device, deleter=buf)

    def value(self, v):
        if isinstance(v, dict):
            if "mesh" in v:
                return self.meshes[v["mesh"]].id
            if "array" in v:
                return self.arrays[v["array"]]
            if "object" in v:
                return self.obj(v["object"])
            if "list" in v:
                items = [self.value(x) for x in v["list"]]
                return tuple(items) if v["tuple"] else items
            if "composite" in v:
                return _dtype_of(v["composite"])(*v["values"])
            if "scalar" in v:
                return _dtype_of(v["scalar"])(self.value(v["value"]))
            if "indexed" in v:
                return indexedarray(self.value(v["indexed"]), [self.value(i) for i in v["indices"]])
            if "struct" in v:
                out = _struct_type(*v["struct"])()
                for name, field in v["fields"].items():
                    setattr(out, name, self.value(field))
                return out
            if "ndarray" in v:
                return np.array(v["ndarray"], dtype=np.dtype(v["dtype"]))
        return v

    def obj(self, k: int):
        if k not in self.objects:
            desc = self.object_descs[k]
            self.objects[k] = _weft_attribute(desc["type"], "object type")._capture_rebuild(desc["state"], self.value)
        return self.objects[k]

    def op(self, d: dict):
        if d["op"] == "launch":
            from .launch import Launch
            kernel = _find_kernel(d)
            params = self.value(d["params"])
            if kernel.is_generic:
                kernel = kernel.specialize(params[:len(kernel.arg_names)])
            launch = Launch(kernel, self.device, params=params, adjoint=d["adjoint"], dims=tuple(d["dims"]))
            return launch.launch
        if d["op"] == "adjoint":
            from .launch import run_compiled
            kernel = _find_kernel(d)
            params = self.value(d["params"])
            if kernel.is_generic:
                kernel = kernel.specialize(params[:len(kernel.arg_names)])
            ck = kernel.compiled(kernel.specialization(params, True), adjoint=True, consume=True,
                                 retain=frozenset(d["retain"]))
            dims = tuple(d["dims"])
            return lambda: run_compiled(ck, dims, params)
        if d["op"] in ("sequence", "while", "if"):
            return self.control(d)
        if d["op"] == "fill":
            arr, value = self.value(d["array"]), self.value(d["value"])
            return lambda: arr.fill_(value)
        if d["op"] == "call":
            func = _weft_attribute(d["func"], "function")
            args, kwargs = self.value(d["args"]), {k: self.value(v) for k, v in d["kwargs"].items()}
            return lambda: func(*args, **kwargs)
        raise RuntimeError(f"capture_load: unknown operation {d['op']!r} (a file of a newer weft?)")


    def control(self, d: dict):
        """A nested graph, loop or branch: its operations, run as the capture recorded them."""
        def run(ops):
            for op in ops:
                op()
        if d["op"] == "sequence":
            ops = [self.op(o) for o in d["ops"]]
            return lambda: run(ops)
        flag = self.value(d["condition"])
        if d["op"] == "while":
            body = [self.op(o) for o in d["body"]]

            def loop():
                while int(flag.numpy().reshape(-1)[0]):
                    run(body)
            return loop
        then, otherwise = [self.op(o) for o in d["then"]], [self.op(o) for o in d["else"]]
        return lambda: run(then if int(flag.numpy().reshape(-1)[0]) else otherwise)


class LoadedGraph(capture.Graph):
    """A graph read back by `capture_load`: launched by `capture_launch`; its named memory
    regions are read and written with `get_param` and `set_param` (Warp's methods)."""

    def __init__(self, device, ops, loader: _Loader, params: dict):
        super().__init__(device, ops)
        self._loader = loader
        self._regions = params

    @property
    def is_loaded(self) -> bool:
        return True

    @property
    def params(self) -> dict:
        return {name: {"size": int(self._loader.buffers[k].size)} for name, k in self._regions.items()}

    def _region(self, name: str, arr) -> tuple[np.ndarray, np.ndarray]:
        if not isinstance(arr, array):
            raise TypeError(f"parameter '{name}': expected a weft array, got {type(arr).__name__}")
        if get_device(arr.device) != self.device:
            raise ValueError(f"parameter '{name}': the array is on {arr.device}, the graph on {self.device}")
        if name not in self._regions:
            raise RuntimeError(f"Failed to access parameter '{name}': the graph has no such parameter "
                               f"(it has {', '.join(sorted(self._regions)) or 'none'})")
        region = self._loader.buffers[self._regions[name]]
        if arr.capacity != region.size or not arr.is_contiguous:
            raise RuntimeError(f"Failed to access parameter '{name}': it holds {region.size} bytes, the array "
                               f"{arr.capacity} bytes{'' if arr.is_contiguous else ' (not contiguous)'}")
        mine = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_ubyte * arr.capacity).from_address(arr.ptr))
        return region, mine

    def set_param(self, name: str, arr) -> None:
        """Copy `arr`'s memory into the region named `name` (the same number of bytes)."""
        region, mine = self._region(name, arr)
        region[:] = mine

    def get_param(self, name: str, arr) -> None:
        """Copy the region named `name` into `arr`'s memory (the same number of bytes)."""
        region, mine = self._region(name, arr)
        mine[:] = region

    def get_param_ptr(self, name: str):
        """The address of the region named `name`, or None."""
        k = self._regions.get(name)
        return None if k is None else self._loader.buffers[k].ctypes.data


def _bytes_of(data, what: str) -> bytes:
    try:
        view = memoryview(data)
    except TypeError:
        raise TypeError(f"{what} must be a bytes-like object, got {type(data).__name__}") from None
    if not view.c_contiguous:
        raise ValueError(f"{what} must be a C-contiguous buffer")
    return view.tobytes()


def _check_modules(ops: list, modules) -> None:
    """Each kernel module the graph launches from must come with its file (as Warp's loader
    wants its module binaries), listing the kernel with the digest of the source it was
    saved with: a kernel changed since is refused (it may take other arguments now)."""
    listed: dict = {}
    for op in _kernel_ops(ops):
        name = op["module_file"]
        if name not in listed:
            if name not in modules:
                raise RuntimeError(f"the graph needs module file {name!r} (from its _modules directory), "
                                   "which was not given")
            try:
                entry = json.loads(bytes(modules[name]))
                if entry.get("format") != MODULE_FORMAT:
                    raise ValueError("not a weft graph module file")
                listed[name] = entry["kernels"]
            except (ValueError, KeyError, TypeError, AttributeError) as err:
                raise RuntimeError(f"module file {name!r} is malformed ({err})") from None
        if listed[name].get(op["key"]) != op["source"]:
            raise RuntimeError(f"module file {name!r} does not describe kernel '{op['key']}' as saved")
        kernel = _find_kernel(op)
        if _source_digest(kernel) != op["source"]:
            raise RuntimeError(f"kernel '{op['key']}' of module '{op['module']}' has changed since the graph "
                               "was saved; save the graph again")


def capture_load_from_bytes(data, modules=None, device=None):
    """A graph from the bytes of a `.wrp` file (`modules`: the files of its `_modules/`
    directory by name, checked but not needed: weft compiles kernels from their source)."""
    device = get_device(device)
    if modules is not None:
        if not hasattr(modules, "items"):
            raise TypeError(f"modules must be a mapping, got {type(modules).__name__}")
        for name, contents in modules.items():
            if not isinstance(name, str):
                raise TypeError(f"module names must be strings, got {type(name).__name__}")
            _bytes_of(contents, f"module {name!r}")
    raw = _bytes_of(data, "data")
    if not device.is_cpu:
        raise RuntimeError(f"capture_load: weft graphs run on the CPU, not {device}")
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            header = json.loads(z.read("graph.json"))
            if header.get("format") != FORMAT:
                raise RuntimeError("not a weft graph file")
            if header.get("version", 0) > VERSION:
                raise RuntimeError(f"a graph file of version {header['version']} (this weft reads {VERSION})")
            blobs = [z.read(f"regions/{k}.bin") for k in range(len(header["regions"]))]
    except (zipfile.BadZipFile, KeyError, ValueError) as err:
        raise RuntimeError(f"Failed to load graph: malformed data ({err})") from None
    _check_modules(header["ops"], modules or {})
    loader = _Loader(header, blobs, device)
    ops = [loader.op(d) for d in header["ops"]]
    return LoadedGraph(device, ops, loader, header["params"])


def capture_load(path: str, device=None):
    """The graph `capture_save` wrote to `<path>.wrp`, ready for `capture_launch`."""
    wrp = path if path.endswith(".wrp") else path + ".wrp"
    try:
        with open(wrp, "rb") as f:
            data = f.read()
    except OSError as err:
        raise RuntimeError(f"Failed to load APIC graph from {wrp}: {err}") from None
    folder = wrp[:-4] + "_modules"
    modules = {}
    if os.path.isdir(folder):
        for name in os.listdir(folder):
            if name.endswith(".json"):
                with open(os.path.join(folder, name), "rb") as f:
                    modules[name] = f.read()
    try:
        return capture_load_from_bytes(data, modules, device)
    except RuntimeError as err:
        raise RuntimeError(f"Failed to load APIC graph from {wrp}: {err}") from None
