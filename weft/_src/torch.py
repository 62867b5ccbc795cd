"""`warp._src.torch` as Warp programs import from it: re-exports of weft/interop/torch.py."""

from ..interop.torch import (
    device_from_torch,
    device_to_torch,
    dtype_from_torch,
    dtype_to_torch,
    from_torch,
    stream_from_torch,
    stream_to_torch,
    to_torch,
)

__all__ = ["device_from_torch", "device_to_torch", "dtype_from_torch", "dtype_to_torch", "from_torch",
           "stream_from_torch", "stream_to_torch", "to_torch"]
