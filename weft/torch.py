"""`weft.torch`: PyTorch interop. Zero-copy tensors <-> arrays (`from_torch`, `to_torch`)
and kernels as differentiable torch functions (`wrap`). See weft/interop/."""

from .interop.torch import (
    device_from_torch,
    device_to_torch,
    dtype_from_torch,
    dtype_to_torch,
    from_torch,
    stream_from_torch,
    stream_to_torch,
    synchronize_with_torch,
    to_torch,
)
from .interop.torch_op import TorchOp, wrap

__all__ = ["device_from_torch", "device_to_torch", "dtype_from_torch", "dtype_to_torch", "from_torch",
           "stream_from_torch", "stream_to_torch", "synchronize_with_torch", "to_torch", "TorchOp", "wrap"]
