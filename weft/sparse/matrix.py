"""`BsrMatrix` (block sparse row storage), its scaled-expression form (`2.0 * A`), and the
allocation helpers (`bsr_zeros`, `bsr_set_zero`).

Storage, as Warp's: `offsets` (nrow + 1 ints), `columns` and `values` (one entry per stored
block, `values` of the block type: a scalar for 1x1 blocks or a matrix type), `nnz` (an
upper bound of the stored blocks, kept on the host; `nnz_sync()` makes it exact).
Two topologies:
- compact: row `r`'s blocks are `offsets[r]:offsets[r+1]`, `row_counts` is None;
- padded: `offsets` gives each row a fixed capacity and `row_counts[r]` the blocks in use,
  `offsets[r]:offsets[r]+row_counts[r]`. An operation that would overflow a row sets the
  matrix's status to `BSR_STATUS_ROW_CAPACITY_EXCEEDED` (`status_sync()`) and leaves that
  row empty, as Warp's.
"""

from __future__ import annotations

import numpy as np

import weft as wp

from .. import types as _t
from ..logger import log_warning
from ..runtime.array import array
from ..runtime.device import get_device
from ..types import types_equal  # noqa: F401 - used by the other sparse modules
from .deferred import deferrable

BSR_STATUS_SUCCESS = 0
BSR_STATUS_ROW_CAPACITY_EXCEEDED = 1
_STATUS_MESSAGES = {
    BSR_STATUS_SUCCESS: "success",
    BSR_STATUS_ROW_CAPACITY_EXCEEDED: "a row of blocks exceeded its padded capacity",
}


def block_shape_of(block_type) -> tuple[int, int]:
    if isinstance(block_type, _t.Matrix):
        return tuple(block_type._shape_)
    if _is_scalar(block_type):
        return (1, 1)
    raise ValueError("BsrMatrix block type must be either warp matrix or scalar; got "
                     f"{getattr(block_type, '__name__', block_type)!r}")


def _is_scalar(t) -> bool:
    return isinstance(t, _t.Scalar)


def resolve_block_type(block_type):
    """Python `float` and `int` name float32 and int32, as in Warp."""
    if block_type is float:
        return _t.float32
    if block_type is int:
        return _t.int32
    return block_type


def make_block_type(shape, scalar, like=None):
    """Blocks of `shape`: a scalar for 1x1, unless `like` (a related block type) is a matrix."""
    shape = tuple(int(s) for s in shape)
    if shape == (1, 1) and not isinstance(like, _t.Matrix):
        return scalar
    return _t.matrix(shape=shape, dtype=scalar)


def scalar_type_of(block_type):
    return block_type.dtype if isinstance(block_type, _t.Matrix) else block_type


