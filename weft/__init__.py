"""weft: differentiable compute kernels in Python, compiled through LLVM.

`import weft as wp` runs the common subset of NVIDIA Warp programs.
"""

__version__ = "0.1.0"

from . import (
    autograd,  # noqa: E402
    config,  # noqa: E402
    torch,  # noqa: E402 - weft.torch.wrap; imports PyTorch only when used
)
from .builtins import BUILTINS as _BUILTINS  # noqa: E402
from .builtins.arith import STATIC as static  # noqa: E402
from .interop.dlpack import from_dlpack  # noqa: E402
from .interop.jax import dtype_from_jax, dtype_to_jax, from_jax, to_jax  # noqa: E402
from .interop.torch import (  # noqa: E402
    device_from_torch,
    device_to_torch,
    dtype_from_torch,
    dtype_to_torch,
    from_torch,
    to_torch,
)
from .lang.custom_grad import func_grad, func_replay  # noqa: E402
from .lang.decorators import constant, func, kernel, overload, struct  # noqa: E402
from .lang.errors import (  # noqa: E402
    CompileError,
    WarpCodegenAttributeError,
    WarpCodegenError,
    WarpCodegenIndexError,
    WarpCodegenKeyError,
    WarpCodegenTypeError,
    WarpCodegenValueError,
    WeftError,
)
from .lang.grad import grad  # noqa: E402
from .lang.kernel import Kernel  # noqa: E402
from .lang.module import Module, get_module  # noqa: E402
from .runtime.array import (  # noqa: E402
    array,
    clone,
    copy,
    empty,
    empty_like,
    from_numpy,
    full,
    full_like,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from .runtime.device import (  # noqa: E402
    Device,
    ScopedDevice,
    get_cuda_device_count,
    get_device,
    get_preferred_device,
    is_cuda_available,
    set_device,
    synchronize,
    synchronize_device,
)
from .runtime.indexed_array import indexedarray  # noqa: E402
from .runtime.launch import Launch, launch  # noqa: E402
from .tape import Tape  # noqa: E402
from .types import *  # noqa: E402,F403
from .types import (  # noqa: E402
    ArrayType,
    matrix,
    quaternion,
    transformation,
    vector,
)
from .types import bool_ as bool  # noqa: E402,A001 - Warp's name
from .types import float32 as float  # noqa: E402,A001
from .types import int32 as int  # noqa: E402,A001
from .utils import ScopedTimer, get_module_options, set_module_options

vec = vector
mat = matrix
types = __import__("weft.types", fromlist=["types"])

# Every builtin is a module attribute: weft.sin, weft.dot, weft.atomic_add, ...
globals().update({name: b for name, b in _BUILTINS.items()})
for _name in ("quat", "transform"):  # the type names double as constructors
    globals()[_name] = getattr(types, _name)

class _ArrayND:
    """`array2d(dtype=float)` and `array2d[float]`: array annotations of a fixed ndim;
    with data, a shape or a pointer (`array2d(data, dtype=float)`), an array of that ndim."""

    def __init__(self, ndim):
        self.ndim = ndim

    def __call__(self, data=None, dtype=float32, shape=None, *args, **kwargs):
        if data is None and shape is None and kwargs.get("ptr") is None:
            return ArrayType(dtype, self.ndim)
        a = array(data, dtype, shape, *args, **kwargs)
        if a.ndim != self.ndim:
            raise ValueError(f"array{self.ndim}d: the data gives an array of {a.ndim} dimension(s)")
        return a

    def __getitem__(self, dtype):
        return ArrayType(dtype, self.ndim)

    def __repr__(self):
        return f"weft.array{self.ndim}d"


array1d, array2d, array3d, array4d = (_ArrayND(n) for n in (1, 2, 3, 4))


class _IndexedArrayND:
    """`indexedarray2d(dtype=float)` / `indexedarray2d[float]` annotations; with data,
    `indexedarray1d(values, [indices])` makes an indexed array of that ndim."""

    def __init__(self, ndim):
        self.ndim = ndim

    def __call__(self, data=None, indices=None, dtype=float32, ndim=None):
        if data is None:
            return types.IndexedArrayType(dtype, self.ndim)
        a = indexedarray(data, indices)
        if a.ndim != self.ndim:
            raise ValueError(f"indexedarray{self.ndim}d: the data has {a.ndim} dimension(s)")
        return a

    def __getitem__(self, dtype):
        return types.IndexedArrayType(dtype, self.ndim)


indexedarray1d, indexedarray2d, indexedarray3d, indexedarray4d = (_IndexedArrayND(n) for n in (1, 2, 3, 4))


def init():
    """Accepted for Warp compatibility; weft initialises on first use."""


def print_ir(kernel_or_func, file=None, adjoint=False):
    """Print a kernel's IR (after the pass pipeline), or its adjoint's."""
    import builtins

    from .ir.printer import format_function
    fn = kernel_or_func.adjoint_ir() if adjoint else kernel_or_func.ir()
    builtins.print(format_function(fn), file=file)