class BsrMatrix:
    """A block sparse row matrix; see the module docstring for its storage."""

    def __init__(self, nrow, ncol, block_type, device=None):
        block_type = resolve_block_type(block_type)
        block_shape_of(block_type)
        self.nrow = int(nrow)
        self.ncol = int(ncol)
        self.nnz = 0
        dev = get_device(device)
        self.offsets = array(np.zeros(self.nrow + 1, dtype=np.int32), dtype=_t.int32, device=dev)
        self.row_counts = None
        self.columns = array(shape=(0,), dtype=_t.int32, device=dev)
        self.values = array(shape=(0,), dtype=block_type, device=dev)
        self._status = None

    # Shape and types
    @property
    def scalar_type(self):
        return scalar_type_of(self.values.dtype)

    @property
    def block_shape(self) -> tuple[int, int]:
        return block_shape_of(self.values.dtype)

    @property
    def block_size(self) -> int:
        r, c = self.block_shape
        return r * c

    @property
    def shape(self) -> tuple[int, int]:
        r, c = self.block_shape
        return (self.nrow * r, self.ncol * c)

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def device(self):
        return self.values.device

    @property
    def requires_grad(self) -> bool:
        return self.values.requires_grad

    @property
    def scalar_values(self) -> array:
        """The values as an array of scalars, shape (capacity, rows, cols) of a block."""
        return _scalar_blocks(self.values, self.block_shape)

    # Topology queries
    def _host_offsets(self) -> np.ndarray:
        return self.offsets.numpy()[: self.nrow + 1].astype(np.int64)

    def _row_ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """Begin and end (exclusive) of each row's active blocks, on the host."""
        off = self._host_offsets()
        begin = off[:-1]
        if self.row_counts is None:
            return begin, off[1:]
        return begin, begin + self.row_counts.numpy()[: self.nrow].astype(np.int64)

    def _active(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, column, storage position) of every active block, in storage order."""
        begin, end = self._row_ranges()
        lengths = np.maximum(end - begin, 0)
        rows = np.repeat(np.arange(self.nrow, dtype=np.int64), lengths)
        starts = np.repeat(begin - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        pos = np.arange(rows.size, dtype=np.int64) + starts
        cols = self.columns.numpy()[pos].astype(np.int64) if pos.size else np.zeros(0, np.int64)
        return rows, cols, pos

    def uncompress_rows(self, out: array | None = None) -> array:
        """The row of each stored block (-1 for storage that no row uses), an int array of
        `nnz` entries."""
        n = int(self.nnz)
        rows_np = np.full(n, -1, dtype=np.int32)
        r, _c, pos = self._active()
        keep = pos < n
        rows_np[pos[keep]] = r[keep]
        if out is None:
            return array(rows_np, dtype=_t.int32, device=self.device)
        out.numpy()[:n] = rows_np
        return out

    def nnz_sync(self) -> int:
        """Make `nnz` exact (compact: `offsets[nrow]`; padded: the total row capacity).
        Inside a graph capture it reads the count now, refusing one that a call recorded in
        this capture will set (NotImplementedError, as Warp's CPU capture)."""
        from ..runtime import capture
        from .deferred import recorded_in_capture
        if recorded_in_capture(self):
            raise NotImplementedError("BsrMatrix.nnz_sync() cannot read a topology update recorded during CPU APIC "
                                      "capture (it is applied when the graph runs); call nnz_sync() after "
                                      "capture_launch, or avoid the readback inside the capture")
        with capture.paused():
            return self._read_nnz()

    def _read_nnz(self) -> int:
        transfer = getattr(self, "_nnz_transfer", None)
        if transfer is None:
            self.nnz = int(self.offsets.numpy()[self.nrow])
            return self.nnz
        if not self._nnz_transfer_pending:
            wp.copy(dest=transfer, src=self.offsets, src_offset=self.nrow, count=1)
        self._nnz_transfer_pending = False
        self.nnz = int(transfer.numpy()[0])
        return self.nnz

    def notify_nnz_changed(self, nnz: int | None = None, nnz_capacity: int | None = None) -> None:
        """Tell the matrix its topology changed: `nnz` a new upper bound (None: read it from
        `offsets`); storage grows to hold it."""
        if nnz is None:
            nnz = int(self.offsets.numpy()[self.nrow])
        self.nnz = int(nnz)
        ensure_capacity(self, max(self.nnz, int(nnz_capacity or 0)))
        self._topology_changed()

    def copy_nnz_async(self) -> None:
        """Deprecated (Warp starts a device-to-host copy of nnz here; weft's matrices live in
        host memory, so nnz_sync() reads it directly)."""
        log_warning("BsrMatrix.copy_nnz_async() is deprecated; nnz_sync() reads the count directly",
                    category=DeprecationWarning)
        if not hasattr(self, "_nnz_transfer"):
            self._nnz_transfer = array(np.zeros(1, dtype=np.int32), dtype=_t.int32, device=self.device)
        self._nnz_transfer_pending = True
        self._nnz_transfer.numpy()[0] = self.offsets.numpy()[self.nrow]

    def _topology_changed(self):
        """A pending nnz copy (copy_nnz_async) restarts with the new count."""
        if getattr(self, "_nnz_transfer_pending", False):
            self._nnz_transfer.numpy()[0] = self.offsets.numpy()[self.nrow]

    # Status of padded operations
    def _ensure_status(self) -> array:
        if self._status is None:
            self._status = array(np.zeros(1, dtype=np.int32), dtype=_t.int32, device=self.device)
        return self._status

    def _set_status(self, value: int):
        self._ensure_status().numpy()[0] = value

    def status_sync(self) -> int:
        """The status of the padded operations (sticky: `clear_status` resets it). Inside a
        graph capture on the matrix's device: NotImplementedError, as Warp's (the recorded
        operations set it when the graph runs)."""
        if self._status is None:
            return BSR_STATUS_SUCCESS
        if self.device.is_capturing:
            raise NotImplementedError("BsrMatrix.status_sync() cannot read sparse status recorded during a CPU APIC "
                                      "graph capture (it is set when the graph runs); query the status after "
                                      "capture_launch")
        return int(self._status.numpy()[0])

    def status_message(self) -> str:
        return _STATUS_MESSAGES.get(self.status_sync(), "unknown status")

    def clear_status(self) -> None:
        if self._status is not None:
            self._status.zero_()

    # Operators (the functions live in sparse/ops.py; imported late to keep one direction)
    def __add__(self, y):
        from .ops import bsr_axpy, bsr_copy
        return bsr_axpy(y, bsr_copy(self))

    def __radd__(self, x):
        from .ops import bsr_axpy, bsr_copy
        return bsr_axpy(x, bsr_copy(self))

    def __iadd__(self, y):
        from .ops import bsr_axpy
        return bsr_axpy(y, self)

    def __sub__(self, y):
        from .ops import bsr_axpy, bsr_copy
        return bsr_axpy(y, bsr_copy(self), alpha=-1.0)

    def __rsub__(self, x):
        from .ops import bsr_axpy, bsr_copy
        return bsr_axpy(x, bsr_copy(self), beta=-1.0)

    def __isub__(self, y):
        from .ops import bsr_axpy
        return bsr_axpy(y, self, alpha=-1.0)

    def __mul__(self, y):
        return BsrScaled(self, y)

    def __rmul__(self, x):
        return BsrScaled(self, x)

    def __imul__(self, y):
        from .ops import bsr_scale
        return bsr_scale(self, y)

    def __truediv__(self, y):
        return BsrScaled(self, 1.0 / y)

    def __neg__(self):
        return BsrScaled(self, -1.0)

    def __matmul__(self, y):
        from .ops import bsr_mm, bsr_mv
        return bsr_mv(self, y) if isinstance(y, array) else bsr_mm(self, y)

    def __rmatmul__(self, x):
        from .ops import bsr_mm, bsr_mv
        return bsr_mv(self, x, transpose=True) if isinstance(x, array) else bsr_mm(x, self)

    def __imatmul__(self, y):
        from .ops import bsr_mm
        return bsr_mm(self, y, self)

    def transpose(self):
        """A transposed copy of this matrix."""
        from .ops import bsr_transposed
        return bsr_transposed(self)

    def __repr__(self):
        return (f"BsrMatrix(nrow={self.nrow}, ncol={self.ncol}, block_type={self.dtype!r}, "
                f"nnz<={self.nnz}, {'padded' if self.row_counts is not None else 'compact'})")

    def __class_getitem__(cls, item):
        return cls

    def _as_struct(self, t):
        """This matrix as a value of struct type `t` (a kernel argument), which must be
        `bsr_matrix_t` of its block type."""
        if t is not bsr_matrix_t(self.dtype):
            raise TypeError(f"a BsrMatrix of {self.dtype!r} blocks is not a {t.name}: the parameter takes "
                            f"bsr_matrix_t of its block type")
        v = t()
        v.nrow, v.ncol, v.nnz = self.nrow, self.ncol, int(self.nnz)
        v.offsets, v.row_counts, v.columns, v.values = self.offsets, self.row_counts, self.columns, self.values
        return v

    # A matrix passed to a sparse call recorded in a saved graph (runtime/capture_io.py)
    def _capture_state(self, value) -> dict:
        return {"nrow": self.nrow, "ncol": self.ncol, "nnz": int(self.nnz), "offsets": value(self.offsets),
                "row_counts": value(self.row_counts), "columns": value(self.columns), "values": value(self.values),
                "status": value(self._status)}

    @classmethod
    def _capture_rebuild(cls, state: dict, value):
        A = cls.__new__(cls)
        A.nrow, A.ncol, A.nnz = int(state["nrow"]), int(state["ncol"]), int(state["nnz"])
        for name in ("offsets", "row_counts", "columns", "values"):
            setattr(A, name, value(state[name]))
        A._status = value(state["status"])
        return A


class BsrScaled:
    """`scale * mat`, kept unevaluated so that products and sums fold the scale in."""

    def __init__(self, mat, scale):
        self.mat = mat
        self.scale = scale

    def eval(self):
        from .ops import bsr_copy
        return bsr_copy(self)

    def __getattr__(self, name):
        if name in ("nrow", "ncol", "nnz", "offsets", "row_counts", "columns", "scalar_type",
                    "block_shape", "block_size", "shape", "dtype", "requires_grad", "device"):
            return getattr(self.mat, name)
        raise AttributeError(name)

    def __add__(self, y):
        from .ops import bsr_axpy, bsr_copy
        return bsr_axpy(y, bsr_copy(self))

    def __radd__(self, x):
        from .ops import bsr_axpy, bsr_copy
        return bsr_axpy(x, bsr_copy(self))

    def __sub__(self, y):
        from .ops import bsr_axpy, bsr_copy
        return bsr_axpy(y, bsr_copy(self), alpha=-1.0)

    def __rsub__(self, x):
        from .ops import bsr_axpy, bsr_copy
        return bsr_axpy(x, bsr_copy(self), beta=-1.0)

    def __mul__(self, y):
        return BsrScaled(self.mat, y * self.scale)

    def __rmul__(self, x):
        return BsrScaled(self.mat, x * self.scale)

    def __truediv__(self, y):
        return BsrScaled(self.mat, self.scale / y)

    def __neg__(self):
        return BsrScaled(self.mat, -self.scale)

    def __matmul__(self, y):
        from .ops import bsr_mm, bsr_mv
        if isinstance(y, array):
            return bsr_mv(self.mat, y, alpha=self.scale)
        return bsr_mm(self.mat, y, alpha=self.scale)

    def __rmatmul__(self, x):
        from .ops import bsr_mm, bsr_mv
        if isinstance(x, array):
            return bsr_mv(self.mat, x, alpha=self.scale, transpose=True)
        return bsr_mm(x, self.mat, alpha=self.scale)

    def transpose(self):
        return BsrScaled(self.mat.transpose(), self.scale)

    def _capture_state(self, value) -> dict:
        return {"mat": value(self.mat), "scale": value(self.scale)}

    @classmethod
    def _capture_rebuild(cls, state: dict, value):
        return cls(value(state["mat"]), value(state["scale"]))


def _scalar_blocks(values: array, block_shape) -> array:
    """`values` (contiguous blocks) as a (count, rows, cols) scalar array of the same memory,
    its gradient viewing the blocks' gradient (so products through it stay differentiable)."""
    r, c = block_shape
    grad = None if values.grad is None else _scalar_blocks(values.grad, block_shape)
    return array(ptr=values.ptr, shape=(values.shape[0], r, c), dtype=scalar_type_of(values.dtype),
                 device=values.device, deleter=values, grad=grad)


def matrix_and_scale(a):
    if isinstance(a, BsrMatrix):
        return a, 1.0
    if isinstance(a, BsrScaled):
        return a.mat, a.scale
    raise ValueError("Argument cannot be interpreted as a BsrMatrix")


def ensure_capacity(A: BsrMatrix, n: int, requires_grad: bool = False):
    """Grow `columns` and `values` to hold at least `n` blocks (contents kept)."""
    n = int(n)
    if A.columns.shape[0] < n:
        cols = np.full(n, -1, dtype=np.int32)
        cols[: A.columns.shape[0]] = A.columns.numpy()
        A.columns = array(cols, dtype=_t.int32, device=A.device)
    if A.values.shape[0] < n or (requires_grad and not A.values.requires_grad):
        vals = array(shape=(max(n, A.values.shape[0]),), dtype=A.values.dtype, device=A.device,
                     requires_grad=requires_grad or A.values.requires_grad)
        vals.zero_()
        vals.numpy()[: A.values.shape[0]] = A.values.numpy()
        A.values = vals


def _capacity_offsets(nrow: int, row_capacity) -> np.ndarray:
    if isinstance(row_capacity, array):
        caps = row_capacity.numpy()[:nrow].astype(np.int64)
    else:
        caps = np.full(nrow, int(row_capacity), dtype=np.int64)
    if np.any(caps < 0):
        raise ValueError("row_capacity must not be negative")
    return np.concatenate(([0], np.cumsum(caps))).astype(np.int32)


def set_topology_empty(A: BsrMatrix, topology: str, row_capacity=None, nnz_capacity=None):
    """Make A empty with the given topology (padded: per-row capacity from `row_capacity`,
    or the current one when None)."""
    if topology == "padded":
        if row_capacity is None:
            if A.row_counts is not None:
                off = A._host_offsets().astype(np.int32)
            else:
                raise ValueError("padded topology needs a row_capacity")
        else:
            off = _capacity_offsets(A.nrow, row_capacity)
        write_offsets(A, off)
        if A.row_counts is None or A.row_counts.shape[0] < A.nrow:
            A.row_counts = array(np.zeros(A.nrow, dtype=np.int32), dtype=_t.int32, device=A.device)
        else:
            A.row_counts.numpy()[:] = 0
        A.nnz = max(int(off[-1]), int(nnz_capacity or 0))
        ensure_capacity(A, A.nnz)
        A._ensure_status()
        A.clear_status()
    else:
        write_offsets(A, np.zeros(A.nrow + 1, dtype=np.int32))
        A.row_counts = None
        A.nnz = 0
        if nnz_capacity:
            ensure_capacity(A, int(nnz_capacity))
    A._topology_changed()


def write_offsets(A: BsrMatrix, off: np.ndarray):
    """Store `off` (nrow + 1 entries) in A.offsets, reusing a large enough allocation."""
    if A.offsets.shape[0] >= off.size:
        A.offsets.numpy()[: off.size] = off
    else:
        A.offsets = array(off.astype(np.int32), dtype=_t.int32, device=A.device)


_STRUCT_TYPES: dict = {}


def bsr_matrix_t(dtype):
    """The struct type of a BsrMatrix of `dtype` blocks as a kernel parameter, as Warp's:
    fields `nrow`, `ncol`, `nnz`, `offsets`, `row_counts` (a null array for compact
    matrices), `columns` and `values`. A BsrMatrix passed for such a parameter is packed
    from its attributes (`BsrMatrix._as_struct`). (In Python, matrices are BsrMatrix.)"""
    block_t = resolve_block_type(dtype)
    block_shape_of(block_t)
    name = f"BsrMatrix_{block_t.name}"
    if name not in _STRUCT_TYPES:
        from ..lang.decorators import struct
        ints = _t.ArrayType(_t.int32, 1)
        cls = type(name, (), {"__module__": __name__, "__qualname__": name, "__annotations__": {
            "nrow": _t.int32, "ncol": _t.int32, "nnz": _t.int32, "offsets": ints, "row_counts": ints,
            "columns": ints, "values": _t.ArrayType(block_t, 1)}})
        _STRUCT_TYPES[name] = struct(cls)
    return _STRUCT_TYPES[name]


def bsr_zeros(rows_of_blocks: int, cols_of_blocks: int, block_type, device=None, *, topology=None,
              row_capacity=None, nnz_capacity=None) -> BsrMatrix:
    """An empty `rows_of_blocks` x `cols_of_blocks` matrix of `block_type` blocks; padded
    (with `row_capacity` blocks per row, an int or an int array) when `row_capacity` is given
    or `topology="padded"`."""
    if topology is None:
        topology = "padded" if row_capacity is not None else "compact"
    elif topology not in ("compact", "padded"):
        raise ValueError(f"Unsupported topology policy: {topology}")
    if row_capacity is not None and topology != "padded":
        raise ValueError("row_capacity requires topology='padded'")
    A = BsrMatrix(rows_of_blocks, cols_of_blocks, block_type, device)
    set_topology_empty(A, topology, 0 if topology == "padded" and row_capacity is None else row_capacity,
                       nnz_capacity)
    return A


def _defer_set_zero(a: dict):
    bsr, topology = a["bsr"], a["topology"]
    from .deferred import presize
    if topology == "masked":
        return None, []
    if topology not in ("compact", "padded"):
        raise ValueError(f"Unsupported topology policy: {topology}")
    blocks = int(a["nnz_capacity"] or 0)
    if topology == "padded" and a["row_capacity"] is not None:
        blocks = max(blocks, int(_capacity_offsets(a["rows_of_blocks"] or bsr.nrow, a["row_capacity"])[-1]))
    presize(bsr, a["rows_of_blocks"], a["cols_of_blocks"], blocks if topology == "compact" else None)
    ensure_capacity(bsr, blocks)
    return None, [bsr]


@deferrable(_defer_set_zero)
def bsr_set_zero(bsr: BsrMatrix, rows_of_blocks: int | None = None, cols_of_blocks: int | None = None, *,
                 topology="compact", row_capacity=None, nnz_capacity=None):
    """Make `bsr` the zero matrix, optionally resizing it; `topology="padded"` keeps (or
    sets, from `row_capacity`) the per-row capacities; "masked" keeps the topology and
    zeroes the values."""
    if rows_of_blocks is not None:
        bsr.nrow = int(rows_of_blocks)
    if cols_of_blocks is not None:
        bsr.ncol = int(cols_of_blocks)
    if topology == "masked":
        bsr.values.zero_()
        return
    if topology not in ("compact", "padded"):
        raise ValueError(f"Unsupported topology policy: {topology}")
    if topology == "padded" and row_capacity is None and bsr.row_counts is None:
        row_capacity = 0
    set_topology_empty(bsr, topology, row_capacity, nnz_capacity)
